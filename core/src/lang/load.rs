//! Loading a configuration: every `*.bf.hcl` file of a directory, parsed and sorted into
//! blocks, with a located diagnostic for every structural problem.

use super::diagnostics::{Diagnostic, Diagnostics, did_you_mean};
use super::source::{FileId, SourceFile, SourceMap, Span};
use crate::addrs::ModuleInstance;
use crate::plan::Mode;
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
    pub resources: IndexMap<String, Resource>,
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
    pub resources: IndexMap<String, Resource>,
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

const TOP_LEVEL: &[&str] = &[
    "brickform",
    "provider",
    "environment",
    "variable",
    "locals",
    "resource",
    "data",
    "output",
    "import",
    "moved",
    "removed",
    "terraform",
    "check",
    "module",
];

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
            Err(why) if why.starts_with("it is not UTF-8") => diags.push(cannot(format!(
                "{why}; configuration files are read as UTF-8, so convert it, for example with iconv"
            ))),
            Err(why) => diags.push(cannot(why)),
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

fn span_of(file: FileId, s: Option<std::ops::Range<usize>>) -> Option<Span> {
    s.map(|r| Span::new(file, r))
}

fn block_span(file: FileId, b: &Block) -> Option<Span> {
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
            Structure::Block(b) => load_block(config, file, b, diags),
        }
    }
}

fn labels(b: &Block) -> Vec<String> {
    b.labels.iter().map(|l| l.as_str().to_string()).collect()
}

/// The `provider` meta-argument: the provider a resource type belongs to (the part of its
/// type before the first `_`, as in Terraform) is the only one there is. An alias
/// (`provider = NAME.ALIAS`) names a second configuration of a provider, which brickform
/// does not have: going on without it would make the changes with the wrong settings.
/// `provider = NAME` or `NAME.ALIAS`; whether NAME is the provider of the type is for the
/// engine to say, which knows the providers.
fn provider_reference(
    file: FileId,
    type_name: &str,
    value: &Expression,
    diags: &mut Diagnostics,
) -> Option<String> {
    let key = provider_key(value);
    if key.is_none() {
        let owner = type_name.split('_').next().unwrap_or(type_name);
        diags.push(
            Diagnostic::error("Invalid provider reference")
                .at(span_of(file, value.span()))
                .detail(format!(
                    "The provider meta-argument names a provider configuration, as in provider = {owner} or provider = {owner}.ALIAS."
                )),
        );
    }
    key
}

/// `NAME` or `NAME.ALIAS` from a provider reference expression.
fn provider_key(e: &Expression) -> Option<String> {
    match e {
        Expression::Variable(v) => Some(v.as_str().to_string()),
        Expression::Traversal(t) => {
            let Expression::Variable(root) = &t.expr else {
                return None;
            };
            match t
                .operators
                .iter()
                .map(|o| o.value())
                .collect::<Vec<_>>()
                .as_slice()
            {
                [TraversalOperator::GetAttr(alias)] => {
                    Some(format!("{}.{}", root.as_str(), alias.as_str()))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// An `assert` block of a check: its condition and error message, both required.
fn check_assert(file: FileId, b: Block, diags: &mut Diagnostics) -> Option<Assert> {
    let span = block_span(file, &b);
    expect_labels(file, &b, &[], diags)?;
    let (mut condition, mut error_message) = (None, None);
    for s in b.body.into_iter() {
        match s {
            Structure::Attribute(a) if a.key.as_str() == "condition" => {
                condition = Some(Expr {
                    file,
                    expr: a.value,
                })
            }
            Structure::Attribute(a) if a.key.as_str() == "error_message" => {
                error_message = Some(Expr {
                    file,
                    expr: a.value,
                })
            }
            other => unsupported_in(
                file,
                &other,
                "assert",
                &["condition", "error_message"],
                diags,
            ),
        }
    }
    let missing = match (&condition, &error_message) {
        (None, _) => Some("condition"),
        (_, None) => Some("error_message"),
        _ => None,
    };
    if let Some(m) = missing {
        diags.push(
            Diagnostic::error("Missing required argument")
                .at(span.clone())
                .detail(format!(
                    "The argument \"{m}\" is required, but no definition was found."
                )),
        );
    }
    Some(Assert {
        condition: condition?,
        error_message: error_message?,
        span,
    })
}

fn expect_labels(
    file: FileId,
    b: &Block,
    names: &[&str],
    diags: &mut Diagnostics,
) -> Option<Vec<String>> {
    let ls = labels(b);
    if ls.len() == names.len() {
        return Some(ls);
    }
    let kind = b.ident.as_str();
    let want = if names.is_empty() {
        format!("A \"{kind}\" block takes no labels.")
    } else {
        format!(
            "A \"{kind}\" block needs {} label{}: {}.",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        )
    };
    diags.push(
        Diagnostic::error(if ls.len() < names.len() {
            "Missing name for block"
        } else {
            "Extraneous label for block"
        })
        .at(block_span(file, b))
        .detail(want),
    );
    None
}

fn duplicate(
    diags: &mut Diagnostics,
    what: &str,
    name: &str,
    at: Option<Span>,
    first: Option<&Span>,
    sources: &SourceMap,
) {
    let prev = first
        .and_then(|s| {
            let f = sources.get(s.file)?;
            let (l, c) = f.line_col(s.range.start);
            Some(format!(" It was first declared at {}:{l}:{c}.", f.name))
        })
        .unwrap_or_default();
    diags.push(
        Diagnostic::error(format!("Duplicate {what}"))
            .at(at)
            .label("declared again here")
            .detail(format!(
                "{name} is declared more than once; each name must be unique.{prev}"
            )),
    );
}

/// Adds a named block, reporting a second block of the same name instead.
fn insert_named(
    map: &mut IndexMap<String, NamedBlock>,
    block: NamedBlock,
    what: &str,
    keyword: &str,
    sources: &SourceMap,
    diags: &mut Diagnostics,
) {
    if let Some(prev) = map.get(&block.name) {
        let name = format!("{keyword} \"{}\"", block.name);
        duplicate(diags, what, &name, block.span, prev.span.as_ref(), sources);
        return;
    }
    map.insert(block.name.clone(), block);
}

fn load_block(config: &mut Config, file: FileId, b: Block, diags: &mut Diagnostics) {
    let ident = b.ident.as_str().to_string();
    let span = block_span(file, &b);
    match ident.as_str() {
        "terraform" => {
            if expect_labels(file, &b, &[], diags).is_none() {
                return;
            }
            config.settings.terraform.push(TerraformBlock {
                body: Body { file, body: b.body },
                span,
            });
        }
        "brickform" => {
            if expect_labels(file, &b, &[], diags).is_none() {
                return;
            }
            for s in b.body.iter() {
                match s {
                    Structure::Attribute(a) if a.key.as_str() == "required_version" => {
                        match literal_string(&a.value) {
                            Some(v) => config.settings.required_version = Some((v, span_of(file, a.value.span()))),
                            None => diags.push(
                                Diagnostic::error("Invalid required_version")
                                    .at(span_of(file, a.value.span()))
                                    .detail("required_version must be a literal string such as \">= 0.1\"."),
                            ),
                        }
                    }
                    Structure::Block(inner) if inner.ident.as_str() == "backend" => {
                        if let Some(ls) = expect_labels(file, inner, &["backend type"], diags) {
                            config.settings.backend = Some(BackendBlock {
                                kind: ls[0].clone(),
                                body: Body { file, body: inner.body.clone() },
                                span: block_span(file, inner),
                            });
                        }
                    }
                    other => unsupported_in(file, other, "brickform", &["required_version", "backend"], diags),
                }
            }
        }
        "provider" => {
            let Some(ls) = expect_labels(file, &b, &["provider name"], diags) else {
                return;
            };
            // `alias = "prod"` makes another configuration of the provider, known as
            // `NAME.prod` (the key it is kept under).
            let mut body = b.body;
            let mut name = ls[0].clone();
            if let Some(a) = body.remove_attribute("alias") {
                match literal_string(&a.value) {
                    Some(alias) if valid_identifier(&alias) => name = format!("{name}.{alias}"),
                    _ => {
                        diags.push(
                            Diagnostic::error("Invalid provider alias")
                                .at(span_of(file, a.value.span()))
                                .detail("alias must be a literal name such as \"prod\": letters, digits, underscores and dashes, starting with a letter."),
                        );
                        return;
                    }
                }
            }
            let block = NamedBlock {
                name,
                body: Body { file, body },
                span,
            };
            insert_named(
                &mut config.providers,
                block,
                "provider block",
                "provider",
                &config.sources,
                diags,
            );
        }
        "environment" => {
            let Some(ls) = expect_labels(file, &b, &["environment name"], diags) else {
                return;
            };
            let block = NamedBlock {
                name: ls[0].clone(),
                body: Body { file, body: b.body },
                span,
            };
            insert_named(
                &mut config.environments,
                block,
                "environment",
                "environment",
                &config.sources,
                diags,
            );
        }
        "variable" => {
            let Some(ls) = expect_labels(file, &b, &["variable name"], diags) else {
                return;
            };
            let name = ls[0].clone();
            if let Some(prev) = config.variables.get(&name) {
                duplicate(
                    diags,
                    "variable declaration",
                    &format!("variable \"{name}\""),
                    span,
                    prev.span.as_ref(),
                    &config.sources,
                );
                return;
            }
            let mut v = Variable {
                name: name.clone(),
                type_expr: None,
                default: None,
                description: None,
                sensitive: false,
                nullable: true,
                validations: Vec::new(),
                span,
            };
            for s in b.body.into_iter() {
                match s {
                    Structure::Attribute(a) => match a.key.as_str() {
                        "type" => {
                            v.type_expr = Some(Expr {
                                file,
                                expr: a.value,
                            })
                        }
                        "default" => {
                            v.default = Some(Expr {
                                file,
                                expr: a.value,
                            })
                        }
                        "description" => v.description = literal_string(&a.value),
                        "sensitive" => {
                            v.sensitive = literal_bool(file, &a.value, "sensitive", diags)
                        }
                        "nullable" => v.nullable = literal_bool(file, &a.value, "nullable", diags),
                        _ => unsupported_in(
                            file,
                            &Structure::Attribute(a),
                            "variable",
                            &[
                                "type",
                                "default",
                                "description",
                                "sensitive",
                                "nullable",
                                "validation",
                            ],
                            diags,
                        ),
                    },
                    Structure::Block(vb) if vb.ident.as_str() == "validation" => {
                        let cond = vb.body.get_attribute("condition").map(|a| Expr {
                            file,
                            expr: a.value.clone(),
                        });
                        let msg = vb.body.get_attribute("error_message").map(|a| Expr {
                            file,
                            expr: a.value.clone(),
                        });
                        match (cond, msg) {
                            (Some(condition), Some(error_message)) => v.validations.push(Validation { condition, error_message }),
                            _ => diags.push(
                                Diagnostic::error("Missing required argument")
                                    .at(block_span(file, &vb))
                                    .detail("A validation block needs both \"condition\" and \"error_message\"."),
                            ),
                        }
                    }
                    other => unsupported_in(
                        file,
                        &other,
                        "variable",
                        &[
                            "type",
                            "default",
                            "description",
                            "sensitive",
                            "nullable",
                            "validation",
                        ],
                        diags,
                    ),
                }
            }
            config.variables.insert(name, v);
        }
        "locals" => {
            if expect_labels(file, &b, &[], diags).is_none() {
                return;
            }
            for s in b.body.into_iter() {
                match s {
                    Structure::Attribute(a) => {
                        let name = a.key.as_str().to_string();
                        let aspan = span_of(file, a.key.span());
                        if let Some(prev) = config.locals.get(&name) {
                            duplicate(
                                diags,
                                "local value definition",
                                &format!("local.{name}"),
                                aspan,
                                prev.span.as_ref(),
                                &config.sources,
                            );
                            continue;
                        }
                        config.locals.insert(
                            name.clone(),
                            Local {
                                name,
                                expr: Expr {
                                    file,
                                    expr: a.value,
                                },
                                span: aspan,
                                module: ModuleInstance::root(),
                            },
                        );
                    }
                    Structure::Block(inner) => diags.push(
                        Diagnostic::error("Unexpected block")
                            .at(block_span(file, &inner))
                            .detail("A locals block holds only attributes (name = expression)."),
                    ),
                }
            }
        }
        "resource" | "data" => {
            let Some(ls) = expect_labels(file, &b, &["type", "name"], diags) else {
                return;
            };
            let mode = if ident == "data" {
                Mode::Data
            } else {
                Mode::Managed
            };
            let type_span = b
                .labels
                .first()
                .and_then(|l| l.span())
                .map(|r| Span::new(file, r));
            let r = load_resource(
                file,
                mode,
                ls[0].clone(),
                ls[1].clone(),
                span.clone(),
                type_span,
                b.body,
                diags,
            );
            let addr = r.address();
            if let Some(prev) = config.resources.get(&addr) {
                duplicate(
                    diags,
                    if mode == Mode::Data {
                        "data resource"
                    } else {
                        "resource"
                    },
                    &addr,
                    span,
                    prev.span.as_ref(),
                    &config.sources,
                );
                return;
            }
            if !valid_identifier(&r.name) {
                diags.push(
                    Diagnostic::error("Invalid resource name")
                        .at(span.clone())
                        .detail("A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes."),
                );
            }
            config.resources.insert(addr, r);
        }
        "output" => {
            let Some(ls) = expect_labels(file, &b, &["output name"], diags) else {
                return;
            };
            let name = ls[0].clone();
            if let Some(prev) = config.outputs.get(&name) {
                duplicate(
                    diags,
                    "output definition",
                    &format!("output \"{name}\""),
                    span,
                    prev.span.as_ref(),
                    &config.sources,
                );
                return;
            }
            let mut value = None;
            let mut sensitive = false;
            let mut description = None;
            let mut depends_on = Vec::new();
            for s in b.body.into_iter() {
                match s {
                    Structure::Attribute(a) => match a.key.as_str() {
                        "value" => {
                            value = Some(Expr {
                                file,
                                expr: a.value,
                            })
                        }
                        "sensitive" => sensitive = literal_bool(file, &a.value, "sensitive", diags),
                        "description" => description = literal_string(&a.value),
                        "depends_on" => depends_on = reference_list(file, &a.value, diags),
                        _ => unsupported_in(
                            file,
                            &Structure::Attribute(a),
                            "output",
                            &["value", "sensitive", "description", "depends_on"],
                            diags,
                        ),
                    },
                    other => unsupported_in(
                        file,
                        &other,
                        "output",
                        &["value", "sensitive", "description", "depends_on"],
                        diags,
                    ),
                }
            }
            match value {
                Some(value) => {
                    config.outputs.insert(
                        name.clone(),
                        Output {
                            name,
                            value,
                            sensitive,
                            description,
                            depends_on,
                            span,
                            module: ModuleInstance::root(),
                        },
                    );
                }
                None => diags.push(
                    Diagnostic::error("Missing required argument")
                        .at(span)
                        .detail("The argument \"value\" is required, but no definition was found."),
                ),
            }
        }
        "check" => {
            let Some(ls) = expect_labels(file, &b, &["check name"], diags) else {
                return;
            };
            let name = ls[0].clone();
            if let Some(prev) = config.checks.get(&name) {
                duplicate(
                    diags,
                    "check block",
                    &format!("check \"{name}\""),
                    span,
                    prev.span.as_ref(),
                    &config.sources,
                );
                return;
            }
            let mut asserts = Vec::new();
            for s in b.body.into_iter() {
                match s {
                    Structure::Block(a) if a.ident.as_str() == "assert" => {
                        if let Some(assert) = check_assert(file, a, diags) {
                            asserts.push(assert);
                        }
                    }
                    Structure::Block(d) if d.ident.as_str() == "data" => diags.push(
                        Diagnostic::error("Data sources inside check blocks are not supported")
                            .at(block_span(file, &d))
                            .detail("brickform reads data sources only at the top level of the configuration.")
                            .hint("move this data block out of the check block; the assert can refer to it there as it does now"),
                    ),
                    other => unsupported_in(file, &other, "check", &["assert"], diags),
                }
            }
            if asserts.is_empty() {
                diags.push(
                    Diagnostic::error("Missing assert block")
                        .at(span)
                        .detail("A check block needs at least one assert block: assert { condition = … error_message = \"…\" }."),
                );
                return;
            }
            config.checks.insert(
                name.clone(),
                Check {
                    name,
                    asserts,
                    span,
                    module: ModuleInstance::root(),
                },
            );
        }
        "import" => {
            if expect_labels(file, &b, &[], diags).is_none() {
                return;
            }
            let to = b.body.get_attribute("to").map(|a| a.value.clone());
            let id = b.body.get_attribute("id").map(|a| Expr {
                file,
                expr: a.value.clone(),
            });
            for s in b.body.iter() {
                let key = match s {
                    Structure::Attribute(a) => a.key.as_str(),
                    Structure::Block(bl) => bl.ident.as_str(),
                };
                if !["to", "id"].contains(&key) {
                    unsupported_in(file, s, "import", &["to", "id"], diags);
                }
            }
            match (to, id) {
                (Some(to), Some(id)) => match instance_reference(file, &to) {
                    Some((target, key)) => config.imports.push(Import {
                        to: Reference { target, span: span_of(file, to.span()) },
                        to_key: key,
                        id,
                        span,
                    }),
                    None => diags.push(
                        Diagnostic::error("Invalid import address")
                            .at(span_of(file, to.span()))
                            .detail("\"to\" must be a resource address such as TYPE.NAME or TYPE.NAME[\"KEY\"]."),
                    ),
                },
                _ => diags.push(
                    Diagnostic::error("Missing required argument")
                        .at(span)
                        .detail("An import block needs both \"to\" and \"id\"."),
                ),
            }
        }
        "moved" => {
            if expect_labels(file, &b, &[], diags).is_none() {
                return;
            }
            let from = b
                .body
                .get_attribute("from")
                .and_then(|a| address_text(&a.value));
            let to = b
                .body
                .get_attribute("to")
                .and_then(|a| address_text(&a.value));
            match (from, to) {
                (Some(from), Some(to)) => config.moved.push(Moved { from, to, span }),
                _ => diags.push(
                    Diagnostic::error("Invalid moved block")
                        .at(span)
                        .detail("A moved block needs \"from\" and \"to\", each a resource address (TYPE.NAME, optionally with an index)."),
                ),
            }
        }
        "removed" => {
            if expect_labels(file, &b, &[], diags).is_none() {
                return;
            }
            let from = b
                .body
                .get_attribute("from")
                .and_then(|a| address_text(&a.value));
            let mut destroy = true;
            for lb in b.body.get_blocks("lifecycle") {
                if let Some(a) = lb.body.get_attribute("destroy") {
                    destroy = literal_bool(file, &a.value, "destroy", diags);
                }
            }
            match from {
                Some(from) => config.removed.push(Removed {
                    from,
                    destroy,
                    span,
                }),
                None => diags.push(
                    Diagnostic::error("Invalid removed block")
                        .at(span)
                        .detail("A removed block needs \"from\", a resource address."),
                ),
            }
        }
        "module" => {
            let Some(ls) = expect_labels(file, &b, &["module name"], diags) else {
                return;
            };
            let name = ls[0].clone();
            if let Some(prev) = config.module_calls.get(&name) {
                duplicate(
                    diags,
                    "module call",
                    &format!("module.{name}"),
                    span,
                    prev.span.as_ref(),
                    &config.sources,
                );
                return;
            }
            if !valid_identifier(&name) {
                diags.push(
                    Diagnostic::error("Invalid module name")
                        .at(span.clone())
                        .detail("A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes."),
                );
                return;
            }
            if let Some(call) = load_module_call(file, name.clone(), span, b.body, diags) {
                config.module_calls.insert(name, call);
            }
        }
        other => {
            diags.push(
                Diagnostic::error("Unsupported block type")
                    .at(span)
                    .label("not expected here")
                    .detail(format!("Blocks of type \"{other}\" are not expected here."))
                    .maybe_hint(did_you_mean(other, TOP_LEVEL.iter().copied())),
            );
        }
    }
}

fn unsupported_in(
    file: FileId,
    s: &Structure,
    parent: &str,
    allowed: &[&str],
    diags: &mut Diagnostics,
) {
    let (kind, name, span) = match s {
        Structure::Attribute(a) => ("argument", a.key.as_str().to_string(), a.key.span()),
        Structure::Block(b) => ("block type", b.ident.as_str().to_string(), b.ident.span()),
    };
    diags.push(
        Diagnostic::error(format!("Unsupported {kind}"))
            .at(span_of(file, span))
            .label("not expected here")
            .detail(format!(
                "{} {kind} named \"{name}\" is not expected in {} {parent} block.",
                if kind.starts_with('a') { "An" } else { "A" },
                if parent.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                },
            ))
            .maybe_hint(did_you_mean(&name, allowed.iter().copied())),
    );
}

#[allow(clippy::too_many_arguments)]
fn load_resource(
    file: FileId,
    mode: Mode,
    type_name: String,
    name: String,
    span: Option<Span>,
    type_span: Option<Span>,
    body: HclBody,
    diags: &mut Diagnostics,
) -> Resource {
    let mut r = Resource {
        mode,
        type_name,
        name,
        count: None,
        for_each: None,
        depends_on: Vec::new(),
        lifecycle: Lifecycle::default(),
        body: Body {
            file,
            body: HclBody::new(),
        },
        span,
        type_span,
        module: ModuleInstance::root(),
        provider_ref: None,
        provider_span: None,
    };
    let mut rest = HclBody::new();
    for s in body.into_iter() {
        match s {
            Structure::Attribute(a) if a.key.as_str() == "count" => {
                r.count = Some(Expr {
                    file,
                    expr: a.value,
                })
            }
            Structure::Attribute(a) if a.key.as_str() == "for_each" => {
                r.for_each = Some(Expr {
                    file,
                    expr: a.value,
                })
            }
            Structure::Attribute(a) if a.key.as_str() == "depends_on" => {
                r.depends_on = reference_list(file, &a.value, diags)
            }
            Structure::Attribute(a) if a.key.as_str() == "provider" => {
                r.provider_span = span_of(file, a.value.span());
                r.provider_ref = provider_reference(file, &r.type_name, &a.value, diags);
            }
            Structure::Block(b) if b.ident.as_str() == "lifecycle" && mode == Mode::Managed => {
                r.lifecycle = load_lifecycle(file, &b, diags);
            }
            other => rest.push(other),
        }
    }
    if r.count.is_some() && r.for_each.is_some() {
        diags.push(
            Diagnostic::error("Invalid combination of \"count\" and \"for_each\"")
                .at(r.for_each.as_ref().and_then(Expr::span))
                .detail("The \"count\" and \"for_each\" meta-arguments are mutually exclusive; only one may be used to be explicit about the number of resources to be created."),
        );
    }
    r.body = Body { file, body: rest };
    r
}

/// A `module` block: its meta-arguments, and every other argument as an input variable of
/// the module. The module itself is loaded later (see `lang::modules`).
fn load_module_call(
    file: FileId,
    name: String,
    span: Option<Span>,
    body: HclBody,
    diags: &mut Diagnostics,
) -> Option<ModuleCall> {
    let mut call = ModuleCall {
        name,
        source: String::new(),
        source_span: None,
        count: None,
        for_each: None,
        depends_on: Vec::new(),
        inputs: IndexMap::new(),
        span: span.clone(),
        providers: Vec::new(),
        module: None,
    };
    let mut source = None;
    for s in body.into_iter() {
        match s {
            Structure::Attribute(a) => {
                let key_span = span_of(file, a.key.span());
                let expr = Expr {
                    file,
                    expr: a.value,
                };
                match a.key.as_str() {
                    "source" => match literal_string(&expr.expr) {
                        Some(v) => source = Some((v, expr.span())),
                        None => diags.push(
                            Diagnostic::error("Invalid module source")
                                .at(expr.span())
                                .detail("The module source must be a literal string, the path of the module's directory such as \"./modules/source\"."),
                        ),
                    },
                    "count" => call.count = Some(expr),
                    "for_each" => call.for_each = Some(expr),
                    "depends_on" => call.depends_on = reference_list(file, &expr.expr, diags),
                    "providers" => call.providers = module_providers(&expr, diags),
                    "version" => diags.push(
                        Diagnostic::error("Module version on a local module")
                            .at(key_span)
                            .detail("Only modules from a registry have versions; a module in a local directory is used as it is.")
                            .hint("remove the version argument"),
                    ),
                    key => {
                        call.inputs.insert(key.to_string(), (expr, key_span));
                    }
                }
            }
            Structure::Block(inner) => diags.push(
                Diagnostic::error("Unsupported block type")
                    .at(block_span(file, &inner))
                    .label("not expected here")
                    .detail(format!(
                        "A module call takes arguments only (its source, meta-arguments and the module's input variables); a \"{}\" block is not expected in it.",
                        inner.ident.as_str()
                    )),
            ),
        }
    }
    if call.count.is_some() && call.for_each.is_some() {
        diags.push(
            Diagnostic::error("Invalid combination of \"count\" and \"for_each\"")
                .at(call.for_each.as_ref().and_then(Expr::span))
                .detail("The \"count\" and \"for_each\" meta-arguments are mutually exclusive; only one may be used to be explicit about the number of module instances."),
        );
    }
    match source {
        Some((src, src_span)) => {
            call.source = src;
            call.source_span = src_span;
            Some(call)
        }
        None => {
            diags.push(
                Diagnostic::error("Missing required argument")
                    .at(span)
                    .detail("The argument \"source\" is required: the path of the module's directory, such as \"./modules/source\"."),
            );
            None
        }
    }
}

/// `providers = { NAME = NAME.ALIAS }` on a module call: which of the caller's
/// provider configurations the module uses under each of its names.
fn module_providers(e: &Expr, diags: &mut Diagnostics) -> Vec<(String, String, Option<Span>)> {
    let Expression::Object(o) = &e.expr else {
        diags.push(
            Diagnostic::error("Invalid providers argument")
                .at(e.span())
                .detail("providers must be a map such as { NAME = NAME.ALIAS }, NAME a provider."),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in o.iter() {
        let key = match k {
            hcl_edit::expr::ObjectKey::Ident(i) => Some(i.as_str().to_string()),
            hcl_edit::expr::ObjectKey::Expression(x) => provider_key(x),
        };
        let value = provider_key(v.expr());
        match (key, value) {
            (Some(key), Some(value)) => {
                out.push((key, value, span_of(e.file, v.expr().span())));
            }
            _ => diags.push(
                Diagnostic::error("Invalid providers argument")
                    .at(span_of(e.file, v.expr().span()))
                    .detail("Each entry of providers names a provider configuration of the module and one of the caller: NAME = NAME.ALIAS."),
            ),
        }
    }
    out
}

fn load_lifecycle(file: FileId, b: &Block, diags: &mut Diagnostics) -> Lifecycle {
    let mut l = Lifecycle::default();
    for s in b.body.iter() {
        match s {
            Structure::Attribute(a) => match a.key.as_str() {
                "prevent_destroy" => l.prevent_destroy = literal_bool(file, &a.value, "prevent_destroy", diags),
                "create_before_destroy" => l.create_before_destroy = literal_bool(file, &a.value, "create_before_destroy", diags),
                "ignore_changes" => l.ignore_changes = ignore_changes(file, &a.value, diags),
                "replace_triggered_by" => match &a.value {
                    Expression::Array(items) => {
                        l.replace_triggered_by = items.iter().map(|e| Expr { file, expr: e.clone() }).collect()
                    }
                    other => diags.push(
                        Diagnostic::error("Invalid replace_triggered_by")
                            .at(span_of(file, other.span()))
                            .detail("replace_triggered_by must be a list of references, such as [TYPE.NAME.ATTR]."),
                    ),
                },
                _ => unsupported_in(file, s, "lifecycle", &["prevent_destroy", "create_before_destroy", "ignore_changes", "replace_triggered_by"], diags),
            },
            other => unsupported_in(file, other, "lifecycle", &["prevent_destroy", "create_before_destroy", "ignore_changes", "replace_triggered_by"], diags),
        }
    }
    l
}

fn ignore_changes(file: FileId, e: &Expression, diags: &mut Diagnostics) -> IgnoreChanges {
    match e {
        Expression::Variable(v) if v.value().as_str() == "all" => IgnoreChanges::All,
        Expression::String(s) if s.value() == "all" => IgnoreChanges::All,
        Expression::Array(items) => {
            let mut paths = Vec::new();
            for item in items.iter() {
                match attribute_path(item) {
                    Some(p) => paths.push((p, span_of(file, item.span()))),
                    None => diags.push(
                        Diagnostic::error("Invalid ignore_changes entry")
                            .at(span_of(file, item.span()))
                            .detail("Each entry must be an attribute path such as tags or tags[\"owner\"]."),
                    ),
                }
            }
            IgnoreChanges::Paths(paths)
        }
        other => {
            diags.push(
                Diagnostic::error("Invalid ignore_changes")
                    .at(span_of(file, other.span()))
                    .detail("ignore_changes must be a list of attribute paths, or all."),
            );
            IgnoreChanges::None
        }
    }
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
    let empty = crate::value::Object::new();
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

fn reference_list(file: FileId, e: &Expression, diags: &mut Diagnostics) -> Vec<Reference> {
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
fn instance_reference(file: FileId, e: &Expression) -> Option<(String, Option<Expr>)> {
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
fn address_text(e: &Expression) -> Option<String> {
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

fn literal_string(e: &Expression) -> Option<String> {
    match e {
        Expression::String(s) => Some(s.value().clone()),
        _ => None,
    }
}

fn literal_bool(file: FileId, e: &Expression, what: &str, diags: &mut Diagnostics) -> bool {
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
        let a = &c.resources["test_thing.a"];
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
        assert!(c.resources.contains_key("data.test_info.i"));
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
            "is not UTF-8 text (the first invalid byte is at line 2, column 15)",
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
