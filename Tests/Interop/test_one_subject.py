"""One person, one subject, and a provider file's endpoints over discovery, against django-oauth-toolkit's
OpenID Connect provider.

alice signs in through the gateway's browser login (`dotoidc`, kind oidc): her subject is DOT's `sub` (her user
id) with her email. The same alice then presents an opaque access token DOT issued for the same client as a
"machine client" (`Authorization: Bearer`): DOT's RFC 7662 introspection answer has no `sub` (only `username`),
so the gateway asks DOT's userinfo endpoint with the token, as at a sign-in. The backend must see the same
`X-Gatehouse-Subject` and email both ways, and an access rule written for her email must let both in.

DOT's discovery document lists no `revocation_endpoint`; the provider file names DOT's, and a sign-out must
revoke there (the grant's refresh token revoked at DOT).
"""
from __future__ import annotations

import base64

import pytest
import requests

from conftest import OIDC_PROVIDER_ID, _q, _require_binary, _run_gateway, _write_main_config, _write_secret
from interop_support import TIMEOUT, dot_sign_in, free_port, pkce_pair, query_of
from test_dot_interop import bearer, exchange
from test_dot_oidc import oidc_login
from urllib.parse import urlencode


@pytest.fixture(scope="module")
def subject_gateway(interop_tmp, dot_server, echo_backend):
    binary = _require_binary()
    root = interop_tmp / "one-subject-gateway"
    root.mkdir()
    # DOT takes a loopback callback on any port (RFC 8252 §7.3): the OIDC client's registration fits this port too.
    port = free_port()
    providers = _write_main_config(root, port, echo_backend)
    with open(root / "gatehouse.yaml", "a") as config:
        config.write('access:\n  rules:\n    - {name: "alice", paths: ["/alice/**"], allow: [{email: ' + _q(dot_server.email) + '}]}\n')
    secret_file = _write_secret(root, "dotoidc-client-secret", dot_server.oidc_client_secret)
    (providers / f"{OIDC_PROVIDER_ID}.yaml").write_text(f"""id: {_q(OIDC_PROVIDER_ID)}
kind: "oidc"
issuer: {_q(dot_server.issuer)}
client_id: {_q(dot_server.oidc_client_id)}
client_secret_file: {_q(str(secret_file))}
revocation_endpoint: {_q(dot_server.url + "/o/revoke_token/")}
bearer_tokens:
  accept: true
  audiences: ["interop-backend"]
  introspection_endpoint: {_q(dot_server.url + "/o/introspect/")}
""")
    yield from _run_gateway(binary, root / "gatehouse.yaml", interop_tmp / "one-subject-gateway.log", port, root, OIDC_PROVIDER_ID)


def dot_access_token(dot, gateway) -> str:
    """An opaque access token DOT issues to the OIDC client for alice (authorization code + PKCE, like a browser)."""
    verifier, challenge = pkce_pair()
    redirect_uri = f"{gateway.url}/v1/auth/{OIDC_PROVIDER_ID}/callback"
    authorize = dot.url + "/o/authorize/?" + urlencode({
        "response_type": "code", "client_id": dot.oidc_client_id, "redirect_uri": redirect_uri, "scope": "openid email profile",
        "state": "s", "code_challenge": challenge, "code_challenge_method": "S256",
    })
    redirect = dot_sign_in(requests.Session(), authorize, dot.username, dot.password)
    code = query_of(redirect.headers["Location"])["code"]
    basic = base64.b64encode(f"{dot.oidc_client_id}:{dot.oidc_client_secret}".encode()).decode()
    answer = requests.post(dot.url + "/o/token/", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri, "code_verifier": verifier,
    }, headers={"Authorization": f"Basic {basic}"}, timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    token = answer.json()["access_token"]
    assert token.count(".") != 2, "DOT's access tokens are opaque: this test is about introspection"
    return token


def seen_by_backend(gateway, token: str, path: str) -> dict:
    answer = requests.get(gateway.url + "/v1/api" + path, headers=bearer(token), timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    return answer.json()["headers"]


def test_a_browser_session_and_an_introspected_token_are_the_same_subject(subject_gateway, dot_server):
    session = exchange(subject_gateway, oidc_login(subject_gateway, dot_server))
    assert session.status_code == 201, session.text
    by_login = seen_by_backend(subject_gateway, session.json()["session_token"], "/alice/x")

    # DOT's own introspection answer for the token names no `sub`: the case this is about.
    token = dot_access_token(dot_server, subject_gateway)
    basic = base64.b64encode(f"{dot_server.oidc_client_id}:{dot_server.oidc_client_secret}".encode()).decode()
    introspected = requests.post(dot_server.url + "/o/introspect/", data={"token": token},
                                 headers={"Authorization": f"Basic {basic}"}, timeout=TIMEOUT).json()
    assert introspected["active"] and "sub" not in introspected and introspected.get("username") == dot_server.username

    by_token = seen_by_backend(subject_gateway, token, "/alice/x")
    assert by_login["x-gatehouse-subject"] == by_token["x-gatehouse-subject"], (by_login, by_token)
    assert by_login["x-gatehouse-subject"] != [dot_server.username], "the login's subject is DOT's sub, not the username"
    assert by_login["x-gatehouse-email"] == by_token["x-gatehouse-email"] == [dot_server.email]
    assert by_login["x-gatehouse-provider"] == by_token["x-gatehouse-provider"] == [OIDC_PROVIDER_ID]


def test_a_revocation_endpoint_in_the_provider_file_wins_where_discovery_lists_none(subject_gateway, dot_server):
    assert "revocation_endpoint" not in requests.get(dot_server.issuer + "/.well-known/openid-configuration", timeout=TIMEOUT).json()
    rt0, _ = dot_server.db.max_ids()
    session = exchange(subject_gateway, oidc_login(subject_gateway, dot_server))
    assert session.status_code == 201, session.text
    (refresh,) = dot_server.db.refresh_tokens(rt0)
    assert refresh["revoked"] is None
    ended = requests.delete(subject_gateway.url + "/v1/session", headers=bearer(session.json()["session_token"]), timeout=TIMEOUT)
    assert ended.status_code == 200, ended.text
    assert ended.json()["provider_logout"] == "revoked", ended.json()
    assert dot_server.db.refresh_tokens(rt0)[0]["revoked"] is not None, "DOT still holds the grant"
