//! `locals { NAME = expression … }`: named values. Names are unique across every locals
//! block of the configuration, so the check is per attribute, not per block.

use super::{BlockType, Decoded, duplicate};
use crate::addrs::ModuleInstance;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::load::{Config, Expr, Local, block_span, span_of};
use hcl_edit::Span as _;
use hcl_edit::structure::Structure;

pub(super) const LOCALS: BlockType = BlockType {
    name: "locals",
    summary: "Named values computed once: locals { NAME = … }",
    labels: &[],
    identifier: None,
    unique: None,
    decode,
};

fn decode(config: &mut Config, d: Decoded, diags: &mut Diagnostics) {
    let file = d.file;
    for s in d.block.body.into_iter() {
        match s {
            Structure::Attribute(a) => {
                let name = a.key.as_str().to_string();
                let span = span_of(file, a.key.span());
                if let Some(prev) = config.locals.get(&name) {
                    duplicate(
                        diags,
                        "local value definition",
                        &format!("local.{name}"),
                        span,
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
                        span,
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

#[cfg(test)]
mod tests {
    use super::super::testing::load;

    #[test]
    fn locals_of_every_block_share_one_namespace() {
        let (config, errors) =
            load("locals {\n  a = 1\n  b = 2\n}\nlocals {\n  a = 3\n  c = 4\n}\n");
        assert_eq!(errors, ["Duplicate local value definition"]);
        assert_eq!(config.locals.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
    }

    #[test]
    fn a_block_inside_locals_is_refused() {
        let (_, errors) = load("locals {\n  x {\n  }\n}\n");
        assert_eq!(errors, ["Unexpected block"]);
    }
}
