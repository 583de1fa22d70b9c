"""Claims to headers: `identity_headers: {claims: {"X-Header": "claim"}}` on `backend` and on an upstream.

The legacy site's probe names the user with extra claims (a string, a list, one with a line break). The same
call goes through the event-loop relay (a plain `/v1/api` call), through the router (the same call with an
`Origin` of the CORS list, which the relay leaves to it) and as a `/v1/authz` question over HTTP/1.1 (the
relay's) and HTTP/1.0 (the router's): every one must carry the same claim fields, and a client's own copy
of such a field must never reach the backend, with or without a session.
"""
from __future__ import annotations

import json

import pytest
import requests

from conftest import q, write_capture_provider, write_config
from gatehouse_testkit import loopback_server
from test_hostile_requests import ORIGIN, PUBLIC, RawBackend, raw, status_of

USER = {"id": "alice", "email": "alice@example.test", "department": "R&D", "roles": ["admin", "ops"],
        "motto": "line one\r\nX-Injected: yes", "tenant_id": "t-42"}


@pytest.fixture
def gateway(serve, tmp_path):
    backend, other = RawBackend(), RawBackend()
    probe = loopback_server(lambda handler: (200, "application/json", json.dumps(USER).encode()))
    site = f"http://127.0.0.1:{probe.server_address[1]}"
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}',
        f"public_url: {q(PUBLIC)}",
        "backend:",
        f"  url: {q(f'http://127.0.0.1:{backend.port}/base')}",
        '  identity_headers: {claims: {"X-User-Department": "department", "X-Roles": "roles", "X-Motto": "motto",'
        ' "X-Missing": "no_such_claim"}}',
        "upstreams:",
        f'  - {{name: "tenants", prefix: "/tenants", url: {q(f"http://127.0.0.1:{other.port}/base")},'
        ' identity_headers: {claims: {"X-Tenant": "tenant_id"}}}',
        f"cors: {{allowed_origins: [{q(ORIGIN)}]}}",
        "access:",
        "  rules:",
        '    - {name: "public", paths: ["/public/**"], allow: "anyone"}',
        '  default: "authenticated"',
        "",
    ]))
    write_capture_provider(tmp_path, site)
    gw = serve(tmp_path, ["--config", str(config)])
    token = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "t"}, timeout=5).json()["session_token"]
    yield gw, token
    backend.close()
    other.close()
    probe.shutdown()


def upstream_headers(gw, path: str, fields: dict[str, str]) -> dict[str, list[str]]:
    head = [f"GET /v1/api{path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *[f"{k}: {v}" for k, v in fields.items()]]
    answer = raw(gw.port, ("\r\n".join(head) + "\r\n\r\n").encode())
    assert status_of(answer) == 200, answer[:400]
    return json.loads(answer.partition(b"\r\n\r\n")[2])["headers"]


SPOOFED = {"X-User-Department": "Board", "x-roles": "root", "X-Tenant": "t-1", "X-Missing": "forged"}


@pytest.mark.parametrize("front", ["relay", "router"])
def test_the_backend_gets_the_named_claims_and_never_the_clients_copies(gateway, front):
    gw, token = gateway
    fields = {"Authorization": f"Bearer {token}", **SPOOFED}
    if front == "router":
        fields["Origin"] = ORIGIN
    seen = upstream_headers(gw, "/app/x", fields)
    assert seen["x-gatehouse-subject"] == ["alice"]
    assert seen["x-user-department"] == ["R&D"]
    assert seen["x-roles"] == ["admin,ops"], "a list claim is one field, joined with ','"
    # A line break in a claim can never make a field of its own: it becomes spaces, as in the identity fields.
    assert seen["x-motto"] == ["line one  X-Injected: yes"]
    assert "x-injected" not in seen
    assert "x-missing" not in seen, "a claim the session lacks sends no field, and the client's copy is dropped"
    assert "x-tenant" not in seen, "another upstream's claim field: the client's copy is dropped here too"

    # The upstream with its own claims: only those.
    seen = upstream_headers(gw, "/tenants/x", fields)
    assert seen["x-tenant"] == ["t-42"]
    for name in ("x-user-department", "x-roles", "x-missing"):
        assert name not in seen, f"the client's {name} reached an upstream that gets no such claim: another upstream does"


@pytest.mark.parametrize("front", ["relay", "router"])
def test_a_public_path_without_a_session_never_passes_the_clients_claim_fields(gateway, front):
    gw, _ = gateway
    fields = dict(SPOOFED)
    if front == "router":
        fields["Origin"] = ORIGIN
    seen = upstream_headers(gw, "/public/x", fields)
    assert "x-gatehouse-subject" not in seen
    for name in ("x-user-department", "x-roles", "x-missing"):
        assert name not in seen, f"the client's {name} reached the backend"


@pytest.mark.parametrize("version", ["1.1", "1.0"])
def test_forward_auth_answers_the_claim_fields_on_both_front_ends(gateway, version):
    gw, token = gateway
    head = [f"GET /v1/authz HTTP/{version}", "Host: 127.0.0.1", "Connection: close", f"Authorization: Bearer {token}",
            "X-Forwarded-Method: GET", "X-Forwarded-Uri: /app/x", "X-Forwarded-Proto: https", "X-Forwarded-Host: gate.example.test"]
    answer = raw(gw.port, ("\r\n".join(head) + "\r\n\r\n").encode())
    assert status_of(answer) == 200, answer[:400]
    fields: dict[str, list[str]] = {}
    for line in answer.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        fields.setdefault(name.strip().lower(), []).append(value.strip())
    assert fields["x-user-department"] == ["R&D"]
    assert fields["x-roles"] == ["admin,ops"]
    assert fields["x-motto"] == ["line one  X-Injected: yes"]
    # Every named field is in the answer, empty when the session lacks the claim (a proxy copying it sends nothing).
    assert fields["x-missing"] == [""]
