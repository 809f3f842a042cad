//! What the service checks in a cluster spec, wherever one is written: a job task's or job
//! cluster's `new_cluster` and a pipeline's `clusters[]` take the same pieces (cloud
//! attributes, init scripts, log delivery, autoscaling) — and what the service fills into
//! one as it holds it.

use crate::body::Obj;
use crate::errors::{ApiError, ApiResult};
use serde_json::{Map, Value};

const AWS: &[&str] = &["SPOT", "ON_DEMAND", "SPOT_WITH_FALLBACK"];
const AZURE: &[&str] = &["SPOT_AZURE", "ON_DEMAND_AZURE", "SPOT_WITH_FALLBACK_AZURE"];
const GCP: &[&str] = &[
    "PREEMPTIBLE_GCP",
    "ON_DEMAND_GCP",
    "PREEMPTIBLE_WITH_FALLBACK_GCP",
];

/// One storage location (`{"workspace": {"destination": …}}`): exactly one of `kinds`, with
/// its destination.
fn check_location(o: Obj, kinds: &[&'static str]) -> ApiResult<()> {
    let k = o.one_of(kinds)?;
    let p = o.path(k);
    Obj::at(o.req_obj(k)?, &p).req_str("destination")?;
    Ok(())
}

/// The pieces a cluster spec may hold, as the service checks them.
pub fn check_cluster(c: Obj) -> ApiResult<()> {
    let workers = c.int("num_workers")?;
    if workers.is_some_and(|n| n < 0) {
        return Err(ApiError::invalid(format!(
            "Invalid value for field '{}': must not be negative",
            c.path("num_workers")
        )));
    }
    if let Some(a) = c.obj("autoscale")? {
        let p = c.path("autoscale");
        let a = Obj::at(a, &p);
        let (min, max) = (a.req_int("min_workers")?, a.req_int("max_workers")?);
        if min < 0 || max < min {
            return Err(ApiError::invalid(format!(
                "Invalid value for field '{p}': min_workers ({min}) must be between 0 and max_workers ({max})"
            )));
        }
    }
    for (key, allowed) in [
        ("aws_attributes", AWS),
        ("azure_attributes", AZURE),
        ("gcp_attributes", GCP),
    ] {
        if let Some(a) = c.obj(key)? {
            let p = c.path(key);
            Obj::at(a, &p).enum_str("availability", allowed)?;
        }
    }
    for (p, s) in c.objs("init_scripts")? {
        check_location(
            Obj::at(s, &p),
            &["workspace", "volumes", "file", "dbfs", "gcs", "abfss", "s3"],
        )?;
    }
    if let Some(l) = c.obj("cluster_log_conf")? {
        let p = c.path("cluster_log_conf");
        check_location(Obj::at(l, &p), &["dbfs", "volumes", "s3"])?;
    }
    if let Some(d) = c.obj("docker_image")? {
        let p = c.path("docker_image");
        Obj::at(d, &p).req_str("url")?;
    }
    for k in ["spark_conf", "spark_env_vars", "custom_tags"] {
        c.str_map(k)?;
    }
    c.strs("ssh_public_keys")?;
    Ok(())
}

/// The access mode as the service holds a cluster's (`data_security_mode_aliases`): the
/// newer names are aliases it answers in the older ones, and AUTO is the mode it chooses —
/// dedicated to the user or group the cluster names, shared (user isolation) otherwise.
pub fn resolve_access_mode(c: &mut Map<String, Value>) {
    let held = match c.get("data_security_mode").and_then(Value::as_str) {
        Some("DATA_SECURITY_MODE_DEDICATED") => "SINGLE_USER",
        Some("DATA_SECURITY_MODE_STANDARD") => "USER_ISOLATION",
        Some("DATA_SECURITY_MODE_AUTO") if c.contains_key("single_user_name") => "SINGLE_USER",
        Some("DATA_SECURITY_MODE_AUTO") => "USER_ISOLATION",
        _ => return,
    };
    c.insert("data_security_mode".into(), Value::from(held));
}

/// The driver's node type where the cluster names only the workers'
/// (`driver_node_type_from_node_type`): the driver runs on the same type.
pub fn fill_driver_node_type(c: &mut Map<String, Value>) {
    if c.contains_key("driver_node_type_id") {
        return;
    }
    if let Some(n) = c.get("node_type_id").filter(|n| n.is_string()).cloned() {
        c.insert("driver_node_type_id".into(), n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn held(v: Value, f: fn(&mut Map<String, Value>)) -> Value {
        let Value::Object(mut m) = v else {
            panic!("not an object")
        };
        f(&mut m);
        Value::Object(m)
    }

    #[test]
    fn access_modes_are_held_in_the_older_names() {
        for (sent, single_user, answered) in [
            ("DATA_SECURITY_MODE_DEDICATED", false, "SINGLE_USER"),
            ("DATA_SECURITY_MODE_STANDARD", false, "USER_ISOLATION"),
            ("DATA_SECURITY_MODE_AUTO", false, "USER_ISOLATION"),
            ("DATA_SECURITY_MODE_AUTO", true, "SINGLE_USER"),
            ("USER_ISOLATION", false, "USER_ISOLATION"),
            ("NONE", false, "NONE"),
        ] {
            let mut c = json!({"data_security_mode": sent});
            if single_user {
                c["single_user_name"] = json!("ann@example.com");
            }
            let got = held(c, resolve_access_mode);
            assert_eq!(got["data_security_mode"], answered, "{sent}");
        }
        assert_eq!(held(json!({}), resolve_access_mode), json!({}));
    }

    #[test]
    fn the_driver_runs_on_the_workers_node_type_unless_named() {
        let got = held(json!({"node_type_id": "i3.xlarge"}), fill_driver_node_type);
        assert_eq!(got["driver_node_type_id"], "i3.xlarge");
        let got = held(
            json!({"node_type_id": "i3.xlarge", "driver_node_type_id": "r5.xlarge"}),
            fill_driver_node_type,
        );
        assert_eq!(got["driver_node_type_id"], "r5.xlarge");
        let pooled = json!({"instance_pool_id": "p"});
        assert_eq!(held(pooled.clone(), fill_driver_node_type), pooled);
    }
}
