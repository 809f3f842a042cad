//! What the Instance Pools API does to the workspace state, apart from HTTP.

use crate::body::Obj;
use crate::errors::{ApiError, ApiResult};
use crate::store::{Ctx, State};
use serde_json::{Map, Value, json};

/// Names are non-empty and shorter than 100 characters (terraform-provider-databricks
/// docs/resources/instance_pool.md, instance_pool_name).
const MAX_NAME: usize = 99;
/// "Databricks allows at most 43 custom tags" (docs/resources/instance_pool.md).
const MAX_TAGS: usize = 43;
/// Idle instances beyond the minimum are kept 0 to 10000 minutes (the same page).
const MAX_IDLE_MINUTES: i64 = 10_000;
/// spot_bid_price_percent "cannot be greater than 10000" (the same page).
const MAX_BID_PERCENT: i64 = 10_000;
const AWS: &[&str] = &["SPOT", "ON_DEMAND"];
const AZURE: &[&str] = &["SPOT_AZURE", "ON_DEMAND_AZURE"];
const GCP: &[&str] = &[
    "PREEMPTIBLE_GCP",
    "ON_DEMAND_GCP",
    "PREEMPTIBLE_WITH_FALLBACK_GCP",
];
const EBS: &[&str] = &["GENERAL_PURPOSE_SSD", "THROUGHPUT_OPTIMIZED_HDD"];
const AZURE_DISKS: &[&str] = &["PREMIUM_LRS", "STANDARD_LRS"];
/// What an edit changes; everything else stays as created.
const EDITABLE: &[&str] = &[
    "instance_pool_name",
    "min_idle_instances",
    "max_capacity",
    "idle_instance_autotermination_minutes",
    "custom_tags",
];

fn missing_pool(id: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Can't find an instance pool with id: {id}."),
    )
}

fn bad(field: &str, why: impl std::fmt::Display) -> ApiError {
    ApiError::invalid(format!("Invalid value for field '{field}': {why}"))
}

/// Checks a create body and returns the pool's settings as the service keeps them (an
/// edit body is checked the same way, for the fields it takes).
pub fn settings(body: &Map<String, Value>) -> ApiResult<Map<String, Value>> {
    let o = Obj::root(body);
    let name = o.req_str("instance_pool_name")?;
    let len = name.chars().count();
    if len == 0 || len > MAX_NAME {
        return Err(bad(
            "instance_pool_name",
            format!("must be non-empty and shorter than 100 characters, got {len}"),
        ));
    }
    let node = o.req_str("node_type_id")?;
    if !crate::runtimes::is_node_type(node) {
        return Err(bad(
            "node_type_id",
            format!(
                "node type {node} is not supported in this workspace (see clusters/list-node-types)"
            ),
        ));
    }
    let min = o.int("min_idle_instances")?.unwrap_or(0);
    if min < 0 {
        return Err(bad("min_idle_instances", "must not be negative"));
    }
    let mut out = Map::new();
    out.insert("instance_pool_name".into(), json!(name));
    out.insert("node_type_id".into(), json!(node));
    out.insert("min_idle_instances".into(), json!(min));
    if let Some(max) = o.int("max_capacity")? {
        if max <= 0 {
            return Err(bad("max_capacity", format!("must be positive, got {max}")));
        }
        out.insert("max_capacity".into(), json!(max));
    }
    if let Some(idle) = o.int("idle_instance_autotermination_minutes")? {
        if !(0..=MAX_IDLE_MINUTES).contains(&idle) {
            return Err(bad(
                "idle_instance_autotermination_minutes",
                format!("must be between 0 and {MAX_IDLE_MINUTES}, got {idle}"),
            ));
        }
        out.insert("idle_instance_autotermination_minutes".into(), json!(idle));
    }
    if let Some(tags) = o.str_map("custom_tags")? {
        if tags.len() > MAX_TAGS {
            return Err(bad(
                "custom_tags",
                format!("at most {MAX_TAGS} custom tags, got {}", tags.len()),
            ));
        }
        if !tags.is_empty() {
            out.insert("custom_tags".into(), Value::Object(tags.clone()));
        }
    }
    // As the Terraform provider defaults it (pools/resource_instance_pool.go: Default true).
    out.insert(
        "enable_elastic_disk".into(),
        json!(o.bool("enable_elastic_disk")?.unwrap_or(true)),
    );
    let versions = o.strs("preloaded_spark_versions")?;
    if versions.len() > 1 {
        return Err(bad(
            "preloaded_spark_versions",
            "a pool preloads at most one runtime version",
        ));
    }
    if let Some(v) = versions.first() {
        if !crate::runtimes::is_runtime(v) {
            return Err(bad(
                "preloaded_spark_versions",
                format!("runtime version {v} is not offered (see clusters/spark-versions)"),
            ));
        }
        out.insert("preloaded_spark_versions".into(), json!([v]));
    }
    let images = docker_images(&o)?;
    if !images.is_empty() {
        out.insert("preloaded_docker_images".into(), Value::Array(images));
    }
    for (key, field, allowed) in [
        ("aws_attributes", "availability", AWS),
        ("azure_attributes", "availability", AZURE),
        ("gcp_attributes", "gcp_availability", GCP),
    ] {
        if let Some(a) = o.obj(key)? {
            let p = o.path(key);
            let a_obj = Obj::at(a, &p);
            a_obj.enum_str(field, allowed)?;
            if let Some(pct) = a_obj.int("spot_bid_price_percent")?
                && !(0..=MAX_BID_PERCENT).contains(&pct)
            {
                return Err(bad(
                    &a_obj.path("spot_bid_price_percent"),
                    format!("must be between 0 and {MAX_BID_PERCENT}, got {pct}"),
                ));
            }
            out.insert(key.into(), Value::Object(a.clone()));
        }
    }
    if let Some(d) = o.obj("disk_spec")? {
        let p = o.path("disk_spec");
        let d_obj = Obj::at(d, &p);
        for k in ["disk_count", "disk_size"] {
            if d_obj.int(k)?.is_some_and(|n| n < 0) {
                return Err(bad(&d_obj.path(k), "must not be negative"));
            }
        }
        if let Some(t) = d_obj.obj("disk_type")? {
            let tp = d_obj.path("disk_type");
            let t = Obj::at(t, &tp);
            t.enum_str("ebs_volume_type", EBS)?;
            t.enum_str("azure_disk_volume_type", AZURE_DISKS)?;
        }
        out.insert("disk_spec".into(), Value::Object(d.clone()));
    }
    Ok(out)
}

/// The Docker images a pool preloads, as the service keeps them: the registry password is
/// kept to fetch the image and never answered, as the service keeps credentials it is
/// given.
fn docker_images(o: &Obj) -> ApiResult<Vec<Value>> {
    let mut images = Vec::new();
    for (path, image) in o.objs("preloaded_docker_images")? {
        let at = Obj::at(image, &path);
        let mut held = Map::new();
        held.insert("url".into(), json!(at.req_str("url")?));
        if let Some(auth) = at.obj("basic_auth")? {
            let auth_path = at.path("basic_auth");
            let auth = Obj::at(auth, &auth_path);
            auth.req_str("password")?;
            held.insert(
                "basic_auth".into(),
                json!({"username": auth.req_str("username")?}),
            );
        }
        images.push(Value::Object(held));
    }
    Ok(images)
}

/// A name is unique among the workspace's pools.
fn name_free(st: &State, name: &str, except: Option<&str>) -> ApiResult<()> {
    if st.pools.instance_pools.iter().any(|(id, p)| {
        Some(id.as_str()) != except && p.get("instance_pool_name") == Some(&json!(name))
    }) {
        return Err(ApiError::invalid(format!(
            "Instance pool with name {name} already exists."
        )));
    }
    Ok(())
}

/// What the service adds to every pool's tags.
fn default_tags(id: &str, creator: &str) -> Value {
    json!({
        "Vendor": "Databricks",
        "DatabricksInstancePoolCreatorId": creator,
        "DatabricksInstancePoolId": id,
    })
}

/// Makes a pool; returns its id (`MMDD-HHMMSS-` and a word, as the service's look).
pub fn create(st: &mut State, ctx: &Ctx, mut spec: Map<String, Value>) -> ApiResult<String> {
    let name = spec
        .get("instance_pool_name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    name_free(st, name, None)?;
    let word = uuid::Uuid::new_v4().simple().to_string();
    let id = format!("0101-000000-pool{}", &word[..12]);
    spec.insert("instance_pool_id".into(), json!(id));
    spec.insert("default_tags".into(), default_tags(&id, ctx.user));
    spec.insert("state".into(), json!("ACTIVE"));
    spec.insert("stats".into(), json!({}));
    st.pools.instance_pools.insert(id.clone(), spec);
    Ok(id)
}

/// Changes what an edit takes. Its body names the node type, which cannot change (the
/// Terraform provider replaces a pool whose node_type_id changes: force_new in
/// pools/resource_instance_pool.go).
pub fn edit(st: &mut State, id: &str, sent: Map<String, Value>) -> ApiResult<()> {
    let held = get(st, id)?;
    if held.get("node_type_id") != sent.get("node_type_id") {
        return Err(bad(
            "node_type_id",
            "the node type of an instance pool cannot be changed",
        ));
    }
    let name = sent
        .get("instance_pool_name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    name_free(st, name, Some(id))?;
    let p = st
        .pools
        .instance_pools
        .get_mut(id)
        .ok_or_else(|| missing_pool(id))?;
    for k in EDITABLE {
        match sent.get(*k) {
            Some(v) => p.insert(k.to_string(), v.clone()),
            None => p.remove(*k),
        };
    }
    Ok(())
}

pub fn get<'a>(st: &'a State, id: &str) -> ApiResult<&'a Map<String, Value>> {
    st.pools
        .instance_pools
        .get(id)
        .ok_or_else(|| missing_pool(id))
}

pub fn delete(st: &mut State, id: &str) -> ApiResult<()> {
    st.pools
        .instance_pools
        .remove(id)
        .ok_or_else(|| missing_pool(id))?;
    crate::permissions::forget(st, "instance-pools", id);
    Ok(())
}

pub fn list(st: &State) -> Value {
    let all: Vec<Value> = st
        .pools
        .instance_pools
        .values()
        .map(|p| Value::Object(p.clone()))
        .collect();
    json!({ "instance_pools": all })
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
    fn a_pool_is_made_edited_in_what_the_edit_takes_and_deleted() {
        let mut st = State::new("u@x", 0);
        let ctx = Ctx::for_test(0, 0);
        let spec = settings(&body(json!({
            "instance_pool_name": "p", "node_type_id": "i3.xlarge",
            "idle_instance_autotermination_minutes": 10, "max_capacity": 4,
            "aws_attributes": {"availability": "SPOT"},
            "preloaded_spark_versions": ["16.4.x-scala2.12"],
        })))
        .unwrap();
        let id = create(&mut st, &ctx, spec.clone()).unwrap();
        let p = get(&st, &id).unwrap();
        assert_eq!(p["enable_elastic_disk"], true);
        assert_eq!(p["default_tags"]["DatabricksInstancePoolId"], json!(id));
        assert!(create(&mut st, &ctx, spec).is_err(), "names are unique");
        let mut sent = settings(&body(json!({
            "instance_pool_name": "q", "node_type_id": "i3.xlarge",
            "idle_instance_autotermination_minutes": 20, "custom_tags": {"a": "b"},
        })))
        .unwrap();
        edit(&mut st, &id, sent.clone()).unwrap();
        let p = get(&st, &id).unwrap();
        assert_eq!(p["instance_pool_name"], "q");
        assert_eq!(p["custom_tags"], json!({"a": "b"}));
        assert!(p.get("max_capacity").is_none());
        assert_eq!(p["aws_attributes"], json!({"availability": "SPOT"}));
        sent.insert("node_type_id".into(), json!("m5d.large"));
        assert!(edit(&mut st, &id, sent).is_err());
        delete(&mut st, &id).unwrap();
        assert_eq!(get(&st, &id).unwrap_err().code, "RESOURCE_DOES_NOT_EXIST");
    }

    #[test]
    fn what_the_service_refuses() {
        let base = json!({"instance_pool_name": "p", "node_type_id": "i3.xlarge", "idle_instance_autotermination_minutes": 10});
        for (extra, says) in [
            (json!({"node_type_id": "x9.huge"}), "node_type_id"),
            (json!({"instance_pool_name": ""}), "instance_pool_name"),
            (
                json!({"idle_instance_autotermination_minutes": 10001}),
                "idle_instance",
            ),
            (json!({"max_capacity": 0}), "max_capacity"),
            (
                json!({"preloaded_spark_versions": ["1.0.x"]}),
                "preloaded_spark_versions",
            ),
            (
                json!({"aws_attributes": {"availability": "SPOT_AZURE"}}),
                "availability",
            ),
            (
                json!({"aws_attributes": {"spot_bid_price_percent": 10001}}),
                "spot_bid_price_percent",
            ),
            (
                json!({"disk_spec": {"disk_type": {"ebs_volume_type": "X"}}}),
                "ebs_volume_type",
            ),
        ] {
            let mut b = body(base.clone());
            b.extend(body(extra));
            let e = settings(&b).unwrap_err();
            assert!(e.message.contains(says), "{says}: {}", e.message);
        }
    }
}
