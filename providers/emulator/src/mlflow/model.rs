//! What the MLflow experiments and model registry APIs do to the workspace state, apart
//! from HTTP.

use crate::errors::{ApiError, ApiResult};
use crate::store::{Ctx, State};
use crate::workspace::WsObject;
use serde_json::{Map, Value, json};

/// The object type of an experiment in the workspace tree.
pub const EXPERIMENT_NODE: &str = "MLFLOW_EXPERIMENT";
/// The permissions' `request_object_type` of experiments and of registered models.
const EXPERIMENT_PERMISSIONS: &str = "experiments";
const MODEL_PERMISSIONS: &str = "registered-models";
/// Tag sizes every backend takes (databricks-sdk-go service/ml/model.go, CreateExperiment
/// and SetModelTagRequest: keys up to 250 bytes, values up to 5000).
const MAX_TAG_KEY: usize = 250;
const MAX_TAG_VALUE: usize = 5000;

fn bad(why: impl Into<String>) -> ApiError {
    ApiError::invalid(why)
}

fn missing_experiment(id: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("No Experiment with id={id} exists"),
    )
}

fn missing_model(name: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Registered Model with name={name} not found"),
    )
}

/// An experiment name as the service keeps it: an absolute workspace path, without the
/// `/Workspace` mount prefix and a trailing slash (the Terraform provider's
/// experimentNameSuppressDiff and databricks/cli bundle/direct/dresources/experiment.go
/// compare names so, as the service answers `/Users/…` for `/Workspace/Users/…/`). A name
/// that is not a path is refused with the service's words (mlflow/mlflow#8269).
pub fn experiment_name(raw: &str) -> ApiResult<String> {
    let invalid = || {
        bad(format!(
            "Got an invalid experiment name '{raw}'. An experiment name must be an absolute path within the Databricks workspace, e.g. /Users/<some-username>/my-experiment."
        ))
    };
    if !raw.starts_with('/') {
        return Err(invalid());
    }
    let path = crate::workspace::normalize(raw).map_err(|_| invalid())?;
    if path == "/" {
        return Err(invalid());
    }
    Ok(path)
}

/// The `tags` of a request: `[{key, value}]`, each key once.
fn tags(body: &Map<String, Value>) -> ApiResult<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for t in body
        .get("tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = t.get("key").and_then(Value::as_str).unwrap_or_default();
        let value = t.get("value").and_then(Value::as_str).unwrap_or_default();
        tag_fits(key, value)?;
        out.retain(|(k, _)| k != key);
        out.push((key.to_string(), value.to_string()));
    }
    Ok(out)
}

fn tag_fits(key: &str, value: &str) -> ApiResult<()> {
    if key.is_empty() {
        return Err(bad("Missing value for required parameter 'key'."));
    }
    if key.len() > MAX_TAG_KEY {
        return Err(bad(format!(
            "Tag key '{key}' had length {}, which exceeded length limit of {MAX_TAG_KEY}",
            key.len()
        )));
    }
    if value.len() > MAX_TAG_VALUE {
        return Err(bad(format!(
            "Tag value for key '{key}' had length {}, which exceeded length limit of {MAX_TAG_VALUE}",
            value.len()
        )));
    }
    Ok(())
}

fn tag_list(tags: &[(String, String)]) -> Value {
    Value::Array(
        tags.iter()
            .map(|(k, v)| json!({ "key": k, "value": v }))
            .collect(),
    )
}

/// Sets one tag of a held object's `tags`, replacing a tag of that key.
fn set_in(o: &mut Map<String, Value>, key: &str, value: &str) {
    let mut list = o
        .get("tags")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    list.retain(|t| t.get("key").and_then(Value::as_str) != Some(key));
    list.push(json!({ "key": key, "value": value }));
    o.insert("tags".into(), Value::Array(list));
}

/// Whether the workspace tree has a folder at `path`.
fn folder_at(st: &State, path: &str) -> bool {
    path == "/"
        || st
            .workspace
            .workspace
            .get(path)
            .is_some_and(|o| o.object_type == "DIRECTORY")
}

/// Where an experiment may go: into a folder that exists, at a path nothing holds.
fn place_free(st: &State, path: &str) -> ApiResult<()> {
    let parent = crate::workspace::parent(path);
    if !folder_at(st, parent) {
        return Err(ApiError::not_found(
            "RESOURCE_DOES_NOT_EXIST",
            format!("Parent directory {parent} does not exist."),
        ));
    }
    if st.workspace.workspace.contains_key(path) {
        return Err(ApiError::conflict(
            "RESOURCE_ALREADY_EXISTS",
            format!("Node named '{path}' already exists"),
        ));
    }
    Ok(())
}

fn active(e: &Map<String, Value>) -> bool {
    e.get("lifecycle_stage").and_then(Value::as_str) == Some("active")
}

/// Makes an experiment; returns its id. The service fills in an artifact location and
/// tags of its own (databricks/cli libs/testserver/experiments.go: `mlflow.ownerEmail`,
/// `mlflow.experiment.sourceName`, `mlflow.experimentType`).
/// The most a trace-table prefix may hold (databricks-sdk-go service/ml/model.go,
/// `UcTraceLocation.TablePrefix`: "at most 238 characters").
const MAX_TABLE_PREFIX: usize = 238;

/// A create's `trace_location` as the service keeps it: a Unity Catalog schema that exists,
/// and the prefix of its trace tables, `effective_table_prefix` being the one given or one
/// the service derives from the experiment id (the given `table_prefix` stays empty then).
fn trace_location(st: &State, body: &Map<String, Value>, id: &str) -> ApiResult<Option<Value>> {
    let Some(t) = body.get("trace_location") else {
        return Ok(None);
    };
    let uc = t
        .get("uc_trace_location")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("trace_location must hold a uc_trace_location."))?;
    let part = |k: &str| {
        uc.get(k)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                bad(format!(
                    "Missing value for required parameter 'trace_location.uc_trace_location.{k}'."
                ))
            })
    };
    let (catalog, schema) = (part("catalog")?, part("schema")?);
    let full = format!("{catalog}.{schema}").to_lowercase();
    if !st.uc.schemas.contains_key(&full) {
        return Err(ApiError::not_found(
            "SCHEMA_DOES_NOT_EXIST",
            format!("Schema '{full}' does not exist."),
        ));
    }
    let given = uc
        .get("table_prefix")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty());
    if let Some(p) = given
        && (p.len() > MAX_TABLE_PREFIX || !p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return Err(bad(format!(
            "Invalid table_prefix '{p}': it may only contain letters, digits and underscores, at most {MAX_TABLE_PREFIX} characters."
        )));
    }
    let mut held = json!({"catalog": catalog, "schema": schema});
    held["effective_table_prefix"] =
        json!(given.map_or_else(|| format!("trace_{id}"), str::to_string));
    if let Some(p) = given {
        held["table_prefix"] = json!(p);
    }
    Ok(Some(json!({ "uc_trace_location": held })))
}

pub fn create_experiment(
    st: &mut State,
    ctx: &Ctx,
    body: &Map<String, Value>,
) -> ApiResult<String> {
    let raw = body
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| bad("Missing value for required parameter 'name'."))?;
    let name = experiment_name(raw)?;
    let mut tags = tags(body)?;
    if st
        .workspace
        .workspace
        .get(&name)
        .is_some_and(|o| o.object_type == EXPERIMENT_NODE)
    {
        // The service's words when the name is another experiment's.
        return Err(ApiError::conflict(
            "RESOURCE_ALREADY_EXISTS",
            format!("Experiment with name '{name}' already exists."),
        ));
    }
    place_free(st, &name)?;
    let id_n = st.next_id();
    let id = id_n.to_string();
    let artifact_location = body
        .get("artifact_location")
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| format!("dbfs:/databricks/mlflow-tracking/{id}"));
    for (k, v) in [
        ("mlflow.ownerEmail", ctx.user),
        ("mlflow.experiment.sourceName", name.as_str()),
        ("mlflow.experimentType", EXPERIMENT_NODE),
    ] {
        tags.retain(|(key, _)| key != k);
        tags.push((k.to_string(), v.to_string()));
    }
    let traces = trace_location(st, body, &id)?;
    let e = json!({
        "experiment_id": id,
        "name": name,
        "artifact_location": artifact_location,
        "lifecycle_stage": "active",
        "creation_time": ctx.now,
        "last_update_time": ctx.now,
        "tags": tag_list(&tags),
    });
    let Value::Object(mut e) = e else {
        return Err(ApiError::internal("an experiment is an object"));
    };
    if let Some(t) = traces {
        e.insert("trace_location".into(), t);
    }
    st.workspace.workspace.insert(
        name,
        WsObject {
            object_type: EXPERIMENT_NODE.into(),
            object_id: id_n,
            language: None,
            content: Vec::new(),
            created_at: ctx.now,
            modified_at: ctx.now,
        },
    );
    st.mlflow.experiments.insert(id.clone(), e);
    Ok(id)
}

/// An experiment by id, a deleted one too (its `lifecycle_stage` says so).
pub fn get_experiment<'a>(st: &'a State, id: &str) -> ApiResult<&'a Map<String, Value>> {
    st.mlflow
        .experiments
        .get(id)
        .ok_or_else(|| missing_experiment(id))
}

/// The active experiment of a name: a deleted one's name is free, so it finds none.
pub fn experiment_by_name<'a>(st: &'a State, raw: &str) -> ApiResult<&'a Map<String, Value>> {
    let gone = || {
        ApiError::not_found(
            "RESOURCE_DOES_NOT_EXIST",
            format!("Could not find experiment with name {raw}"),
        )
    };
    let name = experiment_name(raw).map_err(|_| gone())?;
    st.mlflow
        .experiments
        .values()
        .find(|e| active(e) && e.get("name").and_then(Value::as_str) == Some(name.as_str()))
        .ok_or_else(gone)
}

fn active_experiment<'a>(st: &'a mut State, id: &str) -> ApiResult<&'a mut Map<String, Value>> {
    let e = st
        .mlflow
        .experiments
        .get_mut(id)
        .ok_or_else(|| missing_experiment(id))?;
    if !active(e) {
        // The service's words for a write to a deleted experiment (as mlflow/mlflow#6606
        // quotes them for runs).
        return Err(bad(format!(
            "The experiment {id} must be in the 'active' state. Current state is deleted."
        )));
    }
    Ok(e)
}

/// Renames an experiment: it moves in the workspace tree, and its source-name tag follows
/// (databricks/cli libs/testserver/experiments.go, ExperimentUpdate).
pub fn rename_experiment(st: &mut State, ctx: &Ctx, id: &str, raw: &str) -> ApiResult<()> {
    let old = active_experiment(st, id)?
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let name = experiment_name(raw)?;
    if name != old {
        place_free(st, &name)?;
        if let Some(node) = st.workspace.workspace.remove(&old) {
            st.workspace.workspace.insert(name.clone(), node);
        }
    }
    let e = active_experiment(st, id)?;
    e.insert("name".into(), json!(name));
    e.insert("last_update_time".into(), json!(ctx.now));
    set_in(e, "mlflow.experiment.sourceName", &name);
    Ok(())
}

pub fn set_experiment_tag(
    st: &mut State,
    ctx: &Ctx,
    id: &str,
    key: &str,
    value: &str,
) -> ApiResult<()> {
    tag_fits(key, value)?;
    let e = active_experiment(st, id)?;
    set_in(e, key, value);
    e.insert("last_update_time".into(), json!(ctx.now));
    Ok(())
}

/// A soft delete: the experiment stays, deleted, and leaves the workspace tree (its name is
/// free again); its permissions go.
pub fn delete_experiment(st: &mut State, ctx: &Ctx, id: &str) -> ApiResult<()> {
    let e = active_experiment(st, id)?;
    e.insert("lifecycle_stage".into(), json!("deleted"));
    e.insert("last_update_time".into(), json!(ctx.now));
    let name = e
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if st
        .workspace
        .workspace
        .get(&name)
        .is_some_and(|o| o.object_type == EXPERIMENT_NODE)
    {
        st.workspace.workspace.remove(&name);
    }
    crate::permissions::forget(st, EXPERIMENT_PERMISSIONS, id);
    Ok(())
}

/// An experiment's node left the workspace tree (a Workspace API delete of it or of a
/// folder above it): the experiment is deleted with it.
pub fn workspace_node_deleted(st: &mut State, object_id: i64) {
    if let Some(e) = st.mlflow.experiments.get_mut(&object_id.to_string()) {
        e.insert("lifecycle_stage".into(), json!("deleted"));
    }
}

/// The model answer of the open-source API (`registered_model`): no `id`, which only the
/// Databricks get answers.
fn open_answer(m: &Map<String, Value>) -> Value {
    let mut m = m.clone();
    m.remove("id");
    m.remove("permission_level");
    Value::Object(m)
}

/// Registers a model; answers it as the create does.
pub fn create_model(st: &mut State, ctx: &Ctx, body: &Map<String, Value>) -> ApiResult<Value> {
    let name = body.get("name").and_then(Value::as_str).unwrap_or_default();
    if name.is_empty() {
        // databricks/cli libs/testserver/models.go: "MLflow rejects an empty name".
        return Err(bad(
            "Got an invalid name ''. Registered Model names cannot be empty strings.",
        ));
    }
    if st.mlflow.registered_models.contains_key(name) {
        return Err(ApiError::conflict(
            "RESOURCE_ALREADY_EXISTS",
            format!("Registered Model (name={name}) already exists."),
        ));
    }
    let tags = tags(body)?;
    let mut m = Map::new();
    m.insert("name".into(), json!(name));
    // The permissions API takes this id (databricks/cli bundle/direct/dresources/model.go).
    m.insert("id".into(), json!(st.next_id().to_string()));
    m.insert("creation_timestamp".into(), json!(ctx.now));
    m.insert("last_updated_timestamp".into(), json!(ctx.now));
    m.insert("user_id".into(), json!(ctx.user));
    m.insert("permission_level".into(), json!("CAN_MANAGE"));
    if let Some(d) = body
        .get("description")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
    {
        m.insert("description".into(), json!(d));
    }
    if !tags.is_empty() {
        m.insert("tags".into(), tag_list(&tags));
    }
    let answer = open_answer(&m);
    st.mlflow.registered_models.insert(name.to_string(), m);
    Ok(answer)
}

/// A model as the Databricks get answers it, with its `id`.
pub fn get_model<'a>(st: &'a State, name: &str) -> ApiResult<&'a Map<String, Value>> {
    st.mlflow
        .registered_models
        .get(name)
        .ok_or_else(|| missing_model(name))
}

/// A model as the open-source get answers it.
pub fn get_model_open(st: &State, name: &str) -> ApiResult<Value> {
    get_model(st, name).map(open_answer)
}

/// Updates a model's description (the one field the update takes); an empty or absent one
/// clears it.
pub fn update_model(
    st: &mut State,
    ctx: &Ctx,
    name: &str,
    description: Option<&str>,
) -> ApiResult<Value> {
    let m = st
        .mlflow
        .registered_models
        .get_mut(name)
        .ok_or_else(|| missing_model(name))?;
    match description.filter(|d| !d.is_empty()) {
        Some(d) => m.insert("description".into(), json!(d)),
        None => m.remove("description"),
    };
    m.insert("last_updated_timestamp".into(), json!(ctx.now));
    Ok(open_answer(m))
}

pub fn set_model_tag(
    st: &mut State,
    ctx: &Ctx,
    name: &str,
    key: &str,
    value: &str,
) -> ApiResult<()> {
    tag_fits(key, value)?;
    let m = st
        .mlflow
        .registered_models
        .get_mut(name)
        .ok_or_else(|| missing_model(name))?;
    set_in(m, key, value);
    m.insert("last_updated_timestamp".into(), json!(ctx.now));
    Ok(())
}

/// Deletes a model's tag; a key it does not have is an error, as in MLflow.
pub fn delete_model_tag(st: &mut State, ctx: &Ctx, name: &str, key: &str) -> ApiResult<()> {
    let m = st
        .mlflow
        .registered_models
        .get_mut(name)
        .ok_or_else(|| missing_model(name))?;
    let mut list = m
        .get("tags")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let before = list.len();
    list.retain(|t| t.get("key").and_then(Value::as_str) != Some(key));
    if list.len() == before {
        return Err(ApiError::not_found(
            "RESOURCE_DOES_NOT_EXIST",
            format!("No tag with name: {key} in registered model {name}"),
        ));
    }
    if list.is_empty() {
        m.remove("tags");
    } else {
        m.insert("tags".into(), Value::Array(list));
    }
    m.insert("last_updated_timestamp".into(), json!(ctx.now));
    Ok(())
}

/// Deletes a model outright; its permissions go with it.
pub fn delete_model(st: &mut State, name: &str) -> ApiResult<()> {
    let m = st
        .mlflow
        .registered_models
        .remove(name)
        .ok_or_else(|| missing_model(name))?;
    if let Some(id) = m.get("id").and_then(Value::as_str) {
        crate::permissions::forget(st, MODEL_PERMISSIONS, id);
    }
    Ok(())
}

/// The model whose `id` this is (the permissions API names models by it).
pub fn model_with_id<'a>(st: &'a State, id: &str) -> Option<&'a Map<String, Value>> {
    st.mlflow
        .registered_models
        .values()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn traces_go_to_a_schema_that_exists_under_a_prefix_given_or_derived() {
        let mut st = State::new("u@x", 0);
        let ctx = Ctx::for_test(5, 0);
        let at = |prefix: Option<&str>| {
            let mut uc = json!({"catalog": "main", "schema": "traces"});
            if let Some(p) = prefix {
                uc["table_prefix"] = json!(p);
            }
            json!({"name": "/Shared/t", "trace_location": {"uc_trace_location": uc}})
        };
        let e = create_experiment(&mut st, &ctx, &body(at(None))).unwrap_err();
        assert_eq!(e.code, "SCHEMA_DOES_NOT_EXIST");
        st.uc.schemas.insert("main.traces".into(), Map::new());
        let e = create_experiment(&mut st, &ctx, &body(at(Some("a-b")))).unwrap_err();
        assert!(
            e.message.contains("letters, digits and underscores"),
            "{}",
            e.message
        );
        let id = create_experiment(&mut st, &ctx, &body(at(None))).unwrap();
        let got = get_experiment(&st, &id).unwrap();
        let uc = &got["trace_location"]["uc_trace_location"];
        assert_eq!(uc["effective_table_prefix"], format!("trace_{id}"));
        assert!(uc.get("table_prefix").is_none());
    }

    #[test]
    fn an_experiment_is_a_workspace_path_and_its_delete_frees_the_name() {
        let mut st = State::new("u@x", 0);
        let ctx = Ctx::for_test(5, 0);
        let e = create_experiment(&mut st, &ctx, &body(json!({"name": "exp"}))).unwrap_err();
        assert!(e.message.contains("absolute path"), "{}", e.message);
        let e =
            create_experiment(&mut st, &ctx, &body(json!({"name": "/Shared/no/exp"}))).unwrap_err();
        assert_eq!(e.code, "RESOURCE_DOES_NOT_EXIST");
        let id = create_experiment(
            &mut st,
            &ctx,
            &body(json!({"name": "/Workspace/Shared/exp/", "tags": [{"key": "a", "value": "1"}]})),
        )
        .unwrap();
        let got = get_experiment(&st, &id).unwrap();
        assert_eq!(got["name"], "/Shared/exp");
        assert_eq!(
            got["artifact_location"],
            format!("dbfs:/databricks/mlflow-tracking/{id}")
        );
        let node = &st.workspace.workspace["/Shared/exp"];
        assert_eq!(node.object_type, EXPERIMENT_NODE);
        assert_eq!(node.object_id.to_string(), id);
        let e =
            create_experiment(&mut st, &ctx, &body(json!({"name": "/Shared/exp"}))).unwrap_err();
        assert_eq!(e.code, "RESOURCE_ALREADY_EXISTS");
        rename_experiment(&mut st, &ctx, &id, "/Shared/exp2").unwrap();
        assert!(st.workspace.workspace.contains_key("/Shared/exp2"));
        assert!(!st.workspace.workspace.contains_key("/Shared/exp"));
        assert_eq!(
            experiment_by_name(&st, "/Shared/exp2").unwrap()["experiment_id"],
            json!(id)
        );
        delete_experiment(&mut st, &ctx, &id).unwrap();
        assert_eq!(
            get_experiment(&st, &id).unwrap()["lifecycle_stage"],
            "deleted"
        );
        assert!(experiment_by_name(&st, "/Shared/exp2").is_err());
        assert!(delete_experiment(&mut st, &ctx, &id).is_err());
        // The name is free again.
        let again =
            create_experiment(&mut st, &ctx, &body(json!({"name": "/Shared/exp2"}))).unwrap();
        assert_ne!(again, id);
    }

    #[test]
    fn a_model_is_registered_tagged_and_deleted() {
        let mut st = State::new("u@x", 0);
        let ctx = Ctx::for_test(5, 0);
        assert!(create_model(&mut st, &ctx, &body(json!({"name": ""}))).is_err());
        let made = create_model(
            &mut st,
            &ctx,
            &body(json!({"name": "m", "description": "d", "tags": [{"key": "k", "value": "v"}]})),
        )
        .unwrap();
        assert!(made.get("id").is_none());
        assert!(get_model(&st, "m").unwrap()["id"].is_string());
        let e = create_model(&mut st, &ctx, &body(json!({"name": "m"}))).unwrap_err();
        assert_eq!(e.code, "RESOURCE_ALREADY_EXISTS");
        update_model(&mut st, &ctx, "m", None).unwrap();
        assert!(get_model(&st, "m").unwrap().get("description").is_none());
        set_model_tag(&mut st, &ctx, "m", "k2", "v2").unwrap();
        delete_model_tag(&mut st, &ctx, "m", "k").unwrap();
        assert_eq!(
            get_model(&st, "m").unwrap()["tags"],
            json!([{"key": "k2", "value": "v2"}])
        );
        assert!(delete_model_tag(&mut st, &ctx, "m", "k").is_err());
        delete_model(&mut st, "m").unwrap();
        assert_eq!(
            get_model(&st, "m").unwrap_err().code,
            "RESOURCE_DOES_NOT_EXIST"
        );
    }
}
