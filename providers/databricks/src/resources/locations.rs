//! The listings of what a container holds live (`ResourceKind::contents`), as the
//! locations of the places in it (see [`Place`]): a catalog's delete with force_destroy
//! takes what is under its location; so do a volume's and a folder's recursive delete, and
//! a secret scope's.

use super::none_if_missing;
use super::place::Place;
use crate::client::{Client, PageSize};
use crate::volume_path::VolumePath;
use brickform_core::fan_out;
use brickform_core::location::Location;

/// The page size of table lists (no kind of this provider manages tables): "server picks",
/// like the other securables' lists.
const TABLES_PAGE: PageSize = PageSize::new("max_results", "0");
use brickform_core::provider::ProviderResult;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::sync::Arc;

/// The secrets of a scope (a scope's delete takes them with it).
pub async fn scope_contents(client: &Client, scope: &str) -> ProviderResult<Vec<Location>> {
    let listed = none_if_missing(
        client
            .get("/api/2.0/secrets/list", &[("scope", scope.to_string())])
            .await,
    )?;
    Ok(listed
        .as_ref()
        .and_then(|l| l.get("secrets"))
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("key").and_then(Json::as_str))
        .map(|k| Place::secret(scope, Some(k)).into())
        .collect())
}

/// Every file under a folder of a volume (the volume itself for `/Volumes/c/s/v`), at any
/// depth.
pub async fn volume_files(client: &Client, dir: &VolumePath) -> ProviderResult<Vec<Location>> {
    let mut out = Vec::new();
    let mut todo = vec![dir.path()];
    while let Some(d) = todo.pop() {
        let listed = client.directory_list(&d).await.map_err(super::err)?;
        for entry in listed {
            let Some(path) = entry.get("path").and_then(Json::as_str) else {
                continue;
            };
            if entry.get("is_directory").and_then(Json::as_bool) == Some(true) {
                todo.push(path.trim_end_matches('/').to_string());
            } else if let Some(place) = Place::volume_path(path) {
                out.push(place.into());
            }
        }
    }
    Ok(out)
}

/// The tables of schemas as one plan listed them, shared by the data impacts of its
/// pipelines: pipelines publish into few schemas (100 pipelines into one is usual), and a
/// destroy's plan asked for the same listing once per pipeline, 100 calls where one does.
/// The listing answers as of one moment of the plan, as listings made one after another
/// would; the next plan lists again. A listing that failed is not kept.
#[derive(Default)]
pub struct PlanTables {
    round: std::sync::Mutex<(u64, HashMap<String, Arc<TablesCell>>)>,
}

type TablesCell = tokio::sync::OnceCell<Arc<Vec<Json>>>;

impl PlanTables {
    /// The tables of the schema `full_name` (`c.s`), listed once for the plan `plan`.
    async fn of(
        &self,
        plan: u64,
        client: &Client,
        full_name: &str,
    ) -> ProviderResult<Arc<Vec<Json>>> {
        let (cell, _) = self.cell(plan, full_name);
        list_into(&cell, client, full_name).await
    }

    /// The cell of the schema `full_name` in the plan `plan`, and whether this asked first.
    fn cell(&self, plan: u64, full_name: &str) -> (Arc<TablesCell>, bool) {
        let mut round = self
            .round
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if round.0 != plan {
            *round = (plan, HashMap::new());
        }
        let first = !round.1.contains_key(full_name);
        (
            round.1.entry(full_name.to_string()).or_default().clone(),
            first,
        )
    }

    /// The listings of those of `schemas` that no one in the plan `plan` has asked for yet,
    /// as work that makes them (see `ResourceKind::impact_ahead`); none when every one was.
    /// Each schema is asked for once however many pipelines publish into it, so the work
    /// started ahead does not hold calls in flight waiting for one listing.
    pub(crate) fn ahead(
        &self,
        plan: u64,
        client: Client,
        schemas: &[String],
    ) -> Option<brickform_core::provider::Ahead> {
        let cells: Vec<_> = schemas
            .iter()
            .filter_map(|s| {
                let (cell, first) = self.cell(plan, s);
                first.then(|| (s.clone(), cell))
            })
            .collect();
        (!cells.is_empty()).then(|| -> brickform_core::provider::Ahead {
            Box::pin(async move {
                for (full_name, cell) in cells {
                    // One that fails is not kept: the data impact lists again.
                    let _ = list_into(&cell, &client, &full_name).await;
                }
            })
        })
    }
}

/// The tables of the schema `full_name` in `cell`, listed unless they are there already.
async fn list_into(
    cell: &TablesCell,
    client: &Client,
    full_name: &str,
) -> ProviderResult<Arc<Vec<Json>>> {
    cell.get_or_try_init(|| async { tables_of(client, full_name).await.map(Arc::new) })
        .await
        .cloned()
}

/// The tables (full names) of the schemas `schemas` (`c.s`) that the pipeline `pipeline_id`
/// published: the service marks each table a pipeline defines with its `pipeline_id`. Each
/// schema's listing is the one `tables` holds for the plan `plan`.
pub async fn pipeline_tables(
    client: &Client,
    (tables, plan): (&PlanTables, u64),
    schemas: &[String],
    pipeline_id: &str,
) -> ProviderResult<Vec<String>> {
    let mut out = Vec::new();
    for full_name in schemas {
        out.extend(
            tables
                .of(plan, client, full_name)
                .await?
                .iter()
                .filter(|t| t.get("pipeline_id").and_then(Json::as_str) == Some(pipeline_id))
                .filter_map(|t| t.get("full_name").and_then(Json::as_str))
                .map(str::to_string),
        );
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Every table of a schema (`c.s`), as the service lists them; none when it is gone.
async fn tables_of(client: &Client, full_name: &str) -> ProviderResult<Vec<Json>> {
    let (catalog, schema) = full_name.split_once('.').unwrap_or((full_name, ""));
    let query = [
        ("catalog_name", catalog.to_string()),
        ("schema_name", schema.to_string()),
    ];
    Ok(none_if_missing(
        client
            .list_all(
                "/api/2.1/unity-catalog/tables",
                &query,
                "tables",
                Some(TABLES_PAGE),
            )
            .await,
    )?
    .unwrap_or_default())
}

/// The tables of a schema (`c.s`), its registered models, its volumes and the files in them.
pub async fn schema_contents(client: &Client, full_name: &str) -> ProviderResult<Vec<Location>> {
    let (catalog, schema) = full_name.split_once('.').unwrap_or((full_name, ""));
    let query = [
        ("catalog_name", catalog.to_string()),
        ("schema_name", schema.to_string()),
    ];
    let tables = tables_of(client, full_name).await?;
    let mut out: Vec<Location> = tables
        .iter()
        .filter_map(|t| t.get("full_name").and_then(Json::as_str))
        .map(|name| Place::unity_catalog(name).into())
        .collect();
    let volumes = none_if_missing(
        client
            .list_all(
                "/api/2.1/unity-catalog/volumes",
                &query,
                "volumes",
                super::volume::LIST_PAGE,
            )
            .await,
    )?
    .unwrap_or_default();
    // Its registered models: a forced delete of the schema takes them too.
    let models = none_if_missing(
        client
            .list_all(
                "/api/2.1/unity-catalog/models",
                &query,
                &super::uc::items_key("models"),
                super::registered_model::LIST_PAGE,
            )
            .await,
    )?
    .unwrap_or_default();
    out.extend(
        models
            .iter()
            .filter_map(|m| m.get("full_name").and_then(Json::as_str))
            .map(|name| Location::from(Place::unity_catalog(name))),
    );
    // The volumes' files, listed at once (a schema of 50 volumes is 50 listings).
    let mut dirs = Vec::new();
    for v in volumes {
        let Some(name) = v.get("full_name").and_then(Json::as_str) else {
            continue;
        };
        out.push(Place::unity_catalog(name).into());
        dirs.extend(VolumePath::of_volume(name));
    }
    let listed = fan_out::bounded("listing volumes", dirs, LISTINGS_IN_FLIGHT, |dir| {
        let client = client.clone();
        async move { volume_files(&client, &dir).await }
    });
    for files in listed.await {
        out.extend(files??);
    }
    Ok(out)
}

/// Listings made at once when a container's contents are read: the volumes of a schema,
/// and the schemas of a catalog (so up to 30 calls in flight, which the client's limiter
/// paces).
const LISTINGS_IN_FLIGHT: usize = 10;
const SCHEMAS_IN_FLIGHT: usize = 3;

/// The schemas of a catalog, their tables and volumes, and the files in the volumes. The service's own
/// `information_schema` goes with the catalog and is nobody's to manage.
pub async fn catalog_contents(client: &Client, catalog: &str) -> ProviderResult<Vec<Location>> {
    let schemas = none_if_missing(
        client
            .list_all(
                "/api/2.1/unity-catalog/schemas",
                &[("catalog_name", catalog.to_string())],
                "schemas",
                Some(super::schema::LIST_PAGE),
            )
            .await,
    )?
    .unwrap_or_default();
    let mut out = Vec::new();
    // A few schemas at once, each listing its volumes at once: a catalog of ten schemas is
    // not ten schemas' listings one after another.
    let mut names = Vec::new();
    for s in schemas {
        let Some(name) = s.get("full_name").and_then(Json::as_str) else {
            continue;
        };
        if name.ends_with(".information_schema") {
            continue;
        }
        out.push(Place::unity_catalog(name).into());
        names.push(name.to_string());
    }
    let listed = fan_out::bounded("listing schemas", names, SCHEMAS_IN_FLIGHT, |name| {
        let client = client.clone();
        async move { schema_contents(&client, &name).await }
    });
    for contents in listed.await {
        out.extend(contents??);
    }
    Ok(out)
}

/// Every object under a workspace folder, at any depth.
pub async fn workspace_tree(client: &Client, dir: &str) -> ProviderResult<Vec<Location>> {
    Ok(workspace_objects(client, dir)
        .await?
        .iter()
        .filter_map(|o| o.get("path").and_then(Json::as_str))
        .map(|path| Place::workspace(path).into())
        .collect())
}

/// The listing entries (`path`, `object_type`, `language`, …) of every object under a
/// workspace folder, at any depth; none when the folder is not there.
pub async fn workspace_objects(client: &Client, dir: &str) -> ProviderResult<Vec<Json>> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_string()];
    while let Some(d) = todo.pop() {
        let listed = none_if_missing(
            client
                .get("/api/2.0/workspace/list", &[("path", d.clone())])
                .await,
        )?;
        let objects = listed
            .as_ref()
            .and_then(|l| l.get("objects"))
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default();
        for o in objects {
            let Some(path) = o.get("path").and_then(Json::as_str) else {
                continue;
            };
            if o.get("object_type").and_then(Json::as_str) == Some("DIRECTORY") {
                todo.push(path.to_string());
            }
            out.push(o);
        }
    }
    Ok(out)
}
