//! Helpers shared by the end-to-end tests: the `brickform` binary and scratch configurations.
#![allow(dead_code)] // the CI templates' test binary uses a subset

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The `brickform` binary of this workspace, built once per test process.
///
/// `cargo test -p brickform-tests` does not build other packages' binaries, so the first call
/// runs `cargo build -p brickform` (a no-op when it is up to date) in the same target
/// directory, then finds the binary next to this test executable. `BRICKFORM_BIN` overrides.
pub fn bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("BRICKFORM_BIN") {
            return PathBuf::from(p);
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let built = std::process::Command::new(cargo)
            .args(["build", "--quiet", "-p", "brickform", "--bin", "brickform"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .is_ok_and(|s| s.success());
        let bin = assert_cmd::cargo::cargo_bin("brickform");
        // A workspace member that does not compile right now must not hide a binary that
        // `cargo build --workspace` (the CI's first step) made; say so, and use it.
        if !built {
            eprintln!(
                "warning: `cargo build -p brickform` failed; testing the existing {}",
                bin.display()
            );
        }
        bin
    })
}

/// A command running the binary in `dir` (as `-C dir`), with no inherited `BRICKFORM_*`
/// variables and no colours, so results do not depend on the caller's environment.
pub fn brickform(dir: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(bin());
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("BRICKFORM_") {
            cmd.env_remove(&k);
        }
    }
    cmd.env("NO_COLOR", "1").arg("-C").arg(dir);
    cmd
}

/// A fresh configuration directory holding `files` (`name`, `text`).
pub fn config(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("writing a config file");
    }
    dir
}

/// Standard output and error of a finished command, as text.
pub fn texts(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the binary in `dir` with `args` and extra environment variables; returns the exit
/// code, stdout and stderr.
pub fn run(dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = brickform(dir);
    cmd.args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running brickform");
    let (o, e) = texts(&out);
    (out.status.code().unwrap_or(-1), o, e)
}

/// Like [`run`], but the command must succeed (exit 0).
pub fn run_ok(dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> String {
    let (code, o, e) = run(dir, args, envs);
    assert_eq!(
        code, 0,
        "brickform {args:?} failed\nstdout:\n{o}\nstderr:\n{e}"
    );
    o
}

/// `brickform local serve --port 0 --data DIR` as a child process, killed when dropped.
pub struct Serve {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`
    pub url: String,
    /// The bearer token API calls send (`--token` when given, else any).
    pub token: String,
}

impl Serve {
    /// Starts the server on `data` and waits for its `Listening on` line.
    pub fn start(data: &Path, extra: &[&str]) -> Serve {
        let mut command = std::process::Command::new(bin());
        command
            .args(["local", "serve", "--port", "0", "--data"])
            .arg(data);
        Serve::launch(command, extra)
    }

    /// `brickform -C DIR local serve --local`: the workspace that `--local` commands in DIR use.
    pub fn start_local(dir: &Path) -> Serve {
        let mut command = std::process::Command::new(bin());
        command
            .arg("-C")
            .arg(dir)
            .args(["local", "serve", "--local", "--port", "0"]);
        Serve::launch(command, &[])
    }

    fn launch(mut command: std::process::Command, extra: &[&str]) -> Serve {
        use std::io::BufRead;
        let mut child = command
            .args(extra)
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("starting brickform local serve");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("reading the Listening line");
        let token = extra
            .iter()
            .position(|a| *a == "--token")
            .and_then(|i| extra.get(i + 1))
            .unwrap_or(&"e2e-test")
            .to_string();
        let mut guard = Serve {
            child,
            url: String::new(),
            token,
        };
        guard.url = line
            .trim()
            .strip_prefix("Listening on ")
            .unwrap_or_else(|| panic!("unexpected first line of local serve: {line:?}"))
            .to_string();
        guard
    }

    /// A control or API call: `(status, parsed JSON or the text as a JSON string)`.
    pub fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        let bytes = body.map(|b| b.to_string().into_bytes());
        let (status, text) = http_auth(
            method,
            &format!("{}{path}", self.url),
            bytes.as_deref(),
            "application/json",
            &self.token,
        );
        let v = serde_json::from_slice(&text).unwrap_or_else(|_| {
            serde_json::Value::String(String::from_utf8_lossy(&text).into_owned())
        });
        (status, v)
    }

    /// A call that must answer 200.
    pub fn ok(
        &self,
        method: &str,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> serde_json::Value {
        let (s, v) = self.call(method, path, body);
        assert_eq!(s, 200, "{method} {path}: {v}");
        v
    }

    /// An account group, made through SCIM as an account's identity sync would.
    #[allow(dead_code)]
    pub fn group(&self, name: &str) {
        self.ok(
            "POST",
            "/api/2.0/preview/scim/v2/Groups",
            Some(serde_json::json!({ "displayName": name })),
        );
    }

    /// A service principal, made through SCIM.
    #[allow(dead_code)]
    pub fn service_principal(&self, application_id: &str) {
        self.ok(
            "POST",
            "/api/2.0/preview/scim/v2/ServicePrincipals",
            Some(serde_json::json!({ "applicationId": application_id, "displayName": "ci" })),
        );
    }

    /// The whole workspace (`GET /__emulator/state`).
    pub fn dump(&self) -> serde_json::Value {
        self.ok("GET", "/__emulator/state", None)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A minimal HTTP/1.1 client for loopback calls (no extra dependency): sends one request
/// with a bearer token and `Connection: close`, returns the status and the body.
pub fn http(method: &str, url: &str, body: Option<&[u8]>, content_type: &str) -> (u16, Vec<u8>) {
    http_auth(method, url, body, content_type, "e2e-test")
}

/// [`http`] with a given bearer token.
pub fn http_auth(
    method: &str,
    url: &str,
    body: Option<&[u8]>,
    content_type: &str,
    token: &str,
) -> (u16, Vec<u8>) {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let mut s = std::net::TcpStream::connect(host).expect("connecting to the local workspace");
    let body = body.unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("writing the request");
    s.write_all(body).expect("writing the body");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("reading the response");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a complete response head");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut payload = raw[split + 4..].to_vec();
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status code");
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        let mut out = Vec::new();
        let mut rest = payload.as_slice();
        while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
            let size = usize::from_str_radix(
                String::from_utf8_lossy(&rest[..eol])
                    .split(';')
                    .next()
                    .unwrap_or("0")
                    .trim(),
                16,
            )
            .unwrap_or(0);
            if size == 0 {
                break;
            }
            out.extend_from_slice(&rest[eol + 2..eol + 2 + size]);
            rest = &rest[eol + 2 + size + 2..];
        }
        payload = out;
    }
    (status, payload)
}

/// `examples/NAME` of the repository.
pub fn example_dir(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
}

/// A copy of `examples/NAME` without any `.brickform` directory it may have from manual runs.
pub fn example_copy(name: &str) -> tempfile::TempDir {
    tree_copy(&example_dir(name))
}

/// A copy of the directory `from` in a new temporary directory, without any `.brickform`
/// directory in it.
pub fn tree_copy(from: &Path) -> tempfile::TempDir {
    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let name = e.file_name();
            if name == ".brickform" {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                copy_dir(&e.path(), &to.join(&name));
            } else {
                std::fs::copy(e.path(), to.join(&name)).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    copy_dir(from, dir.path());
    dir
}

/// The local workspace kept under `dir/.brickform/local`, read from disk (the same format
/// as `GET /__emulator/state`).
pub fn local_dump(dir: &Path) -> serde_json::Value {
    workspace_dump(&dir.join(".brickform/local"))
}

/// A workspace directory read from disk (its snapshot with the journal replayed), without
/// the bookkeeping of which journal record the snapshot has reached.
pub fn workspace_dump(dir: &Path) -> serde_json::Value {
    let mut v = brickform_emulator::read_workspace(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .unwrap_or_else(|| panic!("no workspace in {}", dir.display()));
    if let Some(m) = v.as_object_mut() {
        m.remove("journal_seq");
    }
    v
}

/// The text of a volume file in a workspace dump.
pub fn file_text(dump: &serde_json::Value, path: &str) -> String {
    use base64::Engine as _;
    let b64 = dump["files"][path]["content"]
        .as_str()
        .unwrap_or_else(|| panic!("no file {path} in the workspace"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("file content is base64");
    String::from_utf8(bytes).expect("file content is UTF-8")
}

/// What a new local workspace starts with that `objects` would otherwise list (the
/// `new_workspace_main` behaviour): the catalog `main` and its `default` schema. The one
/// place tests learn it, so that a test comparing what a configuration made need not.
pub fn built_ins() -> Vec<String> {
    let main = brickform_emulator::NEW_WORKSPACE_CATALOG;
    vec![format!("catalog:{main}"), format!("schema:{main}.default")]
}

/// Everything a configuration could have made in a workspace dump, as `kind:identity`
/// strings: catalogs, schemas (but the service-made `information_schema`), volumes,
/// registered models, connections, workspace notebooks and files (directories are not objects brickform
/// manages), volume files, secret scopes and secrets; not what a new workspace starts with
/// ([`built_ins`]), so a workspace nothing was made in has none.
pub fn objects(dump: &serde_json::Value) -> Vec<String> {
    let mut out = all_objects(dump);
    let built_ins = built_ins();
    out.retain(|o| !built_ins.contains(o));
    out
}

/// [`objects`] with what a new workspace starts with.
pub fn all_objects(dump: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    let keys = |k: &str| -> Vec<String> {
        dump[k]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    for c in keys("catalogs") {
        out.push(format!("catalog:{c}"));
    }
    for s in keys("schemas") {
        if !s.ends_with(".information_schema") {
            out.push(format!("schema:{s}"));
        }
    }
    // A gateway's staging volume is the service's, like information_schema (it goes with
    // its schema, which is counted).
    for v in keys("volumes") {
        if !v.contains(".__databricks_ingestion_gateway_staging_data") {
            out.push(format!("volume:{v}"));
        }
    }
    for m in keys("models") {
        out.push(format!("model:{m}"));
    }
    for c in keys("connections") {
        out.push(format!("connection:{c}"));
    }
    for c in keys("storage_credentials") {
        out.push(format!("storage_credential:{c}"));
    }
    for l in keys("external_locations") {
        out.push(format!("external_location:{l}"));
    }
    if let Some(ws) = dump["workspace"].as_object() {
        for (p, o) in ws {
            if o["object_type"] != "DIRECTORY" {
                out.push(format!("workspace:{p}"));
            }
        }
    }
    if let Some(files) = dump["files"].as_object() {
        for (p, o) in files {
            if o["kind"] != "directory" {
                out.push(format!("file:{p}"));
            }
        }
    }
    if let Some(scopes) = dump["secret_scopes"].as_object() {
        for (name, s) in scopes {
            out.push(format!("scope:{name}"));
            if let Some(secrets) = s["secrets"].as_object() {
                for k in secrets.keys() {
                    out.push(format!("secret:{name}|{k}"));
                }
            }
        }
    }
    out.sort();
    out
}

/// A small deterministic generator (xorshift64*) for seeded randomness in tests.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number in `lo..hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo).max(1)
    }
}

/// A configuration with one of every Databricks kind (and a data source), named with
/// `prefix`, talking to the workspace at `var.host` with the token from `DATABRICKS_TOKEN`.
/// The connection password and the secret value come from sensitive variables.
pub fn every_kind(prefix: &str) -> String {
    format!(
        r#"variable "host" {{
  type = string
}}

variable "db_password" {{
  type      = string
  sensitive = true
  default   = "pw-{prefix}-default"
}}

variable "api_key" {{
  type      = string
  sensitive = true
  default   = "key-{prefix}-default"
}}

provider "databricks" {{
  host = var.host
}}

resource "databricks_catalog" "c" {{
  name    = "{prefix}_cat"
  comment = "one"
}}

resource "databricks_schema" "s" {{
  catalog_name = databricks_catalog.c.name
  name         = "raw"
  comment      = "one"
}}

resource "databricks_volume" "v" {{
  catalog_name = databricks_schema.s.catalog_name
  schema_name  = databricks_schema.s.name
  name         = "landing"
  volume_type  = "MANAGED"
}}

resource "databricks_file" "f" {{
  path           = "${{databricks_volume.v.volume_path}}/in/data.csv"
  content_base64 = base64encode("id,name\n1,a\n")
}}

resource "databricks_connection" "pg" {{
  name            = "{prefix}_pg"
  connection_type = "POSTGRESQL"
  options = {{
    host     = "db.example.com"
    port     = "5432"
    user     = "app"
    password = var.db_password
  }}
}}

data "databricks_current_user" "me" {{}}

resource "databricks_notebook" "nb" {{
  path           = "${{data.databricks_current_user.me.home}}/{prefix}/etl.py"
  content_base64 = base64encode("print('etl')\n")
}}

resource "databricks_workspace_file" "wf" {{
  path           = "/Shared/{prefix}/conf.json"
  content_base64 = base64encode("{{}}")
}}

resource "databricks_secret_scope" "sc" {{
  name = "{prefix}-scope"
}}

resource "databricks_secret" "k" {{
  scope        = databricks_secret_scope.sc.name
  key          = "api-key"
  string_value = var.api_key
}}

output "volume_path" {{
  value = databricks_volume.v.volume_path
}}
"#
    )
}

/// What [`every_kind`] makes, as [`objects`] lists it.
pub fn every_kind_objects(prefix: &str) -> Vec<String> {
    let mut v = vec![
        format!("catalog:{prefix}_cat"),
        format!("schema:{prefix}_cat.raw"),
        format!("volume:{prefix}_cat.raw.landing"),
        format!("file:/Volumes/{prefix}_cat/raw/landing/in/data.csv"),
        format!("connection:{prefix}_pg"),
        format!("workspace:/Users/local-user@brickform.local/{prefix}/etl"),
        format!("workspace:/Shared/{prefix}/conf.json"),
        format!("scope:{prefix}-scope"),
        format!("secret:{prefix}-scope|api-key"),
    ];
    v.sort();
    v
}

/// Runs the binary in `dir` against a served workspace: `--var host=URL` and a token, for
/// configurations whose provider block reads `var.host`.
#[allow(dead_code)] // not every test file drives a served workspace
pub fn served(dir: &Path, serve: &Serve, args: &[&str]) -> (i32, String, String) {
    let host = format!("host={}", serve.url);
    let mut a: Vec<&str> = args.to_vec();
    // `state` commands read no configuration, so they take no variables.
    if args.first() != Some(&"state") {
        a.extend(["--var", &host]);
    }
    run(dir, &a, &[("DATABRICKS_TOKEN", "e2e-token")])
}

/// Like [`served`], but the command must succeed (exit 0).
#[allow(dead_code)]
pub fn served_ok(dir: &Path, serve: &Serve, args: &[&str]) -> String {
    let (code, out, err) = served(dir, serve, args);
    assert_eq!(code, 0, "brickform {args:?}\n{out}\n{err}");
    out
}

/// The provider block of configurations run with [`served`]: the host comes from `var.host`.
#[allow(dead_code)]
pub const SERVED_PROVIDER: &str = r#"
variable "host" {}
provider "databricks" { host = var.host }
"#;

/// Fails unless a plan against the served workspace is empty (exit 0 of
/// `--detailed-exitcode`).
#[allow(dead_code)]
pub fn served_plan_is_empty(dir: &Path, serve: &Serve) {
    let (code, out, err) = served(dir, serve, &["plan", "--detailed-exitcode"]);
    assert_eq!(code, 0, "the plan after apply is not empty:\n{out}{err}");
}

/// Every kind, and a pipeline and a job (found by their ownership tag, not by a name).
pub fn every_kind_and_runnables(prefix: &str) -> String {
    format!(
        r#"{}
resource "databricks_pipeline" "p" {{
  name       = "{prefix}_refine"
  catalog    = databricks_catalog.c.name
  schema     = databricks_schema.s.name
  serverless = true
  library {{
    notebook {{
      path = databricks_notebook.nb.path
    }}
  }}
}}

resource "databricks_job" "nightly" {{
  name = "{prefix}_nightly"
  task {{
    task_key = "refine"
    pipeline_task {{
      pipeline_id = databricks_pipeline.p.id
    }}
  }}
}}
"#,
        every_kind(prefix)
    )
}

/// The documented schema of plan JSON, docs/plan-json.schema.json.
#[allow(dead_code)]
pub fn schema() -> jsonschema::Validator {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/plan-json.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// Parses `text` as plan JSON and checks it against the documented schema.
#[allow(dead_code)]
pub fn valid_plan_json(v: &jsonschema::Validator, what: &str, text: &str) -> serde_json::Value {
    let doc: serde_json::Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: not JSON: {e}\n{text}"));
    let errors: Vec<String> = v
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match docs/plan-json.schema.json:\n{}",
        errors.join("\n")
    );
    doc
}

/// What an sdp-meta flow needs around it: a catalog with the `raw`, `bronze`, `silver` and
/// `specs` schemas (`databricks_schema.layer[...]`) and a managed volume `conf` in `specs` for
/// the onboarding files.
pub fn sdp_meta_layers(catalog: &str, volume: &str) -> String {
    format!(
        r#"
resource "databricks_catalog" "main" {{
  name          = "{catalog}"
  force_destroy = true
}}

resource "databricks_schema" "layer" {{
  for_each      = toset(["raw", "bronze", "silver", "specs"])
  catalog_name  = databricks_catalog.main.name
  name          = each.key
  force_destroy = true
}}

resource "databricks_volume" "conf" {{
  catalog_name = databricks_catalog.main.name
  schema_name  = databricks_schema.layer["specs"].name
  name         = "{volume}"
  volume_type  = "MANAGED"
}}
"#
    )
}
