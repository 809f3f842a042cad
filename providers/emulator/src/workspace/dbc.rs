//! Databricks archives (`.dbc`): a zip file of notebooks, each a JSON document
//! (`{"name", "language", "commands": [{"command": …}]}`) named `FOLDER/NAME.python`
//! (`.scala`, `.sql`, `.r`). Importing one at a path makes the folder it holds at that path,
//! or, for an archive of one notebook, that notebook.

use crate::errors::{ApiError, ApiResult};
use serde_json::Value;
use std::io::Read;

/// One notebook of an archive: where it goes under the import path (empty: the path
/// itself), its language, and its source as the workspace exports it.
#[derive(Debug, PartialEq, Eq)]
pub struct Notebook {
    pub relative: Vec<String>,
    pub language: String,
    pub source: Vec<u8>,
}

fn unreadable(why: impl std::fmt::Display) -> ApiError {
    ApiError::invalid(format!("The DBC archive could not be read: {why}"))
}

/// The notebooks an archive holds, placed as an import at a path places them.
pub fn notebooks(archive: &[u8]) -> ApiResult<Vec<Notebook>> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(archive)).map_err(unreadable)?;
    let mut found: Vec<(Vec<String>, String, Vec<u8>)> = Vec::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(unreadable)?;
        if entry.is_dir() {
            continue;
        }
        let name = entry.name().map_err(unreadable)?.to_string();
        let Some((stem, language)) = [
            (".python", "PYTHON"),
            (".scala", "SCALA"),
            (".sql", "SQL"),
            (".r", "R"),
        ]
        .iter()
        .find_map(|(ext, lang)| name.strip_suffix(ext).map(|s| (s.to_string(), *lang))) else {
            // Archives may carry other members (a manifest): they hold no notebook.
            continue;
        };
        let mut text = String::new();
        entry
            .read_to_string(&mut text)
            .map_err(|e| unreadable(format!("{name}: {e}")))?;
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| unreadable(format!("{name} is not a notebook's JSON ({e})")))?;
        let commands = doc
            .get("commands")
            .and_then(Value::as_array)
            .ok_or_else(|| unreadable(format!("{name} has no commands")))?;
        let parts: Vec<String> = stem
            .split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if parts.is_empty() || parts.iter().any(|p| p == "." || p == "..") {
            return Err(unreadable(format!(
                "{name} is not a path inside the archive"
            )));
        }
        found.push((parts, language.to_string(), source(language, commands)));
    }
    if found.is_empty() {
        return Err(unreadable("it holds no notebook"));
    }
    // The folder the archive was exported from becomes the import path.
    let first = found[0].0[0].clone();
    let one_folder = found.iter().all(|(p, _, _)| p.len() > 1 && p[0] == first);
    let single = found.len() == 1 && found[0].0.len() == 1;
    Ok(found
        .into_iter()
        .map(|(parts, language, source)| Notebook {
            relative: if single {
                Vec::new()
            } else if one_folder {
                parts[1..].to_vec()
            } else {
                parts
            },
            language,
            source,
        })
        .collect())
}

/// A notebook's commands as the source format writes them: the header, then the cells
/// separated by `COMMAND` lines, in the language's comment syntax.
fn source(language: &str, commands: &[Value]) -> Vec<u8> {
    let comment = match language {
        "SQL" => "--",
        "SCALA" => "//",
        _ => "#",
    };
    let mut cells: Vec<(f64, &str)> = commands
        .iter()
        .filter_map(|c| {
            let text = c.get("command")?.as_str()?;
            let pos = c.get("position").and_then(Value::as_f64).unwrap_or(0.0);
            Some((pos, text))
        })
        .collect();
    cells.sort_by(|a, b| a.0.total_cmp(&b.0));
    let body: Vec<&str> = cells.into_iter().map(|(_, t)| t).collect();
    format!(
        "{comment} Databricks notebook source\n{}",
        body.join(&format!("\n\n{comment} COMMAND ----------\n\n"))
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    pub fn archive(members: &[(&str, &str)]) -> Vec<u8> {
        let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, text) in members {
            out.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            out.write_all(text.as_bytes()).unwrap();
        }
        out.finish().unwrap().into_inner()
    }

    fn nb(lang: &str, cmds: &[&str]) -> String {
        let commands: Vec<Value> = cmds
            .iter()
            .enumerate()
            .map(|(i, c)| serde_json::json!({"command": c, "position": i as f64 + 1.0}))
            .collect();
        serde_json::json!({"version": "NotebookV1", "name": "n", "language": lang, "commands": commands}).to_string()
    }

    #[test]
    fn a_folder_archive_lands_at_the_import_path() {
        let a = archive(&[
            (
                "Intro/Lesson 1.python",
                &nb("python", &["print(1)", "print(2)"]),
            ),
            ("Intro/sub/Query.sql", &nb("sql", &["SELECT 1"])),
            ("manifest.mf", "ignored"),
        ]);
        let got = notebooks(&a).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].relative, ["Lesson 1"]);
        assert_eq!(got[0].language, "PYTHON");
        assert_eq!(
            String::from_utf8_lossy(&got[0].source),
            "# Databricks notebook source\nprint(1)\n\n# COMMAND ----------\n\nprint(2)"
        );
        assert_eq!(got[1].relative, ["sub", "Query"]);
        assert!(String::from_utf8_lossy(&got[1].source).starts_with("-- Databricks"));
    }

    #[test]
    fn one_notebook_is_the_import_path_itself() {
        let got = notebooks(&archive(&[("N.scala", &nb("scala", &["1"]))])).unwrap();
        assert_eq!(got[0].relative, Vec::<String>::new());
        assert_eq!(got[0].language, "SCALA");
    }

    #[test]
    fn what_is_not_an_archive_of_notebooks_is_refused() {
        for (bytes, says) in [
            (b"not a zip".to_vec(), "could not be read"),
            (archive(&[("x.txt", "hi")]), "holds no notebook"),
            (archive(&[("a/b.python", "{")]), "is not a notebook's JSON"),
            (
                archive(&[("../x.python", &nb("python", &["1"]))]),
                "not a path inside",
            ),
        ] {
            let e = notebooks(&bytes).unwrap_err();
            assert!(e.message.contains(says), "{}", e.message);
        }
    }
}
