//! Files API for UC volumes: `/api/2.0/fs/files{path}` and `/api/2.0/fs/directories{path}`.
//! [`model`] is what the API does to the state, [`routes`] the HTTP side.

mod model;
mod routes;

pub use model::{file_exists, normalize, put_file, read_file, remove_tree, rename_tree};
pub use routes::routes;

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::{Domain, b64};
use serde::{Deserialize, Serialize};

/// What the Files API keeps in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    /// Files and directories of volumes by path.
    pub files: Tracked<String, FsEntry>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, files)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FsEntry {
    Directory {
        modified: i64,
    },
    File {
        #[serde(with = "b64")]
        content: Vec<u8>,
        modified: i64,
    },
}

/// Uploads under this path carry file contents (their own body limit, logged by size).
pub const FILES_PREFIX: &str = "/api/2.0/fs/files/";
