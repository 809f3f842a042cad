//! `brickform console` end to end: expressions piped through standard input against a
//! configuration (variables, a sensitive one, locals, a module) and what `apply` left in
//! state on the local workspace; errors that do not stop the lines after them; and a state
//! that is only read, with no lock taken and no request sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{brickform, config, run_ok, texts};
use std::path::Path;

/// The sensitive variable's value: it must never be printed.
const TOKEN: &str = "tok-3f9a-console-secret";

/// The provider's host comes from `var.host`, so a run can point it anywhere; `apply` runs
/// with `--local`, which sends every request to the local workspace instead.
fn main_config() -> String {
    format!(
        r#"
variable "host" {{
  default = "http://127.0.0.1:9"
}}
provider "databricks" {{
  host = var.host
}}
variable "env" {{
  default = "dev"
}}
variable "token" {{
  default   = "{TOKEN}"
  sensitive = true
}}
locals {{
  catalog = "console_${{var.env}}"
  schemas = ["raw", "clean"]
}}
resource "databricks_catalog" "main" {{
  name    = local.catalog
  comment = "made for the console"
}}
resource "databricks_schema" "s" {{
  for_each     = toset(local.schemas)
  catalog_name = databricks_catalog.main.name
  name         = each.key
}}
resource "databricks_secret_scope" "sc" {{
  name = "console-scope"
}}
resource "databricks_secret" "tok" {{
  scope        = databricks_secret_scope.sc.name
  key          = "token"
  string_value = var.token
}}
module "naming" {{
  source = "./naming"
  env    = var.env
}}
"#
    )
}

const MODULE: &str = r#"
variable "env" {}
output "prefix" {
  value = "${upper(var.env)}-"
}
"#;

fn project() -> tempfile::TempDir {
    let dir = config(&[("main.bf.hcl", &main_config())]);
    std::fs::create_dir(dir.path().join("naming")).unwrap();
    std::fs::write(dir.path().join("naming/main.bf.hcl"), MODULE).unwrap();
    dir
}

/// `brickform console` in `dir` with `input` on standard input (a pipe, not a terminal).
fn console(dir: &Path, args: &[&str], input: &str) -> (i32, String, String) {
    let out = brickform(dir)
        .arg("console")
        .args(args)
        .write_stdin(input)
        .output()
        .unwrap();
    let (o, e) = texts(&out);
    (out.status.code().unwrap_or(-1), o, e)
}

fn never_the_token(out: &str, err: &str) {
    assert!(
        !out.contains(TOKEN) && !err.contains(TOKEN),
        "the sensitive value was printed:\n{out}\n{err}"
    );
}

/// Each line's expression, and what the console prints for it.
const AFTER_APPLY: &[(&str, &str)] = &[
    ("var.env", "\"dev\""),
    ("local.catalog", "\"console_dev\""),
    // Attributes from state: configured, computed, of a for_each instance.
    ("databricks_catalog.main.name", "\"console_dev\""),
    (
        "databricks_catalog.main.catalog_type",
        "\"MANAGED_CATALOG\"",
    ),
    ("databricks_schema.s[\"raw\"].id", "\"console_dev.raw\""),
    (
        "[for s in databricks_schema.s : upper(s.name)]",
        "[\n  \"CLEAN\",\n  \"RAW\",\n]",
    ),
    ("join(\"+\", local.schemas)", "\"raw+clean\""),
    ("module.naming.prefix", "\"DEV-\""),
    (
        "{ name = databricks_catalog.main.name, n = length(local.schemas) }",
        "{\n  \"n\" = 2\n  \"name\" = \"console_dev\"\n}",
    ),
    ("path.module", "\".\""),
    // Sensitive: the variable, what is built from it, the secret's value in state (which
    // keeps only its fingerprint), and the variables as a whole.
    ("var.token", "(sensitive value)"),
    ("\"bearer ${var.token}\"", "(sensitive value)"),
    ("nonsensitive(var.token)", "(sensitive value)"),
    ("var", "(sensitive value)"),
    ("databricks_secret.tok.string_value", "(sensitive value)"),
    ("issensitive(var.token)", "true"),
    (
        "databricks_secret.tok.config_reference",
        "\"{{secrets/console-scope/token}}\"",
    ),
];

#[test]
fn expressions_read_variables_locals_modules_functions_and_state() {
    let dir = project();
    let d = dir.path();

    // Before apply, state holds nothing: resources are unknown, the rest is known.
    let (code, out, err) = console(
        d,
        &[],
        "databricks_catalog.main.name\n[for s in databricks_schema.s : s.name]\nlocal.catalog\n",
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        out,
        "(known after apply)\n[\n  (known after apply),\n  (known after apply),\n]\n\"console_dev\"\n"
    );

    run_ok(d, &["--local", "apply", "--auto-approve"], &[]);
    let input: String = AFTER_APPLY.iter().map(|(e, _)| format!("{e}\n")).collect();
    let (code, out, err) = console(d, &[], &input);
    assert_eq!(code, 0, "{out}\n{err}");
    never_the_token(&out, &err);
    let want: String = AFTER_APPLY.iter().map(|(_, v)| format!("{v}\n")).collect();
    assert_eq!(out, want, "stderr:\n{err}");

    // --var and the environment's variables are resolved as `plan` resolves them; `exit`
    // ends the input.
    let (code, out, err) = console(
        d,
        &["--var", "env=prod"],
        "local.catalog\nmodule.naming.prefix\nexit\nvar.env\n",
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(out, "\"console_prod\"\n\"PROD-\"\n");

    // The environment is selected as every command selects it: one that neither the
    // configuration declares nor has a state is refused before any line is read.
    let (code, out, err) = console(d, &["--env", "prdo"], "var.env\n");
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("There is no environment \"prdo\""), "{err}");
}

#[test]
fn errors_name_what_failed_and_the_next_line_is_still_evaluated() {
    let dir = project();
    let d = dir.path();
    let (code, out, err) = console(
        d,
        &[],
        "var.env\nnosuch_thing.x\nlocal.catalog\nvar.missing\n\"unclosed\n${\n\u{1b}[2J\u{0}\nvar.token + 1\nupper(\"ok\")\n",
    );
    assert_eq!(code, 1, "an expression failed: {out}\n{err}");
    assert_eq!(out, "\"dev\"\n\"console_dev\"\n\"OK\"\n", "stderr:\n{err}");
    assert!(err.contains("Unknown variable"), "{err}");
    assert!(
        err.contains("There is no resource type or variable named \"nosuch_thing\"."),
        "{err}"
    );
    assert!(
        err.contains("does not have an attribute named \"missing\""),
        "{err}"
    );
    assert!(err.contains("Invalid syntax"), "{err}");
    // Located in the line read: line 2 of standard input, column 1.
    assert!(err.contains("at <stdin line 2>:1:1"), "{err}");
    // An error about a sensitive operand does not quote it, nor do escape sequences typed
    // reach the terminal.
    never_the_token(&out, &err);
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert!(
        err.contains("reads a sensitive value, so the details of this error are not shown"),
        "{err}"
    );

    // Only lines that all succeed exit 0.
    let (code, out, err) = console(d, &[], "1 + 1\n\n  var.env  \n");
    assert_eq!((code, out.as_str()), (0, "2\n\"dev\"\n"), "{err}");
}

/// The entries of the state directory with their contents.
fn state_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join(".brickform/state"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn the_state_is_only_read_without_its_lock_and_nothing_is_contacted() {
    let dir = project();
    let d = dir.path();
    run_ok(d, &["--local", "apply", "--auto-approve"], &[]);
    let before = state_files(d);
    assert!(
        before.iter().any(|(n, _)| n == "default.json"),
        "{before:?}"
    );

    // The provider's host is a port this test listens on: a request of any kind would
    // connect to it.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let host = format!("host=http://{}", listener.local_addr().unwrap());
    let (code, out, err) = console(
        d,
        &["--var", &host],
        "databricks_catalog.main.name\nvar.host\n",
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        out,
        format!(
            "\"console_dev\"\n\"http://{}\"\n",
            listener.local_addr().unwrap()
        )
    );
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the console connected to the workspace"
    );
    // Not one byte of the state directory changed, and no lock was left (or made).
    assert_eq!(state_files(d), before);

    // Another command holds the lock (an apply under way): the console reads all the same.
    let backend = brickform_state::LocalBackend::new(d);
    let lock = backend
        .try_lock_sync("default", brickform_state::LockInfo::new("apply"))
        .unwrap();
    let (code, out, err) = console(d, &[], "databricks_catalog.main.id\n");
    assert_eq!((code, out.as_str()), (0, "\"console_dev\"\n"), "{err}");
    drop(lock);
    assert_eq!(state_files(d), before);
}
