"""An OpenID provider on loopback, for tests that sign in through a gateway's `oidc` provider without a browser
and then end sessions from the provider's side (OpenID Connect Back-Channel Logout 1.0).

It serves discovery, a JWKS (RS256 `rsa1`, ES256 `ec1`), `/authorize` (no sign-in page: it answers at once with
a code for the identity the test set in `next_login`), and `/token` (authorization code and refresh grants;
ID tokens with `sid`, `acr`, `amr` and `auth_time`, RS256). It mints logout tokens with its keys, and the
hostile ones (`alg: none`, HS256 keyed with its public key) for the tests of refusals.

    provider = OpenIDProvider()
    provider.next_login = {"sub": "alice", "sid": "sid-1"}
    grant = sign_in(gateway_url, "idp", provider)       # POST /v1/session's 201 body
    requests.post(gateway_url + "/v1/auth/idp/backchannel-logout", data={"logout_token": provider.logout_token(sid="sid-1")})
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
import uuid
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

BACKCHANNEL_EVENT = "http://schemas.openid.net/event/backchannel-logout"
CLIENT_ID = "gatehouse"
CLIENT_SECRET = "oidc-client-secret-for-tests"
NATIVE_REDIRECT_URI = "http://127.0.0.1:9/cb"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class OpenIDProvider:
    """The provider; `url` is its issuer. `next_login` is the identity the next `/authorize` signs in
    (`sub`, and optionally `sid`, `acr`, `amr`, `auth_time`; absent keys are left out of the ID token)."""

    def __init__(self, client_id: str = CLIENT_ID):
        self.client_id = client_id
        self.rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec_key = ec.generate_private_key(ec.SECP256R1())
        self.next_login: dict = {"sub": "alice", "sid": "sid-1"}
        # Every /authorize query, in order; with `honours_step_up`, a login asked for `acr_values` gets the first of
        # them and one asked for `max_age` authenticates anew (`auth_time` now), as a provider with a second factor does.
        self.authorize_requests: list[dict] = []
        self.honours_step_up = True
        self.codes: dict[str, dict] = {}
        self.refresh_tokens: dict[str, dict] = {}
        self.lock = threading.Lock()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status: int, body: dict, headers: dict | None = None):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", "no-store")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                path, _, query = self.path.partition("?")
                if path == "/.well-known/openid-configuration":
                    self._send(200, provider.discovery())
                elif path == "/jwks":
                    self._send(200, {"keys": provider.jwks()})
                elif path == "/authorize":
                    fields = {k: v[0] for k, v in parse_qs(query).items()}
                    code = secrets.token_urlsafe(16)
                    login = dict(provider.next_login)
                    if provider.honours_step_up and fields.get("acr_values"):
                        login["acr"] = fields["acr_values"].split(" ")[0]
                    if provider.honours_step_up and "max_age" in fields:
                        login["auth_time"] = int(time.time())
                    with provider.lock:
                        provider.authorize_requests.append(fields)
                        provider.codes[code] = {"nonce": fields.get("nonce"), **login}
                    target = fields["redirect_uri"] + "?" + urlencode({"code": code, "state": fields.get("state", "")})
                    self.send_response(302)
                    self.send_header("Location", target)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                else:
                    self._send(404, {"error": "not_found"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                fields = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                if self.path != "/token":
                    self._send(404, {"error": "not_found"})
                    return
                expected = "Basic " + base64.b64encode(f"{provider.client_id}:{CLIENT_SECRET}".encode()).decode()
                if self.headers.get("Authorization") != expected:
                    self._send(401, {"error": "invalid_client"})
                    return
                with provider.lock:
                    if fields.get("grant_type") == "authorization_code":
                        login = provider.codes.pop(fields.get("code", ""), None)
                    elif fields.get("grant_type") == "refresh_token":
                        login = provider.refresh_tokens.get(fields.get("refresh_token", ""))
                        login = login and {**login, "nonce": None}
                    else:
                        login = None
                if login is None:
                    self._send(400, {"error": "invalid_grant"})
                    return
                refresh = secrets.token_urlsafe(16)
                with provider.lock:
                    provider.refresh_tokens[refresh] = login
                self._send(200, {
                    "access_token": secrets.token_urlsafe(16), "token_type": "Bearer", "expires_in": 3600,
                    "refresh_token": refresh, "id_token": provider.id_token(login),
                })

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    # --- documents --------------------------------------------------------------------------------

    def discovery(self) -> dict:
        return {
            "issuer": self.url, "authorization_endpoint": self.url + "/authorize", "token_endpoint": self.url + "/token",
            "jwks_uri": self.url + "/jwks", "response_types_supported": ["code"], "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256", "ES256"], "code_challenge_methods_supported": ["S256"],
            "backchannel_logout_supported": True, "backchannel_logout_session_supported": True,
        }

    def jwks(self) -> list[dict]:
        rsa_jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.rsa_key.public_key()))
        ec_jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.ec_key.public_key()))
        return [{**rsa_jwk, "kid": "rsa1", "alg": "RS256", "use": "sig"}, {**ec_jwk, "kid": "ec1", "alg": "ES256", "use": "sig"}]

    def public_key_pem(self) -> bytes:
        return self.rsa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    # --- tokens -----------------------------------------------------------------------------------

    def id_token(self, login: dict) -> str:
        now = int(time.time())
        claims = {"iss": self.url, "aud": self.client_id, "sub": login["sub"], "iat": now, "exp": now + 300,
                  **{k: login[k] for k in ("sid", "acr", "amr", "auth_time") if login.get(k) is not None}}
        if login.get("nonce"):
            claims["nonce"] = login["nonce"]
        return jwt.encode(claims, self.rsa_key, algorithm="RS256", headers={"kid": "rsa1"})

    def logout_claims(self, sub: str | None = None, sid: str | None = None, **changes) -> dict:
        now = int(time.time())
        claims = {"iss": self.url, "aud": self.client_id, "iat": now, "exp": now + 120, "jti": str(uuid.uuid4()),
                  "events": {BACKCHANNEL_EVENT: {}}}
        if sub is not None:
            claims["sub"] = sub
        if sid is not None:
            claims["sid"] = sid
        for name, value in changes.items():
            if value is None:
                claims.pop(name, None)
            else:
                claims[name] = value
        return claims

    def logout_token(self, sub: str | None = None, sid: str | None = None, alg: str = "RS256", typ: str | None = "logout+jwt",
                     key=None, **changes) -> str:
        """A logout token signed with the provider's RSA (RS256) or EC (ES256) key, or with `key`; `typ` None
        leaves the header's typ out. `changes` set claims (None removes one)."""
        claims = self.logout_claims(sub, sid, **changes)
        kid = "ec1" if alg.startswith("ES") else "rsa1"
        key = key or (self.ec_key if alg.startswith("ES") else self.rsa_key)
        header = {"alg": alg, "kid": kid, **({"typ": typ} if typ is not None else {})}
        return sign(header, claims, key, alg)

    def unsigned_logout_token(self, sub: str | None = None, sid: str | None = None) -> str:
        """`alg: none`."""
        header = {"alg": "none", "typ": "logout+jwt"}
        return b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(self.logout_claims(sub, sid)).encode()) + "."

    def hmac_with_public_key(self, sub: str | None = None, sid: str | None = None) -> str:
        """HS256 keyed with the provider's public RSA key (PEM): the algorithm-confusion attack."""
        header = {"alg": "HS256", "kid": "rsa1", "typ": "logout+jwt"}
        signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(self.logout_claims(sub, sid)).encode())
        mac = hmac.new(self.public_key_pem(), signing_input.encode(), hashlib.sha256).digest()
        return signing_input + "." + b64url(mac)


def sign(header: dict, claims: dict, key, alg: str) -> str:
    """A compact JWS with exactly `header` (PyJWT would add `typ: JWT`)."""
    signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
    algorithm = jwt.get_algorithm_by_name(alg)
    return signing_input + "." + b64url(algorithm.sign(signing_input.encode(), algorithm.prepare_key(key)))


def write_provider_file(providers: Path, provider_id: str, provider: OpenIDProvider, backchannel_logout: bool | None = True) -> Path:
    """`providers/<provider_id>.yaml`, an `oidc` provider file for `provider`, its client secret in a file beside it
    (`backchannel_logout` None leaves the key out)."""
    providers.mkdir(parents=True, exist_ok=True)
    secret = providers.parent / f"{provider_id}-client-secret"
    secret.write_text(CLIENT_SECRET + "\n")
    secret.chmod(0o600)
    lines = [f'id: "{provider_id}"', 'kind: "oidc"', f'issuer: "{provider.url}"', f'client_id: "{provider.client_id}"',
             f'client_secret_file: "{secret}"', 'scopes: ["openid"]']
    if backchannel_logout is not None:
        lines.append(f"backchannel_logout: {'true' if backchannel_logout else 'false'}")
    path = providers / f"{provider_id}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def sign_in(gateway: str, provider_id: str, provider: OpenIDProvider, *, callback_gateway: str | None = None, **login) -> dict:
    """A native login (RFC 8252 + PKCE) at `gateway` as `login` (`sub`, `sid`, …; default `next_login`), the
    provider's redirect delivered to `callback_gateway` (default `gateway`), then `POST /v1/session` at
    `gateway`. Returns the 201 body."""
    if login:
        provider.next_login = login
    verifier = secrets.token_urlsafe(48)
    challenge = b64url(hashlib.sha256(verifier.encode()).digest())
    start = requests.get(f"{gateway}/v1/auth/{provider_id}/login", params={
        "redirect_uri": NATIVE_REDIRECT_URI, "state": "st", "code_challenge": challenge, "code_challenge_method": "S256",
    }, allow_redirects=False, timeout=10)
    assert start.status_code == 302, start.text
    authorized = requests.get(start.headers["Location"], allow_redirects=False, timeout=10)
    assert authorized.status_code == 302, authorized.text
    callback = urlsplit(authorized.headers["Location"])
    base = callback_gateway or gateway
    back = requests.get(f"{base}{callback.path}?{callback.query}", allow_redirects=False, timeout=10)
    assert back.status_code == 302, back.text
    handoff = {k: v[0] for k, v in parse_qs(urlsplit(back.headers["Location"]).query).items()}
    assert "code" in handoff, handoff
    grant = requests.post(f"{gateway}/v1/session", json={
        "grant_type": "authorization_code", "code": handoff["code"], "code_verifier": verifier, "redirect_uri": NATIVE_REDIRECT_URI,
    }, timeout=10)
    assert grant.status_code == 201, grant.text
    return grant.json()
