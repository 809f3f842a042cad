//! Data sources: read-only lookups, one file each.

pub mod catalog;
pub mod connection;
pub mod current_user;
pub mod schema;
pub mod sql_warehouse;
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
        Arc::new(sql_warehouse::SqlWarehouse::new(shared.clone())),
    ]
}
