//! Names: the identifier rules (V1, V2).

use super::*;

pub(super) const MAX_IDENTIFIER: usize = 255;

pub(super) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    s.len() <= MAX_IDENTIFIER
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Why a name is not a regular identifier, in sdp-meta's words.
pub(super) fn identifier_problem(s: &str) -> Option<String> {
    if is_identifier(s) {
        None
    } else if s.len() > MAX_IDENTIFIER {
        Some(format!(
            "is {} characters; sdp-meta allows at most {MAX_IDENTIFIER}",
            s.len()
        ))
    } else {
        Some("is not a valid Databricks SQL regular identifier: names must match ^[A-Za-z_][A-Za-z0-9_]*$; hyphens, periods, spaces and leading digits are not supported (sdp-meta onboarding rejects it)".to_string())
    }
}

pub(super) const IDENT_HINT: &str = "use letters, digits and underscores only, starting with a letter or underscore (rename the object if Unity Catalog allowed a hyphen)";

/// V1 for a single identifier attribute.
pub(super) fn check_identifier(o: &Object, k: &str, at: &At, r: &mut Report) {
    if let Tri::Known(s) = text(o, k)
        && let Some(problem) = identifier_problem(s)
    {
        r.error(
            &rules::V1,
            &at.key(k),
            &format!("{} = {}", at.key(k).text, quote(s)),
            &problem,
            IDENT_HINT,
        );
    }
}

/// V2 and V1 for a `schema` or `catalog.schema` attribute.
pub(super) fn check_database(o: &Object, k: &str, at: &At, r: &mut Report) {
    let Tri::Known(s) = text(o, k) else { return };
    let at = at.key(k);
    check_database_value(s, &at, r);
}

pub(super) fn check_database_value(s: &str, at: &At, r: &mut Report) {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() > 2 {
        r.error(
            &rules::V2,
            at,
            &format!("{} = {} has {} dotted parts", at.text, quote(s), parts.len()),
            "sdp-meta accepts a schema or catalog.schema only (max_parts = 2)",
            "give catalog.schema here (a separate catalog attribute, where there is one, holds the catalog)",
        );
        return;
    }
    for part in parts {
        if let Some(problem) = identifier_problem(part) {
            r.error(
                &rules::V1,
                at,
                &format!("{} = {}: segment {}", at.text, quote(s), quote(part)),
                &problem,
                IDENT_HINT,
            );
        }
    }
}

/// V1 for a list of column names. `allow_blank`: sdp-meta tolerates blank entries in
/// partition and cluster lists, not in CDC column lists.
pub(super) fn check_columns(o: &Object, k: &str, at: &At, allow_blank: bool, r: &mut Report) {
    let Some(cols) = string_list(o, k) else {
        return;
    };
    let at = at.key(k);
    for c in cols {
        if c.trim().is_empty() {
            if !allow_blank {
                r.error(
                    &rules::V1,
                    &at,
                    &format!("{} has a blank entry", at.text),
                    "sdp-meta passes the list to the pipeline verbatim, where a blank column name fails",
                    "remove the blank entry",
                );
            }
            continue;
        }
        if let Some(problem) = identifier_problem(c) {
            r.error(
                &rules::V1,
                &at,
                &format!("{} entry {}", at.text, quote(c)),
                &problem,
                IDENT_HINT,
            );
        }
    }
}

/// V1 for `sequence_by`: comma-separated columns, each possibly dotted.
pub(super) fn check_sequence_by(s: &str, at: &At, r: &mut Report) {
    for entry in s.split(',').map(str::trim) {
        let problem = if entry.is_empty() {
            Some("is empty; use a comma-separated list of column names".to_string())
        } else {
            entry.split('.').find_map(identifier_problem)
        };
        if let Some(problem) = problem {
            r.error(
                &rules::V1,
                at,
                &format!("{} = {}: entry {}", at.text, quote(s), quote(entry)),
                &problem,
                "write sequence_by as \"col\", \"col1,col2\" or a dotted struct field (e.g. \"_commit_version\")",
            );
            return;
        }
    }
}
