//! `environment "NAME" { … }`: a target environment, kept as written and read when one is
//! chosen (`lang::environment`).

use super::{BlockType, Decoded, Unique, first_label};
use crate::diagnostics::Diagnostics;
use crate::lang::load::{Body, Config, NamedBlock};

pub(super) const ENVIRONMENT: BlockType = BlockType {
    name: "environment",
    summary: "A target environment: environment \"NAME\" { … }",
    labels: &["environment name"],
    identifier: None,
    unique: Some(Unique {
        what: "environment",
        key: first_label,
        shown: |k| format!("environment \"{k}\""),
        first: |c, k| c.environments.get(k).map(|b| b.span.clone()),
    }),
    decode,
};

fn decode(config: &mut Config, d: Decoded, _: &mut Diagnostics) {
    let name = d.labels[0].clone();
    config.environments.insert(
        name.clone(),
        NamedBlock {
            name,
            body: Body {
                file: d.file,
                body: d.block.body,
            },
            span: d.span,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::super::testing::load;

    #[test]
    fn environments_are_kept_by_name_once() {
        let (config, errors) =
            load("environment \"dev\" {}\nenvironment \"prod\" {}\nenvironment \"dev\" {}\n");
        assert_eq!(errors, ["Duplicate environment"]);
        assert_eq!(
            config.environments.keys().collect::<Vec<_>>(),
            ["dev", "prod"]
        );
    }
}
