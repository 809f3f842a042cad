//! The CI templates that docs/review-plans-in-ci.md includes, run as the CIs run them: every
//! `run:` of ci-templates/github/brickform.yml, of ci-templates/github/brickform-action.yml
//! (whose `uses: OWNER/REPO@REF` runs the composite action's steps, action.yml), and every
//! `script:` of ci-templates/gitlab/.gitlab-ci.yml, in bash, with the variables each CI sets,
//! against `brickform local serve` holding the state in one of its volumes (runners start
//! empty, so the templates keep the state there).
//!
//! What the CI services do is played here: `actions/checkout` writes the commit's files,
//! `actions/upload-artifact` and GitLab's `artifacts:` keep the job's files; `gh` (GitHub's
//! CLI, on its runners) is a stand-in that hands its arguments to a fake GitHub, GitLab's API a
//! fake HTTP server, both in this process; `pip` and `apt-get` are stand-ins that record what
//! they were asked to install (the `brickform` on PATH is the one built here).
//!
//! Each template goes through: a pull (merge) request planned, its comment (note) posted; a
//! push to it, the same comment updated (found past the first page of comments); the merge,
//! the saved plan handed from the plan job to the apply job and applied; the apply run again,
//! refused (the state moved on); a request whose merged configuration is not the planned one,
//! refused; a merge with no plan, failing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Serve;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

const REPO: &str = "acme/lakehouse";
const GH_TOKEN: &str = "ghs_fake_installation_token";
const GITLAB_TOKEN: &str = "glpat-fake-project-token";
const PROJECT_ID: u64 = 42;
const STATE_PATH: &str = "/Volumes/ops/brickform/state/lakehouse";
const DB_PASSWORD: &str = "s3cret-db-password";
const MARKER: &str = "<!-- brickform-plan:infra:prod -->";
/// The unrelated comments (notes) a request has before the first plan: more than a page.
const CHATTER: usize = 120;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn yaml(rel: &str) -> Value {
    serde_yaml_ng::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel} is not YAML: {e}"))
}

/// The workspace version (Cargo.toml), which the templates install.
fn version() -> String {
    let cargo = read("Cargo.toml");
    let section = &cargo[cargo.find("[workspace.package]").unwrap()..];
    section
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .unwrap()
        .trim_end_matches('"')
        .to_string()
}

// ---------------------------------------------------------------------------------------
// The repository: commits holding the configuration in infra/.

/// The configuration of the templates' repository: its state in a volume, the environment
/// `prod`, a sensitive variable (from the CI's secrets), and the host and credentials from
/// the DATABRICKS_* variables the templates set.
fn infra(comment: &str) -> String {
    format!(
        r#"brickform {{
  backend "volume" {{
    path = "{STATE_PATH}"
  }}
}}

environment "prod" {{}}

variable "db_password" {{
  type      = string
  sensitive = true
}}

provider "databricks" {{}}

resource "databricks_catalog" "sales" {{
  name    = "sales"
  comment = "{comment}"
}}

resource "databricks_schema" "raw" {{
  catalog_name = databricks_catalog.sales.name
  name         = "raw"
}}

resource "databricks_connection" "pg" {{
  name            = "sales_pg"
  connection_type = "POSTGRESQL"
  options = {{
    host     = "db.example.com"
    port     = "5432"
    user     = "app"
    password = var.db_password
  }}
}}
"#
    )
}

#[derive(Default)]
struct Repo {
    commits: BTreeMap<String, BTreeMap<String, String>>,
}

impl Repo {
    /// A commit whose infra/main.bf.hcl sets the catalog's comment; returns its SHA.
    fn commit(&mut self, comment: &str) -> String {
        // Distinct in their first characters, as the short SHAs the comments show.
        let n = self.commits.len() as u64 + 1;
        let sha = format!("{:016x}{n:024x}", n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let files = BTreeMap::from([
            ("README.md".to_string(), "# lakehouse\n".to_string()),
            ("infra/main.bf.hcl".to_string(), infra(comment)),
        ]);
        self.commits.insert(sha.clone(), files);
        sha
    }

    fn checkout(&self, sha: &str, into: &Path) {
        let files = self
            .commits
            .get(sha)
            .unwrap_or_else(|| panic!("no commit {sha}"));
        for (path, text) in files {
            let p = into.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }
}

// ---------------------------------------------------------------------------------------
// The workspace: `brickform local serve`, with the volume the state lives in.

fn workspace() -> (tempfile::TempDir, Serve) {
    let data = tempfile::tempdir().unwrap();
    let s = Serve::start(data.path(), &[]);
    s.ok(
        "POST",
        "/api/2.1/unity-catalog/catalogs",
        Some(json!({"name": "ops"})),
    );
    s.ok(
        "POST",
        "/api/2.1/unity-catalog/schemas",
        Some(json!({"catalog_name": "ops", "name": "brickform"})),
    );
    s.ok(
        "POST",
        "/api/2.1/unity-catalog/volumes",
        Some(json!({"catalog_name": "ops", "schema_name": "brickform", "name": "state", "volume_type": "MANAGED"})),
    );
    (data, s)
}

/// What the configuration manages, as the workspace holds it: changes nothing when a plan
/// is refused.
fn managed(s: &Serve) -> Value {
    let d = s.dump();
    json!({
        "catalog": d["catalogs"]["sales"]["comment"],
        "schemas": d["schemas"].as_object().map(|m| m.keys().filter(|k| k.starts_with("sales.") && !k.ends_with(".information_schema")).cloned().collect::<Vec<_>>()),
        "connection": d["connections"]["sales_pg"]["options"],
    })
}

// ---------------------------------------------------------------------------------------
// The fake services: GitHub (behind the `gh` stand-in) and GitLab's API, one HTTP server.

struct Comment {
    id: u64,
    issue: u64,
    body: String,
    bot: bool,
}

struct Run {
    id: u64,
    head_sha: String,
    artifacts: BTreeMap<String, Vec<(String, Vec<u8>)>>,
}

struct Note {
    id: u64,
    mr: u64,
    body: String,
}

struct Mr {
    iid: u64,
    state: String,
    merge_commit_sha: Option<String>,
    head_pipeline: Option<u64>,
}

struct GlJob {
    id: u64,
    pipeline: u64,
    name: String,
    status: String,
    artifacts: BTreeMap<String, Vec<u8>>,
}

#[derive(Default)]
struct Hub {
    next_id: u64,
    comments: Vec<Comment>,
    runs: Vec<Run>,
    notes: Vec<Note>,
    mrs: Vec<Mr>,
    jobs: Vec<GlJob>,
}

impl Hub {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }
}

struct Fake {
    url: String,
    hub: Arc<Mutex<Hub>>,
}

impl Fake {
    fn start() -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let hub = Arc::new(Mutex::new(Hub {
            next_id: 5000,
            ..Hub::default()
        }));
        let shared = hub.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let hub = shared.clone();
                std::thread::spawn(move || answer(stream, &hub));
            }
        });
        Fake { url, hub }
    }

    fn hub(&self) -> MutexGuard<'_, Hub> {
        self.hub.lock().unwrap()
    }
}

struct Request {
    method: String,
    path: String,
    query: Vec<(String, String)>,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

impl Request {
    fn query(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// `application/x-www-form-urlencoded` decoding.
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

fn form(s: &str) -> Vec<(String, String)> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn answer(mut stream: TcpStream, hub: &Mutex<Hub>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or("/").to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    if headers
        .get("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").unwrap();
    }
    let len = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let req = Request {
        method,
        path: path.to_string(),
        query: form(query),
        headers,
        body,
    };
    let (status, bytes) = route(&req, &mut hub.lock().unwrap());
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        if status < 300 { "OK" } else { "Error" },
        bytes.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&bytes);
}

fn route(req: &Request, hub: &mut Hub) -> (u16, Vec<u8>) {
    if req.path == "/gh" {
        let argv: Vec<String> = req
            .body
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let argv = &argv[..argv.len().saturating_sub(1)]; // after the last NUL
        let cwd = PathBuf::from(req.headers.get("x-cwd").cloned().unwrap_or_default());
        let token = req.headers.get("x-token").cloned().unwrap_or_default();
        let (out, err, code) = gh(hub, argv, &cwd, &token);
        return (
            200,
            json!({"stdout": out, "stderr": err, "code": code})
                .to_string()
                .into_bytes(),
        );
    }
    let prefix = format!("/api/v4/projects/{PROJECT_ID}/");
    let Some(rest) = req.path.strip_prefix(&prefix) else {
        return (404, b"{\"message\":\"404 Not Found\"}".to_vec());
    };
    if req.headers.get("private-token").map(String::as_str) != Some(GITLAB_TOKEN) {
        return (401, b"{\"message\":\"401 Unauthorized\"}".to_vec());
    }
    let (status, v) = gitlab(hub, req, &rest.split('/').collect::<Vec<_>>());
    match v {
        GlAnswer::Json(v) => (status, v.to_string().into_bytes()),
        GlAnswer::Bytes(b) => (status, b),
    }
}

enum GlAnswer {
    Json(Value),
    Bytes(Vec<u8>),
}

fn not_found() -> (u16, GlAnswer) {
    (404, GlAnswer::Json(json!({"message": "404 Not found"})))
}

/// The GitLab API calls the template makes.
fn gitlab(hub: &mut Hub, req: &Request, seg: &[&str]) -> (u16, GlAnswer) {
    let m = req.method.as_str();
    match seg {
        ["merge_requests", iid, "notes"] if m == "GET" => {
            let iid: u64 = iid.parse().unwrap();
            let mut notes: Vec<&Note> = hub.notes.iter().filter(|n| n.mr == iid).collect();
            // GitLab lists the newest first unless asked otherwise.
            if req.query("sort") != Some("asc") {
                notes.reverse();
            }
            let per_page: usize = req.query("per_page").map_or(20, |p| p.parse().unwrap());
            let page: usize = req.query("page").map_or(1, |p| p.parse().unwrap());
            let items: Vec<Value> = notes
                .iter()
                .skip((page - 1) * per_page)
                .take(per_page)
                .map(|n| json!({"id": n.id, "body": n.body, "system": false}))
                .collect();
            (200, GlAnswer::Json(Value::Array(items)))
        }
        ["merge_requests", iid, "notes"] if m == "POST" => {
            let body = note_body(req);
            let id = hub.id();
            hub.notes.push(Note {
                id,
                mr: iid.parse().unwrap(),
                body,
            });
            (201, GlAnswer::Json(json!({"id": id})))
        }
        ["merge_requests", iid, "notes", id] if m == "PUT" => {
            let (iid, id): (u64, u64) = (iid.parse().unwrap(), id.parse().unwrap());
            let body = note_body(req);
            match hub.notes.iter_mut().find(|n| n.id == id && n.mr == iid) {
                Some(n) => {
                    n.body = body;
                    (200, GlAnswer::Json(json!({"id": id})))
                }
                None => not_found(),
            }
        }
        ["repository", "commits", sha, "merge_requests"] if m == "GET" => {
            let mrs: Vec<Value> = hub
                .mrs
                .iter()
                .filter(|mr| mr.merge_commit_sha.as_deref() == Some(*sha))
                .map(|mr| json!({"iid": mr.iid, "state": mr.state}))
                .collect();
            (200, GlAnswer::Json(Value::Array(mrs)))
        }
        ["merge_requests", iid] if m == "GET" => {
            let iid: u64 = iid.parse().unwrap();
            match hub.mrs.iter().find(|mr| mr.iid == iid) {
                Some(mr) => (
                    200,
                    GlAnswer::Json(json!({
                        "iid": iid,
                        "state": mr.state,
                        "head_pipeline": mr.head_pipeline.map(|p| json!({"id": p})),
                    })),
                ),
                None => not_found(),
            }
        }
        ["pipelines", pipeline, "jobs"] if m == "GET" => {
            let pipeline: u64 = pipeline.parse().unwrap();
            let scope = req.query("scope[]");
            let jobs: Vec<Value> = hub
                .jobs
                .iter()
                .filter(|j| j.pipeline == pipeline && scope.is_none_or(|s| s == j.status))
                .map(|j| json!({"id": j.id, "name": j.name, "status": j.status}))
                .collect();
            (200, GlAnswer::Json(Value::Array(jobs)))
        }
        ["jobs", id, "artifacts", path @ ..] if m == "GET" => {
            let id: u64 = id.parse().unwrap();
            let path = path.join("/");
            match hub
                .jobs
                .iter()
                .find(|j| j.id == id)
                .and_then(|j| j.artifacts.get(&path))
            {
                Some(bytes) => (200, GlAnswer::Bytes(bytes.clone())),
                None => not_found(),
            }
        }
        _ => not_found(),
    }
}

fn note_body(req: &Request) -> String {
    form(std::str::from_utf8(&req.body).unwrap())
        .into_iter()
        .find(|(k, _)| k == "body")
        .map(|(_, v)| v)
        .expect("a note's body")
}

/// The `gh` commands the templates run, as the GitHub CLI answers them: stdout, stderr and
/// its exit code. Flags it does not have are refused, as `gh` refuses them.
fn gh(hub: &mut Hub, argv: &[String], cwd: &Path, token: &str) -> (String, String, i32) {
    let fail = |msg: String| (String::new(), format!("{msg}\n"), 1);
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
        if a.starts_with('-') {
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
                _ => (a.clone(), None),
            };
            if valued.contains(&name.as_str()) {
                let v = inline.or_else(|| it.next().cloned());
                let Some(v) = v else {
                    return fail(format!("flag needs an argument: {name}"));
                };
                flags.push((name.trim_start_matches('-').to_string(), v));
            } else if plain.contains(&name.as_str()) {
                flags.push((name.trim_start_matches('-').to_string(), String::new()));
            } else {
                return fail(format!("unknown flag: {name}"));
            }
        } else {
            positional.push(a.clone());
        }
    }
    let flag = |short: &str, long: &str| {
        flags
            .iter()
            .rev()
            .find(|(k, _)| k == short || k == long)
            .map(|(_, v)| v.clone())
    };
    let has = |long: &str| flags.iter().any(|(k, _)| k == long);
    match command {
        "api" => {
            let [path] = &positional[..] else {
                return fail(format!("gh api takes one endpoint, not {positional:?}"));
            };
            let mut fields = Map::new();
            for (k, v) in &flags {
                if k == "F" || k == "field" || k == "f" || k == "raw-field" {
                    let (name, value) = v.split_once('=').unwrap();
                    let value = match value.strip_prefix('@') {
                        Some(file) if k == "F" || k == "field" => {
                            match std::fs::read_to_string(cwd.join(file)) {
                                Ok(t) => t,
                                Err(e) => return fail(format!("open {file}: {e}")),
                            }
                        }
                        _ => value.to_string(),
                    };
                    fields.insert(name.to_string(), Value::String(value));
                }
            }
            let method = flag("X", "method")
                .unwrap_or_else(|| if fields.is_empty() { "GET" } else { "POST" }.into());
            let (path, query) = path
                .trim_start_matches('/')
                .split_once('?')
                .unwrap_or((path, ""));
            let query = form(query);
            let seg: Vec<&str> = path.split('/').collect();
            let not_found = fail("gh: Not Found (HTTP 404)".into());
            let comment = |c: &Comment| {
                json!({
                    "id": c.id,
                    "body": c.body,
                    "user": if c.bot {
                        json!({"login": "github-actions[bot]", "type": "Bot"})
                    } else {
                        json!({"login": "a-reviewer", "type": "User"})
                    },
                })
            };
            let out = match (&seg[..], method.as_str()) {
                (["repos", o, r, "issues", n, "comments"], "GET") if format!("{o}/{r}") == REPO => {
                    let n: u64 = n.parse().unwrap();
                    let per_page: usize = query
                        .iter()
                        .find(|(k, _)| k == "per_page")
                        .map_or(30, |(_, v)| v.parse().unwrap());
                    let all: Vec<Value> = hub
                        .comments
                        .iter()
                        .filter(|c| c.issue == n)
                        .map(comment)
                        .collect();
                    let pages: Vec<Value> = if all.is_empty() {
                        vec![json!([])]
                    } else {
                        all.chunks(per_page)
                            .map(|c| Value::Array(c.to_vec()))
                            .collect()
                    };
                    // Without --paginate, the first page; with it, every page one after the
                    // other (arrays back to back, as gh prints them).
                    let shown = if has("paginate") {
                        &pages[..]
                    } else {
                        &pages[..1]
                    };
                    shown.iter().map(Value::to_string).collect::<String>()
                }
                (["repos", o, r, "issues", n, "comments"], "POST")
                    if format!("{o}/{r}") == REPO =>
                {
                    let Some(body) = fields.get("body").and_then(Value::as_str) else {
                        return fail("gh: body is missing (HTTP 422)".into());
                    };
                    let id = hub.id();
                    hub.comments.push(Comment {
                        id,
                        issue: n.parse().unwrap(),
                        body: body.to_string(),
                        bot: true,
                    });
                    comment(hub.comments.last().unwrap()).to_string()
                }
                (["repos", o, r, "issues", "comments", id], "PATCH")
                    if format!("{o}/{r}") == REPO =>
                {
                    let id: u64 = id.parse().unwrap();
                    let Some(body) = fields.get("body").and_then(Value::as_str) else {
                        return fail("gh: body is missing (HTTP 422)".into());
                    };
                    let Some(c) = hub.comments.iter_mut().find(|c| c.id == id) else {
                        return not_found;
                    };
                    c.body = body.to_string();
                    comment(c).to_string()
                }
                (["repos", o, r, "actions", "artifacts"], "GET") if format!("{o}/{r}") == REPO => {
                    let name = query
                        .iter()
                        .find(|(k, _)| k == "name")
                        .map(|(_, v)| v.clone());
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
                        .filter(|a| name.as_ref().is_none_or(|n| a["name"] == n.as_str()))
                        .collect();
                    json!({"total_count": artifacts.len(), "artifacts": artifacts}).to_string()
                }
                _ => return not_found,
            };
            match flag("q", "jq") {
                Some(filter) => jq(&filter, &out),
                None => (out, String::new(), 0),
            }
        }
        _ => {
            // run download
            if flag("R", "repo").as_deref() != Some(REPO) {
                return fail("gh: not the repository".into());
            }
            let [id] = &positional[..] else {
                return fail("gh run download: the stand-in needs a run id".into());
            };
            let id: u64 = id.parse().unwrap();
            let (Some(name), Some(dir)) = (flag("n", "name"), flag("D", "dir")) else {
                return fail("gh run download: the stand-in needs --name and --dir".into());
            };
            let Some(files) = hub
                .runs
                .iter()
                .find(|r| r.id == id)
                .and_then(|r| r.artifacts.get(&name))
            else {
                return fail("no valid artifacts found to download".into());
            };
            let dir = cwd.join(dir);
            std::fs::create_dir_all(&dir).unwrap();
            for (file, bytes) in files {
                std::fs::write(dir.join(file), bytes).unwrap();
            }
            (String::new(), String::new(), 0)
        }
    }
}

/// `--jq FILTER` as gh applies it (strings printed raw).
fn jq(filter: &str, input: &str) -> (String, String, i32) {
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

// ---------------------------------------------------------------------------------------
// The runners' tools: stand-ins first on PATH, then the built brickform.

struct Tools {
    dir: tempfile::TempDir,
    log: PathBuf,
}

impl Tools {
    fn new() -> Tools {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let log = dir.path().join("installs.log");
        let script = |name: &str, text: &str| {
            use std::os::unix::fs::PermissionsExt;
            let p = bin.join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        // gh hands its arguments (NUL-separated), its directory and its token to the fake.
        script(
            "gh",
            r#"#!/usr/bin/env bash
set -euo pipefail
answer=$(printf '%s\0' "$@" | curl -sS -H "X-Cwd: $PWD" -H "X-Token: ${GH_TOKEN:-${GITHUB_TOKEN:-}}" \
  --data-binary @- "$FAKE_SERVICES/gh")
jq -j .stdout <<< "$answer"
jq -j .stderr <<< "$answer" >&2
exit "$(jq -r .code <<< "$answer")"
"#,
        );
        for tool in ["pip", "apt-get"] {
            script(
                tool,
                &format!("#!/usr/bin/env bash\necho \"{tool} $*\" >> \"$FAKE_INSTALL_LOG\"\n"),
            );
        }
        std::os::unix::fs::symlink(common::bin(), bin.join("brickform")).unwrap();
        Tools { dir, log }
    }

    fn path(&self, extra: &[PathBuf]) -> String {
        let mut parts: Vec<String> = extra.iter().map(|p| p.display().to_string()).collect();
        parts.push(self.dir.path().join("bin").display().to_string());
        parts.push(std::env::var("PATH").unwrap_or_default());
        parts.join(":")
    }

    /// What the stand-ins were asked to install, one line each, since the last call.
    fn installs(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let _ = std::fs::remove_file(&self.log);
        text.lines().map(str::to_string).collect()
    }
}

/// Runs a bash script file, its output to files (no pipe to fill), for at most two minutes.
fn bash(
    args: &[&str],
    script: &Path,
    dir: &Path,
    env: &BTreeMap<String, String>,
    out: &Path,
) -> bool {
    let log = std::fs::File::create(out).unwrap();
    let mut child = std::process::Command::new("bash")
        .args(args)
        .arg(script)
        .current_dir(dir)
        .env_clear()
        .envs(env)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("bash");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.success();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{} ran for more than two minutes", script.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How a job went.
#[derive(Debug, Default)]
struct Outcome {
    ran: bool,
    ok: bool,
    /// The step that failed.
    failed: Option<String>,
    /// Every step's output.
    log: String,
    /// What the steps wrote to GITHUB_STEP_SUMMARY.
    summary: String,
}

// ---------------------------------------------------------------------------------------
// GitHub Actions expressions (`${{ … }}`, `if:`): contexts, literals, ==, !=, !, &&, ||.

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Path(String),
    Lit(Value),
    Op(&'static str),
    Open,
    Close,
}

fn tokens(expr: &str) -> Vec<Tok> {
    let c: Vec<char> = expr.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                assert!(i < c.len(), "unterminated string in {expr}");
                if c[i] == '\'' {
                    if c.get(i + 1) == Some(&'\'') {
                        s.push('\'');
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                s.push(c[i]);
                i += 1;
            }
            out.push(Tok::Lit(Value::String(s)));
        } else if ch == '(' {
            out.push(Tok::Open);
            i += 1;
        } else if ch == ')' {
            out.push(Tok::Close);
            i += 1;
        } else if let Some(op) = match (ch, c.get(i + 1)) {
            ('=', Some('=')) => Some("=="),
            ('!', Some('=')) => Some("!="),
            ('&', Some('&')) => Some("&&"),
            ('|', Some('|')) => Some("||"),
            _ => None,
        } {
            out.push(Tok::Op(op));
            i += 2;
        } else if ch == '!' {
            out.push(Tok::Op("!"));
            i += 1;
        } else if ch.is_ascii_digit() {
            let start = i;
            while i < c.len() && (c[i].is_ascii_digit() || c[i] == '.') {
                i += 1;
            }
            let n: f64 = c[start..i].iter().collect::<String>().parse().unwrap();
            out.push(Tok::Lit(json!(n)));
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || "_-.".contains(c[i])) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            assert!(
                c.get(i) != Some(&'('),
                "the test does not evaluate functions: {expr}"
            );
            out.push(match word.as_str() {
                "true" => Tok::Lit(json!(true)),
                "false" => Tok::Lit(json!(false)),
                "null" => Tok::Lit(Value::Null),
                _ => Tok::Path(word),
            });
        } else {
            panic!("the test does not evaluate {ch:?} in {expr}");
        }
    }
    out
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

fn number(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().unwrap(),
        Value::String(s) if s.trim().is_empty() => 0.0,
        Value::String(s) => s.trim().parse().unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// GitHub's loose equality: strings case-insensitively, other types as numbers.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.eq_ignore_ascii_case(y),
        (Value::Object(_) | Value::Array(_), _) | (_, Value::Object(_) | Value::Array(_)) => a == b,
        _ => number(a) == number(b),
    }
}

struct Parser<'a> {
    toks: Vec<Tok>,
    at: usize,
    ctx: &'a Value,
    /// GitLab's equality: exact, an undefined variable (null) equal to null only.
    exact: bool,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }
    fn or(&mut self) -> Value {
        let mut v = self.and();
        while self.peek() == Some(&Tok::Op("||")) {
            self.at += 1;
            let r = self.and();
            if !truthy(&v) {
                v = r;
            }
        }
        v
    }
    fn and(&mut self) -> Value {
        let mut v = self.cmp();
        while self.peek() == Some(&Tok::Op("&&")) {
            self.at += 1;
            let r = self.cmp();
            if truthy(&v) {
                v = r;
            }
        }
        v
    }
    fn cmp(&mut self) -> Value {
        let v = self.unary();
        match self.peek() {
            Some(Tok::Op(op @ ("==" | "!="))) => {
                let eq = *op == "==";
                self.at += 1;
                let r = self.unary();
                let same = if self.exact { v == r } else { equal(&v, &r) };
                json!(same == eq)
            }
            _ => v,
        }
    }
    fn unary(&mut self) -> Value {
        match self.peek().cloned() {
            Some(Tok::Op("!")) => {
                self.at += 1;
                json!(!truthy(&self.unary()))
            }
            Some(Tok::Open) => {
                self.at += 1;
                let v = self.or();
                assert_eq!(self.peek(), Some(&Tok::Close));
                self.at += 1;
                v
            }
            Some(Tok::Lit(v)) => {
                self.at += 1;
                v
            }
            Some(Tok::Path(p)) => {
                self.at += 1;
                let mut v = self.ctx;
                for part in p.split('.') {
                    v = v.get(part).unwrap_or(&Value::Null);
                }
                v.clone()
            }
            t => panic!("unexpected {t:?} in an expression"),
        }
    }
}

fn eval(expr: &str, ctx: &Value) -> Value {
    let mut p = Parser {
        toks: tokens(expr),
        at: 0,
        ctx,
        exact: false,
    };
    let v = p.or();
    assert_eq!(p.at, p.toks.len(), "trailing tokens in {expr}");
    v
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// A YAML value with its `${{ … }}` replaced, as text.
fn interpolate(v: &Value, ctx: &Value) -> String {
    let s = text(v);
    let mut out = String::new();
    let mut rest = s.as_str();
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("a closing }}") + start;
        out.push_str(&text(&eval(&rest[start + 3..end], ctx)));
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// An `if:`, with or without `${{ }}`.
fn condition(v: &Value, ctx: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::String(s) => {
            let s = s.trim();
            let inner = s
                .strip_prefix("${{")
                .and_then(|s| s.strip_suffix("}}"))
                .unwrap_or(s);
            truthy(&eval(inner, ctx))
        }
        other => panic!("if: {other}"),
    }
}

// ---------------------------------------------------------------------------------------
// A GitHub-hosted runner, as far as these workflows go.

/// A `pull_request` event.
struct Pr {
    number: u64,
    action: &'static str,
    head: String,
    merge_commit: Option<String>,
}

struct GitHub<'a> {
    fake: &'a Fake,
    tools: &'a Tools,
    repo: &'a Repo,
    host: String,
}

struct Job {
    /// The runner's directories, removed with the job.
    _root: tempfile::TempDir,
    workspace: PathBuf,
    temp: PathBuf,
    github: Value,
    base: BTreeMap<String, String>,
    path: Vec<PathBuf>,
    run_id: u64,
    steps_run: usize,
    log: String,
    summary: String,
}

/// The contexts of one list of steps: a job's, or a composite action's.
struct Scope {
    steps: Map<String, Value>,
    inputs: Value,
    action_path: Option<PathBuf>,
    env: BTreeMap<String, String>,
    composite: bool,
}

impl GitHub<'_> {
    /// Runs the workflow `wf` for `pr`: every job whose `if:` holds, as one workflow run.
    fn run(&self, wf: &Value, pr: &Pr) -> BTreeMap<String, Outcome> {
        let run_id = {
            let mut hub = self.fake.hub();
            let id = hub.id();
            hub.runs.push(Run {
                id,
                head_sha: pr.head.clone(),
                artifacts: BTreeMap::new(),
            });
            id
        };
        let merged = pr.merge_commit.is_some();
        let github = json!({
            "event_name": "pull_request",
            "event": {
                "action": pr.action,
                "number": pr.number,
                "pull_request": {
                    "number": pr.number,
                    "merged": merged,
                    "merge_commit_sha": pr.merge_commit,
                    "head": {"sha": pr.head},
                },
            },
            "repository": REPO,
            "repository_owner": "acme",
            "server_url": "https://github.com",
            "api_url": "https://api.github.com",
            "run_id": run_id,
            "token": GH_TOKEN,
            "sha": pr.merge_commit.clone().unwrap_or_else(|| pr.head.clone()),
            "ref": if merged { "refs/heads/main".to_string() } else { format!("refs/pull/{}/merge", pr.number) },
        });
        let mut out = BTreeMap::new();
        for (name, job) in wf["jobs"].as_object().unwrap() {
            let ctx = json!({"github": github, "vars": self.vars(), "inputs": {}});
            if let Some(c) = job.get("if")
                && !condition(c, &ctx)
            {
                out.insert(name.clone(), Outcome::default());
                continue;
            }
            out.insert(name.clone(), self.job(wf, name, job, &github, run_id));
        }
        out
    }

    fn vars(&self) -> Value {
        json!({"DATABRICKS_HOST": self.host})
    }

    fn secrets() -> Value {
        json!({
            "DATABRICKS_CLIENT_ID": "ci-service-principal",
            "DATABRICKS_CLIENT_SECRET": "ci-client-secret",
            "DB_PASSWORD": DB_PASSWORD,
            "GITHUB_TOKEN": GH_TOKEN,
        })
    }

    fn job(&self, wf: &Value, name: &str, job: &Value, github: &Value, run_id: u64) -> Outcome {
        let root = tempfile::tempdir().unwrap();
        let workspace = root.path().join("work/lakehouse/lakehouse");
        let temp = root.path().join("work/_temp");
        let home = root.path().join("home");
        for d in [&workspace, &temp, &home] {
            std::fs::create_dir_all(d).unwrap();
        }
        let event_path = temp.join("event.json");
        std::fs::write(&event_path, github["event"].to_string()).unwrap();
        let base: BTreeMap<String, String> = [
            ("CI", "true".to_string()),
            ("GITHUB_ACTIONS", "true".into()),
            ("GITHUB_WORKSPACE", workspace.display().to_string()),
            ("GITHUB_REPOSITORY", REPO.into()),
            ("GITHUB_REPOSITORY_OWNER", "acme".into()),
            ("GITHUB_EVENT_NAME", "pull_request".into()),
            ("GITHUB_EVENT_PATH", event_path.display().to_string()),
            ("GITHUB_RUN_ID", run_id.to_string()),
            ("GITHUB_RUN_ATTEMPT", "1".into()),
            ("GITHUB_JOB", name.into()),
            ("GITHUB_SERVER_URL", text(&github["server_url"])),
            ("GITHUB_API_URL", text(&github["api_url"])),
            ("GITHUB_SHA", text(&github["sha"])),
            ("GITHUB_REF", text(&github["ref"])),
            ("RUNNER_TEMP", temp.display().to_string()),
            ("RUNNER_OS", "Linux".into()),
            ("RUNNER_ARCH", "X64".into()),
            ("HOME", home.display().to_string()),
            ("FAKE_SERVICES", self.fake.url.clone()),
            ("FAKE_INSTALL_LOG", self.tools.log.display().to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let mut st = Job {
            workspace,
            temp,
            github: github.clone(),
            base,
            path: Vec::new(),
            run_id,
            steps_run: 0,
            log: String::new(),
            summary: String::new(),
            _root: root,
        };
        let mut scope = Scope {
            steps: Map::new(),
            inputs: json!({}),
            action_path: None,
            env: BTreeMap::new(),
            composite: false,
        };
        // The workflow's env, then the job's, each seeing what came before.
        for source in [&wf["env"], &job["env"]] {
            for (k, v) in source.as_object().into_iter().flatten() {
                let value = interpolate(v, &self.ctx(&st, &scope));
                scope.env.insert(k.clone(), value);
            }
        }
        let result = self.steps(&mut st, &job["steps"], &mut scope);
        Outcome {
            ran: true,
            ok: result.is_ok(),
            failed: result.err(),
            log: st.log,
            summary: st.summary,
        }
    }

    fn ctx(&self, st: &Job, scope: &Scope) -> Value {
        let mut github = st.github.clone();
        if let Some(p) = &scope.action_path {
            github["action_path"] = json!(p.display().to_string());
        }
        json!({
            "github": github,
            "vars": self.vars(),
            "secrets": Self::secrets(),
            "runner": {"temp": st.temp.display().to_string(), "os": "Linux", "arch": "X64"},
            "env": scope.env,
            "steps": scope.steps,
            "inputs": scope.inputs,
            "job": {},
            "matrix": {},
        })
    }

    fn steps(&self, st: &mut Job, steps: &Value, scope: &mut Scope) -> Result<(), String> {
        for step in steps.as_array().unwrap() {
            let name = step["name"]
                .as_str()
                .or(step["uses"].as_str())
                .or(step["run"].as_str())
                .unwrap()
                .to_string();
            let ctx = self.ctx(st, scope);
            if let Some(c) = step.get("if")
                && !condition(c, &ctx)
            {
                st.log.push_str(&format!("== {name} (skipped)\n"));
                continue;
            }
            let mut env = scope.env.clone();
            for (k, v) in step["env"].as_object().into_iter().flatten() {
                env.insert(k.clone(), interpolate(v, &ctx));
            }
            let outputs = if let Some(run) = step["run"].as_str() {
                assert!(
                    !run.contains("${{"),
                    "{name}: a run script takes values through env:, never ${{{{ }}}} (which a value could inject script into)"
                );
                let shell = step["shell"].as_str();
                assert!(
                    !scope.composite || shell.is_some(),
                    "{name}: a composite action's run step needs shell:"
                );
                let dir = match step["working-directory"].as_str() {
                    Some(d) => st.workspace.join(interpolate(&json!(d), &ctx)),
                    None => st.workspace.clone(),
                };
                self.bash_step(st, &name, run, shell, &env, &dir)?
            } else {
                let uses = step["uses"].as_str().unwrap();
                self.uses(st, &name, uses, step, &env, &ctx)?
            };
            if let Some(id) = step["id"].as_str() {
                scope.steps.insert(
                    id.to_string(),
                    json!({"outputs": outputs, "outcome": "success", "conclusion": "success"}),
                );
            }
        }
        Ok(())
    }

    fn bash_step(
        &self,
        st: &mut Job,
        name: &str,
        script: &str,
        shell: Option<&str>,
        env: &BTreeMap<String, String>,
        dir: &Path,
    ) -> Result<Map<String, Value>, String> {
        st.steps_run += 1;
        let n = st.steps_run;
        let files = st.temp.join("_runner_file_commands");
        std::fs::create_dir_all(&files).unwrap();
        let file = |what: &str| files.join(format!("{what}_{n}"));
        let (script_file, output, env_file, path_file, summary, log) = (
            st.temp.join(format!("step_{n}.sh")),
            file("set_output"),
            file("set_env"),
            file("add_path"),
            file("step_summary"),
            file("log"),
        );
        std::fs::write(&script_file, script).unwrap();
        for f in [&output, &env_file, &path_file, &summary] {
            std::fs::write(f, "").unwrap();
        }
        // As the runner starts `run:` scripts: `bash -e {0}` by default, and
        // `bash --noprofile --norc -eo pipefail {0}` for `shell: bash`.
        let args: &[&str] = match shell {
            None => &["-e"],
            Some("bash") => &["--noprofile", "--norc", "-eo", "pipefail"],
            Some(other) => panic!("{name}: the test runs bash, not {other}"),
        };
        let mut all = st.base.clone();
        all.extend(env.clone());
        all.insert("PATH".into(), self.tools.path(&st.path));
        all.insert("GITHUB_OUTPUT".into(), output.display().to_string());
        all.insert("GITHUB_ENV".into(), env_file.display().to_string());
        all.insert("GITHUB_PATH".into(), path_file.display().to_string());
        all.insert("GITHUB_STEP_SUMMARY".into(), summary.display().to_string());
        let ok = bash(args, &script_file, dir, &all, &log);
        st.log.push_str(&format!(
            "== {name}\n{}",
            std::fs::read_to_string(&log).unwrap()
        ));
        st.summary
            .push_str(&std::fs::read_to_string(&summary).unwrap());
        for (k, v) in key_values(&std::fs::read_to_string(&env_file).unwrap()) {
            st.base.insert(k, text(&v));
        }
        for p in std::fs::read_to_string(&path_file).unwrap().lines() {
            st.path.insert(0, PathBuf::from(p));
        }
        if !ok {
            return Err(name.to_string());
        }
        Ok(key_values(&std::fs::read_to_string(&output).unwrap()))
    }

    fn uses(
        &self,
        st: &mut Job,
        name: &str,
        uses: &str,
        step: &Value,
        env: &BTreeMap<String, String>,
        ctx: &Value,
    ) -> Result<Map<String, Value>, String> {
        let with = |k: &str| step["with"].get(k).map(|v| interpolate(v, ctx));
        let (action, _) = uses.split_once('@').expect("a pinned action");
        st.log.push_str(&format!("== {name}\n"));
        match action {
            "actions/checkout" => {
                let sha = with("ref").unwrap_or_else(|| text(&st.github["sha"]));
                self.repo.checkout(&sha, &st.workspace);
            }
            "actions/setup-python" => {
                assert!(with("python-version").is_some_and(|v| !v.is_empty()));
            }
            "actions/upload-artifact" => {
                let (name, path) = (with("name").unwrap(), with("path").unwrap());
                let path = st.workspace.join(path);
                if !path.is_file() {
                    assert_eq!(with("if-no-files-found").as_deref(), Some("error"));
                    st.log
                        .push_str(&format!("No files were found at {}\n", path.display()));
                    return Err(name);
                }
                let file = path.file_name().unwrap().to_string_lossy().into_owned();
                let bytes = std::fs::read(&path).unwrap();
                let mut hub = self.fake.hub();
                let run = hub.runs.iter_mut().find(|r| r.id == st.run_id).unwrap();
                run.artifacts.insert(name, vec![(file, bytes)]);
            }
            // brickform's own action, as ci-templates/github/brickform-action.yml names it.
            "OWNER/REPO" => return self.composite(st, step, env, ctx),
            other => panic!("{name}: the test does not play the action {other}"),
        }
        Ok(Map::new())
    }

    /// action.yml: its inputs (defaults evaluated where it is used, then `with:`), its steps
    /// in a scope of their own, then its outputs.
    fn composite(
        &self,
        st: &mut Job,
        step: &Value,
        env: &BTreeMap<String, String>,
        ctx: &Value,
    ) -> Result<Map<String, Value>, String> {
        let action = yaml("action.yml");
        assert_eq!(action["runs"]["using"], "composite");
        let declared = action["inputs"].as_object().unwrap();
        let with = step["with"].as_object().cloned().unwrap_or_default();
        for k in with.keys() {
            assert!(declared.contains_key(k), "action.yml has no input {k}");
        }
        let inputs: Map<String, Value> = declared
            .iter()
            .map(|(k, spec)| {
                let v = with.get(k).unwrap_or(&spec["default"]);
                (k.clone(), json!(interpolate(v, ctx)))
            })
            .collect();
        let mut env = env.clone();
        env.insert("GITHUB_ACTION_PATH".into(), root().display().to_string());
        let mut scope = Scope {
            steps: Map::new(),
            inputs: Value::Object(inputs),
            action_path: Some(root()),
            env,
            composite: true,
        };
        self.steps(st, &action["runs"]["steps"], &mut scope)?;
        let ctx = self.ctx(st, &scope);
        Ok(action["outputs"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, spec)| (k.clone(), json!(interpolate(&spec["value"], &ctx))))
            .collect())
    }
}

/// A GITHUB_OUTPUT (GITHUB_ENV) file: `key=value` lines and `key<<DELIMITER` blocks.
fn key_values(text: &str) -> Map<String, Value> {
    let mut out = Map::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((k, delim)) = line.split_once("<<") {
            let mut v = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                v.push(l);
            }
            out.insert(k.to_string(), json!(v.join("\n")));
        } else if let Some((k, v)) = line.split_once('=') {
            out.insert(k.to_string(), json!(v));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// A GitLab runner (shell executor with bash), as far as this pipeline goes.

/// A pipeline: of a merge request, or of a push to the default branch.
struct Pipeline {
    sha: String,
    mr: Option<u64>,
}

struct GitLab<'a> {
    fake: &'a Fake,
    tools: &'a Tools,
    repo: &'a Repo,
    host: String,
}

/// A `rules: if:` of GitLab: `$VAR`, "strings", ==, !=, &&, ||, parentheses.
fn gitlab_if(expr: &str, vars: &BTreeMap<String, String>) -> bool {
    // Rewritten to the GitHub grammar above: $VAR becomes a path into `vars`, "s" 's'.
    let mut rewritten = String::new();
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' => {
                let mut name = String::new();
                while let Some(&n) = chars.peek() {
                    if n.is_alphanumeric() || n == '_' {
                        name.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                rewritten.push_str(&format!("vars.{name}"));
            }
            '"' => {
                rewritten.push('\'');
                for n in chars.by_ref() {
                    if n == '"' {
                        break;
                    }
                    rewritten.push(n);
                }
                rewritten.push('\'');
            }
            c => rewritten.push(c),
        }
    }
    let ctx = json!({"vars": vars});
    let mut p = Parser {
        toks: tokens(&rewritten),
        at: 0,
        ctx: &ctx,
        exact: true,
    };
    let v = p.or();
    truthy(&v)
}

impl GitLab<'_> {
    fn run(&self, ci: &Value, p: &Pipeline) -> BTreeMap<String, Outcome> {
        let pipeline = {
            let mut hub = self.fake.hub();
            let id = hub.id();
            if let Some(iid) = p.mr {
                let mr = hub.mrs.iter_mut().find(|m| m.iid == iid).unwrap();
                mr.head_pipeline = Some(id);
            }
            id
        };
        let mut vars: BTreeMap<String, String> = [
            ("CI", "true".to_string()),
            ("GITLAB_CI", "true".into()),
            ("CI_SERVER_URL", "https://gitlab.example.com".into()),
            ("CI_API_V4_URL", format!("{}/api/v4", self.fake.url)),
            ("CI_PROJECT_ID", PROJECT_ID.to_string()),
            ("CI_PROJECT_PATH", REPO.into()),
            ("CI_PIPELINE_ID", pipeline.to_string()),
            (
                "CI_PIPELINE_URL",
                format!("https://gitlab.example.com/{REPO}/-/pipelines/{pipeline}"),
            ),
            ("CI_COMMIT_SHA", p.sha.clone()),
            ("CI_COMMIT_SHORT_SHA", p.sha[..8].to_string()),
            ("CI_DEFAULT_BRANCH", "main".into()),
            // Masked CI/CD variables of the project.
            ("DATABRICKS_HOST", self.host.clone()),
            ("DATABRICKS_CLIENT_ID", "ci-service-principal".into()),
            ("DATABRICKS_CLIENT_SECRET", "ci-client-secret".into()),
            ("BRICKFORM_VAR_db_password", DB_PASSWORD.into()),
            ("GITLAB_TOKEN", GITLAB_TOKEN.into()),
            ("FAKE_INSTALL_LOG", self.tools.log.display().to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        match p.mr {
            Some(iid) => {
                vars.insert("CI_PIPELINE_SOURCE".into(), "merge_request_event".into());
                vars.insert("CI_MERGE_REQUEST_IID".into(), iid.to_string());
                vars.insert("CI_COMMIT_REF_NAME".into(), format!("feature-{iid}"));
            }
            None => {
                vars.insert("CI_PIPELINE_SOURCE".into(), "push".into());
                vars.insert("CI_COMMIT_BRANCH".into(), "main".into());
                vars.insert("CI_COMMIT_REF_NAME".into(), "main".into());
            }
        }
        for (k, v) in ci["variables"].as_object().unwrap() {
            let v = text(v);
            assert!(!v.contains('$'), "the test does not expand {k}: {v}");
            vars.insert(k.clone(), v);
        }
        let mut out = BTreeMap::new();
        let mut failed = false;
        for stage in ci["stages"].as_array().unwrap() {
            for (name, job) in ci.as_object().unwrap() {
                if job.get("stage") != Some(stage) {
                    continue;
                }
                let runs = !failed
                    && job["rules"].as_array().unwrap().iter().any(|rule| {
                        let changes_match = rule["changes"].as_array().is_none_or(|globs| {
                            globs.iter().any(|g| {
                                let g = g.as_str().unwrap();
                                let prefix = g.strip_suffix("**/*").expect("a dir/**/* glob");
                                "infra/main.bf.hcl".starts_with(prefix)
                            })
                        });
                        gitlab_if(rule["if"].as_str().unwrap(), &vars) && changes_match
                    });
                if !runs {
                    out.insert(name.clone(), Outcome::default());
                    continue;
                }
                let outcome = self.job(ci, name, job, &vars, pipeline, p);
                failed |= !outcome.ok;
                out.insert(name.clone(), outcome);
            }
        }
        out
    }

    fn job(
        &self,
        ci: &Value,
        name: &str,
        job: &Value,
        vars: &BTreeMap<String, String>,
        pipeline: u64,
        p: &Pipeline,
    ) -> Outcome {
        let id = {
            let mut hub = self.fake.hub();
            let id = hub.id();
            hub.jobs.push(GlJob {
                id,
                pipeline,
                name: name.into(),
                status: "running".into(),
                artifacts: BTreeMap::new(),
            });
            id
        };
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("builds/acme/lakehouse");
        let home = root.path().join("home");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        self.repo.checkout(&p.sha, &project);
        let mut env = vars.clone();
        env.insert("CI_PROJECT_DIR".into(), project.display().to_string());
        env.insert("CI_JOB_ID".into(), id.to_string());
        env.insert("CI_JOB_NAME".into(), name.into());
        env.insert("HOME".into(), home.display().to_string());
        env.insert("PATH".into(), self.tools.path(&[]));
        // The runner's bash script: -eo pipefail, then before_script and script, one entry
        // after the other in the same shell.
        let entries = job
            .get("before_script")
            .unwrap_or(&ci["default"]["before_script"])
            .as_array()
            .into_iter()
            .flatten()
            .chain(job["script"].as_array().unwrap());
        let mut script = String::from("set -eo pipefail\nset +o noclobber\n");
        for e in entries {
            script.push_str(e.as_str().unwrap());
            script.push('\n');
        }
        let script_file = root.path().join("script.sh");
        std::fs::write(&script_file, &script).unwrap();
        let log_file = root.path().join("job.log");
        let ok = bash(&[], &script_file, &project, &env, &log_file);
        let log = std::fs::read_to_string(&log_file).unwrap();
        // Artifacts are kept from the job's directory; a path that matches nothing is only
        // a warning in the job log.
        let mut hub = self.fake.hub();
        let gl_job = hub.jobs.iter_mut().find(|j| j.id == id).unwrap();
        gl_job.status = if ok { "success" } else { "failed" }.into();
        for path in job["artifacts"]["paths"].as_array().into_iter().flatten() {
            let path = path.as_str().unwrap();
            if let Ok(bytes) = std::fs::read(project.join(path)) {
                gl_job.artifacts.insert(path.to_string(), bytes);
            }
        }
        Outcome {
            ran: true,
            ok,
            failed: (!ok).then(|| name.to_string()),
            log,
            summary: String::new(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The scenarios.

fn assert_ran(o: &Outcome, what: &str) {
    assert!(o.ran, "{what} did not run");
    assert!(
        o.ok,
        "{what} failed at {:?}:\n{}",
        o.failed.as_deref().unwrap_or_default(),
        o.log
    );
}

fn assert_refused(o: &Outcome, what: &str, message: &str) {
    assert!(o.ran, "{what} did not run");
    assert!(!o.ok, "{what} was not refused:\n{}", o.log);
    assert!(
        o.log.contains(message),
        "{what}: expected {message:?} in:\n{}",
        o.log
    );
}

/// The comments of a pull request, or notes of a merge request, that hold the plan.
fn plan_comments(hub: &Hub, number: u64, gitlab: bool) -> Vec<(u64, String)> {
    if gitlab {
        hub.notes
            .iter()
            .filter(|n| n.mr == number && n.body.starts_with(MARKER))
            .map(|n| (n.id, n.body.clone()))
            .collect()
    } else {
        hub.comments
            .iter()
            .filter(|c| c.issue == number && c.body.starts_with(MARKER))
            .map(|c| (c.id, c.body.clone()))
            .collect()
    }
}

fn ids(comments: &[(u64, String)]) -> Vec<u64> {
    comments.iter().map(|c| c.0).collect()
}

/// Checks a plan comment: the marker, the plan of `prod`, the commit, no secret.
fn check_comment(body: &str, sha: &str, comment: &str) {
    assert!(
        body.starts_with(&format!("{MARKER}\n### brickform plan for `prod`")),
        "{body}"
    );
    assert!(body.contains(&format!("Planned at {sha}")), "{body}");
    assert!(body.contains(&format!("\"{comment}\"")), "{body}");
    assert!(
        !body.contains(DB_PASSWORD),
        "the comment shows a secret:\n{body}"
    );
}

/// Both GitHub workflows (written out, and with the composite action) go through the same
/// story; `file` is the template.
fn github_story(file: &str) {
    let wf = yaml(file);
    let (_data, serve) = workspace();
    let fake = Fake::start();
    let tools = Tools::new();
    let mut repo = Repo::default();
    let one = repo.commit("one");
    let two = repo.commit("two");
    let gh = |repo: &Repo, pr: &Pr| {
        GitHub {
            fake: &fake,
            tools: &tools,
            repo,
            host: serve.url.clone(),
        }
        .run(&wf, pr)
    };
    {
        let mut hub = fake.hub();
        for i in 0..CHATTER {
            let id = hub.id();
            hub.comments.push(Comment {
                id,
                issue: 7,
                body: format!("Looks fine {i}"),
                bot: i % 2 == 0,
            });
        }
    }

    // The pull request is opened: the plan job plans, comments and keeps the plan.
    let before = managed(&serve);
    let pr = |action, head: &str, merge: Option<&str>| Pr {
        number: 7,
        action,
        head: head.to_string(),
        merge_commit: merge.map(str::to_string),
    };
    let jobs = gh(&repo, &pr("opened", &one, None));
    assert!(!jobs["apply"].ran, "apply runs only once merged");
    assert_ran(&jobs["plan"], "the plan job");
    assert_eq!(
        managed(&serve),
        before,
        "the plan job changed the workspace"
    );
    let installs = tools.installs();
    assert_eq!(
        installs,
        [format!(
            "pip install --disable-pip-version-check brickform=={}",
            version()
        )],
        "what the plan job installed"
    );
    assert!(
        jobs["plan"]
            .summary
            .contains("### brickform plan for `prod`"),
        "the plan is in the job summary:\n{}",
        jobs["plan"].summary
    );
    let comments = plan_comments(&fake.hub(), 7, false);
    assert_eq!(comments.len(), 1, "one plan comment: {:?}", ids(&comments));
    let (first_id, body) = comments[0].clone();
    check_comment(&body, &one[..7], "one");
    assert!(
        body.contains("Plan: 3 to add, 0 to change, 0 to destroy."),
        "{body}"
    );

    // A push to the pull request: the same comment now shows the new plan.
    let jobs = gh(&repo, &pr("synchronize", &two, None));
    assert_ran(&jobs["plan"], "the plan job after a push");
    let comments = plan_comments(&fake.hub(), 7, false);
    assert_eq!(
        comments.len(),
        1,
        "a push updates the plan comment instead of adding one: {:?}",
        ids(&comments)
    );
    assert_eq!(comments[0].0, first_id, "the same comment is updated");
    check_comment(&comments[0].1, &two[..7], "two");
    assert_eq!(
        fake.hub().comments.len(),
        CHATTER + 1,
        "no other comment was posted or removed"
    );

    // Merged: the apply job fetches the plan of the head commit's run and applies it.
    let merge = repo.commit("two");
    let jobs = gh(&repo, &pr("closed", &two, Some(&merge)));
    assert!(!jobs["plan"].ran, "no plan once closed");
    assert_ran(&jobs["apply"], "the apply job");
    assert!(
        jobs["apply"]
            .log
            .contains("Apply complete! Resources: 3 added, 0 changed, 0 destroyed."),
        "{}",
        jobs["apply"].log
    );
    let applied = managed(&serve);
    assert_eq!(applied["catalog"], "two", "{applied}");
    assert_eq!(applied["schemas"], json!(["sales.raw"]));

    // The apply job run again: the plan was applied once; it is stale now.
    let jobs = gh(&repo, &pr("closed", &two, Some(&merge)));
    assert_refused(
        &jobs["apply"],
        "applying the plan a second time",
        "Saved plan is stale: the given plan file can no longer be applied because the state was changed by another operation after the plan was created.",
    );
    assert_eq!(managed(&serve), applied);

    // Another pull request, merged after main moved on: the merge commit's configuration is
    // not the one planned, so its plan is refused.
    let three = repo.commit("three");
    let planned = gh(
        &repo,
        &Pr {
            number: 8,
            ..pr("opened", &three, None)
        },
    );
    assert_ran(&planned["plan"], "the second pull request's plan");
    let moved_on = repo.commit("four");
    let jobs = gh(
        &repo,
        &Pr {
            number: 8,
            ..pr("closed", &three, Some(&moved_on))
        },
    );
    assert_refused(
        &jobs["apply"],
        "applying a plan of another configuration",
        "Saved plan is stale: the configuration files changed after the plan was created.",
    );
    assert_eq!(managed(&serve), applied);

    // A pull request merged without a plan: nothing to apply.
    let five = repo.commit("five");
    let jobs = gh(
        &repo,
        &Pr {
            number: 9,
            ..pr("closed", &five, Some(&five))
        },
    );
    assert_refused(
        &jobs["apply"],
        "applying without a plan",
        "No saved plan of",
    );
    assert_eq!(managed(&serve), applied);
}

#[test]
fn github_workflow_plans_comments_applies_and_refuses_stale_plans() {
    github_story("ci-templates/github/brickform.yml");
}

#[test]
fn github_workflow_with_the_action_plans_comments_applies_and_refuses_stale_plans() {
    github_story("ci-templates/github/brickform-action.yml");
}

#[test]
fn gitlab_pipeline_plans_notes_applies_and_refuses_stale_plans() {
    let ci = yaml("ci-templates/gitlab/.gitlab-ci.yml");
    let (_data, serve) = workspace();
    let fake = Fake::start();
    let tools = Tools::new();
    let mut repo = Repo::default();
    let one = repo.commit("one");
    let two = repo.commit("two");
    let gl = |repo: &Repo, p: &Pipeline| {
        GitLab {
            fake: &fake,
            tools: &tools,
            repo,
            host: serve.url.clone(),
        }
        .run(&ci, p)
    };
    {
        let mut hub = fake.hub();
        for iid in [5, 6] {
            hub.mrs.push(Mr {
                iid,
                state: "opened".into(),
                merge_commit_sha: None,
                head_pipeline: None,
            });
        }
        for i in 0..CHATTER {
            let id = hub.id();
            hub.notes.push(Note {
                id,
                mr: 5,
                body: format!("Looks fine {i}"),
            });
        }
    }
    let merged = |fake: &Fake, iid: u64, sha: &str| {
        let mut hub = fake.hub();
        let mr = hub.mrs.iter_mut().find(|m| m.iid == iid).unwrap();
        mr.state = "merged".into();
        mr.merge_commit_sha = Some(sha.to_string());
    };

    // The merge request's pipeline: plan, note, artifacts.
    let before = managed(&serve);
    let jobs = gl(
        &repo,
        &Pipeline {
            sha: one.clone(),
            mr: Some(5),
        },
    );
    assert!(!jobs["apply"].ran, "apply runs only on the default branch");
    assert_ran(&jobs["plan"], "the plan job");
    assert_eq!(
        managed(&serve),
        before,
        "the plan job changed the workspace"
    );
    assert_eq!(
        tools.installs(),
        [
            "apt-get update -qq".to_string(),
            "apt-get install -y -qq --no-install-recommends curl jq".to_string(),
            format!(
                "pip install --disable-pip-version-check brickform=={}",
                version()
            ),
        ],
        "what the plan job installed"
    );
    let notes = plan_comments(&fake.hub(), 5, true);
    assert_eq!(notes.len(), 1, "one plan note: {:?}", ids(&notes));
    let (first_id, body) = notes[0].clone();
    check_comment(&body, &one[..8], "one");

    // A push: the same note, updated.
    let jobs = gl(
        &repo,
        &Pipeline {
            sha: two.clone(),
            mr: Some(5),
        },
    );
    assert_ran(&jobs["plan"], "the plan job after a push");
    let notes = plan_comments(&fake.hub(), 5, true);
    assert_eq!(
        notes.len(),
        1,
        "a push updates the note instead of adding one: {:?}",
        ids(&notes)
    );
    assert_eq!(notes[0].0, first_id, "the same note is updated");
    check_comment(&notes[0].1, &two[..8], "two");
    assert_eq!(fake.hub().notes.len(), CHATTER + 1);

    // Merged: the push pipeline on main applies the plan job's artifact.
    let merge = repo.commit("two");
    merged(&fake, 5, &merge);
    let jobs = gl(
        &repo,
        &Pipeline {
            sha: merge.clone(),
            mr: None,
        },
    );
    assert!(!jobs["plan"].ran, "no plan on the default branch");
    assert_ran(&jobs["apply"], "the apply job");
    assert!(
        jobs["apply"]
            .log
            .contains("Apply complete! Resources: 3 added, 0 changed, 0 destroyed."),
        "{}",
        jobs["apply"].log
    );
    let applied = managed(&serve);
    assert_eq!(applied["catalog"], "two", "{applied}");

    // The pipeline run again: the plan is stale.
    let jobs = gl(
        &repo,
        &Pipeline {
            sha: merge.clone(),
            mr: None,
        },
    );
    assert_refused(
        &jobs["apply"],
        "applying the plan a second time",
        "Saved plan is stale: the given plan file can no longer be applied because the state was changed by another operation after the plan was created.",
    );
    assert_eq!(managed(&serve), applied);

    // Another merge request, merged with a configuration other than the one planned.
    let three = repo.commit("three");
    assert_ran(
        &gl(
            &repo,
            &Pipeline {
                sha: three,
                mr: Some(6),
            },
        )["plan"],
        "the second merge request's plan",
    );
    let moved_on = repo.commit("four");
    merged(&fake, 6, &moved_on);
    let jobs = gl(
        &repo,
        &Pipeline {
            sha: moved_on,
            mr: None,
        },
    );
    assert_refused(
        &jobs["apply"],
        "applying a plan of another configuration",
        "Saved plan is stale: the configuration files changed after the plan was created.",
    );
    assert_eq!(managed(&serve), applied);

    // A push to main with no merge request: nothing to apply.
    let five = repo.commit("five");
    let jobs = gl(
        &repo,
        &Pipeline {
            sha: five,
            mr: None,
        },
    );
    assert_refused(
        &jobs["apply"],
        "applying without a plan",
        "No merged merge request for",
    );
    assert_eq!(managed(&serve), applied);
}

/// The step that posts the comment is the same in the written-out workflow and the action,
/// and both install the documented release with pip.
#[test]
fn templates_share_the_comment_step_and_install_the_release() {
    let wf = yaml("ci-templates/github/brickform.yml");
    let action = yaml("action.yml");
    let step = |steps: &Value, name: &str| {
        steps
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no step {name}"))
            .clone()
    };
    let in_workflow = step(&wf["jobs"]["plan"]["steps"], "Comment on the pull request");
    let in_action = step(&action["runs"]["steps"], "Comment on the pull request");
    assert_eq!(
        in_workflow["run"], in_action["run"],
        "the two comment steps differ"
    );
    let names = |s: &Value| {
        s["env"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&in_workflow), names(&in_action));

    let v = version();
    assert_eq!(wf["env"]["BRICKFORM_VERSION"], v.as_str());
    let gitlab = yaml("ci-templates/gitlab/.gitlab-ci.yml");
    assert_eq!(gitlab["variables"]["BRICKFORM_VERSION"], v.as_str());
    let with_action = yaml("ci-templates/github/brickform-action.yml");
    for job in ["plan", "apply"] {
        let uses: Vec<&Value> = with_action["jobs"][job]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["uses"] == "OWNER/REPO@REF")
            .collect();
        assert_eq!(uses.len(), 1, "{job} uses the action once");
        assert_eq!(uses[0]["with"]["version"], v.as_str());
    }
    // `pip install brickform` is how the README installs it.
    assert!(read("README.md").contains("pip install brickform"));
}

/// docs/review-plans-in-ci.md lists the action's inputs and outputs as action.yml declares
/// them.
#[test]
fn guide_lists_the_action_inputs_and_outputs() {
    let action = yaml("action.yml");
    let guide = read("docs/review-plans-in-ci.md");
    for (kind, heading) in [("inputs", "| input |"), ("outputs", "| output |")] {
        let table = &guide[guide
            .find(heading)
            .unwrap_or_else(|| panic!("the guide has no table of the action's {kind}"))..];
        let table = &table[..table.find("\n\n").unwrap_or(table.len())];
        let listed: Vec<String> = table
            .lines()
            .skip(2)
            .map(|row| {
                row.trim_start_matches("| `")
                    .split('`')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect();
        let declared: Vec<String> = action[kind].as_object().unwrap().keys().cloned().collect();
        assert_eq!(listed, declared, "the guide's table of the action's {kind}");
    }
}

// ---------------------------------------------------------------------------------------
// Errors about a plan file name it as resolved (the GitLab template once wrote
// infra/prod.bfplan with `-C infra plan --out prod.bfplan` and looked for ./prod.bfplan).

#[test]
fn plan_file_errors_name_the_resolved_path() {
    let top = tempfile::tempdir().unwrap();
    let top_path = top.path().canonicalize().unwrap();
    let infra = top_path.join("infra");
    std::fs::create_dir(&infra).unwrap();
    std::fs::write(
        infra.join("main.bf.hcl"),
        "resource \"databricks_catalog\" \"c\" {\n  name = \"demo\"\n}\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = assert_cmd::Command::new(common::bin())
            .current_dir(&top_path)
            .env("NO_COLOR", "1")
            .env_remove("BRICKFORM_ENV")
            .args(args)
            .output()
            .unwrap();
        let (o, e) = common::texts(&out);
        (out.status.code().unwrap_or(-1), o, e)
    };
    let as_given = |file: &str| {
        format!(
            "{} ({file}, relative to the configuration directory infra given with -C)",
            infra.join(file).display()
        )
    };

    // Saved with -C infra: in infra/, where a relative path is read from.
    let (code, _, err) = run(&["-C", "infra", "plan", "--local", "--out", "prod.bfplan"]);
    assert_eq!(code, 0, "{err}");
    assert!(infra.join("prod.bfplan").is_file());
    std::fs::rename(infra.join("prod.bfplan"), top_path.join("prod.bfplan")).unwrap();

    // Missing: looked for in infra/, which the error says.
    let (code, _, err) = run(&["-C", "infra", "apply", "--local", "prod.bfplan"]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!(
            "Error: no plan file exists at {}",
            as_given("prod.bfplan")
        )),
        "{err}"
    );
    // Also without -C: the path resolved from where the command runs.
    let (code, _, err) = run(&["apply", "--local", "missing.bfplan"]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!(
            "no plan file exists at {}",
            top_path.join("missing.bfplan").display()
        )),
        "{err}"
    );
    // Not a file, not a plan, another format.
    std::fs::create_dir(infra.join("dir.bfplan")).unwrap();
    let (_, _, err) = run(&["-C", "infra", "apply", "--local", "dir.bfplan"]);
    assert!(
        err.contains(&format!(
            "cannot read the plan file {}: it is a directory",
            as_given("dir.bfplan")
        )),
        "{err}"
    );
    std::fs::write(infra.join("junk.bfplan"), "junk").unwrap();
    let (_, _, err) = run(&["-C", "infra", "show", "junk.bfplan"]);
    assert!(
        err.contains(&format!(
            "{} is not a brickform plan file",
            as_given("junk.bfplan")
        )),
        "{err}"
    );
    std::fs::write(
        infra.join("newer.bfplan"),
        r#"{"format": "brickform-plan", "format_version": 99}"#,
    )
    .unwrap();
    let (_, _, err) = run(&["-C", "infra", "apply", "--local", "newer.bfplan"]);
    assert!(
        err.contains(&format!(
            "Saved plan cannot be read by this brickform: {} is in plan file format version 99",
            as_given("newer.bfplan")
        )),
        "{err}"
    );
    // Unreadable (when the test's user cannot read a file without permission: not root).
    let locked = infra.join("locked.bfplan");
    std::fs::copy(top_path.join("prod.bfplan"), &locked).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&locked).is_err() {
        let (_, _, err) = run(&["-C", "infra", "apply", "--local", "locked.bfplan"]);
        assert!(
            err.contains(&format!(
                "cannot read the plan file {}",
                as_given("locked.bfplan")
            )) && err.contains("ermission denied"),
            "{err}"
        );
    }
    // Not writable: a directory that does not exist.
    let (code, _, err) = run(&[
        "-C",
        "infra",
        "plan",
        "--local",
        "--out",
        "nowhere/p.bfplan",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!(
            "cannot write the plan file {}",
            as_given("nowhere/p.bfplan")
        )),
        "{err}"
    );
    // Refused plans name the file they refuse: another environment, a stale plan.
    let (_, _, err) = run(&[
        "-C",
        "infra",
        "apply",
        "--local",
        "--env",
        "dev",
        "../prod.bfplan",
    ]);
    assert!(
        err.contains("the plan was made for environment \"default\", not \"dev\"")
            && err.contains(&format!("\n  Plan file: {}", as_given("../prod.bfplan"))),
        "{err}"
    );
    std::fs::write(
        infra.join("main.bf.hcl"),
        "resource \"databricks_catalog\" \"c\" {\n  name = \"demo2\"\n}\n",
    )
    .unwrap();
    let abs = top_path.join("prod.bfplan");
    let (code, _, err) = run(&["-C", "infra", "apply", "--local", abs.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("Saved plan is stale: the configuration files changed")
            && err.contains(&format!("\n  Plan file: {}\n", abs.display())),
        "{err}"
    );
}
