//! Reviewing plans in CI, end to end: the binary on the local workspace (`host = "local"`),
//! every command a process of its own, as a CI job runs them.
//!
//! - `plan --json` of real plans (create, update with drift, replace, delete, sensitive and
//!   unknown values, an sdp-meta onboarding file whose JSON string changes, destroy,
//!   refresh-only) and `show --json FILE` validate against docs/plan-json.schema.json.
//! - `plan --markdown` is the pull-request comment: summary, drift first, one collapsed
//!   section per resource, a Mermaid graph of the changes and their dependencies coloured by
//!   action; the 200-flow example stays under GitHub's comment limit.
//! - The saved-plan workflow of docs/review-plans-in-ci.md: `plan --out` on the pull request,
//!   `apply FILE` after the merge in another process, and refusals when the state, the
//!   configuration, the environment, the variables or the live objects moved on in between.
//!   A refused apply changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{
    Serve, config, example_copy, local_dump, objects, run, run_ok, schema, valid_plan_json,
};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The connection password and secret value before and after the pull request.
const PW1: &str = "pw-review-one-do-not-print";
const PW2: &str = "pw-review-two-do-not-print";

/// The configuration under review; `v2` is the pull request: a comment edited, a schema moved
/// to another catalog (replace), a secret scope removed (delete), a flow added (create, and
/// an update of the onboarding file's JSON).
fn review_config(v2: bool) -> String {
    let (comment, moving_catalog, flows) = if v2 {
        ("two", "other", r#""201", "202", "203""#)
    } else {
        ("one", "c", r#""201", "202""#)
    };
    let secret = if v2 {
        ""
    } else {
        r#"
resource "databricks_secret_scope" "sc" {
  name = "review-scope"
}

resource "databricks_secret" "k" {
  scope        = databricks_secret_scope.sc.name
  key          = "api-key"
  string_value = var.db_password
}
"#
    };
    format!(
        r#"provider "databricks" {{
  host = "local"
}}

variable "db_password" {{
  type      = string
  sensitive = true
}}

resource "databricks_catalog" "c" {{
  name    = "review"
  comment = "reviewed in CI"
}}

resource "databricks_catalog" "other" {{
  name = "review_other"
}}

resource "databricks_schema" "raw" {{
  catalog_name = databricks_catalog.c.name
  name         = "raw"
  comment      = "{comment}"
}}

resource "databricks_schema" "moving" {{
  catalog_name = databricks_catalog.{moving_catalog}.name
  name         = "moving"
}}

resource "databricks_schema" "specs" {{
  catalog_name = databricks_catalog.c.name
  name         = "specs"
}}

resource "databricks_volume" "conf" {{
  catalog_name = databricks_schema.specs.catalog_name
  schema_name  = databricks_schema.specs.name
  name         = "conf"
  volume_type  = "MANAGED"
}}

resource "databricks_connection" "pg" {{
  name            = "review_pg"
  connection_type = "POSTGRESQL"
  options = {{
    host     = "db.example.com"
    port     = "5432"
    user     = "app"
    password = var.db_password
  }}
}}
{secret}
resource "sdp_meta_flow" "t" {{
  for_each        = toset([{flows}])
  data_flow_id    = each.key
  data_flow_group = "g1"
  source {{
    format = "delta"
    table  = "${{databricks_catalog.c.name}}.raw.src_${{each.key}}"
  }}
  bronze {{
    database = "${{databricks_catalog.c.name}}.${{databricks_schema.raw.name}}"
    table    = "t_${{each.key}}"
  }}
}}

resource "sdp_meta_onboarding" "all" {{
  volume_path = databricks_volume.conf.volume_path
  env         = "dev"
  flows       = values(sdp_meta_flow.t)
  database    = "${{databricks_catalog.c.name}}.${{databricks_schema.specs.name}}"
}}
"#
    )
}

/// The variable as CI passes it: from the environment, the same in the plan and apply jobs.
fn pw(value: &str) -> [(&'static str, &str); 1] {
    [("BRICKFORM_VAR_db_password", value)]
}

fn write_config(d: &Path, v2: bool) {
    std::fs::write(d.join("main.bf.hcl"), review_config(v2)).unwrap();
}

/// A directory whose configuration (v1) is applied to its local workspace.
fn applied_v1() -> tempfile::TempDir {
    let dir = config(&[("main.bf.hcl", &review_config(false))]);
    run_ok(dir.path(), &["apply", "--auto-approve"], &pw(PW1));
    dir
}

/// Changes the local workspace of `d` outside brickform, through `brickform local serve` on
/// the same data directory (as someone in the UI or another tool would).
fn outside(d: &Path, change: impl FnOnce(&Serve)) {
    let serve = Serve::start(&d.join(".brickform/local"), &[]);
    change(&serve);
}

fn plan_json(
    v: &jsonschema::Validator,
    d: &Path,
    what: &str,
    args: &[&str],
    password: &str,
) -> Value {
    let mut a = vec!["plan", "--json"];
    a.extend_from_slice(args);
    let out = run_ok(d, &a, &pw(password));
    assert!(
        !out.contains(PW1) && !out.contains(PW2),
        "{what} shows a secret"
    );
    valid_plan_json(v, what, &out)
}

fn change<'a>(doc: &'a Value, address: &str) -> &'a Value {
    doc["resource_changes"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["address"] == address))
        .unwrap_or_else(|| panic!("{address} not in the plan"))
}

fn field(change: &Value, path: Value) -> &Value {
    change["change"]["fields"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["path"] == path))
        .unwrap_or_else(|| panic!("no field {path} in {}", change["address"]))
}

/// Address → actions of every resource change.
fn actions(doc: &Value) -> BTreeMap<String, Value> {
    doc["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["address"].as_str().unwrap().to_string(),
                c["change"]["actions"].clone(),
            )
        })
        .collect()
}

#[test]
fn plan_json_of_real_plans_matches_the_documented_schema() {
    let v = schema();
    let dir = config(&[("main.bf.hcl", &review_config(false))]);
    let d = dir.path();

    // Create: unknown values are left out of `after` and marked in `after_unknown`;
    // sensitive ones are null and masked.
    let doc = plan_json(&v, d, "create", &[], PW1);
    assert_eq!(doc["summary"]["add"], 12);
    let cat = change(&doc, "databricks_catalog.c");
    assert_eq!(cat["change"]["actions"], json!(["create"]));
    assert_eq!(cat["change"]["after_unknown"]["id"], true);
    assert!(cat["change"]["after"].get("id").is_none());
    let pg = change(&doc, "databricks_connection.pg");
    assert_eq!(pg["change"]["after_sensitive"], json!({"options": true}));
    assert_eq!(pg["change"]["after"]["options"], Value::Null);
    assert_eq!(field(pg, json!(["options"]))["sensitive"], true);
    let flow = change(&doc, "sdp_meta_flow.t[\"201\"]");
    assert_eq!(flow["index"], "201");
    // The onboarding file's content is a JSON string, known at plan time.
    let onboarding = change(&doc, "sdp_meta_onboarding.all");
    let text = onboarding["change"]["after"]["onboarding_json"]
        .as_str()
        .unwrap();
    let entries: Value = serde_json::from_str(text).unwrap();
    assert_eq!(entries.as_array().unwrap().len(), 2);
    assert_eq!(
        onboarding["depends_on"],
        json!([
            "databricks_catalog.c",
            "databricks_schema.specs",
            "databricks_volume.conf",
            "sdp_meta_flow.t"
        ])
    );

    run_ok(d, &["apply", "--auto-approve"], &pw(PW1));
    let doc = plan_json(&v, d, "no-op", &[], PW1);
    assert_eq!(doc["has_changes"], false);

    // The pull request, after someone changed the catalog's comment by hand.
    outside(d, |s| {
        s.ok(
            "PATCH",
            "/api/2.1/unity-catalog/catalogs/review",
            Some(json!({"comment": "changed by hand"})),
        );
    });
    write_config(d, true);
    let doc = plan_json(&v, d, "update with drift", &[], PW2);
    let acts = actions(&doc);
    assert_eq!(acts["databricks_catalog.c"], json!(["update"]));
    assert_eq!(acts["databricks_schema.raw"], json!(["update"]));
    assert_eq!(
        acts["databricks_schema.moving"],
        json!(["delete", "create"])
    );
    assert_eq!(acts["databricks_secret_scope.sc"], json!(["delete"]));
    assert_eq!(acts["databricks_secret.k"], json!(["delete"]));
    assert_eq!(acts["sdp_meta_flow.t[\"203\"]"], json!(["create"]));
    assert_eq!(acts["sdp_meta_onboarding.all"], json!(["update"]));
    assert_eq!(acts["databricks_connection.pg"], json!(["update"]));
    assert_eq!(
        doc["summary"],
        json!({"add": 2, "change": 4, "destroy": 3, "import": 0, "forget": 0, "moved": 0})
    );
    // Drift: found by refresh, and planned back.
    assert_eq!(doc["resource_drift"][0]["address"], "databricks_catalog.c");
    let comment = field(change(&doc, "databricks_catalog.c"), json!(["comment"]));
    assert_eq!(comment["reason"], "drift");
    assert_eq!(comment["live"], "changed by hand");
    assert_eq!(comment["after"], "reviewed in CI");
    // Replace: the field that forces it.
    let moving = change(&doc, "databricks_schema.moving");
    assert_eq!(moving["change"]["replace_paths"], json!([["catalog_name"]]));
    assert_eq!(moving["action_reason"], "replace_because_cannot_update");
    // Delete.
    let scope = change(&doc, "databricks_secret_scope.sc");
    assert_eq!(scope["change"]["after"], Value::Null);
    assert_eq!(scope["action_reason"], "delete_because_no_resource_config");
    // Sensitive: a changed password shows as a change without its value.
    let options = field(change(&doc, "databricks_connection.pg"), json!(["options"]));
    assert_eq!(options["sensitive"], true);
    assert_eq!(
        (&options["before"], &options["after"]),
        (&Value::Null, &Value::Null)
    );
    // The onboarding file's JSON string gains the new flow.
    let onboarding = field(
        change(&doc, "sdp_meta_onboarding.all"),
        json!(["onboarding_json"]),
    );
    let count = |v: &Value| {
        serde_json::from_str::<Value>(v.as_str().unwrap())
            .unwrap()
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(
        (count(&onboarding["before"]), count(&onboarding["after"])),
        (2, 3)
    );

    // Other modes, and a saved plan shown as JSON.
    plan_json(&v, d, "refresh-only", &["--refresh-only"], PW2);
    let doc = plan_json(&v, d, "destroy", &["--destroy"], PW2);
    // Everything in state is deleted (the flow the pull request adds is not in state yet).
    let deletes = actions(&doc)
        .into_iter()
        .filter(|(_, a)| *a == json!(["delete"]))
        .count();
    assert_eq!(deletes, 12);
    assert_eq!(doc["summary"]["destroy"], 12);
    let file = d.join("pr.plan");
    run_ok(d, &["plan", "--out", file.to_str().unwrap()], &pw(PW2));
    let shown = run_ok(d, &["show", "--json", file.to_str().unwrap()], &[]);
    let doc = valid_plan_json(&v, "show --json FILE", &shown);
    assert_eq!(
        actions(&doc)["databricks_schema.moving"],
        json!(["delete", "create"])
    );
    // The saved plan keeps what it was made from: the configuration and when.
    assert!(
        doc["configuration"]["root_module"]["resources"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r["address"] == "databricks_schema.moving")),
        "{doc}"
    );
    assert!(
        doc["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{doc}"
    );
}

/// The rendering's Mermaid block: node label → class, and edges as label pairs.
fn mermaid(md: &str) -> (BTreeMap<String, String>, BTreeSet<(String, String)>) {
    let start = md
        .find("```mermaid\nflowchart LR\n")
        .expect("a mermaid graph");
    let block = &md[start..];
    let block = &block[..block.find("\n```\n").unwrap()];
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    let mut classes = BTreeMap::new();
    let mut edges = BTreeSet::new();
    for l in block.lines().skip(2).map(str::trim) {
        // Drawn from the dependent; kept here as (dependency, dependent).
        if let Some((a, b)) = l.split_once(" --> ") {
            edges.insert((ids[b].clone(), ids[a].clone()));
        } else if let Some(rest) = l.strip_prefix("class ") {
            let (list, class) = rest.split_once(' ').unwrap();
            for id in list.split(',') {
                classes.insert(ids[id].clone(), class.to_string());
            }
        } else if l.starts_with("classDef ") {
        } else {
            let (id, label) = l.split_once("[\"").unwrap_or_else(|| panic!("{l}"));
            let label = label.strip_suffix("\"]").unwrap().replace("#quot;", "\"");
            assert!(
                !label.contains('#') && !label.contains(':'),
                "label not escaped: {l}"
            );
            ids.insert(id.to_string(), label);
        }
    }
    (classes, edges)
}

#[test]
fn markdown_plan_for_a_pull_request() {
    let dir = applied_v1();
    let d = dir.path();
    outside(d, |s| {
        s.ok(
            "PATCH",
            "/api/2.1/unity-catalog/catalogs/review",
            Some(json!({"comment": "changed by hand"})),
        );
    });
    write_config(d, true);
    std::fs::write(
        d.join("checks.bf.hcl"),
        "check \"documented\" {\n  assert {\n    condition     = false\n    error_message = \"every catalog needs a comment\"\n  }\n}\n",
    )
    .unwrap();
    let (code, md, err) = run(d, &["plan", "--markdown", "--detailed-exitcode"], &pw(PW2));
    assert_eq!(code, 2, "{md}\n{err}");
    assert!(!md.contains(PW1) && !md.contains(PW2));
    assert!(md.len() < 65_536);
    // The configuration's warnings are in the comment, one plain line each.
    assert!(
        md.contains("> **Warning:** checks.bf.hcl:3: Check block assertion failed: check \"documented\": every catalog needs a comment\n"),
        "{md}"
    );

    // Title, the summary table with the drift count, the sentence CI scripts grep for.
    assert!(md.starts_with("### brickform plan for `default`\n"), "{md}");
    assert!(md.contains(
        "| ➕ Add | 🔄 Change | 🗑️ Destroy | 📥 Import | ⚠️ Changed outside |\n|---:|---:|---:|---:|---:|\n| 2 | 4 | 3 | 0 | 1 |\n"
    ), "{md}");
    assert!(md.contains("`Plan: 2 to add, 4 to change, 3 to destroy.`"));
    // Drift first, then the changes, then the graph.
    let pos = |s: &str| md.find(s).unwrap_or_else(|| panic!("no {s:?} in\n{md}"));
    assert!(pos("| ➕ Add") < pos("#### Changed outside of brickform"));
    assert!(pos("#### Changed outside of brickform") < pos("#### Resource changes"));
    assert!(pos("#### Resource changes") < pos("#### Dependency graph"));
    assert!(
        md.contains("<details><summary>🟡 <code>databricks_catalog.c</code> has changed</summary>")
    );
    // One collapsed section per drifted object and per change: 1 + 8.
    assert_eq!(md.matches("<details><summary>").count(), 9);
    assert_eq!(md.matches("</details>").count(), 9);
    for summary in [
        "🟠 <code>-/+</code> <code>databricks_schema.moving</code> must be replaced",
        "🔴 <code>-</code> <code>databricks_secret_scope.sc</code> will be destroyed",
        "🟢 <code>+</code> <code>sdp_meta_flow.t[\"203\"]</code> will be created",
        "🟡 <code>~</code> <code>sdp_meta_onboarding.all</code> will be updated in-place",
    ] {
        assert!(
            md.contains(&format!("<details><summary>{summary}")),
            "{summary}\n{md}"
        );
    }
    // The onboarding file's JSON shows as a structural diff in a diff block.
    assert!(md.contains("!       onboarding_json = jsonencode("), "{md}");
    assert!(
        md.contains("+                   data_flow_id        = \"203\""),
        "{md}"
    );

    // The graph: every change coloured by its action, with its dependencies (unchanged
    // ones dashed).
    let (classes, edges) = mermaid(&md);
    for (addr, class) in [
        ("databricks_catalog.c", "update"),
        ("databricks_schema.moving", "replace"),
        ("databricks_secret_scope.sc", "delete"),
        ("databricks_secret.k", "delete"),
        ("sdp_meta_flow.t[\"203\"]", "create"),
        ("sdp_meta_onboarding.all", "update"),
        ("databricks_catalog.other", "noop"),
        ("sdp_meta_flow.t[\"201\"]", "noop"),
    ] {
        assert_eq!(classes.get(addr).map(String::as_str), Some(class), "{addr}");
    }
    let e = |a: &str, b: &str| (a.to_string(), b.to_string());
    for edge in [
        e("databricks_catalog.other", "databricks_schema.moving"),
        e("databricks_secret_scope.sc", "databricks_secret.k"),
        e("sdp_meta_flow.t[\"203\"]", "sdp_meta_onboarding.all"),
        e("sdp_meta_flow.t[\"201\"]", "sdp_meta_onboarding.all"),
        e("databricks_volume.conf", "sdp_meta_onboarding.all"),
    ] {
        assert!(edges.contains(&edge), "{edge:?} not in {edges:?}");
    }
    assert!(md.contains("classDef replace "));
}

#[test]
fn markdown_of_two_hundred_flows_fits_a_comment() {
    let dir = example_copy("flows-from-csv");
    let d = dir.path();
    let (code, md, err) = run(d, &["plan", "--markdown", "--detailed-exitcode"], &[]);
    assert_eq!(code, 2, "{err}");
    let (code, json_text, _) = run(d, &["plan", "--json"], &[]);
    assert_eq!(code, 0);
    let doc = valid_plan_json(&schema(), "flows-from-csv", &json_text);
    let addresses: Vec<String> = doc["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["change"]["actions"] != json!(["no-op"]) && c["mode"] == "managed")
        .map(|c| c["address"].as_str().unwrap().to_string())
        .collect();
    assert!(addresses.len() > 200, "{}", addresses.len());

    // Under GitHub's limit with room to spare; the summary counts everything.
    assert!(md.len() <= 60_000, "{}", md.len());
    let add = doc["summary"]["add"].as_u64().unwrap();
    assert!(md.contains(&format!("`Plan: {add} to add, 0 to change, 0 to destroy.`")));
    assert!(md.contains("> **Note:** This plan is too long for one comment."));
    // Each change keeps its diff or is named in the list of the others.
    for a in &addresses {
        let named = format!("<code>{a}</code>");
        assert!(md.contains(&named), "{a} is missing");
    }
    // The singletons keep their diff before the 200 flows do.
    assert!(md.contains("<details><summary>🟢 <code>+</code> <code>databricks_job.refresh</code>"));
    // The graph groups the 200 flows into one node.
    let (classes, edges) = mermaid(&md);
    assert_eq!(classes["sdp_meta_flow.table (200 instances)"], "create");
    assert!(edges.contains(&(
        "sdp_meta_flow.table (200 instances)".to_string(),
        "sdp_meta_onboarding.all".to_string()
    )));
}

/// The state's serial, read from its file.
fn serial(d: &Path, env: &str) -> u64 {
    let p = d.join(format!(".brickform/state/{env}.json"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    doc["serial"].as_u64().unwrap()
}

/// Runs `apply FILE` expecting a refusal with `message`; checks it changed nothing.
fn refused(d: &Path, file: &Path, extra: &[&str], envs: &[(&str, &str)], message: &str) -> String {
    let before = (local_dump(d), serial(d, "default"));
    let mut args = vec!["apply", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let (code, out, err) = run(d, &args, envs);
    assert_eq!(code, 1, "apply {extra:?} was not refused:\n{out}\n{err}");
    assert!(err.contains(message), "expected {message:?} in:\n{err}");
    assert!(!out.contains("Apply complete"), "{out}");
    assert_eq!(
        (local_dump(d), serial(d, "default")),
        before,
        "a refused apply changed the workspace or the state"
    );
    err
}

#[test]
fn saved_plan_is_applied_later_in_another_process_or_refused() {
    let dir = applied_v1();
    let d = dir.path();
    let plan = d.join("pr.plan");
    let plan_arg = plan.to_str().unwrap();

    // The pull request: one process plans, saves the plan and prints the comment.
    write_config(d, true);
    let (code, md, err) = run(
        d,
        &[
            "plan",
            "--out",
            plan_arg,
            "--markdown",
            "--detailed-exitcode",
        ],
        &pw(PW2),
    );
    assert_eq!(code, 2, "{md}\n{err}");
    assert!(md.starts_with("### brickform plan for `default`"), "{md}");
    let saved = std::fs::read_to_string(&plan).unwrap();
    assert!(
        !saved.contains(PW1) && !saved.contains(PW2),
        "plan files hold no secrets"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&plan).unwrap().permissions().mode() & 0o777,
        0o600
    );

    // After the merge, another process applies exactly that plan: no prompt, no stdin.
    let (code, out, err) = run(d, &["apply", plan_arg], &pw(PW2));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("Apply complete! Resources: 2 added, 3 changed, 3 destroyed."),
        "{out}"
    );
    assert!(!out.contains("Enter a value"));
    let made = objects(&local_dump(d));
    assert!(
        made.contains(&"schema:review_other.moving".to_string()),
        "{made:?}"
    );
    assert!(!made.iter().any(|o| o.starts_with("scope:")), "{made:?}");
    let (code, out, _) = run(d, &["plan", "--detailed-exitcode"], &pw(PW2));
    assert_eq!(code, 0, "{out}");
    // Every refusal, to check the messages docs/review-plans-in-ci.md quotes.
    let mut refusals = Vec::new();
    // A plan applies once.
    refusals.push(refused(
        d,
        &plan,
        &[],
        &pw(PW2),
        "Saved plan is stale: the given plan file can no longer be applied because the state was changed by another operation after the plan was created.",
    ));

    // The state changed in between: another apply ran after the plan was made.
    let edit = |from: &str, to: &str| {
        let text = std::fs::read_to_string(d.join("main.bf.hcl")).unwrap();
        assert!(text.contains(from));
        std::fs::write(d.join("main.bf.hcl"), text.replace(from, to)).unwrap();
    };
    edit("comment      = \"two\"", "comment      = \"three\"");
    run_ok(d, &["plan", "--out", plan_arg], &pw(PW2));
    run_ok(d, &["apply", "--auto-approve"], &pw(PW2));
    refused(
        d,
        &plan,
        &[],
        &pw(PW2),
        "state was changed by another operation",
    );

    // Another state: the same configuration applied from another directory.
    let other = applied_v1();
    write_config(other.path(), true);
    refusals.push(refused(
        other.path(),
        &plan,
        &[],
        &pw(PW2),
        "Saved plan does not match the given state: the plan was created for a different state",
    ));

    // The configuration differs from the one planned.
    edit("comment      = \"three\"", "comment      = \"four\"");
    run_ok(d, &["plan", "--out", plan_arg], &pw(PW2));
    edit("comment      = \"four\"", "comment      = \"five\"");
    refusals.push(refused(
        d,
        &plan,
        &[],
        &pw(PW2),
        "Saved plan is stale: the configuration files changed after the plan was created.",
    ));
    // A new configuration file counts as a change too.
    edit("comment      = \"five\"", "comment      = \"four\"");
    std::fs::write(d.join("extra.bf.hcl"), "locals {\n  x = 1\n}\n").unwrap();
    refused(d, &plan, &[], &pw(PW2), "the configuration files changed");
    std::fs::remove_file(d.join("extra.bf.hcl")).unwrap();

    // Another environment, by flag or by BRICKFORM_ENV.
    let other_env = "Error: the plan was made for environment \"default\", not \"prod\"";
    refusals.push(refused(d, &plan, &["--env", "prod"], &pw(PW2), other_env));
    refused(
        d,
        &plan,
        &[],
        &[
            ("BRICKFORM_VAR_db_password", PW2),
            ("BRICKFORM_ENV", "prod"),
        ],
        other_env,
    );
    assert!(!d.join(".brickform/state/prod.json").exists());

    // Other variable values than those planned with (the apply job lacks the secret's
    // new value).
    refusals.push(refused(
        d,
        &plan,
        &[],
        &pw(PW1),
        "Saved plan is stale: the variable values differ from those the plan was created with.",
    ));

    // The live objects changed: a schema the plan updates in place was deleted by hand, so
    // it would now be created.
    outside(d, |s| {
        s.ok(
            "DELETE",
            "/api/2.1/unity-catalog/schemas/review.raw?force=true",
            None,
        );
    });
    refusals.push(refused(
        d,
        &plan,
        &[],
        &pw(PW2),
        "Saved plan is stale: the live objects changed since the plan was created",
    ));

    // A plan file from a brickform with another plan file format.
    let mut newer: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    newer["format_version"] = 2.into();
    let newer_file = d.join("newer.plan");
    std::fs::write(&newer_file, newer.to_string()).unwrap();
    refusals.push(refused(
        d,
        &newer_file,
        &[],
        &pw(PW2),
        "Saved plan cannot be read by this brickform:",
    ));

    // The guide's table of refusals quotes these messages as they are.
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/review-plans-in-ci.md"
    ))
    .unwrap();
    let table = &guide[guide
        .find("| what changed since the plan | error |")
        .unwrap()..];
    let table = &table[..table.find("\n\n").unwrap()];
    let quoted: Vec<String> = table
        .lines()
        .skip(2)
        .map(|row| {
            let cell = row.rsplit(" | ").next().unwrap();
            // The guide's example environments are this test's.
            cell.trim_end_matches(" |")
                .trim_matches('`')
                .replace(r#""prod", not "dev""#, r#""default", not "prod""#)
        })
        .collect();
    assert_eq!(quoted.len(), refusals.len(), "{quoted:?}");
    for q in quoted {
        assert!(
            refusals.iter().any(|r| r.contains(&q)),
            "the guide quotes {q:?}, which brickform does not print:\n{}",
            refusals.join("")
        );
    }

    // A fresh plan reviewed and applied brings everything back.
    run_ok(d, &["plan", "--out", plan_arg], &pw(PW2));
    let out = run_ok(d, &["apply", plan_arg], &pw(PW2));
    assert!(out.contains("Apply complete!"), "{out}");
    let (code, out, _) = run(d, &["plan", "--detailed-exitcode"], &pw(PW2));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn guide_uses_real_commands_and_flags() {
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/review-plans-in-ci.md"
    ))
    .unwrap();
    // Commands in code blocks, with `\` continuations joined.
    let mut commands = Vec::new();
    let mut in_block = false;
    let mut pending = String::new();
    for line in guide.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        pending.push_str(line.trim_end_matches('\\'));
        pending.push(' ');
        if !line.ends_with('\\') {
            commands.push(std::mem::take(&mut pending));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for cmd in &commands {
        let tokens: Vec<&str> = cmd.split_whitespace().collect();
        let Some(start) = tokens.iter().position(|t| *t == "brickform") else {
            continue;
        };
        let mut rest = tokens[start + 1..].iter().peekable();
        // Global options before the subcommand.
        while let Some(t) = rest.peek() {
            if **t == "-C" || **t == "--env" {
                rest.next();
                rest.next();
            } else {
                break;
            }
        }
        let Some(sub) = rest.next() else { continue };
        if !["plan", "apply", "show"].contains(sub) {
            continue;
        }
        let help = run_ok(dir.path(), &[sub, "--help"], &[]);
        for t in rest {
            if let Some(flag) = t.strip_prefix("--") {
                let flag = flag.split('=').next().unwrap();
                assert!(
                    help.contains(&format!("--{flag}")),
                    "`brickform {sub}` has no --{flag} (docs/review-plans-in-ci.md: {cmd})"
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} commands found");
}
