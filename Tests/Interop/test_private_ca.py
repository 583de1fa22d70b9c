"""Sign-in through the gateway with django-oauth-toolkit's OpenID Connect provider served over `https` with a
certificate of a private CA (docs/operations.md "A provider or upstream behind a private CA").

DOT serves TLS itself here (`DOT_TLS_CERT_FILE`, run.py), with a leaf the test's CA (openssl, on this machine)
signed; its issuer is `https://127.0.0.1:<port>/o`. Four gateways share it, each with provider `corp` (kind oidc,
everything from discovery): one trusts the CA by `outbound_tls.ca_files`, one by `SSL_CERT_FILE` in its
environment, one by the provider file's `tls.ca_file`, and one not at all, whose provider is not ready, said in
words. The machine's environment may set SSL_CERT_FILE / SSL_CERT_DIR to the system's bundle: each gateway gets
them empty (unset) unless it is the one that trusts by SSL_CERT_FILE.
"""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from conftest import HERE, STARTUP_TIMEOUT, _q, _stop, _tail
from interop_support import TIMEOUT, dot_sign_in, free_port, pkce_pair, query_of, without_query

sys.path.insert(0, str(HERE.parent / "Support"))
from gatehouse_testkit import require_gateway_binary, wait_for_http  # noqa: E402
from private_ca import PrivateCA  # noqa: E402

PROVIDER = "corp"
REDIRECT_URI = "http://127.0.0.1:9/cb"
VARIANTS = ("ca_files", "ssl_cert_file", "provider_ca_file", "untrusted")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("private-ca-interop")


@pytest.fixture(scope="module")
def ca(workdir) -> PrivateCA:
    return PrivateCA(workdir / "ca", "Gatehouse Interop Private CA")


@pytest.fixture(scope="module")
def ports() -> dict[str, int]:
    """Chosen before DOT starts: it registers each gateway's callback."""
    return {variant: free_port() for variant in VARIANTS}


@pytest.fixture(scope="module")
def tls_dot(workdir, ca, ports):
    chain, key = ca.leaf("dot")
    data = workdir / "dot"
    data.mkdir()
    out, log = workdir / "dot.stdout", workdir / "dot.log"
    env = dict(os.environ, DOT_DATA_DIR=str(data), DOT_PORT="0", DOT_TLS_CERT_FILE=str(chain), DOT_TLS_KEY_FILE=str(key),
               DOT_OIDC_REDIRECT_URIS=" ".join(f"http://127.0.0.1:{port}/v1/auth/{PROVIDER}/callback" for port in ports.values()),
               DOT_ACCESS_TOKEN_EXPIRE_SECONDS="600", PYTHONUNBUFFERED="1")
    with open(out, "wb") as so, open(log, "wb") as se:
        proc = subprocess.Popen([sys.executable, str(HERE / "dot_server" / "run.py")], stdout=so, stderr=se,
                                stdin=subprocess.DEVNULL, env=env, cwd=str(data))
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        info = None
        while info is None:
            for line in out.read_text(errors="replace").splitlines():
                if line.startswith("DOT_READY "):
                    info = json.loads(line[len("DOT_READY "):])
            if info is None and proc.poll() is not None:
                pytest.fail(f"DOT exited with {proc.returncode}:\n{_tail(log)}")
            if info is None and time.monotonic() > deadline:
                pytest.fail(f"DOT not ready after {STARTUP_TIMEOUT}s:\n{_tail(log)}")
            time.sleep(0.2)
        assert info["issuer"].startswith("https://127.0.0.1:"), info
        yield info
    finally:
        _stop(proc)


class Gateway:
    def __init__(self, url: str, proc: subprocess.Popen, log: Path):
        self.url, self.proc, self.log = url, proc, log

    def text(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture(scope="module")
def gateways(workdir, ca, ports, tls_dot):
    binary = require_gateway_binary()
    started: dict[str, Gateway] = {}
    try:
        for variant, port in ports.items():
            root = workdir / f"gateway-{variant}"
            (root / "Providers").mkdir(parents=True)
            (root / "secret").write_text(tls_dot["oidc_client_secret"] + "\n")
            (root / "secret").chmod(0o600)
            outbound = f"outbound_tls: {{ca_files: [{_q(str(ca.certificate))}]}}\n" if variant == "ca_files" else ""
            (root / "gatehouse.yaml").write_text(
                f'listen: {_q(f"127.0.0.1:{port}")}\nstore: {{kind: "memory"}}\n'
                f"allowed_redirect_uris: [{_q(REDIRECT_URI)}]\n{outbound}")
            provider_tls = f"tls: {{ca_file: {_q(str(ca.certificate))}}}\n" if variant == "provider_ca_file" else ""
            (root / "Providers" / f"{PROVIDER}.yaml").write_text(
                f'id: "{PROVIDER}"\nkind: "oidc"\nissuer: {_q(tls_dot["issuer"])}\n'
                f'client_id: {_q(tls_dot["oidc_client_id"])}\nclient_secret_file: {_q(str(root / "secret"))}\n{provider_tls}')
            env = {k: v for k, v in os.environ.items() if not k.startswith("GATEHOUSE_") or k == "GATEHOUSE_BIN"}
            env.update(SSL_CERT_FILE=str(ca.certificate) if variant == "ssl_cert_file" else "", SSL_CERT_DIR="")
            log = workdir / f"gateway-{variant}.log"
            with open(log, "wb") as f:
                proc = subprocess.Popen([str(binary), "serve", "--config", str(root / "gatehouse.yaml")], stdout=f,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=str(root), env=env)
            url = f"http://127.0.0.1:{port}"
            started[variant] = Gateway(url, proc, log)
            wait_for_http(proc, url + "/healthz", STARTUP_TIMEOUT, log)
        yield started
    finally:
        for gateway in started.values():
            _stop(gateway.proc)


def sign_in(gateway: Gateway, dot: dict, ca: PrivateCA) -> requests.Response:
    """Client -> gateway login -> DOT (https, private CA) -> gateway callback -> POST /v1/session."""
    verifier, challenge = pkce_pair()
    state = secrets.token_urlsafe(16)
    r = requests.get(f"{gateway.url}/v1/auth/{PROVIDER}/login",
                     params={"redirect_uri": REDIRECT_URI, "state": state, "code_challenge": challenge,
                             "code_challenge_method": "S256"}, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 302, f"login: {r.status_code}: {r.text[:1000]}\n{gateway.text()[-3000:]}"
    to_dot = r.headers["Location"]
    assert without_query(to_dot) == dot["url"] + "/o/authorize/", to_dot
    browser = requests.Session()
    browser.trust_env = False  # REQUESTS_CA_BUNDLE in the environment would win over `verify`
    browser.verify = str(ca.certificate)
    callback = dot_sign_in(browser, to_dot, dot["username"], dot["password"]).headers["Location"]
    r = requests.get(callback, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 302, f"callback: {r.status_code}: {r.text[:1000]}\n{gateway.text()[-3000:]}"
    back = query_of(r.headers["Location"])
    assert back.get("state") == state and "error" not in back, back
    return requests.post(f"{gateway.url}/v1/session",
                         json={"grant_type": "authorization_code", "code": back["code"], "code_verifier": verifier,
                               "redirect_uri": REDIRECT_URI}, timeout=TIMEOUT)


@pytest.mark.parametrize("variant", ["ca_files", "ssl_cert_file", "provider_ca_file"])
def test_sign_in_through_a_provider_behind_a_private_ca(gateways, tls_dot, ca, variant):
    gateway = gateways[variant]
    created = sign_in(gateway, tls_dot, ca)
    assert created.status_code == 201, f"{created.status_code}: {created.text}\n{gateway.text()[-3000:]}"
    token = created.json()["session_token"]
    view = requests.get(f"{gateway.url}/v1/session", headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT)
    assert view.status_code == 200 and view.json()["identity"]["email"] == tls_dot["email"], view.text
    assert requests.get(gateway.url + "/readyz", timeout=TIMEOUT).json()["status"] == "ready"


def test_without_trust_the_provider_is_not_ready_in_words(gateways):
    gateway = gateways["untrusted"]
    deadline = time.monotonic() + 15
    while "provider not ready" not in gateway.text() and time.monotonic() < deadline:
        time.sleep(0.2)
    line = next((l for l in gateway.text().splitlines() if "provider not ready" in l), None)
    assert line is not None and PROVIDER in line, gateway.text()[-3000:]
    assert "TLS certificate is not trusted" in line, line
    ready = requests.get(gateway.url + "/readyz", timeout=TIMEOUT)
    assert ready.json()["status"] == "degraded", ready.text
    login = requests.get(f"{gateway.url}/v1/auth/{PROVIDER}/login",
                         params={"redirect_uri": REDIRECT_URI, "state": "s", "code_challenge": "a" * 43,
                                 "code_challenge_method": "S256"}, allow_redirects=False, timeout=TIMEOUT)
    assert login.status_code == 503 and login.json()["code"] == "provider_unavailable", login.text
    assert "not trusted" in login.json()["detail"], login.text
