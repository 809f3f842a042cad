//! Databricks SQL objects: queries (`/api/2.0/sql/queries`), alerts (`/api/2.0/sql/alerts`)
//! and AI/BI (Lakeview) dashboards (`/api/2.0/lakeview/dashboards`, with their published
//! version under `…/{id}/published`). [`model`] is what the APIs do to the state, [`routes`]
//! the HTTP side.
//!
//! Each object is held as the service answers it. A delete moves it to the trash: it is
//! still read (with `lifecycle_state` TRASHED) and no longer listed (databricks-sdk-go
//! service/sql/api.go, Queries.Delete: "Trashed queries immediately disappear from searches
//! and list views"; databricks/cli libs/testserver/dashboards.go, DashboardTrash).

mod model;
mod routes;

pub use routes::routes;

use crate::journal::{Journaled, Tracked, journaled};
use crate::store::Domain;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What Databricks SQL objects keep in the workspace state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tables {
    /// Databricks SQL objects as answered, by `queries/ID`, `alerts/ID`, `dashboards/ID`,
    /// and a dashboard's published version by `published/ID` (files written before had
    /// none).
    #[serde(default)]
    pub sql_objects: Tracked<String, Map<String, Value>>,
}

impl Domain for Tables {
    fn journaled(&mut self) -> impl Iterator<Item = (&'static str, &mut dyn Journaled)> {
        journaled!(self, sql_objects)
    }
}
