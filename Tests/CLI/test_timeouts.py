"""Connections do not pile up: a client connection without a complete request head for
`limits.client_idle_timeout_seconds` is closed (silent, trickling its head, or idle after a response), while
a relayed request that takes longer is not cut; and a keep-alive connection to the backend unused for
`limits.upstream_keepalive_seconds` is closed. Real sockets against `gatehouse serve`."""
from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor
import time

import pytest
import requests

from conftest import q, write_capture_provider, write_config
from stub_backend import Seen, StubBackend

IDLE = 2  # seconds, both timeouts


def answer(seen: Seen) -> tuple[int, dict]:
    """The backend: `…/slow` takes longer than the idle timeouts."""
    if seen.path.endswith("/slow"):
        time.sleep(IDLE + 1.5)
    return 200, {"ok": True}


@pytest.fixture
def setup(serve, tmp_path):
    backend = StubBackend(answer=answer, probe={"id": "u-1", "email": "u1@example.test"})
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}',
        f"backend: {{url: {q(backend.base)}}}",
        f"limits: {{client_idle_timeout_seconds: {IDLE}, upstream_keepalive_seconds: {IDLE}, upstream_timeout_seconds: 10}}",
        "",
    ]))
    write_capture_provider(tmp_path, backend.base)
    gw = serve(tmp_path, ["--config", str(config)])
    token = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "t"}, timeout=5).json()["session_token"]
    yield gw, backend, token
    backend.server.shutdown()


def closed_within(sock: socket.socket, seconds: float, trickle: bytes = b"") -> float | None:
    """Seconds until the gateway closes `sock` (sending `trickle` a byte at a time meanwhile), or None."""
    start = time.monotonic()
    sock.settimeout(0.25)
    sent = 0
    while time.monotonic() - start < seconds:
        if sent < len(trickle):
            try:
                sock.sendall(trickle[sent:sent + 1])
            except OSError:
                return time.monotonic() - start
            sent += 1
        try:
            if sock.recv(65536) == b"":
                return time.monotonic() - start
        except socket.timeout:
            pass
        except OSError:
            return time.monotonic() - start
    return None


def test_a_silent_connection_is_closed(setup):
    gw, _, _ = setup
    with socket.create_connection(("127.0.0.1", gw.port)) as sock:
        elapsed = closed_within(sock, IDLE + 3)
    assert elapsed is not None and IDLE - 0.5 <= elapsed <= IDLE + 2, elapsed


def test_a_head_trickled_a_byte_at_a_time_is_closed(setup):
    gw, _, _ = setup
    with socket.create_connection(("127.0.0.1", gw.port)) as sock:
        elapsed = closed_within(sock, IDLE + 3, trickle=b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200)
    assert elapsed is not None and elapsed <= IDLE + 2, elapsed


def read_one_response(sock: socket.socket) -> bytes:
    """Reads exactly one Content-Length-framed answer from a keep-alive connection: its head and body
    may arrive in separate segments, and a leftover body must not be taken for the next answer."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "connection closed before an answer"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")[1:]
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "connection closed inside an answer"
        body += chunk
    assert len(body) == length, "more bytes than the answer's length"
    return head + b"\r\n\r\n" + body


def test_a_keep_alive_connection_idle_after_its_answer_is_closed(setup):
    gw, _, token = setup
    with socket.create_connection(("127.0.0.1", gw.port)) as sock:
        # Relayed and routed requests alike re-arm the timer once answered.
        for target in ("/v1/api/x", "/healthz"):
            sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
            sock.settimeout(5)
            assert read_one_response(sock).startswith(b"HTTP/1.1 200")
        elapsed = closed_within(sock, IDLE + 3)
    assert elapsed is not None and IDLE - 0.5 <= elapsed <= IDLE + 2, elapsed


def test_a_relayed_request_slower_than_the_idle_timeout_is_not_cut(setup):
    gw, _, token = setup
    r = requests.get(gw.url + "/v1/api/slow", headers={"Authorization": f"Bearer {token}"}, timeout=15)
    assert r.status_code == 200 and r.json() == {"ok": True}


def test_an_unused_backend_connection_is_closed(setup):
    gw, backend, token = setup
    before = len(backend.closed)
    assert requests.get(gw.url + "/v1/api/x", headers={"Authorization": f"Bearer {token}"}, timeout=5).status_code == 200
    released = time.monotonic()
    deadline = released + IDLE + 3
    while len(backend.closed) == before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(backend.closed) > before, "the gateway kept its idle connection to the backend open"
    assert backend.closed[-1] - released >= IDLE - 0.5


@pytest.mark.parametrize("bound", [None, 1])
def test_idle_backend_connections_past_the_bound_are_closed_once_answered(serve, tmp_path, bound):
    """`limits.upstream_idle_connections`: four requests in flight at once need four backend connections; past
    the bound (per core: two event loops here) they are closed as soon as their answers are in, while the
    default keeps them all for `upstream_keepalive_seconds` (30 s here)."""
    def hold(seen: Seen) -> tuple[int, dict]:
        time.sleep(0.8)
        return 200, {"ok": True}

    backend = StubBackend(answer=hold, probe={"id": "u-1", "email": "u1@example.test"})
    limits = "upstream_keepalive_seconds: 30" + (f", upstream_idle_connections: {bound}" if bound is not None else "")
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}', f"backend: {{url: {q(backend.base)}}}", f"limits: {{{limits}}}", ""]))
    write_capture_provider(tmp_path, backend.base)
    gw = serve(tmp_path, ["--config", str(config)])
    try:
        token = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "t"}, timeout=5).json()["session_token"]
        before = len(backend.closed)
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(
                lambda i: requests.get(gw.url + f"/v1/api/hold/{i}", headers={"Authorization": f"Bearer {token}"}, timeout=10),
                range(4)))
        assert [a.status_code for a in answers] == [200] * 4
        time.sleep(1.5)
        closed = len(backend.closed) - before
        if bound is None:
            assert closed == 0, "the gateway closed backend connections it could keep"
        else:
            # One kept per event loop that served a request (one or two loops), the others closed.
            assert 2 <= closed <= 3, closed
    finally:
        backend.server.shutdown()
