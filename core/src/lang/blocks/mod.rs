//! The top-level blocks of a configuration, as a table: each block type is one row (its
//! labels, the label that must be an identifier, where a second block of the same name is
//! reported) and one small decoder in a module of its own. What every block needs is done
//! once here, before its decoder runs: the type looked up (an unknown one gets a
//! did-you-mean over the table), its labels counted, its name checked, a duplicate
//! reported at the second block with where the first one is.

mod brickform;
mod check;
mod environment;
mod import;
mod locals;
mod module;
mod moved;
mod output;
mod provider;
mod removed;
mod resource;
mod terraform;
mod variable;

use super::load::{Config, block_span, labels, span_of, valid_identifier};
use crate::diagnostics::{Diagnostic, Diagnostics, did_you_mean};
use crate::source::{FileId, SourceMap, Span};
use hcl_edit::Span as _;
use hcl_edit::structure::{Block, Body as HclBody, Structure};

/// One top-level block type.
pub struct BlockType {
    pub name: &'static str,
    /// What a block of this type declares, for editors.
    pub summary: &'static str,
    /// What each of its labels names.
    labels: &'static [&'static str],
    /// The label that must be an identifier, if one must.
    identifier: Option<Identifier>,
    /// Where a second block of the same name is found, if names are unique.
    unique: Option<Unique>,
    decode: fn(&mut Config, Decoded, &mut Diagnostics),
}

/// A label that must be an identifier (letters, digits, `_` and `-`, not starting with a
/// digit), as Terraform requires of resource and module names.
struct Identifier {
    label: usize,
    /// The error's title ("Invalid resource name").
    error: &'static str,
    /// Whether a block with an invalid name is left out (a module call cannot be made
    /// without one; a resource is kept, so references to it are not reported too).
    left_out: bool,
}

/// How a block's name is kept unique.
struct Unique {
    /// What a duplicate is called ("variable declaration").
    what: &'static str,
    /// The key the block is kept under in the configuration.
    key: fn(&[String], &HclBody) -> String,
    /// The name as the error shows it (`variable "x"`), from the key.
    shown: fn(&str) -> String,
    /// The block already kept under a key: where it is.
    first: fn(&Config, &str) -> Option<Option<Span>>,
}

/// A block handed to its decoder, its labels checked.
pub(super) struct Decoded {
    file: FileId,
    labels: Vec<String>,
    /// The block's header, where its errors point.
    span: Option<Span>,
    block: Block,
}

/// Every top-level block type, in the order editors offer them.
pub const BLOCK_TYPES: &[BlockType] = &[
    resource::RESOURCE,
    resource::DATA,
    variable::VARIABLE,
    locals::LOCALS,
    output::OUTPUT,
    module::MODULE,
    provider::PROVIDER,
    import::IMPORT,
    moved::MOVED,
    removed::REMOVED,
    environment::ENVIRONMENT,
    brickform::BRICKFORM,
    check::CHECK,
    terraform::TERRAFORM,
];

/// Decodes one top-level block into `config`.
pub(super) fn load_block(config: &mut Config, file: FileId, b: Block, diags: &mut Diagnostics) {
    let span = block_span(file, &b);
    let Some(ty) = BLOCK_TYPES.iter().find(|t| t.name == b.ident.as_str()) else {
        let other = b.ident.as_str();
        diags.push(
            Diagnostic::error("Unsupported block type")
                .at(span)
                .label("not expected here")
                .detail(format!("Blocks of type \"{other}\" are not expected here."))
                .maybe_hint(did_you_mean(other, BLOCK_TYPES.iter().map(|t| t.name))),
        );
        return;
    };
    let Some(labels) = expect_labels(file, &b, ty.labels, diags) else {
        return;
    };
    if let Some(u) = &ty.unique {
        let key = (u.key)(&labels, &b.body);
        if let Some(first) = (u.first)(config, &key) {
            duplicate(
                diags,
                u.what,
                &(u.shown)(&key),
                span,
                first.as_ref(),
                &config.sources,
            );
            return;
        }
    }
    if let Some(id) = &ty.identifier
        && !valid_identifier(&labels[id.label])
    {
        diags.push(
            Diagnostic::error(id.error)
                .at(span.clone())
                .detail("A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes."),
        );
        if id.left_out {
            return;
        }
    }
    (ty.decode)(
        config,
        Decoded {
            file,
            labels,
            span,
            block: b,
        },
        diags,
    );
}

/// The labels of `b`, or an error when there are not as many as `names`.
pub(super) fn expect_labels(
    file: FileId,
    b: &Block,
    names: &[&str],
    diags: &mut Diagnostics,
) -> Option<Vec<String>> {
    let ls = labels(b);
    if ls.len() == names.len() {
        return Some(ls);
    }
    let kind = b.ident.as_str();
    let want = if names.is_empty() {
        format!("A \"{kind}\" block takes no labels.")
    } else {
        format!(
            "A \"{kind}\" block needs {} label{}: {}.",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        )
    };
    diags.push(
        Diagnostic::error(if ls.len() < names.len() {
            "Missing name for block"
        } else {
            "Extraneous label for block"
        })
        .at(block_span(file, b))
        .detail(want),
    );
    None
}

/// A second declaration of `name`, reported where it is, with where the first one is.
pub(super) fn duplicate(
    diags: &mut Diagnostics,
    what: &str,
    name: &str,
    at: Option<Span>,
    first: Option<&Span>,
    sources: &SourceMap,
) {
    let prev = first
        .and_then(|s| {
            let f = sources.get(s.file)?;
            let (l, c) = f.line_col(s.range.start);
            Some(format!(" It was first declared at {}:{l}:{c}.", f.name))
        })
        .unwrap_or_default();
    diags.push(
        Diagnostic::error(format!("Duplicate {what}"))
            .at(at)
            .label("declared again here")
            .detail(format!(
                "{name} is declared more than once; each name must be unique.{prev}"
            )),
    );
}

/// An argument or nested block that `parent` does not take, with the closest it does.
pub(super) fn unsupported_in(
    file: FileId,
    s: &Structure,
    parent: &str,
    allowed: &[&str],
    diags: &mut Diagnostics,
) {
    let (kind, name, span) = match s {
        Structure::Attribute(a) => ("argument", a.key.as_str().to_string(), a.key.span()),
        Structure::Block(b) => ("block type", b.ident.as_str().to_string(), b.ident.span()),
    };
    diags.push(
        Diagnostic::error(format!("Unsupported {kind}"))
            .at(span_of(file, span))
            .label("not expected here")
            .detail(format!(
                "{} {kind} named \"{name}\" is not expected in {} {parent} block.",
                if kind.starts_with('a') { "An" } else { "A" },
                if parent.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                },
            ))
            .maybe_hint(did_you_mean(&name, allowed.iter().copied())),
    );
}

/// The key of a block named by its one label.
fn first_label(labels: &[String], _: &HclBody) -> String {
    labels.first().cloned().unwrap_or_default()
}

#[cfg(test)]
pub(super) mod testing {
    use crate::diagnostics::Diagnostics;
    use crate::lang::load::{Config, load_sources};

    /// `text` loaded as one file; its configuration and the errors' titles.
    pub fn load(text: &str) -> (Config, Vec<String>) {
        let (config, diags) = load_sources(
            std::path::Path::new("."),
            vec![("main.bf.hcl".into(), "main.bf.hcl".into(), text.into())],
        );
        (config, titles(&diags))
    }

    pub fn titles(diags: &Diagnostics) -> Vec<String> {
        diags.iter().map(|d| d.summary.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::load;
    use super::*;

    #[test]
    fn every_block_type_is_in_the_table_once() {
        let mut names: Vec<_> = BLOCK_TYPES.iter().map(|t| t.name).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n);
    }

    #[test]
    fn an_unknown_block_type_is_refused_with_the_closest_known_one() {
        let (_, errors) = load("resorce \"x\" \"y\" {}\n");
        assert_eq!(errors, ["Unsupported block type"]);
        let (_, diags) = crate::lang::load::load_sources(
            std::path::Path::new("."),
            vec![(
                "main.bf.hcl".into(),
                "main.bf.hcl".into(),
                "resorce \"x\" \"y\" {}\n".into(),
            )],
        );
        let d = diags.iter().next().unwrap();
        assert!(
            d.hint.as_deref().unwrap_or("").contains("resource"),
            "{d:?}"
        );
    }

    #[test]
    fn labels_are_counted_before_any_decoder_runs() {
        let (config, errors) = load("variable {}\nlocals \"x\" {}\n");
        assert_eq!(
            errors,
            ["Missing name for block", "Extraneous label for block"]
        );
        assert!(config.variables.is_empty() && config.locals.is_empty());
    }

    #[test]
    fn a_duplicate_names_where_the_first_one_is() {
        let (config, diags) = crate::lang::load::load_sources(
            std::path::Path::new("."),
            vec![(
                "main.bf.hcl".into(),
                "main.bf.hcl".into(),
                "output \"a\" { value = 1 }\noutput \"a\" { value = 2 }\n".into(),
            )],
        );
        let d = diags.iter().next().unwrap();
        assert_eq!(d.summary, "Duplicate output definition");
        assert!(
            d.detail
                .as_deref()
                .unwrap_or("")
                .contains("main.bf.hcl:1:1"),
            "{d:?}"
        );
        assert_eq!(config.outputs.len(), 1);
    }

    #[test]
    fn an_invalid_name_leaves_a_module_out_and_keeps_a_resource() {
        let (config, errors) =
            load("module \"1m\" { source = \"./m\" }\nresource \"test_thing\" \"1r\" {}\n");
        assert_eq!(errors, ["Invalid module name", "Invalid resource name"]);
        assert!(config.module_calls.is_empty());
        assert_eq!(config.resources.len(), 1);
    }
}
