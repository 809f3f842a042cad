//! `environment "NAME"` blocks: what differs between dev and prod in one configuration.
//!
//! ```hcl
//! environment "dev" {
//!   default        = true
//!   mode           = "development"   # presets: name prefixes, paused schedules, dev pipelines
//!   prefix_schemas = true            # also prefix Unity Catalog schemas
//!   variables      = { catalog = "sales_dev" }
//!   provider "databricks" { profile = "dev" }
//! }
//!
//! environment "prod" {
//!   mode    = "production"           # rejects development settings
//!   protect = true                   # no delete or replace of data objects without --allow-destroy
//!   provider "databricks" { host = "https://prod.cloud.databricks.com" }
//! }
//! ```
//!
//! Everything but `variables` and the provider settings is a literal: it decides how the rest
//! of the configuration is read, so it cannot depend on it.

use super::diagnostics::{Diagnostic, Diagnostics, did_you_mean};
use super::load::{Body, Config, NamedBlock};
use super::source::Span;
use hcl_edit::Span as _;
use hcl_edit::expr::Expression;
use hcl_edit::structure::Structure;
use std::collections::BTreeMap;

/// How an environment treats the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EnvMode {
    /// Presets keep a developer's copy apart: names prefixed, schedules paused, pipelines in
    /// development mode.
    Development,
    /// Development settings are refused.
    Production,
}

impl EnvMode {
    pub fn as_str(self) -> &'static str {
        match self {
            EnvMode::Development => "development",
            EnvMode::Production => "production",
        }
    }
}

/// The settings of one environment.
#[derive(Debug, Clone, Default)]
pub struct EnvironmentSettings {
    pub name: String,
    pub default: bool,
    pub mode: Option<EnvMode>,
    /// Development presets also prefix Unity Catalog schemas.
    pub prefix_schemas: bool,
    /// Deleting or replacing a catalog, schema, volume or pipeline needs `--allow-destroy`.
    pub protect: bool,
    /// `provider "NAME"` blocks: settings that override the top-level provider block's.
    pub providers: BTreeMap<String, NamedBlock>,
    /// Where the block is, for messages.
    pub span: Option<Span>,
}

const ATTRIBUTES: &[&str] = &["default", "mode", "prefix_schemas", "protect", "variables"];

fn span_of(file: super::source::FileId, r: Option<std::ops::Range<usize>>) -> Option<Span> {
    r.map(|r| Span::new(file, r))
}

/// Reads and checks an `environment` block.
pub fn read(block: &NamedBlock) -> (EnvironmentSettings, Diagnostics) {
    let mut diags = Diagnostics::new();
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
                    "prefix_schemas" => out.prefix_schemas = literal_bool(&mut diags).unwrap_or(false),
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
                    other => diags.push(
                        Diagnostic::error("Unsupported argument")
                            .at(span_of(file, a.key.span()))
                            .detail(format!(
                                "An environment block takes {}, and provider blocks; not \"{other}\".",
                                ATTRIBUTES.join(", ")
                            ))
                            .maybe_hint(did_you_mean(other, ATTRIBUTES.iter().copied())),
                    ),
                }
            }
            Structure::Block(b) if b.ident.as_str() == "provider" => {
                let Some(name) = b.labels.first().map(|l| l.as_str().to_string()) else {
                    diags.push(
                        Diagnostic::error("Missing provider name")
                            .at(span_of(file, b.ident.span()))
                            .detail("Write the provider's name: provider \"databricks\" { … }."),
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
    if out.prefix_schemas && out.mode != Some(EnvMode::Development) {
        diags.push(
            Diagnostic::error("prefix_schemas needs development mode")
                .at(out.span.clone())
                .detail("Schema prefixes are a development preset; set mode = \"development\" or remove prefix_schemas."),
        );
    }
    (out, diags)
}

/// The settings of environment `name` (an undeclared environment has none), and the
/// problems of every environment block.
pub fn resolve(config: &Config, name: &str) -> (EnvironmentSettings, Diagnostics) {
    let mut diags = Diagnostics::new();
    let mut chosen = EnvironmentSettings {
        name: name.to_string(),
        ..Default::default()
    };
    let mut defaults = Vec::new();
    for block in config.environments.values() {
        let (s, d) = read(block);
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
            .find(|b| read(b).0.default)
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
