"""Machine clients with provider-issued bearer tokens (`bearer_tokens:` in an `oidc` provider file), over real
sockets against `gatehouse serve`:

- an issuer served here on loopback (discovery, a JWKS with an ES256 and an RS256 key, an RFC 7662 introspection
  endpoint that checks the client's Basic credentials), JWTs minted here with PyJWT;
- every refusal as its own test (401 `invalid_token` with `WWW-Authenticate: Bearer error="invalid_token"`), on
  both front ends (the event-loop relay, and the router, reached by sending `Origin`);
- identity headers and an assertion with `"via":"bearer"` and no `sid` at a recording backend; the token itself
  never reaches it;
- `/v1/authz` with a provider token; `/v1/session` and `/v1/proxy` refusing one (`invalid_session`);
- nothing written to the SQLite store; the verdict cache (JWKS and introspection calls counted);
- opaque tokens (active, inactive, unknown, the endpoint down → 503 `provider_unavailable`);
- hostile cases of test_hostile_requests.py with a provider token in place of a session.

Opaque tokens against a real authorization server (django-oauth-toolkit) are in
Tests/Interop/test_dot_bearer_tokens.py.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import signal
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from conftest import q, write_capture_provider, write_config, write_provider
from gatehouse_testkit import wait_until
from test_decision_parity import authz, counters, send
from test_hostile_requests import FRONT_ENDS, ORIGIN, PUBLIC, RawBackend, get, probe_server, problem_code, raw, status_of

AUDIENCE = "https://api.example.test"
CLIENT_SECRET = "issuer-client-secret"


# --- the issuer ---------------------------------------------------------------------------------

class Issuer:
    """An OpenID provider on loopback: discovery, a JWKS (ES256 `ec1`, RS256 `rsa1`), RFC 7662 introspection
    of the opaque tokens in `active` (Basic `gatehouse:CLIENT_SECRET` required). Counts what it is asked."""

    def __init__(self):
        self.ec_key = ec.generate_private_key(ec.SECP256R1())
        self.rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.active: dict[str, dict] = {}
        self.calls = {"discovery": 0, "jwks": 0, "introspect": 0}
        self.introspection_down = False
        self.lock = threading.Lock()
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status: int, body: dict):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path == "/.well-known/openid-configuration":
                    issuer.count("discovery")
                    self._send(200, {
                        "issuer": issuer.url, "authorization_endpoint": issuer.url + "/authorize",
                        "token_endpoint": issuer.url + "/token", "jwks_uri": issuer.url + "/jwks",
                        "introspection_endpoint": issuer.url + "/introspect",
                    })
                elif self.path == "/jwks":
                    issuer.count("jwks")
                    self._send(200, {"keys": issuer.jwks()})
                else:
                    self._send(404, {})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                form = dict(p.split("=", 1) for p in self.rfile.read(length).decode().split("&") if "=" in p)
                if self.path != "/introspect":
                    self._send(404, {})
                    return
                issuer.count("introspect")
                if issuer.introspection_down:
                    self._send(503, {})
                    return
                expected = "Basic " + base64.b64encode(f"gatehouse:{CLIENT_SECRET}".encode()).decode()
                if self.headers.get("Authorization") != expected:
                    self._send(401, {"error": "invalid_client"})
                    return
                token = requests.utils.unquote(form.get("token", ""))
                answer = issuer.active.get(token)
                self._send(200, {"active": True, **answer} if answer else {"active": False})

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def count(self, name: str):
        with self.lock:
            self.calls[name] += 1

    def jwks(self) -> list[dict]:
        ec_jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.ec_key.public_key()))
        rsa_jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.rsa_key.public_key()))
        return [{**ec_jwk, "kid": "ec1", "alg": "ES256", "use": "sig"}, {**rsa_jwk, "kid": "rsa1", "alg": "RS256", "use": "sig"}]

    def claims(self, **changes) -> dict:
        now = int(time.time())
        claims = {"iss": self.url, "sub": "svc-reports", "aud": [AUDIENCE], "exp": now + 300, "iat": now,
                  "scope": "api reports", "client_id": "reports-job", "email": "reports@example.test"}
        for name, value in changes.items():
            if value is None:
                claims.pop(name, None)
            else:
                claims[name] = value
        return claims

    def token(self, alg: str = "ES256", typ: str | None = "at+jwt", key=None, **changes) -> str:
        headers = {"kid": "ec1" if alg.startswith("ES") else "rsa1"}
        if typ is not None:
            headers["typ"] = typ
        key = key or (self.ec_key if alg.startswith("ES") else self.rsa_key)
        token = jwt.encode(self.claims(**changes), key, algorithm=alg, headers=headers)
        if typ is None:  # PyJWT adds typ JWT unless told otherwise: take it out again
            head, rest = token.split(".", 1)
            header = json.loads(base64.urlsafe_b64decode(head + "=="))
            header.pop("typ", None)
            token = b64url(json.dumps(header).encode()) + "." + rest
            token = resign(token, key, alg)
        return token

    def close(self):
        self.server.shutdown()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def resign(token: str, key, alg: str) -> str:
    """`token`'s header and payload signed again (after its header was edited)."""
    head, payload, _ = token.split(".")
    algorithm = jwt.get_algorithm_by_name(alg)
    signature = algorithm.sign(f"{head}.{payload}".encode(), algorithm.prepare_key(key))
    return f"{head}.{payload}.{b64url(signature)}"


def unsigned(claims: dict, header: dict) -> str:
    return b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode()) + "."


# --- the gateway --------------------------------------------------------------------------------

def oidc_provider(issuer: Issuer, extra: list[str] | None = None) -> str:
    return "\n".join([
        'id: "idp"', 'kind: "oidc"', f"issuer: {q(issuer.url)}", 'client_id: "gatehouse"', 'client_secret: "${IDP_SECRET}"',
        "claims: {groups: \"roles\"}",
        "bearer_tokens:", "  accept: true", f"  audiences: [{q(AUDIENCE)}]", '  required_scopes: ["api"]', *(extra or []), "",
    ])


@pytest.fixture
def issuer():
    server = Issuer()
    yield server
    server.close()


@pytest.fixture
def setup(serve, tmp_path, issuer):
    backend, probe = RawBackend(), probe_server()
    site = f"http://127.0.0.1:{probe.server_address[1]}"
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "sqlite", path: "data/g.sqlite3"}',
        f"public_url: {q(PUBLIC)}",
        "backend:",
        f"  url: {q(f'http://127.0.0.1:{backend.port}/base')}",
        f"cors: {{allowed_origins: [{q(ORIGIN)}]}}",
        "access:",
        "  rules:",
        '    - {name: "public", paths: ["/public/**"], allow: "anyone"}',
        '    - {name: "admin", paths: ["/admin/**"], methods: ["GET"], allow: [{subject: "admin"}]}',
        '    - {name: "reports", paths: ["/reports/**"], allow: [{provider: "idp", claim: {client_id: "reports-job"}}]}',
        '    - {name: "app", paths: ["/**"], allow: "authenticated"}',
        "",
    ]))
    write_provider(tmp_path, "idp", oidc_provider(issuer))
    write_capture_provider(tmp_path, site, extra=[f"api: {{url: {q(f'http://127.0.0.1:{backend.port}/papi')}}}"])
    gw = serve(tmp_path, ["--config", str(config)], env={"IDP_SECRET": CLIENT_SECRET})
    yield gw, backend, tmp_path / "data" / "g.sqlite3"
    backend.close()
    probe.shutdown()


def call(gw, path: str, token: str, front: str = "relay", method: str = "GET", **extra) -> requests.Response:
    headers = {"Authorization": f"Bearer {token}", **FRONT_ENDS[front], **extra}
    return requests.request(method, gw.url + path, headers=headers, timeout=10)


def backend_saw(answer: requests.Response) -> dict:
    return answer.json()["headers"]


def assertion_claims(value: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(value.split(".")[1] + "=="))


def rows(database: Path) -> dict[str, int]:
    """Every table's row count."""
    with sqlite3.connect(database) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: db.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}


def assert_refused(answer: requests.Response, where=None):
    assert answer.status_code == 401, (where, answer.status_code, answer.text)
    assert answer.json()["code"] == "invalid_token", (where, answer.text)
    assert answer.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"', (where, answer.headers)


# --- accepted tokens ----------------------------------------------------------------------------

@pytest.mark.parametrize("alg", ["ES256", "RS256"])
@pytest.mark.parametrize("front", ["relay", "router"])
def test_a_verified_jwt_reaches_the_backend_as_its_identity_with_a_bearer_assertion(setup, issuer, alg, front):
    gw, backend, _ = setup
    token = issuer.token(alg, roles=["ops", "reports"])
    answer = call(gw, "/v1/api/orders?x=1", token, front)
    assert answer.status_code == 200, answer.text
    seen = backend_saw(answer)
    assert answer.json()["target"] == "/base/orders?x=1"
    assert seen["x-gatehouse-provider"] == ["idp"]
    assert seen["x-gatehouse-subject"] == ["svc-reports"]
    assert seen["x-gatehouse-email"] == ["reports@example.test"]
    assert seen["x-gatehouse-groups"] == ["ops,reports"]
    assert "authorization" not in seen and "x-gatehouse-access-token" not in seen
    assert token not in json.dumps(answer.json()), "the provider token reached the backend"
    claims = assertion_claims(seen["x-gatehouse-assertion"][0])
    assert claims["via"] == "bearer" and "sid" not in claims
    assert claims["sub"] == "svc-reports" and claims["provider"] == "idp" and claims["iss"] == PUBLIC
    # The assertion verifies with the gateway's published keys.
    keys = jwt.PyJWKSet.from_dict(requests.get(gw.url + "/.well-known/jwks.json", timeout=5).json())
    jwt.decode(seen["x-gatehouse-assertion"][0], keys.keys[0].key, algorithms=["ES256"], options={"verify_aud": False})


def test_the_log_names_a_hash_of_the_token_never_the_token(setup, issuer):
    gw, _, _ = setup
    token, refused = issuer.token(), issuer.token(aud="x")
    for front in FRONT_ENDS:
        assert call(gw, "/v1/api/x", token, front).status_code == 200
        assert call(gw, "/v1/api/x", refused, front).status_code == 401
    expected = "bearer-" + hashlib.sha256(token.encode()).hexdigest()[:16]
    assert wait_until(lambda: expected in gw.log(), 5), gw.log()[-2000:]
    for secret in (token, refused, token.split(".")[2], refused.split(".")[2]):
        assert secret not in gw.log()


def test_a_plain_jwt_typ_and_a_client_credentials_token_without_sub_are_accepted(setup, issuer):
    gw, _, _ = setup
    answer = call(gw, "/v1/api/x", issuer.token(typ="JWT", sub=None, email=None))
    assert answer.status_code == 200, answer.text
    assert backend_saw(answer)["x-gatehouse-subject"] == ["reports-job"]


def test_access_rules_judge_the_token_identity(setup, issuer):
    gw, _, _ = setup
    for front in FRONT_ENDS:
        assert call(gw, "/v1/api/reports/daily", issuer.token(), front).status_code == 200
        other = call(gw, "/v1/api/reports/daily", issuer.token(client_id="other-job"), front)
        assert other.status_code == 403 and other.json()["code"] == "access_denied", (front, other.text)
        assert call(gw, "/v1/api/admin/x", issuer.token(), front).status_code == 403
        assert call(gw, "/v1/api/admin/x", issuer.token(sub="admin"), front).status_code == 200


def test_nothing_is_written_to_the_store(setup, issuer):
    gw, _, database = setup
    before = rows(database)
    for i in range(5):
        for front in FRONT_ENDS:
            assert call(gw, f"/v1/api/x{i}", issuer.token(sub=f"svc-{i}"), front).status_code == 200
    authz = requests.get(gw.url + "/v1/authz", headers={"Authorization": f"Bearer {issuer.token()}", "X-Forwarded-Uri": "/x"}, timeout=5)
    assert authz.status_code == 200
    assert rows(database) == before


def test_forward_auth_answers_a_provider_token_with_its_identity(setup, issuer):
    gw, backend, _ = setup
    token = issuer.token(roles=["ops"])
    for _ in range(2):  # the second from the cached verdict (the relay's own answer)
        answer = requests.get(gw.url + "/v1/authz", headers={"Authorization": f"Bearer {token}", "X-Forwarded-Uri": "/reports/x",
                                                             "X-Forwarded-Method": "GET"}, timeout=5)
        assert answer.status_code == 200, answer.text
        assert answer.headers["X-Gatehouse-Provider"] == "idp"
        assert answer.headers["X-Gatehouse-Subject"] == "svc-reports"
        assert answer.headers["X-Gatehouse-Groups"] == "ops"
        claims = assertion_claims(answer.headers["X-Gatehouse-Assertion"])
        assert claims["via"] == "bearer" and "sid" not in claims
    refused = requests.get(gw.url + "/v1/authz", headers={"Authorization": f"Bearer {issuer.token(aud='other')}", "X-Forwarded-Uri": "/x"},
                           timeout=5)
    assert_refused(refused, "authz")
    denied = requests.get(gw.url + "/v1/authz", headers={"Authorization": f"Bearer {issuer.token(client_id='x')}",
                                                         "X-Forwarded-Uri": "/reports/x"}, timeout=5)
    assert denied.status_code == 403


def test_the_token_reaches_the_backend_only_with_forward_access_token(serve, tmp_path, issuer):
    backend = RawBackend()
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}', f"public_url: {q(PUBLIC)}", f"cors: {{allowed_origins: [{q(ORIGIN)}]}}",
        "backend:", f"  url: {q(f'http://127.0.0.1:{backend.port}/base')}", "  forward_access_token: true", "",
    ]))
    write_provider(tmp_path, "idp", oidc_provider(issuer))
    gw = serve(tmp_path, ["--config", str(config)], env={"IDP_SECRET": CLIENT_SECRET})
    token = issuer.token()
    try:
        for front in FRONT_ENDS:
            answer = call(gw, "/v1/api/x", token, front)
            assert answer.status_code == 200, (front, answer.text)
            seen = backend_saw(answer)
            assert seen["x-gatehouse-access-token"] == [token], front
            assert "authorization" not in seen
        authz = requests.get(gw.url + "/v1/authz", headers={"Authorization": f"Bearer {token}", "X-Forwarded-Uri": "/x"}, timeout=5)
        assert authz.status_code == 200 and authz.headers["X-Gatehouse-Access-Token"] == token
    finally:
        backend.close()


def test_session_and_proxy_routes_refuse_a_provider_token(setup, issuer):
    gw, backend, _ = setup
    token = issuer.token()
    before = backend.everything()
    for method, path in [("GET", "/v1/session"), ("POST", "/v1/session/refresh"), ("DELETE", "/v1/session"), ("GET", "/v1/proxy/legacy/me"),
                         ("GET", "/v1/proxy/idp/me")]:
        answer = requests.request(method, gw.url + path, headers={"Authorization": f"Bearer {token}", "X-CSRF": "1"}, timeout=5)
        assert answer.status_code == 401, (path, answer.status_code, answer.text)
        assert answer.json()["code"] == "invalid_session", (path, answer.text)
    assert backend.everything() == before


def test_a_session_token_still_works_beside_provider_tokens(setup, issuer):
    gw, _, _ = setup
    created = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "user-token"}, timeout=5)
    assert created.status_code == 201
    for front in FRONT_ENDS:
        answer = call(gw, "/v1/api/x", created.json()["session_token"], front)
        assert answer.status_code == 200
        claims = assertion_claims(backend_saw(answer)["x-gatehouse-assertion"][0])
        assert "via" not in claims and claims["sid"]


# --- refusals, each its own test ----------------------------------------------------------------

def refused_everywhere(gw, backend, token: str):
    before = backend.everything()
    for front in FRONT_ENDS:
        for _ in range(2):  # the second answer from the cached refusal
            assert_refused(call(gw, "/v1/api/x", token, front), front)
    assert backend.everything() == before, "a refused token reached the backend"


def test_a_bad_signature_is_refused(setup, issuer):
    gw, backend, _ = setup
    refused_everywhere(gw, backend, issuer.token(key=ec.generate_private_key(ec.SECP256R1())))


def test_alg_none_is_refused(setup, issuer):
    gw, backend, _ = setup
    refused_everywhere(gw, backend, unsigned(issuer.claims(), {"alg": "none", "typ": "at+jwt"}))


def test_hs256_signed_with_the_public_key_is_refused(setup, issuer):
    gw, backend, _ = setup
    header = {"alg": "HS256", "typ": "at+jwt", "kid": "ec1"}
    signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(issuer.claims()).encode())
    secret = json.dumps(issuer.jwks()[0]).encode()
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    refused_everywhere(gw, backend, signing_input + "." + b64url(mac))


def test_a_wrong_issuer_is_refused(setup, issuer):
    gw, backend, _ = setup
    refused_everywhere(gw, backend, issuer.token(iss="https://evil.example.test"))


def test_a_wrong_audience_is_refused(setup, issuer):
    gw, backend, _ = setup
    refused_everywhere(gw, backend, issuer.token(aud=["https://other.example.test"]))


def test_an_expired_token_is_refused(setup, issuer):
    gw, backend, _ = setup
    refused_everywhere(gw, backend, issuer.token(exp=int(time.time()) - 120, iat=int(time.time()) - 600))


def test_a_token_without_exp_is_refused(setup, issuer):
    gw, backend, _ = setup
    refused_everywhere(gw, backend, issuer.token(exp=None))


def test_a_token_not_valid_yet_is_refused(setup, issuer):
    gw, backend, _ = setup
    refused_everywhere(gw, backend, issuer.token(nbf=int(time.time()) + 600))


def assert_insufficient_scope(answer: requests.Response, where=None):
    """RFC 6750 §3.1: a valid token short of scope is 403 `insufficient_scope`, the challenge naming the scope."""
    assert answer.status_code == 403, (where, answer.status_code, answer.text)
    assert answer.json()["code"] == "insufficient_scope", (where, answer.text)
    assert answer.headers["WWW-Authenticate"] == 'Bearer error="insufficient_scope", scope="api"', (where, answer.headers)


@pytest.mark.parametrize("kind", ["jwt", "opaque"])
def test_a_valid_token_without_a_required_scope_is_403_insufficient_scope(setup, issuer, kind):
    gw, backend, _ = setup
    if kind == "jwt":
        token = issuer.token(scope="reports")
    else:
        token = "opaque-no-scope"
        issuer.active[token] = {"sub": "svc-opaque", "scope": "read", "aud": AUDIENCE}
    before = backend.everything()
    for front in FRONT_ENDS:
        for _ in range(2):  # the second answer from the cached verdict
            assert_insufficient_scope(call(gw, "/v1/api/x", token, front), front)
            authz = requests.get(gw.url + "/v1/authz", headers={"Authorization": f"Bearer {token}", "X-Forwarded-Uri": "/x", **FRONT_ENDS[front]},
                                 timeout=5)
            assert_insufficient_scope(authz, ("authz", front))
            assert "X-Gatehouse-Sign-In" not in authz.headers, "signing in again would not add the scope"
    assert backend.everything() == before, "a token short of scope reached the backend"
    # invalid_token stays for what is invalid, whatever its scope.
    refused_everywhere(gw, backend, issuer.token(scope="reports", aud=["https://other.example.test"]))
    refused_everywhere(gw, backend, issuer.token(scope="reports", exp=int(time.time()) - 120, iat=int(time.time()) - 600))


def test_a_sender_constrained_token_is_refused(setup, issuer):
    gw, backend, _ = setup
    refused_everywhere(gw, backend, issuer.token(cnf={"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}))


def test_a_wrong_typ_is_refused(setup, issuer):
    gw, backend, _ = setup
    refused_everywhere(gw, backend, issuer.token(typ="dpop+jwt"))
    refused_everywhere(gw, backend, issuer.token(typ=None))


def test_an_unknown_opaque_token_is_refused(setup, issuer):
    gw, backend, _ = setup
    refused_everywhere(gw, backend, "not-a-token-anyone-issued")


# --- session tokens are never introspected ------------------------------------------------------

def test_an_ended_session_token_is_401_invalid_session_without_any_introspection(setup, issuer):
    """A `gths_` value is the gateway's own: an ended (or altered) one is answered from the store alone, on both
    front ends and /v1/authz, and the provider's introspection endpoint is never asked about it."""
    gw, _, _ = setup
    created = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "user-token"}, timeout=5)
    assert created.status_code == 201, created.text
    token = created.json()["session_token"]
    assert re.fullmatch(r"gths_[A-Za-z0-9_-]{43}", token), token
    assert call(gw, "/v1/api/x", token).status_code == 200
    assert requests.delete(gw.url + "/v1/session", headers={"Authorization": f"Bearer {token}"}, timeout=5).status_code == 200
    altered = token[:-1] + ("A" if token[-1] != "A" else "B")
    start = issuer.calls["introspect"]
    for front in FRONT_ENDS:
        for value in (token, altered, "gths_short"):
            for _ in range(2):
                answer = call(gw, "/v1/api/x", value, front)
                assert answer.status_code == 401 and answer.json()["code"] == "invalid_session", (front, value, answer.text)
                checked = requests.get(gw.url + "/v1/authz", timeout=5,
                                       headers={"Authorization": f"Bearer {value}", "X-Forwarded-Uri": "/x", **FRONT_ENDS[front]})
                assert checked.status_code == 401 and checked.json()["code"] == "invalid_session", (front, value, checked.text)
    assert issuer.calls["introspect"] == start, "a Gatehouse session token was sent to the provider's introspection endpoint"
    # The counter does count: an unknown value without the prefix is introspected (and refused as the provider's).
    assert_refused(call(gw, "/v1/api/x", "not-a-session-token"))
    assert issuer.calls["introspect"] == start + 1


# --- the cache ----------------------------------------------------------------------------------

def test_a_busy_client_costs_one_verification_per_token(setup, issuer):
    gw, _, _ = setup
    token = issuer.token()
    for i in range(25):
        for front in FRONT_ENDS:
            assert call(gw, f"/v1/api/x{i}", token, front).status_code == 200
    assert issuer.calls["jwks"] == 1
    # A refusal is cached too: fifty calls with one forged token, one key-set fetch at most.
    forged = issuer.token(key=ec.generate_private_key(ec.SECP256R1()))
    for _ in range(50):
        assert call(gw, "/v1/api/x", forged).status_code == 401
    assert issuer.calls["jwks"] <= 2


def test_opaque_tokens_are_introspected_once_and_cached(setup, issuer):
    gw, backend, _ = setup
    issuer.active["opaque-active-1"] = {"sub": "svc-opaque", "scope": "api", "aud": AUDIENCE, "client_id": "reports-job",
                                        "exp": int(time.time()) + 300}
    issuer.active["opaque-other-aud"] = {"sub": "svc-opaque", "scope": "api", "aud": "https://other.example.test"}
    issuer.active["opaque-no-scope"] = {"sub": "svc-opaque", "scope": "read"}
    issuer.active["opaque-no-aud"] = {"username": "svc-user", "scope": "api"}
    start = issuer.calls["introspect"]
    for i in range(25):
        for front in FRONT_ENDS:
            answer = call(gw, f"/v1/api/reports/{i}", "opaque-active-1", front)
            assert answer.status_code == 200, answer.text
    assert backend_saw(answer)["x-gatehouse-subject"] == ["svc-opaque"]
    assert issuer.calls["introspect"] - start == 1
    assert call(gw, "/v1/api/x", "opaque-no-aud").status_code == 200
    for token in ("opaque-other-aud", "opaque-revoked"):
        refused_everywhere(gw, backend, token)
    assert_insufficient_scope(call(gw, "/v1/api/x", "opaque-no-scope"))


def test_an_unreachable_introspection_endpoint_is_503(setup, issuer):
    gw, backend, _ = setup
    issuer.introspection_down = True
    before = backend.everything()
    for front in FRONT_ENDS:
        answer = call(gw, "/v1/api/x", "opaque-while-down", front)
        assert answer.status_code == 503, (front, answer.text)
        assert answer.json()["code"] == "provider_unavailable"
        assert int(answer.headers["Retry-After"]) > 0
    assert backend.everything() == before
    # Not cached: once the endpoint is back, the token is judged.
    issuer.introspection_down = False
    issuer.active["opaque-while-down"] = {"sub": "svc", "scope": "api"}
    assert call(gw, "/v1/api/x", "opaque-while-down").status_code == 200


# --- one decision: the relay, the router and /v1/authz agree ------------------------------------

PARITY_PATHS = ["/public/x", "/admin/x", "/app/x", "/reports/x", "/app/../admin/x", "/%61dmin/x", "/public/%252e%252e/admin/x"]


def test_the_relay_the_router_and_authz_agree_on_provider_tokens(setup, issuer):
    gw, _, _ = setup
    issuer.active["opaque-parity"] = {"sub": "svc-opaque", "scope": "api", "client_id": "reports-job"}
    tokens = {
        "jwt": issuer.token(), "jwt-rs256-admin": issuer.token("RS256", sub="admin"), "jwt-other-job": issuer.token(client_id="other"),
        "jwt-wrong-aud": issuer.token(aud="x"), "jwt-expired": issuer.token(exp=int(time.time()) - 120), "opaque": "opaque-parity",
        "opaque-unknown": "opaque-nobody-issued",
    }
    rows = [(method, path, kind) for kind in tokens for path in PARITY_PATHS for method in ("GET",)] + [
        (method, path, kind) for kind in ("jwt", "jwt-rs256-admin", "opaque") for path in ("/admin/x", "/app/x") for method in ("HEAD", "POST")]
    before = counters(gw)
    mismatches, statuses = [], set()
    for method, path, kind in rows:
        fields = {"Authorization": f"Bearer {tokens[kind]}"}
        relay = send(gw, method, path, fields, None)
        router = send(gw, method, path, {**fields, "Origin": ORIGIN}, None)
        statuses.add(relay[0])
        if relay != router:
            mismatches.append(("relay/router", method, path, kind, relay, router))
        expected = (200, None) if relay[0] == 200 else relay[:2]
        for version in ("1.1", "1.0"):
            asked = authz(gw, method, path, fields, version)
            if (asked[0], asked[1] if method != "HEAD" else None) != (expected[0], expected[1] if method != "HEAD" else None):
                mismatches.append(("authz HTTP/" + version, method, path, kind, expected, asked))
    assert not mismatches, "\n".join(map(str, mismatches))
    assert counters(gw) - before == len(rows), "a provider-token row was handed to the router for its verdict"
    assert {200, 400, 401, 403} <= statuses


# --- hostile cases with a provider token --------------------------------------------------------

def test_double_encoded_paths_are_400_with_a_provider_token(setup, issuer):
    gw, backend, _ = setup
    token = issuer.token()
    before = backend.everything()
    for path in ["/public/%252e%252e/admin/x", "/x/..%252fadmin/x", "/public/%255c..%255cadmin/x"]:
        for front, extra in FRONT_ENDS.items():
            answer = raw(gw.port, get(f"/v1/api{path}", {"Authorization": f"Bearer {token}", **extra}))
            assert status_of(answer) == 400 and problem_code(answer) == "invalid_path", (front, path, answer[:300])
    assert backend.everything() == before


def test_head_is_judged_by_a_get_rule_with_a_provider_token(setup, issuer):
    gw, backend, _ = setup
    for front in FRONT_ENDS:
        assert call(gw, "/v1/api/admin/x", issuer.token(), front, method="HEAD").status_code == 403
        assert call(gw, "/v1/api/admin/x", issuer.token(sub="admin"), front, method="HEAD").status_code == 200
    assert backend.everything().count(b"HEAD /base/admin/x") == 2


def test_a_provider_token_beside_a_smuggled_cookie_and_identity_headers(setup, issuer):
    """The provider token decides; a client's own X-Gatehouse-* fields and the session cookie never reach the backend."""
    gw, backend, _ = setup
    session = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "admin-token"}, timeout=5).json()["session_token"]
    for front in FRONT_ENDS:
        answer = call(gw, "/v1/api/admin/x", issuer.token(), front, **{
            "Cookie": f"a=1; __Host-gatehouse_session={session}", "X-Gatehouse-Subject": "admin", "X-Gatehouse-Provider": "legacy"})
        assert answer.status_code == 403, (front, answer.text)
        answer = call(gw, "/v1/api/x", issuer.token(), front, **{
            "Cookie": f"a=1; __Host-gatehouse_session={session}", "X-Gatehouse-Subject": "admin"})
        assert answer.status_code == 200
        seen = backend_saw(answer)
        assert seen["x-gatehouse-subject"] == ["svc-reports"]
        assert session not in json.dumps(seen)


def test_a_reload_that_stops_accepting_voids_the_cached_verdicts(setup, issuer, tmp_path):
    gw, _, _ = setup
    token = issuer.token()
    for front in FRONT_ENDS:
        assert call(gw, "/v1/api/x", token, front).status_code == 200  # cached for cache_seconds (300 s)
    write_provider(tmp_path, "idp", oidc_provider(issuer).replace("  accept: true", "  accept: false"))
    gw.signal(signal.SIGHUP)
    assert wait_until(lambda: call(gw, "/v1/api/x", token).status_code == 401, 10), "the cached verdict outlived the reload"
    for front in FRONT_ENDS:
        answer = call(gw, "/v1/api/x", token, front)
        # No provider accepts bearer tokens any more: the token is an unknown session token.
        assert answer.status_code == 401 and answer.json()["code"] == "invalid_session", (front, answer.text)


def test_a_kept_alive_connection_remembers_a_provider_token_no_longer_than_its_verdict(setup, issuer, tmp_path):
    """The relay's per-connection memo takes provider tokens too: it ends with the token's exp and with a reload."""
    gw, _, _ = setup
    # No clock skew, so that the token's exp ends its verdict (and a reload seen done: refused, then taken).
    for accept, status in [("false", 401), ("true", 200)]:
        write_provider(tmp_path, "idp", oidc_provider(issuer).replace("claims:", "clock_skew_seconds: 0\nclaims:")
                       .replace("  accept: true", f"  accept: {accept}"))
        gw.signal(signal.SIGHUP)
        assert wait_until(lambda: call(gw, "/v1/api/x", issuer.token()).status_code == status, 10), accept
    expiring = issuer.token(exp=int(time.time()) + 3)
    with requests.Session() as kept:  # one keep-alive connection, the same Authorization each time
        def again(token):
            return kept.get(gw.url + "/v1/api/x", headers={"Authorization": f"Bearer {token}"}, timeout=10).status_code
        assert [again(expiring) for _ in range(3)] == [200, 200, 200]
        assert wait_until(lambda: again(expiring) == 401, 10), "the connection's memo outlived the token's exp"
        token = issuer.token()
        assert [again(token) for _ in range(3)] == [200, 200, 200]
        write_provider(tmp_path, "idp", oidc_provider(issuer).replace("  accept: true", "  accept: false"))
        gw.signal(signal.SIGHUP)
        assert wait_until(lambda: again(token) == 401, 10), "the connection's memo outlived the reload"


# --- configuration ------------------------------------------------------------------------------

def test_check_reports_bearer_token_mistakes_at_file_and_line(cli, tmp_path, issuer):
    config = write_config(tmp_path, 'store: {kind: "memory"}\nbackend: {url: "http://127.0.0.1:9"}\n')
    write_provider(tmp_path, "idp", "\n".join([
        'id: "idp"', 'kind: "oidc"', f"issuer: {q(issuer.url)}", 'client_id: "gatehouse"',
        "bearer_tokens:", "  accept: true", "  cache_seconds: -1", '  introspection_endpoint: "http://idp.example.test/introspect"',
        "  audience: [\"x\"]", "",
    ]))
    write_provider(tmp_path, "plain", "\n".join([
        'id: "plain"', 'kind: "oauth2"', 'authorization_endpoint: "https://a.example.test/auth"', 'token_endpoint: "https://a.example.test/token"',
        'client_id: "c"', 'jwks_url: "https://a.example.test/jwks"', "bearer_tokens: {accept: true, audiences: [\"x\"]}", "",
    ]))
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert result.returncode != 0
    out = result.stdout + result.stderr
    assert "idp.yaml:6: 'bearer_tokens.accept': 'bearer_tokens.audiences' is required" in out or "idp.yaml:6:" in out, out
    assert "idp.yaml:7:" in out and "cache_seconds" in out, out
    assert "idp.yaml:8:" in out and "must be https" in out, out
    assert "idp.yaml:9: unknown key 'bearer_tokens.audience': did you mean 'bearer_tokens.audiences'?" in out, out
    assert "plain.yaml:6:" in out and "needs 'issuer'" in out, out
