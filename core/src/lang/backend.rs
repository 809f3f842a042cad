//! The state backend a configuration names: `brickform { backend "TYPE" { … } }`.
//!
//! Backend types are declared as data, each with a [`Schema`] of its settings, by whoever
//! ships the backends; a `backend` block is decoded against its type's schema as any block
//! is, so its errors are located and explained the same way (an unknown argument with "did
//! you mean", a missing required one, a value of the wrong type or one the type's rule
//! rejects). Settings refer to nothing — no variables, locals or resources — because the
//! state they locate is needed before any of those can be known.

use super::decode::Decoder;
use super::eval::{Evaluator, Literal};
use super::load::Config;
use crate::diagnostics::{Diagnostic, Diagnostics, did_you_mean};
use crate::provider::Schema;
use crate::source::Span;
use crate::value::{Object, Value};
use hcl_edit::Span as _;
use hcl_edit::structure::Structure;

/// One kind of state backend: its name as the block's label, what it is, its settings.
pub struct BackendType {
    pub name: &'static str,
    /// Shown when a block names a type that does not exist.
    pub description: &'static str,
    pub schema: Schema,
}

/// A `backend` block, decoded.
#[derive(Debug, Clone)]
pub struct BackendSettings {
    pub kind: String,
    /// Every attribute of the type's schema; null when the block leaves it out.
    pub settings: Object,
    /// Where each written setting is, for errors about what a value means.
    spans: Vec<(String, Span)>,
}

impl BackendSettings {
    pub fn get(&self, name: &str) -> &Value {
        self.settings.get(name).unwrap_or(&Value::Null)
    }

    /// Where the setting `name` is written.
    pub fn span_of(&self, name: &str) -> Option<Span> {
        self.spans
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s.clone())
    }
}

/// Backend settings are read before anything can be referred to.
const LITERAL: Literal = Literal(|name| {
    format!(
        "Backend settings must be literal values: they are read before variables, locals and resources are, so \"{name}\" cannot be used here."
    )
});

/// The configuration's `backend` block decoded against its type; `None` without one.
pub fn decode(
    config: &Config,
    types: &[BackendType],
) -> Result<Option<BackendSettings>, Diagnostics> {
    let Some(block) = &config.settings.backend else {
        return Ok(None);
    };
    let Some(ty) = types.iter().find(|t| t.name == block.kind) else {
        let known: Vec<String> = types
            .iter()
            .map(|t| format!("\"{}\" ({})", t.name, t.description))
            .collect();
        return Err(
            Diagnostic::error(format!("Unknown backend type \"{}\"", block.kind))
                .at(block.span.clone())
                .detail(format!("States are kept in {}.", known.join(" or ")))
                .maybe_hint(did_you_mean(&block.kind, types.iter().map(|t| t.name)))
                .into(),
        );
    };
    let file = block.body.file;
    let mut eval = Evaluator::new(&LITERAL, &config.dir);
    let (decoded, diags) = Decoder::new(&mut eval, file).decode(
        &block.body.body,
        &ty.schema,
        block.span.as_ref().map(|s| s.range.clone()),
    );
    if diags.has_errors() {
        return Err(diags);
    }
    let spans = block
        .body
        .body
        .iter()
        .filter_map(|s| match s {
            Structure::Attribute(a) => a
                .value
                .span()
                .map(|r| (a.key.as_str().to_string(), Span::new(file, r))),
            Structure::Block(_) => None,
        })
        .collect();
    Ok(Some(BackendSettings {
        kind: block.kind.clone(),
        settings: decoded.value,
        spans,
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::provider::{AttrType, Attribute};

    fn types() -> Vec<BackendType> {
        vec![
            BackendType {
                name: "here",
                description: "next to the configuration",
                schema: Schema::new(),
            },
            BackendType {
                name: "there",
                description: "somewhere shared",
                schema: Schema::new()
                    .attr(Attribute::required("path", AttrType::String))
                    .attr(Attribute::optional("seconds", AttrType::Number)),
            },
        ]
    }

    fn decoded(text: &str) -> Result<Option<BackendSettings>, Vec<String>> {
        let dir = std::path::Path::new("/nonexistent");
        let (config, diags) = crate::lang::load::load_sources(
            dir,
            vec![("main.bf.hcl".into(), dir.join("main.bf.hcl"), text.into())],
        );
        assert!(!diags.has_errors(), "{diags:?}");
        decode(&config, &types()).map_err(|d| {
            d.0.iter()
                .map(|d| d.render_plain(&config.sources))
                .collect()
        })
    }

    #[test]
    fn settings_are_decoded_against_their_type() {
        assert!(decoded("").unwrap().is_none());
        let text = "brickform {\n  backend \"there\" {\n    path = \"/a/b\"\n  }\n}\n";
        let b = decoded(text).unwrap().unwrap();
        assert_eq!(b.kind, "there");
        assert_eq!(b.get("path"), &Value::from("/a/b"));
        assert_eq!(b.get("seconds"), &Value::Null);
        assert_eq!(
            b.span_of("path").unwrap().range.start,
            text.find("\"/a/b\"").unwrap()
        );
        assert!(b.span_of("seconds").is_none());
    }

    #[test]
    fn problems_are_located_and_explained() {
        let err = decoded("brickform {\n  backend \"thre\" {}\n}\n").unwrap_err();
        assert!(err[0].contains("Unknown backend type \"thre\""), "{err:?}");
        assert!(err[0].contains("did you mean"), "{err:?}");
        assert!(
            err[0].contains("\"here\" (next to the configuration)"),
            "{err:?}"
        );

        let err =
            decoded("brickform {\n  backend \"there\" {\n    pth = \"/a\"\n  }\n}\n").unwrap_err();
        let all = err.join("\n");
        assert!(all.contains("Unsupported argument"), "{all}");
        assert!(all.contains("did you mean `path`"), "{all}");
        assert!(all.contains("Missing required argument"), "{all}");
        assert!(all.contains("main.bf.hcl:3"), "{all}");

        let err = decoded(
            "brickform {\n  backend \"there\" {\n    path = 3\n    seconds = \"x\"\n  }\n}\n",
        )
        .unwrap_err();
        assert!(err.join("\n").contains("main.bf.hcl:4"), "{err:?}");

        let err =
            decoded("brickform {\n  backend \"here\" {\n    path = \"/a\"\n  }\n}\n").unwrap_err();
        assert!(err[0].contains("Unsupported argument"), "{err:?}");
    }

    #[test]
    fn settings_refer_to_nothing() {
        for reference in [
            "var.p",
            "local.p",
            "databricks_volume.v.path",
            "\"${var.p}/x\"",
        ] {
            let text = format!(
                "variable \"p\" {{\n  default = \"x\"\n}}\nbrickform {{\n  backend \"there\" {{\n    path = {reference}\n  }}\n}}\n"
            );
            let err = decoded(&text).unwrap_err().join("\n");
            assert!(err.contains("must be literal values"), "{reference}: {err}");
            assert!(err.contains("main.bf.hcl:6"), "{reference}: {err}");
        }
    }
}
