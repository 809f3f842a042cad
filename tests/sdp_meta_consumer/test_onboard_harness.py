"""The harness itself: hand-written onboarding files through released sdp-meta 0.1.0 onboarding."""

import json
import pathlib
import subprocess
import sys

import pytest

import onboard as harness

CONF = "/Volumes/c/s/v/conf"
PARAMS = {
    "onboard_layer": "bronze_silver",
    "database": "c.sdp_meta",
    "env": "prod",
    "bronze_dataflowspec_table": "bronze_dataflowspec",
    "silver_dataflowspec_table": "silver_dataflowspec",
    "import_author": "brickform",
    "version": "v1",
    "overwrite": "True",
    "uc_enabled": "True",
}


def cli_args(fixtures_root, onboarding):
    args = ["--files-root", str(fixtures_root), "--onboarding", f"{CONF}/{onboarding}"]
    return args + [a for k, v in PARAMS.items() for a in ("--param", f"{k}={v}")]


def by_id(rows):
    return {r["dataFlowId"]: r for r in rows}


@pytest.fixture(scope="module")
def cli_process(tmp_path_factory, fixtures_root):
    """The CLI as a script, in its own python process and JVM (~10 s), started early so that it runs
    while the in-process tests do (the machine has 2 cores); test_cli_as_a_script checks it."""
    d = tmp_path_factory.mktemp("cli")
    cmd = [sys.executable, harness.__file__, *cli_args(fixtures_root, "onboarding.json"), "--out", str(d / "rows.json")]
    with open(d / "stdout", "w") as stdout, open(d / "stderr", "w") as stderr:
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=stderr)
    yield proc, d
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def result(spark, fixtures_root, cli_process):
    return harness.onboard(fixtures_root, f"{CONF}/onboarding.json", PARAMS, spark=spark)


def test_really_runs_released_sdp_meta_0_1_0():
    from importlib.metadata import version

    assert version("databricks-labs-sdp-meta") == "0.1.0"
    assert version("pyspark") == "3.5.5"


def test_rows_are_sorted_and_split_by_layer(result):
    assert [r["dataFlowId"] for r in result["bronze"]] == ["10", "11", "12", "13", "14", "16", "17"]
    assert [r["dataFlowId"] for r in result["silver"]] == ["10", "15", "17"]
    assert result["tables"] == {"bronze": "c.sdp_meta.bronze_dataflowspec", "silver": "c.sdp_meta.silver_dataflowspec"}
    assert result["volume_writes"] == []
    for r in result["bronze"] + result["silver"]:
        assert r["version"] == "v1"
        assert r["createdBy"] == r["updatedBy"] == "brickform"
        assert r["targetFormat"] == "delta"
        assert isinstance(r["createDate"], str) and r["createDate"][:2] == "20"
    json.dumps(result)  # plain JSON values only


def test_cloudfiles_bronze_and_silver(result):
    b = by_id(result["bronze"])["10"]
    assert b["dataFlowGroup"] == "G"
    assert b["sourceFormat"] == "cloudFiles"
    assert b["sourceDetails"] == {"path": "/Volumes/c/landing/files/orders/"}
    assert b["readerConfigOptions"] == {"cloudFiles.format": "json", "cloudFiles.rescuedDataColumn": "_rescued_data"}
    assert b["targetDetails"] == {"database": "c.bronze", "table": "orders"}
    assert b["partitionColumns"] == [""]
    assert b["cdcApplyChanges"] is None and b["applyChangesFromSnapshot"] is None
    assert b["dataQualityExpectations"] is None and b["quarantineTargetDetails"] == {}
    # source_schema_path was read at onboarding (from the mirrored volume) into the spec's schema
    schema = json.loads(b["schema"])
    assert [f["name"] for f in schema["fields"]] == ["order_id", "customer_id", "amount", "country", "order_ts"]
    assert schema["fields"][2]["type"] == "decimal(10,2)"

    s = by_id(result["silver"])["10"]
    assert s["sourceFormat"] == "delta"
    assert s["sourceDetails"] == {"database": "c.bronze", "table": "orders"}
    assert s["targetDetails"] == {"database": "c.silver", "table": "orders"}
    # no entry for silver_table "orders" in the transformations file: pass-through
    assert s["selectExp"] is None and s["whereClause"] is None


def test_delta_source_keeps_catalog_in_source_database(result):
    b = by_id(result["bronze"])["11"]
    assert b["sourceFormat"] == "delta"
    assert b["sourceDetails"] == {"source_database": "c.raw", "source_table": "orders"}
    assert b["targetDetails"] == {"database": "c.bronze", "table": "orders_d"}
    assert b["schema"] is None


def test_kafka_source_details_verbatim(result):
    b = by_id(result["bronze"])["12"]
    assert b["sourceFormat"] == "kafka"
    assert b["sourceDetails"] == {
        "kafka.bootstrap.servers": "host:9092",
        "subscribe": "orders",
        "source_schema_path": f"{CONF}/orders.ddl",
    }
    assert b["readerConfigOptions"] == {"startingOffsets": "earliest"}
    assert json.loads(b["schema"])["type"] == "struct"


def test_eventhub_source_details_verbatim(result):
    b = by_id(result["bronze"])["13"]
    assert b["sourceFormat"] == "eventhub"
    assert b["sourceDetails"] == {
        "eventhub.namespace": "ns",
        "eventhub.name": "hub",
        "eventhub.port": "9093",
        "eventhub.accessKeyName": "policy",
        "eventhub.accessKeySecretName": "key",
        "eventhub.secretsScopeName": "scope",
    }
    assert b["targetDetails"] == {"database": "c.bronze", "table": "iot"}


def test_snapshot_with_apply_changes_from_snapshot(result):
    b = by_id(result["bronze"])["14"]
    assert b["dataFlowGroup"] == "G2"
    assert b["sourceFormat"] == "snapshot"
    assert b["sourceDetails"] == {"path": "/Volumes/c/s/v/snapshots/products/LOAD_", "snapshot_format": "csv"}
    assert b["readerConfigOptions"] == {"header": "true"}
    assert json.loads(b["applyChangesFromSnapshot"]) == {"keys": ["product_id"], "scd_type": "2"}
    assert b["cdcApplyChanges"] is None


def test_silver_fanout_row_is_silver_only(result):
    assert "15" not in by_id(result["bronze"])
    s = by_id(result["silver"])["15"]
    assert s["sourceDetails"] == {"database": "c.bronze", "table": "orders"}
    assert s["targetDetails"] == {"database": "c.silver", "table": "orders_eu"}
    assert s["selectExp"] == ["order_id", "customer_id", "amount"]
    assert s["whereClause"] == ["country IN ('DE', 'FR')"]


def test_cdc_with_dqe_and_quarantine(result):
    b = by_id(result["bronze"])["16"]
    assert b["dataFlowGroup"] == "G3"
    assert json.loads(b["cdcApplyChanges"]) == {
        "keys": ["customer_id"],
        "sequence_by": "dmsTimestamp",
        "scd_type": "1",
        "apply_as_deletes": "Op = 'D'",
        "except_column_list": ["Op", "dmsTimestamp"],
    }
    assert json.loads(b["dataQualityExpectations"]) == {
        "expect_or_drop": {"valid_customer_id": "customer_id IS NOT NULL"},
        "expect": {"valid_email": "email LIKE '%@%'"},
        "expect_or_quarantine": {"quarantine_rule": "customer_id IS NULL"},
    }
    q = b["quarantineTargetDetails"]
    assert q["database"] == "c.bronze" and q["table"] == "customers_quarantine"
    assert b["quarantineTableProperties"] == {}


def test_silver_select_exp_and_where_clause_from_transformations_file(result):
    s = by_id(result["silver"])["17"]
    assert s["dataFlowGroup"] == "G3"
    assert s["selectExp"] == ["transaction_id", "cast(amount as double) as amount", "upper(currency) as currency"]
    assert s["whereClause"] == ["amount > 0", "transaction_id IS NOT NULL"]
    assert s["sourceDetails"] == {"database": "c.bronze", "table": "transactions"}


def test_fixture_tree_is_left_untouched(result, fixtures_root):
    files = {str(p.relative_to(fixtures_root)) for p in fixtures_root.rglob("*") if p.is_file()}
    assert not any("yml_converted" in f for f in files)
    text = (fixtures_root / "Volumes/c/s/v/conf/onboarding.json").read_text()
    assert '"/Volumes/c/s/v/conf/silver_transformations.json"' in text


def test_duplicate_data_flow_ids_fail(spark, fixtures_root):
    with pytest.raises(harness.OnboardingError, match="duplicated data_flow_ids") as e:
        harness.onboard(fixtures_root, f"{CONF}/duplicate_ids.json", PARAMS, spark=spark)
    assert e.value.type_name == "Exception"


def test_bronze_dqe_without_any_bronze_quarantine_table_key_fails(spark, fixtures_root):
    # V4 (docs/architecture.md): 0.1.0 indexes onboarding_row["bronze_quarantine_table"] directly
    with pytest.raises(harness.OnboardingError) as e:
        harness.onboard(fixtures_root, f"{CONF}/dqe_without_quarantine_key.json", PARAMS, spark=spark)
    assert e.value.type_name == "PySparkValueError"
    assert "bronze_quarantine_table" in e.value.message


def test_bronze_layer_only(spark, fixtures_root):
    r = harness.onboard(fixtures_root, f"{CONF}/onboarding.json", {**PARAMS, "onboard_layer": "bronze"}, spark=spark)
    assert len(r["bronze"]) == 7 and r["silver"] == []
    assert r["tables"] == {"bronze": "c.sdp_meta.bronze_dataflowspec"}


def test_unknown_named_parameter_is_an_argparse_error(spark, fixtures_root):
    with pytest.raises(harness.OnboardingError, match="unrecognized arguments: --bogus=1"):
        harness.onboard(fixtures_root, f"{CONF}/onboarding.json", {**PARAMS, "bogus": "1"}, spark=spark)


def test_merge_when_overwrite_is_not_True(spark, fixtures_root):
    wh = harness.Warehouse()
    merge_params = {**PARAMS, "overwrite": "False", "version": "v2"}
    # UC merge path reads the existing spec table first: absent on a fresh workspace
    with pytest.raises(harness.OnboardingError, match="TABLE_OR_VIEW_NOT_FOUND"):
        harness.onboard(fixtures_root, f"{CONF}/onboarding.json", merge_params, spark=spark, warehouse=wh)

    first = harness.onboard(fixtures_root, f"{CONF}/onboarding.yml", PARAMS, spark=spark, warehouse=wh)
    assert [r["dataFlowId"] for r in first["bronze"]] == ["40"]
    second = harness.onboard(fixtures_root, f"{CONF}/onboarding.yml", merge_params, spark=spark, warehouse=wh)
    (row,) = second["bronze"]
    assert row["version"] == "v2"  # updated
    assert row["createDate"] == first["bronze"][0]["createDate"]  # createDate/createdBy are kept by the MERGE
    third = harness.onboard(fixtures_root, f"{CONF}/onboarding.json", merge_params, spark=spark, warehouse=wh)
    assert [r["dataFlowId"] for r in third["bronze"]] == ["10", "11", "12", "13", "14", "16", "17", "40"]


def test_yaml_onboarding_writes_converted_json_next_to_it(spark, fixtures_root):
    r = harness.onboard(fixtures_root, f"{CONF}/onboarding.yml", PARAMS, spark=spark)
    assert r["volume_writes"] == [f"{CONF}/onboarding_yml_converted.json"]
    (b,) = r["bronze"]
    assert b["dataFlowGroup"] == "Y" and b["sourceDetails"] == {"source_database": "c.raw", "source_table": "events"}
    assert r["silver"] == []


def test_cli_as_a_script(cli_process):
    proc, d = cli_process
    assert proc.wait(timeout=300) == 0, (d / "stderr").read_text()
    assert (d / "stdout").read_text() == ""
    rows = json.loads((d / "rows.json").read_text())
    assert [r["dataFlowId"] for r in rows["bronze"]] == ["10", "11", "12", "13", "14", "16", "17"]
    assert [r["dataFlowId"] for r in rows["silver"]] == ["10", "15", "17"]


def test_cli_result_on_stdout(spark, fixtures_root, capsys):
    assert harness.main(cli_args(fixtures_root, "onboarding.yml")) == 0
    out = capsys.readouterr()
    assert [r["dataFlowId"] for r in json.loads(out.out)["bronze"]] == ["40"]
    assert "data_flow_id" in out.err  # sdp-meta's show() of the onboarding file goes to stderr


def test_cli_failure_exits_non_zero_with_sdp_meta_message(spark, fixtures_root, capsys):
    assert harness.main(cli_args(fixtures_root, "duplicate_ids.json")) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert "sdp-meta onboarding failed: Exception: onboarding file have duplicated data_flow_ids!" in out.err


def test_cli_harness_error_exits_2(spark, tmp_path, capsys):
    assert harness.main(["--files-root", str(tmp_path / "missing"), "--onboarding", f"{CONF}/o.json"]) == 2
    assert "is not a directory" in capsys.readouterr().err
