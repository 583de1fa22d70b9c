"""`gatehouse login | whoami | api | logout`: the binary as a command-line client of a running `gatehouse demo`.

`login` runs the RFC 8252 loopback flow for real: the test reads the URL it prints, signs in at the demo's
stand-in OAuth 2.0 server's form as a browser would (requests), follows the last redirect to the client's
loopback listener, and the client redeems the code at `POST /v1/session`.

To see what went over the wire (the 201 grant, the `Authorization` and `DPoP` headers), the client reaches
the gateway through a recording HTTP proxy (`http_proxy`): the client tunnels through it with CONNECT, the
proxy reads the plain HTTP requests inside the tunnel, records them and their answers, and forwards them to the
gateway unchanged, so the URL the gateway sees (and a proof's `htu`) is the gateway's own. Only
`test_login_retries_the_exchange_once_with_the_nonce_the_gateway_asks_for` has the proxy answer one request
itself: the `use_dpop_nonce` challenge that a gateway requiring DPoP nonces sends.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import queue
import re
import secrets
import stat
import subprocess
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from conftest import clean_env
from gatehouse_testkit import free_port, require_module, running_demo, stop_process

STARTUP_TIMEOUT = float(os.environ.get("CLI_STARTUP_TIMEOUT", "60"))
CLIENT_TIMEOUT = 60  # seconds for one client command
HTTP_TIMEOUT = 30
# Variables of the developer's shell that would change where the client goes or what it opens.
CLIENT_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY",
               "BROWSER", "XDG_CONFIG_HOME")


@pytest.fixture(scope="module")
def demo() -> str:
    """The base URL of a `gatehouse demo` for this module (its redirect provider is `demo`)."""
    with running_demo("gatehouse-cli-client-", STARTUP_TIMEOUT) as (base, _log):
        yield base


@pytest.fixture(scope="module")
def crypto():
    """`cryptography`'s EC primitives, to check the client's ES256 proofs and to sign the test's own."""
    require_module("cryptography", "pip install -r requirements-test.txt")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature
    return type("Crypto", (), dict(hashes=hashes, serialization=serialization, ec=ec,
                                   decode_dss_signature=staticmethod(decode_dss_signature),
                                   encode_dss_signature=staticmethod(encode_dss_signature)))


@pytest.fixture
def binary(gatehouse_bin) -> str:
    return str(gatehouse_bin)


# --- encodings and DPoP ---------------------------------------------------------------------------

def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def ath(token: str) -> str:
    return b64url(hashlib.sha256(token.encode("ascii")).digest())


def public_jwk(crypto, key_pem: str) -> dict:
    key = crypto.serialization.load_pem_private_key(key_pem.encode(), password=None)
    numbers = key.public_key().public_numbers()
    return {"kty": "EC", "crv": "P-256", "x": b64url(numbers.x.to_bytes(32, "big")), "y": b64url(numbers.y.to_bytes(32, "big"))}


ANY = object()  # check_proof(nonce=ANY): the nonce is not checked (the gateway may have sent newer ones)


def check_proof(crypto, proof: str, method: str, url: str, *, token: str | None, nonce: str | None | object = None,
                key_pem: str | None = None) -> dict:
    """Checks a DPoP proof (RFC 9449 §4.2) the client sent, signature included; returns its claims."""
    encoded_header, encoded_claims, encoded_signature = proof.split(".")
    header = json.loads(b64url_decode(encoded_header))
    claims = json.loads(b64url_decode(encoded_claims))
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256", header
    jwk = header["jwk"]
    assert set(jwk) == {"kty", "crv", "x", "y"} and jwk["kty"] == "EC" and jwk["crv"] == "P-256", jwk  # no private part
    signature = b64url_decode(encoded_signature)
    assert len(signature) == 64  # JOSE R || S
    public_key = crypto.ec.EllipticCurvePublicNumbers(
        int.from_bytes(b64url_decode(jwk["x"]), "big"), int.from_bytes(b64url_decode(jwk["y"]), "big"), crypto.ec.SECP256R1()
    ).public_key()
    der = crypto.encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    public_key.verify(der, f"{encoded_header}.{encoded_claims}".encode(), crypto.ec.ECDSA(crypto.hashes.SHA256()))
    assert claims["htm"] == method and claims["htu"] == url, claims
    assert isinstance(claims["iat"], int) and abs(claims["iat"] - time.time()) < 120, claims
    assert len(b64url_decode(claims["jti"])) >= 16, claims
    if token is None:
        assert "ath" not in claims, claims
    else:
        assert claims["ath"] == ath(token), claims
    if nonce is ANY:
        pass
    elif nonce is None:
        assert "nonce" not in claims, claims
    else:
        assert claims["nonce"] == nonce, claims
    if key_pem is not None:
        assert jwk == public_jwk(crypto, key_pem), "the proof is not signed by the stored key"
    return claims


def make_proof(crypto, key_pem: str, method: str, url: str, token: str, nonce: str | None = None) -> str:
    """A DPoP proof of the test's own, with the key the client stored (to use a DPoP-bound token directly)."""
    key = crypto.serialization.load_pem_private_key(key_pem.encode(), password=None)
    header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": public_jwk(crypto, key_pem)}
    claims = {"jti": secrets.token_urlsafe(16), "htm": method, "htu": url, "iat": int(time.time()), "ath": ath(token)}
    if nonce is not None:
        claims["nonce"] = nonce
    signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
    r, s = crypto.decode_dss_signature(key.sign(signing_input.encode(), crypto.ec.ECDSA(crypto.hashes.SHA256())))
    return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def session_get(crypto, gateway: str, stored: dict) -> requests.Response:
    """`GET /v1/session` with a stored session, presented as the grant said (with a proof when DPoP-bound, and
    once more with the gateway's nonce when it asks for one)."""
    url = gateway + "/v1/session"
    nonce = stored.get("dpop_nonce")
    for _ in range(2):
        headers = {"Authorization": f"{stored['token_type']} {stored['session_token']}"}
        if stored["token_type"] == "DPoP":
            headers["DPoP"] = make_proof(crypto, stored["dpop_private_key"], "GET", url, stored["session_token"], nonce)
        answer = requests.get(url, headers=headers, timeout=HTTP_TIMEOUT)
        asks_nonce = answer.status_code == 401 and "DPoP-Nonce" in answer.headers and \
            answer.headers.get("Content-Type", "").startswith("application/problem+json") and answer.json().get("code") == "use_dpop_nonce"
        if not asks_nonce:
            break
        nonce = answer.headers["DPoP-Nonce"]
    return answer


# --- the recording proxy --------------------------------------------------------------------------

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
              "proxy-authorization", "content-length", "host"}


@dataclass
class Exchange:
    method: str
    path: str
    request_headers: dict[str, str]
    request_body: bytes
    status: int = 0
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: bytes = b""
    forwarded: bool = True

    def json(self):
        return json.loads(self.response_body)


class RecordingProxy:
    """An HTTP proxy for `http_proxy`: after `CONNECT host:port` it serves the plain HTTP/1.1 requests that come
    through the tunnel, forwards each to host:port unchanged and records both sides in `exchanges`.

    With `challenge_nonce` set, the first `POST /v1/session` is not forwarded but answered as a gateway that
    requires DPoP nonces answers: 400 `use_dpop_nonce` with `DPoP-Nonce: <challenge_nonce>`."""

    def __init__(self, challenge_nonce: str | None = None):
        self.exchanges: list[Exchange] = []
        self.connects: list[str] = []
        self.challenge_nonce = challenge_nonce
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            tunnel: str | None = None

            def do_CONNECT(self):
                self.tunnel = self.path
                with proxy._lock:
                    proxy.connects.append(self.path)
                self.send_response(200, "Connection established")
                self.end_headers()

            def relay(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if self.tunnel is None:  # not through CONNECT: the client must tunnel
                    self.answer(400, {"Content-Type": "text/plain"}, b"CONNECT first\n")
                    return
                exchange = Exchange(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                if proxy._challenges(exchange):
                    exchange.forwarded = False
                    exchange.status = 400
                    exchange.response_headers = {"content-type": "application/problem+json", "dpop-nonce": proxy.challenge_nonce}
                    exchange.response_body = json.dumps({"type": "about:blank", "title": "Bad Request", "status": 400,
                                                         "code": "use_dpop_nonce", "detail": "Use the DPoP nonce."}).encode()
                else:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                    headers.setdefault("Accept-Encoding", "identity")
                    upstream = requests.request(self.command, f"http://{self.tunnel}{self.path}", headers=headers,
                                                data=body or None, allow_redirects=False, timeout=HTTP_TIMEOUT)
                    exchange.status = upstream.status_code
                    exchange.response_headers = {k.lower(): v for k, v in upstream.headers.items()}
                    exchange.response_body = upstream.content
                with proxy._lock:
                    proxy.exchanges.append(exchange)
                skip = HOP_BY_HOP | {"content-encoding", "date", "server"}
                self.answer(exchange.status, {k: v for k, v in exchange.response_headers.items() if k not in skip},
                            exchange.response_body)

            def answer(self, status: int, headers: dict[str, str], body: bytes):
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = relay

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _challenges(self, exchange: Exchange) -> bool:
        if self.challenge_nonce is None or (exchange.method, exchange.path) != ("POST", "/v1/session"):
            return False
        with self._lock:
            return not any((e.method, e.path) == ("POST", "/v1/session") for e in self.exchanges)

    def requests_to(self, method: str, path: str) -> list[Exchange]:
        with self._lock:
            return [e for e in self.exchanges if e.method == method and e.path == path]

    def last(self, method: str, path: str) -> Exchange:
        found = self.requests_to(method, path)
        assert found, f"no {method} {path} went through the proxy: {[(e.method, e.path) for e in self.exchanges]}"
        return found[-1]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy():
    recording = RecordingProxy()
    yield recording
    recording.close()


# --- running the client --------------------------------------------------------------------------

def client_env(home: Path, *, xdg: bool = True, proxy: RecordingProxy | None = None, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The client's environment: its own HOME (and XDG_CONFIG_HOME), nothing of the developer's proxies or browser."""
    env = clean_env()
    for name in CLIENT_VARS:
        env.pop(name, None)
    env["HOME"] = str(home)
    if xdg:
        env["XDG_CONFIG_HOME"] = str(home / "xdg-config")
    if proxy is not None:
        env["http_proxy"] = proxy.url
    env.update(extra or {})
    return env


def credentials_path(home: Path, *, xdg: bool = True) -> Path:
    return (home / "xdg-config" if xdg else home / ".config") / "gatehouse" / "credentials.json"


def run_client(binary: str, env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([binary, *args], env=env, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=CLIENT_TIMEOUT)


class Login:
    """`gatehouse login …` running in the background; its stdout is read line by line."""

    def __init__(self, binary: str, env: dict[str, str], *args: str):
        self.proc = subprocess.Popen([binary, "login", *args], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stdout: list[str] = []
        self.stderr = ""
        self._readers = [threading.Thread(target=self._read_stdout, daemon=True), threading.Thread(target=self._read_stderr, daemon=True)]
        for reader in self._readers:
            reader.start()

    def _read_stdout(self):
        for line in self.proc.stdout:
            self.stdout.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self):
        self.stderr = self.proc.stderr.read()

    def authorization_url(self, timeout: float = 30) -> str:
        """The URL of the `Open this URL …` line (its last word)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no 'Open this URL' line after {timeout}s; stdout so far: {''.join(self.stdout)!r}")
            if line is None:
                self.finish()
                pytest.fail(f"login exited ({self.proc.returncode}) before printing the URL:\n{self.stderr}")
            if line.startswith("Open this URL"):
                return line.split()[-1]

    def finish(self, timeout: float = CLIENT_TIMEOUT) -> tuple[int, str, str]:
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_process(self.proc)
            pytest.fail("login did not exit")
        for reader in self._readers:
            reader.join(timeout=10)
        return self.proc.returncode, "".join(self.stdout), self.stderr

    def stop(self):
        stop_process(self.proc)


@pytest.fixture
def logins():
    """Logins this test started; any still running is stopped at teardown."""
    started: list[Login] = []
    yield started
    for login in started:
        login.stop()


def start_login(logins: list[Login], binary: str, env: dict[str, str], *args: str) -> Login:
    login = Login(binary, env, *args)
    logins.append(login)
    return login


def sign_in_at_the_form(url: str, user: str = "alice", password: str = "alice-password") -> tuple[requests.Session, str]:
    """Does what the browser does with the printed URL, up to the redirect to the client's loopback listener:
    returns the browser and that last Location (not followed yet)."""
    browser = requests.Session()
    start = browser.get(url, allow_redirects=False, timeout=HTTP_TIMEOUT)
    assert start.status_code == 302, start.text
    authorize = urlsplit(start.headers["Location"])
    form = {key: values[0] for key, values in parse_qs(authorize.query).items()}
    form.update(username=user, password=password)
    signed_in = browser.post(f"{authorize.scheme}://{authorize.netloc}/authorize", data=form, allow_redirects=False, timeout=HTTP_TIMEOUT)
    assert signed_in.status_code in (302, 303), signed_in.text
    callback = browser.get(signed_in.headers["Location"], allow_redirects=False, timeout=HTTP_TIMEOUT)
    assert callback.status_code == 302, callback.text
    return browser, callback.headers["Location"]


def check_authorization_url(url: str, gateway: str, provider: str = "demo") -> dict[str, str]:
    assert url.startswith(f"{gateway}/v1/auth/{provider}/login?"), url
    query = {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/callback", query["redirect_uri"]), query
    assert query["code_challenge_method"] == "S256"
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", query["code_challenge"]), query
    assert len(query["state"]) >= 16
    return query


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def stored_entries(path: Path) -> dict:
    return json.loads(path.read_text())["gateways"]


# --- the tests ---------------------------------------------------------------------------------------

def test_login_then_whoami_api_and_logout(binary, demo, crypto, proxy, logins, tmp_path):
    home = tmp_path / "home"
    opened = tmp_path / "opened-url"
    browser_script = tmp_path / "browser.sh"
    browser_script.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > {opened}\n")
    browser_script.chmod(0o755)
    env = client_env(home, proxy=proxy, extra={"BROWSER": str(browser_script)})

    # The gateway given with a trailing slash: stored normalized.
    login = start_login(logins, binary, env, "--gateway", demo + "/", "--provider", "demo", "--no-browser", "--timeout", "120")
    url = login.authorization_url()
    query = check_authorization_url(url, demo)
    browser, back = sign_in_at_the_form(url)
    assert back.startswith(query["redirect_uri"] + "?"), back
    assert parse_qs(urlsplit(back).query)["state"] == [query["state"]]
    exchanged_at = time.time()
    page = browser.get(back, timeout=HTTP_TIMEOUT)  # the client redeems the code, then answers the page
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html"), page.text
    assert "Signed in" in page.text and "close this tab" in page.text
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"] and page.headers["X-Frame-Options"] == "DENY"
    code, out, err = login.finish()
    assert code == 0, err
    assert re.search(r"^Signed in as alice \([^)]*@[^)]*\) with demo$", out, re.M), out
    assert not opened.exists(), "--no-browser opened a browser"
    assert proxy.connects and set(proxy.connects) == {demo.removeprefix("http://")}

    # The credentials: 0700 directory, 0600 file, one entry keyed by the normalized URL, what the 201 said.
    credentials = credentials_path(home)
    assert mode(credentials.parent) == 0o700
    assert mode(credentials) == 0o600
    assert [p.name for p in credentials.parent.iterdir()] == ["credentials.json"]  # no temp file left
    entries = stored_entries(credentials)
    assert list(entries) == [demo]
    stored = entries[demo]
    exchange = proxy.last("POST", "/v1/session")
    assert exchange.status == 201, exchange.response_body
    grant = exchange.json()
    assert stored["token_type"] == grant["token_type"]
    assert stored["session_token"] == grant["session_token"]
    assert stored["gateway"] == demo and stored["provider"] == "demo"
    expires_at = datetime.fromisoformat(stored["expires_at"]).timestamp()
    assert abs(expires_at - (exchanged_at + grant["expires_in"])) < 60, (stored["expires_at"], grant["expires_in"])
    assert "BEGIN PRIVATE KEY" in stored["dpop_private_key"]
    # The exchange: the JSON grant request, with a proof of the stored key and no `ath`.
    body = json.loads(exchange.request_body)
    assert body == {"grant_type": "authorization_code", "code": body["code"], "code_verifier": body["code_verifier"],
                    "redirect_uri": query["redirect_uri"]}
    assert b64url(hashlib.sha256(body["code_verifier"].encode()).digest()) == query["code_challenge"]
    assert 43 <= len(body["code_verifier"]) <= 128
    check_proof(crypto, exchange.request_headers["dpop"], "POST", demo + "/v1/session", token=None, nonce=ANY,
                key_pem=stored["dpop_private_key"])
    assert "authorization" not in exchange.request_headers
    assert stored["token_type"] == "DPoP"  # the gateway bound the session to the client's DPoP key
    assert session_get(crypto, demo, stored).status_code == 200

    def check_session_request(exchange: Exchange, method: str, url: str):
        assert exchange.request_headers["authorization"] == f"{stored['token_type']} {stored['session_token']}"
        if stored["token_type"] == "DPoP":
            check_proof(crypto, exchange.request_headers["dpop"], method, url, token=stored["session_token"],
                        nonce=ANY, key_pem=stored["dpop_private_key"])
        else:
            assert "dpop" not in exchange.request_headers  # a Bearer session carries no proof

    # whoami: the session view, pretty JSON.
    who = run_client(binary, env, "whoami")
    assert who.returncode == 0, who.stderr
    view = json.loads(who.stdout)
    assert view["subject"] == "alice" and view["provider"] == "demo" and view["id"] == grant["session"]["id"]
    assert who.stdout.startswith("{\n")
    assert "[\n\n" not in who.stdout and "{\n\n" not in who.stdout, who.stdout  # an empty list reads `[]`
    check_session_request(proxy.last("GET", "/v1/session"), "GET", demo + "/v1/session")
    assert run_client(binary, env, "whoami", "--gateway", demo + "/").returncode == 0

    # api GET: the demo backend echoes what the gateway forwarded, as the signed-in user.
    got = run_client(binary, env, "api", "/hello?x=1&y=two", "-H", "X-Trace: cli-test")
    assert got.returncode == 0, got.stderr
    echo = json.loads(got.stdout)
    assert echo["method"] == "GET" and echo["path"] == "/hello" and echo["query"] == "x=1&y=two", echo
    assert echo["headers"]["x-gatehouse-subject"] == "alice" and echo["headers"]["x-gatehouse-provider"] == "demo", echo
    assert echo["headers"]["x-trace"] == "cli-test"
    assert "authorization" not in echo["headers"]
    check_session_request(proxy.last("GET", "/v1/api/hello?x=1&y=two"), "GET", demo + "/v1/api/hello")

    # api with -d: POST by default, the body as given (JSON gets a JSON content type).
    posted = run_client(binary, env, "api", "-d", '{"a":1}', "echo")
    assert posted.returncode == 0, posted.stderr
    echo = json.loads(posted.stdout)
    assert echo["method"] == "POST" and echo["path"] == "/echo", echo
    assert echo["body_bytes"] == 7 and echo["body_sha256"] == hashlib.sha256(b'{"a":1}').hexdigest()
    assert echo["headers"]["content-type"] == "application/json"
    check_session_request(proxy.last("POST", "/v1/api/echo"), "POST", demo + "/v1/api/echo")

    # -X, -d @file, -d - (stdin).
    payload = tmp_path / "payload.bin"
    payload.write_bytes(b"line one\nline two\n")
    put = run_client(binary, env, "api", "-X", "put", "-d", f"@{payload}", "-H", "Content-Type: text/plain", "/files/1")
    assert put.returncode == 0, put.stderr
    echo = json.loads(put.stdout)
    assert echo["method"] == "PUT" and echo["body_sha256"] == hashlib.sha256(payload.read_bytes()).hexdigest()
    assert echo["headers"]["content-type"] == "text/plain"
    piped = run_client(binary, env, "api", "-X", "PATCH", "-d", "-", "/files/2", stdin="from stdin")
    assert piped.returncode == 0, piped.stderr
    echo = json.loads(piped.stdout)
    assert echo["method"] == "PATCH" and echo["body_sha256"] == hashlib.sha256(b"from stdin").hexdigest()

    # A 4xx answer: its body on stdout, `error: HTTP 404` on stderr, exit 1.
    missing = run_client(binary, env, "api", "/status/404")
    assert missing.returncode == 1, (missing.stdout, missing.stderr)
    assert json.loads(missing.stdout) == {"status": 404}
    assert missing.stderr.startswith("error: HTTP 404")

    # logout: DELETE /v1/session, the entry removed; the token no longer works.
    out = run_client(binary, env, "logout")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"Signed out of {demo}"
    deleted = proxy.last("DELETE", "/v1/session")
    assert deleted.status == 200, deleted.response_body
    check_session_request(deleted, "DELETE", demo + "/v1/session")
    assert stored_entries(credentials) == {}
    assert mode(credentials) == 0o600
    after = run_client(binary, env, "whoami")
    assert after.returncode != 0
    assert "not signed in" in after.stderr and "gatehouse login --gateway" in after.stderr
    gone = session_get(crypto, demo, stored)
    assert gone.status_code == 401, gone.text
    assert gone.json()["code"] == "invalid_session"


def test_the_browser_inherits_no_socket_of_the_login(binary, demo, logins, tmp_path):
    """The browser `gatehouse login` starts must not hold the listener waiting for the sign-in to come back (nor any
    other socket of the command): a browser lives on after the command, and would keep the port taken, a late sign-in
    waiting on a socket nobody serves. SwiftNIO's sockets are not close-on-exec."""
    home = tmp_path / "home"
    descriptors = tmp_path / "browser-descriptors"
    browser_script = tmp_path / "browser.sh"
    browser_script.write_text(
        f"#!/bin/sh\nls -l /proc/$$/fd > {descriptors}.part\nmv {descriptors}.part {descriptors}\n")
    browser_script.chmod(0o755)
    env = client_env(home, extra={"BROWSER": str(browser_script)})
    login = start_login(logins, binary, env, "--gateway", demo, "--provider", "demo", "--timeout", "60")
    query = check_authorization_url(login.authorization_url(), demo)
    deadline = time.monotonic() + 10
    while not descriptors.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    held = dict(re.findall(r" (\d+) -> (.*)$", descriptors.read_text(), re.M))
    assert held.get("0") == "/dev/null" and held.get("2") == "/dev/null", held
    assert not {fd: target for fd, target in held.items() if target.startswith(("socket:", "pipe:", "anon_inode:"))}, held
    # The listener stays the command's alone, and serves the browser's return (here, a sign-in denied).
    requests.get(query["redirect_uri"] + "?error=access_denied&state=" + query["state"], timeout=HTTP_TIMEOUT)
    code, _, err = login.finish()
    assert code != 0 and "sign-in failed: access_denied" in err, err


def test_login_retries_the_exchange_once_with_the_nonce_the_gateway_asks_for(binary, demo, crypto, logins, tmp_path):
    """The recording proxy answers the first `POST /v1/session` with 400 `use_dpop_nonce` and a nonce (as a
    gateway that requires DPoP nonces does); the client retries once with a fresh proof carrying it. Also: the
    default credentials location (~/.config/gatehouse, no XDG_CONFIG_HOME) and `$BROWSER`."""
    challenging = RecordingProxy(challenge_nonce="nonce-" + secrets.token_urlsafe(12))
    try:
        home = tmp_path / "home"
        opened = tmp_path / "opened-url"
        browser_script = tmp_path / "browser.sh"
        browser_script.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > {opened}\n")
        browser_script.chmod(0o755)
        env = client_env(home, xdg=False, proxy=challenging, extra={"BROWSER": str(browser_script)})
        login = start_login(logins, binary, env, "--gateway", demo, "--provider", "demo")
        url = login.authorization_url()
        check_authorization_url(url, demo)
        deadline = time.monotonic() + 10
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert opened.read_text() == url, "$BROWSER was not given the URL"
        browser, back = sign_in_at_the_form(url)
        assert browser.get(back, timeout=HTTP_TIMEOUT).status_code == 200
        code, out, err = login.finish()
        assert code == 0, err
        assert "Signed in as alice" in out

        first, second = challenging.requests_to("POST", "/v1/session")
        assert not first.forwarded and second.forwarded and second.status == 201, second.response_body
        assert first.request_body == second.request_body
        credentials = credentials_path(home, xdg=False)
        assert mode(credentials.parent) == 0o700 and mode(credentials) == 0o600
        stored = stored_entries(credentials)[demo]
        url = demo + "/v1/session"
        before = check_proof(crypto, first.request_headers["dpop"], "POST", url, token=None, key_pem=stored["dpop_private_key"])
        after = check_proof(crypto, second.request_headers["dpop"], "POST", url, token=None, nonce=challenging.challenge_nonce,
                            key_pem=stored["dpop_private_key"])
        assert before["jti"] != after["jti"]
        # The nonce is kept for the next proof (the gateway sent no newer one).
        assert stored["dpop_nonce"] == second.response_headers.get("dpop-nonce", challenging.challenge_nonce)
        assert stored["token_type"] == second.json()["token_type"]
    finally:
        challenging.close()


@pytest.fixture(scope="module")
def other_demo() -> str:
    """A second gateway (each gateway checks that a DPoP proof names its own public URL)."""
    with running_demo("gatehouse-cli-client-other-", STARTUP_TIMEOUT) as (base, _log):
        yield base


def test_several_gateways_are_told_apart_by_gateway(binary, demo, other_demo, logins, tmp_path):
    """Two entries (two gateways): without --gateway the commands list them; with it, each is used."""
    home = tmp_path / "home"
    env = client_env(home)
    other = other_demo
    for gateway in (demo, other):
        login = start_login(logins, binary, env, "--gateway", gateway, "--provider", "demo", "--no-browser")
        url = login.authorization_url()
        assert url.startswith(gateway + "/v1/auth/demo/login?")
        browser, back = sign_in_at_the_form(url)
        assert browser.get(back, timeout=HTTP_TIMEOUT).status_code == 200
        code, _, err = login.finish()
        assert code == 0, err
    assert sorted(stored_entries(credentials_path(home))) == sorted([demo, other])

    ambiguous = run_client(binary, env, "whoami")
    assert ambiguous.returncode != 0
    assert "--gateway" in ambiguous.stderr and demo in ambiguous.stderr and other in ambiguous.stderr
    assert run_client(binary, env, "api", "/x").returncode != 0
    chosen = run_client(binary, env, "whoami", "--gateway", other)
    assert chosen.returncode == 0, chosen.stderr
    assert json.loads(chosen.stdout)["subject"] == "alice"

    out = run_client(binary, env, "logout", "--gateway", other)
    assert out.returncode == 0 and out.stdout.strip() == f"Signed out of {other}", out.stderr
    assert list(stored_entries(credentials_path(home))) == [demo]
    assert run_client(binary, env, "whoami").returncode == 0  # one left: no --gateway needed
    unknown = run_client(binary, env, "whoami", "--gateway", "http://127.0.0.1:9")
    assert unknown.returncode != 0 and "not signed in to http://127.0.0.1:9" in unknown.stderr


def test_a_callback_with_a_wrong_state_fails_the_login(binary, demo, logins, tmp_path):
    home = tmp_path / "home"
    login = start_login(logins, binary, client_env(home), "--gateway", demo, "--provider", "demo", "--no-browser")
    redirect_uri = check_authorization_url(login.authorization_url(), demo)["redirect_uri"]
    # Other paths are 404 and do not end the wait.
    stray = requests.get(redirect_uri.replace("/callback", "/favicon.ico"), timeout=HTTP_TIMEOUT)
    assert stray.status_code == 404
    assert login.proc.poll() is None
    page = requests.get(redirect_uri, params={"code": "stolen-code", "state": "not-the-state"}, timeout=HTTP_TIMEOUT)
    assert page.status_code == 400 and "state" in page.text, page.text
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"] and page.headers["X-Frame-Options"] == "DENY"
    code, out, err = login.finish()
    assert code != 0
    assert err.startswith("error: ") and "state" in err, err
    assert "Signed in" not in out
    assert not credentials_path(home).exists()


def test_an_error_from_the_provider_fails_the_login(binary, demo, logins, tmp_path):
    home = tmp_path / "home"
    login = start_login(logins, binary, client_env(home), "--gateway", demo, "--provider", "demo", "--no-browser")
    query = check_authorization_url(login.authorization_url(), demo)
    page = requests.get(query["redirect_uri"], params={"error": "access_denied", "error_description": "The user said no",
                                                       "state": query["state"]}, timeout=HTTP_TIMEOUT)
    assert page.status_code == 400 and "access_denied" in page.text
    code, _, err = login.finish()
    assert code != 0 and "access_denied: The user said no" in err, err
    assert not credentials_path(home).exists()


def test_login_gives_up_after_its_timeout(binary, demo, logins, tmp_path):
    login = start_login(logins, binary, client_env(tmp_path / "home"), "--gateway", demo, "--provider", "demo", "--no-browser",
                        "--timeout", "1")
    login.authorization_url()
    code, _, err = login.finish(timeout=30)
    assert code != 0 and "within 1 s" in err, err


def test_providers_that_do_not_sign_in_by_redirect_are_refused_with_their_endpoint(binary, demo, tmp_path):
    env = client_env(tmp_path / "home")
    providers = requests.get(demo + "/v1/providers", timeout=HTTP_TIMEOUT).json()["providers"]
    logins = {p["id"]: p["login"] for p in providers}
    assert logins["browserid"] == "assertion" and logins["demo"] == "redirect"
    endpoints = {"assertion": "POST /v1/auth/{}/assertion", "token": "POST /v1/auth/{}/token"}
    for pid, style in logins.items():
        if style == "redirect":
            continue
        result = run_client(binary, env, "login", "--gateway", demo, "--provider", pid, "--no-browser")
        assert result.returncode != 0
        assert endpoints[style].format(pid) in result.stderr, result.stderr
        assert "Open this URL" not in result.stdout

    # Several redirect providers and no --provider: refused, listing them.
    several = run_client(binary, env, "login", "--gateway", demo, "--no-browser")
    assert several.returncode != 0 and "--provider" in several.stderr
    assert all(pid in several.stderr for pid, style in logins.items() if style == "redirect"), several.stderr
    unknown = run_client(binary, env, "login", "--gateway", demo, "--provider", "nope", "--no-browser")
    assert unknown.returncode != 0 and "nope" in unknown.stderr and "demo" in unknown.stderr
    assert not credentials_path(tmp_path / "home").exists()


def test_commands_without_a_stored_session_say_to_sign_in(binary, tmp_path):
    env = client_env(tmp_path / "home")
    for args in (["whoami"], ["api", "/hello"], ["logout"]):
        result = run_client(binary, env, *args)
        assert result.returncode != 0, args
        assert result.stderr.strip() == "error: not signed in: run gatehouse login --gateway URL", result.stderr
    assert not credentials_path(tmp_path / "home").exists()


def test_a_problem_answer_is_reported_with_its_code(binary, demo, tmp_path):
    """A stored session the gateway no longer knows: whoami reports the problem's code and detail."""
    home = tmp_path / "home"
    credentials = credentials_path(home)
    credentials.parent.mkdir(parents=True, mode=0o700)
    credentials.write_text(json.dumps({"version": 1, "gateways": {demo: {
        "gateway": demo, "provider": "demo", "session_token": "not-a-session", "token_type": "Bearer",
        "expires_at": datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")}}}))
    credentials.chmod(0o600)
    result = run_client(binary, client_env(home), "whoami")
    assert result.returncode == 1
    assert re.match(r"error: invalid_session: .+", result.stderr), result.stderr
    api = run_client(binary, client_env(home), "api", "/hello")
    assert api.returncode == 1 and api.stderr.startswith("error: HTTP 401: invalid_session: "), api.stderr
    out = run_client(binary, client_env(home), "logout")  # 401: the session is gone already; the entry goes too
    assert out.returncode == 0 and out.stdout.strip() == f"Signed out of {demo}", out.stderr
    assert stored_entries(credentials) == {}


def test_login_against_a_closed_port_says_it_cannot_connect(binary, tmp_path):
    """No gateway listens: one line naming the gateway and the reason, at once (not NIO's error text)."""
    closed = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    result = run_client(binary, client_env(tmp_path), "login", "--gateway", closed, "--no-browser")
    assert result.returncode == 1
    assert result.stderr == f"error: cannot connect to {closed}: connection refused\n", result.stderr
    assert time.monotonic() - started < 10
