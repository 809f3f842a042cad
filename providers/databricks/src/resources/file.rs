//! `databricks_file`: a file in a Unity Catalog volume (Files API).

use super::content::{ContentKind, Store, base_schema};
use crate::Shared;
use std::sync::Arc;

pub fn kind(shared: Arc<Shared>) -> ContentKind {
    ContentKind {
        type_name: "databricks_file",
        store: Store::VolumeFile,
        schema: base_schema(
            "A file in a Unity Catalog volume, at /Volumes/<catalog>/<schema>/<volume>/<path>.",
        ),
        shared,
    }
}
