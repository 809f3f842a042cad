"""examples/wheel-job as written: a real wheel built by `python -m build`, uploaded by
brickform's databricks_artifact, read back through the official SDK as a valid wheel, used by
the job's environment, built again (and the old one removed) only when the package changes."""

import io
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest
from databricks.sdk.errors import NotFound

from conftest import REPO, brickform_bin

FOLDER = "/Volumes/wheel_job/libs/wheels/greeter"


def brickform(root: pathlib.Path, *args: str) -> str:
    env = dict(os.environ)
    # The build's `python` is this test's: the venv that has `build` and `wheel`.
    env["PATH"] = f"{pathlib.Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["DATABRICKS_TOKEN"] = "local-token"
    env["NO_COLOR"] = "1"
    r = subprocess.run([brickform_bin(), "-C", str(root), *args], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"brickform {args}: {r.stdout}\n{r.stderr}"
    return r.stdout


@pytest.fixture
def example(tmp_path, server):
    root = tmp_path / "wheel-job"
    shutil.copytree(REPO / "examples" / "wheel-job", root, ignore=shutil.ignore_patterns(".brickform", "dist", "build", "*.egg-info"))
    main = root / "main.bf.hcl"
    main.write_text(main.read_text().replace('host = "local"', f'host = "{server.url}"'))
    return root


def wheel(w, path: str) -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BytesIO(w.files.download(path).contents.read()))


def test_the_wheel_is_built_uploaded_and_rebuilt_only_when_the_package_changes(w, example):
    out = brickform(example, "apply", "--auto-approve")
    assert "Resources: 5 added" in out, out
    first = f"{FOLDER}/greeter-0.1.0-py3-none-any.whl"
    assert f'wheel = "{first}"' in out, out

    z = wheel(w, first)
    names = set(z.namelist())
    assert "greeter/__init__.py" in names, names
    assert "Version: 0.1.0" in z.read("greeter-0.1.0.dist-info/METADATA").decode()
    assert "greet = greeter:main" in z.read("greeter-0.1.0.dist-info/entry_points.txt").decode()

    job = next(j for j in w.jobs.list(expand_tasks=True) if j.settings.name == "wheel_job-greet")
    assert job.settings.environments[0].spec.dependencies == [first]
    assert job.settings.tasks[0].python_wheel_task.entry_point == "greet"

    # Nothing changed: nothing to do (the build's own leftovers are not inputs).
    assert "No changes." in brickform(example, "plan")

    # A new version: built, uploaded, the job follows it, the old wheel goes.
    pyproject = example / "greeter" / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('version = "0.1.0"', 'version = "0.2.0"'))
    out = brickform(example, "apply", "--auto-approve")
    assert "Resources: 0 added, 2 changed, 0 destroyed." in out, out
    second = f"{FOLDER}/greeter-0.2.0-py3-none-any.whl"
    assert "Version: 0.2.0" in wheel(w, second).read("greeter-0.2.0.dist-info/METADATA").decode()
    with pytest.raises(NotFound):
        w.files.get_metadata(first)
    job = w.jobs.get(job.job_id)
    assert job.settings.environments[0].spec.dependencies == [second]
    assert "No changes." in brickform(example, "plan")

    out = brickform(example, "destroy", "--auto-approve")
    assert "0 left behind" in out, out
    assert not [c for c in w.catalogs.list() if c.name == "wheel_job"]
