//! Resource instance addresses as written in state: `TYPE.NAME`, `TYPE.NAME[0]`,
//! `TYPE.NAME["key"]`, `data.TYPE.NAME`. Parsed here only so `mv` can keep a resource's
//! `name` and `index_key` in step with its new address.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{Result, StateError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourceMode {
    Managed,
    Data,
}

/// The instance key of a resource declared with `count` (a number) or `for_each` (a string).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum IndexKey {
    Int(i64),
    Str(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Address {
    pub mode: ResourceMode,
    pub resource_type: String,
    pub name: String,
    pub index_key: Option<IndexKey>,
}

impl Address {
    pub fn parse(text: &str) -> Result<Address> {
        let invalid = |reason: &str| StateError::InvalidAddress {
            address: text.to_string(),
            reason: reason.to_string(),
        };
        let (mode, rest) = match text.strip_prefix("data.") {
            Some(rest) => (ResourceMode::Data, rest),
            None => (ResourceMode::Managed, text),
        };
        let (resource_type, rest) = rest
            .split_once('.')
            .ok_or_else(|| invalid("expected TYPE.NAME"))?;
        let (name, index) = match rest.find('[') {
            Some(open) => (&rest[..open], Some(&rest[open..])),
            None => (rest, None),
        };
        if !is_identifier(resource_type) {
            return Err(invalid("the type is not an identifier"));
        }
        if !is_identifier(name) {
            return Err(invalid("the name is not an identifier"));
        }
        let index_key = match index {
            None => None,
            Some(bracketed) => {
                let inner = bracketed
                    .strip_prefix('[')
                    .and_then(|s| s.strip_suffix(']'))
                    .ok_or_else(|| invalid("the index must be `[N]` or `[\"key\"]`"))?;
                Some(parse_index(inner).ok_or_else(|| {
                    invalid("the index must be a whole number or a quoted string")
                })?)
            }
        };
        Ok(Address {
            mode,
            resource_type: resource_type.to_string(),
            name: name.to_string(),
            index_key,
        })
    }
}

fn parse_index(inner: &str) -> Option<IndexKey> {
    if inner.starts_with('"') {
        return serde_json::from_str::<String>(inner)
            .ok()
            .map(IndexKey::Str);
    }
    inner.parse::<i64>().ok().map(IndexKey::Int)
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mode == ResourceMode::Data {
            f.write_str("data.")?;
        }
        write!(f, "{}.{}", self.resource_type, self.name)?;
        match &self.index_key {
            None => Ok(()),
            Some(IndexKey::Int(n)) => write!(f, "[{n}]"),
            Some(IndexKey::Str(s)) => write!(f, "[{}]", serde_json::Value::String(s.clone())),
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
        ] {
            let address = Address::parse(text).unwrap();
            assert_eq!(address.to_string(), text);
        }
        let a = Address::parse("data.t.n[\"k\"]").unwrap();
        assert_eq!(a.mode, ResourceMode::Data);
        assert_eq!(a.index_key, Some(IndexKey::Str("k".into())));
    }

    #[test]
    fn rejects_malformed() {
        for text in ["nodot", "t.", "t.n[", "t.n[x]", "t.n[1]x", "1t.n"] {
            assert!(Address::parse(text).is_err(), "{text} should be rejected");
        }
    }
}
