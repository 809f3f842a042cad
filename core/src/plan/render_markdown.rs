//! The plan as Markdown for a pull-request comment: a summary table, drift, one collapsible
//! section per changed resource holding its text rendering in a ```diff block, outputs, and a
//! Mermaid graph of the changed resources. Only constructs that GitHub and GitLab both render
//! are used (tables, `<details>`, fenced `diff` and `mermaid` blocks, Mermaid `class`
//! statements).

use super::model::{Action, Plan, PlanMode, ResourceChange};
use super::render_text::{
    Gutter, Line, Sty, drift_lines, headline, output_lines, resource_lines, shown_changes,
    summary_sentence, write_lines,
};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Above this many nodes a Mermaid graph is unreadable (and GitHub refuses large ones).
const MAX_GRAPH_NODES: usize = 150;

/// Renders a plan as Markdown.
pub fn render(plan: &Plan) -> String {
    let mut out = String::new();
    let title = match plan.mode {
        PlanMode::Normal => "brickform plan",
        PlanMode::Destroy => "brickform destroy plan",
        PlanMode::RefreshOnly => "brickform refresh-only plan",
    };
    if plan.environment.is_empty() {
        let _ = writeln!(out, "### {title}\n");
    } else {
        let _ = writeln!(out, "### {title} for `{}`\n", code_text(&plan.environment));
    }

    let changes = if plan.mode == PlanMode::RefreshOnly {
        Vec::new()
    } else {
        shown_changes(plan)
    };
    let outputs_changed = plan.outputs.iter().any(|o| o.action != Action::NoOp);

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
            PlanMode::Normal => "**No changes.** Your infrastructure matches the configuration.",
        };
        let _ = writeln!(out, "{sentence}\n");
    } else {
        summary_table(&mut out, plan);
    }

    for w in &plan.warnings {
        let mut lines = w.lines();
        let _ = writeln!(out, "> **Warning:** {}", lines.next().unwrap_or_default());
        let mut detail = lines.peekable();
        if detail.peek().is_some() {
            out.push_str(
                ">
",
            );
        }
        for l in detail {
            let _ = writeln!(out, "{}", format!("> {l}").trim_end());
        }
        out.push('\n');
    }

    if !plan.drift.is_empty() {
        out.push_str("#### Changed outside of brickform\n\n");
        for d in &plan.drift {
            let verb = if d.deleted {
                "has been deleted"
            } else {
                "has changed"
            };
            let summary = format!(
                "{} <code>{}</code> {verb}",
                if d.deleted { "🔴" } else { "🟡" },
                html(&d.address)
            );
            details(&mut out, &summary, &drift_lines(d, Sty::PLAIN));
        }
    }

    if !changes.is_empty() {
        out.push_str("#### Resource changes\n\n");
        for rc in &changes {
            let h = headline(rc);
            let mut summary = format!(
                "{} <code>{}</code> <code>{}</code> {}",
                emoji(rc),
                symbol(rc.action),
                html(&h.address),
                html(&h.verb)
            );
            for n in &h.notes {
                let _ = write!(summary, " {}", html(n));
            }
            details(&mut out, &summary, &resource_lines(rc, Sty::PLAIN, false));
        }
    }

    if outputs_changed {
        out.push_str("#### Changes to outputs\n\n");
        let mut text = String::new();
        write_lines(
            &mut text,
            &output_lines(&plan.outputs, Sty::PLAIN, false),
            Sty::PLAIN,
            Gutter::Diff,
        );
        fenced(&mut out, "diff", &text);
        out.push('\n');
    }

    graph(&mut out, plan, &changes);
    out
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

/// A fenced code block whose fence is longer than any backtick run inside, so heredoc content
/// holding ``` cannot end it early.
fn fenced(out: &mut String, lang: &str, body: &str) {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest.max(2) + 1);
    let _ = writeln!(out, "{fence}{lang}");
    out.push_str(body);
    if !body.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}");
}

fn emoji(rc: &ResourceChange) -> &'static str {
    match rc.action {
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

/// A Mermaid flowchart of the changed instances and what they depend on; unchanged
/// dependencies appear uncoloured for context. Edges point from a dependency to its
/// dependent, the order in which apply creates them.
fn graph(out: &mut String, plan: &Plan, changes: &[&ResourceChange]) {
    if changes.is_empty() {
        return;
    }
    let mut node_list: Vec<(String, &'static str)> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut push = |addr: &str, class: &'static str, list: &mut Vec<(String, &'static str)>| {
        if let Some(&i) = index.get(addr) {
            return i;
        }
        list.push((addr.to_string(), class));
        index.insert(addr.to_string(), list.len() - 1);
        list.len() - 1
    };
    for rc in changes {
        push(&rc.address, class_of(rc.action), &mut node_list);
    }
    let mut edges: Vec<(usize, usize)> = Vec::new();
    for rc in changes {
        let to = push(&rc.address, class_of(rc.action), &mut node_list);
        for dep in &rc.dependencies {
            // A dependency may name a whole resource with count/for_each: it stands for all
            // of its instances in the plan.
            let instances: Vec<&ResourceChange> = plan
                .changes
                .iter()
                .filter(|c| c.address == *dep || c.resource_address() == dep)
                .collect();
            if instances.is_empty() {
                let from = push(dep, "noop", &mut node_list);
                edges.push((from, to));
            }
            for c in instances {
                let from = push(&c.address, class_of(c.action), &mut node_list);
                edges.push((from, to));
            }
        }
    }
    if node_list.len() > MAX_GRAPH_NODES {
        let _ = writeln!(
            out,
            "#### Dependency graph\n\n_{} resources: too many to draw._\n",
            node_list.len()
        );
        return;
    }
    edges.sort_unstable();
    edges.dedup();
    out.push_str("#### Dependency graph\n\n```mermaid\nflowchart LR\n");
    for (i, (addr, _)) in node_list.iter().enumerate() {
        let _ = writeln!(out, "  n{i}[\"{}\"]", mermaid_label(addr));
    }
    for (from, to) in &edges {
        let _ = writeln!(out, "  n{from} --> n{to}");
    }
    let styles = [
        ("create", "fill:#d4f8d4,stroke:#1a7f37,color:#0b3d1a"),
        ("update", "fill:#fff4c2,stroke:#9a6700,color:#4d3800"),
        ("delete", "fill:#ffd7d5,stroke:#cf222e,color:#5c0b0b"),
        ("replace", "fill:#ffe2c2,stroke:#bc4c00,color:#5c2500"),
        ("read", "fill:#ddf4ff,stroke:#0969da,color:#0a3069"),
        ("forget", "fill:#eaeef2,stroke:#6e7781,color:#24292f"),
        (
            "noop",
            "fill:#ffffff,stroke:#8c959f,color:#57606a,stroke-dasharray:3 3",
        ),
    ];
    for (class, style) in styles {
        let members: Vec<String> = node_list
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
    }
    out.push_str("```\n");
}

/// Mermaid labels are quoted; quotes and angle brackets inside become entity codes.
fn mermaid_label(s: &str) -> String {
    s.replace('"', "#quot;")
        .replace('<', "#lt;")
        .replace('>', "#gt;")
}

fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Text inside a Markdown code span cannot hold a backtick.
fn code_text(s: &str) -> String {
    s.replace('`', "'")
}
