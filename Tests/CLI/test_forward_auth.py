"""Forward authentication (`/v1/authz`) behind a real nginx (`auth_request`) and a real Caddy
(`forward_auth`), both started here on loopback, in front of a backend that records what reaches it.

The proxies' configurations are read from docs/forward-auth.md: what users copy is what runs here. The access rules are
test_access_policy's: `/public/**` anyone, `/admin/**` alice only, the rest any session.
"""
from __future__ import annotations

import re
import time

import pytest
import requests

from conftest import q, write_capture_provider, write_config
from proxy_kit import DOC, Proxy
from test_access_policy import Site

ACCESS_RULES = [
    "access:",
    "  rules:",
    '    - {name: "public", paths: ["/public/**"], allow: "anyone"}',
    '    - name: "admin"',
    '      paths: ["/admin/**"]',
    '      allow: [{email: "alice@example.com"}]',
    '    - {name: "app", paths: ["/**"], allow: "authenticated"}',
]


@pytest.fixture(params=["nginx", "caddy"])
def stack(request, serve, tmp_path):
    site = Site()
    base = f"http://127.0.0.1:{site.port}"
    config = write_config(tmp_path / "gw", "\n".join([
        'store: {kind: "memory"}',
        'public_url: "https://gate.example.test"',
        "backend:",
        f"  url: {q(base)}",
        *ACCESS_RULES,
        "",
    ]))
    write_capture_provider(tmp_path / "gw", base, claims='{subject: "id", email: "email", groups: "groups"}')
    gw = serve(tmp_path / "gw", ["--config", str(config)])
    proxy = Proxy(request.param, tmp_path, gw.port, site.port)

    def session(token: str) -> str:
        # Through the proxy: the gateway's /v1/ paths live on the application's host.
        r = requests.post(proxy.url + "/v1/auth/legacy/token", json={"token": token}, timeout=5)
        assert r.status_code == 201, r.text
        return r.json()["session_token"]

    yield proxy, site, session
    proxy.stop()
    site.server.shutdown()


def seen_after(site: Site, before: int) -> list[dict]:
    time.sleep(0.05)
    with site.lock:
        return site.headers[before:]


def test_allowed_refused_and_anonymous_through_the_proxy(stack):
    proxy, site, session = stack
    alice, mallory = session("alice-token"), session("mallory-token")

    # Anonymous on a public path: passes without identity, a spoofed one dropped.
    before = len(site.headers)
    r = requests.get(proxy.url + "/public/info", headers={"X-Gatehouse-Subject": "u-alice"}, timeout=5)
    assert r.status_code == 200, r.text
    [seen] = seen_after(site, before)
    assert not {k: v for k, v in seen.items() if k.lower().startswith("x-gatehouse-") and v}, seen

    # Anonymous elsewhere: sent to the sign-in page that returns here; nothing reaches the backend.
    before = len(site.headers)
    r = requests.get(proxy.url + "/app/home?tab=1&x=%2F", timeout=5, allow_redirects=False)
    assert r.status_code == 302, r.text
    assert r.headers["Location"] == "https://gate.example.test/v1/sign-in?return_to=%2Fapp%2Fhome%3Ftab%3D1%26x%3D%252F"
    assert seen_after(site, before) == []

    # Alice on /admin: the identity arrives, copied by the proxy from Gatehouse's answer.
    before = len(site.headers)
    r = requests.get(proxy.url + "/admin/users", headers={"Authorization": f"Bearer {alice}", "X-Gatehouse-Subject": "root"}, timeout=5)
    assert r.status_code == 200, r.text
    [seen] = seen_after(site, before)
    headers = {k.lower(): v for k, v in seen.items()}
    assert headers["x-gatehouse-subject"] == "u-alice"
    assert headers["x-gatehouse-email"] == "alice@example.com"
    assert headers["x-gatehouse-groups"] == "admins,ops%2Ceu"
    assert headers["x-gatehouse-assertion"].count(".") == 2

    # Mallory on /admin, in any spelling: 403 at the proxy, nothing reaches the backend.
    for path in ["/admin/users", "/ADMIN/users", "/public/../admin/users", "/%61dmin/users", "/admin;x=1/users"]:
        before = len(site.headers)
        r = requests.get(proxy.url + path, headers={"Authorization": f"Bearer {mallory}"}, timeout=5)
        assert r.status_code in (400, 403), (path, r.status_code, r.text)
        assert seen_after(site, before) == [], path

    # Mallory elsewhere: her own identity, never the one she sends.
    before = len(site.headers)
    r = requests.get(proxy.url + "/app/home", headers={"Authorization": f"Bearer {mallory}", "X-Gatehouse-Subject": "u-alice"}, timeout=5)
    assert r.status_code == 200
    [seen] = seen_after(site, before)
    assert {k.lower(): v for k, v in seen.items()}["x-gatehouse-subject"] == "u-mallory"


def test_authz_itself(serve, tmp_path):
    """`/v1/authz` asked directly: both header families, Envoy's path form, a conflict."""
    site = Site()
    base = f"http://127.0.0.1:{site.port}"
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}',
        "backend:",
        f"  url: {q(base)}",
        *ACCESS_RULES[:-1],
        "",
    ]))
    write_capture_provider(tmp_path, base)
    gw = serve(tmp_path, ["--config", str(config)])
    mallory = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "mallory-token"}, timeout=5).json()["session_token"]
    bearer = {"Authorization": f"Bearer {mallory}"}
    assert requests.get(gw.url + "/v1/authz", headers={"X-Forwarded-Uri": "/public/x"}, timeout=5).status_code == 200
    assert requests.get(gw.url + "/v1/authz", headers={"X-Original-URI": "/app"}, timeout=5).status_code == 401
    r = requests.get(gw.url + "/v1/authz", headers={**bearer, "X-Original-URI": "/app", "X-Original-Method": "POST"}, timeout=5)
    assert r.status_code == 200 and r.headers["X-Gatehouse-Subject"] == "u-mallory" and r.content == b""
    r = requests.get(gw.url + "/v1/authz/admin/x", headers=bearer, timeout=5)  # Envoy ext_authz path_prefix
    assert r.status_code == 403 and r.json()["code"] == "access_denied"
    r = requests.get(gw.url + "/v1/authz", headers={**bearer, "X-Forwarded-Uri": "/public/x", "X-Original-URI": "/admin/x"}, timeout=5)
    assert r.status_code == 400, r.text
    r = requests.get(gw.url + "/v1/authz", headers={**bearer, "X-Forwarded-Method": "GET", "X-Original-Method": "DELETE", "X-Original-URI": "/app"}, timeout=5)
    assert r.status_code == 400, r.text
    assert requests.get(gw.url + "/v1/authz", headers={**bearer, "X-Original-URI": "/a/%2e%2e/%2e%2e/admin"}, timeout=5).status_code == 400
    # Once the session is in memory, the event-loop relay answers (the same way) on a kept-alive connection.
    def relayed() -> int:
        line = next(l for l in requests.get(gw.url + "/metrics", timeout=5).text.splitlines() if l.startswith("gatehouse_relayed_authz_total "))
        return int(float(line.split()[-1]))
    before = relayed()
    with requests.Session() as client:
        for _ in range(3):
            r = client.get(gw.url + "/v1/authz", headers={**bearer, "X-Original-URI": "/app", "X-Original-Method": "POST"}, timeout=5)
            assert r.status_code == 200 and r.headers["X-Gatehouse-Subject"] == "u-mallory" and r.content == b""
            assert r.headers["X-Gatehouse-Groups"] == "" and r.headers["Cache-Control"] == "no-store"
            r = client.get(gw.url + "/v1/authz/admin/x", headers=bearer, timeout=5)
            assert r.status_code == 403 and r.json()["code"] == "access_denied"  # refusals stay the router's
            r = client.get(gw.url + "/v1/authz", headers={"X-Forwarded-Uri": "/public/x"}, timeout=5)
            assert r.status_code == 200 and r.headers["X-Gatehouse-Subject"] == ""
    assert relayed() >= before + 6
    # ingress-nginx: the whole URL.
    r = requests.get(gw.url + "/v1/authz", headers={**bearer, "X-Original-URL": "https://app.example.test/admin/x?y=1"}, timeout=5)
    assert r.status_code == 403, r.text
    r = requests.get(gw.url + "/v1/authz", headers={**bearer, "X-Original-URL": "https://app.example.test/app?y=1"}, timeout=5)
    assert r.status_code == 200, r.text
    site.server.shutdown()


def yaml_blocks_after(heading: str) -> object:
    """The first ```yaml block after a line starting with `heading` in docs/forward-auth.md, parsed."""
    import yaml
    text = DOC.read_text()
    start = text.index("\n" + heading)
    match = re.search(r"^```yaml\n(.*?)^```", text[start:], re.S | re.M)
    return yaml.safe_load(match.group(1))


def test_traefik_envoy_and_ingress_blocks_checked_without_their_binaries(serve, tmp_path):
    """Traefik, Envoy and ingress-nginx are not on the test machine: their documented blocks are parsed, and what
    each proxy would send is sent here as it would send it, the answer checked for what the block copies."""
    site = Site()
    base = f"http://127.0.0.1:{site.port}"
    config = write_config(tmp_path, "\n".join(['store: {kind: "memory"}', "backend:", f"  url: {q(base)}", *ACCESS_RULES, ""]))
    write_capture_provider(tmp_path, base, claims='{subject: "id", email: "email", groups: "groups"}')
    gw = serve(tmp_path, ["--config", str(config)])
    alice = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "alice-token"}, timeout=5).json()["session_token"]
    identity = ["X-Gatehouse-Provider", "X-Gatehouse-Subject", "X-Gatehouse-Email", "X-Gatehouse-Groups", "X-Gatehouse-Assertion"]

    # Traefik: ForwardAuth sends X-Forwarded-Method/-Uri and the client's headers; it copies authResponseHeaders.
    traefik = yaml_blocks_after("Traefik")["http"]["middlewares"]["gatehouse"]["forwardAuth"]
    assert traefik["address"] == "http://127.0.0.1:8080/v1/authz" and traefik["authResponseHeaders"] == identity
    r = requests.get(gw.url + "/v1/authz", headers={
        "Authorization": f"Bearer {alice}", "X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/admin/users?x=1"}, timeout=5)
    assert r.status_code == 200 and all(name in r.headers for name in traefik["authResponseHeaders"])
    assert r.headers["X-Gatehouse-Subject"] == "u-alice"

    # Envoy: ext_authz HTTP service, the original path after path_prefix, only the allowed request headers sent,
    # and only x-gatehouse-* copied upstream.
    [envoy] = yaml_blocks_after("Envoy")
    service = envoy["typed_config"]["http_service"]
    assert service["path_prefix"] == "/v1/authz"
    allowed = [p["exact"] for p in service["authorization_request"]["allowed_headers"]["patterns"]]
    assert allowed == ["authorization", "cookie"]
    [upstream] = service["authorization_response"]["allowed_upstream_headers"]["patterns"]
    r = requests.get(gw.url + service["path_prefix"] + "/admin/users", headers={"authorization": f"Bearer {alice}"}, timeout=5)
    assert r.status_code == 200
    assert {k.lower() for k in r.headers if k.lower().startswith(upstream["prefix"])} == {n.lower() for n in identity}
    r = requests.get(gw.url + service["path_prefix"] + "/admin/users", timeout=5)
    assert r.status_code == 401

    # ingress-nginx: auth-url, and X-Original-URL (the whole URL) for the original request.
    ingress = yaml_blocks_after("Kubernetes ingress-nginx")
    assert ingress["nginx.ingress.kubernetes.io/auth-url"].endswith("/v1/authz")
    assert ingress["nginx.ingress.kubernetes.io/auth-response-headers"].split(",") == identity
    r = requests.get(gw.url + "/v1/authz", headers={
        "Authorization": f"Bearer {alice}", "X-Original-URL": "https://app.example.com/admin/users?x=1"}, timeout=5)
    assert r.status_code == 200 and r.headers["X-Gatehouse-Subject"] == "u-alice"
    site.server.shutdown()
