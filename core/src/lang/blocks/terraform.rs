//! `terraform { … }`: a Terraform settings block, kept as written and read later for what
//! applies to brickform (`lang::terraform`).

use super::{BlockType, Decoded};
use crate::diagnostics::Diagnostics;
use crate::lang::load::{Body, Config, TerraformBlock};

pub(super) const TERRAFORM: BlockType = BlockType {
    name: "terraform",
    summary: "A Terraform settings block, read for what applies to brickform",
    labels: &[],
    identifier: None,
    unique: None,
    decode,
};

fn decode(config: &mut Config, d: Decoded, _: &mut Diagnostics) {
    config.settings.terraform.push(TerraformBlock {
        body: Body {
            file: d.file,
            body: d.block.body,
        },
        span: d.span,
    });
}

#[cfg(test)]
mod tests {
    use super::super::testing::load;

    #[test]
    fn each_terraform_block_is_kept_in_order() {
        let (config, errors) =
            load("terraform {}\nterraform {\n  required_version = \">= 1\"\n}\n");
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(config.settings.terraform.len(), 2);
        assert!(
            config.settings.terraform[1]
                .body
                .body
                .get_attribute("required_version")
                .is_some()
        );
    }
}
