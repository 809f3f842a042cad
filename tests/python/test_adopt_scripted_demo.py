"""`brickform adopt` takes over what the Lakeflow Connect demo's scripts make.

The objects are made one by one with the official SDK, in the order and with the bodies the
demo's launch script and its setup notebook use (a catalog and a connection that exist
already, the sdp-meta schemas and volume, the runner notebooks, the bronze and silver
pipelines in the legacy publishing mode, the downstream and setup jobs, then the gateway,
the ingestion pipeline and its scheduler job). `adopt` finds them by rule; the plan imports
them and changes nothing; after the apply the plan is empty; destroy removes all of it, and
leaves the connection other demos share."""

import base64
import io
import json
import os
import pathlib
import re
import subprocess

from databricks.sdk.service import compute, jobs, pipelines, workspace
from databricks.sdk.service.catalog import ConnectionType, VolumeType

from conftest import brickform_bin

CATALOG = "lfc_adopt"
RUN_ID = "a1b2c3"
CONNECTION = "lfcddemo-azure-sqlserver"


def brickform(root: pathlib.Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["DATABRICKS_TOKEN"] = "local-token"
    env["NO_COLOR"] = "1"
    r = subprocess.run([brickform_bin(), "-C", str(root), *args], env=env, capture_output=True, text=True, timeout=600)
    if ok:
        assert r.returncode == 0, f"brickform {args}: {r.stdout}\n{r.stderr}"
    return r


def make_the_demo(w) -> dict:
    """What launch_lfc_demo.py and its setup notebook make, as they make it."""
    me = w.current_user.me().user_name
    ws = f"/Users/{me}/sdp_meta_lfc_demo/{RUN_ID}"
    specs = f"sdp_meta_dataflowspecs_lfc_{RUN_ID}"
    bronze = f"sdp_meta_bronze_lfc_{RUN_ID}"
    silver = f"sdp_meta_silver_lfc_{RUN_ID}"
    volume = f"{CATALOG}_lfc_volume_{RUN_ID}"
    vol = f"/Volumes/{CATALOG}/{specs}/{volume}/"

    # There before the demo: its catalog and the shared source connection.
    w.catalogs.create(name=CATALOG, comment="the demo's catalog")
    w.connections.create(
        name=CONNECTION,
        connection_type=ConnectionType.SQLSERVER,
        options={"host": "lfcdemo.example.com", "port": "1433", "user": "lfc", "password": "secret"},
    )

    w.schemas.create(name=specs, catalog_name=CATALOG, comment="dlt_meta framework schema")
    w.schemas.create(name=bronze, catalog_name=CATALOG, comment="bronze_schema")
    w.schemas.create(name=silver, catalog_name=CATALOG)
    w.volumes.create(catalog_name=CATALOG, schema_name=specs, name=volume, volume_type=VolumeType.MANAGED)
    for path, body in [
        ("conf/onboarding.json", json.dumps([{"data_flow_id": "1"}])),
        ("conf/silver_transformations.json", json.dumps([{"target_table": "intpk", "select_exp": ["*"]}])),
        ("conf/dqe/bronze_dqe.json", json.dumps({"expect": {"valid_row": "true"}})),
        ("wheels/databricks_labs_sdp_meta-0.1.0-py3-none-any.whl", "not really a wheel"),
    ]:
        w.files.upload(vol + path, io.BytesIO(body.encode()), overwrite=True)

    w.workspace.mkdirs(f"{ws}/runners")
    for name in ["init_sdp_meta_pipeline", "trigger_ingestion_and_wait", "../lfcdemo-database"]:
        w.workspace.import_(
            f"{ws}/runners/{name}".replace("/runners/../", "/"),
            content=base64.b64encode(f"# Databricks notebook source\nprint('{name}')\n".encode()).decode(),
            format=workspace.ImportFormat.SOURCE,
            language=workspace.Language.PYTHON,
            overwrite=True,
        )
    whl = vol + "wheels/databricks_labs_sdp_meta-0.1.0-py3-none-any.whl"

    made = {}
    for layer, schema in [("bronze", bronze), ("silver", silver)]:
        conf = {
            "layer": layer,
            f"{layer}.group": "A1",
            "sdp_meta_whl": whl,
            "pipelines.externalSink.enabled": "true",
            f"{layer}.dataflowspecTable": f"{CATALOG}.{specs}.{layer}_dataflowspec_cdc",
        }
        if layer == "bronze":
            conf["dtix_snapshot_method"] = "cdf"
        made[layer] = w.pipelines.create(
            catalog=CATALOG,
            name=f"sdp-meta-lfc-{layer}-{RUN_ID}",
            serverless=True,
            target=schema,
            libraries=[pipelines.PipelineLibrary(notebook=pipelines.NotebookLibrary(path=f"{ws}/runners/init_sdp_meta_pipeline"))],
            configuration=conf,
        ).pipeline_id

    env = [jobs.JobEnvironment(environment_key="dl_meta_int_env", spec=compute.Environment(client="1", dependencies=[whl]))]
    downstream = w.jobs.create(
        name=f"sdp-meta-lfc-demo-{RUN_ID}-downstream",
        environments=env,
        tasks=[
            jobs.Task(
                task_key="onboarding_job",
                environment_key="dl_meta_int_env",
                max_retries=0,
                timeout_seconds=0,
                python_wheel_task=jobs.PythonWheelTask(
                    package_name="databricks_labs_sdp_meta",
                    entry_point="run",
                    named_parameters={"onboard_layer": "bronze_silver", "database": f"{CATALOG}.{specs}", "onboarding_file_path": vol + "conf/onboarding.json", "env": "prod", "uc_enabled": "True"},
                ),
            ),
            jobs.Task(task_key="bronze_dlt", depends_on=[jobs.TaskDependency(task_key="onboarding_job")], max_retries=0, pipeline_task=jobs.PipelineTask(pipeline_id=made["bronze"])),
            jobs.Task(task_key="silver_dlt", depends_on=[jobs.TaskDependency(task_key="bronze_dlt")], max_retries=0, pipeline_task=jobs.PipelineTask(pipeline_id=made["silver"])),
        ],
    ).job_id
    setup = w.jobs.create(
        name=f"sdp-meta-lfc-demo-{RUN_ID}",
        environments=env,
        parameters=[jobs.JobParameterDefinition(name="next_job", default=str(downstream))],
        tasks=[
            jobs.Task(
                task_key="lfc_setup",
                max_retries=0,
                timeout_seconds=0,
                notebook_task=jobs.NotebookTask(
                    notebook_path=f"{ws}/lfcdemo-database",
                    base_parameters={"connection": CONNECTION, "cdc_qbc": "cdc", "target_catalog": CATALOG, "run_id": RUN_ID, "downstream_job_id": str(downstream)},
                ),
            )
        ],
    ).job_id
    w.workspace.mkdirs(f"{ws}/conf")
    w.workspace.upload(
        f"{ws}/conf/setup_metadata.json",
        io.BytesIO(json.dumps({"job_id": setup, "uc_catalog_name": CATALOG, "downstream_job_id": downstream}).encode()),
        format=workspace.ImportFormat.AUTO,
        overwrite=True,
    )

    # Inside the setup notebook (lfcdemolib): the Lakeflow Connect half.
    lfc = re.sub(r"[-.@]", "_", me.split("@")[0]) + "_sqlserver_0a1b2c3d4"
    w.schemas.create(name=lfc, catalog_name=CATALOG)
    gw = w.pipelines.create(
        name=f"{lfc}_gw",
        gateway_definition=pipelines.IngestionGatewayPipelineDefinition(connection_name=CONNECTION, gateway_storage_catalog=CATALOG, gateway_storage_schema=lfc),
        tags={"RemoveAfter": "2026-12-31", "Connector": "sqlserver"},
    ).pipeline_id
    table = lambda t, scd: pipelines.IngestionConfig(
        table=pipelines.TableSpec(source_catalog="lfcdemo", source_schema="lfcdemo", source_table=t, destination_catalog=CATALOG, destination_schema=lfc, table_configuration=pipelines.TableSpecificConfig(scd_type=scd))
    )
    ig = w.pipelines.create(
        name=f"{lfc}_ig",
        catalog=CATALOG,
        schema=lfc,
        development=True,
        serverless=True,
        continuous=False,
        ingestion_definition=pipelines.IngestionPipelineDefinition(
            ingestion_gateway_id=gw,
            objects=[table("intpk", pipelines.TableSpecificConfigScdType.SCD_TYPE_1), table("dtix", pipelines.TableSpecificConfigScdType.SCD_TYPE_2)],
        ),
    ).pipeline_id
    scheduler = w.jobs.create(
        name=f"{lfc}_ig_{ig}",
        performance_target=jobs.PerformanceTarget.STANDARD,
        schedule=jobs.CronSchedule(timezone_id="UTC", quartz_cron_expression="0 3/5 * * * ?"),
        tasks=[jobs.Task(task_key="run_dlt", pipeline_task=jobs.PipelineTask(pipeline_id=ig))],
        tags={"RemoveAfter": "2026-12-31"},
    ).job_id
    return {"ws": ws, "pipelines": {made["bronze"], made["silver"], gw, ig}, "jobs": {downstream, setup, scheduler}, "lfc": lfc, "me": me}


def test_adopting_what_the_demo_scripts_made_plans_only_imports_and_destroy_leaves_nothing(w, server, tmp_path):
    demo = make_the_demo(w)
    root = tmp_path / "adopted-demo"
    root.mkdir()
    (root / "main.bf.hcl").write_text(f'provider "databricks" {{\n  host = "{server.url}"\n}}\n')

    # By tag: what the setup notebook tagged, and the ingestion pipeline between them (the
    # tagged job runs it; it reads through the tagged gateway). Its catalog and schema are others' to manage: named, not taken.
    tagged = tmp_path / "tagged"
    tagged.mkdir()
    (tagged / "main.bf.hcl").write_text((root / "main.bf.hcl").read_text())
    out = brickform(tagged, "adopt", "--tag", "RemoveAfter=2026-12-31").stdout
    assert "Adopting 3 object(s):" in out, out
    assert re.search(r"databricks_ingestion_gateway\.\S+: .*\(tagged RemoveAfter=2026-12-31\)", out), out
    assert re.search(r"databricks_job\.\S+: .*\(tagged RemoveAfter=2026-12-31\)", out), out
    # (chosen as what the tagged job runs, or as what uses the tagged gateway)
    assert re.search(r"databricks_ingestion_pipeline\.\S+: .*\((uses databricks_ingestion_gateway|used by databricks_job)", out), out
    text = (tagged / "adopted.bf.hcl").read_text()
    assert "resource \"databricks_catalog\"" not in text and "resource \"databricks_schema\"" not in text, text
    assert f'gateway_storage_catalog = "{CATALOG}"' in re.sub(r" +", " ", text), text

    out = brickform(root, "adopt", "--catalog", CATALOG, "--prefix", demo["ws"] + "/", "--creator", "me").stdout
    assert "Adopting 18 object(s):" in out, out
    text = (root / "adopted.bf.hcl").read_text()
    flat = re.sub(r" +", " ", text)
    # References, not literal ids: schema -> catalog, pipeline -> schema, task -> pipeline,
    # ingestion -> gateway, a job's parameter -> the job it starts.
    for ref in [
        "catalog_name = databricks_catalog.lfc_adopt.name",
        f"target = databricks_schema.sdp_meta_bronze_lfc_{RUN_ID}.name",
        f"pipeline_id = databricks_pipeline.sdp_meta_lfc_bronze_{RUN_ID}.id",
        f"ingestion_gateway_id = databricks_ingestion_gateway.{demo['lfc']}_gw.id",
        f"downstream_job_id = databricks_job.sdp_meta_lfc_demo_{RUN_ID}_downstream.id",
        f"default = databricks_job.sdp_meta_lfc_demo_{RUN_ID}_downstream.id",
        "path = databricks_notebook.init_sdp_meta_pipeline.path",
        "notebook_path = databricks_notebook.lfcdemo_database.path",
    ]:
        assert ref in flat, f"{ref}\n{text}"
    for pid in demo["pipelines"]:
        assert f'id = "{pid}"' in text, "each pipeline has its import block"
    assert not re.search(r'(pipeline_id|ingestion_gateway_id) += "', text), "no literal pipeline ids"
    # The shared connection stays a name.
    assert f'connection_name = "{CONNECTION}"' in flat, text
    assert "databricks_connection" not in text
    # Content exported as the workspace holds it.
    assert (root / "adopted" / "init_sdp_meta_pipeline.py").read_text().startswith("# Databricks notebook source")
    assert json.loads((root / "adopted" / "setup_metadata.json").read_text())["uc_catalog_name"] == CATALOG

    plan = brickform(root, "plan", "-no-color").stdout
    assert "Plan: 18 to import, 0 to add, 0 to change, 0 to destroy." in plan, plan
    out = brickform(root, "apply", "--auto-approve").stdout
    assert "Resources: 18 imported, 0 added, 0 changed, 0 destroyed." in out, out
    r = brickform(root, "plan", "-detailed-exitcode", ok=False)
    assert r.returncode == 0, r.stdout + r.stderr

    out = brickform(root, "destroy", "--auto-approve").stdout
    assert "18 destroyed, 0 left behind" in out, out
    # In order: what uses an object goes before it.
    done = [l.split(":")[0] for l in out.splitlines() if "Destruction complete" in l]
    at = {a: i for i, a in enumerate(done)}
    for before, after in [
        (f"databricks_job.sdp_meta_lfc_demo_{RUN_ID}_downstream", f"databricks_pipeline.sdp_meta_lfc_bronze_{RUN_ID}"),
        (f"databricks_ingestion_pipeline.{demo['lfc']}_ig", f"databricks_ingestion_gateway.{demo['lfc']}_gw"),
        (f"databricks_pipeline.sdp_meta_lfc_bronze_{RUN_ID}", "databricks_notebook.init_sdp_meta_pipeline"),
        (f"databricks_volume.{CATALOG}_lfc_volume_{RUN_ID}", f"databricks_schema.sdp_meta_dataflowspecs_lfc_{RUN_ID}"),
        (f"databricks_schema.sdp_meta_bronze_lfc_{RUN_ID}", f"databricks_catalog.{CATALOG}"),
    ]:
        assert at[before] < at[after], f"{before} before {after}: {done}"
    assert CATALOG not in [c.name for c in w.catalogs.list()]
    assert not [p for p in w.pipelines.list_pipelines() if p.pipeline_id in demo["pipelines"]]
    assert not [j for j in w.jobs.list() if j.job_id in demo["jobs"]]
    left = [o.path for o in w.workspace.list(f"/Users/{demo['me']}", recursive=True) if o.object_type != workspace.ObjectType.DIRECTORY]
    assert left == [], left
    # What other demos share is still there.
    assert w.connections.get(CONNECTION).name == CONNECTION
