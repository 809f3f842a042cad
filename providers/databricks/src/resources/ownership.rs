//! The ownership tag on the objects that take tags (jobs, pipelines, Lakeflow Connect
//! gateways and ingestion pipelines): `brickform = "<lineage>/<environment>/<address>"`.
//! Added on every create and update, stripped on every read (it is brickform's bookkeeping,
//! not the user's tags), it lets brickform find an object again without its id: after a
//! lost create response, after `state rm`, after a lost state (the engine's `adopt` module
//! says what counts as whose).
//!
//! Job and pipeline tags are forwarded to clusters as cluster tags, which take only letters,
//! digits, spaces and `+-=._:/@`. Anything else in an address (the `["key"]` of a for_each
//! instance) is written `:XX` (hex, per UTF-8 byte), and `:` itself too, so the encoding stays
//! one-to-one and plain addresses read as they are. Environment names are letters, digits,
//! `-` and `_` (no `.`, no `/`), and every address holds a `.`: a tag written before the
//! environment was part of it (`<lineage>/<address>`) still reads, with no environment.

use brickform_core::provider::{OpContext, OwnerTag};

/// The tag's key.
pub const OWNER_TAG: &str = "brickform";

/// The tag's value for the object `ctx` names.
pub fn value(ctx: &OpContext) -> String {
    let mut out = format!("{}/{}/", ctx.lineage, ctx.environment);
    for c in ctx.address.chars() {
        if c.is_ascii_alphanumeric() || " +-=._/@".contains(c) {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!(":{b:02X}"));
            }
        }
    }
    out
}

/// Reads a tag value back; `None` when it is not one brickform wrote.
pub fn parse(value: &str) -> Option<OwnerTag> {
    let (lineage, rest) = value.split_once('/')?;
    let (environment, address) = match rest.split_once('/') {
        Some((env, address))
            if !env.is_empty()
                && env
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
        {
            (Some(env.to_string()), address)
        }
        _ => (None, rest),
    };
    let address = decode(address)?;
    (!lineage.is_empty() && address.contains('.')).then(|| OwnerTag {
        lineage: lineage.to_string(),
        environment,
        address,
    })
}

fn decode(s: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(s.len());
    let mut rest = s.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b':' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ctx(address: &str) -> OpContext {
        OpContext {
            address: address.into(),
            lineage: "L".into(),
            environment: "dev".into(),
            base_dir: std::path::PathBuf::new(),
            create_token: None,
        }
    }

    #[test]
    fn encoding_is_tag_safe_and_one_to_one() {
        let c = ctx("databricks_pipeline.p[\"a:b/c é\"]");
        let v = value(&c);
        assert_eq!(v, "L/dev/databricks_pipeline.p:5B:22a:3Ab/c :C3:A9:22:5D");
        assert!(
            v.chars()
                .all(|c| c.is_ascii_alphanumeric() || " +-=._:/@".contains(c)),
            "{v}"
        );
        let back = parse(&v).unwrap();
        assert_eq!(back.lineage, "L");
        assert_eq!(back.environment.as_deref(), Some("dev"));
        assert_eq!(back.address, c.address);
        assert_eq!(
            value(&ctx("databricks_job.j[0]")),
            "L/dev/databricks_job.j:5B0:5D"
        );
    }

    #[test]
    fn tags_without_an_environment_still_read() {
        let old = parse("L/databricks_pipeline.p:5B:22a/b:22:5D").unwrap();
        assert_eq!(old.environment, None);
        assert_eq!(old.address, "databricks_pipeline.p[\"a/b\"]");
        assert_eq!(
            parse("L/databricks_job.j").unwrap().address,
            "databricks_job.j"
        );
        for junk in [
            "",
            "x",
            "L/",
            "L/dev/",
            "/dev/a.b",
            "L/dev/a.b:Z",
            "L/dev/a.b:4",
        ] {
            assert_eq!(parse(junk), None, "{junk:?}");
        }
    }
}
