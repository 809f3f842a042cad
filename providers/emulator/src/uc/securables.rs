//! The Unity Catalog securables the workspace serves, as one table of data, and the create,
//! get, list, update and delete they share.
//!
//! A securable's key is its full name: its parents' names and its own, joined by dots and
//! lower-cased (`main.sales.raw`). The table says, per securable, where it lives under the
//! parent hierarchy, what its errors say, which fields an update sets, and which hooks hold
//! its special cases (a foreign catalog's fixed options, a connection's write-only options,
//! the followers of a renamed connection, the content that blocks a delete).

use super::Connection;
use crate::errors::{ApiError, ApiResult};
use crate::journal::Tracked;
use crate::pages::Page;
use crate::store::{Ctx, State};
use crate::util::{remove_prefix, uc_name};
use serde_json::{Map, Value, json};
use std::ops::Bound;

/// Every securable, and its row of [`SECURABLES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Catalog,
    Schema,
    Volume,
    Table,
    Connection,
    StorageCredential,
    ExternalLocation,
    /// A credential of the Credentials API: a service credential, or a storage credential
    /// seen through that API (one table holds both; see `storage.rs`).
    Credential,
    RegisteredModel,
    Function,
}

/// How an update reads one field of its body.
#[derive(Debug, Clone, Copy)]
pub enum FieldType {
    /// `new_name`: a UC name, the last segment of the new full name.
    NewName,
    Str,
    StrMap,
    Enum(&'static [&'static str]),
    Int,
    Bool,
    Obj,
}

/// One field an update accepts, in the order the body is checked (the first bad field is
/// the one reported).
#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    pub ty: FieldType,
    pub required: bool,
}

const fn field(name: &'static str, ty: FieldType) -> Field {
    Field {
        name,
        ty,
        required: false,
    }
}

const NEW_NAME: Field = field("new_name", FieldType::NewName);

/// What an update of a credential takes (`UpdateCredentialRequest`: no `purpose`, which a
/// credential keeps); a storage credential's takes the same and a Cloudflare token.
const CREDENTIAL_UPDATE: [Field; 11] = [
    NEW_NAME,
    field("comment", FieldType::Str),
    field("owner", FieldType::Str),
    field("read_only", FieldType::Bool),
    field("isolation_mode", ISOLATION),
    field("skip_validation", FieldType::Bool),
    field("force", FieldType::Bool),
    field("aws_iam_role", FieldType::Obj),
    field("azure_managed_identity", FieldType::Obj),
    field("azure_service_principal", FieldType::Obj),
    field("databricks_gcp_service_account", FieldType::Obj),
];
const STORAGE_CREDENTIAL_UPDATE: [Field; 12] = {
    let mut all = [field("cloudflare_api_token", FieldType::Obj); 12];
    let mut i = 0;
    while i < CREDENTIAL_UPDATE.len() {
        all[i] = CREDENTIAL_UPDATE[i];
        i += 1;
    }
    all
};
const PREDICTIVE: &[&str] = &["ENABLE", "DISABLE", "INHERIT"];

/// An update request, read from its body by the table's fields.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Changes {
    pub new_name: Option<String>,
    /// The fields to set, as they are stored.
    pub set: Map<String, Value>,
}

/// Checks an update before anything changes (after the securable was found).
pub type CheckUpdate = fn(&State, &Ctx, &str, &Changes) -> ApiResult<()>;
/// Prepares an update once it is known to succeed: may change the securable (under its
/// current key) and the fields about to be set.
pub type PrepareUpdate = fn(&mut State, &Ctx, &str, &mut Map<String, Value>);
/// What else follows a rename from the first key to the second.
pub type AfterRename = fn(&mut State, &str, &str);
/// Why the securable under this key cannot be deleted without `force`, if it cannot.
pub type NotEmpty = fn(&State, &str) -> Option<ApiError>;
/// Whether an entry of a table that two rows share is one this row serves.
pub type Admits = fn(&Map<String, Value>) -> bool;

pub struct Securable {
    pub kind: Kind,
    /// Its `securable_type` in `/permissions/{securable_type}/{full_name}`.
    pub grant_type: &'static str,
    /// The privileges a grant on it may hold (those of what it contains included: they are
    /// inherited downward).
    pub privileges: &'static [&'static str],
    /// The path segment under `/api/2.1/unity-catalog`.
    pub path: &'static str,
    /// The key of list answers (`storage_credentials`, `registered_models`).
    pub list_key: &'static str,
    /// How messages name it (`Catalog 'main' does not exist.`).
    pub label: &'static str,
    /// The kind whose full name prefixes its own (`None` for top-level securables).
    pub parent: Option<Kind>,
    /// The field by which its children name it (`catalog_name`), if it has children.
    pub child_field: Option<&'static str>,
    pub missing_code: &'static str,
    pub exists_code: &'static str,
    /// The page size of a list call that does not choose one.
    pub default_page: usize,
    /// Lists may filter on this field, given as the query parameter of the same name.
    pub list_filter: Option<&'static str>,
    /// Whether `/Volumes/...` files lie under it (moved by a rename, removed by a delete).
    pub holds_files: bool,
    /// What an update may set; `None`: the API has no update for it.
    pub update: Option<&'static [Field]>,
    pub check_update: Option<CheckUpdate>,
    pub prepare_update: Option<PrepareUpdate>,
    pub after_rename: Option<AfterRename>,
    /// Content that blocks a delete unless the call sets `force`; `None`: no `force`.
    pub not_empty: Option<NotEmpty>,
    pub entries: fn(&State) -> &dyn Entries,
    pub entries_mut: fn(&mut State) -> &mut dyn Entries,
    /// For a table two rows share (storage and service credentials): which of its entries
    /// this row serves. Names are unique across the table all the same.
    pub admits: Option<Admits>,
}

const TABLE_PRIVILEGES: &[&str] = &[
    "ALL_PRIVILEGES",
    "APPLY_TAG",
    "BROWSE",
    "MANAGE",
    "MODIFY",
    "REFRESH",
    "SELECT",
];
const VOLUME_PRIVILEGES: &[&str] = &[
    "ALL_PRIVILEGES",
    "APPLY_TAG",
    "BROWSE",
    "MANAGE",
    "READ_VOLUME",
    "WRITE_VOLUME",
];
const SCHEMA_PRIVILEGES: &[&str] = &[
    "ALL_PRIVILEGES",
    "APPLY_TAG",
    "BROWSE",
    "CREATE_FUNCTION",
    "CREATE_MATERIALIZED_VIEW",
    "CREATE_MODEL",
    "CREATE_TABLE",
    "CREATE_VOLUME",
    "EXECUTE",
    "EXTERNAL_USE_SCHEMA",
    "MANAGE",
    "MODIFY",
    "READ_VOLUME",
    "REFRESH",
    "SELECT",
    "USE_SCHEMA",
    "WRITE_VOLUME",
];
const CATALOG_PRIVILEGES: &[&str] = &[
    "ALL_PRIVILEGES",
    "APPLY_TAG",
    "BROWSE",
    "CREATE_FUNCTION",
    "CREATE_MATERIALIZED_VIEW",
    "CREATE_MODEL",
    "CREATE_SCHEMA",
    "CREATE_TABLE",
    "CREATE_VOLUME",
    "EXECUTE",
    "EXTERNAL_USE_SCHEMA",
    "MANAGE",
    "MODIFY",
    "READ_VOLUME",
    "REFRESH",
    "SELECT",
    "USE_CATALOG",
    "USE_SCHEMA",
    "WRITE_VOLUME",
];
/// The privileges on a storage credential and on an external location: Databricks'
/// privilege reference for Unity Catalog ("Privilege types by securable object",
/// terraform-provider-databricks docs/resources/grants.md "Storage credential grants" and
/// "External location grants").
const STORAGE_CREDENTIAL_PRIVILEGES: &[&str] = &[
    "ALL_PRIVILEGES",
    "CREATE_EXTERNAL_LOCATION",
    "CREATE_EXTERNAL_TABLE",
    "MANAGE",
    "READ_FILES",
    "WRITE_FILES",
];
const EXTERNAL_LOCATION_PRIVILEGES: &[&str] = &[
    "ALL_PRIVILEGES",
    "BROWSE",
    "CREATE_EXTERNAL_TABLE",
    "CREATE_EXTERNAL_VOLUME",
    "CREATE_MANAGED_STORAGE",
    "EXTERNAL_USE_LOCATION",
    "MANAGE",
    "READ_FILES",
    "WRITE_FILES",
];
/// A registered model's privileges (terraform-provider-databricks docs/resources/grants.md,
/// "Registered model grants"). The permissions API names a model's securable type
/// `function`, as the Terraform provider does (catalog/permissions/permissions.go,
/// Mappings: "model" is `catalog.SecurableType("function")`): models are routines of
/// Unity Catalog.
const MODEL_PRIVILEGES: &[&str] = &["ALL_PRIVILEGES", "APPLY_TAG", "EXECUTE", "MANAGE"];
/// A function's privileges (docs/resources/grants.md, "Function grants").
const FUNCTION_PRIVILEGES: &[&str] = &["ALL_PRIVILEGES", "EXECUTE", "MANAGE"];
const ISOLATION: FieldType = FieldType::Enum(super::storage::ISOLATION_MODES);
/// A service credential's privileges (terraform-provider-databricks docs/resources/grants.md,
/// "Service credential grants").
const CREDENTIAL_PRIVILEGES: &[&str] = &["ACCESS", "ALL_PRIVILEGES", "CREATE_CONNECTION", "MANAGE"];
const CONNECTION_PRIVILEGES: &[&str] = &[
    "ALL_PRIVILEGES",
    "CREATE_FOREIGN_CATALOG",
    "MANAGE",
    "USE_CONNECTION",
];

pub const SECURABLES: &[Securable] = &[
    Securable {
        kind: Kind::Catalog,
        grant_type: "catalog",
        privileges: CATALOG_PRIVILEGES,
        path: "catalogs",
        list_key: "catalogs",
        label: "Catalog",
        parent: None,
        child_field: Some("catalog_name"),
        missing_code: "CATALOG_DOES_NOT_EXIST",
        exists_code: "CATALOG_ALREADY_EXISTS",
        default_page: 1000,
        list_filter: None,
        holds_files: true,
        update: Some(&[
            NEW_NAME,
            field("comment", FieldType::Str),
            field("owner", FieldType::Str),
            field("properties", FieldType::StrMap),
            field("options", FieldType::StrMap),
            field(
                "isolation_mode",
                FieldType::Enum(&["OPEN", "ISOLATED", "OPEN_IN_ACCOUNT"]),
            ),
            field(
                "enable_predictive_optimization",
                FieldType::Enum(PREDICTIVE),
            ),
            field("custom_max_retention_hours", FieldType::Int),
            field("managed_encryption_settings", FieldType::Obj),
        ]),
        check_update: Some(super::model::check_catalog_update),
        prepare_update: Some(super::model::prepare_catalog_update),
        after_rename: None,
        not_empty: Some(super::model::catalog_content),
        entries: |st| &st.uc.catalogs,
        entries_mut: |st| &mut st.uc.catalogs,
        admits: None,
    },
    Securable {
        kind: Kind::Schema,
        grant_type: "schema",
        privileges: SCHEMA_PRIVILEGES,
        path: "schemas",
        list_key: "schemas",
        label: "Schema",
        parent: Some(Kind::Catalog),
        child_field: Some("schema_name"),
        missing_code: "SCHEMA_DOES_NOT_EXIST",
        exists_code: "SCHEMA_ALREADY_EXISTS",
        default_page: 1000,
        list_filter: None,
        holds_files: true,
        update: Some(&[
            NEW_NAME,
            field("comment", FieldType::Str),
            field("owner", FieldType::Str),
            field("properties", FieldType::StrMap),
            field(
                "enable_predictive_optimization",
                FieldType::Enum(PREDICTIVE),
            ),
            field("custom_max_retention_hours", FieldType::Int),
        ]),
        check_update: None,
        prepare_update: Some(super::model::prepare_schema_update),
        after_rename: None,
        not_empty: Some(super::model::schema_content),
        entries: |st| &st.uc.schemas,
        entries_mut: |st| &mut st.uc.schemas,
        admits: None,
    },
    Securable {
        kind: Kind::Volume,
        grant_type: "volume",
        privileges: VOLUME_PRIVILEGES,
        path: "volumes",
        list_key: "volumes",
        label: "Volume",
        parent: Some(Kind::Schema),
        child_field: None,
        missing_code: "RESOURCE_DOES_NOT_EXIST",
        exists_code: "RESOURCE_ALREADY_EXISTS",
        default_page: 10_000,
        list_filter: None,
        holds_files: true,
        update: Some(&[
            NEW_NAME,
            field("comment", FieldType::Str),
            field("owner", FieldType::Str),
        ]),
        check_update: None,
        prepare_update: None,
        after_rename: None,
        not_empty: None,
        entries: |st| &st.uc.volumes,
        entries_mut: |st| &mut st.uc.volumes,
        admits: None,
    },
    // Pipelines create tables (see `model::put_pipeline_table`); the API reads, lists and
    // drops them.
    Securable {
        kind: Kind::Table,
        grant_type: "table",
        privileges: TABLE_PRIVILEGES,
        path: "tables",
        list_key: "tables",
        label: "Table",
        parent: Some(Kind::Schema),
        child_field: None,
        missing_code: "TABLE_DOES_NOT_EXIST",
        exists_code: "TABLE_ALREADY_EXISTS",
        default_page: 1000,
        list_filter: None,
        holds_files: false,
        update: None,
        check_update: None,
        prepare_update: None,
        after_rename: None,
        not_empty: None,
        entries: |st| &st.uc.tables,
        entries_mut: |st| &mut st.uc.tables,
        admits: None,
    },
    Securable {
        kind: Kind::Connection,
        grant_type: "connection",
        privileges: CONNECTION_PRIVILEGES,
        path: "connections",
        list_key: "connections",
        label: "Connection",
        parent: None,
        child_field: None,
        missing_code: "RESOURCE_DOES_NOT_EXIST",
        exists_code: "RESOURCE_ALREADY_EXISTS",
        default_page: 1000,
        list_filter: Some("parent"),
        holds_files: false,
        update: Some(&[
            Field {
                name: "options",
                ty: FieldType::StrMap,
                required: true,
            },
            NEW_NAME,
            field("owner", FieldType::Str),
            field("secrets", FieldType::StrMap),
            field("environment_settings", FieldType::Obj),
        ]),
        check_update: Some(super::model::check_connection_update),
        prepare_update: Some(super::model::prepare_connection_update),
        after_rename: Some(super::model::follow_connection_rename),
        not_empty: None,
        entries: |st| &st.uc.connections,
        entries_mut: |st| &mut st.uc.connections,
        admits: None,
    },
    Securable {
        kind: Kind::StorageCredential,
        grant_type: "storage_credential",
        privileges: STORAGE_CREDENTIAL_PRIVILEGES,
        path: "storage-credentials",
        list_key: "storage_credentials",
        label: "Storage Credential",
        parent: None,
        child_field: None,
        missing_code: "STORAGE_CREDENTIAL_DOES_NOT_EXIST",
        exists_code: "STORAGE_CREDENTIAL_ALREADY_EXISTS",
        default_page: 1000,
        list_filter: None,
        holds_files: false,
        update: Some(&STORAGE_CREDENTIAL_UPDATE),
        check_update: None,
        prepare_update: Some(super::storage::prepare_credential_update),
        after_rename: Some(super::storage::follow_credential_rename),
        not_empty: Some(super::storage::credential_in_use),
        entries: |st| &st.uc.storage_credentials,
        entries_mut: |st| &mut st.uc.storage_credentials,
        admits: Some(super::storage::for_storage),
    },
    Securable {
        kind: Kind::Credential,
        grant_type: "credential",
        privileges: CREDENTIAL_PRIVILEGES,
        path: "credentials",
        list_key: "credentials",
        label: "Credential",
        parent: None,
        child_field: None,
        // No record of codes of the Credentials API's own: the generic ones.
        missing_code: "RESOURCE_DOES_NOT_EXIST",
        exists_code: "RESOURCE_ALREADY_EXISTS",
        default_page: 1000,
        list_filter: Some("purpose"),
        holds_files: false,
        update: Some(&CREDENTIAL_UPDATE),
        check_update: None,
        prepare_update: Some(super::storage::prepare_credential_update),
        after_rename: Some(super::storage::follow_credential_rename),
        not_empty: Some(super::storage::credential_in_use),
        entries: |st| &st.uc.storage_credentials,
        entries_mut: |st| &mut st.uc.storage_credentials,
        admits: None,
    },
    Securable {
        kind: Kind::ExternalLocation,
        grant_type: "external_location",
        privileges: EXTERNAL_LOCATION_PRIVILEGES,
        path: "external-locations",
        list_key: "external_locations",
        label: "External Location",
        parent: None,
        child_field: None,
        missing_code: "EXTERNAL_LOCATION_DOES_NOT_EXIST",
        exists_code: "EXTERNAL_LOCATION_ALREADY_EXISTS",
        default_page: 1000,
        list_filter: None,
        holds_files: false,
        update: Some(&[
            NEW_NAME,
            field("url", FieldType::Str),
            field("credential_name", FieldType::Str),
            field("comment", FieldType::Str),
            field("owner", FieldType::Str),
            field("read_only", FieldType::Bool),
            field("fallback", FieldType::Bool),
            field("isolation_mode", ISOLATION),
            field("access_point", FieldType::Str),
            field("encryption_details", FieldType::Obj),
            field("enable_file_events", FieldType::Bool),
            field("file_event_queue", FieldType::Obj),
            field("skip_validation", FieldType::Bool),
            field("force", FieldType::Bool),
        ]),
        check_update: Some(super::storage::check_location_update),
        prepare_update: Some(super::storage::prepare_location_update),
        after_rename: None,
        not_empty: Some(super::storage::location_in_use),
        entries: |st| &st.uc.external_locations,
        entries_mut: |st| &mut st.uc.external_locations,
        admits: None,
    },
    // Unity Catalog registered models (`/api/2.1/unity-catalog/models`, RegisteredModelInfo
    // of the SDKs): a model is a routine, which the service's messages name "Routine or
    // Model".
    Securable {
        kind: Kind::RegisteredModel,
        grant_type: "function",
        privileges: MODEL_PRIVILEGES,
        path: "models",
        list_key: "registered_models",
        label: "Routine or Model",
        parent: Some(Kind::Schema),
        child_field: None,
        missing_code: "RESOURCE_DOES_NOT_EXIST",
        exists_code: "RESOURCE_ALREADY_EXISTS",
        default_page: 10_000,
        list_filter: None,
        holds_files: false,
        update: Some(&[
            NEW_NAME,
            field("comment", FieldType::Str),
            field("owner", FieldType::Str),
        ]),
        check_update: None,
        prepare_update: None,
        after_rename: None,
        not_empty: None,
        entries: |st| &st.uc.models,
        entries_mut: |st| &mut st.uc.models,
        admits: None,
    },
    // Unity Catalog functions (`/api/2.1/unity-catalog/functions`, FunctionInfo of the SDKs),
    // made by SQL or by this API: routines, as models are, in one namespace with them.
    Securable {
        kind: Kind::Function,
        grant_type: "function",
        privileges: FUNCTION_PRIVILEGES,
        path: "functions",
        list_key: "functions",
        label: "Routine or Model",
        parent: Some(Kind::Schema),
        child_field: None,
        missing_code: "RESOURCE_DOES_NOT_EXIST",
        exists_code: "RESOURCE_ALREADY_EXISTS",
        default_page: 10_000,
        list_filter: None,
        holds_files: false,
        // UpdateFunction of the SDKs sets the owner alone.
        update: Some(&[field("owner", FieldType::Str)]),
        check_update: None,
        prepare_update: None,
        after_rename: None,
        not_empty: None,
        entries: |st| &st.uc.functions,
        entries_mut: |st| &mut st.uc.functions,
        admits: None,
    },
];

pub fn securable(kind: Kind) -> &'static Securable {
    // Every kind has its row (a unit test checks it), so the fallback is never taken.
    SECURABLES
        .iter()
        .find(|s| s.kind == kind)
        .unwrap_or(&SECURABLES[0])
}

/// A securable's stored entries, whatever else an entry holds besides its info.
pub trait Entries {
    fn info(&self, key: &str) -> Option<&Map<String, Value>>;
    fn info_mut(&mut self, key: &str) -> Option<&mut Map<String, Value>>;
    /// Moves an entry to another key.
    fn rekey(&mut self, old: &str, new: &str);
    fn remove(&mut self, key: &str) -> bool;
    /// Stores a new entry with this info (and nothing else it may hold).
    fn insert_info(&mut self, key: &str, info: Map<String, Value>);
    fn remove_prefix(&mut self, prefix: &str);
    /// The keys starting with `prefix`, in order.
    fn keys_with_prefix(&self, prefix: &str) -> Vec<String>;
    /// The infos after `start`, in key order, while their keys start with `prefix`.
    fn infos_from<'a>(
        &'a self,
        start: Bound<String>,
        prefix: &'a str,
    ) -> Box<dyn Iterator<Item = (&'a String, &'a Map<String, Value>)> + 'a>;
    fn contains(&self, key: &str) -> bool {
        self.info(key).is_some()
    }
}

/// What an entry shows as the securable's info.
pub trait HasInfo {
    fn from_info(info: Map<String, Value>) -> Self;
    fn info(&self) -> &Map<String, Value>;
    fn info_mut(&mut self) -> &mut Map<String, Value>;
}

impl HasInfo for Map<String, Value> {
    fn from_info(info: Map<String, Value>) -> Self {
        info
    }
    fn info(&self) -> &Map<String, Value> {
        self
    }
    fn info_mut(&mut self) -> &mut Map<String, Value> {
        self
    }
}

impl HasInfo for Connection {
    fn from_info(info: Map<String, Value>) -> Self {
        Connection {
            info,
            secret_options: Map::new(),
        }
    }
    fn info(&self) -> &Map<String, Value> {
        &self.info
    }
    fn info_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.info
    }
}

impl<V: HasInfo> Entries for Tracked<String, V> {
    fn info(&self, key: &str) -> Option<&Map<String, Value>> {
        self.get(key).map(HasInfo::info)
    }
    fn info_mut(&mut self, key: &str) -> Option<&mut Map<String, Value>> {
        self.get_mut(key).map(HasInfo::info_mut)
    }
    fn rekey(&mut self, old: &str, new: &str) {
        if let Some(v) = Tracked::remove(self, old) {
            self.insert(new.to_string(), v);
        }
    }
    fn remove(&mut self, key: &str) -> bool {
        Tracked::remove(self, key).is_some()
    }
    fn insert_info(&mut self, key: &str, info: Map<String, Value>) {
        self.insert(key.to_string(), V::from_info(info));
    }
    fn remove_prefix(&mut self, prefix: &str) {
        remove_prefix(self, prefix);
    }
    fn keys_with_prefix(&self, prefix: &str) -> Vec<String> {
        self.range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, _)| k.clone())
            .collect()
    }
    fn infos_from<'a>(
        &'a self,
        start: Bound<String>,
        prefix: &'a str,
    ) -> Box<dyn Iterator<Item = (&'a String, &'a Map<String, Value>)> + 'a> {
        Box::new(
            self.range((start, Bound::Unbounded))
                .take_while(move |(k, _)| k.starts_with(prefix))
                .map(|(k, v)| (k, v.info())),
        )
    }
}

impl Securable {
    /// How many dotted segments its full name has.
    pub fn depth(&self) -> usize {
        1 + self.parent.map_or(0, |p| securable(p).depth())
    }

    /// Its ancestors, the top-level one first.
    pub fn ancestors(&self) -> Vec<&'static Securable> {
        let mut out = Vec::new();
        let mut next = self.parent;
        while let Some(k) = next {
            let s = securable(k);
            out.insert(0, s);
            next = s.parent;
        }
        out
    }

    /// The securables whose full names lie under this one's.
    pub fn descendants(&self) -> impl Iterator<Item = &'static Securable> + '_ {
        SECURABLES
            .iter()
            .filter(move |s| s.ancestors().iter().any(|a| a.kind == self.kind))
    }

    /// The query parameters that name the parent in a list call (`catalog_name`, …).
    pub fn parent_params(&self) -> Vec<&'static str> {
        self.ancestors()
            .iter()
            .filter_map(|a| a.child_field)
            .collect()
    }

    pub fn missing(&self, key: &str) -> ApiError {
        ApiError::not_found(
            self.missing_code,
            format!("{} '{key}' does not exist.", self.label),
        )
    }

    pub fn exists(&self, key: &str) -> ApiError {
        ApiError::conflict(
            self.exists_code,
            format!("{} '{key}' already exists.", self.label),
        )
    }

    /// The key of a securable named in a request path: lower-cased, and a dotted name must
    /// have as many segments as the securable's full name.
    pub fn key(&self, raw: &str) -> ApiResult<String> {
        let lower = raw.to_lowercase();
        let depth = self.depth();
        if depth > 1 && (lower.split('.').count() != depth || lower.split('.').any(str::is_empty)) {
            return Err(ApiError::invalid(format!(
                "Invalid {} full name '{raw}'",
                self.label.to_lowercase()
            )));
        }
        Ok(lower)
    }

    /// Reads an update body by the table's fields.
    pub fn changes(&self, body: crate::body::Obj) -> ApiResult<Changes> {
        let mut out = Changes::default();
        for f in self.update.unwrap_or_default() {
            let value = match f.ty {
                FieldType::NewName => {
                    out.new_name = body.str(f.name)?.map(|n| uc_name(n, f.name)).transpose()?;
                    continue;
                }
                FieldType::Str => body.str(f.name)?.map(|v| json!(v)),
                FieldType::Enum(allowed) => body.enum_str(f.name, allowed)?.map(|v| json!(v)),
                FieldType::Int => body.int(f.name)?.map(|v| json!(v)),
                FieldType::Bool => body.bool(f.name)?.map(|v| json!(v)),
                FieldType::StrMap => body.str_map(f.name)?.cloned().map(Value::Object),
                FieldType::Obj => body.obj(f.name)?.cloned().map(Value::Object),
            };
            match value {
                Some(v) => {
                    out.set.insert(f.name.into(), v);
                }
                None if f.required => return Err(crate::body::missing(f.name)),
                None => {}
            }
        }
        Ok(out)
    }

    /// Whether the securable exists.
    pub fn has(&self, st: &State, key: &str) -> bool {
        match self.admits {
            None => (self.entries)(st).contains(key),
            Some(admits) => (self.entries)(st).info(key).is_some_and(admits),
        }
    }

    pub fn get(&self, st: &State, key: &str) -> ApiResult<Map<String, Value>> {
        (self.entries)(st)
            .info(key)
            .filter(|info| self.admits.is_none_or(|admits| admits(info)))
            .cloned()
            .ok_or_else(|| self.missing(key))
    }

    /// One page of the securables under `parent` (its full name; empty for top-level ones)
    /// whose `list_filter` field, if given, equals `filter`. The parent must exist.
    pub fn list(
        &self,
        st: &State,
        parent: &str,
        filter: Option<&str>,
        page: &Page,
    ) -> ApiResult<(Vec<Value>, Option<String>)> {
        let prefix = match self.parent {
            Some(p) => {
                let p = securable(p);
                if !p.has(st, parent) {
                    return Err(p.missing(parent));
                }
                format!("{parent}.")
            }
            None => String::new(),
        };
        let start = match &page.after {
            Some(a) if a.as_str() >= prefix.as_str() => Bound::Excluded(a.clone()),
            _ => Bound::Included(prefix.clone()),
        };
        let wanted = |info: &Map<String, Value>| {
            self.admits.is_none_or(|admits| admits(info))
                && match (self.list_filter, filter) {
                    (Some(field), Some(want)) => {
                        info.get(field).and_then(Value::as_str) == Some(want)
                    }
                    _ => true,
                }
        };
        let items = (self.entries)(st)
            .infos_from(start, &prefix)
            .filter(|(_, info)| wanted(info))
            .map(|(k, info)| (k.clone(), Value::Object(info.clone())));
        Ok(page.collect(items))
    }

    /// Creates the securable `name` under the parents named in order (catalog, schema),
    /// which must exist, with the info `build` makes (once the name is known to be free).
    pub fn create(
        &self,
        st: &mut State,
        parents: &[&str],
        name: &str,
        build: impl FnOnce(&State) -> ApiResult<Map<String, Value>>,
    ) -> ApiResult<Map<String, Value>> {
        let mut key = String::new();
        for (ancestor, part) in self.ancestors().into_iter().zip(parents) {
            if !key.is_empty() {
                key.push('.');
            }
            key.push_str(part);
            if !ancestor.has(st, &key) {
                return Err(ancestor.missing(&key));
            }
        }
        let key = if key.is_empty() {
            name.to_string()
        } else {
            format!("{key}.{name}")
        };
        // The whole table: a name another row serves is taken too.
        if (self.entries)(st).contains(&key) {
            return Err(self.exists(&key));
        }
        let info = build(st)?;
        (self.entries_mut)(st).insert_info(&key, info.clone());
        Ok(info)
    }

    /// Sets the changed fields (with the audit fields) and, for a new name, moves the
    /// securable and everything under it. Returns the updated info.
    pub fn update(
        &self,
        st: &mut State,
        ctx: &Ctx,
        key: &str,
        mut changes: Changes,
    ) -> ApiResult<Map<String, Value>> {
        if !self.has(st, key) {
            return Err(self.missing(key));
        }
        if let Some(check) = self.check_update {
            check(st, ctx, key, &changes)?;
        }
        let target = changes
            .new_name
            .as_ref()
            .map(|n| match key.rsplit_once('.') {
                Some((parent, _)) => format!("{parent}.{n}"),
                None => n.clone(),
            })
            .filter(|t| t != key);
        if let Some(t) = &target
            && (self.entries)(st).contains(t)
        {
            return Err(self.exists(t));
        }
        if let Some(prepare) = self.prepare_update {
            prepare(st, ctx, key, &mut changes.set);
        }
        // An owner named in another case is the user SCIM holds (principals_as_scim_holds).
        if let Some(Value::String(owner)) = changes.set.get_mut("owner") {
            *owner = crate::scim::held_name(
                st,
                ctx.behaviours,
                &[crate::scim::PrincipalKind::User],
                owner,
            );
        }
        let Some(info) = (self.entries_mut)(st).info_mut(key) else {
            return Err(self.missing(key));
        };
        info.extend(changes.set);
        super::model::audit(info, ctx, false);
        let key = match (target, &changes.new_name) {
            (Some(t), Some(leaf)) => {
                self.rename(st, key, &t, leaf);
                t
            }
            _ => key.to_string(),
        };
        self.get(st, &key)
    }

    /// Moves the securable from `old` to `new` (whose last segment is `leaf`), with its
    /// descendants and files.
    fn rename(&self, st: &mut State, old: &str, new: &str, leaf: &str) {
        let entries = (self.entries_mut)(st);
        entries.rekey(old, new);
        if let Some(info) = entries.info_mut(new) {
            info.insert("name".into(), json!(leaf));
            info.insert("full_name".into(), json!(new));
        }
        let (old_prefix, new_prefix) = (format!("{old}."), format!("{new}."));
        for d in self.descendants() {
            let entries = (d.entries_mut)(st);
            for k in entries.keys_with_prefix(&old_prefix) {
                let nk = format!("{new_prefix}{}", &k[old_prefix.len()..]);
                entries.rekey(&k, &nk);
                if let Some(info) = entries.info_mut(&nk) {
                    if let Some(f) = self.child_field {
                        info.insert(f.into(), json!(leaf));
                    }
                    info.insert("full_name".into(), json!(nk));
                }
            }
        }
        if self.holds_files {
            crate::files::rename_tree(st, &files_root(old), &files_root(new));
        }
        super::grants::follow(st, self, old, new);
        if let Some(after) = self.after_rename {
            after(st, old, new);
        }
    }

    /// Deletes the securable with everything under it; refuses a securable with content
    /// unless `force`.
    pub fn delete(&self, st: &mut State, key: &str, force: bool) -> ApiResult<()> {
        if !self.has(st, key) {
            return Err(self.missing(key));
        }
        if !force
            && let Some(not_empty) = self.not_empty
            && let Some(e) = not_empty(st, key)
        {
            return Err(e);
        }
        let prefix = format!("{key}.");
        for d in self.descendants() {
            (d.entries_mut)(st).remove_prefix(&prefix);
        }
        if self.holds_files {
            crate::files::remove_tree(st, &files_root(key));
        }
        super::grants::forget(st, self, key);
        (self.entries_mut)(st).remove(key);
        Ok(())
    }
}

/// The directory of a securable's files: `/Volumes/CATALOG/SCHEMA/VOLUME/`, or a prefix of it.
pub fn files_root(key: &str) -> String {
    format!("/Volumes/{}/", key.replace('.', "/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx<'static> {
        Ctx::for_test(1_000, 100)
    }

    use crate::uc::model::{self, NewCatalog, NewConnection, NewSchema, NewVolume};

    /// A workspace with catalog `main`, schema `main.s` and volume `main.s.v`.
    fn workspace() -> State {
        let mut st = State::new("u@x", 1);
        let ctx = ctx();
        let named = |name: &str| NewCatalog {
            name: name.into(),
            ..NewCatalog::default()
        };
        model::create_catalog(&mut st, &ctx, named("main")).unwrap();
        model::create_schema(
            &mut st,
            &ctx,
            NewSchema {
                catalog: "main".into(),
                name: "s".into(),
                ..NewSchema::default()
            },
        )
        .unwrap();
        model::create_volume(&mut st, &ctx, volume("main", "s", "v")).unwrap();
        st
    }

    fn volume(catalog: &str, schema: &str, name: &str) -> NewVolume<'static> {
        NewVolume {
            catalog: catalog.into(),
            schema: schema.into(),
            name: name.into(),
            volume_type: "MANAGED",
            comment: None,
            storage_location: None,
        }
    }

    fn page() -> Page {
        Page::new(None, None, 1000, 10_000, "max_results").unwrap()
    }

    fn names(items: &[Value]) -> Vec<&str> {
        items
            .iter()
            .filter_map(|v| v.get("full_name").and_then(Value::as_str))
            .collect()
    }

    #[test]
    fn every_kind_has_one_row_and_the_hierarchy_follows_the_parents() {
        for kind in [
            Kind::Catalog,
            Kind::Schema,
            Kind::Volume,
            Kind::Table,
            Kind::Connection,
            Kind::StorageCredential,
            Kind::ExternalLocation,
            Kind::Credential,
            Kind::RegisteredModel,
            Kind::Function,
        ] {
            assert_eq!(SECURABLES.iter().filter(|s| s.kind == kind).count(), 1);
            assert_eq!(securable(kind).kind, kind);
        }
        let depth = |k| securable(k).depth();
        assert_eq!(
            [Kind::Catalog, Kind::Schema, Kind::Volume, Kind::Connection].map(depth),
            [1, 2, 3, 1]
        );
        assert_eq!(
            securable(Kind::Volume).parent_params(),
            ["catalog_name", "schema_name"]
        );
        let under = |k| {
            securable(k)
                .descendants()
                .map(|s| s.kind)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            under(Kind::Catalog),
            [
                Kind::Schema,
                Kind::Volume,
                Kind::Table,
                Kind::RegisteredModel,
                Kind::Function
            ]
        );
        assert_eq!(
            under(Kind::Schema),
            [
                Kind::Volume,
                Kind::Table,
                Kind::RegisteredModel,
                Kind::Function
            ]
        );
        assert!(under(Kind::Connection).is_empty());
    }

    #[test]
    fn keys_are_lower_cased_and_dotted_names_need_every_segment() {
        let schema = securable(Kind::Schema);
        assert_eq!(schema.key("Main.S").unwrap(), "main.s");
        assert_eq!(
            schema.key("main").unwrap_err().message,
            "Invalid schema full name 'main'"
        );
        assert!(securable(Kind::Volume).key("a..b").is_err());
        // A top-level name is looked up as it is (and then not found).
        assert_eq!(securable(Kind::Catalog).key("A.B").unwrap(), "a.b");
    }

    #[test]
    fn a_managed_catalog_comes_with_its_schemas_and_parents_must_exist() {
        let mut st = workspace();
        let (items, next) = securable(Kind::Schema)
            .list(&st, "main", None, &page())
            .unwrap();
        assert_eq!(
            names(&items),
            ["main.default", "main.information_schema", "main.s"]
        );
        assert!(next.is_none());
        let e = model::create_volume(&mut st, &ctx(), volume("main", "nope", "v")).unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            (
                "SCHEMA_DOES_NOT_EXIST",
                "Schema 'main.nope' does not exist."
            )
        );
        let e = model::create_volume(&mut st, &ctx(), volume("main", "s", "v")).unwrap_err();
        assert_eq!(e.message, "Volume 'main.s.v' already exists.");
        let e = securable(Kind::Volume)
            .list(&st, "main.nope", None, &page())
            .unwrap_err();
        assert_eq!(e.code, "SCHEMA_DOES_NOT_EXIST");
    }

    #[test]
    fn lists_page_under_their_parent_only() {
        let mut st = workspace();
        model::create_volume(&mut st, &ctx(), volume("main", "s", "w")).unwrap();
        model::create_volume(&mut st, &ctx(), volume("main", "default", "x")).unwrap();
        let one = Page::new(None, Some(1), 1000, 10_000, "max_results").unwrap();
        let vols = securable(Kind::Volume);
        let (first, token) = vols.list(&st, "main.s", None, &one).unwrap();
        assert_eq!(names(&first), ["main.s.v"]);
        let next = Page::new(token.as_deref(), Some(1), 1000, 10_000, "max_results").unwrap();
        let (second, token) = vols.list(&st, "main.s", None, &next).unwrap();
        assert_eq!(names(&second), ["main.s.w"]);
        assert!(token.is_none(), "the last page has no token");
    }

    #[test]
    fn a_rename_moves_the_children_and_their_files() {
        let mut st = workspace();
        st.files.files.insert(
            "/Volumes/main/s/v/a.txt".into(),
            crate::files::FsEntry::Directory { modified: 0 },
        );
        let catalogs = securable(Kind::Catalog);
        let changes = Changes {
            new_name: Some("gold".into()),
            set: Map::from_iter([("comment".to_string(), json!("c"))]),
        };
        let info = catalogs.update(&mut st, &ctx(), "main", changes).unwrap();
        assert_eq!(
            (info["name"].clone(), info["comment"].clone()),
            (json!("gold"), json!("c"))
        );
        assert!(!catalogs.has(&st, "main"));
        let v = securable(Kind::Volume).get(&st, "gold.s.v").unwrap();
        assert_eq!(
            (v["catalog_name"].clone(), v["full_name"].clone()),
            (json!("gold"), json!("gold.s.v"))
        );
        assert!(st.files.files.contains_key("/Volumes/gold/s/v/a.txt"));
        assert!(!st.files.files.contains_key("/Volumes/main/s/v/a.txt"));
        // Renaming onto an existing name is refused, and changes nothing.
        model::create_catalog(
            &mut st,
            &ctx(),
            NewCatalog {
                name: "other".into(),
                ..NewCatalog::default()
            },
        )
        .unwrap();
        let taken = Changes {
            new_name: Some("other".into()),
            ..Changes::default()
        };
        let e = catalogs.update(&mut st, &ctx(), "gold", taken).unwrap_err();
        assert_eq!(e.code, "CATALOG_ALREADY_EXISTS");
        assert!(catalogs.has(&st, "gold"));
    }

    #[test]
    fn content_blocks_a_delete_unless_forced_and_a_forced_one_cascades() {
        let mut st = workspace();
        let schemas = securable(Kind::Schema);
        let e = schemas.delete(&mut st, "main.s", false).unwrap_err();
        assert_eq!(e.code, "SCHEMA_NOT_EMPTY");
        let e = securable(Kind::Catalog)
            .delete(&mut st, "main", false)
            .unwrap_err();
        assert_eq!(
            e.message,
            "Catalog 'main' is not empty. The catalog has 2 schemas(s): default, s"
        );
        securable(Kind::Catalog)
            .delete(&mut st, "main", true)
            .unwrap();
        assert!(st.uc.schemas.is_empty() && st.uc.volumes.is_empty() && st.uc.catalogs.is_empty());
        let e = schemas.delete(&mut st, "main.s", true).unwrap_err();
        assert_eq!(e.code, "SCHEMA_DOES_NOT_EXIST");
    }

    #[test]
    fn connections_keep_write_only_options_apart_and_catalogs_follow_a_rename() {
        let mut st = workspace();
        let options = Map::from_iter([
            ("host".to_string(), json!("db")),
            ("password".to_string(), json!("pw")),
        ]);
        let info = model::create_connection(
            &mut st,
            &ctx(),
            NewConnection {
                name: "pg".into(),
                connection_type: "POSTGRESQL",
                options: &options,
                comment: None,
                properties: None,
                read_only: None,
                secrets: None,
                environment_settings: None,
                parent: None,
            },
        )
        .unwrap();
        assert_eq!(info["options"], json!({"host": "db"}));
        assert_eq!(info["credential_type"], json!("USERNAME_PASSWORD"));
        assert_eq!(
            st.uc.connections["pg"].secret_options["password"],
            json!("pw")
        );
        model::create_catalog(
            &mut st,
            &ctx(),
            NewCatalog {
                name: "f".into(),
                connection_name: Some("pg".into()),
                ..NewCatalog::default()
            },
        )
        .unwrap();
        let conns = securable(Kind::Connection);
        let bad = conns
            .changes(crate::body::Obj::root(&Map::new()))
            .unwrap_err();
        assert_eq!(bad.message, "Missing required field: options");
        let body = json!({"options": {"port": "1"}, "new_name": "pg2"});
        let changes = conns
            .changes(crate::body::Obj::root(body.as_object().unwrap()))
            .unwrap();
        let e = conns.update(&mut st, &ctx(), "pg", changes).unwrap_err();
        assert!(
            e.message.contains("requires the option 'host'"),
            "{}",
            e.message
        );
        let body = json!({"options": {"host": "db2"}, "new_name": "PG2"});
        let changes = conns
            .changes(crate::body::Obj::root(body.as_object().unwrap()))
            .unwrap();
        let info = conns.update(&mut st, &ctx(), "pg", changes).unwrap();
        assert_eq!(info["url"], json!("jdbc://db2/"));
        assert!(info.get("credential_type").is_none());
        assert!(st.uc.connections["pg2"].secret_options.is_empty());
        assert_eq!(st.uc.catalogs["f"]["connection_name"], json!("pg2"));
    }

    #[test]
    fn update_bodies_are_read_in_table_order() {
        let catalogs = securable(Kind::Catalog);
        let body = json!({"comment": 1, "isolation_mode": "NOPE"});
        let e = catalogs
            .changes(crate::body::Obj::root(body.as_object().unwrap()))
            .unwrap_err();
        assert_eq!(
            e.message,
            "Invalid value for field 'comment': expected a string, got a number"
        );
        let body = json!({"owner": "o", "custom_max_retention_hours": "7", "new_name": "N"});
        let c = catalogs
            .changes(crate::body::Obj::root(body.as_object().unwrap()))
            .unwrap();
        assert_eq!(c.new_name.as_deref(), Some("n"));
        assert_eq!(
            Value::Object(c.set),
            json!({"owner": "o", "custom_max_retention_hours": 7})
        );
    }
}
