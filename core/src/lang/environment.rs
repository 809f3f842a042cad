//! `environment "NAME"` blocks: what differs between dev and prod in one configuration.
//!
//! ```hcl
//! environment "dev" {
//!   default        = true
//!   mode           = "development"   # development presets, as each kind defines them
//!   some_setting   = true            # a setting a provider declares (environment_schema)
//!   variables      = { prefix = "dev" }
//!   provider "NAME" { profile = "dev" }
//! }
//!
//! environment "prod" {
//!   mode    = "production"           # rejects development settings
//!   protect = true                   # no delete or replace of data objects without --allow-destroy
//!   provider "NAME" { host = "https://prod.example.com" }
//! }
//! ```
//!
//! Everything but `variables` and the provider blocks is a literal: it decides how the rest
//! of the configuration is read, so it cannot depend on it. Beside the engine's own settings,
//! an environment block takes those the providers declare
//! ([`Provider::environment_schema`](crate::provider::Provider::environment_schema)); what
//! they mean is the provider's.

use super::load::{Body, Config, NamedBlock};
use crate::diagnostics::{Diagnostic, Diagnostics, did_you_mean};
use crate::provider::{AttrType, Registry};
use crate::source::Span;
use crate::value::{Object, Value};
use hcl_edit::Span as _;
use hcl_edit::expr::Expression;
use hcl_edit::structure::Structure;
use std::collections::BTreeMap;

/// How an environment treats the configuration: part of the provider interface (kinds
/// apply presets and findings by it), declared there.
pub use crate::provider::EnvMode;

/// The settings of one environment.
#[derive(Debug, Clone, Default)]
pub struct EnvironmentSettings {
    pub name: String,
    pub default: bool,
    pub mode: Option<EnvMode>,
    /// The settings the providers declare, as written (see
    /// [`Provider::environment_schema`](crate::provider::Provider::environment_schema)).
    pub settings: Object,
    /// Deleting or replacing an object of a protected kind needs `--allow-destroy`.
    pub protect: bool,
    /// `provider "NAME"` blocks: settings that override the top-level provider block's.
    pub providers: BTreeMap<String, NamedBlock>,
    /// Where the block is, for messages.
    pub span: Option<Span>,
}

/// The engine's own settings; the providers declare theirs.
const ATTRIBUTES: &[&str] = &["default", "mode", "protect", "variables"];

fn span_of(file: crate::source::FileId, r: Option<std::ops::Range<usize>>) -> Option<Span> {
    r.map(|r| Span::new(file, r))
}

/// Reads and checks an `environment` block, with the settings the providers of `registry`
/// declare.
pub fn read(block: &NamedBlock, registry: &Registry) -> (EnvironmentSettings, Diagnostics) {
    let mut diags = Diagnostics::new();
    let declared: Vec<&crate::provider::Attribute> = registry
        .providers
        .iter()
        .filter_map(|p| p.environment_schema())
        .flat_map(|s| s.attributes.iter())
        .collect();
    let mut accepted: Vec<&str> = ATTRIBUTES
        .iter()
        .copied()
        .chain(declared.iter().map(|a| a.name))
        .collect();
    accepted.sort_unstable();
    accepted.dedup();
    let file = block.body.file;
    let mut out = EnvironmentSettings {
        name: block.name.clone(),
        span: block.span.clone(),
        ..Default::default()
    };
    for s in block.body.body.iter() {
        match s {
            Structure::Attribute(a) => {
                let key = a.key.as_str();
                let at = span_of(file, a.value.span());
                let literal_bool = |diags: &mut Diagnostics| match &a.value {
                    Expression::Bool(b) => Some(*b.value()),
                    _ => {
                        diags.push(
                            Diagnostic::error("Invalid environment setting")
                                .at(at.clone())
                                .detail(format!(
                                    "\"{key}\" must be true or false, written as a literal."
                                )),
                        );
                        None
                    }
                };
                match key {
                    "default" => out.default = literal_bool(&mut diags).unwrap_or(false),
                    "protect" => out.protect = literal_bool(&mut diags).unwrap_or(false),
                    "mode" => {
                        out.mode = match &a.value {
                            Expression::String(s) if s.value() == "development" => {
                                Some(EnvMode::Development)
                            }
                            Expression::String(s) if s.value() == "production" => {
                                Some(EnvMode::Production)
                            }
                            _ => {
                                diags.push(
                                    Diagnostic::error("Invalid environment mode")
                                        .at(at)
                                        .detail("mode must be \"development\" or \"production\", written as a literal."),
                                );
                                None
                            }
                        }
                    }
                    // Read with the variables (engine::inputs).
                    "variables" => {}
                    other => match declared.iter().find(|d| d.name == other) {
                        Some(setting) => {
                            if let Some(v) = literal(&a.value, &setting.ty, key, at, &mut diags) {
                                out.settings.insert(key.to_string(), v);
                            }
                        }
                        None => diags.push(
                            Diagnostic::error("Unsupported argument")
                                .at(span_of(file, a.key.span()))
                                .detail(format!(
                                    "An environment block takes {}, and provider blocks; not \"{other}\".",
                                    accepted.join(", ")
                                ))
                                .maybe_hint(did_you_mean(other, accepted.iter().copied())),
                        ),
                    },
                }
            }
            Structure::Block(b) if b.ident.as_str() == "provider" => {
                let Some(name) = b.labels.first().map(|l| l.as_str().to_string()) else {
                    diags.push(
                        Diagnostic::error("Missing provider name")
                            .at(span_of(file, b.ident.span()))
                            .detail("Write the provider's name: provider \"NAME\" { … }."),
                    );
                    continue;
                };
                out.providers.insert(
                    name.clone(),
                    NamedBlock {
                        name,
                        body: Body {
                            file,
                            body: b.body.clone(),
                        },
                        span: span_of(file, b.ident.span()),
                    },
                );
            }
            Structure::Block(b) => diags.push(
                Diagnostic::error("Unsupported block type")
                    .at(span_of(file, b.ident.span()))
                    .detail(format!(
                        "An environment block holds provider blocks only; not \"{}\".",
                        b.ident.as_str()
                    )),
            ),
        }
    }
    for p in &registry.providers {
        for d in p.check_environment(out.mode, &out.settings) {
            let d = match d.span {
                Some(_) => d,
                None => d.at(out.span.clone()),
            };
            diags.push(d);
        }
    }
    (out, diags)
}

/// A provider setting's value, written as a literal of its declared type.
fn literal(
    expr: &Expression,
    ty: &AttrType,
    key: &str,
    at: Option<Span>,
    diags: &mut Diagnostics,
) -> Option<Value> {
    let value = match (ty, expr) {
        (AttrType::Bool, Expression::Bool(b)) => Some(Value::Bool(*b.value())),
        (AttrType::String, Expression::String(s)) => Some(Value::from(s.value().as_str())),
        (AttrType::Number, Expression::Number(n)) => n.value().as_f64().map(Value::from_f64),
        _ => None,
    };
    if value.is_none() {
        let what = match ty {
            AttrType::Bool => "true or false".to_string(),
            AttrType::String => "a string".to_string(),
            other => format!("a {}", other.describe()),
        };
        diags.push(
            Diagnostic::error("Invalid environment setting")
                .at(at)
                .detail(format!("\"{key}\" must be {what}, written as a literal.")),
        );
    }
    value
}

/// The settings of environment `name` (an undeclared environment has none), and the
/// problems of every environment block (with the settings `registry`'s providers declare).
pub fn resolve(
    config: &Config,
    name: &str,
    registry: &Registry,
) -> (EnvironmentSettings, Diagnostics) {
    let mut diags = Diagnostics::new();
    let mut chosen = EnvironmentSettings {
        name: name.to_string(),
        ..Default::default()
    };
    let mut defaults = Vec::new();
    for block in config.environments.values() {
        let (s, d) = read(block, registry);
        diags.extend(d);
        if s.default {
            defaults.push(s.name.clone());
        }
        if s.name == name {
            chosen = s;
        }
    }
    if defaults.len() > 1 {
        diags.push(
            Diagnostic::error("Several default environments").detail(format!(
                "Environments {} are all marked default = true; mark one.",
                defaults.join(", ")
            )),
        );
    }
    (chosen, diags)
}

/// The environment a command works in: the one asked for (`--env`), else the one marked
/// `default = true`, else `default`. When the configuration declares environments, one asked
/// for by name must be among them: a misspelt name would otherwise select a fresh, empty state
/// and plan a second copy of everything into it.
pub fn select(config: &Config, asked: Option<&str>) -> Result<String, Box<Diagnostic>> {
    let Some(name) = asked else {
        let marked = config
            .environments
            .values()
            .find(|b| read(b, &Registry::default()).0.default)
            .map(|b| b.name.clone());
        return Ok(marked.unwrap_or_else(|| "default".to_string()));
    };
    if config.environments.is_empty() || config.environments.contains_key(name) {
        return Ok(name.to_string());
    }
    let declared: Vec<&str> = config.environments.keys().map(String::as_str).collect();
    Err(Box::new(
        Diagnostic::error(format!(
            "There is no environment \"{name}\" in the configuration"
        ))
    .detail(format!(
        "The configuration declares the environment{} {}, and a command works in one of them. To add an environment, declare it: environment \"{name}\" {{}}.",
        if declared.len() == 1 { "" } else { "s" },
        declared
            .iter()
            .map(|d| format!("\"{d}\""))
            .collect::<Vec<_>>()
            .join(", ")
    ))
        .maybe_hint(did_you_mean(name, declared.iter().copied())),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn config(src: &str) -> Config {
        let (c, d) = super::super::load::load_sources(
            Path::new("."),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), src.into())],
        );
        assert!(!d.has_errors(), "{d:?}");
        c
    }

    #[test]
    fn an_undeclared_environment_is_an_error_with_did_you_mean() {
        let c = config("environment \"prod\" {}\nenvironment \"dev\" {\n  default = true\n}\n");
        assert_eq!(select(&c, None).unwrap(), "dev");
        assert_eq!(select(&c, Some("prod")).unwrap(), "prod");
        let d = select(&c, Some("prd")).unwrap_err();
        assert!(d.is_error());
        assert_eq!(
            d.summary,
            "There is no environment \"prd\" in the configuration"
        );
        assert_eq!(d.hint.as_deref(), Some("did you mean `prod`?"));
        assert!(d.detail.unwrap().contains("\"prod\", \"dev\""));
    }

    /// A provider that declares one environment setting, meaningful in development only.
    struct Declares(crate::provider::Schema);

    #[async_trait::async_trait]
    impl crate::provider::Provider for Declares {
        fn name(&self) -> &'static str {
            "test"
        }
        fn config_schema(&self) -> &crate::provider::Schema {
            &self.0
        }
        fn resource_kinds(&self) -> Vec<std::sync::Arc<dyn crate::provider::ResourceKind>> {
            Vec::new()
        }
        fn data_sources(&self) -> Vec<std::sync::Arc<dyn crate::provider::DataSource>> {
            Vec::new()
        }
        async fn configure(&self, _: &Object) -> crate::provider::ProviderResult<()> {
            Ok(())
        }
        fn environment_schema(&self) -> Option<&crate::provider::Schema> {
            Some(&self.0)
        }
        fn check_environment(&self, mode: Option<EnvMode>, settings: &Object) -> Vec<Diagnostic> {
            if settings.contains_key("tidy_names") && mode != Some(EnvMode::Development) {
                vec![Diagnostic::error("tidy_names needs development mode")]
            } else {
                Vec::new()
            }
        }
    }

    fn registry() -> Registry {
        let mut r = Registry::new();
        r.register(std::sync::Arc::new(Declares(
            crate::provider::Schema::new().attr(crate::provider::Attribute::optional(
                "tidy_names",
                AttrType::Bool,
            )),
        )));
        r
    }

    fn summaries(d: &Diagnostics) -> Vec<String> {
        d.iter().map(|d| d.summary.clone()).collect()
    }

    #[test]
    fn a_provider_declares_the_settings_it_reads_and_checks_them_against_the_mode() {
        let c = config("environment \"dev\" {\n  mode = \"development\"\n  tidy_names = true\n}\n");
        let (s, d) = resolve(&c, "dev", &registry());
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(s.settings.get("tidy_names"), Some(&Value::Bool(true)));

        // Written as something else than a literal of its type.
        let c =
            config("environment \"dev\" {\n  mode = \"development\"\n  tidy_names = \"yes\"\n}\n");
        let (s, d) = resolve(&c, "dev", &registry());
        assert_eq!(summaries(&d), ["Invalid environment setting"]);
        assert_eq!(
            d.0[0].detail.as_deref(),
            Some("\"tidy_names\" must be true or false, written as a literal.")
        );
        assert!(d.0[0].span.is_some());
        assert!(s.settings.is_empty());

        // The provider's own rule, reported at the block.
        let c = config("environment \"prod\" {\n  tidy_names = true\n}\n");
        let (_, d) = resolve(&c, "prod", &registry());
        assert_eq!(summaries(&d), ["tidy_names needs development mode"]);
        assert!(d.0[0].span.is_some());
    }

    #[test]
    fn an_undeclared_setting_is_an_error_that_lists_the_declared_ones() {
        let c = config("environment \"dev\" {\n  tidy_name = true\n}\n");
        let (_, d) = resolve(&c, "dev", &registry());
        assert_eq!(summaries(&d), ["Unsupported argument"]);
        assert_eq!(
            d.0[0].detail.as_deref(),
            Some(
                "An environment block takes default, mode, protect, tidy_names, variables, and provider blocks; not \"tidy_name\"."
            )
        );
        assert_eq!(d.0[0].hint.as_deref(), Some("did you mean `tidy_names`?"));
        // Without the provider, the setting is unknown.
        let c = config("environment \"dev\" {\n  tidy_names = true\n}\n");
        let (_, d) = resolve(&c, "dev", &Registry::new());
        assert_eq!(summaries(&d), ["Unsupported argument"]);
    }

    #[test]
    fn without_environment_blocks_any_name_selects_its_own_state() {
        let c = config("output \"o\" {\n  value = 1\n}\n");
        assert_eq!(select(&c, None).unwrap(), "default");
        assert_eq!(select(&c, Some("anything")).unwrap(), "anything");
        // Declared environments, none marked default: the implicit one stays `default`.
        let c = config("environment \"prod\" {}\n");
        assert_eq!(select(&c, None).unwrap(), "default");
    }
}
