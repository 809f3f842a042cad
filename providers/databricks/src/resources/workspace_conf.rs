//! `databricks_workspace_conf`: keys of the workspace's configuration
//! (`/api/2.0/workspace-conf`: `enableIpAccessLists`, `enableTokensConfig`,
//! `maxTokenLifetimeDays`, …), each a string.
//!
//! As the Terraform provider has it (terraform-provider-databricks
//! workspace/resource_workspace_conf.go): the id is `_`; a write PATCHes the configured
//! values, and a key the configuration stops setting is put back, to `false` when its last
//! value read as a boolean and to the empty string otherwise; a read asks for the keys last
//! applied, and leaves out the keys the service calls invalid (`Invalid keys: [...]`); a
//! destroy puts each key back the same way, one at a time, and a key the service will not
//! put back (`Some values are not allowed: {...}`: a flag or a number cannot be emptied)
//! keeps its value. There is no reading the whole configuration, so import is refused, as
//! the provider refuses it.

use super::err;
use crate::Shared;
use crate::client::ApiError;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, Claim, OpContext, ProviderError, ProviderResult, Remote, ResourceKind,
    Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Map, Value as Json};
use std::sync::Arc;

const PATH: &str = "/api/2.0/workspace-conf";
/// The Terraform provider's id of the resource.
const ID: &str = "_";

pub struct WorkspaceConf {
    schema: Schema,
    shared: Arc<Shared>,
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("Keys of the workspace's configuration (enableIpAccessLists, enableTokensConfig, maxTokenLifetimeDays, …), each a string. A key removed from custom_config, and every key at destroy, is put back to false (a boolean) or empty (anything else); a flag or number the service will not empty keeps its value. Two instances may not set the same key.")
        .attr(
            Attribute::required("custom_config", AttrType::Map(Box::new(AttrType::String)))
                .describe("The keys and their values (true and false for flags, a whole number as a string for a number)."),
        )
        .attr(Attribute::computed("id", AttrType::String).describe("Always _."))
}

impl WorkspaceConf {
    pub fn new(shared: Arc<Shared>) -> Self {
        WorkspaceConf {
            schema: schema(),
            shared,
        }
    }

    /// The values of `keys` now, leaving out those the service calls invalid.
    async fn status(&self, keys: &[String]) -> ProviderResult<Map<String, Json>> {
        let client = self.shared.client()?;
        let ask = |keys: &[String]| vec![("keys", keys.join(","))];
        match client.get(PATH, &ask(keys)).await {
            Ok(Json::Object(m)) => Ok(m),
            Ok(_) => Ok(Map::new()),
            Err(e) => {
                let Some(invalid) = listed_keys(&e, "Invalid keys: ") else {
                    return Err(err(e));
                };
                let valid: Vec<String> = keys
                    .iter()
                    .filter(|k| !invalid.contains(k))
                    .cloned()
                    .collect();
                if valid.is_empty() {
                    return Ok(Map::new());
                }
                match client.get(PATH, &ask(&valid)).await.map_err(err)? {
                    Json::Object(m) => Ok(m),
                    _ => Ok(Map::new()),
                }
            }
        }
    }

    fn remote(config: Object) -> Remote {
        let mut attrs = Object::default();
        attrs.insert("custom_config".into(), Value::object(config));
        attrs.insert("id".into(), Value::from(ID));
        Remote {
            id: ID.to_string(),
            attrs,
        }
    }

    /// PATCHes `values`; the keys of `removing` the service will not put back are sent
    /// again without them (they keep their value, no longer managed).
    async fn set(&self, values: Map<String, Json>, removing: &[String]) -> ProviderResult<()> {
        let client = self.shared.client()?;
        match client
            .idempotent()
            .patch(PATH, &Json::Object(values.clone()))
            .await
        {
            Ok(_) => Ok(()),
            Err(e) => {
                let refused = listed_keys(&e, "Some values are not allowed: ").unwrap_or_default();
                if refused.is_empty() || !refused.iter().all(|k| removing.contains(k)) {
                    return Err(err(e));
                }
                let rest: Map<String, Json> = values
                    .into_iter()
                    .filter(|(k, _)| !refused.contains(k))
                    .collect();
                if rest.is_empty() {
                    return Ok(());
                }
                client
                    .idempotent()
                    .patch(PATH, &Json::Object(rest))
                    .await
                    .map(|_| ())
                    .map_err(err)
            }
        }
    }

    async fn read_back(&self, config: &Object) -> ProviderResult<Remote> {
        let keys: Vec<String> = configured(config).keys().cloned().collect();
        let now = self.status(&keys).await?;
        Ok(Self::remote(held(&keys, &now)))
    }
}

/// The configured keys and their values as strings (as the provider sends them: a `true`
/// written in the configuration is `"true"`).
fn configured(config: &Object) -> Map<String, Json> {
    match config.get("custom_config") {
        Some(Value::Object(m)) => m
            .iter()
            .filter_map(|(k, v)| {
                let text = match v {
                    Value::String(s) => s.clone(),
                    Value::Null | Value::Unknown => return None,
                    other => other.to_json().to_string(),
                };
                Some((k.clone(), Json::String(text)))
            })
            .collect(),
        _ => Map::new(),
    }
}

/// The value that puts a key back: `false` for one whose value reads as a boolean, the
/// empty string otherwise (the provider's `applyWorkspaceConf` and `deleteWorkspaceConf`).
fn reset_value(value: &Value) -> Json {
    let boolean = match value {
        Value::Bool(_) => true,
        Value::String(s) => s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("false"),
        _ => false,
    };
    Json::String(if boolean { "false" } else { "" }.to_string())
}

/// The keys an error lists after `prefix`: a JSON array (`Invalid keys: ["a"]`) or the
/// keys of a JSON object (`Some values are not allowed: {"a":""}`).
fn listed_keys(e: &ApiError, prefix: &str) -> Option<Vec<String>> {
    let rest = e.message.strip_prefix(prefix)?;
    match serde_json::from_str::<Json>(rest).ok()? {
        Json::Array(items) => Some(
            items
                .iter()
                .filter_map(Json::as_str)
                .map(str::to_string)
                .collect(),
        ),
        Json::Object(m) => Some(m.keys().cloned().collect()),
        _ => None,
    }
}

/// What the service holds of `keys`, as a configuration map: a key it holds no value for
/// is null.
fn held(keys: &[String], now: &Map<String, Json>) -> Object {
    keys.iter()
        .map(|k| {
            let v = now.get(k).map_or(Value::Null, Value::from_json);
            (k.clone(), v)
        })
        .collect()
}

#[async_trait]
impl ResourceKind for WorkspaceConf {
    fn type_name(&self) -> &'static str {
        "databricks_workspace_conf"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Each key is the configuration's alone: two instances setting it would undo each
    /// other on every apply.
    fn claims(&self, config: &Object) -> Vec<Claim> {
        match config.get("custom_config") {
            Some(Value::Object(m)) => m
                .keys()
                .map(|k| Claim {
                    key: format!("workspace-conf/{k}"),
                    exclusive: true,
                    what: format!("the workspace configuration key {k}"),
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        self.set(configured(config), &[]).await?;
        self.read_back(config).await
    }

    async fn read(
        &self,
        _: &OpContext,
        _id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let keys: Vec<String> = match prior.get("custom_config") {
            Some(Value::Object(m)) => m.keys().cloned().collect(),
            _ => Vec::new(),
        };
        let now = self.status(&keys).await?;
        Ok(Some(Self::remote(held(&keys, &now))))
    }

    async fn import(&self, _: &OpContext, _id: &str) -> ProviderResult<Option<Remote>> {
        Err(ProviderError::invalid(
            "databricks_workspace_conf cannot be imported: the service lists no keys to read. Declare the keys in custom_config and apply: values already set are written again unchanged",
        ))
    }

    async fn update(
        &self,
        _: &OpContext,
        _id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let mut values = configured(config);
        let mut removing = Vec::new();
        if let Some(Value::Object(before)) = prior.get("custom_config") {
            for (k, v) in before.iter() {
                if !values.contains_key(k) {
                    values.insert(k.clone(), reset_value(v));
                    removing.push(k.clone());
                }
            }
        }
        self.set(values, &removing).await?;
        self.read_back(config).await
    }

    /// Each key put back on its own, in order, so one the service will not put back does
    /// not keep the others.
    async fn delete(&self, _: &OpContext, _id: &str, prior: &Object) -> ProviderResult<()> {
        let Some(Value::Object(before)) = prior.get("custom_config") else {
            return Ok(());
        };
        let mut keys: Vec<&String> = before.keys().collect();
        keys.sort();
        for k in keys {
            let one = Map::from_iter([(k.clone(), reset_value(&before[k]))]);
            self.set(one, std::slice::from_ref(k)).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brickform_core::provider::ErrorKind;
    use serde_json::json;

    fn api_error(message: &str) -> ApiError {
        ApiError {
            status: 400,
            error_code: "INVALID_REQUEST".into(),
            message: message.into(),
            kind: ErrorKind::InvalidInput,
            after_retry: false,
            maybe_sent: false,
            etag: None,
        }
    }

    #[test]
    fn values_go_as_strings_and_keys_go_back_to_false_or_empty() {
        let c = super::super::decoded(
            &schema(),
            json!({"custom_config": {"enableIpAccessLists": "true", "maxTokenLifetimeDays": "90"}}),
        );
        assert_eq!(
            Json::Object(configured(&c)),
            json!({"enableIpAccessLists": "true", "maxTokenLifetimeDays": "90"})
        );
        assert_eq!(reset_value(&Value::from("TRUE")), json!("false"));
        assert_eq!(reset_value(&Value::Bool(true)), json!("false"));
        assert_eq!(reset_value(&Value::from("90")), json!(""));
    }

    #[test]
    fn the_keys_an_error_names_are_read_from_either_form() {
        assert_eq!(
            listed_keys(&api_error("Invalid keys: [\"a\",\"b\"]"), "Invalid keys: "),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(
            listed_keys(
                &api_error("Some values are not allowed: {\"enableGp3\":\"\"}"),
                "Some values are not allowed: "
            ),
            Some(vec!["enableGp3".to_string()])
        );
        assert_eq!(
            listed_keys(&api_error("x is an invalid config key"), "Invalid keys: "),
            None
        );
    }

    #[test]
    fn two_instances_setting_one_key_claim_it_both() {
        let k = WorkspaceConf::new(Arc::new(Shared::default()));
        let c = super::super::decoded(
            &schema(),
            json!({"custom_config": {"enableTokensConfig": "true"}}),
        );
        let claims = k.claims(&c);
        assert_eq!(claims.len(), 1);
        assert!(claims[0].exclusive);
        assert_eq!(claims[0].key, "workspace-conf/enableTokensConfig");
    }
}
