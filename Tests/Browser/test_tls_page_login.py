"""A page login in a real Chromium over HTTPS and HTTP/2 from the gateway's own listener (`tls:`).

`gatehouse serve` terminates TLS itself with a certificate made here by `openssl` for 127.0.0.1; the demo's
legacy site and ACS-like sign-in are the providers. The login ends in a session whose cookie is the
default `__Host-gatehouse_session` (`Secure`), which a browser only keeps from an HTTPS origin, and the
pages came over HTTP/2 (ALPN `h2`).
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import requests

from conftest import STARTUP_TIMEOUT
from gatehouse_testkit import free_port, missing, require_gateway_binary, require_module, stop_process, tail, wait_until, yaml_quote as q
from test_login_pages import cookie_names, session_of, sign_in
from test_login_pages_two_instances import ACS_REALM, ACS_SIGNING_KEY


def openssl(*args: str, cwd: Path) -> None:
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def https_gateway(demo_standins):
    """(public https URL, CA file) of a `gatehouse serve` with `tls:`."""
    binary = require_gateway_binary()
    root = Path(tempfile.mkdtemp(prefix="gatehouse-tls-pages-"))
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "30", "-subj", "/CN=Gatehouse Browser Test CA", cwd=root)
    (root / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "leaf.key",
            "-out", "leaf.csr", "-subj", "/CN=127.0.0.1", cwd=root)
    openssl("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "leaf.pem",
            "-days", "20", "-extfile", "san.ext", cwd=root)
    providers = root / "Providers"
    providers.mkdir()
    acs, legacy = demo_standins["acs"], demo_standins["legacy"]
    key_file = root / "acs-signing-key"
    key_file.write_text(ACS_SIGNING_KEY + "\n")
    key_file.chmod(0o600)
    (providers / "azure.yaml").write_text(
        f"id: azure\nkind: acs\nlogin_url: {q(acs + '/login')}\nallowed_origins: [{q(acs)}]\nrealm: {q(ACS_REALM)}\n"
        f"issuer: {q(acs + '/')}\nsigning_key_file: {q(str(key_file))}\n")
    (providers / "legacy.yaml").write_text(
        f"id: legacy\nkind: capture\nlogin_url: {q(legacy + '/login')}\nallowed_origins: [{q(legacy)}]\n"
        f"success_url: {q(legacy + '/welcome*')}\ncapture: {{from: cookie}}\nprobe: {{url: {q(legacy + '/api/me')}}}\n")
    port = free_port()
    public = f"https://127.0.0.1:{port}"
    config = root / "gatehouse.yaml"
    config.write_text(f"""listen: "127.0.0.1:{port}"
public_url: {q(public)}
providers_dir: {q(str(providers))}
store: {{kind: "memory"}}
backend: {{url: "http://127.0.0.1:9", audience: "pages"}}
tls:
  certificate_file: {q(str(root / "leaf.pem"))}
  private_key_file: {q(str(root / "leaf.key"))}
""")
    log = root / "gateway.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(binary), "serve", "--config", str(config)], cwd=root, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)

    def up() -> bool:
        if proc.poll() is not None:
            return True
        try:
            return requests.get(public + "/healthz", verify=str(root / "ca.pem"), timeout=1).status_code == 200
        except requests.RequestException:
            return False

    try:
        assert wait_until(up, STARTUP_TIMEOUT, 0.1) and proc.poll() is None, tail(log)
        yield public, root / "ca.pem"
    finally:
        stop_process(proc)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture()
def tls_browser():
    """A Chromium that accepts the test's certificate (headless Chromium has no CA store of its own to add to)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        missing("chromium and chromedriver are not both on PATH (apt-get install chromium chromium-driver)")
    webdriver = require_module("selenium.webdriver", "pip install -r requirements-test.txt")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run",
                     "--ignore-certificate-errors"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.mark.parametrize("provider, fields, check", [
    ("legacy", {"user": "bob", "password": "secret"}, lambda s: s["subject"] == "user-bob"),
    ("azure", {"email": "carol@acs.demo.test"}, lambda s: s["identity"]["email"] == "carol@acs.demo.test"),
])
def test_page_login_over_https_and_http2(tls_browser, https_gateway, provider, fields, check):
    public, _ = https_gateway
    sign_in(tls_browser, public, provider, fields)
    session = session_of(tls_browser, public)
    assert session["provider"] == provider, session
    assert check(session), session
    cookies = {cookie["name"]: cookie for cookie in tls_browser.get_cookies()}
    assert "__Host-gatehouse_session" in cookies, cookies
    assert cookies["__Host-gatehouse_session"]["secure"] is True
    assert not {"acs_session", "site_session"} & cookie_names(tls_browser)
    protocol = tls_browser.execute_script("return performance.getEntriesByType('navigation')[0].nextHopProtocol")
    assert protocol == "h2", protocol
