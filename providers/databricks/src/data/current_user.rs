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
            )
            .attr(Attribute::computed("repos", AttrType::String).describe("/Repos/<user_name>"))
            .attr(
                Attribute::computed("external_id", AttrType::String)
                    .describe("The identity provider's id of the user, when it has one."),
            )
            .attr(
                Attribute::computed("workspace_url", AttrType::String)
                    .describe("The workspace brickform talks to."),
            )
            .attr(Attribute::computed("acl_principal_id", AttrType::String).describe(
                "users/<user_name>, or servicePrincipals/<application id> for a service principal: the principal in access control lists.",
            ));
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
        let mut out = Object::default();
        out.insert("id".into(), Value::from(s("id")));
        out.insert("user_name".into(), Value::from(user.as_str()));
        out.insert("display_name".into(), Value::from(s("displayName")));
        out.insert("home".into(), Value::from(format!("/Users/{user}")));
        out.insert("alphanumeric".into(), Value::from(alnum));
        out.insert("repos".into(), Value::from(format!("/Repos/{user}")));
        out.insert(
            "external_id".into(),
            me.get("externalId")
                .and_then(Json::as_str)
                .map_or(Value::Null, Value::from),
        );
        // The local workspace is named as the configuration names it: its URL changes with
        // every command.
        out.insert("workspace_url".into(), Value::from(self.shared.web_host()));
        // A service principal's user name is its application id, a UUID.
        let principal = if uuid::Uuid::parse_str(&user).is_ok() {
            format!("servicePrincipals/{user}")
        } else {
            format!("users/{user}")
        };
        out.insert("acl_principal_id".into(), Value::from(principal));
        Ok(out)
    }
}
