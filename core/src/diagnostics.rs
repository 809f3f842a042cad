//! Diagnostics: located errors and warnings about a configuration.
//!
//! The engine collects them instead of stopping at the first, so `validate` reports every
//! problem at once. Rendering (with source snippets) is left to the binary.

use crate::source::{SourceMap, Span};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// One line saying what is wrong.
    pub summary: String,
    /// More explanation, when there is any.
    pub detail: Option<String>,
    /// Where it is.
    pub span: Option<Span>,
    /// The label shown under the source snippet.
    pub label: Option<String>,
    /// What to do about it ("did you mean `name`?").
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn error(summary: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            summary: summary.into(),
            detail: None,
            span: None,
            label: None,
            hint: None,
        }
    }
    pub fn warning(summary: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Self::error(summary)
        }
    }
    pub fn at(mut self, span: Option<Span>) -> Self {
        self.span = span;
        self
    }
    pub fn detail(mut self, d: impl Into<String>) -> Self {
        self.detail = Some(d.into());
        self
    }
    pub fn label(mut self, l: impl Into<String>) -> Self {
        self.label = Some(l.into());
        self
    }
    pub fn hint(mut self, h: impl Into<String>) -> Self {
        self.hint = Some(h.into());
        self
    }
    pub fn maybe_hint(mut self, h: Option<String>) -> Self {
        if h.is_some() {
            self.hint = h;
        }
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `file:line:column` of the diagnostic, when it has a location.
    pub fn location(&self, sources: &SourceMap) -> Option<(String, usize, usize)> {
        let span = self.span.as_ref()?;
        let file = sources.get(span.file)?;
        let (line, col) = file.line_col(span.range.start);
        Some((file.name.clone(), line, col))
    }

    /// The diagnostic as one plain line, `file:line: summary`, for places that show a list
    /// of them (a pull-request comment).
    pub fn one_line(&self, sources: &SourceMap) -> String {
        let mut summary = self.summary.lines().next().unwrap_or_default().to_string();
        // The first line of the detail says what the summary is about (a check's message).
        if let Some(first) = self.detail.as_deref().and_then(|d| d.lines().next()) {
            summary = format!("{summary}: {}", first.trim_end_matches('.'));
        }
        match self.location(sources) {
            Some((file, line, _)) => format!("{file}:{line}: {summary}"),
            None => summary.to_string(),
        }
    }

    /// A plain-text rendering (no colours): used in logs, tests and non-TTY fallbacks.
    pub fn render_plain(&self, sources: &SourceMap) -> String {
        let mut out = String::new();
        let word = match self.severity {
            Severity::Error => "Error",
            Severity::Warning => "Warning",
        };
        out.push_str(&format!("{word}: {}\n", self.summary));
        if let (Some(span), Some((name, line, col))) = (&self.span, self.location(sources)) {
            out.push_str(&format!("  --> {name}:{line}:{col}\n"));
            if let Some(file) = sources.get(span.file) {
                let text = file.line_text(line);
                let width = line.to_string().len();
                out.push_str(&format!("{:width$} |\n", ""));
                out.push_str(&format!("{line} | {text}\n"));
                let end = span.range.end.max(span.range.start + 1);
                let (end_line, end_col) = file.line_col(end);
                let carets = if end_line == line {
                    end_col.saturating_sub(col).max(1)
                } else {
                    text.chars().count().saturating_sub(col - 1).max(1)
                };
                out.push_str(&format!(
                    "{:width$} | {}{} {}\n",
                    "",
                    " ".repeat(col - 1),
                    "^".repeat(carets),
                    self.label.as_deref().unwrap_or("")
                ));
            }
        }
        if let Some(d) = &self.detail {
            out.push_str(&format!("\n{d}\n"));
        }
        if let Some(h) = &self.hint {
            out.push_str(&format!("  help: {h}\n"));
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.summary)
    }
}

/// A collection of diagnostics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }
    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter().filter(|d| d.is_error())
    }
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter().filter(|d| !d.is_error())
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter()
    }
    /// Orders by file and position so output is stable.
    pub fn sort(&mut self) {
        self.0.sort_by(|a, b| {
            let ka = a.span.as_ref().map(|s| (s.file, s.range.start));
            let kb = b.span.as_ref().map(|s| (s.file, s.range.start));
            ka.cmp(&kb)
        });
        self.0.dedup();
    }
    pub fn render_plain(&self, sources: &SourceMap) -> String {
        self.0
            .iter()
            .map(|d| d.render_plain(sources))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Diagnostics(vec![d])
    }
}

/// "did you mean `x`?" for the closest candidate, when one is close enough.
pub fn did_you_mean<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    closest(given, candidates).map(|c| format!("did you mean `{c}`?"))
}

/// The closest candidate to `given`, when one is close enough: close in spelling (a small
/// edit distance) or sharing a long prefix (Jaro-Winkler).
pub fn closest<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(f64, &str)> = None;
    for c in candidates {
        let distance = strsim::damerau_levenshtein(given, c);
        let close = distance <= (given.chars().count().max(3) / 3).max(1);
        let score = strsim::jaro_winkler(given, c) + if close { 1.0 } else { 0.0 };
        if (close || score > 0.85) && best.is_none_or(|(s, _)| score > s) {
            best = Some((score, c));
        }
    }
    best.map(|(_, c)| c)
}

/// `did you mean "MANAGED"?` for a value: a candidate that differs only in case first (the
/// service compares enumerations exactly), else the closest one ignoring case.
pub fn did_you_mean_value<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    let found = candidates
        .iter()
        .copied()
        .find(|c| c.eq_ignore_ascii_case(given))
        .or_else(|| {
            let folded: Vec<String> = candidates.iter().map(|c| c.to_lowercase()).collect();
            let best = closest(&given.to_lowercase(), folded.iter().map(String::as_str))?;
            let i = folded.iter().position(|f| f == best)?;
            candidates.get(i).copied()
        })?;
    Some(format!("did you mean {}?", crate::value::quote(found)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{FileId, SourceFile};

    #[test]
    fn plain_rendering_points_at_the_span() {
        let mut sources = SourceMap::new();
        let id = sources.add(SourceFile::new(
            "main.bf.hcl".into(),
            "main.bf.hcl".into(),
            "resource \"a\" \"b\" {\n  nme = 1\n}\n".into(),
        ));
        assert_eq!(id, FileId(0));
        let d = Diagnostic::error("Unsupported argument")
            .at(Some(Span::new(id, 21..24)))
            .label("not expected here")
            .hint("did you mean `name`?");
        let text = d.render_plain(&sources);
        assert!(text.contains("--> main.bf.hcl:2:3"), "{text}");
        assert!(text.contains("2 |   nme = 1"), "{text}");
        assert!(text.contains("  ^^^ not expected here"), "{text}");
        assert!(text.contains("help: did you mean `name`?"), "{text}");
    }

    #[test]
    fn suggestions_only_when_close() {
        assert_eq!(
            did_you_mean("catalog_nam", ["catalog_name", "comment"]),
            Some("did you mean `catalog_name`?".into())
        );
        assert_eq!(did_you_mean("zzz", ["catalog_name", "comment"]), None);
    }

    #[test]
    fn value_suggestions_fix_case_first() {
        let types = ["MANAGED", "EXTERNAL"];
        assert_eq!(
            did_you_mean_value("MANAGD", types),
            Some("did you mean \"MANAGED\"?".into())
        );
        assert_eq!(
            did_you_mean_value("managed", types),
            Some("did you mean \"MANAGED\"?".into())
        );
        assert_eq!(
            did_you_mean_value("externl", types),
            Some("did you mean \"EXTERNAL\"?".into())
        );
        assert_eq!(did_you_mean_value("VIEW", types), None);
    }
}
