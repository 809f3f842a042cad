//! Git folders (repos), `/api/2.0/repos`: [`model`] is what the API does to the state,
//! [`routes`] the HTTP side.
//!
//! A Git folder is two things, each kept by the domain that owns it: its node in the
//! workspace tree (object type `REPO`, its object id the repo's id, as the service's
//! `workspace/get-status` answers it; databricks/cli libs/testserver/fake_workspace.go),
//! which the workspace domain keeps, and its Git side (the remote, the provider, what is
//! checked out, sparse checkout), kept here by id. Nothing is cloned: the folder holds no
//! files, and the commit a checkout reports is made up from what was checked out.

mod model;
mod routes;

pub use model::forget;
pub use routes::routes;

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::Domain;
use serde::{Deserialize, Serialize};

/// What Git folders keep in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    /// The Git side of every Git folder, by repo id (files written before had none).
    #[serde(default)]
    pub repos: Tracked<i64, Repo>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, repos)
    }
}

/// One Git folder's Git side, as `GET /api/2.0/repos/{id}` answers it (the path is the
/// workspace tree's, repeated here so a read needs no search of the tree).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Repo {
    pub path: String,
    pub url: String,
    pub provider: String,
    /// None while a tag is checked out: a tag leaves the folder on a detached HEAD
    /// (databricks-sdk-go service/workspace/model.go, UpdateRepoRequest.Tag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    pub head_commit_id: String,
    /// Sparse checkout's cone patterns; None when the folder was made without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sparse_checkout: Option<Vec<String>>,
}
