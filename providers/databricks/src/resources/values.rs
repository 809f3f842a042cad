//! Value sets and value rules more than one kind declares in its schema: enumerations the
//! service defines once (pause status, days of the week), Quartz cron expressions and
//! time-zone ids. The sets are the service's, from the Databricks SDK's enums; a kind that
//! uses one says so in its schema (`.one_of(values::PAUSE_STATUS)`,
//! `.check(values::quartz_cron)`), so the engine rejects a bad value where it is written,
//! before anything is sent.

use brickform_core::diagnostics::did_you_mean_value;
use brickform_core::provider::Rejection;
use brickform_core::value::quote;
use std::sync::OnceLock;

/// `PauseStatus` of job schedules, triggers and continuous runs.
pub const PAUSE_STATUS: &[&str] = &["UNPAUSED", "PAUSED"];

/// `DayOfWeek` (pipeline restart and full-refresh windows).
pub const DAYS_OF_WEEK: &[&str] = &[
    "MONDAY",
    "TUESDAY",
    "WEDNESDAY",
    "THURSDAY",
    "FRIDAY",
    "SATURDAY",
    "SUNDAY",
];

/// `EnablePredictiveOptimization` of catalogs and schemas.
pub const PREDICTIVE_OPTIMIZATION: &[&str] = &["ENABLE", "DISABLE", "INHERIT"];

/// The fields of a Quartz cron expression, for messages.
const QUARTZ_FIELDS: &str = "seconds minutes hours day-of-month month day-of-week [year]";

/// A Quartz cron expression as Databricks schedules take it: 6 or 7 fields (seconds first,
/// an optional year last), exactly one of day-of-month and day-of-week `?`, Quartz weekdays
/// (1 = Sunday … 7 = Saturday, or SUN–SAT) and `L`, `W`, `#`.
pub fn quartz_cron(expr: &str) -> Result<(), Rejection> {
    let fields: Vec<&str> = expr.split_whitespace().collect();
    match fields.len() {
        6 | 7 => {}
        5 => {
            // Read as Unix cron (minutes first), or as Quartz missing its day-of-week.
            let unix = unix_to_quartz(&fields);
            let mut quartz = fields.clone();
            quartz.push("?");
            let quartz = Some(quartz.join(" "))
                .filter(|q| quartz_cron(q).is_ok() && Some(q) != unix.as_ref());
            let hint = match (unix, quartz) {
                (Some(u), Some(q)) => Some(format!(
                    "write {} (the Unix expression with a seconds field), or {} if the fields were seconds, minutes, hours, day-of-month and month",
                    quote(&u),
                    quote(&q)
                )),
                (Some(f), None) | (None, Some(f)) => Some(format!("write {}", quote(&f))),
                (None, None) => None,
            };
            return Err(Rejection::new(format!(
                "{} is in the 5-field Unix cron form; Databricks needs a Quartz cron expression, which starts with a seconds field: {QUARTZ_FIELDS}",
                quote(expr)
            ))
            .maybe_hint(hint));
        }
        n => {
            return Err(Rejection::new(format!(
                "{} is not a Quartz cron expression: it has {n} field{}, Quartz has 6 or 7 ({QUARTZ_FIELDS})",
                quote(expr),
                if n == 1 { "" } else { "s" }
            ))
            .hint("for example \"0 0 2 * * ?\" runs at 02:00 every day"));
        }
    }
    if expr.contains('@') {
        return Err(
            Rejection::new(format!("{}: Quartz has no @ nicknames", quote(expr)))
                .hint("write the fields out, e.g. \"0 0 0 * * ?\" for daily at midnight"),
        );
    }
    let (dom, dow) = (fields[3], fields[5]);
    for (i, f) in fields.iter().enumerate() {
        if f.contains('?') && !(*f == "?" && (i == 3 || i == 5)) {
            return Err(Rejection::new(format!(
                "{}: ? stands only alone, in day-of-month or day-of-week",
                quote(expr)
            )));
        }
    }
    match (dom == "?", dow == "?") {
        (true, true) => {
            return Err(Rejection::new(format!(
                "{}: only one of day-of-month and day-of-week may be ?",
                quote(expr)
            ))
            .maybe_hint(replace_field(&fields, 3, "*").map(|f| format!("write {}", quote(&f)))));
        }
        (false, false) => {
            let fix = if dow == "*" {
                replace_field(&fields, 5, "?")
            } else if dom == "*" {
                replace_field(&fields, 3, "?")
            } else {
                None
            };
            return Err(Rejection::new(format!(
                "{}: one of day-of-month and day-of-week must be ? (Quartz cannot combine them)",
                quote(expr)
            ))
            .maybe_hint(fix.map(|f| format!("write {}", quote(&f)))));
        }
        _ => {}
    }
    let parser = croner::parser::CronParser::builder()
        .seconds(croner::parser::Seconds::Required)
        .year(croner::parser::Year::Optional)
        .alternative_weekdays(true)
        .sloppy_ranges(true)
        .build();
    // croner knows `L` and `W` but not Quartz's `LW` and `L-n` (last weekday, n days before
    // the last day); both are valid day-of-month fields, checked here.
    let mut owned: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
    if is_last_day_offset(dom) {
        owned[3] = "L".into();
    }
    match parser.parse(&owned.join(" ")) {
        Ok(_) => Ok(()),
        Err(e) => Err(Rejection::new(format!(
            "{} is not a valid Quartz cron expression ({QUARTZ_FIELDS}): {}",
            quote(expr),
            croner_message(&e)
        ))),
    }
}

/// `LW`, `L-3`, `L-3W`.
fn is_last_day_offset(dom: &str) -> bool {
    let Some(rest) = dom
        .to_ascii_uppercase()
        .strip_prefix('L')
        .map(str::to_string)
    else {
        return false;
    };
    let rest = rest.strip_suffix('W').unwrap_or(&rest);
    rest.is_empty() && dom.len() > 1
        || rest
            .strip_prefix('-')
            .is_some_and(|n| !n.is_empty() && n.len() <= 2 && n.bytes().all(|b| b.is_ascii_digit()))
}

fn croner_message(e: &croner::errors::CronError) -> String {
    use croner::errors::CronError as E;
    match e {
        E::InvalidPattern(m) | E::IllegalCharacters(m) | E::ComponentError(m) => m.clone(),
        other => other.to_string(),
    }
}

fn replace_field(fields: &[&str], i: usize, with: &str) -> Option<String> {
    let mut out: Vec<&str> = fields.to_vec();
    *out.get_mut(i)? = with;
    let s = out.join(" ");
    quartz_cron(&s).is_ok().then_some(s)
}

/// The Quartz form of a Unix `minute hour day-of-month month day-of-week` expression, when
/// there is one: a seconds field first, `?` for the unused day field, and Unix weekdays
/// (0 or 7 = Sunday) moved to Quartz's (1 = Sunday).
fn unix_to_quartz(f: &[&str]) -> Option<String> {
    let [min, hour, dom, month, dow] = f else {
        return None;
    };
    let (dom, dow) = if *dow == "*" || *dow == "?" {
        (dom.to_string(), "?".to_string())
    } else if *dom == "*" || *dom == "?" {
        ("?".to_string(), shift_weekdays(dow)?)
    } else {
        return None;
    };
    let s = format!("0 {min} {hour} {dom} {month} {dow}");
    quartz_cron(&s).is_ok().then_some(s)
}

fn shift_weekdays(dow: &str) -> Option<String> {
    let mut out = String::new();
    let mut number = String::new();
    let mut after_slash = false;
    let flush = |number: &mut String, out: &mut String, after_slash: bool| -> Option<()> {
        if number.is_empty() {
            return Some(());
        }
        let n: u32 = number.parse().ok()?;
        // A step (`*/2`) is a count, not a weekday.
        let shifted = if after_slash { n } else { n % 7 + 1 };
        out.push_str(&shifted.to_string());
        number.clear();
        Some(())
    };
    for c in dow.chars() {
        if c.is_ascii_digit() {
            number.push(c);
        } else {
            flush(&mut number, &mut out, after_slash)?;
            after_slash = c == '/';
            out.push(c);
        }
    }
    flush(&mut number, &mut out, after_slash)?;
    Some(out)
}

/// The IANA time-zone ids of the bundled database.
fn zone_names() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names: Vec<String> = jiff::tz::TimeZoneDatabase::bundled()
            .available()
            .map(|n| n.as_str().to_string())
            .collect();
        names.sort();
        names
    })
}

/// The short ids Java maps to regions (`java.time.ZoneId.SHORT_IDS`, accepted by
/// `java.util.TimeZone`).
const JAVA_SHORT_IDS: &[&str] = &[
    "ACT", "AET", "AGT", "ART", "AST", "BET", "BST", "CAT", "CNT", "CST", "CTT", "EAT", "ECT",
    "EST", "HST", "IET", "IST", "JST", "MIT", "MST", "NET", "NST", "PLT", "PNT", "PRT", "PST",
    "SST", "VST",
];

/// A Java time-zone id, as Databricks takes it (`timezone_id`, `time_zone_id`): an IANA
/// region id (`Europe/Zurich`, `UTC`), compared exactly as Java does; one of Java's short
/// ids (`PST`); or a fixed offset (`Z`, `+02:00`, `UTC+2`, `GMT-05:30`).
pub fn time_zone(id: &str) -> Result<(), Rejection> {
    let names = zone_names();
    if names.binary_search_by(|n| n.as_str().cmp(id)).is_ok()
        || JAVA_SHORT_IDS.contains(&id)
        || is_offset_id(id)
    {
        return Ok(());
    }
    Err(Rejection::new(format!(
        "{} is not a time-zone id: use an IANA id such as \"Europe/Zurich\", \"America/Los_Angeles\" or \"UTC\"",
        quote(id)
    ))
    .maybe_hint(did_you_mean_value(id, names.iter().map(String::as_str))))
}

/// `Z`, `+h`, `+hh`, `+hh:mm`, `+hhmm`, `+hh:mm:ss`, optionally after `UTC`, `GMT` or `UT`
/// (Java's `ZoneId.of`); `UTC`, `GMT` and `UT` alone.
fn is_offset_id(id: &str) -> bool {
    if id == "Z" {
        return true;
    }
    let rest = ["UTC", "GMT", "UT"]
        .iter()
        .find_map(|p| id.strip_prefix(p))
        .unwrap_or(id);
    if rest.is_empty() {
        return !id.is_empty();
    }
    let Some(digits) = rest.strip_prefix('+').or_else(|| rest.strip_prefix('-')) else {
        return false;
    };
    let parts: Vec<&str> = digits.split(':').collect();
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (hours, minutes, seconds) = match parts.as_slice() {
        [h] if numeric(h) && h.len() <= 2 => (h.to_string(), "0".to_string(), "0".to_string()),
        [hm] if numeric(hm) && hm.len() == 4 => {
            (hm[..2].to_string(), hm[2..].to_string(), "0".into())
        }
        [hms] if numeric(hms) && hms.len() == 6 => (
            hms[..2].to_string(),
            hms[2..4].to_string(),
            hms[4..].to_string(),
        ),
        [h, m] if numeric(h) && h.len() == 2 && numeric(m) && m.len() == 2 => {
            (h.to_string(), m.to_string(), "0".into())
        }
        [h, m, s] if [h, m, s].iter().all(|x| numeric(x) && x.len() == 2) => {
            (h.to_string(), m.to_string(), s.to_string())
        }
        _ => return false,
    };
    let (Ok(h), Ok(m), Ok(s)) = (
        hours.parse::<u32>(),
        minutes.parse::<u32>(),
        seconds.parse::<u32>(),
    ) else {
        return false;
    };
    h <= 18 && m < 60 && s < 60 && (h < 18 || (m == 0 && s == 0))
}

/// A duration as Terraform's `timeouts` blocks write it (Go's form: `20m`, `1h30m`, `90s`),
/// positive. jiff reads that form, and its friendlier spellings (`1h 30m`).
pub fn parse_duration(s: &str) -> Option<std::time::Duration> {
    let d: jiff::SignedDuration = s.trim().parse().ok()?;
    std::time::Duration::try_from(d)
        .ok()
        .filter(|d| !d.is_zero())
}

/// [`parse_duration`] as a value check.
pub fn duration(s: &str) -> Result<(), Rejection> {
    match parse_duration(s) {
        Some(_) => Ok(()),
        None => Err(Rejection::new(format!(
            "{} is not a duration: write it as Terraform does, e.g. \"20m\", \"1h30m\" or \"90s\"",
            quote(s)
        ))),
    }
}

/// Short names for the attribute types the kinds' schemas are written with.
pub mod ty {
    use brickform_core::provider::AttrType;

    pub fn s() -> AttrType {
        AttrType::String
    }
    pub fn n() -> AttrType {
        AttrType::Number
    }
    pub fn b() -> AttrType {
        AttrType::Bool
    }
    /// A list of strings.
    pub fn strings() -> AttrType {
        AttrType::strings()
    }
    /// A map of strings.
    pub fn map() -> AttrType {
        AttrType::string_map()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn quartz_expressions_databricks_uses_are_accepted() {
        for e in [
            "0 0 2 * * ?",
            "0 0 2 ? * *",
            "0 0/15 * * * ?",
            "0 */5 8-18 ? * MON-FRI",
            "0 30 6 ? * 2-6",
            "0 0 12 1 * ?",
            "0 0 12 L * ?",
            "0 0 12 LW * ?",
            "0 0 12 L-3 * ?",
            "0 0 12 15W * ?",
            "0 0 12 ? * 6L",
            "0 0 12 ? * 6#3",
            "0 0 12 ? JAN,JUL *",
            "0 0 12 * * ? 2030",
            "38 0 12 * * ?",
        ] {
            assert_eq!(quartz_cron(e), Ok(()), "{e}");
        }
    }

    #[test]
    fn not_cron_is_rejected_with_an_example() {
        let r = quartz_cron("every night").unwrap_err();
        assert!(r.message.contains("2 fields"), "{r:?}");
        assert!(r.hint.unwrap().contains("0 0 2 * * ?"));
    }

    #[test]
    fn the_unix_form_gets_its_quartz_equivalent() {
        let r = quartz_cron("0 0 2 * *").unwrap_err();
        assert!(r.message.contains("seconds field"), "{r:?}");
        assert_eq!(
            r.hint.as_deref(),
            Some(
                "write \"0 0 0 2 * ?\" (the Unix expression with a seconds field), or \"0 0 2 * * ?\" if the fields were seconds, minutes, hours, day-of-month and month"
            )
        );
        let r = quartz_cron("30 6 * * 1-5").unwrap_err();
        assert!(r.hint.unwrap().starts_with("write \"0 30 6 ? * 2-6\""));
        let r = quartz_cron("0 0 * * 0").unwrap_err();
        assert!(r.hint.unwrap().starts_with("write \"0 0 0 ? * 1\""));
        let r = quartz_cron("0 2 * * */2").unwrap_err();
        assert!(r.hint.unwrap().starts_with("write \"0 0 2 ? * */2\""));
    }

    #[test]
    fn question_mark_rules() {
        let r = quartz_cron("0 0 2 * * *").unwrap_err();
        assert!(r.message.contains("must be ?"), "{r:?}");
        assert_eq!(r.hint.as_deref(), Some("write \"0 0 2 * * ?\""));
        let r = quartz_cron("0 0 2 ? * ?").unwrap_err();
        assert!(r.message.contains("only one"), "{r:?}");
        assert!(quartz_cron("0 0 2 1 * MON").is_err());
        assert!(quartz_cron("0 ? 2 * * ?").is_err());
    }

    #[test]
    fn bad_fields_are_rejected() {
        for e in [
            "0 0 25 * * ?",
            "0 61 1 * * ?",
            "0 0 1 ? * 0",
            "x 0 1 * * ?",
            "@daily x y z w v",
        ] {
            assert!(quartz_cron(e).is_err(), "{e}");
        }
    }

    #[test]
    fn time_zones_are_java_ids() {
        for z in [
            "UTC",
            "GMT",
            "Europe/Zurich",
            "America/Los_Angeles",
            "Asia/Kolkata",
            "US/Pacific",
            "Etc/GMT+5",
            "PST",
            "Z",
            "+02:00",
            "UTC+2",
            "GMT-05:30",
        ] {
            assert_eq!(time_zone(z), Ok(()), "{z}");
        }
        let r = time_zone("Europe/Zurch").unwrap_err();
        assert_eq!(r.hint.as_deref(), Some("did you mean \"Europe/Zurich\"?"));
        let r = time_zone("europe/zurich").unwrap_err();
        assert_eq!(r.hint.as_deref(), Some("did you mean \"Europe/Zurich\"?"));
        for z in ["", "Mars/Olympus", "+25:00", "UTC+"] {
            assert!(time_zone(z).is_err(), "{z}");
        }
    }

    #[test]
    fn durations_read_as_terraform_writes_them() {
        assert_eq!(
            parse_duration("20m"),
            Some(std::time::Duration::from_secs(1200))
        );
        assert_eq!(
            parse_duration("1h30m"),
            Some(std::time::Duration::from_secs(5400))
        );
        assert_eq!(
            parse_duration("90s"),
            Some(std::time::Duration::from_secs(90))
        );
        for bad in ["", "20", "soon", "0s", "-5m"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }
}
