"""Gatehouse against django-oauth-toolkit: the native-app flow end to end.

No HTTP redirect is ever followed automatically: every hop is asserted.
"""
from __future__ import annotations

import json
import re
import secrets
import time
from urllib.parse import urlencode

import pytest
import requests

from interop_support import (
    TIMEOUT,
    dot_sign_in,
    expire_access_tokens_now,
    pkce_pair,
    query_of,
    without_query,
)

TOKEN_KEYS = {"access_token", "refresh_token", "id_token"}


# ---------------------------------------------------------------- helpers

def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def assert_problem(r: requests.Response, status: int, code: str | set[str] | None = None) -> dict:
    assert r.status_code == status, f"expected {status}, got {r.status_code}: {r.text[:1000]}"
    ctype = r.headers.get("Content-Type", "")
    assert ctype.split(";")[0].strip() == "application/problem+json", f"not problem+json: {ctype!r} {r.text[:500]}"
    body = r.json()
    if code is not None:
        allowed = {code} if isinstance(code, str) else code
        assert body.get("code") in allowed, f"problem code {body.get('code')!r} not in {allowed}: {body}"
    return body


def assert_no_redirect(r: requests.Response) -> None:
    assert "Location" not in r.headers, f"unexpected redirect to {r.headers.get('Location')}"


def token_keys_at_any_depth(obj, path="$") -> list[str]:
    found = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if str(k).lower() in TOKEN_KEYS:
                found.append(f"{path}.{k}")
            found += token_keys_at_any_depth(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            found += token_keys_at_any_depth(v, f"{path}[{i}]")
    return found


def assert_no_provider_tokens(r: requests.Response, dot, rt0: int, at0: int) -> None:
    """No token-named key at any depth, and none of DOT's real tokens in the raw body or headers."""
    if r.content:
        assert token_keys_at_any_depth(r.json()) == [], f"token keys leaked: {r.text}"
    raw = r.text + "\n" + "\n".join(f"{k}: {v}" for k, v in r.headers.items())
    for row in list(dot.db.refresh_tokens(rt0)) + list(dot.db.access_tokens(at0)):
        assert row["token"] not in raw, "a DOT token appears in a gateway response"


def assert_rfc3339_utc(value) -> None:
    assert isinstance(value, str) and re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]00:00)", value
    ), f"not an RFC 3339 UTC time: {value!r}"


def gateway_login(gateway, dot, *, client_state=None):
    """Client -> gateway login -> DOT (login form) -> gateway callback -> client redirect_uri.

    Returns dict(code=handoff code, verifier, state, dot_code, callback_url).
    """
    verifier, challenge = pkce_pair()
    state = client_state or secrets.token_urlsafe(16)
    r = requests.get(
        f"{gateway.url}/v1/auth/{gateway.provider}/login",
        params={"redirect_uri": gateway.redirect_uri, "state": state,
                "code_challenge": challenge, "code_challenge_method": "S256"},
        allow_redirects=False, timeout=TIMEOUT,
    )
    assert r.status_code == 302, f"login: expected 302, got {r.status_code}: {r.text[:1000]}"
    to_dot = r.headers["Location"]
    assert without_query(to_dot) == dot.url + "/o/authorize/", to_dot
    q = query_of(to_dot)
    assert q["response_type"] == "code"
    assert q["client_id"] == dot.client_id
    assert q["redirect_uri"] == f"{gateway.url}/v1/auth/{gateway.provider}/callback"
    assert "read" in q["scope"].split()
    assert q["code_challenge_method"] == "S256"
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", q["code_challenge"]), q["code_challenge"]
    assert q["code_challenge"] != challenge, "gateway must use its own PKCE towards the provider"
    assert q["state"] and q["state"] != state, "gateway must use its own state towards the provider"
    assert challenge not in to_dot and state not in to_dot
    assert q["ui_locales"] == "nb en", "the provider file's authorization_params"

    dot_final = dot_sign_in(requests.Session(), to_dot, dot.username, dot.password)
    callback_url = dot_final.headers["Location"]
    assert without_query(callback_url) == q["redirect_uri"]
    cq = query_of(callback_url)
    assert cq["state"] == q["state"] and cq.get("code")
    if dot.iss_enabled:
        assert cq["iss"] == dot.issuer

    r = requests.get(callback_url, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 302, f"callback: expected 302, got {r.status_code}: {r.text[:1000]}"
    to_client = r.headers["Location"]
    assert without_query(to_client) == gateway.redirect_uri, to_client
    hq = query_of(to_client)
    assert "error" not in hq, f"gateway reported an error to the client: {hq}"
    assert hq["state"] == state, "client state not echoed"
    assert hq["code"] and hq["code"] != cq["code"], "handoff code must be the gateway's own, not DOT's code"
    return {"code": hq["code"], "verifier": verifier, "state": state, "dot_code": cq["code"], "callback_url": callback_url}


def exchange(gateway, login, *, verifier=None, redirect_uri=None) -> requests.Response:
    return requests.post(
        f"{gateway.url}/v1/session",
        json={"grant_type": "authorization_code", "code": login["code"],
              "code_verifier": verifier or login["verifier"], "redirect_uri": redirect_uri or gateway.redirect_uri},
        allow_redirects=False, timeout=TIMEOUT,
    )


def assert_session_view(view: dict, dot) -> None:
    assert view["provider"] == "dot"
    assert view["subject"] == dot.username
    assert view["identity"]["email"] == dot.email
    assert view["scope"] == ["read"]
    assert isinstance(view["id"], str) and view["id"]
    for k in ("created_at", "last_seen_at", "expires_at"):
        assert_rfc3339_utc(view[k])
    assert view["credential"]["refreshable"] is True
    assert_rfc3339_utc(view["credential"]["expires_at"])
    assert token_keys_at_any_depth(view) == []


def new_session(gateway, dot, rt0, at0) -> tuple[str, dict]:
    login = gateway_login(gateway, dot)
    r = exchange(gateway, login)
    assert r.status_code == 201, f"POST /v1/session: {r.status_code}: {r.text[:1000]}"
    body = r.json()
    assert_no_provider_tokens(r, dot, rt0, at0)
    assert body["token_type"] == "Bearer"
    assert isinstance(body["expires_in"], int) and body["expires_in"] > 0
    token = body["session_token"]
    assert re.fullmatch(r"gths_[A-Za-z0-9_-]{43}", token), "session token: gths_ and 32 random bytes, base64url"
    assert_session_view(body["session"], dot)
    return token, body


def proxy_me(gateway, token) -> requests.Response:
    return requests.get(f"{gateway.url}/v1/proxy/{gateway.provider}/me", headers=bearer(token),
                        allow_redirects=False, timeout=TIMEOUT)


def dot_log_since(dot, offset: int) -> str:
    return dot.log.read_bytes()[offset:].decode(errors="replace")


# ---------------------------------------------------------------- tests

def test_full_native_flow_refresh_rotation_and_logout(gateway, dot_server, echo_backend):
    dot = dot_server
    rt0, at0 = dot.db.max_ids()
    token, body = new_session(gateway, dot, rt0, at0)

    # DOT issued exactly one token pair for this login
    rts = dot.db.refresh_tokens(rt0)
    assert len(rts) == 1 and rts[0]["revoked"] is None
    first_rt = rts[0]["token"]

    r = requests.get(f"{gateway.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    assert_no_provider_tokens(r, dot, rt0, at0)
    assert_session_view(r.json(), dot)
    assert r.json()["id"] == body["session"]["id"]

    # provider API through the gateway, DOT's own resource server validates the token
    r = proxy_me(gateway, token)
    assert r.status_code == 200, r.text
    assert r.json() == {"username": dot.username, "email": dot.email}

    # backend: identity headers added, client's Authorization and spoofed X-Gatehouse-* removed
    r = requests.get(f"{gateway.url}/v1/api/anything/here?x=1",
                     headers={**bearer(token), "X-Gatehouse-Subject": "mallory", "X-Gatehouse-Email": "m@evil"},
                     allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    echo = r.json()
    h = echo["headers"]
    assert echo["method"] == "GET" and echo["path"] == "/anything/here?x=1"
    assert h["x-gatehouse-subject"] == [dot.username]
    assert h["x-gatehouse-provider"] == ["dot"]
    assert h["x-gatehouse-email"] == [dot.email]
    assert len(h["x-gatehouse-assertion"]) == 1 and h["x-gatehouse-assertion"][0].count(".") == 2
    assert "authorization" not in h, "client Authorization (or provider token) reached the backend"
    assert token not in json.dumps(echo)
    assert_no_provider_tokens(r, dot, rt0, at0)

    # still within the first half of the lifetime: no refresh may have happened
    assert len(dot.db.refresh_tokens(rt0)) == 1, "gateway refreshed a fresh credential"

    # past the access-token lifetime: the gateway refreshes before proxying, DOT rotates
    time.sleep(dot.access_token_lifetime + 1)
    r = proxy_me(gateway, token)
    assert r.status_code == 200, r.text
    assert r.json()["username"] == dot.username
    rts = dot.db.refresh_tokens(rt0)
    assert len(rts) == 2, f"expected exactly one refresh (rotation), DOT has {len(rts)} refresh tokens"
    assert rts[0]["token"] == first_rt and rts[0]["revoked"] is not None, "original refresh token not rotated out"
    assert rts[1]["revoked"] is None
    assert len(dot.db.access_tokens(at0)) == 1

    # explicit refresh: always refreshes, another rotation
    r = requests.post(f"{gateway.url}/v1/session/refresh", headers=bearer(token), allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 200, f"POST /v1/session/refresh: {r.status_code}: {r.text[:1000]}"
    assert r.headers.get("Content-Type", "").split(";")[0].strip() == "application/json"
    assert_no_provider_tokens(r, dot, rt0, at0)
    rts = dot.db.refresh_tokens(rt0)
    assert len(rts) == 3
    assert rts[1]["revoked"] is not None and rts[2]["revoked"] is None
    r = proxy_me(gateway, token)
    assert r.status_code == 200, r.text

    # log out: session gone, DOT tokens revoked through the revocation endpoint
    log_offset = dot.log.stat().st_size
    r = requests.delete(f"{gateway.url}/v1/session", headers=bearer(token), allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code in (200, 204), f"DELETE /v1/session: {r.status_code}: {r.text[:1000]}"
    assert '"POST /o/revoke_token/ HTTP/1.1" 200' in dot_log_since(dot, log_offset), "revocation endpoint not called"
    assert all(x["revoked"] is not None for x in dot.db.refresh_tokens(rt0)), "a DOT refresh token is still live"
    assert dot.db.access_tokens(at0) == [], "a DOT access token is still live"

    r = requests.get(f"{gateway.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
    assert_problem(r, 401, "invalid_session")
    r = proxy_me(gateway, token)
    assert_problem(r, 401, "invalid_session")


def test_upstream_401_triggers_one_refresh_and_replay(gateway, dot_server):
    """DOT rejects the access token early (401 invalid_token): the gateway refreshes once and replays."""
    dot = dot_server
    rt0, at0 = dot.db.max_ids()
    token, _ = new_session(gateway, dot, rt0, at0)
    started = time.monotonic()
    offset = dot.log.stat().st_size
    assert expire_access_tokens_now(dot.db.path, at0) == 1
    r = proxy_me(gateway, token)
    elapsed = time.monotonic() - started
    assert r.status_code == 200, r.text
    assert r.json()["username"] == dot.username
    rts = dot.db.refresh_tokens(rt0)
    assert len(rts) == 2 and rts[0]["revoked"] is not None and rts[1]["revoked"] is None
    if elapsed < dot.access_token_lifetime / 2 - 1:
        # the gateway could not have refreshed pre-emptively yet: DOT must have seen 401, token, 200
        log = dot_log_since(dot, offset)
        seq = re.findall(r'"(GET /api/me|POST /o/token/) HTTP/1\.1" (\d{3})', log)
        # (an access-log line of an earlier request may land just after `offset`: look at the tail)
        assert seq[-3:] == [("GET /api/me", "401"), ("POST /o/token/", "200"), ("GET /api/me", "200")], seq
        assert seq.count(("POST /o/token/", "200")) == 1, seq
    requests.delete(f"{gateway.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)


def test_revoked_at_provider_ends_session_with_reauthentication_required(gateway, dot_server):
    dot = dot_server
    rt0, at0 = dot.db.max_ids()
    token, _ = new_session(gateway, dot, rt0, at0)
    (rt,) = dot.db.refresh_tokens(rt0)
    r = requests.post(dot.url + "/o/revoke_token/", data={"token": rt["token"], "token_type_hint": "refresh_token"},
                      auth=(dot.client_id, dot.client_secret), timeout=TIMEOUT)
    assert r.status_code == 200
    r = proxy_me(gateway, token)
    assert_problem(r, 401, "reauthentication_required")
    r = requests.get(f"{gateway.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
    assert_problem(r, 401, {"invalid_session", "reauthentication_required"})


def test_replayed_handoff_code_is_invalid_grant_and_revokes_the_session(gateway, dot_server):
    dot = dot_server
    rt0, at0 = dot.db.max_ids()
    login = gateway_login(gateway, dot)
    r = exchange(gateway, login)
    assert r.status_code == 201, r.text
    token = r.json()["session_token"]
    r = exchange(gateway, login)
    assert_problem(r, 400, "invalid_grant")
    assert_no_provider_tokens(r, dot, rt0, at0)
    r = requests.get(f"{gateway.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
    assert_problem(r, 401, "invalid_session")


def test_handoff_code_is_bound_to_verifier_and_redirect_uri(gateway, dot_server):
    dot = dot_server
    login = gateway_login(gateway, dot)
    r = exchange(gateway, login, verifier=pkce_pair()[0])
    assert_problem(r, 400, "invalid_grant")
    login = gateway_login(gateway, dot)
    r = exchange(gateway, login, redirect_uri="http://127.0.0.1:9/other")
    assert r.status_code == 400, r.text
    assert_problem(r, 400)


def test_replayed_or_unknown_callback_state_is_400_without_redirect(gateway, dot_server):
    dot = dot_server
    login = gateway_login(gateway, dot)
    r = requests.get(login["callback_url"], allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 400, r.text
    assert_no_redirect(r)
    r = requests.get(f"{gateway.url}/v1/auth/{gateway.provider}/callback?"
                     + urlencode({"code": "bogus", "state": secrets.token_urlsafe(16)}),
                     allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 400, r.text
    assert_no_redirect(r)


@pytest.mark.parametrize("params, why", [
    ({"code_challenge_method": "plain"}, "plain PKCE"),
    ({"code_challenge": None, "code_challenge_method": None}, "no PKCE"),
])
def test_login_requires_client_pkce_s256(gateway, params, why):
    q = {"redirect_uri": gateway.redirect_uri, "state": "s", "code_challenge": pkce_pair()[1],
         "code_challenge_method": "S256"}
    q.update(params)
    q = {k: v for k, v in q.items() if v is not None}
    r = requests.get(f"{gateway.url}/v1/auth/{gateway.provider}/login", params=q, allow_redirects=False, timeout=TIMEOUT)
    assert_problem(r, 400, "invalid_request")
    assert_no_redirect(r)


def test_login_refuses_unlisted_redirect_uri(gateway):
    r = requests.get(f"{gateway.url}/v1/auth/{gateway.provider}/login",
                     params={"redirect_uri": "http://evil.example/cb", "state": "s",
                             "code_challenge": pkce_pair()[1], "code_challenge_method": "S256"},
                     allow_redirects=False, timeout=TIMEOUT)
    assert_problem(r, 400)
    assert_no_redirect(r)
