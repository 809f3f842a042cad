//! The generated reference stays in step with the schemas it is generated from, and the
//! project's documentation is self-contained: no file points at a document outside the
//! repository, and every pointer to a section of docs/architecture.md names one that exists.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

#[test]
fn resource_reference_is_current() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::run_ok(dir.path(), &["schema", "--markdown"], &[]);
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/resources.md"))
            .unwrap();
    assert!(
        out == committed,
        "docs/resources.md is out of date; regenerate it with `cargo run -- schema --markdown > docs/resources.md`"
    );
    assert!(out.contains("### `databricks_job`") && out.contains("matched by `task_key`"));
    assert!(
        out.contains(
            "`volume_type` (string; required; forces replacement; one of `MANAGED`, `EXTERNAL`)"
        ),
        "the reference lists allowed values"
    );
    assert!(out.contains("one of `CURRENT`, `PREVIEW` (any case)"));
}

/// docs/architecture.md lists every behaviour of the real service the local workspace
/// models, in its table, with what the service does as the behaviour describes it.
#[test]
fn architecture_lists_every_modelled_behaviour() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/architecture.md"
    ))
    .unwrap();
    for (_, name, description) in brickform_emulator::BEHAVIOURS {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}` | ")))
            .unwrap_or_else(|| panic!("docs/architecture.md has no row for the behaviour {name}"));
        let flat = description.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            row.contains(&flat.replace('|', "/")),
            "docs/architecture.md describes {name} otherwise than behaviours.rs:\n{row}\n{flat}"
        );
    }
}

#[test]
fn schema_json_lists_kinds_and_data_sources() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::run_ok(dir.path(), &["schema"], &[]);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        j["resources"]["databricks_volume"]["attributes"]["volume_type"]["forces_replacement"],
        true
    );
    assert_eq!(
        j["resources"]["databricks_connection"]["attributes"]["options"]["sensitive"],
        true
    );
    assert_eq!(
        j["resources"]["databricks_volume"]["attributes"]["volume_type"]["allowed_values"],
        serde_json::json!(["MANAGED", "EXTERNAL"])
    );
    let task = &j["resources"]["databricks_job"]["blocks"]["task"]["block"];
    assert_eq!(
        task["attributes"]["run_if"]["allowed_values"][1], "ALL_DONE",
        "nested blocks list their values too"
    );
    assert!(j["resources"]["databricks_volume"]["attributes"]["name"]["allowed_values"].is_null());
    assert!(j["data_sources"]["databricks_current_user"].is_object());
    assert!(j["providers"]["databricks"]["attributes"]["host"].is_object());
}

/// The repository root.
fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Every text file the project writes (sources, docs, scripts, examples, tests), as paths
/// relative to the repository root with `/` separators. Build output, virtual environments
/// and installed packages are not the project's.
fn project_files() -> Vec<(String, String)> {
    const SKIP_DIRS: &[&str] = &[
        "target",
        ".git",
        "node_modules",
        "__pycache__",
        ".brickform",
        ".pytest_cache",
    ];
    const TEXT: &[&str] = &[
        "rs", "md", "py", "toml", "sh", "hcl", "yml", "yaml", "txt", "cfg", "ini",
    ];
    let root = repo_root();
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let ty = entry.file_type().unwrap();
            if ty.is_dir() {
                if !SKIP_DIRS.contains(&name.as_str()) && !name.starts_with(".venv") {
                    stack.push(path);
                }
                continue;
            }
            if !ty.is_file() {
                continue;
            }
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            // Scripts without an extension (scripts/test, .ci/run) count too.
            let in_scripts = path
                .parent()
                .and_then(|p| p.file_name())
                .is_some_and(|p| p == "scripts" || p == ".ci");
            let text_file = TEXT.contains(&ext) || (ext.is_empty() && in_scripts);
            if !text_file {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let rel = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, text));
        }
    }
    out.sort();
    out
}

#[test]
fn docs_and_comments_refer_to_nothing_outside_the_repository() {
    // Spelled in pieces so this file does not match itself.
    let outside: Vec<String> = [
        ["\u{a7}", ""],
        ["shared/", "reference"],
        ["DESIGN", ".md"],
        ["reference/", "sdp-meta.md"],
        ["databricks-", "api.md"],
        ["prior-", "art.md"],
        ["rust-stack-", "and-iac-ux.md"],
    ]
    .iter()
    .map(|p| p.concat())
    .collect();
    let mut found = Vec::new();
    let files = project_files();
    assert!(
        files.iter().any(|(p, _)| p == "docs/architecture.md"),
        "the walk sees the docs"
    );
    for (path, text) in &files {
        let hits: Vec<String> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| outside.iter().any(|o| l.contains(o.as_str())))
            .map(|(i, l)| format!("{path}:{}: {}", i + 1, l.trim()))
            .collect();
        found.extend(hits);
    }
    assert!(
        found.is_empty(),
        "these lines refer to documents outside the repository; say it here, or point at a \
         section of docs/architecture.md or another project doc:\n{}",
        found.join("\n")
    );
}

#[test]
fn pointers_into_architecture_name_existing_sections() {
    let arch = std::fs::read_to_string(repo_root().join("docs/architecture.md")).unwrap();
    let sections: Vec<&str> = arch
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(str::trim)
        .collect();
    for s in [
        "Crates",
        "State",
        "Plan",
        "Apply and destroy",
        "The Databricks client",
        "The local workspace",
        "Wire facts",
        "sdp-meta onboarding facts",
        "sdp-meta rules",
    ] {
        assert!(
            sections.contains(&s),
            "docs/architecture.md has a section {s:?}"
        );
    }
    let rules = arch.split("## sdp-meta rules").nth(1).unwrap();
    for n in 1..=26 {
        assert!(
            rules.contains(&format!("| V{n} |")),
            "docs/architecture.md lists rule V{n}"
        );
    }
    // Spelled in pieces so this file does not match itself.
    const POINTER: &str = concat!("docs/architecture.md", ", ");
    let mut bad = Vec::new();
    let mut pointers = 0;
    for (path, text) in project_files() {
        // A pointer may wrap over comment lines: join them without their comment markers.
        let joined = text
            .lines()
            .map(|l| {
                l.trim_start()
                    .trim_start_matches("//!")
                    .trim_start_matches("///")
                    .trim_start_matches("//")
                    .trim_start_matches('#')
                    .trim()
            })
            .collect::<Vec<_>>()
            .join(" ");
        for (at, _) in joined.match_indices(POINTER) {
            pointers += 1;
            let rest = &joined[at + POINTER.len()..];
            // The section, then possibly `, subsection`.
            let named = rest.split(')').next().unwrap_or(rest);
            let section = named
                .split(", ")
                .next()
                .unwrap_or(named)
                .trim_end_matches('"');
            if !sections.contains(&section) {
                bad.push(format!("{path}: {named:?}"));
            }
        }
    }
    assert!(pointers >= 10, "the pointers are found ({pointers})");
    assert!(
        bad.is_empty(),
        "pointers to sections docs/architecture.md does not have (sections: {sections:?}):\n{}",
        bad.join("\n")
    );
}

/// A fenced block that a document includes from a file of the repository (the line
/// `<!-- include: PATH -->` right above it) is that file, byte for byte: the CI templates that
/// docs/review-plans-in-ci.md shows are the files in ci-templates/ as they are.
#[test]
fn included_files_are_shown_as_they_are() {
    const INCLUDE: &str = "<!-- include: ";
    let root = repo_root();
    let mut included = Vec::new();
    let mut differing = Vec::new();
    for (path, text) in project_files() {
        if !path.ends_with(".md") {
            continue;
        }
        let mut rest = text.as_str();
        while let Some(at) = rest.find(INCLUDE) {
            let after = &rest[at + INCLUDE.len()..];
            let (file, after) = after.split_once(" -->\n").unwrap_or_else(|| {
                panic!("{path}: an include line is `{INCLUDE}PATH -->` on a line of its own")
            });
            let (fence, body) = after.split_once('\n').unwrap();
            assert!(
                fence.starts_with("```"),
                "{path}: the include of {file} is not followed by a fenced block"
            );
            let end = if body.starts_with("```") {
                0
            } else {
                body.find("\n```")
                    .unwrap_or_else(|| panic!("{path}: the block of {file} is not closed"))
                    + 1
            };
            let want = std::fs::read_to_string(root.join(file))
                .unwrap_or_else(|e| panic!("{path} includes {file}: {e}"));
            if body[..end] != want {
                differing.push(format!("{path}: the block under `{INCLUDE}{file} -->`"));
            }
            included.push(format!("{path} <- {file}"));
            rest = &body[end..];
        }
    }
    for file in [
        "ci-templates/github/brickform.yml",
        "ci-templates/github/brickform-action.yml",
        "ci-templates/gitlab/.gitlab-ci.yml",
    ] {
        let want = format!("docs/review-plans-in-ci.md <- {file}");
        assert!(included.contains(&want), "{want} is missing: {included:?}");
    }
    assert!(
        differing.is_empty(),
        "these blocks differ from the files they include; copy each file into its block:\n{}",
        differing.join("\n")
    );
}
