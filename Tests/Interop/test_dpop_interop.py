"""DPoP-bound sessions (RFC 9449) against a real gateway, with an independent client.

The client is requests_oauth2client (DPoPKey / DPoPToken, jwskate underneath); malformed proofs are
signed with joserfc (see dpop_support.py). Sign-ins go through django-oauth-toolkit (authorization code
+ PKCE through the gateway, then `POST /v1/session`), through a captured token
(`POST /v1/auth/dotcap/token`) and through a BrowserID assertion (`POST /v1/auth/persona/assertion`).

`gateway` runs the default policy (mode optional, max_age 60 s, no nonce); `dpop_gateways` (conftest)
starts the variants: nonces, `mode: required`, `mode: off`, a short `max_age_seconds`.
"""
from __future__ import annotations

import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest
import requests

from dpop_support import (
    DROP,
    assert_dpop_refusal,
    assert_grant,
    assert_problem,
    ath_of,
    claims_for,
    dpop_auth,
    dpop_headers,
    exchange,
    forge,
    forge_hs256,
    forge_unsigned,
    library_call,
    native_login,
    new_key,
    private_jwk,
    proof,
    raw_request,
)
from interop_support import TIMEOUT

CAPTURE = "dotcap"
PERSONA = "persona"
AUDIENCE = "https://rp.example.test"


# ---------------------------------------------------------------- helpers

def send(method: str, url: str, headers: dict | None = None, **kwargs) -> requests.Response:
    return requests.request(method, url, headers=headers or {}, allow_redirects=False, timeout=TIMEOUT, **kwargs)


def login(gw, dot) -> dict:
    return native_login(gw.url, gw.provider, dot.username, dot.password)


def bind(gw, dot, key) -> str:
    """A session bound to `key` through DOT: the library's proof of `POST {public_url}/v1/session`."""
    r = exchange(gw.url, login(gw, dot), dpop=proof(key, "POST", f"{gw.url}/v1/session"))
    return assert_grant(r, "DPoP")


def assert_session_of(r: requests.Response, dot, provider: str = "dot") -> dict:
    assert r.status_code == 200, f"GET /v1/session: {r.status_code} {r.text[:800]}"
    view = r.json()
    assert view["provider"] == provider
    assert view["subject"] == dot.username
    assert "session_token" not in view
    return view


def assert_echo(r: requests.Response, *, method: str, path: str, subject: str, secrets_: tuple[str, ...]) -> dict:
    """The echo backend's view: identity added; `Authorization`, `DPoP` and the token itself never forwarded."""
    assert r.status_code == 200, f"/v1/api: {r.status_code} {r.text[:800]}"
    echo = r.json()
    h = echo["headers"]
    assert echo["method"] == method
    assert echo["path"] == path
    assert h.get("x-gatehouse-subject") == [subject], h
    assert "authorization" not in h, f"Authorization reached the backend: {h.get('authorization')}"
    assert "dpop" not in h, f"the DPoP proof reached the backend: {h.get('dpop')}"
    raw = json.dumps(echo)
    for s in secrets_:
        assert s not in raw, "the session token or the proof reached the backend"
    return echo


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def bound(gateway, dot_server):
    """One ES256-bound session shared by the refusal tests (a refused proof changes nothing)."""
    key = new_key("ES256")
    token = bind(gateway, dot_server, key)
    return SimpleNamespace(key=key, token=token, gw=gateway, base=gateway.url, other_key=new_key("ES256"))


def _dpop_gw(dpop_gateways, name, dpop):
    return dpop_gateways.get(name, dpop)


@pytest.fixture(scope="module")
def optional_gw(dpop_gateways):
    return _dpop_gw(dpop_gateways, "optional", {"mode": "optional", "max_age_seconds": 10, "require_nonce": False,
                                                "nonce_lifetime_seconds": 300})


@pytest.fixture(scope="module")
def nonce_gw(dpop_gateways):
    return _dpop_gw(dpop_gateways, "nonce", {"require_nonce": True, "nonce_lifetime_seconds": 2})


@pytest.fixture(scope="module")
def required_gw(dpop_gateways):
    return _dpop_gw(dpop_gateways, "required", {"mode": "required"})


@pytest.fixture(scope="module")
def off_gw(dpop_gateways):
    return _dpop_gw(dpop_gateways, "off", {"mode": "off"})


# ---------------------------------------------------------------- happy paths (the library)

def test_es256_bound_session_end_to_end_with_requests_oauth2client(gateway, dot_server):
    """Bind at the code exchange, then every route with DPoPToken as the `requests` auth; refresh, logout."""
    gw, dot = gateway, dot_server
    key = new_key("ES256")
    r = exchange(gw.url, login(gw, dot), dpop=proof(key, "POST", f"{gw.url}/v1/session"))
    token = assert_grant(r, "DPoP")
    assert r.json()["session"]["subject"] == dot.username
    auth = dpop_auth(key, token)

    view = assert_session_of(library_call("GET", f"{gw.url}/v1/session", auth), dot)

    # the backend: identity headers, never the proof nor the Authorization header
    r = library_call("GET", f"{gw.url}/v1/api/dpop/anything?x=1&y=2", auth)
    assert_echo(r, method="GET", path="/dpop/anything?x=1&y=2", subject=dot.username, secrets_=(token,))
    r = library_call("POST", f"{gw.url}/v1/api/dpop/orders", auth, json={"n": 1})
    echo = assert_echo(r, method="POST", path="/dpop/orders", subject=dot.username, secrets_=(token,))
    assert json.loads(echo["body"]) == {"n": 1}
    r = library_call("DELETE", f"{gw.url}/v1/api/dpop/orders/7", auth)
    assert_echo(r, method="DELETE", path="/dpop/orders/7", subject=dot.username, secrets_=(token,))

    # the provider's API through the gateway (DOT checks its own access token)
    r = library_call("GET", f"{gw.url}/v1/proxy/{gw.provider}/me", auth)
    assert r.status_code == 200, r.text
    assert r.json() == {"username": dot.username, "email": dot.email}

    # explicit refresh
    r = library_call("POST", f"{gw.url}/v1/session/refresh", auth)
    assert r.status_code == 200, f"POST /v1/session/refresh: {r.status_code} {r.text[:800]}"
    assert library_call("GET", f"{gw.url}/v1/proxy/{gw.provider}/me", auth).status_code == 200
    assert assert_session_of(library_call("GET", f"{gw.url}/v1/session", auth), dot)["id"] == view["id"]

    # logout, then the token is refused everywhere, with a fresh and correct proof
    r = library_call("DELETE", f"{gw.url}/v1/session", auth)
    assert r.status_code in (200, 204), f"DELETE /v1/session: {r.status_code} {r.text[:800]}"
    r = send("GET", f"{gw.url}/v1/session", dpop_headers(key, "GET", f"{gw.url}/v1/session", token))
    assert_problem(r, 401, "invalid_session")
    r = send("GET", f"{gw.url}/v1/api/dpop/after-logout", dpop_headers(key, "GET", f"{gw.url}/v1/api/dpop/after-logout", token))
    assert_problem(r, 401, "invalid_session")
    r = send("GET", f"{gw.url}/v1/proxy/{gw.provider}/me", dpop_headers(key, "GET", f"{gw.url}/v1/proxy/{gw.provider}/me", token))
    assert_problem(r, 401, "invalid_session")


@pytest.mark.parametrize("alg", ["RS256", "PS256", "EdDSA"])
def test_other_algorithms_bind_and_use_a_session(gateway, dot_server, alg):
    gw, dot = gateway, dot_server
    key = new_key(alg)
    assert key.alg == alg
    token = bind(gw, dot, key)
    auth = dpop_auth(key, token)
    assert_session_of(library_call("GET", f"{gw.url}/v1/session", auth), dot)
    r = library_call("GET", f"{gw.url}/v1/api/dpop/{alg}", auth)
    assert_echo(r, method="GET", path=f"/dpop/{alg}", subject=dot.username, secrets_=(token,))
    r = library_call("POST", f"{gw.url}/v1/session/refresh", auth)
    assert r.status_code == 200, r.text
    # another key of the same algorithm is not the bound one
    r = send("GET", f"{gw.url}/v1/session", dpop_headers(new_key(alg), "GET", f"{gw.url}/v1/session", token))
    assert_dpop_refusal(r)
    r = library_call("DELETE", f"{gw.url}/v1/session", auth)
    assert r.status_code in (200, 204), r.text


def test_sign_in_without_proof_is_a_bearer_session_that_refuses_the_dpop_scheme(gateway, dot_server):
    gw, dot = gateway, dot_server
    token = assert_grant(exchange(gw.url, login(gw, dot)), "Bearer")
    key = new_key()
    assert_session_of(send("GET", f"{gw.url}/v1/session", {"Authorization": f"Bearer {token}"}), dot)
    for method, path in (("GET", "/v1/session"), ("GET", "/v1/api/dpop/unbound"), ("GET", f"/v1/proxy/{gw.provider}/me"),
                         ("POST", "/v1/session/refresh"), ("DELETE", "/v1/session")):
        url = gw.url + path
        r = send(method, url, dpop_headers(key, method, url, token))
        assert_dpop_refusal(r, "invalid_token")
    # nothing above ended or changed it
    assert_session_of(send("GET", f"{gw.url}/v1/session", {"Authorization": f"Bearer {token}"}), dot)


def test_a_request_with_a_query_is_proven_without_its_query(bound, dot_server):
    b = bound
    url = f"{b.base}/v1/api/dpop/search?q=dpop&page=2"
    r = send("GET", url, dpop_headers(b.key, "GET", url, b.token))  # the library drops the query from htu
    assert_echo(r, method="GET", path="/dpop/search?q=dpop&page=2", subject=dot_server.username, secrets_=(b.token,))
    # the same query on another path is another URL
    r = send("GET", url, {"Authorization": f"DPoP {b.token}",
                          "DPoP": proof(b.key, "GET", f"{b.base}/v1/api/dpop/other?q=dpop&page=2", b.token)})
    assert_dpop_refusal(r)


def test_correct_proofs_forged_with_joserfc_pass(bound, dot_server):
    """Control for the refusal tests: joserfc's proofs pass when nothing is wrong, also 30 s old."""
    b = bound
    for path in ("/v1/session", "/v1/api/dpop/joserfc"):
        for age in (0, 30):
            url = b.base + path
            claims = claims_for("GET", url, b.token, iat=int(time.time()) - age)
            r = send("GET", url, {"Authorization": f"DPoP {b.token}", "DPoP": forge(b.key, claims)})
            assert r.status_code == 200, f"{path} age {age}: {r.status_code} {r.text[:500]}"


# ---------------------------------------------------------------- refusals

def _now() -> int:
    return int(time.time())


def _c(b, m, url, **kw):
    return claims_for(m, url, b.token, **kw)


REFUSALS = {
    "missing proof": lambda b, m, url: None,
    "empty proof": lambda b, m, url: "",
    "not a JWS": lambda b, m, url: "not-a-jws",
    "wrong htm": lambda b, m, url: proof(b.key, "PUT" if m != "PUT" else "PATCH", url, b.token),
    "htu other path": lambda b, m, url: proof(b.key, m, f"{b.base}/v1/api/dpop/elsewhere", b.token),
    "htu other host": lambda b, m, url: proof(b.key, m, url.replace("127.0.0.1", "gateway.example"), b.token),
    "htu other port": lambda b, m, url: proof(b.key, m, url.replace(b.base, b.base.rsplit(":", 1)[0] + ":1"), b.token),
    "htu other scheme": lambda b, m, url: proof(b.key, m, url.replace("http://", "https://", 1), b.token),
    "htu missing": lambda b, m, url: forge(b.key, _c(b, m, url, htu=DROP)),
    "iat 120 s old": lambda b, m, url: forge(b.key, _c(b, m, url, iat=_now() - 120)),
    "iat 60 s ahead": lambda b, m, url: forge(b.key, _c(b, m, url, iat=_now() + 60)),
    "iat missing": lambda b, m, url: forge(b.key, _c(b, m, url, iat=DROP)),
    "jti missing": lambda b, m, url: forge(b.key, _c(b, m, url, jti=DROP)),
    "ath of another token": lambda b, m, url: forge(b.key, _c(b, m, url, ath=ath_of("A" * 43))),
    "ath missing": lambda b, m, url: forge(b.key, _c(b, m, url, ath=DROP)),
    "another key": lambda b, m, url: proof(b.other_key, m, url, b.token),
    "bound jwk, signed by another key": lambda b, m, url: forge(b.key, _c(b, m, url), signing_jwk=private_jwk(b.other_key)),
    "signature altered": lambda b, m, url: _flip_signature(proof(b.key, m, url, b.token)),
    "alg none": lambda b, m, url: forge_unsigned(b.key, _c(b, m, url)),
    "alg HS256 (MAC)": lambda b, m, url: forge_hs256(b.key, _c(b, m, url)),
    "private key in jwk": lambda b, m, url: forge(b.key, _c(b, m, url), header={"jwk": private_jwk(b.key)}),
    "typ JWT": lambda b, m, url: forge(b.key, _c(b, m, url), header={"typ": "JWT"}),
    "typ missing": lambda b, m, url: forge(b.key, _c(b, m, url), header={"typ": DROP}),
    "jwk missing": lambda b, m, url: forge(b.key, _c(b, m, url), header={"jwk": DROP}),
}


def _flip_signature(jws_compact: str) -> str:
    head, payload, sig = jws_compact.split(".")
    mid = len(sig) // 2
    sig = sig[:mid] + ("A" if sig[mid] != "A" else "B") + sig[mid + 1:]
    return f"{head}.{payload}.{sig}"


ROUTES = [
    ("GET", "/v1/session"),
    ("GET", "/v1/api/dpop/refused?q=1"),
    ("POST", "/v1/api/dpop/refused"),
    ("GET", "/v1/proxy/dot/me"),
    ("POST", "/v1/session/refresh"),
]


@pytest.mark.parametrize("method, path", ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
@pytest.mark.parametrize("case", list(REFUSALS))
def test_bad_proof_is_401_invalid_dpop_proof(bound, case, method, path):
    b = bound
    url = b.base + path
    p = REFUSALS[case](b, method, url)
    headers = {"Authorization": f"DPoP {b.token}"}
    if p is not None:
        headers["DPoP"] = p
    kwargs = {"json": {"x": 1}} if method == "POST" else {}
    r = send(method, url, headers, **kwargs)
    assert_dpop_refusal(r)


@pytest.mark.parametrize("method, path", ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_bound_token_as_bearer_is_401_invalid_token(bound, method, path):
    b = bound
    url = b.base + path
    r = send(method, url, {"Authorization": f"Bearer {b.token}"})
    assert_dpop_refusal(r, "invalid_token")
    # with a valid proof next to it, the Bearer scheme is still wrong
    r = send(method, url, {"Authorization": f"Bearer {b.token}", "DPoP": proof(b.key, method, url, b.token)})
    assert_dpop_refusal(r, "invalid_token")


def _ok(r: requests.Response, method: str, path: str) -> None:
    assert r.status_code == 200, f"{method} {path}: the first use of a fresh proof: {r.status_code} {r.text[:500]}"


@pytest.mark.parametrize("method, path", ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_replayed_proof_is_refused(bound, method, path):
    b = bound
    url = b.base + path
    headers = dpop_headers(b.key, method, url, b.token)
    kwargs = {"json": {"x": 1}} if method == "POST" else {}
    _ok(send(method, url, headers, **kwargs), method, path)
    assert_dpop_refusal(send(method, url, headers, **kwargs))
    # a new proof for the same request is fine
    _ok(send(method, url, dpop_headers(b.key, method, url, b.token), **kwargs), method, path)


@pytest.mark.parametrize("path", ["/v1/session", "/v1/api/dpop/race"])
def test_concurrent_replays_of_one_proof_pass_once(bound, path):
    b = bound
    url = b.base + path
    headers = dpop_headers(b.key, "GET", url, b.token)
    with ThreadPoolExecutor(max_workers=12) as pool:
        answers = list(pool.map(lambda _: send("GET", url, headers), range(12)))
    statuses = [r.status_code for r in answers]
    assert statuses.count(200) == 1, f"one proof, 12 concurrent uses: {statuses}"
    for r in answers:
        if r.status_code != 200:
            assert_dpop_refusal(r)


def test_same_jti_with_a_fresh_iat_is_a_replay(bound):
    """The jti alone identifies a proof: a re-signed proof with a new iat but the old jti is refused."""
    b = bound
    for path in ("/v1/session", "/v1/api/dpop/jti"):
        url = b.base + path
        jti = str(uuid.uuid4())
        first = forge(b.key, claims_for("GET", url, b.token, jti=jti, iat=_now() - 2))
        again = forge(b.key, claims_for("GET", url, b.token, jti=jti, iat=_now()))
        assert first != again
        assert send("GET", url, {"Authorization": f"DPoP {b.token}", "DPoP": first}).status_code == 200
        assert_dpop_refusal(send("GET", url, {"Authorization": f"DPoP {b.token}", "DPoP": again}))


@pytest.mark.parametrize("path", ["/v1/session", "/v1/api/dpop/two-proofs"])
def test_two_dpop_headers_are_refused(bound, path):
    """RFC 9449 §4.3 step 1: not more than one DPoP header field, even when both proofs are good."""
    b = bound
    url = b.base + path
    status, headers, body = raw_request(b.base, "GET", path, [
        ("Authorization", f"DPoP {b.token}"),
        ("DPoP", proof(b.key, "GET", url, b.token)),
        ("DPoP", proof(b.key, "GET", url, b.token)),
    ])
    assert status == 401, f"two DPoP headers: {status} {body[:300]!r}"
    assert json.loads(body)["code"] == "invalid_dpop_proof"
    assert headers.get("www-authenticate", "").startswith("DPoP ")


def test_head_request_is_proven_as_head(bound):
    b = bound
    path = "/v1/api/dpop/head"
    url = b.base + path
    status, _, body = raw_request(b.base, "HEAD", path, [("Authorization", f"DPoP {b.token}"),
                                                          ("DPoP", proof(b.key, "HEAD", url, b.token))])
    assert status == 200, f"HEAD with htm HEAD: {status}"
    status, headers, _ = raw_request(b.base, "HEAD", path, [("Authorization", f"DPoP {b.token}"),
                                                             ("DPoP", proof(b.key, "GET", url, b.token))])
    assert status == 401, f"HEAD with a proof of GET: {status}"
    assert 'error="invalid_dpop_proof"' in headers.get("www-authenticate", "")


def test_authorization_scheme_is_case_insensitive(bound):
    """RFC 9110 §11.1: `dpop` is the DPoP scheme too."""
    b = bound
    for path in ("/v1/session", "/v1/api/dpop/scheme"):
        url = b.base + path
        r = send("GET", url, {"Authorization": f"dpop {b.token}", "DPoP": proof(b.key, "GET", url, b.token)})
        assert r.status_code == 200, f"{path}: {r.status_code} {r.text[:300]}"


@pytest.mark.parametrize("target, htu_path, ok", [
    ("/v1/api/dpop/%7Euser", "/v1/api/dpop/~user", True),
    ("/v1/api/dpop/~user", "/v1/api/dpop/%7euser", True),
    ("/v1/api/dpop/caf%C3%A9", "/v1/api/dpop/caf%c3%a9", True),
    ("/v1/api/dpop/./x/../y", "/v1/api/dpop/y", True),
    ("/v1/api/dpop/a%2Fb", "/v1/api/dpop/a/b", False),
])
def test_htu_is_compared_after_rfc3986_normalization(bound, target, htu_path, ok):
    """RFC 9449 §4.3 step 9 with RFC 3986 §6.2.2: case of escapes, unreserved escapes, dot segments; an
    escaped `/` is not a `/`."""
    b = bound
    p = forge(b.key, claims_for("GET", b.base + htu_path, b.token, htu=b.base + htu_path))
    status, headers, body = raw_request(b.base, "GET", target, [("Authorization", f"DPoP {b.token}"), ("DPoP", p)])
    if ok:
        assert status == 200, f"{target} proven as {htu_path}: {status} {body[:300]!r}"
    else:
        assert status == 401 and json.loads(body)["code"] == "invalid_dpop_proof", f"{target} as {htu_path}: {status} {body[:300]!r}"


def test_keep_alive_connection_never_reuses_a_bound_session_without_proof(bound, dot_server):
    """The gateway's per-connection memo of a session must not let a later request skip its proof."""
    b = bound
    url = f"{b.base}/v1/api/dpop/keepalive"
    with requests.Session() as s:
        first = dpop_headers(b.key, "GET", url, b.token)
        r = s.get(url, headers=first, allow_redirects=False, timeout=TIMEOUT)
        assert_echo(r, method="GET", path="/dpop/keepalive", subject=dot_server.username, secrets_=(b.token,))
        r = s.get(url, headers={"Authorization": f"DPoP {b.token}"}, allow_redirects=False, timeout=TIMEOUT)
        assert_dpop_refusal(r)
        r = s.get(url, headers={"Authorization": f"Bearer {b.token}"}, allow_redirects=False, timeout=TIMEOUT)
        assert_dpop_refusal(r, "invalid_token")
        r = s.get(url, headers=first, allow_redirects=False, timeout=TIMEOUT)
        assert_dpop_refusal(r)
        r = s.get(url, headers=dpop_headers(b.key, "GET", url, b.token), allow_redirects=False, timeout=TIMEOUT)
        assert r.status_code == 200, r.text


def test_keep_alive_bearer_session_then_dpop_scheme_is_refused(gateway, dot_server):
    gw, dot = gateway, dot_server
    token = assert_grant(exchange(gw.url, login(gw, dot)), "Bearer")
    url = f"{gw.url}/v1/api/dpop/keepalive-bearer"
    with requests.Session() as s:
        r = s.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT)
        assert_echo(r, method="GET", path="/dpop/keepalive-bearer", subject=dot.username, secrets_=(token,))
        r = s.get(url, headers=dpop_headers(new_key(), "GET", url, token), timeout=TIMEOUT)
        assert_dpop_refusal(r, "invalid_token")


def test_refused_logouts_leave_the_session_alive(gateway, dot_server):
    gw, dot = gateway, dot_server
    key, other = new_key(), new_key()
    token = bind(gw, dot, key)
    url = f"{gw.url}/v1/session"
    get_proof = proof(key, "GET", url, token)
    assert send("GET", url, {"Authorization": f"DPoP {token}", "DPoP": get_proof}).status_code == 200
    refused = {
        "no proof": {"Authorization": f"DPoP {token}"},
        "proof of GET": {"Authorization": f"DPoP {token}", "DPoP": proof(key, "GET", url, token)},
        "another key": {"Authorization": f"DPoP {token}", "DPoP": proof(other, "DELETE", url, token)},
        "the spent proof of GET": {"Authorization": f"DPoP {token}", "DPoP": get_proof},
        "iat 120 s old": {"Authorization": f"DPoP {token}",
                          "DPoP": forge(key, claims_for("DELETE", url, token, iat=_now() - 120))},
        "alg none": {"Authorization": f"DPoP {token}", "DPoP": forge_unsigned(key, claims_for("DELETE", url, token))},
    }
    for why, headers in refused.items():
        r = send("DELETE", url, headers)
        assert r.status_code == 401, f"DELETE /v1/session with {why}: {r.status_code} {r.text[:300]}"
        assert_dpop_refusal(r)
    r = send("DELETE", url, {"Authorization": f"Bearer {token}"})
    assert_dpop_refusal(r, "invalid_token")
    assert_session_of(send("GET", url, dpop_headers(key, "GET", url, token)), dot)
    r = send("DELETE", url, dpop_headers(key, "DELETE", url, token))
    assert r.status_code in (200, 204), r.text
    assert_problem(send("GET", url, dpop_headers(key, "GET", url, token)), 401, "invalid_session")


def test_bound_session_survived_every_refusal(bound, dot_server):
    b = bound
    url = f"{b.base}/v1/session"
    assert_session_of(library_call("GET", url, dpop_auth(b.key, b.token)), dot_server)


# ---------------------------------------------------------------- forward auth (/v1/authz)

APP = "https://app.example.test"


def _authz(b, extra: dict, dpop: str | None) -> requests.Response:
    headers = {"Authorization": f"DPoP {b.token}", **extra}
    if dpop is not None:
        headers["DPoP"] = dpop
    return send("GET", f"{b.base}/v1/authz", headers)


FORWARDED = {"X-Forwarded-Method": "POST", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "app.example.test",
             "X-Forwarded-Uri": "/orders/42?expand=items"}


def test_authz_proof_names_the_original_forwarded_request(bound, dot_server):
    b = bound
    r = _authz(b, FORWARDED, proof(b.key, "POST", f"{APP}/orders/42", b.token))
    assert r.status_code == 200, f"/v1/authz: {r.status_code} {r.text[:500]}"
    assert r.headers.get("X-Gatehouse-Subject") == dot_server.username
    assert r.headers.get("X-Gatehouse-Provider") == "dot"


@pytest.mark.parametrize("why, make", [
    ("no proof", lambda b: None),
    ("proof of the /v1/authz request itself", lambda b: proof(b.key, "GET", f"{b.base}/v1/authz", b.token)),
    ("htm GET, original is POST", lambda b: proof(b.key, "GET", f"{APP}/orders/42", b.token)),
    ("other original path", lambda b: proof(b.key, "POST", f"{APP}/orders/43", b.token)),
    ("other original host", lambda b: proof(b.key, "POST", "https://evil.example.test/orders/42", b.token)),
    ("other original scheme", lambda b: proof(b.key, "POST", "http://app.example.test/orders/42", b.token)),
    ("another key", lambda b: proof(b.other_key, "POST", f"{APP}/orders/42", b.token)),
    ("iat 120 s old", lambda b: forge(b.key, claims_for("POST", f"{APP}/orders/42", b.token, iat=_now() - 120))),
])
def test_authz_refuses_a_proof_not_of_the_original_request(bound, why, make):
    assert_dpop_refusal(_authz(bound, FORWARDED, make(bound)))


def test_authz_replayed_proof_and_bearer_scheme_are_refused(bound):
    b = bound
    p = proof(b.key, "POST", f"{APP}/orders/42", b.token)
    assert _authz(b, FORWARDED, p).status_code == 200
    assert_dpop_refusal(_authz(b, FORWARDED, p))
    r = send("GET", f"{b.base}/v1/authz", {"Authorization": f"Bearer {b.token}", **FORWARDED})
    assert_dpop_refusal(r, "invalid_token")


def test_authz_with_x_original_url(bound, dot_server):
    """ingress-nginx: X-Original-URL (whole URL) and X-Original-Method."""
    b = bound
    extra = {"X-Original-Method": "GET", "X-Original-URL": f"{APP}/reports/7?format=csv"}
    r = _authz(b, extra, proof(b.key, "GET", f"{APP}/reports/7", b.token))
    assert r.status_code == 200, f"/v1/authz: {r.status_code} {r.text[:500]}"
    assert r.headers.get("X-Gatehouse-Subject") == dot_server.username
    assert_dpop_refusal(_authz(b, extra, proof(b.key, "GET", f"{APP}/reports/8", b.token)))
    assert_dpop_refusal(_authz(b, extra, proof(b.key, "GET", f"{b.base}/v1/authz", b.token)))


# ---------------------------------------------------------------- refusals at sign-in

SIGN_IN_REFUSALS = {
    "htu other path": lambda k, url: proof(k, "POST", url.replace("/v1/session", "/v1/session/refresh")),
    "htu other host": lambda k, url: proof(k, "POST", url.replace("127.0.0.1", "gateway.example")),
    "htm GET": lambda k, url: proof(k, "GET", url),
    "iat 120 s old": lambda k, url: forge(k, claims_for("POST", url, iat=_now() - 120)),
    "iat 60 s ahead": lambda k, url: forge(k, claims_for("POST", url, iat=_now() + 60)),
    "alg none": lambda k, url: forge_unsigned(k, claims_for("POST", url)),
    "alg HS256 (MAC)": lambda k, url: forge_hs256(k, claims_for("POST", url)),
    "private key in jwk": lambda k, url: forge(k, claims_for("POST", url), header={"jwk": private_jwk(k)}),
    "typ JWT": lambda k, url: forge(k, claims_for("POST", url), header={"typ": "JWT"}),
    "not a JWS": lambda k, url: "garbage",
}


@pytest.mark.parametrize("case", list(SIGN_IN_REFUSALS))
def test_bad_proof_at_code_exchange_is_400_and_spends_the_code(gateway, dot_server, case):
    gw, dot = gateway, dot_server
    key = new_key()
    url = f"{gw.url}/v1/session"
    handoff = login(gw, dot)
    r = exchange(gw.url, handoff, dpop=SIGN_IN_REFUSALS[case](key, url))
    assert_problem(r, 400, "invalid_dpop_proof")
    r = exchange(gw.url, handoff, dpop=proof(key, "POST", url))
    assert_problem(r, 400, "invalid_grant")


def test_sign_in_proof_cannot_be_replayed_at_another_sign_in(gateway, dot_server):
    gw, dot = gateway, dot_server
    key = new_key()
    p = proof(key, "POST", f"{gw.url}/v1/session")
    assert_grant(exchange(gw.url, login(gw, dot), dpop=p), "DPoP")
    r = exchange(gw.url, login(gw, dot), dpop=p)
    assert_problem(r, 400, "invalid_dpop_proof")


# ---------------------------------------------------------------- the other sign-in routes (optional mode)

def _token_sign_in(gw, name: str, dpop: str | None) -> requests.Response:
    headers = {"DPoP": dpop} if dpop is not None else {}
    return send("POST", f"{gw.url}/v1/auth/{CAPTURE}/token", headers, json={"token": f"cap-{name}"})


def _assertion_sign_in(gw, email: str, dpop: str | None) -> requests.Response:
    from browserid.tests.support import make_assertion  # PyBrowserID

    headers = {"DPoP": dpop} if dpop is not None else {}
    return send("POST", f"{gw.url}/v1/auth/{PERSONA}/assertion", headers,
                json={"assertion": make_assertion(email, AUDIENCE), "audience": AUDIENCE})


def test_captured_token_sign_in_binds_the_session(optional_gw):
    gw = optional_gw
    key = new_key("ES256")
    url = f"{gw.url}/v1/auth/{CAPTURE}/token"
    token = assert_grant(_token_sign_in(gw, "carol", proof(key, "POST", url)), "DPoP")
    auth = dpop_auth(key, token)
    r = library_call("GET", f"{gw.url}/v1/session", auth)
    assert r.status_code == 200, r.text
    assert r.json()["provider"] == CAPTURE and r.json()["subject"] == "carol"
    r = library_call("GET", f"{gw.url}/v1/api/dpop/captured", auth)
    assert_echo(r, method="GET", path="/dpop/captured", subject="carol", secrets_=(token,))
    assert_dpop_refusal(send("GET", f"{gw.url}/v1/session", {"Authorization": f"Bearer {token}"}), "invalid_token")
    # without a proof: a bearer session
    assert_grant(_token_sign_in(gw, "carol", None), "Bearer")


def test_captured_token_sign_in_with_a_bad_proof_is_400(optional_gw):
    gw = optional_gw
    key = new_key()
    url = f"{gw.url}/v1/auth/{CAPTURE}/token"
    for why, p in {"htu of /v1/session": proof(key, "POST", f"{gw.url}/v1/session"),
                   "alg none": forge_unsigned(key, claims_for("POST", url)),
                   "htm GET": proof(key, "GET", url)}.items():
        r = _token_sign_in(gw, "carol", p)
        assert r.status_code == 400, f"{why}: {r.status_code} {r.text[:300]}"
        assert_problem(r, 400, "invalid_dpop_proof")


def test_assertion_sign_in_binds_the_session(optional_gw):
    gw = optional_gw
    key = new_key("EdDSA")
    url = f"{gw.url}/v1/auth/{PERSONA}/assertion"
    token = assert_grant(_assertion_sign_in(gw, "dora@gmail.test", proof(key, "POST", url)), "DPoP")
    auth = dpop_auth(key, token)
    r = library_call("GET", f"{gw.url}/v1/session", auth)
    assert r.status_code == 200, r.text
    assert r.json()["provider"] == PERSONA and r.json()["subject"] == "dora@gmail.test"
    assert_dpop_refusal(send("GET", f"{gw.url}/v1/session", dpop_headers(new_key("EdDSA"), "GET", f"{gw.url}/v1/session", token)))
    r = _assertion_sign_in(gw, "dora@gmail.test", proof(key, "POST", f"{gw.url}/v1/session"))
    assert_problem(r, 400, "invalid_dpop_proof")
    assert_grant(_assertion_sign_in(gw, "dora@gmail.test", None), "Bearer")


def test_max_age_seconds_is_configurable(optional_gw, bound):
    """`max_age_seconds: 10` (+5 s skew): a 30 s old proof is refused there, accepted by the default 60 s."""
    gw = optional_gw
    key = new_key()
    token = assert_grant(_token_sign_in(gw, "erin", proof(key, "POST", f"{gw.url}/v1/auth/{CAPTURE}/token")), "DPoP")
    url = f"{gw.url}/v1/session"
    r = send("GET", url, {"Authorization": f"DPoP {token}", "DPoP": forge(key, claims_for("GET", url, token, iat=_now() - 30))})
    assert_dpop_refusal(r)
    r = send("GET", url, {"Authorization": f"DPoP {token}", "DPoP": forge(key, claims_for("GET", url, token, iat=_now() - 3))})
    assert r.status_code == 200, r.text
    b = bound
    url = f"{b.base}/v1/session"
    r = send("GET", url, {"Authorization": f"DPoP {b.token}",
                          "DPoP": forge(b.key, claims_for("GET", url, b.token, iat=_now() - 30))})
    assert r.status_code == 200, f"default max_age 60 s: a 30 s old proof: {r.status_code} {r.text[:300]}"


# ---------------------------------------------------------------- nonces (require_nonce: true)

def _nonce_of(r: requests.Response) -> str:
    nonce = r.headers.get("DPoP-Nonce")
    assert nonce, f"no DPoP-Nonce header on {r.status_code}: {dict(r.headers)}"
    return nonce


def _nonce_bind(gw, dot, key) -> str:
    url = f"{gw.url}/v1/session"
    handoff = login(gw, dot)
    r = exchange(gw.url, handoff, dpop=proof(key, "POST", url))
    assert_problem(r, 400, "use_dpop_nonce")
    nonce = _nonce_of(r)
    return assert_grant(exchange(gw.url, handoff, dpop=proof(key, "POST", url, nonce=nonce)), "DPoP")


def test_nonce_at_code_exchange_keeps_the_code(nonce_gw, dot_server):
    gw, dot = nonce_gw, dot_server
    key = new_key()
    url = f"{gw.url}/v1/session"
    handoff = login(gw, dot)
    r = exchange(gw.url, handoff, dpop=proof(key, "POST", url))
    assert_problem(r, 400, "use_dpop_nonce")
    nonce = _nonce_of(r)
    # an invented nonce is not the gateway's
    r = exchange(gw.url, handoff, dpop=proof(key, "POST", url, nonce="made-up-nonce"))
    assert_problem(r, 400, "use_dpop_nonce")
    token = assert_grant(exchange(gw.url, handoff, dpop=proof(key, "POST", url, nonce=nonce)), "DPoP")
    r = send("GET", url, dpop_headers(key, "GET", url, token, nonce=nonce))
    assert_session_of(r, dot)


def test_nonce_on_session_requests_and_its_expiry(nonce_gw, dot_server):
    gw, dot = nonce_gw, dot_server
    key = new_key()
    token = _nonce_bind(gw, dot, key)
    url = f"{gw.url}/v1/api/dpop/nonce"
    r = send("GET", url, dpop_headers(key, "GET", url, token))
    assert_dpop_refusal(r, "use_dpop_nonce")
    n1 = _nonce_of(r)
    r = send("GET", url, dpop_headers(key, "GET", url, token, nonce=n1))
    assert_echo(r, method="GET", path="/dpop/nonce", subject=dot.username, secrets_=(token,))
    for path in ("/v1/session", f"/v1/proxy/{gw.provider}/me"):
        r = send("GET", gw.url + path, dpop_headers(key, "GET", gw.url + path, token, nonce=n1))
        assert r.status_code == 200, f"{path} with a fresh nonce: {r.status_code} {r.text[:300]}"
    # forward auth asks for the nonce too
    authz = {"Authorization": f"DPoP {token}", **FORWARDED}
    r = send("GET", f"{gw.url}/v1/authz", {**authz, "DPoP": proof(key, "POST", f"{APP}/orders/42", token)})
    assert_dpop_refusal(r, "use_dpop_nonce")
    r = send("GET", f"{gw.url}/v1/authz", {**authz, "DPoP": proof(key, "POST", f"{APP}/orders/42", token, nonce=_nonce_of(r))})
    assert r.status_code == 200, f"/v1/authz with the nonce: {r.status_code} {r.text[:300]}"
    r = send("GET", url, dpop_headers(key, "GET", url, token, nonce="made-up-nonce"))
    assert_dpop_refusal(r, "use_dpop_nonce")
    time.sleep(3)  # nonce_lifetime_seconds: 2
    r = send("GET", url, dpop_headers(key, "GET", url, token, nonce=n1))
    assert_dpop_refusal(r, "use_dpop_nonce")
    n2 = _nonce_of(r)
    assert n2 != n1, "the stale nonce was handed out again"
    r = send("GET", url, dpop_headers(key, "GET", url, token, nonce=n2))
    assert r.status_code == 200, f"with the fresh nonce: {r.status_code} {r.text[:300]}"


def test_nonce_dance_done_by_requests_oauth2client(nonce_gw, dot_server):
    """DPoPToken retries a `use_dpop_nonce` 401 with the `DPoP-Nonce` it got, again once the nonce is stale."""
    gw, dot = nonce_gw, dot_server
    key = new_key("ES256")
    token = _nonce_bind(gw, dot, key)
    assert key.rs_nonce is None
    auth = dpop_auth(key, token)
    r = library_call("GET", f"{gw.url}/v1/api/dpop/library-nonce", auth)
    assert_echo(r, method="GET", path="/dpop/library-nonce", subject=dot.username, secrets_=(token,))
    first = key.rs_nonce
    assert first, "the library never saw a DPoP-Nonce"
    assert_session_of(library_call("GET", f"{gw.url}/v1/session", auth), dot)
    time.sleep(3)
    r = library_call("POST", f"{gw.url}/v1/session/refresh", auth)
    assert r.status_code == 200, r.text
    assert key.rs_nonce and key.rs_nonce != first
    r = library_call("DELETE", f"{gw.url}/v1/session", auth)
    assert r.status_code in (200, 204), r.text


def test_nonce_at_captured_token_sign_in(nonce_gw):
    gw = nonce_gw
    key = new_key()
    url = f"{gw.url}/v1/auth/{CAPTURE}/token"
    r = _token_sign_in(gw, "frank", proof(key, "POST", url))
    assert_problem(r, 400, "use_dpop_nonce")
    assert_grant(_token_sign_in(gw, "frank", proof(key, "POST", url, nonce=_nonce_of(r))), "DPoP")


# ---------------------------------------------------------------- mode: required / off

def test_mode_required_refuses_sign_ins_without_proof(required_gw, dot_server):
    gw, dot = required_gw, dot_server
    r = exchange(gw.url, login(gw, dot))
    assert_problem(r, 400, "invalid_dpop_proof")
    assert_problem(_token_sign_in(gw, "gina", None), 400, "invalid_dpop_proof")
    assert_problem(_assertion_sign_in(gw, "gina@gmail.test", None), 400, "invalid_dpop_proof")
    key = new_key()
    token = assert_grant(exchange(gw.url, login(gw, dot), dpop=proof(key, "POST", f"{gw.url}/v1/session")), "DPoP")
    assert_session_of(library_call("GET", f"{gw.url}/v1/session", dpop_auth(key, token)), dot)
    assert_grant(_token_sign_in(gw, "gina", proof(key, "POST", f"{gw.url}/v1/auth/{CAPTURE}/token")), "DPoP")


def test_mode_off_ignores_proofs(off_gw, dot_server):
    gw, dot = off_gw, dot_server
    key = new_key()
    token = assert_grant(exchange(gw.url, login(gw, dot), dpop=proof(key, "POST", f"{gw.url}/v1/session")), "Bearer")
    assert_session_of(send("GET", f"{gw.url}/v1/session", {"Authorization": f"Bearer {token}"}), dot)
    url = f"{gw.url}/v1/session"
    assert_dpop_refusal(send("GET", url, dpop_headers(key, "GET", url, token)), "invalid_token")
    # even a broken proof at sign-in is ignored
    assert_grant(_token_sign_in(gw, "hank", "garbage"), "Bearer")
    assert_grant(_token_sign_in(gw, "hank", proof(key, "POST", f"{gw.url}/v1/auth/{CAPTURE}/token")), "Bearer")
