"""Fixtures for the Gatehouse <-> django-oauth-toolkit interop tests.

Processes (all on 127.0.0.1, free ports, killed at teardown):
  * dot_server   - Tests/Interop/dot_server/run.py (DOT on Django, SQLite in a temp dir)
  * echo_backend - Tests/Support/stub_backend.py answering any request with JSON of method/path/headers/body
  * gateway      - `$GATEHOUSE_BIN serve --config <tmp>/gateway/gatehouse.yaml`
                   (default <repo>/.build/debug/gatehouse); the tests that need it are
                   skipped only when that binary does not exist. Provider `dot` (kind oauth2).
  * oidc_gateway - a second gateway, `<tmp>/oidc-gateway/`, with providers `dotoidc`
                   (kind oidc, DOT's OIDC Application, everything from discovery) and
                   `dotoidcbad` (the same with a wrong `issuer`: trailing slash).

Environment:
  GATEHOUSE_BIN                    gateway binary
  DOT_ACCESS_TOKEN_EXPIRE_SECONDS  DOT access-token lifetime for the run (default 6)
  DOT_AUTHZ_RESPONSE_ISS           1/0: DOT adds RFC 9207 `iss` and the provider file sets
                                   `issuer` (default 1)
  INTEROP_KEEP_TMP                 1: keep the temp dir (logs, DBs, config) after the run
  INTEROP_STARTUP_TIMEOUT          seconds to wait for each server (default 60)
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from interop_support import DotDB, free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Support"))
from gatehouse_testkit import wait_for_http, require_gateway_binary as _require_binary, tail as _tail, stop_process as _stop, yaml_quote as _q  # noqa: E402
from stub_backend import StubBackend  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
STARTUP_TIMEOUT = float(os.environ.get("INTEROP_STARTUP_TIMEOUT", "60"))
NATIVE_REDIRECT_URI = "http://127.0.0.1:9/cb"  # the native client's redirect URI; never contacted
PROVIDER_ID = "dot"
OIDC_PROVIDER_ID = "dotoidc"
OIDC_BAD_ISSUER_PROVIDER_ID = "dotoidcbad"


@pytest.fixture(scope="session")
def interop_tmp():
    d = Path(tempfile.mkdtemp(prefix="gatehouse-interop-"))
    yield d
    if os.environ.get("INTEROP_KEEP_TMP") == "1":
        print(f"\n[interop] kept temp dir {d}")
    else:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def gateway_port() -> int:
    """Chosen before DOT starts, because DOT must know the gateway's callback URL."""
    return free_port()


@pytest.fixture(scope="session")
def oidc_gateway_port() -> int:
    """The OIDC gateway's port, also chosen before DOT starts (its callbacks are registered there)."""
    return free_port()


class DotServer:
    def __init__(self, info: dict, proc: subprocess.Popen, log: Path):
        self.info = info
        self.proc = proc
        self.log = log
        self.url: str = info["url"]
        self.issuer: str = info["issuer"]
        self.client_id: str = info["client_id"]
        self.client_secret: str = info["client_secret"]
        self.username: str = info["username"]
        self.password: str = info["password"]
        self.email: str = info["email"]
        self.redirect_uri: str = info["redirect_uris"][0]
        self.access_token_lifetime: int = info["access_token_expire_seconds"]
        self.iss_enabled: bool = info["authz_response_iss"]
        self.name: str = info["name"]
        self.subject: str = info["subject"]  # OIDC `sub` of alice
        self.oidc_client_id: str = info["oidc_client_id"]
        self.oidc_client_secret: str = info["oidc_client_secret"]
        self.db = DotDB(info["db"])


@pytest.fixture(scope="session")
def dot_server(interop_tmp, gateway_port, oidc_gateway_port):
    data = interop_tmp / "dot"
    data.mkdir()
    out, log = interop_tmp / "dot.stdout", interop_tmp / "dot.log"
    env = dict(os.environ)
    env.update(
        DOT_DATA_DIR=str(data),
        DOT_PORT="0",
        DOT_REDIRECT_URIS=f"http://127.0.0.1:{gateway_port}/v1/auth/{PROVIDER_ID}/callback",
        DOT_OIDC_REDIRECT_URIS=" ".join(
            f"http://127.0.0.1:{oidc_gateway_port}/v1/auth/{p}/callback"
            for p in (OIDC_PROVIDER_ID, OIDC_BAD_ISSUER_PROVIDER_ID)
        ),
        DOT_ACCESS_TOKEN_EXPIRE_SECONDS=os.environ.get("DOT_ACCESS_TOKEN_EXPIRE_SECONDS", "6"),
        PYTHONUNBUFFERED="1",
    )
    with open(out, "wb") as so, open(log, "wb") as se:
        proc = subprocess.Popen(
            [sys.executable, str(HERE / "dot_server" / "run.py")],
            stdout=so, stderr=se, stdin=subprocess.DEVNULL, env=env, cwd=str(data),
        )
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        info = None
        while info is None:
            for line in out.read_text(errors="replace").splitlines():
                if line.startswith("DOT_READY "):
                    info = json.loads(line[len("DOT_READY "):])
            if info is not None:
                break
            if proc.poll() is not None:
                pytest.fail(f"DOT server exited with {proc.returncode}:\n{_tail(log)}")
            if time.monotonic() > deadline:
                pytest.fail(f"DOT server not ready after {STARTUP_TIMEOUT}s:\n{_tail(log)}")
            time.sleep(0.2)
        yield DotServer(info, proc, log)
    finally:
        _stop(proc)


@pytest.fixture(scope="session")
def echo_backend():
    with StubBackend(probe=None) as backend:
        yield backend.base


class Gateway:
    def __init__(self, url: str, proc: subprocess.Popen, log: Path, config_dir: Path, provider: str = PROVIDER_ID):
        self.url = url
        self.proc = proc
        self.log = log
        self.config_dir = config_dir
        self.redirect_uri = NATIVE_REDIRECT_URI
        self.provider = provider

    def log_tail(self) -> str:
        return _tail(self.log)


def _write_secret(root: Path, name: str, value: str) -> Path:
    secret_file = root / "secrets" / name
    secret_file.parent.mkdir(exist_ok=True)
    secret_file.write_text(value + "\n")
    secret_file.chmod(0o600)
    return secret_file


def _write_main_config(root: Path, port: int, backend_url: str) -> Path:
    providers = root / "Providers"
    providers.mkdir(parents=True)
    public = f"http://127.0.0.1:{port}"
    (root / "gatehouse.yaml").write_text(
        f"""listen: {_q(f"127.0.0.1:{port}")}
public_url: {_q(public)}
providers_dir: {_q(str(providers))}
store:
  kind: "sqlite"
  path: {_q(str(root / "data" / "gatehouse.sqlite3"))}
backend:
  url: {_q(backend_url)}
  audience: "interop-backend"
allowed_redirect_uris:
  - {_q(NATIVE_REDIRECT_URI)}
logging:
  level: "debug"
  format: "text"
"""
    )
    return providers


def write_gateway_config(root: Path, port: int, dot: DotServer, backend_url: str) -> Path:
    providers = _write_main_config(root, port, backend_url)
    secret_file = _write_secret(root, "dot-client-secret", dot.client_secret)
    issuer_line = f"issuer: {_q(dot.issuer)}\n" if dot.iss_enabled else ""
    (providers / f"{PROVIDER_ID}.yaml").write_text(
        f"""id: {_q(PROVIDER_ID)}
kind: "oauth2"
name: "django-oauth-toolkit"
authorization_endpoint: {_q(dot.url + "/o/authorize/")}
token_endpoint: {_q(dot.url + "/o/token/")}
revocation_endpoint: {_q(dot.url + "/o/revoke_token/")}
userinfo_endpoint: {_q(dot.url + "/api/me")}
{issuer_line}client_id: {_q(dot.client_id)}
client_secret_file: {_q(str(secret_file))}
token_endpoint_auth_method: "client_secret_basic"
scopes: ["read"]
authorization_params:          # passed through to DOT, which ignores what it does not know
  ui_locales: "nb en"
claims:
  subject: "username"
  email: "email"
api:
  url: {_q(dot.url + "/api")}
"""
    )
    return root / "gatehouse.yaml"


def write_oidc_gateway_config(root: Path, port: int, dot: DotServer, backend_url: str) -> Path:
    """Provider files with only what an OIDC RP needs: endpoints, JWKS, claims come from discovery."""
    providers = _write_main_config(root, port, backend_url)
    secret_file = _write_secret(root, "dotoidc-client-secret", dot.oidc_client_secret)
    for provider_id, issuer in ((OIDC_PROVIDER_ID, dot.issuer), (OIDC_BAD_ISSUER_PROVIDER_ID, dot.issuer + "/")):
        (providers / f"{provider_id}.yaml").write_text(
            f"""id: {_q(provider_id)}
kind: "oidc"
issuer: {_q(issuer)}
client_id: {_q(dot.oidc_client_id)}
client_secret_file: {_q(str(secret_file))}
"""
        )
    return root / "gatehouse.yaml"


@pytest.fixture(scope="session")
def oidc_gateway(interop_tmp, oidc_gateway_port, dot_server, echo_backend):
    binary = _require_binary()
    root = interop_tmp / "oidc-gateway"
    root.mkdir()
    config = write_oidc_gateway_config(root, oidc_gateway_port, dot_server, echo_backend)
    yield from _run_gateway(binary, config, interop_tmp / "oidc-gateway.log", oidc_gateway_port, root, OIDC_PROVIDER_ID)


@pytest.fixture(scope="session")
def gateway(interop_tmp, gateway_port, dot_server, echo_backend):
    binary = _require_binary()
    root = interop_tmp / "gateway"
    root.mkdir()
    config = write_gateway_config(root, gateway_port, dot_server, echo_backend)
    yield from _run_gateway(binary, config, interop_tmp / "gateway.log", gateway_port, root)


def _run_gateway(binary: Path, config: Path, log: Path, port: int, root: Path, provider: str = PROVIDER_ID):
    with open(log, "wb") as f:
        proc = subprocess.Popen(
            [str(binary), "serve", "--config", str(config)],
            stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=str(root),
        )
    url = f"http://127.0.0.1:{port}"
    gw = Gateway(url, proc, log, root, provider)
    try:
        wait_for_http(proc, url + "/healthz", STARTUP_TIMEOUT, log)
        yield gw
    finally:
        _stop(proc)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when != "call" or not rep.failed:
        return
    funcargs = getattr(item, "funcargs", {})
    for name in ("gateway", "oidc_gateway"):
        gw = funcargs.get(name)
        if isinstance(gw, Gateway):
            rep.sections.append((f"{name} log (tail)", gw.log_tail()))
    dot = funcargs.get("dot_server")
    if isinstance(dot, DotServer):
        rep.sections.append(("DOT server log (tail)", _tail(dot.log, 8000)))


# ---------------------------------------------------------------- DPoP (RFC 9449) tests
#
# `dpop_gateways`: more gateways, each with its own `sessions.dpop:` block, started on first use (free
# port each; DOT accepts the callback on any loopback port, RFC 8252 §7.3, so no extra registration) and
# stopped at the end of the session. Besides `dot` (as in `gateway`) they have two providers of the
# other sign-in routes: `dotcap` (kind capture: POST /v1/auth/dotcap/token, probed at `capture_probe`)
# and `persona` (kind browserid: POST /v1/auth/persona/assertion, PyBrowserID's login.persona.org pinned).

DPOP_CAPTURE_PROVIDER_ID = "dotcap"
DPOP_ASSERTION_PROVIDER_ID = "persona"
DPOP_ASSERTION_AUDIENCE = "https://rp.example.test"


def _capture_user(authorization: str) -> dict | None:
    """The capture provider's probe: `Authorization: Bearer cap-<name>` is user <name>; anything else 401."""
    name = authorization.removeprefix("Bearer cap-")
    if not authorization.startswith("Bearer cap-") or not name:
        return None
    return {"id": name, "email": f"{name}@capture.example", "name": name}


@pytest.fixture(scope="session")
def capture_probe():
    with StubBackend(answer=lambda seen: (401, {"error": "invalid_token"}), probe=_capture_user, probe_path="/me") as probe:
        yield probe.base


def _dpop_yaml(dpop: dict) -> str:
    lines = "".join(f"    {k}: {json.dumps(v)}\n" for k, v in dpop.items())
    return f"sessions:\n  dpop:\n{lines}" if dpop else ""


class DPoPGateways:
    """Gateways of one configuration each (the `gateway` configuration plus `sessions.dpop: <dpop>` and the
    `dotcap` / `persona` providers), started on first `get(name, dpop)`."""

    def __init__(self, binary: Path, tmp: Path, dot: DotServer, backend_url: str, probe_url: str):
        self.binary = binary
        self.tmp = tmp
        self.dot = dot
        self.backend_url = backend_url
        self.probe_url = probe_url
        self.started: dict[str, Gateway] = {}
        self._runs: list = []
        self._configs: dict[str, dict] = {}

    def get(self, name: str, dpop: dict) -> Gateway:
        if name in self.started:
            assert self._configs[name] == dpop, f"dpop gateway {name!r} already runs another configuration"
            return self.started[name]
        port = free_port()
        root = self.tmp / f"dpop-gateway-{name}"
        root.mkdir()
        config = write_gateway_config(root, port, self.dot, self.backend_url)
        with open(config, "a") as f:
            f.write(_dpop_yaml(dpop))
        self._write_extra_providers(root)
        run = _run_gateway(self.binary, config, self.tmp / f"dpop-gateway-{name}.log", port, root)
        gw = next(run)
        gw.dpop = dict(dpop)
        self._runs.append(run)
        self.started[name] = gw
        self._configs[name] = dict(dpop)
        return gw

    def _write_extra_providers(self, root: Path) -> None:
        from browserid.tests.support import get_keypair  # PyBrowserID (requirements-test.txt)

        providers = root / "Providers"
        probe = self.probe_url
        (providers / f"{DPOP_CAPTURE_PROVIDER_ID}.yaml").write_text(
            f"""id: {_q(DPOP_CAPTURE_PROVIDER_ID)}
kind: "capture"
name: "captured token (DPoP tests)"
login_url: {_q(probe + "/login")}
allowed_origins: [{_q(probe)}]
success_url: {_q(probe + "/welcome*")}
probe:
  url: {_q(probe + "/me")}
  auth: "bearer"
claims:
  subject: "id"
  email: "email"
  name: "name"
"""
        )
        doc = root / "login.persona.org.json"
        doc.write_text(json.dumps({"public-key": get_keypair("login.persona.org")[0],
                                   "authentication": "/sign_in", "provisioning": "/provision"}))
        (providers / f"{DPOP_ASSERTION_PROVIDER_ID}.yaml").write_text(
            f"""id: {_q(DPOP_ASSERTION_PROVIDER_ID)}
kind: "browserid"
name: "Persona (DPoP tests)"
audiences:
  - {_q(DPOP_ASSERTION_AUDIENCE)}
issuers:
  - domain: "login.persona.org"
    support_document_file: {_q(str(doc))}
fetch_support_documents: false
trusted_secondaries: ["login.persona.org"]
session_lifetime_seconds: 900
"""
        )

    def close(self) -> None:
        for run in reversed(self._runs):
            run.close()  # the generator's `finally` stops the process


@pytest.fixture(scope="session")
def dpop_gateways(interop_tmp, dot_server, echo_backend, capture_probe):
    farm = DPoPGateways(_require_binary(), interop_tmp, dot_server, echo_backend, capture_probe)
    try:
        yield farm
    finally:
        farm.close()


class _DPoPGatewayLogs:
    """On a failing test that used `dpop_gateways`, the tails of those gateways' logs."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        rep = outcome.get_result()
        if rep.when != "call" or not rep.failed:
            return
        farm = getattr(item, "funcargs", {}).get("dpop_gateways")
        if isinstance(farm, DPoPGateways):
            for name, gw in farm.started.items():
                rep.sections.append((f"dpop gateway {name} log (tail)", gw.log_tail()))


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("gatehouse-dpop-gateway-logs"):
        config.pluginmanager.register(_DPoPGatewayLogs(), "gatehouse-dpop-gateway-logs")
