//! The real service's behaviours the local workspace models, each one by name, so that a
//! focused test can turn one off (`EmulatorConfig::behaviours`, or at runtime
//! `POST /__emulator/behaviours {"async_pipeline_delete": false}`).
//!
//! Every behaviour but the ones in [`OFF_BY_DEFAULT`] is on by default: the real service is
//! the reference, and wherever the emulator is kinder than it our tests pass while real users
//! meet drift or failed destroys. Each is checked at the one place in the code that models it.
//! The opt-in ones fuzz rather than model: `normalise_answers` rewrites answers at random
//! (seeded), which a test asks for when it proves that brickform copes with rewritings nobody
//! listed.

use serde_json::{Map, Value};

/// One modelled behaviour. The names (see [`BEHAVIOURS`]) are the wire names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Behaviour {
    SortDependsOn,
    NewClusterDefaults,
    TaskEmailNotifications,
    TaskPaging,
    KeepRunAs,
    FailedTaskGenericMessage,
    FailedRunInternalError,
    AsyncPipelineDelete,
    PipelineTables,
    ServerFilledPipelineFields,
    GatewayStagingVolume,
    ForeignCatalogOptionsFixed,
    WithholdConnectionUser,
    PurgeOldRuns,
    NormaliseAnswers,
    WarehouseServerlessDefault,
    AsyncWarehouseDelete,
    PolicyDefinitionReformatted,
    PrincipalsAsScimHolds,
    ApplyPolicyDefaultValuesConsumed,
    DataSecurityModeAliases,
    DriverNodeTypeFromNodeType,
    TaskSourceFilled,
    DatasetTypeFixed,
    RefuseUnknownRunAs,
    SdpMetaReadsItsSources,
    NewWorkspaceMain,
    RefuseOverlappingLocations,
    SettingEtags,
    OneMetastoreAssignment,
}

/// Every behaviour: its wire name and what the service does (shown by `GET`).
pub const BEHAVIOURS: &[(Behaviour, &str, &str)] = &[
    (
        Behaviour::SortDependsOn,
        "sort_depends_on",
        "jobs/get returns each task's depends_on sorted by task_key, not as sent (databricks/cli \
         libs/testserver/jobs.go:174-178, jobFixUps: to \"simulate the real API which returns \
         dependencies in a different order than submitted\")",
    ),
    (
        Behaviour::NewClusterDefaults,
        "new_cluster_defaults",
        "a job's new_cluster gets data_security_mode, enable_elastic_disk and cloud attributes \
         (databricks/cli libs/testserver/jobs.go:193-216, jobFixUps: server-side defaults)",
    ),
    (
        Behaviour::TaskEmailNotifications,
        "task_email_notifications",
        "jobs/get answers an empty email_notifications for each task that has none (databricks/cli \
         libs/testserver/jobs.go:180-183)",
    ),
    (
        Behaviour::TaskPaging,
        "task_paging",
        "jobs/get pages tasks and job clusters (100 a page) and sends has_more; jobs/list with \
         expand_tasks shows each job's first page and marks has_more (databricks/cli \
         libs/testserver/jobs.go:237-292: \"the real Databricks API limit of 100 tasks per \
         jobs.get response\")",
    ),
    (
        Behaviour::KeepRunAs,
        "keep_run_as",
        "jobs/reset without run_as keeps the identity the job ran as (databricks/cli \
         libs/testserver/jobs.go:145-146, JobsReset)",
    ),
    (
        Behaviour::FailedTaskGenericMessage,
        "failed_task_generic_message",
        "a failed task says 'Workload failed, see run output for details'; the cause is in \
         runs/get-output (databricks/cli acceptance/bundle/resources/job_runs/failed_run/\
         output.txt:6,43, recorded from a real workspace: test.toml Cloud = true)",
    ),
    (
        Behaviour::FailedRunInternalError,
        "failed_run_internal_error",
        "a run with a failed task ends in life_cycle_state INTERNAL_ERROR (result_state FAILED) \
         (databricks/cli acceptance/bundle/resources/job_runs/failed_run/output.txt:41, recorded \
         from a real workspace: test.toml Cloud = true)",
    ),
    (
        Behaviour::AsyncPipelineDelete,
        "async_pipeline_delete",
        "a deleted pipeline reads DELETING for a while before it is gone \
         (terraform-provider-databricks pipelines/resource_pipeline.go:81-101: a delete is \
         followed by reads until the pipeline is missing, \"Pipeline %s is in state %s, not \
         yet deleted\")",
    ),
    (
        Behaviour::PipelineTables,
        "pipeline_tables",
        "an ingestion pipeline's update creates its tables in their schemas (which then refuse a \
         delete): a Lakeflow Connect ingestion pipeline writes its destination tables, streaming \
         tables (docs.databricks.com ingestion/lakeflow-connect/cdc-overview, 'Connector \
         components'), each named after its source table unless destination_table names it \
         (ibid., common-patterns, 'Name destination tables'), owned and updated by that one \
         pipeline (ldp/concepts/streaming-tables); databrickslabs/dlt-meta \
         demo/lfcdemo-database.py (e3fba9c) finds its tables intpk and dtix in the destination \
         schema once the ingestion update has completed. A schema holding tables refuses a \
         delete without force: 'Schema 'ed.patients' is not empty. The schema has 1 tables(s), 0 \
         functions(s), 0 volumes(s)' (terraform-provider-databricks issue #3659; volumes too, \
         issue #2906; the provider's force_destroy now deletes with force, PR #4705). Here an \
         update that starts and does not fail makes each table object's \
         destination_catalog.destination_schema.(destination_table, else source_table) and each \
         report's destination_table a STREAMING_TABLE the pipeline owns; a whole-schema object's \
         tables are the source's, which the local workspace does not have, so none is made for \
         it; no public source says at which step of an update the tables appear, so they appear \
         as it starts. Off: an ingestion pipeline's update makes no table",
    ),
    (
        Behaviour::ServerFilledPipelineFields,
        "server_filled_pipeline_fields",
        "gateway_storage_name, connection_id and connector_type are filled and survive a \
         full-spec PUT: the API makes gateway_storage_name optional, the system creating the \
         storage location (databricks-sdk-py databricks/sdk/service/pipelines.py:1796-1799, \
         IngestionGatewayPipelineDefinition; terraform-provider-databricks \
         docs/resources/pipeline.md:112 still calls it Required), the default name being \
         __databricks_ingestion_gateway_staging_data-<pipeline id> (pipelines.py:804-809, \
         DataStagingOptions.volume_name; the volume of a gateway created without one bears it: \
         databrickslabs/dlt-meta demo/lfcdemo-database.py, e3fba9c); connection_id is the \
         deprecated, immutable id of the gateway's connection (pipelines.py:1789-1791; immutable \
         for the provider, pipelines/resource_pipeline.go:204-207, and for databricks/cli \
         bundle/direct/dresources/resources.yml:193-194); connector_type defaults to QUERY_BASED \
         for a database connection_name sent without one, and ingestion_gateway_id instead makes \
         it a 'Cdc Managed Ingestion Pipeline with Gateway' (pipelines.py:689-692, \
         ConnectorType, and :1850-1858). No public source shows pipelines/get answering these \
         fields where the request left them out, nor a pipelines/edit (a whole-spec replacement) \
         that omits them, so they are modelled: filled at the write (gateway_storage_name the \
         default name, connection_id the id of the connection named, connector_type CDC through \
         a gateway; a pipeline on a connection_name gets none) and kept from the pipeline's spec \
         by an edit that omits them. Off: answered only as sent",
    ),
    (
        Behaviour::GatewayStagingVolume,
        "gateway_staging_volume",
        "an ingestion gateway creates its staging volume in its storage schema; the volume stays \
         after the gateway: the gateway stages what it extracts in a Unity Catalog volume made \
         when the gateway is deployed, in the catalog and schema it names (docs.databricks.com \
         ingestion/lakeflow-connect/cdc-overview, 'Staging storage'; 'the system will \
         automatically create the storage location under the catalog and schema': \
         databricks-sdk-py databricks/sdk/service/pipelines.py:1796-1799), named \
         gateway_storage_name, by default __databricks_ingestion_gateway_staging_data-<gateway \
         id> (pipelines.py:804-809; databrickslabs/dlt-meta demo/lfcdemo-database.py at e3fba9c \
         creates a gateway without one and links the volume by that name in its \
         gateway_storage_schema). Only the gateway's creation makes it: once its schema is \
         dropped the gateway does not make it again, and a full refresh fails with \
         INGESTION_GATEWAY_CONNECTION_ERROR.DESTINATION_NOT_AVAILABLE \
         (malcolndandaro/databricks-lfc-sdp-scd2-demo scripts/reset_databricks.py at f7ab5a2, \
         the comment on SCHEMAS_TO_DROP). No public source says what deleting the gateway does \
         to the volume, so it is modelled as staying, and with it the schema's refusal of a \
         delete without force; nor its type, so it is MANAGED; nor what an edit does when it is \
         gone, so a create or an edit of the gateway makes it when missing. Off: no volume is \
         made",
    ),
    (
        Behaviour::ForeignCatalogOptionsFixed,
        "foreign_catalog_options_fixed",
        "a foreign catalog's options (other than authorized_paths) cannot change in place: only \
         authorized_paths is eligible for update in the Unity Catalog API, any other change of \
         options needing a new catalog (terraform-provider-databricks PR #4517, after PR #4476 \
         had sent options in updates; catalog/resource_catalog.go:175-182 sends only \
         authorized_paths in an update, :247-271 forces a replacement for any other change, \
         :108-109 sends no options in the update that follows a create; its workspace tests \
         catalog/catalog_test.go:85, TestUcAccCatalogUpdate, and :154, \
         TestUcAccCatalogHmsConnectionUpdate). The service refused options in an update with \
         'UpdateCatalog options can not be provided.' (issues #4503 and #2820, 'options_kvpairs' \
         in #2686: foreign catalogs given options at create; in #4503 the update after the \
         create resent the create's own options). Here a catalog update whose options differ \
         from the catalog's in anything but authorized_paths is refused 400 \
         INVALID_PARAMETER_VALUE, in words of our own, and options sent again unchanged are \
         taken: kinder than the refusal of issue #4503, for no public source says whether the \
         service still refuses them. Off: options change in place",
    ),
    (
        Behaviour::WithholdConnectionUser,
        "withhold_connection_user",
        "a connection's user option is withheld on read, as its password is: the Connections API \
         does not return a connection's sensitive options, user among them, so \
         terraform-provider-databricks puts them back from the configuration at each read \
         (catalog/resource_connection.go:13-14, sensitiveOptions: user, password, \
         personalAccessToken, access_token, client_secret, pem_private_key, OAuthPvtKey, \
         GoogleServiceAccountKeyJson, bearer_token; :111-118, 'We need to preserve original \
         sensitive options as API doesn't return them'; user and password listed since the \
         resource's first version, PR #2528; bearer_token added by PR #4812 'to prevent \
         permanent configuration drift'; its workspace test catalog/connection_test.go:10-25 and \
         :53-61 sets user and password on a MYSQL connection). Off: user is answered with the \
         other options",
    ),
    (
        Behaviour::PurgeOldRuns,
        "purge_old_runs",
        "a job run is removed 60 days after it ended (\"Runs are automatically removed after 60 \
         days\": the runs/get-output reference, databricks-sdk-py docs/workspace/jobs/jobs.rst): \
         once the clock passes that, runs/get, runs/list, runs/get-output, runs/repair and \
         runs/cancel no longer know it, and runs/get of it answers 400 INVALID_PARAMETER_VALUE \
         'Run: N in job: M doesn't exist' (the message databricks-sdk-py \
         databricks/sdk/errors/overrides.py maps to ResourceDoesNotExist, with 'Run N does not \
         exist', which a run id never seen still gets)",
    ),
    (
        Behaviour::NormaliseAnswers,
        "normalise_answers",
        "off by default. Answers (never the stored workspace) are rewritten as the service \
         rewrites what it is sent, each rewriting chosen per route family and field path by a \
         hash of the seed (0, the default: all of them; set it with POST /__emulator/normalise \
         {\"seed\": N}, or BRICKFORM_LOCAL_NORMALISE_SEED=N, which also turns this on, for \
         `brickform local serve` and host = \"local\"): comment/description in another case; \
         user principals (with @) lower-cased; unordered lists (privileges, depends_on, \
         custom_tags, notification recipients, ACLs) reordered and job tasks sorted by task_key \
         (databricks/cli libs/testserver/jobs.go); new_cluster.apply_policy_default_values \
         left out (ibid., jobFixUps); defaults filled in: notebook_task.source WORKSPACE \
         (ibid., setSourceIfNotSet), pipeline photon false and configuration \
         spark.sql.ansi.enabled (databricks/cli libs/testserver/pipelines.go, setSpecDefaults); \
         data_security_mode DATA_SECURITY_MODE_DEDICATED/STANDARD answered as \
         SINGLE_USER/USER_ISOLATION (terraform-provider-databricks clusters, \
         DataSecurityModeDiffSuppressFunc)",
    ),
    (
        Behaviour::WarehouseServerlessDefault,
        "warehouse_serverless_default",
        "this workspace defaults a SQL warehouse's enable_serverless_compute to true, and then \
         its warehouse_type to PRO (an explicit CLASSIC one is not serverless): the default is \
         per workspace, true on workspaces that used the SQL Warehouses API between \
         2022-09-01 and 2023-04-30 and are enabled for serverless (terraform-provider-databricks \
         docs/resources/sql_endpoint.md, enable_serverless_compute and warehouse_type; the \
         resource makes it Computed, sql/resource_sql_endpoint.go:69, and suppresses an \
         unset warehouse_type's diff, :85-87; databricks/cli bundle/direct/dresources/\
         resources.yml:708-719 lists it among backend_defaults). Off: false and CLASSIC",
    ),
    (
        Behaviour::AsyncWarehouseDelete,
        "async_warehouse_delete",
        "a deleted SQL warehouse is not gone at once: it reads (GET and list) DELETING while \
         its clusters go down (one run setup), and holds its name meanwhile, so a create of \
         that name answers 409 RESOURCE_ALREADY_EXISTS (terraform-provider-databricks issue \
         #3379: destroy then apply at once fails with 'already exists'); then DELETED, name \
         free, still listed and readable for an hour before it is purged (the list returns \
         DELETED and DELETING warehouses: databricks/cli libs/databrickscfg/cfgpickers/\
         warehouses.go:75-80 filters them out of Warehouses.ListAll, and \
         experimental/aitools/lib/middlewares/warehouse.go:113 out of a Warehouses.Get). \
         Edit, start, stop and queries no longer find it; a second delete is accepted",
    ),
    (
        Behaviour::PolicyDefinitionReformatted,
        "policy_definition_reformatted",
        "a cluster policy's definition is answered (policies/clusters/get and list) in \
         the service's own layout, not as sent: the same JSON document, indented, \
         whitespace differing (terraform-provider-databricks \
         policies/resource_cluster_policy.go:37 and :40 suppress whitespace-only diffs of \
         definition and policy_family_definition_overrides with \
         common.SuppressDiffWhitespaceChange, common/util.go:44-47; the layout modelled, \
         pretty-printed, is a stronger rewriting than that trims). A definition that is \
         not a JSON object is refused either way. Off: answered byte for byte as sent",
    ),
    (
        Behaviour::PrincipalsAsScimHolds,
        "principals_as_scim_holds",
        "a user named in any case (UC grants PATCH and ?principal=, permissions ACL user_name, \
         a job's run_as, secret ACLs, a securable's owner) is the user SCIM holds: kept and \
         answered in SCIM's spelling, so one user written two ways is one principal (two PATCH \
         changes for Ann@x.com and ann@x.com give one assignment). The service answers user \
         principals in the account's spelling, lower case: terraform-provider-databricks issue \
         #3654 (grants written for User@test.org read back as user@test.org; the provider's \
         one-minute wait then fails), fixed by comparing principals with EqualFold (PR #3657); \
         PR #2786 (user names forced to lower case on AWS, as on GCP and Azure) and PR #5757 \
         (the permissions API answers user_name and service_principal_name lower-cased, a \
         permanent drift until compared in any case). Service principals (application ids) are \
         matched in any case where the workspace's own APIs take them so (permissions, secret \
         ACLs, run_as). Group display names are case-sensitive and kept exactly (PR #3708: \
         lower-casing them made grants fail with 'Could not find principal', issue #3705). Off: \
         a principal is kept in the spelling it was sent in",
    ),
    (
        Behaviour::ApplyPolicyDefaultValuesConsumed,
        "apply_policy_default_values_consumed",
        "a job cluster's apply_policy_default_values (a task's new_cluster, a for_each_task's \
         inner task's, a job cluster's) is acted on at the write and never answered: jobs/get \
         and jobs/list leave it out (databricks/cli libs/testserver/jobs.go:218-234, jobFixUps: \
         \"The real Jobs API consumes apply_policy_default_values but does not return it in GET \
         responses\"; bundle/direct/dresources/resources.yml:62-70 ignores the remote's nil, \
         reason not_returned_by_api). Pipelines' clusters are not changed: no evidence that \
         the Pipelines API drops it. Off: kept and answered as sent",
    ),
    (
        Behaviour::DataSecurityModeAliases,
        "data_security_mode_aliases",
        "a job cluster's or an all-purpose cluster's data_security_mode in the newer names is \
         held and answered in the older ones: DATA_SECURITY_MODE_DEDICATED as SINGLE_USER, DATA_SECURITY_MODE_STANDARD \
         as USER_ISOLATION, and DATA_SECURITY_MODE_AUTO as the mode the service chooses, \
         SINGLE_USER for a cluster given a single_user_name and USER_ISOLATION otherwise \
         (terraform-provider-databricks clusters/resource_cluster.go:109-119, \
         DataSecurityModeDiffSuppressFunc: SINGLE_USER read back for DEDICATED, USER_ISOLATION \
         for STANDARD, either for AUTO; its clusters/resource_cluster_test.go:2032-2087, \
         TestResourceClusterAliasAutoNoDrift_DataSecurityMode, reads USER_ISOLATION back for \
         AUTO with no single_user_name; docs/resources/cluster.md:55-58 \
         calls STANDARD and DEDICATED aliases). A pipeline's clusters have no access mode. Off: \
         held and answered as sent",
    ),
    (
        Behaviour::DriverNodeTypeFromNodeType,
        "driver_node_type_from_node_type",
        "a cluster that names node_type_id and no driver_node_type_id (a job's new_cluster, a \
         pipeline's clusters[], an all-purpose cluster) is held and answered with \
         driver_node_type_id = node_type_id (databricks/cli libs/testserver/clusters.go:157-159, clusterFixUps; the API's \
         ClusterSpec.driver_node_type_id: \"if unset, the driver node type will be set as the \
         same value as node_type_id\", terraform-provider-databricks \
         internal/service/compute_tf/model.go:1272-1274; bundle/direct/dresources/resources.yml \
         lists it among a job's backend_defaults, :91-95, and the provider makes a pipeline \
         cluster's Computed, pipelines/resource_pipeline.go:220, resources.yml:246-248). Off: \
         left out",
    ),
    (
        Behaviour::TaskSourceFilled,
        "task_source_filled",
        "jobs/get and jobs/list answer the source of a task's code where the job left it out: \
         notebook_task, spark_python_task, dbt_task and sql_task.file, in tasks and in a \
         for_each_task's inner task, read GIT when the job has a git_source and WORKSPACE \
         otherwise (databricks/cli libs/testserver/jobs.go:1039-1064, setSourceIfNotSet, called \
         by JobsGet :268 and JobsList :352; bundle/direct/dresources/resources.yml:122-134 lists \
         these eight sources among backend_defaults, after terraform-provider-databricks \
         jobs/resource_job.go:522-525, SetSuppressDiff; the API's documented default, \
         docs/resources/job.md:218: \"If the value is empty, the task will use GIT if \
         git_source is defined and WORKSPACE otherwise\"). The job holds what it was sent. \
         Off: left out",
    ),
    (
        Behaviour::RefuseUnknownRunAs,
        "refuse_unknown_run_as",
        "jobs/create, jobs/reset and jobs/update refuse a run_as naming a principal the \
         workspace does not have, and store nothing: a user_name that is no SCIM user's \
         userName, a service_principal_name that is no service principal's applicationId \
         (both matched in any case, as principals_as_scim_holds matches them), answered 404 \
         RESOURCE_DOES_NOT_EXIST 'Principal: UserName(x) does not exist' (ServicePrincipalName(x) \
         for a service principal). The API takes only \"the email of an active workspace \
         user\" and \"the application ID of an active service principal\" \
         (databricks-sdk-py databricks/sdk/service/jobs.py:4483-4488, JobRunAs; \
         terraform-provider-databricks docs/resources/job.md:391-392). No recorded answer of \
         the Jobs API itself to an unknown run_as was found: the code and words are those the \
         workspace answers when it cannot resolve a principal it is given (databricks/cli \
         acceptance/bundle/resources/permissions/factcheck/test.toml:8, recorded from a real \
         workspace: 'ServicePrincipalName(…) does not exist'; databrickslabs/dbx issue #744, \
         a job's deploy naming an unknown user: {'error_code': 'RESOURCE_DOES_NOT_EXIST', \
         'message': 'Principal: UserName(service-principal://…) does not exist'}; \
         terraform-provider-databricks issue #1415, 'Principal: ServicePrincipalName(…) does \
         not exist'), as the local permissions API answers them. A run_as the request leaves \
         out (kept by jobs/reset, keep_run_as) and a group_name are not checked. Off: any name \
         is taken",
    ),
    (
        Behaviour::DatasetTypeFixed,
        "dataset_type_fixed",
        "an update of a declarative pipeline publishes the datasets its SQL sources declare \
         (the workspace files ending in .sql and SQL notebooks its libraries name by file, \
         notebook or glob; CREATE [OR REFRESH] STREAMING TABLE, MATERIALIZED VIEW and the older \
         STREAMING LIVE TABLE and LIVE TABLE; PRIVATE and TEMPORARY ones are not in the \
         catalog: the CREATE STREAMING TABLE reference, docs.databricks.com dlt-ref/\
         dlt-sql-ref-create-streaming-table) as STREAMING_TABLE or MATERIALIZED_VIEW tables the \
         pipeline owns, unqualified names in its catalog and schema; and an update, full \
         refresh or not, in which a dataset the pipeline published as one type is declared as \
         the other fails and publishes nothing: the service does not change a dataset's type, \
         the table must be dropped first. The error class and the start and end of the message \
         are the service's as reported from real workspaces ('[CANNOT_CHANGE_DATASET_TYPE] \
         Cannot change the dataset type of a pipeline table from STREAMING_TABLE to \
         MATERIALIZED_VIEW ... To change the dataset type, please drop the existing dataset \
         first': ChiragVenkateshaiah/novalake docs/07-declarative-pipelines.md, Step 7.4 'Live \
         finding 3', a full redeploy and run failing until a DROP TABLE; the Caspers Kitchen \
         analytics pipeline's README: 'A full refresh does NOT help — the table must be \
         explicitly dropped'; dbt-databricks issue #561: a changed materialized view or \
         streaming table could not be refreshed without a drop); \
         the middle, naming the table and the fix, is ours. A dataset removed from the sources \
         stays as it is (no public word found that the service drops it). Python sources are \
         not read. Off: no dataset is published and no update fails for one",
    ),
    (
        Behaviour::SdpMetaReadsItsSources,
        "sdp_meta_reads_its_sources",
        "sdp-meta's onboarding wheel (python_wheel_task databricks_labs_sdp_meta, entry point \
         run, uc_enabled) writes its dataflowspec tables {database}.{bronze|silver}_dataflowspec_\
         table, MANAGED, one row per flow of the onboarding file (JSON, or YAML read through \
         the JSON copy <name>_yml_converted.json it writes next to it): overwrite = \"True\" \
         replaces the rows, anything else merges them on data_flow_id after reading the table, \
         so fails while it is not there (sdp-meta 0.1.0 onboard_dataflowspec.py l.1117-1177, \
         1202, 1222, 1377-1407, 2335, and l.928-949: saveAsTable in overwrite mode, else a \
         merge). A pipeline whose configuration names layer (bronze, silver \
         or bronze_silver) and <layer>.dataflowspecTable runs sdp-meta's runner, which reads \
         that table's rows of <layer>.group or <layer>.dataflowIds ('please provide \
         {layer}.group or {layer}.dataflowIds in spark.conf' without either; \
         dataflow_spec.py l.468): a bronze delta flow reads the table \
         {source_database}.{source_table} (pipeline_readers.py read_dlt_delta, l.78-96), a \
         silver flow its bronze table \
         (dataflow_pipeline.py get_silver_schema, the same readStream.table of the spec's \
         sourceDetails database and table), and a table that is not there, the spec table \
         too, fails the update (FAILED, the reason in its events and in the job task running \
         it) with Spark's '[TABLE_OR_VIEW_NOT_FOUND] The table or view `c`.`s`.`t` cannot be \
         found. Verify the spelling and correctness of the schema and catalog.' and its two \
         further lines, SQLSTATE 42P01 (apache/spark common/utils/src/main/resources/error/\
         error-conditions.json, TABLE_OR_VIEW_NOT_FOUND, l.7916-7924 as shipped in pyspark \
         4.3.0, whose text adds a newer 'Search path' line; a pipeline update failing with \
         it: apache/spark PR #52470, \"Failed to resolve flow: \
         'spark_catalog.default.rental_bike_trips'. Error: [TABLE_OR_VIEW_NOT_FOUND] The table \
         or view `spark_catalog`.`default`.`rental_bike_trips_raws` cannot be found. ... \
         SQLSTATE: 42P01\"; the same three lines from a Databricks workspace: \
         databricks-demos/dbdemos issue #114). A successful update sets up each selected \
         flow's target as a STREAMING_TABLE the pipeline owns, bronze before silver (silver \
         reading a bronze table the same update sets up resolves in its graph); in the legacy \
         publishing mode (target) every table lands in the pipeline's schema. Sources other than delta (cloudFiles, kafka, eventhub, snapshot) are not \
         checked, nor quarantine, _dq or append-flow tables set up. Off: onboarding writes \
         nothing and an update reads nothing",
    ),
    (
        Behaviour::NewWorkspaceMain,
        "new_workspace_main",
        "a new workspace starts with the Unity Catalog catalog main (MANAGED_CATALOG, owned by \
         the user who created the workspace) and its schemas default and information_schema, \
         and current-metastore-assignment names main as default_catalog_name: the Databricks \
         CLI's cloud acceptance tests create their schemas in \"the shared main catalog\" \
         (databricks/cli acceptance/bundle/deploy/mlops-stacks/script l.16-19; its local \
         test server libs/testserver does not seed it, and catalogs.go:57 gives a catalog its \
         creator as owner), the provider's docs examples use catalog main, every managed \
         catalog has default (terraform-provider-databricks docs/resources/catalog.md: \
         \"Databricks creates default schema for every new catalog\") and the read-only \
         information_schema (docs.databricks.com schemas/create-schema: \"Every Unity Catalog \
         catalog automatically includes a system-provided read-only INFORMATION_SCHEMA\"). It \
         is made once, when the workspace is created (or reset): a user who drops main keeps \
         it dropped. The owner is ours (no public word found on who owns a new main). Off \
         when the workspace is created (EmulatorConfig::behaviours, local serve --empty, or \
         off before POST /__emulator/reset): the workspace starts with no catalog",
    ),
    (
        Behaviour::RefuseOverlappingLocations,
        "refuse_overlapping_locations",
        "an external location whose url overlaps another's (the same path, or one under the \
         other) is refused with 400 INVALID_PARAMETER_VALUE 'Input path url URL overlaps with \
         an existing external location within 'CreateExternalLocation' call. Conflicting \
         location: NAME.' (UpdateExternalLocation for a changed url): the service's answer as \
         users quote it, and databrickslabs/ucx src/databricks/labs/ucx/azure/locations.py \
         (_create_location, PR #992) catches InvalidParameterValue whose message holds \
         'overlaps with an existing external location'. Off: any url is accepted",
    ),
    (
        Behaviour::SettingEtags,
        "setting_etags",
        "the default namespace setting (settings/types/default_namespace_ws/names/default) \
         changes its etag on every write; a PATCH or DELETE naming a stale etag is refused \
         with 409 RESOURCE_CONFLICT and a PATCH without one of a setting never set with 404 \
         NOT_FOUND, each with the current etag in a google.rpc.ErrorInfo detail's metadata, \
         and a GET of a setting never set (or deleted) answers 404 NOT_FOUND with the etag \
         the same way: terraform-provider-databricks settings/generic_setting.go \
         (retryOnEtagError retries once with getEtagFromError's etag, on ErrNotFound and \
         ErrResourceConflict for writes, ErrResourceConflict for DELETE), \
         settings/generic_setting_test.go (NOT_FOUND with etag1 on a first PATCH, \
         RESOURCE_CONFLICT with etag2), and PR #2710's review (\"409 (RESOURCE_CONFLICT) will \
         get raised from the API if there are concurrent writes\"; a GET of a setting not \
         set up answers an error with the etag in it). Unset, the default namespace is the \
         metastore assignment's default_catalog_name (the SDK: that field is deprecated, \
         \"use Default Namespace API\"). Off: any etag is accepted",
    ),
    (
        Behaviour::OneMetastoreAssignment,
        "one_metastore_assignment",
        "a workspace is assigned to one metastore: PUT \
         unity-catalog/workspaces/{workspace_id}/metastore overwrites its assignment (the \
         SDKs' Metastores.assign: \"If an assignment for the same workspace_id exists, it \
         will be overwritten by the new metastore_id and default_catalog_name\"), PATCH \
         changes it, DELETE ?metastore_id= removes it, after which \
         current-metastore-assignment and metastore_summary answer 404 \
         METASTORE_DOES_NOT_EXIST 'No metastore assigned for the current workspace.' (the \
         words the provider's catalog/data_current_metastore.go looks for). The local \
         workspace knows one metastore, its own: another metastore id is refused with 404 \
         METASTORE_DOES_NOT_EXIST (assumed: no public record of the answer), and so is \
         another workspace's id (the workspace API acts on its own workspace here). Off: any \
         metastore id is taken as the workspace's own",
    ),
];

/// Behaviours a test turns on when it wants them; [`Behaviours::default`] leaves them off.
pub const OFF_BY_DEFAULT: &[Behaviour] = &[Behaviour::NormaliseAnswers];

impl Behaviour {
    pub fn name(self) -> &'static str {
        BEHAVIOURS
            .iter()
            .find(|(b, _, _)| *b == self)
            .map_or("", |(_, n, _)| n)
    }

    pub fn from_name(name: &str) -> Option<Behaviour> {
        BEHAVIOURS
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(b, _, _)| *b)
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// Which behaviours are on. The default is all of them but [`OFF_BY_DEFAULT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Behaviours {
    on: u32,
}

impl Default for Behaviours {
    fn default() -> Self {
        OFF_BY_DEFAULT
            .iter()
            .fold(Behaviours::all(), |b, off| b.without(*off))
    }
}

impl Behaviours {
    /// Every behaviour, the opt-in ones too.
    pub fn all() -> Self {
        Behaviours {
            on: BEHAVIOURS.iter().fold(0, |acc, (b, _, _)| acc | b.bit()),
        }
    }

    /// No behaviour modelled: the emulator as kind as it can be.
    pub fn none() -> Self {
        Behaviours { on: 0 }
    }

    pub fn on(self, b: Behaviour) -> bool {
        self.on & b.bit() != 0
    }

    pub fn set(&mut self, b: Behaviour, on: bool) {
        if on {
            self.on |= b.bit();
        } else {
            self.on &= !b.bit();
        }
    }

    /// These behaviours with `b` turned on.
    pub fn with(mut self, b: Behaviour) -> Self {
        self.set(b, true);
        self
    }

    /// These behaviours with `b` turned off.
    pub fn without(mut self, b: Behaviour) -> Self {
        self.set(b, false);
        self
    }

    /// `{"name": true|false, …}` for every behaviour.
    pub fn to_json(self) -> Value {
        Value::Object(
            BEHAVIOURS
                .iter()
                .map(|(b, n, _)| ((*n).to_string(), Value::Bool(self.on(*b))))
                .collect(),
        )
    }

    /// Applies `{"name": bool, …}`. Validated whole before anything changes: an unknown
    /// name or a value that is not a boolean is an error naming what is accepted.
    pub fn apply(&mut self, changes: &Map<String, Value>) -> Result<(), BehaviourError> {
        let mut next = *self;
        for (k, v) in changes {
            let b = Behaviour::from_name(k)
                .ok_or_else(|| BehaviourError::Unknown { name: k.clone() })?;
            let on = v
                .as_bool()
                .ok_or_else(|| BehaviourError::NotABoolean { name: k.clone() })?;
            next.set(b, on);
        }
        *self = next;
        Ok(())
    }
}

/// Why `{"name": bool, …}` cannot be applied to the behaviours; the control API answers
/// it as a 400.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BehaviourError {
    /// No behaviour has the name: the message lists those that do.
    #[error("Unknown behaviour '{name}'. Known behaviours: {}", known_names())]
    Unknown { name: String },
    #[error("Invalid value for behaviour '{name}': expected true or false")]
    NotABoolean { name: String },
}

fn known_names() -> String {
    let known: Vec<&str> = BEHAVIOURS.iter().map(|(_, n, _)| *n).collect();
    known.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_unique_and_round_trip() {
        for (b, n, _) in BEHAVIOURS {
            assert_eq!(Behaviour::from_name(n), Some(*b));
            assert_eq!(b.name(), *n);
        }
        let all = Behaviours::all();
        assert!(BEHAVIOURS.iter().all(|(b, _, _)| all.on(*b)));
        assert!(
            BEHAVIOURS
                .iter()
                .all(|(b, _, _)| !Behaviours::none().on(*b))
        );
    }

    #[test]
    fn the_default_is_every_behaviour_but_the_opt_in_ones() {
        let d = Behaviours::default();
        for (b, n, _) in BEHAVIOURS {
            assert_eq!(d.on(*b), !OFF_BY_DEFAULT.contains(b), "{n}");
        }
        assert!(!d.on(Behaviour::NormaliseAnswers));
        assert!(
            d.with(Behaviour::NormaliseAnswers)
                .on(Behaviour::NormaliseAnswers)
        );
    }

    #[test]
    fn an_unknown_name_changes_nothing_and_names_the_known_ones() {
        let mut b = Behaviours::all();
        let changes = json!({"keep_run_as": false, "no_such": false});
        let err = b
            .apply(changes.as_object().unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'no_such'") && err.contains("async_pipeline_delete"),
            "{err}"
        );
        assert_eq!(b, Behaviours::all());
        let changes = json!({"keep_run_as": false});
        b.apply(changes.as_object().unwrap()).unwrap();
        assert!(!b.on(Behaviour::KeepRunAs));
        assert_eq!(b.to_json()["keep_run_as"], json!(false));
    }
}
