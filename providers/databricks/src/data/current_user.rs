//! `data "databricks_current_user"`: who brickform is talking as.

use crate::Shared;
use async_trait::async_trait;
use brickform_core::provider::{AttrType, Attribute, DataSource, ProviderResult, Schema};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::sync::Arc;

pub struct CurrentUser {
    schema: Schema,
    shared: Arc<Shared>,
}

impl CurrentUser {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe("The user or service principal brickform authenticates as.")
            .attr(Attribute::computed("id", AttrType::String))
            .attr(Attribute::computed("user_name", AttrType::String))
            .attr(Attribute::computed("display_name", AttrType::String))
            .attr(Attribute::computed("home", AttrType::String).describe("/Users/<user_name>"))
            .attr(
                Attribute::computed("alphanumeric", AttrType::String)
                    .describe("user_name with every non-alphanumeric character replaced by _"),
            );
        CurrentUser { schema, shared }
    }
}

#[async_trait]
impl DataSource for CurrentUser {
    fn type_name(&self) -> &'static str {
        "databricks_current_user"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, _config: &Object) -> ProviderResult<Object> {
        let client = self.shared.client()?;
        let me = client
            .get("/api/2.0/preview/scim/v2/Me", &[])
            .await
            .map_err(super::super::resources::err)?;
        let s = |k: &str| me.get(k).and_then(Json::as_str).unwrap_or("").to_string();
        let user = s("userName");
        let alnum: String = user
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let mut out = Object::new();
        out.insert("id".into(), Value::from(s("id")));
        out.insert("user_name".into(), Value::from(user.as_str()));
        out.insert("display_name".into(), Value::from(s("displayName")));
        out.insert("home".into(), Value::from(format!("/Users/{user}")));
        out.insert("alphanumeric".into(), Value::from(alnum));
        Ok(out)
    }
}
