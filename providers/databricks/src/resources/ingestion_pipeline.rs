//! `databricks_ingestion_pipeline`: a Lakeflow Connect ingestion pipeline, a pipeline with an
//! `ingestion_definition` whose fields are written at the top level. It reads
//! from a gateway (`ingestion_gateway_id`) or directly through a connection
//! (`connection_name`: SaaS and query-based connectors) and writes streaming tables.
//!
//! What it replicates is a list of `object` blocks, each holding exactly one `schema`,
//! `table` or `report` block, as on the wire (`ingestion_definition.objects[]`). The
//! computed `tables` and `schemas` attributes name each destination with its SCD type, so
//! flows that read them can reference them and be checked against them. They are derived
//! from the configuration itself, so they are known at plan time whenever the objects are.

use super::pipeline_spec::{
    Flavor, PipelineKind, at_most_one, check_common, common_schema, exactly_one, items, string,
    string_map, strings,
};
use super::values;
use crate::Shared;
use brickform_core::provider::Reference;
use brickform_core::provider::{AttrType, Attribute, BlockType, Normalize, Schema};
use brickform_core::value::{Object, Value};
use std::sync::Arc;

/// The definition that makes a pipeline one of these, and the kind it makes it (the
/// pipelines' shared code tells the three kinds apart by it).
pub const MADE_BY: (&str, &str) = ("ingestion_definition", "databricks_ingestion_pipeline");

/// The HCL names that live inside `ingestion_definition` on the wire.
const DEFINITION: &[&str] = &[
    "ingestion_gateway_id",
    "connection_name",
    "ingest_from_uc_foreign_catalog",
    "connector_type",
    "netsuite_jar_path",
    "object",
    "table_configuration",
    "source_configurations",
    "data_staging_options",
    "full_refresh_window",
];

/// `IngestionSourceType`, as the service reports it.
const SOURCE_TYPES: &[&str] = &[
    "ADOBE_CAMPAIGNS",
    "ADOBE_COMMERCE",
    "ADP_WORKFORCE_NOW",
    "AHA",
    "AIRTABLE",
    "AKAMAI_WAF",
    "AMPLITUDE",
    "API_SOURCE",
    "APPFIGURES",
    "APPLE_APP_STORE",
    "APPLE_SEARCH_ADS",
    "ATLASSIAN_ORGANIZATION",
    "AWIN",
    "AZURE_MONITOR_LOGS",
    "BIGQUERY",
    "BING_ADS",
    "CERIDIAN_DAYFORCE",
    "COMMUNITY",
    "CONFLUENCE",
    "CROWDSTRIKE_EVENT_STREAM",
    "DELIGHTED",
    "DYNAMICS365",
    "EPIC_CLARITY",
    "FOREIGN_CATALOG",
    "FRESHSERVICE",
    "FRONT",
    "GA4_RAW_DATA",
    "GENESYS",
    "GITHUB",
    "GITLAB",
    "GMAIL",
    "GONG",
    "GOOGLE_ADS",
    "GOOGLE_ANALYTICS",
    "GOOGLE_CALENDAR",
    "GOOGLE_DRIVE",
    "GOOGLE_SEARCH_CONSOLE",
    "GOOGLE_WORKSPACE",
    "GUIDEWIRE",
    "GURU",
    "HIBOB",
    "HUBSPOT",
    "IRONCLAD",
    "JIRA",
    "KAFKA",
    "LINEAR",
    "LINKEDIN_ADS",
    "M365_AUDIT_LOGS",
    "MANAGED_POSTGRESQL",
    "MARKETO",
    "META_MARKETING",
    "MICROSOFT_ENTRA_ID",
    "MICROSOFT_TEAMS",
    "MONDAY_COM",
    "MYSQL",
    "NETSKOPE_LOGS",
    "NETSUITE",
    "NOTION",
    "OKTA_SYSTEM_LOGS",
    "ONEDRIVE",
    "ONE_PASSWORD_EVENT_LOGS",
    "ORACLE",
    "ORACLE_ELOQUA",
    "ORACLE_FUSION_CLOUD",
    "OUTLOOK",
    "PAGERDUTY",
    "PARTNERSTACK",
    "PENDO",
    "PINTEREST_ADS",
    "POSTGRESQL",
    "POWER_BI",
    "PROOFPOINT_SIEM",
    "QUICKBOOKS",
    "RABBITMQ",
    "REDDIT_ADS",
    "REDSHIFT",
    "SALESFORCE",
    "SALESFORCE_MARKETING_CLOUD",
    "SALESLOFT",
    "SAP_SUCCESSFACTORS",
    "SAS",
    "SENDGRID",
    "SERVICENOW",
    "SHAREPOINT",
    "SHOPIFY",
    "SLACK_ACCESS_AND_INTEGRATION_LOGS",
    "SLACK_AUDIT_LOGS",
    "SMARTSHEET",
    "SNAPCHAT_ADS",
    "SPLUNK",
    "SQLDW",
    "SQLSERVER",
    "SQUARE",
    "TERADATA",
    "TIKTOK_ADS",
    "VEEVA",
    "VEEVA_VAULT",
    "VERKADA",
    "WIZ_AUDIT_LOGS",
    "WORKDAY_ACTIVITY_LOGGING",
    "WORKDAY_HCM",
    "WORKDAY_RAAS",
    "X_ADS",
    "YOUTUBE_ANALYTICS",
    "ZENDESK",
    "ZIP",
    "ZOHO_BOOKS",
    "ZOOM",
    "ZOOM_LOGS",
];

/// The SCD type the service applies when none is configured.
const DEFAULT_SCD_TYPE: &str = "SCD_TYPE_1";

/// `TableSpecificConfig`: pipeline-wide, or per object where it overrides the wider one.
fn table_configuration() -> BlockType {
    BlockType::single(
        "table_configuration",
        Schema::new()
            .attr(
                Attribute::optional("scd_type", string())
                    .one_of(&["SCD_TYPE_1", "SCD_TYPE_2", "APPEND_ONLY"])
                    .describe("SCD_TYPE_1 when unset."),
            )
            .attr(Attribute::optional("primary_keys", strings()))
            .attr(
                Attribute::optional("sequence_by", strings())
                    .describe("Ordering of out-of-order change events."),
            )
            .attr(Attribute::optional("include_columns", strings()))
            .attr(Attribute::optional("exclude_columns", strings()))
            .attr(Attribute::optional("row_filter", string()).describe(
                "Immutable on the service; no WHERE keyword. Changing it fails on the service.",
            ))
            .attr(Attribute::optional("clustering_columns", strings()))
            .attr(Attribute::optional(
                "enable_auto_clustering",
                AttrType::Bool,
            ))
            .attr(Attribute::optional("table_properties", string_map()))
            .attr(Attribute::optional("source_metadata_column", string()))
            .attr(Attribute::optional(
                "salesforce_include_formula_fields",
                AttrType::Bool,
            ))
            .attr(Attribute::optional(
                "workday_report_parameters",
                AttrType::Any,
            ))
            .block(BlockType::single(
                "auto_full_refresh_policy",
                Schema::new()
                    .attr(Attribute::required("enabled", AttrType::Bool))
                    .attr(Attribute::optional("min_interval_hours", AttrType::Number)),
            ))
            .block(
                BlockType::single(
                    "query_based_connector_config",
                    Schema::new()
                        .attr(Attribute::optional("cursor_columns", strings()))
                        .attr(Attribute::optional("deletion_condition", string()))
                        .attr(Attribute::optional(
                            "hard_deletion_sync_min_interval_in_seconds",
                            AttrType::Number,
                        )),
                )
                .describe("For connector_type = QUERY_BASED."),
            ),
    )
}

fn destination(schema: Schema) -> Schema {
    schema
        .attr(Attribute::required("destination_catalog", string()).normalize(Normalize::LowerCase))
        .attr(Attribute::required("destination_schema", string()).normalize(Normalize::LowerCase))
        .block(table_configuration())
}

/// `IngestionConfig`: exactly one of schema, table or report.
fn object_block() -> BlockType {
    let schema_spec = destination(
        Schema::new()
            .attr(Attribute::optional("source_catalog", string()))
            .attr(Attribute::optional("source_schema", string())),
    )
    .attr(Attribute::optional("connector_options", AttrType::Any))
    .attr(Attribute::optional("fanout_options", AttrType::Any));
    let table_spec = destination(
        Schema::new()
            .attr(
                Attribute::optional("source_catalog", string())
                    .describe("SQL Server: the database."),
            )
            .attr(Attribute::optional("source_schema", string()))
            .attr(Attribute::optional("source_table", string())),
    )
    .attr(
        Attribute::optional("destination_table", string())
            .normalize(Normalize::LowerCase)
            .describe("Defaults to the source table's name."),
    )
    .attr(Attribute::optional("connector_options", AttrType::Any));
    let report_spec = destination(Schema::new().attr(Attribute::required("source_url", string())))
        .attr(Attribute::optional("destination_table", string()).normalize(Normalize::LowerCase));
    BlockType::list(
        "object",
        Schema::new()
            .block(BlockType::single("schema", schema_spec).describe("A whole source schema."))
            .block(BlockType::single("table", table_spec).describe("One source table."))
            .block(BlockType::single("report", report_spec).describe("A SaaS report.")),
    )
    .min(1)
    .describe("What to replicate: exactly one of schema, table or report per block.")
}

pub fn schema() -> Schema {
    common_schema("A Lakeflow Connect ingestion pipeline (a pipeline with ingestion_definition). Replaced when its gateway or connection changes.", true)
        .attr(
            Attribute::optional("ingestion_gateway_id", string())
                .force_new()
                .describe("The gateway's id (CDC through a gateway); or set connection_name."),
        )
        .attr(
            Attribute::optional("connection_name", string())
                .force_new()
                .normalize(Normalize::LowerCase)
                .describe("SaaS, query-based or combined CDC connectors; or set ingestion_gateway_id."),
        )
        .attr(Attribute::optional("ingest_from_uc_foreign_catalog", AttrType::Bool).force_new())
        .attr(Attribute::optional_computed("connector_type", string()).one_of(&["CDC", "QUERY_BASED"]).describe("CDC or QUERY_BASED; the service fills it (CDC through a gateway) when unset."))
        .attr(Attribute::optional("netsuite_jar_path", string()))
        .block(object_block())
        .block(table_configuration().describe("Defaults for every object."))
        .block(BlockType::list(
            "source_configurations",
            Schema::new().block(BlockType::single(
                "catalog",
                Schema::new()
                    .attr(Attribute::optional("source_catalog", string()))
                    .block(BlockType::single(
                        "postgres",
                        Schema::new().block(BlockType::single(
                            "slot_config",
                            Schema::new()
                                .attr(Attribute::optional("slot_name", string()))
                                .attr(Attribute::optional("publication_name", string())),
                        )),
                    )),
            )),
        ))
        .block(
            BlockType::single(
                "data_staging_options",
                Schema::new()
                    .attr(Attribute::required("catalog_name", string()).normalize(Normalize::LowerCase))
                    .attr(Attribute::required("schema_name", string()).normalize(Normalize::LowerCase))
                    .attr(Attribute::optional("volume_name", string()).normalize(Normalize::LowerCase)),
            )
            .force_new()
            .describe("Staging for combined CDC; immutable on the service."),
        )
        .block(BlockType::single(
            "full_refresh_window",
            Schema::new()
                .attr(Attribute::required("start_hour", AttrType::Number))
                .attr(Attribute::optional("days_of_week", strings()).one_of(values::DAYS_OF_WEEK))
                .attr(Attribute::optional_computed("time_zone_id", string()).check(values::time_zone).describe("A Java time-zone id, e.g. \"Europe/Zurich\"; the service's when unset.")),
        ))
        .attr(Attribute::computed("source_type", string()).one_of(SOURCE_TYPES).describe("The source database kind, from the connection."))
        .attr(
            Attribute::optional_computed("tables", AttrType::List(Box::new(AttrType::Any)))
                .describe("Derived, do not set: one entry per table or report object, {kind, source_catalog, source_schema, source_table, destination_table = \"catalog.schema.table\", scd_type}."),
        )
        .attr(
            Attribute::optional_computed("table", AttrType::Map(Box::new(AttrType::Any)))
                .describe("Derived, do not set: the entries of `tables` by destination table name, e.g. table[\"intpk\"], for sdp_meta_flow sources."),
        )
        .attr(
            Attribute::optional_computed("schemas", AttrType::List(Box::new(AttrType::Any)))
                .describe("Derived, do not set: one entry per schema object, {source_catalog, source_schema, destination_schema = \"catalog.schema\", scd_type}."),
        )
}

fn text<'a>(o: &'a Object, k: &str) -> Option<&'a str> {
    o.get(k).and_then(Value::as_str)
}

fn scd_type_of(o: &Object) -> Option<&str> {
    o.get("table_configuration")
        .and_then(Value::as_object)
        .and_then(|t| text(t, "scd_type"))
}

fn entry(pairs: &[(&str, Option<&str>)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(Value::from).unwrap_or(Value::Null)))
            .collect::<brickform_core::value::Object>()
            .into(),
    )
}

/// Destinations with their SCD type: the object's own table_configuration, else the
/// pipeline-wide one, else the service's default.
fn derive(o: &mut Object) {
    let wide = scd_type_of(o).unwrap_or(DEFAULT_SCD_TYPE).to_string();
    let mut tables = Vec::new();
    let mut schemas = Vec::new();
    for obj in items(o, "object") {
        for (kind, spec) in ["table", "report", "schema"]
            .iter()
            .filter_map(|k| obj.get(*k).and_then(Value::as_object).map(|s| (*k, s)))
        {
            let scd = scd_type_of(spec).unwrap_or(&wide);
            let cat = text(spec, "destination_catalog").unwrap_or_default();
            let sch = text(spec, "destination_schema").unwrap_or_default();
            match kind {
                "schema" => schemas.push(entry(&[
                    ("source_catalog", text(spec, "source_catalog")),
                    ("source_schema", text(spec, "source_schema")),
                    ("destination_schema", Some(&format!("{cat}.{sch}"))),
                    ("scd_type", Some(scd)),
                ])),
                _ => {
                    let table = text(spec, "destination_table").or(text(spec, "source_table"));
                    tables.push(entry(&[
                        ("kind", Some(kind)),
                        ("source_catalog", text(spec, "source_catalog")),
                        ("source_schema", text(spec, "source_schema")),
                        ("source_table", text(spec, "source_table")),
                        ("source_url", text(spec, "source_url")),
                        (
                            "destination_table",
                            table
                                .map(|t| format!("{cat}.{sch}.{}", t.to_lowercase()))
                                .as_deref(),
                        ),
                        ("scd_type", Some(scd)),
                    ]));
                }
            }
        }
    }
    let by_name: Object = tables
        .iter()
        .filter_map(|t| {
            let full = t.as_object()?.get("destination_table")?.as_str()?;
            let name = full.rsplit('.').next()?.to_string();
            Some((name, t.clone()))
        })
        .collect();
    o.insert("table".into(), Value::object(by_name));
    o.insert("tables".into(), Value::List(tables));
    o.insert("schemas".into(), Value::List(schemas));
}

fn check_table_configuration(
    o: &Object,
    what: &str,
) -> Result<(), brickform_core::provider::PrepareError> {
    if let Some(t) = o.get("table_configuration").and_then(Value::as_object) {
        at_most_one(
            t,
            &["include_columns", "exclude_columns"],
            &format!("{what}table_configuration"),
        )?;
    }
    Ok(())
}

fn check(o: &Object) -> Result<(), brickform_core::provider::PrepareError> {
    check_common(o)?;
    let foreign = o
        .get("ingest_from_uc_foreign_catalog")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if foreign {
        at_most_one(o, &["ingestion_gateway_id", "connection_name"], "source")?;
    } else {
        exactly_one(o, &["ingestion_gateway_id", "connection_name"], "source")?;
    }
    check_table_configuration(o, "")?;
    for (i, obj) in items(o, "object").enumerate() {
        let what = format!("object[{i}]");
        exactly_one(obj, &["schema", "table", "report"], &what)?;
        for k in ["schema", "table", "report"] {
            if let Some(spec) = obj.get(k).and_then(Value::as_object) {
                check_table_configuration(spec, &format!("{what}.{k}."))?;
            }
        }
    }
    Ok(())
}

/// An ingestion pipeline reads through its gateway (or a connection) and writes each object
/// into a destination catalog and schema.
const REFERENCES: &[Reference] = &[
    Reference::to("catalog", &["databricks_catalog"], "name"),
    Reference::to("schema", &["databricks_schema"], "name").within("catalog"),
    Reference::to(
        "ingestion_gateway_id",
        &["databricks_ingestion_gateway"],
        "id",
    ),
    Reference::to("connection_name", &["databricks_connection"], "name"),
    Reference::to(
        "object.table.destination_catalog",
        &["databricks_catalog"],
        "name",
    ),
    Reference::to(
        "object.table.destination_schema",
        &["databricks_schema"],
        "name",
    )
    .within("destination_catalog"),
    Reference::to(
        "object.schema.destination_catalog",
        &["databricks_catalog"],
        "name",
    ),
    Reference::to(
        "object.schema.destination_schema",
        &["databricks_schema"],
        "name",
    )
    .within("destination_catalog"),
    Reference::to(
        "object.report.destination_catalog",
        &["databricks_catalog"],
        "name",
    ),
    Reference::to(
        "object.report.destination_schema",
        &["databricks_schema"],
        "name",
    )
    .within("destination_catalog"),
];

pub fn kind(shared: Arc<Shared>) -> PipelineKind {
    PipelineKind {
        flavor: Flavor {
            type_name: MADE_BY.1,
            schema: schema(),
            definition: Some((MADE_BY.0, DEFINITION)),
            keep_when_absent: &["catalog", "schema"],
            server_filled: &["connector_type"],
            check,
            derive,
            derived: &["tables", "table", "schemas"],
            leaves_volumes: None,
            references: REFERENCES,
            publishes: super::pipeline_spec::Publishes::Ingested,
        },
        shared,
        listing: Default::default(),
    }
}
