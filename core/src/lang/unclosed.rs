//! Where a file that does not parse opens a block it never closes. The parser reports such a
//! file at its end, far from the cause; the opening brace is what the author has to find.
//! A light scan of the text (strings, comments and heredocs skipped) finds the braces left
//! open at the end; when the scan cannot tell (a string that never ends), it says nothing.

/// Byte offsets of the `{` still open at the end of `text`, outermost first; empty when the
/// braces balance or the text confuses the scan.
pub fn open_braces(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut open: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => match string_end(bytes, i + 1) {
                Some(end) => i = end,
                None => return Vec::new(),
            },
            b'#' => i = line_end(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'/') => i = line_end(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'*') => match find(bytes, i + 2, b"*/") {
                Some(end) => i = end + 2,
                None => return Vec::new(),
            },
            b'<' if bytes.get(i + 1) == Some(&b'<') => match heredoc_end(text, i) {
                Some(end) => i = end,
                None => i += 2,
            },
            b'{' => {
                open.push(i);
                i += 1;
            }
            b'}' => {
                if open.pop().is_none() {
                    // More closing than opening: not a block left open.
                    return Vec::new();
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    open
}

/// The offset just past the `"` that ends a string starting at `from`, skipping escapes
/// and the braces of `${…}` interpolations (which may hold strings of their own).
fn string_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            b'\n' => return None,
            b'$' | b'%' if bytes.get(i + 1) == Some(&b'{') => {
                let mut depth = 1;
                i += 2;
                while depth > 0 {
                    match bytes.get(i)? {
                        b'{' => depth += 1,
                        b'}' => depth -= 1,
                        b'"' => {
                            i = string_end(bytes, i + 1)?;
                            continue;
                        }
                        b'\n' => return None,
                        _ => {}
                    }
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    None
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    find(bytes, from, b"\n").unwrap_or(bytes.len())
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

/// The offset just past a heredoc (`<<EOT` or `<<-EOT` … a line holding only `EOT`)
/// starting at `at`; `None` when `at` does not start one.
fn heredoc_end(text: &str, at: usize) -> Option<usize> {
    let rest = text.get(at + 2..)?;
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    let marker: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if marker.is_empty() {
        return None;
    }
    let body_start = at + text.get(at..)?.find('\n')? + 1;
    let mut offset = body_start;
    for line in text.get(body_start..)?.split_inclusive('\n') {
        offset += line.len();
        if line.trim() == marker {
            return Some(offset);
        }
    }
    Some(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(text: &str) -> Vec<usize> {
        open_braces(text)
            .into_iter()
            .map(|o| text[..o].matches('\n').count() + 1)
            .collect()
    }

    #[test]
    fn the_block_left_open_is_found_past_the_blocks_after_it() {
        let text = "variable \"a\" {\n  default = 1\n}\n\nresource \"x\" \"c\" {\n  name = \"x\"\n\nvariable \"b\" {\n  default = 2\n}\n";
        assert_eq!(lines_of(text), [5]);
    }

    #[test]
    fn strings_comments_and_heredocs_do_not_count() {
        let text = concat!(
            "locals {\n",
            "  a = \"{ not a block\"\n",
            "  b = \"${merge({x = 1}, {y = \"}\"})}\"\n",
            "  # {\n",
            "  // {\n",
            "  /* { */\n",
            "  c = <<-EOT\n    { still text\n  EOT\n",
            "}\n",
        );
        assert!(open_braces(text).is_empty(), "{:?}", lines_of(text));
        let unclosed = format!("{text}resource \"x\" \"y\" {{\n  n = 1\n");
        assert_eq!(lines_of(&unclosed), [11]);
    }

    #[test]
    fn nested_open_blocks_are_listed_outermost_first() {
        assert_eq!(lines_of("a {\n  b {\n    c = 1\n"), [1, 2]);
    }

    #[test]
    fn what_the_scan_cannot_read_gives_nothing() {
        assert!(open_braces("a {\n  b = \"never ends\n").is_empty());
        assert!(open_braces("a }\n").is_empty());
        assert!(open_braces("/* a {\n").is_empty());
        assert!(open_braces("").is_empty());
    }
}
