//! The plan as Markdown for a pull-request comment: a summary table, drift first, one
//! collapsible section per changed resource holding its text rendering in a ```diff block,
//! outputs, and a Mermaid graph of the changed resources and their dependencies coloured by
//! action. Only constructs that GitHub and GitLab both render are used (tables, `<details>`,
//! fenced `diff` and `mermaid` blocks, Mermaid `classDef`/`class` statements).
//!
//! A comment has a size limit (65,536 characters on GitHub), so [`render`] keeps the text
//! under [`DEFAULT_MAX_BYTES`]: when the whole plan does not fit, the title, the summary, the
//! warnings, the outputs and the graph stay complete, as many sections as fit keep their
//! diffs (drift first), and the others are listed by address without their diff.

use super::model::{Action, Plan, PlanMode, ResourceChange};
use super::render_text::{
    Gutter, Line, Sty, drift_lines, headline, output_lines, resource_lines, shown_changes,
    summary_sentence, write_lines,
};
use crate::addrs::ResourceAddr;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// GitHub's limit on the body of an issue or pull-request comment, in characters.
pub const GITHUB_COMMENT_LIMIT: usize = 65_536;

/// The size [`render`] stays under, in bytes (a byte count is never below the character
/// count GitHub applies). The margin below [`GITHUB_COMMENT_LIMIT`] leaves room for what a
/// CI script adds around the plan: a marker to find its comment again, a heading, a link to
/// the CI run.
pub const DEFAULT_MAX_BYTES: usize = 60_000;

/// Above this many nodes a Mermaid graph is unreadable; the graph then shows one node per
/// resource (and action) instead of one per instance.
const MAX_GRAPH_NODES: usize = 150;
/// Mermaid refuses to draw more than 500 edges by default (`maxEdges`).
const MAX_GRAPH_EDGES: usize = 400;
/// A resource with more instances than this in the plan gives way to the others when not
/// every diff fits.
const MANY: usize = 10;
/// Room kept for the note that says the plan was shortened.
const NOTE_RESERVE: usize = 600;

/// Renders a plan as Markdown that fits in a GitHub comment ([`DEFAULT_MAX_BYTES`]).
pub fn render(plan: &Plan) -> String {
    render_with_limit(plan, Some(DEFAULT_MAX_BYTES))
}

/// Renders a plan as Markdown. With `max_bytes`, a rendering longer than that is shortened:
/// resource and drift sections beyond the budget are listed without their diffs.
pub fn render_with_limit(plan: &Plan, max_bytes: Option<usize>) -> String {
    let parts = Parts::build(plan);
    let full = parts.assemble(None, &parts.outputs, &parts.graph);
    match max_bytes {
        Some(max) if full.len() > max => parts.shortened(max),
        _ => full,
    }
}

/// One collapsible section: its full form (a `<details>` holding the diff) and its brief form
/// (a list item naming it) for when the full form does not fit.
struct Section {
    full: String,
    brief: String,
    /// Which sections keep their diff first when not all fit: drift (0), then deletes and
    /// replacements (1), updates and forgets (2), the rest (3); within each, instances of
    /// resources with many instances (200 flows from one `for_each`) after the others.
    rank: (u8, bool),
}

/// The pieces of the rendering, assembled in order: head (title, summary, warnings), drift
/// sections, resource sections, outputs, graph.
struct Parts {
    head: String,
    drift_intro: String,
    drift: Vec<Section>,
    changes: Vec<Section>,
    outputs: String,
    graph: String,
}

/// How a section appears in a shortened rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Show {
    /// With its diff.
    Full,
    /// Named in the list of sections without a diff.
    Listed,
    /// Only counted (`… and N more`).
    Counted,
}

/// How each drift and resource section appears in a shortened rendering.
struct Selection {
    drift: Vec<Show>,
    changes: Vec<Show>,
}

impl Parts {
    fn build(plan: &Plan) -> Parts {
        let changes = if plan.mode == PlanMode::RefreshOnly {
            Vec::new()
        } else {
            shown_changes(plan)
        };
        let outputs_changed = plan.outputs.iter().any(|o| o.action != Action::NoOp);

        let mut head = String::new();
        let title = match plan.mode {
            PlanMode::Normal => "brickform plan",
            PlanMode::Destroy => "brickform destroy plan",
            PlanMode::RefreshOnly => "brickform refresh-only plan",
        };
        if plan.environment.is_empty() {
            let _ = writeln!(head, "### {title}\n");
        } else {
            let _ = writeln!(head, "### {title} for {}\n", code_span(&plan.environment));
        }
        if changes.is_empty() && !outputs_changed {
            let sentence = match plan.mode {
                PlanMode::RefreshOnly if !plan.drift.is_empty() => {
                    "**Objects have changed outside of brickform.** Applying this refresh-only \
                     plan records the changes below in the state without changing any remote \
                     objects."
                }
                PlanMode::RefreshOnly => {
                    "**No changes.** Your infrastructure still matches the configuration."
                }
                PlanMode::Destroy => "**No changes.** No objects need to be destroyed.",
                PlanMode::Normal => {
                    "**No changes.** Your infrastructure matches the configuration."
                }
            };
            let _ = writeln!(head, "{sentence}\n");
        } else {
            summary_table(&mut head, plan);
        }
        for w in &plan.shown_warnings() {
            let mut lines = w.lines();
            let _ = writeln!(head, "> **Warning:** {}", lines.next().unwrap_or_default());
            let mut detail = lines.peekable();
            if detail.peek().is_some() {
                head.push_str(">\n");
            }
            for l in detail {
                let _ = writeln!(head, "{}", format!("> {l}").trim_end());
            }
            head.push('\n');
        }

        let mut drift_intro = String::new();
        if !plan.drift.is_empty() {
            drift_intro.push_str("#### Changed outside of brickform\n\n");
            if plan.mode == PlanMode::Normal && !changes.is_empty() {
                drift_intro.push_str(
                    "Unless the configuration was changed the same way, the resource changes \
                     below put these objects back.\n\n",
                );
            }
        }
        let drift = plan
            .drift
            .iter()
            .map(|d| {
                let verb = if d.deleted {
                    "has been deleted"
                } else {
                    "has changed"
                };
                let summary = format!(
                    "{} <code>{}</code> {verb}",
                    if d.deleted { "🔴" } else { "🟡" },
                    html(&d.address.to_string())
                );
                section(&summary, &drift_lines(d, Sty::PLAIN), (0, false))
            })
            .collect();
        let mut instances: BTreeMap<&ResourceAddr, usize> = BTreeMap::new();
        for rc in &changes {
            *instances.entry(rc.resource()).or_default() += 1;
        }
        let sections = changes
            .iter()
            .map(|rc| {
                let h = headline(rc);
                let mut summary = format!(
                    "{} <code>{}</code> <code>{}</code> {}",
                    emoji(rc.action),
                    symbol(rc.action),
                    html(&h.address),
                    html(&h.verb)
                );
                for n in &h.notes {
                    let _ = write!(summary, " {}", html(n));
                }
                let rank = match rc.action {
                    Action::Delete | Action::DeleteThenCreate | Action::CreateThenDelete => 1,
                    Action::Update | Action::Forget => 2,
                    _ => 3,
                };
                let many = instances.get(rc.resource()).copied().unwrap_or(0) > MANY;
                let rank = (rank, many);
                section(&summary, &resource_lines(rc, Sty::PLAIN, false), rank)
            })
            .collect();

        let mut outputs = String::new();
        if outputs_changed {
            outputs.push_str("#### Changes to outputs\n\n");
            let mut text = String::new();
            write_lines(
                &mut text,
                &output_lines(&plan.outputs, Sty::PLAIN, false),
                Sty::PLAIN,
                Gutter::Diff,
            );
            fenced(&mut outputs, "diff", &text);
            outputs.push('\n');
        }

        Parts {
            head,
            drift_intro,
            drift,
            changes: sections,
            outputs,
            graph: graph(plan, &changes),
        }
    }

    /// The Markdown text; with a selection, unselected sections are listed without diffs
    /// and a note after the summary says so.
    fn assemble(&self, sel: Option<&Selection>, outputs: &str, graph: &str) -> String {
        let mut out = self.head.clone();
        if let Some(sel) = sel {
            out.push_str(&self.note(sel));
        }
        out.push_str(&self.drift_intro);
        group(
            &mut out,
            &self.drift,
            sel.map(|s| s.drift.as_slice()),
            "more objects changed outside of brickform",
        );
        if !self.changes.is_empty() {
            out.push_str("#### Resource changes\n\n");
        }
        group(
            &mut out,
            &self.changes,
            sel.map(|s| s.changes.as_slice()),
            "more resource changes",
        );
        out.push_str(outputs);
        out.push_str(graph);
        out
    }

    fn note(&self, sel: &Selection) -> String {
        let all = || sel.drift.iter().chain(&sel.changes);
        let total = self.drift.len() + self.changes.len();
        let full = all().filter(|s| **s == Show::Full).count();
        let counted = all().filter(|s| **s == Show::Counted).count();
        let mut note = format!(
            "> **Note:** This plan is too long for one comment. The summary counts every \
             change, but only {full} of {total} sections below are shown with their diff \
             (drift first, then deletions and replacements, then updates); the others are \
             listed by address"
        );
        if counted > 0 {
            let _ = write!(note, ", except {counted} that do not fit either");
        }
        note.push_str(". Run `brickform show` on the saved plan file to see the whole plan.\n\n");
        note
    }

    /// The rendering shortened to `max` bytes (when the head alone is longer, it is kept all
    /// the same: the summary is what a reviewer must see).
    fn shortened(&self, max: usize) -> String {
        let sections = self.drift.len() + self.changes.len();
        let intros = self.drift_intro.len() + "#### Resource changes\n\n".len();
        let wrappers = 2 * 300;
        let fixed = |outputs: &str, graph: &str| {
            self.head.len() + NOTE_RESERVE + intros + wrappers + outputs.len() + graph.len()
        };
        // Outputs, then the graph, give way before the summary does.
        let mut outputs = self.outputs.clone();
        let mut graph = self.graph.clone();
        if fixed(&outputs, &graph) > max && !outputs.is_empty() {
            outputs = "#### Changes to outputs\n\n_Too long to show here._\n\n".to_string();
        }
        if fixed(&outputs, &graph) > max && !graph.is_empty() {
            graph = "#### Dependency graph\n\n_Too long to show here; `brickform graph` \
                     draws the whole graph._\n"
                .to_string();
        }
        let budget = max.saturating_sub(fixed(&outputs, &graph));

        // Every section is listed; then as many as fit get their diff back, drift and
        // destructive changes first. When not even every address fits, those that do are
        // listed (in the same order of importance) and the rest counted.
        let all: Vec<&Section> = self.drift.iter().chain(&self.changes).collect();
        let mut order: Vec<usize> = (0..all.len()).collect();
        order.sort_by_key(|&i| (all[i].rank, i));
        let briefs: usize = all.iter().map(|s| s.brief.len()).sum();
        let mut show = vec![Show::Listed; sections];
        if briefs <= budget {
            let mut free = budget - briefs;
            for &i in &order {
                let extra = all[i].full.len().saturating_sub(all[i].brief.len());
                if extra <= free {
                    show[i] = Show::Full;
                    free -= extra;
                }
            }
        } else {
            let mut free = budget.saturating_sub(2 * 40); // the `… and N more` lines
            for &i in &order {
                if all[i].brief.len() <= free {
                    free -= all[i].brief.len();
                } else {
                    show[i] = Show::Counted;
                }
            }
        }
        let changes = show.split_off(self.drift.len());
        let sel = Selection {
            drift: show,
            changes,
        };
        self.assemble(Some(&sel), &outputs, &graph)
    }
}

fn section(summary: &str, lines: &[Line], rank: (u8, bool)) -> Section {
    let mut full = String::new();
    details(&mut full, summary, lines);
    Section {
        full,
        brief: format!("<li>{summary}</li>\n"),
        rank,
    }
}

/// Writes a group of sections: with a selection, the kept ones in full, then the others in
/// one collapsed list (an HTML block, so addresses need no Markdown escaping).
fn group(out: &mut String, sections: &[Section], sel: Option<&[Show]>, what: &str) {
    let Some(show) = sel else {
        for s in sections {
            out.push_str(&s.full);
        }
        return;
    };
    let with = |which: Show| {
        sections
            .iter()
            .zip(show)
            .filter(move |(_, s)| **s == which)
            .map(|(sec, _)| sec)
    };
    for s in with(Show::Full) {
        out.push_str(&s.full);
    }
    let counted = with(Show::Counted).count();
    let rest = with(Show::Listed).count() + counted;
    if rest == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "<details><summary>{rest} {what}, without their diff</summary>\n<ul>"
    );
    for s in with(Show::Listed) {
        out.push_str(&s.brief);
    }
    if counted > 0 {
        let _ = writeln!(out, "<li>… and {counted} more</li>");
    }
    out.push_str("</ul>\n</details>\n\n");
}

fn summary_table(out: &mut String, plan: &Plan) {
    let s = plan.summary();
    let mut cols = vec![
        ("➕ Add", s.add),
        ("🔄 Change", s.change),
        ("🗑️ Destroy", s.destroy),
        ("📥 Import", s.import),
    ];
    if s.forget > 0 {
        cols.push(("Forget", s.forget));
    }
    if s.moved > 0 {
        cols.push(("Moved", s.moved));
    }
    if !plan.drift.is_empty() {
        cols.push(("⚠️ Changed outside", plan.drift.len()));
    }
    let _ = writeln!(
        out,
        "| {} |",
        cols.iter().map(|(h, _)| *h).collect::<Vec<_>>().join(" | ")
    );
    let _ = writeln!(out, "|{}", "---:|".repeat(cols.len()));
    let _ = writeln!(
        out,
        "| {} |",
        cols.iter()
            .map(|(_, n)| n.to_string())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    // The sentence CI scripts grep for in terraform output.
    let _ = writeln!(out, "\n`{}`\n", summary_sentence(&s, Sty::PLAIN));
}

/// A collapsed section whose body is the resource's text rendering with the action symbols in
/// the diff gutter, so the highlighter colours added and removed lines.
fn details(out: &mut String, summary: &str, lines: &[Line]) {
    let mut text = String::new();
    write_lines(&mut text, lines, Sty::PLAIN, Gutter::Diff);
    let _ = writeln!(out, "<details><summary>{summary}</summary>\n");
    fenced(out, "diff", &text);
    out.push_str("\n</details>\n\n");
}

/// The longest run of backticks in `s`.
fn longest_backtick_run(s: &str) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

/// A fenced code block whose fence is longer than any backtick run inside, so heredoc content
/// holding ``` cannot end it early.
fn fenced(out: &mut String, lang: &str, body: &str) {
    let fence = "`".repeat(longest_backtick_run(body).max(2) + 1);
    let _ = writeln!(out, "{fence}{lang}");
    out.push_str(body);
    if !body.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}");
}

/// A Markdown code span holding `s` exactly: its delimiter is longer than any backtick run
/// inside, padded with spaces when `s` starts or ends with a backtick.
fn code_span(s: &str) -> String {
    let fence = "`".repeat(longest_backtick_run(s) + 1);
    if s.starts_with('`') || s.ends_with('`') {
        format!("{fence} {s} {fence}")
    } else {
        format!("{fence}{s}{fence}")
    }
}

fn emoji(a: Action) -> &'static str {
    match a {
        Action::Create => "🟢",
        Action::Update => "🟡",
        Action::Delete => "🔴",
        Action::DeleteThenCreate | Action::CreateThenDelete => "🟠",
        Action::Read => "🔵",
        Action::Forget => "⚪",
        Action::NoOp => "🔵",
    }
}

fn symbol(a: Action) -> &'static str {
    match a {
        Action::Create => "+",
        Action::Update => "~",
        Action::Delete => "-",
        Action::DeleteThenCreate => "-/+",
        Action::CreateThenDelete => "+/-",
        Action::Read => "&lt;=",
        Action::Forget => ".",
        Action::NoOp => "=",
    }
}

/// The Mermaid classes, in legend order: name, style, legend text.
const CLASSES: [(&str, &str, &str); 7] = [
    (
        "create",
        "fill:#d4f8d4,stroke:#1a7f37,color:#0b3d1a",
        "🟢 create",
    ),
    (
        "update",
        "fill:#fff4c2,stroke:#9a6700,color:#4d3800",
        "🟡 update",
    ),
    (
        "replace",
        "fill:#ffe2c2,stroke:#bc4c00,color:#5c2500",
        "🟠 replace",
    ),
    (
        "delete",
        "fill:#ffd7d5,stroke:#cf222e,color:#5c0b0b",
        "🔴 delete",
    ),
    (
        "read",
        "fill:#ddf4ff,stroke:#0969da,color:#0a3069",
        "🔵 read",
    ),
    (
        "forget",
        "fill:#eaeef2,stroke:#6e7781,color:#24292f",
        "⚪ forget",
    ),
    (
        "noop",
        "fill:#ffffff,stroke:#8c959f,color:#57606a,stroke-dasharray:3 3",
        "dashed: unchanged",
    ),
];

fn class_of(a: Action) -> &'static str {
    match a {
        Action::Create => "create",
        Action::Update => "update",
        Action::Delete => "delete",
        Action::DeleteThenCreate | Action::CreateThenDelete => "replace",
        Action::Read => "read",
        Action::Forget => "forget",
        Action::NoOp => "noop",
    }
}

/// A graph before drawing: nodes (label, class) and edges between their positions.
#[derive(Default)]
struct Graph {
    nodes: Vec<(String, &'static str)>,
    index: BTreeMap<(String, &'static str), usize>,
    edges: BTreeSet<(usize, usize)>,
}

impl Graph {
    fn node(&mut self, key: &str, class: &'static str) -> usize {
        let k = (key.to_string(), class);
        if let Some(&i) = self.index.get(&k) {
            return i;
        }
        self.nodes.push((key.to_string(), class));
        self.index.insert(k, self.nodes.len() - 1);
        self.nodes.len() - 1
    }

    fn fits(&self) -> bool {
        self.nodes.len() <= MAX_GRAPH_NODES && self.edges.len() <= MAX_GRAPH_EDGES
    }

    /// One node per resource and action: `sdp_meta_flow.t` with 200 instances created
    /// becomes one green node labelled with the count.
    fn grouped(&self) -> Graph {
        // A node that is no instance address stands for itself.
        let resource = |addr: &str| {
            ResourceAddr::of_instance(addr).map_or_else(|| addr.to_string(), |r| r.to_string())
        };
        let mut members: BTreeMap<(String, &'static str), Vec<&str>> = BTreeMap::new();
        for (addr, class) in &self.nodes {
            members
                .entry((resource(addr), class))
                .or_default()
                .push(addr);
        }
        let label = |addr: &str, class: &'static str| -> String {
            let base = resource(addr);
            match members.get(&(base.clone(), class)) {
                Some(m) if m.len() > 1 => format!("{base} ({} instances)", m.len()),
                _ => addr.to_string(),
            }
        };
        let mut g = Graph::default();
        for (addr, class) in &self.nodes {
            g.node(&label(addr, class), class);
        }
        for &(from, to) in &self.edges {
            let (fa, fc) = &self.nodes[from];
            let (ta, tc) = &self.nodes[to];
            let f = g.node(&label(fa, fc), fc);
            let t = g.node(&label(ta, tc), tc);
            if f != t {
                g.edges.insert((f, t));
            }
        }
        g
    }
}

/// A Mermaid flowchart of the changed instances and what they depend on; unchanged
/// dependencies appear dashed for context. Arrows point from a resource to what it depends
/// on, as `brickform graph` (and `terraform graph`) draws them. Too many instances are grouped by resource.
fn graph(plan: &Plan, changes: &[&ResourceChange]) -> String {
    if changes.is_empty() {
        return String::new();
    }
    // The object a create_before_destroy put aside is a node of its own.
    let key = |rc: &ResourceChange| {
        if rc.deposed {
            format!("{} (deposed)", rc.address())
        } else {
            rc.address()
        }
    };
    let mut g = Graph::default();
    for rc in changes {
        g.node(&key(rc), class_of(rc.action));
    }
    for rc in changes {
        let to = g.node(&key(rc), class_of(rc.action));
        for dep in &rc.dependencies {
            // A dependency may name a whole resource with count/for_each: it stands for all
            // of its instances in the plan.
            let instances: Vec<&ResourceChange> = plan
                .changes
                .iter()
                .filter(|c| c.addr == *dep || dep.whole() == Some(c.resource()))
                .collect();
            if instances.is_empty() {
                let from = g.node(&dep.to_string(), "noop");
                g.edges.insert((from, to));
            }
            for c in instances {
                let from = g.node(&key(c), class_of(c.action));
                if from != to {
                    g.edges.insert((from, to));
                }
            }
        }
    }
    let mut out = String::from("#### Dependency graph\n\n");
    let mut note = String::new();
    if !g.fits() {
        let grouped = g.grouped();
        if !grouped.fits() {
            let _ = writeln!(
                out,
                "_{} resources and {} dependencies: too many to draw here; `brickform graph` \
                 draws the whole graph._",
                g.nodes.len(),
                g.edges.len()
            );
            return out;
        }
        note = format!(
            " {} instances are grouped into {} nodes, one per resource and action.",
            g.nodes.len(),
            grouped.nodes.len()
        );
        g = grouped;
    }
    out.push_str("```mermaid\nflowchart LR\n");
    for (i, (label, _)) in g.nodes.iter().enumerate() {
        let _ = writeln!(out, "  n{i}[\"{}\"]", mermaid_label(label));
    }
    // Edges are kept as (dependency, dependent); drawn from the dependent.
    for (dependency, dependent) in &g.edges {
        let _ = writeln!(out, "  n{dependent} --> n{dependency}");
    }
    let mut legend = Vec::new();
    for (class, style, text) in CLASSES {
        let members: Vec<String> = g
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, (_, c))| *c == class)
            .map(|(i, _)| format!("n{i}"))
            .collect();
        if members.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  classDef {class} {style}");
        let _ = writeln!(out, "  class {} {class}", members.join(","));
        legend.push(text);
    }
    out.push_str("```\n\n");
    let _ = writeln!(
        out,
        "<sub>{}. Arrows point from a resource to what it depends on, as in `brickform graph`.{note}</sub>",
        legend.join(" · ")
    );
    out
}

/// A Mermaid node label, written inside `["…"]`. Mermaid ends the label at a `"` and turns
/// `#name;` and `#123;` into characters before parsing, so everything but letters, digits
/// and `_.-[]/(), ` becomes an entity: quotes, `#`, `;`, `:`, `%`, backticks, angle
/// brackets, `&` and any non-ASCII character.
fn mermaid_label(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            'a'..='z'
            | 'A'..='Z'
            | '0'..='9'
            | '_'
            | '.'
            | '-'
            | '['
            | ']'
            | '/'
            | '('
            | ')'
            | ','
            | ' ' => out.push(c),
            '"' => out.push_str("#quot;"),
            c => {
                let _ = write!(out, "#{};", u32::from(c));
            }
        }
    }
    out
}

fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
