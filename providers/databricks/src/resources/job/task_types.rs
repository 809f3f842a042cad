//! The task types of a job as a table: one row per `*_task` block a task may hold, with
//! its schema (a function of its own below) and where else it may stand. A task holds
//! exactly one of them; the same block serves a task, a task inside a `for_each_task`, and
//! (for the types Jobs API 2.0 had) the deprecated single-task syntax at a job's top level.

use super::*;

/// One task type.
pub(super) struct TaskType {
    pub name: &'static str,
    /// Also written at a job's top level in the deprecated single-task syntax (Jobs API
    /// 2.0, [`super::single_task_fields`]): its place among those, in the order that API
    /// listed them (the schema keeps it).
    pub single_task: Option<u8>,
    /// May stand in a task inside a `for_each_task` (which cannot hold another).
    pub nests: bool,
    schema: fn() -> Schema,
}

impl TaskType {
    pub fn block(&self) -> BlockType {
        BlockType::single(self.name, (self.schema)())
    }
}

/// Every task type, in the order the schema (and the reference) lists them.
pub(super) const TASK_TYPES: &[TaskType] = &[
    TaskType {
        name: "notebook_task",
        single_task: Some(0),
        nests: true,
        schema: notebook_task,
    },
    TaskType {
        name: "pipeline_task",
        single_task: Some(4),
        nests: true,
        schema: pipeline_task,
    },
    TaskType {
        name: "python_wheel_task",
        single_task: Some(5),
        nests: true,
        schema: python_wheel_task,
    },
    TaskType {
        name: "spark_python_task",
        single_task: Some(2),
        nests: true,
        schema: spark_python_task,
    },
    TaskType {
        name: "spark_jar_task",
        single_task: Some(1),
        nests: true,
        schema: spark_jar_task,
    },
    TaskType {
        name: "spark_submit_task",
        single_task: Some(3),
        nests: true,
        schema: spark_submit_task,
    },
    TaskType {
        name: "dbt_task",
        single_task: Some(6),
        nests: true,
        schema: dbt_task,
    },
    TaskType {
        name: "sql_task",
        single_task: None,
        nests: true,
        schema: sql_task,
    },
    TaskType {
        name: "dashboard_task",
        single_task: None,
        nests: true,
        schema: dashboard_task,
    },
    TaskType {
        name: "power_bi_task",
        single_task: None,
        nests: true,
        schema: power_bi_task,
    },
    TaskType {
        name: "clean_rooms_notebook_task",
        single_task: None,
        nests: true,
        schema: clean_rooms_notebook_task,
    },
    TaskType {
        name: "condition_task",
        single_task: None,
        nests: true,
        schema: condition_task,
    },
    TaskType {
        name: "run_job_task",
        single_task: Some(7),
        nests: true,
        schema: run_job_task,
    },
    TaskType {
        name: "alert_task",
        single_task: None,
        nests: true,
        schema: alert_task,
    },
    TaskType {
        name: "dbt_platform_task",
        single_task: None,
        nests: true,
        schema: dbt_platform_task,
    },
    TaskType {
        name: "dbt_cloud_task",
        single_task: None,
        nests: true,
        schema: dbt_cloud_task,
    },
    TaskType {
        name: "python_operator_task",
        single_task: None,
        nests: true,
        schema: python_operator_task,
    },
    TaskType {
        name: "gen_ai_compute_task",
        single_task: None,
        nests: true,
        schema: gen_ai_compute_task,
    },
    TaskType {
        name: "ai_runtime_task",
        single_task: None,
        nests: true,
        schema: ai_runtime_task,
    },
    TaskType {
        name: "for_each_task",
        single_task: None,
        nests: false,
        schema: for_each_task,
    },
];

/// The task types of the deprecated single-task syntax, in the order Jobs API 2.0 listed
/// them.
pub(super) fn single_task_types() -> impl Iterator<Item = &'static TaskType> {
    let mut types: Vec<&TaskType> = TASK_TYPES
        .iter()
        .filter(|t| t.single_task.is_some())
        .collect();
    types.sort_by_key(|t| t.single_task);
    types.into_iter()
}

/// The names of the task types, for messages.
pub(super) fn names() -> Vec<&'static str> {
    TASK_TYPES.iter().map(|t| t.name).collect()
}

fn notebook_task() -> Schema {
    Schema::new()
        .attr(Attribute::required("notebook_path", s()))
        .attr(Attribute::optional("base_parameters", map()))
        .attr(code_source())
        .attr(Attribute::optional("warehouse_id", s()))
}

fn pipeline_task() -> Schema {
    Schema::new()
        .attr(Attribute::required("pipeline_id", s()))
        .attr(Attribute::optional("full_refresh", b()).server_default(false))
        .attr(
            Attribute::optional("full_refresh_selection", strings())
                .describe("Tables to reset and recompute."),
        )
        .attr(Attribute::optional("refresh_selection", strings()).describe("Tables to update."))
        .attr(Attribute::optional("refresh_flow_selection", strings()))
        .attr(Attribute::optional("reset_checkpoint_selection", strings()))
        .attr(Attribute::optional("parameters", map()))
}

fn python_wheel_task() -> Schema {
    Schema::new()
        .attr(Attribute::required("package_name", s()))
        .attr(Attribute::required("entry_point", s()))
        .attr(Attribute::optional("parameters", strings()))
        .attr(Attribute::optional("named_parameters", map()))
}

fn spark_python_task() -> Schema {
    Schema::new()
        .attr(Attribute::required("python_file", s()))
        .attr(Attribute::optional("parameters", strings()))
        .attr(code_source())
}

fn spark_jar_task() -> Schema {
    Schema::new()
        .attr(
            Attribute::optional("main_class_name", s())
                .describe("The class with the main method, in a JAR given as a library."),
        )
        .attr(Attribute::optional("parameters", strings()))
        .attr(
            Attribute::optional("jar_uri", s())
                .describe("Deprecated by the service: give the JAR as a library."),
        )
        // The service sets it; the Terraform provider computes it.
        .attr(Attribute::optional_computed("run_as_repl", b()))
}

fn spark_submit_task() -> Schema {
    Schema::new().attr(
        Attribute::optional("parameters", strings())
            .describe("spark-submit's command line: --class, --jars, --py-files, --conf, the main file and its arguments."),
    )
}

fn dbt_task() -> Schema {
    Schema::new()
        .attr(
            Attribute::required("commands", strings())
                .describe("dbt commands run in order; each starts with `dbt`."),
        )
        .attr(Attribute::optional("project_directory", s()))
        .attr(Attribute::optional("profiles_directory", s()))
        .attr(Attribute::optional("catalog", s()))
        .attr(Attribute::optional("schema", s()).server_default("default"))
        .attr(Attribute::optional("warehouse_id", s()))
        .attr(code_source())
}

fn sql_task() -> Schema {
    Schema::new()
        .attr(Attribute::required("warehouse_id", s()))
        .attr(Attribute::optional("parameters", map()))
        .block(BlockType::single(
            "query",
            Schema::new().attr(Attribute::required("query_id", s())),
        ))
        .block(BlockType::single(
            "file",
            Schema::new()
                .attr(Attribute::required("path", s()))
                .attr(code_source()),
        ))
        .block(BlockType::single(
            "alert",
            Schema::new()
                .attr(Attribute::required("alert_id", s()))
                .attr(Attribute::optional("pause_subscriptions", b()))
                .block(subscriptions("subscriptions")),
        ))
        .block(BlockType::single(
            "dashboard",
            Schema::new()
                .attr(Attribute::required("dashboard_id", s()))
                .attr(Attribute::optional("custom_subject", s()))
                .attr(Attribute::optional("pause_subscriptions", b()))
                .block(subscriptions("subscriptions")),
        ))
}

fn dashboard_task() -> Schema {
    Schema::new()
        .attr(Attribute::required("dashboard_id", s()))
        .attr(Attribute::optional("warehouse_id", s()))
        .attr(Attribute::optional("filters", map()))
        .block(BlockType::single(
            "subscription",
            Schema::new()
                .attr(Attribute::optional("custom_subject", s()))
                .attr(Attribute::optional("paused", b()))
                .block(subscriptions("subscribers"))
                .block(BlockType::single(
                    "attachment",
                    Schema::new()
                        .block(BlockType::single(
                            "data_attachment",
                            Schema::new()
                                .attr(Attribute::required("file_format", s()).one_of(&[
                                    "FILE_FORMAT_CSV",
                                    "FILE_FORMAT_EXCEL",
                                    "FILE_FORMAT_TSV",
                                ]))
                                .attr(Attribute::optional("include_applied_filters", b()))
                                .block(BlockType::list(
                                    "widgets",
                                    Schema::new()
                                        .attr(Attribute::required("page_id", s()))
                                        .attr(Attribute::required("widget_id", s())),
                                )),
                        ))
                        .block(BlockType::single(
                            "page_attachment",
                            Schema::new()
                                .attr(Attribute::optional("page_ids", strings()))
                                .attr(
                                    Attribute::optional("page_selection", s())
                                        .one_of(&["PAGE_SELECTION_ALL", "PAGE_SELECTION_SUBSET"]),
                                ),
                        )),
                )),
        ))
}

fn power_bi_task() -> Schema {
    Schema::new()
        .attr(Attribute::required("warehouse_id", s()))
        .attr(Attribute::required("connection_resource_name", s()))
        .attr(Attribute::optional("refresh_after_update", b()))
        .block(
            BlockType::single(
                "power_bi_model",
                Schema::new()
                    .attr(Attribute::required("workspace_name", s()))
                    .attr(Attribute::required("model_name", s()))
                    .attr(Attribute::required("storage_mode", s()).one_of(POWER_BI_STORAGE))
                    .attr(
                        Attribute::required("authentication_method", s()).one_of(&["OAUTH", "PAT"]),
                    )
                    .attr(Attribute::optional("overwrite_existing", b())),
            )
            .min(1),
        )
        .block(
            BlockType::list(
                "tables",
                Schema::new()
                    .attr(Attribute::required("catalog", s()))
                    .attr(Attribute::required("schema", s()))
                    .attr(Attribute::optional("name", s()))
                    .attr(Attribute::required("storage_mode", s()).one_of(POWER_BI_STORAGE)),
            )
            .min(1),
        )
}

fn clean_rooms_notebook_task() -> Schema {
    Schema::new()
        .attr(Attribute::required("clean_room_name", s()))
        .attr(Attribute::required("notebook_name", s()))
        .attr(Attribute::optional("notebook_base_parameters", map()))
        .attr(Attribute::optional("etag", s()))
}

fn condition_task() -> Schema {
    Schema::new()
        .attr(Attribute::required("op", s()).one_of(CONDITION_OPS))
        .attr(Attribute::required("left", s()))
        .attr(Attribute::required("right", s()))
}

fn run_job_task() -> Schema {
    Schema::new()
        .attr(Attribute::required("job_id", n()))
        .attr(Attribute::optional("job_parameters", map()))
        // The legacy parameters of run-now, passed to the tasks of the job it runs.
        .attr(Attribute::optional("notebook_params", map()))
        .attr(Attribute::optional("python_params", strings()))
        .attr(Attribute::optional("python_named_params", map()))
        .attr(Attribute::optional("jar_params", strings()))
        .attr(Attribute::optional("spark_submit_params", strings()))
        .attr(Attribute::optional("sql_params", map()))
        .attr(Attribute::optional("dbt_commands", strings()))
        .block(BlockType::single(
            "pipeline_params",
            Schema::new()
                .attr(Attribute::optional("full_refresh", b()))
                .attr(Attribute::optional("full_refresh_selection", strings()))
                .attr(Attribute::optional("refresh_selection", strings()))
                .attr(Attribute::optional("refresh_flow_selection", strings()))
                .attr(Attribute::optional("reset_checkpoint_selection", strings())),
        ))
}

fn alert_task() -> Schema {
    Schema::new()
        .attr(Attribute::optional("alert_id", s()))
        .attr(
            Attribute::optional("workspace_path", s())
                .describe("The alert's workspace path, instead of alert_id."),
        )
        .attr(Attribute::optional("warehouse_id", s()))
        .attr(Attribute::optional("parameters", map()))
        .block(subscriptions("subscribers"))
}

fn dbt_platform_task() -> Schema {
    Schema::new()
        .attr(Attribute::optional("connection_resource_name", s()))
        .attr(Attribute::optional("dbt_platform_job_id", s()))
}

fn dbt_cloud_task() -> Schema {
    Schema::new()
        .attr(Attribute::optional("connection_resource_name", s()))
        .attr(
            Attribute::optional("dbt_cloud_job_id", n())
                .describe("dbt_cloud_task is deprecated by the service for dbt_platform_task."),
        )
}

fn python_operator_task() -> Schema {
    Schema::new()
        .attr(Attribute::optional("main", s()).describe("The operator to run."))
        .block(BlockType::list(
            "parameters",
            Schema::new()
                .attr(Attribute::optional("name", s()))
                .attr(Attribute::optional("value", s())),
        ))
}

fn gen_ai_compute_task() -> Schema {
    Schema::new()
        .attr(Attribute::required("dl_runtime_image", s()))
        .attr(Attribute::optional("command", s()))
        .attr(Attribute::optional("training_script_path", s()))
        .attr(Attribute::optional("source", s()).one_of(SOURCE))
        .attr(Attribute::optional("mlflow_experiment_name", s()))
        .attr(Attribute::optional("yaml_parameters", s()))
        .attr(Attribute::optional("yaml_parameters_file_path", s()))
        .block(BlockType::single(
            "compute",
            Schema::new()
                .attr(Attribute::required("num_gpus", n()))
                .attr(Attribute::optional("gpu_node_pool_id", s()))
                .attr(Attribute::optional("gpu_type", s())),
        ))
}

fn ai_runtime_task() -> Schema {
    Schema::new()
        .attr(Attribute::required("experiment", s()))
        .attr(Attribute::optional("code_source_path", s()))
        .attr(Attribute::optional("docker_image_url", s()))
        .attr(Attribute::optional("unity_catalog_image_path", s()))
        .attr(Attribute::optional("mlflow_artifact_location", s()))
        .attr(Attribute::optional("mlflow_experiment_directory", s()))
        .attr(Attribute::optional("mlflow_run", s()))
        .attr(Attribute::optional("priority_class", s()).one_of(&["BEST_EFFORT", "NORMAL"]))
        .block(
            BlockType::list(
                "deployments",
                Schema::new()
                    .attr(Attribute::optional("name", s()))
                    .attr(Attribute::optional("command_path", s()))
                    .block(
                        BlockType::single(
                            "compute",
                            Schema::new()
                                .attr(Attribute::required("accelerator_type", s()).one_of(&[
                                    "GPU_1xA10",
                                    "GPU_1xH100",
                                    "GPU_8xH100",
                                    "GPU_8xB300",
                                ]))
                                .attr(Attribute::required("accelerator_count", n()))
                                .attr(Attribute::optional("provisioned_capacity_id", s())),
                        )
                        .min(1),
                    ),
            )
            .min(1),
        )
}

fn for_each_task() -> Schema {
    Schema::new()
        .attr(Attribute::required("inputs", s()))
        .attr(Attribute::optional("concurrency", n()))
        .block(BlockType::single("task", task_schema(true)).min(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_task_type_is_in_the_table_once_and_the_legacy_ones_are_known() {
        let mut all = names();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
        let single: Vec<_> = single_task_types().map(|t| t.name).collect();
        assert_eq!(single.first(), Some(&"notebook_task"));
        assert_eq!(single.last(), Some(&"run_job_task"));
        // A nested task cannot hold a for_each_task; every other type nests.
        assert_eq!(TASK_TYPES.iter().filter(|t| !t.nests).count(), 1);
        assert!(task_schema(true).block_type("for_each_task").is_none());
        for t in TASK_TYPES {
            assert!(
                task_schema(false).block_type(t.name).is_some(),
                "{}",
                t.name
            );
        }
    }
}
