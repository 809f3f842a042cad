//! What the IP Access Lists and Workspace Conf APIs do to the workspace state, apart from
//! HTTP.

use crate::errors::{ApiError, ApiResult};
use crate::store::{Ctx, State};
use axum::http::StatusCode;
use serde_json::{Map, Value, json};
use std::net::{IpAddr, Ipv4Addr};

/// "For all allow lists and block lists combined, the workspace supports a maximum of 1000
/// IP/CIDR values" (databricks-sdk-py service/settings.py, IpAccessListsAPI).
const MAX_ADDRESSES: usize = 1000;
/// The address requests reach the local workspace from: it serves loopback only.
const CALLER: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
/// The key that switches the lists on.
pub const ENABLE_LISTS: &str = "enableIpAccessLists";

/// What a workspace configuration key holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyType {
    Flag,
    Number,
    Text,
}

/// The keys the Workspace Conf API takes, with what each holds: the Terraform provider's
/// list of them (terraform-provider-databricks exporter/context.go, `workspaceConfKeys`,
/// whose zero values give the types) and `enableGp3`, which its resource's tests set
/// (workspace/resource_workspace_conf_test.go).
const KEYS: &[(&str, KeyType)] = &[
    ("enableIpAccessLists", KeyType::Flag),
    ("enableTokensConfig", KeyType::Flag),
    ("maxTokenLifetimeDays", KeyType::Number),
    ("maxUserInactiveDays", KeyType::Number),
    (
        "storeInteractiveNotebookResultsInCustomerAccount",
        KeyType::Flag,
    ),
    ("enableDeprecatedClusterNamedInitScripts", KeyType::Flag),
    ("enableDeprecatedGlobalInitScripts", KeyType::Flag),
    ("enforceWorkspaceViewAcls", KeyType::Flag),
    ("enforceUserIsolation", KeyType::Flag),
    ("enableProjectTypeInWorkspace", KeyType::Flag),
    ("enableWorkspaceFilesystem", KeyType::Flag),
    ("enableProjectsAllowList", KeyType::Flag),
    ("projectsAllowList", KeyType::Text),
    ("reposIpynbResultsExportPermissions", KeyType::Text),
    ("enable-X-Frame-Options", KeyType::Flag),
    ("enable-X-Content-Type-Options", KeyType::Flag),
    ("enable-X-XSS-Protection", KeyType::Flag),
    ("enableResultsDownloading", KeyType::Flag),
    ("enableUploadDataUis", KeyType::Flag),
    ("enableExportNotebook", KeyType::Flag),
    ("enableNotebookTableClipboard", KeyType::Flag),
    ("enableWebTerminal", KeyType::Flag),
    ("enableDbfsFileBrowser", KeyType::Flag),
    ("enableDatabricksAutologgingAdminConf", KeyType::Flag),
    ("mlflowRunArtifactDownloadEnabled", KeyType::Flag),
    ("mlflowModelServingEndpointCreationEnabled", KeyType::Flag),
    (
        "mlflowModelRegistryEmailNotificationsEnabled",
        KeyType::Flag,
    ),
    ("rStudioUserDefaultHomeBase", KeyType::Flag),
    ("enableVerboseAuditLogs", KeyType::Flag),
    ("enableEnforceImdsV2", KeyType::Flag),
    ("enableLibraryAndInitScriptOnSharedCluster", KeyType::Flag),
    ("enablePipelinesDataSample", KeyType::Flag),
    ("customerApprovedWSLoginExpirationTime", KeyType::Flag),
    ("enableLegacyNotebookVisualizations", KeyType::Text),
    ("enableJobViewAcls", KeyType::Flag),
    ("enforceClusterViewAcls", KeyType::Flag),
    ("enableGp3", KeyType::Flag),
];

fn key_type(key: &str) -> Option<KeyType> {
    KEYS.iter().find(|(k, _)| *k == key).map(|(_, t)| *t)
}

/// The service answers bad Workspace Conf requests with 400 `INVALID_REQUEST` (the
/// provider's tests above).
fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "INVALID_REQUEST", message)
}

/// `GET /workspace-conf?keys=a,b`: each key's value, null for one never set. Unknown keys
/// are refused all at once, as `Invalid keys: ["x","y"]`, which the provider parses to
/// ask again without them (workspace/resource_workspace_conf.go, parseInvalidKeysFromError).
pub fn conf_status(st: &State, keys: &str) -> ApiResult<Value> {
    let keys: Vec<&str> = keys
        .split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .collect();
    let unknown: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| key_type(k).is_none())
        .collect();
    if !unknown.is_empty() {
        return Err(bad_request(format!("Invalid keys: {}", json!(unknown))));
    }
    let mut out = Map::new();
    for k in keys {
        let v = st
            .access
            .workspace_conf
            .get(k)
            .map_or(Value::Null, |v| json!(v));
        out.insert(k.to_string(), v);
    }
    Ok(Value::Object(out))
}

/// `PATCH /workspace-conf {key: value, …}`: every value a string. A flag takes `true` or
/// `false` (any case) and a number a whole number: an empty value for either is refused
/// as `Some values are not allowed: {"enableGp3":""}` (the provider's tests), so putting
/// a flag back is writing `false`.
pub fn set_conf(st: &mut State, body: &Map<String, Value>) -> ApiResult<()> {
    let mut refused = Map::new();
    let mut values = Vec::new();
    for (k, v) in body {
        let Some(t) = key_type(k) else {
            return Err(bad_request(format!("{k} is an invalid config key")));
        };
        let Value::String(text) = v else {
            return Err(bad_request(format!(
                "the value of {k} is a string, not {v}"
            )));
        };
        let allowed = match t {
            KeyType::Flag => {
                text.eq_ignore_ascii_case("true") || text.eq_ignore_ascii_case("false")
            }
            KeyType::Number => text.parse::<u32>().is_ok(),
            KeyType::Text => true,
        };
        if !allowed {
            refused.insert(k.clone(), v.clone());
        }
        values.push((k.clone(), text.clone()));
    }
    if !refused.is_empty() {
        return Err(bad_request(format!(
            "Some values are not allowed: {}",
            Value::Object(refused)
        )));
    }
    if let Some(days) = body.get("maxTokenLifetimeDays").and_then(Value::as_str)
        && days.parse::<u32>().is_ok_and(|d| d == 0 || d > 730)
    {
        return Err(bad_request(format!(
            "maxTokenLifetimeDays must be between 1 and 730 days, got {days}"
        )));
    }
    let enabling = body
        .get(ENABLE_LISTS)
        .and_then(Value::as_str)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if enabling {
        let lists: Vec<&Map<String, Value>> = st.access.ip_access_lists.values().collect();
        blocks_caller(&lists)?;
    }
    for (k, v) in values {
        st.access.workspace_conf.insert(k, v);
    }
    Ok(())
}

fn lists_on(st: &State) -> bool {
    st.access
        .workspace_conf
        .get(ENABLE_LISTS)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// An IPv4 or IPv6 address, or a CIDR range of either.
struct Range {
    net: IpAddr,
    prefix: u8,
}

impl Range {
    fn parse(text: &str) -> Option<Range> {
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let net: IpAddr = addr.parse().ok()?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p.parse::<u8>().ok().filter(|p| *p <= max)?,
            None => max,
        };
        Some(Range { net, prefix })
    }

    fn contains(&self, ip: IpAddr) -> bool {
        match (self.net, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(n) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(n) & mask == u128::from(a) & mask
            }
            _ => false,
        }
    }
}

fn addresses(list: &Map<String, Value>) -> impl Iterator<Item = &str> {
    list.get("ip_addresses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// Refuses a set of lists that would block the caller: one in an enabled block list, or,
/// with an enabled allow list, in none of them (the order the API describes: block lists
/// first, then allow lists if there is any).
fn blocks_caller(lists: &[&Map<String, Value>]) -> ApiResult<()> {
    let enabled = lists
        .iter()
        .filter(|l| l.get("enabled").and_then(Value::as_bool) != Some(false));
    let (mut allow_lists, mut allowed, mut blocked) = (0, false, false);
    for l in enabled {
        let hit = addresses(l).any(|a| Range::parse(a).is_some_and(|r| r.contains(CALLER)));
        match l.get("list_type").and_then(Value::as_str) {
            Some("BLOCK") => blocked |= hit,
            _ => {
                allow_lists += 1;
                allowed |= hit;
            }
        }
    }
    if blocked || (allow_lists > 0 && !allowed) {
        return Err(ApiError::invalid_state(format!(
            "Your current IP {CALLER} will not be allowed to access the workspace under the current configuration"
        )));
    }
    Ok(())
}

fn missing(id: &str) -> ApiError {
    ApiError::not_found(
        "RESOURCE_DOES_NOT_EXIST",
        format!("Can't find an IP access list with id: {id}."),
    )
}

/// Checks a list's fields as a create (every field) or an update (those given) sends them,
/// and puts them into `list`.
fn put_fields(list: &mut Map<String, Value>, body: &Map<String, Value>) -> ApiResult<()> {
    if let Some(label) = body.get("label") {
        match label.as_str() {
            Some(l) if !l.trim().is_empty() => {}
            _ => {
                return Err(ApiError::invalid(
                    "label: the label of an IP access list cannot be empty",
                ));
            }
        }
        list.insert("label".into(), label.clone());
    }
    if let Some(t) = body.get("list_type") {
        if !matches!(t.as_str(), Some("ALLOW" | "BLOCK")) {
            return Err(ApiError::invalid(format!(
                "list_type: must be ALLOW or BLOCK, got {t}"
            )));
        }
        list.insert("list_type".into(), t.clone());
    }
    if let Some(a) = body.get("ip_addresses") {
        let Some(items) = a.as_array() else {
            return Err(ApiError::invalid(
                "ip_addresses: must be an array of strings",
            ));
        };
        for item in items {
            if item.as_str().and_then(Range::parse).is_none() {
                return Err(ApiError::invalid(format!(
                    "ip_addresses: {item} is not a valid IP address or CIDR range"
                )));
            }
        }
        list.insert("address_count".into(), json!(items.len()));
        list.insert("ip_addresses".into(), a.clone());
    }
    if let Some(e) = body.get("enabled") {
        if !e.is_boolean() {
            return Err(ApiError::invalid("enabled: must be a boolean"));
        }
        list.insert("enabled".into(), e.clone());
    }
    Ok(())
}

/// Checks the lists the workspace would hold after a write: at most 1000 addresses in all
/// (QUOTA_EXCEEDED), and, with the feature on, the caller not blocked (INVALID_STATE).
fn check_all(st: &State, id: &str, list: &Map<String, Value>) -> ApiResult<()> {
    let others = st
        .access
        .ip_access_lists
        .iter()
        .filter(|(k, _)| k.as_str() != id)
        .map(|(_, l)| l);
    let all: Vec<&Map<String, Value>> = others.chain(std::iter::once(list)).collect();
    let total: usize = all.iter().map(|l| addresses(l).count()).sum();
    if total > MAX_ADDRESSES {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "QUOTA_EXCEEDED",
            format!(
                "The IP access lists of a workspace hold at most {MAX_ADDRESSES} IP addresses and CIDR ranges in all; this write makes {total}"
            ),
        ));
    }
    if lists_on(st) {
        blocks_caller(&all)?;
    }
    Ok(())
}

pub fn create(st: &mut State, ctx: &Ctx, body: &Map<String, Value>) -> ApiResult<Value> {
    for k in ["label", "list_type"] {
        if !body.contains_key(k) {
            return Err(ApiError::invalid(format!("{k}: this field is required")));
        }
    }
    let id = uuid::Uuid::new_v4().to_string();
    let mut list = Map::new();
    list.insert("list_id".into(), json!(id));
    list.insert("ip_addresses".into(), json!([]));
    list.insert("address_count".into(), json!(0));
    list.insert("enabled".into(), json!(true));
    let fields: Map<String, Value> = body
        .iter()
        .filter(|(k, _)| k.as_str() != "enabled")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    put_fields(&mut list, &fields)?;
    list.insert("created_at".into(), json!(ctx.now));
    list.insert("updated_at".into(), json!(ctx.now));
    check_all(st, &id, &list)?;
    st.access.ip_access_lists.insert(id, list.clone());
    Ok(Value::Object(list))
}

pub fn get(st: &State, id: &str) -> ApiResult<Value> {
    st.access
        .ip_access_lists
        .get(id)
        .map(|l| Value::Object(l.clone()))
        .ok_or_else(|| missing(id))
}

pub fn list(st: &State) -> Value {
    let lists: Vec<Value> = st
        .access
        .ip_access_lists
        .values()
        .map(|l| Value::Object(l.clone()))
        .collect();
    json!({ "ip_access_lists": lists })
}

/// `PATCH` (the fields given) or `PUT` (every field: `whole`).
pub fn update(
    st: &mut State,
    ctx: &Ctx,
    id: &str,
    body: &Map<String, Value>,
    whole: bool,
) -> ApiResult<()> {
    let mut list = st
        .access
        .ip_access_lists
        .get(id)
        .cloned()
        .ok_or_else(|| missing(id))?;
    if whole {
        for k in ["label", "list_type", "enabled"] {
            if !body.contains_key(k) {
                return Err(ApiError::invalid(format!("{k}: this field is required")));
            }
        }
    }
    let fields: Map<String, Value> = body
        .iter()
        .filter(|(k, _)| k.as_str() != "ip_access_list_id")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    put_fields(&mut list, &fields)?;
    list.insert("updated_at".into(), json!(ctx.now));
    check_all(st, id, &list)?;
    st.access.ip_access_lists.insert(id.to_string(), list);
    Ok(())
}

pub fn delete(st: &mut State, id: &str) -> ApiResult<()> {
    st.access
        .ip_access_lists
        .remove(id)
        .map(|_| ())
        .ok_or_else(|| missing(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn ranges_hold_what_their_prefix_covers() {
        let r = |t: &str| Range::parse(t).map(|r| r.contains(CALLER));
        assert_eq!(r("127.0.0.1"), Some(true));
        assert_eq!(r("127.0.0.0/8"), Some(true));
        assert_eq!(r("0.0.0.0/0"), Some(true));
        assert_eq!(r("10.0.0.0/8"), Some(false));
        assert_eq!(r("::1"), Some(false));
        assert!(Range::parse("1.2.3.0/33").is_none());
        assert!(Range::parse("1.2.3").is_none());
        assert!(Range::parse("2001:db8::/32").is_some());
    }

    #[test]
    fn with_the_feature_on_a_list_that_locks_the_caller_out_is_refused() {
        let mut st = State::new("u@x", 0);
        let ctx = Ctx::for_test(0, 1);
        // Off: any list is taken.
        create(
            &mut st,
            &ctx,
            &body(json!({"label": "a", "list_type": "ALLOW", "ip_addresses": ["1.2.3.4"]})),
        )
        .unwrap();
        // Turning the feature on would lock the caller out.
        let on = body(json!({ENABLE_LISTS: "true"}));
        let e = set_conf(&mut st, &on).unwrap_err();
        assert_eq!(e.code, "INVALID_STATE");
        create(
            &mut st,
            &ctx,
            &body(json!({"label": "me", "list_type": "ALLOW", "ip_addresses": ["127.0.0.0/8"]})),
        )
        .unwrap();
        set_conf(&mut st, &on).unwrap();
        let e = create(
            &mut st,
            &ctx,
            &body(json!({"label": "b", "list_type": "BLOCK", "ip_addresses": ["127.0.0.1"]})),
        )
        .unwrap_err();
        assert_eq!(e.code, "INVALID_STATE");
        assert_eq!(st.access.ip_access_lists.len(), 2);
    }

    #[test]
    fn conf_keys_and_values_are_checked_as_the_service_does() {
        let mut st = State::new("u@x", 0);
        let e = set_conf(&mut st, &body(json!({"nope": "true"}))).unwrap_err();
        assert_eq!(e.message, "nope is an invalid config key");
        let e = set_conf(&mut st, &body(json!({"enableGp3": ""}))).unwrap_err();
        assert_eq!(
            e.message,
            "Some values are not allowed: {\"enableGp3\":\"\"}"
        );
        set_conf(
            &mut st,
            &body(json!({"enableTokensConfig": "true", "projectsAllowList": ""})),
        )
        .unwrap();
        assert_eq!(
            conf_status(&st, "enableTokensConfig,enableWebTerminal").unwrap(),
            json!({"enableTokensConfig": "true", "enableWebTerminal": null})
        );
        let e = conf_status(&st, "a,enableGp3,b").unwrap_err();
        assert_eq!(e.message, "Invalid keys: [\"a\",\"b\"]");
    }

    #[test]
    fn the_addresses_of_all_lists_are_bounded() {
        let mut st = State::new("u@x", 0);
        let ctx = Ctx::for_test(0, 1);
        let many: Vec<String> = (0..1001)
            .map(|i| format!("10.{}.{}.1", i / 250, i % 250))
            .collect();
        let e = create(
            &mut st,
            &ctx,
            &body(json!({"label": "a", "list_type": "BLOCK", "ip_addresses": many})),
        )
        .unwrap_err();
        assert_eq!(e.code, "QUOTA_EXCEEDED");
        assert!(st.access.ip_access_lists.is_empty());
    }
}
