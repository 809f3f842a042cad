//! Folders a workspace object's create makes. An import into a folder that does not exist is
//! refused, so brickform makes the object's parent folders first (`workspace/mkdirs`, which
//! makes every missing one). Those the create made are recorded with the object
//! (`created_folders`, outermost first) and its delete removes them again when nothing else
//! is in them, so a destroy leaves no empty folders behind that were not there before; a
//! folder that still holds something is kept and named.
//!
//! Objects in one folder share it: the first create makes it, and the last delete must
//! remove it. Within one run the provider keeps the folders its objects made or recorded
//! (`Shared::made_folders`), so a create that finds a folder another create of the run made
//! records it too, and a delete climbs through the folders any object recorded, whichever
//! of them goes last.

use super::{err, gone_ok, none_if_missing, volume_files};
use crate::Shared;
use crate::client::Client;
use brickform_core::provider::{AttrType, Attribute, OpContext, ProviderResult};
use brickform_core::value::{Object, Value};
use serde_json::json;
use std::collections::BTreeSet;
use std::sync::MutexGuard;

/// The attribute that records them.
pub const ATTRIBUTE: &str = "created_folders";

pub fn attribute() -> Attribute {
    Attribute::computed(ATTRIBUTE, AttrType::List(Box::new(AttrType::String))).describe(
        "Folders this object's create made because they did not exist, outermost first; its delete removes them again when they are empty.",
    )
}

/// The special folders every workspace has, which cannot be renamed or moved: the
/// workspace browser's "Special folders" (docs.databricks.com, workspace/workspace-browser:
/// Workspace, Shared and Users), with `/Workspace` the root's alias. A create's climb stops
/// at them without asking.
const SPECIAL_FOLDERS: [&str; 4] = ["/Shared", "/Users", "/Workspace/Shared", "/Workspace/Users"];

fn made(shared: &Shared) -> MutexGuard<'_, BTreeSet<String>> {
    shared
        .made_folders
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Makes `dir` and every missing folder above it; the folders that were missing or that
/// another object of this run made, outermost first.
pub async fn make(client: &Client, shared: &Shared, dir: &str) -> ProviderResult<Vec<String>> {
    let mut ours = Vec::new();
    let mut at = Some(dir);
    while let Some(d) = at.filter(|d| !SPECIAL_FOLDERS.contains(d)) {
        if !made(shared).contains(d) {
            let status = none_if_missing(
                client
                    .get("/api/2.0/workspace/get-status", &[("path", d.to_string())])
                    .await,
            )?;
            if status.is_some() {
                break;
            }
        }
        ours.push(d.to_string());
        at = volume_files::parent(d);
    }
    if ours.is_empty() {
        // `dir` is there already (or is a special folder): a `mkdirs` would change nothing,
        // and would cost the create a round trip before its import.
        return Ok(ours);
    }
    ours.reverse();
    // Known before they exist, so a create beside this one that finds them made counts them.
    made(shared).extend(ours.iter().cloned());
    client
        .idempotent()
        .post("/api/2.0/workspace/mkdirs", &json!({ "path": dir }))
        .await
        .map_err(err)?;
    Ok(ours)
}

/// The folders `attrs` records.
pub fn recorded(attrs: &Object) -> Vec<String> {
    match attrs.get(ATTRIBUTE) {
        Some(Value::List(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// After the object at `path` was deleted: removes the empty folders above it that it or
/// another object of this run recorded, deepest first. One that still holds something
/// stops the climb; it is named when this object recorded it (another object's record is
/// that object's to finish, as its delete may still come).
pub async fn remove_empty(
    client: &Client,
    shared: &Shared,
    ctx: &OpContext,
    path: &str,
    prior: &Object,
) -> ProviderResult<()> {
    let own = recorded(prior);
    made(shared).extend(own.iter().cloned());
    let mut at = volume_files::parent(path);
    while let Some(folder) = at {
        if !made(shared).contains(folder) {
            break;
        }
        let answer = client
            .idempotent()
            .post(
                "/api/2.0/workspace/delete",
                &json!({ "path": folder, "recursive": false }),
            )
            .await;
        match answer {
            Err(e) if e.error_code == "DIRECTORY_NOT_EMPTY" => {
                if let Some(out) = ctx
                    .output
                    .as_ref()
                    .filter(|_| own.iter().any(|f| f == folder))
                {
                    out.line(&format!(
                        "kept folder {folder}, made by this object's create: it holds other objects now"
                    ));
                }
                return Ok(());
            }
            other => gone_ok(other)?,
        }
        at = volume_files::parent(folder);
    }
    Ok(())
}
