//! What Unity Catalog does to the workspace state, apart from HTTP: the securables' own
//! parts (how each is created, the hooks of [`super::securables::SECURABLES`]) and the
//! tables and volumes other domains create.

use super::securables::{Changes, Kind, securable};
use super::{DB_TYPES, SECRET_OPTIONS};
use crate::behaviours::Behaviour;
use crate::errors::{ApiError, ApiResult};
use crate::store::{Ctx, State};
use crate::util::{compact, s, with_prefix};
use serde_json::{Map, Value, json};

/// Created with every managed catalog; not counted as content.
const INFO_SCHEMA: &str = "information_schema";

/// The metastore's storage root. The service's managed volumes without a catalog or schema
/// root live at `s3://BUCKET/metastore/METASTORE_ID/volumes/VOLUME_ID` (the Databricks CLI's
/// cloud-recorded acceptance outputs), tables beside them under `tables/`.
pub(crate) fn metastore_root(st: &State) -> String {
    format!(
        "s3://brickform-local-metastore/metastore/{}",
        st.metastore_id
    )
}

/// Where a managed volume or table of this schema lives: under the managed location of the
/// nearest container with its own storage root (`…/__unitystorage/catalogs/CID/volumes/VID`
/// or `…/__unitystorage/schemas/SID/tables/TID`, as object paths on the service show), else
/// under the metastore's root.
fn managed_base(st: &State, catalog: &str, schema: &Map<String, Value>) -> String {
    let own = |m: &Map<String, Value>| {
        m.get("storage_root")
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty())
            .and_then(|_| m.get("storage_location").and_then(Value::as_str))
            .map(str::to_string)
    };
    own(schema)
        .or_else(|| st.uc.catalogs.get(catalog).and_then(own))
        .unwrap_or_else(|| metastore_root(st))
}

/// The owner and creation fields of a new securable, and the update fields of every write.
pub fn audit(m: &mut Map<String, Value>, ctx: &Ctx, created: bool) {
    if created {
        m.insert("owner".into(), json!(ctx.user));
        m.insert("created_at".into(), json!(ctx.now));
        m.insert("created_by".into(), json!(ctx.user));
    }
    m.insert("updated_at".into(), json!(ctx.now));
    m.insert("updated_by".into(), json!(ctx.user));
}

/// `effective_predictive_optimization_flag`: the securable's own setting, else inherited.
fn effective_po(
    own: Option<&str>,
    parent: Option<&Value>,
    parent_name: &str,
    parent_type: &str,
) -> Value {
    match own {
        Some(v @ ("ENABLE" | "DISABLE")) => json!({"value": v}),
        _ => {
            let value = parent
                .and_then(|p| p.get("value"))
                .and_then(Value::as_str)
                .unwrap_or("DISABLE");
            json!({"value": value, "inherited_from_type": parent_type, "inherited_from_name": parent_name})
        }
    }
}

// ---------- catalogs ----------

/// A catalog create request (`CreateCatalog` of the SDK), its name already checked.
#[derive(Debug, Default)]
pub struct NewCatalog<'a> {
    pub name: String,
    pub comment: Option<&'a str>,
    pub properties: Option<&'a Map<String, Value>>,
    pub options: Option<&'a Map<String, Value>>,
    pub storage_root: Option<&'a str>,
    /// Lower-cased: a foreign catalog's connection.
    pub connection_name: Option<String>,
    pub provider_name: Option<&'a str>,
    pub share_name: Option<&'a str>,
    pub custom_max_retention_hours: Option<i64>,
    pub managed_encryption_settings: Option<&'a Map<String, Value>>,
}

impl NewCatalog<'_> {
    /// What the request alone gets wrong, before the workspace is looked at.
    pub fn check(&self) -> ApiResult<()> {
        if self.provider_name.is_some() != self.share_name.is_some() {
            return Err(ApiError::invalid(
                "provider_name and share_name must be set together",
            ));
        }
        Ok(())
    }
}

/// Creates a catalog: foreign with a connection, Delta Sharing with a provider and share,
/// else managed, with its `default` and `information_schema` schemas.
pub fn create_catalog(st: &mut State, ctx: &Ctx, c: NewCatalog) -> ApiResult<Map<String, Value>> {
    let catalog_type = if c.connection_name.is_some() {
        "FOREIGN_CATALOG"
    } else if c.provider_name.is_some() {
        "DELTASHARING_CATALOG"
    } else {
        "MANAGED_CATALOG"
    };
    let managed = catalog_type == "MANAGED_CATALOG";
    let name = c.name.clone();
    let m = securable(Kind::Catalog).create(st, &[], &c.name, |st| {
        if let Some(conn) = &c.connection_name
            && !st.uc.connections.contains_key(conn)
        {
            return Err(securable(Kind::Connection).missing(conn));
        }
        let root = c.storage_root.map_or_else(
            || metastore_root(st),
            |r| r.trim_end_matches('/').to_string(),
        );
        let location = managed
            .then(|| format!("{root}/__unitystorage/catalogs/{}", uuid::Uuid::new_v4()));
        let mut m = compact(json!({
            "name": c.name, "full_name": c.name, "comment": c.comment, "properties": c.properties,
            "options": c.options, "storage_root": c.storage_root, "storage_location": location,
            "connection_name": c.connection_name, "provider_name": c.provider_name,
            "share_name": c.share_name, "custom_max_retention_hours": c.custom_max_retention_hours,
            "managed_encryption_settings": c.managed_encryption_settings,
            "catalog_type": catalog_type, "isolation_mode": "OPEN", "metastore_id": st.metastore_id,
            "securable_type": "CATALOG", "browse_only": false, "provisioning_info": {"state": "ACTIVE"},
        }));
        m.insert(
            "effective_predictive_optimization_flag".into(),
            effective_po(None, None, &st.metastore_id, "METASTORE"),
        );
        audit(&mut m, ctx, true);
        Ok(m)
    })?;
    if managed {
        for schema in ["default", INFO_SCHEMA] {
            let mut sm = schema_info(
                st,
                ctx,
                &NewSchema {
                    catalog: name.clone(),
                    name: schema.into(),
                    ..NewSchema::default()
                },
            )?;
            if schema == INFO_SCHEMA {
                sm.insert("comment".into(), json!("Information schema (auto-created)"));
                sm.insert("owner".into(), json!("System user"));
            } else {
                sm.insert("comment".into(), json!("Default schema (auto-created)"));
            }
            st.uc.schemas.insert(format!("{name}.{schema}"), sm);
        }
    }
    Ok(m)
}

/// The catalog a new workspace starts with (see `Behaviour::NewWorkspaceMain`), which the
/// provider's examples and acceptance tests assume is there.
pub const NEW_WORKSPACE_CATALOG: &str = "main";

/// What Unity Catalog holds in a workspace just created: the managed catalog `main`, with the
/// `default` and `information_schema` schemas every managed catalog gets, made as if the
/// workspace's user had created it. Called once, when the workspace is created, never when a
/// saved one is loaded: a `main` the user dropped stays dropped, as on the service.
pub fn seed_new_workspace(st: &mut State, ctx: &Ctx) -> ApiResult<()> {
    if !ctx.behaviours.on(Behaviour::NewWorkspaceMain) {
        return Ok(());
    }
    create_catalog(
        st,
        ctx,
        NewCatalog {
            name: NEW_WORKSPACE_CATALOG.into(),
            ..NewCatalog::default()
        },
    )?;
    Ok(())
}

/// A foreign catalog's options name the source (its database); only the paths it may read
/// (`authorized_paths`) change in place.
pub fn check_catalog_update(st: &State, ctx: &Ctx, key: &str, c: &Changes) -> ApiResult<()> {
    let Some(current) = st.uc.catalogs.get(key) else {
        return Ok(());
    };
    if s(current, "catalog_type") == "FOREIGN_CATALOG"
        && ctx.behaviours.on(Behaviour::ForeignCatalogOptionsFixed)
        && let Some(Value::Object(new)) = c.set.get("options")
    {
        let old = current
            .get("options")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let source = |m: &Map<String, Value>| {
            m.iter()
                .filter(|(k, _)| *k != "authorized_paths")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<Map<String, Value>>()
        };
        if source(&old) != source(new) {
            return Err(ApiError::invalid(format!(
                "Invalid value for field 'options': the options of foreign catalog '{key}' cannot be changed (only authorized_paths)"
            )));
        }
    }
    Ok(())
}

/// A new predictive optimization setting changes the effective one.
pub fn prepare_catalog_update(st: &mut State, _: &Ctx, _: &str, set: &mut Map<String, Value>) {
    if let Some(own) = set.get("enable_predictive_optimization") {
        let flag = effective_po(own.as_str(), None, &st.metastore_id, "METASTORE");
        set.insert("effective_predictive_optimization_flag".into(), flag);
    }
}

/// A catalog's schemas, but for `information_schema`, block its delete.
pub fn catalog_content(st: &State, name: &str) -> Option<ApiError> {
    let prefix = format!("{name}.");
    let content: Vec<String> = with_prefix(&st.uc.schemas, &prefix)
        .map(|(k, _)| k[prefix.len()..].to_string())
        .filter(|s| s != INFO_SCHEMA)
        .collect();
    (!content.is_empty()).then(|| {
        ApiError::not_empty(
            "CATALOG_NOT_EMPTY",
            format!(
                "Catalog '{name}' is not empty. The catalog has {} schemas(s): {}",
                content.len(),
                content.join(", ")
            ),
        )
    })
}

// ---------- schemas ----------

/// A schema create request (`CreateSchema` of the SDK), its names already checked.
#[derive(Debug, Default)]
pub struct NewSchema<'a> {
    pub catalog: String,
    pub name: String,
    pub comment: Option<&'a str>,
    pub properties: Option<&'a Map<String, Value>>,
    pub storage_root: Option<&'a str>,
    pub custom_max_retention_hours: Option<i64>,
    pub enable_predictive_optimization: Option<&'a str>,
}

/// The info of a new schema of an existing catalog.
fn schema_info(st: &State, ctx: &Ctx, n: &NewSchema) -> ApiResult<Map<String, Value>> {
    let catalog = &n.catalog;
    let cat = st
        .uc
        .catalogs
        .get(catalog)
        .ok_or_else(|| securable(Kind::Catalog).missing(catalog))?;
    let id = uuid::Uuid::new_v4().to_string();
    let base = n
        .storage_root
        .map(|r| r.trim_end_matches('/').to_string())
        .or_else(|| {
            cat.get("storage_location")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    let full = format!("{catalog}.{}", n.name);
    let mut m = compact(json!({
        "name": n.name, "catalog_name": catalog, "full_name": full, "comment": n.comment,
        "properties": n.properties,
        // A schema with its own root has its own managed location; one without uses its
        // catalog's.
        "storage_root": n.storage_root, "storage_location": match n.storage_root {
            Some(_) => base.map(|b| format!("{b}/__unitystorage/schemas/{id}")),
            None => base,
        },
        "custom_max_retention_hours": n.custom_max_retention_hours, "schema_id": id,
        "metastore_id": st.metastore_id, "catalog_type": cat.get("catalog_type"),
        "securable_type": "SCHEMA", "browse_only": false,
    }));
    m.insert(
        "effective_predictive_optimization_flag".into(),
        effective_po(
            None,
            cat.get("effective_predictive_optimization_flag"),
            catalog,
            "CATALOG",
        ),
    );
    audit(&mut m, ctx, true);
    Ok(m)
}

pub fn create_schema(st: &mut State, ctx: &Ctx, n: NewSchema) -> ApiResult<Map<String, Value>> {
    securable(Kind::Schema).create(st, &[&n.catalog], &n.name, |st| {
        let mut m = schema_info(st, ctx, &n)?;
        if let Some(p) = n.enable_predictive_optimization {
            m.insert("enable_predictive_optimization".into(), json!(p));
        }
        Ok(m)
    })
}

/// A new predictive optimization setting changes the effective one, inherited from the
/// catalog unless set.
pub fn prepare_schema_update(st: &mut State, _: &Ctx, key: &str, set: &mut Map<String, Value>) {
    let (catalog, _) = key.split_once('.').unwrap_or((key, ""));
    if let Some(own) = set.get("enable_predictive_optimization") {
        let parent = st
            .uc
            .catalogs
            .get(catalog)
            .and_then(|c| c.get("effective_predictive_optimization_flag"));
        let flag = effective_po(own.as_str(), parent, catalog, "CATALOG");
        set.insert("effective_predictive_optimization_flag".into(), flag);
    }
}

/// A schema's tables and volumes block its delete.
pub fn schema_content(st: &State, full: &str) -> Option<ApiError> {
    let prefix = format!("{full}.");
    let tables: Vec<String> = with_prefix(&st.uc.tables, &prefix)
        .map(|(k, _)| k.clone())
        .collect();
    let volumes: Vec<String> = with_prefix(&st.uc.volumes, &prefix)
        .map(|(k, _)| k.clone())
        .collect();
    // Registered models are routines: the service counts them with the functions.
    let functions: Vec<String> = with_prefix(&st.uc.functions, &prefix)
        .chain(with_prefix(&st.uc.models, &prefix))
        .map(|(k, _)| k.clone())
        .collect();
    (!tables.is_empty() || !volumes.is_empty() || !functions.is_empty()).then(|| {
        ApiError::not_empty(
            "SCHEMA_NOT_EMPTY",
            format!(
                "Schema '{full}' is not empty. The schema has {} tables(s), {} functions(s), {} volumes(s): {}",
                tables.len(),
                functions.len(),
                volumes.len(),
                tables
                    .iter()
                    .chain(&functions)
                    .chain(&volumes)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })
}

// ---------- volumes ----------

/// A volume create request (`CreateVolumeRequestContent` of the SDK), names checked.
#[derive(Debug)]
pub struct NewVolume<'a> {
    pub catalog: String,
    pub schema: String,
    pub name: String,
    /// `MANAGED` or `EXTERNAL`.
    pub volume_type: &'a str,
    pub comment: Option<&'a str>,
    pub storage_location: Option<&'a str>,
}

impl NewVolume<'_> {
    /// An external volume names its location; a managed one must not.
    pub fn check(&self) -> ApiResult<()> {
        match (self.volume_type, self.storage_location) {
            ("EXTERNAL", None) => Err(ApiError::invalid(
                "Missing required field: storage_location (required for EXTERNAL volumes)",
            )),
            ("MANAGED", Some(_)) => Err(ApiError::invalid(
                "Invalid value for field 'storage_location': must not be set for MANAGED volumes",
            )),
            _ => Ok(()),
        }
    }
}

pub fn create_volume(st: &mut State, ctx: &Ctx, v: NewVolume) -> ApiResult<Map<String, Value>> {
    securable(Kind::Volume).create(st, &[&v.catalog, &v.schema], &v.name, |st| {
        Ok(volume_info(st, ctx, &v))
    })
}

/// The info of a new volume of an existing schema: a managed one at its schema's managed
/// location.
fn volume_info(st: &State, ctx: &Ctx, v: &NewVolume) -> Map<String, Value> {
    let (catalog, schema, name) = (&v.catalog, &v.schema, &v.name);
    let full = format!("{catalog}.{schema}.{name}");
    let id = uuid::Uuid::new_v4().to_string();
    let loc = match v.storage_location {
        Some(l) => l.trim_end_matches('/').to_string(),
        None => {
            let base = st
                .uc
                .schemas
                .get(&format!("{catalog}.{schema}"))
                .map_or_else(|| metastore_root(st), |s| managed_base(st, catalog, s));
            format!("{base}/volumes/{id}")
        }
    };
    let mut m = compact(json!({
        "name": name, "catalog_name": catalog, "schema_name": schema, "full_name": full,
        "volume_type": v.volume_type, "comment": v.comment, "storage_location": loc, "volume_id": id,
        "metastore_id": st.metastore_id, "browse_only": false,
    }));
    audit(&mut m, ctx, true);
    m
}

// ---------- registered models ----------

/// A registered model create request (`CreateRegisteredModelRequest` of the SDK), names
/// checked.
#[derive(Debug)]
pub struct NewModel<'a> {
    pub catalog: String,
    pub schema: String,
    pub name: String,
    pub comment: Option<&'a str>,
    pub storage_location: Option<&'a str>,
}

/// Functions and registered models are routines of one namespace: a name one of them
/// holds is taken for the other.
fn routine_taken(st: &State, full: &str) -> ApiResult<()> {
    for kind in [Kind::Function, Kind::RegisteredModel] {
        let sec = securable(kind);
        if sec.has(st, full) {
            return Err(sec.exists(full));
        }
    }
    Ok(())
}

/// Creates a registered model in an existing schema: its versions' files under the
/// schema's managed location unless it names its own.
pub fn create_model(st: &mut State, ctx: &Ctx, m: NewModel) -> ApiResult<Map<String, Value>> {
    securable(Kind::RegisteredModel).create(st, &[&m.catalog, &m.schema], &m.name, |st| {
        routine_taken(st, &format!("{}.{}.{}", m.catalog, m.schema, m.name))?;
        let (catalog, schema, name) = (&m.catalog, &m.schema, &m.name);
        let id = uuid::Uuid::new_v4().to_string();
        let loc = match m.storage_location {
            Some(l) => l.trim_end_matches('/').to_string(),
            None => {
                let base = st
                    .uc
                    .schemas
                    .get(&format!("{catalog}.{schema}"))
                    .map_or_else(|| metastore_root(st), |s| managed_base(st, catalog, s));
                format!("{base}/models/{id}")
            }
        };
        let mut info = compact(json!({
            "name": name, "catalog_name": catalog, "schema_name": schema,
            "full_name": format!("{catalog}.{schema}.{name}"), "comment": m.comment,
            "storage_location": loc, "metastore_id": st.metastore_id, "browse_only": false,
            "aliases": [],
        }));
        audit(&mut info, ctx, true);
        Ok(info)
    })
}

// ---------- functions ----------

/// The fields a function's create must carry (`CreateFunction` of the SDKs, those without
/// `omitempty`), besides its names.
const FUNCTION_REQUIRED: &[&str] = &[
    "data_type",
    "full_data_type",
    "input_params",
    "is_deterministic",
    "is_null_call",
    "parameter_style",
    "routine_body",
    "routine_definition",
    "security_type",
    "specific_name",
    "sql_data_access",
];

/// Creates a function from a create's `function_info` (names checked by the caller) in an
/// existing schema: what it was sent, with its full name and the audit fields.
pub fn create_function(
    st: &mut State,
    ctx: &Ctx,
    catalog: &str,
    schema: &str,
    name: &str,
    function_info: &Map<String, Value>,
) -> ApiResult<Map<String, Value>> {
    if let Some(f) = FUNCTION_REQUIRED
        .iter()
        .find(|f| function_info.get(**f).is_none_or(Value::is_null))
    {
        return Err(crate::body::missing(&format!("function_info.{f}")));
    }
    securable(Kind::Function).create(st, &[catalog, schema], name, |st| {
        let full = format!("{catalog}.{schema}.{name}");
        routine_taken(st, &full)?;
        let mut info = function_info.clone();
        for (k, v) in [
            ("name", name),
            ("catalog_name", catalog),
            ("schema_name", schema),
            ("full_name", full.as_str()),
            ("metastore_id", st.metastore_id.as_str()),
        ] {
            info.insert(k.into(), json!(v));
        }
        info.insert(
            "function_id".into(),
            json!(uuid::Uuid::new_v4().to_string()),
        );
        audit(&mut info, ctx, true);
        Ok(info)
    })
}

/// The staging volume an ingestion gateway creates in its storage schema, named by its
/// `gateway_storage_name`: a managed volume (the SDK's DataStagingOptions: "the system will
/// automatically create the volume under the catalog and schema"). Nothing if the schema is
/// gone or the volume is already there (an edit keeps it).
pub fn put_staging_volume(st: &mut State, ctx: &Ctx, catalog: &str, schema: &str, name: &str) {
    let v = NewVolume {
        catalog: catalog.to_lowercase(),
        schema: schema.to_lowercase(),
        name: name.to_lowercase(),
        volume_type: "MANAGED",
        comment: None,
        storage_location: None,
    };
    // A missing schema or an existing volume is the "nothing" this function promises.
    let _ = create_volume(st, ctx, v);
}

/// Whether `/Volumes/c/s/v/...` lies in an existing volume; returns the volume's root path.
pub fn volume_root(st: &State, path: &str) -> Option<String> {
    let rest = path.strip_prefix("/Volumes/")?;
    let mut parts = rest.splitn(4, '/');
    let (c, s, v) = (parts.next()?, parts.next()?, parts.next()?);
    let full = format!("{c}.{s}.{v}").to_lowercase();
    st.uc
        .volumes
        .contains_key(&full)
        .then(|| format!("/Volumes/{c}/{s}/{v}"))
}

// ---------- tables ----------

/// Creates or refreshes a table a pipeline defines (`TableInfo` of the SDK). An existing
/// table keeps its id and creation; it is (again) the pipeline's. Nothing if the schema is
/// gone: the update would fail there.
pub fn put_pipeline_table(
    st: &mut State,
    ctx: &Ctx,
    full: &str,
    table_type: &str,
    pipeline_id: &str,
) {
    let _ = put_table(st, ctx, full, table_type, Some(pipeline_id));
}

/// Creates or refreshes a table: one a pipeline defines, or one made where brickform does
/// not look (SQL, a notebook, another team's job). An existing table keeps its id and
/// creation. The schema must exist.
pub fn put_table(
    st: &mut State,
    ctx: &Ctx,
    full: &str,
    table_type: &str,
    pipeline_id: Option<&str>,
) -> ApiResult<Value> {
    let full = full.to_lowercase();
    let mut parts = full.splitn(3, '.');
    let (Some(catalog), Some(schema), Some(name)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(ApiError::invalid(format!(
            "Invalid table name '{full}': expected catalog.schema.table"
        )));
    };
    let Some(parent) = st.uc.schemas.get(&format!("{catalog}.{schema}")) else {
        return Err(ApiError::not_found(
            "SCHEMA_DOES_NOT_EXIST",
            format!("Schema '{catalog}.{schema}' does not exist."),
        ));
    };
    let base = managed_base(st, catalog, parent);
    let metastore = st.metastore_id.clone();
    let mut m = match st.uc.tables.get(&full) {
        Some(t) => t.clone(),
        None => {
            let id = uuid::Uuid::new_v4().to_string();
            let mut m = compact(json!({
                "name": name, "catalog_name": catalog, "schema_name": schema, "full_name": full,
                "table_id": id, "storage_location": format!("{base}/tables/{id}"),
                "data_source_format": "DELTA", "metastore_id": metastore, "securable_type": "TABLE",
                "browse_only": false,
            }));
            audit(&mut m, ctx, true);
            m
        }
    };
    m.insert("table_type".into(), json!(table_type));
    match pipeline_id {
        Some(p) => {
            m.insert("pipeline_id".into(), json!(p));
        }
        None => {
            m.remove("pipeline_id");
        }
    }
    audit(&mut m, ctx, false);
    st.uc.tables.insert(full, m.clone());
    Ok(Value::Object(m))
}

/// The tables a pipeline defined, when it is gone: dropped (a delete cascades to them), or
/// kept as nobody's (`cascade=false`).
pub fn end_pipeline_tables(st: &mut State, pipeline_id: &str, keep: bool) {
    let owned: Vec<String> = st
        .uc
        .tables
        .iter()
        .filter(|(_, t)| t.get("pipeline_id").and_then(Value::as_str) == Some(pipeline_id))
        .map(|(k, _)| k.clone())
        .collect();
    for k in owned {
        if !keep {
            st.uc.tables.remove(&k);
        } else if let Some(t) = st.uc.tables.get_mut(&k) {
            t.remove("pipeline_id");
        }
    }
}

// ---------- connections ----------

/// Whether a connection option is write-only (stored apart, never returned).
pub fn is_secret_option(key: &str) -> bool {
    SECRET_OPTIONS.contains(&key.to_ascii_lowercase().as_str())
}

/// The options returned on read, and those withheld. The user name is withheld only while
/// `withhold_connection_user` is modelled.
fn split_options(
    options: &Map<String, Value>,
    ctx: &Ctx,
) -> (Map<String, Value>, Map<String, Value>) {
    let show_user = !ctx.behaviours.on(Behaviour::WithholdConnectionUser);
    options
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .partition(|(k, _)| !is_secret_option(k) || (show_user && k.eq_ignore_ascii_case("user")))
}

/// Database connectors need a host among their options.
pub fn check_connection_options(ctype: &str, options: &Map<String, Value>) -> ApiResult<()> {
    if DB_TYPES.contains(&ctype) && !options.contains_key("host") {
        return Err(ApiError::invalid(format!(
            "Invalid value for field 'options': connection type {ctype} requires the option 'host'"
        )));
    }
    Ok(())
}

/// The fields the service derives from the options: the JDBC url and the credential type.
fn derived_connection_fields(
    m: &mut Map<String, Value>,
    public: &Map<String, Value>,
    secret: &Map<String, Value>,
) {
    if let Some(host) = public.get("host").and_then(Value::as_str) {
        let port = public
            .get("port")
            .and_then(Value::as_str)
            .map(|p| format!(":{p}"))
            .unwrap_or_default();
        m.insert("url".into(), json!(format!("jdbc://{host}{port}/")));
    }
    if secret.contains_key("user") || secret.contains_key("password") {
        m.insert("credential_type".into(), json!("USERNAME_PASSWORD"));
    } else if secret.contains_key("client_secret") {
        m.insert("credential_type".into(), json!("OAUTH_M2M"));
    }
}

/// A connection create request (`CreateConnection` of the SDK), checked as a request.
#[derive(Debug)]
pub struct NewConnection<'a> {
    pub name: String,
    pub connection_type: &'a str,
    pub options: &'a Map<String, Value>,
    pub comment: Option<&'a str>,
    pub properties: Option<&'a Map<String, Value>>,
    pub read_only: Option<bool>,
    pub secrets: Option<&'a Map<String, Value>>,
    pub environment_settings: Option<&'a Map<String, Value>>,
    /// `schemas/<catalog>.<schema>`.
    pub parent: Option<&'a str>,
}

pub fn create_connection(
    st: &mut State,
    ctx: &Ctx,
    n: NewConnection,
) -> ApiResult<Map<String, Value>> {
    let (public, secret) = split_options(n.options, ctx);
    let m = securable(Kind::Connection).create(st, &[], &n.name, |st| {
        if let Some(p) = n.parent {
            let schema = p.strip_prefix("schemas/").map(str::to_lowercase);
            if !schema.as_ref().is_some_and(|s| st.uc.schemas.contains_key(s)) {
                return Err(ApiError::invalid(format!(
                    "Invalid value for field 'parent': '{p}' is not an existing schema (schemas/<catalog>.<schema>)"
                )));
            }
        }
        let mut m = compact(json!({
            "name": n.name, "full_name": n.name, "connection_type": n.connection_type,
            "options": public, "comment": n.comment, "properties": n.properties,
            "read_only": n.read_only.unwrap_or(true), "secrets": n.secrets,
            "environment_settings": n.environment_settings, "parent": n.parent,
            "connection_id": uuid::Uuid::new_v4().to_string(), "metastore_id": st.metastore_id,
            "securable_type": "CONNECTION", "provisioning_info": {"state": "ACTIVE"},
        }));
        derived_connection_fields(&mut m, &public, &secret);
        audit(&mut m, ctx, true);
        Ok(m)
    })?;
    if let Some(c) = st.uc.connections.get_mut(&n.name) {
        c.secret_options = secret;
    }
    Ok(m)
}

/// The options must still suit the connection's type.
pub fn check_connection_update(st: &State, _: &Ctx, key: &str, c: &Changes) -> ApiResult<()> {
    let Some(conn) = st.uc.connections.get(key) else {
        return Ok(());
    };
    let options = c
        .set
        .get("options")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    check_connection_options(&s(&conn.info, "connection_type"), &options)
}

/// New options replace the old ones: the readable ones in the info (with the fields derived
/// from them), the write-only ones apart.
pub fn prepare_connection_update(
    st: &mut State,
    ctx: &Ctx,
    key: &str,
    set: &mut Map<String, Value>,
) {
    // `shift_remove` keeps the other fields in their order (a plain `remove` swaps the last
    // field into the gap), so the answer lists them as the request did.
    let Some(Value::Object(options)) = set.shift_remove("options") else {
        return;
    };
    let Some(c) = st.uc.connections.get_mut(key) else {
        return;
    };
    let (public, secret) = split_options(&options, ctx);
    c.info
        .insert("options".into(), Value::Object(public.clone()));
    c.info.remove("url");
    c.info.remove("credential_type");
    derived_connection_fields(&mut c.info, &public, &secret);
    c.secret_options = secret;
}

/// Foreign catalogs refer to their connection by name and follow its rename.
pub fn follow_connection_rename(st: &mut State, old: &str, new: &str) {
    let followers: Vec<String> = st
        .uc
        .catalogs
        .iter()
        .filter(|(_, cat)| cat.get("connection_name").and_then(Value::as_str) == Some(old))
        .map(|(k, _)| k.clone())
        .collect();
    for k in followers {
        if let Some(cat) = st.uc.catalogs.get_mut(&k) {
            cat.insert("connection_name".into(), json!(new));
        }
    }
}

/// Replaces the write-only options of a connection create or update body, for the request
/// log: the same options the service withholds on read.
pub fn redact_write_only(body: &mut Value) {
    if let Some(Value::Object(options)) = body.get_mut("options") {
        for (k, v) in options.iter_mut() {
            if is_secret_option(k) {
                *v = Value::String(crate::control::REDACTED.into());
            }
        }
    }
}
