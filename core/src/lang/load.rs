//! Loading a configuration: every `*.bf.hcl` file of a directory, parsed and sorted into
//! blocks, with a located diagnostic for every structural problem.

use crate::addrs::ResourceMode as Mode;
use crate::addrs::{ModuleInstance, ResourceAddr};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::source::{FileId, SourceFile, SourceMap, Span};
use crate::value::PathStep;
use hcl_edit::Span as _;
use hcl_edit::expr::{Expression, TraversalOperator};
use hcl_edit::structure::{Block, Body as HclBody, Structure};
use indexmap::IndexMap;
use std::path::{Path, PathBuf};

/// The file suffix of configuration files.
pub const CONFIG_SUFFIX: &str = ".bf.hcl";

/// An expression with the file it came from.
#[derive(Debug, Clone)]
pub struct Expr {
    pub file: FileId,
    pub expr: Expression,
}

impl Expr {
    pub fn span(&self) -> Option<Span> {
        self.expr.span().map(|r| Span::new(self.file, r))
    }
}

/// A block body with the file it came from.
#[derive(Debug, Clone)]
pub struct Body {
    pub file: FileId,
    pub body: HclBody,
}

#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub required_version: Option<(String, Option<Span>)>,
    pub backend: Option<BackendBlock>,
    /// `terraform { … }` blocks of files written for Terraform, read for what applies here
    /// (see `lang::terraform`).
    pub terraform: Vec<TerraformBlock>,
}

#[derive(Debug, Clone)]
pub struct TerraformBlock {
    pub body: Body,
    pub span: Option<Span>,
}

#[derive(Debug, Clone)]
pub struct BackendBlock {
    pub kind: String,
    pub body: Body,
    pub span: Option<Span>,
}

/// A block known by its one label whose body is read later: `provider "NAME"`,
/// `environment "NAME"`.
#[derive(Debug, Clone)]
pub struct NamedBlock {
    pub name: String,
    pub body: Body,
    pub span: Option<Span>,
}

pub type ProviderBlock = NamedBlock;
pub type EnvironmentBlock = NamedBlock;

#[derive(Debug, Clone)]
pub struct Variable {
    pub name: String,
    pub type_expr: Option<Expr>,
    pub default: Option<Expr>,
    pub description: Option<String>,
    pub sensitive: bool,
    pub nullable: bool,
    pub validations: Vec<Validation>,
    pub span: Option<Span>,
}

#[derive(Debug, Clone)]
pub struct Validation {
    pub condition: Expr,
    pub error_message: Expr,
}

#[derive(Debug, Clone)]
pub struct Local {
    pub name: String,
    pub expr: Expr,
    pub span: Option<Span>,
    /// The module instance it belongs to (the root for what the root files declare).
    pub module: ModuleInstance,
}

#[derive(Debug, Clone)]
pub struct Output {
    pub name: String,
    pub value: Expr,
    pub sensitive: bool,
    pub description: Option<String>,
    pub depends_on: Vec<Reference>,
    pub span: Option<Span>,
    pub module: ModuleInstance,
}

/// `check "NAME" { assert { … } }`: conditions reported after plan and apply, as warnings
/// that never stop either.
#[derive(Debug, Clone)]
pub struct Check {
    pub name: String,
    pub asserts: Vec<Assert>,
    pub span: Option<Span>,
    pub module: ModuleInstance,
}

#[derive(Debug, Clone)]
pub struct Assert {
    pub condition: Expr,
    pub error_message: Expr,
    pub span: Option<Span>,
}

/// A static reference to a configuration object, e.g. in `depends_on`.
#[derive(Debug, Clone)]
pub struct Reference {
    /// `TYPE.NAME` or `data.TYPE.NAME` (or `var.x`, `local.y`).
    pub target: String,
    pub span: Option<Span>,
}

#[derive(Debug, Clone, Default)]
pub enum IgnoreChanges {
    #[default]
    None,
    All,
    Paths(Vec<(Vec<PathStep>, Option<Span>)>),
}

#[derive(Debug, Clone, Default)]
pub struct Lifecycle {
    pub prevent_destroy: bool,
    pub create_before_destroy: bool,
    pub ignore_changes: IgnoreChanges,
    pub replace_triggered_by: Vec<Expr>,
}

#[derive(Debug, Clone)]
pub struct Resource {
    pub mode: Mode,
    pub type_name: String,
    pub name: String,
    pub count: Option<Expr>,
    pub for_each: Option<Expr>,
    pub depends_on: Vec<Reference>,
    pub lifecycle: Lifecycle,
    /// The body without meta-arguments.
    pub body: Body,
    pub span: Option<Span>,
    pub type_span: Option<Span>,
    /// The module instance it belongs to.
    pub module: ModuleInstance,
    /// `provider = NAME` or `provider = NAME.ALIAS` as written (in its module's names), and
    /// where.
    pub provider_ref: Option<String>,
    pub provider_span: Option<Span>,
}

impl Resource {
    /// This block's address in its module.
    pub fn addr(&self) -> crate::addrs::ResourceAddr {
        crate::addrs::ResourceAddr::in_module(
            self.module.clone(),
            self.mode,
            &self.type_name,
            &self.name,
        )
    }

    /// This block as a node of the configuration graph.
    pub fn node(&self) -> crate::addrs::ConfigNode {
        crate::addrs::ConfigNode::Resource(self.addr())
    }

    /// `TYPE.NAME` or `data.TYPE.NAME`, after its module's address when it is in one
    /// (`module.src["mysql"].TYPE.NAME`).
    pub fn address(&self) -> String {
        let local = match self.mode {
            Mode::Managed => format!("{}.{}", self.type_name, self.name),
            Mode::Data => format!("data.{}.{}", self.type_name, self.name),
        };
        if self.module.is_root() {
            local
        } else {
            format!("{}.{local}", self.module)
        }
    }
}

#[derive(Debug, Clone)]
pub struct Import {
    pub to: Reference,
    /// The instance key part of `to` (e.g. `["a"]`), kept as an expression.
    pub to_key: Option<Expr>,
    pub id: Expr,
    pub span: Option<Span>,
}

#[derive(Debug, Clone)]
pub struct Moved {
    pub from: String,
    pub to: String,
    pub span: Option<Span>,
}

#[derive(Debug, Clone)]
pub struct Removed {
    pub from: String,
    pub destroy: bool,
    pub span: Option<Span>,
}

/// `module "NAME" { source = "./dir" … }`: a call of the module in `dir`, as written.
#[derive(Debug, Clone)]
pub struct ModuleCall {
    pub name: String,
    /// The `source` as written, and where.
    pub source: String,
    pub source_span: Option<Span>,
    pub count: Option<Expr>,
    pub for_each: Option<Expr>,
    pub depends_on: Vec<Reference>,
    /// The module's input variables as the call sets them.
    pub inputs: IndexMap<String, (Expr, Option<Span>)>,
    pub span: Option<Span>,
    /// `providers = { NAME = NAME.ALIAS, … }`: the module's provider configurations (by the
    /// names it uses) from the caller's.
    pub providers: Vec<(String, String, Option<Span>)>,
    /// The called module, loaded from `source` (see `lang::modules`).
    pub module: Option<std::sync::Arc<ModuleBody>>,
}

/// What a module's files declare, loaded once however many instances call it.
#[derive(Debug, Clone, Default)]
pub struct ModuleBody {
    /// The module's directory, relative to the root module's (as `path.module` shows it).
    pub dir: String,
    pub variables: IndexMap<String, Variable>,
    pub locals: IndexMap<String, Local>,
    /// By address in the module (`TYPE.NAME`, `data.TYPE.NAME`: the root module's, until
    /// an instance of the module is expanded), in the order declared.
    pub resources: IndexMap<ResourceAddr, Resource>,
    pub outputs: IndexMap<String, Output>,
    pub checks: IndexMap<String, Check>,
    pub calls: IndexMap<String, ModuleCall>,
}

/// One instance of a module call, once the calls are expanded (see `lang::modules`).
#[derive(Debug, Clone)]
pub struct ModuleInstanceInfo {
    pub path: ModuleInstance,
    /// `path.module` inside it.
    pub dir: String,
    /// `each.value` for an instance of a call with `for_each`.
    pub each_value: Option<crate::value::Value>,
    /// Whether the call has `count` / `for_each` (what its arguments may read).
    pub has_count: bool,
    pub has_for_each: bool,
    /// The call's names of outputs, in order: what `module.NAME` holds.
    pub outputs: Vec<String>,
    /// The provider configurations its resources use, by the names the module gives them,
    /// as the root names them (`NAME` → `NAME.ALIAS`). A name not here is the root's
    /// configuration of that name.
    pub providers: std::collections::BTreeMap<String, String>,
    /// The call block.
    pub span: Option<Span>,
    /// The call's `count` / `for_each` was not known (validate without variables): the
    /// instance stands for them all, and a plan refuses it.
    pub unknown_expansion: bool,
}

/// A module call as expanded in one calling module instance.
#[derive(Debug, Clone)]
pub struct CallMade {
    pub caller: ModuleInstance,
    pub name: String,
    pub has_count: bool,
    pub has_for_each: bool,
    /// Its count or for_each was not known (see [`ModuleInstanceInfo::unknown_expansion`]).
    pub unknown: bool,
}

/// A module's input variable, set by its call: `value` is the call's argument (evaluated in
/// the caller's module with the instance's `each` / `count`), `None` when the call leaves it
/// to the default.
#[derive(Debug, Clone)]
pub struct ModuleVariable {
    pub module: ModuleInstance,
    pub decl: Variable,
    pub value: Option<Expr>,
    pub value_span: Option<Span>,
}

/// A whole configuration.
#[derive(Debug, Default, Clone)]
pub struct Config {
    pub dir: PathBuf,
    pub sources: SourceMap,
    pub settings: Settings,
    pub providers: IndexMap<String, ProviderBlock>,
    pub environments: IndexMap<String, EnvironmentBlock>,
    pub variables: IndexMap<String, Variable>,
    pub locals: IndexMap<String, Local>,
    /// Every resource block by its address (module instance included), in the order
    /// declared.
    pub resources: IndexMap<ResourceAddr, Resource>,
    pub outputs: IndexMap<String, Output>,
    pub checks: IndexMap<String, Check>,
    pub imports: Vec<Import>,
    pub moved: Vec<Moved>,
    pub removed: Vec<Removed>,
    /// The root module's `module` blocks as written; once expanded, the objects of every
    /// module instance are in the maps above (keyed by their full address or
    /// [`scoped_key`]) and in the three below.
    pub module_calls: IndexMap<String, ModuleCall>,
    pub module_instances: IndexMap<ModuleInstance, ModuleInstanceInfo>,
    /// Every call made once expanded, with how it repeats: `module.NAME` exists for the
    /// caller even when the call makes no instance (`count = 0`, an empty `for_each`).
    pub module_calls_made: Vec<CallMade>,
    pub module_variables: IndexMap<String, ModuleVariable>,
    pub module_outputs: IndexMap<String, Output>,
}

/// The key of a module's local, output, check or variable in a configuration's maps: the
/// name for the root module, `module.m["k"].NAME` inside one.
pub fn scoped_key(module: &ModuleInstance, name: &str) -> String {
    if module.is_root() {
        name.to_string()
    } else {
        format!("{module}.{name}")
    }
}

impl Config {
    /// The resource block `target` (`TYPE.NAME` or `data.TYPE.NAME`, as a reference in
    /// module instance `module` names it); `None` when the text is no such address.
    pub fn resource_in(&self, module: &ModuleInstance, target: &str) -> Option<&Resource> {
        let mut addr = ResourceAddr::parse(target).ok()?;
        addr.module = module.clone();
        self.resources.get(&addr)
    }

    /// The resource block a whole address's text names (`module.m.TYPE.NAME`, from the
    /// command line or a record); `None` when the text is no resource address.
    pub fn resource_at(&self, text: &str) -> Option<&Resource> {
        self.resources.get(&ResourceAddr::parse(text).ok()?)
    }

    /// A local by its scoped name.
    pub fn local(&self, s: &crate::addrs::Scoped) -> Option<&Local> {
        self.locals.get(&scoped_key(&s.module, &s.name))
    }

    /// An output: the root's, or a module's.
    pub fn output(&self, s: &crate::addrs::Scoped) -> Option<&Output> {
        if s.module.is_root() {
            self.outputs.get(&s.name)
        } else {
            self.module_outputs.get(&scoped_key(&s.module, &s.name))
        }
    }

    /// The provider configuration (`NAME` or `NAME.ALIAS`, as the root names it) a resource
    /// uses, `provider_name` the name of the provider its type belongs to.
    pub fn provider_key(&self, r: &Resource, provider_name: &str) -> String {
        let local = r.provider_ref.as_deref().unwrap_or(provider_name);
        self.module_instances
            .get(&r.module)
            .and_then(|i| i.providers.get(local))
            .cloned()
            .unwrap_or_else(|| local.to_string())
    }

    /// `path.module` of a module instance (`.` for the root).
    pub fn module_dir(&self, m: &ModuleInstance) -> &str {
        self.module_instances.get(m).map_or(".", |i| i.dir.as_str())
    }
}

/// One configuration file as read from disk.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    /// The file name, as diagnostics show it.
    pub name: String,
    pub path: PathBuf,
    pub text: String,
}

/// Whether a directory entry is left out of the configuration on purpose: hidden files
/// (`.name`) and editor droppings (`#name#`, `name~`), as Terraform does. Emacs keeps its lock
/// file `.#main.bf.hcl` as a dangling symbolic link while a file is being edited; reading it
/// would fail every command run meanwhile.
fn ignored(name: &str) -> bool {
    name.starts_with('.') || name.ends_with('~') || (name.starts_with('#') && name.ends_with('#'))
}

/// Reads every configuration file of `dir` (`*.bf.hcl`), sorted by name. An entry with that
/// name that cannot be read as a configuration file — a dangling symbolic link, a directory,
/// a named pipe, no permission, text that is not UTF-8 — is an error naming it and why, never
/// skipped: a configuration with a file silently missing plans to delete what that file
/// declared. A directory with no configuration file but Terraform files says how to name
/// them.
pub fn read_config_files(dir: &Path) -> (Vec<ConfigFile>, Diagnostics) {
    read_config_files_with(dir, &Overlay::new())
}

/// Texts that replace configuration files' contents, by file name in the directory: an
/// editor's unsaved buffers (the language server). A name that is not on disk is a file
/// of the configuration too.
pub type Overlay = std::collections::BTreeMap<String, String>;

/// [`read_config_files`], with `overlay`'s texts in place of what the disk holds.
pub fn read_config_files_with(dir: &Path, overlay: &Overlay) -> (Vec<ConfigFile>, Diagnostics) {
    let mut diags = Diagnostics::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            diags.push(Diagnostic::error(format!(
                "Cannot read the configuration directory {}: {e}",
                dir.display()
            )));
            return (Vec::new(), diags);
        }
    };
    let mut paths = Vec::new();
    let mut terraform = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                diags.push(Diagnostic::error(format!(
                    "Cannot read the configuration directory {}: {e}",
                    dir.display()
                )));
                continue;
            }
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        if ignored(&name) {
            continue;
        }
        if name.ends_with(CONFIG_SUFFIX) {
            paths.push((name, entry.path()));
        } else if name.ends_with(".tf") || name.ends_with(".tf.json") {
            terraform.push(name);
        }
    }
    for name in overlay.keys() {
        if name.ends_with(CONFIG_SUFFIX)
            && !ignored(name)
            && !name.contains(['/', '\\'])
            && !paths.iter().any(|(n, _)| n == name)
        {
            paths.push((name.clone(), dir.join(name)));
        }
    }
    paths.sort();
    let mut files = Vec::new();
    for (name, path) in paths {
        if let Some(text) = overlay.get(&name) {
            files.push(ConfigFile {
                name,
                path,
                text: text.clone(),
            });
            continue;
        }
        let cannot = |why: String| {
            Diagnostic::error(format!("Cannot read the configuration file {}", path.display()))
                .detail(format!(
                    "{why}. Every {CONFIG_SUFFIX} file of the directory is part of the configuration; fix it, or rename it so that its name does not end in {CONFIG_SUFFIX}."
                ))
        };
        match crate::limits::read_text_file(&path) {
            Ok(text) => files.push(ConfigFile { name, path, text }),
            Err(why @ crate::limits::ReadError::NotUtf8 { .. }) => diags.push(cannot(format!(
                "{why}; configuration files are read as UTF-8, so convert it, for example with iconv"
            ))),
            Err(why) => diags.push(cannot(why.to_string())),
        }
    }
    if files.is_empty() && !diags.has_errors() && !terraform.is_empty() {
        terraform.sort();
        diags.push(
            Diagnostic::error(format!(
                "No *{CONFIG_SUFFIX} files in {}, only Terraform files",
                dir.display()
            ))
            .detail(format!(
                "brickform reads configuration from files whose names end in {CONFIG_SUFFIX}; it found {} and no {CONFIG_SUFFIX} file.",
                terraform.join(", ")
            ))
            .hint(format!("rename them to end in {CONFIG_SUFFIX}: main.tf → main{CONFIG_SUFFIX}")),
        );
    }
    (files, diags)
}

/// Loads every configuration file of `dir`. Diagnostics hold every problem found; the
/// returned configuration holds whatever could be understood.
pub fn load_dir(dir: &Path) -> (Config, Diagnostics) {
    load_dir_with(dir, &Overlay::new())
}

/// [`load_dir`], with `overlay`'s texts in place of what the disk holds.
pub fn load_dir_with(dir: &Path, overlay: &Overlay) -> (Config, Diagnostics) {
    let (files, mut diags) = read_config_files_with(dir, overlay);
    let inputs = files
        .into_iter()
        .map(|f| (f.name, f.path, f.text))
        .collect();
    let (mut config, more) = load_sources(dir, inputs);
    config.dir = dir.to_path_buf();
    diags.extend(more);
    (config, diags)
}

/// Loads configuration from in-memory files `(name, path, text)`.
pub fn load_sources(dir: &Path, inputs: Vec<(String, PathBuf, String)>) -> (Config, Diagnostics) {
    let mut config = Config {
        dir: dir.to_path_buf(),
        ..Config::default()
    };
    let mut diags = Diagnostics::new();
    for (name, path, text) in inputs {
        let file = config
            .sources
            .add(SourceFile::new(name, path, text.clone()));
        match text.parse::<HclBody>() {
            Ok(body) => load_body_into(&mut config, file, body, &mut diags),
            Err(e) => {
                diags.push(parse_error(file, &config.sources, &e));
                for at in super::unclosed::open_braces(&text) {
                    diags.push(unclosed_block(file, at));
                }
            }
        }
    }
    super::modules::load_modules(&mut config, &mut diags);
    (config, diags)
}

/// A syntax error as a located diagnostic.
pub fn parse_error(file: FileId, sources: &SourceMap, e: &hcl_edit::parser::Error) -> Diagnostic {
    let loc = e.location();
    let offset = sources
        .get(file)
        .map(|f| line_col_to_offset(f, loc.line(), loc.column()))
        .unwrap_or(0);
    Diagnostic::error("Invalid syntax")
        .at(Some(Span::new(file, offset..offset + 1)))
        .label(e.message().to_string())
        .detail(format!(
            "The configuration could not be parsed: {}",
            e.message()
        ))
}

/// A block whose `{` has no matching `}`: said where it opens, beside the parser's error at
/// the end of the file.
fn unclosed_block(file: FileId, at: usize) -> Diagnostic {
    Diagnostic::error("Unclosed block")
        .at(Some(Span::new(file, at..at + 1)))
        .label("this `{` is never closed")
        .detail("The block opened here has no matching `}`, so everything after it was read as its body.")
        .hint("add the missing `}` where the block ends")
}

fn line_col_to_offset(f: &SourceFile, line: usize, col: usize) -> usize {
    let mut offset = 0;
    for (i, l) in f.text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return offset
                + l.char_indices()
                    .nth(col.saturating_sub(1))
                    .map(|(b, _)| b)
                    .unwrap_or(l.len());
        }
        offset += l.len();
    }
    f.text.len()
}

pub(super) fn span_of(file: FileId, s: Option<std::ops::Range<usize>>) -> Option<Span> {
    s.map(|r| Span::new(file, r))
}

pub(super) fn block_span(file: FileId, b: &Block) -> Option<Span> {
    // The header (identifier and labels) is where users look; the whole block is too long.
    let start = b.ident.span().map(|r| r.start)?;
    let end = b
        .labels
        .last()
        .and_then(|l| l.span())
        .map(|r| r.end)
        .or_else(|| b.ident.span().map(|r| r.end))?;
    Some(Span::new(file, start..end))
}

/// Reads the blocks of one file into `config`.
pub(crate) fn load_body_into(
    config: &mut Config,
    file: FileId,
    body: HclBody,
    diags: &mut Diagnostics,
) {
    for structure in body.into_iter() {
        match structure {
            Structure::Attribute(a) => {
                diags.push(
                    Diagnostic::error("Unsupported argument")
                        .at(span_of(file, a.key.span()))
                        .label("attributes are not allowed at the top level")
                        .detail(format!(
                            "An argument named \"{}\" is not expected here; the top level holds only blocks.",
                            a.key.as_str()
                        )),
                );
            }
            Structure::Block(b) => super::blocks::load_block(config, file, b, diags),
        }
    }
}

pub(super) fn labels(b: &Block) -> Vec<String> {
    b.labels.iter().map(|l| l.as_str().to_string()).collect()
}

/// Where a field of a resource body is written: the attribute or nested block a path names
/// (`[bronze, expectations]`, `[sink, 1]`), as deep as the source goes; an element of a list
/// attribute (`[flows, 2]`) is located at that element. `config` is the decoded body the path
/// was computed on: keyed blocks are sorted by key there, so an index is turned back into the
/// block written with that key. `None` when nothing of the path is written.
pub fn locate(
    body: &HclBody,
    path: &[PathStep],
    config: &crate::value::Object,
    schema: &crate::provider::Schema,
) -> Option<std::ops::Range<usize>> {
    use crate::provider::Nesting;
    use crate::value::Value;
    let Some((PathStep::Key(name), rest)) = path.split_first() else {
        return None;
    };
    if let Some(a) = body.get_attribute(name) {
        if let (Some(PathStep::Index(i)), Expression::Array(items)) = (rest.first(), &a.value) {
            return items
                .iter()
                .nth(*i)
                .and_then(|e| e.span())
                .or_else(|| a.span());
        }
        return a.span();
    }
    let bt = schema.block_type(name)?;
    let (block, item, rest) = match rest.split_first() {
        Some((PathStep::Index(i), rest)) => {
            let item = config
                .get(name.as_str())
                .and_then(Value::as_list)
                .and_then(|l| l.get(*i));
            let keyed = match (&bt.nesting, item.and_then(Value::as_object)) {
                (Nesting::Keyed(key), Some(o)) => {
                    o.get(*key).and_then(Value::as_str).and_then(|k| {
                        body.get_blocks(name).find(|b| {
                            b.labels.first().map(|l| l.as_str()) == Some(k)
                                || b.body.get_attribute(key).is_some_and(
                                    |a| matches!(&a.value, Expression::String(s) if s.value() == k),
                                )
                        })
                    })
                }
                // Unordered blocks were sorted: the one written with the item's values.
                (_, Some(o)) if bt.unordered => body.get_blocks(name).find(|b| {
                    b.body
                        .attributes()
                        .all(|a| match (&a.value, o.get(a.key.as_str())) {
                            (Expression::String(s), Some(Value::String(v))) => {
                                s.value().eq_ignore_ascii_case(v)
                            }
                            (Expression::String(_), _) => false,
                            _ => true,
                        })
                }),
                _ => None,
            };
            let block = keyed.or_else(|| body.get_blocks(name).nth(*i))?;
            (block, item, rest)
        }
        _ => (
            body.get_blocks(name).next()?,
            config.get(name.as_str()),
            rest,
        ),
    };
    let empty = crate::value::Object::default();
    let inner = item.and_then(Value::as_object).unwrap_or(&empty);
    locate(&block.body, rest, inner, &bt.schema).or_else(|| block.span())
}

/// `tags["owner"]` → `[Key(tags), Key(owner)]`.
pub fn attribute_path(e: &Expression) -> Option<Vec<PathStep>> {
    match e {
        Expression::Variable(v) => Some(vec![PathStep::Key(v.value().as_str().to_string())]),
        Expression::String(s) => Some(vec![PathStep::Key(s.value().clone())]),
        Expression::Traversal(t) => {
            let mut p = attribute_path(&t.expr)?;
            for op in &t.operators {
                match op.value() {
                    TraversalOperator::GetAttr(id) => {
                        p.push(PathStep::Key(id.value().as_str().to_string()))
                    }
                    TraversalOperator::Index(Expression::String(s)) => {
                        p.push(PathStep::Key(s.value().clone()))
                    }
                    TraversalOperator::Index(Expression::Number(n)) => {
                        p.push(PathStep::Index(n.value().as_u64()? as usize))
                    }
                    TraversalOperator::LegacyIndex(i) => {
                        p.push(PathStep::Index(*i.value() as usize))
                    }
                    _ => return None,
                }
            }
            Some(p)
        }
        _ => None,
    }
}

pub(super) fn reference_list(
    file: FileId,
    e: &Expression,
    diags: &mut Diagnostics,
) -> Vec<Reference> {
    let Expression::Array(items) = e else {
        diags.push(
            Diagnostic::error("Invalid depends_on")
                .at(span_of(file, e.span()))
                .detail("depends_on must be a list of references, such as [TYPE.NAME]."),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items.iter() {
        match reference_target(item) {
            Some(target) => out.push(Reference { target, span: span_of(file, item.span()) }),
            None => diags.push(
                Diagnostic::error("Invalid depends_on reference")
                    .at(span_of(file, item.span()))
                    .detail("Each entry must name a resource or data source, such as TYPE.NAME or data.TYPE.NAME."),
            ),
        }
    }
    out
}

/// The object a reference expression names: `TYPE.NAME`, `data.TYPE.NAME`, `var.x`, `local.y`.
pub fn reference_target(e: &Expression) -> Option<String> {
    let Expression::Traversal(t) = e else {
        return None;
    };
    let Expression::Variable(root) = &t.expr else {
        return None;
    };
    let names: Vec<&str> = t
        .operators
        .iter()
        .map_while(|o| match o.value() {
            TraversalOperator::GetAttr(id) => Some(id.value().as_str()),
            _ => None,
        })
        .collect();
    let root = root.value().as_str();
    match root {
        "data" if names.len() >= 2 => Some(format!("data.{}.{}", names[0], names[1])),
        "data" => None,
        _ if !names.is_empty() => Some(format!("{root}.{}", names[0])),
        _ => None,
    }
}

/// A resource address with an optional instance key, for `import { to = … }`.
pub(super) fn instance_reference(file: FileId, e: &Expression) -> Option<(String, Option<Expr>)> {
    let Expression::Traversal(t) = e else {
        return None;
    };
    if matches!(&t.expr, Expression::Variable(v) if v.as_str() == "module") {
        return module_instance_reference(file, t);
    }
    let target = reference_target(e)?;
    let key = t.operators.iter().find_map(|o| match o.value() {
        TraversalOperator::Index(ix) => Some(Expr {
            file,
            expr: ix.clone(),
        }),
        TraversalOperator::LegacyIndex(i) => Some(Expr {
            file,
            expr: Expression::Number(hcl_edit::Formatted::new(hcl_edit::Number::from(*i.value()))),
        }),
        _ => None,
    });
    Some((target, key))
}

/// `module.NAME[KEY]….TYPE.NAME[KEY]` as an import target: the module keys must be
/// literals (an instance address), the resource's key may be any expression.
fn module_instance_reference(
    file: FileId,
    t: &hcl_edit::expr::Traversal,
) -> Option<(String, Option<Expr>)> {
    let ops: Vec<&TraversalOperator> = t.operators.iter().map(|o| o.value()).collect();
    let mut text = String::from("module");
    let mut i = 0;
    loop {
        let TraversalOperator::GetAttr(call) = ops.get(i)? else {
            return None;
        };
        text.push('.');
        text.push_str(call.as_str());
        i += 1;
        match ops.get(i) {
            Some(TraversalOperator::Index(Expression::String(k))) => {
                text.push_str(&format!("[{}]", crate::value::quote(k.value())));
                i += 1;
            }
            Some(TraversalOperator::Index(Expression::Number(n))) => {
                text.push_str(&format!("[{}]", n.value()));
                i += 1;
            }
            Some(TraversalOperator::LegacyIndex(n)) => {
                text.push_str(&format!("[{}]", n.value()));
                i += 1;
            }
            _ => {}
        }
        match ops.get(i) {
            Some(TraversalOperator::GetAttr(next)) if next.as_str() == "module" => {
                // Another call inside this one: the loop reads it.
                text.push_str(".module");
                i += 1;
            }
            _ => break,
        }
    }
    // What follows the module steps: TYPE.NAME, or data.TYPE.NAME, then an optional key.
    let mut names = Vec::new();
    while let Some(TraversalOperator::GetAttr(n)) = ops.get(i) {
        names.push(n.as_str().to_string());
        i += 1;
    }
    match names.as_slice() {
        [t, n] => text.push_str(&format!(".{t}.{n}")),
        _ => return None,
    }
    let key = match ops.get(i) {
        None => None,
        Some(TraversalOperator::Index(ix)) if i + 1 == ops.len() => Some(Expr {
            file,
            expr: ix.clone(),
        }),
        Some(TraversalOperator::LegacyIndex(n)) if i + 1 == ops.len() => Some(Expr {
            file,
            expr: Expression::Number(hcl_edit::Formatted::new(hcl_edit::Number::from(*n.value()))),
        }),
        Some(_) => return None,
    };
    Some((text, key))
}

/// The text of an address expression as written, e.g. `TYPE.NAME["KEY"]`.
pub(super) fn address_text(e: &Expression) -> Option<String> {
    reference_target(e)?;
    let Expression::Traversal(t) = e else {
        return None;
    };
    let Expression::Variable(root) = &t.expr else {
        return None;
    };
    let mut s = root.value().as_str().to_string();
    for op in &t.operators {
        match op.value() {
            TraversalOperator::GetAttr(id) => {
                s.push('.');
                s.push_str(id.value().as_str());
            }
            TraversalOperator::Index(Expression::String(k)) => {
                s.push_str(&format!("[{}]", crate::value::quote(k.value())))
            }
            TraversalOperator::Index(Expression::Number(n)) => {
                s.push_str(&format!("[{}]", n.value()))
            }
            TraversalOperator::LegacyIndex(i) => s.push_str(&format!("[{}]", i.value())),
            _ => return None,
        }
    }
    Some(s)
}

pub(super) fn literal_string(e: &Expression) -> Option<String> {
    match e {
        Expression::String(s) => Some(s.value().clone()),
        _ => None,
    }
}

pub(super) fn literal_bool(
    file: FileId,
    e: &Expression,
    what: &str,
    diags: &mut Diagnostics,
) -> bool {
    match e {
        Expression::Bool(b) => *b.value(),
        other => {
            diags.push(
                Diagnostic::error(format!("Invalid {what} value"))
                    .at(span_of(file, other.span()))
                    .detail(format!("\"{what}\" must be the literal true or false.")),
            );
            false
        }
    }
}

pub fn valid_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(src: &str) -> (Config, Diagnostics) {
        load_sources(
            Path::new("."),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
        )
    }

    #[test]
    fn sorts_blocks_and_meta_arguments() {
        let (c, d) = load(
            r#"
brickform { required_version = ">= 0.1" }
variable "env" {
  type    = string
  default = "dev"
  validation {
    condition     = length(var.env) > 0
    error_message = "env must not be empty"
  }
}
locals { prefix = "x_${var.env}" }
resource "test_thing" "a" {
  count      = 2
  name       = "a${count.index}"
  depends_on = [test_thing.b, data.test_info.i]
  lifecycle {
    prevent_destroy = true
    ignore_changes  = [tags["owner"], comment]
  }
}
resource "test_thing" "b" { name = "b" }
data "test_info" "i" {}
output "o" { value = test_thing.b.name }
import {
  to = test_thing.b
  id = "b"
}
moved {
  from = test_thing.old
  to   = test_thing.b
}
removed {
  from = test_thing.gone
  lifecycle { destroy = false }
}
"#,
        );
        assert!(!d.has_errors(), "{d:?}");
        assert_eq!(c.variables["env"].validations.len(), 1);
        assert!(c.locals.contains_key("prefix"));
        let a = c.resource_at("test_thing.a").unwrap();
        assert!(a.count.is_some());
        assert_eq!(
            a.depends_on
                .iter()
                .map(|r| r.target.as_str())
                .collect::<Vec<_>>(),
            ["test_thing.b", "data.test_info.i"]
        );
        assert!(a.lifecycle.prevent_destroy);
        assert!(matches!(&a.lifecycle.ignore_changes, IgnoreChanges::Paths(p) if p.len() == 2));
        assert!(
            a.body.body.get_attribute("count").is_none(),
            "meta-arguments are removed from the body"
        );
        assert!(c.resource_at("data.test_info.i").is_some());
        assert_eq!(c.imports[0].to.target, "test_thing.b");
        assert_eq!(c.moved[0].from, "test_thing.old");
        assert!(!c.removed[0].destroy);
    }

    #[test]
    fn reports_every_structural_error_with_a_location() {
        let (_, d) = load(
            r#"
resourc "a" "b" {}
resource "t" "x" {}
resource "t" "x" {}
variable {}
output "o" {}
"#,
        );
        let summaries: Vec<&str> = d.iter().map(|d| d.summary.as_str()).collect();
        assert_eq!(
            summaries,
            [
                "Unsupported block type",
                "Duplicate resource",
                "Missing name for block",
                "Missing required argument"
            ]
        );
        assert_eq!(d.0[0].hint.as_deref(), Some("did you mean `resource`?"));
        assert!(d.iter().all(|d| d.span.is_some()));
    }

    /// The summaries and details of a directory's loading errors.
    fn load_errors(dir: &Path) -> Vec<String> {
        let (_, d) = load_dir(dir);
        d.errors()
            .map(|d| format!("{}: {}", d.summary, d.detail.clone().unwrap_or_default()))
            .collect()
    }

    #[test]
    fn a_configuration_file_that_cannot_be_read_is_an_error_never_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("main.bf.hcl"), "output \"o\" {\n  value = 1\n}\n").unwrap();
        let one = |setup: &dyn Fn(&Path), why: &str| {
            let sub = tempfile::tempdir().unwrap();
            setup(sub.path());
            let errors = load_errors(sub.path());
            assert_eq!(errors.len(), 1, "{why}: {errors:?}");
            assert!(
                errors[0].starts_with("Cannot read the configuration file ")
                    && errors[0].contains("x.bf.hcl")
                    && errors[0].contains(why),
                "{why}: {errors:?}"
            );
        };
        one(
            &|p| std::os::unix::fs::symlink("gone.bf.hcl", p.join("x.bf.hcl")).unwrap(),
            "is a symbolic link to gone.bf.hcl, which does not exist",
        );
        one(
            &|p| std::fs::create_dir(p.join("x.bf.hcl")).unwrap(),
            "is a directory, not a file",
        );
        one(
            &|p| {
                std::fs::create_dir(p.join("sub")).unwrap();
                std::os::unix::fs::symlink("sub", p.join("x.bf.hcl")).unwrap()
            },
            "is a symbolic link to sub, which is a directory, not a file",
        );
        one(
            &|p| {
                // Opened for reading, a named pipe would block the loader forever.
                let made = std::process::Command::new("mkfifo")
                    .arg(p.join("x.bf.hcl"))
                    .status()
                    .unwrap();
                assert!(made.success());
            },
            "is a named pipe (FIFO), not a file",
        );
        one(
            &|p| {
                std::fs::write(
                    p.join("x.bf.hcl"),
                    b"output \"o\" {\n  value = \"caf\xe9\"\n}\n",
                )
                .unwrap()
            },
            "is not UTF-8 text (the first invalid byte is at line 2, column 15); configuration files are read as UTF-8, so convert it, for example with iconv",
        );
        // A file that stats as regular but fails to read (also as root, where a file
        // without permissions can still be read).
        one(
            &|p| std::os::unix::fs::symlink("/proc/self/mem", p.join("x.bf.hcl")).unwrap(),
            "Input/output error",
        );
        // The readable files beside an unreadable one still load, so every problem shows.
        std::os::unix::fs::symlink("gone", d.join("x.bf.hcl")).unwrap();
        let (c, diags) = load_dir(d);
        assert!(diags.has_errors());
        assert!(c.outputs.contains_key("o"));
    }

    #[test]
    fn a_file_without_read_permission_is_an_error() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x.bf.hcl");
        std::fs::write(&f, "").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
        let errors = load_errors(dir.path());
        // A privileged user reads it anyway; then nothing is wrong with it.
        match std::fs::File::open(&f) {
            Err(e) => {
                assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
                assert_eq!(errors.len(), 1, "{errors:?}");
                assert!(errors[0].contains("ermission denied"), "{errors:?}");
            }
            Ok(_) => assert!(errors.is_empty(), "{errors:?}"),
        }
    }

    #[test]
    fn hidden_files_and_editor_droppings_are_not_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // Emacs' lock file: a dangling link while main.bf.hcl is being edited.
        std::os::unix::fs::symlink("user@host.123:456", d.join(".#main.bf.hcl")).unwrap();
        std::fs::write(d.join("#main.bf.hcl#"), "not hcl {").unwrap();
        std::fs::write(d.join(".hidden.bf.hcl"), "not hcl {").unwrap();
        std::fs::create_dir(d.join(".brickform")).unwrap();
        std::fs::write(d.join(".brickform/x.bf.hcl"), "not hcl {").unwrap();
        std::fs::write(d.join("main.bf.hcl"), "output \"o\" {\n  value = 1\n}\n").unwrap();
        let (c, diags) = load_dir(d);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(
            c.sources
                .files()
                .map(|(_, f)| f.name.clone())
                .collect::<Vec<_>>(),
            ["main.bf.hcl"]
        );
    }

    #[test]
    fn a_directory_of_terraform_files_says_brickform_reads_bf_hcl() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("main.tf"), "").unwrap();
        std::fs::write(d.join("vars.tf.json"), "{}").unwrap();
        let (_, diags) = load_dir(d);
        let e: Vec<&Diagnostic> = diags.errors().collect();
        assert_eq!(e.len(), 1, "{diags:?}");
        assert!(e[0].summary.contains("only Terraform files"), "{:?}", e[0]);
        assert!(
            e[0].detail
                .as_deref()
                .unwrap_or("")
                .contains("main.tf, vars.tf.json")
        );
        assert!(
            e[0].hint
                .as_deref()
                .unwrap_or("")
                .contains("main.tf → main.bf.hcl")
        );
        // Beside a configuration they are someone else's files.
        std::fs::write(d.join("main.bf.hcl"), "").unwrap();
        assert!(load_dir(d).1.is_empty());
        // An empty directory is not an error here (commands decide what it means).
        assert!(load_dir(tempfile::tempdir().unwrap().path()).1.is_empty());
    }

    #[test]
    fn syntax_errors_are_located() {
        let (_, d) = load("resource \"a\" \"b\" {\n  name = \n}\n");
        assert_eq!(d.0.len(), 1);
        assert_eq!(d.0[0].summary, "Invalid syntax");
        let span = d.0[0].span.clone().unwrap();
        assert!(span.range.start > 10);
    }
}
