//! `brickform { required_version = "…"  backend "TYPE" { … } }`: settings of the
//! configuration itself.

use super::{BlockType, Decoded, expect_labels, unsupported_in};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::load::{BackendBlock, Body, Config, block_span, literal_string, span_of};
use hcl_edit::Span as _;
use hcl_edit::structure::Structure;

pub(super) const BRICKFORM: BlockType = BlockType {
    name: "brickform",
    summary: "Settings of the configuration itself (backend, required version)",
    labels: &[],
    identifier: None,
    unique: None,
    decode,
};

fn decode(config: &mut Config, d: Decoded, diags: &mut Diagnostics) {
    let file = d.file;
    for s in d.block.body.iter() {
        match s {
            Structure::Attribute(a) if a.key.as_str() == "required_version" => {
                match literal_string(&a.value) {
                    Some(v) => {
                        config.settings.required_version = Some((v, span_of(file, a.value.span())))
                    }
                    None => diags.push(
                        Diagnostic::error("Invalid required_version")
                            .at(span_of(file, a.value.span()))
                            .detail(
                                "required_version must be a literal string such as \">= 0.1\".",
                            ),
                    ),
                }
            }
            Structure::Block(inner) if inner.ident.as_str() == "backend" => {
                if let Some(ls) = expect_labels(file, inner, &["backend type"], diags) {
                    config.settings.backend = Some(BackendBlock {
                        kind: ls[0].clone(),
                        body: Body {
                            file,
                            body: inner.body.clone(),
                        },
                        span: block_span(file, inner),
                    });
                }
            }
            other => unsupported_in(
                file,
                other,
                "brickform",
                &["required_version", "backend"],
                diags,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::load;

    #[test]
    fn the_required_version_and_backend_are_read() {
        let (config, errors) = load(
            "brickform {\n  required_version = \">= 0.1\"\n  backend \"volume\" {\n    path = \"/Volumes/a/b/c\"\n  }\n}\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            config.settings.required_version.as_ref().unwrap().0,
            ">= 0.1"
        );
        assert_eq!(config.settings.backend.as_ref().unwrap().kind, "volume");
    }

    #[test]
    fn a_computed_version_and_an_unknown_argument_are_refused() {
        let (_, errors) = load("brickform {\n  required_version = var.v\n  backnd = 1\n}\n");
        assert_eq!(errors, ["Invalid required_version", "Unsupported argument"]);
    }
}
