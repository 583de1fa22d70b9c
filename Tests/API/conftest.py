"""Fixtures for the API contract tests: `GET /openapi.json` of a running `gatehouse demo`, checked by
openapi-spec-validator and exercised by schemathesis.

Processes (127.0.0.1, free port, killed at teardown):
  * gateway - `$GATEHOUSE_BIN demo --listen 127.0.0.1:<port>` (default <repo>/.build/debug/gatehouse),
              with its stand-in providers; the tests sign in through the stand-in OAuth 2.0 server's form.

Tests are skipped when the binary or a Python package is missing, unless every test must run
(`GATEHOUSE_TEST_REQUIRE_ALL` or `CI` set, as scripts/test does): then they fail.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "Support"))
sys.path.insert(0, str(HERE))
from gatehouse_testkit import running_demo  # noqa: E402

STARTUP_TIMEOUT = float(os.environ.get("API_STARTUP_TIMEOUT", "60"))


@pytest.fixture(scope="session")
def demo():
    """The demo gateway: its base URL and its log (whose banner names the stand-ins)."""
    with running_demo("gatehouse-api-", STARTUP_TIMEOUT) as running:
        yield running


@pytest.fixture(scope="session")
def gateway(demo) -> str:
    return demo[0]


@pytest.fixture(scope="session")
def gateway_log(demo) -> Path:
    return demo[1]
