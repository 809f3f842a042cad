//! `brickform fmt`: canonical formatting of configuration files.
//!
//! The output matches `terraform fmt`, whose formatter (hclwrite) works on tokens and lines
//! rather than on the syntax tree: it re-indents each line by bracket nesting, normalizes
//! the spaces between tokens, and aligns the `=` (and trailing comments) of consecutive
//! single-line attributes. This module does the same over its own small tokenizer, after
//! hcl-edit has parsed the file, so only valid configurations are rewritten and parse
//! errors carry hcl-edit's message and location. Working on tokens keeps every comment
//! exactly where the user wrote it and never touches string or heredoc contents.
//!
//! On top of the layout, like `terraform fmt`: bare block labels are quoted, an attribute
//! whose whole value is `"${expr}"` becomes `expr`, and `variable` types written in the
//! legacy forms (`"string"`, `list`) are modernized.

/// A file that could not be formatted because it does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (line {line}, column {column})")]
pub struct FmtError {
    pub message: String,
    pub line: usize,
    pub column: usize,
}

/// Formats a configuration file. Idempotent: formatting the output again changes nothing.
pub fn format_source(src: &str) -> Result<String, FmtError> {
    let src = src.replace("\r\n", "\n");
    hcl_edit::parser::parse_body(&src).map_err(|e| FmtError {
        message: e.message().to_string(),
        line: e.location().line(),
        column: e.location().column(),
    })?;
    let lines = split_lines(lex(&src));
    Ok(render(lines))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ident,
    Number,
    /// A whole quoted string, template interpolations included, kept verbatim.
    Str,
    /// `<<EOT` / `<<-EOT`; the token's `body` holds the content and closing marker.
    Heredoc,
    /// `#` or `//` comment, without its newline.
    LineComment,
    /// `/* ... */`, possibly spanning lines, kept verbatim.
    BlockComment,
    Punct,
    Newline,
}

#[derive(Debug, Clone)]
struct Token {
    kind: Kind,
    text: String,
    /// Heredoc content through the closing marker, written after the opener's line.
    body: Option<String>,
}

impl Token {
    fn new(kind: Kind, text: impl Into<String>) -> Self {
        Token {
            kind,
            text: text.into(),
            body: None,
        }
    }

    fn is(&self, punct: &str) -> bool {
        self.kind == Kind::Punct && self.text == punct
    }

    fn is_comment(&self) -> bool {
        matches!(self.kind, Kind::LineComment | Kind::BlockComment)
    }

    fn bracket_change(&self) -> i32 {
        match (self.kind, self.text.as_str()) {
            (Kind::Punct, "{" | "[" | "(") => 1,
            (Kind::Punct, "}" | "]" | ")") => -1,
            _ => 0,
        }
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// Splits source into tokens. The input has already parsed, so the tokenizer only needs to
/// be right about valid HCL; on anything else it still terminates and keeps every character.
fn lex(src: &str) -> Vec<Token> {
    let chars: Vec<char> = src.chars().collect();
    let text = |from: usize, to: usize| chars[from..to.min(chars.len())].iter().collect::<String>();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let start = i;
        match c {
            '\n' => {
                tokens.push(Token::new(Kind::Newline, "\n"));
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            '#' => {
                i = line_end(&chars, i);
                tokens.push(Token::new(Kind::LineComment, text(start, i).trim_end()));
            }
            '/' if next == Some('/') => {
                i = line_end(&chars, i);
                tokens.push(Token::new(Kind::LineComment, text(start, i).trim_end()));
            }
            '/' if next == Some('*') => {
                i = find_from(&chars, i + 2, &['*', '/']).map_or(chars.len(), |p| p + 2);
                let raw = text(start, i);
                let trimmed: Vec<&str> = raw.split('\n').map(str::trim_end).collect();
                tokens.push(Token::new(Kind::BlockComment, trimmed.join("\n")));
            }
            '"' => {
                i = scan_string(&chars, i);
                tokens.push(Token::new(Kind::Str, text(start, i)));
            }
            '<' if next == Some('<') && heredoc_marker(&chars, i).is_some() => {
                let (marker, opener_end) = heredoc_marker(&chars, i).unwrap_or_default();
                let body_start = opener_end + 1; // past the newline after the marker
                let mut line_start = body_start;
                let mut body_end = chars.len();
                while line_start < chars.len() {
                    let end = line_end(&chars, line_start);
                    if text(line_start, end).trim() == marker {
                        body_end = end;
                        break;
                    }
                    line_start = end + 1;
                }
                let mut tok = Token::new(Kind::Heredoc, text(start, opener_end));
                tok.body = Some(text(body_start, body_end));
                tokens.push(tok);
                i = body_end;
            }
            c if c.is_ascii_digit() => {
                i = scan_number(&chars, i);
                tokens.push(Token::new(Kind::Number, text(start, i)));
            }
            c if is_ident_start(c) => {
                while i < chars.len() && is_ident_char(chars[i]) {
                    i += 1;
                }
                tokens.push(Token::new(Kind::Ident, text(start, i)));
            }
            _ => {
                let three = text(i, i + 3);
                let two = text(i, i + 2);
                let len = if three == "..." {
                    3
                } else if ["==", "!=", "<=", ">=", "&&", "||", "=>", "::"].contains(&two.as_str()) {
                    2
                } else {
                    1
                };
                i += len;
                tokens.push(Token::new(Kind::Punct, text(start, i)));
            }
        }
    }
    tokens
}

fn line_end(chars: &[char], from: usize) -> usize {
    chars[from..]
        .iter()
        .position(|&c| c == '\n')
        .map_or(chars.len(), |p| from + p)
}

fn find_from(chars: &[char], from: usize, needle: &[char]) -> Option<usize> {
    (from..chars.len()).find(|&p| chars[p..].starts_with(needle))
}

/// For `<<EOT` or `<<-EOT` followed by a newline: the marker and the index of that newline.
fn heredoc_marker(chars: &[char], at: usize) -> Option<(String, usize)> {
    let mut i = at + 2;
    if chars.get(i) == Some(&'-') {
        i += 1;
    }
    let start = i;
    while i < chars.len() && is_ident_char(chars[i]) {
        i += 1;
    }
    let marker: String = chars[start..i].iter().collect();
    let starts_ok = marker.chars().next().is_some_and(is_ident_start);
    (starts_ok && chars.get(i) == Some(&'\n')).then_some((marker, i))
}

fn scan_number(chars: &[char], mut i: usize) -> usize {
    let digits = |i: &mut usize| {
        while *i < chars.len() && chars[*i].is_ascii_digit() {
            *i += 1;
        }
    };
    digits(&mut i);
    if chars.get(i) == Some(&'.') && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
        i += 1;
        digits(&mut i);
    }
    if matches!(chars.get(i), Some('e' | 'E')) {
        let mut j = i + 1;
        if matches!(chars.get(j), Some('+' | '-')) {
            j += 1;
        }
        if chars.get(j).is_some_and(char::is_ascii_digit) {
            i = j;
            digits(&mut i);
        }
    }
    i
}

/// Index just past the quoted string starting at `at`, skipping escapes and any
/// `${ ... }` / `%{ ... }` sequences (which may contain strings of their own).
fn scan_string(chars: &[char], at: usize) -> usize {
    let mut i = at + 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            '\n' => return i,
            '$' | '%' if chars.get(i + 1) == Some(&chars[i]) && chars.get(i + 2) == Some(&'{') => {
                i += 3
            }
            '$' | '%' if chars.get(i + 1) == Some(&'{') => i = scan_template_expr(chars, i + 2),
            _ => i += 1,
        }
    }
    i
}

/// Index just past the `}` closing a template sequence whose content starts at `from`.
fn scan_template_expr(chars: &[char], from: usize) -> usize {
    let mut depth = 0;
    let mut i = from;
    while i < chars.len() {
        match chars[i] {
            '"' => {
                i = scan_string(chars, i);
                continue;
            }
            '{' => depth += 1,
            '}' if depth == 0 => return i + 1,
            '}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    i
}

fn split_lines(tokens: Vec<Token>) -> Vec<Vec<Token>> {
    let mut lines = vec![Vec::new()];
    for t in tokens {
        if t.kind == Kind::Newline {
            lines.push(Vec::new());
        } else if let Some(line) = lines.last_mut() {
            line.push(t);
        }
    }
    lines
}

/// What an open bracket opened, so the formatter knows whether a line is in a body (where
/// block headers and attributes live) and which block it is in.
#[derive(Debug, Clone)]
enum Open {
    Block(String),
    Other,
}

/// One output line, split like hclwrite's: the tokens before the `=`, the `=` and its
/// value, and a trailing comment, so the `=` and comments can be aligned.
struct Line {
    indent: usize,
    lead: Vec<Token>,
    assign: Vec<Token>,
    comment: Option<Token>,
    /// Spaces before the `=` and before the comment, settled by alignment.
    assign_gap: usize,
    comment_gap: usize,
}

impl Line {
    fn lead_width(&self) -> usize {
        self.indent + joined_width(&self.lead)
    }

    fn code_width(&self) -> usize {
        let assign = if self.assign.is_empty() {
            0
        } else {
            self.assign_gap + joined_width(&self.assign)
        };
        self.lead_width() + assign
    }
}

fn render(raw_lines: Vec<Vec<Token>>) -> String {
    let mut stack: Vec<Open> = Vec::new();
    let mut indents: Vec<i32> = Vec::new();
    let mut lines: Vec<Option<Line>> = Vec::new(); // None: a blank line
    for mut tokens in raw_lines {
        if tokens.is_empty() {
            if lines.last().is_some_and(Option::is_some) {
                lines.push(None);
            }
            continue;
        }
        let in_body = matches!(stack.last(), None | Some(Open::Block(_)));
        let header = in_body && quote_labels(&mut tokens);
        if in_body {
            let block = match stack.last() {
                Some(Open::Block(name)) => name.as_str(),
                _ => "",
            };
            normalize_value(&mut tokens, block);
        }
        let indent = indent_for(&tokens, &mut indents);
        for (n, t) in tokens.iter().enumerate() {
            match t.bracket_change() {
                1 if header && t.is("{") && stack_push_is_header(&tokens, n) => {
                    stack.push(Open::Block(tokens[0].text.clone()));
                }
                1 => stack.push(Open::Other),
                -1 => {
                    stack.pop();
                }
                _ => {}
            }
        }
        lines.push(Some(split_cells(tokens, indent)));
    }
    while lines.last().is_some_and(Option::is_none) {
        lines.pop();
    }
    align(
        &mut lines,
        |l| (!l.assign.is_empty()).then(|| l.lead_width()),
        |l, gap| l.assign_gap = gap,
    );
    align(
        &mut lines,
        |l| l.comment.as_ref().map(|_| l.code_width()),
        |l, gap| l.comment_gap = gap,
    );

    let mut out = String::new();
    for line in &lines {
        if let Some(line) = line {
            write_line(line, &mut out);
        }
        out.push('\n');
    }
    out
}

/// The block header's `{` is the first `{` of the line.
fn stack_push_is_header(tokens: &[Token], n: usize) -> bool {
    tokens.iter().position(|t| t.is("{")) == Some(n)
}

/// hclwrite's indentation: a line opening more brackets than it closes indents the lines
/// after it one level; closing brackets pop levels, however many brackets each one opened.
fn indent_for(tokens: &[Token], indents: &mut Vec<i32>) -> usize {
    let mut net = 0;
    for t in tokens {
        net += t.bracket_change();
        if t.kind == Kind::Heredoc {
            break;
        }
    }
    if net > 0 {
        let level = indents.len();
        indents.push(net);
        return 2 * level;
    }
    let mut closed = -net;
    while closed > 0 {
        let Some(top) = indents.last_mut() else { break };
        if closed >= *top {
            closed -= *top;
            indents.pop();
        } else {
            *top -= closed;
            closed = 0;
        }
    }
    2 * indents.len()
}

/// Quotes bare labels on a block header line (`resource aws_x name {`). Returns whether the
/// line is a block header.
fn quote_labels(tokens: &mut [Token]) -> bool {
    let Some(open) = tokens.iter().position(|t| t.is("{")) else {
        return false;
    };
    let header = open > 0
        && tokens[0].kind == Kind::Ident
        && tokens[1..open]
            .iter()
            .all(|t| matches!(t.kind, Kind::Ident | Kind::Str));
    if header {
        for t in &mut tokens[1..open] {
            if t.kind == Kind::Ident {
                t.text = format!("\"{}\"", t.text);
                t.kind = Kind::Str;
            }
        }
    }
    header
}

/// Rewrites an attribute's value the way `terraform fmt` does: `"${expr}"` becomes `expr`,
/// and in a `variable` block the legacy type spellings become type expressions.
fn normalize_value(tokens: &mut Vec<Token>, block: &str) {
    let code_len = if tokens.last().is_some_and(Token::is_comment) {
        tokens.len() - 1
    } else {
        tokens.len()
    };
    if code_len != 3 || tokens[0].kind != Kind::Ident || !tokens[1].is("=") {
        return;
    }
    let value = &tokens[2];
    if block == "variable" && tokens[0].text == "type" {
        let modern = match (value.kind, value.text.as_str()) {
            (Kind::Str, "\"string\"") => Some("string"),
            (Kind::Str, "\"list\"") => Some("list(string)"),
            (Kind::Str, "\"map\"") => Some("map(string)"),
            (Kind::Ident, "list") => Some("list(any)"),
            (Kind::Ident, "map") => Some("map(any)"),
            _ => None,
        };
        if let Some(modern) = modern {
            let replacement = lex(modern);
            tokens.splice(2..3, replacement);
            return;
        }
    }
    if value.kind == Kind::Str
        && let Some(inner) = sole_interpolation(&value.text)
    {
        let replacement = lex(inner.trim());
        tokens.splice(2..3, replacement);
    }
}

/// The expression inside `"${expr}"` when the string is nothing but that one
/// interpolation (no strip markers, no surrounding text, on one line).
fn sole_interpolation(s: &str) -> Option<&str> {
    let inner = s.strip_prefix("\"${")?.strip_suffix("}\"")?;
    if inner.contains('\n')
        || inner.starts_with('~')
        || inner.ends_with('~')
        || inner.trim().is_empty()
    {
        return None;
    }
    let chars: Vec<char> = s.chars().collect();
    // The interpolation must close exactly at the string's final `}`.
    (scan_template_expr(&chars, 3) == chars.len() - 1).then_some(inner)
}

fn split_cells(mut tokens: Vec<Token>, indent: usize) -> Line {
    let comment = if tokens.len() > 1 && tokens.last().is_some_and(Token::is_comment) {
        tokens.pop()
    } else {
        None
    };
    let mut assign = Vec::new();
    if let Some(eq) = tokens.iter().skip(1).position(|t| t.is("=")).map(|p| p + 1) {
        let mut net = 0;
        for t in &tokens[eq..] {
            net += t.bracket_change();
            if t.kind == Kind::Heredoc {
                break;
            }
        }
        // A value that opens more brackets than it closes is a multi-line attribute, which
        // ends any run of aligned `=`.
        if net == 0 {
            assign = tokens.split_off(eq);
        }
    }
    Line {
        indent,
        lead: tokens,
        assign,
        comment,
        assign_gap: 1,
        comment_gap: 1,
    }
}

/// Aligns a column over each run of consecutive lines that have it: `column` gives the
/// width before the aligned cell (None breaks the run), `set` stores the gap to use.
fn align(
    lines: &mut [Option<Line>],
    column: impl Fn(&Line) -> Option<usize>,
    set: impl Fn(&mut Line, usize),
) {
    let mut i = 0;
    while i < lines.len() {
        let run_end = (i..lines.len())
            .find(|&j| lines[j].as_ref().and_then(&column).is_none())
            .unwrap_or(lines.len());
        if run_end == i {
            i += 1;
            continue;
        }
        let widest = lines[i..run_end]
            .iter()
            .flatten()
            .filter_map(&column)
            .max()
            .unwrap_or(0);
        for line in lines[i..run_end].iter_mut().flatten() {
            if let Some(w) = column(line) {
                set(line, widest - w + 1);
            }
        }
        i = run_end;
    }
}

fn write_line(line: &Line, out: &mut String) {
    let start = out.len();
    out.push_str(&" ".repeat(line.indent));
    write_tokens(&line.lead, out);
    if !line.assign.is_empty() {
        out.push_str(&" ".repeat(line.assign_gap));
        write_tokens(&line.assign, out);
    }
    if let Some(c) = &line.comment {
        out.push_str(&" ".repeat(line.comment_gap));
        out.push_str(&c.text);
    }
    let trimmed = out[start..].trim_end().len();
    out.truncate(start + trimmed);
    if let Some(body) = line
        .lead
        .iter()
        .chain(&line.assign)
        .find_map(|t| t.body.as_ref())
    {
        out.push('\n');
        out.push_str(body);
    }
}

fn joined_width(tokens: &[Token]) -> usize {
    let mut s = String::new();
    write_tokens(tokens, &mut s);
    s.chars().count()
}

fn write_tokens(tokens: &[Token], out: &mut String) {
    for (n, t) in tokens.iter().enumerate() {
        if n > 0 && space_between(n.checked_sub(2).map(|b| &tokens[b]), &tokens[n - 1], t) {
            out.push(' ');
        }
        out.push_str(&t.text);
    }
}

/// hclwrite's spacing rules between two tokens on a line.
fn space_between(before: Option<&Token>, subject: &Token, after: &Token) -> bool {
    let opens = |t: &Token| t.bracket_change() > 0;
    let closes = |t: &Token| t.bracket_change() < 0;
    if after.is_comment() {
        return true;
    }
    if subject.kind == Kind::Ident && after.is("(") {
        return false;
    }
    if subject.is("::") || after.is("::") || subject.is(".") || after.is(".") {
        return false;
    }
    if after.is(",") || after.is("...") {
        return false;
    }
    if subject.is(",") {
        return true;
    }
    if subject.is("!") {
        return false;
    }
    // `[for x in [a]: x]`: `in` is a keyword there, not a reference being indexed.
    if subject.kind == Kind::Ident
        && subject.text == "in"
        && before.is_some_and(|b| b.kind == Kind::Ident)
    {
        return true;
    }
    if after.is("[") && (matches!(subject.kind, Kind::Ident | Kind::Number) || closes(subject)) {
        return false;
    }
    if subject.is("-") {
        // A minus after something that cannot end an operand is a negation.
        let negation = match before {
            None => true,
            Some(b) => {
                opens(b)
                    || (b.kind == Kind::Punct
                        && matches!(
                            b.text.as_str(),
                            "=" | ":"
                                | ","
                                | "?"
                                | "+"
                                | "*"
                                | "/"
                                | "%"
                                | "-"
                                | "=="
                                | "!="
                                | ">"
                                | ">="
                                | "<"
                                | "<="
                                | "&&"
                                | "||"
                                | "!"
                        ))
            }
        };
        return !negation;
    }
    if subject.is("{") || after.is("}") {
        return !(subject.is("{") && after.is("}"));
    }
    if opens(subject) || closes(after) {
        return false;
    }
    true
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a fixture that fails to parse should abort its test
mod tests {
    use super::*;

    fn fmt(src: &str) -> String {
        match format_source(src) {
            Ok(s) => s,
            Err(e) => panic!("format failed: {e}\n{src}"),
        }
    }

    fn check(src: &str, want: &str) {
        let got = fmt(src);
        assert_eq!(got, want, "\n--- got ---\n{got}\n--- want ---\n{want}");
        assert_eq!(fmt(&got), got, "not idempotent");
    }

    const RESOURCE: &str = r#"
# Orders pipeline


resource databricks_job orders {
    name = "orders"   # display name
    max_concurrent_runs=1
  timeout_seconds =   3600
    tags = {
      team="data"
        cost_center = "1234"
    }

  // tasks run in order
  task {
          task_key = "ingest"
    notebook_task {
      notebook_path = "${var.repo}/ingest"
      base_parameters = {env = var.env, "run-date" = "today"}
    }
  }
  depends_on = [databricks_schema.raw,databricks_schema.silver]
}
"#;

    const RESOURCE_WANT: &str = r#"# Orders pipeline

resource "databricks_job" "orders" {
  name                = "orders" # display name
  max_concurrent_runs = 1
  timeout_seconds     = 3600
  tags = {
    team        = "data"
    cost_center = "1234"
  }

  // tasks run in order
  task {
    task_key = "ingest"
    notebook_task {
      notebook_path   = "${var.repo}/ingest"
      base_parameters = { env = var.env, "run-date" = "today" }
    }
  }
  depends_on = [databricks_schema.raw, databricks_schema.silver]
}
"#;

    #[test]
    fn resource_with_nested_blocks() {
        check(RESOURCE, RESOURCE_WANT);
    }

    const HEREDOC: &str = "locals {\n      query = <<-SQL\n    SELECT *   \n        FROM   t\n    SQL\n  x=1\nplain = <<EOT\n  keep   this  \n\nEOT\n}\n";

    #[test]
    fn heredoc_content_is_untouched() {
        let want = "locals {\n  query = <<-SQL\n    SELECT *   \n        FROM   t\n    SQL\n  x     = 1\n  plain = <<EOT\n  keep   this  \n\nEOT\n}\n";
        check(HEREDOC, want);
    }

    const COMMENTS: &str = r#"variable "env" {
  type = "string"   // legacy
  /* block
     comment */
  default = "dev"
  description = "target environment"
}

locals {
  a = 1 # one
  bbb = 22 # twenty-two
  # standalone
  list = [
    "x", # first
       "y",
  ]
  obj = {
      k = "v"
  }
  unwrapped = "${local.a}"
  kept = "prefix-${local.a}"
  s = !var.flag
  n = -1
  m = 2 - 1
  f = [for x in var.xs: upper(x) if x != ""]
  i = var.list[0].name
  sp = var.list[*].id
}
"#;

    #[test]
    fn comments_objects_and_lists() {
        let want = r#"variable "env" {
  type = string // legacy
  /* block
     comment */
  default     = "dev"
  description = "target environment"
}

locals {
  a   = 1  # one
  bbb = 22 # twenty-two
  # standalone
  list = [
    "x", # first
    "y",
  ]
  obj = {
    k = "v"
  }
  unwrapped = local.a
  kept      = "prefix-${local.a}"
  s         = !var.flag
  n         = -1
  m         = 2 - 1
  f         = [for x in var.xs : upper(x) if x != ""]
  i         = var.list[0].name
  sp        = var.list[*].id
}
"#;
        check(COMMENTS, want);
    }

    const CALLS: &str = "output \"x\" {\n  value = merge(\n  local.a,\n      {\n    b = 1\n  },\n  )\n  sensitive=true\n}\nmodule_like {\n}\nempty {}\n\n\n\n";

    #[test]
    fn multi_line_calls_and_empty_blocks() {
        let want = "output \"x\" {\n  value = merge(\n    local.a,\n    {\n      b = 1\n    },\n  )\n  sensitive = true\n}\nmodule_like {\n}\nempty {}\n";
        check(CALLS, want);
    }

    #[test]
    fn variable_types_are_modernized() {
        check(
            "variable \"a\" {\n  type = list\n}\nvariable \"b\" {\n  type = \"map\"\n}\n",
            "variable \"a\" {\n  type = list(any)\n}\nvariable \"b\" {\n  type = map(string)\n}\n",
        );
    }

    #[test]
    fn whitespace_edges() {
        check("", "");
        check("\n\n  \n", "");
        check("a = 1", "a = 1\n");
        check("a = 1   \n\n\n\nb = 2\n\n\n", "a = 1\n\nb = 2\n");
        check("a = 1\r\nbb = 2\r\n", "a  = 1\nbb = 2\n");
    }

    #[test]
    fn parse_errors_carry_a_location() {
        let e = format_source("resource \"x\" {\n  a = \n}\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 7), "{e:?}");
        assert!(!e.message.is_empty());
    }

    const ODD: &str = "resource x y { # header comment\n  a = [ # after bracket\n    1, /* inline */ 2,\n    # between\n  ]\n  /* before */ b = 2\n  c = jsonencode({\n    k = \"v\" // trailing\n  })\n\n\n  // dangling at end of block\n}\n// end of file without newline";

    #[test]
    fn comments_in_odd_places() {
        // Consecutive trailing comments line up, as hclwrite aligns them.
        let want = "resource \"x\" \"y\" { # header comment\n  a = [            # after bracket\n    1, /* inline */ 2,\n    # between\n  ]\n  /* before */ b = 2\n  c = jsonencode({\n    k = \"v\" // trailing\n  })\n\n  // dangling at end of block\n}\n// end of file without newline\n";
        check(ODD, want);
    }

    const REALISTIC: &str = r#"brickform {
  required_version = ">= 0.1"
  backend "volume" {
    path="/Volumes/ops/state/brickform"
  }
}

locals {
  flows = { for row in csvdecode(file("flows.csv")) :
    row.table => row
  if row.enabled == "true" }
  owners = {
    "data-eng": "alice",
    "ml" : "bob"
  }
  grants = [
    {
      principal = "analysts"
      privileges = ["SELECT","USE_SCHEMA"]
    },
    { principal = "admins", privileges = ["ALL_PRIVILEGES"] },
  ]
  cluster_size = var.env == "prod" ? (
    8
  ) : 2
  script = <<-EOT
    %{ for t in local.tables ~}
    CREATE TABLE ${t} (id INT);
    %{ endfor ~}
  EOT
}

resource "databricks_table" "flow" {
  for_each = local.flows
  name = each.key
  catalog_name = "${var.catalog}"
  comment = "Loaded from ${each.value.source} }"

  dynamic "column" {
    for_each = each.value.columns
    content {
      name = column.value.name
      type = upper(column.value.type)
    }
  }
  lifecycle {
    prevent_destroy = true
    ignore_changes = [comment, properties["owner"]]
  }
}
"#;

    const REALISTIC_WANT: &str = r#"brickform {
  required_version = ">= 0.1"
  backend "volume" {
    path = "/Volumes/ops/state/brickform"
  }
}

locals {
  flows = { for row in csvdecode(file("flows.csv")) :
    row.table => row
  if row.enabled == "true" }
  owners = {
    "data-eng" : "alice",
    "ml" : "bob"
  }
  grants = [
    {
      principal  = "analysts"
      privileges = ["SELECT", "USE_SCHEMA"]
    },
    { principal = "admins", privileges = ["ALL_PRIVILEGES"] },
  ]
  cluster_size = var.env == "prod" ? (
    8
  ) : 2
  script = <<-EOT
    %{ for t in local.tables ~}
    CREATE TABLE ${t} (id INT);
    %{ endfor ~}
  EOT
}

resource "databricks_table" "flow" {
  for_each     = local.flows
  name         = each.key
  catalog_name = var.catalog
  comment      = "Loaded from ${each.value.source} }"

  dynamic "column" {
    for_each = each.value.columns
    content {
      name = column.value.name
      type = upper(column.value.type)
    }
  }
  lifecycle {
    prevent_destroy = true
    ignore_changes  = [comment, properties["owner"]]
  }
}
"#;

    #[test]
    fn realistic_configuration() {
        // Multi-line expressions are indented by bracket nesting, as hclwrite does: the
        // `if` clause closing the `for` sits at the level its line's brackets give it.
        check(REALISTIC, REALISTIC_WANT);
    }

    #[test]
    fn idempotent_over_all_fixtures() {
        for src in [RESOURCE, HEREDOC, COMMENTS, CALLS, ODD, REALISTIC] {
            let once = fmt(src);
            assert_eq!(fmt(&once), once);
        }
    }
}
