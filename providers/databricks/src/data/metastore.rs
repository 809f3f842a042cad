//! `data "databricks_metastore"`: a Unity Catalog metastore, by `metastore_id` or `name`
//! (terraform-provider-databricks catalog/data_metastore.go, an account-level data source
//! there; here through the workspace API: `GET /api/2.1/unity-catalog/metastores/{id}`, or
//! the `metastores` list for a name, compared in any case). `metastore_info` is the
//! service's `MetastoreInfo`.

use crate::Shared;
use crate::resources::err;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, ProviderError, ProviderResult, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::sync::Arc;

pub struct Metastore {
    schema: Schema,
    shared: Arc<Shared>,
}

impl Metastore {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe("A Unity Catalog metastore, by metastore_id or name (exactly one).")
            .attr(Attribute::optional_computed("metastore_id", AttrType::String))
            .attr(Attribute::optional_computed("name", AttrType::String))
            .attr(Attribute::optional_computed("region", AttrType::String))
            .attr(Attribute::computed("id", AttrType::String).describe("The metastore's id."))
            .attr(
                Attribute::computed("metastore_info", AttrType::Any)
                    .describe("A list of one: the service's MetastoreInfo (metastore_info[0].name), with metastore_id, name, region, cloud, storage_root, storage_root_credential_id/_name, default_data_access_config_id, owner, delta_sharing_*, privilege_model_version, global_metastore_id, created_at/_by, updated_at/_by."),
            );
        Metastore { schema, shared }
    }
}

/// What a data source about one metastore answers, from its `MetastoreInfo`.
pub fn answered(info: &Json) -> Object {
    let s = |k: &str| info.get(k).map_or(Value::Null, Value::from_json);
    let mut out = Object::default();
    out.insert("id".into(), s("metastore_id"));
    out.insert("metastore_id".into(), s("metastore_id"));
    out.insert("name".into(), s("name"));
    out.insert("region".into(), s("region"));
    out.insert("metastore_info".into(), info_block(info));
    out
}

/// The provider's `metastore_info` is a block of one (`metastore_info[0].name`), so
/// configurations written for it index it.
pub fn info_block(info: &Json) -> Value {
    Value::List(vec![Value::from_json(info)])
}

#[async_trait]
impl DataSource for Metastore {
    fn type_name(&self) -> &'static str {
        "databricks_metastore"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let given = |k: &str| super::given(config, k);
        let (id, name, region) = (given("metastore_id"), given("name"), given("region"));
        let client = self.shared.client()?;
        let info = match (id, name, region) {
            (Some(id), None, None) => client
                .get(&format!("/api/2.1/unity-catalog/metastores/{id}"), &[])
                .await
                .map_err(err)?,
            (None, Some(_), None) | (None, None, Some(_)) => {
                let listed = client
                    .get("/api/2.1/unity-catalog/metastores", &[])
                    .await
                    .map_err(err)?;
                let (field, want) = match name {
                    Some(n) => ("name", n),
                    None => ("region", region.unwrap_or_default()),
                };
                let found: Vec<&Json> = listed
                    .get("metastores")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|m| {
                        m.get(field)
                            .and_then(Json::as_str)
                            .is_some_and(|v| v.eq_ignore_ascii_case(want))
                    })
                    .collect();
                match found.as_slice() {
                    [one] => (*one).clone(),
                    [] => {
                        return Err(ProviderError::not_found(format!(
                            "no metastore with {field} {want:?}"
                        )));
                    }
                    many => {
                        return Err(ProviderError::invalid(format!(
                            "{} metastores have {field} {want:?}: give its metastore_id",
                            many.len()
                        )));
                    }
                }
            }
            (None, None, None) => {
                return Err(ProviderError::invalid(
                    "one of metastore_id, name or region must be given",
                ));
            }
            _ => {
                return Err(ProviderError::invalid(
                    "only one of metastore_id, name or region may be given",
                ));
            }
        };
        Ok(answered(&info))
    }
}
