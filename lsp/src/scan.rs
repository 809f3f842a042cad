//! Where a position is in a configuration file, read from its text up to there: which
//! blocks enclose it, and whether it is at a block body's argument name, in a label, or in
//! an expression. A tolerant scan rather than the parser, because the file being typed in
//! rarely parses: an unclosed string or block is what completion is asked for.

/// One enclosing block: its type and labels (`resource "databricks_catalog" "main"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub ident: String,
    pub labels: Vec<String>,
}

/// What the position is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A block body (or the file's top level) where a statement begins or goes on before
    /// its `=` or `{`: argument and block names, a block's labels.
    Statement,
    /// A quoted label of a block header; `partial` is what is typed of it, from `start`.
    Label { partial: String, start: usize },
    /// An expression (an argument's value, inside brackets or an interpolation).
    Expr,
    /// A string literal in an expression; `partial` is what is typed of it, from `start`.
    Str { partial: String, start: usize },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// The enclosing blocks, outermost first.
    pub blocks: Vec<Block>,
    pub place: Place,
    /// The current statement's words before the position (its identifiers and labels).
    pub words: Vec<String>,
    /// The argument whose value the position is in (`name = …`), in the innermost block.
    pub attr: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
enum Mode {
    Body,
    /// `{`, `[`, `(` in an expression, with the closing character.
    Nested(u8),
    /// A quoted string; whether it is a header's label, and where its text starts.
    Str {
        label: bool,
        start: usize,
    },
    /// `${ … }` or `%{ … }` in a string or heredoc.
    Interp,
    /// A heredoc's text, until a line holding only the marker.
    Heredoc(String),
}

/// The identifier characters of HCL (a dash is one after the first character).
pub fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// The context of byte `offset` in `text`.
pub fn context(text: &str, offset: usize) -> Context {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let mut s = Scanner {
        text,
        src: &text.as_bytes()[..offset],
        offset,
        i: 0,
        line_start: true,
        modes: vec![Mode::Body],
        blocks: Vec::new(),
        words: Vec::new(),
        attr: None,
        has_eq: false,
    };
    while s.i < s.src.len() {
        match s.top() {
            Mode::Heredoc(_) => s.heredoc(),
            &Mode::Str { label, start } => s.string(label, start),
            Mode::Body | Mode::Nested(_) | Mode::Interp => s.code(),
        }
    }
    s.finish()
}

/// The scan of a text up to the position: where it is, and what it has read so far.
struct Scanner<'t> {
    text: &'t str,
    /// The text's bytes up to the position.
    src: &'t [u8],
    offset: usize,
    /// The next byte to read.
    i: usize,
    line_start: bool,
    modes: Vec<Mode>,
    blocks: Vec<Block>,
    words: Vec<String>,
    attr: Option<String>,
    /// The current statement is an argument, past its `=`.
    has_eq: bool,
}

impl Scanner<'_> {
    fn top(&self) -> &Mode {
        self.modes.last().unwrap_or(&Mode::Body)
    }

    fn next_is(&self, b: u8) -> bool {
        self.src.get(self.i + 1) == Some(&b)
    }

    /// `${` or `%{`: an interpolation or a template directive starts.
    fn opens_interp(&self) -> bool {
        matches!(self.src[self.i], b'$' | b'%') && self.next_is(b'{')
    }

    /// In a heredoc's text, which ends at a line holding only its marker.
    fn heredoc(&mut self) {
        let (src, i) = (self.src, self.i);
        if self.line_start {
            let end = src[i..].iter().position(|&b| b == b'\n');
            let line = &self.text[i..end.map_or(self.offset, |e| i + e)];
            if let Mode::Heredoc(marker) = self.top()
                && line.trim() == marker
                && let Some(end) = end
            {
                self.modes.pop();
                self.i += end;
                self.line_start = false;
                return;
            }
        }
        self.line_start = src[i] == b'\n';
        if self.opens_interp() {
            self.modes.push(Mode::Interp);
            self.i += 2;
            return;
        }
        self.i += 1;
    }

    /// In a quoted string; a label's text is a word of the statement once it is closed.
    fn string(&mut self, label: bool, start: usize) {
        match self.src[self.i] {
            b'\\' => self.i += 1,
            b'"' => {
                self.modes.pop();
                if label {
                    self.words.push(self.text[start..self.i].to_string());
                }
            }
            _ if self.opens_interp() => {
                self.modes.push(Mode::Interp);
                self.i += 1;
            }
            b'\n' => {
                // An unclosed string ends at its line, as the parser reports it.
                self.modes.pop();
                self.line_start = true;
            }
            _ => {}
        }
        self.i += 1;
    }

    /// In a body, brackets or an interpolation: outside strings and heredocs.
    fn code(&mut self) {
        let c = self.src[self.i];
        let in_body = matches!(self.top(), Mode::Body);
        // Before a statement's `=`: its words are names and labels.
        let statement = in_body && !self.has_eq;
        self.line_start = false;
        match c {
            b'#' => self.i = skip_line(self.src, self.i),
            b'/' if self.next_is(b'/') => self.i = skip_line(self.src, self.i),
            b'/' if self.next_is(b'*') => {
                let (i, offset) = (self.i, self.offset);
                self.i = self.text[i + 2..offset]
                    .find("*/")
                    .map_or(offset, |e| i + 2 + e + 2);
            }
            b'\n' => {
                if in_body {
                    self.end_statement();
                }
                self.line_start = true;
                self.i += 1;
            }
            b'"' => {
                self.modes.push(Mode::Str {
                    label: statement,
                    start: self.i + 1,
                });
                self.i += 1;
            }
            b'<' if self.next_is(b'<') && !statement => self.heredoc_start(),
            b'{' if statement => self.open_block(),
            b'{' | b'[' | b'(' => {
                let close = match c {
                    b'{' => b'}',
                    b'[' => b']',
                    _ => b')',
                };
                self.modes.push(Mode::Nested(close));
                self.i += 1;
            }
            b'}' | b']' | b')' => self.close(c),
            b'=' if statement
                && !self.next_is(b'=')
                && !matches!(
                    self.src.get(self.i.wrapping_sub(1)),
                    Some(b'!' | b'<' | b'>')
                ) =>
            {
                self.has_eq = true;
                self.attr = self.words.first().cloned();
                self.i += 1;
            }
            _ if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => self.word(statement),
            _ => self.i += 1,
        }
    }

    /// A body's statement ends: the next one starts without words.
    fn end_statement(&mut self) {
        self.words.clear();
        self.attr = None;
        self.has_eq = false;
    }

    /// `<<MARKER` or `<<-MARKER`: a heredoc whose text starts on the next line.
    fn heredoc_start(&mut self) {
        let src = self.src;
        let mut j = self.i + 2;
        if src.get(j) == Some(&b'-') {
            j += 1;
        }
        let m_end = j + src[j..]
            .iter()
            .position(|&b| !(b as char).is_ascii_alphanumeric() && b != b'_')
            .unwrap_or(src.len() - j);
        if m_end > j {
            self.modes
                .push(Mode::Heredoc(self.text[j..m_end].to_string()));
            self.i = skip_line(src, m_end);
        } else {
            self.i += 2;
        }
    }

    /// `{` after a statement's words: a block they name and label.
    fn open_block(&mut self) {
        let ident = self.words.first().cloned().unwrap_or_default();
        self.blocks.push(Block {
            ident,
            labels: self.words.iter().skip(1).cloned().collect(),
        });
        self.modes.push(Mode::Body);
        self.words.clear();
        self.i += 1;
    }

    /// A closing bracket ends the block, brackets or interpolation it closes; one that
    /// closes nothing open is skipped.
    fn close(&mut self, c: u8) {
        match *self.top() {
            Mode::Body if c == b'}' && self.modes.len() > 1 => {
                self.modes.pop();
                self.blocks.pop();
                self.end_statement();
            }
            Mode::Nested(close) if close == c => {
                self.modes.pop();
            }
            Mode::Interp if c == b'}' => {
                self.modes.pop();
            }
            _ => {}
        }
        self.i += 1;
    }

    /// An identifier; in a statement, one of its words.
    fn word(&mut self, statement: bool) {
        let rest = &self.text[self.i..self.offset];
        let len = rest
            .char_indices()
            .find(|&(_, ch)| !is_ident(ch))
            .map_or(rest.len(), |(k, _)| k);
        if len == 0 {
            self.i += rest.chars().next().map_or(1, char::len_utf8);
            return;
        }
        if statement {
            self.words.push(rest[..len].to_string());
        }
        self.i += len;
    }

    fn finish(mut self) -> Context {
        let before = &self.text[..self.offset];
        let top = self.modes.pop().unwrap_or(Mode::Body);
        // The word being typed is not one of the statement's words yet.
        if matches!(top, Mode::Body)
            && !self.has_eq
            && before.ends_with(is_ident)
            && let Some(last) = self.words.last()
            && before.ends_with(last.as_str())
        {
            self.words.pop();
        }
        let place = match top {
            Mode::Str { label, start } => {
                let partial = before[start..].to_string();
                if label {
                    Place::Label { partial, start }
                } else {
                    Place::Str { partial, start }
                }
            }
            Mode::Heredoc(_) => Place::Str {
                partial: String::new(),
                start: self.offset,
            },
            Mode::Body if !self.has_eq => Place::Statement,
            _ => Place::Expr,
        };
        Context {
            blocks: self.blocks,
            place,
            words: self.words,
            attr: self.attr,
        }
    }
}

fn skip_line(src: &[u8], i: usize) -> usize {
    src[i..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(src.len(), |e| i + e)
}

/// The dotted reference being typed before `offset` (`databricks_catalog.main.na`), and
/// where it starts.
pub fn reference_before(text: &str, offset: usize) -> (usize, &str) {
    let before = &text[..offset];
    let start = before
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_ident(c) || c == '.')
        .last()
        .map_or(offset, |(i, _)| i);
    (start, &text[start..offset])
}

/// The whole dotted reference around `offset` and its byte range.
pub fn reference_at(text: &str, offset: usize) -> Option<(std::ops::Range<usize>, &str)> {
    let (start, _) = reference_before(text, offset);
    let end = offset
        + text[offset..]
            .char_indices()
            .find(|&(_, c)| !is_ident(c) && c != '.')
            .map_or(text.len() - offset, |(i, _)| i);
    let s = &text[start..end];
    (!s.is_empty()).then_some((start..end, s))
}

/// The identifier around `offset` and its byte range.
pub fn word_at(text: &str, offset: usize) -> Option<(std::ops::Range<usize>, &str)> {
    let start = text[..offset]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_ident(c))
        .last()
        .map_or(offset, |(i, _)| i);
    let end = offset
        + text[offset..]
            .char_indices()
            .find(|&(_, c)| !is_ident(c))
            .map_or(text.len() - offset, |(i, _)| i);
    (end > start).then(|| (start..end, &text[start..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Context {
        let offset = text.find('|').expect("a cursor");
        let text = text.replacen('|', "", 1);
        context(&text, offset)
    }

    #[test]
    fn top_level_and_labels() {
        assert_eq!(at("res|").place, Place::Statement);
        assert!(at("res|").blocks.is_empty());
        let c = at("resource \"databricks_ca|");
        assert_eq!(
            c.place,
            Place::Label {
                partial: "databricks_ca".into(),
                start: 10
            }
        );
        assert_eq!(c.words, ["resource"]);
    }

    #[test]
    fn nested_blocks_and_values() {
        let text = "# a { comment\nresource \"databricks_job\" \"j\" {\n  name = \"x{\"\n  tags = { a = \"b\" }\n  task {\n    ta|\n";
        let c = at(text);
        assert_eq!(c.place, Place::Statement);
        assert_eq!(c.blocks.len(), 2);
        assert_eq!(c.blocks[0].labels, ["databricks_job", "j"]);
        assert_eq!(c.blocks[1].ident, "task");
        assert!(c.words.is_empty());

        let c = at("resource \"t\" \"n\" {\n  isolation_mode = \"OP|\"\n}\n");
        assert_eq!(c.attr.as_deref(), Some("isolation_mode"));
        assert_eq!(
            c.place,
            Place::Str {
                partial: "OP".into(),
                start: 39
            }
        );
        let c = at("resource \"t\" \"n\" {\n  comment = \"${var.|}\"\n}\n");
        assert_eq!(c.place, Place::Expr);
        let c = at("resource \"t\" \"n\" {\n  x = <<EOF\n  }\nEOF\n  y|\n}\n");
        assert_eq!(c.place, Place::Statement);
        assert_eq!(c.blocks.len(), 1);
    }
}
