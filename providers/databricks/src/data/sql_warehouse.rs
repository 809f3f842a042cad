//! `data "databricks_sql_warehouse"`: an existing SQL warehouse, by `name` or `id`, with
//! what the Terraform provider's data source exports (the warehouse's settings, its state,
//! JDBC and ODBC connection details and its data source id).

use crate::Shared;
use crate::resources::{err, sql_endpoint};
use async_trait::async_trait;
use brickform_core::diagnostics::did_you_mean;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, ProviderError, ProviderResult, Schema,
};
use brickform_core::value::Object;
use serde_json::Value as Json;
use std::sync::Arc;

pub struct SqlWarehouse {
    schema: Schema,
    /// The resource kind's schema, which reads the service's answer.
    reading: Schema,
    shared: Arc<Shared>,
}

impl SqlWarehouse {
    pub fn new(shared: Arc<Shared>) -> Self {
        let reading = sql_endpoint::schema();
        let mut schema = Schema::new()
            .describe("An existing SQL warehouse, by name or id.")
            .attr(
                Attribute::optional_computed("id", AttrType::String)
                    .describe("The warehouse's id; or give its name."),
            )
            .attr(
                Attribute::optional_computed("name", AttrType::String)
                    .describe("The warehouse's name (case-sensitive); or give its id."),
            );
        for a in reading
            .attributes
            .iter()
            .filter(|a| !matches!(a.name, "id" | "name" | "no_wait"))
        {
            let mut c = Attribute::computed(a.name, a.ty.clone());
            c.description = a.description;
            schema = schema.attr(c);
        }
        for b in &reading.blocks {
            schema =
                schema.attr(Attribute::computed(b.name, AttrType::Any).describe(b.description));
        }
        SqlWarehouse {
            schema,
            reading,
            shared,
        }
    }
}

#[async_trait]
impl DataSource for SqlWarehouse {
    fn type_name(&self) -> &'static str {
        "databricks_sql_warehouse"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let client = self.shared.client()?;
        let given = |k: &str| super::given(config, k);
        let warehouse: Json = match (given("id"), given("name")) {
            // One being deleted, or deleted, is read still but is gone all the same.
            (Some(id), _) => crate::resources::none_if_missing(
                client
                    .get(&format!("/api/2.0/sql/warehouses/{id}"), &[])
                    .await,
            )?
            .filter(|w| !sql_endpoint::deleted(w))
            .ok_or_else(|| {
                ProviderError::not_found(format!("can't find SQL warehouse with the ID '{id}'"))
            })?,
            (None, Some(name)) => {
                let all = sql_endpoint::list(&client).await.map_err(err)?;
                let named = |w: &&Json| w.get("name").and_then(Json::as_str) == Some(name);
                let mut matching: Vec<&Json> = all.iter().filter(named).collect();
                match matching.len() {
                    1 => matching.remove(0).clone(),
                    0 => return Err(not_found(name, &all)),
                    _ => {
                        return Err(ProviderError::invalid(format!(
                            "there are multiple SQL warehouses with the name '{name}'"
                        ))
                        .with_detail("give the warehouse's id instead"));
                    }
                }
            }
            (None, None) => {
                return Err(ProviderError::invalid(
                    "databricks_sql_warehouse: either 'id' or 'name' should be provided",
                ));
            }
        };
        let id = warehouse
            .get("id")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string();
        let ds = sql_endpoint::data_source_id(&client, &id).await;
        let read = sql_endpoint::remote(&self.reading, &warehouse, ds, &Object::default());
        Ok(read
            .attrs
            .into_iter()
            .filter(|(k, _)| self.schema.attribute(k).is_some())
            .collect())
    }
}

/// No warehouse of that name: the error names those that exist, and the closest one.
fn not_found(name: &str, all: &[Json]) -> ProviderError {
    let names: Vec<&str> = all
        .iter()
        .filter_map(|w| w.get("name").and_then(Json::as_str))
        .collect();
    let mut detail = if names.is_empty() {
        "the workspace has no SQL warehouses".to_string()
    } else {
        format!("the workspace's SQL warehouses: {}", names.join(", "))
    };
    if let Some(hint) = did_you_mean(name, names.iter().copied()) {
        detail = format!("{hint}\n{detail}");
    }
    ProviderError::not_found(format!("can't find SQL warehouse with the name '{name}'"))
        .with_detail(detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_missing_name_names_the_warehouses_and_the_closest() {
        let e = not_found(
            "Starter",
            &[json!({"name": "Starter Warehouse"}), json!({"name": "bi"})],
        );
        assert_eq!(
            e.message,
            "can't find SQL warehouse with the name 'Starter'"
        );
        let detail = e.detail.unwrap();
        assert!(
            detail.contains("the workspace's SQL warehouses: Starter Warehouse, bi"),
            "{detail}"
        );
        let e = not_found("x", &[]);
        assert_eq!(
            e.detail.as_deref(),
            Some("the workspace has no SQL warehouses")
        );
    }

    #[test]
    fn the_schema_takes_name_or_id_and_exports_the_rest() {
        let ds = SqlWarehouse::new(Arc::new(Shared::default()));
        for k in ["id", "name"] {
            assert!(
                ds.schema.attribute(k).is_some_and(|a| a.can_configure()),
                "{k}"
            );
        }
        for k in [
            "cluster_size",
            "state",
            "jdbc_url",
            "odbc_params",
            "data_source_id",
            "channel",
            "tags",
        ] {
            assert!(
                ds.schema.attribute(k).is_some_and(|a| a.is_computed_only()),
                "{k}"
            );
        }
        assert!(ds.schema.attribute("no_wait").is_none());
    }
}
