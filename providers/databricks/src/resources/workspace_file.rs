//! `databricks_workspace_file`: a plain file in the workspace tree.

use super::content::{ContentKind, Store, base_schema, workspace_object_schema};
use crate::Shared;
use std::sync::Arc;

pub fn kind(shared: Arc<Shared>) -> ContentKind {
    ContentKind {
        type_name: "databricks_workspace_file",
        store: Store::WorkspaceFile,
        schema: workspace_object_schema(base_schema(
            "A file in the workspace tree (not a notebook).",
        )),
        shared,
    }
}
