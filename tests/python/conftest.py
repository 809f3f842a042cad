"""Starts `brickform local serve --port 0` once for the session and gives tests a client.

The binary comes from $BRICKFORM_BIN, else $CARGO_TARGET_DIR/debug/brickform, else
target/debug/brickform in the repository. A missing binary is an error, never a skip.
"""

import json
import os
import pathlib
import subprocess
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def brickform_bin() -> str:
    if os.environ.get("BRICKFORM_BIN"):
        return os.environ["BRICKFORM_BIN"]
    target = os.environ.get("CARGO_TARGET_DIR")
    base = pathlib.Path(target) if target else REPO / "target"
    if not base.is_absolute():
        base = REPO / base
    path = base / "debug" / "brickform"
    if not path.exists():
        raise RuntimeError(f"{path} does not exist: run `cargo build -p brickform` first or set BRICKFORM_BIN")
    return str(path)


class Server:
    """A running `brickform local serve`; stopped (SIGTERM, then kill) at the end."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen(
            [brickform_bin(), "local", "serve", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()
        if not line.startswith("Listening on "):
            self.stop()
            raise RuntimeError(f"unexpected first line {line!r}; stderr: {self.proc.stderr.read()}")
        self.url = line.split("Listening on ", 1)[1].strip()

    def control(self, method: str, path: str, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"{}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()


@pytest.fixture(scope="session", autouse=True)
def clean_environment():
    # A developer's DATABRICKS_* variables or ~/.databrickscfg must not leak into the SDK's config.
    saved = {k: v for k, v in os.environ.items() if k.startswith("DATABRICKS_")}
    for k in saved:
        del os.environ[k]
    os.environ["DATABRICKS_CONFIG_FILE"] = "/nonexistent/brickform-tests.databrickscfg"
    yield
    del os.environ["DATABRICKS_CONFIG_FILE"]
    os.environ.update(saved)


@pytest.fixture(scope="session")
def server():
    s = Server()
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def fresh(server):
    """Every test starts from an empty workspace with instant runs and updates."""
    server.control("POST", "/__emulator/reset", {})
    server.control("POST", "/__emulator/timings", {"update_step": 0, "run_setup": 0, "task": 0})
    yield


@pytest.fixture
def w(server):
    from databricks.sdk import WorkspaceClient

    return WorkspaceClient(host=server.url, token="local-token")
