//! Development presets and production rules (docs/promote-dev-to-prod.md), as the kinds
//! share them: jobs and pipelines get a `[dev <user>] ` name prefix, schedules and triggers
//! are paused, pipelines run in development mode, and Unity Catalog schemas get a
//! `dev_<user>_` prefix only when the environment asks for it. Catalogs, volumes and
//! connections are never prefixed (the catalog already namespaces them, and renaming one per
//! developer would split data that is meant to be shared); brickform refuses to take over one
//! that someone else owns instead.

use brickform_core::diagnostics::Diagnostic;
use brickform_core::lang::environment::EnvMode;
use brickform_core::provider::{AttrType, Attribute, Finding, PresetChange, Presets, Schema};
use brickform_core::value::{Object, PathStep, Value};
use std::sync::Arc;

/// The environment setting that asks for schema prefixes.
const PREFIX_SCHEMAS: &str = "prefix_schemas";

/// The settings of `environment` blocks the presets read (the provider's
/// `environment_schema`).
pub fn environment_schema() -> Schema {
    Schema::new().attr(
        Attribute::optional(PREFIX_SCHEMAS, AttrType::Bool)
            .describe("Development presets also prefix Unity Catalog schemas."),
    )
}

/// The problems of an environment block's settings: schema prefixes are a preset, so they
/// need development mode.
pub fn check_environment(mode: Option<EnvMode>, settings: &Object) -> Vec<Diagnostic> {
    let prefixes = settings.get(PREFIX_SCHEMAS).and_then(Value::as_bool) == Some(true);
    if prefixes && mode != Some(EnvMode::Development) {
        vec![
            Diagnostic::error("prefix_schemas needs development mode")
                .detail("Schema prefixes are a development preset; set mode = \"development\" or remove prefix_schemas."),
        ]
    } else {
        Vec::new()
    }
}

/// The prefix of job and pipeline names: `[dev alice] `.
pub fn name_prefix(presets: &Presets) -> String {
    format!("[dev {}] ", presets.user)
}

/// Whether the environment asks for schema prefixes.
pub fn prefixes_schemas(presets: &Presets) -> bool {
    presets
        .settings
        .get(PREFIX_SCHEMAS)
        .and_then(Value::as_bool)
        == Some(true)
}

/// The prefix of schema names: `dev_alice_`.
pub fn schema_prefix(presets: &Presets) -> String {
    let user: String = presets
        .user
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("dev_{user}_")
}

/// Prefixes `config[key]` unless it already carries the prefix.
pub fn prefix(config: &mut Object, key: &str, prefix: &str) -> Option<PresetChange> {
    let name = config.get(key).and_then(Value::as_str)?.to_string();
    if name.starts_with(prefix) {
        return None;
    }
    config.insert(key.into(), Value::from(format!("{prefix}{name}")));
    Some(PresetChange::new(
        key,
        format!("{key} prefixed with \"{prefix}\""),
    ))
}

/// The job and pipeline name prefix.
pub fn name(presets: &Presets, config: &mut Object) -> Option<PresetChange> {
    prefix(config, "name", &name_prefix(presets))
}

/// The objects of a block that carry a pause status: a single block's one, or each entry of
/// a repeated one (`triggers`), with its index.
fn pausable<'a>(config: &'a mut Object, block: &str) -> Vec<(Option<usize>, &'a mut Object)> {
    match config.get_mut(block) {
        Some(Value::Object(o)) => vec![(None, Arc::make_mut(o))],
        Some(Value::List(l)) => l
            .iter_mut()
            .enumerate()
            .filter_map(|(i, v)| match v {
                Value::Object(o) => Some((Some(i), Arc::make_mut(o))),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn field(block: &str, index: Option<usize>) -> String {
    match index {
        Some(i) => format!("{block}[{i}]"),
        None => block.to_string(),
    }
}

/// Pauses the blocks (`schedule`, `trigger`, `continuous`, each of `triggers`) that are
/// present.
pub fn pause(config: &mut Object, blocks: &[&str]) -> Vec<PresetChange> {
    let mut changes = Vec::new();
    for b in blocks {
        for (i, o) in pausable(config, b) {
            if o.get("pause_status").and_then(Value::as_str) != Some("PAUSED") {
                o.insert("pause_status".into(), Value::from("PAUSED"));
                let at = field(b, i);
                changes.push(PresetChange::new(
                    format!("{at}.pause_status"),
                    format!("{at} paused"),
                ));
            }
        }
    }
    changes
}

/// In production, a paused schedule or trigger never runs: the pause belongs to development.
pub fn no_paused(config: &Object, blocks: &[&str]) -> Vec<Finding> {
    let mut out = Vec::new();
    for b in blocks {
        let objects: Vec<(Option<usize>, &Object)> = match config.get(*b) {
            Some(Value::Object(o)) => vec![(None, o)],
            Some(Value::List(l)) => l
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.as_object().map(|o| (Some(i), o)))
                .collect(),
            _ => Vec::new(),
        };
        for (i, o) in objects {
            if o.get("pause_status").and_then(Value::as_str) != Some("PAUSED") {
                continue;
            }
            let mut path = vec![PathStep::Key(b.to_string())];
            path.extend(i.map(PathStep::Index));
            path.push(PathStep::Key("pause_status".into()));
            out.push(
                Finding::error(
                    &[],
                    format!("{}.pause_status = \"PAUSED\" in a production environment: the job would never run on its own", field(b, i)),
                )
                .at(path)
                .rule("production")
                .hint("leave pause_status unset (or \"UNPAUSED\") here; development environments pause schedules by themselves"),
            );
        }
    }
    out
}

/// In production, a pipeline in development mode is refused.
pub fn no_development(config: &Object) -> Vec<Finding> {
    if config.get("development").and_then(Value::as_bool) == Some(true) {
        vec![
            Finding::error(
                &["development"],
                "development = true in a production environment: development mode keeps clusters running and skips retries",
            )
            .rule("production")
            .hint("remove development (development environments set it by themselves)"),
        ]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_prefixes_come_from_the_environment_setting_and_need_development_mode() {
        let on = Object::from_iter([(PREFIX_SCHEMAS.to_string(), Value::Bool(true))]);
        let p = Presets::new("Jane.Doe@example.com", &on);
        assert!(prefixes_schemas(&p));
        assert_eq!(schema_prefix(&p), "dev_jane_doe_");
        assert_eq!(name_prefix(&p), "[dev Jane.Doe] ");
        assert!(!prefixes_schemas(&Presets::new("jane", &Object::default())));

        assert!(check_environment(Some(EnvMode::Development), &on).is_empty());
        let d = check_environment(Some(EnvMode::Production), &on);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].summary, "prefix_schemas needs development mode");
        assert_eq!(check_environment(None, &on).len(), 1);
        assert!(check_environment(None, &Object::default()).is_empty());
        assert!(environment_schema().attribute(PREFIX_SCHEMAS).is_some());
    }
}
