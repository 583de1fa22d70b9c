"""Helpers for the DPoP (RFC 9449) tests: the independent client, forged proofs, sign-in through DOT.

Two independent JOSE stacks are used, neither of them the gateway's:
  * requests_oauth2client (its DPoPKey / DPoPToken, on jwskate) is the well-behaved client of the
    happy paths: it makes the keys and signs every proof the gateway must accept;
  * joserfc signs the proofs that deliberately break one rule (claims, header, MAC, private jwk);
    `alg: none` is assembled by hand (no JOSE library signs it).

Shared by Tests/Interop/test_dpop_interop.py and Tests/ScaleOut/test_dpop_scale_out.py (whose
conftest puts Tests/Interop on sys.path).
"""
from __future__ import annotations

import base64
import hashlib
import http.client
import json
import re
import secrets
import time
import uuid
from urllib.parse import urlsplit, urlunsplit

import requests
from joserfc import jws
from joserfc.jwk import ECKey, OctKey, OKPKey, RSAKey
from requests_oauth2client import DPoPKey, DPoPToken
from requests_oauth2client.dpop import InvalidUseDPoPNonceResponse

from interop_support import TIMEOUT, dot_sign_in, pkce_pair, query_of

NATIVE_REDIRECT_URI = "http://127.0.0.1:9/cb"
PROOF_ALGS = {"ES256", "RS256", "PS256", "EdDSA"}
PROBLEM = "application/problem+json"


# ---------------------------------------------------------------- encoding

def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64u_json(obj) -> str:
    return b64u(json.dumps(obj, separators=(",", ":")).encode())


def ath_of(token: str) -> str:
    """RFC 9449 §4.2: base64url(SHA-256(ASCII(access token)))."""
    return b64u(hashlib.sha256(token.encode("ascii")).digest())


def base_url(url: str) -> str:
    p = urlsplit(url)
    return urlunsplit((p.scheme, p.netloc, "", "", ""))


# ---------------------------------------------------------------- the independent client

def new_key(alg: str = "ES256") -> DPoPKey:
    return DPoPKey.generate(alg=alg)


def proof(key: DPoPKey, method: str, url: str, token: str | None = None, nonce: str | None = None) -> str:
    """A proof made by requests_oauth2client (it strips query and fragment from `url` itself)."""
    return str(key.proof(htm=method, htu=url, ath=ath_of(token) if token else None, nonce=nonce))


def dpop_headers(key: DPoPKey, method: str, url: str, token: str, nonce: str | None = None) -> dict:
    return {"Authorization": f"DPoP {token}", "DPoP": proof(key, method, url, token, nonce)}


def dpop_auth(key: DPoPKey, token: str) -> DPoPToken:
    """requests_oauth2client's DPoP token as a `requests` auth: a fresh proof of every request, and a
    retry with the server's nonce on a `use_dpop_nonce` 401."""
    return DPoPToken(token, _dpop_key=key)


def library_call(method: str, url: str, auth: DPoPToken, **kwargs) -> requests.Response:
    """A request through the library's auth. Its nonce hook raises on a DPoP 401 without `DPoP-Nonce`
    (any refusal of a proof): turn that into a readable assertion failure with the gateway's answer."""
    try:
        return requests.request(method, url, auth=auth, allow_redirects=False, timeout=TIMEOUT, **kwargs)
    except InvalidUseDPoPNonceResponse as e:
        r = e.response
        raise AssertionError(
            f"{method} {url}: the gateway refused the library's proof: {r.status_code} "
            f"WWW-Authenticate={r.headers.get('WWW-Authenticate')!r} {r.text[:800]}"
        ) from None


def private_jwk(key: DPoPKey) -> dict:
    return dict(key.private_key.to_dict())


def public_jwk(key: DPoPKey) -> dict:
    return dict(key.public_jwk.to_dict())


def raw_request(base: str, method: str, target: str, headers: list[tuple[str, str]]) -> tuple[int, dict, bytes]:
    """One request exactly as given (`target` unnormalized, header fields repeated as listed), which
    `requests` cannot send: (status, headers, body)."""
    u = urlsplit(base)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=TIMEOUT)
    try:
        c.putrequest(method, target, skip_accept_encoding=True)
        for k, v in headers:
            c.putheader(k, v)
        c.endheaders()
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


# ---------------------------------------------------------------- forged proofs (joserfc)

def _joserfc_key(jwk: dict):
    kty = jwk["kty"]
    cls = {"EC": ECKey, "RSA": RSAKey, "OKP": OKPKey}[kty]
    return cls.import_key({k: v for k, v in jwk.items() if k != "alg"})


def claims_for(method: str, url: str, token: str | None = None, **overrides) -> dict:
    p = urlsplit(url)
    claims = {
        "jti": str(uuid.uuid4()),
        "htm": method,
        "htu": urlunsplit((p.scheme, p.netloc, p.path, "", "")),
        "iat": int(time.time()),
    }
    if token is not None:
        claims["ath"] = ath_of(token)
    for k, v in overrides.items():
        if v is _DROP:
            claims.pop(k, None)
        else:
            claims[k] = v
    return claims


class _Drop:
    def __repr__(self):
        return "DROP"


_DROP = _Drop()
DROP = _DROP  # pass as a claim/header override to leave that member out


def forge(key: DPoPKey, claims: dict, *, header: dict | None = None, signing_jwk: dict | None = None) -> str:
    """A proof signed by joserfc with `key` (or `signing_jwk`), the header defaulting to what a correct proof
    has (`typ` dpop+jwt, the key's alg, its public jwk); `header` overrides members (DROP removes one)."""
    h = {"typ": "dpop+jwt", "alg": key.alg, "jwk": public_jwk(key)}
    for k, v in (header or {}).items():
        if v is _DROP:
            h.pop(k, None)
        else:
            h[k] = v
    signer = _joserfc_key(signing_jwk or private_jwk(key))
    return jws.serialize_compact(h, json.dumps(claims).encode(), signer, algorithms=[h["alg"]])


def forge_unsigned(key: DPoPKey, claims: dict) -> str:
    """`alg: none`, empty signature (RFC 7515 Appendix A.5 shape)."""
    return f"{b64u_json({'typ': 'dpop+jwt', 'alg': 'none', 'jwk': public_jwk(key)})}.{b64u_json(claims)}."


def forge_hs256(key: DPoPKey, claims: dict) -> str:
    """A MAC "signed" with the public key's own JSON as the secret (the classic alg-confusion attack):
    the header names the bound key, so only the alg check can stop it."""
    pub = public_jwk(key)
    secret = OctKey.import_key(json.dumps(pub, separators=(",", ":")).encode())
    return jws.serialize_compact({"typ": "dpop+jwt", "alg": "HS256", "jwk": pub}, json.dumps(claims).encode(),
                                 secret, algorithms=["HS256"])


# ---------------------------------------------------------------- problems and challenges

def assert_problem(r: requests.Response, status: int, code: str | set[str] | None = None) -> dict:
    assert r.status_code == status, f"expected {status}, got {r.status_code}: {r.text[:1000]}"
    ctype = r.headers.get("Content-Type", "").split(";")[0].strip()
    assert ctype == PROBLEM, f"not problem+json: {ctype!r} {r.text[:500]}"
    body = r.json()
    if code is not None:
        allowed = {code} if isinstance(code, str) else code
        assert body.get("code") in allowed, f"problem code {body.get('code')!r} not in {allowed}: {body}"
    assert "session_token" not in body
    return body


def dpop_challenge(r: requests.Response) -> dict:
    """The parameters of the `WWW-Authenticate: DPoP …` challenge (fails when there is none)."""
    value = r.headers.get("WWW-Authenticate", "")
    m = re.match(r"\s*DPoP\s+(.*)$", value, re.I)
    assert m, f"no DPoP challenge in WWW-Authenticate: {value!r} ({r.status_code} {r.text[:300]})"
    params = dict(re.findall(r'([A-Za-z_]+)\s*=\s*"([^"]*)"', m.group(1)))
    return params


def assert_dpop_refusal(r: requests.Response, code: str = "invalid_dpop_proof", status: int = 401) -> dict:
    """401 problem `code` with `WWW-Authenticate: DPoP error="code", algs="ES256 RS256 PS256 EdDSA"`."""
    body = assert_problem(r, status, code)
    params = dpop_challenge(r)
    assert params.get("error") == code, f"challenge error {params.get('error')!r} != {code!r}: {r.headers.get('WWW-Authenticate')!r}"
    algs = params.get("algs", "").split()
    assert set(algs) == PROOF_ALGS and len(algs) == len(PROOF_ALGS), \
        f"challenge algs {algs} != {sorted(PROOF_ALGS)}: {r.headers.get('WWW-Authenticate')!r}"
    assert "none" not in algs and not any(a.startswith("HS") for a in algs)
    return body


# ---------------------------------------------------------------- sign-in through DOT

def native_login(start: str, provider: str, username: str, password: str, *, callback_base: str | None = None,
                 redirect_uri: str = NATIVE_REDIRECT_URI) -> dict:
    """A native client's login: gateway `start` -> DOT's login form -> the gateway callback (delivered to
    `callback_base` when given: another instance behind the same public URL) -> the handoff code."""
    verifier, challenge = pkce_pair()
    state = secrets.token_urlsafe(12)
    r = requests.get(f"{start}/v1/auth/{provider}/login",
                     params={"redirect_uri": redirect_uri, "state": state, "code_challenge": challenge,
                             "code_challenge_method": "S256"}, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 302, f"login: {r.status_code} {r.text[:500]}"
    final = dot_sign_in(requests.Session(), r.headers["Location"], username, password)
    callback = final.headers["Location"]
    if callback_base:
        p = urlsplit(callback)
        c = urlsplit(callback_base)
        callback = urlunsplit((c.scheme, c.netloc, p.path, p.query, p.fragment))
    r = requests.get(callback, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 302, f"callback: {r.status_code} {r.text[:500]}"
    q = query_of(r.headers["Location"])
    assert "error" not in q, q
    assert q["state"] == state
    return {"code": q["code"], "verifier": verifier, "redirect_uri": redirect_uri}


def exchange(base: str, login: dict, dpop: str | None = None) -> requests.Response:
    """`POST {base}/v1/session` with the handoff code, with a `DPoP` header when `dpop` is given."""
    headers = {"DPoP": dpop} if dpop is not None else {}
    return requests.post(f"{base}/v1/session",
                         json={"grant_type": "authorization_code", "code": login["code"],
                               "code_verifier": login["verifier"], "redirect_uri": login["redirect_uri"]},
                         headers=headers, allow_redirects=False, timeout=TIMEOUT)


def assert_grant(r: requests.Response, token_type: str) -> str:
    assert r.status_code == 201, f"sign-in: expected 201, got {r.status_code}: {r.text[:1000]}"
    body = r.json()
    assert body.get("token_type") == token_type, f"token_type {body.get('token_type')!r}, expected {token_type!r}: {body}"
    token = body["session_token"]
    assert re.fullmatch(r"gths_[A-Za-z0-9_-]{43}", token), token
    return token
