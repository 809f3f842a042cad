//! `databricks_connection`: a Unity Catalog connection to an external database.
//!
//! `options` carries credentials (password and the like) which the service never returns,
//! so it is write-only: state keeps only its fingerprint, and a change is still detected.

use super::uc::{UcKind, UcSpec};
use super::values::ty::map;
use crate::Shared;
use crate::client::PageSize;
use brickform_core::provider::{AttrType, Attribute, BlockType, Normalize, Schema};
use brickform_core::value::Object;
use std::sync::Arc;

/// `ConnectionType`.
pub const CONNECTION_TYPES: &[&str] = &[
    "ADOBE_COMMERCE",
    "ADP_WORKFORCE_NOW",
    "AHA",
    "AIRTABLE",
    "AMPLITUDE",
    "APPFIGURES",
    "APPLE_APP_STORE",
    "APPLE_SEARCH_ADS",
    "ATLASSIAN_ORGANIZATION",
    "AWIN",
    "AZURE_MONITOR_LOGS",
    "BIGLAKE",
    "BIGQUERY",
    "CERIDIAN_DAYFORCE",
    "CONFLUENCE",
    "DATABRICKS",
    "DELIGHTED",
    "DYNAMICS365",
    "EPIC_CLARITY",
    "FRESHSERVICE",
    "FRONT",
    "GA4_RAW_DATA",
    "GENESYS",
    "GITHUB",
    "GITLAB",
    "GLUE",
    "GMAIL",
    "GONG",
    "GOOGLE_ANALYTICS",
    "GOOGLE_CALENDAR",
    "GOOGLE_CLOUD_LAKEHOUSE",
    "GOOGLE_WORKSPACE",
    "GURU",
    "HIBOB",
    "HIVE_METASTORE",
    "HTTP",
    "HUBSPOT",
    "ICEBERG_REST",
    "IRONCLAD",
    "JDBC",
    "KINESIS",
    "LINEAR",
    "MARKETO",
    "META_MARKETING",
    "MICROSOFT_ENTRA_ID",
    "MONDAY_COM",
    "MYSQL",
    "NETSKOPE_LOGS",
    "NETSUITE",
    "NOTION",
    "ORACLE",
    "ORACLE_ELOQUA",
    "ORACLE_FUSION_CLOUD",
    "OUTLOOK",
    "PAGERDUTY",
    "PALANTIR",
    "PARTNERSTACK",
    "PENDO",
    "POSTGRESQL",
    "POWER_BI",
    "PUBSUB",
    "QUICKBOOKS",
    "REDSHIFT",
    "SALESFORCE",
    "SALESFORCE_DATA_CLOUD",
    "SALESLOFT",
    "SAP_SUCCESSFACTORS",
    "SAS",
    "SENDGRID",
    "SERVICENOW",
    "SHOPIFY",
    "SLACK_ACCESS_AND_INTEGRATION_LOGS",
    "SMARTSHEET",
    "SNAPCHAT_ADS",
    "SNOWFLAKE",
    "SPLUNK",
    "SQLDW",
    "SQLSERVER",
    "SQUARE",
    "TERADATA",
    "VERKADA",
    "WORKDAY_RAAS",
    "YOUTUBE_ANALYTICS",
    "ZENDESK",
    "ZIP",
    "ZOHO_BOOKS",
    "ZOOM",
    "ZOOM_LOGS",
];

/// `CredentialType`, as the service reports it.
const CREDENTIAL_TYPES: &[&str] = &[
    "ANY_STATIC_CREDENTIAL",
    "BEARER_TOKEN",
    "EDGEGRID_AKAMAI",
    "GENERIC_TOKEN_EXCHANGE",
    "INLINE_YAML",
    "MUTUAL_TLS",
    "OAUTH_ACCESS_TOKEN",
    "OAUTH_DCR",
    "OAUTH_GOOGLE_SERVICE_ACCOUNT",
    "OAUTH_M2M",
    "OAUTH_MTLS",
    "OAUTH_REFRESH_TOKEN",
    "OAUTH_RESOURCE_OWNER_PASSWORD",
    "OAUTH_U2M",
    "OAUTH_U2M_MAPPING",
    "OIDC_TOKEN",
    "PEM_PRIVATE_KEY",
    "SERVICE_CREDENTIAL",
    "SSWS_TOKEN",
    "USERNAME_PASSWORD",
];

pub fn schema() -> Schema {
    Schema::new()
        .describe("A Unity Catalog connection (SQLSERVER, MYSQL, POSTGRESQL, …).")
        .attr(
            Attribute::required("name", AttrType::String)
                .normalize(Normalize::LowerCase)
                .describe("Connection name; a change renames it in place."),
        )
        .attr(
            Attribute::required("connection_type", AttrType::String)
                .force_new()
                .one_of(CONNECTION_TYPES),
        )
        .attr(
            Attribute::required("options", map())
                .sensitive()
                .describe("Connection options (host, port, user, password, …); write-only."),
        )
        .attr(Attribute::optional("comment", AttrType::String).force_new())
        .attr(Attribute::optional("properties", map()).force_new())
        .attr(
            Attribute::optional("read_only", AttrType::Bool)
                .force_new()
                // The service makes a connection read-only unless told otherwise.
                .server_default(true),
        )
        .attr(Attribute::optional_computed("owner", AttrType::String))
        .block(
            BlockType::single(
                "environment_settings",
                Schema::new()
                    .attr(Attribute::optional("environment_version", AttrType::String))
                    .attr(Attribute::optional(
                        "java_dependencies",
                        AttrType::List(Box::new(AttrType::String)),
                    )),
            )
            // The update call takes these settings, but how it treats a block left out is
            // not documented: a change replaces the connection, as `comment` does, so what
            // the plan shows is what the service holds.
            .force_new()
            .describe("The environment the connection's driver runs in (a change replaces the connection)."),
        )
        .attr(Attribute::computed("id", AttrType::String).derived_from(&["name"]))
        .attr(Attribute::computed("connection_id", AttrType::String))
        .attr(Attribute::computed("full_name", AttrType::String).derived_from(&["name"]))
        .attr(Attribute::computed("metastore_id", AttrType::String))
        .attr(Attribute::computed("credential_type", AttrType::String).one_of(CREDENTIAL_TYPES))
        // The service builds it from the options (jdbc://host:port/).
        .attr(Attribute::computed("url", AttrType::String).derived_from(&["options"]))
}

fn derive(_: &mut Object) {}

/// The page size of `connections` lists: `max_results=0`, "server picks" (what the SDK sends).
pub const LIST_PAGE: PageSize = PageSize::new("max_results", "0");

pub fn kind(shared: Arc<Shared>) -> UcKind {
    UcKind {
        spec: UcSpec {
            type_name: "databricks_connection",
            collection: "connections",
            name_parts: &["name"],
            create_fields: &[
                "name",
                "connection_type",
                "options",
                "comment",
                "properties",
                "read_only",
                "environment_settings",
            ],
            update_fields: &["options", "owner"],
            always_send: &["options"],
            clear_when_unset: &[],
            protected: false,
            list_page: Some(LIST_PAGE),
            force_delete: false,
            holds: super::uc::Holds::Nothing,
            derive,
            after_create: None,
            before_write: None,
            stable_id: Some("connection_id"),
            metastore_qualified_import: true,
            namespace: None,
            prefixed_in_development: false,
            references: &[],
            check: None,
            patch_as: &[],
            storage: super::uc::InStorage::Nowhere,
        },
        schema: schema(),
        shared,
    }
}
