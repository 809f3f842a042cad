//! `data "databricks_service_principal"`: a service principal by application id, SCIM id
//! or display name, as the Terraform provider reads it
//! (terraform-provider-databricks scim/data_service_principal.go: one of the three, a
//! display name held by several is an error).

use crate::Shared;
use crate::resources::scim::filter;
use crate::resources::str_attr;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, DataSource, ProviderError, ProviderResult, Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::Value as Json;
use std::sync::Arc;

pub struct ServicePrincipal {
    schema: Schema,
    shared: Arc<Shared>,
}

impl ServicePrincipal {
    pub fn new(shared: Arc<Shared>) -> Self {
        let schema = Schema::new()
            .describe("A service principal by application_id, scim_id or display_name.")
            .attr(Attribute::optional_computed(
                "application_id",
                AttrType::String,
            ))
            .attr(Attribute::optional_computed(
                "display_name",
                AttrType::String,
            ))
            .attr(Attribute::optional_computed("scim_id", AttrType::String))
            .attr(Attribute::computed("id", AttrType::String))
            .attr(Attribute::computed("sp_id", AttrType::String))
            .attr(Attribute::computed("home", AttrType::String))
            .attr(Attribute::computed("repos", AttrType::String))
            .attr(Attribute::computed("active", AttrType::Bool))
            .attr(Attribute::computed("external_id", AttrType::String))
            .attr(Attribute::computed("acl_principal_id", AttrType::String));
        ServicePrincipal { schema, shared }
    }
}

#[async_trait]
impl DataSource for ServicePrincipal {
    fn type_name(&self) -> &'static str {
        "databricks_service_principal"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    async fn read(&self, config: &Object) -> ProviderResult<Object> {
        let (attr, value, what) = match (
            str_attr(config, "application_id"),
            str_attr(config, "scim_id"),
            str_attr(config, "display_name"),
        ) {
            (Some(a), _, _) => ("applicationId", a, "an application ID"),
            (None, Some(i), _) => ("id", i, "an ID"),
            (None, None, Some(d)) => ("displayName", d, "name"),
            _ => {
                return Err(ProviderError::invalid(
                    "please specify either application_id, display_name, or scim_id",
                ));
            }
        };
        let found = filter(&self.shared, "ServicePrincipals", attr, value).await?;
        let sp = match found.as_slice() {
            [] => {
                return Err(ProviderError::not_found(format!(
                    "cannot find SP with {what} {value}"
                )));
            }
            [one] => one,
            many => {
                return Err(ProviderError::invalid(format!(
                    "there are {} Service Principals with name {value}",
                    many.len()
                )));
            }
        };
        let s = |k: &str| {
            sp.get(k)
                .and_then(Json::as_str)
                .map_or(Value::Null, Value::from)
        };
        let app = sp
            .get("applicationId")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        let mut out = config.clone();
        out.insert("id".into(), s("id"));
        out.insert("sp_id".into(), s("id"));
        out.insert("scim_id".into(), s("id"));
        out.insert("application_id".into(), Value::from(app.as_str()));
        out.insert("display_name".into(), s("displayName"));
        out.insert("home".into(), Value::from(format!("/Users/{app}")));
        out.insert("repos".into(), Value::from(format!("/Repos/{app}")));
        out.insert(
            "active".into(),
            Value::Bool(sp.get("active").and_then(Json::as_bool).unwrap_or(true)),
        );
        out.insert("external_id".into(), s("externalId"));
        out.insert(
            "acl_principal_id".into(),
            Value::from(format!("servicePrincipals/{app}")),
        );
        Ok(out)
    }
}
