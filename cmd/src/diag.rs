//! Renders configuration diagnostics with source snippets (miette).

use brickform_core::lang::diagnostics::{Diagnostic, Diagnostics, Severity};
use brickform_core::lang::source::SourceMap;
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource, Report,
};
use std::io::IsTerminal;

fn use_color() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
}

/// The longest source line shown as a snippet, in bytes.
const MAX_SNIPPET_LINE: usize = 4096;

fn report(d: &Diagnostic, sources: &SourceMap) -> Report {
    let mut m = MietteDiagnostic::new(d.summary.clone()).with_severity(match d.severity {
        Severity::Error => miette::Severity::Error,
        Severity::Warning => miette::Severity::Warning,
    });
    let mut help = Vec::new();
    if let Some(detail) = &d.detail {
        help.push(detail.clone());
    }
    if let Some(h) = &d.hint {
        help.push(h.clone());
    }
    if !help.is_empty() {
        m = m.with_help(help.join("\n"));
    }
    let file = d
        .span
        .as_ref()
        .and_then(|s| sources.get(s.file).map(|f| (s, f)));
    // miette's renderer panics on columns past 65,522, and a snippet of a line that long
    // helps nobody: such a diagnostic keeps its summary, help and file:line:column only.
    let file = file.filter(|(span, f)| {
        let bytes = f.text.as_bytes();
        let at = span.range.start.min(bytes.len());
        let start = bytes[..at]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let end = bytes[at..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |i| at + i);
        end - start <= MAX_SNIPPET_LINE
    });
    if let Some((span, f)) = file {
        let len = span
            .range
            .end
            .saturating_sub(span.range.start)
            .max(1)
            .min(f.text.len().saturating_sub(span.range.start).max(1));
        m = m.with_label(LabeledSpan::new(
            d.label.clone().or(Some(String::new())),
            span.range.start,
            len,
        ));
        return Report::new(m)
            .with_source_code(NamedSource::new(f.name.clone(), f.text.to_string()));
    }
    Report::new(m)
}

/// Writes every diagnostic to stderr.
pub fn print(diags: &Diagnostics, sources: &SourceMap) {
    let theme = if use_color() {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    // Lines are not wrapped: a message stays greppable (and copyable) as one line, and
    // terminals wrap long lines themselves.
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_context_lines(1)
        .with_wrap_lines(false);
    for d in diags.iter() {
        let r = report(d, sources);
        let mut out = String::new();
        if handler.render_report(&mut out, r.as_ref()).is_err() {
            out = d.render_plain(sources);
        }
        // The plain location line keeps file:line:column greppable in logs and CI.
        if let Some((file, line, col)) = d.location(sources) {
            eprintln!("{out}  at {file}:{line}:{col}\n");
        } else {
            eprintln!("{out}");
        }
    }
}

/// JSON form for `validate --json`, close to Terraform's.
pub fn to_json(diags: &Diagnostics, sources: &SourceMap) -> serde_json::Value {
    let items: Vec<serde_json::Value> = diags
        .iter()
        .map(|d| {
            let range = d.span.as_ref().and_then(|s| {
                let f = sources.get(s.file)?;
                let (sl, sc) = f.line_col(s.range.start);
                let (el, ec) = f.line_col(s.range.end);
                Some(serde_json::json!({
                    "filename": f.name,
                    "start": {"line": sl, "column": sc, "byte": s.range.start},
                    "end": {"line": el, "column": ec, "byte": s.range.end},
                }))
            });
            serde_json::json!({
                "severity": if d.is_error() { "error" } else { "warning" },
                "summary": d.summary,
                "detail": d.detail.clone().unwrap_or_default(),
                "hint": d.hint,
                "range": range,
            })
        })
        .collect();
    serde_json::json!({
        "format_version": "1.0",
        "valid": !diags.has_errors(),
        "error_count": diags.errors().count(),
        "warning_count": diags.warnings().count(),
        "diagnostics": items,
    })
}
