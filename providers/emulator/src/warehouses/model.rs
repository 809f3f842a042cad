//! What the SQL Warehouses API does to the workspace state, apart from HTTP.

use super::Warehouse;
use crate::behaviours::Behaviour;
use crate::body::Obj;
use crate::errors::{ApiError, ApiResult};
use crate::store::{Ctx, State};
use serde_json::{Map, Value, json};

/// The sizes the service offers (`cluster_size`).
pub const SIZES: &[&str] = &[
    "2X-Small", "X-Small", "Small", "Medium", "Large", "X-Large", "2X-Large", "3X-Large",
    "4X-Large", "5X-Large",
];
const TYPES: &[&str] = &["TYPE_UNSPECIFIED", "CLASSIC", "PRO"];
const SPOT: &[&str] = &[
    "POLICY_UNSPECIFIED",
    "COST_OPTIMIZED",
    "RELIABILITY_OPTIMIZED",
];
const CHANNELS: &[&str] = &[
    "CHANNEL_NAME_CURRENT",
    "CHANNEL_NAME_PREVIEW",
    "CHANNEL_NAME_PREVIOUS",
    "CHANNEL_NAME_CUSTOM",
];
/// The service's limits: at most 40 clusters, at least 1 and at most 30 kept running.
const MAX_CLUSTERS: i64 = 40;
const MAX_MIN_CLUSTERS: i64 = 30;
/// Fewer than 45 custom tags.
const MAX_TAGS: usize = 44;
/// Names are shorter than 100 characters.
const MAX_NAME: usize = 99;
/// Auto-stop defaults to two hours.
const DEFAULT_AUTO_STOP: i64 = 120;
/// How long a DELETED warehouse is still listed and readable before it is purged. The
/// service lists deleted warehouses (databricks/cli libs/databrickscfg/cfgpickers/
/// warehouses.go:75-80 filters DELETED and DELETING out of `Warehouses.ListAll`) for a time
/// it does not document: an hour here.
const DELETED_KEPT_MS: i64 = 60 * 60 * 1000;

/// Whether a warehouse is being deleted or deleted: no longer usable, still read.
pub fn is_deleted(w: &Warehouse) -> bool {
    matches!(w.state.as_str(), "DELETING" | "DELETED")
}

fn missing_warehouse(id: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("SQL warehouse {id} does not exist."),
    )
}

fn bad(field: &str, why: impl std::fmt::Display) -> ApiError {
    ApiError::invalid(format!("Invalid value for field '{field}': {why}"))
}

/// Checks a create or edit body and returns the settings as the service keeps them, its
/// defaults filled in. An edit takes the whole object the same way: what it leaves out
/// goes back to the default. `serverless_default` is the workspace's default of
/// `enable_serverless_compute` (the `warehouse_serverless_default` behaviour).
pub fn settings(
    body: &Map<String, Value>,
    serverless_default: bool,
) -> ApiResult<Map<String, Value>> {
    let o = Obj::root(body);
    let name = o.req_str("name")?;
    if name.chars().count() > MAX_NAME {
        return Err(bad("name", "must be less than 100 characters"));
    }
    let size = o.req_str("cluster_size")?;
    if !SIZES.contains(&size) {
        return Err(bad(
            "cluster_size",
            format!("'{size}' is not one of {}", SIZES.join(", ")),
        ));
    }
    let min = o.int("min_num_clusters")?.unwrap_or(1);
    if !(1..=MAX_MIN_CLUSTERS).contains(&min) {
        return Err(bad(
            "min_num_clusters",
            format!("must be between 1 and {MAX_MIN_CLUSTERS}, got {min}"),
        ));
    }
    // Without a maximum, the warehouse does not scale beyond its minimum.
    let max = o.int("max_num_clusters")?.unwrap_or(min);
    if max < min || max > MAX_CLUSTERS {
        return Err(bad(
            "max_num_clusters",
            format!(
                "must be at least min_num_clusters ({min}) and at most {MAX_CLUSTERS}, got {max}"
            ),
        ));
    }
    let given_type = o
        .enum_str("warehouse_type", TYPES)?
        .filter(|t| *t != "TYPE_UNSPECIFIED");
    // Left out, serverless is the workspace's default (terraform-provider-databricks
    // docs/resources/sql_endpoint.md, enable_serverless_compute) — for a type that can be
    // serverless: a CLASSIC warehouse is not.
    let serverless = o
        .bool("enable_serverless_compute")?
        .unwrap_or(serverless_default && given_type != Some("CLASSIC"));
    // A serverless warehouse is a PRO one; without a type, serverless makes it PRO.
    let ty = match given_type {
        None | Some("TYPE_UNSPECIFIED") if serverless => "PRO",
        None | Some("TYPE_UNSPECIFIED") => "CLASSIC",
        Some(t) => t,
    };
    if serverless && ty != "PRO" {
        return Err(bad(
            "warehouse_type",
            "serverless compute (enable_serverless_compute) requires warehouse_type PRO",
        ));
    }
    let auto_stop = o.int("auto_stop_mins")?.unwrap_or(DEFAULT_AUTO_STOP);
    // Classic and pro warehouses stop after 10 idle minutes at the least; serverless ones,
    // which start in seconds, after 5.
    let least = if serverless { 5 } else { 10 };
    if auto_stop < 0 || (auto_stop > 0 && auto_stop < least) {
        return Err(bad(
            "auto_stop_mins",
            format!("must be 0 (no auto-stop) or at least {least} minutes, got {auto_stop}"),
        ));
    }
    let spot = o
        .enum_str("spot_instance_policy", SPOT)?
        .filter(|s| *s != "POLICY_UNSPECIFIED")
        .unwrap_or("COST_OPTIMIZED");
    let mut out = Map::new();
    out.insert("name".into(), json!(name));
    out.insert("cluster_size".into(), json!(size));
    out.insert("min_num_clusters".into(), json!(min));
    out.insert("max_num_clusters".into(), json!(max));
    out.insert("auto_stop_mins".into(), json!(auto_stop));
    out.insert(
        "enable_photon".into(),
        json!(o.bool("enable_photon")?.unwrap_or(true)),
    );
    out.insert("enable_serverless_compute".into(), json!(serverless));
    out.insert("warehouse_type".into(), json!(ty));
    out.insert("spot_instance_policy".into(), json!(spot));
    out.insert("channel".into(), channel(&o)?);
    if let Some(tags) = tags(&o)? {
        out.insert("tags".into(), tags);
    }
    if let Some(arn) = o.str("instance_profile_arn")? {
        out.insert("instance_profile_arn".into(), json!(arn));
    }
    Ok(out)
}

/// The release channel: the current one unless chosen; a custom channel names its version.
fn channel(o: &Obj) -> ApiResult<Value> {
    let Some(c) = o.obj("channel")? else {
        return Ok(json!({"name": "CHANNEL_NAME_CURRENT"}));
    };
    let p = o.path("channel");
    let c = Obj::at(c, &p);
    let name = c
        .enum_str("name", CHANNELS)?
        .unwrap_or("CHANNEL_NAME_CURRENT");
    let version = c.str("dbsql_version")?;
    if name == "CHANNEL_NAME_CUSTOM" && version.is_none() {
        return Err(bad(
            "channel.dbsql_version",
            "CHANNEL_NAME_CUSTOM needs a dbsql_version",
        ));
    }
    let mut m = Map::new();
    m.insert("name".into(), json!(name));
    if let Some(v) = version {
        m.insert("dbsql_version".into(), json!(v));
    }
    Ok(Value::Object(m))
}

fn tags(o: &Obj) -> ApiResult<Option<Value>> {
    let Some(t) = o.obj("tags")? else {
        return Ok(None);
    };
    let p = o.path("tags");
    let t = Obj::at(t, &p);
    let mut pairs = Vec::new();
    for (path, pair) in t.objs("custom_tags")? {
        let pair = Obj::at(pair, &path);
        pairs.push(json!({"key": pair.req_str("key")?, "value": pair.str("value")?.unwrap_or("")}));
    }
    if pairs.len() > MAX_TAGS {
        return Err(bad(
            "tags.custom_tags",
            format!("a warehouse has fewer than 45 tags, got {}", pairs.len()),
        ));
    }
    Ok(Some(json!({ "custom_tags": pairs })))
}

/// A name is taken by a warehouse that has it, until that warehouse is DELETED: one being
/// deleted still holds it (terraform-provider-databricks issue #3379).
fn name_free(st: &State, name: &str, except: Option<&str>) -> ApiResult<()> {
    if st.warehouses.warehouses.values().any(|w| {
        Some(w.id.as_str()) != except
            && w.state != "DELETED"
            && w.spec.get("name") == Some(&json!(name))
    }) {
        return Err(ApiError::conflict(
            "RESOURCE_ALREADY_EXISTS",
            format!("SQL warehouse with name `{name}` already exists"),
        ));
    }
    Ok(())
}

/// Makes a warehouse and starts it; returns its id.
pub fn create(st: &mut State, ctx: &Ctx, spec: Map<String, Value>) -> ApiResult<String> {
    let name = spec.get("name").and_then(Value::as_str).unwrap_or_default();
    name_free(st, name, None)?;
    // Warehouse ids are 16 hexadecimal digits.
    let id = uuid::Uuid::new_v4().simple().to_string()[..16].to_string();
    st.warehouses.warehouses.insert(
        id.clone(),
        Warehouse {
            id: id.clone(),
            spec,
            creator_name: ctx.user.to_string(),
            data_source_id: uuid::Uuid::new_v4().to_string(),
            state: "STARTING".into(),
            until: ctx.now.saturating_add(ctx.timings.run_setup_ms()),
            idle_since: ctx.now,
        },
    );
    advance(st, ctx);
    Ok(id)
}

/// Replaces the warehouse's settings; its power state stays as it is.
pub fn edit(st: &mut State, id: &str, spec: Map<String, Value>) -> ApiResult<()> {
    let name = spec.get("name").and_then(Value::as_str).unwrap_or_default();
    live(st, id)?;
    name_free(st, name, Some(id))?;
    live(st, id)?.spec = spec;
    Ok(())
}

/// A warehouse as GET reads it: one being deleted, or deleted and not yet purged, too.
pub fn get<'a>(st: &'a State, id: &str) -> ApiResult<&'a Warehouse> {
    st.warehouses
        .warehouses
        .get(id)
        .ok_or_else(|| missing_warehouse(id))
}

/// A warehouse that can still be edited, started or stopped: not being deleted.
fn live<'a>(st: &'a mut State, id: &str) -> ApiResult<&'a mut Warehouse> {
    st.warehouses
        .warehouses
        .get_mut(id)
        .filter(|w| !is_deleted(w))
        .ok_or_else(|| missing_warehouse(id))
}

/// Deletes a warehouse: with `async_warehouse_delete` it reads DELETING (holding its name)
/// for one run setup, then DELETED until it is purged, see [`advance`]; at once otherwise.
/// A second delete of one being deleted is accepted and changes nothing.
pub fn delete(st: &mut State, ctx: &Ctx, id: &str) -> ApiResult<()> {
    let w = st
        .warehouses
        .warehouses
        .get_mut(id)
        .ok_or_else(|| missing_warehouse(id))?;
    let first = !is_deleted(w);
    if first {
        w.state = "DELETING".into();
        w.until = ctx.now.saturating_add(ctx.timings.run_setup_ms());
    }
    if first {
        crate::permissions::forget(st, "sql/warehouses", id);
    }
    if !ctx.behaviours.on(Behaviour::AsyncWarehouseDelete) {
        st.warehouses.warehouses.remove(id);
    }
    advance(st, ctx);
    Ok(())
}

/// Starts a stopped (or stopping) warehouse; a running or starting one is left as it is.
pub fn start(st: &mut State, ctx: &Ctx, id: &str) -> ApiResult<()> {
    let w = live(st, id)?;
    wake(w, ctx);
    Ok(())
}

fn wake(w: &mut Warehouse, ctx: &Ctx) {
    if matches!(w.state.as_str(), "STOPPED" | "STOPPING") {
        w.state = "STARTING".into();
        w.until = ctx.now.saturating_add(ctx.timings.run_setup_ms());
    }
}

/// Stops a running (or starting) warehouse; a stopped one is left as it is.
pub fn stop(st: &mut State, ctx: &Ctx, id: &str) -> ApiResult<()> {
    let w = live(st, id)?;
    if matches!(w.state.as_str(), "RUNNING" | "STARTING") {
        w.state = "STOPPING".into();
        w.until = ctx.now.saturating_add(ctx.timings.run_setup_ms());
    }
    advance(st, ctx);
    Ok(())
}

/// Why a job run's SQL task cannot run on a warehouse: its message fails the task.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WarehouseUseError {
    /// No warehouse has the id, or the one that had it is deleted (or being deleted).
    #[error("SQL warehouse {id} does not exist or you do not have permission to use it.")]
    Missing { id: String },
}

/// A query of a job run's SQL task that runs on the warehouse until `busy_until`: a
/// stopped warehouse is started for it, and it is not idle before the query ends. `Err`
/// with the run's message when no warehouse has that id.
pub fn use_for_query(
    st: &mut State,
    ctx: &Ctx,
    id: &str,
    busy_until: i64,
) -> Result<(), WarehouseUseError> {
    let Some(w) = st
        .warehouses
        .warehouses
        .get_mut(id)
        .filter(|w| !is_deleted(w))
    else {
        return Err(WarehouseUseError::Missing { id: id.to_string() });
    };
    wake(w, ctx);
    w.idle_since = w.idle_since.max(busy_until);
    Ok(())
}

/// Moves every warehouse's power state forward to `ctx.now`: starts and stops finish,
/// idle warehouses with an auto-stop stop, deletes finish (DELETING to DELETED, which
/// holds `until` the purge) and deleted warehouses are purged. Returns whether anything
/// changed.
pub fn advance(st: &mut State, ctx: &Ctx) -> bool {
    let due: Vec<String> = st
        .warehouses
        .warehouses
        .values()
        .filter(|w| next_move(w, ctx.now).is_some())
        .map(|w| w.id.clone())
        .collect();
    for id in &due {
        if let Some(w) = st.warehouses.warehouses.get_mut(id) {
            while let Some((state, at)) = next_move(w, ctx.now) {
                if state == "RUNNING" {
                    w.idle_since = w.idle_since.max(at);
                }
                if state == "PURGED" {
                    st.warehouses.warehouses.remove(id);
                    break;
                }
                w.state = state.into();
                w.until = at;
            }
        }
    }
    !due.is_empty()
}

/// The next state a warehouse reaches by `now`, and when (PURGED: removed).
fn next_move(w: &Warehouse, now: i64) -> Option<(&'static str, i64)> {
    match w.state.as_str() {
        "STARTING" if w.until <= now => Some(("RUNNING", w.until)),
        "STOPPING" if w.until <= now => Some(("STOPPED", w.until)),
        "DELETING" if w.until <= now => Some(("DELETED", w.until.saturating_add(DELETED_KEPT_MS))),
        "DELETED" if w.until <= now => Some(("PURGED", w.until)),
        "RUNNING" => {
            let mins = w.spec.get("auto_stop_mins").and_then(Value::as_i64)?;
            let at = w.idle_since.saturating_add(mins.saturating_mul(60_000));
            (mins > 0 && at <= now).then_some(("STOPPED", at))
        }
        _ => None,
    }
}

/// A warehouse as `GET /sql/warehouses/{id}` and the list return it. `host` is the
/// workspace's host name, which JDBC and ODBC clients connect to (on 443, over HTTPS).
pub fn view(w: &Warehouse, host: &str) -> Value {
    let mut v = w.spec.clone();
    let path = format!("/sql/1.0/warehouses/{}", w.id);
    let running = w.state == "RUNNING";
    v.insert("id".into(), json!(w.id));
    v.insert("creator_name".into(), json!(w.creator_name));
    v.insert("state".into(), json!(w.state));
    let clusters = if running {
        w.spec.get("min_num_clusters").cloned().unwrap_or(json!(1))
    } else {
        json!(0)
    };
    v.insert("num_clusters".into(), clusters);
    v.insert("num_active_sessions".into(), json!(0));
    v.insert(
        "jdbc_url".into(),
        json!(format!(
            "jdbc:spark://{host}:443/default;transportMode=http;ssl=1;AuthMech=3;httpPath={path};"
        )),
    );
    v.insert(
        "odbc_params".into(),
        json!({"hostname": host, "path": path, "protocol": "https", "port": 443}),
    );
    v.insert("health".into(), json!({"status": "HEALTHY"}));
    v.entry("tags").or_insert_with(|| json!({}));
    Value::Object(v)
}

/// The Databricks SQL data sources: one per warehouse, as `GET /preview/sql/data_sources`
/// returns them (a bare array).
pub fn data_sources(st: &State) -> Value {
    Value::Array(
        st.warehouses
            .warehouses
            .values()
            .filter(|w| !is_deleted(w))
            .map(|w| {
                json!({
                    "id": w.data_source_id,
                    "name": w.spec.get("name"),
                    "warehouse_id": w.id,
                    "type": "databricks_internal",
                    "syntax": "sql",
                    "paused": 0,
                    "pause_reason": "",
                    "supports_auto_limit": true,
                    "view_only": false,
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn defaults_are_filled_in_and_limits_checked() {
        let s = settings(&body(json!({"name": "w", "cluster_size": "Small"})), false).unwrap();
        assert_eq!(s["auto_stop_mins"], 120);
        assert_eq!(s["min_num_clusters"], 1);
        assert_eq!(s["max_num_clusters"], 1);
        assert_eq!(s["warehouse_type"], "CLASSIC");
        assert_eq!(s["enable_photon"], true);
        assert_eq!(s["spot_instance_policy"], "COST_OPTIMIZED");
        assert_eq!(s["channel"], json!({"name": "CHANNEL_NAME_CURRENT"}));
        let serverless = settings(
            &body(
                json!({"name": "w", "cluster_size": "Small", "enable_serverless_compute": true, "auto_stop_mins": 5}),
            ),
            false,
        )
        .unwrap();
        assert_eq!(serverless["warehouse_type"], "PRO");
        for (b, field) in [
            (json!({"cluster_size": "Small"}), "name"),
            (json!({"name": "w", "cluster_size": "Tiny"}), "cluster_size"),
            (
                json!({"name": "w", "cluster_size": "Small", "auto_stop_mins": 5}),
                "auto_stop_mins",
            ),
            (
                json!({"name": "w", "cluster_size": "Small", "min_num_clusters": 3, "max_num_clusters": 2}),
                "max_num_clusters",
            ),
            (
                json!({"name": "w", "cluster_size": "Small", "max_num_clusters": 41}),
                "max_num_clusters",
            ),
            (
                json!({"name": "w", "cluster_size": "Small", "enable_serverless_compute": true, "warehouse_type": "CLASSIC"}),
                "warehouse_type",
            ),
            (
                json!({"name": "w", "cluster_size": "Small", "channel": {"name": "CHANNEL_NAME_CUSTOM"}}),
                "channel.dbsql_version",
            ),
        ] {
            let e = settings(&body(b), false).unwrap_err();
            assert!(e.message.contains(field), "{field}: {}", e.message);
        }
    }

    #[test]
    fn a_warehouse_starts_runs_and_stops_when_idle() {
        let mut st = State::new("u@x", 0);
        let spec = settings(
            &body(json!({"name": "w", "cluster_size": "Small", "auto_stop_mins": 10})),
            false,
        )
        .unwrap();
        let id = create(&mut st, &Ctx::for_test(0, 1_000), spec.clone()).unwrap();
        assert_eq!(get(&st, &id).unwrap().state, "STARTING");
        assert_eq!(
            create(&mut st, &Ctx::for_test(0, 1_000), spec)
                .unwrap_err()
                .code,
            "RESOURCE_ALREADY_EXISTS"
        );
        advance(&mut st, &Ctx::for_test(1_000, 1_000));
        assert_eq!(get(&st, &id).unwrap().state, "RUNNING");
        // Ten idle minutes after it started, it stops.
        advance(&mut st, &Ctx::for_test(1_000 + 599_999, 1_000));
        assert_eq!(get(&st, &id).unwrap().state, "RUNNING");
        assert!(advance(&mut st, &Ctx::for_test(1_000 + 600_000, 1_000)));
        assert_eq!(get(&st, &id).unwrap().state, "STOPPED");
        // A query starts it again, and keeps it up until the query's end.
        use_for_query(&mut st, &Ctx::for_test(700_000, 1_000), &id, 705_000).unwrap();
        assert_eq!(get(&st, &id).unwrap().state, "STARTING");
        advance(&mut st, &Ctx::for_test(705_000 + 599_999, 1_000));
        assert_eq!(get(&st, &id).unwrap().state, "RUNNING");
        assert!(use_for_query(&mut st, &Ctx::for_test(0, 0), "nope", 0).is_err());
        stop(&mut st, &Ctx::for_test(1_400_000, 0), &id).unwrap();
        assert_eq!(get(&st, &id).unwrap().state, "STOPPED");
        // Without async_warehouse_delete, a delete is done at once.
        let mut quick = Ctx::for_test(1_500_000, 1_000);
        quick.behaviours = quick.behaviours.without(Behaviour::AsyncWarehouseDelete);
        delete(&mut st, &quick, &id).unwrap();
        assert_eq!(get(&st, &id).unwrap_err().code, "RESOURCE_DOES_NOT_EXIST");
    }

    #[test]
    fn the_workspace_default_makes_a_warehouse_serverless_and_pro() {
        let s = |b: Value| settings(&body(b), true);
        let plain = s(json!({"name": "w", "cluster_size": "Small", "auto_stop_mins": 5})).unwrap();
        assert_eq!(plain["enable_serverless_compute"], true);
        assert_eq!(plain["warehouse_type"], "PRO");
        // A type that cannot be serverless is not made serverless by the default.
        let classic =
            s(json!({"name": "w", "cluster_size": "Small", "warehouse_type": "CLASSIC"})).unwrap();
        assert_eq!(classic["enable_serverless_compute"], false);
        assert_eq!(classic["warehouse_type"], "CLASSIC");
        let pro =
            s(json!({"name": "w", "cluster_size": "Small", "enable_serverless_compute": false}))
                .unwrap();
        assert_eq!(pro["warehouse_type"], "CLASSIC");
        assert!(
            s(json!({"name": "w", "cluster_size": "Small", "enable_serverless_compute": false, "auto_stop_mins": 5}))
                .is_err()
        );
    }

    #[test]
    fn a_deleted_warehouse_reads_deleting_holds_its_name_then_reads_deleted_and_goes() {
        let mut st = State::new("u@x", 0);
        let spec = settings(&body(json!({"name": "w", "cluster_size": "Small"})), false).unwrap();
        let id = create(&mut st, &Ctx::for_test(0, 1_000), spec.clone()).unwrap();
        delete(&mut st, &Ctx::for_test(2_000, 1_000), &id).unwrap();
        let w = get(&st, &id).unwrap();
        assert_eq!(w.state, "DELETING");
        assert!(data_sources(&st).as_array().unwrap().is_empty());
        // The name is still taken, and the warehouse can no longer be used or changed.
        let taken = create(&mut st, &Ctx::for_test(2_500, 1_000), spec.clone()).unwrap_err();
        assert_eq!(taken.code, "RESOURCE_ALREADY_EXISTS");
        assert!(use_for_query(&mut st, &Ctx::for_test(2_500, 0), &id, 3_000).is_err());
        assert!(start(&mut st, &Ctx::for_test(2_500, 0), &id).is_err());
        assert!(edit(&mut st, &id, spec.clone()).is_err());
        // A second delete is accepted and changes nothing.
        delete(&mut st, &Ctx::for_test(2_600, 1_000), &id).unwrap();
        advance(&mut st, &Ctx::for_test(2_999, 1_000));
        assert_eq!(get(&st, &id).unwrap().state, "DELETING");
        // Deleted, it frees the name, and is read until it is purged.
        advance(&mut st, &Ctx::for_test(3_000, 1_000));
        assert_eq!(get(&st, &id).unwrap().state, "DELETED");
        let again = create(&mut st, &Ctx::for_test(3_000, 1_000), spec).unwrap();
        assert_ne!(again, id);
        advance(&mut st, &Ctx::for_test(3_000 + DELETED_KEPT_MS - 1, 1_000));
        assert_eq!(get(&st, &id).unwrap().state, "DELETED");
        advance(&mut st, &Ctx::for_test(3_000 + DELETED_KEPT_MS, 1_000));
        assert_eq!(get(&st, &id).unwrap_err().code, "RESOURCE_DOES_NOT_EXIST");
        assert!(get(&st, &again).is_ok());
    }

    #[test]
    fn no_auto_stop_keeps_it_running() {
        let mut st = State::new("u@x", 0);
        let spec = settings(
            &body(json!({"name": "w", "cluster_size": "Small", "auto_stop_mins": 0})),
            false,
        )
        .unwrap();
        let id = create(&mut st, &Ctx::for_test(0, 0), spec).unwrap();
        advance(&mut st, &Ctx::for_test(i64::MAX / 2, 0));
        assert_eq!(get(&st, &id).unwrap().state, "RUNNING");
    }
}
