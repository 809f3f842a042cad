"""Workspace objects, volume files and secrets through the official SDK."""

import base64
import io

import pytest
from databricks.sdk.errors import NotFound, ResourceConflict
from databricks.sdk.service.catalog import VolumeType
from databricks.sdk.service.workspace import ImportFormat, Language, ObjectType


def test_workspace_import_export_list_delete(w):
    w.workspace.mkdirs("/Shared/app/sub")
    src = b"# Databricks notebook source\nprint(1)\n"
    w.workspace.import_("/Shared/app/nb", content=base64.b64encode(src).decode(), format=ImportFormat.SOURCE,
                        language=Language.PYTHON, overwrite=True)
    # Multipart import: AUTO turns a .py with the notebook header into a notebook without the extension.
    w.workspace.upload("/Shared/app/sub/auto.py", io.BytesIO(src), format=ImportFormat.AUTO, overwrite=True)
    w.workspace.upload("/Shared/app/data.txt", io.BytesIO(b"plain"), format=ImportFormat.AUTO, overwrite=True)

    st = w.workspace.get_status("/Shared/app/nb")
    assert st.object_type == ObjectType.NOTEBOOK and st.language == Language.PYTHON and st.object_id
    assert w.workspace.get_status("/Shared/app/sub/auto").object_type == ObjectType.NOTEBOOK
    assert w.workspace.get_status("/Shared/app/data.txt").object_type == ObjectType.FILE
    assert base64.b64decode(w.workspace.export("/Shared/app/nb").content) == src
    assert w.workspace.download("/Shared/app/data.txt").read() == b"plain"
    assert {o.path for o in w.workspace.list("/Shared/app")} == {"/Shared/app/nb", "/Shared/app/sub", "/Shared/app/data.txt"}

    with pytest.raises(ResourceConflict):
        w.workspace.import_("/Shared/app/nb", content=base64.b64encode(src).decode(), format=ImportFormat.SOURCE,
                            language=Language.PYTHON)
    with pytest.raises(Exception) as e:
        w.workspace.delete("/Shared/app")
    assert "not empty" in str(e.value)
    w.workspace.delete("/Shared/app", recursive=True)
    with pytest.raises(NotFound):
        w.workspace.get_status("/Shared/app/nb")


def test_volume_files(w):
    # `main` is there already: a new workspace starts with it.
    w.schemas.create(name="s", catalog_name="main")
    w.volumes.create(catalog_name="main", schema_name="s", name="v", volume_type=VolumeType.MANAGED)
    w.files.create_directory("/Volumes/main/s/v/dir one")
    w.files.upload("/Volumes/main/s/v/dir one/a.csv", io.BytesIO(b"id\n1\n"), overwrite=True)
    assert w.files.download("/Volumes/main/s/v/dir one/a.csv").contents.read() == b"id\n1\n"
    meta = w.files.get_metadata("/Volumes/main/s/v/dir one/a.csv")
    assert meta.content_length == 5 and meta.last_modified
    entries = list(w.files.list_directory_contents("/Volumes/main/s/v"))
    assert [(e.name, e.is_directory) for e in entries] == [("dir one", True)]
    assert [e.file_size for e in w.files.list_directory_contents("/Volumes/main/s/v/dir one")] == [5]

    with pytest.raises(Exception):
        w.files.upload("/Volumes/main/s/v/dir one/a.csv", io.BytesIO(b"x"), overwrite=False)
    with pytest.raises(NotFound):
        w.files.get_metadata("/Volumes/main/s/v/missing.csv")
    with pytest.raises(Exception):
        w.files.delete_directory("/Volumes/main/s/v/dir one")
    w.files.delete("/Volumes/main/s/v/dir one/a.csv")
    w.files.delete_directory("/Volumes/main/s/v/dir one")
    assert list(w.files.list_directory_contents("/Volumes/main/s/v")) == []


def test_secrets(w):
    w.secrets.create_scope(scope="app")
    with pytest.raises(ResourceConflict):
        w.secrets.create_scope(scope="app")
    w.secrets.put_secret("app", "db-password", string_value="hunter2")
    assert [s.name for s in w.secrets.list_scopes()] == ["app"]
    assert [s.key for s in w.secrets.list_secrets("app")] == ["db-password"]
    assert base64.b64decode(w.secrets.get_secret("app", "db-password").value) == b"hunter2"
    w.secrets.delete_secret("app", "db-password")
    assert list(w.secrets.list_secrets("app")) == []
    w.secrets.delete_scope("app")
    with pytest.raises(NotFound):
        w.secrets.delete_scope("app")
