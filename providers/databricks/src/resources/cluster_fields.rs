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

/// `apply_policy_default_values` of a `compute.ClusterSpec`: the Jobs API applies the
/// policy's defaults when it makes the cluster and never answers the flag
/// (databricks/cli libs/testserver/jobs.go, jobFixUps); the Clusters API answers it only
/// under `.spec`, never at the top level (libs/testserver/clusters.go, specSnapshot).
fn apply_policy_default_values() -> Attribute {
    Attribute::optional("apply_policy_default_values", b())
        .unanswered()
        .describe("Whether the policy's defaults fill what is left out. The service acts on it and never answers it.")
}

/// A job's `new_cluster` (`compute.ClusterSpec`, as the Terraform provider's `new_cluster`).
/// Without `autotermination_minutes`: a job cluster ends with its run (the provider's
/// documentation lists it as not supported there).
pub fn new_cluster() -> BlockType {
    let schema = common(Schema::new(), apply_policy_default_values())
        .attr(Attribute::optional("spark_version", s()))
        .attr(Attribute::optional("node_type_id", s()))
        // The service fills it with node_type_id when left out; the job reads it as unset
        // then (see the job kind), so it is not drift and moves with node_type_id.
        .attr(
            Attribute::optional("driver_node_type_id", s())
                .describe("The driver's node type; left out, the driver runs on node_type_id."),
        );
    BlockType::single("new_cluster", spec_rest(schema))
}

/// The rest of a `compute.ClusterSpec`, after its node types: what a job's `new_cluster`
/// and a `databricks_cluster` declare the same way.
fn spec_rest(schema: Schema) -> Schema {
    schema
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
        .block(node_type_flexibility("worker_node_type_flexibility"))
        .block(cluster_mount_info())
}

/// `cluster_mount_info[]` (`compute.MountInfo`, `cluster_mount_infos` on the wire): a network
/// file system mounted into the Spark containers (terraform-provider-databricks
/// clusters/clusters_api.go `MountInfo`, docs/resources/cluster.md).
fn cluster_mount_info() -> BlockType {
    BlockType::list(
        "cluster_mount_info",
        Schema::new()
            .attr(Attribute::required("local_mount_dir_path", s()))
            .attr(Attribute::optional("remote_mount_dir_path", s()))
            .block(BlockType::single(
                "network_filesystem_info",
                Schema::new()
                    .attr(Attribute::required("server_address", s()))
                    .attr(Attribute::optional("mount_options", s())),
            )),
    )
    .describe("A network file system mounted into the Spark containers.")
}

/// The fields of a `library` block (`compute.Library`): one of whl, jar, requirements,
/// pypi, egg, maven, cran. A job task's libraries and a cluster's take the same.
pub fn library_schema() -> Schema {
    Schema::new()
        .attr(Attribute::optional("whl", s()))
        .attr(Attribute::optional("jar", s()))
        .attr(Attribute::optional("requirements", s()))
        .block(BlockType::single(
            "pypi",
            Schema::new()
                .attr(Attribute::required("package", s()))
                .attr(Attribute::optional("repo", s())),
        ))
        .attr(
            Attribute::optional("egg", s())
                .describe("Deprecated by the service; kept for existing configurations."),
        )
        .block(BlockType::single(
            "maven",
            Schema::new()
                .attr(Attribute::required("coordinates", s()))
                .attr(Attribute::optional("repo", s()))
                .attr(Attribute::optional("exclusions", strings())),
        ))
        .block(BlockType::single(
            "cran",
            Schema::new()
                .attr(Attribute::required("package", s()))
                .attr(Attribute::optional("repo", s())),
        ))
}

/// A cluster's `library` blocks: a set, as the Terraform provider's cluster keeps them
/// (clusters/resource_cluster.go, `tf:"slice_set,alias:library"`).
pub fn library() -> BlockType {
    BlockType::list("library", library_schema())
    .unordered()
    .describe("A library installed on the cluster; each names one of jar, egg, whl, requirements, pypi, maven, cran. Installed and uninstalled by an update (an uninstalled one goes at the cluster's next restart).")
}

/// The settings of a `databricks_cluster` (`compute.ClusterSpec` as the Terraform
/// provider's clusters/resource_cluster.go customises it): `spark_version` required; the
/// node types, the driver's pool, the disks and the access mode filled in by the service
/// when left out (Computed there); `num_workers` 0 when left out (`SetDefault(0)`, and
/// always sent without `autoscale`); `autotermination_minutes` 60 when left out
/// (`Default: 60`, sent as such).
pub fn all_purpose(schema: Schema) -> Schema {
    let mut schema = common(schema, apply_policy_default_values())
        .attr(
            Attribute::required("spark_version", s())
                .describe("The Databricks Runtime version (databricks_spark_version)."),
        )
        .attr(
            Attribute::optional_computed("node_type_id", s())
                .describe("The workers' node type (databricks_node_type); cannot be used with instance_pool_id."),
        )
        .attr(
            Attribute::optional_computed("driver_node_type_id", s())
                .describe("The driver's node type; left out, the service's (node_type_id)."),
        )
        .attr(
            Attribute::optional("autotermination_minutes", n())
                .server_default(60)
                .describe("Idle minutes before the cluster terminates: 0 (never) or 10 to 10000; 60 when left out, as in the Terraform provider."),
        );
    for a in &mut schema.attributes {
        match a.name {
            "num_workers" => {
                a.server_default = Some(0.into());
                a.description = "Workers of a fixed-size cluster; 0 (a single node) when left out. Not with autoscale.";
            }
            // The service fills them in: the driver's pool is the workers', and a
            // SINGLE_USER cluster without a user is its creator's (databricks/cli
            // libs/testserver/clusters.go, ClustersCreate).
            "driver_instance_pool_id" | "single_user_name" => {
                a.presence = brickform_core::provider::Presence::OptionalComputed
            }
            _ => {}
        }
    }
    spec_rest(schema)
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
