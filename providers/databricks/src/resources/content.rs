//! Objects whose body is content uploaded from the configuration: notebooks and files in
//! the workspace, and files in Unity Catalog volumes.
//!
//! The content comes from `source` (a local file) or `content_base64`. Its SHA-256 is the
//! `content_sha256` attribute, derived before planning, so editing the local file shows as a
//! change even though the path did not change. A remote edit shows as drift: after each
//! upload the kind records what the service holds (`remote_fingerprint`); a read that finds
//! something else reports a different `content_sha256`, which the plan puts back.

use super::place::Place;
use super::{err, gone_ok, none_if_missing, str_attr, volume_files, workspace_folders};
use crate::Shared;
use crate::client::Client;
use crate::volume_path::VolumePath;
use async_trait::async_trait;
use base64::Engine as _;
use brickform_core::location::Location;
use brickform_core::provider::{
    AttrType, Attribute, Finding, OpContext, ProviderError, ProviderResult, Remote, ResourceKind,
    Schema,
};
use brickform_core::value::{Object, Value, quote};
use serde_json::{Value as Json, json};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// A notebook in the workspace tree (imported as SOURCE with a language).
    Notebook,
    /// A plain file in the workspace tree.
    WorkspaceFile,
    /// A file in a Unity Catalog volume (Files API).
    VolumeFile,
}

pub struct ContentKind {
    pub type_name: &'static str,
    pub store: Store,
    pub schema: Schema,
    pub shared: Arc<Shared>,
}

/// What a folder holds, as one fingerprint: every object under it with its type, language
/// and modification time (one listing per folder). `None` when the folder is gone.
async fn tree_fingerprint(client: &Client, root: &str) -> ProviderResult<Option<String>> {
    let Some(status) = none_if_missing(
        client
            .get(
                "/api/2.0/workspace/get-status",
                &[("path", root.to_string())],
            )
            .await,
    )?
    else {
        return Ok(None);
    };
    let line = |o: &Json| {
        let s = |k: &str| o.get(k).map(Json::to_string).unwrap_or_default();
        format!(
            "{} {} {} {}",
            s("path"),
            s("object_type"),
            s("language"),
            s("modified_at")
        )
    };
    let mut lines = vec![line(&status)];
    let mut folders = Vec::new();
    if status.get("object_type").and_then(Json::as_str) == Some("DIRECTORY") {
        folders.push(root.to_string());
    }
    while let Some(dir) = folders.pop() {
        let listing = client
            .get("/api/2.0/workspace/list", &[("path", dir.clone())])
            .await
            .map_err(err)?;
        for o in listing
            .get("objects")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            lines.push(line(o));
            if o.get("object_type").and_then(Json::as_str) == Some("DIRECTORY")
                && let Some(p) = o.get("path").and_then(Json::as_str)
            {
                folders.push(p.to_string());
            }
        }
    }
    lines.sort();
    Ok(Some(format!(
        "tree:{}",
        sha256_hex(lines.join("\n").as_bytes())
    )))
}

/// A workspace object's content as its source (a notebook with the service's header line);
/// `None` when it is not there.
pub async fn export(client: &Client, path: &str) -> ProviderResult<Option<Vec<u8>>> {
    let query = [("path", path.to_string()), ("format", "SOURCE".to_string())];
    let Some(resp) = none_if_missing(client.get("/api/2.0/workspace/export", &query).await)? else {
        return Ok(None);
    };
    let content = resp.get("content").and_then(Json::as_str).unwrap_or("");
    Ok(Some(
        base64::engine::general_purpose::STANDARD
            .decode(content)
            .unwrap_or_default(),
    ))
}

/// The attributes every content kind has.
pub fn base_schema(description: &'static str) -> Schema {
    Schema::new()
        .describe(description)
        .attr(Attribute::required("path", AttrType::String).force_new())
        .attr(
            Attribute::optional("source", AttrType::String)
                .describe("Local file to upload, relative to the configuration directory."),
        )
        .attr(
            Attribute::optional("content_base64", AttrType::String)
                .describe("Content, base64-encoded (instead of source)."),
        )
        .attr(
            Attribute::optional_computed("content_sha256", AttrType::String)
                .derived_from(&["source", "content_base64"])
                .describe("SHA-256 of the content; derived from source or content_base64."),
        )
        .attr(Attribute::computed("id", AttrType::String))
        .attr(
            // What the service holds after the upload: new whenever the content is.
            Attribute::computed("remote_fingerprint", AttrType::String).derived_from(&[
                "content_sha256",
                "source",
                "content_base64",
            ]),
        )
}

/// What a workspace object (a notebook, a workspace file) has besides: where it is shown
/// and the service's id of it, as the Terraform provider exports them.
pub fn workspace_object_schema(schema: Schema) -> Schema {
    schema
        .attr(
            Attribute::computed("url", AttrType::String)
                .derived_from(&["path"])
                .describe("The object's page in the workspace."),
        )
        .attr(
            Attribute::computed("workspace_path", AttrType::String)
                .derived_from(&["path"])
                .describe("The path on the workspace file system: /Workspace followed by path."),
        )
        .attr(
            Attribute::computed("object_id", AttrType::Number)
                .describe("The service's id of the object."),
        )
        .attr(workspace_folders::attribute())
}

/// `/Workspace` + `path` (once: a path written with the prefix keeps it).
fn workspace_path(path: &str) -> String {
    if path == "/Workspace" || path.starts_with("/Workspace/") {
        path.to_string()
    } else {
        format!("/Workspace{path}")
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// Why a configuration gives no content.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    #[error("set either source or content_base64, not both")]
    Both,
    #[error("one of source or content_base64 is required")]
    Neither,
    #[error("cannot read source {}: {source}", path.display())]
    Read {
        path: std::path::PathBuf,
        #[source]
        source: brickform_core::limits::ReadError,
    },
    #[error("content_base64 is not valid base64: {0}")]
    Base64(#[source] base64::DecodeError),
}

// The engine reports a kind's prepare errors by their text, against the resource block.
impl From<ContentError> for brickform_core::provider::PrepareError {
    fn from(e: ContentError) -> Self {
        Self::Invalid(e.to_string())
    }
}

/// The bytes a configuration asks for.
pub fn content_of(config: &Object, base_dir: &Path) -> Result<Vec<u8>, ContentError> {
    match (
        str_attr(config, "source"),
        str_attr(config, "content_base64"),
    ) {
        (Some(_), Some(_)) => Err(ContentError::Both),
        (None, None) => Err(ContentError::Neither),
        (Some(src), None) => {
            let path = base_dir.join(src);
            // Only a regular file of bounded size: a named pipe would block the plan.
            brickform_core::limits::read_file(&path)
                .map_err(|source| ContentError::Read { path, source })
        }
        (None, Some(b64)) => base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .map_err(ContentError::Base64),
    }
}

/// A notebook's language: as configured, else told by the extension of its path, else by
/// that of its source file (`source = "etl.py"`, as the Terraform provider tells it).
fn language_of(config: &Object) -> Option<String> {
    if let Some(l) = str_attr(config, "language") {
        return Some(l.to_uppercase());
    }
    ["path", "source"]
        .iter()
        .find_map(|a| language_of_extension(str_attr(config, a)?))
}

fn language_of_extension(path: &str) -> Option<String> {
    let ext = Path::new(path).extension()?.to_str()?.to_lowercase();
    Some(
        match ext.as_str() {
            "py" => "PYTHON",
            "sql" => "SQL",
            "scala" => "SCALA",
            "r" => "R",
            _ => return None,
        }
        .to_string(),
    )
}

/// Whether a notebook's content is a Jupyter notebook: `format = "JUPYTER"`, or an
/// `.ipynb` path or source file when `format` is unset.
fn jupyter(config: &Object) -> bool {
    match str_attr(config, "format") {
        Some(f) => f == "JUPYTER",
        None => ["path", "source"]
            .iter()
            .filter_map(|k| str_attr(config, k))
            .any(|p| p.to_ascii_lowercase().ends_with(".ipynb")),
    }
}

/// Whether a notebook's content is a Databricks archive (a folder of notebooks in one zip
/// file): `format = "DBC"`, or a `.dbc` source file when `format` is unset, as the
/// Terraform provider tells it.
fn archive(config: &Object) -> bool {
    match str_attr(config, "format") {
        Some(f) => f == "DBC",
        None => {
            str_attr(config, "source").is_some_and(|p| p.to_ascii_lowercase().ends_with(".dbc"))
        }
    }
}

/// Notebooks are addressed without their file extension.
fn notebook_path(path: &str) -> String {
    for ext in [".py", ".sql", ".scala", ".r", ".R", ".ipynb"] {
        if let Some(p) = path.strip_suffix(ext) {
            return p.to_string();
        }
    }
    path.to_string()
}

impl ContentKind {
    /// What is wrong with `path` as where this kind's content goes: a volume file's path
    /// names a file below a volume (the Files API resolves no `.`, `..` or empty part), a
    /// workspace object's path is absolute.
    fn path_problem(&self, path: &str) -> Option<String> {
        if self.store == Store::VolumeFile {
            VolumePath::parse(path).is_none_or(|p| p.rest.is_empty()).then(|| format!(
                "{} is not a file inside a volume: give /Volumes/<catalog>/<schema>/<volume>/<file>, with no empty, . or .. part",
                quote(path)
            ))
        } else {
            (!path.starts_with('/')).then(|| format!(
                "{} is not an absolute workspace path, such as /Workspace/Shared/x or /Users/me/x",
                quote(path)
            ))
        }
    }

    fn object_path(&self, config: &Object) -> String {
        let p = str_attr(config, "path").unwrap_or("").to_string();
        match self.store {
            Store::Notebook => notebook_path(&p),
            _ => p,
        }
    }

    /// Uploads the content; `replacing` when an object brickform made is there already (an
    /// update), which an archive, unlike other imports, cannot overwrite.
    async fn upload(
        &self,
        client: &Client,
        ctx: &OpContext,
        config: &Object,
        replacing: bool,
    ) -> ProviderResult<Remote> {
        let bytes =
            content_of(config, &ctx.base_dir).map_err(|e| ProviderError::invalid(e.to_string()))?;
        let path = self.object_path(config);
        let dbc = self.store == Store::Notebook && archive(config);
        // Folders made for the object: recorded by a create (an update keeps the record).
        let mut created = Vec::new();
        match self.store {
            _ if dbc => {
                if replacing {
                    gone_ok(
                        client
                            .idempotent()
                            .post(
                                "/api/2.0/workspace/delete",
                                &json!({ "path": path, "recursive": true }),
                            )
                            .await,
                    )?;
                }
                let body = json!({
                    "path": path,
                    "content": base64::engine::general_purpose::STANDARD.encode(&bytes),
                    "format": "DBC",
                });
                created = self
                    .write_in_folder(client, &path, || {
                        client.post("/api/2.0/workspace/import", &body)
                    })
                    .await?;
            }
            Store::Notebook | Store::WorkspaceFile => {
                let mut body = json!({
                    "path": path,
                    "content": base64::engine::general_purpose::STANDARD.encode(&bytes),
                    "overwrite": true,
                });
                if self.store == Store::Notebook && jupyter(config) {
                    // The notebook says its language itself.
                    body["format"] = json!("JUPYTER");
                    if let Some(lang) = language_of(config) {
                        body["language"] = json!(lang);
                    }
                } else if self.store == Store::Notebook {
                    let lang = language_of(config)
                        .ok_or_else(|| ProviderError::invalid("set language (PYTHON, SQL, SCALA or R): it cannot be told from the path or the source file"))?;
                    body["format"] = json!("SOURCE");
                    body["language"] = json!(lang);
                } else {
                    body["format"] = json!("AUTO");
                }
                // With overwrite, a repeat replaces what the first attempt wrote.
                let idempotent = client.idempotent();
                created = self
                    .write_in_folder(client, &path, || {
                        idempotent.post("/api/2.0/workspace/import", &body)
                    })
                    .await?;
            }
            Store::VolumeFile => volume_files::upload(client, &path, bytes).await?,
        }
        let mut attrs = config.clone();
        attrs.insert("id".into(), Value::from(path.as_str()));
        // Its place among the attributes, before what the status adds.
        attrs.insert("remote_fingerprint".into(), Value::Null);
        // The content read back and the status are two reads of what was written: made at
        // once, they cost one round trip.
        let (fingerprint, described) = tokio::join!(
            self.fingerprint(client, &path, dbc),
            self.describe_object(client, &path, &mut attrs)
        );
        let fingerprint = fingerprint?.ok_or_else(|| {
            ProviderError::other(format!("{path} was uploaded but cannot be read back"))
        })?;
        described?;
        attrs.insert("remote_fingerprint".into(), Value::from(fingerprint));
        if self.store != Store::VolumeFile && !replacing {
            attrs.insert(
                workspace_folders::ATTRIBUTE.into(),
                Value::List(created.into_iter().map(Value::from).collect()),
            );
        }
        if let Some(l) = language_of(config)
            && self.store == Store::Notebook
        {
            attrs.insert("language".into(), Value::from(l));
        }
        Ok(Remote { id: path, attrs })
    }

    /// A workspace object's `url`, `workspace_path` and `object_id` (from its status).
    async fn describe_object(
        &self,
        client: &Client,
        path: &str,
        attrs: &mut Object,
    ) -> ProviderResult<()> {
        if self.store == Store::VolumeFile {
            return Ok(());
        }
        let status = none_if_missing(
            client
                .get(
                    "/api/2.0/workspace/get-status",
                    &[("path", path.to_string())],
                )
                .await,
        )?
        .ok_or_else(|| ProviderError::other(format!("{path} was uploaded but is not there")))?;
        if let Some(id) = status.get("object_id").and_then(Json::as_i64) {
            attrs.insert("object_id".into(), Value::from(id));
        }
        // A Jupyter notebook's language is the one its content declares.
        if self.store == Store::Notebook
            && attrs.get("language").is_none_or(Value::is_null)
            && let Some(lang) = status.get("language").and_then(Json::as_str)
        {
            attrs.insert("language".into(), Value::from(lang));
        }
        attrs.insert(
            "url".into(),
            Value::from(format!("{}/#workspace{path}", self.shared.web_host())),
        );
        attrs.insert("workspace_path".into(), Value::from(workspace_path(path)));
        Ok(())
    }

    /// What the service holds now, as a short fingerprint: the hash of the exported content
    /// for workspace objects, size and modification time for volume files (so a refresh
    /// does not download every file). `None` when the object is gone.
    ///
    /// An archive's folder is known by what it holds: each object's path, type, language
    /// and modification time, so a notebook edited, added or removed inside it shows.
    async fn fingerprint(
        &self,
        client: &Client,
        path: &str,
        archive: bool,
    ) -> ProviderResult<Option<String>> {
        if archive {
            return tree_fingerprint(client, path).await;
        }
        match self.store {
            Store::Notebook | Store::WorkspaceFile => Ok(export(client, path)
                .await?
                .map(|bytes| format!("sha256:{}", sha256_hex(&bytes)))),
            Store::VolumeFile => volume_files::fingerprint(client, path).await,
        }
    }
}

#[async_trait]
impl super::DatabricksKind for ContentKind {
    /// Notebooks and workspace files under the rules' path prefixes (`/Users/me/demo/`).
    async fn listing(
        &self,
        client: &Client,
        scope: &crate::resources::adoption::Scope<'_>,
    ) -> Option<ProviderResult<Vec<crate::resources::adoption::Listed>>> {
        let wanted = match self.store {
            Store::Notebook => "NOTEBOOK",
            Store::WorkspaceFile => "FILE",
            Store::VolumeFile => return None,
        };
        let prefixes = scope.workspace_prefixes.clone();
        let tree = scope
            .shared_list("workspace objects", || async {
                let mut all = Vec::new();
                for p in &prefixes {
                    // The folder the prefix names, or the one its last part is in.
                    let dir = match p.strip_suffix('/') {
                        Some(d) => d.to_string(),
                        None => p
                            .rsplit_once('/')
                            .map(|(d, _)| d.to_string())
                            .unwrap_or_default(),
                    };
                    let dir = if dir.is_empty() { "/".to_string() } else { dir };
                    all.extend(super::locations::workspace_objects(client, &dir).await?);
                }
                Ok(all)
            })
            .await;
        let tree = match tree {
            Ok(t) => t,
            Err(e) => return Some(Err(e)),
        };
        let mut out: Vec<crate::resources::adoption::Listed> = Vec::new();
        for o in tree.iter() {
            let (Some(path), Some(kind)) = (
                o.get("path").and_then(Json::as_str),
                o.get("object_type").and_then(Json::as_str),
            ) else {
                continue;
            };
            if kind == wanted && !out.iter().any(|l| l.id == path) {
                out.push(crate::resources::adoption::Listed {
                    id: path.to_string(),
                    name: path.to_string(),
                    ..Default::default()
                });
            }
        }
        Some(Ok(out))
    }

    /// The content goes to a local file, exported as the service holds it, so the plan
    /// finds it unchanged: a notebook as its source, named for its language.
    async fn adoption(
        &self,
        client: &Client,
        remote: &Remote,
        _adopted: &[Location],
    ) -> ProviderResult<crate::resources::adoption::Adoption> {
        // The hash an import records says where it came from; the source file's is computed.
        let values =
            crate::resources::adoption::as_configured(&self.schema, &remote.attrs, |k, _| {
                k == "content_sha256"
            });
        let Some(bytes) = export(client, &remote.id).await? else {
            return Err(ProviderError::not_found(format!(
                "{} is not there",
                remote.id
            )));
        };
        let base = remote
            .id
            .rsplit('/')
            .next()
            .unwrap_or(&remote.id)
            .to_string();
        let name = match (self.store, str_attr(&remote.attrs, "language")) {
            (Store::Notebook, Some(lang)) => {
                let ext = match lang {
                    "SQL" => "sql",
                    "SCALA" => "scala",
                    "R" => "r",
                    _ => "py",
                };
                format!("{base}.{ext}")
            }
            _ => base,
        };
        Ok(crate::resources::adoption::Adoption {
            values,
            file: Some(crate::resources::adoption::AdoptedFile {
                name,
                bytes,
                attr: "source",
            }),
        })
    }
}

impl ContentKind {
    /// Writes the object at `path` with `write`, into its folder, made first where missing
    /// (see [`workspace_folders`]); the folders made.
    async fn write_in_folder<W, F>(
        &self,
        client: &Client,
        path: &str,
        write: W,
    ) -> ProviderResult<Vec<String>>
    where
        W: Fn() -> F,
        F: std::future::Future<Output = Result<Json, crate::client::ApiError>>,
    {
        match volume_files::parent(path) {
            Some(dir) => workspace_folders::make_then_write(client, &self.shared, dir, write).await,
            None => write().await.map(|_| Vec::new()).map_err(err),
        }
    }

    /// A pipeline source whose new content changes a dataset between streaming table and
    /// materialized view (see `datasets`): compared with the content the workspace holds.
    async fn dataset_type_changes(
        &self,
        ctx: &OpContext,
        change: &brickform_core::provider::PlannedChange<'_>,
    ) -> Vec<brickform_core::plan::DataEffect> {
        use brickform_core::plan::{Action, DataEffect, DataImpactKind};
        let (Some(before), Some(after)) = (change.before, change.after) else {
            return Vec::new();
        };
        let changed = str_attr(before, "content_sha256") != str_attr(after, "content_sha256");
        if change.action != Action::Update
            || change.offline
            || self.store == Store::VolumeFile
            || !changed
        {
            return Vec::new();
        }
        let python = match language_of(after).as_deref() {
            Some("PYTHON") => true,
            Some("SQL") => false,
            _ => return Vec::new(),
        };
        let (Some(path), Ok(client)) = (str_attr(before, "path"), self.shared.client()) else {
            return Vec::new();
        };
        let (Ok(Some(old)), Ok(new)) = (
            export(&client, path).await,
            content_of(after, &ctx.base_dir),
        ) else {
            return Vec::new();
        };
        let (old, new) = (String::from_utf8_lossy(&old), String::from_utf8_lossy(&new));
        super::datasets::changed_types(&old, &new, python)
            .into_iter()
            .map(|(name, was, now)| DataEffect {
                kind: DataImpactKind::DatasetTypeChanged,
                tables: None,
                details: [
                    ("dataset", name.as_str()),
                    ("file", path),
                    ("from_type", was.key()),
                    ("to_type", now.key()),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
                message: format!(
                    "dataset {name} in {path} changes from a {} to a {}: the pipeline's next update fails, as the service does not change a dataset's type, and a full refresh does not fix it",
                    was.noun(),
                    now.noun()
                ),
                hint: Some(format!(
                    "give the new {} another name (and remove {name} from the pipeline, which drops it)",
                    now.noun()
                )),
            })
            .collect()
    }
}

#[async_trait]
impl ResourceKind for ContentKind {
    async fn data_impact(
        &self,
        ctx: &OpContext,
        change: &brickform_core::provider::PlannedChange<'_>,
    ) -> Vec<brickform_core::plan::DataEffect> {
        self.dataset_type_changes(ctx, change).await
    }

    fn type_name(&self) -> &'static str {
        self.type_name
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Where the content goes, checked where it is written (see [`ContentKind::path_problem`]).
    fn check(&self, config: &Object) -> Vec<Finding> {
        str_attr(config, "path")
            .and_then(|path| self.path_problem(path))
            .map(|why| Finding::error(&["path"], why))
            .into_iter()
            .collect()
    }

    fn prepare_config(
        &self,
        config: &mut Object,
        base_dir: &Path,
    ) -> Result<(), brickform_core::provider::PrepareError> {
        // Checked again here: a path known only at apply (from another resource) skipped
        // the check at plan.
        if let Some(why) = str_attr(config, "path").and_then(|p| self.path_problem(p)) {
            return Err(why.into());
        }
        let bytes = content_of(config, base_dir)?;
        config.insert("content_sha256".into(), Value::from(sha256_hex(&bytes)));
        if self.store == Store::Notebook {
            if archive(config) {
                if str_attr(config, "language").is_some() {
                    return Err("a DBC archive says the language of each notebook it holds: remove language".into());
                }
                if !bytes.starts_with(b"PK\x03\x04") && !bytes.starts_with(b"PK\x05\x06") {
                    return Err("the content is not a DBC archive (a zip file of notebooks), which format \"DBC\" or a .dbc source says it is".into());
                }
                config.insert("format".into(), Value::from("DBC"));
                return Ok(());
            }
            if str_attr(config, "format").is_none() && jupyter(config) {
                config.insert("format".into(), Value::from("JUPYTER"));
            }
            // A notebook lives at its path without the source file's extension, which only
            // tells its language: record both as the workspace has them, so an imported
            // notebook (known by its path) compares equal to its configuration.
            let path = str_attr(config, "path").unwrap_or("").to_string();
            if let Some(lang) = language_of(config) {
                config.insert("language".into(), Value::from(lang));
            }
            config.insert("path".into(), Value::from(notebook_path(&path)));
        }
        Ok(())
    }

    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        self.upload(&client, ctx, config, false).await
    }

    async fn read(
        &self,
        _ctx: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let Some(now) = self
            .fingerprint(&client, id, str_attr(prior, "format") == Some("DBC"))
            .await?
        else {
            return Ok(None);
        };
        let mut attrs = prior.clone();
        if str_attr(prior, "remote_fingerprint") != Some(now.as_str()) {
            // Changed outside brickform: the content is no longer what was applied.
            attrs.insert(
                "content_sha256".into(),
                Value::from(format!("changed outside brickform ({now})")),
            );
        }
        attrs.insert("id".into(), Value::from(id));
        // Objects recorded before these attributes existed get them once.
        if !attrs.contains_key("object_id") {
            self.describe_object(&client, id, &mut attrs).await?;
        }
        Ok(Some(Remote {
            id: id.to_string(),
            attrs,
        }))
    }

    async fn update(
        &self,
        ctx: &OpContext,
        _id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        // A notebook keeps the language it was made with, and a new source is imported in
        // it: when neither the configuration nor its path says one (the path is ignored and
        // no longer tells it), the one it has is the one to state.
        let mut with_language;
        let mut config = config;
        if self.store == Store::Notebook
            && language_of(config).is_none()
            && let Some(l) = prior.get("language").filter(|l| !l.is_null())
        {
            with_language = config.clone();
            with_language.insert("language".into(), l.clone());
            config = &with_language;
        }
        let mut remote = self.upload(&client, ctx, config, true).await?;
        if let Some(folders) = prior.get(workspace_folders::ATTRIBUTE) {
            remote
                .attrs
                .insert(workspace_folders::ATTRIBUTE.into(), folders.clone());
        }
        Ok(remote)
    }

    async fn delete(&self, ctx: &OpContext, id: &str, prior: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        // An archive made a folder: it goes with what it holds, as the provider deletes it.
        let recursive = str_attr(prior, "format") == Some("DBC");
        match self.store {
            Store::Notebook | Store::WorkspaceFile => {
                gone_ok(
                    client
                        .idempotent()
                        .post(
                            "/api/2.0/workspace/delete",
                            &json!({ "path": id, "recursive": recursive }),
                        )
                        .await,
                )?;
                workspace_folders::remove_empty(&client, &self.shared, ctx, id, prior).await
            }
            Store::VolumeFile => volume_files::delete(&client, id).await,
        }
    }

    /// A workspace object exports as the bytes it holds: when their hash is the configured
    /// content's, the content is what was applied. A notebook exports with the service's
    /// header, so only a source written from an export (as `brickform adopt` writes them)
    /// hashes the same; other notebooks and volume files (known by size and time only) are
    /// uploaded once.
    fn held_as_configured(&self, remote: &Remote, config: &Object) -> Object {
        let holds = self.store != Store::VolumeFile
            && str_attr(&remote.attrs, "remote_fingerprint")
                .and_then(|f| f.strip_prefix("sha256:"))
                == str_attr(config, "content_sha256");
        if !holds {
            return Object::default();
        }
        ["source", "content_base64", "content_sha256"]
            .iter()
            .filter_map(|k| Some((k.to_string(), config.get(*k)?.clone())))
            .collect()
    }

    async fn import(&self, _ctx: &OpContext, id: &str) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let Some(fp) = self.fingerprint(&client, id, false).await? else {
            return Ok(None);
        };
        let mut attrs = Object::default();
        attrs.insert("path".into(), Value::from(id));
        attrs.insert("id".into(), Value::from(id));
        attrs.insert("remote_fingerprint".into(), Value::from(fp.as_str()));
        self.describe_object(&client, id, &mut attrs).await?;
        attrs.insert(
            "content_sha256".into(),
            Value::from(format!("imported ({fp})")),
        );
        Ok(Some(Remote {
            id: id.to_string(),
            attrs,
        }))
    }

    fn natural_key(&self, _ctx: &OpContext, config: &Object) -> Option<String> {
        Some(self.object_path(config))
    }

    fn location(&self, attrs: &Object) -> Option<Location> {
        let path = self.object_path(attrs);
        match self.store {
            Store::VolumeFile => Place::volume_path(&path).map(Location::from),
            _ => Some(Place::workspace(&path).into()),
        }
    }

    async fn find_by_key(&self, ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        self.import(ctx, key).await
    }

    async fn find_existing(
        &self,
        ctx: &OpContext,
        config: &Object,
    ) -> ProviderResult<Vec<brickform_core::provider::Existing>> {
        let what = match self.store {
            Store::Notebook => "notebook",
            Store::WorkspaceFile => "workspace file",
            Store::VolumeFile => "file",
        };
        let path = self.object_path(config);
        if path.is_empty() {
            return Ok(Vec::new());
        }
        // Its create will need to know whether its folder is there: asked now, beside the
        // lookup, it costs the create no round trip of its own (see `workspace_folders`).
        let survey = async {
            if self.store == Store::VolumeFile {
                return;
            }
            if let (Some(dir), Ok(client)) = (volume_files::parent(&path), self.shared.client()) {
                workspace_folders::survey(&client, &self.shared, dir).await;
            }
        };
        let (found, ()) = tokio::join!(self.import(ctx, &path), survey);
        Ok(found?
            .map(|r| super::existing_at(what, r))
            .into_iter()
            .collect())
    }
}
