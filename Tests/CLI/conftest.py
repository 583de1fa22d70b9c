"""Shared helpers for the Gatehouse command-line tests (Tests/CLI).

Every test works in its own temp directory (pytest's `tmp_path`). The binary is
`$GATEHOUSE_BIN` (default <repo>/.build/debug/gatehouse); when it is missing the tests are
skipped, except when every test must run (`GATEHOUSE_TEST_REQUIRE_ALL` or `CI` set, as
scripts/test does) or `GATEHOUSE_BIN` names a binary: then they fail.

Gateways (`gatehouse serve`) bind 127.0.0.1 on a free port, their stdout and stderr go to
files in the test's temp dir, and they are stopped at teardown (SIGTERM, then SIGKILL).
A failing test gets the tail of each gateway's log appended to its report.

Environment:
  GATEHOUSE_BIN           gateway binary
  CLI_STARTUP_TIMEOUT     seconds to wait for a gateway's /healthz (default 20)
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Support"))
from gatehouse_testkit import free_port, require_gateway_binary, tail, wait_until, yaml_quote as q, stop_process as stop  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
STARTUP_TIMEOUT = float(os.environ.get("CLI_STARTUP_TIMEOUT", "20"))
COMMAND_TIMEOUT = 30  # seconds for a one-shot command (check, providers, migrate, keys)
HTTP_TIMEOUT = 5  # seconds for each HTTP request

# Environment variables that must never leak into the gateway from the developer's shell.
UNSET_VAR = "GATEHOUSE_CLI_TEST_UNSET_SECRET"


def port_is_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="session")
def gatehouse_bin() -> Path:
    return require_gateway_binary()


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The test process's environment without UNSET_VAR and without the shell's `GATEHOUSE_*` variables, which
    would set keys of gatehouse.yaml (docs/configuration.md, "From the environment"); `GATEHOUSE_BIN` and the
    suites' `GATEHOUSE_TEST_*` switches stay. Then `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GATEHOUSE_") or k == "GATEHOUSE_BIN" or k.startswith("GATEHOUSE_TEST_")}
    env.pop(UNSET_VAR, None)
    env.update(extra or {})
    return env


@pytest.fixture
def cli(gatehouse_bin):
    """Runs a one-shot `gatehouse …` command: cli(["check", ...], cwd=dir) -> CompletedProcess (text)."""

    def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(gatehouse_bin), *args], cwd=str(cwd), env=clean_env(env), stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
        )

    return run


# --- configuration files --------------------------------------------------------------------

def provider_yaml(pid: str, *, name: str | None = None, userinfo: bool = False, revocation: bool = False,
                  extra: str = "") -> str:
    """A valid oauth2 provider file; the endpoints point at a port that is never contacted."""
    lines = [
        f"id: {q(pid)}",
        'kind: "oauth2"',
        f"name: {q(name or pid.upper() + ' server')}",
        'authorization_endpoint: "http://127.0.0.1:9/authorize"',
        'token_endpoint: "http://127.0.0.1:9/token"',
    ]
    if userinfo:
        lines.append('userinfo_endpoint: "http://127.0.0.1:9/userinfo"')
    if revocation:
        lines.append('revocation_endpoint: "http://127.0.0.1:9/revoke"')
    lines += [
        f"client_id: {q(pid + '-client')}",
        'scopes: ["read"]',
        "claims:",
        '  subject: "sub"',
        '  email: "email"',
    ]
    return "\n".join(lines) + "\n" + extra


def write_provider(root: Path, pid: str, text: str | None = None, **kwargs) -> Path:
    providers = root / "Providers"
    providers.mkdir(parents=True, exist_ok=True)
    path = providers / f"{pid}.yaml"
    path.write_text(text if text is not None else provider_yaml(pid, **kwargs))
    return path


def write_capture_provider(root: Path, site: str, extra: list[str] | None = None,
                           claims: str = '{subject: "id", email: "email"}') -> Path:
    """Provider `legacy` (kind capture) of the legacy site at `site`: its probe `{site}/probe` names the user
    (`{"id": …, "email": …}`), so `POST /v1/auth/legacy/token` starts a session without a browser."""
    return write_provider(root, "legacy", "\n".join([
        'id: "legacy"',
        'kind: "capture"',
        f"login_url: {q(site + '/login')}",
        f"allowed_origins: [{q(site)}]",
        f"success_url: {q(site + '/welcome*')}",
        f"probe: {{url: {q(site + '/probe')}}}",
        f"claims: {claims}",
        *(extra or []),
        "",
    ]))


def write_config(root: Path, text: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "Providers").mkdir(exist_ok=True)
    path = root / "gatehouse.yaml"
    path.write_text(text)
    return path


# --- gateways ---------------------------------------------------------------------------------

class Gateway:
    def __init__(self, proc: subprocess.Popen, port: int, stdout: Path, stderr: Path, cwd: Path):
        self.proc = proc
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.stdout = stdout
        self.stderr = stderr
        self.cwd = cwd

    def get(self, path: str, **kwargs) -> requests.Response:
        kwargs.setdefault("timeout", HTTP_TIMEOUT)
        kwargs.setdefault("allow_redirects", False)
        return requests.get(self.url + path, **kwargs)

    def log(self) -> str:
        return self.stderr.read_text(errors="replace") + self.stdout.read_text(errors="replace")

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def provider_ids(self) -> list[str]:
        return [p["id"] for p in self.get("/v1/providers").json()["providers"]]


@pytest.fixture
def gateways(gatehouse_bin, request):
    """A list of the gateways this test started; all are stopped at teardown."""
    started: list[Gateway] = []
    request.node._cli_gateways = started
    yield started
    for gw in started:
        stop(gw.proc)


@pytest.fixture
def serve(gatehouse_bin, gateways, tmp_path_factory):
    """Starts `gatehouse serve --listen 127.0.0.1:<free port> [args]` in `cwd` and waits for /healthz 200."""

    def start(cwd: Path, args: list[str] | None = None, env: dict[str, str] | None = None,
              port: int | None = None, name: str = "gateway") -> Gateway:
        port = port or free_port()
        logs = tmp_path_factory.mktemp(f"{name}-logs")  # outside cwd, which some tests inspect
        stdout, stderr = logs / "stdout", logs / "stderr"
        with open(stdout, "wb") as so, open(stderr, "wb") as se:
            proc = subprocess.Popen(
                [str(gatehouse_bin), "serve", "--listen", f"127.0.0.1:{port}", *(args or [])],
                cwd=str(cwd), env=clean_env(env), stdin=subprocess.DEVNULL, stdout=so, stderr=se,
            )
        gw = Gateway(proc, port, stdout, stderr, cwd)
        gateways.append(gw)

        def healthy() -> bool:
            if proc.poll() is not None:
                return True
            try:
                return requests.get(gw.url + "/healthz", timeout=1).status_code == 200
            except requests.RequestException:
                return False

        ok = wait_until(healthy, STARTUP_TIMEOUT, 0.05)
        if proc.poll() is not None:
            pytest.fail(f"gateway exited with {proc.returncode} at start-up:\n{tail(stderr)}")
        if not ok:
            pytest.fail(f"gateway /healthz not 200 after {STARTUP_TIMEOUT}s:\n{tail(stderr)}")
        return gw

    return start


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when != "call" or not rep.failed:
        return
    for i, gw in enumerate(getattr(item, "_cli_gateways", [])):
        rep.sections.append((f"gateway {i} stderr (tail)", tail(gw.stderr)))
