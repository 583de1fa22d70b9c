"""Issue #27's "done when": a session token, a provider JWT and an opaque provider token reach three different
upstreams in one test, on both front ends (the event-loop relay, and the router reached by an `Origin` from
the CORS list). Three real HTTP backends on loopback, the issuer of test_bearer_tokens (discovery, JWKS,
RFC 7662 introspection) and a capture provider for the session; each upstream's assertion is checked against
the gateway's `/.well-known/jwks.json` with that upstream's own audience."""
from __future__ import annotations

import jwt
import pytest
import requests

from conftest import q, write_capture_provider, write_config, write_provider
from test_access_policy import Site
from test_bearer_tokens import AUDIENCE, CLIENT_SECRET, issuer, oidc_provider  # noqa: F401 (issuer: the fixture)

ORIGIN = "https://app.example.test"
PUBLIC = "https://gate.example.test"


@pytest.fixture
def gateway(serve, tmp_path, issuer):
    default, billing, reports = Site(), Site(), Site()
    url = lambda site: f"http://127.0.0.1:{site.port}"  # noqa: E731
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "sqlite", path: "data/g.sqlite3"}',
        f"public_url: {q(PUBLIC)}",
        f"cors: {{allowed_origins: [{q(ORIGIN)}]}}",
        f"backend: {{url: {q(url(default) + '/base')}, audience: \"app\"}}",
        "upstreams:",
        f'  - {{name: "billing", prefix: "/billing", url: {q(url(billing))}, audience: "billing-api"}}',
        f'  - {{name: "reports", prefix: "/reports", url: {q(url(reports) + "/r")}}}',
        "access:",
        "  rules:",
        # Each caller only where it belongs: the rules see the prefixed path and the provider of the identity.
        '    - {name: "billing", paths: ["/billing/**"], allow: [{provider: "idp", claim: {client_id: "reports-job"}}]}',
        '    - {name: "reports", paths: ["/reports/**"], allow: [{provider: "idp", subject: "svc-nightly"}]}',
        '    - {name: "app", paths: ["/**"], allow: [{provider: "legacy"}]}',
        "",
    ]))
    write_provider(tmp_path, "idp", oidc_provider(issuer))
    write_capture_provider(tmp_path, url(default))
    gw = serve(tmp_path, ["--config", str(config)], env={"IDP_SECRET": CLIENT_SECRET})
    grant = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "alice-token"}, timeout=5)
    assert grant.status_code == 201, grant.text
    yield gw, (default, billing, reports), grant.json()["session_token"]
    for site in (default, billing, reports):
        site.server.shutdown()


def assertion(gw, headers: dict, audience: str) -> dict:
    """The identity assertion a backend received, verified with the gateway's keys for `audience`."""
    value = headers.get("X-Gatehouse-Assertion") or headers.get("x-gatehouse-assertion")
    keys = jwt.PyJWKSet.from_dict(requests.get(gw.url + "/.well-known/jwks.json", timeout=5).json())
    return jwt.decode(value, keys.keys[0].key, algorithms=["ES256"], audience=audience)


@pytest.mark.parametrize("front", ["relay", "router"])
def test_a_session_a_provider_jwt_and_an_opaque_token_reach_three_upstreams(gateway, issuer, front):
    gw, (default, billing, reports), session = gateway
    provider_jwt = issuer.token("ES256")  # client_id reports-job, subject svc-reports
    opaque = f"opaque-{front}-0123456789"
    issuer.active[opaque] = {"sub": "svc-nightly", "client_id": "nightly", "scope": "api", "aud": AUDIENCE,
                             "iss": issuer.url, "exp": 4102444800}
    extra = {"Origin": ORIGIN} if front == "router" else {}
    calls = [
        (session, "/v1/api/home", default, "/base/home", "app", "session"),
        (provider_jwt, "/v1/api/billing/invoices", billing, "/invoices", "billing-api", "bearer"),
        (opaque, "/v1/api/reports/q4", reports, "/r/q4", "reports", "bearer"),
    ]
    for token, path, site, seen_path, audience, via in calls:
        before = [len(s.paths()) for s in (default, billing, reports)]
        r = requests.get(gw.url + path, headers={"Authorization": f"Bearer {token}", **extra}, timeout=10)
        assert r.status_code == 200, (path, r.status_code, r.text)
        assert r.json()["path"] == seen_path
        after = [len(s.paths()) for s in (default, billing, reports)]
        assert [a - b for a, b in zip(after, before)] == [int(s is site) for s in (default, billing, reports)], path
        with site.lock:
            headers = site.headers[-1]
        claims = assertion(gw, headers, audience)
        if via == "bearer":
            assert claims["via"] == "bearer" and "sid" not in claims, claims
            assert claims["provider"] == "idp"
        else:
            assert claims.get("via", "session") == "session" and claims["sid"], claims
            assert claims["provider"] == "legacy"
        assert token not in str(headers), "the credential itself reached the backend"
    # Each credential only where its rule lets it: the session is not a billing caller, the JWT is not the
    # nightly job, the opaque token is not a legacy user.
    for token, path in [(session, "/v1/api/billing/x"), (provider_jwt, "/v1/api/reports/x"), (opaque, "/v1/api/home")]:
        r = requests.get(gw.url + path, headers={"Authorization": f"Bearer {token}", **extra}, timeout=10)
        assert r.status_code == 403 and r.json()["code"] == "access_denied", (path, r.status_code, r.text)
