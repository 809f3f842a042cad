"""Pipelines and Lakeflow Connect through the official SDK."""

import pytest
from databricks.sdk.errors import BadRequest, NotFound
from databricks.sdk.service.catalog import ConnectionType
from databricks.sdk.service.pipelines import (
    IngestionConfig,
    IngestionGatewayPipelineDefinition,
    IngestionPipelineDefinition,
    NotebookLibrary,
    PipelineLibrary,
    SchemaSpec,
    TableSpec,
    TableSpecificConfig,
)


@pytest.fixture
def lfc_base(w):
    w.connections.create(name="sqlconn", connection_type=ConnectionType.SQLSERVER,
                         options={"host": "h", "port": "1433", "user": "u", "password": "p"})
    # `main` is there already: a new workspace starts with it.
    w.schemas.create(name="s", catalog_name="main")


def gateway_definition():
    return IngestionGatewayPipelineDefinition(connection_name="sqlconn", gateway_storage_catalog="main",
                                              gateway_storage_schema="s", gateway_storage_name="gw")


def test_gateway_and_ingestion_pipeline(w, lfc_base):
    gw = w.pipelines.create(name="gw", continuous=True, catalog="main", schema="s",
                            gateway_definition=gateway_definition()).pipeline_id
    ing_def = IngestionPipelineDefinition(ingestion_gateway_id=gw, objects=[
        IngestionConfig(table=TableSpec(source_catalog="db", source_schema="dbo", source_table="t",
                                        destination_catalog="main", destination_schema="s",
                                        table_configuration=TableSpecificConfig(primary_keys=["id"]))),
        IngestionConfig(schema=SchemaSpec(source_schema="sales", destination_catalog="main", destination_schema="s")),
    ])
    ing = w.pipelines.create(name="ing", serverless=True, catalog="main", schema="s",
                             ingestion_definition=ing_def).pipeline_id

    got = w.pipelines.get(ing)
    assert got.pipeline_id == ing and got.name == "ing" and got.spec.id == ing
    assert got.spec.ingestion_definition.source_type.value == "SQLSERVER"
    assert got.spec.ingestion_definition.ingestion_gateway_id == gw
    # The continuous gateway started by itself.
    assert w.pipelines.get(gw).state.value == "RUNNING"

    uid = w.pipelines.start_update(ing, full_refresh=True).update_id
    upd = w.pipelines.get_update(ing, uid).update
    assert upd.state.value == "COMPLETED" and upd.full_refresh
    assert [u.update_id for u in w.pipelines.list_updates(ing).updates] == [uid]
    assert [p.pipeline_id for p in w.pipelines.list_pipelines(filter="name LIKE 'in%'")] == [ing]

    stopped = w.pipelines.stop(gw).result()
    assert stopped.state.value == "IDLE"

    # Missing destination schema and missing gateway are rejected, naming the field.
    bad = IngestionPipelineDefinition(ingestion_gateway_id="nope", objects=ing_def.objects)
    with pytest.raises(BadRequest) as e:
        w.pipelines.create(name="bad", serverless=True, ingestion_definition=bad)
    assert "ingestion_gateway_id" in str(e.value)

    w.pipelines.delete(ing)
    w.pipelines.delete(gw)
    with pytest.raises(NotFound):
        w.pipelines.get(gw)


def test_gateway_needs_its_connection(w, lfc_base):
    w.connections.delete("sqlconn")
    with pytest.raises(BadRequest) as e:
        w.pipelines.create(name="gw", continuous=True, gateway_definition=gateway_definition())
    assert "connection_name" in str(e.value)


def test_edit_is_a_full_replace_with_optimistic_lock(w, lfc_base):
    w.workspace.mkdirs("/Shared/p")
    import base64

    from databricks.sdk.service.workspace import ImportFormat, Language
    w.workspace.import_("/Shared/p/nb", content=base64.b64encode(b"# Databricks notebook source\n").decode(),
                        format=ImportFormat.SOURCE, language=Language.PYTHON)
    lib = [PipelineLibrary(notebook=NotebookLibrary(path="/Shared/p/nb"))]
    pid = w.pipelines.create(name="sdp", catalog="main", schema="s", libraries=lib,
                             configuration={"layer": "bronze"}).pipeline_id
    before = w.pipelines.get(pid)
    w.pipelines.update(pid, name="sdp2", catalog="main", schema="s", libraries=lib,
                       expected_last_modified=before.last_modified)
    after = w.pipelines.get(pid)
    assert after.name == "sdp2" and after.spec.configuration is None
    with pytest.raises(Exception) as e:
        w.pipelines.update(pid, name="sdp3", catalog="main", schema="s", expected_last_modified=before.last_modified)
    assert "modified" in str(e.value)

    assert w.pipelines.get_update(pid, w.pipelines.start_update(pid).update_id).update.state.value == "COMPLETED"
    w.workspace.delete("/Shared/p/nb")
    failed = w.pipelines.get_update(pid, w.pipelines.start_update(pid).update_id).update
    assert failed.state.value == "FAILED"
