"""How much of the official SDK's job and pipeline models brickform's schema covers.

Walks the Python SDK's `JobSettings` (with `Task`, `JobCluster`, `ClusterSpec`, … below it)
and the pipelines' create request (`PipelineSpec` with the arguments `PipelinesAPI.create`
takes beside it: this SDK has no `CreatePipeline` dataclass) recursively, maps each field path to
brickform's names (the Terraform provider's: `tasks` is `task`, `git_url` is `url`, …) and
looks it up in `brickform schema`. Prints the figure; fails below 95% of the paths for jobs
and for pipelines. Fields brickform does not offer on purpose are listed below, each with
its reason, and left out of the count; a listed field brickform does offer fails the test,
so the list cannot go stale.
"""

import dataclasses
import enum
import json
import subprocess
import typing

import pytest
from databricks.sdk.service import jobs, pipelines

from conftest import brickform_bin

THRESHOLD = 0.95

# SDK (wire) names that brickform (as the Terraform provider) spells otherwise, by the
# brickform path of their parent ("" at the top).
JOB_RENAMES = {
    "": {"tasks": "task", "job_clusters": "job_cluster", "environments": "environment", "parameters": "parameter"},
    "task": {"libraries": "library"},
    "task.for_each_task.task": {"libraries": "library"},
    "git_source": {
        "git_url": "url",
        "git_provider": "provider",
        "git_branch": "branch",
        "git_tag": "tag",
        "git_commit": "commit",
    },
}
PIPELINE_RENAMES = {
    "": {"clusters": "cluster", "libraries": "library", "notifications": "notification"},
}

PREVIEW = "a preview of the service the Terraform provider's databricks_job does not have"
PIPELINE_PREVIEW = "a preview the Terraform provider's databricks_pipeline does not have"
READ_ONLY = "read-only: the service reports it, a configuration cannot set it"

JOB_NOT_OFFERED = {
    # Previews of the service that the provider's databricks_job (its model is the Go SDK's)
    # does not have either.
    "tasks.ai_function_task": PREVIEW,
    "tasks.environment_variables_key": PREVIEW + " (environment_variables)",
    "environment_variables": PREVIEW,
    "triggers.job_completion": PREVIEW,
    "trigger.job_completion": PREVIEW,
    "continuous.maintenance_window": PREVIEW,
    "triggers.continuous.maintenance_window": PREVIEW,
    "job_clusters.serverless_compute": PREVIEW + " (serverless_compute_id is offered)",
    "duration_target": PREVIEW + " (with performance_target COST_OPTIMIZED, not yet a value of it)",
    "environments.spec.project_environment": PREVIEW,
    "git_source.git_snapshot": READ_ONLY + " (the commit a run used)",
    # ClusterSpec is shared with all-purpose clusters; a job's cluster ends with its run.
    "tasks.new_cluster.autotermination_minutes": "a job cluster ends with its run (not supported there, as the provider documents)",
    "job_clusters.new_cluster.autotermination_minutes": "a job cluster ends with its run (not supported there, as the provider documents)",
}

PIPELINE_NOT_OFFERED = {
    "gateway_definition": "the databricks_ingestion_gateway kind (a located error points there)",
    "ingestion_definition": "the databricks_ingestion_pipeline kind (a located error points there)",
    "dry_run": "a validation-only create: brickform's plan is the dry run",
    "expected_last_modified": "optimistic locking of one edit: brickform reads before it writes",
    "serverless_compute_id": PIPELINE_PREVIEW,
}


def unwrap(t):
    """The dataclass a field holds (itself, or the element of a list), or None for leaves."""
    if typing.get_origin(t) is typing.Union:
        t = next(a for a in typing.get_args(t) if a is not type(None))
    if typing.get_origin(t) in (list, typing.List):
        t = typing.get_args(t)[0]
    if isinstance(t, type) and dataclasses.is_dataclass(t) and not issubclass(t, enum.Enum):
        return t
    return None


def fields_of(cls):
    """A dataclass's fields with their types; for the pipelines' create request, the
    spec's and the create call's other arguments."""
    if cls is CREATE_PIPELINE:
        hints = typing.get_type_hints(pipelines.PipelineSpec)
        for name, t in typing.get_type_hints(pipelines.PipelinesAPI.create).items():
            if name != "return":
                hints.setdefault(name, t)
        return hints.items()
    hints = typing.get_type_hints(cls)
    return [(f.name, hints[f.name]) for f in dataclasses.fields(cls)]


CREATE_PIPELINE = object()


def sdk_paths(cls, prefix=(), seen=()):
    """Every field path under `cls`; a class met again on its own path stops there (a task
    inside a for_each_task is the same Task)."""
    for name, t in fields_of(cls):
        path = prefix + (name,)
        yield path
        inner = unwrap(t)
        if inner is not None and inner not in seen and inner is not cls:
            yield from sdk_paths(inner, path, seen + (cls,))


def to_brickform(path, renames):
    out = []
    for name in path:
        parent = ".".join(out)
        out.append(renames.get(parent, {}).get(name, name))
    return out


def covered(schema, names):
    node = schema
    for i, name in enumerate(names):
        blocks = node.get("blocks", {})
        if name in blocks:
            node = blocks[name]["block"]
            continue
        attr = node.get("attributes", {}).get(name)
        # An attribute covers its path only as a leaf: a free-form attribute standing in
        # for a nested object does not cover the object's fields.
        return attr is not None and i == len(names) - 1
    return True


def excluded(path, not_offered):
    dotted = ".".join(path)
    return next((k for k in not_offered if dotted == k or dotted.startswith(k + ".")), None)


def measure(schema, root, renames, not_offered):
    total, hits, missing, stale, left_out = 0, 0, [], set(), 0
    for path in sdk_paths(root):
        names = to_brickform(path, renames)
        key = excluded(path, not_offered)
        if key is not None:
            left_out += 1
            if covered(schema, names) and ".".join(path) == key:
                stale.add(key)
            continue
        total += 1
        if covered(schema, names):
            hits += 1
        else:
            missing.append(".".join(path))
    return total, hits, missing, stale, left_out


@pytest.fixture(scope="module")
def schemas():
    out = subprocess.run([brickform_bin(), "schema"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["resources"]


@pytest.mark.parametrize(
    "kind,root,renames,not_offered",
    [
        ("databricks_job", jobs.JobSettings, JOB_RENAMES, JOB_NOT_OFFERED),
        ("databricks_pipeline", CREATE_PIPELINE, PIPELINE_RENAMES, PIPELINE_NOT_OFFERED),
    ],
)
def test_the_sdk_model_is_covered(schemas, kind, root, renames, not_offered):
    total, hits, missing, stale, left_out = measure(schemas[kind], root, renames, not_offered)
    share = hits / total
    print(
        f"\n{kind}: {hits} of {total} SDK field paths ({share:.1%}); "
        f"{left_out} more paths under {len(not_offered)} fields left out on purpose"
    )
    for m in missing:
        print(f"  missing: {m}")
    assert not stale, f"listed as not offered but in brickform's schema: {sorted(stale)}"
    assert share >= THRESHOLD, f"{kind}: {share:.1%} < {THRESHOLD:.0%}; missing: {missing}"


def test_the_walk_finds_what_it_should():
    """The walk itself: a renamed nested path maps and a known path counts."""
    paths = {".".join(p) for p in sdk_paths(jobs.JobSettings)}
    assert "tasks.spark_jar_task.main_class_name" in paths
    assert "job_clusters.new_cluster.aws_attributes.zone_id" in paths
    assert to_brickform(("tasks", "libraries", "pypi"), JOB_RENAMES) == ["task", "library", "pypi"]
    assert to_brickform(("git_source", "git_url"), JOB_RENAMES) == ["git_source", "url"]
    fake = {"attributes": {"a": {}}, "blocks": {"b": {"block": {"attributes": {"c": {}}}}}}
    assert covered(fake, ["a"]) and covered(fake, ["b", "c"]) and covered(fake, ["b"])
    assert not covered(fake, ["a", "x"]) and not covered(fake, ["b", "d"])
