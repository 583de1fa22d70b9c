"""`trusted_proxies`: from a listed peer the `X-Forwarded-*` headers are kept and `X-Forwarded-For` is appended to
(behind the shipped nginx the backend learns the client's address); from anyone else they are replaced, so a
client cannot claim another address, scheme or host. Both upstream paths: the relay (/v1/api) and the router's
proxy (/v1/proxy)."""
from __future__ import annotations

import pytest
import requests

from conftest import q, write_capture_provider, write_config
from test_access_policy import Site

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
