//! `brickform console`: expressions evaluated against a configuration and its state, as
//! `terraform console` does. Nothing here plans or calls a provider: a resource instance
//! is what state last recorded of it (unknown when state holds nothing), and variables,
//! locals and module outputs are evaluated over that as a plan evaluates them, by the same
//! evaluator.

use super::Engine;
use super::world::World;
use crate::addrs::{ConfigNode, ModuleInstance};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::eval::{Evaluator, Roots};
use crate::lang::load::Resource;
use crate::lang::refs::{Ref, expr_refs, expr_refs_outside};
use crate::lang::repetition::{Expansion, expansion};
use crate::plan::Mode;
use crate::source::{FileId, SourceFile, SourceMap};
use crate::value::Value;
use brickform_state::StateDocument;
use std::path::PathBuf;

/// What one expression gives.
#[derive(Debug, Clone, PartialEq)]
pub enum Evaluated {
    /// A value that may be shown.
    Value(Value),
    /// The value was read from a sensitive one: it is not handed out at all, so no caller
    /// can print it by mistake.
    Sensitive,
}

/// The names an expression typed at the console sees: those of the root module.
pub struct Scope {
    world: World,
    /// The configuration directory, which `file()` and `templatefile()` read from.
    dir: PathBuf,
}

/// What replaces the detail of an error in an expression that reads a sensitive value: the
/// evaluator's messages quote the operands they refuse (`got string "…"`).
const WITHHELD: &str =
    "The expression reads a sensitive value, so the details of this error are not shown.";

/// Functions whose argument is read without its value reaching the result.
const ASKS_ABOUT_SENSITIVITY: &[&str] = &["issensitive"];

impl Engine<'_> {
    /// The console's scope over `state`: no provider is called and nothing is written.
    /// The diagnostics are what evaluating the configuration's own values found (a local
    /// that fails reads as unknown), as `terraform console` reports them before its prompt.
    pub fn console(&self, state: &StateDocument) -> (Scope, Diagnostics) {
        let config = &*self.config;
        let mut diags = self.settings_diags.clone();
        let mut world = World::new(
            self.vars.values.clone(),
            self.vars.sensitive.clone(),
            &self.environment,
            &config.dir,
            self.registry,
        );
        world.declare_modules(config);
        let (graph, found) = crate::graph::build(config);
        diags.extend(found);
        // A cycle has been reported by `build`; what it leaves out is missing from the scope.
        for id in graph.ordered_nodes().unwrap_or_default() {
            if super::values::is_value(&id) {
                diags.extend(super::values::evaluate(&mut world, config, &id));
            } else if let ConfigNode::Resource(addr) = &id
                && let Some(r) = config.resources.get(addr)
            {
                self.read_instances(&mut world, r, state, &mut diags);
            }
        }
        let scope = Scope {
            world,
            dir: config.dir.clone(),
        };
        (scope, diags)
    }

    /// Puts what state holds of `r`'s instances into `world`: the instances its `count` or
    /// `for_each` stands for now, each unknown until state has it.
    fn read_instances(
        &self,
        world: &mut World,
        r: &Resource,
        state: &StateDocument,
        diags: &mut Diagnostics,
    ) {
        let dir = &self.config.dir;
        let expanded = expansion(
            r.count.as_ref(),
            r.for_each.as_ref(),
            &world.at(&r.module),
            dir,
            diags,
        );
        // An expansion that reads what is not known yet (a variable with no value) is no
        // error here, as in `validate`: the whole resource is unknown.
        let Expansion::Instances(instances) = expanded else {
            world.declare_resource(&r.module, r.mode, &r.type_name, &r.name, Value::Unknown);
            return;
        };
        world.declare_block(r);
        let resource = r.addr();
        for (key, _) in instances {
            let value = match state.get(&resource.instance(key.clone())) {
                Some(entry) => {
                    // State keeps only fingerprints of sensitive values: reading one must
                    // say it is sensitive, not that the attribute is missing or null.
                    let schema = world
                        .schema(r.mode, &r.type_name)
                        .unwrap_or(crate::provider::Schema::empty());
                    let mut o = super::instance::merged_from(entry, schema);
                    for path in entry.sensitive.keys() {
                        let steps = brickform_state::sensitive_path::split(path);
                        let Some(attr) = steps.first() else { continue };
                        if !o.contains_key(attr) {
                            o.insert(attr.to_string(), Value::Null);
                        }
                        if r.mode == Mode::Managed {
                            world.mark_sensitive(&r.module, &r.type_name, &r.name, attr);
                        }
                    }
                    Value::object(o)
                }
                None => Value::Unknown,
            };
            world.set_instance(
                &r.module,
                r.mode,
                &r.type_name,
                &r.name,
                key.as_ref(),
                value,
            );
        }
        if r.mode == Mode::Managed
            && let Some(kind) = self.registry_for(&self.provider_key(r)).kind(&r.type_name)
        {
            for a in kind.schema().attributes.iter().filter(|a| a.sensitive) {
                world.mark_sensitive(&r.module, &r.type_name, &r.name, a.name);
            }
        }
    }
}

impl Scope {
    /// Evaluates one expression; an error is located in `line`, as file `file` of the
    /// caller's sources.
    pub fn evaluate(&self, line: &str, file: FileId) -> Result<Evaluated, Box<Diagnostic>> {
        let expr: hcl_edit::expr::Expression = line
            .parse()
            .map_err(|e| Box::new(syntax_error(line, file, &e)))?;
        let mut ev = Evaluator::new(&self.world, &self.dir);
        let result = ev.eval(&expr);
        let root = self.world.at(&ModuleInstance::root());
        let holds = |r: &Ref| {
            let attrs: Vec<&str> = r.attrs.iter().map(String::as_str).collect();
            root.is_sensitive(&r.root, &attrs)
        };
        match result {
            Ok(v) => {
                // The evaluator notices a sensitive attribute read by name; a reference
                // that reads one inside what it names (`var`, `var["pw"]`) is caught by
                // what the expression refers to. `nonsensitive()` does not make a value
                // printable here: what the console prints never came from a secret.
                let sensitive = ev.touched_sensitive
                    || expr_refs_outside(&expr, ASKS_ABOUT_SENSITIVITY)
                        .iter()
                        .any(holds);
                if sensitive {
                    return Ok(Evaluated::Sensitive);
                }
                let (_, depth) = crate::limits::measure(&v, crate::limits::MAX_EVALUATION_BYTES);
                if let Err(why) = crate::limits::check_depth(depth) {
                    return Err(Box::new(
                        Diagnostic::error("Value too large")
                            .at(Some(crate::source::Span::new(file, 0..line.len())))
                            .detail(format!("{why}.")),
                    ));
                }
                Ok(Evaluated::Value(v))
            }
            Err(e) => {
                let mut d = e.to_diagnostic(file);
                if ev.touched_sensitive || expr_refs(&expr).iter().any(holds) {
                    d.detail = Some(WITHHELD.to_string());
                    d.hint = None;
                }
                Err(Box::new(d))
            }
        }
    }
}

/// A syntax error in `line`, located as the configuration's are.
fn syntax_error(line: &str, file: FileId, e: &hcl_edit::parser::Error) -> Diagnostic {
    let mut sources = SourceMap::new();
    let own = sources.add(SourceFile::new(
        String::new(),
        PathBuf::new(),
        line.to_string(),
    ));
    let mut d = crate::lang::load::parse_error(own, &sources, e);
    if let Some(span) = &mut d.span {
        span.file = file;
    }
    d.detail = Some(format!(
        "The expression could not be parsed: {}",
        e.message()
    ));
    d
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::engine::inputs::{VarInputs, Variables, resolve};
    use crate::lang::load::{Config, load_sources};
    use crate::provider::Registry;
    use brickform_state::ResourceState;

    const CONFIG: &str = r#"
variable "env" {
  default = "dev"
}
variable "pw" {
  default   = "hunter2"
  sensitive = true
}
variable "later" {}
locals {
  prefix  = "${var.env}_lake"
  names   = ["a", "b"]
  copy    = "x-${var.pw}"
  first   = thing_one.single.name
}
resource "thing_one" "single" {
  name = local.prefix
}
resource "thing_one" "counted" {
  count = 2
  name  = "c${count.index}"
}
resource "thing_one" "keyed" {
  for_each = toset(local.names)
  name     = each.key
}
resource "thing_one" "unset" {
  count = var.later
  name  = "u"
}
module "m" {
  source = "./m"
  label  = var.env
}
"#;

    const MODULE: &str = r#"
variable "label" {}
output "shout" { value = upper(var.label) }
"#;

    fn entry(address: &str, attrs: serde_json::Value) -> ResourceState {
        let mut r = ResourceState::new(address, "thing", "id-1").unwrap();
        if let serde_json::Value::Object(m) = attrs {
            r.config = m;
        }
        r
    }

    /// A configuration directory on disk (the module is read from it), the variables and
    /// a state holding `single`, `counted[0]` and `keyed["a"]`.
    fn fixture() -> (tempfile::TempDir, Config, Variables, StateDocument) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("m")).unwrap();
        std::fs::write(dir.path().join("m/main.bf.hcl"), MODULE).unwrap();
        let (config, d) = load_sources(
            dir.path(),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), CONFIG.into())],
        );
        assert!(!d.has_errors(), "{}", d.render_plain(&config.sources));
        let inputs = VarInputs {
            allow_unknown: true,
            ..VarInputs::default()
        };
        let (vars, d) = resolve(&config, &inputs, None);
        assert!(!d.has_errors(), "{d:?}");
        let mut state = StateDocument::new("default");
        let mut single = entry(
            "thing_one.single",
            serde_json::json!({"name": "dev_lake", "size": 3}),
        );
        single.computed.insert("url".into(), "https://x/1".into());
        single.sensitive.insert("comment".into(), "fp".into());
        state.insert(single).unwrap();
        state
            .insert(entry(
                "thing_one.counted[0]",
                serde_json::json!({"name": "c0"}),
            ))
            .unwrap();
        state
            .insert(entry(
                "thing_one.keyed[\"a\"]",
                serde_json::json!({"name": "a"}),
            ))
            .unwrap();
        (dir, config, vars, state)
    }

    fn with_scope(check: impl FnOnce(&Scope, &Diagnostics)) {
        let (_dir, config, vars, state) = fixture();
        let registry = Registry::new();
        let engine = Engine::new(&config, &registry, &vars, "default");
        let (scope, diags) = engine.console(&state);
        check(&scope, &diags);
    }

    fn shown(scope: &Scope, line: &str) -> Evaluated {
        scope
            .evaluate(line, FileId(0))
            .unwrap_or_else(|d| panic!("{line}: {d:?}"))
    }

    fn value(scope: &Scope, line: &str) -> Value {
        match shown(scope, line) {
            Evaluated::Value(v) => v,
            Evaluated::Sensitive => panic!("{line} is withheld"),
        }
    }

    #[test]
    fn variables_locals_functions_and_module_outputs() {
        with_scope(|s, diags| {
            assert!(!diags.has_errors(), "{diags:?}");
            assert_eq!(value(s, "var.env"), Value::from("dev"));
            assert_eq!(value(s, "local.prefix"), Value::from("dev_lake"));
            assert_eq!(value(s, "upper(local.prefix)"), Value::from("DEV_LAKE"));
            assert_eq!(
                value(s, "[for n in local.names : \"${n}!\"]"),
                Value::List(vec!["a!".into(), "b!".into()])
            );
            assert_eq!(value(s, "module.m.shout"), Value::from("DEV"));
            assert_eq!(value(s, "path.module"), Value::from("."));
            assert_eq!(value(s, "brickform.environment"), Value::from("default"));
            // A required variable with no value is unknown, as in `terraform console`.
            assert_eq!(value(s, "var.later"), Value::Unknown);
        });
    }

    #[test]
    fn resources_read_state_and_are_unknown_where_it_has_nothing() {
        with_scope(|s, _| {
            assert_eq!(value(s, "thing_one.single.name"), Value::from("dev_lake"));
            assert_eq!(value(s, "thing_one.single.url"), Value::from("https://x/1"));
            assert_eq!(value(s, "local.first"), Value::from("dev_lake"));
            assert_eq!(value(s, "thing_one.counted[0].name"), Value::from("c0"));
            assert_eq!(value(s, "thing_one.counted[1]"), Value::Unknown);
            assert_eq!(value(s, "length(thing_one.counted)"), Value::from(2i64));
            assert_eq!(value(s, "thing_one.keyed[\"a\"].name"), Value::from("a"));
            assert_eq!(value(s, "thing_one.keyed[\"b\"].name"), Value::Unknown);
            // Its count reads a variable with no value: the whole resource is unknown.
            assert_eq!(value(s, "thing_one.unset"), Value::Unknown);
        });
    }

    #[test]
    fn without_state_every_resource_is_unknown() {
        let (_dir, config, vars, _) = fixture();
        let registry = Registry::new();
        let engine = Engine::new(&config, &registry, &vars, "default");
        let (s, diags) = engine.console(&StateDocument::new("default"));
        assert!(!diags.has_errors(), "{diags:?}");
        assert_eq!(value(&s, "thing_one.single.name"), Value::Unknown);
        assert_eq!(value(&s, "local.first"), Value::Unknown);
        assert_eq!(value(&s, "var.env"), Value::from("dev"));
    }

    #[test]
    fn nothing_read_from_a_sensitive_value_is_handed_out() {
        with_scope(|s, _| {
            for line in [
                "var.pw",
                "local.copy",
                "upper(var.pw)",
                "var.pw == \"hunter2\"",
                "nonsensitive(var.pw)",
                "sensitive(\"x\")",
                // References that stop above the secret, or reach it by index.
                "var",
                "var[\"pw\"]",
                "local",
                "[for k, v in var : v]",
                // State keeps a fingerprint of the comment: it is sensitive, not null.
                "thing_one.single.comment",
                "thing_one.single",
            ] {
                assert_eq!(shown(s, line), Evaluated::Sensitive, "{line}");
            }
            assert_eq!(value(s, "issensitive(var.pw)"), Value::Bool(true));
            assert_eq!(value(s, "issensitive(var.env)"), Value::Bool(false));
            assert_eq!(value(s, "thing_one.counted[0].name"), Value::from("c0"));
        });
    }

    #[test]
    fn errors_are_located_and_never_quote_a_secret() {
        with_scope(|s, _| {
            let e = s.evaluate("var.nope", FileId(3)).unwrap_err();
            assert_eq!(e.summary, "Unsupported attribute");
            assert!(
                e.detail.as_deref().unwrap_or("").contains("\"nope\""),
                "{e:?}"
            );
            assert_eq!(e.span.as_ref().map(|s| s.file), Some(FileId(3)));
            let e = s.evaluate("nosuch.thing", FileId(0)).unwrap_err();
            assert!(
                e.detail.as_deref().unwrap_or("").contains("\"nosuch\""),
                "{e:?}"
            );
            let e = s.evaluate("var.pw + 1", FileId(0)).unwrap_err();
            let told = format!("{e:?}");
            assert!(!told.contains("hunter2"), "{told}");
            assert_eq!(e.detail.as_deref(), Some(WITHHELD));
            let e = s.evaluate("\"abc", FileId(2)).unwrap_err();
            assert_eq!(e.summary, "Invalid syntax");
            assert_eq!(e.span.as_ref().map(|s| s.file), Some(FileId(2)));
        });
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        with_scope(|s, _| {
            let deep = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
            let long = format!("\"{}\"", "x".repeat(1 << 20));
            for line in [
                "${",
                "\"${",
                "}",
                "\u{0}\u{1b}[2J\u{7f}",
                "[[[",
                "var.",
                "1 +",
                "local.names[",
                "%{ if }",
                "<<EOT",
                "f(",
                deep.as_str(),
            ] {
                assert!(s.evaluate(line, FileId(0)).is_err(), "{line:?}");
            }
            assert_eq!(
                value(s, &long).as_str().map(str::len),
                Some(1 << 20),
                "a long line is evaluated"
            );
        });
    }
}
