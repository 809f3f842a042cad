"""Auth (PAT, OAuth M2M, 401), SCIM Me, and the /__emulator control endpoints."""

import json
import urllib.error
import urllib.request

import pytest
from databricks.sdk import WorkspaceClient
from databricks.sdk.errors import InternalError

from conftest import Server


def test_current_user(w):
    me = w.current_user.me()
    assert me.user_name and me.active


def test_oauth_m2m_client_credentials(server):
    c = WorkspaceClient(host=server.url, client_id="sp-id", client_secret="sp-secret", auth_type="oauth-m2m")
    assert c.current_user.me().user_name
    log = server.control("GET", "/__emulator/requests?path=/oidc/v1/token")["requests"]
    assert log and log[-1]["status"] == 200


def test_requests_without_a_valid_token_get_401():
    s = Server("--token", "right")
    try:
        req = urllib.request.Request(s.url + "/api/2.1/unity-catalog/catalogs")
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=10)
        assert e.value.code == 401
        assert json.loads(e.value.read())["error_code"] == "UNAUTHENTICATED"
        from databricks.sdk.errors import Unauthenticated
        with pytest.raises(Unauthenticated):
            WorkspaceClient(host=s.url, token="wrong").catalogs.get("x")
        with pytest.raises(Exception):
            WorkspaceClient(host=s.url, token="right").catalogs.get("x")  # authenticated, so NotFound
        # A new workspace has only the `main` it starts with.
        assert [c.name for c in WorkspaceClient(host=s.url, token="right").catalogs.list()] == ["main"]
        # M2M clients must present the configured token as their secret.
        assert WorkspaceClient(host=s.url, client_id="a", client_secret="right", auth_type="oauth-m2m").current_user.me()
    finally:
        s.stop()


def test_retried_fault_then_success(w, server):
    server.control("POST", "/__emulator/faults", {"method": "GET", "path": "/api/2.1/unity-catalog/catalogs/c",
                                                  "status": 503, "times": 1, "retry_after": 1})
    w.catalogs.create(name="c")
    assert w.catalogs.get("c").name == "c"
    gets = server.control("GET", "/__emulator/requests?method=GET&path=/api/2.1/unity-catalog/catalogs/c")["requests"]
    assert [r["status"] for r in gets] == [503, 200]


def test_fault_after_side_effect_loses_the_response(w, server):
    server.control("POST", "/__emulator/faults", {"method": "POST", "path": "/api/2.1/unity-catalog/catalogs",
                                                  "status": 500, "after_side_effect": True})
    with pytest.raises(InternalError):
        w.catalogs.create(name="lost")
    assert w.catalogs.get("lost").name == "lost"


def test_state_dump_and_reset(w, server):
    w.catalogs.create(name="x")
    assert "x" in server.control("GET", "/__emulator/state")["catalogs"]
    server.control("POST", "/__emulator/reset", {})
    # Reset gives a new workspace: only the `main` every new one starts with.
    assert list(server.control("GET", "/__emulator/state")["catalogs"]) == ["main"]


def test_local_serve_persists_the_workspace_in_its_data_dir(tmp_path):
    data = tmp_path / "local"
    s = Server("--data", str(data))
    try:
        WorkspaceClient(host=s.url, token="t").catalogs.create(name="kept", comment="across restarts")
    finally:
        s.stop()
    assert s.proc.returncode == 0, "SIGTERM stops the server cleanly"
    assert (data / "workspace.json").exists()
    s = Server("--data", str(data))
    try:
        assert WorkspaceClient(host=s.url, token="t").catalogs.get("kept").comment == "across restarts"
    finally:
        s.stop()
