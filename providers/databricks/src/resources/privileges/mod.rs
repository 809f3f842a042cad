//! What `databricks_grants` and `databricks_grant` share: the Unity Catalog securables
//! grants are kept for, the privileges each one takes, and the permissions API
//! (`/api/2.1/unity-catalog/permissions/{securable_type}/{full_name}`) that reads and
//! changes them.
//!
//! The securable is named by one attribute, as in the Terraform provider (`catalog`,
//! `schema`, `table`, `volume`, `model`, `function`, `foreign_connection`,
//! `storage_credential`, `credential`, `external_location`, `share`, `metastore` and the
//! Unity AI Gateway's `model_service`, `model_provider_service` and `mcp_service`); its
//! privileges are validated per securable type before anything is sent. Grants on a
//! securable brickform does not create (a function made by SQL, a share) are kept all the
//! same: the service says whether it exists. [`api`] reads and writes them; [`kind`] is the
//! life cycle both kinds share.

use super::{OneTarget, exactly_one, first_set, str_attr};
use brickform_core::diagnostics::closest;
use brickform_core::provider::{
    AttrType, Attribute, Finding, Normalize, ProviderError, ProviderResult, Schema,
};
use brickform_core::value::{Object, PathStep, Value, quote};

pub mod api;
pub mod kind;

pub use kind::{GrantsKind, Scope};

/// A securable grants are kept for, as its attribute names it.
#[derive(Debug)]
pub struct Target {
    /// The attribute that names it (`foreign_connection`).
    pub attr: &'static str,
    /// Its `securable_type` in the API's path (`connection`).
    pub api: &'static str,
    /// How messages name it.
    pub label: &'static str,
    /// The parts of its full name (`catalog.schema.table`: 3).
    pub parts: usize,
    /// The privileges a grant on it may hold, as Unity Catalog's privilege model 1.0 lists
    /// them (with `inherited`).
    pub privileges: &'static [&'static str],
    /// Those of the securables inside it, which a grant here may hold too: they are
    /// inherited downward (a catalog's SELECT applies to every table in it).
    pub inherited: &'static [&'static str],
    /// The path of its grants, `{securable_type}` and `{full_name}` filled in.
    pub path: &'static str,
    /// Its principals are Delta Sharing recipients, not account users, groups or service
    /// principals.
    pub recipients: bool,
}

/// The permissions API of Unity Catalog, where most securables' grants are.
const PERMISSIONS_PATH: &str = "/api/2.1/unity-catalog/permissions/{securable_type}/{full_name}";
/// A share's grants are the Shares API's (the Terraform provider calls it for `share`:
/// catalog/permissions/permissions.go, GetPermissions and UpdatePermissions), with the same
/// `privilege_assignments` and `changes`.
const SHARE_PERMISSIONS_PATH: &str = "/api/2.1/unity-catalog/shares/{full_name}/permissions";

impl Target {
    /// Every privilege a grant on this securable may name.
    fn allows(&self) -> impl Iterator<Item = &'static str> {
        self.privileges.iter().chain(self.inherited).copied()
    }
}

const TABLE: &[&str] = &[
    "ALL_PRIVILEGES",
    "APPLY_TAG",
    "BROWSE",
    "MANAGE",
    "MODIFY",
    "REFRESH",
    "SELECT",
];
const VOLUME: &[&str] = &[
    "ALL_PRIVILEGES",
    "APPLY_TAG",
    "BROWSE",
    "MANAGE",
    "READ_VOLUME",
    "WRITE_VOLUME",
];
const SCHEMA: &[&str] = &[
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
/// A catalog takes every schema privilege (granted on the catalog, it applies to each of its
/// schemas) and these of its own.
const CATALOG_OWN: &[&str] = &["CREATE_SCHEMA", "USE_CATALOG"];
/// A storage credential's privileges (terraform-provider-databricks docs/resources/grants.md,
/// "Storage credential grants").
const STORAGE_CREDENTIAL: &[&str] = &[
    "ALL_PRIVILEGES",
    "CREATE_EXTERNAL_LOCATION",
    "CREATE_EXTERNAL_TABLE",
    "MANAGE",
    "READ_FILES",
    "WRITE_FILES",
];
/// An external location's privileges (terraform-provider-databricks docs/resources/grants.md,
/// "External location grants"; BROWSE and EXTERNAL_USE_LOCATION from Databricks' privilege
/// reference for Unity Catalog).
const EXTERNAL_LOCATION: &[&str] = &[
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
/// The metastore's privileges (terraform-provider-databricks docs/resources/grants.md,
/// "Metastore grants"; MANAGE_ALLOWLIST from Databricks' privilege reference). Not
/// inherited by what is in it.
const METASTORE: &[&str] = &[
    "CREATE_CATALOG",
    "CREATE_CLEAN_ROOM",
    "CREATE_CONNECTION",
    "CREATE_EXTERNAL_LOCATION",
    "CREATE_PROVIDER",
    "CREATE_RECIPIENT",
    "CREATE_SERVICE_CREDENTIAL",
    "CREATE_SHARE",
    "CREATE_STORAGE_CREDENTIAL",
    "MANAGE_ALLOWLIST",
    "SET_SHARE_PERMISSION",
    "USE_MARKETPLACE_ASSETS",
    "USE_PROVIDER",
    "USE_RECIPIENT",
    "USE_SHARE",
];
/// A registered model's privileges (docs/resources/grants.md, "Registered model grants").
const MODEL: &[&str] = &["ALL_PRIVILEGES", "APPLY_TAG", "EXECUTE", "MANAGE"];
/// A function's (docs/resources/grants.md, "Function grants").
const FUNCTION: &[&str] = &["ALL_PRIVILEGES", "EXECUTE", "MANAGE"];
/// A service credential's (docs/resources/grants.md, "Service credential grants").
const CREDENTIAL: &[&str] = &["ACCESS", "ALL_PRIVILEGES", "CREATE_CONNECTION", "MANAGE"];
/// A share's: SELECT, to a recipient (docs/resources/grants.md, "Delta Sharing share
/// grants").
const SHARE: &[&str] = &["SELECT"];
/// A Unity AI Gateway model service's, model provider service's and MCP service's
/// (docs/resources/grants.md, "Model service grants" and the two sections after it).
const AI_GATEWAY: &[&str] = &[
    "ALL_PRIVILEGES",
    "APPLY_TAG",
    "EXECUTE",
    "MANAGE",
    "READ_METADATA",
];
const CONNECTION: &[&str] = &[
    "ALL_PRIVILEGES",
    "CREATE_FOREIGN_CATALOG",
    "MANAGE",
    "USE_CONNECTION",
];

/// A securable with no securables inside it, whose grants are the permissions API's.
const fn gated(
    attr: &'static str,
    api: &'static str,
    label: &'static str,
    parts: usize,
    privileges: &'static [&'static str],
) -> Target {
    Target {
        attr,
        api,
        label,
        parts,
        privileges,
        inherited: &[],
        path: PERMISSIONS_PATH,
        recipients: false,
    }
}

pub const TARGETS: &[Target] = &[
    Target {
        attr: "catalog",
        api: "catalog",
        label: "catalog",
        parts: 1,
        privileges: CATALOG_OWN,
        inherited: SCHEMA,
        path: PERMISSIONS_PATH,
        recipients: false,
    },
    Target {
        attr: "schema",
        api: "schema",
        label: "schema",
        parts: 2,
        privileges: SCHEMA,
        inherited: &[],
        path: PERMISSIONS_PATH,
        recipients: false,
    },
    Target {
        attr: "table",
        api: "table",
        label: "table",
        parts: 3,
        privileges: TABLE,
        inherited: &[],
        path: PERMISSIONS_PATH,
        recipients: false,
    },
    Target {
        attr: "volume",
        api: "volume",
        label: "volume",
        parts: 3,
        privileges: VOLUME,
        inherited: &[],
        path: PERMISSIONS_PATH,
        recipients: false,
    },
    Target {
        attr: "foreign_connection",
        api: "connection",
        label: "connection",
        parts: 1,
        privileges: CONNECTION,
        inherited: &[],
        path: PERMISSIONS_PATH,
        recipients: false,
    },
    Target {
        attr: "storage_credential",
        api: "storage_credential",
        label: "storage credential",
        parts: 1,
        privileges: STORAGE_CREDENTIAL,
        inherited: &[],
        path: PERMISSIONS_PATH,
        recipients: false,
    },
    Target {
        attr: "external_location",
        api: "external_location",
        label: "external location",
        parts: 1,
        privileges: EXTERNAL_LOCATION,
        inherited: &[],
        path: PERMISSIONS_PATH,
        recipients: false,
    },
    // A registered model's securable type is `function` (catalog/permissions/permissions.go,
    // Mappings: "model" is catalog.SecurableType("function")): models are routines.
    gated("model", "function", "registered model", 3, MODEL),
    gated("function", "function", "function", 3, FUNCTION),
    gated(
        "credential",
        "credential",
        "service credential",
        1,
        CREDENTIAL,
    ),
    Target {
        attr: "share",
        api: "share",
        label: "share",
        parts: 1,
        privileges: SHARE,
        inherited: &[],
        path: SHARE_PERMISSIONS_PATH,
        recipients: true,
    },
    gated(
        "model_service",
        "model_service",
        "model service",
        3,
        AI_GATEWAY,
    ),
    gated(
        "model_provider_service",
        "model_provider_service",
        "model provider service",
        3,
        AI_GATEWAY,
    ),
    gated("mcp_service", "mcp_service", "MCP service", 3, AI_GATEWAY),
    Target {
        attr: "metastore",
        api: "metastore",
        label: "metastore",
        parts: 1,
        privileges: METASTORE,
        inherited: &[],
        path: PERMISSIONS_PATH,
        recipients: false,
    },
];

/// The names of privilege model 0.1, which Unity Catalog no longer takes, and the
/// privilege that replaced each.
const RENAMED: &[(&str, &str)] = &[
    ("USAGE", "USE_CATALOG or USE_SCHEMA"),
    ("CREATE", "CREATE_SCHEMA, CREATE_TABLE or CREATE_VOLUME"),
    ("READ_FILES", "READ_VOLUME"),
    ("WRITE_FILES", "WRITE_VOLUME"),
];

/// The workspace-local groups every workspace has: Unity Catalog grants take account
/// principals only, and the service answers these with "Could not find principal".
const WORKSPACE_GROUPS: &[&str] = &["users", "admins"];

/// Adds the securable attributes (one of them names what the grants are on) to a schema.
pub fn with_securables(mut schema: Schema) -> Schema {
    for t in TARGETS {
        schema = schema.attr(
            Attribute::optional(t.attr, AttrType::String)
                .force_new()
                .normalize(Normalize::LowerCase)
                .describe(match t.attr {
                    "catalog" => "The catalog the grants are on (set exactly one securable).",
                    "schema" => "The schema the grants are on, as CATALOG.SCHEMA.",
                    "table" => "The table or view the grants are on, as CATALOG.SCHEMA.TABLE.",
                    "volume" => "The volume the grants are on, as CATALOG.SCHEMA.VOLUME.",
                    "storage_credential" => "The storage credential the grants are on.",
                    "external_location" => "The external location the grants are on.",
                    "metastore" => "The metastore the grants are on, by its id (the workspace's).",
                    "model" => {
                        "The Unity Catalog registered model the grants are on, as CATALOG.SCHEMA.MODEL."
                    }
                    "function" => "The function the grants are on, as CATALOG.SCHEMA.FUNCTION.",
                    "credential" => "The service credential the grants are on.",
                    "share" => {
                        "The Delta Sharing share the grants are on; each principal is a recipient."
                    }
                    "model_service" => {
                        "The Unity AI Gateway model service the grants are on, as CATALOG.SCHEMA.NAME."
                    }
                    "model_provider_service" => {
                        "The Unity AI Gateway model provider service the grants are on, as CATALOG.SCHEMA.NAME."
                    }
                    "mcp_service" => {
                        "The Unity AI Gateway MCP service the grants are on, as CATALOG.SCHEMA.NAME."
                    }
                    _ => "The Unity Catalog connection the grants are on.",
                }),
        );
    }
    schema
}

/// The privileges attribute: upper-cased, its order meaning nothing.
pub fn privileges_attr() -> Attribute {
    Attribute::required("privileges", AttrType::Set(Box::new(AttrType::String)))
        .normalize(Normalize::UpperCase)
        .describe("Privileges, as the API names them (USE_CATALOG, SELECT, CREATE_TABLE, …).")
}

/// The securable a configuration names, and its full name (`None` while unknown).
pub fn target_of(config: &Object) -> Option<(&'static Target, Option<&str>)> {
    first_set(config, TARGETS, |t| t.attr)
}

/// Exactly one securable, its full name with the parts its type has.
pub fn check_target(config: &Object) -> Vec<Finding> {
    let words = OneTarget {
        none: "no securable: the grants are on nothing",
        many: "grants are on one securable",
        many_hint: "declare one resource per securable",
    };
    let (one, mut out) = exactly_one(config, TARGETS, |t| t.attr, &words);
    if let Some(t) = one
        && let Some(name) = str_attr(config, t.attr)
    {
        let parts: Vec<&str> = name.split('.').collect();
        if parts.len() != t.parts || parts.iter().any(|p| p.is_empty()) {
            let hint = match t.parts {
                1 => format!("a {}'s name is one part, without dots", t.label),
                2 => "write it as CATALOG.SCHEMA".to_string(),
                _ => format!("write it as CATALOG.SCHEMA.{}", t.attr.to_uppercase()),
            };
            out.push(
                Finding::error(
                    &[t.attr],
                    format!("{} is not the full name of a {}", quote(name), t.label),
                )
                .hint(hint),
            );
        }
    }
    out
}

/// Every privilege of a list one the securable takes, each unknown one reported with the
/// nearest it takes.
pub fn check_privileges(target: &Target, privileges: &Value, at: Vec<PathStep>) -> Vec<Finding> {
    let Some(list) = privileges.as_list() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in list.iter().filter_map(Value::as_str) {
        if target.allows().any(|a| a == p) {
            continue;
        }
        let underscored = p.split_whitespace().collect::<Vec<_>>().join("_");
        let hint = if target.allows().any(|a| a == underscored) {
            format!(
                "did you mean {}? The API names privileges with underscores",
                quote(&underscored)
            )
        } else if let Some((_, now)) = RENAMED.iter().find(|(old, _)| *old == p) {
            format!("{p} is a name of Unity Catalog's first privilege model; it is now {now}")
        } else if let Some(c) = closest(p, target.allows()) {
            format!("did you mean {}?", quote(c))
        } else {
            format!("a {} takes {}", target.label, target.privileges.join(", "))
        };
        out.push(
            Finding::error(
                &[],
                format!("{} is not a privilege on a {}", quote(p), target.label),
            )
            .at(at.clone())
            .hint(hint),
        );
    }
    out
}

/// A workspace-local group named as a principal: the grant would be refused. A share's
/// principals are recipients, whose names may be anything.
pub fn check_principal(target: &Target, principal: &Value, at: Vec<PathStep>) -> Vec<Finding> {
    match principal.as_str() {
        Some(p) if target.recipients && p.trim().is_empty() => vec![
            Finding::error(&[], "principal is empty: name the recipient the share is granted to")
                .at(at),
        ],
        _ if target.recipients => Vec::new(),
        Some(p) if p.trim().is_empty() => vec![
            Finding::error(&[], "principal is empty: name a user, group or service principal")
                .at(at)
                .hint("e.g. principal = \"data-engineers\""),
        ],
        Some(p) if WORKSPACE_GROUPS.contains(&p) => vec![
            Finding::warning(
                &[],
                format!(
                    "{} is the workspace-local group of that name; Unity Catalog grants go to account users, groups and service principals",
                    quote(p)
                ),
            )
            .at(at)
            .hint(if p == "users" {
                "every user of the account is the group \"account users\"".to_string()
            } else {
                "grant to an account group instead".to_string()
            }),
        ],
        _ => Vec::new(),
    }
}

/// The id of grants on a securable, `catalog/main` (the Terraform provider's form); for
/// one principal's, `catalog/main/alice@example.com`.
pub fn id_of(target: &Target, name: &str, principal: Option<&str>) -> String {
    match principal {
        Some(p) => format!("{}/{name}/{p}", target.attr),
        None => format!("{}/{name}", target.attr),
    }
}

/// The securable, full name and principal an id names. Full names hold no `/`; a principal
/// may.
pub fn parse_id(
    id: &str,
    with_principal: bool,
) -> ProviderResult<(&'static Target, &str, Option<&str>)> {
    let form = if with_principal {
        "SECURABLE/FULL_NAME/PRINCIPAL, for example schema/main.sales/data-engineers"
    } else {
        "SECURABLE/FULL_NAME, for example catalog/main"
    };
    let bad = || {
        let kinds = TARGETS
            .iter()
            .map(|t| t.attr)
            .collect::<Vec<_>>()
            .join(", ");
        ProviderError::invalid(format!(
            "grants are imported as {form}, where SECURABLE is one of {kinds}; got {id:?}"
        ))
    };
    let (attr, rest) = id.split_once('/').ok_or_else(bad)?;
    let target = TARGETS.iter().find(|t| t.attr == attr).ok_or_else(bad)?;
    let (name, principal) = if with_principal {
        let (n, p) = rest.split_once('/').ok_or_else(bad)?;
        (n, Some(Some(p).filter(|p| !p.is_empty()).ok_or_else(bad)?))
    } else {
        (rest, None)
    };
    if name.is_empty() || name.contains('/') || name.split('.').count() != target.parts {
        return Err(bad());
    }
    Ok((target, name, principal))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_bad_ones_say_the_form() {
        assert_eq!(id_of(&TARGETS[1], "main.sales", None), "schema/main.sales");
        let (t, n, p) = parse_id("schema/main.sales", false).unwrap();
        assert_eq!((t.attr, n, p), ("schema", "main.sales", None));
        let (t, n, p) = parse_id("foreign_connection/pg/team/a b", true).unwrap();
        assert_eq!((t.api, n, p), ("connection", "pg", Some("team/a b")));
        for bad in [
            "main",
            "catalog/",
            "schema/main",
            "tables/a.b.c",
            "catalog/a/b",
        ] {
            let e = parse_id(bad, false).unwrap_err();
            assert!(
                e.message.contains("SECURABLE/FULL_NAME"),
                "{bad}: {}",
                e.message
            );
        }
        assert!(parse_id("catalog/main", true).is_err());
    }

    #[test]
    fn privileges_are_checked_per_securable_with_a_hint() {
        let list = |ps: &[&str]| Value::List(ps.iter().map(|p| Value::from(*p)).collect());
        let catalog = &TARGETS[0];
        assert!(check_privileges(catalog, &list(&["USE_CATALOG", "SELECT"]), vec![]).is_empty());
        let f = check_privileges(catalog, &list(&["CREATE TABLE"]), vec![]);
        assert_eq!(
            f[0].message,
            "\"CREATE TABLE\" is not a privilege on a catalog"
        );
        assert!(f[0].hint.as_deref().unwrap().contains("\"CREATE_TABLE\""));
        let f = check_privileges(catalog, &list(&["USAGE"]), vec![]);
        assert!(f[0].hint.as_deref().unwrap().contains("USE_CATALOG"));
        let f = check_privileges(&TARGETS[3], &list(&["USE_CATALOG"]), vec![]);
        assert_eq!(
            f[0].message,
            "\"USE_CATALOG\" is not a privilege on a volume"
        );
        let f = check_privileges(&TARGETS[2], &list(&["SELEKT"]), vec![]);
        assert!(
            f[0].hint.as_deref().unwrap().contains("\"SELECT\""),
            "{:?}",
            f[0].hint
        );
    }

    #[test]
    fn one_securable_with_its_full_name() {
        let o = |pairs: &[(&str, &str)]| -> Object {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), Value::from(*v)))
                .collect()
        };
        assert!(check_target(&o(&[("schema", "main.sales")])).is_empty());
        let f = check_target(&o(&[("schema", "sales")]));
        assert_eq!(f[0].hint.as_deref(), Some("write it as CATALOG.SCHEMA"));
        let f = check_target(&o(&[("volume", "a.b")]));
        assert_eq!(
            f[0].hint.as_deref(),
            Some("write it as CATALOG.SCHEMA.VOLUME")
        );
        assert!(check_target(&o(&[("catalog", "main")])).is_empty());
        assert_eq!(check_target(&o(&[])).len(), 1);
        let f = check_target(&o(&[("catalog", "main"), ("volume", "a.b.c")]));
        assert!(f[0].message.contains("both set"));
    }

    fn target(attr: &str) -> &'static Target {
        TARGETS.iter().find(|t| t.attr == attr).unwrap()
    }

    #[test]
    fn securables_made_elsewhere_take_their_own_privileges_and_paths() {
        let list = |ps: &[&str]| Value::List(ps.iter().map(|p| Value::from(*p)).collect());
        // A registered model is a `function` to the permissions API, with its own privileges.
        let model = target("model");
        assert_eq!(model.api, "function");
        assert_eq!(
            api::path_of(model, "main.ml.churn"),
            "/api/2.1/unity-catalog/permissions/function/main.ml.churn"
        );
        assert!(check_privileges(model, &list(&["APPLY_TAG", "EXECUTE"]), vec![]).is_empty());
        let f = check_privileges(target("function"), &list(&["APPLY_TAG"]), vec![]);
        assert_eq!(
            f[0].message,
            "\"APPLY_TAG\" is not a privilege on a function"
        );
        let f = check_privileges(target("credential"), &list(&["ACESS"]), vec![]);
        assert!(
            f[0].hint.as_deref().unwrap().contains("\"ACCESS\""),
            "{:?}",
            f[0].hint
        );
        assert!(
            check_privileges(target("mcp_service"), &list(&["READ_METADATA"]), vec![]).is_empty()
        );
        // A share's grants are the Shares API's, to recipients of any name.
        let share = target("share");
        assert_eq!(
            api::path_of(share, "quarterly"),
            "/api/2.1/unity-catalog/shares/quarterly/permissions"
        );
        assert!(check_principal(share, &Value::from("users"), vec![]).is_empty());
        assert_eq!(
            check_principal(&TARGETS[0], &Value::from("users"), vec![]).len(),
            1
        );
        assert_eq!(check_principal(share, &Value::from(" "), vec![]).len(), 1);
        // Imported by the Terraform provider's ids.
        let (t, n, _) = parse_id("model/main.ml.churn", false).unwrap();
        assert_eq!((t.attr, n), ("model", "main.ml.churn"));
        let (t, n, p) = parse_id("share/quarterly/partner-co", true).unwrap();
        assert_eq!((t.attr, n, p), ("share", "quarterly", Some("partner-co")));
        assert!(parse_id("model_service/a.b", false).is_err());
        let o: Object = Object::from_iter([("function".to_string(), Value::from("main.udf"))]);
        assert_eq!(
            check_target(&o)[0].hint.as_deref(),
            Some("write it as CATALOG.SCHEMA.FUNCTION")
        );
    }
}
