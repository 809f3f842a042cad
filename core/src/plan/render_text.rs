//! The human plan rendering, following Terraform's conventions: action symbols, aligned
//! attributes, `(known after apply)`, `(sensitive value)`, hidden unchanged counts, heredoc line
//! diffs for multi-line strings and structural diffs for JSON strings.
//!
//! The per-resource blocks are built as [`Line`]s first and turned into text last, so the
//! Markdown renderer reuses them with the action symbol moved into a `diff` gutter.

use super::model::{
    Action, ActionReason, Drift, FieldChange, FieldReason, InstanceKey, Mode, OutputChange, Plan,
    PlanMode, ResourceChange, Summary, path_within,
};
use crate::value::{Object, PathStep, Value, quote, quote_key};
use similar::{Algorithm, ChangeTag, DiffTag, TextDiff};
use std::fmt::Write as _;

mod differ;
#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;

use differ::{Differ, key_width, sensitive_paths};

/// Options for [`render`].
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions {
    /// Emit ANSI colours.
    pub color: bool,
    /// Show unchanged attributes, blocks, elements and lines instead of counting them.
    pub show_unchanged: bool,
}

/// Renders a plan the way `terraform plan` prints it.
pub fn render(plan: &Plan, opts: &TextOptions) -> String {
    let sty = Sty { color: opts.color };
    let mut out = String::new();
    let changes = if plan.mode == PlanMode::RefreshOnly {
        // A refresh-only plan takes no actions; it only records what refresh found.
        Vec::new()
    } else {
        shown_changes(plan)
    };
    let outputs: Vec<&OutputChange> = plan
        .outputs
        .iter()
        .filter(|o| o.action != Action::NoOp)
        .collect();

    let drift_shown = !plan.drift.is_empty();
    if drift_shown {
        out.push('\n');
        let _ = writeln!(
            out,
            "{} Objects have changed outside of brickform",
            sty.paint(BOLD_CYAN, "Note:")
        );
        out.push('\n');
        out.push_str(
            "brickform detected the following changes made outside of brickform since the last \
             \"brickform apply\" which may have affected this plan:\n",
        );
        for d in &plan.drift {
            out.push('\n');
            write_lines(&mut out, &drift_lines(d, sty), sty, Gutter::Terminal);
        }
        out.push_str("\n\n");
        if plan.mode == PlanMode::RefreshOnly {
            out.push_str(
                "This is a refresh-only plan, so brickform will not take any actions to undo \
                 these. If you were expecting these changes then you can apply this plan to \
                 record the updated values in the brickform state without changing any remote \
                 objects.\n",
            );
        } else {
            out.push_str(
                "Unless you have made equivalent changes to your configuration, or ignored the \
                 relevant attributes using ignore_changes, the following plan may include \
                 actions to undo or respond to these changes.\n",
            );
        }
    }

    if changes.is_empty() && outputs.is_empty() {
        let no_changes = sty.paint(BOLD_GREEN, "No changes.");
        match plan.mode {
            PlanMode::RefreshOnly => {
                if !drift_shown {
                    let _ = writeln!(
                        out,
                        "\n{no_changes}{}\n",
                        sty.paint(
                            BOLD,
                            " Your infrastructure still matches the configuration."
                        )
                    );
                    out.push_str(
                        "brickform has checked that the real remote objects still match the \
                         result of your most recent changes, and found no differences.\n",
                    );
                }
            }
            PlanMode::Destroy => {
                rule(&mut out, drift_shown);
                let _ = writeln!(
                    out,
                    "\n{no_changes}{}\n",
                    sty.paint(BOLD, " No objects need to be destroyed.")
                );
                out.push_str(
                    "Either you have not created any objects yet or the existing objects were \
                     already deleted outside of brickform.\n",
                );
            }
            PlanMode::Normal => {
                rule(&mut out, drift_shown);
                let _ = writeln!(
                    out,
                    "\n{no_changes}{}\n",
                    sty.paint(BOLD, " Your infrastructure matches the configuration.")
                );
                if drift_shown {
                    out.push_str(
                        "Your configuration already matches the changes detected above. If \
                         you'd like to update the brickform state to match, create and apply a \
                         refresh-only plan:\n  brickform apply --refresh-only\n",
                    );
                } else {
                    out.push_str(
                        "brickform has compared your real infrastructure against your \
                         configuration and found no differences, so no changes are needed.\n",
                    );
                }
            }
        }
        write_warnings(&mut out, &plan.shown_warnings(), sty);
        return out;
    }

    rule(&mut out, drift_shown);
    let actions: Vec<Action> = changes.iter().map(|c| c.action).collect();
    let legend = legend_lines(&actions, sty);
    if !legend.is_empty() {
        out.push_str(
            "\nbrickform used the selected providers to generate the following execution plan. \
             Resource actions are indicated with the following symbols:\n",
        );
        for l in legend {
            out.push_str(&l);
            out.push('\n');
        }
    }
    if !changes.is_empty() {
        out.push_str("\nbrickform will perform the following actions:\n");
        for rc in &changes {
            out.push('\n');
            write_lines(
                &mut out,
                &resource_lines(rc, sty, opts.show_unchanged),
                sty,
                Gutter::Terminal,
            );
        }
        let _ = writeln!(out, "\n{}", summary_sentence(&plan.summary(), sty));
    }
    if !outputs.is_empty() {
        out.push_str("\nChanges to Outputs:\n");
        write_lines(
            &mut out,
            &output_lines(&plan.outputs, sty, opts.show_unchanged),
            sty,
            Gutter::Terminal,
        );
        if !actions.iter().any(|a| *a != Action::NoOp) {
            out.push_str(
                "\nYou can apply this plan to save these new output values to the brickform \
                 state, without changing any real infrastructure.\n",
            );
        }
    }
    write_warnings(&mut out, &plan.shown_warnings(), sty);
    out
}

fn rule(out: &mut String, after_drift: bool) {
    if after_drift {
        out.push('\n');
        out.push_str(&"─".repeat(77));
        out.push('\n');
    }
}

/// The instances a plan shows: everything but no-ops (unless moved or imported) and deleted
/// data sources, in address order.
pub(crate) fn shown_changes(plan: &Plan) -> Vec<&ResourceChange> {
    plan.changes_by_address()
        .into_iter()
        .filter(|c| {
            let shown = c.action != Action::NoOp || c.moved_from.is_some() || c.importing.is_some();
            let deleted_data = c.action == Action::Delete && c.mode() == Mode::Data;
            shown && !deleted_data
        })
        .collect()
}

/// `Plan: 1 to import, 2 to add, 0 to change, 1 to destroy, 1 to forget, 1 moved.`
pub(crate) fn summary_sentence(s: &Summary, sty: Sty) -> String {
    let mut t = format!("{} ", sty.paint(BOLD, "Plan:"));
    if s.import > 0 {
        let _ = write!(t, "{} to import, ", s.import);
    }
    let _ = write!(
        t,
        "{} to add, {} to change, {} to destroy",
        s.add, s.change, s.destroy
    );
    if s.forget > 0 {
        let _ = write!(t, ", {} to forget", s.forget);
    }
    if s.moved > 0 {
        let _ = write!(t, ", {} moved", s.moved);
    }
    t.push('.');
    t
}

/// The legend lines for the symbols in use, in Terraform's order.
pub(crate) fn legend_lines(actions: &[Action], sty: Sty) -> Vec<String> {
    let order = [
        (Action::Create, "create"),
        (Action::Update, "update in-place"),
        (Action::Delete, "destroy"),
        (
            Action::DeleteThenCreate,
            "destroy and then create replacement",
        ),
        (
            Action::CreateThenDelete,
            "create replacement and then destroy",
        ),
        (Action::Read, "read (data resources)"),
        (Action::Forget, "forget"),
    ];
    order
        .iter()
        .filter(|(a, _)| actions.contains(a))
        .map(|(a, text)| format!("{} {text}", sty.sym(Sym::of_action(*a), Gutter::Terminal)))
        .collect()
}

fn write_warnings(out: &mut String, warnings: &[String], sty: Sty) {
    for w in warnings {
        let mut lines = w.lines();
        let summary = lines.next().unwrap_or_default();
        let bar = sty.paint(YELLOW, "│");
        let _ = writeln!(out, "\n{}", sty.paint(YELLOW, "╷"));
        let _ = writeln!(
            out,
            "{bar} {} {summary}",
            sty.paint(BOLD_YELLOW, "Warning:")
        );
        let detail: Vec<&str> = lines.collect();
        if !detail.is_empty() {
            let _ = writeln!(out, "{bar}");
            for d in detail {
                if d.is_empty() {
                    let _ = writeln!(out, "{bar}");
                } else {
                    let _ = writeln!(out, "{bar} {d}");
                }
            }
        }
        let _ = writeln!(out, "{}", sty.paint(YELLOW, "╵"));
    }
}

// ---------------------------------------------------------------------------------------------
// Styling

const BOLD: &str = "\x1b[1m";
const BOLD_GREEN: &str = "\x1b[1;32m";
const BOLD_CYAN: &str = "\x1b[1;36m";
const BOLD_RED: &str = "\x1b[1;31m";
const BOLD_YELLOW: &str = "\x1b[1;33m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const RED: &str = "\x1b[31m";
const CYAN: &str = "\x1b[36m";
const UNDERLINE: &str = "\x1b[4m";
const RESET: &str = "\x1b[0m";

/// Whether to paint; plain ANSI codes keep the output free of terminal detection, which is the
/// caller's business (`NO_COLOR`, TTY checks).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sty {
    pub(crate) color: bool,
}

impl Sty {
    pub(crate) const PLAIN: Sty = Sty { color: false };

    fn paint(self, code: &str, s: &str) -> String {
        if self.color && !s.is_empty() {
            format!("{code}{s}{RESET}")
        } else {
            s.to_string()
        }
    }

    /// The symbol right-aligned in three columns (`  +`, `-/+`, ` <=`), or in diff-gutter form
    /// with the sign first, so a Markdown ```diff block colours the line.
    fn sym(self, sym: Sym, gutter: Gutter) -> String {
        let plain = sym.text();
        if gutter == Gutter::Diff {
            let first = match sym {
                // `!` is the "changed" marker that diff highlighters colour.
                Sym::Update => "!".to_string(),
                Sym::Create | Sym::Delete => plain.to_string(),
                _ => return format!("{plain:>3}"),
            };
            return format!("{first}  ");
        }
        let painted = match sym {
            Sym::Create => self.paint(GREEN, "+"),
            Sym::Update => self.paint(YELLOW, "~"),
            Sym::Delete => self.paint(RED, "-"),
            Sym::DeleteCreate => format!("{}/{}", self.paint(RED, "-"), self.paint(GREEN, "+")),
            Sym::CreateDelete => format!("{}/{}", self.paint(GREEN, "+"), self.paint(RED, "-")),
            Sym::Read => self.paint(CYAN, "<="),
            Sym::Forget => self.paint(RED, "."),
            Sym::None => String::new(),
        };
        format!("{}{painted}", " ".repeat(3 - plain.len()))
    }
}

/// The change marker in front of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sym {
    None,
    Create,
    Update,
    Delete,
    DeleteCreate,
    CreateDelete,
    Read,
    Forget,
}

impl Sym {
    fn text(self) -> &'static str {
        match self {
            Sym::None => "",
            Sym::Create => "+",
            Sym::Update => "~",
            Sym::Delete => "-",
            Sym::DeleteCreate => "-/+",
            Sym::CreateDelete => "+/-",
            Sym::Read => "<=",
            Sym::Forget => ".",
        }
    }

    pub(crate) fn of_action(a: Action) -> Sym {
        match a {
            Action::NoOp => Sym::None,
            Action::Read => Sym::Read,
            Action::Update => Sym::Update,
            Action::DeleteThenCreate => Sym::DeleteCreate,
            Action::CreateThenDelete => Sym::CreateDelete,
            Action::Create => Sym::Create,
            Action::Delete => Sym::Delete,
            Action::Forget => Sym::Forget,
        }
    }

    fn of_change(old: Option<&Value>, new: Option<&Value>) -> Sym {
        match (old, new) {
            (None, None) => Sym::None,
            (None, Some(_)) => Sym::Create,
            (Some(_), None) => Sym::Delete,
            (Some(o), Some(n)) if o == n => Sym::None,
            _ => Sym::Update,
        }
    }
}

/// How a line's symbol is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gutter {
    /// Terraform's layout: the symbol sits just before the text.
    Terminal,
    /// The symbol moves to column 0 (for ```diff blocks); widths are unchanged.
    Diff,
}

/// One line of a rendered resource, drift or output block.
#[derive(Debug, Clone)]
pub(crate) enum Line {
    Blank,
    /// Printed as is (the `  # x will be created` comments).
    Raw(String),
    /// `depth` levels of four columns, then the symbol in three columns, a space and the text.
    Item {
        depth: usize,
        sym: Sym,
        text: String,
    },
}

pub(crate) fn write_lines(out: &mut String, lines: &[Line], sty: Sty, gutter: Gutter) {
    for l in lines {
        match l {
            Line::Blank => {}
            Line::Raw(s) => out.push_str(s),
            Line::Item { depth, sym, text } => {
                let indent = " ".repeat(depth * 4);
                match gutter {
                    Gutter::Diff if matches!(sym, Sym::Create | Sym::Update | Sym::Delete) => {
                        out.push_str(&sty.sym(*sym, gutter));
                        out.push_str(&indent);
                    }
                    _ => {
                        out.push_str(&indent);
                        out.push_str(&sty.sym(*sym, gutter));
                    }
                }
                out.push(' ');
                out.push_str(text);
            }
        }
        out.push('\n');
    }
}

fn item(depth: usize, sym: Sym, text: String) -> Line {
    Line::Item { depth, sym, text }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

// ---------------------------------------------------------------------------------------------
// Resource, drift and output blocks

/// The comment lines above a resource block: the address, what happens to it and why.
pub(crate) struct Headline {
    /// The address the sentence is about (the old one for a move).
    pub(crate) address: String,
    /// `will be created`, `must be replaced`, …
    pub(crate) verb: String,
    /// Further comment lines: `(because …)`, `(moved from …)`, `(imported from "…")`.
    pub(crate) notes: Vec<String>,
}

pub(crate) fn headline(rc: &ResourceChange) -> Headline {
    let mut notes = Vec::new();
    let mut address = rc.address();
    let verb = match rc.action {
        Action::Create if rc.reason == Some(ActionReason::CreateBecauseDeletedOutside) => {
            "will be created (deleted outside brickform)".to_string()
        }
        Action::Create => "will be created".to_string(),
        Action::Read => {
            match rc.reason {
                Some(ActionReason::ReadBecauseConfigUnknown) => {
                    notes.push("(config refers to values not yet known)".to_string())
                }
                Some(ActionReason::ReadBecauseDependencyPending) => notes
                    .push("(depends on a resource or a module with changes pending)".to_string()),
                _ => {}
            }
            "will be read during apply".to_string()
        }
        Action::Update => "will be updated in-place".to_string(),
        Action::DeleteThenCreate | Action::CreateThenDelete => match rc.reason {
            Some(ActionReason::ReplaceByRequest) => "will be replaced, as requested".to_string(),
            Some(ActionReason::ReplaceByTriggers) => {
                "will be replaced due to changes in replace_triggered_by".to_string()
            }
            Some(ActionReason::ReplaceBecauseContainerReplaced) => {
                if let Some(c) = &rc.container {
                    notes.push(format!("(it lies in {c}, which is replaced)"));
                }
                "must be replaced".to_string()
            }
            _ => "must be replaced".to_string(),
        },
        Action::Delete => {
            let because = match (rc.reason, rc.key()) {
                (Some(ActionReason::DeleteBecauseNoResourceConfig), _) => Some(format!(
                    "(because {} is not in configuration)",
                    rc.resource_address()
                )),
                (Some(ActionReason::DeleteBecauseEachKey), Some(InstanceKey::Key(k))) => Some(
                    format!("(because key [{}] is not in for_each map)", quote(k)),
                ),
                (Some(ActionReason::DeleteBecauseCountIndex), Some(InstanceKey::Index(i))) => {
                    Some(format!("(because index [{i}] is out of range for count)"))
                }
                (
                    Some(
                        ActionReason::DeleteBecauseEachKey | ActionReason::DeleteBecauseCountIndex,
                    ),
                    _,
                ) => Some("(because resource uses count or for_each)".to_string()),
                (Some(ActionReason::DeleteBecauseNoMoveTarget), _) => Some(format!(
                    "(because {} was moved to an address which is not in configuration)",
                    rc.moved_from.as_ref().unwrap_or(&rc.addr)
                )),
                _ => None,
            };
            notes.extend(because);
            "will be destroyed".to_string()
        }
        Action::Forget if rc.reason == Some(ActionReason::ForgetBecauseGone) => {
            notes.push("(it no longer exists)".to_string());
            "will be removed from the state".to_string()
        }
        Action::Forget => {
            if rc.reason == Some(ActionReason::ForgetBecauseRemoved) {
                notes.push("(destroy = false is set in the configuration)".to_string());
            }
            "will be removed from the state but will not be destroyed".to_string()
        }
        Action::NoOp => match &rc.moved_from {
            Some(from) => {
                address = from.to_string();
                format!("has moved to {}", rc.address())
            }
            None if rc.importing.is_some() => "will be imported".to_string(),
            None => "has no changes".to_string(),
        },
    };
    if rc.action != Action::NoOp
        && let Some(from) = &rc.moved_from
        && rc.reason != Some(ActionReason::DeleteBecauseNoMoveTarget)
    {
        notes.push(format!("(moved from {from})"));
    }
    if let Some(id) = &rc.importing {
        notes.push(format!("(imported from {})", quote(id)));
    }
    if rc.deposed {
        // Terraform's words: the object a create_before_destroy replacement put aside.
        address = format!(
            "{} (deposed object {})",
            rc.address(),
            quote(rc.id.as_deref().unwrap_or("?"))
        );
        notes.push("(its replacement was created; deleting it did not finish)".to_string());
    }
    if let Some(c) = &rc.contents {
        notes.extend(contents_notes(c));
    }
    Headline {
        address,
        verb,
        notes,
    }
}

/// What a container's delete takes with it, in words.
pub(crate) fn contents_notes(c: &crate::plan::Contents) -> Vec<String> {
    let mut notes = Vec::new();
    if !c.managed.is_empty() {
        notes.push(format!(
            "(deletes with it what lies inside: {})",
            c.managed
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    match c.unmanaged.as_deref() {
        Some([]) | None => {}
        Some(u) => {
            let shown: Vec<&str> = u.iter().take(5).map(String::as_str).collect();
            let more = if u.len() > 5 {
                format!(", and {} more", u.len() - 5)
            } else {
                String::new()
            };
            notes.push(format!(
                "(also deletes {} this state does not manage: {}{more})",
                plural(u.len(), "object", "objects"),
                shown.join(", ")
            ));
        }
    }
    notes
}

fn headline_lines(h: &Headline, sty: Sty) -> Vec<Line> {
    let verb = match h.verb.as_str() {
        "will be destroyed" => format!("will be {}", sty.paint(BOLD_RED, "destroyed")),
        v if v.contains("replaced") => v.replacen("replaced", &sty.paint(BOLD_RED, "replaced"), 1),
        v => v.to_string(),
    };
    let mut lines = vec![Line::Raw(format!(
        "{} {verb}",
        sty.paint(BOLD, &format!("  # {}", h.address))
    ))];
    lines.extend(h.notes.iter().map(|n| Line::Raw(format!("  # {n}"))));
    lines
}

fn header(mode: Mode, type_name: &str, name: &str) -> String {
    let kw = match mode {
        Mode::Managed => "resource",
        Mode::Data => "data",
    };
    format!("{kw} {} {} {{", quote(type_name), quote(name))
}

/// The full block of one resource instance: comments, header, attributes.
pub(crate) fn resource_lines(rc: &ResourceChange, sty: Sty, show_unchanged: bool) -> Vec<Line> {
    let mut lines = headline_lines(&headline(rc), sty);
    let sensitive = sensitive_paths(&rc.sensitive_paths, &rc.fields);
    let differ = Differ {
        sty,
        show_unchanged,
        sparse: false,
        annotate: true,
        fields: &rc.fields,
        block_paths: &rc.block_paths,
        block_keys: &rc.block_keys,
        sensitive: &sensitive,
    };
    let before = rc.before.as_ref().map(|o| &o.0);
    // A new object's `after` holds the service's defaults for what the configuration leaves
    // out; the text shows what is configured or computed, as Terraform's does.
    let created: Option<crate::value::Object> = (rc.action == Action::Create).then(|| {
        rc.after
            .as_ref()
            .map(|o| {
                o.0.iter()
                    .filter(|(k, v)| {
                        !v.is_wholly_known()
                            || rc.fields.iter().any(
                                |f| matches!(f.path.first(), Some(PathStep::Key(p)) if p == *k),
                            )
                    })
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    });
    let after = created.as_ref().or(rc.after.as_ref().map(|o| &o.0));
    let (old, new) = match rc.action {
        Action::Delete => (before, None),
        // Forgetting changes nothing about the object; show what stays behind.
        Action::Forget => (before, before),
        _ => (before, after),
    };
    lines.push(item(
        0,
        Sym::of_action(rc.action),
        header(rc.mode(), rc.type_name(), rc.name()),
    ));
    differ.block_body(&mut lines, 1, &[], old, new);
    lines.push(item(0, Sym::None, "}".to_string()));
    lines
}

/// The block of one drifted resource: `before` is the last applied value, `after` the live one.
pub(crate) fn drift_lines(d: &Drift, sty: Sty) -> Vec<Line> {
    let verb = if d.deleted {
        "has been deleted"
    } else {
        "has changed"
    };
    let mut lines = vec![Line::Raw(format!(
        "{} {verb}",
        sty.paint(BOLD, &format!("  # {}", d.address))
    ))];
    let sensitive = sensitive_paths(&d.sensitive_paths, &d.fields);
    let differ = Differ {
        sty,
        show_unchanged: false,
        sparse: true,
        annotate: false,
        fields: &[],
        block_paths: &d.block_paths,
        block_keys: &d.block_keys,
        sensitive: &sensitive,
    };
    let (before, after) = d.partial_objects();
    let sym = if d.deleted { Sym::Delete } else { Sym::Update };
    lines.push(item(0, sym, header(d.mode(), &d.type_name, &d.name)));
    differ.block_body(
        &mut lines,
        1,
        &[],
        Some(&before),
        if d.deleted { None } else { Some(&after) },
    );
    lines.push(item(0, Sym::None, "}".to_string()));
    lines
}

/// `  + name = "value"` lines for the changed outputs, `=` aligned.
pub(crate) fn output_lines(outputs: &[OutputChange], sty: Sty, show_unchanged: bool) -> Vec<Line> {
    let mut shown: Vec<&OutputChange> = outputs
        .iter()
        .filter(|o| o.action != Action::NoOp)
        .collect();
    shown.sort_by(|a, b| a.name.cmp(&b.name));
    let width = shown.iter().map(|o| key_width(&o.name)).max().unwrap_or(0);
    let mut lines = Vec::new();
    for o in shown {
        let prefix = format!("{:<width$} = ", quote_key(&o.name));
        if o.sensitive {
            // The planner may not even hold the values; the action alone says what happens.
            let (sym, tail) = match o.action {
                Action::Create => (Sym::Create, ""),
                Action::Delete => (Sym::Delete, " -> null"),
                _ => (Sym::Update, ""),
            };
            lines.push(item(0, sym, format!("{prefix}(sensitive value){tail}")));
            continue;
        }
        let differ = Differ {
            sty,
            show_unchanged,
            sparse: false,
            annotate: false,
            fields: &[],
            block_paths: &[],
            block_keys: &[],
            sensitive: &[],
        };
        differ.entry(
            &mut lines,
            0,
            &prefix,
            false,
            &[],
            (
                o.before.as_ref().map(|v| &v.0),
                o.after.as_ref().map(|v| &v.0),
            ),
        );
    }
    lines
}
