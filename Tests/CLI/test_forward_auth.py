"""Forward authentication (`/v1/authz`) behind a real nginx (`auth_request`) and a real Caddy
(`forward_auth`), both started here on loopback, in front of a backend that records what reaches it.

The proxies' configurations are read from docs/forward-auth.md: what users copy is what runs here. The access rules are
test_access_policy's: `/public/**` anyone, `/admin/**` alice only, the rest any session.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import requests

from conftest import q, write_capture_provider, write_config
from gatehouse_testkit import free_port, missing, stop_process, tail, wait_until
from test_access_policy import Site

DOC = Path(__file__).resolve().parents[2] / "docs" / "forward-auth.md"


def doc_block(info: str) -> str:
    """The first fenced block of docs/forward-auth.md with this info string: the configuration users copy."""
    match = re.search(r"^```" + re.escape(info) + r"\n(.*?)^```", DOC.read_text(), re.S | re.M)
    assert match, f"docs/forward-auth.md has no ```{info} block"
    return match.group(1)


def ports(text: str, gateway: int, backend: int) -> str:
    """The documentation's ports (Gatehouse 8080, the application 9000) replaced by the test's."""
    return text.replace("127.0.0.1:8080", f"127.0.0.1:{gateway}").replace("127.0.0.1:9000", f"127.0.0.1:{backend}")


# Around the documented block: what any nginx.conf has (the block goes inside the application's server).
NGINX_CONF = """daemon off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 256; }}
http {{
  access_log off;
  client_body_temp_path {dir}; proxy_temp_path {dir}; fastcgi_temp_path {dir}; uwsgi_temp_path {dir}; scgi_temp_path {dir};
  server {{
    listen 127.0.0.1:{port};
{block}
  }}
}}
"""

# Caddy's global options for a test on loopback; the documented site block follows, on the test's port.
CADDY_GLOBAL = """{
  admin off
  auto_https off
}
"""


ACCESS_RULES = [
    "access:",
    "  rules:",
    '    - {name: "public", paths: ["/public/**"], allow: "anyone"}',
    '    - name: "admin"',
    '      paths: ["/admin/**"]',
    '      allow: [{email: "alice@example.com"}]',
    '    - {name: "app", paths: ["/**"], allow: "authenticated"}',
]


def binary(name: str, *candidates: str) -> str:
    found = shutil.which(name) or next((c for c in candidates if Path(c).exists()), None)
    if not found:
        missing(f"{name} is not installed (bash scripts/test-setup installs it)")
    return found


class Proxy:
    def __init__(self, kind: str, root: Path, gateway_port: int, backend_port: int):
        self.port = free_port()
        self.dir = root / kind
        self.dir.mkdir()
        if kind == "nginx":
            conf = self.dir / "nginx.conf"
            block = ports(doc_block("nginx"), gateway_port, backend_port)
            conf.write_text(NGINX_CONF.format(dir=self.dir, port=self.port, block=block))
            argv = [binary("nginx", "/usr/sbin/nginx"), "-c", str(conf), "-p", str(self.dir)]
        else:
            conf = self.dir / "Caddyfile"
            site = ports(doc_block("caddyfile"), gateway_port, backend_port).replace("app.example.com", f"http://127.0.0.1:{self.port}")
            conf.write_text(CADDY_GLOBAL + site)
            argv = [binary("caddy", "/usr/bin/caddy"), "run", "--config", str(conf), "--adapter", "caddyfile"]
        self.log = self.dir / "proxy.log"
        env = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "HOME": str(self.dir), "XDG_DATA_HOME": str(self.dir), "XDG_CONFIG_HOME": str(self.dir)}
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        self.url = f"http://127.0.0.1:{self.port}"

        def up() -> bool:
            if self.proc.poll() is not None:
                return True
            try:
                requests.get(self.url + "/public/ping", timeout=1)
                return True
            except requests.RequestException:
                return False

        wait_until(up, 20, 0.1)
        if self.proc.poll() is not None:
            pytest.fail(f"{kind} exited at start-up:\n{tail(self.log)}")

    def stop(self):
        stop_process(self.proc)


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

    # Anonymous elsewhere: 401 at the proxy, nothing reaches the backend.
    before = len(site.headers)
    assert requests.get(proxy.url + "/app/home", timeout=5).status_code == 401
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
