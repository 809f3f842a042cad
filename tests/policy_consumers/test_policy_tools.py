"""Policy tools written for `terraform show -json` read brickform's plan JSON unchanged.

checkov (its terraform_plan framework, with a custom policy: every databricks_schema has a
comment) and terraform-compliance (feature files) run on the plans the binary prints for the
examples against the local workspace: the create plan of every example, then for the quickstart
an update plan (a comment added) and a destroy plan. Each assertion is about what the tools found:
a plan they cannot read gives them no resources (checkov) or an error (terraform-compliance).
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
BIN = os.environ.get("BRICKFORM_BIN", str(ROOT / "target" / "debug" / "brickform"))
VENV_BIN = pathlib.Path(sys.executable).parent
EXAMPLES = sorted(p.name for p in (ROOT / "examples").iterdir() if p.is_dir())
# The first plan of an example whose flows come from what its first apply lands is the
# targeted one its README runs: the whole plan cannot know the flows' keys yet.
FIRST_PLAN = {"flows-from-discovery": ["--target", "databricks_ingestion_pipeline.crm"]}


def brickform(cwd, *args, check=True):
    r = subprocess.run(
        [BIN, "-C", str(cwd), "--no-color", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check:
        assert r.returncode in (0, 2), f"brickform {args}: {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def plan_json(cwd, *args, path):
    r = brickform(cwd, "plan", "--local", "--json", *args)
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    # Printed on one line, as `terraform show -json` prints it.
    assert len(lines) == 1, r.stdout[:2000]
    path.write_text(lines[0])
    return json.loads(lines[0])


def copy_example(name, tmp_path):
    dest = tmp_path / name
    shutil.copytree(ROOT / "examples" / name, dest, ignore=shutil.ignore_patterns(".brickform"))
    return dest


def checkov(plan_file):
    """The schema-comment check's results: (passed, failed) resource addresses."""
    r = subprocess.run(
        [
            str(VENV_BIN / "checkov"),
            "-f",
            str(plan_file),
            "--framework",
            "terraform_plan",
            "--external-checks-dir",
            str(HERE / "policies"),
            "--check",
            "CKV2_BF_1",
            "--skip-download",
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "BC_SKIP_MAPPING": "TRUE"},
    )
    # 0: all passed, 1: a check failed; anything else is checkov failing to run.
    assert r.returncode in (0, 1), f"{r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    out = json.loads(r.stdout)
    reports = out if isinstance(out, list) else [out]
    passed, failed = set(), set()
    for report in reports:
        results = report.get("results", {})
        passed |= {c["resource"] for c in results.get("passed_checks", [])}
        failed |= {c["resource"] for c in results.get("failed_checks", [])}
        assert not results.get("parsing_errors"), results["parsing_errors"]
    return passed, failed


def terraform_compliance(plan_file, feature):
    """terraform-compliance's exit code and output for one directory of feature files."""
    r = subprocess.run(
        [
            str(VENV_BIN / "terraform-compliance"),
            "--no-ansi",
            "-p",
            str(plan_file),
            "-f",
            str(HERE / "features" / feature),  # a directory of .feature files
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = r.stdout + r.stderr
    # terraform-compliance refuses a file whose format it does not know before it runs any step.
    assert "Unsupported" not in out and "Traceback" not in out, out
    assert "1 features" in out, out
    return r.returncode, out


def schemas_without_comment(plan):
    return {
        r["address"]
        for r in plan["planned_values"]["root_module"].get("resources", [])
        if r["type"] == "databricks_schema" and not r["values"].get("comment")
    }


@pytest.mark.parametrize("example", EXAMPLES)
def test_create_plans_of_the_examples_are_read_by_both_tools(example, tmp_path):
    d = copy_example(example, tmp_path)
    plan_file = tmp_path / "plan.json"
    plan = plan_json(d, *FIRST_PLAN.get(example, []), path=plan_file)
    schemas = {
        r["address"]
        for r in plan["resource_changes"]
        if r["type"] == "databricks_schema" and r["change"]["actions"] == ["create"]
    }
    assert schemas, f"{example} creates no schema"
    bare = schemas_without_comment(plan)

    passed, failed = checkov(plan_file)
    assert passed | failed == schemas, (passed, failed)
    assert failed == bare

    code, out = terraform_compliance(plan_file, "schemas")
    if bare:
        assert code != 0, out
        for address in bare:
            assert f"comment property in {address} is considered to be Null" in out, out
    else:
        assert code == 0, out
        assert "1 scenarios (1 passed)" in out, out
    # Nothing is deleted by a create plan.
    code, out = terraform_compliance(plan_file, "no_catalog_deleted")
    assert code == 0, out


def test_update_and_destroy_plans_of_the_quickstart(tmp_path):
    d = copy_example("quickstart", tmp_path)
    brickform(d, "apply", "--local", "--auto-approve")

    # An update: the raw schema gets a comment; silver still has none.
    main = d / "main.bf.hcl"
    text = main.read_text()
    text, n = re.subn(
        r'(resource "databricks_schema" "raw" \{\n)',
        r'\1  comment = "landed files"\n',
        text,
    )
    assert n == 1
    main.write_text(text)
    update_file = tmp_path / "update.json"
    plan = plan_json(d, path=update_file)
    actions = {r["address"]: r["change"]["actions"] for r in plan["resource_changes"]}
    assert actions["databricks_schema.raw"] == ["update"], actions
    assert plan["prior_state"]["values"]["root_module"]["resources"], "no prior state"
    passed, failed = checkov(update_file)
    assert passed == {"databricks_schema.raw"}, passed
    assert failed == {"databricks_schema.silver"}, failed
    code, out = terraform_compliance(update_file, "schemas")
    assert code != 0 and "databricks_schema.silver is considered to be Null" in out, out
    assert "databricks_schema.raw is considered" not in out, out
    code, out = terraform_compliance(update_file, "no_catalog_deleted")
    assert code == 0, out

    # A replacement (delete, then create) is caught by the feature that forbids deleting a
    # catalog; terraform-compliance reads deletes only from replacements.
    replace_file = tmp_path / "replace.json"
    plan = plan_json(d, "--replace", "databricks_catalog.main", path=replace_file)
    actions = {r["address"]: r["change"]["actions"] for r in plan["resource_changes"]}
    assert actions["databricks_catalog.main"] == ["delete", "create"], actions
    code, out = terraform_compliance(replace_file, "no_catalog_deleted")
    assert code != 0, out
    assert "databricks_catalog.main" in out, out

    # A destroy: nothing is planned to exist, so neither tool finds a schema to check, as on
    # a Terraform destroy plan, and both read the file without an error.
    destroy_file = tmp_path / "destroy.json"
    plan = plan_json(d, "--destroy", path=destroy_file)
    assert not plan["planned_values"]["root_module"].get("resources"), plan["planned_values"]
    managed = [r for r in plan["resource_changes"] if r["mode"] == "managed"]
    assert {r["change"]["actions"][0] for r in managed} == {"delete"}, managed
    passed, failed = checkov(destroy_file)
    assert passed == set() and failed == set(), (passed, failed)
    code, out = terraform_compliance(destroy_file, "schemas")
    assert code == 0 and "1 skipped" in out, out

    brickform(d, "destroy", "--local", "--auto-approve")
