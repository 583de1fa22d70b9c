"""Page logins (ACS with the Notify shim, legacy by cookie and by title) in a real Chromium through nginx
round robin over two `gatehouse serve` instances on one SQLite file: no stickiness, so the requests of one
login alternate instances, and each must continue what the other started (the state is in the store).

The nginx configuration is deploy/nginx/load-balancer.conf (ports replaced), with an access log naming the
instance (`$upstream_addr`) and the gateway's request id of every request; the ids are looked up in the
instances' own access logs, so the test shows from both sides that two instances served one login.
The stand-in sites are the demo's (its `demo` fixture), as in test_login_pages.py.
"""
from __future__ import annotations

import json
import re
import subprocess
import tempfile
import shutil
from pathlib import Path

import pytest
import requests

from gatehouse_testkit import free_port, require_gateway_binary, stop_process, tail, wait_for_http, wait_until, yaml_quote as q
from proxy_kit import binary as proxy_binary
from test_login_pages import cookie_names, session_of, sign_in

REPO = Path(__file__).resolve().parents[2]
LOAD_BALANCER = REPO / "deploy" / "nginx" / "load-balancer.conf"
# The ACS stand-in's fixed demo key (StandInACS.signingKeyBase64's default) and the demo's realm.
ACS_SIGNING_KEY = "N4QeKa3c062VBjnVK6fb+rnwURkcwGXh7EoNK34n0uM="
ACS_REALM = "urn:gatehouse:demo"

NGINX_CONF = """daemon off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 256; }}
http {{
  log_format instances '$upstream_addr $upstream_http_x_request_id $status $request_method $request_uri';
  access_log {dir}/access.log instances;
  client_body_temp_path {dir}; proxy_temp_path {dir}; fastcgi_temp_path {dir}; uwsgi_temp_path {dir}; scgi_temp_path {dir};
{balancer}
}}
"""


class Instance:
    def __init__(self, name: str, binary: Path, config: Path, root: Path):
        self.name, self.port = name, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = root / f"gateway-{name}.log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen([str(binary), "serve", "--config", str(config), "--listen", f"127.0.0.1:{self.port}"],
                                         stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=str(root))
        wait_for_http(self.proc, self.url + "/readyz", 60, self.log, name=f"gateway {name}")

    def request_ids(self) -> set[str]:
        """The request ids of the instance's access log lines (JSON logging)."""
        ids = set()
        for line in self.log.read_text(errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("message") == "request" and record.get("request_id"):
                ids.add(record["request_id"])
        return ids


@pytest.fixture(scope="module")
def balanced(demo_standins):
    """(nginx URL, [instance a, instance b], nginx access log) — two instances on one SQLite file."""
    binary = require_gateway_binary()
    nginx = proxy_binary("nginx", "/usr/sbin/nginx")
    root = Path(tempfile.mkdtemp(prefix="gatehouse-pages-lb-"))
    root.chmod(0o755)
    lb_port = free_port()
    public = f"http://127.0.0.1:{lb_port}"
    subprocess.run([str(binary), "keys", "generate", "--id", "k1", "--directory", str(root / "keys")],
                   check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    providers = root / "Providers"
    providers.mkdir()
    acs, legacy = demo_standins["acs"], demo_standins["legacy"]
    key_file = root / "acs-signing-key"
    key_file.write_text(ACS_SIGNING_KEY + "\n")
    key_file.chmod(0o600)
    (providers / "azure.yaml").write_text(
        f"id: azure\nkind: acs\nlogin_url: {q(acs + '/login')}\nallowed_origins: [{q(acs)}]\nrealm: {q(ACS_REALM)}\n"
        f"issuer: {q(acs + '/')}\nsigning_key_file: {q(str(key_file))}\n")
    for provider, capture in (("legacy", "{from: cookie}"), ("legacytitle", "{from: title}")):
        (providers / f"{provider}.yaml").write_text(
            f"id: {provider}\nkind: capture\nlogin_url: {q(legacy + '/login')}\nallowed_origins: [{q(legacy)}]\n"
            f"success_url: {q(legacy + '/welcome*')}\ncapture: {capture}\nprobe: {{url: {q(legacy + '/api/me')}}}\n")
    config = root / "gatehouse.yaml"
    config.write_text(f"""listen: "127.0.0.1:{lb_port}"
public_url: {q(public)}
providers_dir: {q(str(providers))}
store:
  kind: "sqlite"
  path: {q(str(root / "gatehouse.sqlite3"))}
sessions:
  cookie: {{name: "gatehouse_session", secure: false, same_site: "Lax"}}
backend:
  url: "http://127.0.0.1:9"
  audience: "pages"
keys:
  sealing:
    - {{id: "k1", file: {q(str(root / "keys" / "sealing-k1.key"))}}}
  signing:
    - {{id: "k1", file: {q(str(root / "keys" / "signing-k1.pem"))}}}
logging:
  level: "info"
  format: "json"
""")
    instances: list[Instance] = []
    proc = None
    try:
        instances.append(Instance("a", binary, config, root))
        instances.append(Instance("b", binary, config, root))
        balancer = LOAD_BALANCER.read_text()
        balancer = balancer.replace("gatehouse-a:8080", f"127.0.0.1:{instances[0].port}")
        balancer = balancer.replace("gatehouse-b:8080", f"127.0.0.1:{instances[1].port}")
        balancer = balancer.replace("listen 8080;", f"listen 127.0.0.1:{lb_port};")
        assert f"127.0.0.1:{instances[1].port}" in balancer and f"127.0.0.1:{lb_port}" in balancer, "load-balancer.conf changed shape"
        assert "sticky" not in balancer and "ip_hash" not in balancer and "hash " not in balancer
        lb_dir = root / "nginx"
        lb_dir.mkdir()
        (lb_dir / "nginx.conf").write_text(NGINX_CONF.format(dir=lb_dir, balancer=balancer))
        with open(lb_dir / "nginx.out", "wb") as out:
            proc = subprocess.Popen([nginx, "-c", str(lb_dir / "nginx.conf"), "-p", str(lb_dir)],
                                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_for_http(proc, public + "/healthz", 20, lb_dir / "error.log", name="nginx")
        yield public, instances, lb_dir / "access.log"
    finally:
        if proc is not None:
            stop_process(proc)
        for instance in instances:
            stop_process(instance.proc)
        shutil.rmtree(root, ignore_errors=True)


def login_ids_served(access_log: Path, login_id: str, instances: list[Instance]) -> dict[str, list[str]]:
    """Instance name → request ids of this login's requests (start excluded: its URL has no id), from nginx's
    log, each checked to be in that instance's own access log."""
    by_port = {f"127.0.0.1:{i.port}": i for i in instances}
    served: dict[str, list[str]] = {}
    for line in access_log.read_text().splitlines():
        upstream, request_id, _status, _method, uri = line.split(" ", 4)
        if f"/v1/pages/{login_id}/" not in uri:
            continue
        instance = by_port[upstream]
        served.setdefault(instance.name, []).append(request_id)
    for name, ids in served.items():
        instance = next(i for i in instances if i.name == name)
        assert wait_until(lambda: set(ids) <= instance.request_ids(), 5), f"{name} has no access log line for {ids}:\n{tail(instance.log)}"
    return served


@pytest.mark.parametrize("round_", range(3))
@pytest.mark.parametrize("provider, fields, check", [
    ("azure", {"email": "carol@acs.demo.test"}, lambda s: s["identity"]["email"] == "carol@acs.demo.test"),
    ("legacy", {"user": "bob", "password": "secret"}, lambda s: s["subject"] == "user-bob"),
    ("legacytitle", {"user": "bob", "password": "secret"}, lambda s: s["subject"] == "user-bob"),
])
def test_every_page_login_succeeds_behind_round_robin(browser, balanced, provider, fields, check, round_):
    public, instances, access_log = balanced
    logins: list[str] = []
    # Record the login's id from the first page's address before the form is sent.
    original_get = browser.get

    def get_and_record(url):
        original_get(url)
        match = re.search(r"/v1/pages/([^/]+)/", browser.current_url)
        if match:
            logins.append(match.group(1))

    browser.get = get_and_record
    try:
        sign_in(browser, public, provider, fields)
    except Exception:
        pytest.fail(f"{provider}: login did not end at / (at {browser.current_url}):\n{browser.page_source[:2000]}\n"
                    f"A:\n{tail(instances[0].log, 3000)}\nB:\n{tail(instances[1].log, 3000)}")
    finally:
        browser.get = original_get
    session = session_of(browser, public)
    assert session["provider"] == provider, session
    assert check(session), session
    assert "gatehouse_session" in cookie_names(browser)
    assert not {"acs_session", "oauth_token", "site_session"} & cookie_names(browser)
    assert len(logins) == 1, logins
    served = login_ids_served(access_log, logins[0], instances)
    print(provider, logins[0], {name: len(ids) for name, ids in served.items()})
    # Round robin sends a redirect and the request it leads to (the form's POST and the page it redirects
    # to) to different instances: one login is served by both, each continuing the other's state.
    assert set(served) == {"a", "b"}, served
