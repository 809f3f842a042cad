//! `.tf` files written for the Terraform provider, rewritten as `.bf.hcl`.
//!
//! Every file is parsed with hcl-edit and edited in place, so comments and layout survive;
//! the result goes through brickform's formatter. Two passes per directory: the first
//! decides the fate of every top-level block (kept, turned into another kind, left out) so
//! that the second can rewrite references to renamed resources everywhere and say where a
//! reference to something left out remains.
//!
//! What cannot be carried over is never dropped silently: it stays in the output as a
//! comment headed `# brickform convert: WHY`, and the [`Conversion`] lists it with the line
//! of the `.tf` file it came from.

use crate::Shared;
use crate::resources::pipeline_spec::wire_name;
use crate::resources::{dashboard, ingestion_gateway, ingestion_pipeline, pipeline, query};
use brickform_core::provider::{DataSource, Provider, ResourceKind, Schema};
use hcl_edit::expr::{Expression, Traversal, TraversalOperator};
use hcl_edit::structure::{Block, BlockLabel, Body, Structure};
use hcl_edit::visit::{self, Visit};
use hcl_edit::visit_mut::{self, VisitMut};
use hcl_edit::{Decorate, Ident, Span as _};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A local module converted with the configuration that calls it.
#[derive(Debug, Default)]
pub struct ModuleReport {
    /// Its directory, relative to the converted directory (`../../modules/x` for one
    /// outside it).
    pub source: PathBuf,
    /// Where its `.bf.hcl` files are, relative to the output directory (or absolute, for one
    /// outside it converted in place).
    pub placed: PathBuf,
    /// Its managed resources: Terraform's `TYPE.NAME` and the brickform type they have now.
    pub resources: BTreeMap<String, String>,
    /// Its data sources.
    pub data_sources: usize,
}

/// Something worth saying about one place of the input.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// The input file, relative to the converted directory.
    pub file: PathBuf,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}

/// What a conversion did.
#[derive(Debug, Default)]
pub struct Conversion {
    /// Files written, as (input, output), relative to the input and output directories.
    pub written: Vec<(PathBuf, PathBuf)>,
    /// Managed resources of the root module carried over: Terraform's `TYPE.NAME` and the
    /// brickform type they have now (another one for a Lakeflow Connect pipeline).
    pub resources: BTreeMap<String, String>,
    /// Data sources of the root module carried over.
    pub data_sources: usize,
    /// The local modules the configuration calls, in the order they were met.
    pub modules: Vec<ModuleReport>,
    /// Rewrites beyond a file's name (a kind changed, a reference rewritten).
    pub changes: Vec<Finding>,
    /// What could not be converted: left out of the configuration, kept as a comment.
    pub not_converted: Vec<Finding>,
}

impl Conversion {
    /// The kinds a block of Terraform type `type_name` may have become (besides itself):
    /// a Lakeflow Connect pipeline's.
    pub fn renamed_kinds(&self, type_name: &str) -> Vec<&'static str> {
        relocations()
            .iter()
            .filter(|r| r.from_kind == type_name)
            .map(|r| r.to_kind)
            .chain(
                successors()
                    .iter()
                    .filter(|s| s.from_kind == type_name)
                    .map(|s| s.to_kind),
            )
            .collect()
    }

    /// The brickform address of a root-module resource Terraform knows as `TYPE.NAME`.
    pub fn address_of(&self, type_name: &str, name: &str) -> Option<String> {
        self.resources
            .get(&format!("{type_name}.{name}"))
            .map(|t| format!("{t}.{name}"))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}:{column}: {message}", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} holds no Terraform configuration (*.tf files)", .0.display())]
    Empty(PathBuf),
}

/// A `databricks_pipeline` block that is another kind in brickform: which block says so,
/// the kind, and the names of that kind which the provider writes inside the block.
struct Relocation {
    from_kind: &'static str,
    block: &'static str,
    to_kind: &'static str,
    fields: &'static [&'static str],
    /// `(old, new)` names of the first kind's own arguments: the old one becomes the new
    /// one when the second kind has only that.
    older_names: &'static [(&'static str, &'static str)],
}

pub use crate::resources::successor::{Rename, Reshape, Successor};

/// The superseded kinds brickform converts, from the kinds' own data.
fn successors() -> [&'static Successor; 1] {
    [&query::LEGACY]
}

/// The schemas conversion checks against, and the relocations.
struct Kinds {
    resources: HashMap<&'static str, Arc<dyn ResourceKind>>,
    data: HashMap<&'static str, Arc<dyn DataSource>>,
    provider: Schema,
    relocations: Vec<Relocation>,
    successors: [&'static Successor; 1],
    /// Superseded kinds with no counterpart, and why.
    superseded: &'static [(&'static str, &'static str)],
}

impl Kinds {
    fn of(provider: &dyn Provider) -> Kinds {
        Kinds {
            resources: provider
                .resource_kinds()
                .into_iter()
                .map(|k| (k.type_name(), k))
                .collect(),
            data: provider
                .data_sources()
                .into_iter()
                .map(|d| (d.type_name(), d))
                .collect(),
            provider: provider.config_schema().clone(),
            relocations: relocations(),
            successors: successors(),
            superseded: dashboard::LEGACY_NOT_CONVERTED,
        }
    }

    fn relocation(&self, type_name: &str, body: &Body) -> Option<&Relocation> {
        self.relocations
            .iter()
            .find(|r| r.from_kind == type_name && body.has_blocks(r.block))
    }
}

/// The relocations, from the kinds' own data: the names `databricks_pipeline` refuses as
/// belonging to another kind (the same entries `validate` reports with their rewrite),
/// matched to the pipeline flavor whose wire definition has that name.
fn relocations() -> Vec<Relocation> {
    let shared = Arc::new(Shared::default());
    let from = pipeline::kind(shared.clone()).flavor;
    let flavors = [
        ingestion_gateway::kind(shared.clone()).flavor,
        ingestion_pipeline::kind(shared).flavor,
    ];
    from.schema
        .elsewhere
        .iter()
        .filter_map(|e| {
            let f = flavors
                .iter()
                .find(|f| f.definition.is_some_and(|(d, _)| d == e.name))?;
            Some(Relocation {
                from_kind: from.type_name,
                block: e.name,
                to_kind: f.type_name,
                fields: f.definition.map(|(_, fields)| fields).unwrap_or(&[]),
                older_names: pipeline::OLDER_NAMES,
            })
        })
        .collect()
}

/// Resource and data source meta-arguments, kept as they are.
const META_ATTRIBUTES: &[&str] = &["count", "for_each", "depends_on", "provider"];
/// Top-level blocks brickform reads as Terraform does.
const KEPT_BLOCKS: &[&str] = &[
    "variable",
    "locals",
    "output",
    "moved",
    "import",
    "removed",
    "check",
    "terraform",
];

/// Converts the Terraform configuration in `src` into `out` (which may be `src` itself:
/// the `.bf.hcl` files are written next to the `.tf` files, which stay). Other files of
/// `src` (notebook sources, tfvars) are copied when `out` is elsewhere.
pub fn convert_dir(
    src: &Path,
    out: &Path,
    provider: &dyn Provider,
) -> Result<Conversion, ConvertError> {
    let kinds = Kinds::of(provider);
    let mut conv = Conversion::default();
    let mut run = Run {
        root: canonical(src),
        out_root: out.to_path_buf(),
        in_place: same_dir(src, out),
        kinds: &kinds,
        placed: BTreeMap::new(),
    };
    let files = convert_module(src, out, None, &mut run, &mut conv)?;
    if files == 0 {
        return Err(ConvertError::Empty(src.to_path_buf()));
    }
    if !same_dir(src, out) {
        copy_other_files(src, src, out)?;
    }
    conv.changes.sort();
    conv.not_converted.sort();
    conv.not_converted.dedup();
    Ok(conv)
}

/// What one conversion shares across the modules it converts.
struct Run<'k> {
    /// The converted directory, resolved.
    root: PathBuf,
    out_root: PathBuf,
    /// Whether the output is the input directory itself.
    in_place: bool,
    kinds: &'k Kinds,
    /// Where each module directory met so far (resolved) is written.
    placed: BTreeMap<PathBuf, PathBuf>,
}

impl Run<'_> {
    /// Where the module in `dir` goes: its own place under the output for one inside the
    /// converted directory; for one outside it, beside its `.tf` files when converting in
    /// place, else `modules/NAME` of the output (NAME made unique), so that the converted
    /// root finds it. The second value says whether it was placed before.
    fn place(&mut self, dir: &Path) -> (PathBuf, bool) {
        let dir = canonical(dir);
        if let Some(out) = self.placed.get(&dir) {
            return (out.clone(), true);
        }
        let out = match dir.strip_prefix(&self.root) {
            Ok(rel) => self.out_root.join(rel),
            Err(_) if self.in_place => dir.clone(),
            Err(_) => {
                let name = dir.file_name().map_or_else(
                    || "module".to_string(),
                    |n| n.to_string_lossy().into_owned(),
                );
                // Taken by another module, or by a directory of the converted tree that
                // the copy brings over (converting again into the same output is no
                // reason to move anything).
                let taken = |rel: &Path| {
                    self.placed.values().any(|o| *o == self.out_root.join(rel))
                        || self.root.join(rel).exists()
                };
                let mut rel = Path::new("modules").join(&name);
                let mut n = 2;
                while taken(&rel) {
                    rel = Path::new("modules").join(format!("{name}-{n}"));
                    n += 1;
                }
                self.out_root.join(rel)
            }
        };
        self.placed.insert(dir, out.clone());
        (out, false)
    }
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// `to` relative to `from`, both resolved or both as given: `sub/x`, `../../modules/x`.
fn relative(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c.as_os_str());
    }
    out
}

/// A module source as Terraform and brickform read it: `./x`, `../x`, with `/`.
fn module_source(rel: &Path) -> String {
    let text = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    if text.is_empty() {
        ".".into()
    } else if text.starts_with("..") {
        text
    } else {
        format!("./{text}")
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>, ConvertError> {
    let rd = std::fs::read_dir(dir).map_err(|source| ConvertError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    Ok(paths)
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The brickform name of a Terraform file, or `None` for files that are not Terraform's.
fn output_name(name: &str) -> Option<String> {
    if name == "terraform.tfvars" {
        return Some("brickform.bfvars.hcl".into());
    }
    if let Some(stem) = name.strip_suffix(".tfvars") {
        return Some(format!("{stem}.bfvars.hcl"));
    }
    name.strip_suffix(".tf")
        .map(|stem| format!("{stem}.bf.hcl"))
}

/// Terraform's own files, which are never copied: its state, lock file and plugin cache.
fn terraform_own(name: &str) -> bool {
    name.ends_with(".tf")
        || name.ends_with(".tf.json")
        || name.ends_with(".tfvars")
        || name.ends_with(".tfvars.json")
        || name.contains(".tfstate")
        || name == ".terraform.lock.hcl"
        || name.ends_with(".tfplan")
}

fn copy_other_files(root: &Path, dir: &Path, out_root: &Path) -> Result<(), ConvertError> {
    for path in read_dir_sorted(dir)? {
        let name = name_of(&path);
        // Hidden directories are tools' (.terraform, .git, .brickform), and the output may
        // lie inside the input.
        if name.starts_with('.') || same_dir(&path, out_root) {
            continue;
        }
        let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        if path.is_dir() {
            copy_other_files(root, &path, out_root)?;
        } else if path.is_file() && !terraform_own(&name) {
            let target = out_root.join(&rel);
            if target.exists() {
                continue;
            }
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|source| ConvertError::Write {
                    path: parent.to_path_buf(),
                    source,
                })?;
            }
            std::fs::copy(&path, &target).map_err(|source| ConvertError::Write {
                path: target.clone(),
                source,
            })?;
        }
    }
    Ok(())
}

/// One parsed input file.
struct Input {
    rel: PathBuf,
    out_name: String,
    text: String,
    body: Body,
    vars_file: bool,
}

fn line_of(text: &str, span: Option<std::ops::Range<usize>>) -> usize {
    span.map_or(1, |r| {
        text.get(..r.start)
            .map_or(1, |before| before.matches('\n').count() + 1)
    })
}

/// Converts the `.tf` files of one module directory into `out_dir`; `module` is its entry
/// in the report (`None` for the root). Returns how many files there were.
fn convert_module(
    dir: &Path,
    out_dir: &Path,
    module: Option<usize>,
    run: &mut Run,
    conv: &mut Conversion,
) -> Result<usize, ConvertError> {
    let kinds = run.kinds;
    let rel_dir = relative(&run.root, &canonical(dir));
    let mut inputs = Vec::new();
    for path in read_dir_sorted(dir)? {
        let name = name_of(&path);
        if !path.is_file() {
            continue;
        }
        let rel = rel_dir.join(&name);
        if name.ends_with(".tf.json") || name.ends_with(".tfvars.json") {
            conv.not_converted.push(Finding {
                file: rel,
                line: 1,
                message: "JSON configuration syntax is not converted: write it as HCL".into(),
            });
            continue;
        }
        let Some(out_name) = output_name(&name) else {
            continue;
        };
        let text = std::fs::read_to_string(&path).map_err(|source| ConvertError::Read {
            path: path.clone(),
            source,
        })?;
        let body = hcl_edit::parser::parse_body(&text).map_err(|e| ConvertError::Parse {
            path: path.clone(),
            line: e.location().line(),
            column: e.location().column(),
            message: e.message().to_string(),
        })?;
        let vars_file = name.ends_with(".tfvars");
        if vars_file && name != "terraform.tfvars" && !name.ends_with(".auto.tfvars") {
            conv.changes.push(Finding {
                file: rel.clone(),
                line: 1,
                message: format!("not read automatically: pass it as --var-file {out_name}"),
            });
        }
        inputs.push(Input {
            rel,
            out_name,
            text,
            body,
            vars_file,
        });
    }
    let count = inputs.iter().filter(|i| !i.vars_file).count();

    // Pass 1: the fate of every top-level block.
    let mut scope = Scope::default();
    for input in inputs.iter().filter(|i| !i.vars_file) {
        for b in input.body.blocks() {
            let fate = fate(b, kinds);
            let key = ref_key(b);
            match (&fate, key) {
                (Fate::Relocate(r), Some(k)) => {
                    scope.renames.insert(k, r.to_kind.to_string());
                }
                (Fate::Succeed(s), Some(k)) => {
                    scope.renames.insert(k, s.to_kind.to_string());
                }
                (Fate::Drop(_), Some(k)) => {
                    scope.dropped.insert(k);
                }
                _ => {}
            }
        }
    }

    std::fs::create_dir_all(out_dir).map_err(|source| ConvertError::Write {
        path: out_dir.to_path_buf(),
        source,
    })?;
    // Pass 2: rewrite each file.
    for mut input in inputs {
        if !input.vars_file {
            let mut f = FileCtx {
                rel: &input.rel,
                text: &input.text,
                kinds,
                scope: &scope,
                conv,
                modules: Vec::new(),
                module,
            };
            f.convert_body(&mut input.body);
            let modules = std::mem::take(&mut f.modules);
            for m in modules {
                let child = dir.join(&m);
                if !child.is_dir() {
                    let why = format!("module source {m:?} is not a directory");
                    conv.not_converted.push(Finding {
                        file: input.rel.clone(),
                        line: 1,
                        message: why,
                    });
                    continue;
                }
                let (child_out, before) = run.place(&child);
                let source =
                    module_source(&relative(&canonical(out_dir), &canonical_out(&child_out)));
                if canonical_out(&out_dir.join(&m)) != canonical_out(&child_out) {
                    set_module_source(&mut input.body, &m, &source);
                    conv.changes.push(Finding {
                        file: input.rel.clone(),
                        line: 1,
                        message: format!(
                            "module source {m:?} is {source:?}: the module is converted into {}",
                            relative(&canonical_out(&run.out_root), &canonical_out(&child_out))
                                .display()
                        ),
                    });
                }
                if before {
                    continue;
                }
                conv.modules.push(ModuleReport {
                    source: relative(&run.root, &canonical(&child)),
                    placed: relative(&canonical_out(&run.out_root), &canonical_out(&child_out)),
                    ..ModuleReport::default()
                });
                let index = conv.modules.len() - 1;
                convert_module(&child, &child_out, Some(index), run, conv)?;
                // What the module reads beside its .tf files (notebooks, SQL) goes with it
                // when it is placed outside the copied tree.
                if !run.in_place && canonical(&child).strip_prefix(&run.root).is_err() {
                    copy_other_files(&child, &child, &child_out)?;
                }
            }
        }
        let text = input.body.to_string();
        let text = brickform_core::lang::fmt::format_source(&text).unwrap_or(text);
        let target = out_dir.join(&input.out_name);
        std::fs::write(&target, text).map_err(|source| ConvertError::Write {
            path: target.clone(),
            source,
        })?;
        let written = relative(&canonical_out(&run.out_root), &canonical_out(&target));
        conv.written.push((input.rel.clone(), written));
    }
    Ok(count)
}

/// A path of the output, resolved as far as it exists (the output is being written).
fn canonical_out(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) => canonical_out(parent).join(name),
        _ => p.to_path_buf(),
    }
}

/// Points every `module` block of `body` whose source is `from` at `to`.
fn set_module_source(body: &mut Body, from: &str, to: &str) {
    for mut s in body.iter_mut() {
        let Some(b) = s.as_block_mut() else { continue };
        if b.ident.as_str() != "module" {
            continue;
        }
        if let Some(mut a) = b.body.get_attribute_mut("source")
            && matches!(a.get().value.as_str(), Some(s) if s == from)
        {
            *a.value_mut() = Expression::String(hcl_edit::Decorated::new(to.to_string()));
        }
    }
}

/// The renames and the left-out blocks of one module, by reference key (`TYPE.NAME`,
/// `data.TYPE.NAME`, `module.NAME`).
#[derive(Default)]
struct Scope {
    renames: HashMap<String, String>,
    dropped: BTreeSet<String>,
}

enum Fate<'k> {
    Keep,
    Relocate(&'k Relocation),
    Succeed(&'static Successor),
    Drop(String),
}

fn label(b: &Block, i: usize) -> Option<&str> {
    b.labels.get(i).map(|l| match l {
        BlockLabel::String(s) => s.value().as_str(),
        BlockLabel::Ident(i) => i.value().as_str(),
    })
}

/// How other blocks refer to this one.
fn ref_key(b: &Block) -> Option<String> {
    match b.ident.as_str() {
        "resource" => Some(format!("{}.{}", label(b, 0)?, label(b, 1)?)),
        "data" => Some(format!("data.{}.{}", label(b, 0)?, label(b, 1)?)),
        "module" => Some(format!("module.{}", label(b, 0)?)),
        _ => None,
    }
}

fn fate<'k>(b: &Block, kinds: &'k Kinds) -> Fate<'k> {
    let ident = b.ident.as_str();
    match ident {
        "resource" | "data" => {
            let type_name = label(b, 0).unwrap_or("");
            if ident == "data" {
                if !kinds.data.contains_key(type_name) {
                    return Fate::Drop(format!("brickform has no data source {type_name}"));
                }
                return Fate::Keep;
            }
            if let Some(s) = kinds.successors.iter().find(|s| s.from_kind == type_name) {
                return Fate::Succeed(s);
            }
            if let Some((_, why)) = kinds.superseded.iter().find(|(k, _)| *k == type_name) {
                return Fate::Drop(format!("{type_name}.{}: {why}", label(b, 1).unwrap_or("")));
            }
            let Some(kind) = kinds.resources.get(type_name) else {
                return Fate::Drop(format!("brickform has no resource kind {type_name}"));
            };
            // What the block is about is something brickform does not manage here (a grant
            // on a model, a permission on a cluster): without it the block would declare
            // nothing it can validate, so it is left out whole.
            let whole =
                kind.schema().unsupported.iter().find(|u| {
                    u.whole && (b.body.has_attribute(u.name) || b.body.has_blocks(u.name))
                });
            if let Some(u) = whole {
                return Fate::Drop(format!(
                    "{type_name}.{}: {}: {}",
                    label(b, 1).unwrap_or(""),
                    u.name,
                    u.detail
                ));
            }
            match kinds.relocation(type_name, &b.body) {
                Some(r) => Fate::Relocate(r),
                None => Fate::Keep,
            }
        }
        "provider" => {
            let name = label(b, 0).unwrap_or("");
            if name != "databricks" {
                Fate::Drop(format!("brickform has no provider {name:?}"))
            } else {
                Fate::Keep
            }
        }
        "module" => match b.body.get_attribute("source").map(|a| &a.value) {
            Some(Expression::String(s)) if s.starts_with("./") || s.starts_with("../") => {
                Fate::Keep
            }
            Some(Expression::String(s)) => Fate::Drop(format!(
                "module source {:?} is not a local directory: only local modules are converted",
                s.as_str()
            )),
            _ => Fate::Drop("a module without a literal source is not converted".into()),
        },
        other if KEPT_BLOCKS.contains(&other) => Fate::Keep,
        other => Fate::Drop(format!("brickform has no {other} block")),
    }
}

struct FileCtx<'a> {
    rel: &'a Path,
    text: &'a str,
    kinds: &'a Kinds,
    scope: &'a Scope,
    conv: &'a mut Conversion,
    /// Local module sources met in this file, to convert after it.
    modules: Vec<String>,
    /// The module this file belongs to, in the report (`None`: the root).
    module: Option<usize>,
}

impl FileCtx<'_> {
    fn finding(&self, span: Option<std::ops::Range<usize>>, message: String) -> Finding {
        Finding {
            file: self.rel.to_path_buf(),
            line: line_of(self.text, span),
            message,
        }
    }

    fn not_converted(&mut self, span: Option<std::ops::Range<usize>>, message: String) {
        let f = self.finding(span, message);
        self.conv.not_converted.push(f);
    }

    /// The original text of a structure, for commenting it out.
    fn source_of(&self, s: &Structure) -> String {
        s.span().and_then(|r| self.text.get(r)).map_or_else(
            || {
                let mut one = Body::new();
                one.push(s.clone());
                one.to_string()
            },
            str::to_string,
        )
    }

    fn convert_body(&mut self, body: &mut Body) {
        // References to what is left out stay as they are, and say so.
        let mut refs = FindRefs {
            dropped: &self.scope.dropped,
            found: Vec::new(),
        };
        for s in body.iter() {
            if let Structure::Block(b) = s
                && matches!(fate(b, self.kinds), Fate::Drop(_))
            {
                continue;
            }
            refs.visit_structure(s);
        }
        for (span, key) in std::mem::take(&mut refs.found) {
            self.not_converted(span, format!("refers to {key}, which was not converted"));
        }

        let mut i = 0;
        while i < body.len() {
            let Some(Structure::Block(b)) = body.get_mut(i) else {
                i += 1;
                continue;
            };
            match fate(b, self.kinds) {
                Fate::Drop(why) => {
                    let s = body.remove(i);
                    self.not_converted(s.span(), why.clone());
                    let text = self.source_of(&s);
                    let prefix = s.decor().prefix().map(|p| p.to_string());
                    comment_into(body, i, prefix, &why, &text, 0);
                    continue;
                }
                Fate::Relocate(r) => {
                    self.record(b, Some(r.to_kind));
                    self.relocate(b, r);
                    self.kept_block(b);
                }
                Fate::Succeed(s) => {
                    self.record(b, Some(s.to_kind));
                    self.succeed(b, s);
                    self.kept_block(b);
                }
                Fate::Keep => {
                    self.record(b, None);
                    self.kept_block(b);
                }
            }
            i += 1;
        }
        RenameRefs {
            renames: &self.scope.renames,
        }
        .visit_body_mut(body);
    }

    /// Counts a resource or data source carried over, under its Terraform address.
    fn record(&mut self, b: &Block, to_kind: Option<&str>) {
        let (resources, data_sources) = match self.module.and_then(|i| self.conv.modules.get_mut(i))
        {
            Some(m) => (&mut m.resources, &mut m.data_sources),
            None => (&mut self.conv.resources, &mut self.conv.data_sources),
        };
        match (b.ident.as_str(), label(b, 0), label(b, 1)) {
            ("resource", Some(t), Some(n)) => {
                let now = to_kind.unwrap_or(t).to_string();
                resources.insert(format!("{t}.{n}"), now);
            }
            ("data", Some(_), Some(_)) => *data_sources += 1,
            _ => {}
        }
    }

    fn kept_block(&mut self, b: &mut Block) {
        match b.ident.as_str() {
            "resource" | "data" => {
                let type_name = label(b, 0).unwrap_or("").to_string();
                let name = label(b, 1).unwrap_or("").to_string();
                let managed = b.ident.as_str() == "resource";
                let schema = if managed {
                    self.kinds
                        .resources
                        .get(type_name.as_str())
                        .map(|k| k.schema().clone())
                } else {
                    self.kinds
                        .data
                        .get(type_name.as_str())
                        .map(|d| d.schema().clone())
                };
                if let Some(schema) = schema {
                    let what = format!("{type_name}.{name}");
                    self.check_body(&mut b.body, &schema, Some(managed), 1, &what);
                }
            }
            "provider" => {
                let schema = self.kinds.provider.clone();
                self.check_body(&mut b.body, &schema, None, 1, "provider \"databricks\"");
            }
            "terraform" => {
                let mut i = 0;
                while i < b.body.len() {
                    let drop = match b.body.get(i) {
                        Some(Structure::Block(inner))
                            if matches!(inner.ident.as_str(), "backend" | "cloud") =>
                        {
                            Some(format!(
                                "terraform {{ {} }}: brickform keeps its own state (.brickform/state, or brickform {{ backend \"volume\" {{ … }} }}); convert --state moves the Terraform state over",
                                inner.ident.as_str()
                            ))
                        }
                        _ => None,
                    };
                    match drop {
                        Some(why) => self.drop_at(&mut b.body, i, why, 1),
                        None => i += 1,
                    }
                }
            }
            "module" => {
                if let Some(Expression::String(s)) =
                    b.body.get_attribute("source").map(|a| &a.value)
                {
                    self.modules.push(s.as_str().to_string());
                }
            }
            _ => {}
        }
    }

    /// Comments out `body[i]`, saying why.
    fn drop_at(&mut self, body: &mut Body, i: usize, why: String, depth: usize) {
        let s = body.remove(i);
        self.not_converted(s.span(), why.clone());
        let text = self.source_of(&s);
        let prefix = s.decor().prefix().map(|p| p.to_string());
        comment_into(body, i, prefix, &why, &text, depth);
    }

    /// Leaves out, commented, every attribute and block the schema does not have.
    /// `managed` is `Some` at the top of a resource or data source (where meta-arguments
    /// are), `None` elsewhere.
    fn check_body(
        &mut self,
        body: &mut Body,
        schema: &Schema,
        managed: Option<bool>,
        depth: usize,
        what: &str,
    ) {
        let mut i = 0;
        while i < body.len() {
            let why = match body.get_mut(i) {
                Some(Structure::Attribute(a)) => {
                    let k = a.key.as_str();
                    if (managed.is_some() && META_ATTRIBUTES.contains(&k))
                        || schema.attribute(k).is_some()
                        || (managed.is_none() && what.starts_with("provider") && k == "alias")
                    {
                        None
                    } else {
                        Some(format!("{what}: brickform has no attribute {k}"))
                    }
                }
                Some(Structure::Block(b)) => {
                    let ident = b.ident.as_str().to_string();
                    if managed == Some(true) && ident == "lifecycle" {
                        None
                    } else if matches!(ident.as_str(), "provisioner" | "connection")
                        && managed.is_some()
                    {
                        Some(format!("{what}: {ident} blocks are not supported"))
                    } else if ident == "dynamic" {
                        let name = label(b, 0).unwrap_or("").to_string();
                        match schema.block_type(&name) {
                            Some(bt) => {
                                let inner = bt.schema.clone();
                                let at = format!("{what}.{name}");
                                for c in b
                                    .body
                                    .blocks_mut()
                                    .filter(|c| c.ident.as_str() == "content")
                                {
                                    self.check_body(&mut c.body, &inner, None, depth + 2, &at);
                                }
                                None
                            }
                            None => Some(format!("{what}: brickform has no block {name}")),
                        }
                    } else {
                        match schema.block_type(&ident) {
                            Some(bt) => {
                                let inner = bt.schema.clone();
                                let at = format!("{what}.{ident}");
                                self.check_body(&mut b.body, &inner, None, depth + 1, &at);
                                None
                            }
                            None => Some(format!("{what}: brickform has no block {ident}")),
                        }
                    }
                }
                None => None,
            };
            match why {
                Some(why) => self.drop_at(body, i, why, depth),
                None => i += 1,
            }
        }
    }

    /// A superseded kind becomes its successor: renamed arguments and blocks, resolved
    /// references; what has no counterpart is left out, commented, with the reason.
    fn succeed(&mut self, b: &mut Block, s: &Successor) {
        let name = label(b, 1).unwrap_or("").to_string();
        if let Some(BlockLabel::String(t)) = b.labels.get_mut(0) {
            *t.value_mut() = s.to_kind.to_string();
        }
        let span = b.span();
        self.conv.changes.push(self.finding(
            span,
            format!(
                "{}.{name} is {}.{name}: the same object through the current API (its id is the same)",
                s.from_kind, s.to_kind
            ),
        ));
        let mut i = 0;
        while i < b.body.len() {
            let mut drop = None;
            match b.body.get_mut(i) {
                Some(Structure::Attribute(a)) => {
                    let old = a.key.as_str().to_string();
                    let templated = s.templated.iter().find_map(|t| {
                        let (from_arg, new, prefix, kind, from_attr, to_attr) = *t;
                        (from_arg == old)
                            .then(|| from_template(&a.value, prefix, kind, from_attr, to_attr))
                            .flatten()
                            .map(|e| (new, e, kind, from_attr, to_attr))
                    });
                    if let Some((new, e, kind, from_attr, to_attr)) = templated {
                        let span = a.span();
                        a.value = e;
                        *a.key.value_mut() = Ident::new(new);
                        let change = format!(
                            "{}.{name}: {old} (a {kind}'s {from_attr}) is {new} (its {to_attr})",
                            s.from_kind
                        );
                        self.conv.changes.push(self.finding(span, change));
                    } else if let Some((_, why)) = s.left_out.iter().find(|(k, _)| *k == old) {
                        drop = Some(format!("{}.{name}: {old}: {why}", s.from_kind));
                    } else if let Some(r) = s.resolved.iter().find(|r| r.0 == old) {
                        let (_, new, kind, from_attr, to_attr) = *r;
                        let span = a.span();
                        if retarget(&mut a.value, kind, from_attr, to_attr) {
                            *a.key.value_mut() = Ident::new(new);
                            let change = format!(
                                "{}.{name}: {old} (a {kind}'s {from_attr}) is {new} (its {to_attr})",
                                s.from_kind
                            );
                            self.conv.changes.push(self.finding(span, change));
                        } else {
                            drop = Some(format!(
                                "{}.{name}: {old} is a Databricks SQL data source id, which {} does not take, and it is not a reference to a {kind} whose {to_attr} could stand for it: set {new}",
                                s.from_kind, s.to_kind
                            ));
                        }
                    } else if let Some(r) = s
                        .renames
                        .iter()
                        .find(|r| r.parent.is_empty() && r.old == old)
                    {
                        rename_attribute(a, r);
                    }
                }
                Some(Structure::Block(inner)) => self.rename_block(inner, "", s, &name, 2),
                None => {}
            }
            match drop {
                Some(why) => self.drop_at(&mut b.body, i, why, 1),
                None => i += 1,
            }
        }
    }

    /// A block of a superseded kind, lying at `path` (by the successor's names, `""` at the
    /// top), and what it holds, renamed as the successor declares; what has no counterpart
    /// left out with the reason. `depth` is that of the block's own arguments.
    fn rename_block(&mut self, b: &mut Block, path: &str, s: &Successor, name: &str, depth: usize) {
        let old = b.ident.as_str().to_string();
        if let Some(r) = s.renames.iter().find(|r| r.parent == path && r.old == old) {
            *b.ident.value_mut() = Ident::new(r.new);
            for (k, v) in r.adds {
                if b.body.get_attribute(k).is_none()
                    && let Ok(value) = v.parse::<Expression>()
                {
                    b.body
                        .push(hcl_edit::structure::Attribute::new(Ident::new(*k), value));
                }
            }
        }
        let here = match path {
            "" => b.ident.as_str().to_string(),
            p => format!("{p}.{}", b.ident.as_str()),
        };
        let mut i = 0;
        while i < b.body.len() {
            let mut drop = None;
            match b.body.get_mut(i) {
                Some(Structure::Attribute(a)) => {
                    let k = a.key.as_str().to_string();
                    if let Some(why) = left_out_within(s, &here, &k) {
                        // An empty text sets nothing (a parameter's default left empty):
                        // there is nothing to carry over, nor to report.
                        if matches!(&a.value, Expression::String(v) if v.is_empty()) {
                            b.body.remove(i);
                            continue;
                        }
                        drop = Some(format!("{}.{name}: {here}.{k}: {why}", s.from_kind));
                    } else if let Some(r) =
                        s.renames.iter().find(|r| r.parent == here && r.old == k)
                    {
                        rename_attribute(a, r);
                    }
                }
                Some(Structure::Block(inner)) => {
                    let k = inner.ident.as_str().to_string();
                    match left_out_within(s, &here, &k) {
                        Some(why) => {
                            drop = Some(format!("{}.{name}: {here}.{k}: {why}", s.from_kind))
                        }
                        None => self.rename_block(inner, &here, s, name, depth + 1),
                    }
                }
                None => {}
            }
            match drop {
                Some(why) => self.drop_at(&mut b.body, i, why, depth),
                None => i += 1,
            }
        }
    }

    /// `databricks_pipeline` with a `gateway_definition` (or `ingestion_definition`) block
    /// becomes that kind: the block's fields move to the top, named as the kind names them
    /// (`objects` blocks are `object` blocks).
    fn relocate(&mut self, b: &mut Block, r: &Relocation) {
        let name = label(b, 1).unwrap_or("").to_string();
        if let Some(BlockLabel::String(s)) = b.labels.get_mut(0) {
            *s.value_mut() = r.to_kind.to_string();
        }
        if let Some(to) = self.kinds.resources.get(r.to_kind) {
            let schema = to.schema();
            for (old, new) in r.older_names {
                if schema.attribute(old).is_some()
                    || schema.attribute(new).is_none()
                    || b.body.get_attribute(new).is_some()
                {
                    continue;
                }
                let at = b
                    .body
                    .iter()
                    .position(|s| matches!(s, Structure::Attribute(a) if a.key.as_str() == *old));
                if let Some(Some(Structure::Attribute(a))) = at.map(|i| b.body.get_mut(i)) {
                    let span = a.span();
                    *a.key.value_mut() = Ident::new(*new);
                    let change = format!(
                        "{}.{name}: {old} (deprecated) is {new} in {}",
                        r.from_kind, r.to_kind
                    );
                    self.conv.changes.push(self.finding(span, change));
                }
            }
        }
        let Some(at) = b
            .body
            .iter()
            .position(|s| matches!(s, Structure::Block(d) if d.ident.as_str() == r.block))
        else {
            return;
        };
        let def = b.body.remove(at);
        let span = def.span();
        self.conv.changes.push(self.finding(
            span.clone(),
            format!(
                "{}.{name} is {}.{name}: the fields of its {} block are the kind's own arguments",
                r.from_kind, r.to_kind, r.block
            ),
        ));
        let Structure::Block(def) = def else { return };
        let mut pos = at;
        for mut item in def.body.into_iter() {
            let item_name = match &item {
                Structure::Attribute(a) => a.key.as_str().to_string(),
                Structure::Block(x) => x.ident.as_str().to_string(),
            };
            let target = r
                .fields
                .iter()
                .find(|h| wire_name(h) == item_name || **h == item_name);
            match target {
                Some(h) => {
                    match &mut item {
                        Structure::Attribute(a) => *a.key.value_mut() = Ident::new(*h),
                        Structure::Block(x) => *x.ident.value_mut() = Ident::new(*h),
                    }
                    b.body.insert(pos, item);
                    pos += 1;
                }
                None => {
                    let why = format!(
                        "{}.{name}: {}.{item_name} has no counterpart in {}",
                        r.from_kind, r.block, r.to_kind
                    );
                    self.not_converted(item.span(), why.clone());
                    let text = self.source_of(&item);
                    comment_into(&mut b.body, pos, None, &why, &text, 1);
                }
            }
        }
    }
}

/// Puts `text`, commented out under a `# brickform convert: WHY` line, where a structure
/// was removed from `body` at `i`: in front of the structure now at `i`, or at the end.
/// `prefix` is the removed structure's own leading decor (its comments stay in front).
fn comment_into(
    body: &mut Body,
    i: usize,
    prefix: Option<String>,
    why: &str,
    text: &str,
    depth: usize,
) {
    let indent = "  ".repeat(depth);
    let mut out = String::new();
    if let Some(p) = prefix {
        // Its leading comments and blank lines, without the indentation of its first line.
        out.push_str(p.trim_end_matches([' ', '\t']));
    }
    out.push_str(&format!("{indent}# brickform convert: {why}\n"));
    let first_indent = text.len() - text.trim_start().len();
    for (n, line) in text.trim().lines().enumerate() {
        let line = if n == 0 {
            line
        } else {
            let lead = line.len() - line.trim_start().len();
            &line[lead.min(first_indent.max(depth * 2))..]
        };
        out.push_str(&format!("{indent}# {line}\n").replace("# \n", "#\n"));
    }
    if let Some(next) = body.get_mut(i) {
        let old = next
            .decor()
            .prefix()
            .map(|p| p.to_string())
            .unwrap_or_default();
        // One blank line after the comment when there was one before the structure.
        let gap = if old.starts_with('\n') { "\n" } else { "" };
        let old = old.trim_start_matches('\n');
        next.decor_mut().set_prefix(format!("{out}{gap}{old}"));
    } else {
        let old = body
            .decor()
            .suffix()
            .map(|p| p.to_string())
            .unwrap_or_default();
        body.decor_mut().set_suffix(format!("{out}{old}"));
    }
}

/// The leading names of a traversal (`databricks_pipeline`, `x` of `databricks_pipeline.x.id`).
fn leading_names(t: &Traversal) -> Option<(String, Vec<String>)> {
    let Expression::Variable(root) = &t.expr else {
        return None;
    };
    let names = t
        .operators
        .iter()
        .map_while(|o| match o.value() {
            TraversalOperator::GetAttr(i) => Some(i.as_str().to_string()),
            _ => None,
        })
        .take(2)
        .collect();
    Some((root.as_str().to_string(), names))
}

/// `KIND.NAME.TO` for the template `"PREFIX${KIND.NAME.FROM}"`; `None` for anything else.
/// Why a superseded kind's argument or block at `path` has no counterpart, if it has none.
fn left_out_within(s: &Successor, path: &str, name: &str) -> Option<&'static str> {
    s.left_out_within
        .iter()
        .find(|(p, n, _)| *p == path && *n == name)
        .map(|(_, _, why)| *why)
}

/// An argument of a superseded kind under the successor's name, its value in the form the
/// successor takes (`[x]` for a list of one, `join("\n", x)` for one line per value).
fn rename_attribute(a: &mut hcl_edit::structure::Attribute, r: &Rename) {
    *a.key.value_mut() = Ident::new(r.new);
    let mut value = a.value.clone();
    value.decor_mut().clear();
    let text = match r.reshape {
        Reshape::Same => return,
        Reshape::InList => format!("[{value}]"),
        Reshape::Lines => format!("join(\"\\n\", {value})"),
    };
    if let Ok(mut reshaped) = text.parse::<Expression>() {
        reshaped.decor_mut().set_prefix(" ");
        a.value = reshaped;
    }
}

fn from_template(
    e: &Expression,
    prefix: &str,
    kind: &str,
    from: &str,
    to: &str,
) -> Option<Expression> {
    let Expression::StringTemplate(t) = e else {
        return None;
    };
    let elements: Vec<&hcl_edit::template::Element> = t.iter().collect();
    let [
        hcl_edit::template::Element::Literal(lit),
        hcl_edit::template::Element::Interpolation(i),
    ] = elements.as_slice()
    else {
        return None;
    };
    if lit.value() != prefix {
        return None;
    }
    let mut expr = i.expr.clone();
    expr.decor_mut().clear();
    retarget(&mut expr, kind, from, to).then_some(expr)
}

/// Rewrites `KIND.NAME.FROM` to `KIND.NAME.TO`; whether the expression was that.
fn retarget(e: &mut Expression, kind: &str, from: &str, to: &str) -> bool {
    let Expression::Traversal(t) = e else {
        return false;
    };
    let matches = leading_names(t).is_some_and(|(root, names)| root == kind && names.len() == 2)
        && t.operators.len() == 2;
    if !matches {
        return false;
    }
    match t.operators.get_mut(1).map(|o| o.value_mut()) {
        Some(TraversalOperator::GetAttr(attr)) if attr.as_str() == from => {
            *attr.value_mut() = Ident::new(to);
            true
        }
        _ => false,
    }
}

/// The reference key a traversal starts with, as [`ref_key`] names blocks.
fn key_of(t: &Traversal) -> Option<String> {
    let (root, names) = leading_names(t)?;
    match (root.as_str(), names.as_slice()) {
        ("data", [ty, name, ..]) => Some(format!("data.{ty}.{name}")),
        ("module", [name, ..]) => Some(format!("module.{name}")),
        (_, [name, ..]) => Some(format!("{root}.{name}")),
        _ => None,
    }
}

struct FindRefs<'a> {
    dropped: &'a BTreeSet<String>,
    found: Vec<(Option<std::ops::Range<usize>>, String)>,
}

impl Visit for FindRefs<'_> {
    fn visit_traversal(&mut self, t: &Traversal) {
        if let Some(k) = key_of(t).filter(|k| self.dropped.contains(k)) {
            self.found.push((t.span(), k));
        }
        visit::visit_traversal(self, t);
    }
}

struct RenameRefs<'a> {
    renames: &'a HashMap<String, String>,
}

impl VisitMut for RenameRefs<'_> {
    fn visit_traversal_mut(&mut self, t: &mut Traversal) {
        if let Some(new) = key_of(t).and_then(|k| self.renames.get(&k))
            && let Expression::Variable(root) = &mut t.expr
        {
            *root.value_mut() = Ident::new(new.as_str());
        }
        visit_mut::visit_traversal_mut(self, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DatabricksProvider, Options};

    fn provider() -> DatabricksProvider {
        DatabricksProvider::new(Options {
            local: None,
            secrets: Arc::new(crate::client::KeyringStore),
            env: Arc::new(|_: &str| None),
        })
    }

    /// Converts `files` (name, text) and returns the conversion and the written files.
    fn convert(files: &[(&str, &str)]) -> (Conversion, BTreeMap<String, String>) {
        let src = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        for (n, t) in files {
            std::fs::write(src.path().join(n), t).unwrap();
        }
        let conv = convert_dir(src.path(), out.path(), &provider()).unwrap();
        let written = conv
            .written
            .iter()
            .map(|(_, o)| {
                let text = std::fs::read_to_string(out.path().join(o)).unwrap();
                (o.display().to_string(), text)
            })
            .collect();
        (conv, written)
    }

    #[test]
    fn files_take_brickform_names() {
        assert_eq!(output_name("main.tf").as_deref(), Some("main.bf.hcl"));
        assert_eq!(
            output_name("terraform.tfvars").as_deref(),
            Some("brickform.bfvars.hcl")
        );
        assert_eq!(
            output_name("prod.auto.tfvars").as_deref(),
            Some("prod.auto.bfvars.hcl")
        );
        assert_eq!(output_name("ci.tfvars").as_deref(), Some("ci.bfvars.hcl"));
        assert_eq!(output_name("notes.md"), None);
    }

    #[test]
    fn a_legacy_sql_query_becomes_a_query_and_legacy_dashboards_are_listed() {
        let (conv, out) = convert(&[(
            "sql.tf",
            r#"resource "databricks_sql_endpoint" "w" {
  name         = "bi"
  cluster_size = "Small"
}

resource "databricks_sql_query" "q" {
  data_source_id = databricks_sql_endpoint.w.data_source_id
  name           = "My Query"
  query          = "select {{p1}} as value"
  parent         = "folders/123"
  parameter {
    name  = "p1"
    title = "Title for p1"
    text {
      value = "default"
    }
  }
  parameter {
    name = "d"
    date {
      value = "2024-01-01"
    }
  }
}

resource "databricks_sql_query" "literal" {
  data_source_id = "ds-123"
  name           = "Other"
  query          = "select 1"
}

resource "databricks_directory" "shared" {
  path = "/Shared/Queries"
}

resource "databricks_sql_query" "in_folder" {
  data_source_id = databricks_sql_endpoint.w.data_source_id
  name           = "In a folder"
  query          = "select 2"
  parent         = "folders/${databricks_directory.shared.object_id}"
}

resource "databricks_sql_dashboard" "d" {
  name = "legacy"
}

resource "databricks_permissions" "q" {
  sql_query_id = databricks_sql_query.q.id
  access_control {
    group_name       = "users"
    permission_level = "CAN_RUN"
  }
}
"#,
        )]);
        let sql = &out["sql.bf.hcl"];
        assert!(
            sql.contains("resource \"databricks_query\" \"q\" {"),
            "{sql}"
        );
        assert!(
            sql.contains("warehouse_id = databricks_sql_endpoint.w.id"),
            "{sql}"
        );
        assert!(sql.contains("display_name = \"My Query\""), "{sql}");
        assert!(sql.contains("query_text"), "{sql}");
        assert!(
            sql.contains("parent_path  = databricks_directory.shared.path"),
            "{sql}"
        );
        assert!(sql.contains("text_value {"), "{sql}");
        let flat = sql.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(
                "date_value { date_value = \"2024-01-01\" precision = \"DAY_PRECISION\" }"
            ),
            "{sql}"
        );
        assert!(
            sql.contains("sql_query_id = databricks_query.q.id"),
            "{sql}"
        );
        assert_eq!(
            conv.address_of("databricks_sql_query", "q").as_deref(),
            Some("databricks_query.q")
        );
        let left: Vec<&str> = conv
            .not_converted
            .iter()
            .map(|f| f.message.as_str())
            .collect();
        for says in [
            "databricks_sql_query.q: parent: a folder's object id",
            "databricks_sql_query.literal: data_source_id is a Databricks SQL data source id",
            "databricks_sql_dashboard.d: a legacy Databricks SQL dashboard has no counterpart",
        ] {
            assert!(
                left.iter().any(|m| m.starts_with(says)),
                "{says}: {left:#?}"
            );
        }
        assert_eq!(left.len(), 3, "{left:#?}");
    }

    /// Every legacy parameter type is one of the current value blocks: an enum's options a
    /// line each, a single value a list of one, `multiple` its options for several values,
    /// the date types with the precision their name says. Only a range given as one text
    /// is left out, with why.
    #[test]
    fn a_legacy_querys_parameters_become_the_current_value_blocks() {
        let (conv, out) = convert(&[(
            "q.tf",
            r#"locals {
  zips = ["10001", "10002"]
}

resource "databricks_sql_query" "q" {
  data_source_id = databricks_sql_endpoint.w.data_source_id
  name           = "Trips"
  query          = "select 1"
  parameter {
    name = "zip"
    enum {
      options = local.zips
      values  = ["10001"]
      multiple {
        prefix    = ""
        suffix    = ""
        separator = ","
      }
    }
  }
  parameter {
    name = "one"
    enum {
      options = ["a", "b"]
      value   = "a"
    }
  }
  parameter {
    name = "from_query"
    query {
      query_id = "abc"
      value    = "x"
    }
  }
  parameter {
    name = "at"
    datetimesec {
      value = "2024-01-01 10:00:00"
    }
  }
  parameter {
    name = "between"
    datetime_range {
      range {
        start = "2016-01-01 12:07"
        end   = "2016-01-16 12:07"
      }
    }
  }
  parameter {
    name = "texted"
    date_range {
      value = "2016-01-01,2016-01-16"
    }
  }
  parameter {
    name = "no_default"
    datetime_range {
      value = ""
    }
  }
}

resource "databricks_sql_endpoint" "w" {
  name         = "bi"
  cluster_size = "Small"
}
"#,
        )]);
        let q = &out["q.bf.hcl"];
        let flat = q.split_whitespace().collect::<Vec<_>>().join(" ");
        for says in [
            "enum_value {",
            "enum_options = join(\"\\n\", local.zips)",
            "values = [\"10001\"]",
            "multi_values_options {",
            "enum_options = join(\"\\n\", [\"a\", \"b\"])",
            "values = [\"a\"]",
            "query_backed_value {",
            "values = [\"x\"]",
            "date_value = \"2024-01-01 10:00:00\"",
            "precision = \"SECOND_PRECISION\"",
            "date_range_value { date_range_value { start = \"2016-01-01 12:07\"",
            "precision = \"MINUTE_PRECISION\"",
        ] {
            assert!(flat.contains(says), "{says}\n{q}");
        }
        for legacy in [
            " enum {",
            " options =",
            " multiple {",
            " query {",
            " datetimesec {",
            " range {",
        ] {
            assert!(!flat.contains(legacy), "{legacy}\n{q}");
        }
        let left: Vec<&str> = conv
            .not_converted
            .iter()
            .map(|f| f.message.as_str())
            .collect();
        assert_eq!(left.len(), 1, "{left:#?}");
        assert!(
            left[0].starts_with("databricks_sql_query.q: parameter.date_range_value.value: a default range written as one text"),
            "{left:#?}"
        );
    }

    #[test]
    fn a_gateway_pipeline_becomes_the_gateway_kind_and_references_follow() {
        let (conv, out) = convert(&[
            (
                "lfc.tf",
                r#"resource "databricks_pipeline" "gw" {
  name = "gw"
  gateway_definition {
    connection_name         = "pg"
    connection_id           = "abc" # deprecated
    gateway_storage_catalog = "main"
    gateway_storage_schema  = "stage"
  }
}
"#,
            ),
            (
                "uses.tf",
                r#"output "gw" {
  value = "${databricks_pipeline.gw.id}/x"
}
locals {
  ids = [for p in [databricks_pipeline.gw] : p.id]
}
"#,
            ),
        ]);
        let lfc = &out["lfc.bf.hcl"];
        assert!(
            lfc.starts_with("resource \"databricks_ingestion_gateway\" \"gw\" {\n  name"),
            "{lfc}"
        );
        assert!(lfc.contains("  connection_name         = \"pg\""), "{lfc}");
        assert!(!lfc.contains("gateway_definition {"), "{lfc}");
        // A field the kind does not take stays, commented, and is listed with its line.
        assert!(lfc.contains("# connection_id"), "{lfc}");
        assert_eq!(conv.not_converted.len(), 1, "{:?}", conv.not_converted);
        assert_eq!(conv.not_converted[0].line, 5);
        assert!(
            conv.not_converted[0]
                .message
                .contains("gateway_definition.connection_id")
        );
        let uses = &out["uses.bf.hcl"];
        assert!(
            uses.contains("\"${databricks_ingestion_gateway.gw.id}/x\""),
            "{uses}"
        );
        assert!(uses.contains("[databricks_ingestion_gateway.gw]"), "{uses}");
        assert_eq!(
            conv.address_of("databricks_pipeline", "gw").as_deref(),
            Some("databricks_ingestion_gateway.gw")
        );
    }

    #[test]
    fn what_a_schema_lacks_is_commented_and_located() {
        let (conv, out) = convert(&[(
            "main.tf",
            r#"resource "databricks_catalog" "c" {
  name = "c"
  # owned elsewhere
  not_an_attribute = 1
  provisioner "local-exec" {
    command = "echo"
  }
  lifecycle {
    prevent_destroy = true
  }
}

resource "databricks_model_serving" "k" {
  name = "k"
}

resource "databricks_schema" "s" {
  catalog_name = databricks_catalog.c.name
  name         = databricks_model_serving.k.id
}
"#,
        )]);
        let text = &out["main.bf.hcl"];
        assert!(text.contains("  # owned elsewhere\n  # brickform convert: databricks_catalog.c: brickform has no attribute not_an_attribute\n  # not_an_attribute = 1"), "{text}");
        assert!(
            text.contains("  lifecycle {"),
            "meta-arguments stay: {text}"
        );
        let lines: Vec<(usize, &str)> = conv
            .not_converted
            .iter()
            .map(|f| (f.line, f.message.as_str()))
            .collect();
        assert_eq!(
            lines,
            vec![
                (
                    4,
                    "databricks_catalog.c: brickform has no attribute not_an_attribute"
                ),
                (
                    5,
                    "databricks_catalog.c: provisioner blocks are not supported"
                ),
                (
                    13,
                    "brickform has no resource kind databricks_model_serving"
                ),
                (
                    19,
                    "refers to databricks_model_serving.k, which was not converted"
                ),
            ]
        );
        // The output parses again (what is left out is only comments).
        assert!(hcl_edit::parser::parse_body(text).is_ok(), "{text}");
        assert_eq!(conv.resources.len(), 2);
    }
}
