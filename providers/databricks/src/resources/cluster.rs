//! Classic-compute cluster fields, as data: the pieces a job's `new_cluster` (a
//! `compute.ClusterSpec`) and a pipeline's `cluster` (a `PipelineCluster`) have in common
//! are declared once here, and each kind takes the set its object has. Names and nesting
//! follow the Terraform provider (`aws_attributes { … }` as a block, `init_scripts { … }`
//! repeated), which are also the wire names.

use super::values::ty::{b, map, n, s, strings};
use brickform_core::provider::{AttrType, Attribute, BlockType, Schema};

/// `compute.AwsAvailability`, `AzureAvailability`, `GcpAvailability`.
const AWS_AVAILABILITY: &[&str] = &["SPOT", "ON_DEMAND", "SPOT_WITH_FALLBACK"];
const AZURE_AVAILABILITY: &[&str] = &["SPOT_AZURE", "ON_DEMAND_AZURE", "SPOT_WITH_FALLBACK_AZURE"];
const GCP_AVAILABILITY: &[&str] = &[
    "PREEMPTIBLE_GCP",
    "ON_DEMAND_GCP",
    "PREEMPTIBLE_WITH_FALLBACK_GCP",
];
/// `compute.EbsVolumeType`.
const EBS_VOLUME_TYPES: &[&str] = &["GENERAL_PURPOSE_SSD", "THROUGHPUT_OPTIMIZED_HDD"];
/// `compute.DataSecurityMode`.
pub const DATA_SECURITY_MODES: &[&str] = &[
    "DATA_SECURITY_MODE_AUTO",
    "DATA_SECURITY_MODE_STANDARD",
    "DATA_SECURITY_MODE_DEDICATED",
    "NONE",
    "SINGLE_USER",
    "USER_ISOLATION",
    "LEGACY_TABLE_ACL",
    "LEGACY_PASSTHROUGH",
    "LEGACY_SINGLE_USER",
    "LEGACY_SINGLE_USER_STANDARD",
];
/// How the service answers the access modes of the newer form: as the older names they are
/// aliases of, and AUTO as the mode it chose, whichever of the two
/// (terraform-provider-databricks clusters/resource_cluster.go, DataSecurityModeDiffSuppressFunc).
pub const DATA_SECURITY_MODES_ANSWERED: &[(&str, &str)] = &[
    ("DATA_SECURITY_MODE_DEDICATED", "SINGLE_USER"),
    ("DATA_SECURITY_MODE_STANDARD", "USER_ISOLATION"),
    ("DATA_SECURITY_MODE_AUTO", "SINGLE_USER"),
    ("DATA_SECURITY_MODE_AUTO", "USER_ISOLATION"),
];
/// `compute.RuntimeEngine`.
const RUNTIME_ENGINES: &[&str] = &["STANDARD", "PHOTON", "NULL"];

/// A cloud-attributes block: settable, and filled in by the service where the
/// configuration leaves its fields out (where the cluster runs is the service's to decide,
/// as in the Terraform provider, where they are computed).
fn cloud(name: &'static str, attrs: Vec<Attribute>, blocks: Vec<BlockType>) -> BlockType {
    let mut schema = Schema::new();
    for a in attrs {
        schema = schema.attr(a);
    }
    for bl in blocks {
        schema = schema.block(bl);
    }
    BlockType::single(name, schema)
}

fn filled(name: &'static str, ty: AttrType) -> Attribute {
    Attribute::optional_computed(name, ty)
}

pub fn aws_attributes() -> BlockType {
    cloud(
        "aws_attributes",
        vec![
            filled("availability", s()).one_of(AWS_AVAILABILITY),
            filled("zone_id", s()),
            filled("instance_profile_arn", s()),
            filled("first_on_demand", n()),
            filled("spot_bid_price_percent", n()),
            filled("ebs_volume_type", s()).one_of(EBS_VOLUME_TYPES),
            filled("ebs_volume_count", n()),
            filled("ebs_volume_size", n()),
            filled("ebs_volume_iops", n()),
            filled("ebs_volume_throughput", n()),
        ],
        Vec::new(),
    )
}

pub fn azure_attributes() -> BlockType {
    cloud(
        "azure_attributes",
        vec![
            filled("availability", s()).one_of(AZURE_AVAILABILITY),
            filled("first_on_demand", n()),
            filled("spot_bid_max_price", n()),
            filled("capacity_reservation_group", s()),
        ],
        vec![BlockType::single(
            "log_analytics_info",
            Schema::new()
                .attr(Attribute::optional("log_analytics_workspace_id", s()))
                .attr(Attribute::optional("log_analytics_primary_key", s()).sensitive()),
        )],
    )
}

pub fn gcp_attributes() -> BlockType {
    cloud(
        "gcp_attributes",
        vec![
            filled("availability", s()).one_of(GCP_AVAILABILITY),
            filled("zone_id", s()),
            filled("google_service_account", s()),
            filled("first_on_demand", n()),
            filled("boot_disk_size", n()),
            filled("local_ssd_count", n()),
            filled("use_preemptible_executors", b()),
            filled("confidential_compute_type", s())
                .one_of(&["CONFIDENTIAL_COMPUTE_TYPE_NONE", "SEV_SNP"]),
        ],
        Vec::new(),
    )
}

fn destination(name: &'static str) -> BlockType {
    BlockType::single(
        name,
        Schema::new().attr(Attribute::required("destination", s())),
    )
}

fn s3() -> BlockType {
    BlockType::single(
        "s3",
        Schema::new()
            .attr(Attribute::required("destination", s()))
            .attr(Attribute::optional("region", s()))
            .attr(Attribute::optional("endpoint", s()))
            .attr(Attribute::optional("enable_encryption", b()))
            .attr(Attribute::optional("encryption_type", s()).one_of(&["sse-s3", "sse-kms"]))
            .attr(Attribute::optional("kms_key", s()))
            .attr(Attribute::optional("canned_acl", s())),
    )
}

/// `init_scripts[]`: each entry names one place the script is read from.
pub fn init_scripts() -> BlockType {
    BlockType::list(
        "init_scripts",
        Schema::new()
            .block(destination("workspace"))
            .block(destination("volumes"))
            .block(destination("file"))
            .block(destination("dbfs"))
            .block(destination("gcs"))
            .block(destination("abfss"))
            .block(s3()),
    )
    .describe("Scripts run at cluster start: one of workspace, volumes, file, dbfs, gcs, abfss or s3 per block.")
}

/// Where the cluster's logs are delivered: one of dbfs, s3 or volumes.
pub fn cluster_log_conf() -> BlockType {
    BlockType::single(
        "cluster_log_conf",
        Schema::new()
            .block(destination("dbfs"))
            .block(destination("volumes"))
            .block(s3()),
    )
}

/// `autoscale`; a pipeline's has the autoscaling `mode` too.
pub fn autoscale(with_mode: bool) -> BlockType {
    let mut schema = Schema::new()
        .attr(Attribute::required("min_workers", n()))
        .attr(Attribute::required("max_workers", n()));
    if with_mode {
        schema = schema.attr(Attribute::optional("mode", s()).one_of(&["ENHANCED", "LEGACY"]));
    }
    BlockType::single("autoscale", schema)
}

/// The fields both a job's `new_cluster` and a pipeline's `cluster` take, the same way but
/// for `apply_policy_default_values`, which each answers its own way.
pub fn common(schema: Schema, apply_policy_default_values: Attribute) -> Schema {
    schema
        .attr(Attribute::optional("num_workers", n()))
        .attr(Attribute::optional("policy_id", s()))
        .attr(apply_policy_default_values)
        .attr(Attribute::optional("instance_pool_id", s()))
        .attr(Attribute::optional("driver_instance_pool_id", s()))
        .attr(Attribute::optional("spark_conf", map()))
        .attr(Attribute::optional("spark_env_vars", map()))
        .attr(Attribute::optional("custom_tags", map()))
        .attr(Attribute::optional("ssh_public_keys", strings()))
        .block(aws_attributes())
        .block(azure_attributes())
        .block(gcp_attributes())
        .block(init_scripts())
        .block(cluster_log_conf())
}

fn node_type_flexibility(name: &'static str) -> BlockType {
    BlockType::single(
        name,
        Schema::new()
            .attr(Attribute::optional("alternate_node_type_ids", strings()))
            .attr(Attribute::optional("aws_context_id", s())),
    )
}

/// A job's `new_cluster` (`compute.ClusterSpec`, as the Terraform provider's `new_cluster`).
/// Without `autotermination_minutes`: a job cluster ends with its run (the provider's
/// documentation lists it as not supported there).
pub fn new_cluster() -> BlockType {
    // The Jobs API applies the policy's defaults when it makes the cluster and never
    // answers the flag (databricks/cli libs/testserver/jobs.go, jobFixUps).
    let apply_policy_default_values = Attribute::optional("apply_policy_default_values", b())
        .unanswered()
        .describe("Whether the policy's defaults fill what is left out. The service acts on it and never answers it.");
    let schema = common(Schema::new(), apply_policy_default_values)
        .attr(Attribute::optional("spark_version", s()))
        .attr(Attribute::optional("node_type_id", s()))
        // The service fills it with node_type_id when left out; the job reads it as unset
        // then (see the job kind), so it is not drift and moves with node_type_id.
        .attr(
            Attribute::optional("driver_node_type_id", s())
                .describe("The driver's node type; left out, the driver runs on node_type_id."),
        )
        .attr(Attribute::optional("cluster_name", s()))
        // The service fills in the access mode and elastic disk when the request leaves
        // them out: they are the service's to decide, not drift (computed in the Terraform
        // provider too). Each value is the service's own, so the plan's `after` shows it.
        // The newer names are answered in the older ones.
        .attr(
            Attribute::optional_computed("data_security_mode", s())
                .one_of(DATA_SECURITY_MODES)
                .answered_as(DATA_SECURITY_MODES_ANSWERED)
                .describe("The access mode. The service answers DATA_SECURITY_MODE_DEDICATED as SINGLE_USER, DATA_SECURITY_MODE_STANDARD as USER_ISOLATION and DATA_SECURITY_MODE_AUTO as the one of them it chose."),
        )
        .attr(Attribute::optional_computed("enable_elastic_disk", b()))
        .attr(Attribute::optional_computed("enable_local_disk_encryption", b()))
        .attr(Attribute::optional("single_user_name", s()))
        .attr(Attribute::optional("runtime_engine", s()).one_of(RUNTIME_ENGINES))
        .attr(
            Attribute::optional("kind", s())
                .one_of(&["CLASSIC_PREVIEW"])
                .describe("CLASSIC_PREVIEW: the cluster's form is told by is_single_node, use_ml_runtime and data_security_mode."),
        )
        .attr(Attribute::optional("is_single_node", b()))
        .attr(Attribute::optional("use_ml_runtime", b()))
        .attr(Attribute::optional("remote_disk_throughput", n()))
        .attr(Attribute::optional("total_initial_remote_disk_size", n()))
        .attr(Attribute::optional("dependency_mode", s()).one_of(&[
            "DEPENDENCY_MODE_AUTO",
            "DEPENDENCY_MODE_CLUSTER_LIBRARIES",
            "DEPENDENCY_MODE_ENVIRONMENTS",
        ]))
        .block(autoscale(false))
        .block(BlockType::single(
            "docker_image",
            Schema::new()
                .attr(Attribute::required("url", s()))
                .block(BlockType::single(
                    "basic_auth",
                    Schema::new()
                        .attr(Attribute::required("username", s()))
                        .attr(Attribute::required("password", s()).sensitive()),
                )),
        ))
        .block(BlockType::single(
            "workload_type",
            Schema::new().block(BlockType::single(
                "clients",
                Schema::new()
                    .attr(Attribute::optional("jobs", b()))
                    .attr(Attribute::optional("notebooks", b())),
            )),
        ))
        .block(node_type_flexibility("driver_node_type_flexibility"))
        .block(node_type_flexibility("worker_node_type_flexibility"));
    BlockType::single("new_cluster", schema)
}

/// A pipeline's `cluster` (`PipelineCluster`): the node types and disk encryption are
/// filled in by the service when left out, so they are optional and computed.
pub fn pipeline_cluster() -> BlockType {
    let schema = common(
        Schema::new(),
        Attribute::optional("apply_policy_default_values", b()),
    )
    .attr(
        Attribute::optional("label", s())
            .server_default("default")
            .one_of(&["default", "updates", "maintenance"]),
    )
    .attr(Attribute::optional_computed("node_type_id", s()))
    .attr(Attribute::optional_computed("driver_node_type_id", s()))
    .attr(Attribute::optional_computed(
        "enable_local_disk_encryption",
        b(),
    ))
    .block(autoscale(true));
    BlockType::list("cluster", schema)
        .describe("Classic compute; leave out with serverless = true.")
}
