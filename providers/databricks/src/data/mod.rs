//! Data sources: read-only lookups, one file each.

pub mod catalog;
pub mod cluster;
pub mod clusters;
pub mod connection;
pub mod current_metastore;
pub mod current_user;
pub mod external_location;
pub mod external_locations;
pub mod group;
pub mod metastore;
pub mod mlflow_experiment;
pub mod mlflow_model;
pub mod node_type;
pub mod registered_model;
pub mod schema;
pub mod schemas;
pub mod service_principal;
pub mod spark_version;
pub mod sql_warehouse;
pub mod sql_warehouses;
pub mod storage_credential;
pub mod storage_credentials;
pub mod tables;
pub mod uc_listing;
pub mod uc_lookup;
pub mod user;
pub mod views;
pub mod volume_directory;
pub mod volumes;

use crate::Shared;
use brickform_core::provider::{DataSource, ProviderResult};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::sync::Arc;

/// The array `key` of what `GET path` answers, empty when the answer has none: the runtimes
/// and node types a workspace lists in one call each.
async fn listed(shared: &Shared, path: &str, key: &str) -> ProviderResult<Vec<Json>> {
    let answer = shared
        .client()?
        .get(path, &[])
        .await
        .map_err(crate::resources::err)?;
    Ok(match answer {
        Json::Object(mut o) => match o.remove(key) {
            Some(Json::Array(items)) => items,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    })
}

/// What a data source that chooses one value answers: its arguments and the `id` chosen.
fn chosen(config: &Object, id: String) -> Object {
    let mut out = config.clone();
    out.insert("id".into(), Value::from(id));
    out
}

pub fn all(shared: &Arc<Shared>) -> Vec<Arc<dyn DataSource>> {
    vec![
        Arc::new(current_user::CurrentUser::new(shared.clone())),
        Arc::new(catalog::lookup(shared.clone())),
        Arc::new(schema::lookup(shared.clone())),
        Arc::new(connection::lookup(shared.clone())),
        Arc::new(storage_credential::lookup(shared.clone())),
        Arc::new(external_location::lookup(shared.clone())),
        Arc::new(storage_credentials::listing(shared.clone())),
        Arc::new(external_locations::listing(shared.clone())),
        Arc::new(metastore::Metastore::new(shared.clone())),
        Arc::new(current_metastore::CurrentMetastore::new(shared.clone())),
        Arc::new(spark_version::SparkVersion::new(shared.clone())),
        Arc::new(node_type::NodeType::new(shared.clone())),
        Arc::new(schemas::listing(shared.clone())),
        Arc::new(tables::listing(shared.clone())),
        Arc::new(views::listing(shared.clone())),
        Arc::new(volumes::listing(shared.clone())),
        Arc::new(volume_directory::VolumeDirectory::new(shared.clone())),
        Arc::new(sql_warehouse::SqlWarehouse::new(shared.clone())),
        Arc::new(sql_warehouses::SqlWarehouses::new(shared.clone())),
        Arc::new(cluster::Cluster::new(shared.clone())),
        Arc::new(clusters::Clusters::new(shared.clone())),
        Arc::new(group::Group::new(shared.clone())),
        Arc::new(user::User::new(shared.clone())),
        Arc::new(service_principal::ServicePrincipal::new(shared.clone())),
        Arc::new(mlflow_experiment::MlflowExperiment::new(shared.clone())),
        Arc::new(mlflow_model::MlflowModel::new(shared.clone())),
        Arc::new(registered_model::RegisteredModel::new(shared.clone())),
    ]
}

/// The ids (`id_field`) of the listed objects whose name (`name_field`) contains `contains`
/// in any case, all of them with none, sorted: the listing data sources answer a set, in
/// one order whatever order the service lists in (terraform-provider-databricks
/// clusters/data_clusters.go and sql/data_sql_warehouses.go both lower-case both sides).
pub(crate) fn ids_named(
    all: &[serde_json::Value],
    name_field: &str,
    id_field: &str,
    contains: Option<&str>,
) -> Vec<String> {
    let contains = contains.map(str::to_lowercase);
    let mut out: Vec<String> = all
        .iter()
        .filter(|o| {
            contains.as_deref().is_none_or(|part| {
                o.get(name_field)
                    .and_then(serde_json::Value::as_str)
                    .is_some_and(|n| n.to_lowercase().contains(part))
            })
        })
        .filter_map(|o| {
            o.get(id_field)
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        })
        .collect();
    out.sort();
    out
}

pub(crate) use crate::resources::given;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_name_part_filters_in_any_case_and_ids_are_sorted() {
        let all = [
            json!({"cluster_id": "b", "cluster_name": "Shared BI"}),
            json!({"cluster_id": "a", "cluster_name": "etl"}),
            json!({"cluster_name": "no id"}),
        ];
        let ids = |c| ids_named(&all, "cluster_name", "cluster_id", c);
        assert_eq!(ids(None), ["a", "b"]);
        assert_eq!(ids(Some("bi")), ["b"]);
        assert_eq!(ids(Some("SHARED")), ["b"]);
        assert!(ids(Some("ml")).is_empty());
    }
}
