//! `provider "NAME" { … }`: a provider's settings. `alias = "prod"` makes another
//! configuration of the provider, known as `NAME.prod` (the key it is kept under); a
//! resource or module call chooses it with `provider = NAME.ALIAS`.

use super::{BlockType, Decoded, Unique};
use crate::addrs::ProviderConfigAddr;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::load::{Body, Config, NamedBlock, literal_string, span_of, valid_identifier};
use hcl_edit::Span as _;
use hcl_edit::expr::{Expression, TraversalOperator};
use hcl_edit::structure::Body as HclBody;

pub(super) const PROVIDER: BlockType = BlockType {
    name: "provider",
    summary: "A provider's settings: provider \"NAME\" { … }",
    labels: &["provider name"],
    identifier: None,
    unique: Some(Unique {
        what: "provider block",
        key,
        shown: |k| format!("provider \"{k}\""),
        first: |c, k| c.providers.get(k).map(|b| b.span.clone()),
    }),
    decode,
};

/// `NAME`, or `NAME.ALIAS` for a block with an alias.
fn key(labels: &[String], body: &HclBody) -> String {
    let name = labels.first().cloned().unwrap_or_default();
    match body
        .get_attribute("alias")
        .and_then(|a| literal_string(&a.value))
    {
        Some(alias) => ProviderConfigAddr::new(&name, Some(&alias)).to_string(),
        None => name,
    }
}

fn decode(config: &mut Config, d: Decoded, diags: &mut Diagnostics) {
    let mut body = d.block.body;
    let mut name = d.labels[0].clone();
    if let Some(a) = body.remove_attribute("alias") {
        match literal_string(&a.value) {
            Some(alias) if valid_identifier(&alias) => {
                name = ProviderConfigAddr::new(&name, Some(&alias)).to_string()
            }
            _ => {
                diags.push(
                    Diagnostic::error("Invalid provider alias")
                        .at(span_of(d.file, a.value.span()))
                        .detail("alias must be a literal name such as \"prod\": letters, digits, underscores and dashes, starting with a letter."),
                );
                return;
            }
        }
    }
    config.providers.insert(
        name.clone(),
        NamedBlock {
            name,
            body: Body { file: d.file, body },
            span: d.span,
        },
    );
}

/// `NAME` or `NAME.ALIAS` from a provider reference expression (`provider = …` on a
/// resource, an entry of a module call's `providers`).
pub(super) fn provider_key(e: &Expression) -> Option<String> {
    match e {
        Expression::Variable(v) => Some(v.as_str().to_string()),
        Expression::Traversal(t) => {
            let Expression::Variable(root) = &t.expr else {
                return None;
            };
            match t
                .operators
                .iter()
                .map(|o| o.value())
                .collect::<Vec<_>>()
                .as_slice()
            {
                [TraversalOperator::GetAttr(alias)] => {
                    Some(ProviderConfigAddr::new(root.as_str(), Some(alias.as_str())).to_string())
                }
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::load;

    #[test]
    fn an_alias_is_part_of_the_key_and_left_out_of_the_body() {
        let (config, errors) = load(
            "provider \"databricks\" {}\nprovider \"databricks\" {\n  alias = \"prod\"\n  host = \"h\"\n}\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            config.providers.keys().collect::<Vec<_>>(),
            ["databricks", "databricks.prod"]
        );
        let prod = &config.providers["databricks.prod"].body.body;
        assert!(prod.get_attribute("alias").is_none() && prod.get_attribute("host").is_some());
    }

    #[test]
    fn a_second_block_of_one_alias_is_a_duplicate() {
        let (_, errors) = load(
            "provider \"databricks\" {\n  alias = \"a\"\n}\nprovider \"databricks\" {\n  alias = \"a\"\n}\n",
        );
        assert_eq!(errors, ["Duplicate provider block"]);
    }

    #[test]
    fn an_alias_must_be_a_literal_name() {
        let (config, errors) = load("provider \"databricks\" {\n  alias = \"no.dots\"\n}\n");
        assert_eq!(errors, ["Invalid provider alias"]);
        assert!(config.providers.is_empty());
    }
}
