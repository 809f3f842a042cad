//! `data "databricks_current_metastore"`: the metastore the workspace is assigned to
//! (`GET /api/2.1/unity-catalog/metastore_summary`), as terraform-provider-databricks
//! catalog/data_current_metastore.go: a workspace with none answers the id `no_metastore`
//! and no `metastore_info`.

use crate::Shared;
use crate::resources::err;
use async_trait::async_trait;
use brickform_core::provider::{AttrType, Attribute, DataSource, ProviderResult, Schema};
use brickform_core::value::{Object, Value};
use std::sync::Arc;

pub struct CurrentMetastore {
    schema: Schema,
    shared: Arc<Shared>,
}

impl CurrentMetastore {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe("The Unity Catalog metastore the workspace is assigned to.")
            .attr(
                Attribute::computed("id", AttrType::String)
                    .describe("The metastore's id; no_metastore when the workspace has none."),
            )
            .attr(
                Attribute::computed("metastore_info", AttrType::Any)
                    .describe("A list of one: the service's metastore summary (metastore_info[0].name; metastore_id, name, region, cloud, storage_root, owner, …)."),
            );
        CurrentMetastore { schema, shared }
    }
}

#[async_trait]
impl DataSource for CurrentMetastore {
    fn type_name(&self) -> &'static str {
        "databricks_current_metastore"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, _config: &Object) -> ProviderResult<Object> {
        let client = self.shared.client()?;
        let mut out = Object::default();
        match client
            .get("/api/2.1/unity-catalog/metastore_summary", &[])
            .await
        {
            Ok(summary) => {
                let id = summary
                    .get("metastore_id")
                    .map_or(Value::Null, Value::from_json);
                out.insert("id".into(), id);
                out.insert(
                    "metastore_info".into(),
                    super::metastore::info_block(&summary),
                );
            }
            // The provider's test for a workspace without a metastore, word for word.
            Err(e)
                if e.message
                    .contains("No metastore assigned for the current workspace") =>
            {
                out.insert("id".into(), Value::from("no_metastore"));
                out.insert("metastore_info".into(), Value::Null);
            }
            Err(e) => return Err(err(e)),
        }
        Ok(out)
    }
}
