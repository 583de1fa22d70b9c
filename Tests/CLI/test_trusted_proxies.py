"""`trusted_proxies`: from a listed peer the `X-Forwarded-*` headers are kept and `X-Forwarded-For` is appended to
(behind the shipped nginx the backend learns the client's address); from anyone else they are replaced, so a
client cannot claim another address, scheme or host. Both upstream paths: the relay (/v1/api) and the router's
proxy (/v1/proxy). `X-Real-IP` likewise: the gateway's own, the peer or the client trusted proxies name, on the
relay and the router (an upstream with `forward_access_token`, and the provider's API)."""
from __future__ import annotations

import pytest
import requests

from conftest import q, write_capture_provider, write_config
from test_access_policy import Site
from test_hostile_requests import raw, status_of

CLAIMED = {"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "app.example.com"}


def start(serve, tmp_path, trusted: list[str] | None):
    site = Site()
    base = f"http://127.0.0.1:{site.port}"
    lines = ['store: {kind: "memory"}', 'public_url: "http://gate.example.test"', "backend:", f"  url: {q(base)}"]
    if trusted is not None:
        lines.append("trusted_proxies: [" + ", ".join(q(t) for t in trusted) + "]")
    config = write_config(tmp_path, "\n".join(lines) + "\n")
    write_capture_provider(tmp_path, base, extra=[f"api: {{url: {q(base + '/providerapi')}}}"])
    gw = serve(tmp_path, ["--config", str(config)])
    token = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "alice-token"}, timeout=5).json()["session_token"]
    return gw, site, token


def forwarded(site: Site, gw, token: str, path: str) -> dict[str, str]:
    before = len(site.headers)
    r = requests.get(gw.url + path, headers={"Authorization": f"Bearer {token}", **CLAIMED}, timeout=5)
    assert r.status_code == 200, r.text
    with site.lock:
        [seen] = site.headers[before:]
    return {k.lower(): v for k, v in seen.items() if k.lower().startswith("x-forwarded-")}


@pytest.mark.parametrize("path", ["/v1/api/x", "/v1/proxy/legacy/x"])
def test_a_trusted_proxys_headers_are_kept_and_appended_to(serve, tmp_path, path):
    gw, site, token = start(serve, tmp_path, ["10.0.0.0/8", "127.0.0.1"])
    assert forwarded(site, gw, token, path) == {
        "x-forwarded-for": "203.0.113.9, 127.0.0.1", "x-forwarded-proto": "https", "x-forwarded-host": "app.example.com"}
    site.server.shutdown()


@pytest.mark.parametrize("trusted", [None, ["10.0.0.0/8"]])
@pytest.mark.parametrize("path", ["/v1/api/x", "/v1/proxy/legacy/x"])
def test_anyone_elses_are_replaced(serve, tmp_path, path, trusted):
    gw, site, token = start(serve, tmp_path, trusted)
    assert forwarded(site, gw, token, path) == {
        "x-forwarded-for": "127.0.0.1", "x-forwarded-proto": "http", "x-forwarded-host": "gate.example.test"}
    site.server.shutdown()


def test_an_entry_that_is_no_address_is_a_config_error(cli, tmp_path):
    write_config(tmp_path, 'trusted_proxies: ["10.0.0.0/8", "proxy.internal"]\n')
    result = cli(["check"], cwd=tmp_path)
    assert result.returncode == 1
    assert "gatehouse.yaml:1: 'trusted_proxies' lists IP addresses and CIDR ranges (10.0.0.0/8, fd00::/8), not 'proxy.internal'" in result.stderr


# --- X-Real-IP: set by the gateway, a client's own never passed on ------------------------------------------------

SPOOFED = "198.51.100.66"
#: Where each request goes: the relay serves `/v1/api` for `backend` and the plain named upstream; the router serves an
#: upstream with `forward_access_token` (it refreshes the provider token first) and the provider's API (`/v1/proxy`).
REAL_IP_ROUTES = {
    "relay, backend": "/v1/api/x",
    "relay, named upstream": "/v1/api/plain/x",
    "router, named upstream (forward_access_token)": "/v1/api/fat/x",
    "router, provider API": "/v1/proxy/legacy/x",
}


def start_with_upstreams(serve, tmp_path, trusted: list[str] | None):
    site = Site()
    base = f"http://127.0.0.1:{site.port}"
    lines = ['store: {kind: "memory"}', 'public_url: "http://gate.example.test"', "backend:", f"  url: {q(base)}",
             "upstreams:",
             f"  - {{name: plain, prefix: /plain, url: {q(base + '/plain')}}}",
             f"  - {{name: fat, prefix: /fat, url: {q(base + '/fat')}, forward_access_token: true}}"]
    if trusted is not None:
        lines.append("trusted_proxies: [" + ", ".join(q(t) for t in trusted) + "]")
    config = write_config(tmp_path, "\n".join(lines) + "\n")
    write_capture_provider(tmp_path, base, extra=[f"api: {{url: {q(base + '/providerapi')}}}"])
    gw = serve(tmp_path, ["--config", str(config)])
    token = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "alice-token"}, timeout=5).json()["session_token"]
    return gw, site, token


def real_ips(site: Site, gw, token: str, path: str, claimed: list[tuple[str, str]]) -> list[str]:
    """Every `X-Real-IP` value the upstream received for one request (written on a bare socket, so that a field
    can be repeated) that carries the fields `claimed`."""
    before = len(site.requests)
    head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer {token}\r\n"
    answer = raw(gw.port, (head + "".join(f"{k}: {v}\r\n" for k, v in claimed) + "\r\n").encode())
    assert status_of(answer) == 200, answer[:300]
    with site.lock:
        [seen] = site.requests[before:]
    return seen.headers.get("x-real-ip", [])


@pytest.mark.parametrize("trusted", [None, ["10.0.0.0/8"]])
def test_a_clients_x_real_ip_is_replaced_by_the_peer_on_every_front_end(serve, tmp_path, trusted):
    gw, site, token = start_with_upstreams(serve, tmp_path, trusted)
    for route, path in REAL_IP_ROUTES.items():
        assert real_ips(site, gw, token, path, [("X-Real-IP", SPOOFED), ("X-Forwarded-For", "203.0.113.9")]) == ["127.0.0.1"], route
        # Any spelling of the name, sent twice.
        assert real_ips(site, gw, token, path, [("x-real-ip", SPOOFED), ("X-REAL-IP", SPOOFED)]) == ["127.0.0.1"], route
    site.server.shutdown()


def test_behind_trusted_proxies_x_real_ip_is_the_client_they_name(serve, tmp_path):
    gw, site, token = start_with_upstreams(serve, tmp_path, ["10.0.0.0/8", "127.0.0.1"])
    claimed = [("X-Real-IP", SPOOFED), ("X-Forwarded-For", "198.51.100.1, 203.0.113.9, 10.0.0.1")]
    for route, path in REAL_IP_ROUTES.items():
        # Read from the right, trusted hops skipped: 10.0.0.1 and the peer are proxies, 203.0.113.9 the client.
        assert real_ips(site, gw, token, path, claimed) == ["203.0.113.9"], route
    site.server.shutdown()
