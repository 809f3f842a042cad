//! Source files and locations: every diagnostic points at a file, a line and a column.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

/// Index of a file in a [`SourceMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub usize);

/// A byte range in one file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub file: FileId,
    pub range: Range<usize>,
}

impl Span {
    pub fn new(file: FileId, range: Range<usize>) -> Self {
        Span { file, range }
    }
}

#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path as shown to the user (relative to the configuration directory when possible).
    pub name: String,
    pub path: PathBuf,
    pub text: Arc<str>,
    /// Byte offsets of line starts, for line/column lookups.
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(name: String, path: PathBuf, text: String) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile {
            name,
            path,
            text: text.into(),
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let start = self.line_starts[line];
        let col = self
            .text
            .get(start..offset)
            .map(|s| s.chars().count())
            .unwrap_or(offset - start);
        (line + 1, col + 1)
    }

    /// The byte range of 0-based lines `first..last` (both clamped to the file), newlines
    /// included: what a snippet around a span needs without reading the file from its start.
    pub fn lines_range(&self, first: usize, last: usize) -> std::ops::Range<usize> {
        let start_of = |l: usize| self.line_starts.get(l).copied().unwrap_or(self.text.len());
        start_of(first)..start_of(last).max(start_of(first))
    }

    /// The 0-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_col(offset).0 - 1
    }

    /// The text of a 1-based line, without its newline.
    pub fn line_text(&self, line: usize) -> &str {
        let Some(&start) = self.line_starts.get(line.saturating_sub(1)) else {
            return "";
        };
        let end = self
            .line_starts
            .get(line)
            .map(|e| e.saturating_sub(1))
            .unwrap_or(self.text.len());
        self.text
            .get(start..end)
            .unwrap_or("")
            .trim_end_matches('\r')
    }
}

/// All files of a configuration.
#[derive(Debug, Default, Clone)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn add(&mut self, file: SourceFile) -> FileId {
        self.files.push(file);
        FileId(self.files.len() - 1)
    }
    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0)
    }
    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files.iter().enumerate().map(|(i, f)| (FileId(i), f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column() {
        let f = SourceFile::new("a".into(), "a".into(), "ab\ncdé\nx".into());
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(3), (2, 1));
        assert_eq!(f.line_col(5), (2, 3));
        assert_eq!(f.line_col(8), (3, 1));
        assert_eq!(f.line_text(2), "cdé");
        assert_eq!(f.line_text(3), "x");
    }
}
