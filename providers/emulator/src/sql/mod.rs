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
