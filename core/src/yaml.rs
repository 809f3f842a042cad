//! The one YAML writer: block-style YAML from a value tree, every key and string
//! double-quoted so that no scalar changes type on the way back (`yes`, `on`, `1`, `null`
//! stay strings).
//!
//! Its users differ in three choices, which [`Style`] names: whether keys are sorted or
//! kept in the order given, whether a sequence under a key is indented, and whether a
//! multi-line string is written as a literal block. [`Style::GO_YAML`] is the
//! `yamlencode` function's (Terraform's, which writes through go-yaml);
//! [`Style::ORDERED`] keeps the order a document was built in, for files another tool
//! reads and a person compares with their source.
//!
//! Every output parses back (with any YAML 1.1 or 1.2 parser) to the value it was written
//! from; the property tests below check that for both styles.

use crate::value::{Object, Value};
use std::borrow::Cow;

/// How the writer lays out what YAML leaves open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Mapping keys in lexical order (true) or in the order the value holds them.
    pub sort_keys: bool,
    /// A sequence under a mapping key indented by two spaces (true), or flush with the key
    /// as go-yaml writes it.
    pub indent_sequences: bool,
    /// Multi-line strings as literal blocks (`|`) where that keeps them byte for byte
    /// (true), or always double-quoted on one line.
    pub literal_blocks: bool,
}

impl Style {
    /// Terraform's `yamlencode`: keys sorted (its objects have no declaration order),
    /// sequences flush with their key, multi-line strings as literal blocks.
    pub const GO_YAML: Style = Style {
        sort_keys: true,
        indent_sequences: false,
        literal_blocks: true,
    };
    /// Keys in the order given, sequences indented under their key, every string quoted on
    /// one line.
    pub const ORDERED: Style = Style {
        sort_keys: false,
        indent_sequences: true,
        literal_blocks: false,
    };
}

/// One node of a tree as the writer sees it.
pub enum Node<'a, T> {
    Null,
    Bool(bool),
    /// The number as it is to be written.
    Number(Cow<'a, str>),
    String(&'a str),
    Seq(&'a [T]),
    Map(Vec<(&'a str, &'a T)>),
}

/// A value tree the writer can walk.
pub trait Tree: Sized {
    fn node(&self) -> Node<'_, Self>;
}

impl Tree for Value {
    fn node(&self) -> Node<'_, Self> {
        match self {
            // Callers check for unknown values first; one left over is written as null,
            // as `jsonencode` does.
            Value::Null | Value::Unknown => Node::Null,
            Value::Bool(b) => Node::Bool(*b),
            Value::Number(n) => Node::Number(Cow::Owned(crate::value::number_to_string(n))),
            Value::String(s) => Node::String(s),
            Value::List(l) => Node::Seq(l),
            Value::Object(o) => Node::Map(entries(o)),
        }
    }
}

fn entries(o: &Object) -> Vec<(&str, &Value)> {
    o.iter().map(|(k, v)| (k.as_str(), v)).collect()
}

impl Tree for serde_json::Value {
    fn node(&self) -> Node<'_, Self> {
        use serde_json::Value as J;
        match self {
            J::Null => Node::Null,
            J::Bool(b) => Node::Bool(*b),
            J::Number(n) => Node::Number(Cow::Owned(n.to_string())),
            J::String(s) => Node::String(s),
            J::Array(a) => Node::Seq(a),
            J::Object(o) => Node::Map(o.iter().map(|(k, v)| (k.as_str(), v)).collect()),
        }
    }
}

/// Writes `v` as a YAML document in `style`, ending with a newline.
pub fn to_string<T: Tree>(v: &T, style: Style) -> String {
    let mut w = Writer {
        style,
        out: String::new(),
    };
    w.block(v.node(), 0, false);
    w.out
}

struct Writer {
    style: Style,
    out: String,
}

impl Writer {
    fn pad(&mut self, n: usize) {
        self.out.extend(std::iter::repeat_n(' ', n));
    }

    /// Writes a node in block style, ending with a newline. `inline` means the cursor
    /// already sits after `- `, so the first line is not indented again.
    fn block<T: Tree>(&mut self, node: Node<'_, T>, indent: usize, inline: bool) {
        match node {
            Node::Map(mut entries) if !entries.is_empty() => {
                if self.style.sort_keys {
                    entries.sort_by(|a, b| a.0.cmp(b.0));
                }
                for (i, (k, val)) in entries.into_iter().enumerate() {
                    if !(inline && i == 0) {
                        self.pad(indent);
                    }
                    quote(k, &mut self.out);
                    self.out.push(':');
                    match val.node() {
                        Node::Map(m) if !m.is_empty() => {
                            self.out.push('\n');
                            self.block(Node::Map(m), indent + 2, false);
                        }
                        Node::Seq(l) if !l.is_empty() => {
                            self.out.push('\n');
                            let at = if self.style.indent_sequences {
                                indent + 2
                            } else {
                                indent
                            };
                            self.block(Node::Seq(l), at, false);
                        }
                        scalar => {
                            self.out.push(' ');
                            self.scalar(scalar, indent + 2);
                            self.out.push('\n');
                        }
                    }
                }
            }
            Node::Seq(items) if !items.is_empty() => {
                for (i, item) in items.iter().enumerate() {
                    if !(inline && i == 0) {
                        self.pad(indent);
                    }
                    self.out.push_str("- ");
                    match item.node() {
                        Node::Map(m) if !m.is_empty() => self.block(Node::Map(m), indent + 2, true),
                        Node::Seq(l) if !l.is_empty() => self.block(Node::Seq(l), indent + 2, true),
                        scalar => {
                            self.scalar(scalar, indent + 2);
                            self.out.push('\n');
                        }
                    }
                }
            }
            // Only a document that is a scalar gets here. Its literal block is indented as
            // go-yaml does: content at column 0 would end the block at once.
            scalar => {
                self.scalar(scalar, indent + 2);
                self.out.push('\n');
            }
        }
    }

    /// Writes a scalar (or an empty collection) without a trailing newline. A literal
    /// block has its content at `indent`.
    fn scalar<T: Tree>(&mut self, node: Node<'_, T>, indent: usize) {
        match node {
            Node::Null => self.out.push_str("null"),
            Node::Bool(b) => self.out.push_str(if b { "true" } else { "false" }),
            Node::Number(n) => self.out.push_str(&n),
            Node::String(s) if self.style.literal_blocks && literal_friendly(s) => {
                self.literal(s, indent)
            }
            Node::String(s) => quote(s, &mut self.out),
            Node::Seq(_) => self.out.push_str("[]"),
            Node::Map(_) => self.out.push_str("{}"),
        }
    }

    fn literal(&mut self, s: &str, indent: usize) {
        let body = s.strip_suffix('\n');
        let chomp = match body {
            None => "-",
            Some(b) if b.ends_with('\n') => "+",
            Some(_) => "",
        };
        self.out.push('|');
        self.out.push_str(chomp);
        for line in body.unwrap_or(s).split('\n') {
            self.out.push('\n');
            if !line.is_empty() {
                self.pad(indent);
                self.out.push_str(line);
            }
        }
    }
}

/// A literal block keeps the string byte for byte only when every character but its line
/// feeds and tabs may stand unescaped (no carriage returns, controls or line separators)
/// and it does not start with whitespace (which would need an explicit indentation
/// indicator).
fn literal_friendly(s: &str) -> bool {
    s.contains('\n')
        && !s.starts_with([' ', '\n', '\t'])
        && s.chars().all(|c| c == '\n' || c == '\t' || plain(c))
}

/// A character a double-quoted scalar holds as itself.
fn plain(c: char) -> bool {
    match c {
        ' '..='~' => true,
        '\u{feff}' | '\u{2028}' | '\u{2029}' => false,
        '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..='\u{10ffff}' => true,
        _ => false,
    }
}

/// Writes `s` as a YAML double-quoted scalar that reads back as `s` exactly. Escaped are
/// the characters a YAML stream may not hold unescaped (controls, DEL, C1 controls, the
/// BOM and non-characters, as go-yaml escapes them) and the line separators U+2028 and
/// U+2029, which YAML 1.1 parsers (libyaml, PyYAML) take for line breaks and fold.
pub fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if plain(c) => out.push(c),
            c if (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push_str(&format!("\\U{:08X}", c as u32)),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Value as Json, json};

    /// Text pieces that YAML would read as something else unquoted, or that a careless
    /// quoter gets wrong: indicators, booleans and numbers of YAML 1.1 and 1.2, comment
    /// and document markers, line breaks of YAML 1.1 (NEL, LS, PS), BOM and
    /// non-characters.
    const TRICKY: &[&str] = &[
        "yes",
        "no",
        "on",
        "off",
        "y",
        "n",
        "true",
        "False",
        "null",
        "Null",
        "~",
        "1",
        "-1",
        "0o7",
        "012",
        "0x1F",
        "1e3",
        "1_000",
        ".inf",
        "-.Inf",
        ".nan",
        "1:20",
        "-",
        "- x",
        ":",
        "a: b",
        "key:",
        "#",
        "# c",
        " #",
        "---",
        "...",
        "&a",
        "*a",
        "!tag",
        "!!str",
        "%",
        "@",
        "`",
        "|",
        "|-",
        ">",
        "{",
        "}",
        "[",
        "]",
        ",",
        "?",
        "'",
        "\"",
        "\\",
        " ",
        "  ",
        "\t",
        "\n",
        "\r",
        "\r\n",
        "\u{0}",
        "\u{7f}",
        "\u{85}",
        "\u{a0}",
        "\u{2028}",
        "\u{2029}",
        "\u{feff}",
        "\u{fffe}",
        "\u{ffff}",
        "é",
        "日本",
        "😀",
        "\u{10fffe}",
    ];

    fn text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            prop::sample::select(TRICKY).prop_map(String::from),
            any::<char>().prop_map(String::from),
            "[a-z ]{0,6}",
        ];
        prop::collection::vec(piece, 0..6).prop_map(|p| p.concat())
    }

    /// Numbers both number writers print in plain decimal, so the comparison is about
    /// YAML and not about float formatting.
    fn number() -> impl Strategy<Value = Json> {
        prop_oneof![
            any::<i64>().prop_map(Json::from),
            (any::<i32>(), 1..4u32)
                .prop_map(|(i, k)| i as f64 / 10f64.powi(k as i32))
                .prop_filter("a fraction", |f| f.fract() != 0.0)
                .prop_map(Json::from),
        ]
    }

    fn tree() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            number(),
            text().prop_map(Json::String),
        ];
        leaf.prop_recursive(4, 48, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Json::Array),
                prop::collection::vec((text(), inner), 0..5)
                    .prop_map(|kv| Json::Object(kv.into_iter().collect())),
            ]
        })
    }

    fn sorted(j: &Json) -> Json {
        match j {
            Json::Array(a) => Json::Array(a.iter().map(sorted).collect()),
            Json::Object(o) => {
                let mut kv: Vec<_> = o.iter().map(|(k, v)| (k.clone(), sorted(v))).collect();
                kv.sort_by(|a, b| a.0.cmp(&b.0));
                Json::Object(kv.into_iter().collect())
            }
            other => other.clone(),
        }
    }

    /// Parses with libyaml (through serde_yaml_ng); mappings keep their order, so the
    /// comparison of the JSON texts checks key order as well.
    fn parse(text: &str) -> Result<Json, String> {
        serde_yaml_ng::from_str::<Json>(text).map_err(|e| e.to_string())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn go_yaml_style_reads_back_sorted(j in tree()) {
            let text = to_string(&Value::from_json(&j), Style::GO_YAML);
            let back = parse(&text);
            prop_assert_eq!(
                back.map(|b| b.to_string()),
                Ok(sorted(&j).to_string()),
                "yaml was:\n{}", text
            );
        }

        #[test]
        fn a_document_that_is_a_string_reads_back(s in text()) {
            for style in [Style::GO_YAML, Style::ORDERED] {
                let text = to_string(&Json::String(s.clone()), style);
                prop_assert_eq!(parse(&text), Ok(Json::String(s.clone())), "yaml was:\n{}", text);
            }
        }

        #[test]
        fn ordered_style_reads_back_in_order(j in tree()) {
            let text = to_string(&j, Style::ORDERED);
            prop_assert_eq!(
                parse(&text).map(|b| b.to_string()),
                Ok(j.to_string()),
                "yaml was:\n{}", text
            );
            // The value types differ but write alike.
            prop_assert_eq!(&to_string(&Value::from_json(&j), Style::ORDERED), &text);
        }
    }

    #[test]
    fn styles_differ_only_where_they_say() {
        let v = json!({"z": [1, {"b": "x\ny", "a": []}], "a": {"k": "v"}});
        assert_eq!(
            to_string(&v, Style::GO_YAML),
            "\"a\":\n  \"k\": \"v\"\n\"z\":\n- 1\n- \"a\": []\n  \"b\": |-\n    x\n    y\n"
        );
        assert_eq!(
            to_string(&v, Style::ORDERED),
            "\"z\":\n  - 1\n  - \"b\": \"x\\ny\"\n    \"a\": []\n\"a\":\n  \"k\": \"v\"\n"
        );
        assert_eq!(to_string(&json!([]), Style::ORDERED), "[]\n");
        assert_eq!(to_string(&json!("s"), Style::GO_YAML), "\"s\"\n");
        assert_eq!(
            to_string(&json!("a\n---\n"), Style::GO_YAML),
            "|\n  a\n  ---\n"
        );
        // Line separators are line breaks to YAML 1.1: escaped, also in a would-be literal.
        assert_eq!(
            to_string(&json!({"\u{2028}": "a\n\u{2029}"}), Style::GO_YAML),
            "\"\\u2028\": \"a\\n\\u2029\"\n"
        );
    }
}
