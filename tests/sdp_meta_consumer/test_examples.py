"""The files brickform renders for the examples, read by released sdp-meta 0.1.0 itself.

Each test applies an example to a fresh local workspace with the brickform binary, takes the
onboarding files out of the workspace's volume and the named parameters out of the onboarding
job brickform created, and runs sdp-meta's own onboarding (`onboard.py`) on exactly those.
The dataflowspec rows it writes are what the bronze and silver pipelines will read.
"""

import base64
import json
import os
import pathlib
import shutil
import subprocess
import urllib.request

import pytest

from onboard import onboard

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


def workspace_state(data: pathlib.Path) -> dict:
    """The local workspace kept in `data`, as `brickform local serve` reports it (the files
    on disk are a snapshot and a journal of later changes, not one document)."""
    proc = subprocess.Popen(
        [brickform_bin(), "local", "serve", "--port", "0", "--data", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("Listening on "), f"{line!r}: {proc.stderr.read()}"
        url = line.split("Listening on ", 1)[1].strip()
        with urllib.request.urlopen(url + "/__emulator/state", timeout=30) as r:
            return json.loads(r.read())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            stream.close()


def apply_example(name: str, tmp_path: pathlib.Path, edit=None):
    """Applies examples/NAME in a copy (its main.bf.hcl passed through `edit` first, when
    given); returns (volume files root, onboarding job parameters)."""
    work = tmp_path / name
    shutil.copytree(REPO / "examples" / name, work, ignore=shutil.ignore_patterns(".brickform"))
    if edit is not None:
        main = work / "main.bf.hcl"
        before = main.read_text()
        after = edit(before)
        assert after != before, "the edit changed nothing"
        main.write_text(after)
    done = subprocess.run(
        [brickform_bin(), "-C", str(work), "apply", "--local", "--auto-approve"],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    dump = workspace_state(work / ".brickform/local")
    root = tmp_path / f"{name}-volumes"
    for path, f in dump["files"].items():
        if f["kind"] == "file":
            local = root / path.lstrip("/")
            local.parent.mkdir(parents=True, exist_ok=True)
            local.write_bytes(base64.b64decode(f["content"]))
    wheel_tasks = [
        t["python_wheel_task"]
        for job in dump["jobs"].values()
        for t in job["settings"].get("tasks", [])
        if "python_wheel_task" in t
    ]
    assert len(wheel_tasks) == 1, wheel_tasks
    assert wheel_tasks[0]["package_name"] == "databricks_labs_sdp_meta"
    assert wheel_tasks[0]["entry_point"] == "run"
    return root, wheel_tasks[0]["named_parameters"], dump


def by_id(rows):
    return {r["dataFlowId"]: r for r in rows}


def yaml_onboarding(text: str) -> str:
    """The lfc-demo onboarding written as YAML: onboarding.yml, and with it the expectations
    and transformations files brickform renders."""
    return text.replace(
        '  import_author             = "brickform"\n',
        '  import_author             = "brickform"\n  file_name                 = "onboarding.yml"\n',
        1,
    )


@pytest.mark.parametrize("file_format", ["json", "yml"])
def test_lfc_demo_files_onboard_with_released_sdp_meta(spark, tmp_path, file_format):
    root, params, dump = apply_example(
        "lfc-demo", tmp_path, yaml_onboarding if file_format == "yml" else None
    )
    assert params["onboarding_file_path"].endswith(f"/conf/onboarding.{file_format}")
    # Every file of the set is in the onboarding file's format, and the rows name them.
    conf = next(root.glob("Volumes/lfc_demo/*/*/conf"))
    # (The copy sdp-meta converts a YAML onboarding file to, when the demo's job ran, aside.)
    sidecars = sorted(
        p.relative_to(conf).as_posix()
        for p in conf.rglob("*")
        if p.is_file() and not p.name.endswith("_yml_converted.json")
    )
    assert sidecars == sorted(
        f"{name}.{file_format}"
        for name in ["onboarding", "silver_transformations", "dqe/1/bronze_expectations", "dqe/1/silver_expectations"]
    ), sidecars
    result = onboard(root, params["onboarding_file_path"], params, spark=spark)

    assert result["tables"] == {
        "bronze": "lfc_demo.sdp_meta_dataflowspecs_lfc_demo.bronze_dataflowspec_cdc",
        "silver": "lfc_demo.sdp_meta_dataflowspecs_lfc_demo.silver_dataflowspec_cdc",
    }
    # The pipelines select these rows by the group and table brickform gave them.
    confs = {p["spec"]["name"]: p["spec"].get("configuration", {}) for p in dump["pipelines"].values()}
    assert confs["sdp-meta-lfc-bronze-demo"]["bronze.dataflowspecTable"] == result["tables"]["bronze"]
    assert confs["sdp-meta-lfc-silver-demo"]["silver.dataflowspecTable"] == result["tables"]["silver"]

    bronze = by_id(result["bronze"])
    assert sorted(bronze) == ["1", "2"]
    assert {r["dataFlowGroup"] for r in bronze.values()} == {confs["sdp-meta-lfc-bronze-demo"]["bronze.group"]}

    intpk = bronze["1"]
    assert intpk["sourceFormat"] == "delta"
    assert intpk["sourceDetails"]["source_database"] == "lfc_demo.lfcdemo_sqlserver_demo"
    assert intpk["sourceDetails"]["source_table"] == "intpk"
    assert intpk["targetDetails"]["database"] == "lfc_demo.sdp_meta_bronze_lfc_demo"
    assert intpk["targetDetails"]["table"] == "intpk"
    assert intpk["readerConfigOptions"] == {"readChangeFeed": "true"}
    cdc = json.loads(intpk["cdcApplyChanges"])
    assert cdc["keys"] == ["pk"]
    assert cdc["sequence_by"] == "_commit_version"
    assert cdc["scd_type"] == "1"
    assert cdc["apply_as_deletes"] == "_change_type = 'delete'"
    assert cdc["except_column_list"] == ["_change_type", "_commit_version", "_commit_timestamp"]
    assert json.loads(intpk["dataQualityExpectations"]) == {"expect_or_drop": {"valid_pk": "pk IS NOT NULL"}}
    assert intpk["quarantineTargetDetails"]["table"] == "intpk_quarantine"
    assert intpk["quarantineTargetDetails"]["database"] == "lfc_demo.sdp_meta_bronze_lfc_demo"

    dtix = bronze["2"]
    assert dtix["sourceFormat"] == "snapshot"
    assert dtix["sourceDetails"]["snapshot_format"] == "delta"
    assert dtix["sourceDetails"]["source_database"] == "lfc_demo.lfcdemo_sqlserver_demo"
    assert dtix["sourceDetails"]["source_table"] == "dtix"
    assert json.loads(dtix["applyChangesFromSnapshot"]) == {"keys": ["dt", "lfc_end_at"], "scd_type": "1"}
    assert dtix["cdcApplyChanges"] is None

    silver = by_id(result["silver"])
    assert sorted(silver) == ["1", "2"]
    s_intpk = silver["1"]
    assert s_intpk["sourceDetails"]["database"] == "lfc_demo.sdp_meta_bronze_lfc_demo"
    assert s_intpk["sourceDetails"]["table"] == "intpk"
    assert s_intpk["targetDetails"]["database"] == "lfc_demo.sdp_meta_silver_lfc_demo"
    assert s_intpk["selectExp"] == ["pk", "dt", "_change_type", "_commit_version", "_commit_timestamp"]
    assert s_intpk["readerConfigOptions"] == {"readChangeFeed": "true"}
    assert json.loads(s_intpk["cdcApplyChanges"])["keys"] == ["pk"]
    assert json.loads(s_intpk["dataQualityExpectations"]) == {"expect": {"valid_dt": "dt IS NOT NULL"}}
    s_dtix = silver["2"]
    assert json.loads(s_dtix["applyChangesFromSnapshot"]) == {"keys": ["dt", "lfc_end_at"], "scd_type": "1"}
    assert s_dtix["selectExp"] is None


def test_flows_from_csv_files_onboard_with_released_sdp_meta(spark, tmp_path):
    root, params, dump = apply_example("flows-from-csv", tmp_path)
    assert params["env"] == "dev"
    result = onboard(root, params["onboarding_file_path"], params, spark=spark)

    csv_rows = (REPO / "examples/flows-from-csv/flows.csv").read_text().splitlines()[1:]
    expected = {}
    for line in csv_rows:
        fid, group, fmt, source, table, keys, partitions = line.split(",")
        expected[fid] = (group, fmt, source, table, keys, partitions)

    bronze = by_id(result["bronze"])
    silver = by_id(result["silver"])
    assert sorted(bronze) == sorted(expected)
    assert sorted(silver) == sorted(expected)
    for fid, (group, fmt, source, table, keys, partitions) in expected.items():
        b = bronze[fid]
        assert b["dataFlowGroup"] == group
        assert b["sourceFormat"] == fmt
        assert b["targetDetails"]["table"] == table
        assert b["targetDetails"]["database"] == "csv_flows.bronze"
        if fmt == "cloudFiles":
            assert b["sourceDetails"]["path"] == f"/Volumes/csv_flows/raw/landing/{source}"
            assert b["readerConfigOptions"] == {"cloudFiles.format": "json"}
        else:
            assert b["sourceDetails"]["source_database"] == "csv_flows." + source.split(".")[0]
            assert b["sourceDetails"]["source_table"] == source.split(".")[1]
        assert b["partitionColumns"] == ([partitions] if partitions else [""])
        s = silver[fid]
        assert s["dataFlowGroup"] == group
        assert s["sourceDetails"]["table"] == table
        assert s["targetDetails"]["database"] == "csv_flows.silver"
        cdc = json.loads(s["cdcApplyChanges"])
        assert cdc["keys"] == [keys] and cdc["scd_type"] == "1"
    groups = {}
    for r in result["bronze"]:
        groups[r["dataFlowGroup"]] = groups.get(r["dataFlowGroup"], 0) + 1
    assert groups == {"finance": 100, "retail": 100}
