//! The language features over one document's text and its directory's loaded
//! configuration: completion, hover, definitions and symbols. Plain functions of their
//! inputs, so the benchmark and the tests call them without a connection.

use crate::scan::{self, Block, Place};
use crate::text::LineIndex;
use brickform_core::lang::blocks::BLOCK_TYPES;
use brickform_core::lang::load::Config;
use brickform_core::plan::Mode;
use brickform_core::provider::{Attribute, BlockType, Nesting, Presence, Registry, Schema};
use brickform_core::source::Span;
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, Hover, HoverContents,
    MarkupContent, MarkupKind, Range, TextEdit,
};
use std::path::PathBuf;

/// Meta-arguments every resource and data block takes.
const META: &[(&str, &str)] = &[
    (
        "count",
        "How many instances of this block (count.index in each).",
    ),
    (
        "for_each",
        "One instance per element of a map or set (each.key, each.value).",
    ),
    (
        "depends_on",
        "Blocks this one waits for beyond the references it makes.",
    ),
    ("provider", "The provider configuration to use."),
];

/// The schema of the innermost of `blocks` (a resource or data block's, or one of their
/// nested blocks'), when there is one.
pub fn schema_at<'r>(registry: &'r Registry, blocks: &[Block]) -> Option<&'r Schema> {
    let (first, rest) = blocks.split_first()?;
    let type_name = first.labels.first()?;
    let mut schema = match first.ident.as_str() {
        "resource" => registry.kind(type_name)?.schema(),
        "data" => registry.data_source(type_name)?.schema(),
        _ => return None,
    };
    let mut dynamic: Option<&str> = None;
    for b in rest {
        if b.ident == "dynamic" {
            dynamic = Some(b.labels.first()?.as_str());
            continue;
        }
        let name = match (b.ident.as_str(), dynamic.take()) {
            ("content", Some(d)) => d,
            (ident, _) => ident,
        };
        schema = &schema.blocks.iter().find(|t| t.name == name)?.schema;
    }
    Some(schema)
}

fn presence(p: Presence) -> &'static str {
    match p {
        Presence::Required => "required",
        Presence::Optional => "optional",
        Presence::Computed => "computed",
        Presence::OptionalComputed => "optional, computed",
    }
}

fn markdown(value: String) -> Documentation {
    Documentation::MarkupContent(MarkupContent {
        kind: MarkupKind::Markdown,
        value,
    })
}

/// What hover shows of an argument.
pub fn describe_attribute(a: &Attribute) -> String {
    let mut facts = vec![presence(a.presence).to_string()];
    if a.sensitive {
        facts.push("sensitive".into());
    }
    if a.replace_on_change {
        facts.push("forces replacement".into());
    }
    let mut out = format!(
        "**{}** `{}` — {}",
        a.name,
        a.ty.describe(),
        facts.join(", ")
    );
    if let Some(allowed) = &a.allowed {
        let values: Vec<String> = allowed.values.iter().map(|v| format!("`{v}`")).collect();
        out.push_str(&format!("\n\nOne of: {}", values.join(", ")));
    }
    if !a.description.is_empty() {
        out.push_str(&format!("\n\n{}", a.description));
    }
    out
}

/// What hover shows of a nested block.
pub fn describe_block(b: &BlockType) -> String {
    let nesting = match b.nesting {
        Nesting::Single => "single block".to_string(),
        Nesting::List => "repeated block".to_string(),
        Nesting::Keyed(k) => format!("repeated block, keyed by `{k}`"),
    };
    let mut facts = vec![nesting];
    if b.min_items > 0 {
        facts.push(format!("at least {}", b.min_items));
    }
    if let Some(max) = b.max_items.filter(|&m| m > 1) {
        facts.push(format!("at most {max}"));
    }
    if b.replace_on_change {
        facts.push("forces replacement".into());
    }
    let mut out = format!("**{}** — {}", b.name, facts.join(", "));
    if !b.description.is_empty() {
        out.push_str(&format!("\n\n{}", b.description));
    }
    out
}

fn item(label: impl Into<String>, kind: CompletionItemKind) -> CompletionItem {
    CompletionItem {
        label: label.into(),
        kind: Some(kind),
        ..Default::default()
    }
}

fn replacing(mut item: CompletionItem, range: Range, text: String) -> CompletionItem {
    item.text_edit = Some(CompletionTextEdit::Edit(TextEdit::new(range, text)));
    item
}

fn attribute_item(a: &Attribute) -> CompletionItem {
    CompletionItem {
        detail: Some(format!("{} ({})", a.ty.describe(), presence(a.presence))),
        documentation: Some(markdown(describe_attribute(a))),
        ..item(a.name, CompletionItemKind::FIELD)
    }
}

fn schema_items(schema: &Schema, settable: bool) -> Vec<CompletionItem> {
    let mut items: Vec<CompletionItem> = schema
        .attributes
        .iter()
        .filter(|a| !settable || a.presence != Presence::Computed)
        .map(attribute_item)
        .collect();
    if settable {
        items.extend(schema.blocks.iter().map(|b| CompletionItem {
            detail: Some("block".into()),
            documentation: Some(markdown(describe_block(b))),
            ..item(b.name, CompletionItemKind::STRUCT)
        }));
    }
    items
}

/// The root module's managed (or data) blocks.
fn root_resources(config: &Config, mode: Mode) -> impl Iterator<Item = (&str, &str)> {
    config
        .resources
        .values()
        .filter(move |r| r.module.is_root() && r.mode == mode)
        .map(|r| (r.type_name.as_str(), r.name.as_str()))
}

/// Completion at byte `offset` of `text`, a file of `config`'s directory.
pub fn complete(
    registry: &Registry,
    config: &Config,
    text: &str,
    offset: usize,
) -> Vec<CompletionItem> {
    let index = LineIndex::new(text);
    let ctx = scan::context(text, offset);
    let words: Vec<&str> = ctx.words.iter().map(String::as_str).collect();
    match &ctx.place {
        Place::Label { start, .. } if ctx.blocks.is_empty() => {
            let range = index.range(*start..offset);
            type_names(registry, &words)
                .into_iter()
                .map(|(name, doc)| {
                    let mut i =
                        replacing(item(name, CompletionItemKind::CLASS), range, name.into());
                    i.documentation = (!doc.is_empty()).then(|| markdown(doc.into()));
                    i
                })
                .collect()
        }
        Place::Label { .. } => Vec::new(),
        Place::Statement if ctx.blocks.is_empty() => match words.as_slice() {
            [] => BLOCK_TYPES
                .iter()
                .map(|b| CompletionItem {
                    detail: Some(b.summary.into()),
                    ..item(b.name, CompletionItemKind::KEYWORD)
                })
                .collect(),
            // `resource ` then the type, quoted.
            [_] => type_names(registry, &words)
                .into_iter()
                .map(|(name, _)| CompletionItem {
                    insert_text: Some(format!("\"{name}\"")),
                    ..item(name, CompletionItemKind::CLASS)
                })
                .collect(),
            _ => Vec::new(),
        },
        Place::Statement => {
            if !words.is_empty() {
                return Vec::new();
            }
            let mut items = schema_at(registry, &ctx.blocks)
                .map(|s| schema_items(s, true))
                .unwrap_or_default();
            if ctx.blocks.len() == 1 && matches!(ctx.blocks[0].ident.as_str(), "resource" | "data")
            {
                items.extend(META.iter().map(|(k, doc)| CompletionItem {
                    detail: Some((*doc).into()),
                    ..item(*k, CompletionItemKind::KEYWORD)
                }));
                if ctx.blocks[0].ident == "resource" {
                    items.push(item("lifecycle", CompletionItemKind::KEYWORD));
                }
            }
            items
        }
        Place::Str { start, .. } => {
            let range = index.range(*start..offset);
            allowed_values(registry, &ctx)
                .into_iter()
                .map(|v| replacing(item(v, CompletionItemKind::ENUM_MEMBER), range, v.into()))
                .collect()
        }
        Place::Expr => {
            let (start, reference) = scan::reference_before(text, offset);
            let mut items = references(registry, config, reference);
            if !reference.contains('.') {
                let range = index.range(start..offset);
                items.extend(allowed_values(registry, &ctx).into_iter().map(|v| {
                    let mut i = replacing(
                        item(v, CompletionItemKind::ENUM_MEMBER),
                        range,
                        format!("\"{v}\""),
                    );
                    i.filter_text = Some(v.into());
                    i
                }));
            }
            items
        }
    }
}

/// Resource types after `resource`, data source types after `data`, with their
/// descriptions.
fn type_names(registry: &Registry, words: &[&str]) -> Vec<(&'static str, &'static str)> {
    match words {
        ["resource"] => registry
            .kinds
            .iter()
            .map(|(name, k)| (*name, k.schema().description))
            .collect(),
        ["data"] => registry
            .data_sources
            .iter()
            .map(|(name, d)| (*name, d.schema().description))
            .collect(),
        _ => Vec::new(),
    }
}

fn allowed_values(registry: &Registry, ctx: &scan::Context) -> Vec<&'static str> {
    let (Some(attr), Some(schema)) = (&ctx.attr, schema_at(registry, &ctx.blocks)) else {
        return Vec::new();
    };
    schema
        .attributes
        .iter()
        .find(|a| a.name == attr)
        .and_then(|a| a.allowed)
        .map(|a| a.values.to_vec())
        .unwrap_or_default()
}

/// Completion of a reference being typed (`var.`, `local.`, `TYPE.NAME.`…).
fn references(registry: &Registry, config: &Config, reference: &str) -> Vec<CompletionItem> {
    let parts: Vec<&str> = reference.split('.').collect();
    match parts.as_slice() {
        [_] => {
            let mut items: Vec<CompletionItem> = ["var", "local", "module", "data"]
                .iter()
                .map(|k| item(*k, CompletionItemKind::KEYWORD))
                .collect();
            let mut types: Vec<&str> = root_resources(config, Mode::Managed)
                .map(|(t, _)| t)
                .collect();
            types.dedup();
            items.extend(
                types
                    .into_iter()
                    .map(|t| item(t, CompletionItemKind::CLASS)),
            );
            items
        }
        ["var", _] => config
            .variables
            .values()
            .map(|v| CompletionItem {
                detail: v.type_expr.as_ref().map(|_| "variable".to_string()),
                documentation: v.description.clone().map(Documentation::String),
                ..item(v.name.clone(), CompletionItemKind::VARIABLE)
            })
            .collect(),
        ["local", _] => config
            .locals
            .values()
            .filter(|l| l.module.is_root())
            .map(|l| item(l.name.clone(), CompletionItemKind::CONSTANT))
            .collect(),
        ["module", _] => config
            .module_calls
            .keys()
            .map(|m| item(m.clone(), CompletionItemKind::MODULE))
            .collect(),
        ["module", m, _] => config
            .module_calls
            .get(*m)
            .and_then(|c| c.module.as_ref())
            .map(|b| {
                b.outputs
                    .keys()
                    .map(|o| item(o.clone(), CompletionItemKind::PROPERTY))
                    .collect()
            })
            .unwrap_or_default(),
        ["data", _] => {
            let mut types: Vec<&str> = root_resources(config, Mode::Data).map(|(t, _)| t).collect();
            types.dedup();
            types
                .into_iter()
                .map(|t| item(t, CompletionItemKind::CLASS))
                .collect()
        }
        ["data", t, _] => root_resources(config, Mode::Data)
            .filter(|(ty, _)| ty == t)
            .map(|(_, n)| item(n, CompletionItemKind::VALUE))
            .collect(),
        ["data", t, _, _] => registry
            .data_source(t)
            .map(|d| schema_items(d.schema(), false))
            .unwrap_or_default(),
        [t, _] => root_resources(config, Mode::Managed)
            .filter(|(ty, _)| ty == t)
            .map(|(_, n)| item(n, CompletionItemKind::VALUE))
            .collect(),
        [t, _, _] => registry
            .kind(t)
            .map(|k| schema_items(k.schema(), false))
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Hover at byte `offset`: an argument's or a nested block's schema, a resource type's
/// description, a variable's.
pub fn hover(registry: &Registry, config: &Config, text: &str, offset: usize) -> Option<Hover> {
    let index = LineIndex::new(text);
    let (range, word) = scan::word_at(text, offset)?;
    let ctx = scan::context(text, range.start);
    let shown = |value: String| Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range: Some(index.range(range.clone())),
    };
    match &ctx.place {
        Place::Statement if ctx.words.is_empty() => {
            let schema = schema_at(registry, &ctx.blocks)?;
            if let Some(a) = schema.attributes.iter().find(|a| a.name == word) {
                return Some(shown(describe_attribute(a)));
            }
            let b = schema.blocks.iter().find(|b| b.name == word)?;
            Some(shown(describe_block(b)))
        }
        Place::Label { .. } if ctx.blocks.is_empty() => {
            let schema = match ctx.words.as_slice() {
                [w] if w == "resource" => registry.kind(word)?.schema(),
                [w] if w == "data" => registry.data_source(word)?.schema(),
                _ => return None,
            };
            Some(shown(format!("**{word}**\n\n{}", schema.description)))
        }
        Place::Expr => {
            let (_, reference) = scan::reference_at(text, offset)?;
            let parts: Vec<&str> = reference.split('.').collect();
            match parts.as_slice() {
                ["var", name, ..] => {
                    let v = config.variables.get(*name)?;
                    Some(shown(format!(
                        "**var.{name}**{}",
                        v.description
                            .as_ref()
                            .map(|d| format!("\n\n{d}"))
                            .unwrap_or_default()
                    )))
                }
                [t, _, attr] | ["data", t, _, attr] => {
                    let schema = if parts[0] == "data" {
                        registry.data_source(t)?.schema()
                    } else {
                        registry.kind(t)?.schema()
                    };
                    let a = schema.attributes.iter().find(|a| a.name == *attr)?;
                    Some(shown(describe_attribute(a)))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Where the reference at byte `offset` is declared: the file and the byte range there.
pub fn definition(config: &Config, text: &str, offset: usize) -> Option<(PathBuf, Span)> {
    let (_, reference) = scan::reference_at(text, offset)?;
    let parts: Vec<&str> = reference.split('.').collect();
    let span = match parts.as_slice() {
        ["var", name, ..] => config.variables.get(*name)?.span.clone(),
        ["local", name, ..] => config
            .local(&brickform_core::addrs::Scoped {
                module: Default::default(),
                name: (*name).to_string(),
            })?
            .span
            .clone(),
        ["module", name, ..] => config.module_calls.get(*name)?.span.clone(),
        ["data", t, n, ..] => find_resource(config, Mode::Data, t, n)?,
        [t, n, ..] => find_resource(config, Mode::Managed, t, n)?,
        _ => None,
    }?;
    let file = config.sources.get(span.file)?;
    let path = if file.path.is_absolute() {
        file.path.clone()
    } else {
        config.dir.join(&file.path)
    };
    Some((path, span))
}

fn find_resource(config: &Config, mode: Mode, t: &str, n: &str) -> Option<Option<Span>> {
    config
        .resources
        .values()
        .find(|r| r.module.is_root() && r.mode == mode && r.type_name == t && r.name == n)
        .map(|r| r.span.clone())
}
