//! What the service checks in a cluster spec, wherever one is written: a job task's or job
//! cluster's `new_cluster` and a pipeline's `clusters[]` take the same pieces (cloud
//! attributes, init scripts, log delivery, autoscaling).

use crate::body::Obj;
use crate::errors::{ApiError, ApiResult};

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
