"""The forward-authentication proxies of docs/forward-auth.md (nginx, Caddy) started on loopback from the
blocks of that page: what users copy is what the tests run (Tests/CLI/test_forward_auth.py, and the browser
round trip in Tests/Browser)."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from gatehouse_testkit import free_port, missing, stop_process, tail, wait_until

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


def binary(name: str, *candidates: str) -> str:
    found = shutil.which(name) or next((c for c in candidates if Path(c).exists()), None)
    if not found:
        missing(f"{name} is not installed (bash scripts/test-setup installs it)")
    return found


class Proxy:
    """nginx or Caddy from the documented block, in front of the gateway and the application."""

    def __init__(self, kind: str, root: Path, gateway_port: int, backend_port: int, port: int | None = None,
                 hosts: list[str] | None = None):
        """`hosts`: the application's host names (Caddy's site serves these on the port; nginx's server takes any)."""
        self.port = port or free_port()
        self.dir = root / kind
        self.dir.mkdir()
        if kind == "nginx":
            conf = self.dir / "nginx.conf"
            block = ports(doc_block("nginx"), gateway_port, backend_port)
            conf.write_text(NGINX_CONF.format(dir=self.dir, port=self.port, block=block))
            argv = [binary("nginx", "/usr/sbin/nginx"), "-c", str(conf), "-p", str(self.dir)]
        else:
            conf = self.dir / "Caddyfile"
            address = ", ".join(f"http://{host}:{self.port}" for host in hosts or ["127.0.0.1"])
            site = ports(doc_block("caddyfile"), gateway_port, backend_port).replace("app.example.com", address)
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


