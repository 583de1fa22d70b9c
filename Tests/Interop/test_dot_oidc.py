"""Gatehouse's `oidc` provider kind against django-oauth-toolkit's OpenID Connect provider.

The provider file (`Providers/dotoidc.yaml`, written by conftest) holds only `id`, `kind: oidc`,
`issuer`, `client_id` and `client_secret_file`: every endpoint, the JWKS and the claims come from
DOT's discovery document at `<issuer>/.well-known/openid-configuration`, and the identity from
DOT's RS256 ID token (plus userinfo). No HTTP redirect is followed automatically.
"""
from __future__ import annotations

import re
import secrets

import requests

from interop_support import TIMEOUT, dot_sign_in, pkce_pair, query_of, without_query
from test_dot_interop import (
    assert_no_provider_tokens,
    assert_no_redirect,
    assert_problem,
    assert_rfc3339_utc,
    bearer,
    dot_log_since,
    exchange,
    token_keys_at_any_depth,
)

OIDC_BAD_ISSUER_PROVIDER_ID = "dotoidcbad"  # the provider file conftest writes with a wrong issuer


def discovery(dot) -> dict:
    r = requests.get(dot.issuer + "/.well-known/openid-configuration", timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    return r.json()


def oidc_login(gateway, dot) -> dict:
    """Client -> gateway login -> DOT login form -> gateway callback -> client redirect_uri."""
    verifier, challenge = pkce_pair()
    state = secrets.token_urlsafe(16)
    r = requests.get(
        f"{gateway.url}/v1/auth/{gateway.provider}/login",
        params={"redirect_uri": gateway.redirect_uri, "state": state,
                "code_challenge": challenge, "code_challenge_method": "S256"},
        allow_redirects=False, timeout=TIMEOUT,
    )
    assert r.status_code == 302, f"login: expected 302, got {r.status_code}: {r.text[:1000]}"
    to_dot = r.headers["Location"]
    # the authorization endpoint comes from discovery, not from the provider file
    assert without_query(to_dot) == discovery(dot)["authorization_endpoint"] == dot.url + "/o/authorize/", to_dot
    q = query_of(to_dot)
    assert q["response_type"] == "code"
    assert q["client_id"] == dot.oidc_client_id
    assert q["redirect_uri"] == f"{gateway.url}/v1/auth/{gateway.provider}/callback"
    assert set(q["scope"].split()) == {"openid", "profile", "email"}, q["scope"]
    assert q.get("nonce"), "an OIDC authorization request carries a nonce"
    assert q["code_challenge_method"] == "S256" and q["code_challenge"] != challenge
    assert q["state"] and q["state"] != state

    dot_final = dot_sign_in(requests.Session(), to_dot, dot.username, dot.password)
    callback_url = dot_final.headers["Location"]
    assert without_query(callback_url) == q["redirect_uri"]
    cq = query_of(callback_url)
    assert cq["state"] == q["state"] and cq.get("code")
    if dot.iss_enabled:
        assert cq["iss"] == dot.issuer, "DOT sends RFC 9207 iss = the OIDC issuer"
    else:
        assert "iss" not in cq

    r = requests.get(callback_url, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 302, f"callback: expected 302, got {r.status_code}: {r.text[:1000]}"
    to_client = r.headers["Location"]
    assert without_query(to_client) == gateway.redirect_uri, to_client
    hq = query_of(to_client)
    assert "error" not in hq, f"gateway reported an error to the client: {hq}"
    assert hq["state"] == state
    assert hq["code"] and hq["code"] != cq["code"]
    return {"code": hq["code"], "verifier": verifier, "state": state, "nonce": q["nonce"]}


def assert_oidc_session_view(view: dict, gateway, dot) -> None:
    assert view["provider"] == gateway.provider
    assert view["subject"] == dot.subject, "the subject is DOT's OIDC `sub` (user pk), not the username"
    assert view["identity"]["subject"] == dot.subject
    assert view["identity"]["email"] == dot.email
    assert view["identity"]["name"] == dot.name
    assert set(view["scope"]) == {"openid", "profile", "email"}, view["scope"]
    for k in ("created_at", "last_seen_at", "expires_at"):
        assert_rfc3339_utc(view[k])
    assert view["credential"]["refreshable"] is True
    assert token_keys_at_any_depth(view) == []


def test_discovery_document_is_what_the_test_assumes(dot_server):
    d = discovery(dot_server)
    assert d["issuer"] == dot_server.issuer
    assert d["jwks_uri"] and d["userinfo_endpoint"] and d["token_endpoint"]
    assert "RS256" in d["id_token_signing_alg_values_supported"]
    assert d.get("authorization_response_iss_parameter_supported", False) is dot_server.iss_enabled


def test_oidc_login_refresh_logout(oidc_gateway, dot_server):
    gateway, dot = oidc_gateway, dot_server
    rt0, at0 = dot.db.max_ids()
    it0 = dot.db.max_id_token_id()

    login = oidc_login(gateway, dot)
    r = exchange(gateway, login)
    assert r.status_code == 201, f"POST /v1/session: {r.status_code}: {r.text[:1000]}"
    assert_no_provider_tokens(r, dot, rt0, at0)
    body = r.json()
    token = body["session_token"]
    assert re.fullmatch(r"gths_[A-Za-z0-9_-]{43}", token)
    assert_oidc_session_view(body["session"], gateway, dot)

    # DOT issued one access/refresh pair and one ID token for it
    rts = dot.db.refresh_tokens(rt0)
    assert len(rts) == 1 and rts[0]["revoked"] is None
    ids = dot.db.id_tokens(it0)
    assert len(ids) == 1, f"DOT issued {len(ids)} ID tokens for one login"
    (at,) = dot.db.access_tokens_with_id_token(at0)
    assert at["id_token_id"] == ids[0]["id"]

    r = requests.get(f"{gateway.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    assert_oidc_session_view(r.json(), gateway, dot)

    # refresh: DOT rotates the refresh token and issues a new ID token, which the gateway validates
    r = requests.post(f"{gateway.url}/v1/session/refresh", headers=bearer(token), allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 200, f"POST /v1/session/refresh: {r.status_code}: {r.text[:1000]}"
    assert_no_provider_tokens(r, dot, rt0, at0)
    assert_oidc_session_view(r.json(), gateway, dot)
    rts = dot.db.refresh_tokens(rt0)
    assert len(rts) == 2, f"expected one rotation, DOT has {len(rts)} refresh tokens"
    assert rts[0]["revoked"] is not None and rts[1]["revoked"] is None
    ids = dot.db.id_tokens(it0)
    assert len(ids) == 2, "DOT's refresh response carried a new ID token (openid scope)"
    (at,) = dot.db.access_tokens_with_id_token(at0)
    assert at["id_token_id"] == ids[1]["id"]

    r = requests.get(f"{gateway.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    assert_oidc_session_view(r.json(), gateway, dot)

    # logout: revocation only if DOT's discovery advertises a revocation endpoint
    advertised = "revocation_endpoint" in discovery(dot)
    log_offset = dot.log.stat().st_size
    r = requests.delete(f"{gateway.url}/v1/session", headers=bearer(token), allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 200, f"DELETE /v1/session: {r.status_code}: {r.text[:1000]}"
    logout = r.json()
    revoke_calls = "POST /o/revoke_token/" in dot_log_since(dot, log_offset)
    if advertised:
        assert logout["provider_logout"] == "revoked", logout
        assert revoke_calls
    else:
        # DOT 3.x's OIDC discovery has no revocation_endpoint: the gateway does not guess one
        assert logout["provider_logout"] == "not_supported", logout
        assert not revoke_calls, "the gateway called a revocation endpoint DOT did not advertise"
        assert dot.db.refresh_tokens(rt0)[-1]["revoked"] is None

    r = requests.get(f"{gateway.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
    assert_problem(r, 401, "invalid_session")
    r = requests.post(f"{gateway.url}/v1/session/refresh", headers=bearer(token), timeout=TIMEOUT)
    assert_problem(r, 401, "invalid_session")


def test_issuer_differing_from_discovery_refuses_login(oidc_gateway, dot_server):
    """`issuer: <DOT issuer>/` - discovery is fetched (trailing slash dropped) but names the exact
    issuer without it: the provider is not ready, logins get 503 provider_unavailable."""
    gateway, dot = oidc_gateway, dot_server
    assert discovery(dot)["issuer"] == dot.issuer
    _, challenge = pkce_pair()
    r = requests.get(
        f"{gateway.url}/v1/auth/{OIDC_BAD_ISSUER_PROVIDER_ID}/login",
        params={"redirect_uri": gateway.redirect_uri, "state": "s",
                "code_challenge": challenge, "code_challenge_method": "S256"},
        allow_redirects=False, timeout=TIMEOUT,
    )
    problem = assert_problem(r, 503, "provider_unavailable")
    assert_no_redirect(r)
    assert r.headers.get("Retry-After") == "5"
    assert "discovery_issuer_mismatch" in problem.get("detail", ""), problem
    assert OIDC_BAD_ISSUER_PROVIDER_ID in problem["detail"]

    # readiness says the same, naming the bad provider only
    r = requests.get(f"{gateway.url}/readyz", timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "degraded", body
    assert any(entry.startswith(f"{OIDC_BAD_ISSUER_PROVIDER_ID} (discovery_issuer_mismatch") for entry in body["not_ready"]), body
    assert not any(entry.startswith(f"{gateway.provider} (") for entry in body["not_ready"]), body
