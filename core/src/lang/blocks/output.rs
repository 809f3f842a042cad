//! `output "NAME" { value, sensitive, description, depends_on }`: a value shown after apply.

use super::{BlockType, Decoded, Unique, first_label, unsupported_in};
use crate::addrs::ModuleInstance;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::load::{Config, Expr, Output, literal_bool, literal_string, reference_list};
use hcl_edit::structure::Structure;

pub(super) const OUTPUT: BlockType = BlockType {
    name: "output",
    summary: "A value shown after apply: output \"NAME\" { value = … }",
    labels: &["output name"],
    identifier: None,
    unique: Some(Unique {
        what: "output definition",
        key: first_label,
        shown: |k| format!("output \"{k}\""),
        first: |c, k| c.outputs.get(k).map(|o| o.span.clone()),
    }),
    decode,
};

const ARGUMENTS: &[&str] = &["value", "sensitive", "description", "depends_on"];

fn decode(config: &mut Config, d: Decoded, diags: &mut Diagnostics) {
    let file = d.file;
    let name = d.labels[0].clone();
    let mut value = None;
    let mut sensitive = false;
    let mut description = None;
    let mut depends_on = Vec::new();
    for s in d.block.body.into_iter() {
        match s {
            Structure::Attribute(a) => match a.key.as_str() {
                "value" => {
                    value = Some(Expr {
                        file,
                        expr: a.value,
                    })
                }
                "sensitive" => sensitive = literal_bool(file, &a.value, "sensitive", diags),
                "description" => description = literal_string(&a.value),
                "depends_on" => depends_on = reference_list(file, &a.value, diags),
                _ => unsupported_in(file, &Structure::Attribute(a), "output", ARGUMENTS, diags),
            },
            other => unsupported_in(file, &other, "output", ARGUMENTS, diags),
        }
    }
    match value {
        Some(value) => {
            config.outputs.insert(
                name.clone(),
                Output {
                    name,
                    value,
                    sensitive,
                    description,
                    depends_on,
                    span: d.span,
                    module: ModuleInstance::root(),
                },
            );
        }
        None => diags.push(
            Diagnostic::error("Missing required argument")
                .at(d.span)
                .detail("The argument \"value\" is required, but no definition was found."),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::load;

    #[test]
    fn an_output_reads_its_arguments() {
        let (config, errors) = load(
            "output \"o\" {\n  value = 1\n  sensitive = true\n  description = \"d\"\n  depends_on = [test_thing.a]\n}\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        let o = &config.outputs["o"];
        assert!(o.sensitive);
        assert_eq!(o.description.as_deref(), Some("d"));
        assert_eq!(o.depends_on[0].target, "test_thing.a");
    }

    #[test]
    fn an_output_needs_a_value() {
        let (config, errors) = load("output \"o\" {\n  valeu = 1\n}\n");
        assert_eq!(
            errors,
            ["Unsupported argument", "Missing required argument"]
        );
        assert!(config.outputs.is_empty());
    }
}
