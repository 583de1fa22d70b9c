"""Step-up per rule (RFC 9470): `access.rules[].require: {acr, max_age_seconds}` on both front ends.

The legacy site's probe names the user with the `acr` and `auth_time` its sign-in had (`mfa-…` tokens: a second
factor just now; `pwd-…`: a password 20 minutes ago). The same requests go through the event-loop relay (a
plain `/v1/api` call), the router (the same call with an `Origin` of the CORS list) and `/v1/authz` over
HTTP/1.1 (the relay's) and HTTP/1.0 (the router's): a session short of the rule's requirement gets 401
`step_up_required` with `WWW-Authenticate: Bearer error="insufficient_user_authentication"` naming what to sign
in again with; one that meets it passes; a session the rule's conditions refuse stays 403.
"""
from __future__ import annotations

import json
import time

import pytest
import requests

from conftest import q, write_capture_provider, write_config
from gatehouse_testkit import loopback_server
from test_hostile_requests import ORIGIN, PUBLIC, RawBackend, raw, status_of


def probe(handler):
    token = handler.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    strong = token.startswith("mfa-")
    user = {"id": token.split("-", 1)[1], "acr": "urn:example:mfa" if strong else "urn:example:pwd",
            "auth_time": int(time.time()) - (5 if strong else 1200)}
    return 200, "application/json", json.dumps(user).encode()


@pytest.fixture
def gateway(serve, tmp_path):
    backend = RawBackend()
    site = loopback_server(probe)
    url = f"http://127.0.0.1:{site.server_address[1]}"
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}',
        f"public_url: {q(PUBLIC)}",
        "backend:",
        f"  url: {q(f'http://127.0.0.1:{backend.port}/base')}",
        f"cors: {{allowed_origins: [{q(ORIGIN)}]}}",
        "access:",
        "  rules:",
        '    - {name: "payments", paths: ["/payments/**"], allow: "authenticated",'
        ' require: {acr: ["urn:example:mfa"], max_age_seconds: 300}}',
        '    - {name: "recent", paths: ["/recent/**"], allow: "authenticated", require: {max_age_seconds: 600}}',
        '    - {name: "admin", paths: ["/admin/**"], allow: [{subject: "root"}], require: {acr: ["urn:example:mfa"]}}',
        '  default: "authenticated"',
        "",
    ]))
    write_capture_provider(tmp_path, url, claims='{subject: "id"}')
    gw = serve(tmp_path, ["--config", str(config)])

    def sign_in(token: str) -> str:
        created = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": token}, timeout=5)
        assert created.status_code == 201, created.text
        return created.json()["session_token"]

    yield gw, sign_in
    backend.close()
    site.shutdown()


def api(gw, front: str, path: str, token: str) -> tuple[int, str | None, str | None]:
    head = [f"GET /v1/api{path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", f"Authorization: Bearer {token}"]
    if front == "router":
        head.append(f"Origin: {ORIGIN}")
    answer = raw(gw.port, ("\r\n".join(head) + "\r\n\r\n").encode())
    head_part, _, content = answer.partition(b"\r\n\r\n")
    fields = {line.split(":", 1)[0].strip().lower(): line.split(":", 1)[1].strip()
              for line in head_part.decode("latin-1").split("\r\n")[1:] if ":" in line}
    code = json.loads(content)["code"] if b"problem+json" in head_part else None
    return status_of(answer), code, fields.get("www-authenticate")


@pytest.mark.parametrize("front", ["relay", "router"])
def test_a_session_short_of_the_rule_is_challenged_to_step_up_and_a_strong_one_passes(gateway, front):
    gw, sign_in = gateway
    weak, strong = sign_in("pwd-alice"), sign_in("mfa-alice")

    status, code, challenge = api(gw, front, "/payments/x", weak)
    assert (status, code) == (401, "step_up_required")
    assert challenge == 'Bearer error="insufficient_user_authentication", acr_values="urn:example:mfa", max_age=300'
    assert api(gw, front, "/payments/x", strong)[0] == 200

    # Too old for max_age alone: the challenge names only max_age.
    status, code, challenge = api(gw, front, "/recent/x", weak)
    assert (status, code, challenge) == (401, "step_up_required", 'Bearer error="insufficient_user_authentication", max_age=600')
    assert api(gw, front, "/recent/x", strong)[0] == 200
    # Paths without require: any session.
    assert api(gw, front, "/other", weak)[0] == 200


@pytest.mark.parametrize("front", ["relay", "router"])
def test_who_may_is_decided_before_how_strongly(gateway, front):
    gw, sign_in = gateway
    assert api(gw, front, "/admin/x", sign_in("mfa-alice"))[:2] == (403, "access_denied")
    assert api(gw, front, "/admin/x", sign_in("pwd-root"))[:2] == (401, "step_up_required")
    assert api(gw, front, "/admin/x", sign_in("mfa-root"))[0] == 200


@pytest.mark.parametrize("version", ["1.1", "1.0"])
def test_forward_auth_answers_the_same_challenge(gateway, version):
    gw, sign_in = gateway
    for token, expected in ((sign_in("pwd-alice"), 401), (sign_in("mfa-alice"), 200)):
        head = [f"GET /v1/authz HTTP/{version}", "Host: 127.0.0.1", "Connection: close", f"Authorization: Bearer {token}",
                "X-Forwarded-Method: GET", "X-Forwarded-Uri: /payments/x", "X-Forwarded-Proto: https",
                "X-Forwarded-Host: gate.example.test"]
        answer = raw(gw.port, ("\r\n".join(head) + "\r\n\r\n").encode())
        assert status_of(answer) == expected, answer[:400]
        if expected == 401:
            head_part, _, content = answer.partition(b"\r\n\r\n")
            assert json.loads(content)["code"] == "step_up_required"
            assert b'error="insufficient_user_authentication", acr_values="urn:example:mfa", max_age=300' in head_part


def test_the_id_tokens_acr_and_auth_time_decide_at_an_oidc_login(serve, tmp_path):
    """The recorded ID token claims of a real OpenID Connect login (a provider run here), not a kind's answer."""
    from conftest import free_port
    from oidc_provider import NATIVE_REDIRECT_URI, OpenIDProvider, sign_in as oidc_sign_in, write_provider_file

    provider, backend = OpenIDProvider(), RawBackend()
    try:
        port = free_port()
        config = write_config(tmp_path, "\n".join([
            f"public_url: {q(f'http://127.0.0.1:{port}')}",
            'store: {kind: "memory"}',
            f"allowed_redirect_uris: [{q(NATIVE_REDIRECT_URI)}]",
            "backend:",
            f"  url: {q(f'http://127.0.0.1:{backend.port}/base')}",
            "access:",
            "  rules:",
            '    - {name: "payments", paths: ["/payments/**"], allow: "authenticated",'
            ' require: {acr: ["urn:example:mfa"], max_age_seconds: 300}}',
            "",
        ]))
        write_provider_file(tmp_path / "Providers", "idp", provider, backchannel_logout=None)
        gw = serve(tmp_path, ["--config", str(config)], port=port)
        now = int(time.time())
        strong = oidc_sign_in(gw.url, "idp", provider, sub="alice", acr="urn:example:mfa", auth_time=now - 10)["session_token"]
        stale = oidc_sign_in(gw.url, "idp", provider, sub="alice", acr="urn:example:mfa", auth_time=now - 3600)["session_token"]
        weak = oidc_sign_in(gw.url, "idp", provider, sub="alice", acr="urn:example:pwd", auth_time=now - 10)["session_token"]
        for front in ("relay", "router"):
            assert api(gw, front, "/payments/x", strong)[0] == 200
            assert api(gw, front, "/payments/x", stale)[:2] == (401, "step_up_required"), "auth_time older than max_age"
            assert api(gw, front, "/payments/x", weak)[:2] == (401, "step_up_required"), "another acr"
    finally:
        provider.close()
        backend.close()
