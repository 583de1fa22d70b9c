"""OpenTelemetry tracing (`tracing:`) against `gatehouse serve`, over real sockets.

An OTLP/HTTP receiver written here decodes what the gateway exports (`opentelemetry-proto`'s generated classes);
a backend on bare sockets (test_hostile_requests.RawBackend) echoes the request head it got. Both front ends
are driven: the event-loop relay (a plain `/v1/api` call) and the router (the same call with an `Origin` of the
CORS list, which the relay leaves to it).

- one request's spans share its trace id, and the backend's `traceparent` is of that trace with one of the
  exported gateway spans as its parent; the access-log line carries the trace id;
- a client's sampled `traceparent` is continued (same trace id, the gateway's request span its child);
- an unsampled one exports nothing but reaches the backend (same trace id, not sampled);
- no exported name or attribute value holds the session token, the cookie, a provider token or secret;
- a login through an OpenID provider shows the provider's token call as a span of the callback's trace, and
  the call to the provider carries that trace's `traceparent`;
- over HTTP/2 (TLS) the same holds on both front ends;
- tracing off: the client's `traceparent` reaches the backend byte for byte, and none is added when none came.
"""
from __future__ import annotations

import json
import re
import secrets
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import requests

from conftest import STARTUP_TIMEOUT, Gateway, clean_env, free_port, q, write_capture_provider, write_config
from dpop_key import DPoPKey
from gatehouse_testkit import loopback_server, wait_until
from private_ca import PrivateCA
from oidc_provider import CLIENT_SECRET, NATIVE_REDIRECT_URI, OpenIDProvider, sign_in, write_provider_file
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest, ExportTraceServiceResponse
from test_hostile_requests import ORIGIN, PUBLIC, RawBackend, raw, status_of

CAPTURED_TOKEN = "captured-legacy-token-" + secrets.token_hex(8)
TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")
# Spans are batched; a short delay keeps the tests quick (swift-otel reads the standard variable).
FAST_EXPORT = {"OTEL_BSP_SCHEDULE_DELAY": "100"}


class OTLPReceiver:
    """An OTLP/HTTP trace receiver: `POST /v1/traces` with a protobuf `ExportTraceServiceRequest`, answered 200."""

    def __init__(self):
        self.lock = threading.Lock()
        self.spans: list[dict] = []
        self.content_types: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                status = 404
                if self.path == "/v1/traces":
                    export = ExportTraceServiceRequest()
                    export.ParseFromString(body)
                    receiver.add(export, self.headers.get("Content-Type", ""))
                    status = 200
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def add(self, export, content_type: str) -> None:
        found = []
        for resource_spans in export.resource_spans:
            resource = {a.key: value_of(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    found.append({
                        "trace_id": span.trace_id.hex(), "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(), "name": span.name, "kind": span.kind,
                        "attributes": {a.key: value_of(a.value) for a in span.attributes}, "resource": resource,
                        "events": [{a.key: value_of(a.value) for a in e.attributes} | {"name": e.name} for e in span.events],
                    })
        with self.lock:
            self.spans.extend(found)
            self.content_types.append(content_type)

    def of_trace(self, trace_id: str) -> list[dict]:
        with self.lock:
            return [s for s in self.spans if s["trace_id"] == trace_id]

    def wait_for(self, trace_id: str, predicate, timeout: float = 10) -> list[dict]:
        wait_until(lambda: predicate(self.of_trace(trace_id)), timeout)
        return self.of_trace(trace_id)

    def close(self):
        self.server.shutdown()


def value_of(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


@pytest.fixture
def receiver():
    server = OTLPReceiver()
    yield server
    server.close()


@pytest.fixture
def probe():
    """The legacy site's probe; records the `traceparent` of each call the gateway makes to it."""
    seen: list[str | None] = []

    def respond(handler):
        seen.append(handler.headers.get("traceparent"))
        return 200, "application/json", json.dumps({"id": "alice", "email": "alice@example.test"}).encode()

    server = loopback_server(respond)
    server.seen = seen
    yield server
    server.shutdown()


def config_text(backend: RawBackend, tracing: str | None, store: str = 'store: {kind: "memory"}') -> str:
    return "\n".join([
        store,
        f"public_url: {q(PUBLIC)}",
        f"backend: {{url: {q(f'http://127.0.0.1:{backend.port}/base')}}}",
        f"cors: {{allowed_origins: [{q(ORIGIN)}]}}",
        *([tracing] if tracing else []),
        "",
    ])


def start_traced(serve, tmp_path, receiver_url: str, probe, backend: RawBackend, ratio: float = 1,
                 store: str = 'store: {kind: "memory"}'):
    """A gateway exporting to `receiver_url` at `ratio`, and a session of `legacy`: (gateway, session token)."""
    site = f"http://127.0.0.1:{probe.server_address[1]}"
    config = write_config(tmp_path, config_text(
        backend, f"tracing: {{otlp_endpoint: {q(receiver_url)}, sample_ratio: {ratio}, service_name: \"gate-under-test\"}}", store))
    write_capture_provider(tmp_path, site)
    gw = serve(tmp_path, ["--config", str(config)], env=FAST_EXPORT)
    login = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": CAPTURED_TOKEN}, timeout=5)
    assert login.status_code == 201, login.text
    return gw, login.json()["session_token"]


@pytest.fixture
def traced(serve, tmp_path, receiver, probe):
    """A gateway exporting every new trace (`sample_ratio: 1`) to `receiver`, and a session of `legacy`."""
    backend = RawBackend()
    gw, token = start_traced(serve, tmp_path, receiver.url, probe, backend)
    yield gw, token, receiver, probe
    backend.close()


def call(gw, token: str | None, front: str, fields: dict[str, str] | None = None) -> dict[str, list[str]]:
    """`GET /v1/api/app/x` through `front`; the head the backend got."""
    head = ["GET /v1/api/app/x?code=secret-code&state=secret-state HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    if token:
        head.append(f"Authorization: Bearer {token}")
    if front == "router":
        head.append(f"Origin: {ORIGIN}")
    head += [f"{k}: {v}" for k, v in (fields or {}).items()]
    answer = raw(gw.port, ("\r\n".join(head) + "\r\n\r\n").encode())
    assert status_of(answer) == 200, answer[:400]
    return json.loads(answer.partition(b"\r\n\r\n")[2])["headers"]


def server_span(spans: list[dict]) -> dict:
    servers = [s for s in spans if s["kind"] == 2]  # SPAN_KIND_SERVER
    assert len(servers) == 1, spans
    return servers[0]


FRONTS = ["relay", "router"]


@pytest.mark.parametrize("front", FRONTS)
def test_a_requests_spans_share_its_trace_and_the_backends_parent_is_a_gateway_span(traced, front):
    gw, token, receiver, _ = traced
    seen = call(gw, token, front)
    assert len(seen.get("traceparent", [])) == 1, seen
    trace_id, parent_id, flags = TRACEPARENT.match(seen["traceparent"][0]).groups()
    assert flags == "01"
    spans = receiver.wait_for(trace_id, lambda s: any(x["span_id"] == parent_id for x in s) and any(x["kind"] == 2 for x in s))
    assert parent_id in {s["span_id"] for s in spans}, "the backend's parent is one of the gateway's exported spans"
    request = server_span(spans)
    assert request["parent_span_id"] == "", "no traceparent came: the gateway started the trace"
    assert request["attributes"]["http.route"] == "/v1/api/**"
    assert request["attributes"]["http.response.status_code"] == 200
    assert request["attributes"]["gatehouse.provider"] == "legacy"
    assert request["attributes"]["gatehouse.upstream"] == "backend"
    assert request["resource"]["service.name"] == "gate-under-test"
    upstream = next(s for s in spans if s["span_id"] == parent_id)
    assert upstream["kind"] == 3, "the backend's parent is the upstream call, a client span"
    assert upstream["parent_span_id"] == request["span_id"]
    if front == "relay":
        assert any(s["name"] == "access decision" and s["parent_span_id"] == request["span_id"] for s in spans), spans
    # The trace id is in the request's access-log line.
    assert wait_until(lambda: trace_id in gw.log(), 5), gw.log()[-2000:]


@pytest.mark.parametrize("front", FRONTS)
def test_a_sampled_traceparent_is_continued(traced, front):
    gw, token, receiver, _ = traced
    trace_id, client_span = secrets.token_hex(16), secrets.token_hex(8)
    seen = call(gw, token, front, {"traceparent": f"00-{trace_id}-{client_span}-01", "tracestate": "vendor=abc"})
    got_trace, parent_id, flags = TRACEPARENT.match(seen["traceparent"][0]).groups()
    assert (got_trace, flags) == (trace_id, "01")
    assert parent_id != client_span, "the backend's parent is the gateway's span, not the client's"
    assert seen.get("tracestate") == ["vendor=abc"], "tracestate is passed on"
    spans = receiver.wait_for(trace_id, lambda s: any(x["kind"] == 2 for x in s) and any(x["span_id"] == parent_id for x in s))
    assert server_span(spans)["parent_span_id"] == client_span


@pytest.mark.parametrize("front", FRONTS)
def test_an_unsampled_traceparent_exports_nothing_but_is_passed_on(traced, front):
    gw, token, receiver, _ = traced
    trace_id, client_span = secrets.token_hex(16), secrets.token_hex(8)
    parent = f"00-{trace_id}-{client_span}-00"
    seen = call(gw, token, front, {"traceparent": parent, "tracestate": "vendor=abc"})
    # Passed on as it came: the gateway made no span to be its parent.
    assert seen["traceparent"] == [parent]
    assert seen.get("tracestate") == ["vendor=abc"]
    assert wait_until(lambda: trace_id in gw.log(), 5), "the access log still names the client's trace"
    # A sampled request after it: once its spans are in, the earlier one's would have been too.
    later = call(gw, token, front)
    later_trace = TRACEPARENT.match(later["traceparent"][0]).group(1)
    assert receiver.wait_for(later_trace, lambda s: any(x["kind"] == 2 for x in s))
    time.sleep(0.5)
    assert receiver.of_trace(trace_id) == []


def test_no_exported_span_holds_a_token_cookie_or_secret(traced):
    gw, token, receiver, _ = traced
    cookie = f"__Host-gatehouse_session={token}"
    for front in FRONTS:
        call(gw, token, front, {"Cookie": cookie})
    # A refusal too (a wrong token), and the login itself was traced.
    answer = raw(gw.port, b"GET /v1/api/app/x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer wrong-" + token.encode() + b"\r\n\r\n")
    assert status_of(answer) == 401
    assert wait_until(lambda: len(receiver.spans) >= 8, 10)
    time.sleep(0.5)
    with receiver.lock:
        spans = list(receiver.spans)
    assert any(s["attributes"].get("http.route") == "/v1/auth/{provider}/token" for s in spans), [s["name"] for s in spans]
    texts = [s["name"] for s in spans] + [str(v) for s in spans for v in s["attributes"].values()]
    texts += [str(v) for s in spans for e in s["events"] for v in e.values()]
    for secret in (token, CAPTURED_TOKEN, "secret-code", "secret-state", CLIENT_SECRET):
        assert not any(secret in text for text in texts), secret


def test_the_provider_calls_of_a_login_are_spans_of_its_trace_and_carry_its_traceparent(traced):
    gw, _, receiver, probe = traced
    probe.seen.clear()
    trace_id = secrets.token_hex(16)
    login = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": CAPTURED_TOKEN}, timeout=5,
                          headers={"traceparent": f"00-{trace_id}-{secrets.token_hex(8)}-01"})
    assert login.status_code == 201, login.text
    assert len(probe.seen) == 1 and probe.seen[0], probe.seen
    got_trace, parent_id, _ = TRACEPARENT.match(probe.seen[0]).groups()
    assert got_trace == trace_id
    spans = receiver.wait_for(trace_id, lambda s: any(x["span_id"] == parent_id for x in s) and any(x["kind"] == 2 for x in s))
    call_span = next(s for s in spans if s["span_id"] == parent_id)
    assert call_span["name"].startswith("provider "), call_span
    assert call_span["kind"] == 3
    assert any(s["name"].startswith("store ") for s in spans), [s["name"] for s in spans]


def test_an_oidc_login_shows_the_token_call_in_the_callbacks_trace(serve, tmp_path, receiver):
    provider = OpenIDProvider()
    try:
        port = free_port()
        config = write_config(tmp_path, "\n".join([
            f"public_url: {q(f'http://127.0.0.1:{port}')}",
            'store: {kind: "memory"}',
            f"allowed_redirect_uris: [{q(NATIVE_REDIRECT_URI)}]",
            f"tracing: {{otlp_endpoint: {q(receiver.url)}, sample_ratio: 1}}",
            "",
        ]))
        write_provider_file(tmp_path / "Providers", "idp", provider)
        gw = serve(tmp_path, ["--config", str(config)], port=port, env=FAST_EXPORT)
        grant = sign_in(gw.url, "idp", provider, sub="alice", sid="sid-trace")

        def callback_traces():
            with receiver.lock:
                return {s["trace_id"] for s in receiver.spans if s["kind"] == 2 and "callback" in s["attributes"].get("http.route", "")}

        assert wait_until(lambda: callback_traces(), 10), receiver.spans
        (trace_id,) = callback_traces()
        spans = receiver.wait_for(trace_id, lambda s: any(x["name"] == "provider token" for x in s))
        token_call = next(s for s in spans if s["name"] == "provider token")
        assert token_call["kind"] == 3
        assert token_call["attributes"]["gatehouse.provider_call"] == "token"
        assert token_call["trace_id"] == server_span(spans)["trace_id"]
        with receiver.lock:
            texts = [str(v) for s in receiver.spans for v in s["attributes"].values()] + [s["name"] for s in receiver.spans]
        for secret in (grant["session_token"], CLIENT_SECRET):
            assert not any(secret in text for text in texts)
    finally:
        provider.close()


@pytest.fixture
def untraced(serve, tmp_path, probe):
    backend = RawBackend()
    site = f"http://127.0.0.1:{probe.server_address[1]}"
    config = write_config(tmp_path, config_text(backend, None))
    write_capture_provider(tmp_path, site)
    gw = serve(tmp_path, ["--config", str(config)])
    token = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": CAPTURED_TOKEN}, timeout=5).json()["session_token"]
    yield gw, token, backend
    backend.close()


@pytest.mark.parametrize("front", FRONTS)
def test_tracing_off_passes_the_clients_traceparent_unchanged_and_adds_none(untraced, front):
    gw, token, backend = untraced
    # Odd but valid spelling and casing: passed on exactly as it came.
    parent = f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-01"
    seen = call(gw, token, front, {"TraceParent": parent, "tracestate": "a=1,b=2"})
    assert seen["traceparent"] == [parent]
    assert seen["tracestate"] == ["a=1,b=2"]
    assert b"TraceParent: " + parent.encode() + b"\r\n" in backend.everything() or b"traceparent: " + parent.encode() in backend.everything().lower()
    seen = call(gw, token, front)
    assert "traceparent" not in seen and "tracestate" not in seen
    assert "trace_id" not in gw.log()


@pytest.mark.parametrize("front", FRONTS)
def test_over_http2_the_backends_traceparent_continues_the_clients_trace(gatehouse_bin, gateways, tmp_path, receiver, probe, front):
    backend = RawBackend()
    try:
        ca = PrivateCA(tmp_path / "ca", "tracing-test-ca")
        chain, key = ca.leaf("localhost")
        site = f"http://127.0.0.1:{probe.server_address[1]}"
        config = write_config(tmp_path, config_text(backend, "\n".join([
            f"tracing: {{otlp_endpoint: {q(receiver.url)}, sample_ratio: 1}}",
            f"tls: {{certificate_file: {q(str(chain))}, private_key_file: {q(str(key))}}}",
        ])))
        write_capture_provider(tmp_path, site)
        port = free_port()
        stdout, stderr = tmp_path / "stdout", tmp_path / "stderr"
        with open(stdout, "wb") as so, open(stderr, "wb") as se:
            proc = subprocess.Popen([str(gatehouse_bin), "serve", "--config", str(config), "--listen", f"127.0.0.1:{port}"],
                                    cwd=str(tmp_path), env=clean_env(FAST_EXPORT), stdin=subprocess.DEVNULL, stdout=so, stderr=se)
        gateways.append(Gateway(proc, port, stdout, stderr, tmp_path))
        url = f"https://127.0.0.1:{port}"
        context = ssl.create_default_context(cafile=str(ca.certificate))
        with httpx.Client(verify=context, http2=True, http1=False, timeout=10) as client:
            def healthy() -> bool:
                try:
                    return client.get(url + "/healthz").status_code == 200
                except httpx.HTTPError:
                    return proc.poll() is not None
            assert wait_until(healthy, STARTUP_TIMEOUT) and proc.poll() is None, stderr.read_text()
            token = client.post(url + "/v1/auth/legacy/token", json={"token": CAPTURED_TOKEN}).json()["session_token"]
            trace_id, client_span = secrets.token_hex(16), secrets.token_hex(8)
            fields = {"Authorization": f"Bearer {token}", "traceparent": f"00-{trace_id}-{client_span}-01"}
            if front == "router":
                fields["Origin"] = ORIGIN
            response = client.get(url + "/v1/api/app/x", headers=fields)
            assert response.http_version == "HTTP/2"
            assert response.status_code == 200, response.text
        seen = response.json()["headers"]
        got_trace, parent_id, flags = TRACEPARENT.match(seen["traceparent"][0]).groups()
        assert (got_trace, flags) == (trace_id, "01")
        spans = receiver.wait_for(trace_id, lambda s: any(x["kind"] == 2 for x in s) and any(x["span_id"] == parent_id for x in s))
        assert server_span(spans)["parent_span_id"] == client_span
        assert parent_id in {s["span_id"] for s in spans}
    finally:
        backend.close()


@pytest.mark.parametrize("front", FRONTS)
def test_at_ratio_0_a_request_without_traceparent_starts_an_unsampled_trace_and_exports_nothing(serve, tmp_path, receiver, probe, front):
    backend = RawBackend()
    try:
        gw, token = start_traced(serve, tmp_path, receiver.url, probe, backend, ratio=0)
        started = set()
        for fields in ({}, {"tracestate": "vendor=abc"}, {"traceparent": "00-not-a-trace-context-01"},
                       {"traceparent": f"00-{'0' * 32}-{secrets.token_hex(8)}-01"}):
            seen = call(gw, token, front, fields)
            # A new trace, flagged unsampled, in place of whatever (malformed) the client sent; no tracestate.
            assert len(seen["traceparent"]) == 1, seen
            trace_id, _, flags = TRACEPARENT.match(seen["traceparent"][0]).groups()
            assert flags == "00"
            assert "tracestate" not in seen
            started.add(trace_id)
            assert wait_until(lambda: trace_id in gw.log(), 5), "the access log names the new trace"
        assert len(started) == 4, "each request its own trace"
        # A sampled client trace after them is exported; once its spans are in, theirs would have been too.
        sampled = secrets.token_hex(16)
        seen = call(gw, token, front, {"traceparent": f"00-{sampled}-{secrets.token_hex(8)}-01"})
        assert TRACEPARENT.match(seen["traceparent"][0]).group(1) == sampled
        assert receiver.wait_for(sampled, lambda s: any(x["kind"] == 2 for x in s))
        time.sleep(0.5)
        with receiver.lock:
            assert {s["trace_id"] for s in receiver.spans} == {sampled}, "nothing but the sampled trace (not even the login)"
    finally:
        backend.close()


@pytest.mark.parametrize("front", FRONTS)
def test_at_ratio_1_every_request_is_exported(traced, front):
    gw, token, receiver, _ = traced
    traces = []
    for _ in range(5):
        seen = call(gw, token, front)
        trace_id, _, flags = TRACEPARENT.match(seen["traceparent"][0]).groups()
        assert flags == "01"
        traces.append(trace_id)
    assert len(set(traces)) == 5
    for trace_id in traces:
        assert receiver.wait_for(trace_id, lambda s: any(x["kind"] == 2 for x in s))


def test_the_relays_store_reads_are_children_of_the_request_span(serve, tmp_path, receiver, probe):
    """No session cache: every relayed request reads the store off the event loop, inside its request span."""
    backend = RawBackend()
    try:
        gw, token = start_traced(serve, tmp_path, receiver.url, probe, backend,
                                 store='store: {kind: "memory", session_cache_seconds: 0}')
        seen = call(gw, token, "relay")
        trace_id, parent_id, _ = TRACEPARENT.match(seen["traceparent"][0]).groups()
        spans = receiver.wait_for(trace_id, lambda s: any(x["kind"] == 2 for x in s) and any(x["name"].startswith("store ") for x in s))
        request = server_span(spans)
        assert request["attributes"]["http.route"] == "/v1/api/**"
        reads = [s for s in spans if s["name"] == "store session_by_token"]
        assert reads, [s["name"] for s in spans]
        assert all(s["parent_span_id"] == request["span_id"] and s["kind"] == 3 for s in reads), spans
        names = {s["name"] for s in spans}
        assert "access decision" in names
        upstream = next(s for s in spans if s["span_id"] == parent_id)
        assert upstream["parent_span_id"] == request["span_id"]
        assert counter(gw, "gatehouse_relayed_requests_total") == 1, "the relay forwarded it, not the router"
    finally:
        backend.close()


@pytest.mark.parametrize("front", FRONTS)
def test_authz_has_its_decision_span(traced, front):
    """`/v1/authz`: the relay answers HTTP/1.1 heads; an HTTP/1.0 one is the router's."""
    gw, token, receiver, _ = traced
    version = "HTTP/1.1" if front == "relay" else "HTTP/1.0"
    before = counter(gw, "gatehouse_relayed_authz_total")
    for bearer, status, verdict in ((token, 200, "allow"), (None, 401, "refuse")):
        trace_id = secrets.token_hex(16)
        head = [f"GET /v1/authz {version}", "Host: 127.0.0.1", "Connection: close", "X-Original-URI: /x",
                f"traceparent: 00-{trace_id}-{secrets.token_hex(8)}-01"]
        if bearer:
            head.append(f"Authorization: Bearer {bearer}")
        answer = raw(gw.port, ("\r\n".join(head) + "\r\n\r\n").encode())
        assert status_of(answer) == status, answer[:400]
        spans = receiver.wait_for(trace_id, lambda s: any(x["kind"] == 2 for x in s) and any(x["name"] == "access decision" for x in s))
        request = server_span(spans)
        assert request["attributes"]["http.route"] == "/v1/authz"
        decision = next(s for s in spans if s["name"] == "access decision")
        assert decision["parent_span_id"] == request["span_id"]
        assert decision["attributes"]["gatehouse.decision"] == verdict
    relayed = counter(gw, "gatehouse_relayed_authz_total") - before
    assert relayed >= 1 if front == "relay" else relayed == 0, relayed


def test_a_replayed_dpop_proof_is_refused_in_one_span_tree(traced):
    """A DPoP proof the relay decides on the event loop is spent in the store afterwards; when it turns out to be
    a replay, the refusal is decided again. Its spans stay one tree: one server span, ended with the 401, and
    every other span of the trace under it (no decision span left under a request span never ended)."""
    gw, _, receiver, _ = traced
    key = DPoPKey()
    login = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": CAPTURED_TOKEN},
                          headers={"DPoP": key.proof("POST", PUBLIC + "/v1/auth/legacy/token")}, timeout=5)
    assert login.status_code == 201 and login.json()["token_type"] == "DPoP", login.text
    token = login.json()["session_token"]
    proof = key.proof("GET", PUBLIC + "/v1/api/app/x", token)
    before = counter(gw, "gatehouse_relayed_requests_total")
    traces = []
    for expected in (200, 401):
        trace_id, parent_id = secrets.token_hex(16), secrets.token_hex(8)
        head = ["GET /v1/api/app/x HTTP/1.1", "Host: 127.0.0.1", "Connection: close", f"Authorization: DPoP {token}",
                f"DPoP: {proof}", f"traceparent: 00-{trace_id}-{parent_id}-01"]
        answer = raw(gw.port, ("\r\n".join(head) + "\r\n\r\n").encode())
        assert status_of(answer) == expected, answer[:400]
        traces.append((trace_id, parent_id))
    assert counter(gw, "gatehouse_relayed_requests_total") - before == 1, "the relay forwarded the first (and refused the second)"
    trace_id, parent_id = traces[1]
    spans = receiver.wait_for(trace_id, lambda s: any(x["kind"] == 2 for x in s))
    time.sleep(0.5)  # anything else of the trace is exported with it or just after
    spans = receiver.of_trace(trace_id)
    request = server_span(spans)
    assert request["attributes"]["http.response.status_code"] == 401, request
    assert request["parent_span_id"] == parent_id
    ids = {s["span_id"] for s in spans}
    orphans = [s for s in spans if s is not request and s["parent_span_id"] not in ids]
    assert not orphans, orphans
    assert any(s["name"] == "access decision" and s["attributes"]["gatehouse.decision"] == "refuse" for s in spans), spans


def counter(gw, name: str) -> float:
    """A counter of the gateway's `/metrics` (0 before its first count)."""
    for line in requests.get(gw.url + "/metrics", timeout=5).text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.split()[-1])
    return 0


class Blackhole:
    """A port that takes connections (the kernel's backlog) and never reads or answers."""

    def __init__(self):
        import socket
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def close(self):
        self.sock.close()


@pytest.mark.parametrize("collector", ["refusing", "blackholing"])
def test_a_collector_that_is_down_slows_no_request_nor_shutdown(serve, tmp_path, probe, collector):
    backend = RawBackend()
    hole = Blackhole() if collector == "blackholing" else None
    try:
        url = hole.url if hole else f"http://127.0.0.1:{free_port()}"
        gw, token = start_traced(serve, tmp_path, url, probe, backend)
        cookie = f"__Host-gatehouse_session={token}"
        # Every request sampled, each export failing (or hanging) while they go on.
        started = time.monotonic()
        for i in range(40):
            call(gw, token, FRONTS[i % 2], {"Cookie": cookie})
        elapsed = time.monotonic() - started
        assert elapsed < 8, f"40 requests took {elapsed:.1f} s"
        time.sleep(1.5)  # exports under way (or timed out)
        started = time.monotonic()
        gw.signal(15)
        try:
            gw.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail(f"SIGTERM: still running after 15 s with the collector {collector}")
        stopped = time.monotonic() - started
        assert stopped < 10, f"SIGTERM took {stopped:.1f} s with the collector {collector}"
        log = gw.log()
        for secret in (token, CAPTURED_TOKEN, "secret-code", "secret-state"):
            assert secret not in log, secret
    finally:
        backend.close()
        if hole:
            hole.close()
