//! Hash functions over strings (their UTF-8 bytes). The file variants in `files.rs` reuse
//! the same digests over file contents.

use super::{Args, Outcome, Spec};
use crate::value::Value;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::Digest;

pub(super) static FUNCTIONS: &[Spec] = &[
    Spec::fixed("base64sha256", &["str"], |a| {
        string_digest(a, Algorithm::Sha256, Encoding::Base64)
    }),
    Spec::fixed("base64sha512", &["str"], |a| {
        string_digest(a, Algorithm::Sha512, Encoding::Base64)
    }),
    Spec::fixed("md5", &["str"], |a| {
        string_digest(a, Algorithm::Md5, Encoding::Hex)
    }),
    Spec::fixed("sha1", &["str"], |a| {
        string_digest(a, Algorithm::Sha1, Encoding::Hex)
    }),
    Spec::fixed("sha256", &["str"], |a| {
        string_digest(a, Algorithm::Sha256, Encoding::Hex)
    }),
    Spec::fixed("sha512", &["str"], |a| {
        string_digest(a, Algorithm::Sha512, Encoding::Hex)
    }),
];

#[derive(Clone, Copy)]
pub(super) enum Algorithm {
    Md5,
    Sha1,
    Sha256,
    Sha512,
}

#[derive(Clone, Copy)]
pub(super) enum Encoding {
    Hex,
    Base64,
}

/// Hashes `bytes` and renders the digest: lowercase hex, or standard padded base64 of the
/// raw digest (the `base64sha*` family, which is not base64 of the hex).
pub(super) fn digest(bytes: &[u8], algorithm: Algorithm, encoding: Encoding) -> String {
    let raw: Vec<u8> = match algorithm {
        Algorithm::Md5 => md5::Md5::digest(bytes).to_vec(),
        Algorithm::Sha1 => sha1::Sha1::digest(bytes).to_vec(),
        Algorithm::Sha256 => sha2::Sha256::digest(bytes).to_vec(),
        Algorithm::Sha512 => sha2::Sha512::digest(bytes).to_vec(),
    };
    match encoding {
        Encoding::Hex => raw.iter().map(|b| format!("{b:02x}")).collect(),
        Encoding::Base64 => STANDARD.encode(raw),
    }
}

fn string_digest(a: &Args, algorithm: Algorithm, encoding: Encoding) -> Outcome<Value> {
    Ok(Value::String(digest(
        a.string(0)?.as_bytes(),
        algorithm,
        encoding,
    )))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use crate::value::Value;

    #[test]
    fn known_digests() {
        assert_eq!(
            ok("sha256", vec![s("hello world")]),
            s("b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9")
        );
        assert_eq!(
            ok("sha1", vec![s("hello world")]),
            s("2aae6c35c94fcfb415dbe95f408b9ce91ee846ed")
        );
        assert_eq!(
            ok("md5", vec![s("hello world")]),
            s("5eb63bbbe01eeed093cb22bb8f5acdc3")
        );
        assert_eq!(
            ok("base64sha256", vec![s("hello world")]),
            s("uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=")
        );
        assert!(
            ok("sha512", vec![s("")])
                .as_str()
                .is_some_and(|h| h.starts_with("cf83e1357eefb8bd"))
        );
        assert!(
            ok("base64sha512", vec![s("")])
                .as_str()
                .is_some_and(|h| h.ends_with("=="))
        );
        assert_eq!(ok("md5", vec![Value::Unknown]), Value::Unknown);
        for f in [
            "sha256",
            "sha1",
            "md5",
            "base64sha256",
            "sha512",
            "base64sha512",
        ] {
            assert!(
                err(f, vec![list(vec![])])
                    .message
                    .contains("\"str\" parameter: string required"),
                "{f}"
            );
        }
    }
}
