//! Positions: LSP speaks in lines and UTF-16 code units (the protocol's default position
//! encoding), brickform in byte offsets into UTF-8 text.

use lsp_types::{Position, Range};

/// The line starts of a text, to convert between byte offsets and LSP positions.
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { text, starts }
    }

    /// The byte offset of a position. A line past the end is the end of the text; a
    /// column past the end of its line is the line's end; a column inside a character
    /// (between the two halves of a surrogate pair) is that character's start.
    pub fn offset(&self, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return self.text.len();
        };
        let end = self
            .starts
            .get(pos.line as usize + 1)
            .map_or(self.text.len(), |e| e - 1);
        let line = &self.text[start..end];
        let line = line.strip_suffix('\r').unwrap_or(line);
        let mut units = 0usize;
        for (i, c) in line.char_indices() {
            let next = units + c.len_utf16();
            if next > pos.character as usize {
                return start + i;
            }
            units = next;
        }
        start + line.len()
    }

    /// The position of a byte offset (clamped to the text, moved back to a character
    /// boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = match self.starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let character: usize = self.text[self.starts[line]..offset]
            .chars()
            .map(char::len_utf16)
            .sum();
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, r: std::ops::Range<usize>) -> Range {
        let start = self.position(r.start);
        Range::new(start, self.position(r.end.max(r.start)))
    }

    /// The range of the whole text.
    pub fn all(&self) -> Range {
        Range::new(Position::new(0, 0), self.position(self.text.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns() {
        // é is 2 bytes and 1 UTF-16 unit; 😀 is 4 bytes and 2 units.
        let text = "aé😀b\r\nx";
        let ix = LineIndex::new(text);
        assert_eq!(ix.offset(Position::new(0, 0)), 0);
        assert_eq!(ix.offset(Position::new(0, 2)), 3);
        assert_eq!(
            ix.offset(Position::new(0, 3)),
            3,
            "inside the pair: its start"
        );
        assert_eq!(ix.offset(Position::new(0, 4)), 7);
        assert_eq!(ix.offset(Position::new(0, 5)), 8);
        assert_eq!(ix.offset(Position::new(0, 99)), 8, "past the line: its end");
        assert_eq!(ix.offset(Position::new(1, 1)), 11);
        assert_eq!(ix.offset(Position::new(7, 0)), text.len());
        assert_eq!(ix.position(7), Position::new(0, 4));
        assert_eq!(ix.position(8), Position::new(0, 5));
        assert_eq!(ix.position(5), Position::new(0, 2), "inside a character");
        assert_eq!(ix.position(11), Position::new(1, 1));
        assert_eq!(ix.position(999), Position::new(1, 1));
    }
}
