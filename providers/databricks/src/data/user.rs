//! `data "databricks_user"`: a user by user name or SCIM id, as the Terraform provider reads
//! it (terraform-provider-databricks scim/data_user.go): `alphanumeric` is the part of the
//! user name before `@`, lower-cased, every other character `_`.

use crate::Shared;
use crate::resources::scim::{filter, get};
use crate::resources::str_attr;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, ProviderError, ProviderResult, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::sync::Arc;

pub struct User {
    schema: Schema,
    shared: Arc<Shared>,
}

impl User {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe("A user by user_name or user_id (its SCIM id).")
            .attr(Attribute::optional_computed("user_name", AttrType::String))
            .attr(Attribute::optional_computed("user_id", AttrType::String))
            .attr(Attribute::computed("id", AttrType::String))
            .attr(Attribute::computed("display_name", AttrType::String))
            .attr(Attribute::computed("home", AttrType::String))
            .attr(Attribute::computed("repos", AttrType::String))
            .attr(Attribute::computed("alphanumeric", AttrType::String))
            .attr(Attribute::computed("external_id", AttrType::String))
            .attr(Attribute::computed("application_id", AttrType::String))
            .attr(Attribute::computed("acl_principal_id", AttrType::String))
            .attr(Attribute::computed("active", AttrType::Bool));
        User { schema, shared }
    }
}

/// `first.last@x.com` → `first_last` (data_user.go: the part before `@`, lower-cased).
pub fn alphanumeric(user: &str) -> String {
    user.split('@')
        .next()
        .unwrap_or(user)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect::<String>()
        .to_ascii_lowercase()
}

#[async_trait]
impl DataSource for User {
    fn type_name(&self) -> &'static str {
        "databricks_user"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let found = match (str_attr(config, "user_id"), str_attr(config, "user_name")) {
            (Some(id), _) => get(&self.shared, "Users", id).await?,
            (None, Some(name)) => filter(&self.shared, "Users", "userName", name)
                .await?
                .into_iter()
                .next(),
            (None, None) => {
                return Err(ProviderError::invalid("set one of user_name and user_id"));
            }
        };
        let Some(u) = found else {
            let which = str_attr(config, "user_id")
                .or_else(|| str_attr(config, "user_name"))
                .unwrap_or("");
            return Err(ProviderError::not_found(format!(
                "cannot find user {which}"
            )));
        };
        let s = |k: &str| {
            u.get(k)
                .and_then(Json::as_str)
                .map_or(Value::Null, Value::from)
        };
        let user = u
            .get("userName")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        let mut out = config.clone();
        out.insert("id".into(), s("id"));
        out.insert("user_id".into(), s("id"));
        out.insert("user_name".into(), Value::from(user.as_str()));
        out.insert("display_name".into(), s("displayName"));
        out.insert("home".into(), Value::from(format!("/Users/{user}")));
        out.insert("repos".into(), Value::from(format!("/Repos/{user}")));
        out.insert("alphanumeric".into(), Value::from(alphanumeric(&user)));
        out.insert("external_id".into(), s("externalId"));
        out.insert("application_id".into(), s("applicationId"));
        out.insert(
            "acl_principal_id".into(),
            Value::from(format!("users/{user}")),
        );
        out.insert(
            "active".into(),
            Value::Bool(u.get("active").and_then(Json::as_bool).unwrap_or(true)),
        );
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn alphanumeric_is_the_lower_cased_local_part() {
        assert_eq!(super::alphanumeric("First.Last@x.com"), "first_last");
    }
}
