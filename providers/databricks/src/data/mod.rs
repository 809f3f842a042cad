//! Data sources: read-only lookups, one file each.

pub mod catalog;
pub mod connection;
pub mod current_user;
pub mod node_type;
pub mod schema;
pub mod spark_version;
pub mod uc_lookup;

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
    ]
}
