//! Small helpers shared by the services.

use crate::errors::{ApiError, ApiResult};
use crate::journal::Tracked;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// An object literal without its null fields: the API omits unset fields rather than
/// sending `null`.
pub fn compact(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m.into_iter().filter(|(_, v)| !v.is_null()).collect(),
        _ => Map::new(),
    }
}

/// Absent and empty are the same value to the SDK (it drops empty lists and maps), so
/// empty collections are dropped too before an object is stored.
pub fn drop_empty(m: &mut Map<String, Value>) {
    m.retain(|_, v| match v {
        Value::Null => false,
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        _ => true,
    });
}

pub fn s(m: &Map<String, Value>, key: &str) -> String {
    m.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// UC identifiers are case-insensitive and stored lower-case.
pub fn uc_name(raw: &str, field: &str) -> ApiResult<String> {
    if raw.is_empty() {
        return Err(crate::body::missing(field));
    }
    if raw
        .chars()
        .any(|c| c == '.' || c == '/' || c == ' ' || c.is_control())
        || raw.len() > 255
    {
        return Err(ApiError::invalid(format!(
            "Invalid value for field '{field}': '{raw}' is not a valid name (no periods, spaces, slashes or control characters; at most 255 characters)"
        )));
    }
    Ok(raw.to_lowercase())
}

/// Moves every entry whose key starts with `old` to the same key under `new`, letting
/// `fix` update the moved value. Used by renames that cascade to children.
pub fn rename_prefix<V>(
    map: &mut Tracked<String, V>,
    old: &str,
    new: &str,
    mut fix: impl FnMut(&str, &mut V),
) {
    let keys: Vec<String> = map
        .range(old.to_string()..)
        .take_while(|(k, _)| k.starts_with(old))
        .map(|(k, _)| k.clone())
        .collect();
    for k in keys {
        if let Some(mut v) = map.remove(&k) {
            let nk = format!("{new}{}", &k[old.len()..]);
            fix(&nk, &mut v);
            map.insert(nk, v);
        }
    }
}

/// Removes every entry whose key starts with `prefix`.
pub fn remove_prefix<V>(map: &mut Tracked<String, V>, prefix: &str) -> Vec<String> {
    let keys: Vec<String> = map
        .range(prefix.to_string()..)
        .take_while(|(k, _)| k.starts_with(prefix))
        .map(|(k, _)| k.clone())
        .collect();
    for k in &keys {
        map.remove(k);
    }
    keys
}

/// Keys starting with `prefix`, in order.
pub fn with_prefix<'a, V>(
    map: &'a BTreeMap<String, V>,
    prefix: &'a str,
) -> impl Iterator<Item = (&'a String, &'a V)> + 'a {
    map.range(prefix.to_string()..)
        .take_while(move |(k, _)| k.starts_with(prefix))
}

struct Civil {
    y: i64,
    m: usize,
    d: i64,
    h: i64,
    mi: i64,
    s: i64,
    weekday: usize,
}

/// Civil date and time from epoch milliseconds (H. Hinnant's days-to-civil).
fn civil(ms: i64) -> Civil {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    Civil {
        y,
        m: usize::try_from(m).unwrap_or(1),
        d,
        h: rem / 3600,
        mi: (rem % 3600) / 60,
        s: rem % 60,
        weekday: usize::try_from(days.rem_euclid(7)).unwrap_or(0),
    }
}

/// RFC 7231 IMF-fixdate (`Last-Modified`), from epoch milliseconds.
pub fn http_date(ms: i64) -> String {
    let c = civil(ms);
    let wd = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][c.weekday % 7];
    let mon = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][(c.m + 11) % 12];
    format!(
        "{wd}, {:02} {mon} {} {:02}:{:02}:{:02} GMT",
        c.d, c.y, c.h, c.mi, c.s
    )
}

/// ISO 8601 UTC with milliseconds (pipeline `latest_updates[].creation_time`).
pub fn iso_date(ms: i64) -> String {
    let c = civil(ms);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        c.y,
        c.m,
        c.d,
        c.h,
        c.mi,
        c.s,
        ms.rem_euclid(1000)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates_match_rfc_7231() {
        assert_eq!(http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(http_date(784_111_777_000), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(
            http_date(1_709_251_200_000),
            "Fri, 01 Mar 2024 00:00:00 GMT"
        );
        assert_eq!(iso_date(1_709_251_200_123), "2024-03-01T00:00:00.123Z");
    }

    #[test]
    fn names_are_lower_cased_and_checked() {
        assert_eq!(uc_name("Main", "name").unwrap(), "main");
        assert!(uc_name("a.b", "name").is_err());
        assert!(uc_name("", "name").is_err());
    }
}
