"""OpenID Connect Back-Channel Logout 1.0 against `gatehouse serve`, over real sockets:

- an OpenID provider run here (Tests/Support/oidc_provider.py: discovery, JWKS, authorize, a token endpoint whose
  ID tokens carry `sid`, `acr`, `amr`, `auth_time`), signed in through the gateway without a browser;
- the session records the ID token's `sid`, `acr`, `amr` and `auth_time` (read from the SQLite store), and keeps
  them on refresh;
- every refused logout token (bad signature, `alg: none`, HS256 keyed with the public key, wrong `iss`, wrong
  `aud`, no `events`, a `nonce`, a replayed `jti`, `iat` far off, neither `sid` nor `sub`, a wrong `typ`, …) is 400
  `{"error":"invalid_request"}` with `Cache-Control: no-store`, and every session keeps working;
- a good token by `sid` ends exactly that session; by `sub` every session of that subject at that provider, and
  no other; 200 with `no-store`; nothing is revoked at the provider; the token never appears in the log;
- 404 for a provider that has not enabled it, an `oauth2` provider and an unknown one.

Two instances on PostgreSQL: Tests/ScaleOut/test_backchannel_logout.py.
"""
from __future__ import annotations

import json
import sqlite3
import time

import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa

from conftest import free_port, q, write_config, write_provider
from oidc_provider import NATIVE_REDIRECT_URI, OpenIDProvider, sign_in, write_provider_file


@pytest.fixture
def provider():
    server = OpenIDProvider()
    yield server
    server.close()


@pytest.fixture
def gateway(serve, tmp_path, provider):
    port = free_port()
    config = write_config(tmp_path, "\n".join([
        f"public_url: {q(f'http://127.0.0.1:{port}')}",
        'store: {kind: "sqlite", path: "data/g.sqlite3"}',
        f"allowed_redirect_uris: [{q(NATIVE_REDIRECT_URI)}]",
        "",
    ]))
    write_provider_file(tmp_path / "Providers", "idp", provider)
    # The same provider again, without back-channel logout: its sessions are another provider's.
    write_provider_file(tmp_path / "Providers", "idp2", provider, backchannel_logout=None)
    write_provider(tmp_path, "plain")  # kind oauth2
    return serve(tmp_path, ["--config", str(config)], port=port)


def logout(gateway, token: str | None, provider_id: str = "idp", **headers) -> requests.Response:
    data = {} if token is None else {"logout_token": token}
    return requests.post(f"{gateway.url}/v1/auth/{provider_id}/backchannel-logout", data=data, headers=headers, timeout=10)


def works(gateway, grant: dict) -> bool:
    r = requests.get(gateway.url + "/v1/session", headers={"Authorization": f"Bearer {grant['session_token']}"}, timeout=10)
    assert r.status_code in (200, 401), r.text
    return r.status_code == 200


def assert_refused(response: requests.Response) -> None:
    assert response.status_code == 400, response.text
    assert response.headers["Cache-Control"] == "no-store"
    body = response.json()
    assert body["error"] == "invalid_request", body
    assert set(body) <= {"error", "error_description"}


def stored_session(gateway, session_id: str) -> tuple[dict, str | None]:
    with sqlite3.connect(gateway.cwd / "data" / "g.sqlite3") as db:
        identity, sid = db.execute("SELECT identity, provider_sid FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return json.loads(identity), sid


def test_a_session_records_sid_acr_amr_and_auth_time_and_keeps_them_on_refresh(gateway, provider):
    grant = sign_in(gateway.url, "idp", provider, sub="alice", sid="sid-rec", acr="urn:example:mfa", amr=["pwd", "otp"],
                    auth_time=1_700_000_000)
    identity, sid = stored_session(gateway, grant["session"]["id"])
    assert sid == "sid-rec"
    assert identity["sid"] == "sid-rec" and identity["acr"] == "urn:example:mfa" and identity["amr"] == ["pwd", "otp"]
    assert identity["auth_time"] is not None
    refreshed = requests.post(gateway.url + "/v1/session/refresh", headers={"Authorization": f"Bearer {grant['session_token']}"},
                              timeout=10)
    assert refreshed.status_code == 200, refreshed.text
    assert stored_session(gateway, grant["session"]["id"]) == (identity, "sid-rec")


def test_without_auth_time_the_login_time_is_recorded(gateway, provider):
    before = time.time()
    grant = sign_in(gateway.url, "idp", provider, sub="alice", sid="sid-t")
    identity, _ = stored_session(gateway, grant["session"]["id"])
    # Foundation's Date encoding: seconds since 2001-01-01.
    recorded = identity["auth_time"] + 978_307_200
    assert before - 2 <= recorded <= time.time() + 2


@pytest.mark.parametrize("name", [
    "bad signature", "alg none", "HS256 with the public key", "wrong iss", "wrong aud", "no events", "events without the event",
    "a nonce", "iat an hour ago", "iat in an hour", "expired", "neither sid nor sub", "typ JWT", "no jti", "not a JWT", "no token",
    "signed by another key",
])
def test_a_refused_logout_token_ends_nothing(gateway, provider, name):
    grant = sign_in(gateway.url, "idp", provider, sub="alice", sid="sid-1")
    now = int(time.time())
    another_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    good = provider.logout_token(sub="alice", sid="sid-1")
    head, payload, signature = good.split(".")
    tokens = {
        "bad signature": f"{head}.{payload}.{provider.logout_token(sub='bob', sid='sid-9').split('.')[2]}",
        "alg none": provider.unsigned_logout_token(sub="alice", sid="sid-1"),
        "HS256 with the public key": provider.hmac_with_public_key(sub="alice", sid="sid-1"),
        "wrong iss": provider.logout_token(sub="alice", sid="sid-1", iss="https://evil.example"),
        "wrong aud": provider.logout_token(sub="alice", sid="sid-1", aud="someone-else"),
        "no events": provider.logout_token(sub="alice", sid="sid-1", events=None),
        "events without the event": provider.logout_token(sub="alice", sid="sid-1", events={"urn:other": {}}),
        "a nonce": provider.logout_token(sub="alice", sid="sid-1", nonce="n-1"),
        "iat an hour ago": provider.logout_token(sub="alice", sid="sid-1", iat=now - 3600, exp=None),
        "iat in an hour": provider.logout_token(sub="alice", sid="sid-1", iat=now + 3600),
        "expired": provider.logout_token(sub="alice", sid="sid-1", exp=now - 10),
        "neither sid nor sub": provider.logout_token(),
        "typ JWT": provider.logout_token(sub="alice", sid="sid-1", typ="JWT"),
        "no jti": provider.logout_token(sub="alice", sid="sid-1", jti=None),
        "not a JWT": "not-a-jwt",
        "no token": None,
        "signed by another key": provider.logout_token(sub="alice", sid="sid-1", key=another_key),
    }
    token = tokens[name]
    r = logout(gateway, token)
    assert_refused(r)
    if token:
        assert token not in r.text
        assert token not in gateway.log()
    assert works(gateway, grant)


def test_a_replayed_jti_is_refused_and_ends_nothing(gateway, provider):
    first = sign_in(gateway.url, "idp", provider, sub="alice", sid="sid-1")
    token = provider.logout_token(sid="sid-1", jti="jti-once")
    r = logout(gateway, token)
    assert r.status_code == 200, r.text
    assert not works(gateway, first)
    second = sign_in(gateway.url, "idp", provider, sub="alice", sid="sid-1")
    assert_refused(logout(gateway, token))
    # Another token with the same jti is the same logout again.
    assert_refused(logout(gateway, provider.logout_token(sub="alice", jti="jti-once")))
    assert works(gateway, second)


def test_a_logout_by_sid_ends_exactly_that_session(gateway, provider):
    phone = sign_in(gateway.url, "idp", provider, sub="alice", sid="sid-phone")
    laptop = sign_in(gateway.url, "idp", provider, sub="alice", sid="sid-laptop")
    bob = sign_in(gateway.url, "idp", provider, sub="bob", sid="sid-bob")
    r = logout(gateway, provider.logout_token(sub="alice", sid="sid-phone"))
    assert r.status_code == 200, r.text
    assert r.headers["Cache-Control"] == "no-store"
    assert not works(gateway, phone)
    assert works(gateway, laptop) and works(gateway, bob)
    # Without sub, sid alone; with ES256 this time and no typ header.
    r = logout(gateway, provider.logout_token(sid="sid-laptop", alg="ES256", typ=None))
    assert r.status_code == 200, r.text
    assert not works(gateway, laptop)
    assert works(gateway, bob)


def test_a_logout_by_sub_ends_every_session_of_that_subject_at_that_provider_only(gateway, provider):
    one = sign_in(gateway.url, "idp", provider, sub="alice", sid="sid-a1")
    two = sign_in(gateway.url, "idp", provider, sub="alice", sid="sid-a2")
    no_sid = sign_in(gateway.url, "idp", provider, sub="alice")
    bob = sign_in(gateway.url, "idp", provider, sub="bob", sid="sid-b")
    elsewhere = sign_in(gateway.url, "idp2", provider, sub="alice", sid="sid-a1")
    token = provider.logout_token(sub="alice", typ="application/logout+jwt")
    # A server-to-server POST: no cookie, and a foreign Origin does not matter either.
    r = logout(gateway, token, Origin="https://op.example", **{"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 200, r.text
    assert r.headers["Cache-Control"] == "no-store"
    assert not works(gateway, one) and not works(gateway, two) and not works(gateway, no_sid)
    assert works(gateway, bob) and works(gateway, elsewhere)
    assert token not in gateway.log()
    # Labelled like any route in the metrics (and the access log).
    metrics = gateway.get("/metrics").text
    assert 'route="/v1/auth/{provider}/backchannel-logout"' in metrics, [l for l in metrics.splitlines() if "backchannel" in l]


def test_a_sid_that_names_no_session_is_a_200_that_ends_nothing(gateway, provider):
    grant = sign_in(gateway.url, "idp", provider, sub="alice", sid="sid-1")
    r = logout(gateway, provider.logout_token(sub="alice", sid="sid-unknown"))
    assert r.status_code == 200, r.text
    # sid and sub together name the sessions with that sid of that subject: another subject's sid is not ended.
    r = logout(gateway, provider.logout_token(sub="mallory", sid="sid-1"))
    assert r.status_code == 200, r.text
    assert works(gateway, grant)


def test_a_provider_without_backchannel_logout_answers_404(gateway, provider):
    grant = sign_in(gateway.url, "idp2", provider, sub="alice", sid="sid-1")
    for provider_id in ("idp2", "plain", "nobody"):
        r = logout(gateway, provider.logout_token(sub="alice", sid="sid-1"), provider_id=provider_id)
        assert r.status_code == 404, (provider_id, r.text)
        assert r.headers["Content-Type"].startswith("application/problem+json")
    assert works(gateway, grant)
