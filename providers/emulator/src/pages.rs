//! One pagination scheme for every list call: an opaque token that encodes the key of
//! the last item returned, so deletions between pages never skip or repeat items.

use crate::errors::{ApiError, ApiResult};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::fmt::Display;
use std::str::FromStr;

#[derive(Debug, Clone)]
pub struct Page {
    /// Key of the last item of the previous page.
    pub after: Option<String>,
    pub limit: usize,
}

impl Page {
    /// `requested` of 0 or absent means "server picks" (`default`); above `max` is clamped,
    /// as UC does; negative is an error.
    pub fn new(
        token: Option<&str>,
        requested: Option<i64>,
        default: usize,
        max: usize,
        field: &str,
    ) -> ApiResult<Page> {
        let limit = match requested {
            None | Some(0) => default,
            Some(n) if n < 0 => {
                return Err(ApiError::invalid(format!(
                    "Invalid value for parameter '{field}': must not be negative"
                )));
            }
            Some(n) => usize::try_from(n).unwrap_or(max).min(max),
        };
        let after = match token {
            None | Some("") => None,
            Some(t) => Some(decode(t)?),
        };
        Ok(Page {
            after,
            limit: limit.max(1),
        })
    }

    /// The previous page's last key, parsed as the map's key type.
    pub fn after_key<K: FromStr>(&self) -> ApiResult<Option<K>> {
        match &self.after {
            None => Ok(None),
            Some(s) => s
                .parse()
                .map(Some)
                .map_err(|_| ApiError::invalid("Invalid page_token")),
        }
    }

    /// Takes up to `limit` items from `iter` (which starts after the token); returns the
    /// next token only when at least one more item exists, so iterators stop on the last page.
    pub fn collect<K: Display, T>(
        &self,
        mut iter: impl Iterator<Item = (K, T)>,
    ) -> (Vec<T>, Option<String>) {
        let mut out = Vec::new();
        let mut last = None;
        for (k, v) in iter.by_ref() {
            out.push(v);
            last = Some(k);
            if out.len() == self.limit {
                break;
            }
        }
        let more = out.len() == self.limit && iter.next().is_some();
        let next = if more {
            last.map(|k| encode(&k.to_string()))
        } else {
            None
        };
        (out, next)
    }
}

pub fn encode(key: &str) -> String {
    URL_SAFE_NO_PAD.encode(key.as_bytes())
}

fn decode(token: &str) -> ApiResult<String> {
    URL_SAFE_NO_PAD
        .decode(token)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| ApiError::invalid(format!("Invalid page_token '{token}'")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_end_without_a_token() {
        let items: Vec<(String, i32)> = (0..5).map(|i| (format!("k{i}"), i)).collect();
        let p = Page::new(None, Some(2), 10, 100, "max_results").unwrap();
        let (got, next) = p.collect(items.clone().into_iter());
        assert_eq!(got, vec![0, 1]);
        let p2 = Page::new(next.as_deref(), Some(2), 10, 100, "max_results").unwrap();
        assert_eq!(p2.after.as_deref(), Some("k1"));
        let p3 = Page::new(None, Some(5), 10, 100, "max_results").unwrap();
        let (got, next) = p3.collect(items.into_iter());
        assert_eq!(got.len(), 5);
        assert!(next.is_none(), "an exactly full last page has no token");
    }

    #[test]
    fn bad_tokens_and_sizes_are_rejected() {
        assert!(Page::new(Some("!!"), None, 10, 100, "max_results").is_err());
        assert!(Page::new(None, Some(-1), 10, 100, "max_results").is_err());
        assert_eq!(Page::new(None, Some(0), 10, 100, "x").unwrap().limit, 10);
        assert_eq!(
            Page::new(None, Some(1000), 10, 100, "x").unwrap().limit,
            100
        );
    }
}
