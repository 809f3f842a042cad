//! Salted fingerprints of sensitive values.
//!
//! State never holds a secret, yet the planner must notice when one changes. An HMAC keyed with a
//! per-state random salt lets it compare without storing the value, and the salt keeps a leaked
//! state file from being checked against a dictionary of likely passwords shared across states.

use hmac::{Hmac, Mac};
use rand::RngCore;
use serde_json::Value;
use sha2::Sha256;

const PREFIX: &str = "hmac-sha256:";
const SALT_BYTES: usize = 32;

type HmacSha256 = Hmac<Sha256>;

/// A fresh random salt, hex encoded (64 characters).
pub fn new_salt() -> String {
    let mut bytes = [0u8; SALT_BYTES];
    rand::rng().fill_bytes(&mut bytes);
    hex(&bytes)
}

/// `hmac-sha256:<hex>` of the value's canonical JSON, keyed by `salt`.
pub fn fingerprint(salt: &str, value: &Value) -> String {
    let mac = mac_of(salt, value);
    format!("{PREFIX}{}", hex(&mac.finalize().into_bytes()))
}

/// Whether `value` is the one `fingerprint` was taken of. Constant time in the digest, so a caller
/// comparing user-supplied guesses leaks nothing through timing.
pub fn fingerprint_matches(salt: &str, value: &Value, fingerprint: &str) -> bool {
    let Some(digest) = fingerprint.strip_prefix(PREFIX).and_then(unhex) else {
        return false;
    };
    mac_of(salt, value).verify_slice(&digest).is_ok()
}

fn mac_of(salt: &str, value: &Value) -> HmacSha256 {
    // HMAC accepts keys of any length, so this constructor cannot fail; fall back to an empty-key
    // MAC rather than panic should that ever change.
    let mut mac = HmacSha256::new_from_slice(salt.as_bytes())
        .unwrap_or_else(|_| <HmacSha256 as Mac>::new(&Default::default()));
    let mut canonical = String::new();
    write_canonical(value, &mut canonical);
    mac.update(canonical.as_bytes());
    mac
}

/// JSON with object keys sorted, so a fingerprint does not depend on the order attributes were
/// written in (the workspace builds serde_json with `preserve_order`).
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(v) = map.get(key) {
                    write_canonical(v, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn same_value_same_salt_matches() {
        let salt = new_salt();
        let fp = fingerprint(&salt, &json!("hunter2"));
        assert!(fp.starts_with("hmac-sha256:"));
        assert!(!fp.contains("hunter2"));
        assert!(fingerprint_matches(&salt, &json!("hunter2"), &fp));
        assert!(!fingerprint_matches(&salt, &json!("hunter3"), &fp));
    }

    #[test]
    fn salt_changes_the_fingerprint() {
        let a = fingerprint(&new_salt(), &json!("hunter2"));
        let b = fingerprint(&new_salt(), &json!("hunter2"));
        assert_ne!(a, b);
    }

    #[test]
    fn object_key_order_does_not_matter() {
        let salt = new_salt();
        let a = fingerprint(&salt, &json!({"a": 1, "b": [1, {"x": "y", "c": null}]}));
        let b = fingerprint(&salt, &json!({"b": [1, {"c": null, "x": "y"}], "a": 1}));
        assert_eq!(a, b);
    }

    #[test]
    fn malformed_fingerprint_never_matches() {
        let salt = new_salt();
        assert!(!fingerprint_matches(&salt, &json!("x"), "sha256:abcd"));
        assert!(!fingerprint_matches(&salt, &json!("x"), "hmac-sha256:zz"));
        assert!(!fingerprint_matches(&salt, &json!("x"), "hmac-sha256:abc"));
    }
}
