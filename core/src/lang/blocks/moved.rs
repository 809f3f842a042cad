//! `moved { from = OLD, to = NEW }`: a resource renamed, so state follows it instead of the
//! old object being destroyed and a new one created.

use super::{BlockType, Decoded};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::load::{Config, Moved, address_text};

pub(super) const MOVED: BlockType = BlockType {
    name: "moved",
    summary: "A renamed block: moved { from = OLD, to = NEW }",
    labels: &[],
    identifier: None,
    unique: None,
    decode,
};

fn decode(config: &mut Config, d: Decoded, diags: &mut Diagnostics) {
    let address = |key: &str| {
        d.block
            .body
            .get_attribute(key)
            .and_then(|a| address_text(&a.value))
    };
    match (address("from"), address("to")) {
        (Some(from), Some(to)) => config.moved.push(Moved {
            from,
            to,
            span: d.span,
        }),
        _ => diags.push(
            Diagnostic::error("Invalid moved block")
                .at(d.span)
                .detail("A moved block needs \"from\" and \"to\", each a resource address (TYPE.NAME, optionally with an index)."),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::load;

    #[test]
    fn a_move_keeps_both_addresses_as_written() {
        let (config, errors) =
            load("moved {\n  from = test_thing.a[\"x\"]\n  to = test_thing.b[0]\n}\n");
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(config.moved[0].from, "test_thing.a[\"x\"]");
        assert_eq!(config.moved[0].to, "test_thing.b[0]");
    }

    #[test]
    fn a_move_needs_two_addresses() {
        let (config, errors) = load("moved {\n  from = test_thing.a\n  to = \"b\"\n}\n");
        assert_eq!(errors, ["Invalid moved block"]);
        assert!(config.moved.is_empty());
    }
}
