//! `import { to = TYPE.NAME[KEY], id = "…" }`: an existing object adopted into a resource.

use super::{BlockType, Decoded, unsupported_in};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::load::{Config, Expr, Import, Reference, instance_reference, span_of};
use hcl_edit::Span as _;
use hcl_edit::structure::Structure;

pub(super) const IMPORT: BlockType = BlockType {
    name: "import",
    summary: "Adopt an existing object: import { to = TYPE.NAME, id = \"…\" }",
    labels: &[],
    identifier: None,
    unique: None,
    decode,
};

fn decode(config: &mut Config, d: Decoded, diags: &mut Diagnostics) {
    let file = d.file;
    let body = &d.block.body;
    let to = body.get_attribute("to").map(|a| a.value.clone());
    let id = body.get_attribute("id").map(|a| Expr {
        file,
        expr: a.value.clone(),
    });
    for s in body.iter() {
        let key = match s {
            Structure::Attribute(a) => a.key.as_str(),
            Structure::Block(bl) => bl.ident.as_str(),
        };
        if !["to", "id"].contains(&key) {
            unsupported_in(file, s, "import", &["to", "id"], diags);
        }
    }
    match (to, id) {
        (Some(to), Some(id)) => match instance_reference(file, &to) {
            Some((target, key)) => config.imports.push(Import {
                to: Reference {
                    target,
                    span: span_of(file, to.span()),
                },
                to_key: key,
                id,
                span: d.span,
            }),
            None => diags.push(
                Diagnostic::error("Invalid import address")
                    .at(span_of(file, to.span()))
                    .detail("\"to\" must be a resource address such as TYPE.NAME or TYPE.NAME[\"KEY\"]."),
            ),
        },
        _ => diags.push(
            Diagnostic::error("Missing required argument")
                .at(d.span)
                .detail("An import block needs both \"to\" and \"id\"."),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::load;

    #[test]
    fn an_import_names_an_instance_and_an_id() {
        let (config, errors) = load(
            "import {\n  to = test_thing.a[\"k\"]\n  id = \"42\"\n}\nimport {\n  to = module.m.test_thing.b\n  id = \"7\"\n}\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(config.imports[0].to.target, "test_thing.a");
        assert!(config.imports[0].to_key.is_some());
        assert_eq!(config.imports[1].to.target, "module.m.test_thing.b");
    }

    #[test]
    fn an_import_needs_an_address_and_an_id() {
        let (config, errors) = load(
            "import {\n  to = \"test_thing.a\"\n  id = \"1\"\n}\nimport {\n  to = test_thing.a\n  ids = \"1\"\n}\n",
        );
        assert_eq!(
            errors,
            [
                "Invalid import address",
                "Unsupported argument",
                "Missing required argument"
            ]
        );
        assert!(config.imports.is_empty());
    }
}
