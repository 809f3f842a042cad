//! Every shell command that the README, the docs and the examples' READMEs show is run here as
//! written, from a clean clone of the repository, with `brickform` on PATH being the binary
//! under test — or the table below says which test or script runs it instead, and why it
//! cannot run here. A new code block that is in neither list fails the test, and so does an
//! entry that no longer matches a block.
//!
//! The trailing comments of a command are part of what the docs promise: `# exits N` and
//! `# refused …` set the exit status the command must have (otherwise 0), and `No changes.`,
//! `N added` and `N destroyed, M left behind` must appear in its output.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fenced shell block of a Markdown file.
#[derive(Debug, Clone)]
struct Block {
    file: String,
    line: usize,
    text: String,
}

/// Where a runnable block starts: the root of a fresh clone, or an empty directory (for a
/// block that clones the repository itself).
#[derive(Clone, Copy)]
enum Cwd {
    Clone,
    Empty,
}

enum How {
    /// Run here: `setup` first (its output is not checked), then the block, line by line;
    /// lines starting with one of `not_here` are left out, with the reason.
    Run {
        cwd: Cwd,
        setup: &'static str,
        not_here: &'static [(&'static str, &'static str)],
    },
    /// Run by another test or script, or not runnable on a machine without an account.
    Elsewhere(&'static str),
}

struct Entry {
    file: &'static str,
    /// The block's first command line starts with this.
    first: &'static str,
    how: How,
}

const CLONE: How = How::Run {
    cwd: Cwd::Clone,
    setup: "",
    not_here: &[],
};

const PIP: (&str, &str) = (
    "pip install brickform",
    "the package index is not reachable from the tests: scripts/test-wheel installs the wheel built from this checkout into a fresh venv and runs the main job with it",
);

const ENTRIES: &[Entry] = &[
    Entry {
        file: "README.md",
        first: "pip install brickform",
        how: How::Run {
            cwd: Cwd::Empty,
            setup: "",
            not_here: &[PIP],
        },
    },
    Entry {
        file: "README.md",
        first: "pip install brickform       #",
        how: How::Elsewhere(
            "scripts/test-wheel installs the wheel built from this checkout into a fresh venv and runs `brickform --version`",
        ),
    },
    Entry {
        file: "README.md",
        first: "sha256sum -c brickform-0.1.0",
        how: How::Elsewhere(
            "scripts/test-wheel packs the binary into a release archive with its checksum file, checks it and runs it",
        ),
    },
    Entry {
        file: "README.md",
        first: "cargo install --path cmd --locked",
        how: How::Elsewhere(
            "a release build of the whole package (minutes); scripts/build-wheel builds the same package, and CI builds it with `cargo build --workspace`",
        ),
    },
    Entry {
        file: "README.md",
        first: "cargo build",
        how: How::Elsewhere("scripts/test, which CI runs, starts with it"),
    },
    Entry {
        file: "README.md",
        first: "cargo run -- -C examples/lfc-demo apply",
        how: CLONE,
    },
    Entry {
        file: "README.md",
        first: "cargo run -- -C examples/lfc-demo plan",
        how: How::Run {
            cwd: Cwd::Clone,
            setup: "brickform -C examples/lfc-demo apply --local --auto-approve",
            not_here: &[],
        },
    },
    Entry {
        file: "README.md",
        first: "scripts/test",
        how: How::Elsewhere("it is the whole suite: CI runs it (.ci/run)"),
    },
    Entry {
        file: "docs/authentication.md",
        first: "brickform auth status --profile dev",
        how: How::Elsewhere(
            "needs a `dev` profile in ~/.databrickscfg; tests/tests/sign_in.rs runs it against a local workspace",
        ),
    },
    Entry {
        file: "docs/from-terraform.md",
        first: "brickform convert ./terraform --out ./lakehouse",
        how: How::Elsewhere(
            "needs the reader's Terraform configuration and state; tests/tests/convert.rs converts one with its state and plans nothing to do",
        ),
    },
    Entry {
        file: "docs/plan-json.md",
        first: "brickform plan --json | jq -e",
        how: How::Run {
            cwd: Cwd::Clone,
            setup: "cd examples/quickstart",
            not_here: &[],
        },
    },
    Entry {
        file: "docs/plan-json.md",
        first: "brickform plan --json > plan.json",
        how: How::Elsewhere(
            "checkov comes from its own venv: tests/policy_consumers runs it on the examples' plan JSON with this check",
        ),
    },
    Entry {
        file: "docs/plan-json.md",
        first: "brickform plan --json > impact.json",
        how: How::Run {
            cwd: Cwd::Clone,
            setup: "cd examples/quickstart",
            not_here: &[],
        },
    },
    Entry {
        file: "docs/plan-json.md",
        first: "terraform-compliance -p plan.json",
        how: How::Elsewhere(
            "terraform-compliance comes from its own venv: tests/policy_consumers runs it on the examples' plan JSON",
        ),
    },
    Entry {
        file: "docs/plan-json.md",
        first: "brickform plan --json | jq -r",
        how: How::Run {
            cwd: Cwd::Clone,
            setup: "cd examples/quickstart && brickform apply --auto-approve",
            not_here: &[],
        },
    },
    Entry {
        file: "docs/promote-dev-to-prod.md",
        first: "brickform env new staging",
        how: How::Run {
            cwd: Cwd::Clone,
            setup: "cd examples/quickstart",
            not_here: &[],
        },
    },
    Entry {
        file: "docs/promote-dev-to-prod.md",
        first: "brickform env rename default dev",
        how: How::Run {
            cwd: Cwd::Clone,
            setup: "cd examples/quickstart && brickform apply --auto-approve",
            not_here: &[],
        },
    },
    Entry {
        file: "docs/promote-dev-to-prod.md",
        first: "brickform promote --from dev --to prod [",
        how: How::Elsewhere(
            "a synopsis with its options in brackets; examples/promotion/README.md's commands run `promote` and are run here",
        ),
    },
    Entry {
        file: "docs/review-plans-in-ci.md",
        first: "brickform plan --input=false --out prod.bfplan",
        how: How::Elsewhere("tests/tests/ci_templates/main.rs runs the CI templates' steps"),
    },
    Entry {
        file: "docs/review-plans-in-ci.md",
        first: "brickform show --json prod.bfplan",
        how: How::Elsewhere("tests/tests/ci_templates/main.rs runs the CI templates' steps"),
    },
    Entry {
        file: "docs/review-plans-in-ci.md",
        first: "brickform apply prod.bfplan",
        how: How::Elsewhere("tests/tests/ci_templates/main.rs runs the CI templates' steps"),
    },
    Entry {
        file: "docs/sdp-meta-flows.md",
        first: "brickform flows import conf/onboarding.json",
        how: How::Elsewhere(
            "needs the reader's onboarding file; tests/tests/flows_import.rs imports one and applies it back",
        ),
    },
    Entry {
        file: "docs/state-and-import.md",
        first: "brickform import databricks_catalog.main main",
        how: How::Elsewhere(
            "needs a configuration declaring the catalog `main` and a workspace holding it; tests/tests/adopt.rs imports every kind",
        ),
    },
    Entry {
        file: "docs/state-and-import.md",
        first: "brickform adopt --catalog main --prefix",
        how: How::Elsewhere(
            "needs objects made by scripts or the UI in the reader's workspace; tests/tests/adopt_command.rs makes them on a local workspace, adopts, plans, applies and destroys",
        ),
    },
    Entry {
        file: "examples/flows-from-csv/README.md",
        first: "cargo run -- -C examples/flows-from-csv apply",
        how: CLONE,
    },
    Entry {
        file: "examples/flows-from-discovery/README.md",
        first: "cd examples/flows-from-discovery",
        how: CLONE,
    },
    Entry {
        file: "examples/flows-from-discovery/README.md",
        first: "brickform apply --local --auto-approve \\",
        how: How::Run {
            cwd: Cwd::Clone,
            setup: "cd examples/flows-from-discovery && brickform apply --local --auto-approve --target databricks_ingestion_pipeline.crm && brickform run --local databricks_ingestion_pipeline.crm && brickform apply --local --auto-approve",
            not_here: &[],
        },
    },
    Entry {
        file: "examples/flows-from-discovery/README.md",
        first: "brickform destroy --local --auto-approve",
        how: How::Run {
            cwd: Cwd::Clone,
            setup: "cd examples/flows-from-discovery && brickform apply --local --auto-approve --target databricks_ingestion_pipeline.crm && brickform run --local databricks_ingestion_pipeline.crm && brickform apply --local --auto-approve",
            not_here: &[],
        },
    },
    Entry {
        file: "examples/lfc-demo/README.md",
        first: "cargo run -- -C examples/lfc-demo apply",
        how: CLONE,
    },
    Entry {
        file: "examples/lfc-demo/README.md",
        first: "cargo run -- -C examples/lfc-demo run",
        how: How::Run {
            cwd: Cwd::Clone,
            setup: "brickform -C examples/lfc-demo apply --local --auto-approve",
            not_here: &[],
        },
    },
    Entry {
        file: "examples/lfc-demo/README.md",
        first: "cargo run -- -C examples/lfc-demo -e a apply",
        how: CLONE,
    },
    Entry {
        file: "examples/lfc-demo/README.md",
        first: "export BRICKFORM_VAR_source_password",
        how: How::Elsewhere(
            "applies to a real workspace with a real SQL Server; tests/tests/lfc_demo.rs applies the same configuration to a local workspace with these variables",
        ),
    },
    Entry {
        file: "examples/lfc-multi-source/README.md",
        first: "brickform -C examples/lfc-multi-source apply",
        how: CLONE,
    },
    Entry {
        file: "examples/medallion/README.md",
        first: "brickform -C examples/medallion apply",
        how: CLONE,
    },
    Entry {
        file: "examples/medallion/README.md",
        first: "brickform local serve --data examples/medallion",
        how: How::Run {
            cwd: Cwd::Clone,
            setup: "brickform -C examples/medallion apply --auto-approve",
            not_here: &[],
        },
    },
    Entry {
        file: "examples/promotion/README.md",
        first: "cargo run -- -C examples/promotion apply",
        how: CLONE,
    },
    Entry {
        file: "examples/wheel-job/README.md",
        first: "cargo run -- -C examples/wheel-job apply",
        how: How::Elsewhere(
            "builds a wheel with the Python first on PATH, which needs the `build` and `wheel` packages; tests/tests/artifacts.rs applies it with such a Python",
        ),
    },
];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The Markdown files whose commands a reader runs.
fn documents() -> Vec<String> {
    let root = repo_root();
    let mut files = vec!["README.md".to_string()];
    for dir in ["docs", "examples", "providers/emulator", "editors/vscode"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() && p.join("README.md").is_file() {
                files.push(format!(
                    "{dir}/{}/README.md",
                    e.file_name().to_string_lossy()
                ));
            } else if p.extension().is_some_and(|x| x == "md") {
                files.push(format!("{dir}/{}", e.file_name().to_string_lossy()));
            }
        }
    }
    files.sort();
    files
}

fn blocks() -> Vec<Block> {
    let mut out = Vec::new();
    for file in documents() {
        let text = std::fs::read_to_string(repo_root().join(&file)).unwrap();
        let mut open: Option<(usize, String)> = None;
        for (i, line) in text.lines().enumerate() {
            match &mut open {
                None => {
                    let fence = line.trim_start();
                    if ["```sh", "```bash", "```shell", "```console"].contains(&fence) {
                        open = Some((i + 1, String::new()));
                    }
                }
                Some((start, body)) => {
                    if line.trim_start() == "```" {
                        out.push(Block {
                            file: file.clone(),
                            line: *start,
                            text: std::mem::take(body),
                        });
                        open = None;
                    } else {
                        body.push_str(line);
                        body.push('\n');
                    }
                }
            }
        }
    }
    out
}

/// The commands of a block: continuation lines joined, comment lines left out; each with
/// its trailing comment.
fn commands(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        if pending.is_empty() && (line.trim().is_empty() || line.trim_start().starts_with('#')) {
            continue;
        }
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head);
            continue;
        }
        pending.push_str(line);
        let (command, comment) = split_comment(&pending);
        out.push((command.trim().to_string(), comment.trim().to_string()));
        pending.clear();
    }
    out
}

/// A command and its trailing comment: the first `#` after whitespace outside quotes.
fn split_comment(line: &str) -> (&str, &str) {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => {
                return (&line[..i], &line[i + 1..]);
            }
            _ => {}
        }
        prev = c;
    }
    (line, "")
}

/// Whether a command asks for confirmation: `apply` or `destroy` without `--auto-approve`,
/// and not the apply of a saved plan (which never asks).
fn prompts(command: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    words.iter().any(|w| *w == "apply" || *w == "destroy")
        && !words.contains(&"--auto-approve")
        && !words.iter().any(|w| w.ends_with(".bfplan"))
}

/// What a trailing comment promises: the exit status, and phrases of the output.
fn promises(comment: &str) -> (Option<i32>, bool, Vec<String>) {
    let words: Vec<&str> = comment
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|w| !w.is_empty())
        .collect();
    let mut exit = None;
    let mut phrases = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if *w == "exits" {
            exit = words.get(i + 1).and_then(|n| n.parse().ok());
        }
        if let (Ok(n), Some(next)) = (w.parse::<u32>(), words.get(i + 1)) {
            match *next {
                "added" | "destroyed" => phrases.push(format!("{n} {next}")),
                "left" if words.get(i + 2) == Some(&"behind") => {
                    phrases.push(format!("{n} left behind"))
                }
                _ => {}
            }
        }
    }
    if comment.contains("No changes.") || comment.starts_with("no changes") {
        phrases.push("No changes.".into());
    }
    let refused = comment == "refused" || comment.starts_with("refused:");
    (exit, refused, phrases)
}

/// A fresh clone of the repository (what CI and a newcomer start from).
fn clone_into(dest: &Path) {
    let st = Command::new("git")
        .args(["clone", "--quiet", "--no-hardlinks"])
        .arg(repo_root())
        .arg(dest)
        .status()
        .expect("git");
    assert!(st.success(), "git clone of the repository failed");
}

/// `brickform` is the binary under test; `cargo run --` is the same binary (the reader has
/// built it), so the examples' `cargo run -- …` lines run it without building again.
fn bin_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("doc-commands-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("brickform");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(common::bin(), &link).unwrap();
    dir
}

const PRELUDE: &str = r#"
cargo() {
  if [ "${1:-}" = run ] && [ "${2:-}" = -- ]; then shift 2; brickform "$@"
  else echo "the docs test runs no cargo command but 'cargo run --'" >&2; return 97; fi
}
"#;

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Runs one block; returns the failures, empty when every promise held.
fn run_block(
    block: &Block,
    cwd: Cwd,
    setup: &str,
    not_here: &[(&str, &str)],
    path: &str,
) -> Vec<String> {
    let scratch = tempfile::tempdir().unwrap();
    let start = match cwd {
        Cwd::Clone => {
            let dest = scratch.path().join("brickform");
            clone_into(&dest);
            dest
        }
        Cwd::Empty => {
            let dest = scratch.path().join("reader");
            std::fs::create_dir_all(&dest).unwrap();
            dest
        }
    };
    let logs = scratch.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let root = repo_root().display().to_string();
    let cmds: Vec<(String, String)> = commands(&block.text)
        .into_iter()
        .filter(|(c, _)| !not_here.iter().any(|(skip, _)| c.starts_with(skip)))
        .collect();
    let mut script = String::from(PRELUDE);
    if !setup.is_empty() {
        script.push_str(&format!(
            "{{ {setup} ; }} >{logs}/setup 2>&1 || {{ echo setup failed >&2; cat {logs}/setup >&2; exit 98; }}\n",
            logs = logs.display()
        ));
    }
    for (i, (command, _)) in cmds.iter().enumerate() {
        let command = command.replace("<repository URL>", &shell_quote(&root));
        // A command sent to the background keeps running; the others are recorded.
        if let Some(bg) = command.strip_suffix('&') {
            script.push_str(&format!("{bg} >{}/{i}.bg 2>&1 &\n", logs.display()));
            continue;
        }
        // A command that asks before it changes anything gets a terminal, and the answer a
        // reader types.
        let command = if prompts(&command) {
            format!(
                "printf 'yes\\n' | script -qec {} /dev/null",
                shell_quote(&command)
            )
        } else {
            format!("{command} </dev/null")
        };
        script.push_str(&format!(
            "{{ {command} ; }} >{l}/{i}.out 2>&1; echo $? >{l}/{i}.rc\n",
            l = logs.display()
        ));
    }
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(&start)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env("HOME", scratch.path())
        .env_remove("BRICKFORM_ENV")
        .output()
        .unwrap();
    let mut failures = Vec::new();
    let whence = format!("{}:{}", block.file, block.line);
    if !out.status.success() {
        failures.push(format!(
            "{whence}: the block's shell failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    for (i, (command, comment)) in cmds.iter().enumerate() {
        if command.ends_with('&') {
            continue;
        }
        let rc: Option<i32> = std::fs::read_to_string(logs.join(format!("{i}.rc")))
            .ok()
            .and_then(|s| s.trim().parse().ok());
        let output = std::fs::read_to_string(logs.join(format!("{i}.out"))).unwrap_or_default();
        let (exit, refused, phrases) = promises(comment);
        let ok_exit = match (rc, exit, refused) {
            (None, _, _) => false,
            (Some(rc), Some(want), _) => rc == want,
            (Some(rc), None, true) => rc != 0,
            (Some(rc), None, false) => rc == 0,
        };
        if !ok_exit {
            failures.push(format!(
                "{whence}: `{command}` exited {rc:?} (the docs say: {}):\n{output}",
                if comment.is_empty() {
                    "nothing, so 0"
                } else {
                    comment
                }
            ));
        }
        for p in phrases {
            if !output.contains(&p) {
                failures.push(format!(
                    "{whence}: `{command}` does not print \"{p}\" as its comment says:\n{output}"
                ));
            }
        }
    }
    failures
}

/// A block to run: where it starts, its setup, the lines left out.
type Todo = (
    Block,
    Cwd,
    &'static str,
    &'static [(&'static str, &'static str)],
);

#[test]
fn every_documented_command_runs_as_written_or_says_where_it_is_run() {
    let blocks = blocks();
    let mut matched = vec![0usize; ENTRIES.len()];
    let mut unlisted = Vec::new();
    let mut runs: Vec<(Block, &How)> = Vec::new();
    for b in &blocks {
        let first = commands(&b.text)
            .first()
            .map(|(c, _)| c.clone())
            .unwrap_or_default();
        let raw_first = b
            .text
            .lines()
            .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .unwrap_or("");
        // The longest matching prefix wins, so an entry can single out one of two blocks
        // that start alike.
        let hit = ENTRIES
            .iter()
            .enumerate()
            .filter(|(_, e)| e.file == b.file && raw_first.starts_with(e.first))
            .max_by_key(|(_, e)| e.first.len());
        match hit {
            Some((i, e)) => {
                matched[i] += 1;
                runs.push((b.clone(), &e.how));
            }
            None => unlisted.push(format!("{}:{}: `{first}`", b.file, b.line)),
        }
    }
    assert!(
        unlisted.is_empty(),
        "code blocks neither run by this test nor listed with where they are run:\n{}",
        unlisted.join("\n")
    );
    // A block run elsewhere names the test or script that runs it, and that file exists.
    let unfounded: Vec<String> = ENTRIES
        .iter()
        .filter_map(|e| match e.how {
            How::Elsewhere(why) => (!why
                .split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == ':')
                .map(|w| {
                    let w = w.trim_matches(|c: char| c == '`' || c == '(' || c == ')');
                    let w = w.strip_suffix("'s").unwrap_or(w);
                    w.strip_suffix('.').unwrap_or(w)
                })
                .any(|w| w.contains('/') && repo_root().join(w).exists()))
            .then(|| format!("{}: `{}`: {why}", e.file, e.first)),
            How::Run { .. } => None,
        })
        .collect();
    assert!(
        unfounded.is_empty(),
        "reasons naming no file of the repository:\n{}",
        unfounded.join("\n")
    );
    let stale: Vec<String> = ENTRIES
        .iter()
        .zip(&matched)
        .filter(|(_, n)| **n != 1)
        .map(|(e, n)| format!("{}: `{}` matches {n} blocks", e.file, e.first))
        .collect();
    assert!(stale.is_empty(), "entries to mend:\n{}", stale.join("\n"));

    let path = format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Identical blocks (the README repeats the lfc-demo README's main job) run once.
    let mut seen = std::collections::HashSet::new();
    let todo: Vec<Todo> = runs
        .into_iter()
        .filter_map(|(b, how)| match how {
            How::Run {
                cwd,
                setup,
                not_here,
            } => seen
                .insert((b.text.clone(), setup.to_string()))
                .then_some((b, *cwd, *setup, *not_here)),
            How::Elsewhere(_) => None,
        })
        .collect();
    assert!(todo.len() >= 15, "{} blocks run", todo.len());
    // Two at a time: each block applies whole examples.
    let failures: Vec<String> = std::thread::scope(|s| {
        let chunks: Vec<_> = todo.chunks(todo.len().div_ceil(2)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let path = path.as_str();
                s.spawn(move || {
                    chunk
                        .iter()
                        .flat_map(|(b, cwd, setup, not_here)| {
                            run_block(b, *cwd, setup, not_here, path)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn comments_promise_what_the_runner_checks() {
    assert_eq!(promises("exits 1"), (Some(1), false, vec![]));
    assert_eq!(
        promises("20 destroyed, 0 left behind"),
        (
            None,
            false,
            vec!["20 destroyed".to_string(), "0 left behind".to_string()]
        )
    );
    assert_eq!(promises("refused: prod is protected"), (None, true, vec![]));
    assert_eq!(promises("refused if it exists"), (None, false, vec![]));
    assert!(prompts("brickform --env staging apply"));
    assert!(!prompts("brickform apply prod.bfplan"));
    assert!(!prompts("brickform destroy --auto-approve"));
    assert_eq!(
        promises("No changes."),
        (None, false, vec!["No changes.".to_string()])
    );
    assert_eq!(
        split_comment("curl -d '{\"a\": \"#x\"}' # note"),
        ("curl -d '{\"a\": \"#x\"}' ", " note")
    );
    assert_eq!(
        commands("a \\\n  b   # c\n# only a comment\n\nd\n"),
        vec![
            ("a   b".to_string(), "c".to_string()),
            ("d".into(), "".into())
        ]
    );
}
