//! Resource and instance addresses: `TYPE.NAME`, `data.TYPE.NAME`, `TYPE.NAME[0]`,
//! `TYPE.NAME["key"]`.
//!
//! The types live in the state crate because state records them (`mode`, `index_key`) and
//! the engine (which depends on this crate) plans and applies by them: one mode and one
//! instance-key type serve both. The engine re-exports them as `brickform_core::addrs`.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Whether a block is a managed `resource` or a `data` source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceMode {
    Managed,
    Data,
}

/// The key of one instance of a resource with `count` (a number) or `for_each` (a string).
/// Serialised bare (`0`, `"key"`), as Terraform writes `index_key`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InstanceKey {
    Index(usize),
    Key(String),
}

/// A resource block's address: `TYPE.NAME` or `data.TYPE.NAME`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceAddr {
    pub mode: ResourceMode,
    pub type_name: String,
    pub name: String,
}

/// One instance of a resource: its block's address and, with `count` or `for_each`, its key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstanceAddr {
    pub resource: ResourceAddr,
    pub key: Option<InstanceKey>,
}

/// Why a text is not an address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid resource address `{address}`: {reason}")]
pub struct AddressError {
    pub address: String,
    pub reason: &'static str,
}

impl ResourceAddr {
    pub fn new(mode: ResourceMode, type_name: &str, name: &str) -> ResourceAddr {
        ResourceAddr {
            mode,
            type_name: type_name.to_string(),
            name: name.to_string(),
        }
    }

    /// Parses `TYPE.NAME` or `data.TYPE.NAME` (no instance key).
    pub fn parse(text: &str) -> Result<ResourceAddr, AddressError> {
        let addr = InstanceAddr::parse(text)?;
        match addr.key {
            None => Ok(addr.resource),
            Some(_) => Err(AddressError {
                address: text.to_string(),
                reason: "a resource address has no instance key",
            }),
        }
    }

    /// The address of one instance of this resource.
    pub fn instance(&self, key: Option<InstanceKey>) -> InstanceAddr {
        InstanceAddr {
            resource: self.clone(),
            key,
        }
    }
}

impl InstanceAddr {
    pub fn parse(text: &str) -> Result<InstanceAddr, AddressError> {
        let invalid = |reason: &'static str| AddressError {
            address: text.to_string(),
            reason,
        };
        let (mode, rest) = match text.strip_prefix("data.") {
            Some(rest) => (ResourceMode::Data, rest),
            None => (ResourceMode::Managed, text),
        };
        let (type_name, rest) = rest
            .split_once('.')
            .ok_or_else(|| invalid("expected TYPE.NAME"))?;
        // The name is an identifier, so the first `[` opens the key even when the key
        // itself holds brackets.
        let (name, index) = match rest.find('[') {
            Some(open) => (&rest[..open], Some(&rest[open..])),
            None => (rest, None),
        };
        if !is_identifier(type_name) {
            return Err(invalid("the type is not an identifier"));
        }
        if !is_identifier(name) {
            return Err(invalid("the name is not an identifier"));
        }
        let key = match index {
            None => None,
            Some(bracketed) => {
                let inner = bracketed
                    .strip_prefix('[')
                    .and_then(|s| s.strip_suffix(']'))
                    .ok_or_else(|| invalid("the index must be `[N]` or `[\"key\"]`"))?;
                Some(parse_key(inner).ok_or_else(|| {
                    invalid("the index must be a whole number or a quoted string")
                })?)
            }
        };
        Ok(InstanceAddr {
            resource: ResourceAddr::new(mode, type_name, name),
            key,
        })
    }

    /// The block's address as text, without the key: what configuration declares.
    pub fn base(&self) -> String {
        self.resource.to_string()
    }
}

/// The block part of an instance address (`TYPE.NAME[0]` → `TYPE.NAME`). Lexical, for texts
/// the engine built itself: neither the type nor the name holds a `[`, so the first one opens
/// the key, even when the key itself holds brackets.
pub fn base_of(address: &str) -> &str {
    address.find('[').map_or(address, |i| &address[..i])
}

/// The instance key of an address the engine built (`TYPE.NAME["k"]` → `k`); `None` without
/// one.
pub fn key_of(address: &str) -> Option<InstanceKey> {
    let open = address.find('[')?;
    parse_key(address[open..].strip_prefix('[')?.strip_suffix(']')?)
}

fn parse_key(inner: &str) -> Option<InstanceKey> {
    if inner.starts_with('"') {
        return unquote(inner).map(InstanceKey::Key);
    }
    // Digits only: `+1` and ` 1` are not indexes.
    if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit()) {
        return inner.parse::<usize>().ok().map(InstanceKey::Index);
    }
    None
}

/// A quoted string as [`quote`] writes it; the JSON escapes (`\u0001`, `\/`, `\b`, `\f`) are
/// read too, as addresses written by Terraform and by older versions use them.
fn unquote(text: &str) -> Option<String> {
    let body = text.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return None,
            '\\' => match chars.next()? {
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                '/' => out.push('/'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'u' => {
                    let high = hex4(&mut chars)?;
                    let code = if (0xD800..0xDC00).contains(&high) {
                        if chars.next()? != '\\' || chars.next()? != 'u' {
                            return None;
                        }
                        let low = hex4(&mut chars)?;
                        if !(0xDC00..0xE000).contains(&low) {
                            return None;
                        }
                        0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        high
                    };
                    out.push(char::from_u32(code)?);
                }
                _ => return None,
            },
            c => out.push(c),
        }
    }
    Some(out)
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Option<u32> {
    let mut n = 0;
    for _ in 0..4 {
        n = n * 16 + chars.next()?.to_digit(16)?;
    }
    Some(n)
}

/// A string as an HCL quoted literal: `"`, `\` and the line and tab controls escaped, the
/// rest as is. The one quoting of instance keys and of string values in plans.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl fmt::Display for ResourceMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ResourceMode::Managed => "managed",
            ResourceMode::Data => "data",
        })
    }
}

impl fmt::Display for InstanceKey {
    /// The key as written between the brackets: `0`, `"key"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstanceKey::Index(i) => write!(f, "{i}"),
            InstanceKey::Key(k) => f.write_str(&quote(k)),
        }
    }
}

impl fmt::Display for ResourceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mode == ResourceMode::Data {
            f.write_str("data.")?;
        }
        write!(f, "{}.{}", self.type_name, self.name)
    }
}

impl fmt::Display for InstanceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.resource)?;
        match &self.key {
            None => Ok(()),
            Some(key) => write!(f, "[{key}]"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form_and_round_trips() {
        for text in [
            "databricks_catalog.main",
            "databricks_job.etl[0]",
            "sdp_meta_flow.orders[\"eu.orders\"]",
            "data.databricks_current_user.me",
            "t.n[\"a[b]\\\"c\\\\d\\n\"]",
        ] {
            let address = InstanceAddr::parse(text).unwrap();
            assert_eq!(address.to_string(), text);
        }
        let a = InstanceAddr::parse("data.t.n[\"k\"]").unwrap();
        assert_eq!(a.resource.mode, ResourceMode::Data);
        assert_eq!(a.key, Some(InstanceKey::Key("k".into())));
        assert_eq!(a.base(), "data.t.n");
    }

    #[test]
    fn reads_json_escapes() {
        let a = InstanceAddr::parse("t.n[\"\\u0001\\/\\ud83d\\ude00\"]").unwrap();
        assert_eq!(a.key, Some(InstanceKey::Key("\u{1}/😀".into())));
    }

    #[test]
    fn rejects_malformed() {
        for text in [
            "nodot",
            "t.",
            "t.n[",
            "t.n[x]",
            "t.n[1]x",
            "1t.n",
            "t.n[-1]",
            "t.n[+1]",
            "t.n[\"a\"b\"]",
            "t.n[\"\\q\"]",
            "t.n[\"\\ud800\"]",
        ] {
            assert!(
                InstanceAddr::parse(text).is_err(),
                "{text} should be rejected"
            );
        }
        assert!(ResourceAddr::parse("t.n[0]").is_err());
    }

    #[test]
    fn base_and_key_of_text() {
        assert_eq!(base_of("t.n[\"a[b\"]"), "t.n");
        assert_eq!(base_of("data.t.n"), "data.t.n");
        assert_eq!(key_of("t.n[3]"), Some(InstanceKey::Index(3)));
        assert_eq!(key_of("t.n"), None);
    }
}
