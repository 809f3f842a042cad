//! What the Clusters and Libraries APIs do to the workspace state, apart from HTTP.

use super::{Cluster, Library};
use crate::behaviours::Behaviour;
use crate::body::Obj;
use crate::errors::{ApiError, ApiResult};
use crate::store::{Ctx, State};
use serde_json::{Map, Value, json};

/// "If specified, the threshold must be between 10 and 10000 minutes. Users can also set
/// this value to 0 to explicitly disable automatic termination" (databricks-sdk-py
/// databricks/sdk/service/compute.py, ClustersAPI.create, autotermination_minutes).
const MIN_AUTOTERMINATION: i64 = 10;
const MAX_AUTOTERMINATION: i64 = 10_000;
/// The kinds of library a `libraries[]` entry names exactly one of (`compute.Library`).
const LIBRARY_KINDS: &[&str] = &["jar", "egg", "whl", "requirements", "pypi", "maven", "cran"];
/// What the request carries besides the cluster's settings.
const NOT_SETTINGS: &[&str] = &["cluster_id", "idempotency_token"];

/// The service answers a cluster it does not have with a 400, not a 404: the Terraform
/// provider turns this message into "not found" (clusters/clusters_api.go,
/// wrapMissingClusterError: "fix non-compliant error code"; libraries/libraries_api_sdk.go
/// does the same for the libraries calls).
fn missing_cluster(id: &str) -> ApiError {
    ApiError::invalid(format!("Cluster {id} does not exist"))
}

fn bad(field: &str, why: impl std::fmt::Display) -> ApiError {
    ApiError::invalid(format!("Invalid value for field '{field}': {why}"))
}

/// Checks a create or edit body and returns the settings as the service keeps them, its
/// defaults filled in. An edit takes the whole object the same way: what it leaves out goes
/// back to the default.
pub fn settings(body: &Map<String, Value>) -> ApiResult<Map<String, Value>> {
    let o = Obj::root(body);
    let version = o.req_str("spark_version")?;
    if !crate::runtimes::is_runtime(version) {
        return Err(bad(
            "spark_version",
            format!("runtime version {version} is not offered (see clusters/spark-versions)"),
        ));
    }
    for k in ["node_type_id", "driver_node_type_id"] {
        if let Some(node) = o.str(k)?
            && !crate::runtimes::is_node_type(node)
        {
            return Err(bad(
                k,
                format!(
                    "node type {node} is not supported in this workspace (see clusters/list-node-types)"
                ),
            ));
        }
    }
    if o.str("node_type_id")?.is_none() && o.str("instance_pool_id")?.is_none() {
        return Err(ApiError::invalid(
            "Missing required field: node_type_id (or instance_pool_id)",
        ));
    }
    crate::compute::check_cluster(o)?;
    if let Some(m) = o.int("autotermination_minutes")?
        && m != 0
        && !(MIN_AUTOTERMINATION..=MAX_AUTOTERMINATION).contains(&m)
    {
        return Err(bad(
            "autotermination_minutes",
            format!(
                "must be 0 or between {MIN_AUTOTERMINATION} and {MAX_AUTOTERMINATION}, got {m}"
            ),
        ));
    }
    let mut out: Map<String, Value> = body
        .iter()
        .filter(|(k, _)| !NOT_SETTINGS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // A fixed-size cluster without a size has no workers (a single-node cluster).
    if !out.contains_key("autoscale") {
        out.entry("num_workers").or_insert(json!(0));
    }
    // Answered whether or not it was sent (databricks/cli libs/testserver/clusters.go,
    // clusterFixUps: ForceSendFields EnableElasticDisk).
    out.entry("enable_elastic_disk").or_insert(json!(false));
    Ok(out)
}

/// The cluster's settings as the service holds them: the access mode and the driver's node
/// type filled in where the behaviours say so (the same as a job cluster's, see
/// `compute.rs`).
///
/// And what the service fills in as databricks/cli's fake does (libs/testserver/clusters.go,
/// clusterFixUps and ClustersCreate): on this AWS workspace, a cluster without cloud
/// attributes gets the workspace's (spot with fallback, in one zone); a GCP one its first
/// on-demand node and preemptible executors off; a SINGLE_USER cluster without a user is
/// the caller's.
fn held(ctx: &Ctx, mut spec: Map<String, Value>) -> Map<String, Value> {
    if ctx.behaviours.on(Behaviour::DataSecurityModeAliases) {
        crate::compute::resolve_access_mode(&mut spec);
    }
    if ctx.behaviours.on(Behaviour::DriverNodeTypeFromNodeType) {
        crate::compute::fill_driver_node_type(&mut spec);
    }
    if let Some(Value::Object(gcp)) = spec.get_mut("gcp_attributes") {
        gcp.entry("first_on_demand").or_insert(json!(1));
        gcp.entry("use_preemptible_executors")
            .or_insert(json!(false));
    } else if !spec.contains_key("aws_attributes") && !spec.contains_key("azure_attributes") {
        spec.insert(
            "aws_attributes".into(),
            json!({"availability": "SPOT_WITH_FALLBACK", "zone_id": "us-east-1c"}),
        );
    }
    if spec.get("data_security_mode").and_then(Value::as_str) == Some("SINGLE_USER") {
        spec.entry("single_user_name").or_insert(json!(ctx.user));
    }
    spec
}

/// Makes a cluster and starts it (PENDING); returns its id. A create with the token of an
/// earlier one answers that one's id (the API's `idempotency_token`: "if the token is
/// already in use by an existing cluster, the request does not create a new cluster but
/// returns the ID of the existing cluster instead").
pub fn create(
    st: &mut State,
    ctx: &Ctx,
    spec: Map<String, Value>,
    token: Option<String>,
) -> ApiResult<String> {
    if let Some(t) = &token
        && let Some(c) = st
            .clusters
            .clusters
            .values()
            .find(|c| c.idempotency_token.as_deref() == Some(t.as_str()))
    {
        return Ok(c.id.clone());
    }
    // Cluster ids look like `0312-104530-abcd1234`.
    let word = uuid::Uuid::new_v4().simple().to_string();
    let id = format!("0101-000000-{}", &word[..8]);
    st.clusters.clusters.insert(
        id.clone(),
        Cluster {
            id: id.clone(),
            spec: held(ctx, spec),
            creator: ctx.user.to_string(),
            state: "PENDING".into(),
            until: ctx.now.saturating_add(ctx.timings.run_setup_ms()),
            idle_since: ctx.now,
            start_time: ctx.now,
            spark_context_id: ctx.now,
            pinned: false,
            idempotency_token: token,
            libraries: Vec::new(),
        },
    );
    advance(st, ctx);
    Ok(id)
}

fn cluster_mut<'a>(st: &'a mut State, id: &str) -> ApiResult<&'a mut Cluster> {
    st.clusters
        .clusters
        .get_mut(id)
        .ok_or_else(|| missing_cluster(id))
}

pub fn get<'a>(st: &'a State, id: &str) -> ApiResult<&'a Cluster> {
    st.clusters
        .clusters
        .get(id)
        .ok_or_else(|| missing_cluster(id))
}

/// Replaces the settings of a RUNNING or TERMINATED cluster; a running one restarts. Any
/// other state is refused with INVALID_STATE (ClustersAPI.edit; the Terraform provider
/// retries exactly that error, clusters/resource_cluster.go, resourceClusterUpdate).
pub fn edit(st: &mut State, ctx: &Ctx, id: &str, spec: Map<String, Value>) -> ApiResult<()> {
    let spec = held(ctx, spec);
    let c = cluster_mut(st, id)?;
    match c.state.as_str() {
        "RUNNING" => restart(c, ctx),
        "TERMINATED" => {}
        other => {
            return Err(ApiError::invalid_state(format!(
                "Cluster {id} is in unexpected state {}.",
                title(other)
            )));
        }
    }
    c.spec = spec;
    Ok(())
}

/// How the service words a state in messages: `Pending`, `Running`.
fn title(state: &str) -> String {
    let lower = state.to_lowercase();
    let mut chars = lower.chars();
    chars
        .next()
        .map(|f| f.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn restart(c: &mut Cluster, ctx: &Ctx) {
    c.spark_context_id = c.spark_context_id.max(ctx.now).saturating_add(1);
    c.state = "RESTARTING".into();
    c.until = ctx.now.saturating_add(ctx.timings.run_setup_ms());
}

/// Resizes a RUNNING cluster without a restart (RESIZING, then RUNNING): to `num_workers`
/// workers, or to scale within `autoscale`. Any other state is refused with INVALID_STATE
/// (databricks/cli libs/testserver/clusters.go, ClustersResize: "Only running clusters can
/// be resized; match the real API behavior").
pub fn resize(st: &mut State, ctx: &Ctx, id: &str, body: &Map<String, Value>) -> ApiResult<()> {
    let o = Obj::root(body);
    let workers = o.int("num_workers")?;
    let autoscale = o.obj("autoscale")?.cloned();
    if workers.is_some() == autoscale.is_some() {
        return Err(ApiError::invalid(
            "Exactly one of num_workers or autoscale must be given",
        ));
    }
    let mut probe = Map::new();
    if let Some(n) = workers {
        probe.insert("num_workers".into(), json!(n));
    }
    if let Some(a) = &autoscale {
        probe.insert("autoscale".into(), Value::Object(a.clone()));
    }
    crate::compute::check_cluster(Obj::root(&probe))?;
    let c = cluster_mut(st, id)?;
    if c.state != "RUNNING" {
        return Err(ApiError::invalid_state(format!(
            "Cluster {id} is in unexpected state {}.",
            title(&c.state)
        )));
    }
    match autoscale {
        Some(a) => {
            c.spec.remove("num_workers");
            c.spec.insert("autoscale".into(), Value::Object(a));
        }
        None => {
            c.spec.remove("autoscale");
            c.spec
                .insert("num_workers".into(), json!(workers.unwrap_or(0)));
        }
    }
    c.state = "RESIZING".into();
    c.until = ctx.now.saturating_add(ctx.timings.run_setup_ms());
    advance(st, ctx);
    Ok(())
}

/// Starts a TERMINATED cluster; any other state is refused with INVALID_STATE.
pub fn start(st: &mut State, ctx: &Ctx, id: &str) -> ApiResult<()> {
    let c = cluster_mut(st, id)?;
    if c.state != "TERMINATED" {
        return Err(ApiError::invalid_state(format!(
            "Cluster {id} is in unexpected state {}.",
            title(&c.state)
        )));
    }
    c.state = "PENDING".into();
    c.until = ctx.now.saturating_add(ctx.timings.run_setup_ms());
    c.start_time = ctx.now;
    c.spark_context_id = c.spark_context_id.max(ctx.now).saturating_add(1);
    advance(st, ctx);
    Ok(())
}

/// Terminates a cluster (`clusters/delete`): "If the cluster is already in a TERMINATING or
/// TERMINATED state, nothing will happen" (ClustersAPI.delete).
pub fn terminate(st: &mut State, ctx: &Ctx, id: &str) -> ApiResult<()> {
    let c = cluster_mut(st, id)?;
    if !matches!(c.state.as_str(), "TERMINATING" | "TERMINATED") {
        c.state = "TERMINATING".into();
        c.until = ctx.now.saturating_add(ctx.timings.run_setup_ms());
    }
    advance(st, ctx);
    Ok(())
}

/// Removes a cluster for good. A pinned one is refused until it is unpinned (the Terraform
/// provider unpins and deletes again on this message: clusters/resource_cluster.go,
/// resourceClusterDelete).
pub fn permanent_delete(st: &mut State, id: &str) -> ApiResult<()> {
    if get(st, id)?.pinned {
        return Err(ApiError::invalid(format!(
            "Cluster {id} is pinned, unpin the cluster first before deleting it permanently."
        )));
    }
    st.clusters.clusters.remove(id);
    crate::permissions::forget(st, "clusters", id);
    Ok(())
}

pub fn set_pinned(st: &mut State, id: &str, pinned: bool) -> ApiResult<()> {
    cluster_mut(st, id)?.pinned = pinned;
    Ok(())
}

/// Every cluster, or the pinned ones.
pub fn list(st: &State, pinned_only: bool) -> Value {
    let all: Vec<Value> = st
        .clusters
        .clusters
        .values()
        .filter(|c| !pinned_only || c.pinned)
        .map(view)
        .collect();
    json!({ "clusters": all })
}

/// A cluster as `clusters/get` and the list answer it (`compute.ClusterDetails`): its
/// settings, with what the service adds.
pub fn view(c: &Cluster) -> Value {
    let mut v = c.spec.clone();
    v.insert("cluster_id".into(), json!(c.id));
    v.insert("creator_user_name".into(), json!(c.creator));
    v.insert("state".into(), json!(c.state));
    v.insert(
        "state_message".into(),
        json!(match c.state.as_str() {
            "PENDING" => "Finding instances for new nodes",
            "RESTARTING" => "Restarting Spark",
            "TERMINATING" | "TERMINATED" => "Terminated by user",
            _ => "",
        }),
    );
    v.insert("start_time".into(), json!(c.start_time));
    v.insert("cluster_source".into(), json!("API"));
    v.insert("spark_context_id".into(), json!(c.spark_context_id));
    // The tags the service puts on every cluster's cloud resources (docs: "default_tags:
    // Vendor, Creator, ClusterName and ClusterId").
    v.insert(
        "default_tags".into(),
        json!({
            "Vendor": "Databricks",
            "Creator": c.creator,
            "ClusterName": c.spec.get("cluster_name").cloned().unwrap_or(json!("")),
            "ClusterId": c.id,
        }),
    );
    Value::Object(v)
}

/// The `libraries` of an install or uninstall body, each naming one kind of library.
pub fn libraries(body: &Map<String, Value>) -> ApiResult<Vec<Value>> {
    let o = Obj::root(body);
    let mut out = Vec::new();
    for (p, lib) in o.objs("libraries")? {
        Obj::at(lib, &p).one_of(LIBRARY_KINDS)?;
        out.push(Value::Object(lib.clone()));
    }
    Ok(out)
}

/// Asks for libraries: installed at once on a running cluster, PENDING until it runs
/// otherwise. One already there is asked for again: its mark for removal goes.
pub fn install(st: &mut State, id: &str, libs: Vec<Value>) -> ApiResult<()> {
    let c = cluster_mut(st, id)?;
    let status = if c.state == "RUNNING" {
        "INSTALLED"
    } else {
        "PENDING"
    };
    for lib in libs {
        match c.libraries.iter_mut().find(|l| l.library == lib) {
            Some(l) => l.status = status.into(),
            None => c.libraries.push(Library {
                library: lib,
                status: status.into(),
            }),
        }
    }
    Ok(())
}

/// Marks libraries for removal: "The libraries won't be uninstalled until the cluster is
/// restarted. A request to uninstall a library that is not currently installed is ignored"
/// (databricks-sdk-py compute.py, LibrariesAPI.uninstall).
pub fn uninstall(st: &mut State, id: &str, libs: Vec<Value>) -> ApiResult<()> {
    let c = cluster_mut(st, id)?;
    for l in c.libraries.iter_mut().filter(|l| libs.contains(&l.library)) {
        l.status = "UNINSTALL_ON_RESTART".into();
    }
    Ok(())
}

/// `libraries/cluster-status`: those asked for first, in order, then those marked for
/// removal (LibrariesAPI.cluster_status).
pub fn library_statuses(st: &State, id: &str) -> ApiResult<Value> {
    let c = get(st, id)?;
    let (kept, going): (Vec<&Library>, Vec<&Library>) = c
        .libraries
        .iter()
        .partition(|l| l.status != "UNINSTALL_ON_RESTART");
    let statuses: Vec<Value> = kept
        .into_iter()
        .chain(going)
        .map(|l| {
            json!({
                "library": l.library,
                "status": l.status,
                "is_library_for_all_clusters": false,
            })
        })
        .collect();
    Ok(json!({ "cluster_id": id, "library_statuses": statuses }))
}

/// A cluster (re)starting or stopping: libraries marked for removal go; those asked for
/// are installed once it runs.
fn settle_libraries(c: &mut Cluster, running: bool) {
    c.libraries.retain(|l| l.status != "UNINSTALL_ON_RESTART");
    if running {
        for l in &mut c.libraries {
            l.status = "INSTALLED".into();
        }
    }
}

/// Moves every cluster's state forward to `ctx.now`: starts and restarts finish, idle
/// clusters with an auto-termination terminate, terminations finish. Returns whether
/// anything changed.
pub fn advance(st: &mut State, ctx: &Ctx) -> bool {
    let due: Vec<String> = st
        .clusters
        .clusters
        .values()
        .filter(|c| next_move(c, ctx.now).is_some())
        .map(|c| c.id.clone())
        .collect();
    for id in &due {
        if let Some(c) = st.clusters.clusters.get_mut(id) {
            while let Some((state, at)) = next_move(c, ctx.now) {
                match (c.state.as_str(), state) {
                    // A resize restarts nothing.
                    ("RESIZING", _) => {}
                    (_, "RUNNING") => {
                        c.idle_since = at;
                        settle_libraries(c, true);
                    }
                    _ => settle_libraries(c, false),
                }
                c.state = state.into();
                c.until = at;
            }
        }
    }
    !due.is_empty()
}

/// The next state a cluster reaches by `now`, and when.
fn next_move(c: &Cluster, now: i64) -> Option<(&'static str, i64)> {
    match c.state.as_str() {
        "PENDING" | "RESTARTING" | "RESIZING" if c.until <= now => Some(("RUNNING", c.until)),
        "TERMINATING" if c.until <= now => Some(("TERMINATED", c.until)),
        "RUNNING" => {
            let mins = c
                .spec
                .get("autotermination_minutes")
                .and_then(Value::as_i64)?;
            let at = c.idle_since.saturating_add(mins.saturating_mul(60_000));
            (mins > 0 && at <= now).then_some(("TERMINATED", at))
        }
        _ => None,
    }
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

    fn spec(extra: Value) -> Map<String, Value> {
        let mut b = body(json!({
            "cluster_name": "c", "spark_version": "16.4.x-scala2.12",
            "node_type_id": "i3.xlarge", "autotermination_minutes": 20,
        }));
        b.extend(body(extra));
        settings(&b).unwrap()
    }

    #[test]
    fn a_cluster_starts_restarts_on_an_edit_while_running_and_terminates() {
        let mut st = State::new("u@x", 0);
        let id = create(&mut st, &Ctx::for_test(0, 10), spec(json!({})), None).unwrap();
        let c = get(&st, &id).unwrap();
        assert_eq!(c.state, "PENDING");
        assert_eq!(c.spec["driver_node_type_id"], "i3.xlarge");
        assert_eq!(c.spec["num_workers"], 0);
        assert_eq!(
            c.spec["aws_attributes"]["availability"],
            "SPOT_WITH_FALLBACK"
        );
        // Edits are refused while it starts.
        let e = edit(
            &mut st,
            &Ctx::for_test(5, 10),
            &id,
            spec(json!({"num_workers": 1})),
        );
        assert_eq!(e.unwrap_err().code, "INVALID_STATE");
        advance(&mut st, &Ctx::for_test(10, 10));
        assert_eq!(get(&st, &id).unwrap().state, "RUNNING");
        let ctx = Ctx::for_test(20, 10);
        edit(&mut st, &ctx, &id, spec(json!({"num_workers": 2}))).unwrap();
        let c = get(&st, &id).unwrap();
        assert_eq!(c.state, "RESTARTING");
        assert_eq!(c.spec["num_workers"], 2);
        advance(&mut st, &Ctx::for_test(30, 10));
        assert_eq!(get(&st, &id).unwrap().state, "RUNNING");
        terminate(&mut st, &Ctx::for_test(40, 10), &id).unwrap();
        advance(&mut st, &Ctx::for_test(50, 10));
        assert_eq!(get(&st, &id).unwrap().state, "TERMINATED");
        // A terminated cluster is edited without a start.
        edit(
            &mut st,
            &Ctx::for_test(60, 10),
            &id,
            spec(json!({"num_workers": 3})),
        )
        .unwrap();
        assert_eq!(get(&st, &id).unwrap().state, "TERMINATED");
        assert!(start(&mut st, &Ctx::for_test(60, 10), &id).is_ok());
        assert_eq!(
            start(&mut st, &Ctx::for_test(61, 10), &id)
                .unwrap_err()
                .code,
            "INVALID_STATE"
        );
    }

    #[test]
    fn a_resize_of_a_running_cluster_restarts_nothing() {
        let mut st = State::new("u@x", 0);
        let id = create(&mut st, &Ctx::for_test(0, 10), spec(json!({})), None).unwrap();
        let scale = body(json!({"autoscale": {"min_workers": 1, "max_workers": 3}}));
        let e = resize(&mut st, &Ctx::for_test(5, 10), &id, &scale).unwrap_err();
        assert_eq!(e.code, "INVALID_STATE");
        advance(&mut st, &Ctx::for_test(10, 10));
        install(&mut st, &id, vec![json!({"jar": "/a.jar"})]).unwrap();
        uninstall(&mut st, &id, vec![json!({"jar": "/a.jar"})]).unwrap();
        resize(&mut st, &Ctx::for_test(20, 10), &id, &scale).unwrap();
        let c = get(&st, &id).unwrap();
        assert_eq!(c.state, "RESIZING");
        assert!(c.spec.get("num_workers").is_none());
        advance(&mut st, &Ctx::for_test(30, 10));
        let c = get(&st, &id).unwrap();
        assert_eq!(c.state, "RUNNING");
        // Not a restart: a library marked for removal is still there.
        assert_eq!(c.libraries.len(), 1);
        let both =
            body(json!({"num_workers": 2, "autoscale": {"min_workers": 1, "max_workers": 3}}));
        assert!(resize(&mut st, &Ctx::for_test(30, 10), &id, &both).is_err());
    }

    #[test]
    fn an_idle_cluster_terminates_after_its_autotermination() {
        let mut st = State::new("u@x", 0);
        let id = create(&mut st, &Ctx::for_test(0, 0), spec(json!({})), None).unwrap();
        assert_eq!(get(&st, &id).unwrap().state, "RUNNING");
        advance(&mut st, &Ctx::for_test(19 * 60_000, 0));
        assert_eq!(get(&st, &id).unwrap().state, "RUNNING");
        advance(&mut st, &Ctx::for_test(20 * 60_000, 0));
        assert_eq!(get(&st, &id).unwrap().state, "TERMINATED");
    }

    #[test]
    fn a_token_makes_one_cluster_and_a_pinned_one_is_kept_from_permanent_delete() {
        let mut st = State::new("u@x", 0);
        let ctx = Ctx::for_test(0, 0);
        let a = create(&mut st, &ctx, spec(json!({})), Some("t".into())).unwrap();
        let b = create(&mut st, &ctx, spec(json!({})), Some("t".into())).unwrap();
        assert_eq!(a, b);
        assert_eq!(st.clusters.clusters.len(), 1);
        set_pinned(&mut st, &a, true).unwrap();
        assert_eq!(list(&st, true)["clusters"].as_array().unwrap().len(), 1);
        let e = permanent_delete(&mut st, &a).unwrap_err();
        assert!(
            e.message.contains("unpin the cluster first"),
            "{}",
            e.message
        );
        set_pinned(&mut st, &a, false).unwrap();
        assert_eq!(list(&st, true)["clusters"], json!([]));
        permanent_delete(&mut st, &a).unwrap();
        assert!(get(&st, &a).is_err());
    }

    #[test]
    fn libraries_install_when_it_runs_and_go_when_it_restarts() {
        let mut st = State::new("u@x", 0);
        let id = create(&mut st, &Ctx::for_test(0, 10), spec(json!({})), None).unwrap();
        let jar = json!({"jar": "/Volumes/a/b/c/x.jar"});
        let pypi = json!({"pypi": {"package": "requests"}});
        install(&mut st, &id, vec![jar.clone(), pypi.clone()]).unwrap();
        let s = library_statuses(&st, &id).unwrap();
        assert_eq!(s["library_statuses"][0]["status"], "PENDING");
        advance(&mut st, &Ctx::for_test(10, 10));
        let s = library_statuses(&st, &id).unwrap();
        assert_eq!(s["library_statuses"][1]["status"], "INSTALLED");
        uninstall(&mut st, &id, vec![jar.clone()]).unwrap();
        let s = library_statuses(&st, &id).unwrap();
        assert_eq!(s["library_statuses"][0]["library"], pypi);
        assert_eq!(s["library_statuses"][1]["status"], "UNINSTALL_ON_RESTART");
        edit(&mut st, &Ctx::for_test(20, 10), &id, spec(json!({}))).unwrap();
        advance(&mut st, &Ctx::for_test(30, 10));
        let s = library_statuses(&st, &id).unwrap();
        assert_eq!(s["library_statuses"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn what_the_service_refuses() {
        let base = json!({"spark_version": "16.4.x-scala2.12", "node_type_id": "i3.xlarge"});
        for (extra, says) in [
            (json!({"spark_version": "1.0.x"}), "spark_version"),
            (json!({"node_type_id": "x9.huge"}), "node_type_id"),
            (
                json!({"autotermination_minutes": 5}),
                "autotermination_minutes",
            ),
            (json!({"num_workers": -1}), "num_workers"),
        ] {
            let mut b = body(base.clone());
            b.extend(body(extra));
            let e = settings(&b).unwrap_err();
            assert!(e.message.contains(says), "{says}: {}", e.message);
        }
        let mut none = body(base);
        none.remove("node_type_id");
        assert!(settings(&none).is_err());
    }
}
