//! SQL warehouses (`/api/2.0/sql/warehouses`) and the data sources Databricks SQL binds
//! queries to (`/api/2.0/preview/sql/data_sources`): [`model`] is what the API does to the
//! state, [`routes`] the HTTP side.
//!
//! A warehouse's power state moves with time, as job runs and pipeline updates do: it is
//! STARTING until `until`, then RUNNING; RUNNING and idle for `auto_stop_mins` it stops;
//! STOPPING until `until`, then STOPPED. The clock hook ([`advance`]) applies those moves
//! whenever the workspace is read. A deleted warehouse is DELETING, holding its name, until
//! `until`, then DELETED until it is purged (`async_warehouse_delete`).

mod model;
mod routes;

pub use model::{advance, is_deleted, use_for_query};
pub use routes::routes;

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::Domain;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What SQL warehouses keep in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    /// SQL warehouses by id (files written before had none).
    #[serde(default)]
    pub warehouses: Tracked<String, Warehouse>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, warehouses)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Warehouse {
    pub id: String,
    /// The settings as the service reports them (its defaults filled in): `name`,
    /// `cluster_size`, `min_num_clusters`, … Replaced whole by an edit.
    pub spec: Map<String, Value>,
    pub creator_name: String,
    /// The id of the Databricks SQL data source that stands for the warehouse: a different
    /// id from the warehouse's, made with it.
    pub data_source_id: String,
    /// STARTING, RUNNING, STOPPING or STOPPED; DELETING, then DELETED once deleted (see
    /// `async_warehouse_delete`).
    pub state: String,
    /// When a STARTING, STOPPING or DELETING warehouse gets to RUNNING, STOPPED or DELETED,
    /// and when a DELETED one is purged.
    pub until: i64,
    /// Since when a RUNNING warehouse has run nothing: auto-stop counts from here.
    pub idle_since: i64,
}
