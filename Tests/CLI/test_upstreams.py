"""Several upstreams (`upstreams:`) and per-host access rules (`hosts:`) over real loopback HTTP.

Three real HTTP backends (the recording `Site` of test_access_policy) sit behind one gateway: `backend` (the
default, which also serves the capture provider's probe), `billing` (`/billing`, its own audience) and `reports`
(`/billing/reports`, prefix kept), plus a slow one with a 1 s `timeout_seconds`. Every routing case is sent on
the event-loop relay and on the router (the same call with an `Origin` from the CORS list, which the relay
leaves to the router). Per-host rules are judged on `/v1/api` (the request's own `Host`), on `/v1/authz`
(`X-Forwarded-Host` or `X-Original-URL`), and through a real nginx (`auth_request`) and Caddy (`forward_auth`)
serving two host names, from the blocks of docs/forward-auth.md.
"""
from __future__ import annotations

import json
import time

import pytest
import requests
from joserfc import jwt
from joserfc.jwk import KeySet

from conftest import q, wait_until, write_capture_provider, write_config
from gatehouse_testkit import loopback_server
from proxy_kit import Proxy
from test_access_policy import Site
from test_check import assert_check_fails, line_of
from test_hostile_requests import raw, status_of

ORIGIN = "https://app.example.test"
PUBLIC = "https://gate.example.test"


def relayed(gw) -> int:
    line = next(l for l in requests.get(gw.url + "/metrics", timeout=5).text.splitlines() if l.startswith("gatehouse_relayed_requests_total "))
    return int(float(line.split()[-1]))


def log_records(gw) -> list[dict]:
    records = []
    for line in gw.log().splitlines():
        if line.strip().startswith("{"):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return records


def last_seen(site: Site, before: int) -> list[dict]:
    time.sleep(0.05)
    with site.lock:
        return site.headers[before:]


@pytest.fixture
def upstreams(serve, tmp_path):
    default, billing, reports = Site(), Site(), Site()

    def slow(handler):
        time.sleep(3)
        return 200, "text/plain", b"late"

    slow_server = loopback_server(slow)
    url = lambda site, path="": f"http://127.0.0.1:{site.port}{path}"  # noqa: E731
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}',
        f"public_url: {q(PUBLIC)}",
        f"cors: {{allowed_origins: [{q(ORIGIN)}]}}",
        'logging: {format: "json"}',
        f"backend: {{url: {q(url(default, '/base'))}}}",
        "upstreams:",
        f'  - {{name: "billing", prefix: "/billing", url: {q(url(billing))}, audience: "billing-api"}}',
        f'  - {{name: "reports", prefix: "/billing/reports", url: {q(url(reports, "/r"))}, keep_prefix: true, identity_headers: false}}',
        f'  - {{name: "slow", prefix: "/slow", url: {q(f"http://127.0.0.1:{slow_server.server_address[1]}")}, timeout_seconds: 1}}',
        '  - {name: "tls", prefix: "/tls", url: "https://127.0.0.1:1/x"}',
        "access:",
        "  rules:",
        '    - {name: "billing-admin", paths: ["/billing/admin/**"], allow: [{email: "alice@example.com"}]}',
        '    - {name: "rest", paths: ["/**"], allow: "authenticated"}',
        "",
    ]))
    write_capture_provider(tmp_path, url(default))
    gw = serve(tmp_path, ["--config", str(config)])

    def session(token: str) -> str:
        r = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": token}, timeout=5)
        assert r.status_code == 201, r.text
        return r.json()["session_token"]

    yield gw, (default, billing, reports), session
    for site in (default, billing, reports):
        site.server.shutdown()
    slow_server.shutdown()


# (path below /v1/api, the site that must get it: 0 default, 1 billing, 2 reports, and the path it must see)
ROUTES = [
    ("/billing/invoices/7?a=1", 1, "/invoices/7?a=1"),
    ("/billing", 1, "/"),
    ("/billingx/y", 0, "/base/billingx/y"),  # whole segments only
    ("/billing/reports/q1", 2, "/r/billing/reports/q1"),  # the longest prefix wins, its prefix kept
    ("/billing/reportsx", 1, "/reportsx"),
    ("/billing/./x/../reports/q2", 2, "/r/billing/reports/q2"),  # the normalized path is the one routed
    ("/%62illing/x", 1, "/x"),
    ("/billing/../other", 0, "/base/other"),  # never kept on billing by its raw prefix
    ("/app/home", 0, "/base/app/home"),
]


@pytest.mark.parametrize("front", ["relay", "router"])
def test_routing_by_prefix_on_both_front_ends(upstreams, front):
    gw, sites, session = upstreams
    headers = {"Authorization": f"Bearer {session('alice-token')}"}
    if front == "router":
        headers["Origin"] = ORIGIN
    relayed_before = relayed(gw)
    for path, index, seen in ROUTES:
        counts = [len(s.paths()) for s in sites]
        r = requests.get(gw.url + "/v1/api" + path, headers=headers, timeout=5)
        assert r.status_code == 200, (path, r.status_code, r.text)
        assert r.json()["path"] == seen, path
        assert [len(s.paths()) - c for s, c in zip(sites, counts)] == [int(i == index) for i in range(3)], path
    # The relay carried the relay's calls, the router the others.
    if front == "relay":
        assert relayed(gw) - relayed_before == len(ROUTES)
    else:
        assert relayed(gw) == relayed_before


@pytest.mark.parametrize("front", ["relay", "router"])
def test_each_upstream_gets_its_own_audience_and_identity(upstreams, front):
    gw, (default, billing, reports), session = upstreams
    headers = {"Authorization": f"Bearer {session('alice-token')}"}
    if front == "router":
        headers["Origin"] = ORIGIN
    keys = KeySet.import_key_set(requests.get(gw.url + "/.well-known/jwks.json", timeout=5).json())
    audiences = {}
    for name, site, path in [("backend", default, "/x"), ("billing", billing, "/billing/x"), ("reports", reports, "/billing/reports/x")]:
        before = len(site.headers)
        assert requests.get(gw.url + "/v1/api" + path, headers=headers, timeout=5).status_code == 200
        [seen] = last_seen(site, before)
        seen = {k.lower(): v for k, v in seen.items()}
        token = jwt.decode(seen["x-gatehouse-assertion"], keys, algorithms=["ES256"])
        assert token.claims["iss"] == PUBLIC and token.claims["sub"] == "u-alice"
        audiences[name] = token.claims["aud"]
        # identity_headers: false on reports only; the assertion still goes (assertion is backend's: on).
        assert ("x-gatehouse-subject" in seen) == (name != "reports"), (name, seen)
    assert audiences == {"backend": "backend", "billing": "billing-api", "reports": "reports"}


@pytest.mark.parametrize("front", ["relay", "router"])
def test_rules_judge_the_prefixed_path(upstreams, front):
    gw, (_, billing, _), session = upstreams
    headers = {"Authorization": f"Bearer {session('mallory-token')}"}
    if front == "router":
        headers["Origin"] = ORIGIN
    for path in ["/billing/admin/x", "/billing/x/../admin/x", "/%62illing/admin/x", "/BILLING/admin/x"]:
        before = len(billing.paths())
        r = requests.get(gw.url + "/v1/api" + path, headers=headers, timeout=5)
        assert r.status_code == 403 and r.json()["code"] == "access_denied", (path, r.text)
        assert len(billing.paths()) == before
    alice = {**headers, "Authorization": f"Bearer {session('alice-token')}"}
    assert requests.get(gw.url + "/v1/api/billing/admin/x", headers=alice, timeout=5).json()["path"] == "/admin/x"


@pytest.mark.parametrize("front", ["relay", "router"])
def test_per_upstream_timeout_is_504_and_others_keep_theirs(upstreams, front):
    gw, _, session = upstreams
    headers = {"Authorization": f"Bearer {session('alice-token')}"}
    if front == "router":
        headers["Origin"] = ORIGIN
    started = time.monotonic()
    r = requests.get(gw.url + "/v1/api/slow/x", headers=headers, timeout=10)
    elapsed = time.monotonic() - started
    assert r.status_code == 504 and r.json()["code"] == "upstream_timeout", r.text
    assert 0.9 <= elapsed < 2.9, elapsed  # its own 1 s, not the 30 s of limits, nor the backend's 3 s answer
    assert requests.get(gw.url + "/v1/api/x", headers=headers, timeout=10).status_code == 200
    metrics = requests.get(gw.url + "/metrics", timeout=5).text
    assert 'gatehouse_upstream_failures_total{upstream="slow"} 1' in metrics, metrics
    assert 'upstream_failures_total{upstream="backend"}' not in metrics


def test_an_https_upstream_is_the_relays_too(upstreams):
    """The relay reaches https:// upstreams as it does http:// ones (here: nothing listens, 502 from the relay,
    counted against the upstream), and keeps serving the others."""
    gw, _, session = upstreams
    headers = {"Authorization": f"Bearer {session('alice-token')}"}
    before = relayed(gw)
    r = requests.get(gw.url + "/v1/api/tls/x", headers=headers, timeout=10)
    assert r.status_code == 502 and r.json()["code"] == "bad_gateway", r.text
    assert relayed(gw) == before + 1
    assert requests.get(gw.url + "/v1/api/billing/x", headers=headers, timeout=5).status_code == 200
    assert relayed(gw) == before + 2
    assert 'gatehouse_upstream_failures_total{upstream="tls"} 1' in requests.get(gw.url + "/metrics", timeout=5).text


def test_upstream_label_in_metrics_and_access_log(upstreams):
    gw, _, session = upstreams
    bearer = {"Authorization": f"Bearer {session('alice-token')}"}
    for headers in (bearer, {**bearer, "Origin": ORIGIN}):
        for path in ["/billing/a", "/billing/reports/b", "/c"]:
            r = requests.get(gw.url + "/v1/api" + path, headers=headers, timeout=5)
            assert r.status_code == 200
    metrics = requests.get(gw.url + "/metrics", timeout=5).text
    for name in ["backend", "billing", "reports"]:
        assert f'gatehouse_upstream_duration_seconds_count{{upstream="{name}"}} 2' in metrics, metrics
    time.sleep(0.2)
    lines = [r for r in log_records(gw) if r.get("route") == "/v1/api/**" and r.get("status") in ("200", 200)]
    assert sorted(r.get("upstream") for r in lines) == sorted(["backend", "billing", "reports"] * 2), lines



def test_sighup_puts_new_upstreams_in_force_on_open_connections(serve, tmp_path):
    """`backend` and `upstreams:` are reloaded on SIGHUP with the rules: the next request on a connection opened
    before the reload goes where the new file says (relay and router), with the new audience (also in /v1/authz's
    answer) and the new label; a file with a broken upstream is refused whole and the old table stays."""
    import http.client
    import signal

    from test_access_policy import wait_for

    a, b, c = Site(), Site(), Site()
    url = lambda site: f"http://127.0.0.1:{site.port}"  # noqa: E731

    def configure(backend: str, audience: str, entries: list[str]) -> None:
        write_config(tmp_path, "\n".join([
            'store: {kind: "memory"}',
            f"public_url: {q(PUBLIC)}",
            f"cors: {{allowed_origins: [{q(ORIGIN)}]}}",
            'logging: {format: "json"}',
            f"backend: {{url: {q(backend)}, audience: {q(audience)}}}",
            "upstreams:", *entries,
            "",
        ]))

    configure(url(a), "app-v1", [f'  - {{name: "billing", prefix: "/billing", url: {q(url(b))}, audience: "billing-v1"}}'])
    write_capture_provider(tmp_path, url(a))
    gw = serve(tmp_path, ["--config", str(tmp_path / "gatehouse.yaml")])
    connections: dict = {}
    try:
        r = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "alice-token"}, timeout=5)
        token = r.json()["session_token"]
        keys = KeySet.import_key_set(requests.get(gw.url + "/.well-known/jwks.json", timeout=5).json())
        port = int(gw.url.rsplit(":", 1)[1])
        # One connection each, kept open across the reload: the relay's (plain) and the router's (a CORS Origin).
        fronts = {"relay": {}, "router": {"Origin": ORIGIN}}
        connections.update({front: http.client.HTTPConnection("127.0.0.1", port, timeout=5) for front in fronts})

        def call(front: str, path: str) -> tuple[Site, dict]:
            """Which site got the call, and what it saw."""
            before = [len(site.headers) for site in (a, b, c)]
            connection = connections[front]
            connection.request("GET", "/v1/api" + path, headers={"Authorization": f"Bearer {token}", **fronts[front]})
            answer = connection.getresponse()
            assert answer.status == 200, (front, path, answer.status, answer.read())
            answer.read()
            time.sleep(0.05)
            [(site, seen)] = [(site, site.headers[n:][0]) for site, n in zip((a, b, c), before) if len(site.headers) > n]
            return site, {k.lower(): v for k, v in seen.items()}

        def audience(seen: dict) -> str:
            return jwt.decode(seen["x-gatehouse-assertion"], keys, algorithms=["ES256"]).claims["aud"]

        sockets = {}
        for front in fronts:
            site, seen = call(front, "/billing/x")
            assert site is b and audience(seen) == "billing-v1"
            site, seen = call(front, "/x")
            assert site is a and audience(seen) == "app-v1"
            sockets[front] = connections[front].sock

        configure(url(c), "app-v2", [
            f'  - {{name: "billing", prefix: "/billing", url: {q(url(a))}, audience: "billing-v2"}}',
            f'  - {{name: "reports", prefix: "/reports", url: {q(url(b))}}}',
            "forward_auth:",
            '  apps: [{name: "portal", hosts: ["portal.example.test"]}]',
        ])
        relayed_before = relayed(gw)
        gw.signal(signal.SIGHUP)
        assert wait_for(lambda: any(r.get("message") == "providers reloaded" and r.get("upstreams") == "2" for r in log_records(gw))), gw.log()
        for front in fronts:
            site, seen = call(front, "/x")
            assert site is c and audience(seen) == "app-v2", front
            site, seen = call(front, "/billing/x")
            assert site is a and audience(seen) == "billing-v2", front
            assert seen["x-gatehouse-subject"] == "u-alice"
            site, seen = call(front, "/reports/q")
            assert site is b and audience(seen) == "reports", front
            assert connections[front].sock is sockets[front], f"{front}: the connection opened before the reload was not kept"
        assert relayed(gw) - relayed_before == 3  # the relay carried its three, the router its own
        # /v1/authz answers with what the new `backend` receives, and for the new app's host with the app's settings.
        answer = requests.get(gw.url + "/v1/authz", headers={"Authorization": f"Bearer {token}", "X-Original-URI": "/app"}, timeout=5)
        assert answer.status_code == 200 and answered_audience(answer, keys) == "app-v2"
        answer = requests.get(
            gw.url + "/v1/authz", headers={"Authorization": f"Bearer {token}", "X-Original-URL": "https://portal.example.test/x"}, timeout=5)
        assert answer.status_code == 200 and answered_audience(answer, keys) == "portal"
        time.sleep(0.2)
        labels = [r.get("upstream") for r in log_records(gw) if r.get("route") == "/v1/api/**"]
        assert labels[-6:] == ["backend", "billing", "reports"] * 2, labels

        # Two upstreams with one prefix: refused whole, the log names the line, the table in force stays.
        configure(url(a), "app-v3", [
            f'  - {{name: "billing", prefix: "/billing", url: {q(url(c))}}}',
            f'  - {{name: "again", prefix: "/billing", url: {q(url(c))}}}',
        ])
        gw.signal(signal.SIGHUP)
        assert wait_for(lambda: "reload refused" in gw.log()), gw.log()
        assert any("gatehouse.yaml:" in line and "prefix" in line for line in gw.log().splitlines() if "reload refused" in line), gw.log()
        for front in fronts:
            assert call(front, "/x")[0] is c
            assert call(front, "/billing/x")[0] is a
            assert call(front, "/reports/q")[0] is b
    finally:
        for connection in connections.values():
            connection.close()
        for site in (a, b, c):
            site.server.shutdown()

def test_check_reports_every_upstream_mistake_at_its_line(cli, tmp_path):
    config = write_config(tmp_path, "\n".join([
        'backend: {url: "http://127.0.0.1:9000"}',
        "upstreams:",
        '  - {name: "billing", prefix: "/billing", url: "http://127.0.0.1:9001"}',
        '  - {name: "billing", prefix: "/other", url: "http://127.0.0.1:9002"}',
        '  - {name: "Bad_Name", prefix: "/bad", url: "http://127.0.0.1:9003"}',
        '  - {name: "dup-prefix", prefix: "/billing", url: "http://127.0.0.1:9004"}',
        '  - {name: "slashy", prefix: "billing/x/", url: "http://127.0.0.1:9005"}',
        '  - {name: "dots", prefix: "/a/../b", url: "http://127.0.0.1:9006"}',
        '  - {name: "nourl", prefix: "/nourl"}',
        '  - {name: "backend", prefix: "/be", url: "http://127.0.0.1:9007"}',
        '  - name: "keys"',
        '    prefix: "/keys"',
        '    url: "http://127.0.0.1:9008"',
        "    timeout_seconds: 0",
        '    colour: "red"',
        "access:",
        "  rules:",
        '    - {name: "h", paths: ["/**"], hosts: ["app.example.com:443", "a.*.example.com"], allow: "authenticated"}',
        "",
    ]))
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    line = lambda needle: line_of(config, needle)  # noqa: E731
    assert_check_fails(result, [
        (config, line('- {name: "billing", prefix: "/other"'), ["another upstream is already named 'billing'"]),
        (config, line('- {name: "Bad_Name"'), ["'Bad_Name'", "a-z"]),
        (config, line('- {name: "dup-prefix"'), ["already has the prefix '/billing'"]),
        (config, line('- {name: "slashy"'), ["must start with '/'"]),
        (config, line('- {name: "dots"'), ["'.' or '..'"]),
        (config, line('- {name: "nourl"'), ["url", "required"]),
        (config, line('- {name: "backend"'), ["default upstream"]),
        (config, line("timeout_seconds: 0"), ["timeout_seconds", "positive"]),
        (config, line('colour: "red"'), ["unknown key 'upstreams[8].colour'"]),
        (config, line('- {name: "h"'), ["'app.example.com:443', 'a.*.example.com'", "host name"]),
    ])



def test_check_reports_every_forward_auth_app_mistake_at_its_line(cli, tmp_path):
    config = write_config(tmp_path, "\n".join([
        'backend: {url: "http://127.0.0.1:9000"}',
        "upstreams:",
        '  - {name: "billing", prefix: "/billing", url: "http://127.0.0.1:9001"}',
        "forward_auth:",
        "  apps:",
        '    - {name: "wiki", hosts: ["wiki.example.com"]}',
        '    - {name: "billing", hosts: ["billing.example.com"]}',
        '    - {name: "again", hosts: ["WIKI.example.com."]}',
        '    - {name: "nohosts"}',
        '    - {name: "badhosts", hosts: ["a.*.example.com", "x.example.com:8443"]}',
        '    - {name: "proxied", hosts: ["p.example.com"], url: "http://127.0.0.1:9002"}',
        '    - {name: "headers", hosts: ["h.example.com"], identity_headers: false}',
        '    - {name: "Bad_Name", hosts: ["b.example.com"]}',
        '    - {name: "colour", hosts: ["c.example.com"], colour: "red"}',
        '  colour: "blue"',
        "",
    ]))
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    line = lambda needle: line_of(config, needle)  # noqa: E731
    assert_check_fails(result, [
        (config, line('- {name: "billing", hosts'), ["already named 'billing'"]),
        (config, line('- {name: "again"'), ["another app already lists 'WIKI.example.com.'"]),
        (config, line('- {name: "nohosts"'), ["hosts", "required"]),
        (config, line('- {name: "badhosts"'), ["'a.*.example.com', 'x.example.com:8443'", "host name"]),
        (config, line('- {name: "proxied"'), ["'forward_auth.apps[5].url' is not an app's"]),
        (config, line('- {name: "headers"'), ["identity_headers", "always answers with the identity headers"]),
        (config, line('- {name: "Bad_Name"'), ["'Bad_Name'", "a-z"]),
        (config, line('- {name: "colour"'), ["unknown key 'forward_auth.apps[8].colour'"]),
        (config, line('colour: "blue"'), ["unknown key 'forward_auth.colour'"]),
    ])


# --- per-host rules -----------------------------------------------------------------------------

HOST_RULES = [
    "access:",
    "  rules:",
    '    - {name: "public", paths: ["/public/**"], allow: "anyone"}',
    '    - {name: "admin-app", paths: ["/**"], hosts: ["admin.example.test"], allow: [{email: "alice@example.com"}]}',
    '    - {name: "tenants", paths: ["/**"], hosts: ["*.tenants.example.test"], allow: "anyone"}',
    '    - {name: "app", paths: ["/**"], hosts: ["app.example.test"], allow: "authenticated"}',
    '  default: "deny"',
]

# (host as the client sent it, who, expected status)
HOST_CASES = [
    ("app.example.test", "mallory", 200),
    ("APP.example.test.:8443", "mallory", 200),
    ("admin.example.test", "mallory", 403),
    ("admin.example.test", "alice", 200),
    ("a.tenants.example.test", None, 200),
    ("a.b.tenants.example.test", "mallory", 403),  # `*` is exactly one label
    ("tenants.example.test", "mallory", 403),
    ("other.example.test", "alice", 403),
    ("app.example.test", None, 401),
]

# Applications behind the proxy with settings of their own on /v1/authz: the original host picks one.
FORWARD_AUTH_APPS = [
    "forward_auth:",
    "  apps:",
    '    - {name: "admin", hosts: ["admin.example.test"]}',
    '    - {name: "tenants", hosts: ["*.tenants.example.test", "tenants.example.test"], assertion: false}',
]
# The assertion's audience /v1/authz answers with, by the original host: `None` for no assertion.
AUDIENCES = {"app.example.test": "backend", "admin.example.test": "admin", "a.tenants.example.test": None}


def answered_audience(answer: requests.Response | bytes, keys: KeySet) -> str | None:
    """The `aud` of the assertion in an allowed /v1/authz answer (a `requests` answer or raw bytes)."""
    if isinstance(answer, bytes):
        fields = dict(line.split(": ", 1) for line in answer.decode("latin-1").split("\r\n\r\n")[0].split("\r\n")[1:])
        value = next((v for k, v in fields.items() if k.lower() == "x-gatehouse-assertion"), "")
    else:
        value = answer.headers.get("X-Gatehouse-Assertion", "")
    return jwt.decode(value, keys, algorithms=["ES256"]).claims["aud"] if value else None


@pytest.fixture
def hosts(serve, tmp_path):
    site = Site()
    base = f"http://127.0.0.1:{site.port}"
    config = write_config(tmp_path / "gw", "\n".join([
        'store: {kind: "memory"}',
        f"public_url: {q(PUBLIC)}",
        f"cors: {{allowed_origins: [{q(ORIGIN)}]}}",
        'logging: {format: "json"}',
        f"backend: {{url: {q(base)}}}",
        *HOST_RULES,
        *FORWARD_AUTH_APPS,
        "",
    ]))
    write_capture_provider(tmp_path / "gw", base)
    gw = serve(tmp_path / "gw", ["--config", str(config)])
    tokens = {}
    for who in ("alice", "mallory"):
        r = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": f"{who}-token"}, timeout=5)
        assert r.status_code == 201, r.text
        tokens[who] = r.json()["session_token"]
    yield gw, site, tokens
    site.server.shutdown()


@pytest.mark.parametrize("front", ["relay", "router"])
def test_per_host_rules_on_api(hosts, front):
    gw, site, tokens = hosts
    for host, who, status in HOST_CASES:
        headers = {"Host": host}
        if who:
            headers["Authorization"] = f"Bearer {tokens[who]}"
        if front == "router":
            headers["Origin"] = ORIGIN
        before = len(site.paths())
        r = requests.get(gw.url + "/v1/api/page", headers=headers, timeout=5)
        assert r.status_code == status, (host, who, r.status_code, r.text)
        assert len(site.paths()) - before == (status == 200), host
    # The client cannot name another host through X-Forwarded-Host: the gateway trusts no proxy here.
    r = requests.get(
        gw.url + "/v1/api/page", headers={"Host": "admin.example.test", "X-Forwarded-Host": "a.tenants.example.test"}, timeout=5)
    assert r.status_code == 401, r.text


@pytest.mark.parametrize("front", ["relay", "router"])
def test_a_trusted_proxys_forwarded_host_is_judged(serve, tmp_path, front):
    """With the peer in trusted_proxies, /v1/api judges its X-Forwarded-Host (the host the client asked the proxy
    for), not the Host the proxy used to reach the gateway."""
    site = Site()
    base = f"http://127.0.0.1:{site.port}"
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}',
        f"cors: {{allowed_origins: [{q(ORIGIN)}]}}",
        f"backend: {{url: {q(base)}}}",
        'trusted_proxies: ["127.0.0.1/32"]',
        *HOST_RULES,
        "",
    ]))
    write_capture_provider(tmp_path, base)
    gw = serve(tmp_path, ["--config", str(config)])
    mallory = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "mallory-token"}, timeout=5).json()["session_token"]
    extra = {"Origin": ORIGIN} if front == "router" else {}
    try:
        r = requests.get(gw.url + "/v1/api/page", headers={**extra, "Host": "gw.internal", "X-Forwarded-Host": "a.tenants.example.test"}, timeout=5)
        assert r.status_code == 200, r.text
        r = requests.get(
            gw.url + "/v1/api/page",
            headers={**extra, "Host": "app.example.test", "X-Forwarded-Host": "admin.example.test", "Authorization": f"Bearer {mallory}"}, timeout=5)
        assert r.status_code == 403, r.text
    finally:
        site.server.shutdown()


def test_per_host_rules_on_authz(hosts):
    gw, _, tokens = hosts
    keys = KeySet.import_key_set(requests.get(gw.url + "/.well-known/jwks.json", timeout=5).json())
    for host, who, status in HOST_CASES:
        auth = {"Authorization": f"Bearer {tokens[who]}"} if who else {}
        for fields in ({"X-Forwarded-Host": host, "X-Forwarded-Uri": "/page"}, {"X-Original-URL": f"https://{host}/page"}):
            r = requests.get(gw.url + "/v1/authz", headers={**auth, **fields}, timeout=5)
            assert r.status_code == status, (host, who, fields, r.text)
            if status == 200 and who:
                # The app of the host (forward_auth.apps) sets the assertion; any other host gets backend's.
                expected = AUDIENCES[host.lower().rsplit(":", 1)[0].rstrip(".")]
                assert answered_audience(r, keys) == expected, (host, fields)
    # Envoy's path form: its check request's own Host is the original request's; on the relay (HTTP/1.1) and
    # on the router (HTTP/1.0) alike.
    for host, who, status in HOST_CASES:
        auth = [f"Authorization: Bearer {tokens[who]}"] if who else []
        for version in ("1.1", "1.0"):
            head = [f"GET /v1/authz/page HTTP/{version}", f"Host: {host}", "Connection: close", *auth]
            answer = raw(gw.port, ("\r\n".join(head) + "\r\n\r\n").encode())
            assert status_of(answer) == status, (host, who, version, answer[:300])
            if status == 200 and who:
                assert answered_audience(answer, keys) == AUDIENCES[host.lower().rsplit(":", 1)[0].rstrip(".")], (host, version)
    # No host given: a rule with hosts never applies (the default denies; the public rule has none). nginx's
    # `auth_request` sends the gateway's own name as Host: only Envoy's path form takes it.
    r = requests.get(gw.url + "/v1/authz", headers={"Authorization": f"Bearer {tokens['alice']}", "X-Original-URI": "/page", "Host": "app.example.test"}, timeout=5)
    assert r.status_code == 403, r.text
    assert requests.get(gw.url + "/v1/authz", headers={"X-Original-URI": "/public/x"}, timeout=5).status_code == 200
    # The two fields naming different hosts: 400, as for methods and paths.
    r = requests.get(
        gw.url + "/v1/authz",
        headers={"X-Forwarded-Host": "app.example.test", "X-Original-URL": "https://admin.example.test/page", "X-Forwarded-Uri": "/page"}, timeout=5)
    assert r.status_code == 400, r.text



def test_the_access_log_names_the_app_authz_answered_for(hosts):
    """An /v1/authz line's `upstream` is the app of forward_auth.apps the answer was for (allowed or refused), on
    the relay (HTTP/1.1) and the router (HTTP/1.0); none for a host no app lists."""
    gw, _, tokens = hosts
    cases = [("admin.example.test", "alice", 200, "admin"), ("admin.example.test", "mallory", 403, "admin"),
             ("app.example.test", "alice", 200, None), ("b.tenants.example.test", "alice", 200, "tenants")]
    for version in ("1.1", "1.0"):
        for host, who, status, app in cases:
            head = [f"GET /v1/authz HTTP/{version}", "Host: gw.internal", f"X-Forwarded-Host: {host}", "X-Forwarded-Uri: /page",
                    "Connection: close", f"Authorization: Bearer {tokens[who]}"]
            answer = raw(gw.port, ("\r\n".join(head) + "\r\n\r\n").encode())
            assert status_of(answer) == status, (host, who, version, answer[:300])
            request_id = next(line.split(":", 1)[1].strip() for line in answer.decode("latin-1").split("\r\n")
                              if line.lower().startswith("x-request-id:"))

            def line() -> dict | None:
                return next((r for r in log_records(gw) if r.get("request_id") == request_id and r.get("route") == "/v1/authz"), None)

            assert wait_until(lambda: line() is not None, 5), (host, version, request_id)
            assert line().get("upstream") == app, (host, who, version, line())

@pytest.mark.parametrize("kind", ["nginx", "caddy"])
def test_per_host_rules_through_a_real_proxy(hosts, kind, tmp_path):
    gw, site, tokens = hosts
    keys = KeySet.import_key_set(requests.get(gw.url + "/.well-known/jwks.json", timeout=5).json())
    names = ["app.example.test", "admin.example.test"]
    proxy = Proxy(kind, tmp_path, gw.port, site.port, hosts=names)
    try:
        cases = [
            ("app.example.test", "mallory", 200),
            ("admin.example.test", "mallory", 403),
            ("admin.example.test", "alice", 200),
            ("app.example.test", "alice", 200),
        ]
        for host, who, status in cases:
            before = len(site.headers)
            r = requests.get(proxy.url + "/page", headers={"Host": host, "Authorization": f"Bearer {tokens[who]}"}, timeout=5, allow_redirects=False)
            assert r.status_code == status, (kind, host, who, r.status_code, r.text)
            seen = last_seen(site, before)
            assert len(seen) == (status == 200), (host, who)
            if seen:
                fields = {k.lower(): v for k, v in seen[0].items()}
                assert fields["x-gatehouse-subject"] == f"u-{who}"
                # The application gets the assertion made for it: its app's audience (forward_auth.apps), else backend's.
                assert jwt.decode(fields["x-gatehouse-assertion"], keys, algorithms=["ES256"]).claims["aud"] == AUDIENCES[host], (kind, host)
        # The client names the other host in X-Forwarded-Host: never let in (nginx passes the field on and the
        # gateway refuses the conflict with X-Original-URL; Caddy replaces it with the real host).
        before = len(site.headers)
        r = requests.get(
            proxy.url + "/page", headers={"Host": "admin.example.test", "X-Forwarded-Host": "app.example.test", "Authorization": f"Bearer {tokens['mallory']}"},
            timeout=5, allow_redirects=False)
        assert r.status_code in (400, 403, 500), (kind, r.status_code, r.text)  # nginx turns an authz 400 into 500
        assert last_seen(site, before) == []
        # Anonymous on the app's host: the sign-in redirect; nothing reaches the application.
        before = len(site.headers)
        r = requests.get(proxy.url + "/page", headers={"Host": "app.example.test"}, timeout=5, allow_redirects=False)
        assert r.status_code == 302, r.text
        assert last_seen(site, before) == []
    finally:
        proxy.stop()
