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
    let src = &text.as_bytes()[..offset];
    let mut modes = vec![Mode::Body];
    let mut blocks: Vec<Block> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut attr: Option<String> = None;
    let mut has_eq = false;
    let mut i = 0;
    let mut line_start = true;
    while i < src.len() {
        let c = src[i];
        let top = modes.last().cloned().unwrap_or(Mode::Body);
        match top {
            Mode::Heredoc(marker) => {
                if line_start {
                    let end = src[i..].iter().position(|&b| b == b'\n');
                    let line = &text[i..end.map_or(offset, |e| i + e)];
                    if line.trim() == marker && end.is_some() {
                        modes.pop();
                        i += end.unwrap_or(0);
                        line_start = false;
                        continue;
                    }
                }
                line_start = c == b'\n';
                if (c == b'$' || c == b'%') && src.get(i + 1) == Some(&b'{') {
                    modes.push(Mode::Interp);
                    i += 2;
                    continue;
                }
                i += 1;
            }
            Mode::Str { .. } => {
                match c {
                    b'\\' => i += 1,
                    b'"' => {
                        modes.pop();
                        if let Mode::Str { label: true, start } = top {
                            words.push(text[start..i].to_string());
                        }
                    }
                    b'$' | b'%' if src.get(i + 1) == Some(&b'{') => {
                        modes.push(Mode::Interp);
                        i += 1;
                    }
                    b'\n' => {
                        // An unclosed string ends at its line, as the parser reports it.
                        modes.pop();
                        line_start = true;
                    }
                    _ => {}
                }
                i += 1;
            }
            Mode::Body | Mode::Nested(_) | Mode::Interp => {
                let body = top == Mode::Body && !has_eq;
                line_start = false;
                match c {
                    b'#' => i = skip_line(src, i),
                    b'/' if src.get(i + 1) == Some(&b'/') => i = skip_line(src, i),
                    b'/' if src.get(i + 1) == Some(&b'*') => {
                        i = text[i + 2..offset]
                            .find("*/")
                            .map_or(offset, |e| i + 2 + e + 2);
                    }
                    b'\n' => {
                        if top == Mode::Body {
                            words.clear();
                            attr = None;
                            has_eq = false;
                        }
                        line_start = true;
                        i += 1;
                    }
                    b'"' => {
                        modes.push(Mode::Str {
                            label: body,
                            start: i + 1,
                        });
                        i += 1;
                    }
                    b'<' if src.get(i + 1) == Some(&b'<') && !body => {
                        let mut j = i + 2;
                        if src.get(j) == Some(&b'-') {
                            j += 1;
                        }
                        let m_end = j + src[j..]
                            .iter()
                            .position(|&b| !(b as char).is_ascii_alphanumeric() && b != b'_')
                            .unwrap_or(src.len() - j);
                        if m_end > j {
                            modes.push(Mode::Heredoc(text[j..m_end].to_string()));
                            i = skip_line(src, m_end);
                        } else {
                            i += 2;
                        }
                    }
                    b'{' if body => {
                        let ident = words.first().cloned().unwrap_or_default();
                        blocks.push(Block {
                            ident,
                            labels: words.iter().skip(1).cloned().collect(),
                        });
                        modes.push(Mode::Body);
                        words.clear();
                        i += 1;
                    }
                    b'{' => {
                        modes.push(Mode::Nested(b'}'));
                        i += 1;
                    }
                    b'[' => {
                        modes.push(Mode::Nested(b']'));
                        i += 1;
                    }
                    b'(' => {
                        modes.push(Mode::Nested(b')'));
                        i += 1;
                    }
                    b'}' | b']' | b')' => {
                        match top {
                            Mode::Body if c == b'}' && modes.len() > 1 => {
                                modes.pop();
                                blocks.pop();
                                words.clear();
                                attr = None;
                                has_eq = false;
                            }
                            Mode::Nested(close) if close == c => {
                                modes.pop();
                            }
                            Mode::Interp if c == b'}' => {
                                modes.pop();
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                    b'=' if body
                        && src.get(i + 1) != Some(&b'=')
                        && !matches!(src.get(i.wrapping_sub(1)), Some(b'!' | b'<' | b'>')) =>
                    {
                        has_eq = true;
                        attr = words.first().cloned();
                        i += 1;
                    }
                    _ if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                        let rest = &text[i..offset];
                        let len = rest
                            .char_indices()
                            .find(|&(_, ch)| !is_ident(ch))
                            .map_or(rest.len(), |(k, _)| k);
                        if len == 0 {
                            i += rest.chars().next().map_or(1, char::len_utf8);
                        } else {
                            if body {
                                words.push(rest[..len].to_string());
                            }
                            i += len;
                        }
                    }
                    _ => i += 1,
                }
            }
        }
    }
    let top = modes.last().cloned().unwrap_or(Mode::Body);
    // The word being typed is not one of the statement's words yet.
    if matches!(top, Mode::Body)
        && !has_eq
        && text[..offset].ends_with(is_ident)
        && let Some(last) = words.last()
        && text[..offset].ends_with(last.as_str())
    {
        words.pop();
    }
    let place = match top {
        Mode::Str { label: true, start } => Place::Label {
            partial: text[start..offset].to_string(),
            start,
        },
        Mode::Str {
            label: false,
            start,
        } => Place::Str {
            partial: text[start..offset].to_string(),
            start,
        },
        Mode::Heredoc(_) => Place::Str {
            partial: String::new(),
            start: offset,
        },
        Mode::Body if !has_eq => Place::Statement,
        _ => Place::Expr,
    };
    Context {
        blocks,
        place,
        words,
        attr,
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
