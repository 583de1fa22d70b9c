"""TLS and HTTP/2 on the gateway's own listener (SPEC "TLS and HTTP/2", docs/operations.md "TLS").

Certificates are made here with `openssl` (a CA, leaves for 127.0.0.1/localhost, a key of another pair) and,
for dates openssl cannot write (an expired leaf, one expiring in five days), with `cryptography`. A real
`gatehouse serve` with `tls:` is reached by real clients: `curl --http2`/`--http1.1`, httpx with HTTP/2,
`openssl s_client` for versions and ALPN, and the `h2` package on a TLS socket for what no client library
sends (an open connection across a SIGHUP, oversized and compressed-bomb header lists, a reset mid-body,
too many streams, a SETTINGS/PING flood).

Every route answers the same over HTTP/1.1 and HTTP/2: the session API, `/v1/api` (through the event-loop
relay, with a streamed upload and download), `/v1/proxy`, `/v1/authz`, DPoP with an `https` `htu`.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import STARTUP_TIMEOUT, clean_env, q, write_capture_provider, write_config
from gatehouse_testkit import free_port, require_module, stop_process, tail, wait_until

httpx = require_module("httpx", "pip install 'httpx[http2]' (requirements-test.txt)")
h2_connection = require_module("h2.connection", "pip install h2 (requirements-test.txt)")
import h2.config  # noqa: E402
import h2.events  # noqa: E402
import h2.exceptions  # noqa: E402
import h2.settings  # noqa: E402

from test_hostile_requests import DPoPKey  # noqa: E402

DOWNLOAD_BYTES = 3 * 1024 * 1024 + 17
UPLOAD_BYTES = 2 * 1024 * 1024 + 5


def openssl(*args: str, cwd: Path) -> None:
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


class Certificates:
    """A CA and what it signs, in one directory."""

    def __init__(self, root: Path):
        if not shutil.which("openssl"):
            pytest.fail("openssl is not installed")
        self.dir = root
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
                "-out", "ca.pem", "-days", "30", "-subj", "/CN=Gatehouse Test CA", cwd=root)
        (root / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
        self.ca = root / "ca.pem"

    def leaf(self, name: str) -> tuple[Path, Path]:
        """A leaf for localhost and 127.0.0.1 whose subject CN is `name`: (chain, key)."""
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", f"{name}.key",
                "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=self.dir)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.crt", "-days", "20", "-extfile", "san.ext", cwd=self.dir)
        chain = self.dir / f"{name}.pem"
        chain.write_text((self.dir / f"{name}.crt").read_text() + self.ca.read_text())
        return chain, self.dir / f"{name}.key"

    def lone_key(self, name: str) -> Path:
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", f"{name}.key", cwd=self.dir)
        return self.dir / f"{name}.key"

    def dated(self, name: str, not_after: datetime.datetime) -> tuple[Path, Path]:
        """A self-signed leaf with the given notAfter (openssl's `x509 -days` cannot write a past one)."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        certificate = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
                       .serial_number(x509.random_serial_number())
                       .not_valid_before(not_after - datetime.timedelta(days=60)).not_valid_after(not_after)
                       .sign(key, hashes.SHA256()))
        chain, key_file = self.dir / f"{name}.pem", self.dir / f"{name}.key"
        chain.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        return chain, key_file


def subject_of_served(port: int, ca: Path) -> str:
    """The CN of the certificate a new connection is given."""
    context = ssl.create_default_context(cafile=str(ca))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw_socket:
        with context.wrap_socket(raw_socket, server_hostname="localhost") as tls:
            subject = dict(item[0] for item in tls.getpeercert()["subject"])
            return subject["commonName"]


# --- the backend ---------------------------------------------------------------------------------

class Backend:
    """The application and the legacy site's probe in one loopback server (HTTP/1.1).

    `/probe`: names the user. `/base/echo…`, `/apibase/…`: the request as JSON. `/base/upload`: reads the body
    (Content-Length or chunked) and answers its length and SHA-256. `/base/download`: DOWNLOAD_BYTES, chunked,
    written in pieces. `/base/slow`: the request as JSON, 2 s later (`slow` counts the requests it got)."""

    def __init__(self):
        self.slow = 0
        backend = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    data = bytearray()
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return bytes(data)
                        data += self.rfile.read(size)
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length", "0")))

            def answer(self, payload: dict):
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def handle_one(self):
                received = self.body()
                if self.path.startswith("/probe"):
                    return self.answer({"id": "user-1", "email": "user1@example.test"})
                if self.path.startswith("/base/upload"):
                    return self.answer({"length": len(received), "sha256": hashlib.sha256(received).hexdigest()})
                if self.path.startswith("/base/download"):
                    self.send_response(200)
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for piece in pieces(DOWNLOAD_BYTES):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.write(b"0\r\n\r\n")
                    return
                if self.path.startswith("/base/slow"):
                    backend.slow += 1
                    time.sleep(2)
                self.answer({
                    "method": self.command, "target": self.path,
                    "subject": self.headers.get("X-Gatehouse-Subject"), "proto": self.headers.get("X-Forwarded-Proto"),
                    "assertion": self.headers.get("X-Gatehouse-Assertion") is not None,
                })

            do_GET = do_POST = do_PUT = do_DELETE = handle_one

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


def pieces(total: int, size: int = 65536):
    """Deterministic bytes, `total` of them, in pieces."""
    block = bytes(range(256)) * (size // 256)
    sent = 0
    while sent < total:
        piece = block[: min(size, total - sent)]
        sent += len(piece)
        yield piece


DOWNLOAD_SHA = hashlib.sha256(b"".join(pieces(DOWNLOAD_BYTES))).hexdigest()
UPLOAD_SHA = hashlib.sha256(b"".join(pieces(UPLOAD_BYTES))).hexdigest()


# --- the gateway -------------------------------------------------------------------------------

class TLSGateway:
    """`gatehouse serve` with `tls:`; https://127.0.0.1:{port}."""

    def __init__(self, binary: Path, root: Path, ca: Path, port: int, env: dict[str, str] | None = None):
        self.root, self.ca, self.port = root, ca, port
        self.url = f"https://127.0.0.1:{port}"
        self.stderr = root / "gateway.stderr"
        with open(root / "gateway.stdout", "wb") as so, open(self.stderr, "wb") as se:
            self.proc = subprocess.Popen(
                [str(binary), "serve", "--config", str(root / "gatehouse.yaml"), "--listen", f"127.0.0.1:{port}"],
                cwd=str(root), env=clean_env(env), stdin=subprocess.DEVNULL, stdout=so, stderr=se)

        def healthy() -> bool:
            if self.proc.poll() is not None:
                return True
            try:
                with httpx.Client(verify=self.context(), http2=True, timeout=1) as client:
                    return client.get(self.url + "/healthz").status_code == 200
            except (httpx.HTTPError, ssl.SSLError, OSError):
                return False

        ok = wait_until(healthy, STARTUP_TIMEOUT, 0.1)
        if self.proc.poll() is not None:
            pytest.fail(f"gateway exited with {self.proc.returncode} at start-up:\n{tail(self.stderr)}")
        if not ok:
            stop_process(self.proc)
            pytest.fail(f"gateway /healthz not 200 over HTTPS after {STARTUP_TIMEOUT}s:\n{tail(self.stderr)}")

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))

    def client(self, http2: bool = True) -> "httpx.Client":
        """httpx over HTTP/2 (`http2`) or HTTP/1.1 only."""
        return httpx.Client(verify=self.context(), http2=http2, http1=not http2, timeout=10)

    def log(self) -> str:
        return self.stderr.read_text(errors="replace")

    def alive(self) -> bool:
        """Still running, and a new HTTP/2 connection is answered."""
        if self.proc.poll() is not None:
            return False
        with self.client() as client:
            response = client.get(self.url + "/healthz")
            return response.status_code == 200 and response.http_version == "HTTP/2"

    def metric(self, name: str) -> float | None:
        with self.client() as client:
            for line in client.get(self.url + "/metrics").text.splitlines():
                if line.startswith(name + " ") or line.startswith(name + "{"):
                    return float(line.split()[-1])
        return None

    def stop(self):
        stop_process(self.proc)


def tls_yaml(chain: Path, key: Path, backend: Backend | None = None, extra: list[str] | None = None, tls_extra: list[str] | None = None) -> str:
    lines = ['store: {kind: "memory"}', "tls:", f"  certificate_file: {q(str(chain))}", f"  private_key_file: {q(str(key))}", *(tls_extra or [])]
    if backend:
        lines += ["backend:", f"  url: {q(backend.url + '/base')}"]
    return "\n".join(lines + (extra or []) + [""])


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> Certificates:
    return Certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture
def start(gatehouse_bin, tmp_path, certs):
    """start(yaml_lines...) -> TLSGateway; stopped at teardown."""
    started: list[TLSGateway] = []

    def run(text: str, root: Path | None = None, env: dict[str, str] | None = None) -> TLSGateway:
        directory = root or tmp_path / f"gw{len(started)}"
        write_config(directory, text)
        gateway = TLSGateway(gatehouse_bin, directory, certs.ca, free_port(), env)
        started.append(gateway)
        return gateway

    yield run
    for gateway in started:
        gateway.stop()


@pytest.fixture
def app(start, certs, tmp_path):
    """A gateway with a backend and the capture provider (`POST /v1/auth/legacy/token` signs in)."""
    backend = Backend()
    chain, key = certs.leaf("localhost")
    root = tmp_path / "app"
    write_capture_provider(root, backend.url, extra=[f"api: {{url: {q(backend.url + '/apibase/')}, auth: \"bearer\"}}"])
    gateway = start(tls_yaml(chain, key, backend, tls_extra=["  hsts_seconds: 600"]), root=root)
    yield gateway, backend
    backend.close()


def sign_in(gateway: TLSGateway, dpop: DPoPKey | None = None) -> str:
    headers = {"DPoP": dpop.proof("POST", gateway.url + "/v1/auth/legacy/token")} if dpop else {}
    with gateway.client() as client:
        created = client.post(gateway.url + "/v1/auth/legacy/token", json={"token": "captured"}, headers=headers)
    assert created.status_code == 201, created.text
    return created.json()["session_token"]


# --- versions and ALPN ----------------------------------------------------------------------------

def s_client(port: int, *args: str) -> str:
    done = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-servername", "localhost", *args],
                          input="", capture_output=True, text=True, timeout=20)
    return done.stdout + done.stderr


def handshake_ok(output: str) -> bool:
    return "Cipher is (NONE)" not in output and ("New, TLSv1" in output or "Protocol  :" in output or "Cipher is" in output) \
        and "handshake failure" not in output and "alert" not in output.lower().split("---")[0]


def test_alpn_prefers_h2_and_old_versions_are_refused(start, certs):
    chain, key = certs.leaf("localhost")
    gateway = start(tls_yaml(chain, key))
    assert "ALPN protocol: h2" in s_client(gateway.port, "-alpn", "h2,http/1.1")
    assert "ALPN protocol: http/1.1" in s_client(gateway.port, "-alpn", "http/1.1")
    assert "New, TLSv1.2" in s_client(gateway.port, "-tls1_2")
    assert "New, TLSv1.3" in s_client(gateway.port, "-tls1_3")
    # TLS 1.1 and 1.0: no handshake (the client may also refuse to offer them: either way, no session).
    for old in ("-tls1_1", "-tls1"):
        output = s_client(gateway.port, old, "-cipher", "DEFAULT@SECLEVEL=0")
        assert "New, (NONE), Cipher is (NONE)" in output or "no protocols available" in output, output
    # The refusal is the gateway's own: a TLS 1.1 ClientHello gets a protocol_version alert.
    assert "alert protocol version" in s_client(gateway.port, "-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0")
    # Plain HTTP on the HTTPS port is no request.
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=10) as plain:
        plain.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = plain.recv(4096)
        assert b"200 OK" not in answer
    assert gateway.alive()


def test_min_version_13_and_http2_off(start, certs):
    chain, key = certs.leaf("localhost")
    gateway = start(tls_yaml(chain, key, tls_extra=['  min_version: "1.3"', "  http2: false"]))
    assert "New, (NONE), Cipher is (NONE)" in s_client(gateway.port, "-tls1_2")
    assert "New, TLSv1.3" in s_client(gateway.port, "-tls1_3")
    output = s_client(gateway.port, "-alpn", "h2,http/1.1")
    assert "ALPN protocol: http/1.1" in output
    # A client offering both gets HTTP/1.1.
    with httpx.Client(verify=gateway.context(), http2=True, timeout=10) as client:
        response = client.get(gateway.url + "/healthz")
        assert response.status_code == 200 and response.http_version == "HTTP/1.1"


# --- every route, the same over HTTP/1.1 and HTTP/2 ------------------------------------------------

def test_every_route_answers_the_same_over_both_protocols(app):
    gateway, backend = app
    token = sign_in(gateway)
    bearer = {"Authorization": f"Bearer {token}"}
    relayed_before = gateway.metric("gatehouse_relayed_requests_total") or 0
    answers = {}
    for http2 in (False, True):
        with gateway.client(http2) as client:
            seen = []

            def call(method, path, **kwargs):
                response = client.request(method, gateway.url + path, **kwargs)
                assert response.http_version == ("HTTP/2" if http2 else "HTTP/1.1")
                # HSTS on every answer, the relay's, the router's and the problems alike.
                assert response.headers.get("strict-transport-security") == "max-age=600", (path, response.headers)
                seen.append((method, path, response.status_code))
                return response

            session = call("GET", "/v1/session", headers=bearer)
            assert session.status_code == 200
            echo = call("GET", "/v1/api/echo?x=1", headers=bearer)
            assert echo.status_code == 200
            assert echo.json() == {"method": "GET", "target": "/base/echo?x=1", "subject": "user-1", "proto": "https", "assertion": True}
            refused = call("GET", "/v1/api/echo")
            assert refused.status_code == 401 and refused.json()["code"] == "invalid_session"
            upload = call("POST", "/v1/api/upload", headers=bearer, content=pieces(UPLOAD_BYTES))
            assert upload.json() == {"length": UPLOAD_BYTES, "sha256": UPLOAD_SHA}
            digest, length = hashlib.sha256(), 0
            with client.stream("GET", gateway.url + "/v1/api/download", headers=bearer) as download:
                assert download.status_code == 200
                for chunk in download.iter_bytes():
                    digest.update(chunk)
                    length += len(chunk)
            assert (length, digest.hexdigest()) == (DOWNLOAD_BYTES, DOWNLOAD_SHA)
            proxied = call("GET", "/v1/proxy/legacy/items?y=2", headers=bearer)
            assert proxied.status_code == 200 and proxied.json()["target"] == "/apibase/items?y=2"
            authz = call("GET", "/v1/authz", headers={**bearer, "X-Original-URL": "https://app.example.test/x", "X-Original-Method": "GET"})
            assert authz.status_code == 200
            denied = call("GET", "/v1/authz", headers={"X-Original-URL": "https://app.example.test/x"})
            assert denied.status_code == 401
            answers[http2] = (seen, sorted(session.json()))
    assert answers[False] == answers[True]
    # Both protocols' /v1/api calls went through the event-loop relay (4 per protocol: echo, 401, upload, download).
    assert (gateway.metric("gatehouse_relayed_requests_total") or 0) - relayed_before >= 6


def test_the_relay_lane_serves_https11_with_hsts(app):
    """An HTTPS/1.1 connection whose first requests are simple `GET`s to `/v1/api` is served by the relay's byte lane
    (`gatehouse_relay_lane_requests_total`): its answers carry `Strict-Transport-Security` once, as every answer does,
    and its refusals are the same problems."""
    gateway, _ = app
    token = sign_in(gateway)
    lane_before = gateway.metric("gatehouse_relay_lane_requests_total") or 0
    with gateway.client(False) as client:
        for _ in range(3):
            echo = client.get(gateway.url + "/v1/api/echo?x=1", headers={"Authorization": f"Bearer {token}"})
            assert echo.status_code == 200 and echo.http_version == "HTTP/1.1"
            assert echo.headers.get_list("strict-transport-security") == ["max-age=600"], echo.headers
            assert echo.json()["proto"] == "https"
    assert (gateway.metric("gatehouse_relay_lane_requests_total") or 0) - lane_before >= 3
    with gateway.client(False) as client:
        refused = client.get(gateway.url + "/v1/api/echo", headers={"Authorization": "Bearer not-a-session"})
        assert refused.status_code == 401 and refused.json()["code"] == "invalid_session"
        assert refused.headers.get_list("strict-transport-security") == ["max-age=600"]


def test_curl_over_http2_and_http11(app):
    gateway, _ = app
    token = sign_in(gateway)
    bodies = {}
    for flag, version in (("--http2", "2"), ("--http1.1", "1.1")):
        done = subprocess.run(
            ["curl", "-sS", flag, "--cacert", str(gateway.ca), "-H", f"Authorization: Bearer {token}",
             "-w", "\n%{http_version} %{http_code}", gateway.url + "/v1/api/echo/curl"],
            capture_output=True, text=True, timeout=20)
        assert done.returncode == 0, done.stderr
        body, _, trailer = done.stdout.rpartition("\n")
        assert trailer == f"{version} 200"
        bodies[version] = json.loads(body)
    assert bodies["2"] == bodies["1.1"]
    assert bodies["2"]["target"] == "/base/echo/curl"


def test_one_http2_connection_carries_relayed_and_routed_streams_at_once(app):
    """The relay answers its streams on the event loop; a stream whose request goes to the router gets the router's
    handlers only when its request arrives. Interleaved on one connection, with a sign-in whose body comes in two
    DATA frames after its HEADERS, every stream gets its own answer and the connection goes on."""
    gateway, _ = app
    token = sign_in(gateway)
    relayed_before = gateway.metric("gatehouse_relayed_requests_total") or 0
    raw = RawH2(gateway)
    bearer = [("authorization", f"Bearer {token}")]
    expected: dict[int, tuple[str, object]] = {}
    bodies: dict[int, bytes] = {}
    for i in range(12):
        expected[raw.headers("GET", f"/v1/api/echo/mix-{i}", bearer)] = ("relay", f"/base/echo/mix-{i}")
        expected[raw.headers("GET", "/healthz")] = ("health", None)
        if i % 4 == 0:
            stream = raw.headers("POST", "/v1/auth/legacy/token", [("content-type", "application/json")], end=False)
            expected[stream] = ("sign-in", None)
            body = json.dumps({"token": f"captured-{i}"}).encode()
            raw.conn.send_data(stream, body[:5])
            raw.flush()
            bodies[stream] = body[5:]
        expected[raw.headers("GET", "/v1/api/echo/none")] = ("refused", None)
    for stream, rest in bodies.items():
        raw.conn.send_data(stream, rest, end_stream=True)
    raw.flush()
    answers: dict[int, tuple[int, bytes]] = {}
    status: dict[int, int] = {}
    collected: dict[int, bytearray] = {}
    deadline = time.monotonic() + 20
    while len(answers) < len(expected) and time.monotonic() < deadline:
        data = raw.sock.recv(65536)
        assert data, "the connection ended"
        for event in raw.conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                status[event.stream_id] = int(dict(event.headers)[":status"])
            elif isinstance(event, h2.events.DataReceived):
                raw.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                collected.setdefault(event.stream_id, bytearray()).extend(event.data)
            elif isinstance(event, h2.events.StreamEnded):
                answers[event.stream_id] = (status[event.stream_id], bytes(collected.get(event.stream_id, b"")))
            elif isinstance(event, (h2.events.StreamReset, h2.events.ConnectionTerminated)):
                pytest.fail(f"unexpected {event}")
        raw.flush()
    assert len(answers) == len(expected)
    for stream, (kind, target) in expected.items():
        code, body = answers[stream]
        if kind == "relay":
            assert code == 200 and json.loads(body)["target"] == target, (stream, code, body)
        elif kind == "health":
            assert code == 200, (stream, code, body)
        elif kind == "sign-in":
            assert code == 201 and json.loads(body)["session_token"], (stream, code, body)
        else:
            assert code == 401 and json.loads(body)["code"] == "invalid_session", (stream, code, body)
    # The connection is still good for another round, and the /v1/api streams went through the relay.
    assert raw.get("/healthz")[:2] == ("answer", 200)
    raw.close()
    assert (gateway.metric("gatehouse_relayed_requests_total") or 0) - relayed_before >= 12


def test_the_streams_of_one_http2_connection_share_a_memo_that_sign_out_still_voids(app):
    """The relay handlers of one HTTP/2 connection's streams share the connection's credential memo, as one
    HTTP/1.1 connection's requests do. It holds no more than that: a second token on the same connection is its
    own, a forged one is refused, and once the session is signed out (on another connection) the next stream on
    this one is refused, not served from the memo."""
    gateway, _ = app
    token, other = sign_in(gateway), sign_in(gateway)
    raw = RawH2(gateway)
    for i in range(3):
        kind, status, body = raw.get(f"/v1/api/echo/memo-{i}", [("authorization", f"Bearer {token}")])
        assert (kind, status) == ("answer", 200) and json.loads(body)["target"] == f"/base/echo/memo-{i}", (kind, status, body)
    assert raw.get("/v1/api/echo/other", [("authorization", f"Bearer {other}")])[:2] == ("answer", 200)
    forged = token[:-2] + ("AA" if token[-2:] != "AA" else "BB")
    kind, status, body = raw.get("/v1/api/echo/forged", [("authorization", f"Bearer {forged}")])
    assert (kind, status) == ("answer", 401) and json.loads(body)["code"] == "invalid_session", (kind, status, body)
    assert raw.get("/v1/api/echo/again", [("authorization", f"Bearer {token}")])[:2] == ("answer", 200)
    with gateway.client(http2=False) as client:
        assert client.delete(gateway.url + "/v1/session", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    kind, status, body = raw.get("/v1/api/echo/after", [("authorization", f"Bearer {token}")])
    assert (kind, status) == ("answer", 401) and json.loads(body)["code"] == "invalid_session", (kind, status, body)
    assert raw.get("/v1/api/echo/still", [("authorization", f"Bearer {other}")])[:2] == ("answer", 200)
    raw.close()


def read_http11_answers(sock: ssl.SSLSocket, count: int) -> list[tuple[int, bytes]]:
    """`count` HTTP/1.1 answers framed by Content-Length, in the order they come."""
    buffer, answers = b"", []
    while len(answers) < count:
        while b"\r\n\r\n" not in buffer:
            chunk = sock.recv(65536)
            assert chunk, f"the connection ended after {len(answers)} answers: {buffer[:300]!r}"
            buffer += chunk
        head, buffer = buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        fields = {name.strip().lower(): value.strip() for name, value in (line.split(":", 1) for line in lines[1:])}
        length = int(fields.get("content-length", "0"))
        while len(buffer) < length:
            chunk = sock.recv(65536)
            assert chunk, "the connection ended inside an answer"
            buffer += chunk
        answers.append((int(lines[0].split(" ")[1]), buffer[:length]))
        buffer = buffer[length:]
    return answers


def test_an_https11_connection_the_relay_served_reaches_the_router_when_it_must(app):
    """An HTTPS/1.1 connection gets the router's handlers only when a request (or a parse error) goes past the
    relay. On one connection: relayed calls, then the router, then both pipelined in one write, every answer in
    order; on another, a malformed request after a relayed one still gets its problem document. Then SIGTERM
    closes a connection the relay alone served, while it is idle, and the gateway exits."""
    gateway, _ = app
    token = sign_in(gateway)
    context = gateway.context()
    context.set_alpn_protocols(["http/1.1"])

    def request(path: str, bearer: bool = True) -> bytes:
        auth = f"Authorization: Bearer {token}\r\n" if bearer else ""
        return f"GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}\r\n".encode()

    def echoed(answer: tuple[int, bytes], target: str) -> bool:
        return answer[0] == 200 and json.loads(answer[1])["target"] == target

    with context.wrap_socket(socket.create_connection(("127.0.0.1", gateway.port), timeout=10), server_hostname="localhost") as sock:
        assert sock.selected_alpn_protocol() == "http/1.1"
        for path in ("one", "two"):
            sock.sendall(request(f"/v1/api/echo/{path}"))
            assert echoed(read_http11_answers(sock, 1)[0], f"/base/echo/{path}")
        sock.sendall(request("/healthz", bearer=False))
        assert read_http11_answers(sock, 1)[0][0] == 200
        sock.sendall(request("/v1/api/echo/three"))
        assert echoed(read_http11_answers(sock, 1)[0], "/base/echo/three")
        sock.sendall(request("/v1/api/echo/four") + request("/healthz", bearer=False) + request("/v1/api/echo/five"))
        four, health, five = read_http11_answers(sock, 3)
        assert echoed(four, "/base/echo/four") and health[0] == 200 and echoed(five, "/base/echo/five")

    with context.wrap_socket(socket.create_connection(("127.0.0.1", gateway.port), timeout=10), server_hostname="localhost") as sock:
        sock.sendall(request("/v1/api/echo/six"))
        assert echoed(read_http11_answers(sock, 1)[0], "/base/echo/six")
        sock.sendall(b"GET /v1/api/echo/seven HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n")
        status, body = read_http11_answers(sock, 1)[0]
        assert status == 400 and json.loads(body)["code"] == "invalid_request", (status, body)

    idle = context.wrap_socket(socket.create_connection(("127.0.0.1", gateway.port), timeout=10), server_hostname="localhost")
    idle.sendall(request("/v1/api/echo/eight"))
    assert echoed(read_http11_answers(idle, 1)[0], "/base/echo/eight")
    gateway.proc.send_signal(signal.SIGTERM)
    started = time.monotonic()
    try:
        assert idle.recv(1024) == b""
    except (ssl.SSLError, ConnectionError):
        pass
    assert gateway.proc.wait(timeout=10) == 0
    assert time.monotonic() - started < 8
    idle.close()


def test_dpop_with_an_https_target(app):
    gateway, _ = app
    key = DPoPKey()
    token = sign_in(gateway, dpop=key)
    for http2 in (False, True):
        with gateway.client(http2) as client:
            url = gateway.url + "/v1/api/echo/dpop"
            ok = client.get(url, headers={"Authorization": f"DPoP {token}", "DPoP": key.proof("GET", url, token)})
            assert ok.status_code == 200, ok.text
            plain = url.replace("https://", "http://")
            wrong = client.get(url, headers={"Authorization": f"DPoP {token}", "DPoP": key.proof("GET", plain, token)})
            assert wrong.status_code == 401, wrong.text


def test_sigterm_lets_the_requests_in_flight_on_both_protocols_finish(app):
    """A relayed request in flight on an HTTP/2 stream and one on an HTTPS/1.1 connection when SIGTERM arrives
    (their backend answers 2 s later): both are answered whole, and the gateway then stops with status 0. The
    HTTP/2 connection gets a GOAWAY naming the stream as processed (RFC 9113 §6.8), then the stream's answer; curl
    takes it, as browsers do (httpx fails a stream on any GOAWAY)."""
    gateway, backend = app
    token = sign_in(gateway)

    def call(flag: str, n: int) -> tuple[str, dict]:
        done = subprocess.run(
            ["curl", "-sS", flag, "--cacert", str(gateway.ca), "-H", f"Authorization: Bearer {token}",
             "-w", "\n%{http_version} %{http_code}", gateway.url + f"/v1/api/slow/{n}"],
            capture_output=True, text=True, timeout=20)
        assert done.returncode == 0, done.stderr
        body, _, trailer = done.stdout.rpartition("\n")
        return trailer, json.loads(body)

    with ThreadPoolExecutor(2) as pool:
        calls = [pool.submit(call, flag, n) for n, flag in enumerate(("--http2", "--http1.1"))]
        assert wait_until(lambda: backend.slow == 2, 10), "the backend never got both requests"
        started = time.monotonic()
        gateway.proc.send_signal(signal.SIGTERM)
        answers = [c.result() for c in calls]
    assert [trailer for trailer, _ in answers] == ["2 200", "1.1 200"], answers
    assert [body["target"] for _, body in answers] == ["/base/slow/0", "/base/slow/1"]
    try:
        status = gateway.proc.wait(timeout=max(0.1, 10 - (time.monotonic() - started)))
    except subprocess.TimeoutExpired:
        raise AssertionError(f"gateway still running 10 s after SIGTERM:\n{gateway.log()[-2000:]}")
    assert status == 0, f"exit status {status}:\n{gateway.log()}"


def test_sigterm_ends_an_https11_connection_when_its_client_closes(app):
    """An HTTPS/1.1 request in flight at SIGTERM: once its answer is out, the gateway sends `close_notify`, curl
    answers with its own and closes, and the gateway exits then, not after NIOSSL's 5 s wait for a `close_notify`
    (on a connection that allows half-closure, a peer's `close_notify` read while the gateway's own close is under
    way was taken as a half-close, so the connection lingered until that timeout)."""
    gateway, backend = app
    token = sign_in(gateway)
    with ThreadPoolExecutor(1) as pool:
        call = pool.submit(subprocess.run, [
            "curl", "-sS", "--http1.1", "--cacert", str(gateway.ca), "-H", f"Authorization: Bearer {token}",
            "-w", "\n%{http_code}", gateway.url + "/v1/api/slow/h1"], capture_output=True, text=True, timeout=20)
        assert wait_until(lambda: backend.slow == 1, 10), "the backend never got the request"
        gateway.proc.send_signal(signal.SIGTERM)
        done = call.result()
    answered = time.monotonic()
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("\n200"), done.stdout
    try:
        status = gateway.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"gateway still running 10 s after its last answer:\n{gateway.log()[-2000:]}")
    assert status == 0, f"exit status {status}:\n{gateway.log()}"
    lingered = time.monotonic() - answered
    assert lingered < 3, f"the gateway exited {lingered:.1f} s after its last answer"


@pytest.mark.parametrize("alpn", ["http/1.1", "h2"])
def test_a_client_gone_without_close_notify_is_closed_at_once(app, alpn):
    """A TLS client whose TCP connection ends without a `close_notify` (a crashed or killed client, `wrk`,
    many a mobile stack): the gateway closes its side at once, as it does for a plain-HTTP client's end of input,
    instead of holding the socket in CLOSE-WAIT until `limits.client_idle_timeout_seconds` (60 s here). NIOSSL
    takes such an end of input in silence on a connection that allows half-closure."""
    gateway, _ = app
    token = sign_in(gateway)
    context = gateway.context()
    context.set_alpn_protocols([alpn])
    tls = context.wrap_socket(socket.create_connection(("127.0.0.1", gateway.port), timeout=10), server_hostname="localhost")
    assert tls.selected_alpn_protocol() == alpn
    if alpn == "http/1.1":
        tls.sendall(f"GET /v1/api/items HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
        assert tls.recv(65536).startswith(b"HTTP/1.1 200 "), "no answer to the request"
    else:
        connection = h2_connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
        connection.initiate_connection()
        tls.sendall(connection.data_to_send())
        assert tls.recv(65536), "no SETTINGS from the gateway"
    # The TCP connection's end, with no close_notify: the TLS socket's own descriptor, shut for writing.
    raw = socket.socket(fileno=os.dup(tls.fileno()))
    raw.shutdown(socket.SHUT_WR)
    # One deadline for every read: the gateway's close_notify coming at once and its socket's end only after
    # NIOSSL's 5 s wait for the client's close_notify is a connection held, not closed at once.
    started = time.monotonic()
    deadline = started + 2
    try:
        while True:  # the gateway's close_notify (and, on h2, its GOAWAY), then the end
            raw.settimeout(max(deadline - time.monotonic(), 0.001))
            if not raw.recv(65536):
                break
    except socket.timeout:
        raise AssertionError(f"the gateway still held the connection {time.monotonic() - started:.1f} s after the client's end")
    finally:
        raw.close()
        tls.close()
    assert gateway.proc.poll() is None
    assert gateway.alive()


def test_redirect_listener_answers_308_to_public_url(start, certs):
    import requests

    chain, key = certs.leaf("localhost")
    redirect = free_port()
    gateway = start(tls_yaml(chain, key, extra=[f'redirect_http_listen: "127.0.0.1:{redirect}"']))
    for method in ("GET", "POST"):
        response = requests.request(method, f"http://127.0.0.1:{redirect}/v1/session?a=1&b=%2F", allow_redirects=False, timeout=5)
        assert response.status_code == 308
        assert response.headers["Location"] == gateway.url + "/v1/session?a=1&b=%2F"
    # A target that is no path stays under public_url.
    with socket.create_connection(("127.0.0.1", redirect), timeout=5) as plain:
        plain.sendall(b"GET http://evil.example/x HTTP/1.1\r\nHost: evil.example\r\n\r\n")
        answer = plain.recv(4096).decode("latin-1")
    assert " 308 " in answer.split("\r\n")[0]
    location = [line for line in answer.split("\r\n") if line.lower().startswith("location:")][0]
    assert location.split(":", 1)[1].strip().startswith(gateway.url + "/")


# --- certificate rotation -------------------------------------------------------------------------

class RawH2:
    """One HTTP/2 connection on a TLS socket, driven by the `h2` package."""

    def __init__(self, gateway: TLSGateway, settings: dict | None = None):
        context = gateway.context()
        context.set_alpn_protocols(["h2"])
        self.sock = context.wrap_socket(socket.create_connection(("127.0.0.1", gateway.port), timeout=10), server_hostname="localhost")
        assert self.sock.selected_alpn_protocol() == "h2"
        self.conn = h2_connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        if settings:
            self.conn.update_settings(settings)
        self.flush()
        self.peer_subject = dict(item[0] for item in self.sock.getpeercert()["subject"])["commonName"]
        # The server's SETTINGS (its stream and header limits) before anything else.
        settled = False
        while not settled:
            for event in self.conn.receive_data(self.sock.recv(65536)):
                settled = settled or isinstance(event, h2.events.RemoteSettingsChanged)
            self.flush()

    def flush(self):
        self.sock.sendall(self.conn.data_to_send())

    def headers(self, method: str, path: str, extra: list[tuple[str, str]] | None = None, end: bool = True) -> int:
        stream = self.conn.get_next_available_stream_id()
        self.conn.send_headers(stream, [(":method", method), (":path", path), (":scheme", "https"), (":authority", "localhost"),
                                        *(extra or [])], end_stream=end)
        self.flush()
        return stream

    def read_until(self, stream: int, timeout: float = 10) -> tuple[str, int | None, bytes]:
        """('answer', status, body), ('reset', error code, b''), or ('closed', error code, b'')."""
        status, body = None, bytearray()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                data = self.sock.recv(65536)
            except (ssl.SSLError, ConnectionError, socket.timeout):
                return "closed", None, b""
            if not data:
                return "closed", None, b""
            for event in self.conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                    status = int(dict(event.headers)[":status"])
                elif isinstance(event, h2.events.DataReceived):
                    self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    if event.stream_id == stream:
                        body += event.data
                elif isinstance(event, h2.events.StreamEnded) and event.stream_id == stream:
                    self.flush()
                    return "answer", status, bytes(body)
                elif isinstance(event, h2.events.StreamReset) and event.stream_id == stream:
                    self.flush()
                    return "reset", event.error_code, b""
                elif isinstance(event, h2.events.ConnectionTerminated):
                    return "closed", event.error_code, b""
            self.flush()
        return "timeout", None, b""

    def get(self, path: str, extra: list[tuple[str, str]] | None = None) -> tuple[str, int | None, bytes]:
        return self.read_until(self.headers("GET", path, extra))

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def test_sighup_rotates_the_pair_and_open_connections_go_on(start, certs, tmp_path):
    first_chain, first_key = certs.leaf("first")
    second_chain, second_key = certs.leaf("second")
    live = tmp_path / "live"
    live.mkdir()
    chain, key = live / "fullchain.pem", live / "privkey.pem"
    shutil.copy(first_chain, chain)
    shutil.copy(first_key, key)
    gateway = start(tls_yaml(chain, key))
    expiry_first = gateway.metric("gatehouse_tls_certificate_expiry_timestamp_seconds")
    assert expiry_first and abs(expiry_first - time.time() - 20 * 86400) < 2 * 86400
    assert subject_of_served(gateway.port, certs.ca) == "first"
    held = RawH2(gateway)
    assert held.peer_subject == "first"
    assert held.get("/healthz")[:2] == ("answer", 200)

    # The new pair, then SIGHUP: new connections get it, the open one goes on.
    shutil.copy(second_chain, chain)
    shutil.copy(second_key, key)
    gateway.proc.send_signal(signal.SIGHUP)
    assert wait_until(lambda: "TLS certificate reloaded" in gateway.log(), 10), tail(gateway.stderr)
    # The same SIGHUP still reloads the providers and access rules.
    assert wait_until(lambda: "providers reloaded" in gateway.log(), 10), tail(gateway.stderr)
    assert subject_of_served(gateway.port, certs.ca) == "second"
    assert held.get("/healthz")[:2] == ("answer", 200)
    with gateway.client() as client:
        assert client.get(gateway.url + "/healthz").status_code == 200

    # A broken pair (a key of another pair, then an unreadable key): refused, the second pair stays.
    shutil.copy(certs.lone_key("stray"), key)
    gateway.proc.send_signal(signal.SIGHUP)
    assert wait_until(lambda: gateway.log().count("TLS certificate reload refused") == 1, 10), tail(gateway.stderr)
    assert "does not match" in gateway.log()
    key.write_text("not a key\n")
    gateway.proc.send_signal(signal.SIGHUP)
    assert wait_until(lambda: gateway.log().count("TLS certificate reload refused") == 2, 10), tail(gateway.stderr)
    assert "not a key" not in gateway.log()
    assert subject_of_served(gateway.port, certs.ca) == "second"
    assert held.get("/healthz")[:2] == ("answer", 200)
    held.close()
    assert gateway.alive()


# --- gatehouse check ------------------------------------------------------------------------------

def test_check_reports_the_pair_at_its_line(cli, certs, tmp_path):
    chain, key = certs.leaf("localhost")
    expired_chain, expired_key = certs.dated("expired", datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=2))
    soon_chain, soon_key = certs.dated("soon", datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=5, hours=1))
    cases = {
        "expired": (tls_yaml(expired_chain, expired_key), 0, "3: 'tls.certificate_file': the certificate expired on "),
        "mismatch": (tls_yaml(chain, certs.lone_key("other")), 0, "4: 'tls.private_key_file': the private key does not match the certificate"),
        "unreadable": (tls_yaml(tmp_path / "nowhere.pem", key), 0, "3: 'tls.certificate_file': cannot read the certificate file"),
        "http": (tls_yaml(chain, key, extra=['public_url: "http://gw.example.test"']), 0, "5: 'public_url' must be https when 'tls' is set"),
    }
    for name, (text, _, expected) in cases.items():
        root = tmp_path / name
        config = write_config(root, text)
        done = cli(["check", "--config", str(config)], cwd=root)
        assert done.returncode == 1, (name, done.stderr)
        assert f"{config}:{expected}" in done.stderr, (name, done.stderr)
    root = tmp_path / "soon"
    config = write_config(root, tls_yaml(soon_chain, soon_key))
    done = cli(["check", "--config", str(config)], cwd=root)
    assert done.returncode == 0, done.stderr
    assert f"warning: {config}:3: the certificate expires on " in done.stderr
    assert "(in 5 days): renew it and send SIGHUP" in done.stderr


def test_serve_refuses_an_expired_pair(gatehouse_bin, certs, tmp_path):
    expired_chain, expired_key = certs.dated("old", datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1))
    root = tmp_path / "expired"
    config = write_config(root, tls_yaml(expired_chain, expired_key))
    done = subprocess.run([str(gatehouse_bin), "serve", "--config", str(config), "--listen", f"127.0.0.1:{free_port()}"],
                          cwd=root, env=clean_env(), capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert "the certificate expired on" in done.stderr


# --- hostile HTTP/2 -------------------------------------------------------------------------------

def test_hostile_http2_is_answered_without_crash(app):
    gateway, _ = app
    token = sign_in(gateway)
    auth = [("authorization", f"Bearer {token}")]

    # An oversized header list (over the 16 KiB limit, under the 80 KiB NIOHTTP2 decodes): that stream's 431,
    # never served (test_an_oversized_header_list_is_431_for_its_stream_alone).
    big = RawH2(gateway)
    outcome = big.get("/v1/api/echo", auth + [("x-big", "a" * 60000)])
    assert outcome[:2] == ("answer", 431), outcome
    big.close()
    assert gateway.alive()

    # An HPACK bomb: one large entry in the dynamic table, referenced hundreds of times (small on the wire).
    bomb = RawH2(gateway)
    outcome = bomb.get("/v1/api/echo", auth + [("x-bomb", "b" * 4000)] * 400)
    assert outcome[0] in ("reset", "closed") or outcome[1] == 431, outcome
    bomb.close()
    assert gateway.alive()

    # A stream reset in the middle of a relayed upload: the connection's other streams go on.
    conn = RawH2(gateway)
    stream = conn.headers("POST", "/v1/api/upload", auth, end=False)
    for _ in range(3):
        conn.conn.send_data(stream, b"x" * 10000)
    conn.flush()
    time.sleep(0.2)
    conn.conn.reset_stream(stream)
    conn.flush()
    assert conn.get("/v1/api/echo/after-reset", auth)[:2] == ("answer", 200)
    conn.close()
    assert gateway.alive()

    # Too many concurrent streams: those past the advertised limit are refused; the connection stays usable or
    # ends, and the gateway serves.
    many = RawH2(gateway)
    limit = many.conn.remote_settings.max_concurrent_streams
    assert limit == 100
    opened = []
    try:
        for _ in range(limit + 20):
            stream = many.conn.get_next_available_stream_id()
            # The client library enforces the limit itself: write the HEADERS frames past its count by hand.
            many.conn.remote_settings._settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = [10_000]
            many.conn.send_headers(stream, [(":method", "POST"), (":path", "/v1/api/upload"), (":scheme", "https"),
                                            (":authority", "localhost"), *auth], end_stream=False)
            opened.append(stream)
        many.flush()
        refused = 0
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and refused == 0:
            data = many.sock.recv(65536)
            if not data:
                break
            for event in many.conn.receive_data(data):
                if isinstance(event, (h2.events.StreamReset, h2.events.ConnectionTerminated)):
                    refused += 1
        assert refused > 0
    except (ssl.SSLError, ConnectionError, h2.exceptions.ProtocolError):
        pass
    many.close()
    assert gateway.alive()

    # A flood of SETTINGS and PING frames, never reading the acknowledgements: no unbounded memory.
    rss_before = resident_bytes(gateway.proc.pid)
    flood = RawH2(gateway)
    try:
        for i in range(30000):
            flood.conn.ping(i.to_bytes(8, "big"))
            if i % 3 == 0:
                flood.conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 65535 + (i % 7)})
            if i % 500 == 0:
                flood.sock.sendall(flood.conn.data_to_send())
        flood.flush()
    except (ssl.SSLError, ConnectionError, socket.timeout):
        pass  # the gateway ended the connection: what it should do
    flood.close()
    assert gateway.alive()
    assert gateway.proc.poll() is None
    assert resident_bytes(gateway.proc.pid) - rss_before < 64 * 1024 * 1024


def test_an_oversized_header_list_is_431_for_its_stream_alone(app):
    """A header list over `limits.max_header_bytes` (16 KiB here) is that stream's 431, with the problem document
    HTTP/1.1 gives the same request; the connection's other streams, before and after it, are answered. Past the
    bound NIOHTTP2 decodes (80 KiB) the connection ends, so a list that large is never held."""
    gateway, _ = app
    token = sign_in(gateway)
    auth = [("authorization", f"Bearer {token}")]
    big = [("x-big", "a" * 30000)]

    with gateway.client(http2=False) as client:
        over_http11 = client.get(gateway.url + "/v1/api/echo/big", headers=dict(auth + big))
    assert over_http11.status_code == 431, over_http11.text
    assert over_http11.headers["content-type"].startswith("application/problem+json")

    conn = RawH2(gateway)
    assert conn.conn.remote_settings.max_header_list_size == 80 * 1024
    # A stream left open across the refusal: it is answered once the refused one is.
    pending = conn.headers("POST", "/v1/api/upload", auth, end=False)
    expected = {k: v for k, v in over_http11.json().items() if k in ("type", "title", "status", "code", "detail")}
    assert expected["status"] == 431 and len(expected) == 5, over_http11.json()
    for path in ("/v1/api/echo/big", "/v1/something-else"):   # the relay's answer, then the router's
        outcome = conn.get(path, auth + big)
        assert outcome[:2] == ("answer", 431), outcome
        problem = json.loads(outcome[2])
        assert {k: problem.get(k) for k in expected} == expected, problem
    assert conn.get("/v1/api/echo/after", auth)[:2] == ("answer", 200)
    conn.conn.send_data(pending, b"x" * 1000, end_stream=True)
    conn.flush()
    outcome = conn.read_until(pending)
    assert outcome[:2] == ("answer", 200), outcome
    assert json.loads(outcome[2])["length"] == 1000
    conn.close()

    # Past the bound: the connection ends (GOAWAY or a close), and the gateway serves the next one.
    huge = RawH2(gateway)
    outcome = huge.get("/v1/api/echo", auth + [("x-huge", "h" * 100_000)])
    assert outcome[0] == "closed", outcome
    huge.close()
    again = RawH2(gateway)
    assert again.get("/v1/api/echo/again", auth)[:2] == ("answer", 200)
    again.close()


def resident_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def test_the_deploy_example_passes_check(cli, certs, tmp_path):
    """deploy/gatehouse.tls.yaml, with its paths made this test's, is a valid configuration."""
    from conftest import REPO

    chain, key = certs.leaf("deploy")
    made = tmp_path / "secrets"
    assert cli(["keys", "generate", "--id", "k1", "--directory", str(made)], cwd=tmp_path).returncode == 0
    root = tmp_path / "etc"
    text = (REPO / "deploy" / "gatehouse.tls.yaml").read_text()
    for old, new in {
        "/var/lib/gatehouse/tls/fullchain.pem": chain, "/var/lib/gatehouse/tls/privkey.pem": key,
        "/run/credentials/gatehouse.service/sealing-k1.key": made / "sealing-k1.key",
        "/run/credentials/gatehouse.service/signing-k1.pem": made / "signing-k1.pem",
        "/etc/gatehouse/Providers": root / "Providers", "/var/lib/gatehouse/gatehouse.sqlite3": tmp_path / "gatehouse.sqlite3",
    }.items():
        assert old in text
        text = text.replace(old, str(new))
    config = write_config(root, text)
    done = cli(["check", "--config", str(config)], cwd=root)
    assert done.returncode == 0, done.stderr


# --- streams, idle connections, shutdown, WebSocket -------------------------------------------------

def start_download(gateway: TLSGateway) -> tuple[RawH2, int, list[tuple[str, str]]]:
    """A signed-in HTTP/2 connection whose own window is wide open, so that only a stream's window (65,535 bytes)
    holds an answer back, and a stream asking for `/v1/api/download`: (connection, stream, authorization)."""
    token = sign_in(gateway)
    auth = [("authorization", f"Bearer {token}")]
    conn = RawH2(gateway)
    conn.conn.increment_flow_control_window(64 * 1024 * 1024)
    conn.flush()
    return conn, conn.headers("GET", "/v1/api/download", auth), auth


def test_a_stalled_stream_does_not_stall_its_connection(app):
    """Back-pressure is per stream: a download the client stops reading (its stream window closed) waits,
    while another stream of the same connection is answered; then the download resumes, whole."""
    gateway, _ = app
    conn, stalled, auth = start_download(gateway)
    received, digest = 0, hashlib.sha256()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and received < 65535:
        for event in conn.conn.receive_data(conn.sock.recv(65536)):
            if isinstance(event, h2.events.DataReceived) and event.stream_id == stalled:
                received += len(event.data)
                digest.update(event.data)
        conn.flush()
    # Stream window (65535) full, and nothing acknowledged: the download waits there.
    assert received <= 65535
    other = conn.headers("GET", "/v1/api/echo/beside", auth)
    status, body, ended = None, b"", False
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not ended:
        for event in conn.conn.receive_data(conn.sock.recv(65536)):
            if isinstance(event, h2.events.ResponseReceived) and event.stream_id == other:
                status = int(dict(event.headers)[":status"])
            elif isinstance(event, h2.events.DataReceived):
                if event.stream_id == other:
                    body += event.data
                else:
                    received += len(event.data)
                    digest.update(event.data)
            elif isinstance(event, h2.events.StreamEnded) and event.stream_id == other:
                ended = True
        conn.flush()
    assert ended and status == 200 and json.loads(body)["target"] == "/base/echo/beside"
    assert received <= 65535
    # Now read it all.
    finished = False
    deadline = time.monotonic() + 30
    conn.conn.acknowledge_received_data(received, stalled)
    conn.flush()
    while time.monotonic() < deadline and not finished:
        for event in conn.conn.receive_data(conn.sock.recv(65536)):
            if isinstance(event, h2.events.DataReceived) and event.stream_id == stalled:
                received += len(event.data)
                digest.update(event.data)
                conn.conn.acknowledge_received_data(event.flow_controlled_length, stalled)
            elif isinstance(event, h2.events.StreamEnded) and event.stream_id == stalled:
                finished = True
        conn.flush()
    assert finished and (received, digest.hexdigest()) == (DOWNLOAD_BYTES, DOWNLOAD_SHA)
    conn.close()


def test_a_stream_whose_client_takes_nothing_is_reset_after_the_send_timeout(start, certs, tmp_path):
    """`limits.client_send_timeout_seconds`: a download whose client never opens the stream's window again (a
    slow-read attack: the stream holds a backend connection and buffers) is reset once the timeout has passed, not
    before; the connection's other streams go on."""
    backend = Backend()
    chain, key = certs.leaf("localhost")
    root = tmp_path / "send"
    write_capture_provider(root, backend.url)
    gateway = start(tls_yaml(chain, key, backend, extra=["limits: {client_send_timeout_seconds: 1}"]), root=root)
    try:
        conn, stalled, auth = start_download(gateway)
        started = time.monotonic()
        reset, code, received = None, None, 0
        while time.monotonic() - started < 15 and reset is None:
            for event in conn.conn.receive_data(conn.sock.recv(65536)):
                if isinstance(event, h2.events.DataReceived) and event.stream_id == stalled:
                    received += len(event.data)
                elif isinstance(event, h2.events.StreamReset) and event.stream_id == stalled:
                    reset, code = time.monotonic() - started, event.error_code
                elif isinstance(event, h2.events.ConnectionTerminated):
                    pytest.fail("the connection ended, not the stream")
            conn.flush()
        assert reset is not None, "the stream whose client took nothing was never reset"
        assert reset >= 0.9 and received <= 65535 and code == 8  # CANCEL
        outcome = conn.get("/v1/api/echo/after", auth)
        assert outcome[:2] == ("answer", 200), outcome
        conn.close()
    finally:
        backend.close()
    assert gateway.alive()


def test_idle_http2_connection_is_closed_and_shutdown_is_graceful(start, certs):
    chain, key = certs.leaf("localhost")
    gateway = start(tls_yaml(chain, key, extra=["limits: {client_idle_timeout_seconds: 1}"]))
    idle = RawH2(gateway)
    assert idle.get("/healthz")[:2] == ("answer", 200)
    # No stream for a second: the connection ends (GOAWAY or the socket's end).
    assert idle.read_until(-1, timeout=5)[0] == "closed"
    idle.close()
    # The same for an HTTPS/1.1 connection that sends nothing after its handshake, and for one that never
    # completes a handshake.
    context = gateway.context()
    context.set_alpn_protocols(["http/1.1"])
    for handshake in (True, False):
        raw_socket = socket.create_connection(("127.0.0.1", gateway.port), timeout=5)
        quiet = context.wrap_socket(raw_socket, server_hostname="localhost") if handshake else raw_socket
        started = time.monotonic()
        try:
            assert quiet.recv(1024) == b""
        except (ssl.SSLError, ConnectionError):
            pass
        assert time.monotonic() - started < 4
        quiet.close()
    # SIGTERM with an open HTTP/2 connection: GOAWAY, and the gateway exits without waiting on it.
    held = RawH2(gateway)
    assert held.get("/healthz")[:2] == ("answer", 200)
    gateway.proc.send_signal(signal.SIGTERM)
    assert held.read_until(-1, timeout=8)[0] == "closed"
    gateway.proc.wait(timeout=10)
    held.close()


def test_websocket_over_tls_stays_http11(start, certs, tmp_path):
    from websockets.sync.client import connect

    from test_websocket import Backend as WebSocketBackend

    chain, key = certs.leaf("localhost")
    backend, probe = WebSocketBackend(), Backend()
    root = tmp_path / "ws"
    write_capture_provider(root, probe.url)
    gateway = start(tls_yaml(chain, key, extra=["backend:", f"  url: {q(f'http://127.0.0.1:{backend.port}/base')}"]), root=root)
    token = sign_in(gateway)
    try:
        with connect(f"wss://127.0.0.1:{gateway.port}/v1/api/ws/chat", ssl=gateway.context(),
                     additional_headers={"Authorization": f"Bearer {token}"}) as ws:
            assert ws.recv(timeout=10) == "hello"
            ws.send("over tls")
            assert ws.recv(timeout=10) == "over tls"
            blob = os.urandom(512 * 1024)
            ws.send(blob)
            assert ws.recv(timeout=10) == blob
        seen = backend.last()
        assert seen["path"] == "/base/ws/chat"
        assert seen["headers"]["x-gatehouse-subject"] == "user-1"
    finally:
        backend.server.shutdown()
        probe.close()
    assert gateway.alive()


def test_split_cookies_and_head_limits_behind_tls(app):
    """HTTP/2 may split `cookie` into several fields: they reach the one decision joined. Over HTTPS/1.1 a
    request line over the URL limit is still 414 (the watcher counts the plain bytes, not the ciphertext)."""
    gateway, _ = app
    token = sign_in(gateway)
    conn = RawH2(gateway)
    outcome = conn.get("/v1/api/echo/cookies", [("cookie", "theme=dark"), ("cookie", f"__Host-gatehouse_session={token}"), ("x-csrf", "1")])
    assert outcome[:2] == ("answer", 200), outcome
    assert json.loads(outcome[2])["subject"] == "user-1"
    conn.close()
    context = gateway.context()
    context.set_alpn_protocols(["http/1.1"])
    with context.wrap_socket(socket.create_connection(("127.0.0.1", gateway.port), timeout=10), server_hostname="localhost") as tls:
        tls.sendall(b"GET /v1/api/" + b"a" * 20000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
        answer = b""
        while b"\r\n\r\n" not in answer:
            data = tls.recv(65536)
            if not data:
                break
            answer += data
    assert answer.startswith(b"HTTP/1.1 414"), answer[:200]
    assert gateway.alive()
