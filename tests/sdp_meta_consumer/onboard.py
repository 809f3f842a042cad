"""Runs released sdp-meta 0.1.0 onboarding on a tree of onboarding files; returns the dataflowspec rows.

Library:  ``onboard(files_root, onboarding_path, params) -> {"bronze": [...], "silver": [...], ...}``
CLI:      ``python onboard.py --files-root DIR --onboarding /Volumes/c/s/v/conf/onboarding.json \\
              --param onboard_layer=bronze_silver --param env=prod ... --out rows.json``

``files_root`` mirrors the Unity Catalog volume: ``/Volumes/c/s/v/conf/x.json`` is
``files_root/Volumes/c/s/v/conf/x.json``. The tree is copied to a temporary directory, and in
every ``.json``/``.yml``/``.yaml`` file of the copy and in every parameter value ``/Volumes/`` is
rewritten to ``<copy>/Volumes/``, so sdp-meta's own ``spark.read`` calls find the files on the local
disk. Every string in the result (and in error messages) is mapped back to ``/Volumes/...``.

The parameters go through the real ``run`` python_wheel entry point
(``databricks.labs.sdp_meta.__main__``: its argparse, then ``onboard_dataflowspecs``, i.e.
``OnboardDataflowspec(...).onboard_dataflow_specs()`` / ``onboard_bronze_dataflow_spec()`` /
``onboard_silver_dataflow_spec()``), exactly as a job's ``named_parameters`` (``--key=value``).

Delta Lake's jars are not available, so Delta I/O is redirected to an in-memory ``Warehouse``:
``DataFrameWriter.saveAsTable`` (what UC onboarding with ``overwrite == "True"`` does) collects the
DataFrame into the warehouse; ``DataFrameReader.table`` reads from it (a missing table raises
``[TABLE_OR_VIEW_NOT_FOUND]`` as on Databricks); the Delta MERGE of ``overwrite != "True"``
(``DeltaPipelinesInternalTableOps.merge``) is emulated on the collected rows with the same
semantics (match on the merge keys, update every column but ``createDate``/``createdBy``, insert
the rest). Non-UC onboarding (Delta writes to paths) is not supported.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import decimal
import io
import json
import os
import pathlib
import shutil
import sys
import tempfile
import traceback
from typing import Any, Iterator, Mapping, Optional

REWRITTEN_SUFFIXES = (".json", ".yml", ".yaml")
VOLUMES = "/Volumes/"


class HarnessError(Exception):
    """The harness cannot run this onboarding (bad input or an unsupported code path)."""


class OnboardingError(Exception):
    """sdp-meta's onboarding raised. ``str()`` is ``"<ExceptionType>: <message>"`` with paths mapped back."""

    def __init__(self, type_name: str, message: str):
        super().__init__(f"{type_name}: {message}")
        self.type_name = type_name
        self.message = message


# --------------------------------------------------------------------------------------------
# Spark
# --------------------------------------------------------------------------------------------


def new_spark(app_name: str = "sdp-meta-harness"):
    """A small local SparkSession for onboarding (no UI, one shuffle partition, UTC, loopback only)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    # never written to (saveAsTable is redirected), but keep Spark from choosing ./spark-warehouse
    warehouse_dir = os.path.join(tempfile.gettempdir(), "sdp-meta-harness-warehouse")
    spark = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        # a short-lived driver: C1 JIT only starts and warms up faster (first onboarding ~8 s -> ~5.5 s)
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", warehouse_dir)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# --------------------------------------------------------------------------------------------
# In-memory Delta stand-in
# --------------------------------------------------------------------------------------------


class Warehouse:
    """The Delta tables onboarding wrote: lower-cased full name -> (schema, collected rows).

    Pass the same Warehouse to several ``onboard`` calls to model one workspace (e.g. a second
    onboarding with ``overwrite=False`` merging into the tables the first one wrote).
    """

    def __init__(self):
        self.tables: dict[str, tuple[Any, list]] = {}

    def put(self, name: str, schema, rows: list) -> None:
        self.tables[name.lower()] = (schema, list(rows))

    def get(self, name: str):
        return self.tables.get(name.lower())


def _table_not_found(name: str):
    from pyspark.errors import AnalysisException

    quoted = ".".join(f"`{p}`" for p in name.split("."))
    return AnalysisException(
        message=f"[TABLE_OR_VIEW_NOT_FOUND] The table or view {quoted} cannot be found. (sdp-meta harness: "
        "no such table in this Warehouse)"
    )


def _merge_rows(existing, upsert_df, merge_keys, original_columns):
    """Delta MERGE as sdp-meta's DeltaPipelinesInternalTableOps.merge issues it, on collected rows."""
    from pyspark.sql import Row

    target_schema, target_rows = existing
    source_cols = set(upsert_df.columns)
    missing = [c for c in original_columns if c not in source_cols]
    if missing:
        raise HarnessError(f"MERGE would fail: source has no column(s) {missing} (target columns {original_columns})")
    not_to_update = {"createDate", "createdBy"}
    source_rows = [r.asDict() for r in upsert_df.collect()]
    target = [r.asDict() for r in target_rows]
    index = {tuple(t[k] for k in merge_keys): i for i, t in enumerate(target)}
    matched_once = set()
    for s in source_rows:
        key = tuple(s[k] for k in merge_keys)
        if key in index:
            if key in matched_once:
                raise HarnessError(f"MERGE would fail: several source rows match the target row {key}")
            matched_once.add(key)
            t = target[index[key]]
            for c in original_columns:
                if c not in not_to_update:
                    t[c] = s[c]
        else:
            new = {c: None for c in target_schema.fieldNames()}
            for c in original_columns:
                new[c] = s[c]
            target.append(new)
    names = target_schema.fieldNames()
    return target_schema, [Row(**{n: t.get(n) for n in names}) for t in target]


@contextlib.contextmanager
def redirect_delta(spark, warehouse: Warehouse) -> Iterator[None]:
    """Patch pyspark's writer/reader and sdp-meta's Delta merge so Delta I/O goes to ``warehouse``."""
    from pyspark.sql import readwriter
    from databricks.labs.sdp_meta import metastore_ops

    W, R = readwriter.DataFrameWriter, readwriter.DataFrameReader
    Ops = metastore_ops.DeltaPipelinesInternalTableOps
    w_format0, w_mode0, w_save0 = W.format, W.mode, W.save
    r_format0, r_load0 = R.format, R.load
    saved = [(W, "format", W.format), (W, "mode", W.mode), (W, "saveAsTable", W.saveAsTable), (W, "save", W.save),
             (R, "format", R.format), (R, "table", R.table), (R, "load", R.load), (Ops, "merge", Ops.merge)]

    def w_format(self, source):
        self._harness_format = source
        return w_format0(self, source)

    def w_mode(self, saveMode):
        self._harness_mode = saveMode
        return w_mode0(self, saveMode)

    def w_save_as_table(self, name, format=None, mode=None, partitionBy=None, **options):
        fmt = (format or getattr(self, "_harness_format", None) or "delta").lower()
        if fmt != "delta":
            raise HarnessError(f"saveAsTable({name!r}) with format {fmt!r}: only Delta tables are emulated")
        mode = (mode or getattr(self, "_harness_mode", None) or "errorifexists").lower()
        df = self._df
        rows = df.collect()
        existing = warehouse.get(name)
        if mode == "overwrite" or existing is None:
            warehouse.put(name, df.schema, rows)
        elif mode == "append":
            warehouse.put(name, existing[0], existing[1] + rows)
        elif mode in ("error", "errorifexists", "default"):
            from pyspark.errors import AnalysisException

            raise AnalysisException(message=f"[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table `{name}`")
        # "ignore": keep the existing table.

    def w_save(self, path=None, format=None, mode=None, partitionBy=None, **options):
        fmt = (format or getattr(self, "_harness_format", None) or "").lower()
        if fmt == "delta":
            raise HarnessError(f"Delta path write to {path!r}: non-UC onboarding is not supported by the harness")
        return w_save0(self, path, format, mode, partitionBy, **options)

    def r_format(self, source):
        self._harness_format = source
        return r_format0(self, source)

    def r_table(self, tableName):
        found = warehouse.get(tableName)
        if found is None:
            raise _table_not_found(tableName)
        return spark.createDataFrame(found[1], found[0])

    def r_load(self, path=None, format=None, schema=None, **options):
        fmt = (format or getattr(self, "_harness_format", None) or "").lower()
        if fmt == "delta":
            raise HarnessError(f"Delta path read of {path!r}: non-UC onboarding is not supported by the harness")
        return r_load0(self, path, format, schema, **options)

    def merge(self, upsert_records, target_table, merge_keys, original_columns):
        existing = warehouse.get(target_table)
        if existing is None:
            raise _table_not_found(target_table)
        schema, rows = _merge_rows(existing, upsert_records, merge_keys, original_columns)
        warehouse.put(target_table, schema, rows)

    patched = [(W, "format", w_format), (W, "mode", w_mode), (W, "saveAsTable", w_save_as_table), (W, "save", w_save),
               (R, "format", r_format), (R, "table", r_table), (R, "load", r_load), (Ops, "merge", merge)]
    for cls, attr, fn in patched:
        setattr(cls, attr, fn)
    try:
        yield
    finally:
        for cls, attr, fn in saved:
            setattr(cls, attr, fn)


# --------------------------------------------------------------------------------------------
# Files and paths
# --------------------------------------------------------------------------------------------


class _PathMap:
    def __init__(self, local_root: pathlib.Path):
        self.local = f"{local_root}{VOLUMES}"

    def to_local(self, s: str) -> str:
        return s.replace(VOLUMES, self.local)

    def to_volume(self, s: str) -> str:
        return s.replace(self.local, VOLUMES)

    def unmap(self, value):
        if isinstance(value, str):
            return self.to_volume(value)
        if isinstance(value, list):
            return [self.unmap(v) for v in value]
        if isinstance(value, dict):
            return {self.unmap(k): self.unmap(v) for k, v in value.items()}
        return value


def _stage_files(files_root: pathlib.Path, local_root: pathlib.Path, paths: _PathMap) -> set:
    shutil.copytree(files_root, local_root, symlinks=False)
    before = set()
    for p in local_root.rglob("*"):
        if not p.is_file():
            continue
        before.add(p)
        if p.suffix.lower() in REWRITTEN_SUFFIXES:
            try:
                text = p.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            if VOLUMES in text:
                p.write_text(paths.to_local(text), encoding="utf-8")
    return before


# --------------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------------


def _plain(value):
    """Collected Spark values -> JSON-able values (Rows and maps as dicts, timestamps as strings)."""
    from pyspark.sql import Row

    if isinstance(value, Row):
        return {k: _plain(v) for k, v in value.asDict(recursive=False).items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "replace")
    return value


def _layers(onboard_layer: Optional[str]) -> tuple:
    layer = (onboard_layer or "").lower()
    return {"bronze_silver": ("bronze", "silver"), "bronze": ("bronze",), "silver": ("silver",)}.get(layer, ())


# --------------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------------


def _parse_named_parameters(params: Mapping[str, Optional[str]]):
    """The real entry point's argparse on ``--key=value`` (as a python_wheel_task passes named_parameters)."""
    from databricks.labs.sdp_meta import __main__ as sdp_main

    argv = ["databricks_labs_sdp_meta"] + [f"--{k}={v}" for k, v in params.items() if v is not None]
    err = io.StringIO()
    old_argv = sys.argv
    sys.argv = argv
    try:
        with contextlib.redirect_stderr(err):
            return sdp_main.parse_args()
    except SystemExit as e:
        raise OnboardingError("SystemExit", f"argparse exited with {e.code}: {err.getvalue().strip()}") from None
    finally:
        sys.argv = old_argv


def onboard(
    files_root,
    onboarding_path: str,
    params: Mapping[str, Optional[str]],
    *,
    spark=None,
    warehouse: Optional[Warehouse] = None,
) -> dict:
    """Run sdp-meta 0.1.0's ``run`` entry point on the files under ``files_root``.

    ``onboarding_path`` is the volume path (``/Volumes/...``) given as ``onboarding_file_path``;
    ``params`` are the other named parameters (strings; ``None`` omits a key), e.g.
    ``onboard_layer, database, env, bronze_dataflowspec_table, silver_dataflowspec_table,
    import_author, version, overwrite, uc_enabled``.

    Returns ``{"bronze": [row...], "silver": [row...], "tables": {layer: full name},
    "volume_writes": [volume paths onboarding created]}``; rows are dicts sorted by ``dataFlowId``
    (maps as dicts, arrays as lists, JSON-string columns as strings, timestamps as ISO strings);
    a layer that ``onboard_layer`` does not cover has ``[]``. Raises ``OnboardingError`` when sdp-meta
    raises, ``HarnessError`` for input the harness cannot handle.
    """
    files_root = pathlib.Path(files_root).resolve()
    if not files_root.is_dir():
        raise HarnessError(f"files root {files_root} is not a directory")
    if not onboarding_path.startswith(VOLUMES):
        raise HarnessError(f"onboarding path {onboarding_path!r} is not under {VOLUMES}")
    params = dict(params)
    if params.get("onboarding_file_path") not in (None, onboarding_path):
        raise HarnessError(
            f"params onboarding_file_path={params['onboarding_file_path']!r} differs from {onboarding_path!r}"
        )
    params["onboarding_file_path"] = onboarding_path

    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession() or new_spark()
    warehouse = warehouse if warehouse is not None else Warehouse()

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="sdp_meta_harness_"))
    try:
        local_root = tmp / "root"
        paths = _PathMap(local_root)
        before = _stage_files(files_root, local_root, paths)
        local_params = {k: (paths.to_local(v) if isinstance(v, str) else v) for k, v in params.items()}

        from databricks.labs.sdp_meta import __main__ as sdp_main

        try:
            args = _parse_named_parameters(local_params)
            with redirect_delta(spark, warehouse):
                sdp_main.onboard_dataflowspecs(args)
        except (OnboardingError, HarnessError):
            raise
        except Exception as e:  # sdp-meta's (or Spark's) own error
            raise OnboardingError(type(e).__name__, paths.to_volume(str(e))) from e

        database = params.get("database") or ""
        result: dict = {"bronze": [], "silver": [], "tables": {}}
        for layer in _layers(params.get("onboard_layer")):
            name = f"{database}.{params.get(f'{layer}_dataflowspec_table')}"
            result["tables"][layer] = name
            found = warehouse.get(name)
            rows = [paths.unmap(_plain(r)) for r in (found[1] if found else [])]
            result[layer] = sorted(rows, key=lambda r: (r.get("dataFlowId") is None, str(r.get("dataFlowId"))))
        after = {p for p in local_root.rglob("*") if p.is_file()}
        result["volume_writes"] = sorted("/" + str(p.relative_to(local_root)) for p in after - before)
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files-root", required=True, help="directory mirroring the volume (DIR/Volumes/c/s/v/...)")
    ap.add_argument("--onboarding", required=True, help="onboarding_file_path, a /Volumes/... path")
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="a named parameter (repeat)")
    ap.add_argument("--out", default="-", help="output JSON file ('-' = stdout, the default)")
    a = ap.parse_args(argv)
    params = {}
    for p in a.param:
        if "=" not in p:
            ap.error(f"--param {p!r}: expected KEY=VALUE")
        k, v = p.split("=", 1)
        params[k] = v
    try:
        # sdp-meta prints DataFrames (show()) to stdout: keep stdout for the result.
        with contextlib.redirect_stdout(sys.stderr):
            result = onboard(a.files_root, a.onboarding, params)
    except OnboardingError as e:
        if e.__cause__ is not None:
            traceback.print_exception(e.__cause__, file=sys.stderr)
        print(f"sdp-meta onboarding failed: {e}", file=sys.stderr)
        return 1
    except HarnessError as e:
        print(f"sdp-meta harness error: {e}", file=sys.stderr)
        return 2
    text = json.dumps(result, indent=2, sort_keys=True) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        pathlib.Path(a.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
