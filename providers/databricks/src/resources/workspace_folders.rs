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
//!
//! Whether a folder is there is asked once per create, and early: a plan's lookup of a
//! workspace object it will create also climbs from the object's folder ([`survey`]), at
//! the same time, so the create at apply starts with `mkdirs` (or with its write) instead
//! of a round trip of its own. As for the lookup itself, what the plan found is what apply
//! goes by: a folder made by someone else between the two is recorded as made by the
//! create (and removed again by its delete, when empty). A folder found there that is gone
//! by the write is looked for again, and the write repeated.

use super::{err, gone_ok, none_if_missing, volume_files};
use crate::Shared;
use crate::client::{ApiError, Client};
use brickform_core::provider::{AttrType, Attribute, ErrorKind, OpContext, ProviderResult};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::collections::{BTreeSet, HashMap};
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

/// What a plan's lookup found of one folder: there or not, and in which plan.
#[derive(Clone, Copy, Debug)]
pub struct Surveyed {
    plan: u64,
    there: bool,
}

fn surveyed(shared: &Shared) -> MutexGuard<'_, HashMap<String, Surveyed>> {
    shared
        .surveyed_folders
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What this plan found of folder `d`: `Some(true)` when it is there.
fn found_there(shared: &Shared, d: &str) -> Option<bool> {
    let plan = shared.plan();
    surveyed(shared)
        .get(d)
        .filter(|s| s.plan == plan)
        .map(|s| s.there)
}

async fn is_there(client: &Client, d: &str) -> ProviderResult<bool> {
    let status = none_if_missing(
        client
            .get("/api/2.0/workspace/get-status", &[("path", d.to_string())])
            .await,
    )?;
    Ok(status.is_some())
}

/// At plan, beside the lookup of an object it will create in `dir`: climbs from `dir` as
/// the create's [`make`] will, noting for this plan which folders are there. A folder it
/// cannot read is left for the create to ask about.
pub async fn survey(client: &Client, shared: &Shared, dir: &str) {
    let plan = shared.plan();
    for d in climb(dir) {
        let there = match found_there(shared, d) {
            Some(there) => there,
            None => match is_there(client, d).await {
                Ok(there) => {
                    surveyed(shared).insert(d.to_string(), Surveyed { plan, there });
                    there
                }
                Err(_) => return,
            },
        };
        if there {
            return;
        }
    }
}

/// `dir` and the folders above it, innermost first, up to a special folder (left out).
fn climb(dir: &str) -> impl Iterator<Item = &str> {
    std::iter::successors(Some(dir), |d| volume_files::parent(d))
        .take_while(|d| !SPECIAL_FOLDERS.contains(d))
}

/// Makes `dir` and every missing folder above it, as this plan's [`survey`] found them,
/// then `write`s the object into it; the folders that were missing or that another object
/// of this run made, outermost first. A folder the survey found there that the write finds
/// gone is looked for again, and the write made once more: an import into a folder that is
/// not there is answered `RESOURCE_DOES_NOT_EXIST` ("The parent folder (…) does not
/// exist."), and the Terraform provider's notebook create likewise makes the folder and
/// imports again (workspace/resource_notebook.go).
pub async fn make_then_write<W, F>(
    client: &Client,
    shared: &Shared,
    dir: &str,
    write: W,
) -> ProviderResult<Vec<String>>
where
    W: Fn() -> F,
    F: std::future::Future<Output = Result<Json, ApiError>>,
{
    let (ours, trusted_there) = make_as(client, shared, dir, true).await?;
    match write().await {
        Ok(_) => Ok(ours),
        // Only the folder can be missing for a write that makes the object.
        Err(e) if e.kind == ErrorKind::NotFound && trusted_there => {
            let plan = shared.plan();
            surveyed(shared).retain(|_, s| s.plan != plan);
            let (ours, _) = make_as(client, shared, dir, false).await?;
            write().await.map_err(err)?;
            Ok(ours)
        }
        Err(e) => Err(err(e)),
    }
}

/// Makes `dir` and every missing folder above it; the folders that were missing or that
/// another object of this run made, outermost first.
pub async fn make(client: &Client, shared: &Shared, dir: &str) -> ProviderResult<Vec<String>> {
    Ok(make_as(client, shared, dir, false).await?.0)
}

/// [`make`], going by this plan's survey where `trust_survey`; also whether it took a
/// folder to be there because the survey said so.
async fn make_as(
    client: &Client,
    shared: &Shared,
    dir: &str,
    trust_survey: bool,
) -> ProviderResult<(Vec<String>, bool)> {
    let mut ours = Vec::new();
    let mut trusted_there = false;
    for d in climb(dir) {
        if !made(shared).contains(d) {
            let found = trust_survey.then(|| found_there(shared, d)).flatten();
            let there = match found {
                Some(there) => {
                    trusted_there |= there;
                    there
                }
                None => is_there(client, d).await?,
            };
            if there {
                break;
            }
        }
        ours.push(d.to_string());
    }
    if ours.is_empty() {
        // `dir` is there already (or is a special folder): a `mkdirs` would change nothing,
        // and would cost the create a round trip before its import.
        return Ok((ours, trusted_there));
    }
    ours.reverse();
    // Known before they exist, so a create beside this one that finds them made counts them.
    made(shared).extend(ours.iter().cloned());
    client
        .idempotent()
        .post("/api/2.0/workspace/mkdirs", &json!({ "path": dir }))
        .await
        .map_err(err)?;
    Ok((ours, trusted_there))
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
