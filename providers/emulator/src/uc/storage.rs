//! Unity Catalog storage: storage credentials (the cloud identity Unity Catalog reaches
//! storage with) and external locations (a storage path and the credential that reaches it).
//!
//! Both are top-level securables of the metastore, keyed by their lower-cased name, and share
//! the securables table's get, list, update and delete. What is theirs: a credential holds
//! exactly one cloud identity, whose write-only secret (an Azure service principal's
//! `client_secret`) is never stored nor answered; a location needs an existing credential
//! and a url that overlaps no other location's; a credential that locations use is deleted
//! only with `force`.

use super::model::audit;
use super::securables::{Changes, Kind, securable};
use crate::behaviours::Behaviour;
use crate::body::Obj;
use crate::errors::{ApiError, ApiResult};
use crate::store::{Ctx, State};
use crate::util::{compact, s, uc_name};
use serde_json::{Map, Value, json};

/// Request paths whose bodies may carry a credential's write-only secret.
pub const STORAGE_CREDENTIALS_PATH: &str = "/api/2.1/unity-catalog/storage-credentials";
pub const CREDENTIALS_PATH: &str = "/api/2.1/unity-catalog/credentials";

/// `CredentialPurpose`: what a credential of the Credentials API is for.
pub const PURPOSES: &[&str] = &["STORAGE", "SERVICE"];

/// `IsolationMode` of the SDK's catalog service, as credentials and locations take it.
pub const ISOLATION_MODES: &[&str] = &["ISOLATION_MODE_OPEN", "ISOLATION_MODE_ISOLATED"];

/// The cloud identities a credential may hold, exactly one (`CreateStorageCredential`).
pub const IDENTITIES: &[&str] = &[
    "aws_iam_role",
    "azure_managed_identity",
    "azure_service_principal",
    "databricks_gcp_service_account",
    "cloudflare_api_token",
];

/// The write-only field of each identity that has one: accepted, never answered.
const SECRETS: &[(&str, &str)] = &[
    ("azure_service_principal", "client_secret"),
    ("cloudflare_api_token", "secret_access_key"),
];

/// The IAM user Unity Catalog assumes roles as, as an AWS credential answers it (the form
/// in terraform-provider-databricks issue #3134's log).
const UC_MASTER_ROLE: &str =
    "arn:aws:iam::414351767826:role/unity-catalog-prod-UCMasterRole-14S5ZJVKOTYTL";

/// An identity as the service answers it: its write-only secret left out, and what the
/// service fills in (an AWS role's external id, a managed identity's credential id, a
/// Databricks GCP service account's e-mail).
fn answered_identity(
    st: &State,
    kind: &str,
    given: &Map<String, Value>,
    name: &str,
) -> Map<String, Value> {
    let mut m = given.clone();
    for (k, secret) in SECRETS {
        if *k == kind {
            m.shift_remove(*secret);
        }
    }
    match kind {
        "aws_iam_role" => {
            m.insert("external_id".into(), json!(st.metastore_id));
            m.insert("unity_catalog_iam_arn".into(), json!(UC_MASTER_ROLE));
        }
        "azure_managed_identity" => {
            m.entry("credential_id")
                .or_insert_with(|| json!(uuid::Uuid::new_v4().to_string()));
        }
        "databricks_gcp_service_account" => {
            m.entry("email").or_insert_with(|| {
                json!(format!(
                    "db-uc-storage-{name}@uc-{}.iam.gserviceaccount.com",
                    st.workspace_id
                ))
            });
            m.entry("credential_id")
                .or_insert_with(|| json!(uuid::Uuid::new_v4().to_string()));
        }
        _ => {}
    }
    m
}

/// Whether a credential is a storage credential: the storage credentials API serves only
/// those, the Credentials API both kinds (their names share one namespace: "unique among
/// storage and service credentials within the metastore", the SDK's `create_credential`).
pub fn for_storage(info: &Map<String, Value>) -> bool {
    info.get("purpose").and_then(Value::as_str) != Some("SERVICE")
}

/// `POST storage-credentials`: exactly one identity, its secret not kept.
pub fn create_storage_credential(
    st: &mut State,
    ctx: &Ctx,
    body: &Map<String, Value>,
) -> ApiResult<Map<String, Value>> {
    create(st, ctx, body, Kind::StorageCredential, "STORAGE")
}

/// `POST credentials`: a credential of the purpose the body names (`CreateCredentialRequest`),
/// otherwise as a storage credential is made. A service credential is not for storage: GCP
/// service accounts aside, it holds the same identities.
pub fn create_credential(
    st: &mut State,
    ctx: &Ctx,
    body: &Map<String, Value>,
) -> ApiResult<Map<String, Value>> {
    let purpose = Obj::root(body)
        .enum_str("purpose", PURPOSES)?
        .ok_or_else(|| crate::body::missing("purpose"))?
        .to_string();
    create(st, ctx, body, Kind::Credential, &purpose)
}

fn create(
    st: &mut State,
    ctx: &Ctx,
    body: &Map<String, Value>,
    kind: Kind,
    purpose: &str,
) -> ApiResult<Map<String, Value>> {
    let o = Obj::root(body);
    let name = uc_name(o.req_str("name")?, "name")?;
    let identity = o.one_of(IDENTITIES)?;
    let given = o.obj(identity)?.cloned().unwrap_or_default();
    let comment = o.str("comment")?.map(str::to_string);
    let read_only = o.bool("read_only")?.unwrap_or(false);
    o.bool("skip_validation")?;
    let securable_type = match purpose {
        "SERVICE" => "CREDENTIAL",
        _ => "STORAGE_CREDENTIAL",
    };
    securable(kind).create(st, &[], &name, |st| {
        let mut m = compact(json!({
            "name": name, "full_name": name, "id": uuid::Uuid::new_v4().to_string(),
            "metastore_id": st.metastore_id, "comment": comment, "read_only": read_only,
            "isolation_mode": "ISOLATION_MODE_OPEN", "used_for_managed_storage": false,
            "securable_type": securable_type, "purpose": purpose,
        }));
        m.insert(
            identity.into(),
            Value::Object(answered_identity(st, identity, &given, &name)),
        );
        audit(&mut m, ctx, true);
        Ok(m)
    })
}

/// An update may change the identity (to one of the same or another cloud); the secret is
/// dropped, and `force` and `skip_validation` act on the call only.
pub fn prepare_credential_update(st: &mut State, _: &Ctx, key: &str, set: &mut Map<String, Value>) {
    set.shift_remove("force");
    set.shift_remove("skip_validation");
    let Some(kind) = IDENTITIES.iter().find(|k| set.contains_key(**k)) else {
        return;
    };
    let given = set
        .get(*kind)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let answered = answered_identity(st, kind, &given, key);
    set.insert(kind.to_string(), Value::Object(answered));
    // The new identity replaces the old one.
    if let Some(info) = st.uc.storage_credentials.get_mut(key) {
        for other in IDENTITIES {
            info.shift_remove(*other);
        }
    }
}

/// The external locations that use a credential, by name.
fn locations_using(st: &State, credential: &str) -> Vec<String> {
    st.uc
        .external_locations
        .iter()
        .filter(|(_, l)| s(l, "credential_name") == credential)
        .map(|(k, _)| k.clone())
        .collect()
}

/// A credential external locations use is deleted only with `force`; the service's words
/// (terraform-provider-databricks issue #4000) count what depends on it.
pub fn credential_in_use(st: &State, key: &str) -> Option<ApiError> {
    let users = locations_using(st, key);
    if users.is_empty() {
        return None;
    }
    Some(ApiError::invalid(format!(
        "Storage credential '{key}' has 0 directly dependent external table(s) and {} dependent storage location(s). You may use force option to delete it but the managed storage data using this storage credential cannot be purged by Unity Catalog anymore.",
        users.len()
    )))
}

/// The url as compared for overlaps: without a trailing slash, with one added back so that
/// `s3://b/a` does not cover `s3://b/ab`.
fn dir(url: &str) -> String {
    format!("{}/", url.trim_end_matches('/'))
}

/// Whether one url lies under the other (or they are the same).
fn overlaps(a: &str, b: &str) -> bool {
    let (a, b) = (dir(a), dir(b));
    a.starts_with(&b) || b.starts_with(&a)
}

/// A url must name a storage path no other location covers, nor lies under: the service
/// refuses it with `INVALID_PARAMETER_VALUE` (see `Behaviour::RefuseOverlappingLocations`).
fn check_url(st: &State, ctx: &Ctx, url: &str, except: Option<&str>, call: &str) -> ApiResult<()> {
    if !url.contains("://") {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'url': '{url}' is not a cloud storage url (s3://, abfss://, gs://, r2://)"
        )));
    }
    if !ctx.behaviours.on(Behaviour::RefuseOverlappingLocations) {
        return Ok(());
    }
    let conflict = st
        .uc
        .external_locations
        .iter()
        .filter(|(k, _)| Some(k.as_str()) != except)
        .find(|(_, l)| overlaps(&s(l, "url"), url));
    match conflict {
        Some((name, _)) => Err(ApiError::invalid(format!(
            "Input path url '{url}' overlaps with an existing external location within '{call}' call. Conflicting location: {name}."
        ))),
        None => Ok(()),
    }
}

/// The credential a location names must exist; its id is what the location answers.
fn credential_id(st: &State, name: &str) -> ApiResult<Value> {
    let key = name.to_lowercase();
    st.uc
        .storage_credentials
        .get(&key)
        .filter(|c| for_storage(c))
        .map(|c| c.get("id").cloned().unwrap_or(Value::Null))
        .ok_or_else(|| securable(Kind::StorageCredential).missing(&key))
}

/// `POST external-locations`: an existing credential and a url overlapping no other's.
pub fn create_external_location(
    st: &mut State,
    ctx: &Ctx,
    body: &Map<String, Value>,
) -> ApiResult<Map<String, Value>> {
    let o = Obj::root(body);
    let name = uc_name(o.req_str("name")?, "name")?;
    let url = o.req_str("url")?.to_string();
    let credential = uc_name(o.req_str("credential_name")?, "credential_name")?;
    let comment = o.str("comment")?.map(str::to_string);
    let read_only = o.bool("read_only")?.unwrap_or(false);
    let fallback = o.bool("fallback")?.unwrap_or(false);
    let enable_file_events = o.bool("enable_file_events")?;
    let access_point = o.str("access_point")?.map(str::to_string);
    let encryption = o.obj("encryption_details")?.cloned();
    let queue = o.obj("file_event_queue")?.cloned();
    o.bool("skip_validation")?;
    securable(Kind::ExternalLocation).create(st, &[], &name, |st| {
        let credential_id = credential_id(st, &credential)?;
        check_url(st, ctx, &url, None, "CreateExternalLocation")?;
        let mut m = compact(json!({
            "name": name, "full_name": name, "id": uuid::Uuid::new_v4().to_string(),
            "url": url, "credential_name": credential, "credential_id": credential_id,
            "comment": comment, "read_only": read_only, "fallback": fallback,
            "enable_file_events": enable_file_events, "access_point": access_point,
            "encryption_details": encryption, "file_event_queue": queue,
            "isolation_mode": "ISOLATION_MODE_OPEN", "metastore_id": st.metastore_id,
            "browse_only": false, "securable_type": "EXTERNAL_LOCATION",
            "securable_kind": "EXTERNAL_LOCATION_STANDARD",
        }));
        audit(&mut m, ctx, true);
        Ok(m)
    })
}

/// A new url must overlap no other location's, a new credential must exist.
pub fn check_location_update(st: &State, ctx: &Ctx, key: &str, c: &Changes) -> ApiResult<()> {
    if let Some(name) = c.set.get("credential_name").and_then(Value::as_str) {
        credential_id(st, name)?;
    }
    if let Some(url) = c.set.get("url").and_then(Value::as_str) {
        check_url(st, ctx, url, Some(key), "UpdateExternalLocation")?;
    }
    Ok(())
}

/// `force` and `skip_validation` act on the call only; a new credential brings its id.
pub fn prepare_location_update(st: &mut State, _: &Ctx, _: &str, set: &mut Map<String, Value>) {
    set.shift_remove("force");
    set.shift_remove("skip_validation");
    if let Some(Value::String(name)) = set.get_mut("credential_name") {
        *name = name.to_lowercase();
        let id = credential_id(st, name).unwrap_or(Value::Null);
        set.insert("credential_id".into(), id);
    }
}

/// Locations follow their credential's rename.
pub fn follow_credential_rename(st: &mut State, old: &str, new: &str) {
    for k in locations_using(st, old) {
        if let Some(l) = st.uc.external_locations.get_mut(&k) {
            l.insert("credential_name".into(), json!(new));
        }
    }
}

/// What lies under a location's url and blocks its delete without `force`: catalogs,
/// schemas and volumes stored there (terraform-provider-databricks issue #2188: "External
/// Location has dependent catalogs, schemas, managed or external tables/volumes; use force
/// option to delete anyway").
pub fn location_in_use(st: &State, key: &str) -> Option<ApiError> {
    let url = dir(&s(st.uc.external_locations.get(key)?, "url"));
    let under = |m: &Map<String, Value>, field: &str| {
        m.get(field)
            .and_then(Value::as_str)
            .is_some_and(|u| dir(u).starts_with(&url))
    };
    let used = st.uc.catalogs.values().any(|c| under(c, "storage_root"))
        || st.uc.schemas.values().any(|c| under(c, "storage_root"))
        || st.uc.volumes.values().any(|v| under(v, "storage_location"));
    used.then(|| {
        ApiError::invalid(
            "External Location has dependent catalogs, schemas, managed or external tables/volumes; use force option to delete anyway",
        )
    })
}

/// Replaces a credential's write-only secrets in a create or update body, for the request
/// log: the same fields the service never answers.
pub fn redact_write_only(body: &mut Value) {
    for (kind, secret) in SECRETS {
        if let Some(Value::Object(m)) = body.get_mut(*kind)
            && let Some(v) = m.get_mut(*secret)
        {
            *v = Value::String(crate::control::REDACTED.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_overlap_on_whole_path_segments() {
        assert!(overlaps("s3://b/a", "s3://b/a/"));
        assert!(overlaps("s3://b/a/x", "s3://b/a"));
        assert!(overlaps("s3://b", "s3://b/a/x"));
        assert!(!overlaps("s3://b/a", "s3://b/ab"));
        assert!(!overlaps("s3://b/a", "gs://b/a/x"));
    }
}
