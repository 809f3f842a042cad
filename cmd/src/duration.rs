//! Durations as the command line writes them (`--lock-timeout 30s`, `2m`).

use anyhow::{anyhow, bail};
use std::time::Duration;

/// Reads `30s`, `2m`, `1h`, `500ms` or a bare number of seconds.
pub fn parse(s: &str) -> anyhow::Result<Duration> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| anyhow!("invalid duration {s:?}; use forms like 30s or 2m"))?;
    Ok(match unit {
        "" | "s" => Duration::from_secs(n),
        "ms" => Duration::from_millis(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        _ => bail!("invalid duration {s:?}; use forms like 30s, 2m or 1h"),
    })
}

/// `30s`, `2m`, `1m30s`: a duration as `--lock-timeout` takes it.
pub fn format(d: Duration) -> String {
    let (m, s) = (d.as_secs() / 60, d.as_secs() % 60);
    match (m, s) {
        (0, 0) => format!("{}ms", d.as_millis()),
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m{s}s"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_and_write_alike() {
        for (text, d) in [
            ("30s", Duration::from_secs(30)),
            ("2m", Duration::from_secs(120)),
            ("90", Duration::from_secs(90)),
            ("250ms", Duration::from_millis(250)),
            ("2h", Duration::from_secs(7200)),
        ] {
            assert_eq!(parse(text).unwrap(), d, "{text}");
        }
        assert_eq!(format(Duration::from_secs(90)), "1m30s");
        assert_eq!(format(Duration::from_secs(120)), "2m");
        assert!(parse("10d").is_err());
        assert!(parse("soon").is_err());
        // A number of minutes too large for seconds saturates instead of overflowing.
        assert!(parse(&format!("{}m", u64::MAX)).is_ok());
    }
}
