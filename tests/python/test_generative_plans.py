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
   values the service returns (all but the password and the user, which it withholds);
4. `brickform plan --detailed-exitcode` must exit 0.

CI runs seeds 0 .. BRICKFORM_GEN_CASES-1 (default `DEFAULT_CASES`), the same cases on every
run. A failure prints its seed, the changes made, the case (configurations as HCL, changes as
data) and, after shrinking it (dropping steps, changes and configured fields while it still
fails; BRICKFORM_GEN_SHRINK=0 skips that), the smallest failing case. Replay one with
`BRICKFORM_GEN_SEEDS=17 pytest tests/python/test_generative_plans.py`; explore more with
`BRICKFORM_GEN_CASES=2000` or `BRICKFORM_GEN_SEEDS=1000-1999`.
"""

import copy
import inspect
import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile

import traceback

import pytest
from conftest import brickform_bin
from databricks.sdk.errors import NotFound
from databricks.sdk.service.catalog import CatalogIsolationMode, EnablePredictiveOptimization
from databricks.sdk.service.jobs import JobSettings, Task
from databricks.sdk.service.pipelines import PipelineSpec

DEFAULT_CASES = 200
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


def hcl(schemas, config):
    out = ['variable "host" {}', 'provider "databricks" { host = var.host }', ""]
    for kind, body in config.items():
        rtype, name = ADDR[kind].split(".")
        out.append(f'resource "{rtype}" "{name}" {{')
        out.extend(hcl_body(schemas[rtype], body, 1))
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


def live_objects(w, schemas):
    """Every managed object as the service holds it now (absent: None)."""
    out = {}
    jid = find_job(w)
    job = w.jobs.get(jid).as_dict()
    j = shape(schemas["databricks_job"], job.get("settings", {}), JOB_RENAMES)
    strip_owner_tag(j)
    j["id"] = str(job["job_id"])
    for k in ["creator_user_name", "run_as_user_name"]:
        if k in job:
            j[k] = job[k]
    out["job"] = j

    pid = find_pipeline(w)
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
        info = get(name).as_dict()
        o = shape(schemas["databricks_" + kind], info, {})
        o["id"] = info.get("full_name")
        if kind == "volume":
            # A volume's files live under /Volumes/<catalog>/<schema>/<volume>.
            o["volume_path"] = "/Volumes/" + info["full_name"].replace(".", "/")
        out[kind] = o
    status = w.workspace.get_status(NOTEBOOK).as_dict()
    out["notebook"] = {"path": status.get("path"), "object_id": status.get("object_id")}
    return out


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


def check_plan(schemas, plan, live, config):
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
            continue  # content is compared by fingerprint; nothing the SDK reads back maps to after
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
    for k, v in config["connection"]["options"].items():
        if k not in WITHHELD_OPTIONS and conn.get(k) != v:
            problems.append(([ADDR["connection"], "options", k], v, conn.get(k)))
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
    return {"seed": seed, "fresh_apply": seed % 2 == 1, "steps": steps}


def run_case(server, w, schemas, case, log):
    server.control("POST", "/__emulator/reset", {})
    server.control("POST", "/__emulator/timings", {"update_step": 0, "run_setup": 0, "task": 0})
    with tempfile.TemporaryDirectory(prefix="bf-gen-") as d:
        for i, step in enumerate(case["steps"]):
            with open(os.path.join(d, "main.bf.hcl"), "w") as f:
                f.write(hcl(schemas, step["config"]))
            if i == 0:
                bf(d, server.url, "apply", "--auto-approve")
                r = bf(d, server.url, "plan", "--detailed-exitcode", ok=(0, 2))
                if r.returncode != 0:
                    raise Failure(f"step {i}: the plan right after the first apply is not empty:\n{r.stdout}")
            for m in step["mutations"]:
                note = apply_mutation(w, m)
                log.append(f"step {i}: {json.dumps(m, ensure_ascii=False)}" + (f" ({note})" if note else ""))
            out = os.path.join(d, "plan.bin")
            plan = json.loads(bf(d, server.url, "plan", "--json", "--out", out).stdout)
            if case["fresh_apply"]:
                bf(d, server.url, "apply", "--auto-approve")
            else:
                bf(d, server.url, "apply", out)
            problems = check_plan(schemas, plan, live_objects(w, schemas), step["config"])
            if problems:
                text = bf(d, server.url, "plan", "--no-color", ok=(0, 1, 2)).stdout
                raise Failure(f"step {i}: the service does not hold the plan's after:\n" + "\n".join(
                    f"  {'.'.join(map(str, p))}: plan {json.dumps(a, ensure_ascii=False)}, "
                    f"service {json.dumps(b, ensure_ascii=False)}" for p, a, b in problems)
                    + f"\nfield changes planned:\n{fields_summary(plan)}\nnext plan:\n{text}")
            r = bf(d, server.url, "plan", "--detailed-exitcode", ok=(0, 2))
            if r.returncode != 0:
                raise Failure(f"step {i}: the plan after apply is not empty:\n{r.stdout}")


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


def shrink(server, w, schemas, case, budget=80):
    """Greedy: keep any smaller case that still fails, until none does (or the budget ends)."""
    best, message = case, None
    progress = True
    while progress and budget > 0:
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
            if budget <= 0:
                break
    return best, message


def describe(schemas, case):
    out = [f"seed {case['seed']} ({'apply --auto-approve' if case['fresh_apply'] else 'apply PLAN_FILE'})"]
    for i, s in enumerate(case["steps"]):
        out.append(f"--- step {i} configuration:\n{hcl(schemas, s['config'])}")
        out.append(f"--- step {i} changes outside brickform:")
        out.extend(f"  {json.dumps(m, ensure_ascii=False)}" for m in s["mutations"])
    return "\n".join(out)


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
