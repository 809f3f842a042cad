//! What the Pipelines API does to the workspace state, apart from HTTP: pipelines created,
//! edited, listed and deleted (asynchronously), updates started and stopped, and the views
//! the API answers with.

use super::spec::{
    build_spec, check_immutable, check_references, fill_cluster_defaults, fill_server_fields, gs,
    is_continuous, s_of,
};
use super::{Pipeline, Update};
use crate::behaviours::Behaviour;
use crate::errors::{ApiError, ApiResult};
use crate::pages::Page;
use crate::store::{Ctx, State};
use crate::util::{compact, iso_date};
use regex::Regex;
use serde_json::{Map, Value, json};
use std::ops::Bound;

pub fn missing(id: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Pipeline '{id}' does not exist."),
    )
}

/// A gateway keeps its staging data in a volume it creates in its storage schema, named by
/// `gateway_storage_name` (by default `__databricks_ingestion_gateway_staging_data-ID`). The
/// volume is not the gateway's to remove: deleting the gateway leaves it (a Lakeflow Connect
/// demo's teardown drops the storage schema with force to remove it).
pub fn staging_volume(st: &mut State, ctx: &Ctx, spec: &Map<String, Value>) {
    if !ctx.behaviours.on(Behaviour::GatewayStagingVolume) {
        return;
    }
    let Some(g) = spec.get("gateway_definition").and_then(Value::as_object) else {
        return;
    };
    let id = s_of(spec, "id");
    let name = gs(g, &["gateway_storage_name"])
        .map(str::to_string)
        .unwrap_or_else(|| format!("__databricks_ingestion_gateway_staging_data-{id}"));
    if let (Some(c), Some(s)) = (
        gs(g, &["gateway_storage_catalog"]),
        gs(g, &["gateway_storage_schema"]),
    ) {
        crate::uc::put_staging_volume(st, ctx, c, s, &name);
    }
}

pub fn name_taken(st: &State, name: &str, except: Option<&str>) -> bool {
    st.pipelines.pipelines.values().any(|p| {
        Some(p.id.as_str()) != except && p.spec.get("name").and_then(Value::as_str) == Some(name)
    })
}

pub fn state_of(p: &Pipeline, now: i64) -> (&'static str, &'static str) {
    if p.deleting_until.is_some() {
        return ("DELETING", "HEALTHY");
    }
    let Some(u) = p.updates.last() else {
        return ("IDLE", "HEALTHY");
    };
    let health = if u.state_at(now) == "FAILED" {
        "UNHEALTHY"
    } else {
        "HEALTHY"
    };
    let state = match u.state_at(now) {
        "QUEUED" | "CREATED" | "WAITING_FOR_RESOURCES" | "INITIALIZING" => "STARTING",
        "SETTING_UP_TABLES" | "RUNNING" => "RUNNING",
        _ => "IDLE",
    };
    (state, health)
}

pub fn latest_updates(p: &Pipeline, now: i64) -> Vec<Value> {
    p.updates
        .iter()
        .rev()
        .take(5)
        .map(|u| json!({"update_id": u.update_id, "state": u.state_at(now), "creation_time": iso_date(u.creation_time)}))
        .collect()
}

pub fn run_as_user(p: &Pipeline) -> String {
    p.run_as
        .as_ref()
        .and_then(|r| {
            r.get("user_name")
                .or_else(|| r.get("service_principal_name"))
        })
        .and_then(Value::as_str)
        .unwrap_or(&p.creator)
        .to_string()
}

pub fn view(p: &Pipeline, now: i64) -> Value {
    let (state, health) = state_of(p, now);
    let publishing = if p.spec.contains_key("target") {
        "LEGACY_PUBLISHING_MODE"
    } else {
        "DEFAULT_PUBLISHING_MODE"
    };
    Value::Object(compact(json!({
        "pipeline_id": p.id, "name": p.spec.get("name"), "spec": p.spec, "state": state, "health": health,
        "creator_user_name": p.creator, "run_as_user_name": run_as_user(p), "run_as": p.run_as,
        "parameters": p.parameters, "last_modified": p.last_modified, "latest_updates": latest_updates(p, now),
        "effective_publishing_mode": publishing,
    })))
}

pub fn state_info(p: &Pipeline, now: i64) -> Value {
    let (state, health) = state_of(p, now);
    Value::Object(compact(json!({
        "pipeline_id": p.id, "name": p.spec.get("name"), "state": state, "health": health,
        "creator_user_name": p.creator, "run_as_user_name": run_as_user(p), "latest_updates": latest_updates(p, now),
    })))
}

/// `name LIKE '%x%'` or `notebook='<path>'`.
pub enum Filter {
    All,
    Name(Regex),
    Notebook(String),
}

pub fn parse_filter(f: Option<&str>) -> ApiResult<Filter> {
    let Some(f) = f.map(str::trim).filter(|f| !f.is_empty()) else {
        return Ok(Filter::All);
    };
    let bad = || {
        ApiError::invalid(format!(
            "Invalid value for parameter 'filter': '{f}' (supported: name LIKE '<pattern>', notebook='<path>')"
        ))
    };
    let unquote = |s: &str| -> Option<String> {
        let s = s.trim();
        let q = s.chars().next()?;
        (s.len() >= 2 && (q == '\'' || q == '"') && s.ends_with(q))
            .then(|| s[1..s.len() - 1].to_string())
    };
    let lower = f.to_ascii_lowercase();
    if lower.starts_with("name") {
        let rest = f[4..].trim_start();
        let pat = if rest
            .get(..4)
            .is_some_and(|w| w.eq_ignore_ascii_case("like"))
        {
            unquote(rest.get(4..).unwrap_or_default()).ok_or_else(bad)?
        } else if let Some(r) = rest.strip_prefix('=') {
            regex_escape_like(&unquote(r).ok_or_else(bad)?)
        } else {
            return Err(bad());
        };
        let mut re = String::from("(?i)^");
        for c in pat.chars() {
            match c {
                '%' => re.push_str(".*"),
                '_' => re.push('.'),
                c => re.push_str(&regex::escape(&c.to_string())),
            }
        }
        re.push('$');
        return Regex::new(&re).map(Filter::Name).map_err(|_| bad());
    }
    if lower.starts_with("notebook") {
        let rest = f[8..].trim_start().strip_prefix('=').ok_or_else(bad)?;
        return Ok(Filter::Notebook(unquote(rest).ok_or_else(bad)?));
    }
    Err(bad())
}

/// An exact name as a LIKE pattern.
pub fn regex_escape_like(s: &str) -> String {
    s.replace('%', "\\%").replace('_', "\\_")
}

pub fn matches(f: &Filter, p: &Pipeline) -> bool {
    match f {
        Filter::All => true,
        Filter::Name(re) => p
            .spec
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| re.is_match(n)),
        Filter::Notebook(path) => p
            .spec
            .get("libraries")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|l| {
                l.get("notebook")
                    .and_then(|n| n.get("path"))
                    .and_then(Value::as_str)
                    == Some(path)
            }),
    }
}

/// Why an update of this pipeline would fail now, if it would.
pub fn failure_reason(st: &State, p: &Pipeline) -> Option<String> {
    for lib in p
        .spec
        .get("libraries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for kind in ["notebook", "file"] {
            if let Some(path) = lib
                .get(kind)
                .and_then(|n| n.get("path"))
                .and_then(Value::as_str)
                && !crate::workspace::runnable_exists(st, path)
            {
                return Some(format!(
                    "The {kind} '{path}' does not exist in the workspace."
                ));
            }
        }
    }
    if let Err(e) = check_references(st, &p.spec, Some(&p.id)) {
        return Some(e.message);
    }
    let is_lfc =
        p.spec.contains_key("gateway_definition") || p.spec.contains_key("ingestion_definition");
    if !is_lfc
        && let (Some(c), Some(s)) = (
            gs(&p.spec, &["catalog"]),
            gs(&p.spec, &["schema"]).or(gs(&p.spec, &["target"])),
        )
    {
        let full = format!("{c}.{s}").to_lowercase();
        if !st.uc.schemas.contains_key(&full) {
            return Some(format!("Schema '{full}' does not exist."));
        }
    }
    None
}

/// Starts an update (also used by job pipeline tasks); fails while one is active.
pub fn start(
    st: &mut State,
    ctx: &Ctx,
    id: &str,
    cause: &str,
    request: Map<String, Value>,
) -> ApiResult<String> {
    let p = st.pipelines.pipelines.get(id).ok_or_else(|| missing(id))?;
    if p.deleting_until.is_some() {
        return Err(ApiError::conflict(
            "RESOURCE_CONFLICT",
            format!("Pipeline '{id}' is being deleted."),
        ));
    }
    if let Some(u) = p.updates.last().filter(|u| u.is_active(ctx.now)) {
        return Err(ApiError::conflict(
            "RESOURCE_CONFLICT",
            format!(
                "Pipeline '{id}' already has an active update '{}'.",
                u.update_id
            ),
        ));
    }
    let sdp = super::sdp_meta::update_tables(st, ctx, &p.spec, &request);
    let failure = failure_reason(st, p).or_else(|| sdp.as_ref().err().map(ToString::to_string));
    let (failure, datasets) = super::datasets::at_start(st, ctx, p, &request, failure);
    let update = Update {
        update_id: uuid::Uuid::new_v4().to_string(),
        creation_time: ctx.now,
        cause: cause.to_string(),
        request,
        config: p.spec.clone(),
        continuous: is_continuous(&p.spec),
        step_ms: ctx.timings.update_step_ms(),
        failure,
        canceled_at: None,
    };
    let uid = update.update_id.clone();
    let doomed = update.failure.is_some();
    let tables = if doomed || !ctx.behaviours.on(Behaviour::PipelineTables) {
        Vec::new()
    } else {
        defined_tables(&update.config)
    };
    if let Some(p) = st.pipelines.pipelines.get_mut(id) {
        p.updates.push(update);
    }
    for t in tables {
        crate::uc::put_pipeline_table(st, ctx, &t, "STREAMING_TABLE", id);
    }
    super::datasets::publish(st, ctx, id, &datasets);
    for t in sdp.ok().filter(|_| !doomed).unwrap_or_default() {
        crate::uc::put_pipeline_table(st, ctx, &t, "STREAMING_TABLE", id);
    }
    Ok(uid)
}

/// The tables an update of this spec sets up, as far as the spec tells: an ingestion
/// pipeline's destination tables (a `table` object's `destination_table`, else its
/// `source_table`; a `report`'s `destination_table`). A whole-schema object's tables are
/// defined by the source, which the local workspace does not have, so they are not known
/// here; a declarative pipeline's datasets are read from its SQL sources by `datasets`.
pub fn defined_tables(spec: &Map<String, Value>) -> Vec<String> {
    let objects = spec
        .get("ingestion_definition")
        .and_then(|i| i.get("objects"))
        .and_then(Value::as_array);
    let mut out = Vec::new();
    for obj in objects.into_iter().flatten() {
        for kind in ["table", "report"] {
            let Some(t) = obj.get(kind).and_then(Value::as_object) else {
                continue;
            };
            let name = gs(t, &["destination_table"]).or(if kind == "table" {
                gs(t, &["source_table"])
            } else {
                None
            });
            if let (Some(c), Some(s), Some(n)) = (
                gs(t, &["destination_catalog"]),
                gs(t, &["destination_schema"]),
                name,
            ) {
                out.push(format!("{c}.{s}.{n}"));
            }
        }
    }
    out
}

/// Removes the pipelines whose delete has finished, with their tables (unless the delete
/// kept them). Returns whether anything changed.
pub fn advance(st: &mut State, ctx: &Ctx) -> bool {
    let done: Vec<(String, bool)> = st
        .pipelines
        .pipelines
        .values()
        .filter(|p| p.deleting_until.is_some_and(|t| t <= ctx.now))
        .map(|p| (p.id.clone(), p.keep_tables))
        .collect();
    for (id, keep) in &done {
        st.pipelines.pipelines.remove(id);
        crate::permissions::forget(st, "pipelines", id);
        crate::uc::end_pipeline_tables(st, id, *keep);
    }
    !done.is_empty()
}

/// Stops a pipeline's active update (a job run that started it was canceled).
pub fn cancel_update(st: &mut State, id: &str, update_id: &str, now: i64) {
    if let Some(u) = st
        .pipelines
        .pipelines
        .get_mut(id)
        .and_then(|p| p.updates.iter_mut().find(|u| u.update_id == update_id))
        && u.is_active(now)
    {
        u.canceled_at = Some(now);
    }
}

/// The state and end time of an update, for job pipeline tasks.
pub fn update_outcome(
    st: &State,
    id: &str,
    update_id: &str,
    now: i64,
) -> Option<(&'static str, Option<i64>, Option<String>)> {
    let u = st
        .pipelines
        .pipelines
        .get(id)?
        .updates
        .iter()
        .find(|u| u.update_id == update_id)?;
    Some((u.state_at(now), u.end_time(), u.failure.clone()))
}

// ---------- operations ----------

/// A create or edit request: the body (already checked by `check_spec`) and what it says
/// besides the spec.
pub struct PipelineRequest<'a> {
    pub body: &'a Map<String, Value>,
    pub name: Option<&'a str>,
    pub allow_duplicate_names: bool,
    pub run_as: Option<Value>,
    /// Non-empty parameters.
    pub parameters: Option<Value>,
}

/// What a `dry_run` create answers: the settings the pipeline would get.
pub fn dry_run(st: &State, body: &Map<String, Value>) -> ApiResult<Value> {
    let source_type = check_references(st, body, None)?;
    Ok(json!({"effective_settings": build_spec(body, "dry-run", source_type)}))
}

/// Creates a pipeline; a continuous one starts an update at once, as on the real service.
/// Returns its id.
pub fn create_pipeline(st: &mut State, ctx: &Ctx, r: PipelineRequest) -> ApiResult<String> {
    let source_type = check_references(st, r.body, None)?;
    if let Some(name) = r.name
        && !r.allow_duplicate_names
        && name_taken(st, name, None)
    {
        return Err(ApiError::conflict(
            "RESOURCE_CONFLICT",
            format!(
                "A pipeline with name '{name}' already exists. Set allow_duplicate_names to create another."
            ),
        ));
    }
    let id = uuid::Uuid::new_v4().to_string();
    let mut spec = build_spec(r.body, &id, source_type);
    fill_cluster_defaults(ctx, &mut spec);
    fill_server_fields(st, ctx, &mut spec, None);
    staging_volume(st, ctx, &spec);
    let continuous = is_continuous(&spec);
    let p = Pipeline {
        id: id.clone(),
        spec,
        parameters: r.parameters,
        run_as: r.run_as,
        creator: ctx.user.to_string(),
        last_modified: ctx.now,
        updates: Vec::new(),
        deleting_until: None,
        keep_tables: false,
    };
    st.pipelines.pipelines.insert(id.clone(), p);
    if continuous {
        start(st, ctx, &id, "API_CALL", Map::new())?;
    }
    Ok(id)
}

pub fn get_pipeline(st: &State, ctx: &Ctx, id: &str) -> ApiResult<Value> {
    st.pipelines
        .pipelines
        .get(id)
        .map(|p| view(p, ctx.now))
        .ok_or_else(|| missing(id))
}

/// Replaces a pipeline's spec (a full-spec edit). `expected_last_modified` guards against
/// a concurrent edit. Turning continuity off stops the running update; on starts one.
pub fn edit_pipeline(
    st: &mut State,
    ctx: &Ctx,
    id: &str,
    expected_last_modified: Option<i64>,
    r: PipelineRequest,
) -> ApiResult<()> {
    let p = st.pipelines.pipelines.get(id).ok_or_else(|| missing(id))?;
    if let Some(e) = expected_last_modified
        && e != p.last_modified
    {
        return Err(ApiError::conflict(
            "RESOURCE_CONFLICT",
            format!(
                "The pipeline '{id}' was modified at {} after the expected_last_modified {e}.",
                p.last_modified
            ),
        ));
    }
    check_immutable(&p.spec, r.body)?;
    let source_type = check_references(st, r.body, Some(id))?;
    if let Some(name) = r.name
        && !r.allow_duplicate_names
        && name_taken(st, name, Some(id))
    {
        return Err(ApiError::conflict(
            "RESOURCE_CONFLICT",
            format!("A pipeline with name '{name}' already exists."),
        ));
    }
    let mut spec = build_spec(r.body, id, source_type);
    fill_cluster_defaults(ctx, &mut spec);
    let old_spec = st.pipelines.pipelines.get(id).map(|p| p.spec.clone());
    fill_server_fields(st, ctx, &mut spec, old_spec.as_ref());
    staging_volume(st, ctx, &spec);
    let continuous = is_continuous(&spec);
    let Some(p) = st.pipelines.pipelines.get_mut(id) else {
        return Err(missing(id));
    };
    p.spec = spec;
    p.parameters = r.parameters;
    p.run_as = r.run_as;
    p.last_modified = ctx.now.max(p.last_modified + 1);
    let active = p.updates.last().is_some_and(|u| u.is_active(ctx.now));
    if active && !continuous {
        if let Some(u) = p.updates.last_mut().filter(|u| u.continuous) {
            u.canceled_at = Some(ctx.now);
        }
    } else if continuous && !active {
        start(st, ctx, id, "API_CALL", Map::new())?;
    }
    Ok(())
}

/// Deletes a pipeline: it reads as DELETING for one update step, then is gone with its
/// tables (unless `cascade` is false), see [`advance`]; at once while deletes are not
/// modelled as asynchronous.
pub fn delete_pipeline(st: &mut State, ctx: &Ctx, id: &str, cascade: bool) -> ApiResult<()> {
    let p = st
        .pipelines
        .pipelines
        .get_mut(id)
        .ok_or_else(|| missing(id))?;
    // A second delete of a pipeline being deleted is accepted and changes nothing.
    if p.deleting_until.is_none() {
        if let Some(u) = p.updates.last_mut().filter(|u| u.is_active(ctx.now)) {
            u.canceled_at = Some(ctx.now);
        }
        p.deleting_until = Some(ctx.now.saturating_add(ctx.timings.update_step_ms()));
        p.keep_tables = !cascade;
        if !ctx.behaviours.on(Behaviour::AsyncPipelineDelete) {
            st.pipelines.pipelines.remove(id);
            crate::permissions::forget(st, "pipelines", id);
            crate::uc::end_pipeline_tables(st, id, !cascade);
        }
    }
    Ok(())
}

/// One page of the pipelines the filter matches, as `statuses`.
pub fn list_pipelines(
    st: &State,
    ctx: &Ctx,
    filter: &Filter,
    page: &Page,
) -> (Vec<Value>, Option<String>) {
    let start = page.after.clone().map_or(Bound::Unbounded, Bound::Excluded);
    let iter = st
        .pipelines
        .pipelines
        .range::<String, _>((start, Bound::Unbounded))
        .filter(|(_, p)| matches(filter, p))
        .map(|(k, p)| (k.clone(), state_info(p, ctx.now)));
    page.collect(iter)
}

fn update_missing(id: &str, update_id: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Update '{update_id}' does not exist for pipeline '{id}'."),
    )
}

/// An update with the config it ran with.
pub fn get_update(st: &State, ctx: &Ctx, id: &str, update_id: &str) -> ApiResult<Value> {
    let p = st.pipelines.pipelines.get(id).ok_or_else(|| missing(id))?;
    let u = p
        .updates
        .iter()
        .find(|u| u.update_id == update_id)
        .ok_or_else(|| update_missing(id, update_id))?;
    Ok(u.info(id, ctx.now, true))
}

/// A pipeline's updates, newest first, up to and including `until` if given.
pub fn list_updates(
    st: &State,
    ctx: &Ctx,
    id: &str,
    until: Option<&str>,
    page: &Page,
) -> ApiResult<(Vec<Value>, Option<String>)> {
    let p = st.pipelines.pipelines.get(id).ok_or_else(|| missing(id))?;
    // The token is the index (from the oldest) of the last update returned.
    let start = page.after_key::<usize>()?.unwrap_or(p.updates.len());
    let mut items = p.updates[..start.min(p.updates.len())]
        .iter()
        .enumerate()
        .rev()
        .collect::<Vec<(usize, &Update)>>();
    if let Some(u) = until
        && let Some(pos) = items.iter().position(|(_, x)| x.update_id == u)
    {
        items.truncate(pos + 1);
    }
    Ok(page.collect(
        items
            .into_iter()
            .map(|(i, u)| (i, u.info(id, ctx.now, false))),
    ))
}

/// Stops the pipeline's active update, if it has one.
pub fn stop(st: &mut State, ctx: &Ctx, id: &str) -> ApiResult<()> {
    let p = st
        .pipelines
        .pipelines
        .get_mut(id)
        .ok_or_else(|| missing(id))?;
    if let Some(u) = p.updates.last_mut().filter(|u| u.is_active(ctx.now)) {
        u.canceled_at = Some(ctx.now);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(now: i64) -> Ctx<'static> {
        Ctx::for_test(now, 100)
    }

    fn create(st: &mut State, body: Value) -> ApiResult<String> {
        let Value::Object(body) = body else {
            panic!("not an object")
        };
        let name = body.get("name").and_then(Value::as_str);
        create_pipeline(
            st,
            &ctx(0),
            PipelineRequest {
                body: &body,
                name,
                allow_duplicate_names: false,
                run_as: None,
                parameters: None,
            },
        )
    }

    fn state(st: &State, id: &str, now: i64) -> (String, String) {
        let v = get_pipeline(st, &ctx(now), id).unwrap();
        let u = v["latest_updates"][0]["state"].as_str().unwrap_or("-");
        (v["state"].as_str().unwrap_or("-").into(), u.into())
    }

    #[test]
    fn an_update_walks_its_steps_with_the_clock_and_names_must_be_unique() {
        let mut st = State::new("u@x", 0);
        let id = create(&mut st, json!({"name": "p"})).unwrap();
        let e = create(&mut st, json!({"name": "p"})).unwrap_err();
        assert_eq!(e.code, "RESOURCE_CONFLICT");
        assert_eq!(state(&st, &id, 0), ("IDLE".into(), "-".into()));
        let uid = start(&mut st, &ctx(0), &id, "API_CALL", Map::new()).unwrap();
        assert_eq!(state(&st, &id, 50), ("STARTING".into(), "QUEUED".into()));
        assert_eq!(
            state(&st, &id, 450),
            ("RUNNING".into(), "SETTING_UP_TABLES".into())
        );
        let e = start(&mut st, &ctx(450), &id, "API_CALL", Map::new()).unwrap_err();
        assert!(
            e.message.contains("already has an active update"),
            "{}",
            e.message
        );
        assert_eq!(state(&st, &id, 700), ("IDLE".into(), "COMPLETED".into()));
        assert_eq!(
            update_outcome(&st, &id, &uid, 700),
            Some(("COMPLETED", Some(600), None))
        );
    }

    #[test]
    fn an_update_of_a_pipeline_whose_schema_is_gone_fails() {
        let mut st = State::new("u@x", 0);
        let id = create(&mut st, json!({"name": "p", "catalog": "c", "schema": "s"})).unwrap();
        start(&mut st, &ctx(0), &id, "API_CALL", Map::new()).unwrap();
        let v = get_pipeline(&st, &ctx(1_000), &id).unwrap();
        assert_eq!(
            (v["health"].clone(), v["latest_updates"][0]["state"].clone()),
            (json!("UNHEALTHY"), json!("FAILED"))
        );
    }

    #[test]
    fn a_continuous_pipeline_starts_and_stop_cancels_it() {
        let mut st = State::new("u@x", 0);
        let id = create(&mut st, json!({"name": "p", "continuous": true})).unwrap();
        assert_eq!(
            state(&st, &id, 10_000),
            ("RUNNING".into(), "RUNNING".into())
        );
        stop(&mut st, &ctx(10_000), &id).unwrap();
        assert_eq!(state(&st, &id, 10_001), ("IDLE".into(), "CANCELED".into()));
    }

    #[test]
    fn a_delete_finishes_when_the_clock_passes_it() {
        let mut st = State::new("u@x", 0);
        let id = create(&mut st, json!({"name": "p"})).unwrap();
        delete_pipeline(&mut st, &ctx(0), &id, true).unwrap();
        assert_eq!(state(&st, &id, 50).0, "DELETING");
        assert!(!advance(&mut st, &ctx(50)));
        assert!(advance(&mut st, &ctx(100)));
        assert_eq!(
            get_pipeline(&st, &ctx(100), &id).unwrap_err().code,
            "RESOURCE_DOES_NOT_EXIST"
        );
    }

    #[test]
    fn lists_filter_by_name_pattern_and_page_their_updates() {
        let mut st = State::new("u@x", 0);
        let a = create(&mut st, json!({"name": "sales_raw"})).unwrap();
        create(&mut st, json!({"name": "other"})).unwrap();
        let all = Page::new(None, None, 25, 100, "max_results").unwrap();
        let filter = parse_filter(Some("name LIKE 'SALES%'")).unwrap();
        let (found, _) = list_pipelines(&st, &ctx(0), &filter, &all);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0]["pipeline_id"], json!(a));
        assert!(parse_filter(Some("state = 'x'")).is_err());
        for t in [0, 1_000] {
            start(&mut st, &ctx(t), &a, "API_CALL", Map::new()).unwrap();
        }
        let one = Page::new(None, Some(1), 25, 100, "max_results").unwrap();
        let (newest, token) = list_updates(&st, &ctx(2_000), &a, None, &one).unwrap();
        assert_eq!(newest.len(), 1);
        let next = Page::new(token.as_deref(), Some(1), 25, 100, "max_results").unwrap();
        let (older, token) = list_updates(&st, &ctx(2_000), &a, None, &next).unwrap();
        assert_ne!(newest[0]["update_id"], older[0]["update_id"]);
        assert!(token.is_none());
    }
}
