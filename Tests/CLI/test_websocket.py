"""WebSocket (RFC 6455) through `/v1/api/…`: a real `websockets` server behind `gatehouse serve`, a real
`websocket-client` in front of it, over loopback.

The handshake is authenticated like any other call and carries the identity headers; after the backend's
101 the gateway relays bytes both ways until either side closes. A handshake without a session, or carried
by the session cookie from a foreign origin, never becomes a tunnel; neither does one the backend refuses.
"""
from __future__ import annotations

import os
import socket
import threading
import time
from http import HTTPStatus

import pytest
import requests
import websocket  # websocket-client
from websockets.exceptions import ConnectionClosed
from websockets.sync.server import serve as ws_serve

from conftest import q, write_capture_provider, write_config
from stub_backend import StubBackend

PUBLIC = "https://gate.example.test"
COOKIE = "__Host-gatehouse_session"


class Backend:
    """A WebSocket server: greets first (bytes right behind its 101), then echoes; records every handshake."""

    def __init__(self):
        self.handshakes: list[dict] = []
        self.closed = threading.Event()
        self.lock = threading.Lock()
        backend = self

        def process_request(connection, request):
            with backend.lock:
                backend.handshakes.append({"path": request.path, "headers": {k.lower(): v for k, v in request.headers.raw_items()}})
            if request.path.startswith("/base/refuse"):
                return connection.respond(HTTPStatus.FORBIDDEN, "the backend refuses\n")
            return None

        def handler(connection):
            try:
                if connection.request.path.startswith("/base/bye"):
                    connection.send("bye")
                    connection.close(code=4000, reason="done")
                    return
                connection.send("hello")
                for message in connection:
                    connection.send(message)
            except ConnectionClosed:
                pass
            finally:
                backend.closed.set()

        self.server = ws_serve(handler, "127.0.0.1", 0, process_request=process_request, max_size=4 * 1024 * 1024)
        self.port = self.server.socket.getsockname()[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def last(self) -> dict:
        with self.lock:
            return self.handshakes[-1]

    def count(self) -> int:
        with self.lock:
            return len(self.handshakes)


@pytest.fixture
def setup(serve, tmp_path):
    backend, probe = Backend(), StubBackend()
    site = f"http://127.0.0.1:{probe.port}"
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}',
        f"public_url: {q(PUBLIC)}",
        "backend:",
        f"  url: {q(f'http://127.0.0.1:{backend.port}/base')}",
        "",
    ]))
    write_capture_provider(tmp_path, site)
    gw = serve(tmp_path, ["--config", str(config)])
    created = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "captured"}, timeout=5)
    assert created.status_code == 201, created.text
    yield gw, backend, created.json()["session_token"]
    backend.server.shutdown()
    probe.server.shutdown()


def ws_url(gw, path: str) -> str:
    return f"ws://127.0.0.1:{gw.port}{path}"


def upgraded(gw) -> float:
    for line in requests.get(gw.url + "/metrics", timeout=5).text.splitlines():
        if line.startswith("gatehouse_upgraded_connections_total"):
            return float(line.split()[-1])
    return 0.0


def test_echo_through_the_gateway_with_identity_and_back_pressure(setup):
    gw, backend, token = setup
    ws = websocket.create_connection(
        ws_url(gw, "/v1/api/ws/chat?room=1"), timeout=10,
        header=[f"Authorization: Bearer {token}", "X-Gatehouse-Subject: admin"])
    try:
        # The greeting came in the backend's first packet, right behind the 101.
        assert ws.recv() == "hello"
        ws.send("ping")
        assert ws.recv() == "ping"
        # 4 MiB one way and back: more than any socket buffer, so both directions wait on each other.
        blob = os.urandom(4 * 1024 * 1024 - 64)
        ws.send_binary(blob)
        assert ws.recv() == blob
        for i in range(200):
            ws.send(f"m{i}")
        assert [ws.recv() for _ in range(200)] == [f"m{i}" for i in range(200)]
    finally:
        ws.close()
    assert backend.closed.wait(10), "the client's close did not reach the backend"
    seen = backend.last()
    assert seen["path"] == "/base/ws/chat?room=1"
    headers = seen["headers"]
    assert headers["x-gatehouse-subject"] == "user-1", "the client's own X-Gatehouse-Subject must not pass"
    assert headers["x-gatehouse-provider"] == "legacy"
    assert "x-gatehouse-assertion" in headers
    assert "authorization" not in headers
    assert headers["upgrade"].lower() == "websocket"
    assert upgraded(gw) == 1


def test_the_backend_closing_reaches_the_client(setup):
    gw, backend, token = setup
    ws = websocket.create_connection(ws_url(gw, "/v1/api/bye"), timeout=10, header=[f"Authorization: Bearer {token}"])
    assert ws.recv() == "bye"
    opcode, frame = ws.recv_data(control_frame=True)
    assert opcode == websocket.ABNF.OPCODE_CLOSE
    assert int.from_bytes(frame[:2], "big") == 4000
    ws.close()


def test_several_tunnels_at_once_and_http_calls_beside_them(setup):
    gw, backend, token = setup
    sockets = [websocket.create_connection(ws_url(gw, f"/v1/api/ws/{i}"), timeout=10, header=[f"Authorization: Bearer {token}"])
               for i in range(20)]
    try:
        for ws in sockets:
            assert ws.recv() == "hello"
        for i, ws in enumerate(sockets):
            ws.send(f"n{i}")
        for i, ws in enumerate(sockets):
            assert ws.recv() == f"n{i}"
        # The gateway's other routes are unaffected by open tunnels.
        assert requests.get(gw.url + "/v1/session", headers={"Authorization": f"Bearer {token}"}, timeout=5).status_code == 200
    finally:
        for ws in sockets:
            ws.close()
    assert upgraded(gw) == 20


def handshake_status(gw, path: str, headers: list[str], origin: str | None = None, suppress_origin: bool = False) -> int:
    """The handshake's status; websocket-client sends `Origin: http://127.0.0.1:{port}` unless `origin` is given
    or `suppress_origin`."""
    try:
        ws = websocket.create_connection(ws_url(gw, path), timeout=10, header=headers, origin=origin, suppress_origin=suppress_origin)
    except websocket.WebSocketBadStatusException as e:
        return e.status_code
    ws.close()
    return 101


def test_no_session_no_tunnel(setup):
    gw, backend, _ = setup
    assert handshake_status(gw, "/v1/api/ws/chat", []) == 401
    assert handshake_status(gw, "/v1/api/ws/chat", ["Authorization: Bearer not-a-session"]) == 401
    assert backend.count() == 0
    assert upgraded(gw) == 0


def test_cookie_handshake_only_from_the_gateways_own_origin(setup):
    """Cross-site WebSocket hijacking: a page on another site opens a WebSocket and the browser adds the cookie."""
    gw, backend, token = setup
    cookie = f"Cookie: {COOKIE}={token}"
    status = handshake_status(gw, "/v1/api/ws/chat", [cookie], origin="https://evil.example")
    assert status != 101
    assert all(h["headers"].get("upgrade") is None for h in backend.handshakes), "a foreign origin's handshake reached the backend as one"
    assert upgraded(gw) == 0
    # From the gateway's own origin, the cookie is the session.
    assert handshake_status(gw, "/v1/api/ws/chat", [cookie], origin=PUBLIC) == 101
    # Without any Origin (not a browser) the cookie does not open a tunnel either.
    assert handshake_status(gw, "/v1/api/ws/chat", [cookie], suppress_origin=True) != 101
    # A bearer token is never sent by a browser on its own: any origin.
    assert handshake_status(gw, "/v1/api/ws/chat", [f"Authorization: Bearer {token}"], origin="https://evil.example") == 101
    assert upgraded(gw) == 2


def read_to_close(sock: socket.socket, deadline: float) -> bytes:
    data = b""
    while time.monotonic() < deadline:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    raise AssertionError(f"the gateway kept the connection open after: {data!r}")


def test_a_refused_handshake_is_answered_and_the_connection_ends(setup):
    gw, backend, token = setup
    with socket.create_connection(("127.0.0.1", gw.port), timeout=10) as s:
        s.sendall((f"GET /v1/api/refuse HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                   "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                   "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").encode())
        answer = read_to_close(s, time.monotonic() + 10)
    assert answer.startswith(b"HTTP/1.1 403"), answer
    assert b"the backend refuses" in answer
    assert upgraded(gw) == 0


def test_other_upgrades_go_to_the_router_and_the_connection_ends(setup):
    """An `Upgrade: h2c` is not a WebSocket handshake: the router answers it as a plain call, then the
    connection closes (nothing after an upgrade request can be read as HTTP)."""
    gw, backend, token = setup
    with socket.create_connection(("127.0.0.1", gw.port), timeout=10) as s:
        s.sendall((f"GET /v1/api/plain HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                   "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n").encode())
        answer = read_to_close(s, time.monotonic() + 10)
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    assert not head.startswith(b"http/1.1 101"), answer
    assert b"connection: close" in head
    assert backend.last()["headers"].get("upgrade") is None, "the router must not forward an upgrade"
    assert upgraded(gw) == 0
