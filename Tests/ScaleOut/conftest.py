"""Fixtures for the scale-out tests: two gateway processes sharing one PostgreSQL.

Processes (all on 127.0.0.1, free ports, stopped at teardown):
  * postgres  - Debian's server binaries (/usr/lib/postgresql/*/bin), `initdb`/`pg_ctl` in a temp
                dir, trust auth; as root they run as the `postgres` user (they refuse root)
  * dot       - Tests/Interop/dot_server/run.py, the real OAuth server with rotating refresh tokens
  * gateways  - `$GATEHOUSE_BIN serve --config <tmp>/gatehouse.yaml --listen 127.0.0.1:<port>`, A and B,
                one configuration (public_url = A, as behind a load balancer), fixed key files

Skipped only when PostgreSQL or the gateway binary is missing and neither GATEHOUSE_TEST_REQUIRE_ALL
(set by scripts/test) nor CI is set; with either set that fails.
"""
from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "Tests" / "Interop"))

from interop_support import DotDB, free_port  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Support"))
from gatehouse_testkit import stop_process, wait_for_http, require_gateway_binary, missing as _missing, tail as _tail, yaml_quote as _q  # noqa: E402

STARTUP_TIMEOUT = 60.0
PROVIDER_ID = "dot"
NATIVE_REDIRECT_URI = "http://127.0.0.1:9/cb"


class Postgres:
    """A throwaway PostgreSQL server that tests may stop and start again on the same port."""

    def __init__(self, root: Path):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
        if not bins:
            _missing("PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)")
        self.bin = Path(bins[0]).parent
        self.root = root
        self.data = root / "data"
        self.log = root / "postgres.log"
        self.port = free_port()
        root.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(root, "postgres", "postgres")
        self._run([str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"])
        self.start()
        subprocess.run([str(self.bin / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", "postgres",
                        "-q", "-c", "CREATE DATABASE gatehouse"], check=True, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL)
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/gatehouse?sslmode=disable"

    def _run(self, argv: list[str]) -> None:
        if os.geteuid() == 0:
            argv = ["runuser", "-u", "postgres", "--"] + argv
        # Output to a file, never a pipe: the server `pg_ctl start` leaves running would hold it open.
        with open(self.root / "ctl.out", "ab") as out:
            subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, stdout=out, stderr=out)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.log), "-w", "-t", "60", "start"])

    def stop(self) -> None:
        self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"])

    def pause(self) -> None:
        """Freezes the server as an unreachable host looks: SIGSTOP to the postmaster, then to its backends.
        Connections stay open (half-open to the client), the kernel still accepts new ones, nothing answers."""
        pid = self._postmaster_pid()
        os.kill(pid, signal.SIGSTOP)
        for child in _children(pid):
            os.kill(child, signal.SIGSTOP)

    def resume(self) -> None:
        pid = self._postmaster_pid()
        for child in _children(pid):
            os.kill(child, signal.SIGCONT)
        os.kill(pid, signal.SIGCONT)

    def _postmaster_pid(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split("\n")[0])

    def destroy(self) -> None:
        try:
            self.resume()  # a paused server would not stop
        except (OSError, ValueError):
            pass
        try:
            self._run([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"])
        except subprocess.CalledProcessError:
            pass


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from /proc: no pgrep needed)."""
    children = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = (Path("/proc") / entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            children.append(int(entry))
    return children


class Gateway:
    def __init__(self, name: str, binary: Path, config: Path, root: Path):
        self.name = name
        self.binary = binary
        self.config = config
        self.root = root
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = root / f"gateway-{name}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, probe: str = "/readyz") -> None:
        """Starts the process and waits until `probe` answers 200 (`/healthz`: serving, maybe not ready)."""
        with open(self.log, "ab") as f:
            self.proc = subprocess.Popen(
                [str(self.binary), "serve", "--config", str(self.config), "--listen", f"127.0.0.1:{self.port}"],
                stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=str(self.root))
        wait_for_http(self.proc, self.url + probe, STARTUP_TIMEOUT, self.log, name=f"gateway {self.name}")

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc, timeout=15)

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


class TokenProxy:
    """Forwards the provider's token endpoint to DOT; while `hold` is set, a refresh request is held and
    then dropped without reaching DOT (the refresh token stays unspent), as if its instance died mid-call."""

    def __init__(self, target: str):
        self.target = target
        self.hold = False
        self.held = threading.Event()
        self.release = threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if proxy.hold and b"grant_type=refresh_token" in body:
                    proxy.held.set()
                    proxy.release.wait(120)
                    self.close_connection = True
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
                request = urllib.request.Request(proxy.target, data=body, headers=headers, method="POST")
                try:
                    with urllib.request.urlopen(request, timeout=60) as r:
                        status, answer, ctype = r.status, r.read(), r.headers.get("Content-Type", "application/json")
                except urllib.error.HTTPError as e:
                    status, answer, ctype = e.code, e.read(), e.headers.get("Content-Type", "application/json")
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 1024  # the default 5 is too few for a refresh storm's connections

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/o/token/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


class Cluster:
    def __init__(self, tmp: Path, pg: Postgres, dot: dict, dot_proc, dot_log: Path, binary: Path):
        self.tmp = tmp
        self.pg = pg
        self.dot = dot
        self.dot_proc = dot_proc
        self.dot_log = dot_log
        self.db = DotDB(dot["db"])
        self.binary = binary
        self.root = tmp / "gateway"
        self.config = self.root / "gatehouse.yaml"
        self.a = Gateway("a", binary, self.config, self.root)
        self.b = Gateway("b", binary, self.config, self.root)
        self.keys = ["k1"]
        self.token_proxy = TokenProxy(dot["url"] + "/o/token/")

    def generate_key(self, key_id: str) -> None:
        subprocess.run([str(self.binary), "keys", "generate", "--id", key_id, "--directory", str(self.root / "keys")],
                       check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)

    def write_config(self, public_port: int) -> None:
        providers = self.root / "Providers"
        providers.mkdir(parents=True, exist_ok=True)
        secret = self.root / "dot-client-secret"
        secret.write_text(self.dot["client_secret"] + "\n")
        secret.chmod(0o600)
        sealing = "".join(f"\n    - id: {_q(k)}\n      file: {_q(str(self.root / 'keys' / f'sealing-{k}.key'))}" for k in self.keys)
        signing = "".join(f"\n    - id: {_q(k)}\n      file: {_q(str(self.root / 'keys' / f'signing-{k}.pem'))}" for k in self.keys)
        self.config.write_text(f"""listen: "127.0.0.1:{public_port}"
public_url: {_q(f"http://127.0.0.1:{public_port}")}
providers_dir: {_q(str(providers))}
store:
  kind: "postgres"
  url: {_q(self.pg.url)}
  pool_size: 10
backend:
  url: "http://127.0.0.1:9"
  audience: "scale-out"
allowed_redirect_uris:
  - {_q(NATIVE_REDIRECT_URI)}
keys:
  sealing:{sealing}
  signing:{signing}
limits:
  upstream_timeout_seconds: 10
logging:
  level: "info"
  format: "text"
""")
        (providers / f"{PROVIDER_ID}.yaml").write_text(f"""id: {_q(PROVIDER_ID)}
kind: "oauth2"
name: "django-oauth-toolkit"
authorization_endpoint: {_q(self.dot["url"] + "/o/authorize/")}
token_endpoint: {_q(self.token_proxy.url)}
revocation_endpoint: {_q(self.dot["url"] + "/o/revoke_token/")}
userinfo_endpoint: {_q(self.dot["url"] + "/api/me")}
issuer: {_q(self.dot["issuer"])}
client_id: {_q(self.dot["client_id"])}
client_secret_file: {_q(str(secret))}
token_endpoint_auth_method: "client_secret_basic"
scopes: ["read"]
claims:
  subject: "username"
  email: "email"
api:
  url: {_q(self.dot["url"] + "/api")}
""")

    def new_gateway(self, name: str, config: Path | None = None) -> Gateway:
        """Another instance on the same configuration, or on `config` (not started)."""
        return Gateway(name, self.binary, config or self.config, self.root)

    def write_store_variant(self, name: str, store: str) -> Path:
        """The same configuration under `name` with its `store:` section replaced by `store`."""
        text = self.config.read_text()
        start, end = text.index("store:\n"), text.index("backend:\n")
        path = self.root / name
        path.write_text(text[:start] + store + text[end:])
        return path

    def write_sqlite_config(self, database: Path, cache_seconds: int = 0) -> Path:
        """The same configuration with the store on one SQLite file (one machine, several processes).
        `cache_seconds` 0 turns the session cache off (every lookup reads the file)."""
        return self.write_store_variant(
            f"gatehouse-sqlite-{cache_seconds}.yaml",
            f"store:\n  kind: \"sqlite\"\n  path: {_q(str(database))}\n  session_cache_seconds: {cache_seconds}\n")

    def write_cached_config(self, seconds: int) -> Path:
        """The shared PostgreSQL store with each instance caching resolved sessions (LISTEN/NOTIFY)."""
        return self.write_store_variant(
            "gatehouse-cached.yaml",
            f"store:\n  kind: \"postgres\"\n  url: {_q(self.pg.url)}\n  pool_size: 10\n  session_cache_seconds: {seconds}\n")

    def restart_gateways(self) -> None:
        self.a.stop()
        self.b.stop()
        self.a.start()
        self.b.start()


class OIDCPair:
    """Two instances, A and B, on one configuration and one PostgreSQL, signing in at an OpenID provider run by
    the test (Tests/Support/oidc_provider.py); `public_url` is A's, as behind a load balancer."""

    def __init__(self, a: Gateway, b: Gateway, provider, pg: Postgres, binary: Path, root: Path):
        self.a, self.b, self.provider, self.pg, self.binary, self.root = a, b, provider, pg, binary, root


@contextlib.contextmanager
def oidc_pair(prefix: str, store_extra: str = "", config_extra: str = "", backchannel_logout: bool | None = True):
    """An ``OIDCPair``, started; `store_extra` and `config_extra` are more YAML lines of `store:` and of the file."""
    from oidc_provider import OpenIDProvider, write_provider_file

    binary = require_gateway_binary()
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    tmp.chmod(0o755)
    pg = Postgres(tmp / "pg")
    provider = OpenIDProvider()
    root = tmp / "gateway"
    (root / "Providers").mkdir(parents=True)
    a = b = None
    try:
        subprocess.run([str(binary), "keys", "generate", "--id", "k1", "--directory", str(root / "keys")],
                       check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        a_port = free_port()
        config = root / "gatehouse.yaml"
        config.write_text(f"""public_url: {_q(f"http://127.0.0.1:{a_port}")}
providers_dir: {_q(str(root / "Providers"))}
store:
  kind: "postgres"
  url: {_q(pg.url)}
  pool_size: 10
{store_extra}keys:
  sealing: [{{id: "k1", file: {_q(str(root / "keys" / "sealing-k1.key"))}}}]
  signing: [{{id: "k1", file: {_q(str(root / "keys" / "signing-k1.pem"))}}}]
{config_extra}""")
        write_provider_file(root / "Providers", "idp", provider, backchannel_logout=backchannel_logout)
        a, b = Gateway("a", binary, config, root), Gateway("b", binary, config, root)
        a.port, a.url = a_port, f"http://127.0.0.1:{a_port}"
        a.start()
        b.start()
        yield OIDCPair(a, b, provider, pg, binary, root)
    finally:
        for gateway in (a, b):
            if gateway is not None:
                gateway.stop()
        provider.close()
        pg.destroy()
        if os.environ.get("SCALEOUT_KEEP_TMP") != "1":
            shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def cluster():
    binary = require_gateway_binary()
    tmp = Path(tempfile.mkdtemp(prefix="gatehouse-scaleout-"))
    tmp.chmod(0o755)
    pg = Postgres(tmp / "pg")
    dot_proc = None
    c = None
    try:
        # A's port is the public one; B gets its requests "from the load balancer" with the same URLs.
        a_port = free_port()
        data = tmp / "dot"
        data.mkdir()
        out, log = tmp / "dot.stdout", tmp / "dot.log"
        env = dict(os.environ, DOT_DATA_DIR=str(data), DOT_PORT="0", PYTHONUNBUFFERED="1",
                   DOT_REDIRECT_URIS=f"http://127.0.0.1:{a_port}/v1/auth/{PROVIDER_ID}/callback",
                   DOT_ACCESS_TOKEN_EXPIRE_SECONDS="3600")
        with open(out, "wb") as so, open(log, "wb") as se:
            dot_proc = subprocess.Popen([sys.executable, str(REPO / "Tests" / "Interop" / "dot_server" / "run.py")],
                                        stdout=so, stderr=se, stdin=subprocess.DEVNULL, env=env, cwd=str(data))
        deadline = time.monotonic() + STARTUP_TIMEOUT
        info = None
        while info is None:
            for line in out.read_text(errors="replace").splitlines():
                if line.startswith("DOT_READY "):
                    info = json.loads(line[len("DOT_READY "):])
            if info is None:
                if dot_proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"DOT server did not start:\n{_tail(log)}")
                time.sleep(0.2)
        c = Cluster(tmp, pg, info, dot_proc, log, binary)
        c.a.port, c.a.url = a_port, f"http://127.0.0.1:{a_port}"
        c.root.mkdir()
        c.generate_key("k1")
        c.write_config(a_port)
        c.a.start()
        c.b.start()
        yield c
    finally:
        if c is not None:
            c.a.stop()
            c.b.stop()
            c.token_proxy.close()
        if dot_proc is not None and dot_proc.poll() is None:
            dot_proc.terminate()
            dot_proc.wait(timeout=10)
        pg.destroy()
        if os.environ.get("SCALEOUT_KEEP_TMP") != "1":
            shutil.rmtree(tmp, ignore_errors=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when != "call" or not rep.failed:
        return
    c = getattr(item, "funcargs", {}).get("cluster")
    if isinstance(c, Cluster):
        rep.sections.append(("gateway A log (tail)", _tail(c.a.log)))
        rep.sections.append(("gateway B log (tail)", _tail(c.b.log)))
        rep.sections.append(("postgres log (tail)", _tail(c.pg.log, 3000)))
