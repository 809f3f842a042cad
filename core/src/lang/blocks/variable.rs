//! `variable "NAME" { type, default, description, sensitive, nullable, validation { … } }`:
//! an input variable of the configuration.

use super::{BlockType, Decoded, Unique, first_label, unsupported_in};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::load::{
    Config, Expr, Validation, Variable, block_span, literal_bool, literal_string,
};
use hcl_edit::structure::Structure;

pub(super) const VARIABLE: BlockType = BlockType {
    name: "variable",
    summary: "An input variable: variable \"NAME\" { type = …, default = … }",
    labels: &["variable name"],
    identifier: None,
    unique: Some(Unique {
        what: "variable declaration",
        key: first_label,
        shown: |k| format!("variable \"{k}\""),
        first: |c, k| c.variables.get(k).map(|v| v.span.clone()),
    }),
    decode,
};

const ARGUMENTS: &[&str] = &[
    "type",
    "default",
    "description",
    "sensitive",
    "nullable",
    "validation",
];

fn decode(config: &mut Config, d: Decoded, diags: &mut Diagnostics) {
    let file = d.file;
    let name = d.labels[0].clone();
    let mut v = Variable {
        name: name.clone(),
        type_expr: None,
        default: None,
        description: None,
        sensitive: false,
        nullable: true,
        validations: Vec::new(),
        span: d.span,
    };
    for s in d.block.body.into_iter() {
        match s {
            Structure::Attribute(a) => match a.key.as_str() {
                "type" => {
                    v.type_expr = Some(Expr {
                        file,
                        expr: a.value,
                    })
                }
                "default" => {
                    v.default = Some(Expr {
                        file,
                        expr: a.value,
                    })
                }
                "description" => v.description = literal_string(&a.value),
                "sensitive" => v.sensitive = literal_bool(file, &a.value, "sensitive", diags),
                "nullable" => v.nullable = literal_bool(file, &a.value, "nullable", diags),
                _ => unsupported_in(file, &Structure::Attribute(a), "variable", ARGUMENTS, diags),
            },
            Structure::Block(vb) if vb.ident.as_str() == "validation" => {
                let expr = |key: &str| {
                    vb.body.get_attribute(key).map(|a| Expr {
                        file,
                        expr: a.value.clone(),
                    })
                };
                match (expr("condition"), expr("error_message")) {
                    (Some(condition), Some(error_message)) => v.validations.push(Validation {
                        condition,
                        error_message,
                    }),
                    _ => diags.push(
                        Diagnostic::error("Missing required argument")
                            .at(block_span(file, &vb))
                            .detail("A validation block needs both \"condition\" and \"error_message\"."),
                    ),
                }
            }
            other => unsupported_in(file, &other, "variable", ARGUMENTS, diags),
        }
    }
    config.variables.insert(name, v);
}

#[cfg(test)]
mod tests {
    use super::super::testing::load;

    #[test]
    fn a_variable_reads_its_settings_and_validations() {
        let (config, errors) = load(
            "variable \"x\" {\n  type = string\n  default = \"a\"\n  sensitive = true\n  nullable = false\n  validation {\n    condition = length(var.x) > 0\n    error_message = \"empty\"\n  }\n}\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        let v = &config.variables["x"];
        assert!(v.sensitive && !v.nullable && v.type_expr.is_some() && v.default.is_some());
        assert_eq!(v.validations.len(), 1);
    }

    #[test]
    fn a_validation_needs_both_parts_and_flags_are_literals() {
        let (_, errors) = load(
            "variable \"x\" {\n  sensitive = var.y\n  validation {\n    condition = true\n  }\n  kind = 1\n}\n",
        );
        assert_eq!(
            errors,
            [
                "Invalid sensitive value",
                "Missing required argument",
                "Unsupported argument"
            ]
        );
    }

    #[test]
    fn a_second_declaration_is_a_duplicate() {
        let (config, errors) = load("variable \"x\" {}\nvariable \"x\" {\n  default = 1\n}\n");
        assert_eq!(errors, ["Duplicate variable declaration"]);
        assert!(
            config.variables["x"].default.is_none(),
            "the first one is kept"
        );
    }
}
