//! GitHub, as the templates reach it: through `gh`, GitHub's CLI on its runners. The stand-in
//! on PATH hands its arguments to the fake (forge.rs), which answers the commands the
//! templates run as the GitHub CLI does: what it prints and its exit code.

use crate::REPO;
use crate::forge::{Comment, Hub, Request, form, param};
use serde_json::{Map, Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The `gh` on the runner's PATH: hands its arguments (NUL-separated), its directory and its
/// token to the fake, then prints what it answered and exits with its code.
pub const STAND_IN: &str = r#"#!/usr/bin/env bash
set -euo pipefail
answer=$(printf '%s\0' "$@" | curl -sS -H "X-Cwd: $PWD" -H "X-Token: ${GH_TOKEN:-${GITHUB_TOKEN:-}}" \
  --data-binary @- "$FAKE_SERVICES/gh")
jq -j .stdout <<< "$answer"
jq -j .stderr <<< "$answer" >&2
exit "$(jq -r .code <<< "$answer")"
"#;

/// What a command printed (stdout, stderr) and its exit code.
type Said = (String, String, i32);

/// The fake's answer to the stand-in (`POST /gh`): what the command said, as JSON.
pub fn answer(req: &Request, hub: &mut Hub) -> (u16, Vec<u8>) {
    let argv: Vec<String> = req
        .body
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let argv = &argv[..argv.len().saturating_sub(1)]; // after the last NUL
    let cwd = PathBuf::from(req.headers.get("x-cwd").cloned().unwrap_or_default());
    let token = req.headers.get("x-token").cloned().unwrap_or_default();
    let (out, err, code) = command(hub, argv, &cwd, &token);
    (
        200,
        json!({"stdout": out, "stderr": err, "code": code})
            .to_string()
            .into_bytes(),
    )
}

fn fail(msg: impl std::fmt::Display) -> Said {
    (String::new(), format!("{msg}\n"), 1)
}

/// The `gh` commands the templates run. Flags they do not have are refused, as `gh` refuses
/// them.
fn command(hub: &mut Hub, argv: &[String], cwd: &Path, token: &str) -> Said {
    if token.is_empty() {
        return (
            String::new(),
            "gh: To use GitHub CLI in a GitHub Actions workflow, set the GH_TOKEN environment variable.\n".into(),
            4,
        );
    }
    let (command, rest) = match argv {
        [a, rest @ ..] if a == "api" => ("api", rest),
        [a, b, rest @ ..] if a == "run" && b == "download" => ("run download", rest),
        _ => return fail(format!("gh: the stand-in does not know {argv:?}")),
    };
    let args = match Args::parse(command, rest) {
        Ok(args) => args,
        Err(said) => return said,
    };
    let said = if command == "api" {
        api(hub, &args, cwd)
    } else {
        run_download(hub, &args, cwd)
    };
    said.unwrap_or_else(|e| e)
}

/// A command's flags (named without their dashes, in order) and positional arguments.
struct Args {
    flags: Vec<(String, String)>,
    positional: Vec<String>,
}

impl Args {
    fn parse(command: &str, rest: &[String]) -> Result<Args, Said> {
        // Flags with a value, then flags without, of each command; the rest are positional.
        let (valued, plain): (&[&str], &[&str]) = match command {
            "api" => (
                &[
                    "-X",
                    "--method",
                    "-F",
                    "--field",
                    "-f",
                    "--raw-field",
                    "-H",
                    "--header",
                    "-q",
                    "--jq",
                    "--input",
                ],
                &["--paginate", "--slurp", "--silent"],
            ),
            _ => (
                &[
                    "-R",
                    "--repo",
                    "-n",
                    "--name",
                    "-D",
                    "--dir",
                    "-p",
                    "--pattern",
                ],
                &[],
            ),
        };
        let mut flags: Vec<(String, String)> = Vec::new();
        let mut positional = Vec::new();
        let mut it = rest.iter();
        while let Some(a) = it.next() {
            if !a.starts_with('-') {
                positional.push(a.clone());
                continue;
            }
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
                _ => (a.clone(), None),
            };
            let value = if valued.contains(&name.as_str()) {
                let Some(v) = inline.or_else(|| it.next().cloned()) else {
                    return Err(fail(format!("flag needs an argument: {name}")));
                };
                v
            } else if plain.contains(&name.as_str()) {
                String::new()
            } else {
                return Err(fail(format!("unknown flag: {name}")));
            };
            flags.push((name.trim_start_matches('-').to_string(), value));
        }
        Ok(Args { flags, positional })
    }

    /// The last value given as `-short` or `--long`.
    fn flag(&self, short: &str, long: &str) -> Option<String> {
        self.flags
            .iter()
            .rev()
            .find(|(k, _)| k == short || k == long)
            .map(|(_, v)| v.clone())
    }

    fn has(&self, long: &str) -> bool {
        self.flags.iter().any(|(k, _)| k == long)
    }
}

/// `gh api ENDPOINT`: its fields (`-F name=@file` read from the file), the method (POST
/// with fields, GET without, unless given), the answer filtered by `--jq`.
fn api(hub: &mut Hub, args: &Args, cwd: &Path) -> Result<Said, Said> {
    let [path] = &args.positional[..] else {
        return Err(fail(format!(
            "gh api takes one endpoint, not {:?}",
            args.positional
        )));
    };
    let mut fields = Map::new();
    for (k, v) in &args.flags {
        if k == "F" || k == "field" || k == "f" || k == "raw-field" {
            let (name, value) = v.split_once('=').unwrap();
            let value = match value.strip_prefix('@') {
                Some(file) if k == "F" || k == "field" => {
                    std::fs::read_to_string(cwd.join(file))
                        .map_err(|e| fail(format!("open {file}: {e}")))?
                }
                _ => value.to_string(),
            };
            fields.insert(name.to_string(), Value::String(value));
        }
    }
    let method = args
        .flag("X", "method")
        .unwrap_or_else(|| if fields.is_empty() { "GET" } else { "POST" }.into());
    let (path, query) = path
        .trim_start_matches('/')
        .split_once('?')
        .unwrap_or((path, ""));
    let out = endpoint(
        hub,
        &method,
        path,
        &form(query),
        &fields,
        args.has("paginate"),
    )?;
    Ok(match args.flag("q", "jq") {
        Some(filter) => jq(&filter, &out),
        None => (out, String::new(), 0),
    })
}

fn comment_json(c: &Comment) -> Value {
    json!({
        "id": c.id,
        "body": c.body,
        "user": if c.bot {
            json!({"login": "github-actions[bot]", "type": "Bot"})
        } else {
            json!({"login": "a-reviewer", "type": "User"})
        },
    })
}

/// The REST calls on the repository: an issue's comments (listed, posted, edited) and the
/// artifacts of its runs. Returns what gh prints.
fn endpoint(
    hub: &mut Hub,
    method: &str,
    path: &str,
    query: &[(String, String)],
    fields: &Map<String, Value>,
    paginate: bool,
) -> Result<String, Said> {
    let not_found = || fail("gh: Not Found (HTTP 404)");
    let body = || {
        fields
            .get("body")
            .and_then(Value::as_str)
            .ok_or_else(|| fail("gh: body is missing (HTTP 422)"))
    };
    let Some(rest) = path.strip_prefix(&format!("repos/{REPO}/")) else {
        return Err(not_found());
    };
    let seg: Vec<&str> = rest.split('/').collect();
    Ok(match (&seg[..], method) {
        (["issues", n, "comments"], "GET") => {
            let n: u64 = n.parse().unwrap();
            let per_page: usize = param(query, "per_page").map_or(30, |v| v.parse().unwrap());
            let all: Vec<Value> = hub
                .comments
                .iter()
                .filter(|c| c.issue == n)
                .map(comment_json)
                .collect();
            let pages: Vec<Value> = if all.is_empty() {
                vec![json!([])]
            } else {
                all.chunks(per_page)
                    .map(|c| Value::Array(c.to_vec()))
                    .collect()
            };
            // Without --paginate, the first page; with it, every page one after the other
            // (arrays back to back, as gh prints them).
            let shown = if paginate { &pages[..] } else { &pages[..1] };
            shown.iter().map(Value::to_string).collect::<String>()
        }
        (["issues", n, "comments"], "POST") => {
            let body = body()?;
            let id = hub.id();
            hub.comments.push(Comment {
                id,
                issue: n.parse().unwrap(),
                body: body.to_string(),
                bot: true,
            });
            comment_json(hub.comments.last().unwrap()).to_string()
        }
        (["issues", "comments", id], "PATCH") => {
            let id: u64 = id.parse().unwrap();
            let body = body()?;
            let Some(c) = hub.comments.iter_mut().find(|c| c.id == id) else {
                return Err(not_found());
            };
            c.body = body.to_string();
            comment_json(c).to_string()
        }
        (["actions", "artifacts"], "GET") => {
            let name = param(query, "name");
            let artifacts: Vec<Value> = hub
                .runs
                .iter()
                .rev()
                .flat_map(|r| {
                    r.artifacts.keys().map(move |a| {
                        json!({
                            "id": r.id * 10,
                            "name": a,
                            "expired": false,
                            "workflow_run": {"id": r.id, "head_sha": r.head_sha},
                        })
                    })
                })
                .filter(|a| name.is_none_or(|n| a["name"] == n))
                .collect();
            json!({"total_count": artifacts.len(), "artifacts": artifacts}).to_string()
        }
        _ => return Err(not_found()),
    })
}

/// `gh run download RUN_ID --repo REPO --name NAME --dir DIR`: the artifact's files into DIR.
fn run_download(hub: &mut Hub, args: &Args, cwd: &Path) -> Result<Said, Said> {
    if args.flag("R", "repo").as_deref() != Some(REPO) {
        return Err(fail("gh: not the repository"));
    }
    let [id] = &args.positional[..] else {
        return Err(fail("gh run download: the stand-in needs a run id"));
    };
    let id: u64 = id.parse().unwrap();
    let (Some(name), Some(dir)) = (args.flag("n", "name"), args.flag("D", "dir")) else {
        return Err(fail("gh run download: the stand-in needs --name and --dir"));
    };
    let Some(files) = hub
        .runs
        .iter()
        .find(|r| r.id == id)
        .and_then(|r| r.artifacts.get(&name))
    else {
        return Err(fail("no valid artifacts found to download"));
    };
    let dir = cwd.join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, bytes) in files {
        std::fs::write(dir.join(file), bytes).unwrap();
    }
    Ok((String::new(), String::new(), 0))
}

/// `--jq FILTER` as gh applies it (strings printed raw).
fn jq(filter: &str, input: &str) -> Said {
    let mut child = std::process::Command::new("jq")
        .args(["-r", filter])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("jq");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(1),
    )
}
