//! Data sources: read-only lookups, one file each.

pub mod catalog;
pub mod connection;
pub mod current_user;
pub mod node_type;
pub mod schema;
pub mod schemas;
pub mod spark_version;
pub mod sql_warehouse;
pub mod tables;
pub mod uc_listing;
pub mod uc_lookup;
pub mod volume_directory;
pub mod volumes;

use crate::Shared;
use brickform_core::provider::DataSource;
use std::sync::Arc;

pub fn all(shared: &Arc<Shared>) -> Vec<Arc<dyn DataSource>> {
    vec![
        Arc::new(current_user::CurrentUser::new(shared.clone())),
        Arc::new(catalog::lookup(shared.clone())),
        Arc::new(schema::lookup(shared.clone())),
        Arc::new(connection::lookup(shared.clone())),
        Arc::new(spark_version::SparkVersion::new(shared.clone())),
        Arc::new(node_type::NodeType::new(shared.clone())),
        Arc::new(schemas::listing(shared.clone())),
        Arc::new(tables::listing(shared.clone())),
        Arc::new(volumes::listing(shared.clone())),
        Arc::new(volume_directory::VolumeDirectory::new(shared.clone())),
        Arc::new(sql_warehouse::SqlWarehouse::new(shared.clone())),
    ]
}
