"""Opaque provider-issued bearer tokens against django-oauth-toolkit's real RFC 7662 introspection endpoint.

A gateway of its own (provider `dotbearer`, kind oauth2, `bearer_tokens.accept` with DOT's `/o/introspect/`
reached through a counting pass-through, the client authenticated with `client_secret_basic` as at the token
endpoint) in front of the echo backend. Access tokens are issued by DOT to the interop client (authorization code
+ PKCE, driven like a browser), then presented as `Authorization: Bearer` by a "machine client":

- active: the backend sees DOT's `username` as the subject, no token, and an assertion with `"via":"bearer"`;
- revoked at DOT (RFC 7009), and unknown: 401 `invalid_token`;
- fifty calls with one token: at most one introspection;
- the introspection endpoint down: 503 `provider_unavailable` with `Retry-After`;
- a Gatehouse session token (`gths_…`, from provider `dotbearercap`, kind capture) that has ended: 401
  `invalid_session`, and DOT's introspection endpoint is never asked about it.
"""
from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlencode, urlsplit

import pytest
import requests

from conftest import _run_gateway, _write_main_config, _write_secret, _q, _require_binary
from interop_support import TIMEOUT, dot_sign_in, free_port, pkce_pair, query_of

PROVIDER = "dotbearer"
#: A capture provider on the same gateway, only to make Gatehouse sessions (`POST /v1/auth/{id}/token`).
SESSIONS = "dotbearercap"


class CountingPassThrough:
    """Forwards POSTs to `target` and counts them; `down` makes it drop each connection without an answer."""

    def __init__(self, target: str):
        self.calls = 0
        self.down = False
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                outer.calls += 1
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if outer.down:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type", "accept")}
                answer = requests.post(target, data=body, headers=headers, timeout=TIMEOUT)
                self.send_response(answer.status_code)
                self.send_header("Content-Type", answer.headers.get("Content-Type", "application/json"))
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/introspect"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def introspection(dot_server):
    proxy = CountingPassThrough(dot_server.url + "/o/introspect/")
    yield proxy
    proxy.server.shutdown()


@pytest.fixture(scope="module")
def bearer_gateway(interop_tmp, dot_server, echo_backend, introspection, capture_probe):
    binary = _require_binary()
    root = interop_tmp / "bearer-gateway"
    root.mkdir()
    port = free_port()
    providers = _write_main_config(root, port, echo_backend)
    secret_file = _write_secret(root, "dotbearer-client-secret", dot_server.client_secret)
    (providers / f"{PROVIDER}.yaml").write_text(f"""id: {_q(PROVIDER)}
kind: "oauth2"
authorization_endpoint: {_q(dot_server.url + "/o/authorize/")}
token_endpoint: {_q(dot_server.url + "/o/token/")}
client_id: {_q(dot_server.client_id)}
client_secret_file: {_q(str(secret_file))}
token_endpoint_auth_method: "client_secret_basic"
scopes: ["read"]
bearer_tokens:
  accept: true
  audiences: ["interop-backend"]
  required_scopes: ["read"]
  introspection_endpoint: {_q(introspection.url)}
""")
    (providers / f"{SESSIONS}.yaml").write_text(f"""id: {_q(SESSIONS)}
kind: "capture"
login_url: {_q(capture_probe + "/login")}
allowed_origins: [{_q(capture_probe)}]
success_url: {_q(capture_probe + "/welcome*")}
probe: {{url: {_q(capture_probe + "/me")}, auth: "bearer"}}
claims: {{subject: "id", email: "email"}}
""")
    yield from _run_gateway(binary, root / "gatehouse.yaml", interop_tmp / "bearer-gateway.log", port, root, PROVIDER)


def issue_token(dot_server) -> str:
    """An access token DOT issues to the interop client for alice (authorization code + PKCE)."""
    verifier, challenge = pkce_pair()
    authorize = dot_server.url + "/o/authorize/?" + urlencode({
        "response_type": "code", "client_id": dot_server.client_id, "redirect_uri": dot_server.redirect_uri, "scope": "read",
        "state": "s", "code_challenge": challenge, "code_challenge_method": "S256",
    })
    redirect = dot_sign_in(requests.Session(), authorize, dot_server.username, dot_server.password)
    code = query_of(redirect.headers["Location"])["code"]
    basic = base64.b64encode(f"{dot_server.client_id}:{dot_server.client_secret}".encode()).decode()
    answer = requests.post(dot_server.url + "/o/token/", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": dot_server.redirect_uri, "code_verifier": verifier,
    }, headers={"Authorization": f"Basic {basic}"}, timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    return answer.json()["access_token"]


def api(gateway, token: str, path: str = "/v1/api/reports") -> requests.Response:
    return requests.get(gateway.url + path, headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT)


def assertion_claims(value: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(value.split(".")[1] + "=="))


def test_an_active_dot_token_reaches_the_backend_as_its_user(bearer_gateway, dot_server):
    token = issue_token(dot_server)
    answer = api(bearer_gateway, token)
    assert answer.status_code == 200, answer.text
    seen = answer.json()["headers"]
    assert seen["x-gatehouse-provider"] == [PROVIDER]
    assert seen["x-gatehouse-subject"] == [dot_server.username]
    assert "authorization" not in seen and token not in json.dumps(answer.json())
    claims = assertion_claims(seen["x-gatehouse-assertion"][0])
    assert claims["via"] == "bearer" and "sid" not in claims


def test_fifty_calls_with_one_token_cost_at_most_one_introspection(bearer_gateway, dot_server, introspection):
    token = issue_token(dot_server)
    before = introspection.calls
    for i in range(50):
        assert api(bearer_gateway, token, f"/v1/api/x{i}").status_code == 200
    assert introspection.calls - before <= 1


def test_a_revoked_dot_token_is_refused(bearer_gateway, dot_server):
    token = issue_token(dot_server)
    basic = base64.b64encode(f"{dot_server.client_id}:{dot_server.client_secret}".encode()).decode()
    revoked = requests.post(dot_server.url + "/o/revoke_token/", data={"token": token, "token_type_hint": "access_token"},
                            headers={"Authorization": f"Basic {basic}"}, timeout=TIMEOUT)
    assert revoked.status_code == 200, revoked.text
    answer = api(bearer_gateway, token)
    assert answer.status_code == 401, answer.text
    assert answer.json()["code"] == "invalid_token"
    assert answer.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'


def test_an_unknown_token_is_refused(bearer_gateway):
    answer = api(bearer_gateway, "AbCdEfGhIjKlMnOpQrStUvWxYz0123")
    assert answer.status_code == 401 and answer.json()["code"] == "invalid_token", answer.text


def test_the_introspection_endpoint_down_is_503(bearer_gateway, dot_server, introspection):
    token = issue_token(dot_server)
    introspection.down = True
    try:
        answer = api(bearer_gateway, token)
        assert answer.status_code == 503, answer.text
        assert answer.json()["code"] == "provider_unavailable"
        assert int(answer.headers["Retry-After"]) > 0
    finally:
        introspection.down = False
    # Nothing was cached: the same token works once the endpoint is back.
    assert api(bearer_gateway, token).status_code == 200


def test_an_ended_session_token_is_never_sent_to_dots_introspection(bearer_gateway, introspection):
    created = requests.post(bearer_gateway.url + f"/v1/auth/{SESSIONS}/token", json={"token": "cap-alice"}, timeout=TIMEOUT)
    assert created.status_code == 201, created.text
    token = created.json()["session_token"]
    assert token.startswith("gths_")
    assert api(bearer_gateway, token).status_code == 200
    ended = requests.delete(bearer_gateway.url + "/v1/session", headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT)
    assert ended.status_code == 200, ended.text
    before = introspection.calls
    for _ in range(3):
        answer = api(bearer_gateway, token)
        assert answer.status_code == 401 and answer.json()["code"] == "invalid_session", answer.text
    assert introspection.calls == before, "an ended Gatehouse session token reached DOT's introspection endpoint"
    # The count is live: an unknown value without the prefix is asked about.
    assert api(bearer_gateway, "AbCdEfGhIjKlMnOpQrStUvWxYz0124").status_code == 401
    assert introspection.calls == before + 1
