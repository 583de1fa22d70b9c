"""Fixtures for the login-page tests in a real headless Chromium.

Processes (127.0.0.1, free port, killed at teardown):
  * gateway - `$GATEHOUSE_BIN demo --listen 127.0.0.1:<port>` (default <repo>/.build/debug/gatehouse):
              the demo gateway with its stand-ins, among them the ACS-like sign-in (provider `azure`,
              Notify on load) and the legacy site (providers `legacy` by cookie, `legacytitle` by title).
  * chromium - Debian's chromium driven by chromedriver through selenium.

Tests are skipped when the binary, chromium, chromedriver or selenium is missing, unless every test
must run (`GATEHOUSE_TEST_REQUIRE_ALL` or `CI` set, as scripts/test does): then they fail.
"""
from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Support"))
from gatehouse_testkit import missing, require_module, running_demo  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
STARTUP_TIMEOUT = float(os.environ.get("BROWSER_STARTUP_TIMEOUT", "60"))


@pytest.fixture(scope="session")
def demo():
    """The demo gateway: its base URL and its log (whose banner names the stand-ins)."""
    with running_demo("gatehouse-browser-", STARTUP_TIMEOUT) as running:
        yield running


@pytest.fixture(scope="session")
def gateway(demo):
    return demo[0]


@pytest.fixture(scope="session")
def demo_standins(demo):
    """Base URLs of the demo's stand-ins, read off its banner: {"acs": …, "legacy": …}."""
    banner = demo[1].read_text(errors="replace")
    found = {}
    for key, label in (("acs", "ACS stand-in"), ("legacy", "legacy site")):
        match = re.search(label + r"\s+(http://\S+)", banner)
        assert match, f"the demo banner names no {label}:\n{banner[:2000]}"
        found[key] = match.group(1)
    return found


def new_browser():
    """A Chromium with a fresh profile of its own (cookies are not shared between two of them)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        missing(f"chromium and chromedriver are not both on PATH (chromium: {chromium}, chromedriver: {driver_path}; "
                "apt-get install chromium chromium-driver)")
    webdriver = require_module("selenium.webdriver", "pip install -r requirements-test.txt")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(30)
    return driver


@pytest.fixture()
def browser():
    driver = new_browser()
    yield driver
    driver.quit()


@pytest.fixture()
def second_browser():
    """Another person's browser: a second Chromium profile."""
    driver = new_browser()
    yield driver
    driver.quit()
