//! A Terraform state (format version 4, as `terraform.tfstate` holds it) read as what
//! brickform needs to adopt each converted resource: its address, its id, and the values
//! Terraform applied that the service never returns.
//!
//! The objects themselves are read from the workspace by the kinds' own import (the
//! provider's id formats are accepted there), so brickform's state says what the workspace
//! holds; the Terraform state adds what only it knows:
//! - sensitive arguments (a secret's value, a connection's options): kept in brickform's
//!   state as fingerprints only, so an unchanged value plans nothing and the value itself
//!   never reaches brickform's state;
//! - the content a notebook or file was uploaded from: the provider records the MD5 of
//!   what it uploaded, so when the configuration's source still has that MD5 the
//!   content counts as applied; when it does not, the next plan uploads it.

use super::convert::Conversion;
use crate::resources::content::{content_of, sha256_hex};
use brickform_core::addrs::InstanceKey;
use brickform_core::engine::KnownImport;
use brickform_core::provider::Provider;
use brickform_core::value::{Object, Value};
use md5::Digest as _;
use serde::Deserialize;
use serde_json::{Map, Value as Json};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum TfStateError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a Terraform state: {source}", path.display())]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{} is a Terraform state of format version {version}; brickform reads version 4 (Terraform 0.12 and later; run `terraform state pull` with a current Terraform to upgrade it)", path.display())]
    Version { path: PathBuf, version: u64 },
}

#[derive(Deserialize)]
struct TfState {
    version: u64,
    #[serde(default)]
    resources: Vec<TfResource>,
    #[serde(default)]
    outputs: Map<String, Json>,
}

#[derive(Deserialize)]
struct TfResource {
    #[serde(default)]
    module: Option<String>,
    mode: String,
    #[serde(rename = "type")]
    type_name: String,
    name: String,
    #[serde(default)]
    provider: String,
    #[serde(default)]
    instances: Vec<TfInstance>,
}

#[derive(Deserialize)]
struct TfInstance {
    #[serde(default)]
    index_key: Option<Json>,
    #[serde(default)]
    attributes: Map<String, Json>,
}

/// What a Terraform state says about the converted resources.
#[derive(Debug, Default)]
pub struct Adoptions {
    /// The objects to adopt: brickform's instance address (`databricks_schema.s["a"]`),
    /// Terraform's (`from`), the id in the provider's format (the kinds' import takes it),
    /// and what Terraform applied that a read cannot tell (see the module's comment).
    pub adopt: Vec<KnownImport>,
    /// Resources of the state that are not adopted, and why.
    pub skipped: Vec<String>,
    /// The root module's output values: name, value, sensitive. Recorded with the
    /// resources, so the next plan does not show every output as new.
    pub outputs: Vec<(String, Json, bool)>,
}

/// Reads the state at `path` for the resources `conv` converted; `config_dir` is where the
/// Terraform configuration was (relative `source` paths are relative to it).
/// `in_module` gives the brickform address of a resource Terraform knows as `TYPE.NAME` in
/// module instance `MODULE` (`module.src["a"]`), as the converted configuration declares it;
/// `None` when it declares none.
pub fn read(
    path: &Path,
    conv: &Conversion,
    config_dir: &Path,
    provider: &dyn Provider,
    in_module: &dyn Fn(&str, &str, &str) -> Option<String>,
) -> Result<Adoptions, TfStateError> {
    let text = std::fs::read_to_string(path).map_err(|source| TfStateError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let state: TfState = serde_json::from_str(&text).map_err(|source| TfStateError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    if state.version != 4 {
        return Err(TfStateError::Version {
            path: path.to_path_buf(),
            version: state.version,
        });
    }
    let kinds = provider.resource_kinds();
    let mut out = Adoptions::default();
    for (name, o) in &state.outputs {
        if let Some(v) = o.get("value") {
            let sensitive = o.get("sensitive").and_then(Json::as_bool).unwrap_or(false);
            out.outputs.push((name.clone(), v.clone(), sensitive));
        }
    }
    for r in state.resources.iter().filter(|r| r.mode == "managed") {
        let tf = match &r.module {
            Some(m) => format!("{m}.{}.{}", r.type_name, r.name),
            None => format!("{}.{}", r.type_name, r.name),
        };
        if !r.provider.contains("databricks/databricks") {
            out.skipped.push(format!(
                "{tf}: not a resource of the databricks/databricks provider"
            ));
            continue;
        }
        let base = match &r.module {
            Some(m) => in_module(m, &r.type_name, &r.name),
            None => conv.address_of(&r.type_name, &r.name),
        };
        let Some(base) = base else {
            out.skipped
                .push(format!("{tf}: not in the converted configuration"));
            continue;
        };
        // Where the converted configuration declares the resource; a text that is no
        // address names nothing to adopt.
        let Ok(base) = brickform_core::addrs::ResourceAddr::parse(&base) else {
            continue;
        };
        let Some(kind) = kinds.iter().find(|k| k.type_name() == base.type_name) else {
            continue;
        };
        for inst in &r.instances {
            let key = match &inst.index_key {
                None | Some(Json::Null) => String::new(),
                Some(Json::Number(n)) => format!("[{n}]"),
                Some(Json::String(s)) => format!("[{}]", Json::String(s.clone())),
                Some(other) => format!("[{other}]"),
            };
            // A key that is neither a whole number nor a string names no instance.
            let index = match &inst.index_key {
                None | Some(Json::Null) => Some(None),
                Some(Json::String(s)) => Some(Some(InstanceKey::Key(s.clone()))),
                Some(Json::Number(n)) => n
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .map(|n| Some(InstanceKey::Index(n))),
                Some(_) => None,
            };
            let Some(index) = index else {
                out.skipped.push(format!(
                    "{tf}{key}: its index key is neither a whole number nor a string"
                ));
                continue;
            };
            let id = match inst.attributes.get("id") {
                Some(Json::String(s)) => s.clone(),
                Some(Json::Number(n)) => n.to_string(),
                _ => {
                    out.skipped
                        .push(format!("{tf}{key}: the state records no id for it"));
                    continue;
                }
            };
            out.adopt.push(KnownImport {
                address: base.instance(index),
                from: format!("{tf}{key}"),
                id,
                known: known(kind.schema(), &inst.attributes, config_dir),
            });
        }
    }
    Ok(out)
}

/// The address in the converted configuration of a resource Terraform knows as
/// `TYPE.NAME` inside module instance `module`: the resource of that name in that module
/// instance, of the same type or of the kind its block became (a Lakeflow Connect
/// pipeline's); none when that is not exactly one.
pub fn module_address(
    config: &brickform_core::lang::load::Config,
    conv: &Conversion,
    module: &str,
    type_name: &str,
    name: &str,
) -> Option<String> {
    let same = format!("{module}.{type_name}.{name}");
    if config.resource_at(&same).is_some() {
        return Some(same);
    }
    let renamed: Vec<&brickform_core::addrs::ResourceAddr> = config
        .resources
        .iter()
        .filter(|(_, r)| r.module.to_string() == module && r.name == name)
        .filter(|(_, r)| {
            conv.renamed_kinds(type_name)
                .contains(&r.type_name.as_str())
        })
        .map(|(a, _)| a)
        .collect();
    match renamed.as_slice() {
        [one] => Some(one.to_string()),
        _ => None,
    }
}

/// What Terraform applied that a read cannot tell: the schema's sensitive arguments, and
/// for an upload whose source still has the MD5 the provider recorded, that source (as
/// Terraform evaluated it: `${path.module}/x.py` is `./x.py` in both) and its content hash.
fn known(
    schema: &brickform_core::provider::Schema,
    attrs: &Map<String, Json>,
    config_dir: &Path,
) -> Object {
    let mut known = Object::default();
    for a in schema
        .attributes
        .iter()
        .filter(|a| a.sensitive && a.can_configure())
    {
        if let Some(v) = attrs.get(a.name).filter(|v| !v.is_null()) {
            known.insert(a.name.to_string(), Value::from_json(v));
        }
    }
    if schema.attribute("content_sha256").is_some()
        && let Some(Json::String(md5)) = attrs.get("md5")
    {
        let source: Object = ["source", "content_base64"]
            .iter()
            .filter_map(|k| {
                let v = attrs.get(*k).filter(|v| !v.is_null())?;
                Some((k.to_string(), Value::from_json(v)))
            })
            .collect();
        if let Ok(bytes) = content_of(&source, config_dir)
            && format!("{:x}", md5::Md5::digest(&bytes)) == *md5
        {
            known.insert("content_sha256".into(), Value::from(sha256_hex(&bytes)));
            known.extend(source);
        }
    }
    known
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Shared;
    use crate::resources::{notebook, secret};
    use brickform_core::provider::ResourceKind;
    use std::sync::Arc;

    #[test]
    fn sensitive_arguments_and_verified_content_are_known() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("nb.py"), "print(1)\n").unwrap();
        let shared = Arc::new(Shared::default());
        let secret_schema = secret::Secret::new(shared.clone()).schema().clone();
        let attrs: Map<String, Json> = serde_json::from_value(serde_json::json!({
            "id": "s|||k", "scope": "s", "key": "k", "string_value": "hunter2"
        }))
        .unwrap();
        let k = known(&secret_schema, &attrs, dir.path());
        assert_eq!(k.get("string_value"), Some(&Value::from("hunter2")));
        assert!(
            k.get("scope").is_none(),
            "only what a read cannot tell: {k:?}"
        );

        let nb = notebook::kind(shared).schema().clone();
        let md5 = format!("{:x}", md5::Md5::digest(b"print(1)\n"));
        let attrs = |md5: &str| -> Map<String, Json> {
            serde_json::from_value(serde_json::json!({
                "id": "/Shared/nb", "path": "/Shared/nb", "source": "nb.py", "md5": md5
            }))
            .unwrap()
        };
        let k = known(&nb, &attrs(&md5), dir.path());
        assert_eq!(
            k.get("content_sha256"),
            Some(&Value::from(sha256_hex(b"print(1)\n")))
        );
        // The source changed since Terraform uploaded it: the next plan uploads it.
        let k = known(&nb, &attrs("0123"), dir.path());
        assert!(k.get("content_sha256").is_none());
    }
}
