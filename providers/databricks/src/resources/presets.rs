//! Development presets and production rules (DESIGN §4), as the kinds share them: jobs and
//! pipelines get a `[dev <user>] ` name prefix, schedules and triggers are paused, pipelines
//! run in development mode, and Unity Catalog schemas get a `dev_<user>_` prefix only when
//! the environment asks for it. Catalogs, volumes and connections are never prefixed (the
//! catalog already namespaces them, and renaming one per developer would split data that is
//! meant to be shared); brickform refuses to take over one that someone else owns instead.

use brickform_core::provider::{Finding, PresetChange, Presets};
use brickform_core::value::{Object, Value};

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
    prefix(config, "name", &presets.name_prefix())
}

/// Pauses the single blocks (`schedule`, `trigger`, `continuous`) that are present.
pub fn pause(config: &mut Object, blocks: &[&str]) -> Vec<PresetChange> {
    let mut changes = Vec::new();
    for b in blocks {
        if let Some(Value::Object(o)) = config.get_mut(*b)
            && o.get("pause_status").and_then(Value::as_str) != Some("PAUSED")
        {
            o.insert("pause_status".into(), Value::from("PAUSED"));
            changes.push(PresetChange::new(
                format!("{b}.pause_status"),
                format!("{b} paused"),
            ));
        }
    }
    changes
}

/// In production, a paused schedule or trigger never runs: the pause belongs to development.
pub fn no_paused(config: &Object, blocks: &[&str]) -> Vec<Finding> {
    blocks
        .iter()
        .filter(|b| {
            config
                .get(**b)
                .and_then(Value::as_object)
                .and_then(|o| o.get("pause_status"))
                .and_then(Value::as_str)
                == Some("PAUSED")
        })
        .map(|b| {
            Finding::error(
                &[b, "pause_status"],
                format!("{b}.pause_status = \"PAUSED\" in a production environment: the job would never run on its own"),
            )
            .rule("production")
            .hint("leave pause_status unset (or \"UNPAUSED\") here; development environments pause schedules by themselves")
        })
        .collect()
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
