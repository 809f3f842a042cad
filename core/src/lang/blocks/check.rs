//! `check "NAME" { assert { condition, error_message } … }`: conditions reported after plan
//! and apply.

use super::{BlockType, Decoded, Unique, expect_labels, first_label, unsupported_in};
use crate::addrs::ModuleInstance;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::load::{Assert, Check, Config, Expr, block_span};
use crate::source::FileId;
use hcl_edit::structure::{Block, Structure};

pub(super) const CHECK: BlockType = BlockType {
    name: "check",
    summary: "Conditions reported after plan and apply: check \"NAME\" { assert { … } }",
    labels: &["check name"],
    identifier: None,
    unique: Some(Unique {
        what: "check block",
        key: first_label,
        shown: |k| format!("check \"{k}\""),
        first: |c, k| c.checks.get(k).map(|c| c.span.clone()),
    }),
    decode,
};

fn decode(config: &mut Config, d: Decoded, diags: &mut Diagnostics) {
    let file = d.file;
    let name = d.labels[0].clone();
    let mut asserts = Vec::new();
    for s in d.block.body.into_iter() {
        match s {
            Structure::Block(a) if a.ident.as_str() == "assert" => {
                if let Some(assert) = assert(file, a, diags) {
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
                .at(d.span)
                .detail("A check block needs at least one assert block: assert { condition = … error_message = \"…\" }."),
        );
        return;
    }
    config.checks.insert(
        name.clone(),
        Check {
            name,
            asserts,
            span: d.span,
            module: ModuleInstance::root(),
        },
    );
}

/// An `assert` block of a check: its condition and error message, both required.
fn assert(file: FileId, b: Block, diags: &mut Diagnostics) -> Option<Assert> {
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

#[cfg(test)]
mod tests {
    use super::super::testing::load;

    #[test]
    fn a_check_keeps_its_asserts() {
        let (config, errors) = load(
            "check \"c\" {\n  assert {\n    condition = true\n    error_message = \"no\"\n  }\n}\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(config.checks["c"].asserts.len(), 1);
    }

    #[test]
    fn a_check_without_a_whole_assert_is_refused() {
        let (config, errors) = load(
            "check \"c\" {\n  assert {\n    condition = true\n  }\n  data \"x\" \"y\" {}\n}\n",
        );
        assert_eq!(
            errors,
            [
                "Missing required argument",
                "Data sources inside check blocks are not supported",
                "Missing assert block"
            ]
        );
        assert!(config.checks.is_empty());
    }
}
