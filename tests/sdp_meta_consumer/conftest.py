"""One local SparkSession for the whole pytest session, shared by every sdp-meta consumer test.

This directory is deliberately NOT under tests/python: that conftest starts `brickform local serve`
for every test (autouse fixture) and its venv has no pyspark.
"""

import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import onboard as harness  # noqa: E402


@pytest.fixture(scope="session")
def spark():
    s = harness.new_spark("sdp-meta-consumer-tests")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def fixtures_root() -> pathlib.Path:
    return HERE / "fixtures"
