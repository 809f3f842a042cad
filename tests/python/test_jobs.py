"""Jobs 2.2 and runs through the official SDK."""

import base64
from datetime import timedelta

import pytest
from databricks.sdk.errors import NotFound, OperationFailed
from databricks.sdk.service import compute
from databricks.sdk.service.jobs import (
    CronSchedule,
    JobEnvironment,
    JobParameterDefinition,
    JobSettings,
    NotebookTask,
    PipelineTask,
    PythonWheelTask,
    QueueSettings,
    RunIf,
    Task,
    TaskDependency,
)
from databricks.sdk.service.workspace import ImportFormat, Language


def notebook(w, path):
    w.workspace.mkdirs(path.rsplit("/", 1)[0])
    w.workspace.import_(path, content=base64.b64encode(b"# Databricks notebook source\n").decode(),
                        format=ImportFormat.SOURCE, language=Language.PYTHON, overwrite=True)


def test_job_crud_and_a_run_in_dependency_order(w):
    # `main` is there already: a new workspace starts with it.
    w.schemas.create(name="s", catalog_name="main")
    pid = w.pipelines.create(name="p", serverless=True, catalog="main", schema="s").pipeline_id
    notebook(w, "/Shared/jobs/after")
    job = w.jobs.create(
        name="nightly",
        tasks=[
            Task(task_key="ingest", pipeline_task=PipelineTask(pipeline_id=pid)),
            Task(task_key="missing", depends_on=[TaskDependency(task_key="ingest")],
                 notebook_task=NotebookTask(notebook_path="/Shared/jobs/nope")),
            Task(task_key="cleanup", depends_on=[TaskDependency(task_key="missing")], run_if=RunIf.ALL_DONE,
                 notebook_task=NotebookTask(notebook_path="/Shared/jobs/after")),
            Task(task_key="skipped", depends_on=[TaskDependency(task_key="missing")],
                 notebook_task=NotebookTask(notebook_path="/Shared/jobs/after")),
        ],
        environments=[JobEnvironment(environment_key="default", spec=compute.Environment(environment_version="2"))],
        schedule=CronSchedule(quartz_cron_expression="0 0 1 * * ?", timezone_id="UTC"),
        parameters=[JobParameterDefinition(name="env", default="dev")],
        queue=QueueSettings(enabled=True),
    )
    got = w.jobs.get(job.job_id)
    assert got.settings.name == "nightly" and len(got.settings.tasks) == 4
    assert got.creator_user_name

    waiter = w.jobs.run_now(job.job_id, job_parameters={"env": "prod"})
    # A run with a failed task ends INTERNAL_ERROR / FAILED, as the service reports it; the
    # SDK's waiter treats that life-cycle state as a failure.
    with pytest.raises(OperationFailed, match="INTERNAL_ERROR"):
        waiter.result(timeout=timedelta(seconds=30))
    run = w.jobs.get_run(waiter.run_id)
    assert run.state.life_cycle_state.value == "INTERNAL_ERROR"
    results = {t.task_key: t.state.result_state.value for t in run.tasks}
    assert results == {"ingest": "SUCCESS", "missing": "FAILED", "cleanup": "SUCCESS", "skipped": "UPSTREAM_FAILED"}
    assert run.state.result_state.value == "FAILED"
    # As on the service: the task says only that it failed; the cause is in its output.
    missing = [t for t in run.tasks if t.task_key == "missing"][0]
    assert missing.state.state_message == "Workload failed, see run output for details"
    assert "/Shared/jobs/nope" in w.jobs.get_run_output(missing.run_id).error
    assert [u.cause.value for u in w.pipelines.list_updates(pid).updates] == ["JOB_TASK"]
    assert [r.run_id for r in w.jobs.list_runs(job_id=job.job_id)] == [run.run_id]

    w.jobs.update(job.job_id, new_settings=JobSettings(timeout_seconds=600), fields_to_remove=["schedule"])
    got = w.jobs.get(job.job_id)
    assert got.settings.timeout_seconds == 600 and got.settings.schedule is None and len(got.settings.tasks) == 4

    w.jobs.reset(job.job_id, JobSettings(name="renamed", tasks=[
        Task(task_key="only", notebook_task=NotebookTask(notebook_path="/Shared/jobs/after"))]))
    got = w.jobs.get(job.job_id)
    assert got.settings.name == "renamed" and [t.task_key for t in got.settings.tasks] == ["only"]
    assert "renamed" in [j.settings.name for j in w.jobs.list()]

    w.jobs.delete(job.job_id)
    with pytest.raises(NotFound):
        w.jobs.get(job.job_id)


def test_more_than_100_tasks_come_back_through_pages(w):
    notebook(w, "/Shared/many/nb")
    tasks = [Task(task_key=f"t{i:03}", notebook_task=NotebookTask(notebook_path="/Shared/many/nb")) for i in range(150)]
    job = w.jobs.create(name="many", tasks=tasks)
    got = w.jobs.get(job.job_id)
    assert [t.task_key for t in got.settings.tasks] == [f"t{i:03}" for i in range(150)]


def test_cancel_a_running_run(w, server):
    server.control("POST", "/__emulator/timings", {"task": 60000})
    notebook(w, "/Shared/slow/nb")
    job = w.jobs.create(name="slow", tasks=[Task(task_key="a", notebook_task=NotebookTask(notebook_path="/Shared/slow/nb"))])
    run_id = w.jobs.run_now(job.job_id).run_id
    assert w.jobs.get_run(run_id).state.life_cycle_state.value == "RUNNING"
    run = w.jobs.cancel_run(run_id).result(timeout=timedelta(seconds=30))
    assert run.state.result_state.value == "CANCELED"


def test_sdp_meta_onboarding_needs_its_file_in_a_volume(w):
    # `main` is there already: a new workspace starts with it.
    w.schemas.create(name="meta", catalog_name="main")
    w.volumes.create(catalog_name="main", schema_name="meta", name="conf",
                     volume_type=__import__("databricks.sdk.service.catalog", fromlist=["VolumeType"]).VolumeType.MANAGED)
    path = "/Volumes/main/meta/conf/onboarding.json"
    task = Task(task_key="onboard", environment_key="env", python_wheel_task=PythonWheelTask(
        package_name="databricks_labs_sdp_meta", entry_point="run",
        named_parameters={"onboard_layer": "bronze_silver", "onboarding_file_path": path, "database": "main.meta",
                          "env": "dev", "uc_enabled": "True", "bronze_dataflowspec_table": "bronze_spec",
                          "silver_dataflowspec_table": "silver_spec", "import_author": "me", "version": "v1",
                          "overwrite": "True"}))
    job = w.jobs.create(name="onboard", tasks=[task], environments=[
        JobEnvironment(environment_key="env", spec=compute.Environment(environment_version="2", dependencies=["sdp-meta"]))])
    waiter = w.jobs.run_now(job.job_id)
    with pytest.raises(OperationFailed, match="INTERNAL_ERROR"):
        waiter.result(timeout=timedelta(seconds=30))
    run = w.jobs.get_run(waiter.run_id)
    assert run.state.result_state.value == "FAILED"
    assert "onboarding_file_path" in w.jobs.get_run_output(run.tasks[0].run_id).error

    import io
    w.files.upload(path, io.BytesIO(b"[]"), overwrite=True)
    run = w.jobs.run_now(job.job_id).result(timeout=timedelta(seconds=30))
    assert run.state.result_state.value == "SUCCESS"
    # The onboarding wrote its dataflowspec tables, as sdp-meta's does.
    assert {t.name for t in w.tables.list(catalog_name="main", schema_name="meta")} >= {"bronze_spec", "silver_spec"}


def test_for_each_iterations_run_job_runs_and_task_values_read_through_the_sdk(w, server):
    """The SDK reads a For each task's iterations from the runs/get of its task run, in pages
    of 100 (its get_run mixin), resolved values, a Run Job task's run and its trigger."""
    from databricks.sdk.service.jobs import ConditionTask, ConditionTaskOp, ForEachTask, RunJobTask

    def cond(left, op=ConditionTaskOp.EQUAL_TO, right="1"):
        return ConditionTask(op=op, left=left, right=right)

    child = w.jobs.create(name="child", tasks=[Task(task_key="c", condition_task=cond("1"))]).job_id
    job = w.jobs.create(name="loop", tasks=[
        Task(task_key="setter", condition_task=cond("1")),
        Task(task_key="each", depends_on=[TaskDependency(task_key="setter")], for_each_task=ForEachTask(
            inputs="{{tasks.setter.values.items}}", concurrency=100,
            task=Task(task_key="inner", condition_task=cond("{{input}}", ConditionTaskOp.GREATER_THAN, "100")))),
        Task(task_key="rj", depends_on=[TaskDependency(task_key="each")], run_job_task=RunJobTask(job_id=child)),
    ]).job_id
    server.control("POST", "/__emulator/task-values",
                   {"job_id": job, "task_key": "setter", "values": {"items": list(range(250))}})
    run = w.jobs.run_now(job).result(timeout=timedelta(seconds=30))
    assert run.state.result_state.value == "SUCCESS"
    each = next(t for t in run.tasks if t.task_key == "each")
    assert each.for_each_task.stats.task_run_stats.succeeded_iterations == 250
    got = w.jobs.get_run(each.run_id, include_resolved_values=True)
    assert len(got.tasks) == 1 and len(got.iterations) == 250
    assert got.iterations[150].resolved_values.condition_task.left == "150"
    assert got.iterations[150].condition_task.outcome == "true"
    rj = next(t for t in run.tasks if t.task_key == "rj")
    child_run = w.jobs.get_run_output(rj.run_id).run_job_output.run_id
    (listed,) = list(w.jobs.list_runs(job_id=child))
    assert listed.run_id == child_run
    assert listed.trigger.value == "RUN_JOB_TASK" and listed.trigger_info.run_id == rj.run_id
