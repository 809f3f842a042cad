//! `sdp_meta_onboarding`: the file set sdp-meta's onboarding job reads, rendered from a list of
//! `sdp_meta_flow`s (see `crate::sdp_meta::render`) and kept in a Unity Catalog volume.
//!
//! Everything the files hold is derived before planning (`onboarding_json`, `files`), so a
//! change to a flow shows in the plan as a JSON diff of the onboarding file, and the job and
//! pipeline settings read from this resource (`named_parameters`, `pipeline_configuration`)
//! come from the same rendering as the files. In state, `flows` is recorded as the flows'
//! data_flow_ids: their content is already in the rendered files, and each flow's own state
//! holds its configuration.
//!
//! A refresh compares each file's size and modification time with what the last upload
//! left (`remote_fingerprints`); a file changed or deleted outside brickform is read back and
//! shows as drift, which apply puts back.

use super::place::Place;
use super::volume_files;
use crate::Shared;
use crate::client::Client;
use crate::sdp_meta::{checks, render, schema};
use async_trait::async_trait;
use brickform_core::fan_out;
use brickform_core::location::Location;
use brickform_core::provider::{
    AttrType, Attribute, Finding, OpContext, ProviderError, ProviderResult, Remote, ResourceKind,
    Schema,
};
use brickform_core::value::{Object, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Uploads and reads running at once for one onboarding.
const CONCURRENCY: usize = 8;

pub struct Onboarding {
    shared: Arc<Shared>,
    schema: Schema,
}

impl Onboarding {
    pub fn new(shared: Arc<Shared>) -> Self {
        Onboarding {
            shared,
            schema: schema::onboarding_schema().attr(
                Attribute::computed(
                    "remote_fingerprints",
                    AttrType::Map(Box::new(AttrType::String)),
                )
                .describe("Size and modification time of each file after the last upload."),
            ),
        }
    }
}

fn text<'a>(o: &'a Object, k: &str) -> Option<&'a str> {
    o.get(k).and_then(Value::as_str)
}

/// The derived attributes, with `files` holding every file but the onboarding file itself
/// (its content is `onboarding_json`; showing it twice would double every diff).
fn derived(config: &Object) -> Result<Object, render::RenderError> {
    let mut d = render::derive(config)?;
    if let (Some(path), Some(Value::Object(files))) = (
        text(&d, "onboarding_file_path").map(str::to_string),
        d.get_mut("files"),
    ) {
        Arc::make_mut(files).shift_remove(&path);
    }
    Ok(d)
}

/// Every file the attributes describe: path → content as uploaded.
fn file_set(attrs: &Object) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = attrs
        .get("files")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default();
    if let (Some(path), Some(json)) = (
        text(attrs, "onboarding_file_path"),
        text(attrs, "onboarding_json"),
    ) {
        out.insert(path.to_string(), onboarding_content(path, json));
    }
    out
}

/// The onboarding file as uploaded: the JSON, or the same rows as YAML for a .yml name.
fn onboarding_content(path: &str, json: &str) -> String {
    if render::is_yaml(path) {
        match serde_json::from_str::<serde_json::Value>(json) {
            Ok(v) => render::yaml(&v),
            Err(_) => json.to_string(),
        }
    } else {
        json.to_string()
    }
}

/// sdp-meta converts a YAML onboarding file to JSON next to it (`<name>_yml_converted.json`);
/// destroy removes that file too.
fn converted_copy(path: &str) -> Option<String> {
    if !render::is_yaml(path) {
        return None;
    }
    let stem = path.rsplit_once('.').map(|(s, _)| s)?;
    Some(format!("{stem}_yml_converted.json"))
}

/// Runs `op` for every path, at most CONCURRENCY at a time; the first error wins.
async fn for_each_path<T, F, Fut>(
    client: &Client,
    paths: Vec<(String, T)>,
    op: F,
) -> ProviderResult<Vec<(String, Option<String>)>>
where
    T: Send + 'static,
    F: Fn(Client, String, T) -> Fut,
    Fut: std::future::Future<Output = ProviderResult<Option<String>>> + Send + 'static,
{
    let done = fan_out::bounded("writing files", paths, CONCURRENCY, |(path, arg)| {
        let fut = op(client.clone(), path.clone(), arg);
        async move { (path, fut.await) }
    });
    let mut out = Vec::new();
    for joined in done.await {
        let (path, v) = joined?;
        out.push((path, v?));
    }
    Ok(out)
}

/// Uploads files and returns their fingerprints.
async fn upload_all(
    client: &Client,
    files: Vec<(String, String)>,
) -> ProviderResult<Vec<(String, Option<String>)>> {
    for_each_path(client, files, |client, path, content| async move {
        volume_files::upload(&client, &path, content.into_bytes()).await?;
        volume_files::fingerprint(&client, &path).await
    })
    .await
}

async fn fingerprints(
    client: &Client,
    paths: Vec<String>,
) -> ProviderResult<BTreeMap<String, Option<String>>> {
    let r = for_each_path(
        client,
        paths.into_iter().map(|p| (p, ())).collect(),
        |client, path, ()| async move { volume_files::fingerprint(&client, &path).await },
    )
    .await?;
    Ok(r.into_iter().collect())
}

fn recorded_fingerprints(prior: &Object) -> BTreeMap<String, String> {
    prior
        .get("remote_fingerprints")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

impl Onboarding {
    /// Uploads what differs from `prior` (or from what the service holds), deletes files no
    /// longer rendered, and returns the new attributes.
    async fn sync(&self, config: &Object, prior: Option<&Object>) -> ProviderResult<Remote> {
        let client = self.shared.client()?;
        let want = file_set(config);
        let had = prior.map(file_set).unwrap_or_default();
        let recorded = prior.map(recorded_fingerprints).unwrap_or_default();
        // Files whose content did not change are still uploaded when the service holds
        // something else (drift) or no longer has them.
        let unchanged: Vec<String> = want
            .iter()
            .filter(|(p, c)| had.get(*p) == Some(*c) && recorded.contains_key(*p))
            .map(|(p, _)| p.clone())
            .collect();
        let live = fingerprints(&client, unchanged).await?;
        let mut fps: BTreeMap<String, String> = BTreeMap::new();
        let mut uploads = Vec::new();
        for (path, content) in &want {
            match live.get(path) {
                Some(Some(now)) if recorded.get(path) == Some(now) => {
                    fps.insert(path.clone(), now.clone());
                }
                _ => uploads.push((path.clone(), content.clone())),
            }
        }
        for (path, fp) in upload_all(&client, uploads).await? {
            let fp = fp.ok_or_else(|| {
                ProviderError::other(format!("{path} was uploaded but cannot be read back"))
            })?;
            fps.insert(path, fp);
        }
        let gone: Vec<String> = had
            .keys()
            .filter(|p| !want.contains_key(*p))
            .cloned()
            .collect();
        self.remove(&client, gone).await?;
        let mut attrs = config.clone();
        attrs.insert(
            "remote_fingerprints".into(),
            Value::Object(
                fps.into_iter()
                    .map(|(k, v)| (k, Value::from(v)))
                    .collect::<brickform_core::value::Object>()
                    .into(),
            ),
        );
        let id = text(config, "onboarding_file_path")
            .unwrap_or_default()
            .to_string();
        Ok(Remote { id, attrs })
    }

    /// Deletes files, then the expectations directories they leave empty.
    async fn remove(&self, client: &Client, paths: Vec<String>) -> ProviderResult<()> {
        let mut dirs: Vec<String> = paths
            .iter()
            .filter(|p| p.contains("/dqe/"))
            .filter_map(|p| volume_files::parent(p).map(str::to_string))
            .collect();
        for_each_path(
            client,
            paths.into_iter().map(|p| (p, ())).collect(),
            |client, path, ()| async move {
                volume_files::delete(&client, &path).await?;
                Ok(None)
            },
        )
        .await?;
        dirs.sort();
        dirs.dedup();
        let parents: Vec<String> = dirs
            .iter()
            .filter_map(|d| volume_files::parent(d).map(str::to_string))
            .collect();
        for d in dirs.iter().chain(parents.iter()) {
            volume_files::remove_empty_directory(client, d).await;
        }
        Ok(())
    }
}

#[async_trait]
impl ResourceKind for Onboarding {
    fn type_name(&self) -> &'static str {
        "sdp_meta_onboarding"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn check(&self, config: &Object) -> Vec<Finding> {
        checks::check_onboarding(config)
    }
    fn prepare_config(
        &self,
        config: &mut Object,
        _base_dir: &std::path::Path,
    ) -> Result<(), brickform_core::provider::PrepareError> {
        let already = config
            .get("flows")
            .and_then(Value::as_list)
            .is_some_and(|l| l.iter().all(|f| f.as_str().is_some()));
        if already {
            return Ok(());
        }
        let d = derived(config).map_err(|e| e.to_string())?;
        config.extend(d);
        // Recorded as ids: the content is in the rendered files.
        let ids: Vec<Value> = config
            .get("flows")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .map(|f| {
                f.as_object()
                    .and_then(|o| o.get("data_flow_id"))
                    .cloned()
                    .unwrap_or(Value::Null)
            })
            .collect();
        config.insert("flows".into(), Value::List(ids));
        Ok(())
    }
    fn plan_computed(&self, config: &Object) -> Object {
        derived(config).unwrap_or_default()
    }
    async fn create(&self, _ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        self.sync(config, None).await
    }
    async fn read(
        &self,
        _ctx: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let files = file_set(prior);
        let recorded = recorded_fingerprints(prior);
        let live = fingerprints(&client, files.keys().cloned().collect()).await?;
        if !live.is_empty() && live.values().all(Option::is_none) {
            return Ok(None);
        }
        let mut attrs = prior.clone();
        let onboarding_path = text(prior, "onboarding_file_path")
            .unwrap_or(id)
            .to_string();
        for (path, now) in live {
            if now.is_some() && now.as_deref() == recorded.get(&path).map(String::as_str) {
                continue;
            }
            // Changed or deleted outside brickform: what is there now is the live value.
            let content = match volume_files::download(&client, &path).await? {
                Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                None => "(deleted outside brickform)".to_string(),
            };
            if path == onboarding_path {
                attrs.insert("onboarding_json".into(), Value::from(content));
            } else if let Some(Value::Object(m)) = attrs.get_mut("files") {
                Arc::make_mut(m).insert(path, Value::from(content));
            }
        }
        Ok(Some(Remote {
            id: id.to_string(),
            attrs,
        }))
    }
    async fn update(
        &self,
        _ctx: &OpContext,
        _id: &str,
        prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        self.sync(config, Some(prior)).await
    }
    /// Its files lie in one folder of a volume, which it owns.
    fn location(&self, attrs: &Object) -> Option<Location> {
        let volume = text(attrs, "volume_path")?;
        let directory =
            text(attrs, "directory").unwrap_or(crate::sdp_meta::schema::DEFAULT_DIRECTORY);
        Place::volume_path(&format!("{}/{directory}", volume.trim_end_matches('/')))
            .map(Location::from)
    }
    async fn delete(&self, _ctx: &OpContext, id: &str, prior: &Object) -> ProviderResult<()> {
        let client = self.shared.client()?;
        let mut paths: Vec<String> = file_set(prior).into_keys().collect();
        if paths.is_empty() {
            paths.push(id.to_string());
        }
        let onboarding_path = text(prior, "onboarding_file_path").unwrap_or(id);
        if let Some(copy) = converted_copy(onboarding_path) {
            paths.push(copy);
        }
        self.remove(&client, paths).await
    }
    /// The files the create writes (onboarding file first), as a JSON list: after a lost
    /// answer or a kill, what was uploaded is found by them, and a destroy removes them all.
    fn natural_key(&self, _ctx: &OpContext, config: &Object) -> Option<String> {
        let onboarding = text(config, "onboarding_file_path")?;
        let files: Vec<String> = std::iter::once(onboarding.to_string())
            .chain(file_set(config).into_keys().filter(|p| p != onboarding))
            .collect();
        serde_json::to_string(&files).ok()
    }

    /// The files of `key` that are there (none: not made). Their content is left to the next
    /// read, which finds no recorded fingerprint and reads each back, so the plan compares it.
    async fn find_by_key(&self, _ctx: &OpContext, key: &str) -> ProviderResult<Option<Remote>> {
        let files: Vec<String> = serde_json::from_str(key)
            .map_err(|e| ProviderError::other(format!("not a file list: {e}")))?;
        let Some(onboarding) = files.first().cloned() else {
            return Ok(None);
        };
        let client = self.shared.client()?;
        let live = fingerprints(&client, files).await?;
        if live.values().all(Option::is_none) {
            return Ok(None);
        }
        let mut attrs = Object::default();
        attrs.insert(
            "onboarding_file_path".into(),
            Value::from(onboarding.as_str()),
        );
        attrs.insert("onboarding_json".into(), Value::from(""));
        // Only the files that are there: a create cut short shows the missing ones as a
        // change on the next plan, and a destroy removes what was uploaded.
        let others: Object = live
            .iter()
            .filter(|(p, f)| **p != onboarding && f.is_some())
            .map(|(p, _)| (p.clone(), Value::from("")))
            .collect();
        attrs.insert("files".into(), Value::object(others));
        Ok(Some(Remote {
            id: onboarding,
            attrs,
        }))
    }

    async fn import(&self, _ctx: &OpContext, id: &str) -> ProviderResult<Option<Remote>> {
        let client = self.shared.client()?;
        let Some(bytes) = volume_files::download(&client, id).await? else {
            return Ok(None);
        };
        let mut attrs = Object::default();
        attrs.insert("onboarding_file_path".into(), Value::from(id));
        attrs.insert(
            "onboarding_json".into(),
            Value::from(String::from_utf8_lossy(&bytes).into_owned()),
        );
        Ok(Some(Remote {
            id: id.to_string(),
            attrs,
        }))
    }
}
