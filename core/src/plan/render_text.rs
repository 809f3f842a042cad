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

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;

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
            c.managed.join(", ")
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

fn sensitive_paths(declared: &[Vec<PathStep>], fields: &[FieldChange]) -> Vec<Vec<PathStep>> {
    let mut v = declared.to_vec();
    v.extend(
        fields
            .iter()
            .filter(|f| f.sensitive)
            .map(|f| f.path.clone()),
    );
    v
}

fn key_width(k: &str) -> usize {
    quote_key(k).chars().count()
}

/// Attributes that identify an object stay visible in updates, so a reviewer knows which
/// object a diff is about.
fn is_identifying(key: &str) -> bool {
    key == "id" || key == "name"
}

fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

/// Whether two values render the same: an object attribute that is null is not shown, so
/// `{a = 1, b = null}` and `{a = 1}` are the same to a reader.
fn same_shown(a: Option<&Value>, b: Option<&Value>) -> bool {
    // Empty nested blocks are not shown either.
    fn shown(v: Option<&Value>) -> Option<&Value> {
        present(v).filter(|v| !matches!(v, Value::List(l) if l.is_empty()))
    }
    match (shown(a), shown(b)) {
        (None, None) => true,
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            x.iter().all(|(k, v)| same_shown(Some(v), y.get(k)))
                && y.iter()
                    .all(|(k, v)| x.contains_key(k) || same_shown(None, Some(v)))
        }
        (Some(Value::List(x)), Some(Value::List(y))) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_shown(Some(p), Some(q)))
        }
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// Longest value shown in a trailing `# drift:`/`# live:` note before it is cut.
const NOTE_VALUE_MAX: usize = 60;

fn short_value(v: Option<&Value>) -> String {
    let s = v
        .map(|v| v.to_string())
        .unwrap_or_else(|| "null".to_string());
    if s.chars().count() > NOTE_VALUE_MAX {
        let cut: String = s.chars().take(NOTE_VALUE_MAX).collect();
        format!("{cut}…")
    } else {
        s
    }
}

/// A node's values after applying its field change, if any.
struct Resolved<'a> {
    /// What is shown on the left of `->`; the live value for drift that is put back.
    old: Option<&'a Value>,
    new: Option<&'a Value>,
    forces: bool,
    notes: Vec<String>,
}

/// Walks a `before`/`after` pair and writes Terraform-style lines.
struct Differ<'a> {
    sty: Sty,
    show_unchanged: bool,
    /// Only the changed fields are known (drift): no hidden counts and no list context.
    sparse: bool,
    /// Field notes (`# forces replacement`, drift, live) are written.
    annotate: bool,
    fields: &'a [FieldChange],
    block_paths: &'a [Vec<String>],
    block_keys: &'a [(Vec<String>, String)],
    sensitive: &'a [Vec<PathStep>],
}

impl<'a> Differ<'a> {
    fn field_at(&self, path: &[PathStep]) -> Option<&'a FieldChange> {
        if !self.annotate {
            return None;
        }
        self.fields.iter().find(|f| f.path == path)
    }

    fn is_sensitive(&self, path: &[PathStep]) -> bool {
        self.sensitive.iter().any(|s| path_within(path, s))
    }

    /// Whether `key` is the key attribute of the keyed block at `path` (a task's task_key).
    fn is_block_key(&self, path: &[PathStep], key: &str) -> bool {
        let keys: Vec<&str> = path
            .iter()
            .filter_map(|s| match s {
                PathStep::Key(k) => Some(k.as_str()),
                PathStep::Index(_) => None,
            })
            .collect();
        self.block_keys.iter().any(|(p, k)| {
            k == key && p.len() == keys.len() && p.iter().zip(&keys).all(|(x, y)| x == y)
        })
    }

    /// The key attribute of the keyed block at `path`, if it is one.
    fn block_key(&self, path: &[PathStep]) -> Option<&str> {
        let keys: Vec<&str> = path
            .iter()
            .filter_map(|s| match s {
                PathStep::Key(k) => Some(k.as_str()),
                PathStep::Index(_) => None,
            })
            .collect();
        self.block_keys
            .iter()
            .find(|(p, _)| p.len() == keys.len() && p.iter().zip(&keys).all(|(x, y)| x == y))
            .map(|(_, k)| k.as_str())
    }

    fn is_block(&self, path: &[PathStep]) -> bool {
        let keys = path.iter().filter_map(|s| match s {
            PathStep::Key(k) => Some(k.as_str()),
            PathStep::Index(_) => None,
        });
        let keys: Vec<&str> = keys.collect();
        self.block_paths
            .iter()
            .any(|b| b.len() == keys.len() && b.iter().zip(&keys).all(|(x, y)| x == y))
    }

    fn resolve<'v>(
        &self,
        path: &[PathStep],
        before: Option<&'v Value>,
        after: Option<&'v Value>,
    ) -> Resolved<'v>
    where
        'a: 'v,
    {
        let mut r = Resolved {
            old: present(before),
            new: present(after),
            forces: false,
            notes: Vec::new(),
        };
        let Some(f) = self.field_at(path) else {
            return r;
        };
        r.old = present(f.before.as_ref().map(|v| &v.0));
        r.new = present(f.after.as_ref().map(|v| &v.0));
        r.forces = f.forces_replacement;
        let live = f.live.as_ref().map(|v| &v.0);
        let live_p = present(live);
        let hide = self.is_sensitive(path);
        if f.reason == FieldReason::Drift {
            if r.old == r.new {
                // The plan puts the last applied value back: the change a reviewer cares
                // about is from the live value.
                if live_p != r.old {
                    r.old = live_p;
                    r.notes.push("drift: changed outside brickform".to_string());
                }
            } else if live_p != r.old && live_p != r.new && !hide {
                r.notes.push(format!(
                    "drift: changed to {} outside brickform",
                    short_value(live)
                ));
            } else {
                r.notes.push("drift: changed outside brickform".to_string());
            }
        } else if let Some(l) = live
            && present(Some(l)) != r.old
            && present(Some(l)) != r.new
            && !hide
        {
            r.notes.push(format!("live: {}", short_value(Some(l))));
        }
        r
    }

    /// True when the node (or anything under it) changes.
    fn changed(&self, path: &[PathStep], before: Option<&Value>, after: Option<&Value>) -> bool {
        let r = self.resolve(path, before, after);
        if !same_shown(r.old, r.new) {
            return true;
        }
        // A hidden value that changed looks the same before and after.
        if self
            .fields
            .iter()
            .any(|f| f.sensitive && f.path == path && f.before.is_some() && f.after.is_some())
        {
            return true;
        }
        // A drift field deeper down can differ even where `before` equals `after`.
        self.annotate
            && self.fields.iter().any(|f| {
                f.path.len() > path.len()
                    && f.path.starts_with(path)
                    && self.changed(&f.path, None, None)
            })
    }

    fn trailer(&self, r: &Resolved) -> String {
        let mut parts = Vec::new();
        if r.forces && self.annotate {
            parts.push(self.sty.paint(RED, "forces replacement"));
        }
        parts.extend(r.notes.iter().cloned());
        if parts.is_empty() {
            String::new()
        } else {
            format!(" # {}", parts.join(", "))
        }
    }

    /// One attribute, map entry or list element: `prefix` is `key = ` (aligned) or empty for
    /// list elements, which also end in a comma and never say `-> null`.
    fn entry(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        prefix: &str,
        list_elem: bool,
        path: &[PathStep],
        (before, after): Sides<'_>,
    ) {
        let r = self.resolve(path, before, after);
        let (old, new) = (r.old, r.new);
        if old.is_none() && new.is_none() {
            return;
        }
        let mut sym = Sym::of_change(old, new);
        if sym == Sym::None && (!r.notes.is_empty() || self.changed(path, before, after)) {
            sym = Sym::Update;
        }
        let trailer = self.trailer(&r);
        let comma = if list_elem { "," } else { "" };
        let null = if new.is_none() && !list_elem {
            " -> null"
        } else {
            ""
        };
        let tail = format!("{null}{comma}");

        if self.is_sensitive(path) {
            out.push(item(
                depth,
                sym,
                format!("{prefix}(sensitive value){tail}{trailer}"),
            ));
            return;
        }
        if new == Some(&Value::Unknown) {
            match old {
                Some(o @ (Value::List(_) | Value::Object(_))) => {
                    let close = format!(" -> (known after apply){comma}");
                    let ends = Ends {
                        sym: Sym::Update,
                        trailer: &trailer,
                        tail: &close,
                    };
                    self.container(out, depth, ends, prefix, path, (Some(o), None));
                }
                Some(o) => out.push(item(
                    depth,
                    sym,
                    format!("{prefix}{o} -> (known after apply){comma}{trailer}"),
                )),
                None => out.push(item(
                    depth,
                    sym,
                    format!("{prefix}(known after apply){comma}{trailer}"),
                )),
            }
            return;
        }
        let ends = Ends {
            sym,
            trailer: &trailer,
            tail: &tail,
        };
        let old_s = old.and_then(Value::as_str);
        let new_s = new.and_then(Value::as_str);
        let strings = (old.is_none() || old_s.is_some()) && (new.is_none() || new_s.is_some());
        if strings {
            let (oj, nj) = (old_s.map(json_container), new_s.map(json_container));
            let json_ok = |side: &Option<Option<Value>>| !matches!(side, Some(None));
            if json_ok(&oj) && json_ok(&nj) {
                let (oj, nj) = (oj.flatten(), nj.flatten());
                let parsed = (oj.as_ref(), nj.as_ref());
                self.jsonencode(out, depth, ends, prefix, (old_s, new_s), parsed);
                return;
            }
            if old_s.is_some_and(|s| s.contains('\n')) || new_s.is_some_and(|s| s.contains('\n')) {
                self.heredoc(out, depth, ends, prefix, (old_s, new_s));
                return;
            }
        }
        let is_container = |v: Option<&Value>| matches!(v, Some(Value::List(_) | Value::Object(_)));
        let same_shape = match (old, new) {
            (Some(Value::List(_)), Some(Value::List(_)))
            | (Some(Value::Object(_)), Some(Value::Object(_))) => true,
            (None, v) | (v, None) => is_container(v),
            _ => false,
        };
        if same_shape {
            self.container(out, depth, ends, prefix, path, (old, new));
        } else if is_container(old) || is_container(new) {
            // The type changes (a string becomes a list, say): show it as the old value
            // going away and the new one arriving, each rendered in full.
            let mut gone = self.forced(depth, prefix, list_elem, path, (old, None));
            if let Some(Line::Item { text, .. }) = gone.first_mut() {
                text.push_str(&trailer);
            }
            out.extend(gone);
            out.extend(self.forced(depth, prefix, list_elem, path, (None, new)));
        } else {
            let text = match (old, new) {
                (Some(o), Some(n)) if sym == Sym::Update => format!("{o} -> {n}"),
                (Some(o), None) => format!("{o}"),
                (_, Some(n)) => format!("{n}"),
                (None, None) => String::new(),
            };
            let ws = whitespace_note(old_s, new_s);
            out.push(item(
                depth,
                sym,
                format!("{prefix}{text}{tail}{trailer}{ws}"),
            ));
        }
    }

    /// The lines of [`Differ::entry`] with the values given, bypassing the field lookup.
    fn forced(
        &self,
        depth: usize,
        prefix: &str,
        list_elem: bool,
        path: &[PathStep],
        sides: Sides<'_>,
    ) -> Vec<Line> {
        let plain = Differ {
            annotate: false,
            ..*self
        };
        let mut lines = Vec::new();
        plain.entry(&mut lines, depth, prefix, list_elem, path, sides);
        lines
    }

    /// A map/object (`{ … }`) or list (`[ … ]`) attribute value.
    fn container(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        ends: Ends<'_>,
        prefix: &str,
        path: &[PathStep],
        (old, new): Sides<'_>,
    ) {
        let Ends {
            sym,
            trailer,
            tail: close,
        } = ends;
        let is_list = matches!(old, Some(Value::List(_))) || matches!(new, Some(Value::List(_)));
        let (open, shut) = if is_list { ("[", "]") } else { ("{", "}") };
        let empty = |v: Option<&Value>| match v {
            Some(Value::List(l)) => l.is_empty(),
            Some(Value::Object(o)) => o.is_empty(),
            _ => true,
        };
        if empty(old) && empty(new) {
            out.push(item(
                depth,
                sym,
                format!("{prefix}{open}{shut}{close}{trailer}"),
            ));
            return;
        }
        out.push(item(depth, sym, format!("{prefix}{open}{trailer}")));
        if is_list {
            let none: &[Value] = &[];
            let o = old.and_then(Value::as_list).unwrap_or(none);
            let n = new.and_then(Value::as_list).unwrap_or(none);
            self.list_body(out, depth + 1, path, o, n);
        } else {
            self.map_body(
                out,
                depth + 1,
                path,
                old.and_then(Value::as_object),
                new.and_then(Value::as_object),
            );
        }
        out.push(item(depth, Sym::None, format!("{shut}{close}")));
    }

    fn map_body(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        path: &[PathStep],
        old: Option<&Object>,
        new: Option<&Object>,
    ) {
        let keys = sorted_keys(old, new);
        let mut shown = Vec::new();
        let mut hidden = 0;
        for k in keys {
            let p = child(path, PathStep::Key(k.to_string()));
            let (b, a) = (old.and_then(|o| o.get(k)), new.and_then(|o| o.get(k)));
            if present(b).is_none() && present(a).is_none() && !self.changed(&p, b, a) {
                continue;
            }
            if self.changed(&p, b, a) || self.show_unchanged {
                shown.push((k, p, b, a));
            } else {
                hidden += 1;
            }
        }
        let width = shown.iter().map(|(k, ..)| key_width(k)).max().unwrap_or(0);
        for (k, p, b, a) in shown {
            let prefix = format!("{:<width$} = ", quote_key(k));
            self.entry(out, depth, &prefix, false, &p, (b, a));
        }
        if hidden > 0 && !self.sparse {
            out.push(item(
                depth,
                Sym::None,
                format!(
                    "# ({} hidden)",
                    plural(hidden, "unchanged element", "unchanged elements")
                ),
            ));
        }
    }

    fn list_body(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        path: &[PathStep],
        old: &[Value],
        new: &[Value],
    ) {
        let pairs = pair_elements(old, new, self.block_key(path));
        let changed: Vec<bool> = pairs
            .iter()
            .map(|(b, a, i)| self.changed(&child(path, PathStep::Index(*i)), *b, *a))
            .collect();
        let primitive = old
            .iter()
            .chain(new)
            .all(|v| !matches!(v, Value::List(_) | Value::Object(_)));
        let mut hidden_run = 0;
        let flush = |out: &mut Vec<Line>, n: &mut usize| {
            if *n > 0 && !self.sparse {
                out.push(item(
                    depth,
                    Sym::None,
                    format!(
                        "# ({} hidden)",
                        plural(*n, "unchanged element", "unchanged elements")
                    ),
                ));
            }
            *n = 0;
        };
        for (i, (b, a, idx)) in pairs.iter().enumerate() {
            // Unchanged neighbours of a changed primitive element stay as context, as in
            // Terraform, so an insertion shows where it lands.
            let context = primitive
                && !self.sparse
                && ((i > 0 && changed[i - 1]) || changed.get(i + 1).copied().unwrap_or(false));
            if changed[i] || self.show_unchanged || context {
                flush(out, &mut hidden_run);
                self.entry(
                    out,
                    depth,
                    "",
                    true,
                    &child(path, PathStep::Index(*idx)),
                    (*b, *a),
                );
            } else if present(*b).is_some() {
                hidden_run += 1;
            }
        }
        flush(out, &mut hidden_run);
    }

    /// The body of a resource or nested block: attributes (aligned), then nested blocks.
    fn block_body(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        path: &[PathStep],
        old: Option<&Object>,
        new: Option<&Object>,
    ) {
        let start = out.len();
        let keys = sorted_keys(old, new);
        let (blocks, attrs): (Vec<&str>, Vec<&str>) = keys
            .into_iter()
            .partition(|k| self.is_block(&child(path, PathStep::Key(k.to_string()))));

        let mut shown = Vec::new();
        let mut hidden_attrs = 0;
        for k in attrs {
            let p = child(path, PathStep::Key(k.to_string()));
            let (b, a) = (old.and_then(|o| o.get(k)), new.and_then(|o| o.get(k)));
            let changed = self.changed(&p, b, a);
            if present(b).is_none() && present(a).is_none() && !changed {
                continue;
            }
            let identifying = is_identifying(k) || self.is_block_key(path, k);
            if changed || self.show_unchanged || (identifying && !self.sparse) {
                shown.push((k, p, b, a));
            } else {
                hidden_attrs += 1;
            }
        }
        let width = shown.iter().map(|(k, ..)| key_width(k)).max().unwrap_or(0);
        for (k, p, b, a) in shown {
            let prefix = format!("{:<width$} = ", quote_key(k));
            self.entry(out, depth, &prefix, false, &p, (b, a));
        }
        if hidden_attrs > 0 && !self.sparse {
            out.push(item(
                depth,
                Sym::None,
                format!(
                    "# ({} hidden)",
                    plural(hidden_attrs, "unchanged attribute", "unchanged attributes")
                ),
            ));
        }

        let mut hidden_blocks = 0;
        for k in blocks {
            let p = child(path, PathStep::Key(k.to_string()));
            let (b, a) = (old.and_then(|o| o.get(k)), new.and_then(|o| o.get(k)));
            // A field change may name the whole block (drift on `task`, say); its values and
            // notes apply to every element shown.
            let group = self.resolve(&p, b, a);
            let group_trailer = self.trailer(&group);
            let (b, a) = if self.field_at(&p).is_some() {
                (group.old, group.new)
            } else {
                (b, a)
            };
            let elems: Vec<(Option<&Value>, Option<&Value>, Vec<PathStep>)> =
                match (present(b), present(a)) {
                    (None | Some(Value::List(_)), None | Some(Value::List(_))) => {
                        let none: &[Value] = &[];
                        let bl = present(b).and_then(Value::as_list).unwrap_or(none);
                        let al = present(a).and_then(Value::as_list).unwrap_or(none);
                        pair_elements(bl, al, self.block_key(&p))
                            .into_iter()
                            .map(|(x, y, i)| (x, y, child(&p, PathStep::Index(i))))
                            .collect()
                    }
                    (None | Some(Value::Object(_)), None | Some(Value::Object(_))) => {
                        vec![(b, a, p.clone())]
                    }
                    _ => {
                        // Not block-shaped (unknown, say): show it as an attribute.
                        if out.len() > start {
                            out.push(Line::Blank);
                        }
                        let prefix = format!("{} = ", quote_key(k));
                        self.entry(out, depth, &prefix, false, &p, (b, a));
                        continue;
                    }
                };
            for (eb, ea, ep) in elems {
                if present(eb).is_none() && present(ea).is_none() {
                    continue;
                }
                if !self.changed(&ep, eb, ea) && !self.show_unchanged {
                    hidden_blocks += 1;
                    continue;
                }
                if out.len() > start {
                    out.push(Line::Blank);
                }
                let r = if ep == p {
                    Resolved {
                        old: present(eb),
                        new: present(ea),
                        forces: false,
                        notes: Vec::new(),
                    }
                } else {
                    self.resolve(&ep, eb, ea)
                };
                let trailer = format!("{group_trailer}{}", self.trailer(&r));
                self.block(out, depth, k, &ep, (r.old, r.new), &trailer);
            }
        }
        if hidden_blocks > 0 && !self.sparse {
            if out.len() > start {
                out.push(Line::Blank);
            }
            out.push(item(
                depth,
                Sym::None,
                format!(
                    "# ({} hidden)",
                    plural(hidden_blocks, "unchanged block", "unchanged blocks")
                ),
            ));
        }
    }

    /// One nested block: `~ task {` … `}`, with its values already resolved.
    fn block(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        name: &str,
        path: &[PathStep],
        (old, new): Sides<'_>,
        trailer: &str,
    ) {
        let mut sym = Sym::of_change(old, new);
        if sym == Sym::None && (self.changed(path, old, new) || !trailer.is_empty()) {
            sym = Sym::Update;
        }
        out.push(item(depth, sym, format!("{name} {{{trailer}")));
        if self.is_sensitive(path) {
            out.push(item(
                depth + 1,
                Sym::None,
                "# At least one attribute in this block is (or was) sensitive,".to_string(),
            ));
            out.push(item(
                depth + 1,
                Sym::None,
                "# so its contents will not be displayed.".to_string(),
            ));
        } else {
            self.block_body(
                out,
                depth + 1,
                path,
                old.and_then(Value::as_object),
                new.and_then(Value::as_object),
            );
        }
        out.push(item(depth, Sym::None, "}".to_string()));
    }

    /// A multi-line string as a heredoc; updates show a line diff.
    fn heredoc(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        Ends { sym, trailer, tail }: Ends<'_>,
        prefix: &str,
        (old, new): (Option<&str>, Option<&str>),
    ) {
        let ws = whitespace_note(old, new);
        out.push(item(depth, sym, format!("{prefix}<<-EOT{trailer}{ws}")));
        match (old, new) {
            (Some(o), Some(n)) if o != n => self.line_diff(out, depth + 1, o, n),
            (Some(s), _) | (None, Some(s)) => {
                for l in s.lines() {
                    out.push(item(depth + 1, Sym::None, l.to_string()));
                }
            }
            (None, None) => {}
        }
        out.push(item(depth, Sym::None, format!("EOT{tail}")));
    }

    fn line_diff(&self, out: &mut Vec<Line>, depth: usize, old: &str, new: &str) {
        let diff = TextDiff::configure()
            .algorithm(Algorithm::Patience)
            .diff_lines(old, new);
        let context = 2;
        let groups = if self.show_unchanged {
            vec![diff.ops().to_vec()]
        } else {
            diff.grouped_ops(context)
        };
        let total = diff.old_len();
        let hidden_line = |n: usize| {
            item(
                depth,
                Sym::None,
                format!(
                    "# ({} hidden)",
                    plural(n, "unchanged line", "unchanged lines")
                ),
            )
        };
        let mut at = 0;
        for group in &groups {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            if first.old_range().start > at {
                out.push(hidden_line(first.old_range().start - at));
            }
            for op in group {
                for change in diff.iter_inline_changes(op) {
                    let sym = match change.tag() {
                        ChangeTag::Delete => Sym::Delete,
                        ChangeTag::Insert => Sym::Create,
                        ChangeTag::Equal => Sym::None,
                    };
                    let emph = if sym == Sym::Delete { RED } else { GREEN };
                    let mut text = String::new();
                    for (emphasized, s) in change.iter_strings_lossy() {
                        let s = s.trim_end_matches(['\n', '\r']);
                        if emphasized && self.sty.color {
                            let _ = write!(text, "{UNDERLINE}{emph}{s}{RESET}");
                        } else {
                            text.push_str(s);
                        }
                    }
                    out.push(item(depth, sym, text));
                }
            }
            at = last.old_range().end;
        }
        if total > at {
            out.push(hidden_line(total - at));
        }
    }

    /// A string holding a JSON object or array, shown as `jsonencode(…)` with a structural diff.
    fn jsonencode(
        &self,
        out: &mut Vec<Line>,
        depth: usize,
        Ends { sym, trailer, tail }: Ends<'_>,
        prefix: &str,
        (old_s, new_s): (Option<&str>, Option<&str>),
        (old, new): Sides<'_>,
    ) {
        let ws = if old.is_some() && old == new && old_s != new_s {
            " # whitespace changes"
        } else {
            ""
        };
        out.push(item(
            depth,
            sym,
            format!("{prefix}jsonencode({trailer}{ws}"),
        ));
        let inner = Differ {
            sty: self.sty,
            show_unchanged: self.show_unchanged,
            sparse: self.sparse,
            annotate: false,
            fields: &[],
            block_paths: &[],
            block_keys: &[],
            sensitive: &[],
        };
        let mut lines = Vec::new();
        inner.entry(&mut lines, depth + 1, "", false, &[], (old, new));
        if lines.is_empty()
            && let Some(v) = old
        {
            // Equal documents: show the outermost brackets with the contents counted.
            let ends = Ends {
                sym: Sym::None,
                trailer: "",
                tail: "",
            };
            inner.container(&mut lines, depth + 1, ends, "", &[], (Some(v), Some(v)));
        }
        // The document as a whole is added or removed with the attribute; its own symbol
        // would only repeat that.
        if matches!(sym, Sym::Create | Sym::Delete)
            && let Some(Line::Item { sym: s, .. }) = lines.first_mut()
        {
            *s = Sym::None;
        }
        out.extend(lines);
        out.push(item(depth, Sym::None, format!("){tail}")));
    }
}

/// A value's two sides: what it was, what it becomes (absent on one side when it is added
/// or removed).
type Sides<'v> = (Option<&'v Value>, Option<&'v Value>);

/// How a value's lines open and close: its change symbol, the note after its first line,
/// and what follows its last (` -> null`, a list element's comma).
#[derive(Clone, Copy)]
struct Ends<'a> {
    sym: Sym,
    trailer: &'a str,
    tail: &'a str,
}

fn whitespace_note(old: Option<&str>, new: Option<&str>) -> &'static str {
    match (old, new) {
        (Some(o), Some(n)) if o != n && o.split_whitespace().eq(n.split_whitespace()) => {
            " # whitespace changes"
        }
        _ => "",
    }
}

fn json_container(s: &str) -> Option<Value> {
    let t = s.trim_start();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return None;
    }
    serde_json::from_str::<serde_json::Value>(s)
        .ok()
        .filter(|j| j.is_object() || j.is_array())
        .map(|j| Value::from_json(&j))
}

fn child(path: &[PathStep], step: PathStep) -> Vec<PathStep> {
    let mut p = path.to_vec();
    p.push(step);
    p
}

/// Keys of both sides, sorted the way Terraform sorts attributes and map keys.
fn sorted_keys<'o>(old: Option<&'o Object>, new: Option<&'o Object>) -> Vec<&'o str> {
    let mut keys: Vec<&str> = old
        .into_iter()
        .chain(new)
        .flat_map(|o| o.keys().map(String::as_str))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Lines up the elements of two lists: equal runs pair up, and inside a changed run objects
/// pair in order (an edited block) — or, for keyed blocks (`key` names the key attribute),
/// by their key, so a block of one key is never shown turning into another's — while other
/// elements are removed and added. Each pair carries the index its path uses (the new one
/// when there is a new element).
type ElemPair<'v> = (Option<&'v Value>, Option<&'v Value>, usize);

fn pair_elements<'v>(
    old: &'v [Value],
    new: &'v [Value],
    key_attr: Option<&str>,
) -> Vec<ElemPair<'v>> {
    // Compared by content, whatever the order of object keys (a JSON document read back
    // from state may list them differently from a fresh rendering).
    fn key(v: &Value) -> String {
        match v {
            Value::Object(o) => {
                let mut entries: Vec<(&String, String)> =
                    o.iter().map(|(k, v)| (k, key(v))).collect();
                entries.sort();
                format!("{entries:?}")
            }
            Value::List(l) => format!("{:?}", l.iter().map(key).collect::<Vec<_>>()),
            v => format!("{v:?}"),
        }
    }
    let ok: Vec<String> = old.iter().map(key).collect();
    let nk: Vec<String> = new.iter().map(key).collect();
    let mut pairs = Vec::new();
    for op in similar::capture_diff_slices(Algorithm::Myers, &ok, &nk) {
        let (tag, or, nr) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => {
                for (i, j) in or.zip(nr) {
                    pairs.push((Some(&old[i]), Some(&new[j]), j));
                }
            }
            DiffTag::Delete => pairs.extend(or.map(|i| (Some(&old[i]), None, i))),
            DiffTag::Insert => pairs.extend(nr.map(|j| (None, Some(&new[j]), j))),
            DiffTag::Replace if key_attr.is_some() => {
                let key_of = |v: &Value| {
                    v.as_object()
                        .and_then(|o| o.get(key_attr.unwrap_or_default()))
                        .map(key)
                };
                let olds: Vec<usize> = or.collect();
                let mut news: Vec<Option<usize>> = nr.map(Some).collect();
                let mut run: Vec<(String, ElemPair<'v>)> = Vec::new();
                for i in olds {
                    let k = key_of(&old[i]);
                    let found = news
                        .iter_mut()
                        .find(|j| j.is_some_and(|j| k.is_some() && key_of(&new[j]) == k))
                        .and_then(Option::take);
                    let sort_key = k.unwrap_or_default();
                    match found {
                        Some(j) => run.push((sort_key, (Some(&old[i]), Some(&new[j]), j))),
                        None => run.push((sort_key, (Some(&old[i]), None, i))),
                    }
                }
                for j in news.into_iter().flatten() {
                    run.push((
                        key_of(&new[j]).unwrap_or_default(),
                        (None, Some(&new[j]), j),
                    ));
                }
                // Keyed blocks are sorted by key: the run is shown in that order.
                run.sort_by(|a, b| a.0.cmp(&b.0));
                pairs.extend(run.into_iter().map(|(_, p)| p));
            }
            DiffTag::Replace => {
                let mut or = or.peekable();
                let mut nr = nr.peekable();
                while let (Some(&i), Some(&j)) = (or.peek(), nr.peek()) {
                    if !(matches!(old[i], Value::Object(_)) && matches!(new[j], Value::Object(_))) {
                        break;
                    }
                    pairs.push((Some(&old[i]), Some(&new[j]), j));
                    or.next();
                    nr.next();
                }
                pairs.extend(or.map(|i| (Some(&old[i]), None, i)));
                pairs.extend(nr.map(|j| (None, Some(&new[j]), j)));
            }
        }
    }
    pairs
}
