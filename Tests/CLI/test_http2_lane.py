"""The relay's lane on HTTP/2 streams (docs/operations.md "The relay's byte lane").

A `GET /v1/api/…` whose HEADERS end the stream is served by the lane alone: its answer read from the backend's bytes
and written as HTTP/2 frames. The same request whose stream ends with an empty DATA frame instead goes through the
stream's usual handlers (the frame codec and the NIOHTTP1 relay). Driven by the `h2` package on a TLS socket, against
a backend that answers from raw bytes (lengths, chunks with extensions, a body until its close, `204`, a `103` before
the answer, hop-by-hop fields), the two must give the client the same answer and the backend the same request; and
the lane's own failures (an unreachable backend, one that does not answer in time, a client's `RST_STREAM` in the
middle of an answer) end as the relay's do.
"""
from __future__ import annotations

import json
import socket
import socketserver
import threading
import time

import h2.errors
import h2.events
import pytest
from conftest import q, write_capture_provider
from gatehouse_testkit import free_port

from test_tls import Backend, RawH2, certs, sign_in, start, tls_yaml  # noqa: F401 (fixtures)


class RawBackend:
    """An HTTP/1.1 backend that writes its answers as bytes, keeping its connections alive where the answer allows.

    `/base/echo…`: the request's target and fields as JSON (Content-Length), with fields a relay must drop or keep.
    `/base/chunked`: a chunked body in several writes, one chunk with an extension. `/base/close`: a body that ends
    with the connection. `/base/empty`: `204`. `/base/early`: `103 Early Hints`, then the echo. `/base/big`: 4 MiB
    chunked. `/base/window`: 65,535 bytes, then the last 20,000 a moment later. `/base/hang`: never answers."""

    def __init__(self):
        self.requests: list[dict] = []
        backend = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                buffered = b""
                while True:
                    while b"\r\n\r\n" not in buffered:
                        data = self.request.recv(65536)
                        if not data:
                            return
                        buffered += data
                    head, _, buffered = buffered.partition(b"\r\n\r\n")
                    lines = head.decode("latin-1").split("\r\n")
                    method, target, _ = lines[0].split(" ")
                    fields = sorted((name.lower(), value.strip()) for name, _, value in (line.partition(":") for line in lines[1:]))
                    backend.requests.append({"method": method, "target": target, "fields": fields})
                    if not self.answer(target, fields):
                        return

            def answer(self, target: str, fields: list) -> bool:
                send = self.request.sendall
                echo = json.dumps({"target": target, "fields": [f for f in fields if f[0] not in ("x-request-id", "x-gatehouse-assertion")]}).encode()
                if target.startswith("/base/echo"):
                    send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Kept: k\r\nConnection: keep-alive, X-Drop\r\n"
                         b"X-Drop: d\r\nKeep-Alive: timeout=5\r\nStrict-Transport-Security: max-age=1\r\nSet-Cookie: a=b\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(echo), echo))
                elif target == "/base/chunked":
                    send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
                    time.sleep(0.02)
                    send(b"7;ext=1\r\n, world\r\n")
                    time.sleep(0.02)
                    send(b"1\r\n!\r\n0\r\n\r\n")
                elif target == "/base/close":
                    send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nuntil ")
                    time.sleep(0.02)
                    send(b"the end")
                    return False
                elif target == "/base/empty":
                    send(b"HTTP/1.1 204 No Content\r\nX-Kept: k\r\n\r\n")
                elif target == "/base/early":
                    send(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n")
                    time.sleep(0.02)
                    send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(echo), echo))
                elif target == "/base/big":
                    send(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
                    piece = bytes(range(256)) * 256
                    try:
                        for _ in range(64):
                            send(b"%x\r\n%s\r\n" % (len(piece), piece))
                        send(b"0\r\n\r\n")
                    except OSError:
                        return False
                elif target == "/base/window":
                    # A stream window's worth (the client's 65,535 bytes), then, once it has gone, the last 20,000.
                    send(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 85535\r\n\r\n" + b"w" * 65535)
                    time.sleep(0.3)
                    try:
                        send(b"l" * 20000)
                    except OSError:
                        return False
                elif target == "/base/hang":
                    time.sleep(5)
                    return False
                return True

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def lane(start, certs, tmp_path):
    """A gateway (HSTS on, upstream timeout 1 s) in front of a RawBackend, and a session token."""
    probe, backend = Backend(), RawBackend()
    chain, key = certs.leaf("localhost")
    root = tmp_path / "lane"
    write_capture_provider(root, probe.url)
    gateway = start(tls_yaml(chain, key, backend, tls_extra=["  hsts_seconds: 600"], extra=["limits: {upstream_timeout_seconds: 1}"]),
                    root=root)
    yield gateway, backend, sign_in(gateway)
    backend.close()
    probe.close()


def exchange(raw: RawH2, path: str, token: str, via_lane: bool, extra: list | None = None, timeout: float = 10) -> dict:
    """One request on its own stream: its HEADERS end the stream (the lane's), or an empty DATA frame does (the
    codec's). The answer: interim heads, the final one, the body, or how the stream ended otherwise."""
    stream = raw.headers("GET", path, [("authorization", f"Bearer {token}"), *(extra or [])], end=via_lane)
    if not via_lane:
        raw.conn.send_data(stream, b"", end_stream=True)
        raw.flush()
    answer: dict = {"interim": [], "head": None, "body": bytearray(), "end": None}
    deadline = time.monotonic() + timeout
    while answer["end"] is None and time.monotonic() < deadline:
        data = raw.sock.recv(65536)
        assert data, "the connection ended"
        for event in raw.conn.receive_data(data):
            if getattr(event, "stream_id", stream) != stream:
                continue
            if isinstance(event, h2.events.InformationalResponseReceived):
                answer["interim"].append(sorted(event.headers))
            elif isinstance(event, h2.events.ResponseReceived):
                answer["head"] = event.headers
            elif isinstance(event, h2.events.DataReceived):
                raw.conn.acknowledge_received_data(event.flow_controlled_length, stream)
                answer["body"] += event.data
            elif isinstance(event, h2.events.StreamEnded):
                answer["end"] = "ended"
            elif isinstance(event, h2.events.StreamReset):
                answer["end"] = f"reset {event.error_code}"
            elif isinstance(event, h2.events.ConnectionTerminated):
                answer["end"] = "connection terminated"
        raw.flush()
    return answer


def comparable(answer: dict) -> tuple:
    """An answer without what differs per request (`date`, `x-request-id`)."""
    head = sorted((name, value) for name, value in (answer["head"] or []) if name not in ("date", "x-request-id"))
    return answer["interim"], head, bytes(answer["body"]), answer["end"]


def sent(request: dict) -> dict:
    """A request the backend got, without what differs per request (its id, the signed assertion)."""
    return {**request, "fields": [f for f in request["fields"] if f[0] not in ("x-request-id", "x-gatehouse-assertion")]}


PATHS = [
    ("/v1/api/echo/plain", []),
    ("/v1/api/x/../echo/dots?q=a+b&x=%2F", [("accept", "*/*"), ("cookie", "app=1"), ("cookie", "other=2")]),
    ("/v1/api/echo/spoofed", [("x-gatehouse-subject", "mallory"), ("x-forwarded-for", "10.0.0.9"), ("te", "trailers")]),
    ("/v1/api/chunked", []),
    ("/v1/api/close", []),
    ("/v1/api/empty", []),
    ("/v1/api/early", []),
]


def test_the_lane_and_the_codec_give_the_same_answer_and_send_the_same_request(lane):
    gateway, backend, token = lane
    raw = RawH2(gateway)
    exchange(raw, "/v1/api/echo/warm", token, via_lane=True)
    before = gateway.metric("gatehouse_relay_lane_requests_total") or 0
    relayed_before = gateway.metric("gatehouse_relayed_requests_total") or 0
    for path, extra in PATHS:
        backend.requests.clear()
        by_lane = exchange(raw, path, token, via_lane=True, extra=extra)
        by_codec = exchange(raw, path, token, via_lane=False, extra=extra)
        assert by_lane["end"] == "ended", (path, by_lane)
        assert comparable(by_lane) == comparable(by_codec), path
        assert [sent(r) for r in backend.requests] == [sent(backend.requests[0])] * 2, path
        head = dict(by_lane["head"])
        assert head[":status"] in ("200", "204") and head["strict-transport-security"] == "max-age=600", (path, head)
        assert "x-request-id" in head and not {"x-drop", "keep-alive", "connection", "transfer-encoding"} & set(head), (path, head)
    assert comparable(exchange(raw, "/v1/api/chunked", token, via_lane=True))[2] == b"hello, world!"
    assert comparable(exchange(raw, "/v1/api/close", token, via_lane=True))[2] == b"until the end"
    early = exchange(raw, "/v1/api/early", token, via_lane=True)
    assert early["interim"] == [[(":status", "103"), ("link", "</style.css>; rel=preload")]]
    raw.close()
    # Only the streams whose HEADERS ended them were the lane's; every one was relayed.
    assert (gateway.metric("gatehouse_relay_lane_requests_total") or 0) - before == len(PATHS) + 3
    assert (gateway.metric("gatehouse_relayed_requests_total") or 0) - relayed_before == 2 * len(PATHS) + 3


def test_a_large_answer_follows_the_stream_window_and_a_reset_in_the_middle_frees_the_backend(lane):
    gateway, backend, token = lane
    raw = RawH2(gateway)
    big = exchange(raw, "/v1/api/big", token, via_lane=True, timeout=30)
    assert big["end"] == "ended" and bytes(big["body"]) == (bytes(range(256)) * 256) * 64
    # A reset after the first part: the stream ends, the backend's connection is dropped, the connection goes on.
    stream = raw.headers("GET", "/v1/api/big", [("authorization", f"Bearer {token}")])
    received = 0
    while received == 0:
        for event in raw.conn.receive_data(raw.sock.recv(65536)):
            if isinstance(event, h2.events.DataReceived) and event.stream_id == stream:
                received += len(event.data)
    raw.conn.reset_stream(stream)
    raw.flush()
    for i in range(5):
        assert comparable(exchange(raw, f"/v1/api/echo/after-{i}", token, via_lane=True))[2].startswith(b'{"target": "/base/echo/after')
    raw.close()
    assert "error" not in gateway.log().lower()
    assert gateway.alive()


def test_an_unreachable_or_slow_backend_is_answered_502_or_504_on_the_stream(start, certs, tmp_path):
    probe, backend = Backend(), RawBackend()
    chain, key = certs.leaf("localhost")
    root = tmp_path / "fail"
    write_capture_provider(root, probe.url)
    closed = free_port()
    upstreams = ["upstreams:", "  - {name: \"gone\", prefix: \"/gone\", url: " + q(f"http://127.0.0.1:{closed}/base") + "}"]
    gateway = start(tls_yaml(chain, key, backend, extra=["limits: {upstream_timeout_seconds: 1}", *upstreams]), root=root)
    try:
        token = sign_in(gateway)
        raw = RawH2(gateway)
        for via_lane in (True, False):
            started = time.monotonic()
            slow = exchange(raw, "/v1/api/hang", token, via_lane=via_lane)
            assert dict(slow["head"])[":status"] == "504" and json.loads(bytes(slow["body"]))["code"] == "upstream_timeout"
            assert 0.9 <= time.monotonic() - started < 4
            gone = exchange(raw, "/v1/api/gone/x", token, via_lane=via_lane)
            assert dict(gone["head"])[":status"] == "502" and json.loads(bytes(gone["body"]))["code"] == "bad_gateway", gone
        raw.close()
    finally:
        backend.close()
        probe.close()


def test_streams_waiting_at_once_each_get_504_at_their_own_deadline(lane):
    """The lane streams of one connection share one timer: each request still times out one upstream timeout
    after it went out, not when another stream's does, and a stream answered meanwhile is not touched."""
    gateway, _, token = lane
    raw = RawH2(gateway)
    auth = [("authorization", f"Bearer {token}")]
    started = time.monotonic()
    first = raw.headers("GET", "/v1/api/hang", auth)
    time.sleep(0.5)
    second = raw.headers("GET", "/v1/api/hang", auth)
    answered = raw.headers("GET", "/v1/api/echo/meanwhile", auth)
    ended: dict[int, tuple[float, str]] = {}
    status: dict[int, str] = {}
    while len(ended) < 3 and time.monotonic() - started < 10:
        for event in raw.conn.receive_data(raw.sock.recv(65536)):
            if isinstance(event, h2.events.ResponseReceived):
                status[event.stream_id] = dict(event.headers)[":status"]
            elif isinstance(event, h2.events.DataReceived):
                raw.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                ended[event.stream_id] = (time.monotonic() - started, status[event.stream_id])
        raw.flush()
    raw.close()
    # (Upper bounds with room for a loaded machine; the lower ones are what a shared timer could get wrong.)
    assert ended[answered][1] == "200" and ended[answered][0] < ended[first][0], ended
    assert ended[first][1] == "504" and 0.9 <= ended[first][0] < 3, ended
    assert ended[second][1] == "504" and 1.4 <= ended[second][0] < 4 and ended[second][0] - ended[first][0] >= 0.3, ended


def test_a_lane_stream_whose_client_takes_nothing_is_reset_after_the_send_timeout(start, certs, tmp_path):
    """A lane stream has no channel whose writability a clock could follow: the lane counts what waits in NIOHTTP2
    for the stream's window itself. A client that never opens its stream's window again has that stream reset once
    `limits.client_send_timeout_seconds` has passed, not before, and the connection's other streams go on; a client
    that reads the same answer slowly, a window at a time, gets all of it."""
    probe, backend = Backend(), RawBackend()
    chain, key = certs.leaf("localhost")
    root = tmp_path / "send"
    write_capture_provider(root, probe.url)
    gateway = start(tls_yaml(chain, key, backend, extra=["limits: {client_send_timeout_seconds: 1}"]), root=root)
    try:
        token = sign_in(gateway)
        before = gateway.metric("gatehouse_relay_lane_requests_total") or 0
        raw = RawH2(gateway)
        # Only the stream's window holds the answer back, not the connection's.
        raw.conn.increment_flow_control_window(1 << 30)
        raw.flush()
        raw.sock.settimeout(1)
        # A chunked answer (its last frame empty), and one whose last frame alone waits for the window: neither is
        # held forever.
        for path in ("/v1/api/big", "/v1/api/window"):
            started = time.monotonic()
            held = raw.headers("GET", path, [("authorization", f"Bearer {token}")])
            received, reset_at = 0, None
            while reset_at is None and time.monotonic() - started < 10:
                try:
                    data = raw.sock.recv(65536)
                except socket.timeout:
                    continue
                for event in raw.conn.receive_data(data):
                    if isinstance(event, h2.events.DataReceived) and event.stream_id == held:
                        received += event.flow_controlled_length
                    elif isinstance(event, h2.events.StreamReset) and event.stream_id == held:
                        reset_at = (time.monotonic() - started, event.error_code)
                raw.flush()
            assert reset_at is not None, f"the held stream ({path}) was not reset"
            assert 0.9 <= reset_at[0] < 5 and reset_at[1] == h2.errors.ErrorCodes.CANCEL, (path, reset_at)
            # It got what its window allowed, and nothing past it.
            assert 0 < received <= 65535, (path, received)
        raw.sock.settimeout(10)
        # The connection and the lane go on; a slow reader that opens its window in time gets the whole answer.
        assert comparable(exchange(raw, "/v1/api/echo/after", token, via_lane=True))[2].startswith(b'{"target": "/base/echo/after')
        big = exchange(raw, "/v1/api/big", token, via_lane=True, timeout=30)
        assert big["end"] == "ended" and len(big["body"]) == 256 * 256 * 64
        raw.close()
        assert (gateway.metric("gatehouse_relay_lane_requests_total") or 0) - before == 4
        assert gateway.alive()
    finally:
        backend.close()
        probe.close()


def test_lane_streams_reset_as_they_open_are_never_answered_and_break_nothing(start, certs, tmp_path):
    """The lane keeps its streams' frames from NIOHTTP2's multiplexer and ends them on NIOHTTP2's close. A client
    opens lane streams and resets each in the same write (a PRIORITY frame between for some), so that the gateway
    reads both in one go: with every decision read from the store off the loop (no session cache), the reset comes
    while the decision is out, and a decision that comes back for a closed stream must go nowhere. No such request
    is answered (nor logged 200); the connection's next lane streams are, the gateway logs no error and lives."""
    probe, backend = Backend(), RawBackend()
    chain, key = certs.leaf("localhost")
    root = tmp_path / "flood"
    write_capture_provider(root, probe.url)
    text = tls_yaml(chain, key, backend).replace('store: {kind: "memory"}', 'store: {kind: "memory", session_cache_seconds: 0}')
    gateway = start(text, root=root)
    try:
        token = sign_in(gateway)
        raw = RawH2(gateway)
        auth = [("authorization", f"Bearer {token}")]
        answered: list[int] = []
        raw.sock.settimeout(0.02)
        for i in range(150):
            stream = raw.conn.get_next_available_stream_id()
            raw.conn.send_headers(stream, [(":method", "GET"), (":path", f"/v1/api/echo/flood-{i}"), (":scheme", "https"),
                                           (":authority", "localhost"), *auth], end_stream=True)
            if i % 3 == 0:
                raw.conn.prioritize(stream, weight=32)
            raw.conn.reset_stream(stream)
            raw.flush()
            try:
                for event in raw.conn.receive_data(raw.sock.recv(65536)):
                    if isinstance(event, h2.events.ResponseReceived):
                        answered.append(event.stream_id)
            except (socket.timeout, TimeoutError):
                pass
        raw.sock.settimeout(10)
        for i in range(5):
            answer = exchange(raw, f"/v1/api/echo/after-{i}", token, via_lane=True)
            assert dict(answer["head"])[":status"] == "200" and bytes(answer["body"]).startswith(b'{"target": "/base/echo/after'), answer
        raw.close()
        assert answered == []
        # Each reset was read with its HEADERS, while the store was being read: none reached the backend.
        assert [r["target"] for r in backend.requests if "flood-" in r["target"]] == []
        log = gateway.log()
        assert gateway.alive()
        assert "error" not in log.lower(), log[-2000:]
    finally:
        backend.close()
        probe.close()
