//! Workspace objects: notebooks, files and directories under `/`. [`model`] is what the
//! API does to the state, [`routes`] the HTTP side.

mod dbc;
mod model;
mod routes;

pub use model::{normalize, parent, runnable_exists, seed};
pub use routes::routes;

use crate::store::b64;
use serde::{Deserialize, Serialize};

const MAX_IMPORT: usize = 10 * 1024 * 1024;

const FORMATS: &[&str] = &[
    "SOURCE",
    "AUTO",
    "HTML",
    "JUPYTER",
    "DBC",
    "RAW",
    "R_MARKDOWN",
];

const LANGUAGES: &[&str] = &["PYTHON", "SQL", "SCALA", "R"];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WsObject {
    pub object_type: String,
    pub object_id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(with = "b64")]
    pub content: Vec<u8>,
    pub created_at: i64,
    pub modified_at: i64,
}
