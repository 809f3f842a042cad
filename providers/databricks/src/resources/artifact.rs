//! `databricks_artifact`: a file built from local sources by a command (a Python wheel with
//! `python -m build --wheel`, a jar) and uploaded to a volume or workspace folder, where a
//! job's `environment.spec.dependencies` or a task library takes it from `remote_path`.
//!
//! The build is keyed by `input_sha256`, a hash of the declared input files (their paths
//! and bytes) made before planning: while it is unchanged nothing is built, and when an
//! input changes the plan shows an update, which builds and uploads again. Builds run at
//! apply, never at plan, in `source_dir`, without a shell and without the variables that
//! hold credentials. The file the build wrote is the one the `output` pattern matches among
//! those written since the build started, so older builds left in `dist/` are not taken.
//! The upload and everything after it (read back, drift, delete) are those of
//! `databricks_file` or `databricks_workspace_file`, by where `path` is.

use super::content::ContentKind;
use super::place::Place;
use super::{file, str_attr, workspace_file};
use crate::Shared;
use crate::volume_path::VolumePath;
use async_trait::async_trait;
use brickform_core::location::Location;
use brickform_core::provider::{
    AttrType, Attribute, Finding, OpContext, ProviderError, ProviderResult, Remote, ResourceKind,
    Schema,
};
use brickform_core::value::{Object, Value, quote};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// How long a build may take unless `timeout_seconds` says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How many lines of a failed build's output its error shows.
const SHOWN_LINES: usize = 30;

/// Variables a build does not see: the workspace's and the clouds' credentials, and the
/// values given to brickform's own variables (they may be sensitive).
fn hidden(name: &str) -> bool {
    crate::client::credential_variables().any(|v| v == name) || name.starts_with("BRICKFORM_VAR_")
}

pub struct Artifact {
    schema: Schema,
    volume: ContentKind,
    workspace: ContentKind,
}

impl Artifact {
    pub fn new(shared: Arc<Shared>) -> Self {
        Artifact {
            schema: schema(),
            volume: file::kind(shared.clone()),
            workspace: workspace_file::kind(shared),
        }
    }

    /// The kind that stores files at `path`.
    fn store(&self, path: &str) -> &ContentKind {
        if path.starts_with("/Volumes/") {
            &self.volume
        } else {
            &self.workspace
        }
    }
}

fn schema() -> Schema {
    let built = &["input_sha256", "build", "output", "source_dir", "path"];
    Schema::new()
        .describe("A file built from local sources by a command and uploaded to a volume or workspace folder. Built again, and uploaded, when one of its inputs changes.")
        .attr(Attribute::required("source_dir", AttrType::String).describe("Where the build runs, relative to the configuration directory."))
        .attr(Attribute::required("build", AttrType::List(Box::new(AttrType::String))).describe("The build command and its arguments, run without a shell, e.g. [\"python\", \"-m\", \"build\", \"--wheel\"]."))
        .attr(Attribute::required("inputs", AttrType::List(Box::new(AttrType::String))).describe("Glob patterns, relative to source_dir, of the files the build reads; their hash decides whether to build again."))
        .attr(Attribute::required("output", AttrType::String).describe("Glob pattern, relative to source_dir, of the file the build writes, e.g. dist/*.whl."))
        .attr(Attribute::required("path", AttrType::String).describe("The folder the file is uploaded to: /Volumes/<catalog>/<schema>/<volume>/… or a workspace folder."))
        .attr(Attribute::optional("timeout_seconds", AttrType::Number).describe("How long the build may take (default 1800)."))
        .attr(Attribute::optional_computed("input_sha256", AttrType::String).describe("SHA-256 of the input files' paths and contents, derived before planning."))
        .attr(Attribute::computed("file_name", AttrType::String).derived_from(built).describe("The name of the file the build wrote."))
        .attr(Attribute::computed("remote_path", AttrType::String).derived_from(built).describe("Where the file was uploaded: path/file_name."))
        .attr(Attribute::computed("id", AttrType::String).derived_from(built))
        .attr(Attribute::computed("remote_fingerprint", AttrType::String))
}

fn strings(config: &Object, key: &str) -> Vec<String> {
    config
        .get(key)
        .and_then(Value::as_list)
        .map(|l| {
            l.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Why a pattern may not be used: it must stay inside `source_dir`.
fn outside(pattern: &str) -> Option<String> {
    let p = Path::new(pattern);
    if p.is_absolute() {
        return Some(format!(
            "{pattern:?} is an absolute path: patterns are relative to source_dir"
        ));
    }
    p.components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
        .then(|| format!("{pattern:?} leaves source_dir (`..`): patterns stay inside it"))
}

/// Why an artifact's inputs cannot be hashed or its build cannot start.
#[derive(Debug, thiserror::Error)]
enum ArtifactError {
    #[error("{pattern:?} is not a glob pattern: {source}")]
    Pattern {
        pattern: String,
        #[source]
        source: glob::PatternError,
    },
    #[error("cannot read input {}: {source}", path.display())]
    ReadInput {
        path: PathBuf,
        #[source]
        source: brickform_core::limits::ReadError,
    },
    #[error("inputs pattern {pattern:?} matches no file in {}", dir.display())]
    NoInput { pattern: String, dir: PathBuf },
    #[error("the build command {program:?} is not a file in {}", dir.display())]
    ProgramNotAFile { program: String, dir: PathBuf },
    #[error("the build command {0:?} is not on PATH")]
    ProgramNotOnPath(String),
}

// The engine reports a kind's prepare errors by their text, against the resource block.
impl From<ArtifactError> for brickform_core::provider::PrepareError {
    fn from(e: ArtifactError) -> Self {
        Self::Invalid(e.to_string())
    }
}

/// An error before the build runs is in the configuration.
impl From<ArtifactError> for ProviderError {
    fn from(e: ArtifactError) -> Self {
        ProviderError::invalid(e.to_string())
    }
}

/// The files under `dir` a pattern matches, by their path relative to `dir`.
fn matching(dir: &Path, pattern: &str) -> Result<Vec<(String, PathBuf)>, ArtifactError> {
    // Absolute, so what the pattern finds is named relative to `dir` however `dir` was
    // written (`./tool` finds `tool/…`).
    let dir = &std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let full = format!(
        "{}/{}",
        glob::Pattern::escape(dir.to_string_lossy().trim_end_matches('/')),
        brickform_core::lang::functions::glob_pattern(pattern)
    );
    let paths = glob::glob(&full).map_err(|source| ArtifactError::Pattern {
        pattern: pattern.to_string(),
        source,
    })?;
    let mut out = Vec::new();
    for p in paths.flatten() {
        if !p.is_file() {
            continue;
        }
        let rel = p
            .strip_prefix(dir)
            .map(|r| r.to_string_lossy().replace('\\', "/"))
            .unwrap_or_else(|_| p.to_string_lossy().into_owned());
        out.push((rel, p));
    }
    Ok(out)
}

/// The hash of the input files: each one's path and bytes, in path order, so renaming a
/// file or moving bytes between files changes it. The build's own output never counts.
fn input_hash(dir: &Path, inputs: &[String], output: &str) -> Result<String, ArtifactError> {
    let files = input_files(dir, inputs, output)?;
    let mut h = Sha256::new();
    for (rel, p) in &files {
        let bytes =
            brickform_core::limits::read_file(p).map_err(|source| ArtifactError::ReadInput {
                path: p.clone(),
                source,
            })?;
        h.update(rel.as_bytes());
        h.update([0]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    Ok(format!("{:x}", h.finalize()))
}

/// The input files, by their path in `dir`: what `inputs` match, the build's own output
/// left out.
fn input_files(
    dir: &Path,
    inputs: &[String],
    output: &str,
) -> Result<BTreeMap<String, PathBuf>, ArtifactError> {
    let produced: Vec<String> = matching(dir, output)?.into_iter().map(|(r, _)| r).collect();
    let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
    for pattern in inputs {
        let found = matching(dir, pattern)?;
        if found.is_empty() {
            return Err(ArtifactError::NoInput {
                pattern: pattern.clone(),
                dir: dir.to_path_buf(),
            });
        }
        files.extend(found.into_iter().filter(|(r, _)| !produced.contains(r)));
    }
    Ok(files)
}

/// The program a build runs: a name with a slash is relative to where the build runs, a
/// bare name is looked up on PATH, as a shell would.
fn build_program(dir: &Path, program: &str) -> Result<PathBuf, ArtifactError> {
    if program.contains('/') {
        let p = dir.join(program);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(ArtifactError::ProgramNotAFile {
                program: program.to_string(),
                dir: dir.to_path_buf(),
            })
        };
    }
    crate::process::find_executable(program, std::env::var("PATH").ok().as_deref())
        .ok_or_else(|| ArtifactError::ProgramNotOnPath(program.to_string()))
}

/// Runs the build in `dir`, each line it prints handed to `on_line`, and returns the file
/// it wrote that `output` matches.
async fn build(
    dir: &Path,
    config: &Object,
    on_line: &(dyn Fn(&str) + Sync),
) -> ProviderResult<PathBuf> {
    let argv = strings(config, "build");
    let Some((program, args)) = argv.split_first() else {
        return Err(ProviderError::invalid(
            "build is empty: give the command to run",
        ));
    };
    let program = build_program(dir, program)?;
    let timeout = config
        .get("timeout_seconds")
        .and_then(Value::as_f64)
        .filter(|s| *s > 0.0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64);
    let shown = crate::process::shown(&program, args);
    let output = str_attr(config, "output").unwrap_or("");
    // What the build writes is what is new or rewritten since it started, so the files of
    // earlier builds left next to it are not taken for its output.
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let before: BTreeMap<String, Option<SystemTime>> = matching(dir, output)?
        .into_iter()
        .map(|(r, p)| (r, modified(&p)))
        .collect();
    on_line(&format!("running {shown} in {}", dir.display()));
    if let Err(f) =
        crate::process::run_lines(&program, args, Some(dir), &hidden, timeout, on_line).await
    {
        let said = f.last[f.last.len().saturating_sub(SHOWN_LINES)..].join("\n");
        return Err(ProviderError::other(format!(
            "the build {shown} in {} {}{}",
            dir.display(),
            f.status,
            if said.trim().is_empty() {
                String::new()
            } else {
                format!(":\n{said}")
            }
        )));
    }
    let found = matching(dir, output)?;
    let fresh: Vec<&(String, PathBuf)> = found
        .iter()
        .filter(|(r, p)| before.get(r).is_none_or(|t| *t != modified(p)))
        .collect();
    // An incremental build (make) leaves an output newer than all its inputs as it is: the
    // one file that matches is then the build's output, as make decided.
    let up_to_date = || match found.as_slice() {
        [(_, p)] => {
            let inputs = input_files(dir, &strings(config, "inputs"), output).ok()?;
            let at = modified(p)?;
            inputs
                .values()
                .all(|i| modified(i).is_some_and(|t| t <= at))
                .then(|| p.clone())
        }
        _ => None,
    };
    match fresh.as_slice() {
        [(_, p)] => Ok(p.clone()),
        [] if let Some(p) = up_to_date() => Ok(p),
        [] => Err(ProviderError::other(format!(
            "the build {shown} succeeded but wrote no file matching output {output:?} in {}{}",
            dir.display(),
            if found.is_empty() {
                String::new()
            } else {
                format!(
                    " (older ones match, not newer than every input: {})",
                    found
                        .iter()
                        .map(|(r, _)| r.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        ))),
        many => Err(ProviderError::other(format!(
            "the build {shown} wrote {} files matching output {output:?}: {}; make the pattern match one",
            many.len(),
            many.iter()
                .map(|(r, _)| r.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// `path/name`, with one slash between them.
fn remote_path(folder: &str, name: &str) -> String {
    format!("{}/{name}", folder.trim_end_matches('/'))
}

impl Artifact {
    /// Builds and uploads; what the state records.
    async fn build_and_upload(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        let dir = ctx
            .base_dir
            .join(str_attr(config, "source_dir").unwrap_or(""));
        let sink = ctx.output.clone();
        let on_line = move |line: &str| {
            if let Some(s) = &sink {
                s.line(line);
            }
        };
        let built = build(&dir, config, &on_line).await?;
        let name = built
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let folder = str_attr(config, "path").unwrap_or("");
        let target = remote_path(folder, &name);
        let store = self.store(folder);
        let upload: Object = [
            ("path".to_string(), Value::from(target.as_str())),
            (
                "source".to_string(),
                Value::from(built.to_string_lossy().as_ref()),
            ),
        ]
        .into_iter()
        .collect();
        let uploaded = store.create(ctx, &upload).await?;
        let mut attrs = config.clone();
        attrs.insert("file_name".into(), Value::from(name));
        attrs.insert("remote_path".into(), Value::from(target.as_str()));
        attrs.insert("id".into(), Value::from(target.as_str()));
        if let Some(f) = uploaded.attrs.get("remote_fingerprint") {
            attrs.insert("remote_fingerprint".into(), f.clone());
        }
        Ok(Remote { id: target, attrs })
    }
}

#[async_trait]
impl ResourceKind for Artifact {
    fn type_name(&self) -> &'static str {
        "databricks_artifact"
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Where the uploaded file lies, so a volume's or folder's destroy plan counts it as
    /// this state's, not as something its delete takes unmanaged.
    fn location(&self, attrs: &Object) -> Option<Location> {
        let path = str_attr(attrs, "remote_path")?;
        if path.starts_with("/Volumes/") {
            Place::volume_path(path).map(Location::from)
        } else {
            Some(Place::workspace(path).into())
        }
    }

    fn prepare_config(
        &self,
        config: &mut Object,
        base_dir: &Path,
    ) -> Result<(), brickform_core::provider::PrepareError> {
        let source = str_attr(config, "source_dir").unwrap_or("");
        let dir = base_dir.join(source);
        if !dir.is_dir() {
            return Err(format!(
                "source_dir {source:?} is not a directory ({})",
                dir.display()
            )
            .into());
        }
        // Known at plan, so a missing tool stops the plan, not the apply halfway.
        if let Some(program) = config
            .get("build")
            .and_then(Value::as_list)
            .and_then(|l| l.first())
            .and_then(Value::as_str)
        {
            build_program(&dir, program)?;
        }
        let output = str_attr(config, "output").unwrap_or("").to_string();
        let hash = input_hash(&dir, &strings(config, "inputs"), &output)?;
        config.insert("input_sha256".into(), Value::from(hash));
        Ok(())
    }

    fn check(&self, config: &Object) -> Vec<Finding> {
        let mut out = Vec::new();
        if config
            .get("build")
            .and_then(Value::as_list)
            .is_some_and(|l| l.is_empty())
        {
            out.push(
                Finding::error(&["build"], "build is empty: give the command to run")
                    .hint("e.g. build = [\"python\", \"-m\", \"build\", \"--wheel\"]"),
            );
        }
        for (i, p) in strings(config, "inputs").iter().enumerate() {
            if let Some(why) = outside(p) {
                out.push(Finding::error(&["inputs"], why).at(vec![
                    brickform_core::value::PathStep::Key("inputs".into()),
                    brickform_core::value::PathStep::Index(i),
                ]));
            }
        }
        if let Some(why) = str_attr(config, "output").and_then(outside) {
            out.push(Finding::error(&["output"], why));
        }
        if let Some(path) = str_attr(config, "path") {
            if path.starts_with("/Volumes/") && VolumePath::parse(path).is_none() {
                out.push(Finding::error(&["path"], format!(
                    "{} is not a folder inside a volume: a volume folder is /Volumes/<catalog>/<schema>/<volume>[/…], with no empty, . or .. part",
                    quote(path)
                )));
            } else if !path.starts_with('/') {
                out.push(Finding::error(
                    &["path"],
                    format!(
                        "{} is not absolute: give a /Volumes/… or workspace folder",
                        quote(path)
                    ),
                ));
            }
        }
        out
    }

    async fn create(&self, ctx: &OpContext, config: &Object) -> ProviderResult<Remote> {
        self.build_and_upload(ctx, config).await
    }

    async fn read(
        &self,
        ctx: &OpContext,
        id: &str,
        prior: &Object,
    ) -> ProviderResult<Option<Remote>> {
        // The file as the content kind knows it: present, and the same as uploaded.
        let mut as_content = Object::default();
        as_content.insert("path".into(), Value::from(id));
        if let Some(f) = prior.get("remote_fingerprint") {
            as_content.insert("remote_fingerprint".into(), f.clone());
        }
        as_content.insert("object_id".into(), Value::from(0));
        let Some(found) = self.store(id).read(ctx, id, &as_content).await? else {
            return Ok(None);
        };
        let mut attrs = prior.clone();
        attrs.insert("id".into(), Value::from(id));
        attrs.insert("remote_path".into(), Value::from(id));
        if let Some(changed) = str_attr(&found.attrs, "content_sha256") {
            // Replaced or edited outside brickform: not what the inputs built.
            attrs.insert("input_sha256".into(), Value::from(changed));
        }
        Ok(Some(Remote {
            id: id.to_string(),
            attrs,
        }))
    }

    async fn update(
        &self,
        ctx: &OpContext,
        id: &str,
        _prior: &Object,
        config: &Object,
    ) -> ProviderResult<Remote> {
        let made = self.build_and_upload(ctx, config).await?;
        // A new version is a new file name: the old file goes once the new one is there.
        if made.id != id {
            self.store(id).delete(ctx, id, &Object::default()).await?;
        }
        Ok(made)
    }

    async fn delete(&self, ctx: &OpContext, id: &str, _prior: &Object) -> ProviderResult<()> {
        self.store(id).delete(ctx, id, &Object::default()).await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, body) in files {
            let p = dir.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        dir
    }

    fn list(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_input_hash_follows_paths_and_bytes_and_leaves_the_output_out() {
        let d = tree(&[
            ("pyproject.toml", "[project]"),
            ("src/pkg/__init__.py", "x = 1"),
            ("dist/pkg-0.1-py3-none-any.whl", "old"),
        ]);
        let inputs = list(&["pyproject.toml", "src/**/*.py"]);
        let h = input_hash(d.path(), &inputs, "dist/*.whl").unwrap();
        // The same files give the same hash; a built file does not count even when an
        // input pattern takes everything.
        assert_eq!(input_hash(d.path(), &inputs, "dist/*.whl").unwrap(), h);
        let all = input_hash(d.path(), &list(&["**/*"]), "dist/*.whl").unwrap();
        // `**` alone is every file too, as in Terraform's fileset.
        assert_eq!(
            input_hash(d.path(), &list(&["**"]), "dist/*.whl").unwrap(),
            all
        );
        std::fs::write(d.path().join("dist/pkg-0.2-py3-none-any.whl"), "new").unwrap();
        assert_eq!(
            input_hash(d.path(), &list(&["**/*"]), "dist/*.whl").unwrap(),
            all
        );
        // An edit, and a rename, change it.
        std::fs::write(d.path().join("src/pkg/__init__.py"), "x = 2").unwrap();
        let edited = input_hash(d.path(), &inputs, "dist/*.whl").unwrap();
        assert_ne!(edited, h);
        std::fs::rename(
            d.path().join("src/pkg/__init__.py"),
            d.path().join("src/pkg/main.py"),
        )
        .unwrap();
        assert_ne!(input_hash(d.path(), &inputs, "dist/*.whl").unwrap(), edited);
        // A pattern that matches nothing is a mistake, not an empty input.
        let e = input_hash(d.path(), &list(&["setup.py"]), "dist/*.whl").unwrap_err();
        assert!(
            e.to_string().contains("\"setup.py\" matches no file"),
            "{e}"
        );
    }

    #[test]
    fn patterns_stay_inside_source_dir_and_paths_are_folders() {
        let k = Artifact::new(Arc::new(Shared::default()));
        let config = |inputs: &[&str], output: &str, path: &str| -> Object {
            [
                ("build", Value::List(vec![Value::from("make")])),
                (
                    "inputs",
                    Value::List(inputs.iter().map(|s| Value::from(*s)).collect()),
                ),
                ("output", Value::from(output)),
                ("path", Value::from(path)),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
        };
        assert!(
            k.check(&config(&["src/**"], "dist/*.whl", "/Volumes/c/s/v/wheels"))
                .is_empty()
        );
        assert!(
            k.check(&config(&["a"], "dist/x", "/Workspace/Shared/libs"))
                .is_empty()
        );
        let f = k.check(&config(
            &["../secret", "/etc/passwd"],
            "../x",
            "/Volumes/c/s",
        ));
        let messages: Vec<&str> = f.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(messages.len(), 4, "{messages:?}");
        assert!(messages[0].contains("leaves source_dir"), "{messages:?}");
        assert!(messages[1].contains("absolute"), "{messages:?}");
        assert!(
            messages[3].contains("\"/Volumes/c/s\" is not a folder inside a volume"),
            "{messages:?}"
        );
        for bad in ["/Volumes/c/s/v/../w", "/Volumes/c//s/v", "/Volumes/c/s/./v"] {
            let f = k.check(&config(&["a"], "b", bad));
            assert_eq!(f.len(), 1, "{bad}: {f:?}");
            assert!(
                f[0].message.contains("no empty, . or .. part"),
                "{bad}: {f:?}"
            );
        }
        let mut empty = config(&["a"], "b", "/Shared/x");
        empty.insert("build".into(), Value::List(vec![]));
        assert_eq!(k.check(&empty).len(), 1);
    }

    #[test]
    fn builds_see_no_credentials() {
        assert!(hidden("DATABRICKS_TOKEN"));
        assert!(hidden("BRICKFORM_VAR_source_password"));
        assert!(!hidden("PATH"));
        assert!(!hidden("HOME"));
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_build_gives_the_file_it_wrote_and_failures_show_its_output() {
        let d = tree(&[("dist/pkg-0.1.whl", "old")]);
        // Older builds' files are not taken for this one's.
        let old = std::fs::File::options()
            .write(true)
            .open(d.path().join("dist/pkg-0.1.whl"))
            .unwrap();
        old.set_modified(SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
        let config = |argv: &[&str]| -> Object {
            [
                (
                    "build",
                    Value::List(argv.iter().map(|s| Value::from(*s)).collect()),
                ),
                ("output", Value::from("dist/*.whl")),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
        };
        let printed = std::sync::Mutex::new(Vec::<String>::new());
        let keep = |l: &str| printed.lock().unwrap().push(l.to_string());
        let built = build(
            d.path(),
            &config(&[
                "sh",
                "-c",
                "echo building; echo careful >&2; echo new > dist/pkg-0.2.whl",
            ]),
            &keep,
        )
        .await
        .unwrap();
        assert!(built.ends_with("dist/pkg-0.2.whl"), "{built:?}");
        // What it printed went by as it ran, after the line saying what runs.
        let printed = printed.into_inner().unwrap();
        assert!(printed[0].starts_with("running `sh -c"), "{printed:?}");
        assert_eq!(printed[1..].len(), 2, "{printed:?}");
        assert!(printed.contains(&"building".to_string()), "{printed:?}");
        assert!(printed.contains(&"careful".to_string()), "{printed:?}");

        let e = build(
            d.path(),
            &config(&[
                "sh",
                "-c",
                "echo compiling; sleep 0.1; echo 'error: no module' >&2; exit 4",
            ]),
            &|_| {},
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(e.contains("exited with 4"), "{e}");
        assert!(e.contains("compiling\nerror: no module"), "{e}");

        // A build that writes nothing: the files of earlier builds are not its output.
        std::fs::File::options()
            .write(true)
            .open(&built)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(60))
            .unwrap();
        let e = build(d.path(), &config(&["true"]), &|_| {})
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("wrote no file matching output"), "{e}");
        let e = build(d.path(), &config(&["no-such-builder"]), &|_| {})
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("not on PATH"), "{e}");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn an_output_an_incremental_build_found_up_to_date_is_taken() {
        let d = tree(&[("a.txt", "1"), ("out/a.bin", "built")]);
        let age = |p: &str, secs: u64| {
            std::fs::File::options()
                .write(true)
                .open(d.path().join(p))
                .unwrap()
                .set_modified(SystemTime::now() - Duration::from_secs(secs))
                .unwrap();
        };
        age("a.txt", 600);
        age("out/a.bin", 60);
        let config: Object = [
            ("build", Value::List(vec![Value::from("true")])),
            ("inputs", Value::List(vec![Value::from("a.txt")])),
            ("output", Value::from("out/a.bin")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        // make's `'out/a.bin' is up to date`: the output is newer than every input.
        let built = build(d.path(), &config, &|_| {}).await.unwrap();
        assert!(built.ends_with("out/a.bin"), "{built:?}");
        // An input newer than the output: a build that writes nothing wrote nothing.
        age("a.txt", 1);
        let e = build(d.path(), &config, &|_| {})
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("not newer than every input: out/a.bin"), "{e}");
    }
}
