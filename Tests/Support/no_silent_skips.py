"""pytest plugin that scripts/test loads (`-p no_silent_skips`): when every test must run
(`GATEHOUSE_TEST_REQUIRE_ALL` or `CI` set, see gatehouse_testkit.require_all), a skipped test or
test module is reported as a failure, so a skip added later without `missing()` cannot hide a test.
Expected failures (xfail) are left alone.
"""
from __future__ import annotations

import pytest

from gatehouse_testkit import REQUIRE_ALL, require_all


def _reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # (path, line, "Skipped: reason")
        return f"{longrepr[2]} ({longrepr[0]}:{longrepr[1]})"
    return str(longrepr)


def _fail_skip(report) -> None:
    if report.skipped and not hasattr(report, "wasxfail") and require_all():
        report.longrepr = f"skipped, but {REQUIRE_ALL} or CI is set and every test must run: {_reason(report)}"
        report.outcome = "failed"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _fail_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _fail_skip(outcome.get_result())
