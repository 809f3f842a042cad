"""Unity Catalog through the official SDK: catalogs, schemas, volumes, connections."""

import pytest
from databricks.sdk.errors import BadRequest, NotFound, ResourceConflict
from databricks.sdk.service.catalog import ConnectionType, VolumeType


def test_catalog_lifecycle_with_default_schema_and_rename(w):
    c = w.catalogs.create(name="Sales", comment="first", properties={"team": "a"})
    assert c.name == "sales" and c.full_name == "sales"
    assert c.owner and c.metastore_id and c.created_at and c.storage_location
    assert c.catalog_type.value == "MANAGED_CATALOG"
    assert [s.name for s in w.schemas.list(catalog_name="sales") if s.name == "default"] == ["default"]

    assert w.catalogs.get("SALES").comment == "first"
    assert "sales" in [x.name for x in w.catalogs.list()]
    updated = w.catalogs.update("sales", comment="second")
    assert updated.comment == "second" and updated.properties == {"team": "a"}

    renamed = w.catalogs.update("sales", new_name="sales2")
    assert renamed.name == "sales2"
    with pytest.raises(NotFound):
        w.catalogs.get("sales")
    assert w.schemas.get("sales2.default").full_name == "sales2.default"


def test_catalog_errors(w):
    w.catalogs.create(name="dup")
    with pytest.raises(ResourceConflict):
        w.catalogs.create(name="DUP")
    with pytest.raises(NotFound):
        w.catalogs.get("missing")
    with pytest.raises(BadRequest) as e:
        w.catalogs.delete("dup")
    assert "is not empty" in str(e.value) and "default" in str(e.value)
    w.catalogs.delete("dup", force=True)
    with pytest.raises(NotFound):
        w.catalogs.get("dup")


def test_schema_and_volume_lifecycle(w):
    # `main` is there already: a new workspace starts with it.
    s = w.schemas.create(name="Bronze", catalog_name="main", comment="raw")
    assert s.full_name == "main.bronze" and s.schema_id
    with pytest.raises(ResourceConflict):
        w.schemas.create(name="bronze", catalog_name="main")
    with pytest.raises(NotFound):
        w.schemas.create(name="x", catalog_name="nocatalog")
    assert w.schemas.update("main.bronze", comment="landing").comment == "landing"
    assert {x.name for x in w.schemas.list(catalog_name="main")} >= {"bronze", "default"}

    v = w.volumes.create(catalog_name="main", schema_name="bronze", name="Landing", volume_type=VolumeType.MANAGED)
    assert v.full_name == "main.bronze.landing" and v.volume_id and v.storage_location
    assert w.volumes.read("main.bronze.landing").volume_type == VolumeType.MANAGED
    assert w.volumes.update("main.bronze.landing", comment="files").comment == "files"
    assert [x.name for x in w.volumes.list(catalog_name="main", schema_name="bronze")] == ["landing"]

    with pytest.raises(BadRequest) as e:
        w.schemas.delete("main.bronze")
    assert "main.bronze.landing" in str(e.value)

    renamed = w.volumes.update("main.bronze.landing", new_name="inbox")
    assert renamed.full_name == "main.bronze.inbox"
    w.volumes.delete("main.bronze.inbox")
    with pytest.raises(NotFound):
        w.volumes.read("main.bronze.inbox")
    w.schemas.delete("main.bronze")
    with pytest.raises(NotFound):
        w.schemas.get("main.bronze")


def test_connection_secrets_are_never_returned(w):
    opts = {"host": "db.example.com", "port": "1433", "user": "sa", "password": "s3cret", "trustServerCertificate": "true"}
    c = w.connections.create(name="SqlConn", connection_type=ConnectionType.SQLSERVER, options=opts)
    assert c.name == "sqlconn" and c.connection_id
    assert "password" not in (c.options or {})
    got = w.connections.get("sqlconn")
    # The password and the user are withheld on read, as the service does.
    assert got.options == {"host": "db.example.com", "port": "1433", "trustServerCertificate": "true"}
    assert got.connection_type == ConnectionType.SQLSERVER

    upd = w.connections.update("sqlconn", options={**opts, "port": "1434"})
    assert upd.options["port"] == "1434" and "password" not in upd.options
    assert "sqlconn" in [x.name for x in w.connections.list()]
    with pytest.raises(ResourceConflict):
        w.connections.create(name="sqlconn", connection_type=ConnectionType.SQLSERVER, options=opts)
    w.connections.delete("sqlconn")
    with pytest.raises(NotFound):
        w.connections.get("sqlconn")


def test_uc_list_pagination_returns_everything(w, server):
    for i in range(7):
        w.catalogs.create(name=f"c{i}")
    page = server.control("GET", "/__emulator/state")
    # Seven made here, and the `main` a new workspace starts with.
    assert len(page["catalogs"]) == 8
    # The SDK follows next_page_token until it is absent.
    from databricks.sdk.service.catalog import CatalogInfo  # noqa: F401

    names = [c.name for c in w.catalogs.list(max_results=2)]
    assert names == [f"c{i}" for i in range(7)] + ["main"]
