//! `data "databricks_sql_warehouses"`: the ids of the workspace's SQL warehouses, those whose
//! name contains `warehouse_name_contains` (in any case) when it is given
//! (terraform-provider-databricks sql/data_sql_warehouses.go: warehouses/list, ids sorted;
//! its `id` is `_`). A warehouse being deleted is not listed, as `databricks_sql_endpoint`
//! reads it as gone.

use crate::Shared;
use crate::resources::{err, sql_endpoint};
use async_trait::async_trait;
use brickform_core::provider::{AttrType, Attribute, DataSource, ProviderResult, Schema};
use brickform_core::value::{Object, Value};
use std::sync::Arc;

pub struct SqlWarehouses {
    schema: Schema,
    shared: Arc<Shared>,
}

impl SqlWarehouses {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe(
                "The ids of the workspace's SQL warehouses, optionally those whose name contains a text.",
            )
            .attr(
                Attribute::optional("warehouse_name_contains", AttrType::String)
                    .describe("Only warehouses whose name contains this text, in any case."),
            )
            .attr(
                Attribute::computed("ids", AttrType::Set(Box::new(AttrType::String)))
                    .describe("The warehouses' ids."),
            )
            .attr(
                Attribute::computed("id", AttrType::String)
                    .describe("Always `_`, as in the Terraform provider."),
            );
        SqlWarehouses { schema, shared }
    }
}

#[async_trait]
impl DataSource for SqlWarehouses {
    fn type_name(&self) -> &'static str {
        "databricks_sql_warehouses"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let client = self.shared.client()?;
        let all = sql_endpoint::list(&client).await.map_err(err)?;
        let contains = super::given(config, "warehouse_name_contains");
        let mut out = config.clone();
        out.insert(
            "ids".into(),
            Value::List(
                super::ids_named(&all, "name", "id", contains)
                    .into_iter()
                    .map(Value::from)
                    .collect(),
            ),
        );
        out.insert("id".into(), Value::from("_"));
        Ok(out)
    }
}
