//! Unity Catalog: catalogs, schemas, volumes, tables, registered models, functions,
//! connections, storage credentials and external locations.
//!
//! [`securables`] holds the table of securables and the create, get, list, update and
//! delete they share; [`model`] the securables' own parts and what other domains create
//! (pipeline tables, staging volumes); [`routes`] the HTTP side. Tables are not created
//! through this API here: pipelines create them (see [`put_pipeline_table`]), and they can
//! be read, listed and dropped.

mod grants;
mod metastore;
mod model;
mod routes;
mod securables;
mod storage;

pub use grants::Grants;
pub use model::{
    NEW_WORKSPACE_CATALOG, end_pipeline_tables, put_pipeline_table, put_staging_volume, put_table,
    redact_write_only, seed_new_workspace, volume_root,
};
pub use routes::{CONNECTIONS_PATH, routes};
pub use storage::{
    CREDENTIALS_PATH, STORAGE_CREDENTIALS_PATH, redact_write_only as redact_credential_secret,
};

/// What a grant on each securable may hold, by its `securable_type`: the privileges of
/// what it contains included, as they are inherited downward. A type may come twice (a
/// function and a registered model are both `function`), once per kind of object.
pub fn grantable_privileges() -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
    securables::SECURABLES
        .iter()
        .map(|s| (s.grant_type, s.privileges))
        .chain([("metastore", grants::METASTORE_PRIVILEGES)])
        .chain(grants::ELSEWHERE.iter().map(|(t, _, p)| (*t, *p)))
}

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::Domain;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What Unity Catalog keeps in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    pub catalogs: Tracked<String, Map<String, Value>>,
    pub schemas: Tracked<String, Map<String, Value>>,
    pub volumes: Tracked<String, Map<String, Value>>,
    /// Tables by full name; pipelines create them (files written before had none).
    #[serde(default)]
    pub tables: Tracked<String, Map<String, Value>>,
    pub connections: Tracked<String, Connection>,
    /// Storage credentials by name, without their write-only secrets (files written
    /// before had none).
    #[serde(default)]
    pub storage_credentials: Tracked<String, Map<String, Value>>,
    /// External locations by name (files written before had none).
    #[serde(default)]
    pub external_locations: Tracked<String, Map<String, Value>>,
    /// Registered models by full name (files written before had none).
    #[serde(default)]
    pub models: Tracked<String, Map<String, Value>>,
    /// Functions by full name (files written before had none).
    #[serde(default)]
    pub functions: Tracked<String, Map<String, Value>>,
    /// Grants by securable (`TYPE:full_name`).
    #[serde(default)]
    pub grants: Tracked<String, Grants>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(
            self,
            catalogs,
            schemas,
            volumes,
            tables,
            connections,
            storage_credentials,
            external_locations,
            models,
            functions,
            grants,
        )
    }
}

/// `ConnectionType` of the Databricks SDK.
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
/// Database connectors whose options must name a host.
const DB_TYPES: &[&str] = &[
    "SQLSERVER",
    "MYSQL",
    "POSTGRESQL",
    "ORACLE",
    "REDSHIFT",
    "SQLDW",
    "TERADATA",
];
/// Options accepted on write and never returned on read. The service withholds the user
/// name too (the Terraform provider keeps `user` from prior state for that reason).
const SECRET_OPTIONS: &[&str] = &[
    "user",
    "password",
    "client_secret",
    "access_token",
    "bearer_token",
    "refresh_token",
    "pem_private_key",
    "private_key",
];

/// A connection as stored: the public info plus the secret options kept apart.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Connection {
    pub info: Map<String, Value>,
    pub secret_options: Map<String, Value>,
}
