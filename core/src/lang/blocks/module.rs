//! `module "NAME" { source = "./dir", count | for_each, depends_on, providers, INPUT = … }`:
//! a call of the module in a directory. The module itself is loaded later
//! (`lang::modules`); every argument that is not a meta-argument is an input variable.

use super::provider::provider_key;
use super::{BlockType, Decoded, Identifier, Unique, first_label};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::load::{
    Config, Expr, ModuleCall, block_span, literal_string, reference_list, span_of,
};
use crate::source::Span;
use hcl_edit::Span as _;
use hcl_edit::expr::Expression;
use hcl_edit::structure::Structure;
use indexmap::IndexMap;

pub(super) const MODULE: BlockType = BlockType {
    name: "module",
    summary: "A call of the module in a directory: module \"NAME\" { source = \"./dir\" }",
    labels: &["module name"],
    identifier: Some(Identifier {
        label: 0,
        error: "Invalid module name",
        left_out: true,
    }),
    unique: Some(Unique {
        what: "module call",
        key: first_label,
        shown: |k| format!("module.{k}"),
        first: |c, k| c.module_calls.get(k).map(|m| m.span.clone()),
    }),
    decode,
};

fn decode(config: &mut Config, d: Decoded, diags: &mut Diagnostics) {
    let file = d.file;
    let name = d.labels[0].clone();
    let mut call = ModuleCall {
        name: name.clone(),
        source: String::new(),
        source_span: None,
        count: None,
        for_each: None,
        depends_on: Vec::new(),
        inputs: IndexMap::new(),
        span: d.span.clone(),
        providers: Vec::new(),
        module: None,
    };
    let mut source = None;
    for s in d.block.body.into_iter() {
        match s {
            Structure::Attribute(a) => {
                let key_span = span_of(file, a.key.span());
                let expr = Expr {
                    file,
                    expr: a.value,
                };
                match a.key.as_str() {
                    "source" => match literal_string(&expr.expr) {
                        Some(v) => source = Some((v, expr.span())),
                        None => diags.push(
                            Diagnostic::error("Invalid module source")
                                .at(expr.span())
                                .detail("The module source must be a literal string, the path of the module's directory such as \"./modules/source\"."),
                        ),
                    },
                    "count" => call.count = Some(expr),
                    "for_each" => call.for_each = Some(expr),
                    "depends_on" => call.depends_on = reference_list(file, &expr.expr, diags),
                    "providers" => call.providers = providers(&expr, diags),
                    "version" => diags.push(
                        Diagnostic::error("Module version on a local module")
                            .at(key_span)
                            .detail("Only modules from a registry have versions; a module in a local directory is used as it is.")
                            .hint("remove the version argument"),
                    ),
                    key => {
                        call.inputs.insert(key.to_string(), (expr, key_span));
                    }
                }
            }
            Structure::Block(inner) => diags.push(
                Diagnostic::error("Unsupported block type")
                    .at(block_span(file, &inner))
                    .label("not expected here")
                    .detail(format!(
                        "A module call takes arguments only (its source, meta-arguments and the module's input variables); a \"{}\" block is not expected in it.",
                        inner.ident.as_str()
                    )),
            ),
        }
    }
    if call.count.is_some() && call.for_each.is_some() {
        diags.push(
            Diagnostic::error("Invalid combination of \"count\" and \"for_each\"")
                .at(call.for_each.as_ref().and_then(Expr::span))
                .detail("The \"count\" and \"for_each\" meta-arguments are mutually exclusive; only one may be used to be explicit about the number of module instances."),
        );
    }
    match source {
        Some((src, src_span)) => {
            call.source = src;
            call.source_span = src_span;
            config.module_calls.insert(name, call);
        }
        None => diags.push(
            Diagnostic::error("Missing required argument")
                .at(d.span)
                .detail("The argument \"source\" is required: the path of the module's directory, such as \"./modules/source\"."),
        ),
    }
}

/// `providers = { NAME = NAME.ALIAS }` on a module call: which of the caller's
/// provider configurations the module uses under each of its names.
fn providers(e: &Expr, diags: &mut Diagnostics) -> Vec<(String, String, Option<Span>)> {
    let Expression::Object(o) = &e.expr else {
        diags.push(
            Diagnostic::error("Invalid providers argument")
                .at(e.span())
                .detail("providers must be a map such as { NAME = NAME.ALIAS }, NAME a provider."),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in o.iter() {
        let key = match k {
            hcl_edit::expr::ObjectKey::Ident(i) => Some(i.as_str().to_string()),
            hcl_edit::expr::ObjectKey::Expression(x) => provider_key(x),
        };
        let value = provider_key(v.expr());
        match (key, value) {
            (Some(key), Some(value)) => {
                out.push((key, value, span_of(e.file, v.expr().span())));
            }
            _ => diags.push(
                Diagnostic::error("Invalid providers argument")
                    .at(span_of(e.file, v.expr().span()))
                    .detail("Each entry of providers names a provider configuration of the module and one of the caller: NAME = NAME.ALIAS."),
            ),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// The block decoded; the module's directory (looked for after loading) is not.
    fn load(text: &str) -> (crate::lang::load::Config, Vec<String>) {
        let (config, mut errors) = super::super::testing::load(text);
        errors.retain(|e| e != "Module directory not found");
        (config, errors)
    }

    #[test]
    fn a_call_keeps_its_meta_arguments_apart_from_its_inputs() {
        let (config, errors) = load(
            "module \"m\" {\n  source = \"./m\"\n  count = 2\n  providers = { databricks = databricks.prod }\n  name = \"x\"\n}\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        let m = &config.module_calls["m"];
        assert_eq!(m.source, "./m");
        assert!(m.count.is_some());
        assert_eq!(m.providers[0].1, "databricks.prod");
        assert_eq!(m.inputs.keys().collect::<Vec<_>>(), ["name"]);
    }

    #[test]
    fn a_call_without_a_literal_source_is_left_out() {
        let (config, errors) = load(
            "module \"m\" {\n  source = var.s\n  version = \"1\"\n  providers = [1]\n  x {}\n}\n",
        );
        assert_eq!(
            errors,
            [
                "Invalid module source",
                "Module version on a local module",
                "Invalid providers argument",
                "Unsupported block type",
                "Missing required argument"
            ]
        );
        assert!(config.module_calls.is_empty());
    }

    #[test]
    fn count_and_for_each_exclude_each_other() {
        let (_, errors) =
            load("module \"m\" {\n  source = \"./m\"\n  count = 1\n  for_each = {}\n}\n");
        assert_eq!(
            errors,
            ["Invalid combination of \"count\" and \"for_each\""]
        );
    }
}
