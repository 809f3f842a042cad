//! Renders configuration diagnostics with source snippets (miette).

use brickform_core::diagnostics::{Diagnostic, Diagnostics, Severity};
use brickform_core::source::SourceFile;
use brickform_core::source::SourceMap;
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, MietteError,
    MietteSpanContents, Report, SourceCode, SourceSpan, SpanContents,
};
use std::io::IsTerminal;

/// Set by `--no-color`: diagnostics are drawn without colour, as the rest of the output.
static NO_COLOR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns colour off for every diagnostic drawn from now on.
pub fn disable_color() {
    NO_COLOR.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn use_color() -> bool {
    !NO_COLOR.load(std::sync::atomic::Ordering::Relaxed)
        && std::env::var_os("NO_COLOR").is_none()
        && std::io::stderr().is_terminal()
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
        m = m.with_label(LabeledSpan::new(d.label.clone(), span.range.start, len));
        return Report::new(m).with_source_code(Excerpt::around(f, &span.range));
    }
    Report::new(m)
}

/// The lines of a file around a diagnostic's span, as miette's source. miette finds a span's
/// line and column by reading its source from the start, so given the whole file, each of N
/// diagnostics in it costs the file's length: 10,000 errors took minutes.
struct Excerpt {
    name: String,
    text: String,
    /// Where `text` starts in the file: its byte offset and 0-based line.
    offset: usize,
    first_line: usize,
}

/// Lines kept around a span: more than the handler shows (one each side).
const EXCERPT_CONTEXT: usize = 3;

impl Excerpt {
    fn around(f: &SourceFile, span: &std::ops::Range<usize>) -> Excerpt {
        let first_line = f.line_of(span.start).saturating_sub(EXCERPT_CONTEXT);
        let last_line = f.line_of(span.end) + EXCERPT_CONTEXT + 1;
        let range = f.lines_range(first_line, last_line);
        Excerpt {
            name: f.name.clone(),
            text: f.text.get(range.clone()).unwrap_or_default().to_string(),
            offset: range.start,
            first_line,
        }
    }
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let local = SourceSpan::new(span.offset().saturating_sub(self.offset).into(), span.len());
        let inner =
            self.text
                .as_bytes()
                .read_span(&local, context_lines_before, context_lines_after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            SourceSpan::new(
                (inner.span().offset() + self.offset).into(),
                inner.span().len(),
            ),
            inner.line() + self.first_line,
            inner.column(),
            inner.line_count() + self.first_line,
        )))
    }
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
        let out = render(&handler, d, sources);
        // The plain location line keeps file:line:column greppable in logs and CI.
        if let Some((file, line, col)) = d.location(sources) {
            eprintln!("{out}  at {file}:{line}:{col}\n");
        } else {
            eprintln!("{out}");
        }
    }
}

/// One diagnostic as the handler draws it (plain text when it cannot).
fn render(handler: &GraphicalReportHandler, d: &Diagnostic, sources: &SourceMap) -> String {
    let r = report(d, sources);
    let mut out = String::new();
    if handler.render_report(&mut out, r.as_ref()).is_err() {
        out = d.render_plain(sources);
    }
    out
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn no_color_turns_colour_off() {
        disable_color();
        assert!(!use_color());
    }
    use brickform_core::source::Span;

    #[test]
    fn a_snippet_deep_in_a_file_shows_its_own_lines_and_numbers() {
        let text: String = (1..=200).map(|i| format!("  line{i} = {i}\n")).collect();
        let mut sources = SourceMap::new();
        let file = sources.add(SourceFile::new(
            "main.bf.hcl".into(),
            "main.bf.hcl".into(),
            text.clone(),
        ));
        let at = text.find("line150").unwrap();
        let d = Diagnostic::error("Broken").at(Some(Span::new(file, at..at + 7)));
        let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
            .with_context_lines(1)
            .with_wrap_lines(false);
        let out = render(&handler, &d, &sources);
        assert!(out.contains("[main.bf.hcl:150:3]"), "{out}");
        for (n, l) in [
            (149, "line149 = 149"),
            (150, "line150 = 150"),
            (151, "line151 = 151"),
        ] {
            assert!(
                out.contains(&format!("{n} │   {l}")),
                "line {n} missing:\n{out}"
            );
        }
        assert!(
            !out.contains("line148") && !out.contains("line152"),
            "{out}"
        );
        // At the very start and the very end of the file too.
        for (what, line) in [("line1 ", 1), ("line200", 200)] {
            let at = text.find(what).unwrap();
            let d = Diagnostic::error("Broken").at(Some(Span::new(file, at..at + 5)));
            let out = render(&handler, &d, &sources);
            assert!(out.contains(&format!("[main.bf.hcl:{line}:3]")), "{out}");
            assert!(
                out.contains(&format!("{line} │   line{line} = {line}")),
                "{out}"
            );
        }
    }

    #[test]
    fn a_span_without_a_label_is_underlined_with_no_empty_caption() {
        let mut sources = SourceMap::new();
        let text = "resource \"t\" \"n\" {\n  name = 1\n}\n".to_string();
        let file = sources.add(SourceFile::new(
            "main.bf.hcl".into(),
            "main.bf.hcl".into(),
            text.clone(),
        ));
        let at = text.find("name").unwrap();
        let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor());
        let bare = Diagnostic::error("Broken").at(Some(Span::new(file, at..at + 4)));
        let out = render(&handler, &bare, &sources);
        assert!(out.contains("────"), "underlined: {out}");
        assert!(!out.contains("╰──\n") && !out.contains("╰── \n"), "{out}");
        let mut labelled = bare.clone();
        labelled.label = Some("this one".into());
        let out = render(&handler, &labelled, &sources);
        assert!(out.contains("╰── this one"), "{out}");
    }
}
