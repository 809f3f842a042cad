//! The job's schema as data: its fields, blocks and value sets, and the task blocks each
//! task type adds (from `task_types`).

use super::*;
/// `Source` of notebook, Python and SQL-file tasks.
pub(super) const SOURCE: &[&str] = &["WORKSPACE", "GIT"];
/// `ConditionTaskOp`.
pub(super) const CONDITION_OPS: &[&str] = &[
    "EQUAL_TO",
    "NOT_EQUAL",
    "GREATER_THAN",
    "GREATER_THAN_OR_EQUAL",
    "LESS_THAN",
    "LESS_THAN_OR_EQUAL",
];
/// `JobsHealthMetric`.
pub(super) const HEALTH_METRICS: &[&str] = &[
    "RUN_DURATION_SECONDS",
    "STREAMING_BACKLOG_BYTES",
    "STREAMING_BACKLOG_RECORDS",
    "STREAMING_BACKLOG_SECONDS",
    "STREAMING_BACKLOG_FILES",
];
/// `GitProvider`; the service compares it without regard to case.
pub(super) const GIT_PROVIDERS: &[&str] = &[
    "gitHub",
    "gitHubEnterprise",
    "bitbucketCloud",
    "bitbucketServer",
    "azureDevOpsServices",
    "gitLab",
    "gitLabEnterpriseEdition",
    "awsCodeCommit",
];

pub(super) fn email_notifications() -> BlockType {
    BlockType::single(
        "email_notifications",
        Schema::new()
            .attr(Attribute::optional("on_start", strings()))
            .attr(Attribute::optional("on_success", strings()))
            .attr(Attribute::optional("on_failure", strings()))
            .attr(Attribute::optional(
                "on_duration_warning_threshold_exceeded",
                strings(),
            ))
            .attr(Attribute::optional(
                "on_streaming_backlog_exceeded",
                strings(),
            ))
            .attr(Attribute::optional("on_maintenance_start", strings()))
            .attr(Attribute::optional("on_maintenance_complete", strings()))
            .attr(Attribute::optional("no_alert_for_skipped_runs", b()).server_default(false)),
    )
}

pub(super) fn webhook_notifications() -> BlockType {
    let ids = |name: &'static str| {
        BlockType::list(name, Schema::new().attr(Attribute::required("id", s())))
    };
    BlockType::single(
        "webhook_notifications",
        Schema::new()
            .block(ids("on_start"))
            .block(ids("on_success"))
            .block(ids("on_failure"))
            .block(ids("on_duration_warning_threshold_exceeded"))
            .block(ids("on_streaming_backlog_exceeded"))
            .block(ids("on_maintenance_start"))
            .block(ids("on_maintenance_complete")),
    )
}

/// `task`: a task's settings, which also say whether to alert only on the last attempt.
pub(super) fn notification_settings(task: bool) -> BlockType {
    let mut schema = Schema::new()
        .attr(Attribute::optional("no_alert_for_skipped_runs", b()).server_default(false))
        .attr(Attribute::optional("no_alert_for_canceled_runs", b()).server_default(false));
    if task {
        schema =
            schema.attr(Attribute::optional("alert_on_last_attempt", b()).server_default(false));
    }
    BlockType::single("notification_settings", schema)
}

pub(super) fn health() -> BlockType {
    BlockType::single(
        "health",
        Schema::new().block(BlockType::list(
            "rules",
            Schema::new()
                .attr(Attribute::required("metric", s()).one_of(HEALTH_METRICS))
                .attr(Attribute::required("op", s()).one_of(&["GREATER_THAN"]))
                .attr(Attribute::required("value", n())),
        )),
    )
}

pub(super) fn library() -> BlockType {
    BlockType::list(
        "library",
        crate::resources::cluster_fields::library_schema(),
    )
}

pub(super) fn subscriptions(name: &'static str) -> BlockType {
    BlockType::list(
        name,
        Schema::new()
            .attr(Attribute::optional("user_name", s()))
            .attr(Attribute::optional("destination_id", s())),
    )
    .describe(
        "Each names one of user_name (an email) or destination_id (a notification destination).",
    )
}

/// Where a task's code is read from. Left out, the service reads it from the job's
/// git_source when there is one and from the workspace otherwise, and answers that source
/// (databricks/cli libs/testserver/jobs.go, setSourceIfNotSet): read as unset then (see
/// [`unset_derived`]), so it is not drift and follows git_source. WORKSPACE is the default
/// of the jobs that have no git_source.
pub(super) fn code_source() -> Attribute {
    Attribute::optional("source", s())
        .one_of(SOURCE)
        .server_default("WORKSPACE")
        .describe(
            "WORKSPACE or GIT; left out, GIT for a job with a git_source, WORKSPACE otherwise.",
        )
}

/// `jobs.StorageMode` of Power BI tables and models.
pub(super) const POWER_BI_STORAGE: &[&str] = &["DIRECT_QUERY", "IMPORT", "DUAL"];

/// A task; `nested` tasks (inside `for_each_task`) cannot hold another `for_each_task`.
pub(super) fn task_schema(nested: bool) -> Schema {
    let mut schema = Schema::new()
        .attr(Attribute::required("task_key", s()))
        .attr(Attribute::optional("description", s()))
        .attr(
            Attribute::optional("run_if", s())
                .server_default("ALL_SUCCESS")
                .one_of(RUN_IF),
        )
        .attr(Attribute::optional("existing_cluster_id", s()))
        .attr(Attribute::optional("job_cluster_key", s()))
        .attr(Attribute::optional("environment_key", s()))
        .attr(Attribute::optional("timeout_seconds", n()).server_default(0i64))
        .attr(Attribute::optional("max_retries", n()).server_default(0i64))
        .attr(Attribute::optional("min_retry_interval_millis", n()).server_default(0i64))
        .attr(Attribute::optional("retry_on_timeout", b()).server_default(false))
        .attr(Attribute::optional("disabled", b()).server_default(false))
        .attr(
            Attribute::optional("disable_auto_optimization", b())
                .describe("Serverless tasks: no automatic optimisation (retries among it)."),
        )
        // Keyed: the service answers with the dependencies sorted by task key, whatever
        // order they were sent in, so their order carries no meaning.
        .block(BlockType::keyed(
            "depends_on",
            "task_key",
            Schema::new()
                .attr(Attribute::required("task_key", s()))
                .attr(
                    Attribute::optional("outcome", s())
                        .one_of(&["true", "false"])
                        .check(outcome_value)
                        .describe("For a dependency on a condition_task: the result it needs. To run a task when another fails, use the task's run_if."),
                ),
        ));
    for t in TASK_TYPES.iter().filter(|t| t.nests) {
        schema = schema.block(t.block());
    }
    schema = schema
        .block(crate::resources::cluster_fields::new_cluster())
        .block(library())
        .block(email_notifications())
        .block(webhook_notifications())
        .block(notification_settings(true))
        .block(health())
        .block(BlockType::single(
            "compute",
            Schema::new().attr(
                Attribute::optional("hardware_accelerator", s())
                    .describe("Serverless GPU compute, e.g. GPU_1xA10."),
            ),
        ));
    if !nested {
        for t in TASK_TYPES.iter().filter(|t| !t.nests) {
            schema = schema.block(t.block());
        }
    }
    schema
}

/// The deprecated single-task syntax (Jobs API 2.0): a job's one task written at its top
/// level. Accepted with a warning and planned as the equivalent one-task job
/// ([`Job::prepare_config`]), so what the service holds and reads back is that job.
pub(super) fn single_task_fields(mut schema: Schema) -> Schema {
    for t in task_types::single_task_types() {
        schema = schema.block(
            t.block()
                .describe("Deprecated single-task syntax: write it in a task block."),
        );
    }
    schema
        .attr(
            Attribute::optional("existing_cluster_id", s())
                .describe("Deprecated single-task syntax: write it in a task block."),
        )
        .attr(
            Attribute::optional("max_retries", n())
                .describe("Deprecated single-task syntax: write it in a task block."),
        )
        .attr(
            Attribute::optional("min_retry_interval_millis", n())
                .describe("Deprecated single-task syntax: write it in a task block."),
        )
        .attr(
            Attribute::optional("retry_on_timeout", b())
                .describe("Deprecated single-task syntax: write it in a task block."),
        )
        .block(crate::resources::cluster_fields::new_cluster().describe(
            "Deprecated single-task syntax: write it in a task block (or a job_cluster).",
        ))
        .block(library().describe("Deprecated single-task syntax: write it in a task block."))
}

pub(super) fn pause_status() -> Attribute {
    Attribute::optional("pause_status", s())
        .server_default("UNPAUSED")
        .one_of(values::PAUSE_STATUS)
}

/// A cron schedule; the job's own (`job`) pauses and may wait for a SQL condition, one of
/// `triggers` does neither itself.
pub(super) fn schedule(job: bool) -> BlockType {
    let mut schema = Schema::new()
        .attr(
            Attribute::required("quartz_cron_expression", s())
                .check(values::quartz_cron)
                .describe("Quartz cron: seconds minutes hours day-of-month month day-of-week [year], one of the day fields `?`, e.g. \"0 0 2 * * ?\"."),
        )
        .attr(
            Attribute::required("timezone_id", s())
                .check(values::time_zone)
                .describe("A Java time-zone id, e.g. \"Europe/Zurich\" or \"UTC\"."),
        );
    if job {
        schema = schema.attr(pause_status()).block(sql_condition());
    }
    BlockType::single("schedule", schema)
}

/// Continuous runs; the job's own pauses, one of `triggers` does not itself.
pub(super) fn continuous(job: bool) -> BlockType {
    let mut schema = Schema::new()
        .attr(Attribute::optional("task_retry_mode", s()).one_of(&["NEVER", "ON_FAILURE"]));
    if job {
        schema = schema.attr(pause_status());
    }
    BlockType::single("continuous", schema)
}

/// A SQL query whose result decides whether a trigger fires.
pub(super) fn sql_condition() -> BlockType {
    BlockType::single(
        "sql_condition",
        Schema::new()
            .attr(Attribute::required("sql_query_id", s()))
            .attr(Attribute::required("warehouse_id", s()))
            .attr(
                Attribute::optional("trigger_mode", s())
                    .one_of(&["QUERY_RETURNS_ROWS", "RESULT_VALUE_CHANGES"]),
            ),
    )
}

/// The event triggers, as `trigger` and each of `triggers` take them.
pub(super) fn trigger_blocks(mut block: BlockType) -> BlockType {
    let waits = |schema: Schema| {
        schema
            .attr(Attribute::optional(
                "min_time_between_triggers_seconds",
                n(),
            ))
            .attr(Attribute::optional("wait_after_last_change_seconds", n()))
    };
    block.schema = block
        .schema
        .block(BlockType::single(
            "file_arrival",
            waits(Schema::new().attr(Attribute::required("url", s()))),
        ))
        .block(BlockType::single(
            "table_update",
            waits(
                Schema::new()
                    .attr(Attribute::required("table_names", strings()))
                    .attr(
                        Attribute::optional("condition", s())
                            .one_of(&["ANY_UPDATED", "ALL_UPDATED"]),
                    ),
            ),
        ))
        .block(BlockType::single(
            "periodic",
            Schema::new()
                .attr(Attribute::required("interval", n()))
                .attr(
                    Attribute::required("unit", s()).one_of(&["MINUTES", "HOURS", "DAYS", "WEEKS"]),
                ),
        ))
        .block(BlockType::single(
            "model",
            waits(
                Schema::new()
                    .attr(Attribute::required("condition", s()).one_of(&[
                        "MODEL_CREATED",
                        "MODEL_VERSION_READY",
                        "MODEL_ALIAS_SET",
                    ]))
                    .attr(Attribute::optional("securable_name", s()))
                    .attr(Attribute::optional("aliases", strings())),
            ),
        ))
        .block(sql_condition());
    block
}

pub fn schema() -> Schema {
    let schema = Schema::new()
        .describe("A job (Jobs API 2.2) with its tasks, compute, triggers and notifications.")
        // Every update is a jobs/reset: what the configuration leaves out is reset.
        .whole_writes()
        .attr(
            Attribute::optional("name", s())
                .server_default(UNTITLED)
                .describe("Optional, as in the Terraform provider: the service calls a job without one \"Untitled\"."),
        )
        .attr(Attribute::optional("description", s()))
        .attr(
            Attribute::optional("always_running", b())
                .server_default(false)
                .describe("Deprecated (as in the Terraform provider; use control_run_state with continuous): after each create and update, the active run is cancelled and a new one started, and apply waits until it runs. brickform-only: never sent."),
        )
        .attr(
            Attribute::optional("control_run_state", b())
                .server_default(false)
                .describe("Continuous jobs: an update cancels the active run, so the run the service starts next runs the new settings. brickform-only: never sent."),
        )
        .attr(Attribute::optional("usage_policy_id", s()))
        .attr(Attribute::optional("parent_path", s()).describe("The workspace folder the job is shown in."))
        .attr(Attribute::computed("format", s()))
        .attr(Attribute::optional("timeout_seconds", n()).server_default(0i64))
        .attr(Attribute::optional("max_concurrent_runs", n()).server_default(1i64))
        .attr(Attribute::optional("tags", map()))
        .attr(Attribute::optional("edit_mode", s()).one_of(&["UI_LOCKED", "EDITABLE"]))
        .attr(Attribute::optional("budget_policy_id", s()))
        .attr(
            Attribute::optional("performance_target", s())
                .one_of(&["PERFORMANCE_OPTIMIZED", "STANDARD"])
                .describe("Serverless jobs: how fast runs start and run."),
        )
        .attr(Attribute::computed("id", s()))
        .attr(Attribute::computed("url", s()))
        .attr(Attribute::computed("creator_user_name", s()))
        .attr(Attribute::computed("run_as_user_name", s()))
        .block(
            BlockType::keyed("task", "task_key", task_schema(false))
                .describe("A task; tasks are matched by task_key, so their order does not matter."),
        )
        .block(BlockType::keyed(
            "job_cluster",
            "job_cluster_key",
            Schema::new()
                .attr(Attribute::required("job_cluster_key", s()))
                .attr(Attribute::optional("serverless_compute_id", s()))
                .block(crate::resources::cluster_fields::new_cluster()),
        ))
        .block(BlockType::keyed(
            "environment",
            "environment_key",
            Schema::new()
                .attr(Attribute::required("environment_key", s()))
                .block(BlockType::single(
                    "spec",
                    Schema::new()
                        .attr(Attribute::optional("environment_version", s()))
                        .attr(Attribute::optional("client", s()).describe("Deprecated by the service for environment_version."))
                        .attr(Attribute::optional("base_environment", s()))
                        .attr(Attribute::optional("dependencies", strings()))
                        .attr(Attribute::optional("java_dependencies", strings())),
                )),
        ))
        .block(BlockType::keyed(
            "parameter",
            "name",
            Schema::new()
                .attr(Attribute::required("name", s()))
                .attr(Attribute::required("default", s())),
        ))
        .block(schedule(true))
        .block(continuous(true))
        .block(BlockType::single(
            "deployment",
            Schema::new()
                .attr(Attribute::required("kind", s()).one_of(&["BUNDLE", "SYSTEM_MANAGED"]))
                .attr(Attribute::optional("metadata_file_path", s()))
                .attr(Attribute::optional("deployment_id", s()))
                .attr(Attribute::optional("version_id", s())),
        ))
        .block(
            BlockType::single(
                "timeouts",
                Schema::new()
                    .attr(Attribute::optional("create", s()).check(values::duration).describe("How long a create waits for the run always_running starts, e.g. \"20m\" (the default)."))
                    .attr(Attribute::optional("update", s()).check(values::duration).describe("How long an update waits for the runs it cancels and starts, e.g. \"20m\" (the default).")),
            )
            .describe("Wait limits of apply, as the Terraform provider's timeouts block. brickform-only: never sent."),
        )
        .block(trigger_blocks(BlockType::single(
            "trigger",
            Schema::new().attr(pause_status()),
        )))
        .block(
            trigger_blocks(BlockType::list(
                "triggers",
                Schema::new()
                    .attr(pause_status())
                    .block(schedule(false))
                    .block(continuous(false)),
            ))
            .describe("Several triggers at once (a preview of the service); instead of schedule, trigger and continuous."),
        )
        .block(email_notifications())
        .block(webhook_notifications())
        .block(notification_settings(false))
        .block(health())
        .block(BlockType::single(
            "queue",
            Schema::new().attr(Attribute::required("enabled", b())),
        ))
        .block(BlockType::single(
            "run_as",
            Schema::new()
                .attr(Attribute::optional("user_name", s()).normalize(Normalize::Principal))
                .attr(Attribute::optional("service_principal_name", s()))
                .attr(Attribute::optional("group_name", s())),
        ))
        .block(BlockType::single(
            "git_source",
            Schema::new()
                .attr(Attribute::required("url", s()))
                .attr(Attribute::required("provider", s()).one_of_any_case(GIT_PROVIDERS))
                .attr(Attribute::optional("branch", s()))
                .attr(Attribute::optional("tag", s()))
                .attr(Attribute::optional("commit", s()))
                .block(BlockType::single(
                    "job_source",
                    Schema::new()
                        .attr(Attribute::required("job_config_path", s()))
                        .attr(Attribute::required("import_from_git_branch", s()))
                        .attr(Attribute::optional("dirty_state", s()).one_of(&["NOT_SYNCED", "DISCONNECTED"])),
                ))
                .block(BlockType::single(
                    "sparse_checkout",
                    Schema::new().attr(Attribute::optional("patterns", strings())),
                )),
        ));
    single_task_fields(schema)
}
