"""Generated end-to-end cases: the plan's `after` is what the service holds after apply.

Every case is drawn from a seed. It writes a configuration with the real kinds (a catalog, a
schema, a volume, a connection, a notebook, a Lakeflow pipeline — serverless or on a classic
cluster — and a job with tasks, parameters, a schedule and notifications) in which a random
subset of the optional fields is set, and applies it; the plan right after must be empty.
Then, for each of `STEPS` steps, it may edit the configuration, and makes random changes
outside brickform with the official SDK — to fields the configuration sets and to fields it
leaves out, renames, deleted tasks and objects — then:

1. `brickform plan --json --out FILE` is read;
2. the plan is applied (the saved file, or on odd seeds a fresh `apply --auto-approve`);
3. every object is read back with the SDK, shaped like the plan (HCL names, the ownership
   tag left out), and every known attribute of the plan's `change.after` and the `after` of
   every `change.fields[]` entry must equal what the service holds (`same` lists the
   equivalences allowed); the connection's write-only options must hold the configured
   values the service returns (all but the password and the user, which it withholds); the
   notebook's content (as the export answers it) must be the plan's `content_base64`;
4. `brickform plan --detailed-exitcode` must exit 0.

The normalising service. Two cases in three (drawn by a generator of their own) run with the
local workspace's `normalise_answers` on, with a seed of their own (now and then 0: every
rewriting): its answers differ from what it holds the way the real service's do (comments in
another case, user names lower-cased, unordered lists reordered, job tasks sorted, defaults
filled in, write-only flags left out, enum aliases), so check 3 cannot hold by design. There
it is replaced by what apply sent, read from the request log (cleared before apply):
3n. every attribute the configuration sets (and, in its blocks, the nested attributes it sets)
   must be, in what apply sent, the plan's `after`: a create's body (with the writes after it)
   and an update's, shaped like the SDK reads (`writes_of`: the catalog's, schema's, volume's
   and connection's POST and PATCH, the notebook's import, the pipeline's POST and PUT, the
   job's create, reset and update — a partial update's tasks and parameters by key, its
   fields_to_remove as cleared); a value a create leaves out must be the service's default
   (the owner: the maker); an attribute the plan changes must be sent; the sensitive ones
   (the connection's options, redacted in the log) are not compared. The notebook's content
   and the connection's options are still compared with what the service holds (it does not
   rewrite them);
and checks 4, 5-7 (below) stay, with two more from the request log: an update sends no
attribute `ignore_changes` covers with a value other than the object's, and apply sends no
delete of a managed object the plan does not delete or replace.

Lifecycle settings. About a third of the cases (`LIFECYCLE_SHARE`; drawn by a generator of
their own, seeded from the case's seed, so the rest of a case is what it was before they
existed) give one to three resources a `lifecycle` block with some of:
- `ignore_changes`: attributes, nested block types (a job's `schedule`, `email_notifications`,
  `task`; a pipeline's `notification`, `cluster`), paths into them (`properties["team"]`,
  `task[0].timeout_seconds`, which cover the whole attribute), or `all` (`IGNORABLE`). The
  case then changes ignored attributes outside brickform (with the SDK; a notebook's content
  with a workspace import) and, from the second step, in the configuration. Never a
  sensitive attribute (the schema's `sensitive` flag: the connection's `options`), which
  brickform cannot keep when a write must carry it (it keeps no copy of the value), and says
  so — except in a few cases (`SENSITIVE_SHARE`), whose step `validate` must then accept with
  a warning naming the attribute, saying "sensitive" and pointing into the lifecycle block;
  the step goes on without that entry;
- `replace_triggered_by`: a resource or one of its attributes earlier in the graph (`TRIGGERS`:
  the job by the notebook or the pipeline, the pipeline by the notebook or the schema, the
  volume by the schema, …), with changes to what it names made in the configuration or outside;
- `prevent_destroy = true`;
- `create_before_destroy = true`: on jobs, and on pipelines with `allow_duplicate_names`, where
  it is valid; now and then on kinds whose objects cannot share a name (`UNIQUE_NAMES`), where
  brickform must refuse the replacement ("create_before_destroy needs a new name", see 6) —
  also where create_before_destroy spreads to such an object from one replaced with it that
  depends on it (a job's onto its pipeline without allow_duplicate_names).
With them, every step also checks:
5. before apply, on the plan: a resource with `prevent_destroy` is not deleted or replaced; no
   kind in `UNIQUE_NAMES` is replaced create-before-destroy; a resource whose
   `replace_triggered_by` names something the plan creates, replaces or updates (in the
   attribute named, when one is) is replaced (or made anew), and a replacement with the
   reason `replace_by_triggers` has such a trigger;
6. a plan refused for `prevent_destroy` (or `create_before_destroy`) must name the address
   and the setting; `apply --auto-approve` must refuse too and leave every object as it was.
   The case then goes on with that setting dropped from the resources named (for
   `create_before_destroy`: from all) for the rest of the step, and the plan made again must
   indeed delete or replace what `prevent_destroy` protected;
7. after apply, against the objects read with the SDK just before it: an object's id (job and
   pipeline id, schema, volume and connection id, notebook object id, catalog storage) changed
   or gone only where the plan deletes or replaces it, and changed wherever it replaces it;
   an attribute `ignore_changes` covers holds the value it had before apply (a value changed
   outside brickform stays, a value edited in the configuration is not written) — on an
   update and on a replacement alike, not on an object made again after it was deleted
   outside brickform, which is made as configured; a replacement's new object keeps, of
   what ignore_changes covers, only what the configuration sets (a value the service
   assigned, as a volume's storage_location, is the new object's own);
8. at the end, when the last configuration has `prevent_destroy`, `plan --destroy` must be
   refused naming every protected address.
A known gap, excluded explicitly (check_plan): with `ignore_changes` covering the content of
a content kind (`all`, or `content_base64`; here the notebook), after a change of its content
made outside brickform the plan's
`after.content_base64` is not what the service holds (brickform does not read content back);
that one comparison is skipped then, and only then.

CI runs seeds 0 .. BRICKFORM_GEN_CASES-1 (default `DEFAULT_CASES`), then seeds 150-299 with
the newest SDK: the same cases on every run. A failure prints its seed, the changes made,
the case (configurations as HCL, changes as data) and, after shrinking it (dropping steps, changes, configured fields, lifecycle settings
and entries of their lists while it still fails, for at most 80 runs and 5 minutes;
BRICKFORM_GEN_SHRINK=0 skips that), the smallest failing case. Replay one with
`BRICKFORM_GEN_SEEDS=17 pytest tests/python/test_generative_plans.py`; explore more with
`BRICKFORM_GEN_CASES=2000` or `BRICKFORM_GEN_SEEDS=1000-1999`.
"""

import base64
import copy
import inspect
import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile
import time

import traceback

import pytest
from conftest import brickform_bin
from databricks.sdk.errors import NotFound
from databricks.sdk.service.catalog import CatalogIsolationMode, EnablePredictiveOptimization
from databricks.sdk.service.jobs import JobSettings, Task
from databricks.sdk.service.pipelines import PipelineSpec
from databricks.sdk.service.workspace import ExportFormat, ImportFormat, Language

# 150 cases: about 100 of them against the normalising local workspace (two in three).
# scripts/test runs seeds 150-299 again with the newest SDK, so CI takes 300 distinct cases
# (204 normalising); the long runs (scripts/long-generated) take thousands.
DEFAULT_CASES = 150
STEPS = 2
TOKEN = "gen-token"


def seeds():
    spec = os.environ.get("BRICKFORM_GEN_SEEDS")
    if not spec:
        return list(range(int(os.environ.get("BRICKFORM_GEN_CASES", DEFAULT_CASES))))
    out = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


# ---------------------------------------------------------------- the schema


@pytest.fixture(scope="module")
def schemas():
    out = subprocess.run([brickform_bin(), "schema"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["resources"]


# ---------------------------------------------------------------- configuration as data


class Ref(str):
    """An HCL expression written as is (a reference), not as a string literal."""


ADDR = {
    "catalog": "databricks_catalog.c",
    "schema": "databricks_schema.s",
    "volume": "databricks_volume.v",
    "connection": "databricks_connection.pg",
    "notebook": "databricks_notebook.nb",
    "pipeline": "databricks_pipeline.p",
    "job": "databricks_job.j",
}
CATALOG, SCHEMA, VOLUME, CONNECTION = "gen_cat", "raw", "landing", "gen_pg"
PIPELINE_NAME, JOB_NAME = "gen-pipeline", "gen-job"
NOTEBOOK = "/Shared/gen/etl"

WORDS = ["one", "two", "nightly load", "naïve ✓", "", "ops", "x" * 40]
KEYS = ["team", "env", "cost", "tier"]
VALUES = ["data", "ops", "a", "b", "prod", "dev"]
EMAILS = ["a@example.com", "b@example.com", "ops@example.com"]
CRONS = ["0 0 2 * * ?", "0 30 4 * * ?", "0 15 10 ? * MON-FRI"]
ZONES = ["UTC", "Europe/Berlin", "America/New_York"]
RUN_IF = ["ALL_SUCCESS", "ALL_DONE", "NONE_FAILED", "AT_LEAST_ONE_SUCCESS", "AT_LEAST_ONE_FAILED", "ALL_FAILED"]
ALERTS = ["on-update-success", "on-update-failure", "on-update-fatal-failure", "on-flow-failure"]
OWNERS = ["local-user@brickform.local", "someone@example.com", "data-admins"]
PREDICTIVE = ["ENABLE", "DISABLE", "INHERIT"]


def kv(rng, lo=0, hi=3):
    return {k: rng.choice(VALUES) for k in rng.sample(KEYS, rng.randint(lo, hi))}


def maybe(rng, obj, key, make, p=0.5):
    if rng.random() < p:
        obj[key] = make()


def gen_config(rng):
    """One configuration: every resource with a random subset of its optional fields."""
    c = {"name": CATALOG}
    maybe(rng, c, "comment", lambda: rng.choice(WORDS))
    maybe(rng, c, "properties", lambda: kv(rng))
    maybe(rng, c, "isolation_mode", lambda: rng.choice(["OPEN", "ISOLATED"]), 0.2)
    maybe(rng, c, "enable_predictive_optimization", lambda: rng.choice(PREDICTIVE), 0.2)
    maybe(rng, c, "owner", lambda: rng.choice(OWNERS), 0.2)
    maybe(rng, c, "force_destroy", lambda: rng.random() < 0.5, 0.3)

    s = {"catalog_name": Ref("databricks_catalog.c.name"), "name": SCHEMA}
    maybe(rng, s, "comment", lambda: rng.choice(WORDS))
    maybe(rng, s, "properties", lambda: kv(rng))
    maybe(rng, s, "enable_predictive_optimization", lambda: rng.choice(PREDICTIVE), 0.2)
    maybe(rng, s, "owner", lambda: rng.choice(OWNERS), 0.2)

    v = {"catalog_name": Ref("databricks_schema.s.catalog_name"), "schema_name": Ref("databricks_schema.s.name"),
         "name": VOLUME, "volume_type": "MANAGED"}
    maybe(rng, v, "comment", lambda: rng.choice(WORDS))
    maybe(rng, v, "owner", lambda: rng.choice(OWNERS), 0.2)

    conn = {"name": CONNECTION, "connection_type": "POSTGRESQL",
            "options": {"host": "db.example.com", "port": "5432", "user": "app", "password": "pw"}}
    maybe(rng, conn, "comment", lambda: rng.choice(WORDS), 0.3)
    maybe(rng, conn, "owner", lambda: rng.choice(OWNERS), 0.2)

    nb = {"path": NOTEBOOK + ".py", "content_base64": Ref('base64encode("print(1)\\n")')}

    p = {"name": PIPELINE_NAME, "catalog": Ref("databricks_catalog.c.name"), "schema": Ref("databricks_schema.s.name"),
         "library": [{"notebook": {"path": Ref("databricks_notebook.nb.path")}}]}
    if rng.random() < 0.7:
        p["serverless"] = True
    else:  # classic compute: clusters, whose node types the service fills in
        cluster = {"num_workers": rng.choice([0, 1, 2])}
        maybe(rng, cluster, "label", lambda: "default", 0.3)
        maybe(rng, cluster, "custom_tags", lambda: kv(rng, 1), 0.3)
        maybe(rng, cluster, "spark_conf", lambda: {"spark.x": rng.choice(VALUES)}, 0.3)
        p["cluster"] = [cluster]
    for flag in ["development", "continuous", "photon"]:
        maybe(rng, p, flag, lambda: rng.random() < 0.5, 0.3)
    maybe(rng, p, "channel", lambda: rng.choice(["CURRENT", "PREVIEW"]), 0.3)
    maybe(rng, p, "edition", lambda: rng.choice(["CORE", "PRO", "ADVANCED"]), 0.3)
    maybe(rng, p, "configuration", lambda: kv(rng, 1))
    maybe(rng, p, "tags", lambda: kv(rng, 1), 0.3)
    maybe(rng, p, "notification", lambda: [gen_pipeline_notification(rng)], 0.3)

    j = {"name": JOB_NAME}
    maybe(rng, j, "description", lambda: rng.choice(WORDS))
    maybe(rng, j, "timeout_seconds", lambda: rng.choice([0, 600, 3600]), 0.3)
    maybe(rng, j, "max_concurrent_runs", lambda: rng.choice([1, 2, 5]), 0.3)
    maybe(rng, j, "tags", lambda: kv(rng, 1), 0.4)
    if rng.random() < 0.8:
        sched = {"quartz_cron_expression": rng.choice(CRONS), "timezone_id": rng.choice(ZONES)}
        maybe(rng, sched, "pause_status", lambda: rng.choice(["PAUSED", "UNPAUSED"]), 0.4)
        j["schedule"] = sched
    maybe(rng, j, "email_notifications", lambda: gen_email(rng), 0.5)
    maybe(rng, j, "notification_settings",
          lambda: {"no_alert_for_skipped_runs": rng.random() < 0.5}, 0.2)
    maybe(rng, j, "queue", lambda: {"enabled": rng.random() < 0.5}, 0.2)
    maybe(rng, j, "parameter", lambda: [{"name": n, "default": rng.choice(VALUES)}
                                        for n in sorted(rng.sample(["env", "day", "limit"], rng.randint(1, 2)))], 0.3)
    tasks = [{"task_key": "ingest", "pipeline_task": {"pipeline_id": Ref("databricks_pipeline.p.id")}},
             {"task_key": "etl", "depends_on": [{"task_key": "ingest"}],
              "notebook_task": {"notebook_path": Ref("databricks_notebook.nb.path")}}]
    if rng.random() < 0.5:
        tasks.append({"task_key": "report", "depends_on": [{"task_key": "etl"}],
                      "notebook_task": {"notebook_path": Ref("databricks_notebook.nb.path")}})
    for t in tasks:
        gen_task_fields(rng, t)
    j["task"] = tasks
    return {"catalog": c, "schema": s, "volume": v, "connection": conn, "notebook": nb, "pipeline": p, "job": j}


def gen_pipeline_notification(rng):
    return {"email_recipients": rng.sample(EMAILS, rng.randint(1, 2)), "alerts": rng.sample(ALERTS, rng.randint(1, 2))}


def gen_email(rng):
    e = {}
    for k in ["on_failure", "on_success", "on_start"]:
        maybe(rng, e, k, lambda: rng.sample(EMAILS, rng.randint(1, 2)), 0.4)
    maybe(rng, e, "no_alert_for_skipped_runs", lambda: rng.random() < 0.5, 0.2)
    return e


def gen_task_fields(rng, t):
    maybe(rng, t, "description", lambda: rng.choice(WORDS), 0.2)
    maybe(rng, t, "timeout_seconds", lambda: rng.choice([0, 60, 1800]), 0.3)
    maybe(rng, t, "max_retries", lambda: rng.choice([0, 1, 3]), 0.3)
    maybe(rng, t, "min_retry_interval_millis", lambda: rng.choice([0, 1000]), 0.1)
    maybe(rng, t, "retry_on_timeout", lambda: rng.random() < 0.5, 0.1)
    if t.get("depends_on"):
        maybe(rng, t, "run_if", lambda: rng.choice(RUN_IF), 0.3)


def edit_config(rng, config):
    """The next step's configuration: some optional fields drawn again, others dropped."""
    fresh = gen_config(rng)
    out = {}
    for kind, body in config.items():
        new = fresh[kind]
        merged = {}
        for k in sorted(set(body) | set(new)):  # sorted: set order varies by process
            roll = rng.random()
            src = body if roll < 0.6 else new  # mostly unchanged
            if k in src:
                merged[k] = src[k]
        # The tasks the job has must stay consistent with their dependencies.
        if kind == "job":
            merged["task"] = body["task"] if rng.random() < 0.5 else new["task"]
        out[kind] = {k: merged[k] for k in sorted(merged)}
    return out


# ---------------------------------------------------------------- lifecycle settings

# The share of cases whose resources get `lifecycle { … }` settings.
LIFECYCLE_SHARE = 0.35

# What `ignore_changes` may name, per kind: attributes, nested block types, and paths into an
# attribute or a block (which cover the whole of it).
IGNORABLE = {
    "catalog": ["comment", "properties", 'properties["team"]', "owner", "isolation_mode",
                "enable_predictive_optimization"],
    "schema": ["comment", "properties", 'properties["env"]', "owner", "enable_predictive_optimization"],
    "volume": ["comment", "owner"],
    # Not `options`: it is sensitive, and brickform keeps no copy of a sensitive value, so it
    # cannot keep the object's when an update must send it (it warns); see SENSITIVE_IGNORES.
    "connection": ["comment", "owner"],
    "notebook": ["content_base64"],
    "pipeline": ["configuration", 'configuration["team"]', "notification", "tags", "development", "continuous",
                 "photon", "channel", "edition", "cluster", "name"],
    "job": ["schedule", "email_notifications", "tags", "description", "timeout_seconds", "max_concurrent_runs",
            "notification_settings", "queue", "parameter", "task", "task[0].timeout_seconds", "name"],
}

# Entries of `ignore_changes` that name a sensitive attribute (the schema's `sensitive` flag;
# `test_ignorable_names_no_sensitive_attribute` holds IGNORABLE to it), of which `validate`
# must warn. A few cases (`SENSITIVE_SHARE`, drawn by a generator of their own) put
# one into a step's configuration to check that warning.
SENSITIVE_IGNORES = {"connection": ["options", 'options["port"]']}
SENSITIVE_SHARE = 0.05

# What `replace_triggered_by` may name, per kind: only what comes before it in the graph
# (catalog, schema, volume / connection, notebook, pipeline, job), so there is no cycle.
TRIGGERS = {
    "schema": ["databricks_catalog.c.comment"],
    "volume": ["databricks_schema.s", "databricks_schema.s.comment", "databricks_catalog.c.properties"],
    "connection": ["databricks_catalog.c.comment"],
    "pipeline": ["databricks_notebook.nb", "databricks_notebook.nb.content_base64", "databricks_schema.s",
                 "databricks_schema.s.comment"],
    "job": ["databricks_notebook.nb", "databricks_notebook.nb.content_base64", "databricks_pipeline.p",
            "databricks_pipeline.p.configuration", "databricks_pipeline.p.name", "databricks_schema.s.comment"],
}

# Kinds whose objects cannot share a name: a `create_before_destroy` replacement of one would
# make its new object while the old one still holds the name (a pipeline can, with
# `allow_duplicate_names`). Jobs can.
UNIQUE_NAMES = {"catalog", "schema", "volume", "connection", "notebook", "pipeline"}


def same_name(rc):
    """Whether a replacement makes its new object under the name the old one has now (which
    a rename outside brickform may have changed): only then would a create first collide."""
    ch = (rc or {}).get("change") or {}
    before, after = ch.get("before") or {}, ch.get("after") or {}
    old, new = before.get("name"), after.get("name")
    if not isinstance(old, str) or not isinstance(new, str):
        return True
    return old.lower() == new.lower()


def unique_name(kind, body):
    return kind in UNIQUE_NAMES and not (kind == "pipeline" and body.get("allow_duplicate_names") is True)


def top_attr(path):
    """The attribute or block type a path of `ignore_changes` covers."""
    for i, ch in enumerate(path):
        if ch in '.[':
            return path[:i]
    return path


def ignored(body):
    """The attributes and block types `ignore_changes` covers (`all`: "all")."""
    ic = (body.get("lifecycle") or {}).get("ignore_changes")
    if ic == "all":
        return "all"
    return {top_attr(p) for p in ic or []}


def content_ignored(body):
    """Whether `ignore_changes` covers a content kind's content (`all` or `content_base64`)."""
    ign = ignored(body)
    return ign == "all" or "content_base64" in ign


def notebook_content(n):
    return Ref(f'base64encode("print({n})\\n")')


def gen_lifecycle(lrng, kind):
    lc = {}
    if lrng.random() < 0.6:
        lc["ignore_changes"] = "all" if lrng.random() < 0.15 else lrng.sample(
            IGNORABLE[kind], lrng.randint(1, min(3, len(IGNORABLE[kind]))))
    if kind in TRIGGERS and lrng.random() < 0.5:
        lc["replace_triggered_by"] = lrng.sample(TRIGGERS[kind], lrng.randint(1, min(2, len(TRIGGERS[kind]))))
    if lrng.random() < 0.3:
        lc["prevent_destroy"] = True
    # Valid for jobs, and for pipelines that allow duplicate names; elsewhere the plan must
    # refuse a replacement made that way.
    if lrng.random() < {"job": 0.35, "pipeline": 0.2}.get(kind, 0.08):
        lc["create_before_destroy"] = True
    if not lc:
        lc["prevent_destroy"] = lrng.random() < 0.5
    return lc


def edit_ignored(lrng, kind, body, attr):
    """Changes (or drops) what the configuration sets for an attribute it ignores."""
    if attr == "content_base64":
        body[attr] = notebook_content(lrng.randint(2, 9))
    elif attr == "name":
        body[attr] = {"job": JOB_NAME, "pipeline": PIPELINE_NAME}[kind] + "-v2"
    elif attr == "options":
        body[attr] = dict(body[attr], host="changed.example.com")
    elif attr == "cluster":
        return  # serverless or not is not something to flip here
    else:
        fresh = gen_config(lrng)[kind]
        if attr in fresh and fresh[attr] != body.get(attr):
            body[attr] = fresh[attr]
        elif attr == "task":
            body[attr] = copy.deepcopy(body[attr])
            body[attr][0]["timeout_seconds"] = lrng.choice([5, 50, 500])
        else:
            body.pop(attr, None)


def mutation_for(lrng, kind, attr):
    """A change made outside brickform to `attr` of `kind` (as `gen_mutation` makes them)."""
    if kind == "notebook":
        return {"kind": kind, "op": "content", "value": f"print({lrng.randint(10, 99)})\n"}
    if kind == "job":
        if attr in ("description", "timeout_seconds", "max_concurrent_runs"):
            if lrng.random() < 0.2:
                return {"kind": kind, "op": "remove", "field": attr}
            value = {"description": lambda: lrng.choice(WORDS), "timeout_seconds": lambda: lrng.choice([0, 120, 7200]),
                     "max_concurrent_runs": lambda: lrng.choice([1, 3, 7])}[attr]()
            return {"kind": kind, "op": "top", "field": attr, "value": value}
        if attr == "name":
            return {"kind": kind, "op": "rename", "value": JOB_NAME + "-renamed"}
        if attr == "task":
            op = lrng.choice(["task", "add_task", "remove_task"])
            if op == "task":
                return {"kind": kind, "op": op, "task": lrng.choice(["ingest", "etl"]),
                        "set": {"timeout_seconds": lrng.choice([30, 900]), "max_retries": lrng.choice([2, 5])}}
            return {"kind": kind, "op": op, "task": "extra" if op == "add_task" else lrng.choice(["etl", "report"])}
        if attr in ("schedule", "email_notifications", "tags") and lrng.random() < 0.2:
            return {"kind": kind, "op": "remove", "field": attr}
        op = {"email_notifications": "email"}.get(attr, attr)
    elif kind == "pipeline":
        if attr == "name":
            return {"kind": kind, "op": "rename", "value": PIPELINE_NAME + "-renamed"}
        if attr in ("development", "continuous", "photon", "channel", "edition"):
            if lrng.random() < 0.2:
                return {"kind": kind, "op": "remove", "field": attr}
            value = {"channel": lambda: lrng.choice(["CURRENT", "PREVIEW"]),
                     "edition": lambda: lrng.choice(["CORE", "PRO", "ADVANCED"]),
                     }.get(attr, lambda: lrng.random() < 0.5)()
            return {"kind": kind, "op": "set", "field": attr, "value": value}
        op = {"notification": "notifications"}.get(attr, attr)
    else:
        op = "update"
    # The rest as gen_mutation draws them, for this op (or field).
    for _ in range(200):
        m = gen_mutation(lrng)
        if m["kind"] == kind and (m["op"] == op if op != "update" else m.get("field") == attr):
            return m
    return None


def add_lifecycle(case, lrng):
    """Lifecycle settings on some resources of a case, with what puts them to work: edits of
    ignored attributes in the configuration (from the second step) and outside brickform, and
    changes to what `replace_triggered_by` names."""
    kinds = sorted(set(lrng.sample(["job", "job", "pipeline", "pipeline", "catalog", "schema", "volume",
                                    "connection", "notebook"], lrng.randint(1, 3))))
    duplicates = lrng.random() < 0.7  # a create_before_destroy pipeline allows duplicate names
    lcs = {}
    for i, step in enumerate(case["steps"]):
        config = step["config"]
        if i == 0 or lrng.random() < 0.25:  # mostly the same settings at every step
            lcs = {k: gen_lifecycle(lrng, k) for k in kinds}
        for k in kinds:
            config[k]["lifecycle"] = copy.deepcopy(lcs[k])
            if k == "pipeline" and lcs[k].get("create_before_destroy") and duplicates:
                config[k]["allow_duplicate_names"] = True
        for k in kinds:
            ign = ignored(config[k])
            attrs = [top_attr(p) for p in IGNORABLE[k]] if ign == "all" else sorted(ign)
            if ign == "all":
                attrs = lrng.sample(sorted(set(attrs)), min(2, len(set(attrs))))
            for a in attrs:
                if i > 0 and lrng.random() < 0.6:
                    edit_ignored(lrng, k, config[k], a)
                if lrng.random() < 0.6:
                    m = mutation_for(lrng, k, a)
                    if m:
                        step["mutations"].append(m)
            for t in config[k]["lifecycle"].get("replace_triggered_by", []):
                if lrng.random() < 0.5:
                    continue
                tkind = next(kk for kk, addr in ADDR.items() if t.startswith(addr))
                attr = t[len(ADDR[tkind]) + 1:] or lrng.choice(IGNORABLE[tkind])
                attr = top_attr(attr)
                if i > 0 and lrng.random() < 0.5:
                    edit_ignored(lrng, tkind, config[tkind], attr)
                else:
                    m = mutation_for(lrng, tkind, attr)
                    if m:
                        step["mutations"].append(m)


# ---------------------------------------------------------------- HCL


def hcl_value(v):
    if isinstance(v, Ref):
        return str(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False).replace("${", "$${").replace("%{", "%%{")
    if isinstance(v, list):
        return "[" + ", ".join(hcl_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {hcl_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(v)


def hcl_body(schema, body, indent):
    pad = "  " * indent
    lines = []
    for k, v in body.items():
        if k in schema.get("blocks", {}):
            inner = schema["blocks"][k]["block"]
            for item in (v if isinstance(v, list) else [v]):
                lines.append(f"{pad}{k} {{")
                lines.extend(hcl_body(inner, item, indent + 1))
                lines.append(f"{pad}}}")
        else:
            lines.append(f"{pad}{k} = {hcl_value(v)}")
    return lines


def hcl_lifecycle(lc, indent):
    pad = "  " * indent
    lines = [f"{pad}lifecycle {{"]
    for k, v in lc.items():
        if isinstance(v, list):  # attribute paths and references, written as they are
            v = "[" + ", ".join(v) + "]"
        lines.append(f"{pad}  {k} = {v if isinstance(v, str) else hcl_value(v)}")
    lines.append(f"{pad}}}")
    return lines


def hcl(schemas, config):
    out = ['variable "host" {}', 'provider "databricks" { host = var.host }', ""]
    for kind, body in config.items():
        rtype, name = ADDR[kind].split(".")
        out.append(f'resource "{rtype}" "{name}" {{')
        out.extend(hcl_body(schemas[rtype], {k: v for k, v in body.items() if k != "lifecycle"}, 1))
        if body.get("lifecycle"):
            out.extend(hcl_lifecycle(body["lifecycle"], 1))
        out.append("}")
        out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------- changes made with the SDK


def gen_mutation(rng):
    """One change made outside brickform, as data (applied by `apply_mutation`)."""
    kind = rng.choice(["job"] * 4 + ["pipeline"] * 3 + ["catalog", "schema", "volume", "connection"])
    if kind == "job":
        op = rng.choice(["top", "top", "remove", "tags", "schedule", "email", "notification_settings",
                         "task", "task", "add_task", "remove_task", "queue", "parameter", "rename"]
                        + (["delete"] if rng.random() < 0.3 else []))
        if op == "rename":
            return {"kind": kind, "op": op, "value": JOB_NAME + "-renamed"}
        if op == "delete":
            return {"kind": kind, "op": op}
        if op == "parameter":
            return {"kind": kind, "op": op, "name": rng.choice(["env", "day", "limit"]), "value": rng.choice(VALUES)}
        if op == "top":
            field, value = rng.choice([
                ("max_concurrent_runs", rng.choice([1, 3, 7])),
                ("timeout_seconds", rng.choice([0, 120, 7200])),
                ("description", rng.choice(WORDS)),
            ])
            return {"kind": kind, "op": op, "field": field, "value": value}
        if op == "remove":
            return {"kind": kind, "op": op, "field": rng.choice(
                ["description", "timeout_seconds", "email_notifications", "schedule", "tags", "max_concurrent_runs"])}
        if op == "tags":
            return {"kind": kind, "op": op, "set": kv(rng, 0, 2), "drop": rng.sample(KEYS, rng.randint(0, 2))}
        if op == "schedule":
            ch = {}
            maybe(rng, ch, "pause_status", lambda: rng.choice(["PAUSED", "UNPAUSED"]), 0.7)
            maybe(rng, ch, "quartz_cron_expression", lambda: rng.choice(CRONS), 0.3)
            maybe(rng, ch, "timezone_id", lambda: rng.choice(ZONES), 0.3)
            return {"kind": kind, "op": op, "set": ch}
        if op == "email":
            return {"kind": kind, "op": op, "value": gen_email(rng)}
        if op == "notification_settings":
            return {"kind": kind, "op": op, "value": {"no_alert_for_skipped_runs": rng.random() < 0.5,
                                                       "no_alert_for_canceled_runs": rng.random() < 0.5}}
        if op == "task":
            ch = {}
            while not ch:
                maybe(rng, ch, "timeout_seconds", lambda: rng.choice([0, 30, 900]))
                maybe(rng, ch, "max_retries", lambda: rng.choice([0, 2, 5]))
                maybe(rng, ch, "run_if", lambda: rng.choice(RUN_IF), 0.3)
                maybe(rng, ch, "description", lambda: rng.choice(WORDS), 0.3)
                maybe(rng, ch, "retry_on_timeout", lambda: rng.random() < 0.5, 0.2)
                maybe(rng, ch, "min_retry_interval_millis", lambda: rng.choice([0, 5000]), 0.2)
            return {"kind": kind, "op": op, "task": rng.choice(["ingest", "etl", "report"]), "set": ch}
        if op == "add_task":
            return {"kind": kind, "op": op, "task": "extra"}
        if op == "remove_task":
            return {"kind": kind, "op": op, "task": rng.choice(["etl", "report"])}
        return {"kind": kind, "op": "queue", "value": rng.random() < 0.5}
    if kind == "pipeline":
        op = rng.choice(["set", "set", "set", "configuration", "tags", "notifications", "remove", "cluster", "rename"]
                        + (["delete"] if rng.random() < 0.3 else []))
        if op == "rename":
            return {"kind": kind, "op": op, "value": PIPELINE_NAME + "-renamed"}
        if op == "delete":
            return {"kind": kind, "op": op}
        if op == "cluster":
            ch = {}
            while not ch:
                maybe(rng, ch, "num_workers", lambda: rng.choice([0, 1, 3]))
                maybe(rng, ch, "spark_conf", lambda: {"spark.y": rng.choice(VALUES)}, 0.3)
                maybe(rng, ch, "node_type_id", lambda: rng.choice(["i3.xlarge", "m5.large"]), 0.3)
            return {"kind": kind, "op": op, "set": ch}
        if op == "set":
            field, value = rng.choice([
                ("development", rng.random() < 0.5),
                ("continuous", rng.random() < 0.5),
                ("photon", rng.random() < 0.5),
                ("channel", rng.choice(["CURRENT", "PREVIEW"])),
                ("edition", rng.choice(["CORE", "PRO", "ADVANCED"])),
            ])
            return {"kind": kind, "op": op, "field": field, "value": value}
        if op in ("configuration", "tags"):
            return {"kind": kind, "op": op, "set": kv(rng, 0, 2), "drop": rng.sample(KEYS, rng.randint(0, 2))}
        if op == "notifications":
            return {"kind": kind, "op": op, "value": [gen_pipeline_notification(rng)] if rng.random() < 0.8 else []}
        return {"kind": kind, "op": op, "field": rng.choice(
            ["development", "continuous", "photon", "channel", "edition", "configuration", "notifications"])}
    fields = {
        "catalog": ["comment", "properties", "owner", "isolation_mode", "enable_predictive_optimization"],
        "schema": ["comment", "properties", "owner", "enable_predictive_optimization"],
        "volume": ["comment", "owner"],
        "connection": ["owner", "options"],
    }[kind]
    if kind in ("volume", "connection") and rng.random() < 0.1:
        return {"kind": kind, "op": "delete"}
    field = rng.choice(fields)
    value = {
        "comment": lambda: rng.choice(WORDS),
        "properties": lambda: {"set": kv(rng, 0, 2), "drop": rng.sample(KEYS, rng.randint(0, 2))},
        "owner": lambda: rng.choice(OWNERS),
        "isolation_mode": lambda: rng.choice(["OPEN", "ISOLATED"]),
        "enable_predictive_optimization": lambda: rng.choice(PREDICTIVE),
        "options": lambda: {"host": rng.choice(["db.example.com", "other.example.com"]),
                            "port": rng.choice(["5432", "6543"]), "user": "app", "password": "pw"},
    }[field]()
    return {"kind": kind, "op": "update", "field": field, "value": value}


def patched_map(current, m):
    out = dict(current or {})
    for k in m["drop"]:
        out.pop(k, None)
    out.update(m["set"])
    return out


def find_job(w, must=True):
    """The one job (under its name or the name it was given outside brickform)."""
    jobs = [j for j in w.jobs.list()]
    if not must and not jobs:
        return None
    assert len(jobs) == 1, f"jobs: {[(j.job_id, j.settings.name) for j in jobs]}"
    return jobs[0].job_id


def find_pipeline(w, must=True):
    ps = list(w.pipelines.list_pipelines())
    if not must and not ps:
        return None
    assert len(ps) == 1, f"pipelines: {[(p.pipeline_id, p.name) for p in ps]}"
    return ps[0].pipeline_id


def pipeline_put(w, pid, edit):
    """What the UI's pipeline settings editor does: read the whole spec, change it, PUT it."""
    got = w.pipelines.get(pid)
    spec = got.spec.as_dict()
    edit(spec)
    new = PipelineSpec.from_dict(spec)
    params = inspect.signature(w.pipelines.update).parameters
    kwargs = {k: getattr(new, k) for k in params if k != "pipeline_id" and hasattr(new, k)
              and getattr(new, k) is not None}
    w.pipelines.update(pid, expected_last_modified=got.last_modified, **kwargs)


def apply_mutation(w, m):
    kind, op = m["kind"], m["op"]
    if kind == "notebook":  # what the editor's save does
        w.workspace.import_(NOTEBOOK, content=base64.b64encode(m["value"].encode()).decode(),
                            format=ImportFormat.SOURCE, language=Language.PYTHON, overwrite=True)
        return None
    if kind == "job":
        jid = find_job(w, must=False)
        if jid is None:
            return "skipped: the job was deleted"
        settings = w.jobs.get(jid).settings.as_dict()
        if op == "delete":
            w.jobs.delete(jid)
        elif op == "rename":
            w.jobs.update(jid, new_settings=JobSettings(name=m["value"]))
        elif op == "parameter":
            params = [x for x in settings.get("parameters", []) if x["name"] != m["name"]]
            params.append({"name": m["name"], "default": m["value"]})
            w.jobs.update(jid, new_settings=JobSettings.from_dict({"parameters": params}))
        elif op == "top":
            w.jobs.update(jid, new_settings=JobSettings.from_dict({m["field"]: m["value"]}))
        elif op == "remove":
            w.jobs.update(jid, fields_to_remove=[m["field"]])
        elif op == "tags":
            w.jobs.update(jid, new_settings=JobSettings(tags=patched_map(settings.get("tags"), m)))
        elif op == "schedule":
            sched = dict(settings.get("schedule") or {"quartz_cron_expression": CRONS[0], "timezone_id": "UTC"})
            sched.update(m["set"])
            w.jobs.update(jid, new_settings=JobSettings.from_dict({"schedule": sched}))
        elif op == "email":
            w.jobs.update(jid, new_settings=JobSettings.from_dict({"email_notifications": m["value"]}))
        elif op == "notification_settings":
            w.jobs.update(jid, new_settings=JobSettings.from_dict({"notification_settings": m["value"]}))
        elif op == "queue":
            w.jobs.update(jid, new_settings=JobSettings.from_dict({"queue": {"enabled": m["value"]}}))
        elif op == "task":
            task = next((t for t in settings.get("tasks", []) if t["task_key"] == m["task"]), None)
            if task is None:
                return "skipped: no such task"
            if "run_if" in m["set"] and not task.get("depends_on"):
                return "skipped: run_if on a task without dependencies"
            task.update(m["set"])
            w.jobs.update(jid, new_settings=JobSettings(tasks=[Task.from_dict(task)]))
        elif op == "add_task":
            if any(t["task_key"] == m["task"] for t in settings.get("tasks", [])):
                return "skipped: task exists"
            w.jobs.update(jid, new_settings=JobSettings(tasks=[Task.from_dict(
                {"task_key": m["task"], "notebook_task": {"notebook_path": NOTEBOOK}})]))
        elif op == "remove_task":
            tasks = settings.get("tasks", [])
            if not any(t["task_key"] == m["task"] for t in tasks):
                return "skipped: no such task"
            if any(d["task_key"] == m["task"] for t in tasks for d in t.get("depends_on", [])):
                return "skipped: another task depends on it"
            w.jobs.update(jid, fields_to_remove=[f"tasks/{m['task']}"])
        return None
    if kind == "pipeline":
        pid = find_pipeline(w, must=False)
        if pid is None:
            return "skipped: the pipeline was deleted"
        if op == "delete":
            w.pipelines.delete(pid)
            return None
        if op == "cluster" and not w.pipelines.get(pid).spec.clusters:
            return "skipped: a serverless pipeline"

        def edit(spec):
            if op == "rename":
                spec["name"] = m["value"]
            elif op == "cluster":
                spec["clusters"][0].update(m["set"])
            elif op == "set":
                spec[m["field"]] = m["value"]
            elif op in ("configuration", "tags"):
                new = patched_map(spec.get(op), m)
                if op == "tags" and "brickform" in (spec.get("tags") or {}):
                    new["brickform"] = spec["tags"]["brickform"]
                spec[op] = new
            elif op == "notifications":
                spec["notifications"] = m["value"]
            elif op == "remove":
                spec.pop(m["field"], None)

        pipeline_put(w, pid, edit)
        return None
    if kind in ("volume", "connection"):
        try:
            (w.volumes.read if kind == "volume" else w.connections.get)(
                f"{CATALOG}.{SCHEMA}.{VOLUME}" if kind == "volume" else CONNECTION)
        except NotFound:
            return "skipped: deleted"
    api, name = {
        "catalog": (w.catalogs, CATALOG),
        "schema": (w.schemas, f"{CATALOG}.{SCHEMA}"),
        "volume": (w.volumes, f"{CATALOG}.{SCHEMA}.{VOLUME}"),
        "connection": (w.connections, CONNECTION),
    }[kind]
    if m["op"] == "delete":
        try:
            api.delete(name)
        except NotFound:
            return "skipped: already gone"
        return None
    field, value = m["field"], m["value"]
    if field == "properties":
        current = (w.catalogs.get(name) if kind == "catalog" else w.schemas.get(name)).properties
        value = patched_map(current, value)
    if field == "isolation_mode":
        value = CatalogIsolationMode(value)
    if field == "enable_predictive_optimization":
        value = EnablePredictiveOptimization(value)
    if kind == "connection" and field == "owner":
        # A connection's PATCH needs its options every time.
        api.update(name, options={"host": "db.example.com", "port": "5432", "user": "app", "password": "pw"},
                   owner=value)
    else:
        api.update(name, **{field: value})
    return None


# ---------------------------------------------------------------- the live objects, shaped like the plan

# Wire names of HCL names (the Jobs and Pipelines APIs name repeated blocks in the plural).
JOB_RENAMES = {
    (): {"task": "tasks", "parameter": "parameters", "job_cluster": "job_clusters", "environment": "environments"},
    ("task",): {"library": "libraries"},
    ("health",): {"rule": "rules"},
    ("task", "health"): {"rule": "rules"},
    ("git_source",): {"url": "git_url", "provider": "git_provider", "branch": "git_branch", "tag": "git_tag",
                      "commit": "git_commit"},
}
PIPELINE_RENAMES = {(): {"cluster": "clusters", "library": "libraries", "notification": "notifications"}}

# Attributes with no counterpart in the service: brickform-only settings (what destroy does),
# values sent but never returned, and addresses brickform builds itself from the host.
NO_COUNTERPART = {
    "databricks_catalog": {"force_destroy"},
    "databricks_schema": {"force_destroy"},
    "databricks_pipeline": {"cascade", "allow_duplicate_names", "url"},
    "databricks_job": {"url"},
    "databricks_notebook": set(),
}


def shape(schema, wire, renames, path=()):
    """A wire object laid out as the plan lays out the HCL object: every attribute and block of
    the schema, by its HCL name; a missing key is absent (distinct from null)."""
    names = renames.get(path, {})
    out = {}
    for a in schema.get("attributes", {}):
        wn = names.get(a, a)
        if wn in wire:
            out[a] = wire[wn]
    for b, bt in schema.get("blocks", {}).items():
        wn = names.get(b, b)
        if wn not in wire or wire[wn] is None:
            continue
        v = wire[wn]
        inner = bt["block"]
        if bt["nesting"] == "single":
            out[b] = shape(inner, v, renames, path + (b,)) if isinstance(v, dict) else v
        else:
            out[b] = [shape(inner, x, renames, path + (b,)) if isinstance(x, dict) else x for x in v]
    return out


def strip_owner_tag(obj):
    tags = dict(obj.get("tags") or {})
    tags.pop("brickform", None)
    obj["tags"] = tags or None


def live_objects(w, schemas, must=True):
    """Every managed object as the service holds it now (absent: None, unless `must`)."""
    out = {}
    jid = find_job(w, must=must)
    if jid is None:
        out["job"] = None
    else:
        job = w.jobs.get(jid).as_dict()
        j = shape(schemas["databricks_job"], job.get("settings", {}), JOB_RENAMES)
        strip_owner_tag(j)
        j["id"] = str(job["job_id"])
        for k in ["creator_user_name", "run_as_user_name"]:
            if k in job:
                j[k] = job[k]
        out["job"] = j

    pid = find_pipeline(w, must=must)
    if pid is None:
        out["pipeline"] = None
    else:
        pipe = w.pipelines.get(pid).as_dict()
        view = dict(pipe.get("spec", {}))
        for k in ["parameters", "run_as"]:  # the API answers these at the top level
            if k in pipe:
                view[k] = pipe[k]
        p = shape(schemas["databricks_pipeline"], view, PIPELINE_RENAMES)
        strip_owner_tag(p)
        p["id"] = pipe["pipeline_id"]
        for k in ["state", "health", "last_modified", "creator_user_name", "run_as_user_name"]:
            if k in pipe:
                p[k] = pipe[k]
        out["pipeline"] = p

    for kind, get, name in [
        ("catalog", w.catalogs.get, CATALOG),
        ("schema", w.schemas.get, f"{CATALOG}.{SCHEMA}"),
        ("volume", w.volumes.read, f"{CATALOG}.{SCHEMA}.{VOLUME}"),
        ("connection", w.connections.get, CONNECTION),
    ]:
        try:
            info = get(name).as_dict()
        except NotFound:
            if must:
                raise
            out[kind] = None
            continue
        o = shape(schemas["databricks_" + kind], info, {})
        o["id"] = info.get("full_name")
        if kind == "volume":
            # A volume's files live under /Volumes/<catalog>/<schema>/<volume>.
            o["volume_path"] = "/Volumes/" + info["full_name"].replace(".", "/")
        out[kind] = o
    try:
        status = w.workspace.get_status(NOTEBOOK).as_dict()
        content = w.workspace.export(NOTEBOOK, format=ExportFormat.SOURCE).content
        out["notebook"] = {"path": status.get("path"), "object_id": status.get("object_id"),
                           "content_base64": content}
    except NotFound:
        if must:
            raise
        out["notebook"] = None
    return out


def identity(kind, obj):
    """What tells one object of a kind from another made again under the same name."""
    if obj is None:
        return None
    key = {"catalog": "storage_location", "schema": "schema_id", "volume": "volume_id",
           "connection": "connection_id", "notebook": "object_id"}.get(kind, "id")
    return obj.get(key)


# ---------------------------------------------------------------- comparison

MISSING = object()

# Connection options the service never returns on read.
WITHHELD_OPTIONS = {"password", "user"}


def empty(v):
    return v is None or v is MISSING or v == [] or v == {}


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same(attr, after, live):
    """Whether the service holding `live` is what a plan saying `after` promised. The genuine
    equivalences only: a number is a number whatever its JSON form; the service leaves out
    empty lists and maps and values equal to its default (the schema's server_default), and an
    unset value (null) is the one the service holds by default; an empty text is no text."""
    if number(after) and number(live):
        return after == live
    if after == live:
        return True
    if empty(after) and empty(live):
        return True
    if attr.get("type") == "string" and after in (None, "") and live in (None, "", MISSING):
        # An empty text is no text: clearing a comment sends "" (a PATCH has no other way),
        # and the service may answer "" or leave it out.
        return True
    default = attr.get("server_default")
    if default is not None:
        if live is MISSING or live is None:
            return after == default
        if after is None:
            return live == default
    return False


def compare_object(schema, after, unknown, sensitive, live, path, problems, skip=frozenset()):
    """Every known attribute of `after` against `live`, recursively; appends mismatches."""
    unknown = unknown if isinstance(unknown, dict) else {}
    sensitive = sensitive if isinstance(sensitive, dict) else {}
    for name, attr in schema.get("attributes", {}).items():
        if name in skip or name not in after or unknown.get(name) is True or sensitive.get(name) is True:
            continue
        if attr.get("sensitive"):
            continue
        got = live.get(name, MISSING)
        if isinstance(unknown.get(name), (list, dict)) and not empty(after[name]):
            # Partly unknown (a list with unknown elements): the plan promises no value yet.
            continue
        if not same(attr, after[name], got):
            problems.append((path + [name], after[name], None if got is MISSING else got))
    for name, bt in schema.get("blocks", {}).items():
        if name not in after or unknown.get(name) is True:
            continue
        compare_block(bt, after[name], unknown.get(name), sensitive.get(name), live.get(name, MISSING),
                      path + [name], problems)


def defaults_only(schema, obj):
    """A block object holding only what the service holds by default."""
    problems = []
    compare_object(schema, obj, {}, {}, {}, [], problems)
    return not problems


def single(v):
    """A single block as the plan JSON lays it out (a list of at most one, as the Terraform
    provider does), as the object it is."""
    return (v[0] if v else None) if isinstance(v, list) else v


def compare_block(bt, after, unknown, sensitive, live, path, problems):
    inner = bt["block"]
    if bt["nesting"] == "single":
        after, unknown, sensitive = single(after), single(unknown), single(sensitive)
        if empty(after) and isinstance(unknown, dict) and any(u not in (False, None, {}, []) for u in unknown.values()):
            return  # all it holds is known only after apply (a task's pipeline_id when the pipeline is made anew)
        if empty(after):
            if not (empty(live) or defaults_only(inner, live)):
                problems.append((path, after, live))
            return
        if empty(live):
            if not defaults_only(inner, after):
                problems.append((path, after, None))
            return
        compare_object(inner, after, unknown, sensitive, live, path, problems)
        return
    items_a = after or []
    items_l = [] if empty(live) else live
    unknown = unknown if isinstance(unknown, list) else []
    sensitive = sensitive if isinstance(sensitive, list) else []
    if isinstance(bt["nesting"], dict):
        key = bt["nesting"]["keyed_by"]
        ka = [a.get(key) for a in items_a]
        kl = [x.get(key) for x in items_l]
        if sorted(map(str, ka)) != sorted(map(str, kl)):
            problems.append((path + [f"[{key}s]"], ka, kl))
            return
        by_key = {x.get(key): x for x in items_l}
        for i, a in enumerate(items_a):
            compare_object(inner, a, unknown[i] if i < len(unknown) else {},
                           sensitive[i] if i < len(sensitive) else {}, by_key[a.get(key)],
                           path + [a.get(key)], problems)
        return
    if len(items_a) != len(items_l):
        problems.append((path, items_a, items_l))
        return
    for i, (a, x) in enumerate(zip(items_a, items_l)):
        compare_object(inner, a, unknown[i] if i < len(unknown) else {},
                       sensitive[i] if i < len(sensitive) else {}, x, path + [i], problems)


def check_plan(schemas, plan, live, config, content_unread=False, objects=True):
    """The plan's `after` against what the service holds (`live`). `content_unread`: the
    notebook's content was changed outside brickform under `ignore_changes = all` (see
    run_case). `objects=False` (a normalising service, whose answers differ from what it holds
    by design): only the notebook's content and the connection's options, which it does not
    rewrite."""
    problems = []
    kinds = {v: k for k, v in ADDR.items()}
    for rc in plan["resource_changes"]:
        kind = kinds.get(rc["address"])
        if kind is None:
            continue
        rtype = rc["type"]
        schema = schemas[rtype]
        ch = rc["change"]
        if ch["after"] is None:
            problems.append(([rc["address"]], "deleted", "exists"))
            continue
        obj_problems = []
        if kind == "notebook":
            # The content, as the export answers it (the rest has no counterpart in the SDK).
            if content_unread and content_ignored(config["notebook"]):
                # KNOWN GAP, excluded on purpose: with `ignore_changes` covering a content kind's
                # content (`all` or `content_base64`)
                # (notebook, workspace file, volume file), after a change of the content made
                # outside brickform the plan's after.content_base64 is the content last applied,
                # not what the service holds: brickform does not read content back. Only this
                # comparison is skipped, only then; every other check of the step still runs.
                continue
            after = ch["after"].get("content_base64")
            if after is not None and after != live[kind]["content_base64"]:
                problems.append(([rc["address"], "content_base64"], after, live[kind]["content_base64"]))
            continue
        if not objects:
            continue
        compare_object(schema, ch["after"], ch.get("after_unknown"), ch.get("after_sensitive"), live[kind], [],
                       obj_problems, skip=NO_COUNTERPART.get(rtype, set()))
        # Each field change's `after`, at its path.
        for f in ch.get("fields", []):
            if f.get("sensitive") or f.get("after_unknown") not in (False, None, {}, []):
                continue
            top = f["path"][0]
            if top in NO_COUNTERPART.get(rtype, set()) or len(f["path"]) != 1:
                continue
            attr = schema.get("attributes", {}).get(top)
            if attr is not None:
                if not same(attr, f["after"], live[kind].get(top, MISSING)):
                    obj_problems.append((["fields", top], f["after"], live[kind].get(top)))
            else:
                sub = []
                compare_block(schema["blocks"][top], f["after"], None, None, live[kind].get(top, MISSING),
                              ["fields", top], sub)
                obj_problems.extend(sub)
        problems.extend(([rc["address"]] + p, a, b) for p, a, b in obj_problems)
    # The connection's options are write-only (sensitive, never in the plan); the service
    # returns those that are not secrets (it withholds the password and the user), and they
    # must be the configured ones.
    conn = live["connection"].get("options") or {}
    ign = ignored(config["connection"])
    for k, v in ({} if ign == "all" or "options" in ign else config["connection"]["options"]).items():
        if k not in WITHHELD_OPTIONS and conn.get(k) != v:
            problems.append(([ADDR["connection"], "options", k], v, conn.get(k)))
    return problems


# ---------------------------------------------------------------- what apply sent (normalising cases)

UC_KINDS = {"catalogs": "catalog", "schemas": "schema", "volumes": "volume", "connections": "connection"}
UC_NAMES = {"catalog": CATALOG, "schema": f"{CATALOG}.{SCHEMA}", "volume": f"{CATALOG}.{SCHEMA}.{VOLUME}",
            "connection": CONNECTION}


class Write:
    """One write request of an apply, shaped like the plan: `view` (HCL names, the ownership
    tag left out), `removed` (HCL names it clears: a job update's fields_to_remove, with
    `task/KEY` for a task), `partial` (a job update: its tasks and parameters are merged by
    key into those the job has)."""

    def __init__(self, kind, op, view, removed=(), partial=False):
        self.kind, self.op, self.view, self.removed, self.partial = kind, op, view, list(removed), partial

    def __repr__(self):
        return f"{self.op} {self.kind} {json.dumps(self.view, ensure_ascii=False)}" + (
            f" removing {self.removed}" if self.removed else "")


def writes_of(schemas, requests):
    """The writes of the managed objects among the logged requests, in order. Covered: the Unity
    Catalog creates (POST) and updates (PATCH) of the catalog, schema, volume and connection;
    the notebook's imports (its content); the pipeline's create (POST) and update (PUT, the
    whole spec); the job's create, reset (the whole settings) and update (partial)."""
    out = []
    for q in requests:
        body, path, method = q.get("body"), q["path"], q["method"]
        status = q.get("status")
        if not isinstance(body, dict) or not isinstance(status, int) or not 200 <= status < 300:
            continue
        parts = path.strip("/").split("/")
        if parts[:3] == ["api", "2.1", "unity-catalog"] and len(parts) >= 4 and parts[3] in UC_KINDS:
            kind = UC_KINDS[parts[3]]
            if method == "POST" and len(parts) == 4:
                name = ".".join(body.get(k, "") for k in ("catalog_name", "schema_name") if k in body)
                if (name + "." if name else "") + body.get("name", "") != UC_NAMES[kind]:
                    continue
                out.append(Write(kind, "create", shape(schemas["databricks_" + kind], body, {})))
            elif method == "PATCH" and len(parts) == 5 and parts[4] == UC_NAMES[kind]:
                out.append(Write(kind, "update", shape(schemas["databricks_" + kind], body, {})))
        elif path == "/api/2.0/workspace/import" and method == "POST" and body.get("path") == NOTEBOOK:
            out.append(Write("notebook", "write", {"content_base64": body.get("content")}))
        elif parts[:3] == ["api", "2.0", "pipelines"] and len(parts) <= 4 and not body.get("dry_run"):
            if method == "POST" and len(parts) == 3:
                op = "create"
            elif method == "PUT" and len(parts) == 4:
                op = "update"
            else:
                continue
            view = shape(schemas["databricks_pipeline"], body, PIPELINE_RENAMES)
            if "tags" in view:
                strip_owner_tag(view)
            out.append(Write("pipeline", op, view))
        elif len(parts) == 4 and parts[:2] == ["api", parts[1]] and parts[2] == "jobs" and method == "POST" \
                and parts[3] in ("create", "reset", "update"):
            settings = body if parts[3] == "create" else body.get("new_settings") or {}
            view = shape(schemas["databricks_job"], settings, JOB_RENAMES)
            if "tags" in view:
                strip_owner_tag(view)
            removed = []
            for f in body.get("fields_to_remove") or []:
                head, _, key = f.partition("/")
                names = {v: k for k, v in JOB_RENAMES[()].items()}
                removed.append(names.get(head, head) + (f"/{key}" if key else ""))
            out.append(Write("job", {"create": "create", "reset": "update", "update": "update"}[parts[3]], view,
                             removed, partial=parts[3] == "update"))
    return out


def keyed(bt):
    return bt["nesting"]["keyed_by"] if isinstance(bt.get("nesting"), dict) else None


def merged_writes(schema, writes):
    """What a series of writes of one object left it with, as far as they tell: later values
    over earlier ones; a partial write's keyed blocks merged by key. Returns (view, removed,
    partial): the top-level names cleared, and the keyed blocks known only in part."""
    view, removed, partial = {}, set(), set()
    for wr in writes:
        if wr.op == "create":
            view, removed, partial = {}, set(), set()
        for r in wr.removed:
            head, _, key = r.partition("/")
            if key and head in view:
                bt = schema["blocks"][head]
                view[head] = [x for x in view[head] if str(x.get(keyed(bt))) != key]
            elif not key:
                view.pop(head, None)
                removed.add(head)
        for k, v in wr.view.items():
            bt = schema.get("blocks", {}).get(k)
            if wr.partial and bt is not None and keyed(bt):
                key = keyed(bt)
                if k not in view:
                    partial.add(k)
                items = {str(x.get(key)): x for x in view.get(k) or []}
                items.update({str(x.get(key)): x for x in v or []})
                view[k] = list(items.values())
            else:
                view[k] = v
                partial.discard(k)
            removed.discard(k)
    return view, removed, partial


def compare_value(schema, name, after, unknown, sensitive, sent, path, problems, partial=False):
    """`after` (the plan's) against `sent`, an attribute or block type of `schema`; a block
    keyed by a name known only in part (`partial`) in the items sent."""
    if name in schema.get("attributes", {}):
        if not same(schema["attributes"][name], after, sent):
            problems.append((path, after, None if sent is MISSING else sent))
        return
    bt = schema["blocks"][name]
    if partial and keyed(bt):
        key = keyed(bt)
        by_key = {str(a.get(key)): (i, a) for i, a in enumerate(after or [])}
        for x in sent or []:
            k = str(x.get(key))
            if k not in by_key:
                problems.append((path + [k], None, x))
                continue
            i, a = by_key[k]
            compare_object(bt["block"], a, unknown[i] if isinstance(unknown, list) and i < len(unknown) else {},
                           sensitive[i] if isinstance(sensitive, list) and i < len(sensitive) else {}, x,
                           path + [k], problems)
        return
    compare_block(bt, after, unknown, sensitive, sent, path, problems)


def restrict(schema, after, conf):
    """The parts of a plan's object `after` the configuration object `conf` sets (recursively
    into its blocks; items of a block keyed by a name matched by key, others by place): the
    rest of an after holds what brickform read, which apply need not send."""
    if not isinstance(after, dict) or not isinstance(conf, dict):
        return after
    out = {}
    for k, v in after.items():
        if k not in conf:
            continue
        bt = schema.get("blocks", {}).get(k)
        if bt is None:
            out[k] = v
            continue
        inner, c = bt["block"], conf[k]
        if bt["nesting"] == "single":
            c = single(c) if isinstance(c, list) else c
            out[k] = [restrict(inner, x, c) for x in v] if isinstance(v, list) else restrict(inner, v, c)
        elif keyed(bt):
            key = keyed(bt)
            by_key = {str(x.get(key)): x for x in c or []}
            out[k] = [restrict(inner, x, by_key[str(x.get(key))]) if isinstance(x, dict) and str(x.get(key)) in by_key
                      else x for x in v or []]
        else:
            c = c if isinstance(c, list) else [c]
            out[k] = [restrict(inner, x, c[i]) if i < len(c) else x for i, x in enumerate(v or [])]
    return out


# Who the local workspace says makes every object (and so owns it when no owner is sent).
CREATOR = "local-user@brickform.local"


def check_sent(schemas, plan, config, writes, content_unread=False):
    """What apply sent against the plan's `after`, for every attribute the configuration sets
    (not the sensitive ones, which the log redacts, nor those with no counterpart in the
    service): what a create sent (with the writes that followed it) must be the plan's after,
    a value left out being the service's default; what an update sent must be the after too,
    and every attribute the plan changes must be sent (or cleared)."""
    problems = []
    kinds = {v: k for k, v in ADDR.items()}
    for rc in plan["resource_changes"]:
        kind = kinds.get(rc["address"])
        acts = rc["change"]["actions"]
        if kind is None or not ({"create", "update"} & set(acts)):
            continue
        rtype = rc["type"]
        schema = schemas[rtype]
        ch = rc["change"]
        after, unknown, sens = ch["after"] or {}, ch.get("after_unknown") or {}, ch.get("after_sensitive") or {}
        mine = [wr for wr in writes if wr.kind == kind]
        creating = "create" in acts
        if creating and not any(wr.op in ("create", "write") for wr in mine):
            problems.append(([rc["address"]], f"planned {acts}", f"no create sent: {mine}"))
            continue
        view, removed, partial = merged_writes(schema, mine)
        full = after
        after = restrict(schema, after, config[kind])
        if not creating:
            # What ignore_changes covers is sent as the object keeps it, whatever part of it
            # the configuration writes (an empty block keeps the recipients the object has).
            for name in ignored_names(schemas, kind, config[kind]):
                if name in full:
                    after[name] = full[name]
        changed = {f["path"][0] for f in ch.get("fields", []) if f.get("path")}
        configured = {"content_base64"} if kind == "notebook" else set(config[kind]) - {"lifecycle"}
        if kind == "notebook" and content_unread and content_ignored(config["notebook"]):
            configured = set()  # the known gap check_plan names: the after is not what the service holds
        for name in sorted(configured):
            if name in NO_COUNTERPART.get(rtype, set()) or name not in after or unknown.get(name) is True:
                continue
            if schema.get("attributes", {}).get(name, {}).get("sensitive") or sens.get(name) is True:
                continue
            if name in view:
                sent = view[name]
            elif name == "owner" and creating and after[name] == CREATOR:
                continue  # the maker owns what it makes: no owner to send
            elif name in removed or creating:
                sent = MISSING
            else:
                if name in changed:
                    problems.append(([rc["address"], name], after[name], f"planned to change, not sent: {mine}"))
                continue
            sub = []
            compare_value(schema, name, after[name], unknown.get(name), sens.get(name), sent,
                          [rc["address"], name], sub, partial=name in partial)
            problems.extend((p, a, b if b is not MISSING else None) for p, a, b in sub)
    return problems


def check_ignored_writes(schemas, plan, config, writes, before):
    """An update writes no attribute `ignore_changes` covers with a value other than the one
    the object had (a value equal to it, as a whole-spec PUT sends, is no change)."""
    problems = []
    for kind, body in config.items():
        if actions(plan, ADDR[kind]) != ["update"] or before.get(kind) is None:
            continue
        schema = schemas["databricks_" + kind]
        names = ignored_names(schemas, kind, body)
        b = before[kind]
        for wr in writes:
            if wr.kind != kind:
                continue
            for n in sorted(names):
                if n in wr.removed and not empty(b.get(n)):
                    problems.append(f"{ADDR[kind]}.{n} is in ignore_changes, but apply cleared it: {wr}")
                if n not in wr.view:
                    continue
                sent = wr.view[n]
                bt = schema.get("blocks", {}).get(n)
                if wr.partial and bt is not None and keyed(bt):
                    items = {str(x.get(keyed(bt))): x for x in b.get(n) or []}
                    items.update({str(x.get(keyed(bt))): x for x in sent or []})
                    sent = list(items.values())
                if not unchanged(schema, n, b.get(n), sent):
                    problems.append(f"{ADDR[kind]}.{n} is in ignore_changes, but apply wrote "
                                    f"{json.dumps(wr.view[n], ensure_ascii=False)} over "
                                    f"{json.dumps(b.get(n), ensure_ascii=False)}")
    return problems


def check_deletes(plan, requests, before):
    """No delete request for a managed object the plan does not delete (or replace)."""
    problems = []
    ids = {k: (before.get(k) or {}).get("id") for k in ("job", "pipeline")}
    for q in requests:
        path, method, body = q["path"], q["method"], q.get("body") or {}
        parts = path.strip("/").split("/")
        kind = None
        if method == "DELETE" and parts[:3] == ["api", "2.1", "unity-catalog"] and len(parts) == 5 \
                and parts[3] in UC_KINDS and parts[4] == UC_NAMES[UC_KINDS[parts[3]]]:
            kind = UC_KINDS[parts[3]]
        elif method == "DELETE" and parts[:3] == ["api", "2.0", "pipelines"] and len(parts) == 4:
            kind = "pipeline"
        elif method == "POST" and len(parts) == 4 and parts[2:] == ["jobs", "delete"]:
            kind = "job"
        elif method == "POST" and path == "/api/2.0/workspace/delete" and body.get("path") == NOTEBOOK:
            kind = "notebook"
        if kind and "delete" not in actions(plan, ADDR[kind]):
            problems.append(f"{ADDR[kind]}: the plan says {actions(plan, ADDR[kind])}, but apply sent "
                            f"{method} {path} {json.dumps(q.get('body'))} (before: {ids.get(kind)})")
    return problems


# ---------------------------------------------------------------- driving brickform


class Failure(AssertionError):
    pass


def bf(d, url, *args, ok=(0,)):
    env = dict(os.environ, DATABRICKS_TOKEN=TOKEN, NO_COLOR="1")
    r = subprocess.run([brickform_bin(), "-C", d, *args, "--var", f"host={url}"], capture_output=True, text=True,
                       env=env, timeout=120)
    if r.returncode not in ok:
        raise Failure(f"brickform {' '.join(args)} exited {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def gen_case(seed):
    rng = random.Random(seed)
    config = gen_config(rng)
    steps = []
    for i in range(STEPS):
        if i > 0 and rng.random() < 0.5:
            config = edit_config(rng, config)
        steps.append({"config": copy.deepcopy(config),
                      "mutations": [gen_mutation(rng) for _ in range(rng.randint(1, 5))]})
    case = {"seed": seed, "fresh_apply": seed % 2 == 1, "steps": steps}
    # Lifecycle settings come from a generator of their own, so the rest of the case is the
    # one the seed drew before they existed.
    lrng = random.Random(f"lifecycle/{seed}")
    if lrng.random() < LIFECYCLE_SHARE:
        add_lifecycle(case, lrng)
    # A sensitive attribute in `ignore_changes` (of which validate must warn), in one step of a few
    # cases; again from a generator of its own.
    srng = random.Random(f"sensitive/{seed}")
    if srng.random() < SENSITIVE_SHARE:
        step = steps[srng.randrange(len(steps))]
        kind = srng.choice(sorted(SENSITIVE_IGNORES))
        lc = step["config"][kind].setdefault("lifecycle", {})
        if lc.get("ignore_changes") != "all":
            lc["ignore_changes"] = list(lc.get("ignore_changes") or []) + [srng.choice(SENSITIVE_IGNORES[kind])]
    # The normalising service (`normalise_answers`, seeded) in two cases in three.
    nrng = random.Random(f"normalise/{seed}")
    case["normalise"] = None
    if nrng.random() < 2 / 3:
        case["normalise"] = 0 if nrng.random() < 0.1 else nrng.randint(1, 2 ** 31)
    return case


def words(text):
    """Diagnostics as one line of words (the renderer wraps them and draws frames)."""
    return " ".join(text.translate({ord(c): " " for c in "│╭╮╰╯─·×"}).split())


def refused_for(config, text):
    """What a refused plan or apply blames: the kinds whose `prevent_destroy` it names, and
    whether it names `create_before_destroy`."""
    text = words(text)
    protected = [k for k, b in config.items() if (b.get("lifecycle") or {}).get("prevent_destroy") is True
                 and f"{ADDR[k]} has lifecycle.prevent_destroy" in text]
    cbd = "create_before_destroy" in text and any(
        (b.get("lifecycle") or {}).get("create_before_destroy") for b in config.values())
    return protected, cbd


def drop_refused(config, protected, cbd, log, i, why):
    for k in protected:
        del config[k]["lifecycle"]["prevent_destroy"]
    if cbd:
        for b in config.values():
            (b.get("lifecycle") or {}).pop("create_before_destroy", None)
    log.append(f"step {i}: {why} refused for " + ", ".join(
        [f"{ADDR[k]} prevent_destroy" for k in protected] + (["create_before_destroy"] if cbd else []))
        + "; dropped from this step's configuration")


def actions(plan, address):
    return next((rc["change"]["actions"] for rc in plan["resource_changes"] if rc["address"] == address), ["no-op"])


def plan_step(d, url, w, schemas, config, i, log):
    """`plan --json --out`. A plan refused for a lifecycle setting must name it; `apply` must
    refuse too and change nothing; the setting is then dropped from this step's configuration
    and the plan made again, and a `prevent_destroy` refusal holds only if that plan destroys
    (deletes or replaces) what it protected."""
    out = os.path.join(d, "plan.bin")
    dropped = set()
    for _ in range(4):
        r = bf(d, url, "plan", "--json", "--out", out, ok=(0, 1))
        if r.returncode == 0:
            plan = json.loads(r.stdout)
            break
        protected, cbd = refused_for(config, r.stdout + r.stderr)
        if not protected and not cbd:
            raise Failure(f"step {i}: brickform plan --json exited 1\n{r.stdout}\n{r.stderr}")
        before = live_objects(w, schemas, must=False)
        a = bf(d, url, "apply", "--auto-approve", ok=(0, 1))
        if a.returncode == 0 or refused_for(config, a.stdout + a.stderr) != (protected, cbd):
            raise Failure(f"step {i}: the plan was refused, but apply said otherwise (exit {a.returncode}):\n"
                          f"plan:\n{r.stderr}\napply:\n{a.stdout}\n{a.stderr}")
        after = live_objects(w, schemas, must=False)
        if after != before:
            raise Failure(f"step {i}: a refused apply changed objects:\n" + "\n".join(
                f"  {k}: {json.dumps(before[k])} -> {json.dumps(after[k])}" for k in before if before[k] != after[k]))
        drop_refused(config, protected, cbd, log, i, "plan")
        dropped.update(protected)
        write_config(d, schemas, config)
    else:
        raise Failure(f"step {i}: the plan is still refused after dropping what it named:\n{r.stderr}")
    for k in sorted(dropped):
        if "delete" not in actions(plan, ADDR[k]):
            raise Failure(f"step {i}: the plan was refused for {ADDR[k]}'s prevent_destroy, but without it the "
                          f"plan does not destroy it ({actions(plan, ADDR[k])})")
    return plan, out


def sensitive_ignores(schemas, config):
    """The (kind, entry) of every `ignore_changes` entry naming a sensitive attribute."""
    out = []
    for kind, body in config.items():
        ic = (body.get("lifecycle") or {}).get("ignore_changes")
        attrs = schemas[ADDR[kind].split(".")[0]].get("attributes", {})
        for entry in ic if isinstance(ic, list) else []:
            if attrs.get(top_attr(entry), {}).get("sensitive"):
                out.append((kind, entry))
    return out


def lifecycle_lines(text, kind):
    """The line numbers (from 1) of the `lifecycle` block of `kind`'s resource in `text`."""
    rtype, name = ADDR[kind].split(".")
    lines = text.splitlines()
    start = lines.index(f'resource "{rtype}" "{name}" {{')
    first = next(i for i in range(start, len(lines)) if lines[i].strip() == "lifecycle {")
    last = next(i for i in range(first, len(lines)) if lines[i].strip() == "}")
    return range(first + 1, last + 2)


def expect_sensitive_warning(d, url, schemas, config, i, log):
    """`ignore_changes` naming a sensitive attribute: `validate` must accept it with a warning
    that names the attribute, says "sensitive" and points into the resource's lifecycle block
    (brickform keeps no copy of the value, so an update that must carry it sends the
    configuration's). The entries are then dropped from this step's configuration."""
    entries = sensitive_ignores(schemas, config)
    text = hcl(schemas, config)
    r = bf(d, url, "validate", ok=(0, 1))
    out = r.stdout + r.stderr
    located = {kind: any(f"main.bf.hcl:{n}:" in out for n in lifecycle_lines(text, kind)) for kind, _ in entries}
    if r.returncode != 0 or "sensitive" not in out or any(
            top_attr(e) not in out or not located[k] for k, e in entries):
        raise Failure(f"step {i}: ignore_changes names sensitive attributes {entries}: brickform validate must "
                      f"accept it (exit 0) with a warning naming the attribute, saying \"sensitive\" and pointing "
                      f"at the lifecycle block; it exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    for kind, entry in entries:
        lc = config[kind]["lifecycle"]
        lc["ignore_changes"].remove(entry)
        if not lc["ignore_changes"]:
            del lc["ignore_changes"]
    log.append(f"step {i}: validate warned of ignore_changes of sensitive {entries}; dropped from this step's "
               "configuration")
    write_config(d, schemas, config)


def triggered(rcs, ref):
    """Whether what `replace_triggered_by` names changes in the plan: the resource is created
    or replaced, or updated (in the attribute named, when one is)."""
    parts = ref.split(".")
    rc = rcs.get(".".join(parts[:2]))
    if rc is None:
        return False
    acts = rc["change"]["actions"]
    if "create" in acts:
        return True
    if acts == ["update"]:
        return len(parts) < 3 or any(f["path"][:1] == [parts[2]] for f in rc["change"].get("fields", []))
    return False


def check_lifecycle_plan(plan, config):
    """What the plan must say of the lifecycle settings, before it is applied."""
    problems = []
    rcs = {rc["address"]: rc for rc in plan["resource_changes"]}
    for kind, body in config.items():
        addr = ADDR[kind]
        acts = actions(plan, addr)
        lc = body.get("lifecycle") or {}
        if lc.get("prevent_destroy") is True and "delete" in acts:
            problems.append(f"{addr} has prevent_destroy, yet the plan goes through with {acts}")
        if acts == ["create", "delete"] and unique_name(kind, body) and same_name(rcs.get(addr)):
            problems.append(f"{addr} is replaced create-before-destroy (create first), but no two {kind}s can have "
                            "the same name: the create cannot succeed while the old one exists; the plan should "
                            "refuse it")
        fired = [t for t in lc.get("replace_triggered_by", []) if triggered(rcs, t)]
        if fired and "create" not in acts:
            problems.append(f"{addr}: {fired} (its replace_triggered_by) changes in the plan, yet it is "
                            f"planned {acts}, not replaced")
        if rcs.get(addr, {}).get("action_reason") == "replace_by_triggers" and not fired:
            problems.append(f"{addr} is replaced by its triggers {lc.get('replace_triggered_by')}, but none of "
                            "them changes in the plan")
    return problems


def unchanged(schema, name, a, b):
    """Whether live values `a` and `b` of an attribute or block type are the same to the
    service, both ways round (the equivalences `same` allows; blocks keyed by a name in any
    order)."""
    if a == b:
        return True
    if name in schema.get("attributes", {}):
        attr = schema["attributes"][name]
        return (same(attr, a, MISSING if b is None else b) and same(attr, b, MISSING if a is None else a))
    bt = schema["blocks"][name]
    problems = []
    compare_block(bt, a, None, None, MISSING if b is None else b, [name], problems)
    compare_block(bt, b, None, None, MISSING if a is None else a, [name], problems)
    return not problems


def ignored_names(schemas, kind, body):
    """The top-level names (of the live view) that `ignore_changes` covers."""
    ign = ignored(body)
    if ign != "all":
        return ign
    if kind == "notebook":
        return {"content_base64"}
    rtype = "databricks_" + kind
    schema = schemas[rtype]
    return ({a for a, attr in schema.get("attributes", {}).items() if attr.get("presence") != "computed"}
            | set(schema.get("blocks", {}))) - NO_COUNTERPART.get(rtype, set())


def check_lifecycle_apply(schemas, plan, config, before, after):
    """What the service holds after apply, against what it held before it: nothing deleted or
    replaced that the plan did not list (and what it replaced is a new object), and an
    attribute `ignore_changes` covers keeps the value it had (an object made again only after
    it was deleted outside brickform is made as configured)."""
    problems = []
    for kind, body in config.items():
        addr = ADDR[kind]
        acts = actions(plan, addr)
        b, a = before[kind], after[kind]
        if b is None:
            continue
        idb, ida = identity(kind, b), identity(kind, a)
        if "delete" not in acts and ida != idb:
            problems.append(f"{addr}: the plan says {acts}, but its object {idb} was deleted (now: {ida})")
        if "delete" in acts and ida == idb:
            problems.append(f"{addr}: the plan says {acts}, but its object {idb} is still the one there")
        if acts == ["create"]:
            continue
        schema = schemas["databricks_" + kind]
        names = ignored_names(schemas, kind, body)
        if "create" in acts:
            # A replacement's new object keeps, of what ignore_changes covers, only what the
            # configuration writes: a value the service assigned (a volume's storage_location,
            # an owner left to the service) is the new object's own.
            names = names & set(body)
        for n in sorted(names):
            if not unchanged(schema, n, b.get(n), a.get(n)):
                was, now = (json.dumps(x.get(n), ensure_ascii=False) for x in (b, a))
                problems.append(f"{addr}.{n} is in ignore_changes, but apply ({acts}) changed it: {was} -> {now}")
    return problems


def write_config(d, schemas, config):
    with open(os.path.join(d, "main.bf.hcl"), "w") as f:
        f.write(hcl(schemas, config))


def first_apply(d, url, w, schemas, config, log):
    """The first apply. A `create_before_destroy` refused as soon as it is configured (on a
    kind whose objects cannot share a name) must be named, with nothing made; it is then
    dropped."""
    for _ in range(2):
        r = bf(d, url, "apply", "--auto-approve", ok=(0, 1))
        if r.returncode == 0:
            return
        _, cbd = refused_for(config, r.stdout + r.stderr)
        if not cbd:
            break
        made = {k: v for k, v in live_objects(w, schemas, must=False).items() if v is not None}
        if made:
            raise Failure(f"step 0: apply refused create_before_destroy, but made {sorted(made)}")
        drop_refused(config, [], cbd, log, 0, "apply")
        write_config(d, schemas, config)
    raise Failure(f"step 0: brickform apply --auto-approve exited {r.returncode}\n{r.stdout}\n{r.stderr}")


def set_normalising(server, seed):
    """`normalise_answers` on with `seed`, or off (None). A reset leaves behaviours as they are."""
    server.control("POST", "/__emulator/behaviours", {"normalise_answers": seed is not None})
    if seed is not None:
        server.control("POST", "/__emulator/normalise", {"seed": seed})


def write_requests(server):
    return server.control("GET", "/__emulator/requests")["requests"]


def run_case(server, w, schemas, case, log):
    server.control("POST", "/__emulator/reset", {})
    server.control("POST", "/__emulator/timings", {"update_step": 0, "run_setup": 0, "task": 0})
    normalising = case.get("normalise") is not None
    set_normalising(server, case.get("normalise"))
    # Whether the notebook's content was changed outside brickform since brickform last wrote
    # it (the known gap check_plan names).
    content_unread = False
    with tempfile.TemporaryDirectory(prefix="bf-gen-") as d:
        for i, step in enumerate(case["steps"]):
            config = copy.deepcopy(step["config"])  # what a refusal drops is this run's business
            write_config(d, schemas, config)
            if sensitive_ignores(schemas, config):
                expect_sensitive_warning(d, server.url, schemas, config, i, log)
            if i == 0:
                first_apply(d, server.url, w, schemas, config, log)
                r = bf(d, server.url, "plan", "--detailed-exitcode", ok=(0, 2))
                if r.returncode != 0:
                    raise Failure(f"step {i}: the plan right after the first apply is not empty:\n{r.stdout}")
            for m in step["mutations"]:
                note = apply_mutation(w, m)
                log.append(f"step {i}: {json.dumps(m, ensure_ascii=False)}" + (f" ({note})" if note else ""))
                if m["kind"] == "notebook" and note is None:
                    content_unread = True
            plan, out = plan_step(d, server.url, w, schemas, config, i, log)
            problems = check_lifecycle_plan(plan, config)
            if problems:
                raise Failure(f"step {i}: the plan gets the lifecycle settings wrong:\n"
                              + "\n".join("  " + p for p in problems) + f"\nactions:\n{actions_summary(plan)}"
                              + f"\nfield changes planned:\n{fields_summary(plan)}")
            before = live_objects(w, schemas, must=False)
            server.control("DELETE", "/__emulator/requests")
            if case["fresh_apply"]:
                bf(d, server.url, "apply", "--auto-approve")
            else:
                bf(d, server.url, "apply", out)
            requests = write_requests(server) if normalising else []
            live = live_objects(w, schemas)
            # Normalising, the service answers what it holds in its own way (by design), so the
            # plan's after is checked against what apply sent instead, and the request log
            # shows what updates wrote of ignored attributes and what apply deleted.
            problems = [f"{'.'.join(map(str, p))}: plan {json.dumps(a, ensure_ascii=False)}, "
                        f"service {json.dumps(b, ensure_ascii=False)}"
                        for p, a, b in check_plan(schemas, plan, live, config, content_unread, not normalising)]
            if normalising:
                writes = writes_of(schemas, requests)
                problems += [f"{'.'.join(map(str, p))}: plan {json.dumps(a, ensure_ascii=False)}, "
                             f"sent {json.dumps(b, ensure_ascii=False)}"
                             for p, a, b in check_sent(schemas, plan, config, writes, content_unread)]
                problems += check_ignored_writes(schemas, plan, config, writes, before)
                problems += check_deletes(plan, requests, before)
            problems += check_lifecycle_apply(schemas, plan, config, before, live)
            if {"create", "update"} & set(actions(plan, ADDR["notebook"])):
                content_unread = False
            if problems:
                text = bf(d, server.url, "plan", "--no-color", ok=(0, 1, 2)).stdout
                raise Failure(f"step {i}{' (normalising)' if normalising else ''}: "
                              "the service does not hold the plan's after:\n"
                              + "\n".join("  " + p for p in problems)
                              + f"\nactions:\n{actions_summary(plan)}"
                              + f"\nfield changes planned:\n{fields_summary(plan)}\nnext plan:\n{text}")
            r = bf(d, server.url, "plan", "--detailed-exitcode", ok=(0, 2))
            if r.returncode != 0:
                raise Failure(f"step {i}: the plan after apply is not empty:\n{r.stdout}")
        # A destroy plan must stop at what prevent_destroy protects.
        protected = [k for k, b in config.items() if (b.get("lifecycle") or {}).get("prevent_destroy") is True]
        if protected:
            r = bf(d, server.url, "plan", "--destroy", ok=(0, 1, 2))
            named, _ = refused_for(config, r.stdout + r.stderr)
            if r.returncode != 1 or sorted(named) != sorted(protected):
                raise Failure(f"plan --destroy (exit {r.returncode}) must be refused naming "
                              f"{[ADDR[k] for k in protected]} and prevent_destroy:\n{r.stdout}\n{r.stderr}")


def actions_summary(plan):
    return "\n".join(f"  {rc['address']}: {rc['change']['actions']}"
                     + (f" ({rc['action_reason']})" if rc.get("action_reason") else "")
                     for rc in plan["resource_changes"])


def fields_summary(plan):
    lines = []
    for rc in plan["resource_changes"]:
        for f in rc["change"].get("fields", []):
            lines.append(f"  {rc['address']} {'.'.join(map(str, f['path']))} [{f['reason']}]: "
                         f"{json.dumps(f.get('before'))} -> {json.dumps(f.get('after'))}")
    return "\n".join(lines) or "  (none)"


def shrink_candidates(case):
    """Smaller cases: a step fewer, a change fewer, a configured optional field fewer."""
    steps = case["steps"]
    if case.get("normalise") is not None:
        yield dict(case, normalise=None)
    if len(steps) > 1:
        yield dict(case, steps=steps[:-1])
        for i in range(1, len(steps)):
            if steps[i]["config"] != steps[i - 1]["config"]:
                new = copy.deepcopy(case)
                new["steps"][i]["config"] = copy.deepcopy(steps[i - 1]["config"])
                yield new
    for i, s in enumerate(steps):
        for j in range(len(s["mutations"])):
            new = copy.deepcopy(case)
            del new["steps"][i]["mutations"][j]
            yield new
    for i, s in enumerate(steps):
        for kind, body in s["config"].items():
            for key in list(body):
                if key in REQUIRED.get(kind, ()):
                    continue
                new = copy.deepcopy(case)
                del new["steps"][i]["config"][kind][key]
                yield new
            # One lifecycle setting fewer, or one entry of its list fewer.
            lc = body.get("lifecycle") or {}
            for key in list(lc):
                if len(lc) > 1:
                    new = copy.deepcopy(case)
                    del new["steps"][i]["config"][kind]["lifecycle"][key]
                    yield new
                if isinstance(lc[key], list) and len(lc[key]) > 1:
                    for j in range(len(lc[key])):
                        new = copy.deepcopy(case)
                        del new["steps"][i]["config"][kind]["lifecycle"][key][j]
                        yield new
            for t, task in enumerate(body.get("task", [])):
                for key in list(task):
                    if key in ("task_key", "depends_on", "pipeline_task", "notebook_task"):
                        continue
                    new = copy.deepcopy(case)
                    del new["steps"][i]["config"][kind]["task"][t][key]
                    yield new


REQUIRED = {
    "catalog": {"name"},
    "schema": {"catalog_name", "name"},
    "volume": {"catalog_name", "schema_name", "name", "volume_type"},
    "connection": {"name", "connection_type", "options"},
    "notebook": {"path", "content_base64"},
    "pipeline": {"name", "catalog", "schema", "serverless", "library", "cluster"},
    "job": {"name", "task"},
}


def shrink(server, w, schemas, case, budget=80, seconds=300):
    """Greedy: keep any smaller case that still fails, until none does (or the budget of runs
    or of time ends: a failing apply may wait long, as a delete refused as not empty does)."""
    best, message = case, None
    progress = True
    deadline = time.monotonic() + seconds
    while progress and budget > 0 and time.monotonic() < deadline:
        progress = False
        for cand in shrink_candidates(best):
            if cand is None:
                continue
            budget -= 1
            try:
                run_case(server, w, schemas, cand, [])
            except Exception as e:  # noqa: BLE001 - any failure of the smaller case counts
                best, message, progress = cand, str(e), True
                break
            if budget <= 0 or time.monotonic() >= deadline:
                break
    return best, message


def describe(schemas, case):
    norm = case.get("normalise")
    out = [f"seed {case['seed']} ({'apply --auto-approve' if case['fresh_apply'] else 'apply PLAN_FILE'}; "
           + ("normalising service off)" if norm is None else f"normalising service on, seed {norm})")]
    for i, s in enumerate(case["steps"]):
        out.append(f"--- step {i} configuration:\n{hcl(schemas, s['config'])}")
        out.append(f"--- step {i} changes outside brickform:")
        out.extend(f"  {json.dumps(m, ensure_ascii=False)}" for m in s["mutations"])
    return "\n".join(out)


@pytest.fixture(autouse=True)
def normalising_off(server):
    """The normalising service is this module's business: off again after every test."""
    yield
    set_normalising(server, None)


def test_ignorable_names_no_sensitive_attribute(schemas):
    """brickform cannot keep a sensitive attribute `ignore_changes` names: IGNORABLE must hold none
    (SENSITIVE_IGNORES holds those the warning cases use)."""
    bad = [(k, p) for k, ps in IGNORABLE.items() for p in ps
           if schemas[ADDR[k].split(".")[0]].get("attributes", {}).get(top_attr(p), {}).get("sensitive")]
    assert not bad, f"sensitive attributes in IGNORABLE: {bad}"
    for k, ps in SENSITIVE_IGNORES.items():
        for p in ps:
            assert schemas[ADDR[k].split(".")[0]]["attributes"][top_attr(p)].get("sensitive"), (k, p)


@pytest.mark.parametrize("seed", seeds())
def test_plan_after_is_what_the_service_holds(seed, server, w, schemas):
    case = gen_case(seed)
    log = []
    try:
        run_case(server, w, schemas, case, log)
        return
    except Failure as e:
        error = str(e)
    except Exception:  # noqa: BLE001 - any failure is reported with its case
        error = traceback.format_exc()
    report = [f"generated case failed: seed {seed} "
              f"(replay: BRICKFORM_GEN_SEEDS={seed} pytest tests/python/test_generative_plans.py)",
              error, "changes made:", *log, describe(schemas, case)]
    if os.environ.get("BRICKFORM_GEN_SHRINK", "1") != "0":
        small, message = shrink(server, w, schemas, case)
        if small is not case:
            report += ["=== smallest failing case found:", describe(schemas, small), message]
    pytest.fail("\n".join(report), pytrace=False)


def test_cases_are_the_same_in_every_process():
    """A seed replays only if its case never depends on the process (set and dict order of
    strings changes with PYTHONHASHSEED)."""
    code = ("import json, test_generative_plans as t\n"
            "for s in range(50): print(json.dumps(t.gen_case(s), sort_keys=True))")
    here = pathlib.Path(__file__).parent
    outs = [subprocess.run([sys.executable, "-c", code], cwd=here, capture_output=True, text=True, check=True,
                           env=dict(os.environ, PYTHONHASHSEED=str(h))).stdout.splitlines() for h in (1, 2)]
    assert len(outs[0]) == 50
    differ = [seed for seed, (a, b) in enumerate(zip(*outs)) if a != b]
    assert not differ, f"seeds whose case depends on the process: {differ}"
