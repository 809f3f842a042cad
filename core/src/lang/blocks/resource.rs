//! `resource "TYPE" "NAME" { … }` and `data "TYPE" "NAME" { … }`: an object brickform
//! manages, or one it reads. The meta-arguments (`count`, `for_each`, `depends_on`,
//! `provider`, and a managed resource's `lifecycle`) are taken out here; the rest of the
//! body is the kind's, decoded against its schema later (`lang::decode`).

use super::provider::provider_key;
use super::{BlockType, Decoded, Identifier, Unique, unsupported_in};
use crate::addrs::ModuleInstance;
use crate::addrs::ResourceMode as Mode;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::lang::load::{
    Body, Config, Expr, IgnoreChanges, Lifecycle, Resource, attribute_path, literal_bool,
    reference_list, span_of,
};
use crate::source::{FileId, Span};
use hcl_edit::Span as _;
use hcl_edit::expr::Expression;
use hcl_edit::structure::{Block, Body as HclBody, Structure};

/// The name label must be an identifier; the block is kept all the same, so what refers
/// to it is not reported as well.
const NAME: Identifier = Identifier {
    label: 1,
    error: "Invalid resource name",
    left_out: false,
};

pub(super) const RESOURCE: BlockType = BlockType {
    name: "resource",
    summary: "An object brickform manages: resource \"TYPE\" \"NAME\" { … }",
    labels: &["type", "name"],
    identifier: Some(NAME),
    unique: Some(Unique {
        what: "resource",
        key: |l, _| format!("{}.{}", l[0], l[1]),
        shown: |k| k.to_string(),
        first: |c, k| declared(c, Mode::Managed, k),
    }),
    decode: |c, d, diags| decode(Mode::Managed, c, d, diags),
};

pub(super) const DATA: BlockType = BlockType {
    name: "data",
    summary: "An object read, never changed: data \"TYPE\" \"NAME\" { … }",
    labels: &["type", "name"],
    identifier: Some(NAME),
    unique: Some(Unique {
        what: "data resource",
        key: |l, _| format!("data.{}.{}", l[0], l[1]),
        shown: |k| k.to_string(),
        first: |c, k| declared(c, Mode::Data, k),
    }),
    decode: |c, d, diags| decode(Mode::Data, c, d, diags),
};

/// Where the block a uniqueness key (`TYPE.NAME`, `data.TYPE.NAME`) names was declared, if
/// it was. The key is split rather than parsed: a name that is no identifier is reported on
/// its own, and its block is kept all the same.
fn declared(c: &Config, mode: Mode, key: &str) -> Option<Option<Span>> {
    let local = key
        .strip_prefix("data.")
        .filter(|_| mode == Mode::Data)
        .unwrap_or(key);
    let (type_name, name) = local.split_once('.')?;
    let addr = crate::addrs::ResourceAddr::new(mode, type_name, name);
    c.resources.get(&addr).map(|r| r.span.clone())
}

const LIFECYCLE: &[&str] = &[
    "prevent_destroy",
    "create_before_destroy",
    "ignore_changes",
    "replace_triggered_by",
];

fn decode(mode: Mode, config: &mut Config, d: Decoded, diags: &mut Diagnostics) {
    let file = d.file;
    let type_span = d
        .block
        .labels
        .first()
        .and_then(|l| l.span())
        .map(|r| Span::new(file, r));
    let mut r = Resource {
        mode,
        type_name: d.labels[0].clone(),
        name: d.labels[1].clone(),
        count: None,
        for_each: None,
        depends_on: Vec::new(),
        lifecycle: Lifecycle::default(),
        body: Body {
            file,
            body: HclBody::new(),
        },
        span: d.span,
        type_span,
        module: ModuleInstance::root(),
        provider_ref: None,
        provider_span: None,
    };
    let mut rest = HclBody::new();
    for s in d.block.body.into_iter() {
        match s {
            Structure::Attribute(a) if a.key.as_str() == "count" => {
                r.count = Some(Expr {
                    file,
                    expr: a.value,
                })
            }
            Structure::Attribute(a) if a.key.as_str() == "for_each" => {
                r.for_each = Some(Expr {
                    file,
                    expr: a.value,
                })
            }
            Structure::Attribute(a) if a.key.as_str() == "depends_on" => {
                r.depends_on = reference_list(file, &a.value, diags)
            }
            Structure::Attribute(a) if a.key.as_str() == "provider" => {
                r.provider_span = span_of(file, a.value.span());
                r.provider_ref = provider_reference(file, &r.type_name, &a.value, diags);
            }
            Structure::Block(b) if b.ident.as_str() == "lifecycle" && mode == Mode::Managed => {
                r.lifecycle = lifecycle(file, &b, diags);
            }
            other => rest.push(other),
        }
    }
    if r.count.is_some() && r.for_each.is_some() {
        diags.push(
            Diagnostic::error("Invalid combination of \"count\" and \"for_each\"")
                .at(r.for_each.as_ref().and_then(Expr::span))
                .detail("The \"count\" and \"for_each\" meta-arguments are mutually exclusive; only one may be used to be explicit about the number of resources to be created."),
        );
    }
    r.body = Body { file, body: rest };
    config.resources.insert(r.addr(), r);
}

/// The `provider` meta-argument: `provider = NAME` or `NAME.ALIAS`, a provider
/// configuration; whether NAME is the provider of the type is for the engine to say, which
/// knows the providers.
fn provider_reference(
    file: FileId,
    type_name: &str,
    value: &Expression,
    diags: &mut Diagnostics,
) -> Option<String> {
    let key = provider_key(value);
    if key.is_none() {
        let owner = type_name.split('_').next().unwrap_or(type_name);
        diags.push(
            Diagnostic::error("Invalid provider reference")
                .at(span_of(file, value.span()))
                .detail(format!(
                    "The provider meta-argument names a provider configuration, as in provider = {owner} or provider = {owner}.ALIAS."
                )),
        );
    }
    key
}

fn lifecycle(file: FileId, b: &Block, diags: &mut Diagnostics) -> Lifecycle {
    let mut l = Lifecycle::default();
    for s in b.body.iter() {
        match s {
            Structure::Attribute(a) => match a.key.as_str() {
                "prevent_destroy" => {
                    l.prevent_destroy = literal_bool(file, &a.value, "prevent_destroy", diags)
                }
                "create_before_destroy" => {
                    l.create_before_destroy =
                        literal_bool(file, &a.value, "create_before_destroy", diags)
                }
                "ignore_changes" => l.ignore_changes = ignore_changes(file, &a.value, diags),
                "replace_triggered_by" => match &a.value {
                    Expression::Array(items) => {
                        l.replace_triggered_by = items
                            .iter()
                            .map(|e| Expr {
                                file,
                                expr: e.clone(),
                            })
                            .collect()
                    }
                    other => diags.push(
                        Diagnostic::error("Invalid replace_triggered_by")
                            .at(span_of(file, other.span()))
                            .detail("replace_triggered_by must be a list of references, such as [TYPE.NAME.ATTR]."),
                    ),
                },
                _ => unsupported_in(file, s, "lifecycle", LIFECYCLE, diags),
            },
            other => unsupported_in(file, other, "lifecycle", LIFECYCLE, diags),
        }
    }
    l
}

fn ignore_changes(file: FileId, e: &Expression, diags: &mut Diagnostics) -> IgnoreChanges {
    match e {
        Expression::Variable(v) if v.value().as_str() == "all" => IgnoreChanges::All,
        Expression::String(s) if s.value() == "all" => IgnoreChanges::All,
        Expression::Array(items) => {
            let mut paths = Vec::new();
            for item in items.iter() {
                match attribute_path(item) {
                    Some(p) => paths.push((p, span_of(file, item.span()))),
                    None => diags.push(
                        Diagnostic::error("Invalid ignore_changes entry")
                            .at(span_of(file, item.span()))
                            .detail("Each entry must be an attribute path such as tags or tags[\"owner\"]."),
                    ),
                }
            }
            IgnoreChanges::Paths(paths)
        }
        other => {
            diags.push(
                Diagnostic::error("Invalid ignore_changes")
                    .at(span_of(file, other.span()))
                    .detail("ignore_changes must be a list of attribute paths, or all."),
            );
            IgnoreChanges::None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::load;
    use crate::lang::load::IgnoreChanges;

    #[test]
    fn meta_arguments_are_taken_out_of_the_body() {
        let (config, errors) = load(
            "resource \"test_thing\" \"a\" {\n  count = 2\n  depends_on = [data.test_thing.b]\n  provider = test.prod\n  name = \"x\"\n  lifecycle {\n    ignore_changes = [tags[\"a\"]]\n    prevent_destroy = true\n  }\n}\ndata \"test_thing\" \"b\" {}\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        let r = &config.resource_at("test_thing.a").unwrap();
        assert!(r.count.is_some() && r.lifecycle.prevent_destroy);
        assert_eq!(r.provider_ref.as_deref(), Some("test.prod"));
        assert_eq!(r.depends_on[0].target, "data.test_thing.b");
        assert!(matches!(&r.lifecycle.ignore_changes, IgnoreChanges::Paths(p) if p.len() == 1));
        let kept: Vec<_> = r.body.body.iter().map(|s| format!("{s:?}")).collect();
        assert_eq!(kept.len(), 1, "only name is the kind's: {kept:?}");
        assert!(config.resource_at("data.test_thing.b").is_some());
    }

    #[test]
    fn a_data_source_and_a_resource_of_one_name_are_apart() {
        let (config, errors) = load(
            "resource \"test_thing\" \"a\" {}\ndata \"test_thing\" \"a\" {}\nresource \"test_thing\" \"a\" {}\n",
        );
        assert_eq!(errors, ["Duplicate resource"]);
        assert_eq!(config.resources.len(), 2);
    }

    #[test]
    fn invalid_meta_arguments_are_located_errors() {
        let (_, errors) = load(
            "resource \"test_thing\" \"a\" {\n  count = 1\n  for_each = {}\n  provider = \"test\"\n  lifecycle {\n    ignore_changes = 3\n    replace_triggered_by = test_thing.b\n    prevent = true\n  }\n}\n",
        );
        assert_eq!(
            errors,
            [
                "Invalid provider reference",
                "Invalid ignore_changes",
                "Invalid replace_triggered_by",
                "Unsupported argument",
                "Invalid combination of \"count\" and \"for_each\""
            ]
        );
    }

    #[test]
    fn all_ignores_every_change() {
        let (config, _) = load(
            "resource \"test_thing\" \"a\" {\n  lifecycle {\n    ignore_changes = all\n  }\n}\n",
        );
        assert!(matches!(
            config
                .resource_at("test_thing.a")
                .unwrap()
                .lifecycle
                .ignore_changes,
            IgnoreChanges::All
        ));
    }
}
