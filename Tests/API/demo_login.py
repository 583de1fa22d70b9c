"""Signing in to `gatehouse demo` without a browser: the native flow (RFC 8252 + PKCE) through the
stand-in OAuth 2.0 server's sign-in form, then `POST /v1/session`. Used by the tests and by the
schemathesis hooks (which need a fresh session after a generated `DELETE /v1/session`)."""
from __future__ import annotations

import base64
import hashlib
import secrets
from urllib.parse import parse_qs, urlsplit

import requests

REDIRECT_URI = "http://127.0.0.1/callback"  # allowed by the demo's configuration


def native_login(gateway: str, user: str = "alice", password: str = "alice-password", provider: str = "demo") -> dict:
    """The 201 body of `POST /v1/session` for a fresh session of `user` at the demo's OAuth 2.0 stand-in."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state = secrets.token_urlsafe(12)
    start = requests.get(f"{gateway}/v1/auth/{provider}/login", params={
        "redirect_uri": REDIRECT_URI, "state": state, "code_challenge": challenge, "code_challenge_method": "S256",
    }, allow_redirects=False, timeout=10)
    assert start.status_code == 302, start.text
    authorize = urlsplit(start.headers["Location"])
    form = {key: values[0] for key, values in parse_qs(authorize.query).items()}
    form.update(username=user, password=password)
    signed_in = requests.post(f"{authorize.scheme}://{authorize.netloc}/authorize", data=form, allow_redirects=False, timeout=10)
    assert signed_in.status_code in (302, 303), signed_in.text
    callback = requests.get(signed_in.headers["Location"], allow_redirects=False, timeout=10)
    assert callback.status_code == 302, callback.text
    back = parse_qs(urlsplit(callback.headers["Location"]).query)
    assert back["state"] == [state], back
    grant = requests.post(f"{gateway}/v1/session", json={
        "grant_type": "authorization_code", "code": back["code"][0], "code_verifier": verifier, "redirect_uri": REDIRECT_URI,
    }, timeout=10)
    assert grant.status_code == 201, grant.text
    return grant.json()
