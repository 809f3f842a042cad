//! `databricks_pipeline`: a Lakeflow declarative pipeline (`/api/2.0/pipelines`), every field
//! of the spec. Attribute and block names follow the Terraform provider's `databricks_pipeline`.

use super::pipeline_spec::{
    Flavor, PipelineKind, check_common, common_schema, exactly_one, items, no_derive, string,
    string_map, strings,
};
use super::values;
use crate::Shared;
use brickform_core::provider::Reference;
use brickform_core::provider::{AttrType, Attribute, BlockType, Elsewhere, Normalize, Schema};
use brickform_core::value::{Object, Value};
use std::sync::Arc;

/// The kind a pipeline with neither a gateway nor an ingestion definition is.
pub const TYPE_NAME: &str = "databricks_pipeline";

fn path_block(name: &'static str) -> BlockType {
    BlockType::single(
        name,
        Schema::new().attr(Attribute::required("path", string())),
    )
}

/// `libraries[]`: each holds exactly one source.
fn library_block() -> BlockType {
    BlockType::list(
        "library",
        Schema::new()
            .block(path_block("notebook"))
            .block(path_block("file"))
            .block(BlockType::single(
                "glob",
                Schema::new().attr(
                    Attribute::required("include", string())
                        .describe("A notebook, file or folder path ending in /**."),
                ),
            ))
            .attr(Attribute::optional("whl", string()))
            .attr(Attribute::optional("jar", string()))
            .block(BlockType::single(
                "maven",
                Schema::new()
                    .attr(Attribute::required("coordinates", string()))
                    .attr(Attribute::optional("repo", string()))
                    .attr(Attribute::optional("exclusions", strings())),
            )),
    )
    .describe("Source code: exactly one of notebook, file, glob, whl, jar or maven per block.")
}

/// Arguments of `databricks_pipeline` that are older names of another: `target` is the
/// publishing schema from before `schema` (set one or the other). A kind that takes a
/// pipeline's place without the old name (a Lakeflow Connect ingestion pipeline) reads the
/// new one.
pub const OLDER_NAMES: &[(&str, &str)] = &[("target", "schema")];

pub fn schema() -> Schema {
    common_schema("A Lakeflow declarative pipeline. Updated in place with a full-spec PUT; replaced only when `storage` changes.", false)
        .attr(
            Attribute::optional("target", string())
                .describe("Legacy publishing schema; set either schema or target."),
        )
        .attr(
            Attribute::optional("storage", string())
                .force_new()
                .describe("DBFS root of a Hive-metastore pipeline; the service's dbfs:/pipelines/<id> when unset."),
        )
        .attr(Attribute::optional("root_path", string()))
        .attr(
            Attribute::optional("parameters", string_map())
                .describe("Default run parameters."),
        )
        .attr(Attribute::optional("usage_policy_id", string()))
        .attr(Attribute::optional("parent_path", string()).describe("The workspace folder the pipeline is shown in."))
        // The Terraform provider declares Lakeflow Connect gateways and ingestion pipelines
        // as databricks_pipeline with these blocks; here each is a kind of its own.
        .elsewhere(Elsewhere {
            name: "gateway_definition",
            detail: "A Lakeflow Connect ingestion gateway is the databricks_ingestion_gateway kind in brickform: its gateway_definition fields are its own top-level arguments.",
            rewrite: "resource \"databricks_ingestion_gateway\" \"NAME\" {\n  name                    = \"…\"\n  connection_name         = \"…\"\n  gateway_storage_catalog = \"…\"\n  gateway_storage_schema  = \"…\"\n  gateway_storage_name    = \"…\" # optional\n  # catalog, schema, serverless, cluster, … as on this pipeline\n}",
        })
        .elsewhere(Elsewhere {
            name: "ingestion_definition",
            detail: "A Lakeflow Connect ingestion pipeline is the databricks_ingestion_pipeline kind in brickform: its ingestion_definition fields are its own top-level arguments, and each entry of objects is an object block.",
            rewrite: "resource \"databricks_ingestion_pipeline\" \"NAME\" {\n  name                 = \"…\"\n  ingestion_gateway_id = databricks_ingestion_gateway.GATEWAY.id # or connection_name\n  object {\n    table {\n      source_catalog      = \"…\"\n      source_schema       = \"…\"\n      source_table        = \"…\"\n      destination_catalog = \"…\"\n      destination_schema  = \"…\"\n    }\n  }\n}",
        })
        .block(library_block())
        .block(BlockType::single(
            "environment",
            Schema::new()
                .attr(Attribute::optional("dependencies", strings()).describe("pip requirements of serverless pipelines."))
                .attr(Attribute::optional("environment_version", string())),
        ))
        .block(
            BlockType::single(
                "event_log",
                Schema::new()
                    .attr(Attribute::required("name", string()))
                    .attr(Attribute::optional_computed("catalog", string()).normalize(Normalize::LowerCase))
                    .attr(Attribute::optional_computed("schema", string()).normalize(Normalize::LowerCase)),
            )
            .describe("Publish the event log to Unity Catalog; catalog and schema default to the pipeline's."),
        )
        .block(BlockType::single(
            "restart_window",
            Schema::new()
                .attr(Attribute::required("start_hour", AttrType::Number).describe("0-23."))
                .attr(Attribute::optional("days_of_week", strings()).one_of(values::DAYS_OF_WEEK).describe("Every day when unset."))
                .attr(Attribute::optional_computed("time_zone_id", string()).check(values::time_zone).describe("A Java time-zone id, e.g. \"Europe/Zurich\"; the service's when unset.")),
        ))
        .block(BlockType::single(
            "filters",
            Schema::new()
                .attr(Attribute::optional("include", strings()))
                .attr(Attribute::optional("exclude", strings())),
        ))
        .block(
            BlockType::single(
                "trigger",
                Schema::new()
                    .block(BlockType::single(
                        "cron",
                        Schema::new()
                            .attr(Attribute::optional("quartz_cron_schedule", string()).check(values::quartz_cron).describe("Quartz cron: seconds minutes hours day-of-month month day-of-week [year]."))
                            .attr(Attribute::optional("timezone_id", string()).check(values::time_zone).describe("A Java time-zone id.")),
                    ))
                    .block(BlockType::single("manual", Schema::new())),
            )
            .describe("Deprecated by the service; kept for existing configurations."),
        )
        .block(BlockType::single(
            "deployment",
            Schema::new()
                .attr(Attribute::required("kind", string()).one_of(&["BUNDLE"]))
                .attr(Attribute::optional("metadata_file_path", string()))
                .attr(Attribute::optional("deployment_id", string()))
                .attr(Attribute::optional("version_id", string())),
        ))
}

fn check(o: &Object) -> Result<(), brickform_core::provider::PrepareError> {
    check_common(o)?;
    if o.get("schema").is_some_and(|v| !v.is_null())
        && o.get("target").is_some_and(|v| !v.is_null())
    {
        return Err("set either schema or target, not both".into());
    }
    for (i, lib) in items(o, "library").enumerate() {
        exactly_one(
            lib,
            &["notebook", "file", "glob", "whl", "jar", "maven"],
            &format!("library[{i}]"),
        )?;
    }
    if let Some(h) = o
        .get("restart_window")
        .and_then(Value::as_object)
        .and_then(|r| r.get("start_hour"))
        .and_then(Value::as_f64)
        && !(0.0..24.0).contains(&h)
    {
        return Err(format!("restart_window.start_hour must be 0-23, got {h}").into());
    }
    Ok(())
}

/// A pipeline publishes into a catalog and schema (`target` in the legacy mode) and runs
/// notebooks and files of the workspace.
const REFERENCES: &[Reference] = &[
    Reference::to("catalog", &["databricks_catalog"], "name"),
    Reference::to("schema", &["databricks_schema"], "name").within("catalog"),
    Reference::to("target", &["databricks_schema"], "name").within("catalog"),
    Reference::to("library.notebook.path", &["databricks_notebook"], "path"),
    Reference::to("library.file.path", &["databricks_workspace_file"], "path"),
    Reference::to("configuration.*", &["databricks_volume"], "volume_path").prefix(),
];

pub fn kind(shared: Arc<Shared>) -> PipelineKind {
    PipelineKind {
        flavor: Flavor {
            type_name: TYPE_NAME,
            schema: schema(),
            definition: None,
            keep_when_absent: &[],
            server_filled: &[],
            check,
            derive: no_derive,
            derived: &[],
            leaves_volumes: None,
            references: REFERENCES,
            publishes: super::pipeline_spec::Publishes::Tables,
        },
        shared,
        listing: Default::default(),
    }
}
