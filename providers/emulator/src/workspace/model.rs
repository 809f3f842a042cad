//! What the Workspace API does to the workspace state, apart from HTTP: directories,
//! notebooks and files under `/`.

use super::{MAX_IMPORT, WsObject};
use crate::errors::{ApiError, ApiResult};
use crate::store::{Ctx, State};
use crate::util::{compact, with_prefix};
use serde_json::{Value, json};

/// The folders every workspace starts with.
pub fn seed(st: &mut State, user: &str, now: i64) {
    for p in [
        "/Users".to_string(),
        format!("/Users/{user}"),
        "/Shared".to_string(),
    ] {
        let id = st.next_id();
        st.workspace.workspace.insert(p, dir_object(id, now));
    }
}

pub fn dir_object(id: i64, now: i64) -> WsObject {
    WsObject {
        object_type: "DIRECTORY".into(),
        object_id: id,
        language: None,
        content: Vec::new(),
        created_at: now,
        modified_at: now,
    }
}

pub fn missing(path: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Path ({path}) doesn't exist."),
    )
}

/// A request's path as the workspace keeps it. The service takes a workspace path with or
/// without its `/Workspace` mount prefix (`/Workspace/Users/me/nb` is `/Users/me/nb`), so
/// the prefix is dropped; repeated slashes collapse.
pub fn normalize(raw: &str) -> ApiResult<String> {
    if !raw.starts_with('/') {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'path': '{raw}' must be absolute"
        )));
    }
    let mut segs: Vec<&str> = raw.split('/').filter(|s| !s.is_empty()).collect();
    if segs.iter().any(|s| *s == "." || *s == "..") {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'path': '{raw}' must not contain '.' or '..'"
        )));
    }
    if segs.first() == Some(&"Workspace") {
        segs.remove(0);
    }
    Ok(format!("/{}", segs.join("/")))
}

/// Whether a request spelled its path with the `/Workspace` mount prefix, which the
/// service's answer keeps.
pub fn mounted(raw: &str) -> bool {
    raw.split('/').find(|s| !s.is_empty()) == Some("Workspace")
}

pub fn is_dir(st: &State, path: &str) -> bool {
    path == "/" || st.workspace.workspace.get(path).is_some_and(holds_others)
}

/// Whether objects lie inside it: a folder, or a Git folder (whose files are in the tree
/// under it, as in the service's, where a Git folder is listed like a folder).
fn holds_others(o: &WsObject) -> bool {
    o.object_type == "DIRECTORY" || o.object_type == "REPO"
}

/// Puts a Git folder's node in the tree, for the repos domain that keeps its Git side: at a
/// path that holds nothing yet, in a folder that exists ("Parent directory /Repos/x does
/// not exist.", the service's answer quoted in terraform-provider-databricks issue #862).
/// Its object id is the repo's id, as get-status answers it (databricks/cli
/// libs/testserver/fake_workspace.go).
pub fn place_repo(st: &mut State, path: &str, id: i64, now: i64) -> ApiResult<()> {
    let par = parent(path);
    if path == "/" || !is_dir(st, par) {
        return Err(ApiError::not_found(
            "RESOURCE_DOES_NOT_EXIST",
            format!("Parent directory {par} does not exist."),
        ));
    }
    if st.workspace.workspace.contains_key(path) {
        return Err(ApiError::new(
            axum::http::StatusCode::BAD_REQUEST,
            "RESOURCE_ALREADY_EXISTS",
            format!("Path ({path}) already exists."),
        ));
    }
    st.workspace.workspace.insert(
        path.to_string(),
        WsObject {
            object_type: "REPO".into(),
            ..dir_object(id, now)
        },
    );
    Ok(())
}

pub fn parent(path: &str) -> &str {
    match path.rsplit_once('/') {
        Some(("", _)) | None => "/",
        Some((p, _)) => p,
    }
}

pub fn children_prefix(path: &str) -> String {
    if path == "/" {
        "/".to_string()
    } else {
        format!("{path}/")
    }
}

/// A notebook or file at `path` (job notebook tasks and pipeline libraries need one).
pub fn runnable_exists(st: &State, path: &str) -> bool {
    normalize(path).is_ok_and(|p| {
        st.workspace
            .workspace
            .get(&p)
            .is_some_and(|o| o.object_type == "NOTEBOOK" || o.object_type == "FILE")
    })
}

pub fn mkdirs_in(st: &mut State, path: &str, now: i64) -> ApiResult<()> {
    let mut cur = String::new();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        cur = format!("{cur}/{seg}");
        match st.workspace.workspace.get(&cur) {
            Some(o) if !holds_others(o) => {
                return Err(ApiError::conflict(
                    "RESOURCE_ALREADY_EXISTS",
                    format!("Path ({cur}) already exists and is not a directory."),
                ));
            }
            Some(_) => {}
            None => {
                let id = st.next_id();
                st.workspace
                    .workspace
                    .insert(cur.clone(), dir_object(id, now));
            }
        }
    }
    Ok(())
}

/// A workspace import, from a JSON or a multipart body.
pub struct ImportRequest {
    pub path: String,
    pub content: Vec<u8>,
    pub format: String,
    pub language: Option<String>,
    pub overwrite: bool,
}

pub fn check_enum(field: &str, v: &str, allowed: &[&str]) -> ApiResult<String> {
    if allowed.contains(&v) {
        Ok(v.to_string())
    } else {
        Err(ApiError::invalid(format!(
            "Invalid value for field '{field}': '{v}' is not one of {}",
            allowed.join(", ")
        )))
    }
}

pub fn language_of(path: &str) -> Option<(&'static str, &'static str)> {
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    match ext {
        "py" => Some(("PYTHON", "# Databricks notebook source")),
        "sql" => Some(("SQL", "-- Databricks notebook source")),
        "scala" => Some(("SCALA", "// Databricks notebook source")),
        "r" | "R" => Some(("R", "# Databricks notebook source")),
        _ => None,
    }
}

/// The path without its last segment's extension (`/a.b/x.ipynb` → `/a.b/x`; a dot in a
/// folder's name, as in a user's home `/Users/a@b.com/x`, is not an extension).
pub fn strip_ext(path: &str) -> String {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => {
            if path.contains('/') {
                format!("{dir}/{stem}")
            } else {
                stem.to_string()
            }
        }
        _ => path.to_string(),
    }
}

/// The language a Jupyter notebook declares (`metadata.language_info.name`, else
/// `metadata.kernelspec.language`), as the workspace's language; Python when it declares
/// none. Content that is not a notebook's JSON is refused.
fn jupyter_language(content: &[u8]) -> ApiResult<String> {
    let nb: Value = serde_json::from_slice(content)
        .ok()
        .filter(|v: &Value| v.get("cells").is_some_and(Value::is_array))
        .ok_or_else(|| {
            ApiError::invalid(
                "Unable to parse the content as a Jupyter notebook (.ipynb JSON with cells).",
            )
        })?;
    let declared = nb
        .pointer("/metadata/language_info/name")
        .or_else(|| nb.pointer("/metadata/kernelspec/language"))
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase);
    Ok(match declared.as_deref() {
        Some("sql") => "SQL",
        Some("scala") => "SCALA",
        Some("r") => "R",
        _ => "PYTHON",
    }
    .to_string())
}

/// Decides what an import creates: `(final path, object type, language)`.
pub fn classify(r: &ImportRequest) -> ApiResult<(String, &'static str, Option<String>)> {
    match r.format.as_str() {
        "SOURCE" => {
            let lang = r
                .language
                .clone()
                .or_else(|| language_of(&r.path).map(|(l, _)| l.to_string()));
            let lang = lang.ok_or_else(|| {
                ApiError::invalid("Missing required field: language (required for a SOURCE import)")
            })?;
            Ok((r.path.clone(), "NOTEBOOK", Some(lang)))
        }
        "AUTO" => match language_of(&r.path) {
            Some((lang, header)) if r.content.starts_with(header.as_bytes()) => {
                Ok((strip_ext(&r.path), "NOTEBOOK", Some(lang.to_string())))
            }
            _ if r.path.ends_with(".ipynb") => {
                Ok((strip_ext(&r.path), "NOTEBOOK", Some("PYTHON".into())))
            }
            _ => Ok((r.path.clone(), "FILE", None)),
        },
        "RAW" => Ok((r.path.clone(), "FILE", None)),
        "JUPYTER" => {
            let lang = match &r.language {
                Some(l) => l.clone(),
                None => jupyter_language(&r.content)?,
            };
            Ok((strip_ext(&r.path), "NOTEBOOK", Some(lang)))
        }
        "HTML" | "R_MARKDOWN" => Ok((
            strip_ext(&r.path),
            "NOTEBOOK",
            Some(r.language.clone().unwrap_or_else(|| "PYTHON".into())),
        )),
        other => Err(ApiError::invalid(format!(
            "Invalid value for field 'format': {other} imports are not supported by the local workspace"
        ))),
    }
}

pub fn do_import(st: &mut State, ctx: &Ctx, r: ImportRequest) -> ApiResult<()> {
    if r.content.len() > MAX_IMPORT {
        return Err(
            ApiError::invalid("The content exceeds the 10 MB import limit.")
                .with_code("MAX_NOTEBOOK_SIZE_EXCEEDED"),
        );
    }
    if r.format == "DBC" {
        return import_archive(st, ctx, r);
    }
    let (path, object_type, language) = classify(&r)?;
    import_target(st, &path)?;
    let existing = st.workspace.workspace.get(&path);
    let (object_id, created_at) = match existing {
        Some(o) if holds_others(o) => {
            return Err(ApiError::conflict(
                "RESOURCE_ALREADY_EXISTS",
                format!("Path ({path}) already exists as a directory."),
            ));
        }
        // An import does not overwrite an experiment: it is the MLflow API's.
        Some(o) if o.object_type == "MLFLOW_EXPERIMENT" => {
            return Err(ApiError::conflict(
                "RESOURCE_ALREADY_EXISTS",
                format!("Path ({path}) already exists."),
            ));
        }
        Some(_) if !r.overwrite => {
            return Err(ApiError::conflict(
                "RESOURCE_ALREADY_EXISTS",
                format!("Path ({path}) already exists."),
            ));
        }
        Some(o) => (o.object_id, o.created_at),
        None => (st.next_id(), ctx.now),
    };
    st.workspace.workspace.insert(
        path,
        WsObject {
            object_type: object_type.into(),
            object_id,
            language,
            content: r.content,
            created_at,
            modified_at: ctx.now,
        },
    );
    Ok(())
}

/// What every import checks of where it goes: not the root, and into a folder that exists.
fn import_target(st: &State, path: &str) -> ApiResult<()> {
    if path == "/" {
        return Err(ApiError::invalid(
            "Invalid value for field 'path': cannot import to /",
        ));
    }
    let par = parent(path);
    if !is_dir(st, par) {
        return Err(ApiError::not_found(
            "RESOURCE_DOES_NOT_EXIST",
            format!("The parent folder ({par}) does not exist."),
        ));
    }
    Ok(())
}

/// A Databricks archive: its folder (or its one notebook) made at the path, which must not
/// exist yet (an archive does not overwrite).
fn import_archive(st: &mut State, ctx: &Ctx, r: ImportRequest) -> ApiResult<()> {
    if r.overwrite {
        return Err(ApiError::invalid(
            "Overwrite is not supported for the DBC format.",
        ));
    }
    let path = r.path.clone();
    import_target(st, &path)?;
    if st.workspace.workspace.contains_key(&path) {
        return Err(ApiError::conflict(
            "RESOURCE_ALREADY_EXISTS",
            format!("Path ({path}) already exists."),
        ));
    }
    let notebooks = super::dbc::notebooks(&r.content)?;
    for nb in notebooks {
        let at = if nb.relative.is_empty() {
            path.clone()
        } else {
            format!("{path}/{}", nb.relative.join("/"))
        };
        mkdirs_in(st, parent(&at), ctx.now)?;
        let id = st.next_id();
        st.workspace.workspace.insert(
            at,
            WsObject {
                object_type: "NOTEBOOK".into(),
                object_id: id,
                language: Some(nb.language),
                content: nb.source,
                created_at: ctx.now,
                modified_at: ctx.now,
            },
        );
    }
    Ok(())
}

pub fn file_type(o: &WsObject, path: &str) -> String {
    match (o.object_type.as_str(), o.language.as_deref()) {
        ("NOTEBOOK", Some("PYTHON")) => "py".into(),
        ("NOTEBOOK", Some("SQL")) => "sql".into(),
        ("NOTEBOOK", Some("SCALA")) => "scala".into(),
        ("NOTEBOOK", Some("R")) => "r".into(),
        _ => path
            .rsplit_once('.')
            .map(|(_, e)| e.to_string())
            .unwrap_or_default(),
    }
}

pub fn object_info(path: &str, o: &WsObject) -> Value {
    let size = (o.object_type == "FILE").then_some(o.content.len());
    Value::Object(compact(json!({
        "path": path, "object_type": o.object_type, "object_id": o.object_id, "resource_id": o.object_id.to_string(),
        "language": o.language, "created_at": o.created_at, "modified_at": o.modified_at, "size": size,
    })))
}

pub fn root_info() -> Value {
    json!({"path": "/", "object_type": "DIRECTORY", "object_id": 0, "resource_id": "0"})
}

// ---------- operations ----------

/// What an export returns: the object's content and its file type.
pub fn export(st: &State, path: &str) -> ApiResult<(Vec<u8>, String)> {
    let o = st
        .workspace
        .workspace
        .get(path)
        .ok_or_else(|| missing(path))?;
    if holds_others(o) {
        return Err(ApiError::invalid(format!(
            "Path ({path}) is a directory; only DBC exports of directories are supported."
        )));
    }
    Ok((o.content.clone(), file_type(o, path)))
}

pub fn get_status(st: &State, path: &str) -> ApiResult<Value> {
    if path == "/" {
        return Ok(root_info());
    }
    st.workspace
        .workspace
        .get(path)
        .map(|o| object_info(path, o))
        .ok_or_else(|| missing(path))
}

/// A directory's children (notebooks modified after `after`, if given), or the object
/// itself when it is not a directory.
pub fn list(st: &State, path: &str, after: Option<i64>) -> ApiResult<Vec<Value>> {
    if !is_dir(st, path) {
        return match st.workspace.workspace.get(path) {
            Some(o) => Ok(vec![object_info(path, o)]),
            None => Err(missing(path)),
        };
    }
    let prefix = children_prefix(path);
    Ok(with_prefix(&st.workspace.workspace, &prefix)
        .filter(|(k, _)| !k[prefix.len()..].contains('/'))
        .filter(|(_, o)| o.object_type != "NOTEBOOK" || after.is_none_or(|a| o.modified_at > a))
        .map(|(k, o)| object_info(k, o))
        .collect())
}

/// Deletes an object; a directory with children only when `recursive`.
pub fn delete(st: &mut State, path: &str, recursive: bool) -> ApiResult<()> {
    if path == "/" {
        return Err(ApiError::invalid("The root folder cannot be deleted.")
            .with_code("DIRECTORY_PROTECTED"));
    }
    let obj = st
        .workspace
        .workspace
        .get(path)
        .ok_or_else(|| missing(path))?
        .clone();
    let mut gone = Vec::new();
    if holds_others(&obj) {
        let prefix = children_prefix(path);
        let has_children = with_prefix(&st.workspace.workspace, &prefix)
            .next()
            .is_some();
        if has_children && !recursive {
            return Err(ApiError::not_empty(
                "DIRECTORY_NOT_EMPTY",
                format!("Folder ({path}) is not empty."),
            ));
        }
        for (_, o) in with_prefix(&st.workspace.workspace, &prefix).collect::<Vec<_>>() {
            gone.push((o.object_type.clone(), o.object_id));
        }
        crate::util::remove_prefix(&mut st.workspace.workspace, &prefix);
    }
    gone.push((obj.object_type.clone(), obj.object_id));
    st.workspace.workspace.remove(path);
    // Permissions belong to their object: they go with it; a Git folder's Git side too.
    for (object_type, id) in gone {
        let request = match object_type.as_str() {
            "NOTEBOOK" => "notebooks",
            "DIRECTORY" => "directories",
            // An experiment is deleted with its node (the MLflow domain's soft delete).
            "MLFLOW_EXPERIMENT" => {
                crate::mlflow::workspace_node_deleted(st, id);
                "experiments"
            }
            "REPO" => {
                crate::repos::forget(st, id);
                "repos"
            }
            _ => "files",
        };
        crate::permissions::forget(st, request, &id.to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(now: i64) -> Ctx<'static> {
        Ctx::for_test(now, 100)
    }

    fn import(path: &str, format: &str, content: &[u8]) -> ImportRequest {
        ImportRequest {
            path: path.into(),
            content: content.to_vec(),
            format: format.into(),
            language: None,
            overwrite: false,
        }
    }

    #[test]
    fn only_the_last_segment_has_an_extension() {
        assert_eq!(strip_ext("/Users/a@b.com/x.ipynb"), "/Users/a@b.com/x");
        assert_eq!(strip_ext("/Users/a@b.com/x"), "/Users/a@b.com/x");
        assert_eq!(strip_ext("/Shared/.hidden"), "/Shared/.hidden");
        assert_eq!(strip_ext("x.py"), "x");
    }

    #[test]
    fn imports_become_notebooks_or_files_by_format_and_extension() {
        let mut st = State::new("u@x", 0);
        do_import(&mut st, &ctx(1), import("/Shared/a.py", "SOURCE", b"x")).unwrap();
        do_import(
            &mut st,
            &ctx(1),
            import("/Shared/b.py", "AUTO", b"# Databricks notebook source\n"),
        )
        .unwrap();
        do_import(&mut st, &ctx(1), import("/Shared/c.txt", "AUTO", b"x")).unwrap();
        let kind = |p: &str| st.workspace.workspace.get(p).map(|o| o.object_type.clone());
        assert_eq!(kind("/Shared/a.py").as_deref(), Some("NOTEBOOK"));
        assert_eq!(kind("/Shared/b").as_deref(), Some("NOTEBOOK"));
        assert_eq!(kind("/Shared/c.txt").as_deref(), Some("FILE"));
        assert!(runnable_exists(&st, "/Shared/b") && runnable_exists(&st, "//Shared/c.txt"));
        let e = do_import(&mut st, &ctx(2), import("/Shared/c.txt", "AUTO", b"y")).unwrap_err();
        assert_eq!(e.code, "RESOURCE_ALREADY_EXISTS");
        let e = do_import(&mut st, &ctx(2), import("/Nope/x.py", "SOURCE", b"")).unwrap_err();
        assert_eq!(e.message, "The parent folder (/Nope) does not exist.");
        let e = do_import(&mut st, &ctx(2), import("/Shared/x", "SOURCE", b"")).unwrap_err();
        assert!(e.message.contains("language"), "{}", e.message);
    }

    #[test]
    fn directories_list_their_children_and_delete_only_recursively() {
        let mut st = State::new("u@x", 0);
        mkdirs_in(&mut st, "/Shared/a/b", 1).unwrap();
        do_import(&mut st, &ctx(1), import("/Shared/a/f.txt", "RAW", b"1")).unwrap();
        let names: Vec<Value> = list(&st, "/Shared/a", None)
            .unwrap()
            .into_iter()
            .map(|o| o["path"].clone())
            .collect();
        assert_eq!(names, [json!("/Shared/a/b"), json!("/Shared/a/f.txt")]);
        assert_eq!(
            get_status(&st, "/Shared/a/f.txt").unwrap()["size"],
            json!(1)
        );
        let e = mkdirs_in(&mut st, "/Shared/a/f.txt/x", 2).unwrap_err();
        assert_eq!(e.code, "RESOURCE_ALREADY_EXISTS");
        assert_eq!(
            delete(&mut st, "/Shared/a", false).unwrap_err().code,
            "DIRECTORY_NOT_EMPTY"
        );
        delete(&mut st, "/Shared/a", true).unwrap();
        assert!(
            st.workspace
                .workspace
                .keys()
                .all(|k| !k.starts_with("/Shared/a"))
        );
        assert_eq!(
            delete(&mut st, "/", true).unwrap_err().code,
            "DIRECTORY_PROTECTED"
        );
        assert!(normalize("Shared").is_err() && normalize("/a/../b").is_err());
        // The mount prefix is optional, and only a whole first segment is one.
        assert_eq!(normalize("/Workspace/Shared//a").unwrap(), "/Shared/a");
        assert_eq!(normalize("/Workspace").unwrap(), "/");
        assert_eq!(normalize("/WorkspaceX/a").unwrap(), "/WorkspaceX/a");
        assert!(mounted("/Workspace/Shared/a") && !mounted("/Shared/Workspace"));
    }
}
