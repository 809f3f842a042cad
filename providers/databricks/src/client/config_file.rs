//! `~/.databrickscfg`: the INI file the Databricks CLI and SDKs share.
//!
//! Read as the Python SDK reads it, with `configparser`'s default rules: keys are
//! case-insensitive, `=` or `:` separate a key from its value, a line whose first non-blank
//! character is `#` or `;` is a comment, but a `;` or `#` after a value is part of it (so a
//! token or password may hold one), indented lines continue a value, a section or a key that
//! appears twice is an error, and `[DEFAULT]` is *not* merged into named profiles (the SDK
//! reads a profile's own keys only). A small parser of our own, because these rules are the
//! SDK's and no INI crate has all of them.

use std::collections::BTreeMap;

/// Why the file cannot be read as the SDKs read it. Messages name lines, keys and sections,
/// never a value: values are tokens and secrets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ConfigFileError {
    #[error("line {line}: section header without ']'")]
    UnclosedSection { line: usize },
    #[error("line {line}: section [{name}] appears twice")]
    SectionTwice { line: usize, name: String },
    #[error("line {line}: expected `key = value`")]
    NotKeyValue { line: usize },
    #[error("line {line}: a value without a key")]
    NoKey { line: usize },
    #[error("line {line}: `{key}` appears before any [section]")]
    OutsideSection { line: usize, key: String },
    #[error("line {line}: `{key}` appears twice in [{section}]")]
    KeyTwice {
        line: usize,
        key: String,
        section: String,
    },
}

#[derive(Debug, Default)]
pub(crate) struct ConfigFile {
    /// Section name → keys (lower-cased) → values, in file order of sections.
    sections: Vec<(String, BTreeMap<String, String>)>,
}

impl ConfigFile {
    pub(crate) fn parse(text: &str) -> Result<ConfigFile, ConfigFileError> {
        let mut file = ConfigFile::default();
        // The key a continuation line extends, with its line's indent.
        let mut last_key: Option<(String, usize)> = None;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let trimmed = raw.trim();
            if trimmed.starts_with('#') || trimmed.starts_with(';') {
                continue;
            }
            let indent = raw.len() - raw.trim_start().len();
            if trimmed.is_empty() {
                // A blank line may sit inside a value that goes on (configparser keeps it);
                // trailing blank lines are dropped at the end.
                if let (Some((key, _)), Some((_, keys))) = (&last_key, file.sections.last_mut())
                    && let Some(v) = keys.get_mut(key)
                {
                    v.push('\n');
                }
                continue;
            }
            if let (Some((key, key_indent)), Some((_, keys))) =
                (&last_key, file.sections.last_mut())
                && indent > *key_indent
                && let Some(v) = keys.get_mut(key)
            {
                v.push('\n');
                v.push_str(trimmed);
                continue;
            }
            if let Some(rest) = trimmed.strip_prefix('[') {
                let name = rest
                    .rfind(']')
                    .map(|end| &rest[..end])
                    .filter(|n| !n.is_empty())
                    .ok_or(ConfigFileError::UnclosedSection { line: line_no })?
                    .to_string();
                if file.sections.iter().any(|(n, _)| *n == name) {
                    return Err(ConfigFileError::SectionTwice {
                        line: line_no,
                        name,
                    });
                }
                file.sections.push((name, BTreeMap::new()));
                last_key = None;
                continue;
            }
            let sep = trimmed
                .find(['=', ':'])
                .ok_or(ConfigFileError::NotKeyValue { line: line_no })?;
            let key = trimmed[..sep].trim().to_ascii_lowercase();
            if key.is_empty() {
                return Err(ConfigFileError::NoKey { line: line_no });
            }
            let value = trimmed[sep + 1..].trim().to_string();
            let Some((section, keys)) = file.sections.last_mut() else {
                return Err(ConfigFileError::OutsideSection { line: line_no, key });
            };
            if keys.contains_key(&key) {
                return Err(ConfigFileError::KeyTwice {
                    line: line_no,
                    key,
                    section: section.clone(),
                });
            }
            keys.insert(key.clone(), value);
            last_key = Some((key, indent));
        }
        for (_, keys) in &mut file.sections {
            for v in keys.values_mut() {
                let kept = v.trim_end_matches('\n').len();
                v.truncate(kept);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sdk_style_file() {
        let f = ConfigFile::parse(
            "; comment\n  # indented comment\n[DEFAULT]\nhost  = https://adb-1.azuredatabricks.net\nTOKEN = dapi1\n\n[sp]\nhost: https://dbc-x\nclient_id = abc\nclient_secret = s3cr3t;#x\nauth_type = oauth-m2m ; optional pin\nscopes = a\n  b\n\n  c\n\n[__settings__]\ndefault_profile = sp\n",
        )
        .unwrap();
        assert_eq!(f.section("DEFAULT").unwrap()["token"], "dapi1");
        let sp = f.section("sp").unwrap();
        assert_eq!(sp["host"], "https://dbc-x");
        assert_eq!(sp["client_secret"], "s3cr3t;#x");
        // configparser keeps an inline comment as part of the value.
        assert_eq!(sp["auth_type"], "oauth-m2m ; optional pin");
        assert_eq!(sp["scopes"], "a\nb\n\nc");
        assert!(
            !sp.contains_key("token"),
            "DEFAULT is not merged into profiles"
        );
        assert_eq!(f.section("__settings__").unwrap()["default_profile"], "sp");
        assert_eq!(f.profile_names(), vec!["DEFAULT", "sp"]);
    }

    #[test]
    fn what_configparser_refuses_is_refused() {
        for (text, says) in [
            ("[a]\nx = 1\n[a]\n", "section [a] appears twice"),
            ("[a]\nx = 1\nX = 2\n", "`x` appears twice in [a]"),
            ("[a]\n= 2\n", "a value without a key"),
        ] {
            let e = ConfigFile::parse(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text:?}: {e}");
        }
        let f = ConfigFile::parse("[ spaced ]\nhost=h\n").unwrap();
        assert!(
            f.section(" spaced ").is_some(),
            "section names are not trimmed"
        );
    }

    #[test]
    fn rejects_garbage() {
        assert!(ConfigFile::parse("host = x\n").is_err());
        assert!(ConfigFile::parse("[a\n").is_err());
        assert!(ConfigFile::parse("[a]\njust words\n").is_err());
    }
}
