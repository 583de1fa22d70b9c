"""Browser errors in a real headless Chromium: a page login whose site is down and a login to an OIDC
provider whose discovery fails show the person the HTML error page (status, `code`, `request_id`), not
problem+json, and one log line with that `request_id` names the cause.

The gateway is `$GATEHOUSE_BIN serve` (JSON logs) with two providers that point at a closed loopback port:
`gone` (kind capture: its login page cannot be reached) and `sso` (kind oidc: its discovery fails)."""
from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from gatehouse_testkit import free_port, require_gateway_binary, stop_process, wait_for_http, wait_until, yaml_quote as q


@pytest.fixture(scope="module")
def broken_gateway():
    """A gateway whose page-login site and OIDC issuer are both down: (base URL, path of its log)."""
    binary = require_gateway_binary()
    root = Path(tempfile.mkdtemp(prefix="gatehouse-browser-errors-"))
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    (root / "Providers").mkdir()
    (root / "gatehouse.yaml").write_text('store: {kind: "memory"}\nlogging: {format: "json"}\n')
    (root / "Providers" / "gone.yaml").write_text("\n".join([
        'id: "gone"', 'kind: "capture"', f"login_url: {q(down + '/login')}", f"allowed_origins: [{q(down)}]",
        f"success_url: {q(down + '/welcome*')}", f"probe: {{url: {q(down + '/probe')}}}", ""]))
    (root / "Providers" / "sso.yaml").write_text("\n".join([
        'id: "sso"', 'kind: "oidc"', f"issuer: {q(down)}", 'client_id: "gatehouse"', ""]))
    port = free_port()
    log = root / "gateway.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(binary), "serve", "--listen", f"127.0.0.1:{port}", "--config", str(root / "gatehouse.yaml")],
            cwd=str(root), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(proc, base + "/healthz", 30, log)
        yield base, log
    finally:
        stop_process(proc)


def log_lines(log: Path) -> list[dict]:
    lines = []
    for line in log.read_text(errors="replace").splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            pass
    return lines


def shown_error(browser) -> tuple[str, str]:
    """The page's `code` and `request_id` as a person sees them (and as its meta elements say)."""
    code = browser.find_element(By.CSS_SELECTOR, "code.code").text
    request_id = browser.find_element(By.CSS_SELECTOR, "code.request-id").text
    meta = browser.find_element(By.CSS_SELECTOR, 'meta[name="gatehouse-error"]').get_attribute("content")
    meta_id = browser.find_element(By.CSS_SELECTOR, 'meta[name="gatehouse-request-id"]').get_attribute("content")
    assert (code, request_id) == (meta, meta_id)
    assert request_id
    return code, request_id


def cause_line(log: Path, request_id: str, message: str) -> dict:
    """The one log line of `request_id` whose message contains `message`."""
    found: list[dict] = []

    def logged() -> bool:
        found[:] = [line for line in log_lines(log)
                    if json.dumps(line).find(request_id) >= 0 and message in str(line.get("message", ""))]
        return len(found) == 1

    assert wait_until(logged, 5), f"no single line '{message}' with request_id {request_id}:\n{log.read_text()[-3000:]}"
    return found[0]


def test_page_login_whose_site_is_down_shows_the_error_page(browser, broken_gateway):
    base, log = broken_gateway
    browser.get(f"{base}/v1/auth/gone/login?return_to=/")
    assert browser.current_url.startswith(f"{base}/v1/pages/"), browser.current_url
    assert "problem+json" not in browser.page_source and '"type"' not in browser.page_source
    assert browser.find_element(By.TAG_NAME, "h1").text == "Sign-in failed"
    code, request_id = shown_error(browser)
    assert code == "upstream_unavailable"
    line = cause_line(log, request_id, "login page unreachable")
    assert line.get("provider") == "gone" or "gone" in json.dumps(line)
    assert "refused" in json.dumps(line).lower(), line  # the connection error itself


def test_login_to_an_oidc_provider_whose_discovery_fails_shows_the_error_page(browser, broken_gateway):
    base, log = broken_gateway
    browser.get(f"{base}/v1/auth/sso/login?return_to=/")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Sign-in failed"
    code, request_id = shown_error(browser)
    assert code == "provider_unavailable"
    line = cause_line(log, request_id, "provider not ready")
    assert "discovery" in json.dumps(line).lower(), line
