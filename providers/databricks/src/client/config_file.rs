//! `~/.databrickscfg`: the INI file the Databricks CLI and SDKs share.
//!
//! A small parser of our own instead of an INI crate, because the rules that matter are the
//! SDK's (Python `configparser`): keys are case-insensitive, `=` or `:` separate, `#`/`;` start
//! comments, indented lines continue a value, and `[DEFAULT]` is *not* merged into named
//! profiles (the SDK reads a profile's own keys only).

use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub(crate) struct ConfigFile {
    /// Section name → keys (lower-cased) → values, in file order of sections.
    sections: Vec<(String, BTreeMap<String, String>)>,
}

impl ConfigFile {
    pub(crate) fn parse(text: &str) -> Result<ConfigFile, String> {
        let mut file = ConfigFile::default();
        let mut last_key: Option<String> = None;
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
                continue;
            }
            let indented = raw.starts_with(' ') || raw.starts_with('\t');
            if indented
                && let (Some(key), Some((_, keys))) = (&last_key, file.sections.last_mut())
                && let Some(v) = keys.get_mut(key)
            {
                // configparser continuation line: joined with a newline.
                v.push('\n');
                v.push_str(strip_inline_comment(trimmed));
                continue;
            }
            if let Some(rest) = trimmed.strip_prefix('[') {
                let name = rest
                    .strip_suffix(']')
                    .ok_or_else(|| format!("line {line_no}: section header without ']'"))?
                    .trim()
                    .to_string();
                last_key = None;
                if !file.sections.iter().any(|(n, _)| *n == name) {
                    file.sections.push((name, BTreeMap::new()));
                }
                continue;
            }
            let sep = trimmed
                .find(['=', ':'])
                .ok_or_else(|| format!("line {line_no}: expected `key = value`"))?;
            let key = trimmed[..sep].trim().to_ascii_lowercase();
            let value = strip_inline_comment(trimmed[sep + 1..].trim()).to_string();
            let Some((_, keys)) = file.sections.last_mut() else {
                return Err(format!(
                    "line {line_no}: `{key}` appears before any [section]"
                ));
            };
            keys.insert(key.clone(), value);
            last_key = Some(key);
        }
        Ok(file)
    }

    pub(crate) fn section(&self, name: &str) -> Option<&BTreeMap<String, String>> {
        self.sections
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, k)| k)
    }

    pub(crate) fn profile_names(&self) -> Vec<&str> {
        self.sections
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| *n != "__settings__")
            .collect()
    }
}

/// `value ; comment` → `value`. configparser keeps inline comments by default, but a token or
/// host never contains whitespace followed by `;`/`#`, and the SDK's own docs write them.
fn strip_inline_comment(v: &str) -> &str {
    let bytes = v.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if (*b == b';' || *b == b'#') && i > 0 && bytes[i - 1].is_ascii_whitespace() {
            return v[..i].trim_end();
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sdk_style_file() {
        let f = ConfigFile::parse(
            "; comment\n[DEFAULT]\nhost  = https://adb-1.azuredatabricks.net\nTOKEN = dapi1\n\n[sp]\nhost: https://dbc-x\nclient_id = abc\nclient_secret = s3cr3t\nauth_type = oauth-m2m ; optional pin\n[__settings__]\ndefault_profile = sp\n",
        )
        .unwrap();
        assert_eq!(f.section("DEFAULT").unwrap()["token"], "dapi1");
        let sp = f.section("sp").unwrap();
        assert_eq!(sp["host"], "https://dbc-x");
        assert_eq!(sp["auth_type"], "oauth-m2m");
        assert!(
            !sp.contains_key("token"),
            "DEFAULT is not merged into profiles"
        );
        assert_eq!(f.section("__settings__").unwrap()["default_profile"], "sp");
        assert_eq!(f.profile_names(), vec!["DEFAULT", "sp"]);
    }

    #[test]
    fn rejects_garbage() {
        assert!(ConfigFile::parse("host = x\n").is_err());
        assert!(ConfigFile::parse("[a\n").is_err());
        assert!(ConfigFile::parse("[a]\njust words\n").is_err());
    }
}
