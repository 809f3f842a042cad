//! `databricks_ip_access_list`: addresses allowed to reach the workspace, or blocked from
//! it. The service assigns the id (`list_id`, also the resource's id); labels need not be
//! unique, so a list made by a create whose answer was lost cannot be told from another.
//!
//! As in the Terraform provider (terraform-provider-databricks
//! access/resource_ip_access_list.go): a create sends the label, the type and the
//! addresses (the create API has no `enabled`: a new list is enabled); an update PATCHes all
//! four; each address is an IPv4 address or a CIDR range; `enabled` defaults to true. The
//! lists take effect once `enableIpAccessLists` is set (`databricks_workspace_conf`), and
//! with it set the service refuses a write that would block the caller's own address
//! (INVALID_STATE: databricks-sdk-py service/settings.py, IpAccessListsAPI).

use super::{err, gone_ok, none_if_missing, str_attr};
use crate::Shared;
use async_trait::async_trait;
use brickform_core::provider::{
    AttrType, Attribute, Finding, OpContext, ProviderError, ProviderResult, Remote, ResourceKind,
    Schema,
};
use brickform_core::value::{Object, Value};
use serde_json::{Value as Json, json};
use std::sync::Arc;

const BASE: &str = "/api/2.0/ip-access-lists";
/// `settings.ListType`.
const LIST_TYPES: &[&str] = &["ALLOW", "BLOCK"];

pub struct IpAccessList {
    schema: Schema,
    shared: Arc<Shared>,
}

pub fn schema() -> Schema {
    Schema::new()
        .describe("An IP access list of the workspace: addresses allowed to reach it (ALLOW) or blocked from it (BLOCK). Lists take effect once the workspace configuration key enableIpAccessLists is true (databricks_workspace_conf); the service then refuses a list that would block your own address.")
        .attr(Attribute::required("label", AttrType::String).describe("The list's display name; not empty."))
        .attr(Attribute::required("list_type", AttrType::String).one_of(LIST_TYPES))
        .attr(
            Attribute::required("ip_addresses", AttrType::List(Box::new(AttrType::String)))
                .describe("IPv4 addresses and CIDR ranges; at most 1,000 across all the workspace's lists."),
        )
        .attr(
            Attribute::optional("enabled", AttrType::Bool)
                .server_default(true)
                .describe("Whether the list is in force; true when left out."),
        )
        .attr(Attribute::computed("id", AttrType::String).describe("The list's id (list_id)."))
}

impl IpAccessList {
    pub fn new(shared: Arc<Shared>) -> Self {
        IpAccessList {
            schema: schema(),
            shared,
        }
    }

    async fn get(&self, id: &str) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let got = none_if_missing(client.get(&format!("{BASE}/{id}"), &[]).await)?;
        Ok(got.and_then(|a| a.get("ip_access_list").map(remote)))
    }

    /// Writes every setting of the list (PATCH), and reads it back.
    async fn write(&self, id: &str, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let mut b = body(config);
        b["enabled"] = json!(enabled(config));
        client
            .idempotent()
            .patch(&format!("{BASE}/{id}"), &b)
            .await
            .map_err(err)?;
        self.get(id).await?.ok_or_else(|| {
            ProviderError::not_found(format!("IP access list {id} no longer exists"))
        })
    }
}

fn enabled(config: &Object) -> bool {
    config
        .get("enabled")
        .and_then(Value::as_bool)
        .unwrap_or(true)
}

/// The label, the type and the addresses, as both calls send them.
fn body(config: &Object) -> Json {
    let addresses: Vec<Json> = match config.get("ip_addresses") {
        Some(Value::List(items)) => items.iter().filter_map(super::json_of).collect(),
        _ => Vec::new(),
    };
    json!({
        "label": str_attr(config, "label").unwrap_or_default(),
        "list_type": str_attr(config, "list_type").unwrap_or_default(),
        "ip_addresses": addresses,
    })
}

fn remote(list: &Json) -> Remote {
    let id = list
        .get("list_id")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    let mut attrs = Object::default();
    for k in ["label", "list_type", "ip_addresses", "enabled"] {
        attrs.insert(k.into(), list.get(k).map_or(Value::Null, Value::from_json));
    }
    attrs.insert("id".into(), Value::from(id.as_str()));
    Remote { id, attrs }
}

/// An IPv4 address, or an IPv4 or IPv6 CIDR range: what the Terraform provider takes
/// (`validation.Any(validation.IsIPv4Address, validation.IsCIDR)`).
fn is_address(text: &str) -> bool {
    match text.split_once('/') {
        None => text.parse::<std::net::Ipv4Addr>().is_ok(),
        Some((addr, prefix)) => match addr.parse::<std::net::IpAddr>() {
            Ok(ip) => {
                let max = if ip.is_ipv4() { 32 } else { 128 };
                prefix.parse::<u8>().is_ok_and(|p| p <= max)
            }
            Err(_) => false,
        },
    }
}

#[async_trait]
impl ResourceKind for IpAccessList {
    fn type_name(&self) -> &'static str {
        "databricks_ip_access_list"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn check(&self, config: &Object) -> Vec<Finding> {
        let mut out = Vec::new();
        if str_attr(config, "label").is_some_and(|l| l.trim().is_empty()) {
            out.push(Finding::error(
                &["label"],
                "the label of an IP access list cannot be empty",
            ));
        }
        if let Some(Value::List(items)) = config.get("ip_addresses") {
            for (i, item) in items.iter().enumerate() {
                if let Value::String(a) = item
                    && !is_address(a)
                {
                    out.push(
                        Finding::error(
                            &["ip_addresses"],
                            format!("ip_addresses[{i}] = {a:?} is neither an IPv4 address nor a CIDR range"),
                        )
                        .hint("write an address as 10.0.0.1 and a range as 10.0.0.0/24"),
                    );
                }
            }
        }
        out
    }

    async fn create(&self, _: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let answer = client.post(BASE, &body(config)).await.map_err(err)?;
        let made = answer.get("ip_access_list").map(remote).ok_or_else(|| {
            ProviderError::not_found("the create of an IP access list answered no list")
        })?;
        // The create API has no `enabled`: a list to keep disabled is disabled next.
        if !enabled(config) {
            return self.write(&made.id, config).await;
        }
        Ok(made)
    }

    async fn read(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<Option<Remote>> {
        self.get(id).await
    }

    async fn update(
        &self,
        _: &OpContext,
        id: &str,
        _prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        self.write(id, config).await
    }

    async fn delete(&self, _: &OpContext, id: &str, _: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        gone_ok(
            client
                .idempotent()
                .delete(&format!("{BASE}/{id}"), &[])
                .await,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(config: Json) -> Vec<String> {
        super::super::check_messages(&IpAccessList::new(Arc::new(Shared::default())), config)
    }

    #[test]
    fn addresses_are_ipv4_addresses_or_cidr_ranges() {
        assert!(
            messages(json!({"label": "a", "list_type": "ALLOW", "ip_addresses": ["1.1.1.1", "1.2.3.0/24", "2001:db8::/32"]}))
                .is_empty()
        );
        let bad = messages(
            json!({"label": " ", "list_type": "ALLOW", "ip_addresses": ["1.2.3", "10.0.0.0/33", "::1"]}),
        );
        assert_eq!(bad.len(), 4, "{bad:?}");
        assert!(bad[0].contains("cannot be empty"), "{bad:?}");
        assert!(bad[1].contains("ip_addresses[0]"), "{bad:?}");
    }

    #[test]
    fn both_writes_send_the_list_and_an_update_its_state() {
        let c = super::super::decoded(
            &schema(),
            json!({"label": "office", "list_type": "BLOCK", "ip_addresses": ["10.0.0.1"]}),
        );
        assert_eq!(
            body(&c),
            json!({"label": "office", "list_type": "BLOCK", "ip_addresses": ["10.0.0.1"]})
        );
        assert!(enabled(&c));
        let r = remote(
            &json!({"list_id": "L", "label": "office", "list_type": "BLOCK", "ip_addresses": ["10.0.0.1"], "enabled": false, "address_count": 1}),
        );
        assert_eq!(r.id, "L");
        assert_eq!(r.attrs.get("enabled"), Some(&Value::Bool(false)));
        assert!(r.attrs.get("address_count").is_none());
    }
}
