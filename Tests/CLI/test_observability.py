"""What an operator sees of each request, against `gatehouse serve` with a real backend: one access-log line
per request (method, route template, status, duration, provider, session id, request id — never a token or a
query string), a request id that is also the answer's and the upstream request's `X-Request-Id` and the
`request_id` of problem bodies, audit events (login, logout, refusals, denials) carrying it, and labelled
Prometheus series with latency histograms. Both front ends: the event-loop relay (`/v1/api`) and the router."""
from __future__ import annotations

import json
import re
import time

import pytest
import requests

from conftest import q, write_capture_provider, write_config
from stub_backend import StubBackend

TOKEN_SECRET = "captured-token-value-1234"


class Backend(StubBackend):
    """The capture provider's probe and a backend that notes each request's headers."""

    def __init__(self):
        super().__init__(answer=lambda seen: (200, {"ok": True}), probe={"id": "u-1", "email": "u1@example.test"})

    @property
    def seen(self) -> list[dict[str, str]]:
        """The header fields of every request, by lowercase name."""
        with self.lock:
            return [{name.lower(): value for name, value in s.fields.items()} for s in self.requests]


def start(serve, tmp_path, backend: Backend, extra: str = ""):
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}',
        f"backend: {{url: {q(backend.base)}}}",
        extra,
        "",
    ]))
    write_capture_provider(tmp_path, backend.base)
    return serve(tmp_path, ["--config", str(config)])


def log_records(gw) -> list[dict]:
    """The gateway's JSON log lines."""
    records = []
    for line in gw.log().splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return records


def wait_for(gw, predicate, seconds: float = 5) -> list[dict]:
    deadline = time.monotonic() + seconds
    while True:
        found = [r for r in log_records(gw) if predicate(r)]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


@pytest.fixture
def backend():
    b = Backend()
    yield b
    b.server.shutdown()


@pytest.fixture
def gateway(serve, tmp_path, backend):
    gw = start(serve, tmp_path, backend, 'logging: {format: "json"}')
    grant = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": TOKEN_SECRET}, timeout=5)
    assert grant.status_code == 201, grant.text
    return gw, grant.json()


def test_a_relayed_request_has_one_id_in_the_answer_upstream_and_its_access_log_line(gateway, backend):
    gw, grant = gateway
    token, session_id = grant["session_token"], grant["session"]["id"]
    r = requests.get(gw.url + "/v1/api/orders/7?secret=query-value", headers={"Authorization": f"Bearer {token}"}, timeout=5)
    assert r.status_code == 200
    rid = r.headers["X-Request-Id"]
    assert re.fullmatch(r"[0-9a-f]{32}", rid), rid
    assert backend.seen[-1]["x-request-id"] == rid
    lines = wait_for(gw, lambda rec: rec.get("message") == "request" and rec.get("request_id") == rid)
    assert len(lines) == 1, lines
    line = lines[0]
    assert (line["method"], line["route"], line["status"]) == ("GET", "/v1/api/**", "200")
    assert (line["provider"], line["session"]) == ("legacy", session_id)
    assert float(line["duration_ms"]) >= 0
    log = gw.log()
    assert token not in log and "query-value" not in log and TOKEN_SECRET not in log
    # Every request gets a new id.
    again = requests.get(gw.url + "/v1/api/orders/7", headers={"Authorization": f"Bearer {token}"}, timeout=5)
    assert again.headers["X-Request-Id"] != rid


def test_a_problem_carries_the_request_id_of_its_answer_and_log_line(gateway):
    gw, _ = gateway
    r = requests.get(gw.url + "/v1/session", timeout=5)
    assert r.status_code == 401
    assert r.json()["request_id"] == r.headers["X-Request-Id"]
    lines = wait_for(gw, lambda rec: rec.get("message") == "request" and rec.get("request_id") == r.headers["X-Request-Id"])
    assert [(x["route"], x["status"]) for x in lines] == [("/v1/session", "401")]
    # No route at all: still a line and an id.
    missing = requests.get(gw.url + "/nowhere", timeout=5)
    assert missing.status_code == 404 and missing.json()["request_id"] == missing.headers["X-Request-Id"]
    assert wait_for(gw, lambda rec: rec.get("request_id") == missing.headers["X-Request-Id"] and rec.get("message") == "request")


def test_a_client_cannot_choose_its_request_id(gateway, backend):
    gw, grant = gateway
    r = requests.get(gw.url + "/v1/api/x", headers={"Authorization": f"Bearer {grant['session_token']}", "X-Request-Id": "forged-id"}, timeout=5)
    assert r.status_code == 200
    assert r.headers["X-Request-Id"] != "forged-id"
    assert backend.seen[-1]["x-request-id"] == r.headers["X-Request-Id"]
    routed = requests.get(gw.url + "/v1/session", headers={"Authorization": f"Bearer {grant['session_token']}", "X-Request-Id": "forged-id"}, timeout=5)
    assert routed.headers["X-Request-Id"] != "forged-id"


def test_a_trusted_proxy_passes_its_request_id_on(serve, tmp_path, backend):
    gw = start(serve, tmp_path, backend, 'trusted_proxies: ["127.0.0.1/32"]\nlogging: {format: "json"}')
    token = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "t"}, timeout=5).json()["session_token"]
    r = requests.get(gw.url + "/v1/api/x", headers={"Authorization": f"Bearer {token}", "X-Request-Id": "lb-1234"}, timeout=5)
    assert r.headers["X-Request-Id"] == "lb-1234" and backend.seen[-1]["x-request-id"] == "lb-1234"
    # A value that is not a plain token is replaced even from a trusted proxy.
    odd = requests.get(gw.url + "/v1/api/x", headers={"Authorization": f"Bearer {token}", "X-Request-Id": "a b"}, timeout=5)
    assert odd.headers["X-Request-Id"] != "a b"


def test_audit_events_name_what_happened_with_the_request_id(serve, tmp_path, backend):
    gw = start(serve, tmp_path, backend, "\n".join([
        'logging: {format: "json"}',
        'access: {rules: [{name: "admins only", paths: ["/admin/**"], allow: [{group: "admins"}]}]}',
    ]))
    grant = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "t"}, timeout=5)
    assert grant.status_code == 201
    token, session_id = grant.json()["session_token"], grant.json()["session"]["id"]
    rid = grant.headers["X-Request-Id"]
    login = wait_for(gw, lambda rec: rec.get("event") == "login_succeeded")
    assert len(login) == 1 and login[0]["request_id"] == rid
    assert (login[0]["provider"], login[0]["session"], login[0]["subject"]) == ("legacy", session_id, "u-1")

    denied = requests.get(gw.url + "/v1/api/admin/x", headers={"Authorization": f"Bearer {token}"}, timeout=5)
    assert denied.status_code == 403
    assert wait_for(gw, lambda rec: rec.get("message") == "access denied" and rec.get("request_id") == denied.headers["X-Request-Id"])

    out = requests.delete(gw.url + "/v1/session", headers={"Authorization": f"Bearer {token}"}, timeout=5)
    assert out.status_code == 200
    logout = wait_for(gw, lambda rec: rec.get("event") == "logout")
    assert len(logout) == 1 and logout[0]["session"] == session_id and logout[0]["request_id"] == out.headers["X-Request-Id"]


def test_a_refused_login_is_an_audit_event_with_its_reason(serve, tmp_path, backend):
    gw = start(serve, tmp_path, backend, 'logging: {format: "json"}\naccess: {login: [{email_domain: "elsewhere.test"}]}')
    r = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "t"}, timeout=5)
    assert r.status_code == 403
    refused = wait_for(gw, lambda rec: rec.get("event") == "login_refused")
    assert len(refused) == 1 and refused[0]["reason"] == "access.login" and refused[0]["request_id"] == r.json()["request_id"]


def test_the_access_log_can_be_turned_off_and_the_metrics_still_count(serve, tmp_path, backend):
    gw = start(serve, tmp_path, backend, 'logging: {format: "json", access_log: false}')
    token = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "t"}, timeout=5).json()["session_token"]
    for _ in range(3):
        assert requests.get(gw.url + "/v1/api/x", headers={"Authorization": f"Bearer {token}"}, timeout=5).status_code == 200
    time.sleep(0.3)
    assert not [r for r in log_records(gw) if r.get("message") == "request"]
    metrics = requests.get(gw.url + "/metrics", timeout=5).text
    assert 'gatehouse_http_requests_total{route="/v1/api/**",method="GET",status="2xx"} 3' in metrics


def test_metrics_are_labelled_and_have_latency_histograms(gateway):
    gw, grant = gateway
    token = grant["session_token"]
    for _ in range(2):
        requests.get(gw.url + "/v1/api/x", headers={"Authorization": f"Bearer {token}"}, timeout=5)
    requests.get(gw.url + "/v1/session", timeout=5)  # 401
    requests.post(gw.url + "/v1/auth/legacy/token", json={"token": ""}, timeout=5)  # refused by the probe or the body check
    text = requests.get(gw.url + "/metrics", timeout=5).text
    assert 'gatehouse_http_requests_total{route="/v1/api/**",method="GET",status="2xx"} 2' in text
    assert 'gatehouse_http_requests_total{route="/v1/session",method="GET",status="4xx"} 1' in text
    assert re.search(r'gatehouse_http_request_duration_seconds_bucket\{route="/v1/api/\*\*",le="\+Inf"\} 2', text), text
    assert re.search(r'gatehouse_http_request_duration_seconds_count\{route="/v1/api/\*\*"\} 2', text)
    assert re.search(r'gatehouse_upstream_duration_seconds_count\{upstream="backend"\} 2', text)
    assert 'gatehouse_login_attempts_total{provider="legacy",outcome="succeeded"} 1' in text
    # Counted by the sweeper when it starts (before the sign-in) and after each sweep.
    assert re.search(r"^gatehouse_active_sessions [0-9.]+$", text, re.M), text
    # The store below the session cache: the sign-in's insert, timed.
    assert re.search(r'gatehouse_store_operation_duration_seconds_count\{operation="insert_session"\} 1\b', text), text
