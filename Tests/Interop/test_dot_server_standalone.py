"""The DOT fixture on its own (no gateway): proves the provider side of the interop test.

Authorization code + PKCE (S256) through DOT's real login form, code -> token with
client_secret_basic, the protected /api/me, refresh with rotation, expiry, revocation.
"""
import secrets
import time

import requests

from interop_support import TIMEOUT, dot_sign_in, pkce_pair, query_of, without_query


def _authorize(dot, challenge: str, state: str, method: str = "S256") -> str:
    req = requests.Request(
        "GET",
        dot.url + "/o/authorize/",
        params={
            "response_type": "code",
            "client_id": dot.client_id,
            "redirect_uri": dot.redirect_uri,
            "scope": "read",
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": method,
        },
    ).prepare()
    return req.url


def _token(dot, **data):
    return requests.post(dot.url + "/o/token/", data=data, auth=(dot.client_id, dot.client_secret), timeout=TIMEOUT)


def _me(dot, access_token):
    return requests.get(dot.url + "/api/me", headers={"Authorization": f"Bearer {access_token}"}, timeout=TIMEOUT)


def _login(dot):
    verifier, challenge = pkce_pair()
    state = secrets.token_urlsafe(16)
    final = dot_sign_in(requests.Session(), _authorize(dot, challenge, state), dot.username, dot.password)
    loc = final.headers["Location"]
    assert without_query(loc) == dot.redirect_uri
    q = query_of(loc)
    assert q["state"] == state
    if dot.iss_enabled:
        assert q["iss"] == dot.issuer
    return q["code"], verifier


def test_dot_pkce_login_refresh_rotation_and_revocation(dot_server):
    dot = dot_server
    rt0, at0 = dot.db.max_ids()
    code, verifier = _login(dot)

    # PKCE is enforced: a wrong verifier is refused (DOT keeps the code usable afterwards)
    bad = _token(dot, grant_type="authorization_code", code=code, redirect_uri=dot.redirect_uri,
                 code_verifier=pkce_pair()[0])
    assert bad.status_code == 400, bad.text
    assert bad.json()["error"] == "invalid_grant"

    r = _token(dot, grant_type="authorization_code", code=code, redirect_uri=dot.redirect_uri, code_verifier=verifier)
    assert r.status_code == 200, r.text
    tok = r.json()
    assert tok["token_type"] == "Bearer"
    assert tok["scope"] == "read"
    assert tok["expires_in"] == dot.access_token_lifetime
    assert tok["access_token"] and tok["refresh_token"]

    # code is single use
    again = _token(dot, grant_type="authorization_code", code=code, redirect_uri=dot.redirect_uri, code_verifier=verifier)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"

    me = _me(dot, tok["access_token"])
    assert me.status_code == 200, me.text
    assert me.json() == {"username": dot.username, "email": dot.email}

    # no token / token in the query string: RFC 6750 401 with a Bearer challenge (not 403)
    r = requests.get(dot.url + "/api/me", timeout=TIMEOUT)
    assert r.status_code == 401 and r.headers["WWW-Authenticate"].startswith("Bearer")
    r = requests.get(dot.url + "/api/me", params={"access_token": tok["access_token"]}, timeout=TIMEOUT)
    assert r.status_code == 401

    rts = dot.db.refresh_tokens(rt0)
    assert [(x["token"], x["revoked"]) for x in rts] == [(tok["refresh_token"], None)]

    # refresh rotates: new pair, the old refresh token is marked revoked, old access token dies
    r = _token(dot, grant_type="refresh_token", refresh_token=tok["refresh_token"])
    assert r.status_code == 200, r.text
    tok2 = r.json()
    assert tok2["refresh_token"] != tok["refresh_token"] and tok2["access_token"] != tok["access_token"]
    rts = dot.db.refresh_tokens(rt0)
    assert len(rts) == 2
    assert rts[0]["token"] == tok["refresh_token"] and rts[0]["revoked"] is not None
    assert rts[1]["token"] == tok2["refresh_token"] and rts[1]["revoked"] is None
    assert _me(dot, tok["access_token"]).status_code == 401
    assert _me(dot, tok2["access_token"]).status_code == 200

    # the rotated-out refresh token is dead (grace period 0)
    r = _token(dot, grant_type="refresh_token", refresh_token=tok["refresh_token"])
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"

    # expiry: past the lifetime the access token gets 401 invalid_token
    time.sleep(dot.access_token_lifetime + 1)
    r = _me(dot, tok2["access_token"])
    assert r.status_code == 401
    assert 'error="invalid_token"' in r.headers["WWW-Authenticate"]

    # revocation (RFC 7009) of the refresh token kills it and its access token
    r = requests.post(dot.url + "/o/revoke_token/", data={"token": tok2["refresh_token"], "token_type_hint": "refresh_token"},
                      auth=(dot.client_id, dot.client_secret), timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    assert all(x["revoked"] is not None for x in dot.db.refresh_tokens(rt0))
    assert dot.db.access_tokens(at0) == []
    r = _token(dot, grant_type="refresh_token", refresh_token=tok2["refresh_token"])
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"


def test_dot_requires_pkce_s256(dot_server):
    dot = dot_server
    browser = requests.Session()
    # sign in once so the authorize endpoint answers for itself instead of bouncing to login
    _login_browser = dot_sign_in(browser, _authorize(dot, pkce_pair()[1], "s0"), dot.username, dot.password)
    assert _login_browser.status_code == 302
    for params in ({"code_challenge_method": "plain"}, {"code_challenge": None, "code_challenge_method": None}):
        url = _authorize(dot, pkce_pair()[1], "s1")
        q = query_of(url)
        q.update(params)
        q = {k: v for k, v in q.items() if v is not None}
        r = browser.get(dot.url + "/o/authorize/", params=q, allow_redirects=False, timeout=TIMEOUT)
        assert r.status_code == 302, r.text
        back = query_of(r.headers["Location"])
        assert back.get("error") == "invalid_request", (params, back)
