"""Fixtures for the BrowserID interop tests: assertions minted by Mozilla's PyBrowserID, verified by a
real gateway binary.

The gateway (`$GATEHOUSE_BIN serve`, default <repo>/.build/debug/gatehouse) runs with a temp
configuration: a memory store, a `browserid` provider `persona` that pins the support documents of
its test IdPs (`fetch_support_documents: false`, so no network) and an `oauth2` provider `other`
(never contacted) to show that assertions are refused on other kinds.

Test IdPs (all pinned):
  * login.persona.org - PyBrowserID's default issuer, DSA key from get_keypair(); a trusted
                        secondary, so it may certify addresses at domains without an IdP of their own
  * example.com       - a primary IdP (get_keypair("example.com")) for @example.com
  * evil.example      - a primary IdP for @evil.example only (get_keypair("evil.example"))
  * rsa.example       - a primary IdP with a 2048-bit RSA key (RS256), generated per run

Environment: GATEHOUSE_BIN, BROWSERID_KEEP_TMP=1 (keep the temp dir), BROWSERID_STARTUP_TIMEOUT.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import requests

from browserid.tests.support import get_keypair

from browserid_support import AUDIENCE, rsa_keypair
import sys

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Support"))
from gatehouse_testkit import require_gateway_binary, stop_process, wait_for_http, free_port as _free_port, tail as _tail, yaml_quote as _q  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
STARTUP_TIMEOUT = float(os.environ.get("BROWSERID_STARTUP_TIMEOUT", "60"))
PROVIDER_ID = "persona"
OTHER_PROVIDER_ID = "other"


class Gateway:
    def __init__(self, url: str, proc: subprocess.Popen, log: Path, rsa_idp):
        self.url = url
        self.proc = proc
        self.log = log
        self.provider = PROVIDER_ID
        self.other_provider = OTHER_PROVIDER_ID
        self.rsa_idp = rsa_idp  # (public key dict, RS256Key)

    def assertion_url(self, provider: str | None = None) -> str:
        return f"{self.url}/v1/auth/{provider or self.provider}/assertion"

    def post_assertion(self, assertion: str, audience: str = AUDIENCE, provider: str | None = None):
        return requests.post(self.assertion_url(provider), json={"assertion": assertion, "audience": audience}, timeout=60)

    def healthy(self) -> bool:
        return self.proc.poll() is None and requests.get(self.url + "/healthz", timeout=10).status_code == 200

    def log_tail(self) -> str:
        return _tail(self.log)


def _write_config(root: Path, port: int, rsa_public: dict) -> Path:
    providers = root / "Providers"
    docs = root / "supportdocs"
    providers.mkdir(parents=True)
    docs.mkdir()
    pinned = {
        "login.persona.org": get_keypair("login.persona.org")[0],
        "example.com": get_keypair("example.com")[0],
        "evil.example": get_keypair("evil.example")[0],
        "rsa.example": rsa_public,
    }
    issuer_lines = ""
    for domain, key in pinned.items():
        path = docs / f"{domain}.json"
        path.write_text(json.dumps({"public-key": key, "authentication": "/sign_in", "provisioning": "/provision"}))
        issuer_lines += f"  - domain: {_q(domain)}\n    support_document_file: {_q(str(path))}\n"
    (root / "gatehouse.yaml").write_text(
        f"""listen: {_q(f"127.0.0.1:{port}")}
public_url: {_q(f"http://127.0.0.1:{port}")}
providers_dir: {_q(str(providers))}
store:
  kind: "memory"
backend:
  url: "http://127.0.0.1:9"
logging:
  level: "debug"
  format: "text"
"""
    )
    (providers / f"{PROVIDER_ID}.yaml").write_text(
        f"""id: {_q(PROVIDER_ID)}
kind: "browserid"
name: "Persona (PyBrowserID interop)"
audiences:
  - {_q(AUDIENCE)}
issuers:
{issuer_lines}fetch_support_documents: false
trusted_secondaries: ["login.persona.org"]
clock_skew_seconds: 0
session_lifetime_seconds: 900
"""
    )
    (providers / f"{OTHER_PROVIDER_ID}.yaml").write_text(
        f"""id: {_q(OTHER_PROVIDER_ID)}
kind: "oauth2"
authorization_endpoint: "https://auth.invalid/authorize"
token_endpoint: "https://auth.invalid/token"
client_id: "client"
"""
    )
    return root / "gatehouse.yaml"


@pytest.fixture(scope="session")
def gateway():
    binary = require_gateway_binary()
    tmp = Path(tempfile.mkdtemp(prefix="gatehouse-browserid-"))
    port = _free_port()
    rsa_idp = rsa_keypair(2048, "RS256")
    config = _write_config(tmp, port, rsa_idp[0])
    log = tmp / "gateway.log"
    with open(log, "wb") as f:
        proc = subprocess.Popen(
            [str(binary), "serve", "--config", str(config)],
            stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=str(tmp),
        )
    gw = Gateway(f"http://127.0.0.1:{port}", proc, log, rsa_idp)
    try:
        wait_for_http(proc, gw.url + "/healthz", STARTUP_TIMEOUT, log)
        yield gw
    finally:
        stop_process(proc)
        if os.environ.get("BROWSERID_KEEP_TMP") == "1":
            print(f"\n[browserid] kept temp dir {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call" and rep.failed:
        gw = getattr(item, "funcargs", {}).get("gateway")
        if isinstance(gw, Gateway):
            rep.sections.append(("gateway log (tail)", gw.log_tail()))
