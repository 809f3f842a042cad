//! Input variable values, from lowest to highest precedence: `default`, the selected
//! `environment` block, the variable files of the configuration directory that are read
//! without being named (`brickform.bfvars.hcl`, then `*.auto.bfvars.hcl` in name order, as
//! Terraform reads `terraform.tfvars` and `*.auto.tfvars`), `--var-file` files (in order),
//! `BRICKFORM_VAR_<name>` environment variables and `--var name=value` (in order). Each value is converted to the declared
//! type and checked against the variable's validations.

use crate::diagnostics::{Diagnostic, Diagnostics, did_you_mean};
use crate::lang::eval::{Evaluator, Literal, Roots};
use crate::lang::load::{Config, Expr, Variable};
use crate::lang::types::TypeConstraint;
use crate::source::{SourceMap, Span};
use crate::value::{Object, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Where variable values come from on the command line.
#[derive(Debug, Clone, Default)]
pub struct VarInputs {
    /// `--var-file` paths, in order.
    pub files: Vec<PathBuf>,
    /// `--var name=value`, in order.
    pub vars: Vec<(String, String)>,
    /// `BRICKFORM_VAR_<name>` pairs from the process environment.
    pub env: Vec<(String, String)>,
    /// Whether missing required variables may be asked for interactively. When false, a
    /// missing variable is an error; when the caller has a prompt, it passes answers in
    /// `vars` after asking.
    pub allow_unknown: bool,
}

impl VarInputs {
    /// Reads `BRICKFORM_VAR_*` from the process environment.
    pub fn with_process_env(mut self) -> Self {
        self.env = std::env::vars()
            .filter_map(|(k, v)| k.strip_prefix("BRICKFORM_VAR_").map(|n| (n.to_string(), v)))
            .collect();
        self
    }
}

/// Resolved input variables.
#[derive(Debug, Clone, Default)]
pub struct Variables {
    pub values: Object,
    pub sensitive: HashSet<String>,
    /// Variable files loaded, kept so their diagnostics can be rendered.
    pub sources: Vec<SourceMap>,
}

/// A variable's value is read before anything can be referred to.
const NO_ROOTS: Literal = Literal(|name| {
    format!(
        "Variables may not be used here (\"{name}\" was referenced); a variable value must be a literal."
    )
});

struct VarOnly<'a> {
    var: Value,
    name: &'a str,
}
impl Roots for VarOnly<'_> {
    fn root(&self, name: &str) -> Option<&Value> {
        (name == "var").then_some(&self.var)
    }
    fn missing_root(&self, name: &str) -> String {
        format!(
            "A validation of variable \"{}\" can only refer to var.{}; \"{name}\" is not available.",
            self.name, self.name
        )
    }
}

/// The names of the variables a configuration's required variables that still lack a value.
pub fn missing_required(
    config: &Config,
    inputs: &VarInputs,
    environment: Option<&str>,
) -> Vec<String> {
    let given: HashSet<String> = inputs
        .vars
        .iter()
        .map(|(k, _)| k.clone())
        .chain(inputs.env.iter().map(|(k, _)| k.clone()))
        .collect();
    let from_env = environment_variable_names(config, environment);
    let from_files: HashSet<String> = auto_var_files(&config.dir)
        .iter()
        .chain(&inputs.files)
        .filter_map(|f| crate::limits::read_text_file(f).ok())
        .filter_map(|t| t.parse::<hcl_edit::structure::Body>().ok())
        .flat_map(|b| {
            b.attributes()
                .map(|a| a.key.as_str().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    config
        .variables
        .values()
        .filter(|v| v.default.is_none())
        .filter(|v| {
            !given.contains(&v.name) && !from_env.contains(&v.name) && !from_files.contains(&v.name)
        })
        .map(|v| v.name.clone())
        .collect()
}

fn environment_variable_names(config: &Config, environment: Option<&str>) -> HashSet<String> {
    let mut out = HashSet::new();
    if let Some(env) = environment.and_then(|e| config.environments.get(e))
        && let Some(a) = env.body.body.get_attribute("variables")
        && let hcl_edit::expr::Expression::Object(o) = &a.value
    {
        for (k, _) in o.iter() {
            if let hcl_edit::expr::ObjectKey::Ident(id) = k {
                out.insert(id.as_str().to_string());
            }
        }
    }
    out
}

/// Resolves every declared variable. `environment` selects an `environment` block.
/// The file read first from every configuration directory without being named.
pub const DEFAULT_VAR_FILE: &str = "brickform.bfvars.hcl";

/// What names the variable files read from every configuration directory after
/// [`DEFAULT_VAR_FILE`], in name order.
pub const AUTO_VAR_FILE_SUFFIX: &str = ".auto.bfvars.hcl";

/// The variable files `dir` supplies without being named: [`DEFAULT_VAR_FILE`], then the
/// `*.auto.bfvars.hcl` files in name order. Hidden files are left out, as the loader leaves
/// them out of the configuration.
pub fn auto_var_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let default = dir.join(DEFAULT_VAR_FILE);
    if default.exists() {
        out.push(default);
    }
    let mut auto: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.') && name.ends_with(AUTO_VAR_FILE_SUFFIX)
        })
        .map(|e| e.path())
        .collect();
    auto.sort();
    out.extend(auto);
    out
}

pub fn resolve(
    config: &Config,
    inputs: &VarInputs,
    environment: Option<&str>,
) -> (Variables, Diagnostics) {
    let mut diags = Diagnostics::new();
    let mut out = Variables::default();
    let base = config.dir.as_path();

    // Candidate expressions or raw strings, lowest precedence first; the last one wins.
    let mut chosen: std::collections::HashMap<String, (Value, Option<Span>)> = Default::default();
    let mut eval_into =
        |name: &str, e: &Expr, diags: &mut Diagnostics| match Evaluator::new(&NO_ROOTS, base)
            .eval(&e.expr)
        {
            Ok(v) => {
                chosen.insert(name.to_string(), (v, e.span()));
            }
            Err(err) => diags.push(err.to_diagnostic(e.file)),
        };

    for (name, v) in &config.variables {
        if let Some(d) = &v.default {
            eval_into(name, d, &mut diags);
        }
    }

    if let Some(env_name) = environment
        && let Some(env) = config.environments.get(env_name)
        && let Some(a) = env.body.body.get_attribute("variables")
    {
        match &a.value {
            hcl_edit::expr::Expression::Object(o) => {
                for (k, v) in o.iter() {
                    let key = match k {
                        hcl_edit::expr::ObjectKey::Ident(id) => id.as_str().to_string(),
                        hcl_edit::expr::ObjectKey::Expression(hcl_edit::expr::Expression::String(s)) => s.value().clone(),
                        _ => continue,
                    };
                    let e = Expr { file: env.body.file, expr: v.expr().clone() };
                    if !config.variables.contains_key(&key) {
                        diags.push(undeclared(config, &key, e.span(), &format!("environment \"{env_name}\"")));
                        continue;
                    }
                    eval_into(&key, &e, &mut diags);
                }
            }
            other => diags.push(
                Diagnostic::error("Invalid environment variables")
                    .at(hcl_edit::Span::span(other).map(|r| Span::new(env.body.file, r)))
                    .detail("\"variables\" in an environment block must be an object: variables = { name = value }."),
            ),
        }
    }

    for path in auto_var_files(base).iter().chain(&inputs.files) {
        let text = match crate::limits::read_text_file(path) {
            Ok(t) => t,
            Err(e) => {
                diags.push(Diagnostic::error(format!(
                    "Failed to read variables file {}: {e}",
                    path.display()
                )));
                continue;
            }
        };
        // Files of the configuration directory are named as they are there.
        let name = path
            .strip_prefix(base)
            .unwrap_or(path)
            .display()
            .to_string();
        let (file_cfg, file_diags) = load_var_file(path, &name, text);
        if file_diags.has_errors() {
            for d in file_diags.0 {
                diags.push(in_var_file(d, &file_cfg.1));
            }
            out.sources.push(file_cfg.1);
            continue;
        }
        let (attrs, sources) = file_cfg;
        for (key, e) in &attrs {
            if !config.variables.contains_key(key) {
                let mut d = undeclared(config, key, e.span(), &format!("variables file {name}"));
                d.severity = crate::diagnostics::Severity::Warning;
                d.summary = "Value for undeclared variable".into();
                diags.push(in_var_file(d, &sources));
                continue;
            }
            match Evaluator::new(&NO_ROOTS, base).eval(&e.expr) {
                Ok(v) => {
                    chosen.insert(key.clone(), (v, None));
                }
                Err(err) => {
                    let mut d = err.to_diagnostic(e.file);
                    d.summary = format!("Invalid value in variables file {name}: {}", err.summary);
                    diags.push(in_var_file(d, &sources));
                }
            }
        }
        out.sources.push(sources);
    }

    for (key, raw) in inputs.env.iter().chain(inputs.vars.iter()) {
        if !config.variables.contains_key(key) {
            let from_flag = inputs.vars.iter().any(|(k, _)| k == key);
            if from_flag {
                diags.push(undeclared(config, key, None, "--var"));
            }
            continue;
        }
        chosen.insert(key.clone(), (raw_value(raw), None));
    }

    for (name, v) in &config.variables {
        if v.sensitive {
            out.sensitive.insert(name.clone());
        }
        let ty = var_type(v, &mut diags);
        let value = match chosen.remove(name) {
            Some((raw, span)) => {
                // Values given as text on the command line are parsed as the declared type.
                let raw = match (&ty, raw) {
                    (TypeConstraint::String, v) => v,
                    (_, Value::String(s))
                        if inputs
                            .vars
                            .iter()
                            .chain(inputs.env.iter())
                            .any(|(k, r)| k == name && r == &s) =>
                    {
                        parse_typed(&s).unwrap_or(Value::String(s))
                    }
                    (_, v) => v,
                };
                converted(name, &ty, raw, span.or(v.span.clone()), &mut diags)
            }
            None if inputs.allow_unknown => Value::Unknown,
            None => {
                diags.push(
                    Diagnostic::error(format!("No value for required variable \"{name}\""))
                        .at(v.span.clone())
                        .detail(format!(
                            "The root module input variable \"{name}\" is not set, and has no default value. Use a --var or --var-file command line argument, a BRICKFORM_VAR_{name} environment variable, or an environment block to provide a value for this variable."
                        )),
                );
                Value::Unknown
            }
        };
        check_value(name, v, &value, base, &mut diags);
        out.values.insert(name.clone(), value);
    }
    (out, diags)
}

/// A variable's declared type (`any` when it declares none or an invalid one, reported).
fn var_type(v: &Variable, diags: &mut Diagnostics) -> TypeConstraint {
    match &v.type_expr {
        Some(t) => match TypeConstraint::parse(&t.expr) {
            Ok(ty) => ty,
            Err(e) => {
                diags.push(
                    Diagnostic::error("Invalid type specification")
                        .at(t.span())
                        .detail(e.to_string()),
                );
                TypeConstraint::Any
            }
        },
        None => TypeConstraint::Any,
    }
}

/// A variable's value converted to its type; unknown when it cannot be (reported at `span`).
fn converted(
    name: &str,
    ty: &TypeConstraint,
    raw: Value,
    span: Option<Span>,
    diags: &mut Diagnostics,
) -> Value {
    match ty.convert(raw) {
        Ok(v) => v,
        Err(msg) => {
            diags.push(
                Diagnostic::error("Invalid value for input variable")
                    .at(span)
                    .detail(format!(
                        "The given value is not suitable for var.{name}, which has type {}: {msg}.",
                        ty.describe()
                    )),
            );
            Value::Unknown
        }
    }
}

/// What a variable's declaration asks of its value: not null unless nullable, and every
/// validation rule true.
fn check_value(name: &String, v: &Variable, value: &Value, base: &Path, diags: &mut Diagnostics) {
    if value.is_null() && !v.nullable {
        diags.push(
            Diagnostic::error("Required variable not set")
                .at(v.span.clone())
                .detail(format!(
                    "The variable \"{name}\" is not nullable, so it must be given a non-null value."
                )),
        );
    }
    if value.is_wholly_known() {
        for val in &v.validations {
            // A condition reading other variables is reported by the graph check.
            let reads_others = crate::lang::refs::expr_refs(&val.condition.expr)
                .iter()
                .any(|r| r.root == "var" && r.attrs.first() != Some(name));
            if reads_others {
                continue;
            }
            let roots = VarOnly {
                var: Value::object(Object::from_iter([(name.clone(), value.clone())])),
                name,
            };
            let mut ev = Evaluator::new(&roots, base);
            match ev.eval(&val.condition.expr) {
                Ok(Value::Bool(true)) | Ok(Value::Unknown) => {}
                Ok(Value::Bool(false)) => {
                    let msg = Evaluator::new(&roots, base)
                        .eval(&val.error_message.expr)
                        .ok()
                        .and_then(|m| m.as_str().map(str::to_string))
                        .unwrap_or_else(|| "The value is not valid.".into());
                    diags.push(
                        Diagnostic::error("Invalid value for variable")
                            .at(val.condition.span())
                            .label("this condition is false")
                            .detail(format!(
                                "{msg}\n\nThis was checked by the validation rule of var.{name}."
                            )),
                    );
                }
                Ok(other) => diags.push(
                    Diagnostic::error("Invalid variable validation result")
                        .at(val.condition.span())
                        .detail(format!(
                            "The condition must produce a bool, not {}.",
                            other.type_name()
                        )),
                ),
                Err(e) => diags.push(e.to_diagnostic(val.condition.file)),
            }
        }
    }
}

/// A module's input variable as its call sets it: `raw` is the call's argument (`None`
/// when the call leaves it out, so the default applies), converted to the declared type
/// and checked against its rules.
pub(crate) fn module_variable_value(
    name: &String,
    v: &Variable,
    raw: Option<Value>,
    span: Option<Span>,
    base: &Path,
    diags: &mut Diagnostics,
) -> Value {
    let ty = var_type(v, diags);
    let raw = match raw {
        Some(raw) => raw,
        None => match &v.default {
            Some(d) => match Evaluator::new(&NO_ROOTS, base).eval(&d.expr) {
                Ok(v) => v,
                Err(e) => {
                    diags.push(e.to_diagnostic(d.file));
                    Value::Unknown
                }
            },
            None => Value::Null,
        },
    };
    let value = converted(name, &ty, raw, span.or(v.span.clone()), diags);
    check_value(name, v, &value, base, diags);
    value
}

/// A diagnostic about a variables file, whose spans index that file's own source map rather
/// than the configuration's: the location moves into the text (`file:line:column`), so it is
/// neither lost nor rendered against a configuration file that happens to share the index.
fn in_var_file(mut d: Diagnostic, sources: &SourceMap) -> Diagnostic {
    let location = d
        .location(sources)
        .map(|(file, line, col)| format!("{file}:{line}:{col}"));
    d.span = None;
    d.label = None;
    if let Some(loc) = location {
        d.detail = Some(match d.detail.take() {
            Some(detail) => format!("At {loc}: {detail}"),
            None => format!("At {loc}."),
        });
    }
    d
}

fn undeclared(config: &Config, key: &str, span: Option<Span>, origin: &str) -> Diagnostic {
    Diagnostic::error("Value for undeclared variable")
        .at(span)
        .detail(format!("A variable named \"{key}\" was assigned in {origin}, but the configuration does not declare a variable of that name."))
        .maybe_hint(did_you_mean(key, config.variables.keys().map(String::as_str)))
}

/// Command-line values are strings; HCL-looking text (lists, maps, numbers, bools) is parsed
/// for non-string variables.
fn raw_value(raw: &str) -> Value {
    Value::String(raw.to_string())
}

fn parse_typed(raw: &str) -> Option<Value> {
    let e: hcl_edit::expr::Expression = raw.parse().ok()?;
    Evaluator::new(&NO_ROOTS, Path::new(".")).eval(&e).ok()
}

/// Parses a variables file (HCL attributes `name = value`).
#[allow(clippy::type_complexity)]
fn load_var_file(
    path: &Path,
    name: &str,
    text: String,
) -> ((Vec<(String, Expr)>, SourceMap), Diagnostics) {
    let mut diags = Diagnostics::new();
    let mut sources = SourceMap::new();
    let file = sources.add(crate::source::SourceFile::new(
        name.to_string(),
        path.to_path_buf(),
        text.clone(),
    ));
    let mut attrs = Vec::new();
    match text.parse::<hcl_edit::structure::Body>() {
        Ok(body) => {
            for s in body.into_iter() {
                match s {
                    hcl_edit::structure::Structure::Attribute(a) => attrs.push((
                        a.key.as_str().to_string(),
                        Expr {
                            file,
                            expr: a.value,
                        },
                    )),
                    hcl_edit::structure::Structure::Block(b) => diags.push(
                        Diagnostic::error("Unexpected block in variables file")
                            .at(hcl_edit::Span::span(&b.ident).map(|r| Span::new(file, r)))
                            .detail("A variables file holds only assignments: name = value."),
                    ),
                }
            }
        }
        Err(e) => diags.push(crate::lang::load::parse_error(file, &sources, &e)),
    }
    ((attrs, sources), diags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::load::load_sources;

    fn config(src: &str) -> Config {
        let (c, d) = load_sources(
            Path::new("."),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
        );
        assert!(!d.has_errors(), "{d:?}");
        c
    }

    const SRC: &str = r#"
variable "env" { default = "dev" }
variable "workers" {
  type    = number
  default = 1
  validation {
    condition     = var.workers < 10
    error_message = "At most 9 workers."
  }
}
variable "tags" {
  type    = map(string)
  default = {}
}
variable "password" {
  sensitive = true
}
environment "prod" {
  variables = { env = "prod", workers = 4 }
}
"#;

    #[test]
    fn precedence_default_environment_file_env_flag() {
        let c = config(SRC);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x.bfvars.hcl");
        std::fs::write(&f, "workers = 5\ntags = { team = \"data\" }\n").unwrap();
        let inputs = VarInputs {
            files: vec![f],
            vars: vec![
                ("workers".into(), "7".into()),
                ("password".into(), "s3cret".into()),
            ],
            env: vec![("env".into(), "staging".into())],
            allow_unknown: false,
        };
        let (v, d) = resolve(&c, &inputs, Some("prod"));
        assert!(!d.has_errors(), "{d:?}");
        assert_eq!(v.values["env"], Value::from("staging"));
        assert_eq!(v.values["workers"], Value::from(7i64));
        assert_eq!(
            v.values["tags"].as_object().unwrap()["team"],
            Value::from("data")
        );
        assert!(v.sensitive.contains("password"));

        let (v, _) = resolve(
            &c,
            &VarInputs {
                vars: vec![("password".into(), "x".into())],
                ..Default::default()
            },
            Some("prod"),
        );
        assert_eq!(v.values["env"], Value::from("prod"));
        assert_eq!(v.values["workers"], Value::from(4i64));
    }

    #[test]
    fn files_of_the_configuration_directory_are_read_before_named_ones() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join(DEFAULT_VAR_FILE), "env = \"tfvars\"\nworkers = 2\n").unwrap();
        std::fs::write(d.join("b.auto.bfvars.hcl"), "workers = 3\n").unwrap();
        std::fs::write(
            d.join("a.auto.bfvars.hcl"),
            "workers = 9\ntags = { t = \"a\" }\n",
        )
        .unwrap();
        std::fs::write(d.join(".hidden.auto.bfvars.hcl"), "workers = 1\n").unwrap();
        std::fs::write(d.join("other.bfvars.hcl"), "workers = 4\n").unwrap();
        let (c, diags) = crate::lang::load::load_sources(
            d,
            vec![("main.bf.hcl".into(), d.join("main.bf.hcl"), SRC.into())],
        );
        assert!(!diags.has_errors(), "{diags:?}");
        let names: Vec<String> = auto_var_files(d)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [DEFAULT_VAR_FILE, "a.auto.bfvars.hcl", "b.auto.bfvars.hcl"]
        );
        let password = ("password".to_string(), "x".to_string());
        let (v, d2) = resolve(
            &c,
            &VarInputs {
                vars: vec![password.clone()],
                ..Default::default()
            },
            None,
        );
        assert!(!d2.has_errors(), "{d2:?}");
        // The default file, then the auto files in name order: b's 3 wins over a's 9.
        assert_eq!(v.values["env"], Value::from("tfvars"));
        assert_eq!(v.values["workers"], Value::from(3i64));
        assert_eq!(v.values["tags"].as_object().unwrap()["t"], Value::from("a"));
        // A named file wins over them.
        let (v, _) = resolve(
            &c,
            &VarInputs {
                files: vec![d.join("other.bfvars.hcl")],
                vars: vec![password],
                ..Default::default()
            },
            None,
        );
        assert_eq!(v.values["workers"], Value::from(4i64));
        // A required variable they set is not asked for.
        std::fs::write(d.join("b.auto.bfvars.hcl"), "password = \"p\"\n").unwrap();
        assert!(missing_required(&c, &VarInputs::default(), None).is_empty());
        // A problem in one is reported under its own name.
        std::fs::write(d.join("b.auto.bfvars.hcl"), "workers = \n").unwrap();
        let (_, d3) = resolve(&c, &VarInputs::default(), None);
        let text = format!("{d3:?}");
        assert!(
            d3.has_errors() && text.contains("b.auto.bfvars.hcl"),
            "{text}"
        );
    }

    #[test]
    fn missing_invalid_and_undeclared() {
        let c = config(SRC);
        let inputs = VarInputs {
            vars: vec![
                ("workers".into(), "12".into()),
                ("wrkers".into(), "1".into()),
            ],
            ..Default::default()
        };
        let (_, d) = resolve(&c, &inputs, None);
        let summaries: Vec<&str> = d.iter().map(|d| d.summary.as_str()).collect();
        assert!(
            summaries.contains(&"No value for required variable \"password\""),
            "{summaries:?}"
        );
        assert!(
            summaries.contains(&"Invalid value for variable"),
            "{summaries:?}"
        );
        assert!(
            summaries.contains(&"Value for undeclared variable"),
            "{summaries:?}"
        );
        assert_eq!(
            missing_required(&c, &VarInputs::default(), None),
            vec!["password".to_string()]
        );
        let (_, d) = resolve(
            &c,
            &VarInputs {
                vars: vec![
                    ("workers".into(), "many".into()),
                    ("password".into(), "p".into()),
                ],
                ..Default::default()
            },
            None,
        );
        assert_eq!(d.0[0].summary, "Invalid value for input variable");
    }
}
