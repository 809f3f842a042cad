//! Workspace objects: notebooks, files, directories and Git folders' nodes under `/`. [`model`] is what the
//! API does to the state, [`routes`] the HTTP side.

mod dbc;
mod model;
mod routes;

pub use model::{delete, mkdirs_in as mkdirs, normalize, parent, place_repo, runnable_exists};
pub use routes::routes;

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::{Domain, State, b64};
use serde::{Deserialize, Serialize};

/// What the workspace tree keeps in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    /// Notebooks, files and directories by path.
    pub workspace: Tracked<String, WsObject>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, workspace)
    }

    /// The user's home folder and `/Shared`, as a new workspace has them.
    fn seed(st: &mut State, user_name: &str, now: i64) {
        model::seed(st, user_name, now);
    }
}

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
