"""Deployed as shipped: the gateway run as an unprivileged user, and what reaches the backend framed as the client
cannot forge (SPEC "Deployed as shipped"; docs/operations.md "Running as an unprivileged user", docs/api.md
"Request framing and the authority").

Every gateway here runs as an unprivileged user (uid/gid 65534, `nobody`, through `setpriv`) when the tests run
as root, as the package's `gatehouse` user, the image's uid 10001, systemd's DynamicUser and Kubernetes'
runAsNonRoot do; as another user they run as that user. Its keys and SQLite store are generated under its own
directory, as `serve` does on a first start. The backend is a raw HTTP/1.1 server that parses what it receives
strictly by its framing (Content-Length, chunked, or none), so a body written after an unframed head shows up as
a second request, which is what request smuggling is.

- `/v1/api` reaches an `http` backend through the event-loop relay (TCP_NODELAY at the TCP level: the socket-level
  option number meant SO_DEBUG, which only root may set: every call was 502 for any other user).
- HTTP/2 smuggling: `GET`/`HEAD`/`DELETE`/`OPTIONS` HEADERS without END_STREAM and without content-length, then DATA
  holding a whole HTTP/1.1 request: the backend receives exactly one request per stream, its body framed; for
  `backend` and a named upstream (the relay) and an upstream the router serves (`forward_access_token`),
  anonymous and signed in.
- The authority: h2 `:authority` against `host`, HTTP/1.1 absolute form against `Host` (400 when they disagree;
  the target's authority is the host per-host rules see when they agree), a non-origin `:path`.
- Slow bodies: 408 on HTTP/1.1 and RST_STREAM on HTTP/2, on the relay and the router.
- Plain HTTP on the TLS port: 400 with a one-line body. Connections per client address bounded.
"""
from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import STARTUP_TIMEOUT, clean_env, q, write_capture_provider, write_config
from gatehouse_testkit import free_port, missing, require_all, stop_process, tail, wait_until
from test_tls import Certificates, RawH2, h2, httpx

SMUGGLED = (b"GET /smuggled HTTP/1.1\r\nHost: backend\r\nX-Gatehouse-Subject: admin\r\n"
            b"X-Gatehouse-Email: admin@example.test\r\n\r\n")
UNPRIVILEGED = 65534


# --- the backend ---------------------------------------------------------------------------------

class RawBackend:
    """HTTP/1.1 on a raw socket, each connection parsed strictly by its framing; every request recorded.

    `/probe` names the user for the capture provider; anything else answers 200 with the request as JSON."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(conn)
            threading.Thread(target=self._serve, args=(conn, len(self.connections)), daemon=True).start()

    @staticmethod
    def _fill(conn: socket.socket, buffer: bytearray, size: int) -> bool:
        while len(buffer) < size:
            data = conn.recv(65536)
            if not data:
                return False
            buffer += data
        return True

    @staticmethod
    def _line(conn: socket.socket, buffer: bytearray) -> bytes | None:
        while b"\r\n" not in buffer:
            data = conn.recv(65536)
            if not data:
                return None
            buffer += data
        index = buffer.index(b"\r\n")
        line = bytes(buffer[:index])
        del buffer[: index + 2]
        return line

    def _serve(self, conn: socket.socket, number: int):
        buffer = bytearray()
        try:
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                index = buffer.index(b"\r\n\r\n")
                head = bytes(buffer[:index]).decode("latin-1")
                del buffer[: index + 4]
                request_line, *field_lines = head.split("\r\n")
                method, target, _ = request_line.split(" ", 2)
                fields = [(name.strip().lower(), value.strip()) for name, value in (line.split(":", 1) for line in field_lines)]
                names = dict(fields)
                body = bytearray()
                if names.get("transfer-encoding", "").lower() == "chunked":
                    framing = "chunked"
                    while True:
                        size_line = self._line(conn, buffer)
                        if size_line is None:
                            return
                        size = int(size_line.split(b";")[0].strip(), 16)
                        if size == 0:
                            while (trailer := self._line(conn, buffer)) not in (b"", None):
                                pass
                            break
                        if not self._fill(conn, buffer, size + 2):
                            return
                        body += buffer[:size]
                        del buffer[: size + 2]
                elif "content-length" in names:
                    framing = "length"
                    length = int(names["content-length"])
                    if not self._fill(conn, buffer, length):
                        return
                    body += buffer[:length]
                    del buffer[:length]
                else:
                    framing = "none"
                record = {"connection": number, "method": method, "target": target, "fields": fields, "body": bytes(body),
                          "framing": framing}
                with self.lock:
                    self.requests.append(record)
                if target.startswith("/probe"):
                    payload = json.dumps({"id": "user-1", "email": "user1@example.test"}).encode()
                else:
                    payload = json.dumps({"target": target, "subject": names.get("x-gatehouse-subject"),
                                          "real_ip": names.get("x-real-ip"), "body": len(body)}).encode()
                answer = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(payload))
                conn.sendall(answer if method == "HEAD" else answer + payload)
        except (OSError, ValueError):
            return
        finally:
            conn.close()

    def seen(self, prefix: str = "") -> list[dict]:
        with self.lock:
            return [r for r in self.requests if r["target"].startswith(prefix) and not r["target"].startswith("/probe")]

    def clear(self):
        with self.lock:
            self.requests.clear()

    def close(self):
        self.listener.close()
        for conn in self.connections:
            try:
                conn.close()
            except OSError:
                pass


# --- the gateway, as an unprivileged user -------------------------------------------------------------

def unprivileged_prefix() -> list[str]:
    """The command prefix that runs the gateway as uid/gid 65534 when this runs as root; [] otherwise (already an
    unprivileged user)."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        missing("setpriv (util-linux) is needed to run the gateway as an unprivileged user")
    return ["setpriv", f"--reuid={UNPRIVILEGED}", f"--regid={UNPRIVILEGED}", "--clear-groups", "--"]


class Gateway:
    """`gatehouse serve` in a directory of its own, owned by the user it runs as (keys and the SQLite store are
    generated there); with `tls`, https://127.0.0.1:{port} (HTTP/2 and HTTP/1.1), else http://."""

    def __init__(self, binary: Path, certs: Certificates | None, text: str, providers: dict[str, str]):
        self.root = Path(tempfile.mkdtemp(prefix="gatehouse-unprivileged-"))
        self.root.chmod(0o755)
        lines = [text]
        self.ca = None
        if certs:
            chain, key = certs.leaf("localhost")
            shutil.copy(chain, self.root / "chain.pem")
            shutil.copy(key, self.root / "key.pem")
            self.ca = certs.ca
            lines += ["tls:", '  certificate_file: "chain.pem"', '  private_key_file: "key.pem"']
        write_config(self.root, "\n".join(lines + [""]))
        for name, body in providers.items():
            (self.root / "Providers" / f"{name}.yaml").write_text(body)
        prefix = unprivileged_prefix()
        if prefix:
            for path in [self.root, *self.root.rglob("*")]:
                os.chown(path, UNPRIVILEGED, UNPRIVILEGED)
        self.port = free_port()
        self.url = f"{'https' if certs else 'http'}://127.0.0.1:{self.port}"
        self.stderr = self.root / "gateway.stderr"
        with open(self.root / "gateway.stdout", "wb") as out, open(self.stderr, "wb") as err:
            self.proc = subprocess.Popen(
                [*prefix, str(binary), "serve", "--config", "gatehouse.yaml", "--listen", f"127.0.0.1:{self.port}"],
                cwd=str(self.root), env=clean_env(), stdin=subprocess.DEVNULL, stdout=out, stderr=err)

        def healthy() -> bool:
            if self.proc.poll() is not None:
                return True
            try:
                with self.client(http2=False, timeout=1) as client:
                    return client.get(self.url + "/healthz").status_code == 200
            except (httpx.HTTPError, ssl.SSLError, OSError):
                return False

        ok = wait_until(healthy, STARTUP_TIMEOUT, 0.1)
        if self.proc.poll() is not None or not ok:
            self.stop()
            pytest.fail(f"gateway did not start as uid {os.geteuid() if not prefix else UNPRIVILEGED}:\n{tail(self.stderr)}")

    @property
    def uid(self) -> int:
        return int(Path(f"/proc/{self.proc.pid}/status").read_text().split("\nUid:")[1].split()[0])

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))

    def client(self, http2: bool = True, timeout: float = 10) -> "httpx.Client":
        if self.ca is None:
            return httpx.Client(timeout=timeout)
        return httpx.Client(verify=self.context(), http2=http2, http1=not http2, timeout=timeout)

    def h2(self) -> RawH2:
        return RawH2(self)  # RawH2 reads .context() and .port

    def raw(self) -> socket.socket:
        """A socket to the listener: TLS (HTTP/1.1 by ALPN) when the gateway has TLS."""
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        if self.ca is None:
            return sock
        context = self.context()
        context.set_alpn_protocols(["http/1.1"])
        return context.wrap_socket(sock, server_hostname="localhost")

    def log(self) -> str:
        return self.stderr.read_text(errors="replace")

    def sign_in(self) -> str:
        with self.client() as client:
            created = client.post(self.url + "/v1/auth/legacy/token", json={"token": "captured"})
        assert created.status_code == 201, created.text
        return created.json()["session_token"]

    def stop(self):
        stop_process(self.proc)
        if os.environ.get("GATEHOUSE_TEST_KEEP"):
            print(f"kept {self.root}")
        else:
            shutil.rmtree(self.root, ignore_errors=True)


ACCESS = """access:
  rules:
    - {name: "admin-host", hosts: ["admin.test"], paths: ["/**"], allow: [{subject: "nobody-has-this"}]}
    - {name: "public", paths: ["/public/**", "/second/public/**"], allow: "anyone"}
  default: "authenticated"
"""


def capture_provider(site: str) -> str:
    directory = Path(tempfile.mkdtemp())
    try:
        return write_capture_provider(directory, site).read_text()
    finally:
        shutil.rmtree(directory)


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> Certificates:
    return Certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def backends():
    first, second = RawBackend(), RawBackend()
    yield first, second
    first.close()
    second.close()


@pytest.fixture(scope="module")
def gateway(gatehouse_bin, certs, backends):
    """TLS, `backend` and an upstream on the relay, an upstream on the router, the capture provider."""
    first, second = backends
    text = "\n".join([
        f"backend: {{url: {q(first.url)}}}",
        "upstreams:",
        f"  - {{name: \"second\", prefix: \"/second\", url: {q(second.url)}}}",
        f"  - {{name: \"tokened\", prefix: \"/tokened\", url: {q(second.url + '/tokened')}, forward_access_token: true}}",
        "limits: {client_body_timeout_seconds: 2}",
        ACCESS,
    ])
    started = Gateway(gatehouse_bin, certs, text, {"legacy": capture_provider(first.url)})
    yield started
    started.stop()


# --- an unprivileged user ------------------------------------------------------------------------------

def test_runs_as_an_unprivileged_user_and_relays_to_an_http_backend(gateway, backends):
    """Fails on the code before TCP_NODELAY moved to the TCP level: 502 for every call of a non-root gateway."""
    if os.geteuid() == 0:
        assert gateway.uid == UNPRIVILEGED
    else:
        assert gateway.uid == os.geteuid() != 0
    first, second = backends
    token = gateway.sign_in()
    for http2 in (False, True):
        with gateway.client(http2=http2) as client:
            for path, backend in [("/v1/api/public/ping", first), ("/v1/api/second/public/ping", second), ("/v1/api/hello", first)]:
                answer = client.get(gateway.url + path, headers={"Authorization": f"Bearer {token}"})
                assert answer.status_code == 200, (path, http2, answer.text, gateway.log()[-2000:])
            assert answer.json()["subject"] == "user-1"
    # The keys and the store it generated are its own.
    data = gateway.root / "data"
    assert data.is_dir() and any(data.iterdir())
    assert {p.stat().st_uid for p in data.iterdir()} == {gateway.uid}
    assert "Permission denied" not in gateway.log() and "EACCES" not in gateway.log()


# --- HTTP/2 request smuggling --------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["GET", "HEAD", "DELETE", "OPTIONS"])
def test_http2_data_after_a_head_without_framing_never_becomes_a_second_request(gateway, backends, method):
    first, second = backends
    token = gateway.sign_in()
    cases = [("/v1/api/public/x", first, "/public/x", None), ("/v1/api/second/public/x", second, "/public/x", None),
             ("/v1/api/hello", first, "/hello", token), ("/v1/api/second/hello", second, "/hello", token),
             ("/v1/api/tokened/hello", second, "/tokened/hello", token)]
    for path, backend, upstream_path, credential in cases:
        first.clear(), second.clear()
        connection = gateway.h2()
        try:
            extra = [("authorization", f"Bearer {credential}")] if credential else []
            stream = connection.headers(method, path, extra, end=False)
            connection.conn.send_data(stream, SMUGGLED, end_stream=True)
            connection.flush()
            outcome, status, _ = connection.read_until(stream)
        finally:
            connection.close()
        assert (outcome, status) == ("answer", 200), (method, path, outcome, status, gateway.log()[-2000:])
        assert wait_until(lambda: len(first.seen() + second.seen()) >= 1, 5)
        time.sleep(0.3)  # a second request, if one were smuggled, would be parsed by now
        seen = first.seen() + second.seen()
        assert len(seen) == 1, (method, path, seen)
        assert seen[0]["target"] == upstream_path and seen[0]["method"] == method
        # The DATA arrived framed, as the body of this one request.
        assert seen[0]["framing"] in ("chunked", "length") and seen[0]["body"] == SMUGGLED, seen[0]
        assert not [r for r in first.requests + second.requests if r["target"].startswith("/smuggled")]


def test_http2_request_without_data_goes_upstream_without_a_body(gateway, backends):
    first, _ = backends
    first.clear()
    connection = gateway.h2()
    try:
        stream = connection.headers("GET", "/v1/api/public/plain", end=False)
        connection.conn.end_stream(stream)
        connection.flush()
        assert connection.read_until(stream)[:2] == ("answer", 200)
    finally:
        connection.close()
    (seen,) = first.seen("/public/plain")
    assert seen["framing"] == "none" and not any(name in ("content-length", "transfer-encoding") for name, _ in seen["fields"])


# --- the authority -------------------------------------------------------------------------------------

def test_http2_host_that_disagrees_with_authority_is_400(gateway, backends):
    first, _ = backends
    first.clear()
    connection = gateway.h2()
    connection.conn.config.validate_outbound_headers = False  # h2 itself refuses to send what an attacker sends
    try:
        # :authority admin.test, host 127.0.0.1: the rule for admin.test would be missed if Host were judged.
        stream = connection.conn.get_next_available_stream_id()
        connection.conn.send_headers(stream, [(":method", "GET"), (":path", "/v1/api/public/x"), (":scheme", "https"),
                                              (":authority", "admin.test"), ("host", "127.0.0.1")], end_stream=True)
        connection.flush()
        outcome, status, body = connection.read_until(stream)
        assert (outcome, status) == ("answer", 400), (outcome, status)
        assert json.loads(body)["code"] == "invalid_request"
        # :authority alone is the host: the admin.test rule applies (no session: 401).
        assert connection.get("/v1/api/public/x", [])[:2] == ("answer", 200)
        stream = connection.conn.get_next_available_stream_id()
        connection.conn.send_headers(stream, [(":method", "GET"), (":path", "/v1/api/public/x"), (":scheme", "https"),
                                              (":authority", "admin.test")], end_stream=True)
        connection.flush()
        assert connection.read_until(stream)[:2] == ("answer", 401)
        for path in ["https://admin.test/v1/api/public/x", "v1/api/public/x"]:
            stream = connection.conn.get_next_available_stream_id()
            connection.conn.send_headers(stream, [(":method", "GET"), (":path", path), (":scheme", "https"),
                                                  (":authority", "localhost")], end_stream=True)
            connection.flush()
            assert connection.read_until(stream)[:2] == ("answer", 400), path
    finally:
        connection.close()
    assert len(first.seen("/public/x")) == 1  # only the one allowed request reached the backend


def raw_request(gateway: Gateway, text: bytes) -> tuple[int, bytes]:
    with gateway.raw() as sock:
        sock.sendall(text)
        received = bytearray()
        sock.settimeout(10)
        while b"\r\n\r\n" not in received:
            data = sock.recv(65536)
            if not data:
                break
            received += data
        head, _, body = bytes(received).partition(b"\r\n\r\n")
        return int(head.split(b" ")[1]), head


@pytest.mark.parametrize("path", ["/v1/session", "/v1/authz", "/v1/api/tokened/x"])
def test_http2_authority_is_checked_before_the_router_too(gateway, path):
    """The router's routes (and an upstream the router serves) get the same 400 as the relay's."""
    connection = gateway.h2()
    connection.conn.config.validate_outbound_headers = False
    try:
        stream = connection.conn.get_next_available_stream_id()
        connection.conn.send_headers(stream, [(":method", "GET"), (":path", path), (":scheme", "https"),
                                              (":authority", "admin.test"), ("host", "localhost")], end_stream=True)
        connection.flush()
        outcome, status, body = connection.read_until(stream)
        assert (outcome, status) == ("answer", 400), (path, outcome, status)
        assert json.loads(body)["code"] == "invalid_request"
    finally:
        connection.close()


@pytest.mark.parametrize("target", ["/v1/api/public/x", "/v1/authz", "/v1/session"])
def test_http1_absolute_form_authority_is_the_host(gateway, backends, target):
    first, _ = backends
    first.clear()
    # Disagreeing Host: 400, nothing forwarded.
    status, _ = raw_request(gateway, b"GET https://admin.test%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % target.encode())
    assert status == 400
    assert not first.seen("/public/x")
    if target == "/v1/api/public/x":
        # Agreeing (or absent) Host: the target's authority is judged: the admin.test rule refuses the anonymous call.
        status, _ = raw_request(gateway, b"GET https://admin.test/v1/api/public/x HTTP/1.1\r\nHost: admin.test\r\n\r\n")
        assert status == 401
        status, _ = raw_request(gateway, b"GET https://localhost/v1/api/public/x HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert status == 200
        assert [r["target"] for r in first.seen("/public/x")] == ["/public/x"]


# --- slow bodies ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/v1/api/public/upload", "/v1/session"])
def test_http1_body_without_progress_is_cut_with_408(gateway, path):
    with gateway.raw() as sock:
        sock.sendall(b"POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
                     % path.encode())
        started = time.monotonic()
        sock.settimeout(15)
        received = bytearray()
        while True:
            try:
                data = sock.recv(65536)
            except (socket.timeout, ssl.SSLError):
                pytest.fail(f"{path}: nothing after 15 s")
            if not data:
                break
            received += data
        elapsed = time.monotonic() - started
    assert received.startswith(b"HTTP/1.1 408"), received[:200]
    assert b"request_timeout" in received
    assert 1.5 <= elapsed < 8, elapsed


@pytest.mark.parametrize("path", ["/v1/api/public/upload", "/v1/session"])
def test_http2_body_without_progress_resets_the_stream(gateway, path):
    connection = gateway.h2()
    try:
        stream = connection.headers("POST", path, [("content-type", "application/json"), ("content-length", "100")], end=False)
        connection.conn.send_data(stream, b"{")
        connection.flush()
        started = time.monotonic()
        outcome, code, _ = connection.read_until(stream, timeout=15)
        elapsed = time.monotonic() - started
        assert outcome == "reset", (outcome, code)
        assert 1.5 <= elapsed < 8, elapsed
        # The connection's other streams go on.
        assert connection.get("/healthz")[:2] == ("answer", 200)
    finally:
        connection.close()


def test_slow_but_steady_body_is_not_cut(gateway, backends):
    """Progress resets the clock: 5 bytes, one every second, past the 2 s bound in all, reach the backend."""
    first, _ = backends
    first.clear()
    with gateway.raw() as sock:
        sock.sendall(b"POST /v1/api/public/steady HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\n")
        for byte in b"hello":
            time.sleep(1)
            sock.sendall(bytes([byte]))
        sock.settimeout(10)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
    assert [r["body"] for r in first.seen("/public/steady")] == [b"hello"]


# --- plain HTTP on the TLS port, and connections per client --------------------------------------------

def test_plain_http_on_the_tls_port_is_400(gateway):
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=10) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        received = bytearray()
        while data := sock.recv(65536):
            received += data
    head, _, body = bytes(received).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 "), received
    assert body.count(b"\n") == 1 and b"https" in body.lower(), body


def test_connections_per_client_are_bounded(gatehouse_bin, backends):
    first, _ = backends
    gateway = Gateway(gatehouse_bin, None, "\n".join([f"backend: {{url: {q(first.url)}}}", "limits: {max_connections_per_client: 3}", ACCESS]),
                      {"legacy": capture_provider(first.url)})
    held: list[socket.socket] = []
    try:
        def answered(sock: socket.socket) -> bytes:
            sock.settimeout(5)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            try:
                return sock.recv(65536)
            except OSError:
                return b""
        # Three held connections are answered (the start-up's health checks closed theirs).
        for _ in range(3):
            sock = socket.create_connection(("127.0.0.1", gateway.port), timeout=5)
            held.append(sock)
            assert answered(sock).startswith(b"HTTP/1.1 200")
        extra = socket.create_connection(("127.0.0.1", gateway.port), timeout=5)
        assert answered(extra) == b"", "a fourth connection from the same address was served"
        extra.close()
        held.pop().close()
        time.sleep(0.3)
        again = socket.create_connection(("127.0.0.1", gateway.port), timeout=5)
        held.append(again)
        assert answered(again).startswith(b"HTTP/1.1 200")
    finally:
        for sock in held:
            sock.close()
        gateway.stop()


# --- one decision over both protocols --------------------------------------------------------------------------

def test_every_row_gets_the_same_answer_over_http2_as_over_http11(gateway, backends):
    """The parity table at the binary level over HTTP/2: each row (method x path x presentation) gets the same status,
    problem code and identity at the backend over HTTP/2 as over HTTP/1.1, on the relay's upstreams, the router's
    (`forward_access_token`) and `/v1/authz`. The in-process table (DecisionParityTests) compares the relay with the
    router; this one compares the two protocols through the whole binary."""
    token = gateway.sign_in()
    kinds = {
        "none": {},
        "bearer": {"Authorization": f"Bearer {token}"},
        "unknown": {"Authorization": "Bearer gths_" + "A" * 43},
        "malformed": {"Authorization": "Basic YWxpY2U6c2VjcmV0"},
    }
    targets = ["/v1/api/public/x", "/v1/api/hello", "/v1/api/second/public/x", "/v1/api/second/hello", "/v1/api/tokened/hello",
               "/v1/api/%2e%2e/x", "/v1/api/public/../hello?q=1", "/v1/authz/hello", "/v1/authz/public/x"]

    def answer(client, method: str, target: str, fields: dict) -> tuple:
        response = client.request(method, gateway.url + target, headers=fields)
        problem = response.headers.get("content-type", "").startswith("application/problem+json")
        code = response.json().get("code") if problem and method != "HEAD" else None
        subject = response.json().get("subject") if not problem and method != "HEAD" and "/v1/api/" in target else None
        identity = response.headers.get("x-gatehouse-subject") if target.startswith("/v1/authz") else None
        return response.status_code, code, subject, identity

    rows, mismatches, statuses = 0, [], set()
    with gateway.client(http2=False) as http11, gateway.client(http2=True) as http2:
        assert http2.get(gateway.url + "/healthz").http_version == "HTTP/2"
        assert http11.get(gateway.url + "/healthz").http_version == "HTTP/1.1"
        for method in ("GET", "HEAD", "POST", "DELETE"):
            for target in targets:
                for kind, fields in kinds.items():
                    one, two = answer(http11, method, target, fields), answer(http2, method, target, fields)
                    rows += 1
                    statuses.add(one[0])
                    if one != two:
                        mismatches.append((method, target, kind, one, two))
    assert not mismatches, "\n".join(map(str, mismatches))
    assert rows >= 140 and {200, 400, 401} <= statuses, (rows, statuses)
