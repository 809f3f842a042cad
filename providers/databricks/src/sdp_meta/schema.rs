//! The schemas of `sdp_meta_flow` and `sdp_meta_onboarding`, as data (docs/sdp-meta-flows.md).
//!
//! Decoded configurations follow the engine's conventions: every configurable attribute is
//! present (null when unset), single blocks are an object or null, and repeated named blocks
//! (`append_flow`, `sink`, `flow`) are *keyed* blocks: a list of objects, each carrying its
//! name under the `name` attribute. In HCL the name is written as that attribute
//! (`append_flow { name = "late_orders" … }`); the engine sorts keyed items by name.
//!
//! The onboarding's computed attributes are optional+computed and filled in by the kind from
//! the configuration itself ([`super::render::derive`]), as `databricks_ingestion_pipeline`
//! does for `tables`, so plans show them as known values whenever the flows are known.

use brickform_core::provider::{AttrType, Attribute, BlockType, Normalize, Schema};

/// The onboarding's `directory` when unset.
pub const DEFAULT_DIRECTORY: &str = "conf";
/// The onboarding's `file_name` when unset.
pub const DEFAULT_FILE_NAME: &str = "onboarding.json";
pub const DEFAULT_BRONZE_SPEC_TABLE: &str = "bronze_dataflowspec";
pub const DEFAULT_SILVER_SPEC_TABLE: &str = "silver_dataflowspec";
pub const DEFAULT_IMPORT_AUTHOR: &str = "brickform";
pub const DEFAULT_VERSION: &str = "v1";
/// sdp-meta takes the overwrite path only for exactly `"True"`; anything else merges into a
/// dataflowspec table that must already exist (docs/architecture.md, sdp-meta onboarding facts).
pub const DEFAULT_OVERWRITE: &str = "True";
pub const DEFAULT_UC_ENABLED: bool = true;
/// The onboarding's `pipeline_mode` when unset: one pipeline per layer.
pub const DEFAULT_PIPELINE_MODE: &str = "split";
/// `pipeline_mode`'s values, as sdp-meta's bundle template names them.
pub const PIPELINE_MODES: &[&str] = &["split", "combined"];

/// The onboarding attributes derived from the configuration: configuring them is an error.
pub const ONBOARDING_DERIVED: &[&str] = &[
    "onboarding_file_path",
    "onboarding_json",
    "files",
    "onboard_layer",
    "named_parameters",
    "pipeline_configuration",
    "bronze_spec_table",
    "silver_spec_table",
    "groups",
];

/// The layer names of a flow.
pub const LAYERS: [&str; 2] = ["bronze", "silver"];

fn s(name: &'static str, d: &'static str) -> Attribute {
    Attribute::optional(name, AttrType::String).describe(d)
}
fn list(name: &'static str, d: &'static str) -> Attribute {
    Attribute::optional(name, AttrType::strings()).describe(d)
}
fn map(name: &'static str, d: &'static str) -> Attribute {
    Attribute::optional(name, AttrType::string_map()).describe(d)
}
fn flag(name: &'static str, d: &'static str) -> Attribute {
    Attribute::optional(name, AttrType::Bool).describe(d)
}
fn any_map() -> AttrType {
    AttrType::Map(Box::new(AttrType::Any))
}

// ---------- sdp_meta_flow ----------

fn source_metadata() -> BlockType {
    BlockType::single(
        "source_metadata",
        Schema::new()
            .attr(flag(
                "include_autoloader_metadata_column",
                "Adds Auto Loader's _metadata column to the bronze table (rendered \"True\"/\"False\").",
            ))
            .attr(s(
                "autoloader_metadata_col_name",
                "The name of that column; sdp-meta's default is source_metadata.",
            ))
            .attr(map(
                "select_metadata_cols",
                "Columns to extract from _metadata: new column name → expression, e.g. { input_file_name = \"_metadata.file_name\" }.",
            )),
    )
    .describe("cloudFiles sources: Auto Loader file metadata (source_details.source_metadata).")
}

fn kafka() -> BlockType {
    BlockType::single(
        "kafka",
        Schema::new()
            .attr(s(
                "bootstrap_servers",
                "source_details[\"kafka.bootstrap.servers\"]; or set the two secrets below.",
            ))
            .attr(s(
                "servers_secrets_scope_name",
                "source_details.kafka_source_servers_secrets_scope_name: the secret scope holding the brokers.",
            ))
            .attr(s(
                "servers_secrets_scope_key",
                "source_details.kafka_source_servers_secrets_scope_key: the secret key holding the brokers.",
            ))
            .attr(s("subscribe", "source_details.subscribe: the topic."))
            .attr(map(
                "options",
                "More source_details keys, verbatim (kafka.ssl.*, startingOffsets, …).",
            )),
    )
    .describe("kafka sources: the broker and topic, rendered into source_details.")
}

fn eventhub() -> BlockType {
    BlockType::single(
        "eventhub",
        Schema::new()
            .attr(s("namespace", "source_details[\"eventhub.namespace\"]."))
            .attr(s("name", "source_details[\"eventhub.name\"]: the event hub."))
            .attr(s("port", "source_details[\"eventhub.port\"], e.g. \"9093\"."))
            .attr(s(
                "access_key_name",
                "source_details[\"eventhub.accessKeyName\"]: the shared access policy.",
            ))
            .attr(s(
                "access_key_secret_name",
                "source_details[\"eventhub.accessKeySecretName\"]; sdp-meta defaults it to access_key_name.",
            ))
            .attr(s(
                "secrets_scope_name",
                "source_details[\"eventhub.secretsScopeName\"]: the secret scope holding the key.",
            ))
            .attr(map("options", "More source_details keys, verbatim.")),
    )
    .describe("eventhub sources: the event hub, rendered into source_details.")
}

fn source() -> BlockType {
    BlockType::single(
        "source",
        Schema::new()
            .attr(
                Attribute::required("format", AttrType::String)
                    .describe("source_format: cloudFiles, delta, kafka, eventhub or snapshot (case-insensitive)."),
            )
            .attr(
                Attribute::optional("ingestion_table", AttrType::Any).describe(
                    "delta and snapshot sources: a Lakeflow Connect destination, e.g. databricks_ingestion_pipeline.ig.table[\"orders\"] (an object with destination_table = \"catalog.schema.table\" and scd_type); rendered as source_database and source_table.",
                ),
            )
            .attr(s(
                "table",
                "delta and snapshot sources: the source table's full name, catalog.schema.table; rendered as source_database and source_table.",
            ))
            .attr(s(
                "source_database",
                "source_details.source_database: schema or catalog.schema; with source_table.",
            ))
            .attr(s("source_table", "source_details.source_table."))
            .attr(s(
                "source_catalog",
                "The source catalog. delta and snapshot: rendered into source_database (sdp-meta 0.1.0 ignores source_catalog_{env} for them); other formats: source_details.source_catalog_{env}.",
            ))
            .attr(s(
                "snapshot_format",
                "snapshot sources (required for them): delta reads source_database.source_table; other formats need a snapshot function in the runner.",
            ))
            .attr(s(
                "source_path",
                "source_details.source_path_{env}: the files cloudFiles and file snapshots read.",
            ))
            .attr(s(
                "source_schema_path",
                "source_details.source_schema_path: a DDL file with the source schema.",
            ))
            .block(source_metadata())
            .block(kafka())
            .block(eventhub()),
    )
    .describe("Where the bronze layer reads from (source_format and source_details). Required when the flow has a bronze layer.")
}

/// The optional fields of `<layer>_cdc_apply_changes` shared with `_flows` (docs/architecture.md,
/// sdp-meta onboarding facts, CDC).
fn cdc_common(schema: Schema) -> Schema {
    schema
        .attr(Attribute::required("keys", AttrType::strings()).describe("The primary key columns."))
        .attr(
            Attribute::required("sequence_by", AttrType::String)
                .describe("The ordering column; \"a,b\" orders by struct(a, b)."),
        )
        .attr(Attribute::required("scd_type", AttrType::String).describe("\"1\" or \"2\"."))
        .attr(s("where", "A filter applied to the change events."))
        .attr(flag(
            "ignore_null_updates",
            "Keeps existing values where an update has nulls.",
        ))
        .attr(s(
            "apply_as_deletes",
            "A SQL expression that is true for delete events, e.g. \"_change_type = 'delete'\".",
        ))
        .attr(s(
            "apply_as_truncates",
            "A SQL expression that is true for truncate events.",
        ))
        .attr(list("column_list", "The columns to keep."))
        .attr(list("except_column_list", "The columns to drop."))
        .attr(list(
            "track_history_column_list",
            "SCD 2: the columns whose changes make history.",
        ))
        .attr(list(
            "track_history_except_column_list",
            "SCD 2: the columns whose changes make no history.",
        ))
        .attr(list(
            "ignore_null_updates_column_list",
            "Columns for which null updates are ignored.",
        ))
        .attr(list(
            "ignore_null_updates_except_column_list",
            "Columns for which null updates are not ignored.",
        ))
}

fn cdc_apply_changes() -> BlockType {
    BlockType::single(
        "cdc_apply_changes",
        cdc_common(Schema::new())
            .attr(s(
                "flow_name",
                "The AUTO CDC flow's name; sdp-meta chooses one when unset.",
            ))
            .attr(flag("once", "Runs the flow once (batch).")),
    )
    .describe("<layer>_cdc_apply_changes: AUTO CDC from a change stream.")
}

fn cdc_flow() -> BlockType {
    BlockType::keyed(
        "flow",
        "name",
        Schema::new()
            .attr(
                Attribute::required("name", AttrType::String)
                    .describe("The flow's name, unique in the block; its view is <name>_cdc_view."),
            )
            .attr(
                Attribute::required("source_format", AttrType::String)
                    .describe("bronze: cloudFiles, delta, kafka or eventhub; silver: delta."),
            )
            .attr(
                Attribute::optional("source_details", any_map())
                    .describe("The flow's source_details, verbatim (e.g. { source_database = \"main.raw\", source_table = \"orders_eu\" })."),
            )
            .attr(s("source_path", "Rendered as source_details.source_path_{env}."))
            .attr(map("reader_options", "Reader options."))
            .attr(list("select_exp", "Select expressions applied to the source."))
            .attr(list("where_clause", "Filters applied to the source."))
            .attr(flag("once", "Runs the flow once (batch).")),
    )
    .describe("One source of the multi-source AUTO CDC; flows are matched by name.")
}

fn cdc_apply_changes_flows() -> BlockType {
    BlockType::single("cdc_apply_changes_flows", cdc_common(Schema::new()).block(cdc_flow()))
        .describe("<layer>_cdc_apply_changes_flows: multi-source AUTO CDC into one target (exclusive with cdc_apply_changes).")
}

fn apply_changes_from_snapshot() -> BlockType {
    BlockType::single(
        "apply_changes_from_snapshot",
        Schema::new()
            .attr(Attribute::required("keys", AttrType::strings()).describe("The primary key columns."))
            .attr(Attribute::required("scd_type", AttrType::String).describe("\"1\" or \"2\"."))
            .attr(list("track_history_column_list", "SCD 2: the columns whose changes make history."))
            .attr(list(
                "track_history_except_column_list",
                "SCD 2: the columns whose changes make no history.",
            )),
    )
    .describe("<layer>_apply_changes_from_snapshot: AUTO CDC from snapshots (required for snapshot sources).")
}

fn expectations() -> BlockType {
    BlockType::single(
        "expectations",
        Schema::new()
            .attr(map("expect", "Rule name → SQL predicate; violations are recorded."))
            .attr(map("expect_all", "Alias of expect; expect wins when both are set."))
            .attr(map("expect_or_drop", "Rule name → predicate; violating rows are dropped."))
            .attr(map("expect_all_or_drop", "Alias of expect_or_drop, which wins when both are set."))
            .attr(map("expect_or_fail", "Rule name → predicate; a violation fails the update."))
            .attr(map("expect_all_or_fail", "Alias of expect_or_fail, which wins when both are set."))
            .attr(map(
                "expect_or_quarantine",
                "Rule name → predicate that is TRUE for bad rows, which go to the quarantine table.",
            )),
    )
    .describe("Data quality expectations, rendered to dqe/<data_flow_id>/<layer>_expectations.json and referenced by <layer>_data_quality_expectations_json_{env}.")
}

fn quarantine() -> BlockType {
    BlockType::single(
        "quarantine",
        Schema::new()
            .attr(s(
                "database",
                "<layer>_database_quarantine_{env}: schema or catalog.schema.",
            ))
            .attr(s("catalog", "<layer>_catalog_quarantine_{env}."))
            .attr(s("table", "<layer>_quarantine_table."))
            .attr(s("comment", "<layer>_quarantine_table_comment."))
            .attr(s(
                "path",
                "<layer>_quarantine_table_path_{env}; only without Unity Catalog.",
            ))
            .attr(list(
                "partitions",
                "<layer>_quarantine_table_partitions, rendered comma-separated.",
            ))
            .attr(map(
                "table_properties",
                "<layer>_quarantine_table_properties.",
            ))
            .attr(list(
                "cluster_by",
                "<layer>_quarantine_table_cluster_by, rendered as a list.",
            ))
            .attr(flag(
                "cluster_by_auto",
                "<layer>_quarantine_table_cluster_by_auto.",
            )),
    )
    .describe("Where rows matching expect_or_quarantine go.")
}

fn append_flow() -> BlockType {
    BlockType::keyed(
        "append_flow",
        "name",
        Schema::new()
            .attr(
                Attribute::required("name", AttrType::String)
                    .describe("The append flow's name; its view is <name>_view."),
            )
            .attr(
                Attribute::required("source_format", AttrType::String)
                    .describe("cloudFiles, delta, kafka or eventhub."),
            )
            .attr(flag(
                "create_streaming_table",
                "Whether the flow creates the target table (rendered false when unset).",
            ))
            .attr(
                Attribute::optional("source_details", any_map())
                    .describe("The flow's source_details, verbatim."),
            )
            .attr(s(
                "source_path",
                "Rendered as source_details.source_path_{env}.",
            ))
            .attr(s(
                "source_schema_path",
                "Rendered as source_details.source_schema_path.",
            ))
            .attr(map("reader_options", "Reader options."))
            .attr(map("spark_conf", "Spark configuration for the flow."))
            .attr(s("comment", "A comment."))
            .attr(flag("once", "Runs the flow once (batch).")),
    )
    .describe(
        "<layer>_append_flows[]: another source appending to the layer's table; matched by name.",
    )
}

fn sink() -> BlockType {
    BlockType::keyed(
        "sink",
        "name",
        Schema::new()
            .attr(
                Attribute::required("name", AttrType::String)
                    .describe("The sink's name (sdp-meta lower-cases it)."),
            )
            .attr(
                Attribute::required("format", AttrType::String)
                    .describe("delta, kafka or eventhub."),
            )
            .attr(
                Attribute::optional("options", AttrType::string_map())
                    .describe("Sink options; delta needs path or tablename."),
            )
            .attr(list(
                "select_exp",
                "Select expressions applied before writing.",
            ))
            .attr(s("where_clause", "A filter applied before writing.")),
    )
    .describe("<layer>_sinks[]: an external sink fed from the layer's input; matched by name.")
}

/// The fields both layers have.
fn layer(description: &'static str) -> Schema {
    Schema::new()
        .describe(description)
        .attr(
            Attribute::required("database", AttrType::String)
                .describe("<layer>_database_{env}: schema or catalog.schema."),
        )
        .attr(s("catalog", "<layer>_catalog_{env}."))
        .attr(Attribute::required("table", AttrType::String).describe("<layer>_table."))
        .attr(s("comment", "<layer>_table_comment."))
        .attr(s("path", "<layer>_table_path_{env}; only without Unity Catalog (uc_enabled = false)."))
        .attr(map("reader_options", "<layer>_reader_options (e.g. { readChangeFeed = \"true\" })."))
        .attr(map("table_properties", "<layer>_table_properties."))
        .attr(list(
            "partition_columns",
            "<layer>_partition_columns, rendered as the comma-separated string sdp-meta expects.",
        ))
        .attr(list("cluster_by", "<layer>_cluster_by, rendered as a list."))
        .attr(flag("cluster_by_auto", "<layer>_cluster_by_auto."))
        .attr(s("row_filter", "<layer>_row_filter: ROW FILTER catalog.schema.function ON (columns); Unity Catalog only."))
        .attr(s("quarantine_row_filter", "<layer>_quarantine_row_filter."))
        .attr(s(
            "expectations_file",
            "<layer>_data_quality_expectations_json_{env}: an existing expectations file, verbatim path; instead of the expectations block.",
        ))
        .block(cdc_apply_changes())
        .block(cdc_apply_changes_flows())
        .block(apply_changes_from_snapshot())
        .block(expectations())
        .block(quarantine())
        .block(append_flow())
        .block(sink())
}

fn silver() -> Schema {
    layer("The silver layer: reads the bronze table (bronze block's database and table).")
    .attr(list(
        "select_exp",
        "Select expressions, rendered into the silver transformations file.",
    ))
    .attr(list(
        "where_clause",
        "Filters, rendered into the silver transformations file.",
    ))
    .attr(s(
        "transformation_file",
        "silver_transformation_json_{env}: an existing transformations file, verbatim path; instead of select_exp and where_clause.",
    ))
}

/// `sdp_meta_flow`: one sdp-meta dataflow.
pub fn flow_schema() -> Schema {
    Schema::new()
        .describe("One sdp-meta dataflow (bronze and/or silver). Rendered into an sdp_meta_onboarding's files; it has no object of its own in the workspace.")
        .attr(
            Attribute::required("data_flow_id", AttrType::String)
                .describe("data_flow_id: unique within an onboarding."),
        )
        .attr(
            Attribute::required("data_flow_group", AttrType::String)
                .describe("data_flow_group: pipelines select flows by group."),
        )
        .attr(s(
            "source_system",
            "source_system: informational (sdp-meta does not persist it).",
        ))
        .block(source())
        .block(
            BlockType::single(
                "bronze",
                layer("The bronze layer: the table the source is written to."),
            )
            .describe("The bronze layer (with source), or, for a silver-only flow, the bronze table silver reads."),
        )
        .block(BlockType::single("silver", silver()).describe("The silver layer."))
}

// ---------- sdp_meta_onboarding ----------

/// `sdp_meta_onboarding`: the onboarding file set in a volume, rendered from flows.
pub fn onboarding_schema() -> Schema {
    Schema::new()
        .describe("The file set sdp-meta's onboarding job reads (onboarding file, expectations, silver transformations), rendered from flows exactly as released sdp-meta 0.1.0 parses it and uploaded to a volume. Replaced when its path changes.")
        .attr(
            Attribute::required("volume_path", AttrType::String)
                .force_new()
                .normalize(Normalize::TrimTrailingSlash)
                .describe("/Volumes/<catalog>/<schema>/<volume>, e.g. databricks_volume.conf.volume_path."),
        )
        .attr(
            Attribute::optional("directory", AttrType::String)
                .force_new()
                .server_default(DEFAULT_DIRECTORY)
                .describe("The directory under volume_path the files go to; default conf."),
        )
        .attr(
            Attribute::optional("file_name", AttrType::String)
                .force_new()
                .server_default(DEFAULT_FILE_NAME)
                .describe("The onboarding file's name; default onboarding.json. A .yml or .yaml name renders YAML."),
        )
        .attr(
            Attribute::required("env", AttrType::String)
                .describe("The suffix of every env-specific key, and the onboarding job's env parameter."),
        )
        .attr(
            Attribute::required("flows", AttrType::List(Box::new(AttrType::Any)))
                .describe("The flows, e.g. [sdp_meta_flow.orders, sdp_meta_flow.customers]; rendered in this order."),
        )
        .attr(
            Attribute::required("database", AttrType::String)
                .describe("catalog.schema of the dataflowspec tables (must exist)."),
        )
        .attr(
            Attribute::optional("bronze_dataflowspec_table", AttrType::String)
                .server_default(DEFAULT_BRONZE_SPEC_TABLE)
                .describe("The bronze dataflowspec table; default bronze_dataflowspec."),
        )
        .attr(
            Attribute::optional("silver_dataflowspec_table", AttrType::String)
                .server_default(DEFAULT_SILVER_SPEC_TABLE)
                .describe("The silver dataflowspec table; default silver_dataflowspec."),
        )
        .attr(
            Attribute::optional("import_author", AttrType::String)
                .server_default(DEFAULT_IMPORT_AUTHOR)
                .describe("The onboarding job's import_author; default brickform."),
        )
        .attr(
            Attribute::optional("version", AttrType::String)
                .server_default(DEFAULT_VERSION)
                .describe("The onboarding job's version (compared as a string by sdp-meta); default v1."),
        )
        .attr(
            Attribute::optional("overwrite", AttrType::String)
                .server_default(DEFAULT_OVERWRITE)
                .describe("The onboarding job's overwrite; default \"True\". Only exactly \"True\" overwrites; anything else merges into an existing table."),
        )
        .attr(s(
            "bronze_dataflowspec_path",
            "Without Unity Catalog (uc_enabled = false): where sdp-meta writes the bronze dataflowspec table.",
        ))
        .attr(s(
            "silver_dataflowspec_path",
            "Without Unity Catalog (uc_enabled = false): where sdp-meta writes the silver dataflowspec table.",
        ))
        .attr(
            Attribute::optional("uc_enabled", AttrType::Bool)
                .server_default(DEFAULT_UC_ENABLED)
                .describe("Unity Catalog mode; default true."),
        )
        .attr(
            Attribute::optional("pipeline_mode", AttrType::String)
                .one_of(PIPELINE_MODES)
                .server_default(DEFAULT_PIPELINE_MODE)
                .describe("How a group with both layers runs: split (default), a bronze and a silver pipeline (pipeline_configuration[group][\"bronze\"] and [\"silver\"]); combined, one pipeline running bronze then silver (pipeline_configuration[group][\"bronze_silver\"], layer = bronze_silver), as sdp-meta's bundle template offers."),
        )
        .attr(s(
            "sdp_meta_version",
            "The sdp-meta release the pipelines run, e.g. \"0.1.0\"; drives the version-specific checks.",
        ))
        .attr(s(
            "dependency",
            "What the runner installs (a wheel path or a pip requirement); set as sdp_meta_dependency and sdp_meta_whl in pipeline_configuration.",
        ))
        .block(
            BlockType::single(
                "runner",
                Schema::new()
                    .attr(flag(
                        "bronze_snapshot_function",
                        "The runner passes bronze_next_snapshot_and_version.",
                    ))
                    .attr(flag(
                        "silver_snapshot_function",
                        "The runner passes silver_next_snapshot_and_version.",
                    ))
                    .attr(
                        Attribute::optional("groups", AttrType::List(Box::new(AttrType::String)))
                            .describe("The groups whose pipelines run this runner; default every group. Snapshot functions are usually passed only where snapshot flows run."),
                    ),
            )
            .describe("What the pipelines' runner notebook passes to sdp-meta (used by the checks)."),
        )
        .attr(
            Attribute::optional_computed("onboarding_file_path", AttrType::String)
                .derived_from(&["volume_path", "directory", "file_name"])
                .describe("Derived, do not set: <volume_path>/<directory>/<file_name>."),
        )
        .attr(
            Attribute::optional_computed("onboarding_json", AttrType::String)
                .derived_from(&["volume_path", "directory", "file_name", "env", "flows"])
                .describe("Derived, do not set: the onboarding file's content as JSON (also when the file is YAML)."),
        )
        .attr(
            Attribute::optional_computed("files", AttrType::string_map())
                .derived_from(&["volume_path", "directory", "file_name", "env", "flows"])
                .describe("Derived, do not set: every file's path → content (onboarding, expectations, silver transformations)."),
        )
        .attr(
            Attribute::optional_computed("onboard_layer", AttrType::String)
                .derived_from(&["flows"])
                .describe("Derived, do not set: bronze, silver or bronze_silver, from the layers the flows have."),
        )
        .attr(
            Attribute::optional_computed("named_parameters", AttrType::string_map())
                .derived_from(&[
                    "volume_path",
                    "directory",
                    "file_name",
                    "env",
                    "flows",
                    "database",
                    "bronze_dataflowspec_table",
                    "silver_dataflowspec_table",
                    "bronze_dataflowspec_path",
                    "silver_dataflowspec_path",
                    "import_author",
                    "version",
                    "overwrite",
                    "uc_enabled",
                ])
                .describe("Derived, do not set: the onboarding job's python_wheel_task.named_parameters."),
        )
        .attr(
            Attribute::optional_computed("pipeline_configuration", AttrType::Any)
                .derived_from(&[
                    "flows",
                    "database",
                    "bronze_dataflowspec_table",
                    "silver_dataflowspec_table",
                    "dependency",
                    "pipeline_mode",
                ])
                .describe("Derived, do not set: group → layer (bronze, silver, or bronze_silver for a group with both layers under pipeline_mode = combined) → the pipeline configuration (layer, <layer>.group, <layer>.dataflowspecTable for each layer it runs, sdp_meta_dependency and sdp_meta_whl, pipelines.externalSink.enabled)."),
        )
        .attr(
            Attribute::optional_computed("bronze_spec_table", AttrType::String)
                .derived_from(&["database", "bronze_dataflowspec_table"])
                .describe("Derived, do not set: <database>.<bronze_dataflowspec_table>."),
        )
        .attr(
            Attribute::optional_computed("silver_spec_table", AttrType::String)
                .derived_from(&["database", "silver_dataflowspec_table"])
                .describe("Derived, do not set: <database>.<silver_dataflowspec_table>."),
        )
        .attr(
            Attribute::optional_computed("groups", AttrType::strings())
                .derived_from(&["flows"])
                .describe("Derived, do not set: the flow groups, sorted."),
        )
}

/// Test helpers shared by the sdp_meta modules: configurations decoded from real HCL, as the
/// planner decodes them.
#[cfg(test)]
pub(crate) mod testing {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::flow_schema;
    use brickform_core::engine::world::World;
    use brickform_core::lang::decode::Decoder;
    use brickform_core::lang::eval::Evaluator;
    use brickform_core::lang::load::load_sources;
    use brickform_core::plan::diff::normalize_object;
    use brickform_core::value::{Object, Value};
    use std::collections::HashSet;
    use std::path::Path;

    /// Decodes the `sdp_meta_flow` resources of `src`, in file order. Panics on any
    /// diagnostic, with the rendered diagnostics.
    pub fn decode_flows(src: &str) -> Vec<Object> {
        let dir = Path::new("/nonexistent");
        let (config, diags) = load_sources(
            dir,
            vec![(
                "flows.bf.hcl".into(),
                dir.join("flows.bf.hcl"),
                src.to_string(),
            )],
        );
        assert!(
            !diags.has_errors(),
            "{}",
            diags.render_plain(&config.sources)
        );
        let world = World::new(
            Object::default(),
            HashSet::new(),
            "test",
            dir,
            &brickform_core::provider::Registry::new(),
        );
        let schema = flow_schema();
        config
            .resources
            .values()
            .filter(|r| r.type_name == "sdp_meta_flow")
            .map(|r| {
                let mut ev = Evaluator::new(&world, dir);
                let header = r.span.as_ref().map(|s| s.range.clone());
                let (d, diags) =
                    Decoder::new(&mut ev, r.body.file).decode(&r.body.body, &schema, header);
                assert!(diags.is_empty(), "{}", diags.render_plain(&config.sources));
                let mut v = d.value;
                normalize_object(&schema, &mut v);
                v
            })
            .collect()
    }

    /// Checks the text between `<!-- BEGIN name: … -->` and `<!-- END name -->` of a doc
    /// against `want`, generated from data; with `UPDATE_DOCS=1` the doc is rewritten.
    pub fn check_doc_section(doc: &str, name: &str, want: &str) {
        let path = format!("{}/../../docs/{doc}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let begin = format!(
            "<!-- BEGIN {name}: generated from providers/databricks/src/sdp_meta; do not edit -->\n"
        );
        let end = format!("<!-- END {name} -->");
        let start = text
            .find(&begin)
            .unwrap_or_else(|| panic!("{doc} has {begin:?}"))
            + begin.len();
        let stop = start
            + text[start..]
                .find(&end)
                .unwrap_or_else(|| panic!("{doc} has {end:?}"));
        if std::env::var_os("UPDATE_DOCS").is_some() {
            let updated = format!("{}{want}{}", &text[..start], &text[stop..]);
            std::fs::write(&path, updated).unwrap();
            return;
        }
        assert!(
            text[start..stop] == *want,
            "the {name} table of docs/{doc} is out of date; regenerate it with \
             `UPDATE_DOCS=1 cargo test -p brickform-databricks --lib sdp_meta`"
        );
    }

    /// An onboarding object with the flows and the given attributes (JSON); the other
    /// attributes null, as decoded.
    pub fn onboarding(flows: Vec<Object>, attrs: serde_json::Value) -> Object {
        let mut o: Object = super::onboarding_schema()
            .attributes
            .iter()
            .filter(|a| a.can_configure())
            .map(|a| (a.name.to_string(), Value::Null))
            .collect();
        o.insert("volume_path".into(), Value::from("/Volumes/main/ops/conf"));
        o.insert("env".into(), Value::from("prod"));
        o.insert("database".into(), Value::from("main.sdp_meta"));
        o.insert("runner".into(), Value::Null);
        if let Value::Object(extra) = Value::from_json(&attrs) {
            o.extend(std::sync::Arc::unwrap_or_clone(extra));
        }
        o.insert(
            "flows".into(),
            Value::List(flows.into_iter().map(Value::from).collect()),
        );
        o
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use brickform_core::provider::{Nesting, Presence};

    fn all_described(s: &Schema, path: &str, missing: &mut Vec<String>) {
        for a in &s.attributes {
            if a.description.is_empty() {
                missing.push(format!("{path}{}", a.name));
            }
        }
        for b in &s.blocks {
            if b.description.is_empty() {
                missing.push(format!("{path}{}", b.name));
            }
            all_described(&b.schema, &format!("{path}{}.", b.name), missing);
        }
    }

    #[test]
    fn every_attribute_and_block_is_described() {
        let mut missing = Vec::new();
        all_described(&flow_schema(), "", &mut missing);
        all_described(&onboarding_schema(), "", &mut missing);
        assert!(missing.is_empty(), "undescribed: {missing:?}");
    }

    #[test]
    fn flow_schema_has_the_contract_shape() {
        let f = flow_schema();
        for a in ["data_flow_id", "data_flow_group"] {
            assert_eq!(f.attribute(a).unwrap().presence, Presence::Required);
        }
        let source = &f.block_type("source").unwrap().schema;
        assert_eq!(
            source.attribute("format").unwrap().presence,
            Presence::Required
        );
        assert_eq!(
            source.attribute("ingestion_table").unwrap().ty,
            AttrType::Any
        );
        for b in ["source_metadata", "kafka", "eventhub"] {
            assert_eq!(source.block_type(b).unwrap().nesting, Nesting::Single);
        }
        for l in LAYERS {
            let layer = &f.block_type(l).unwrap().schema;
            for b in ["append_flow", "sink"] {
                assert_eq!(layer.block_type(b).unwrap().nesting, Nesting::Keyed("name"));
            }
            let flows = &layer.block_type("cdc_apply_changes_flows").unwrap().schema;
            assert_eq!(
                flows.block_type("flow").unwrap().nesting,
                Nesting::Keyed("name")
            );
            assert!(flows.attribute("flow_name").is_none() && flows.attribute("once").is_none());
            assert!(layer.attribute("expectations_file").is_some());
        }
        let silver = &f.block_type("silver").unwrap().schema;
        for a in ["select_exp", "where_clause", "transformation_file"] {
            assert!(silver.attribute(a).is_some());
            assert!(
                f.block_type("bronze")
                    .unwrap()
                    .schema
                    .attribute(a)
                    .is_none()
            );
        }
    }

    #[test]
    fn onboarding_derived_attributes_are_optional_computed() {
        let o = onboarding_schema();
        for d in ONBOARDING_DERIVED {
            let a = o.attribute(d).unwrap();
            assert_eq!(a.presence, Presence::OptionalComputed, "{d}");
            assert!(a.description.starts_with("Derived, do not set"), "{d}");
            assert!(!a.derived_from.is_empty(), "{d}");
        }
        assert_eq!(
            o.attribute("directory").unwrap().server_default,
            Some(DEFAULT_DIRECTORY.into())
        );
    }
}
