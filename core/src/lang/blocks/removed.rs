//! `removed { from = TYPE.NAME  lifecycle { destroy = false } }`: a resource taken out of
//! the configuration, destroyed or (with `destroy = false`) only forgotten.

use super::{BlockType, Decoded};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::load::{Config, Removed, address_text, literal_bool};

pub(super) const REMOVED: BlockType = BlockType {
    name: "removed",
    summary: "Forget an object without destroying it: removed { from = TYPE.NAME }",
    labels: &[],
    identifier: None,
    unique: None,
    decode,
};

fn decode(config: &mut Config, d: Decoded, diags: &mut Diagnostics) {
    let body = &d.block.body;
    let from = body
        .get_attribute("from")
        .and_then(|a| address_text(&a.value));
    let mut destroy = true;
    for lb in body.get_blocks("lifecycle") {
        if let Some(a) = lb.body.get_attribute("destroy") {
            destroy = literal_bool(d.file, &a.value, "destroy", diags);
        }
    }
    match from {
        Some(from) => config.removed.push(Removed {
            from,
            destroy,
            span: d.span,
        }),
        None => diags.push(
            Diagnostic::error("Invalid removed block")
                .at(d.span)
                .detail("A removed block needs \"from\", a resource address."),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::load;

    #[test]
    fn removed_destroys_unless_told_not_to() {
        let (config, errors) = load(
            "removed {\n  from = test_thing.a\n}\nremoved {\n  from = test_thing.b\n  lifecycle {\n    destroy = false\n  }\n}\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert!(config.removed[0].destroy);
        assert!(!config.removed[1].destroy);
    }

    #[test]
    fn removed_needs_an_address() {
        let (config, errors) = load("removed {\n  lifecycle {\n    destroy = \"no\"\n  }\n}\n");
        assert_eq!(errors, ["Invalid destroy value", "Invalid removed block"]);
        assert!(config.removed.is_empty());
    }
}
