"""Trust towards upstreams and the CLI's trust in a gateway (docs/configuration.md "Outbound TLS").

A private CA is made here with `openssl` (Tests/Support/private_ca.py). Real `https` backends (Python's `ssl`)
sit behind a real `gatehouse serve`: one requires a client certificate of the private CA (`CERT_REQUIRED`) and
answers with the subject it was shown; one has a certificate of another CA; one is named only `app.internal`.
`/v1/api` requests to them go through the router's client with the upstream's `tls:` (client certificate,
`ca_file`, `server_name`). Then `gatehouse check` on every bad file, and the CLI (`gatehouse login`) against a
gateway that serves TLS with a certificate of the private CA.

The machine's environment may set SSL_CERT_FILE and SSL_CERT_DIR (to the system's bundle): the gateway and the
CLI get them set to "" (unset) unless a test sets them, so that only what a test names is trusted beyond the
system's roots.
"""
from __future__ import annotations

import json
import signal
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests

from conftest import clean_env, q, wait_until, write_capture_provider, write_config, write_provider
from gatehouse_testkit import free_port, stop_process
from private_ca import PrivateCA
from test_check import assert_check_fails, line_of
from test_tls import TLSGateway

NO_ENVIRONMENT_TRUST = {"SSL_CERT_FILE": "", "SSL_CERT_DIR": ""}


class TLSBackend:
    """An `https` backend on 127.0.0.1 answering every GET with JSON: the client certificate's subject CN (or
    None), the path and the Host it was asked for."""

    def __init__(self, context: ssl.SSLContext):
        #: TLS handshakes completed (one per connection the gateway made).
        self.handshakes = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                peer = self.connection.getpeercert()
                subject = dict(item[0] for item in peer["subject"]) if peer else {}
                # `id` and `email`: what a capture provider's probe answers.
                data = json.dumps({"client": subject.get("commonName"), "path": self.path, "host": self.headers.get("Host"),
                                   "id": "user-1", "email": "user1@example.test"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def finish_request(self, request, client_address):
                # The handshake on the connection's own thread; a refused one ends only that connection.
                try:
                    request = context.wrap_socket(request, server_side=True)
                except (ssl.SSLError, OSError):
                    return
                outer.handshakes += 1
                try:
                    super().finish_request(request, client_address)
                finally:
                    request.close()

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


@pytest.fixture(scope="module")
def ca(tmp_path_factory) -> PrivateCA:
    return PrivateCA(tmp_path_factory.mktemp("private-ca"), "Gatehouse Private Test CA")


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory) -> PrivateCA:
    return PrivateCA(tmp_path_factory.mktemp("other-ca"), "Somebody Else's CA")


@pytest.fixture(scope="module")
def backends(ca, other_ca):
    """(mutual: requires a client certificate of `ca`; foreign: another CA's certificate; named: `ca`'s certificate
    for app.internal only, requiring a client certificate too)."""
    mutual = TLSBackend(ca.server_context(*ca.leaf("backend"), client_ca=ca.certificate))
    foreign = TLSBackend(other_ca.server_context(*other_ca.leaf("foreign")))
    named = TLSBackend(ca.server_context(*ca.leaf("app-internal", sans="DNS:app.internal"), client_ca=ca.certificate))
    yield mutual, foreign, named
    for backend in (mutual, foreign, named):
        backend.close()


def upstream_config(ca: PrivateCA, mutual: TLSBackend, foreign: TLSBackend, named: TLSBackend, client: tuple[Path, Path]) -> str:
    certificate, key = client
    client_tls = f"client_certificate_file: {q(str(certificate))}, client_key_file: {q(str(key))}"
    url = lambda backend: q(f"https://127.0.0.1:{backend.port}")  # noqa: E731
    return "\n".join([
        'store: {kind: "memory"}',
        "backend:",
        f"  url: {url(mutual)}",
        f"  tls: {{ca_file: {q(str(ca.certificate))}, {client_tls}}}",
        "upstreams:",
        f'  - {{name: "nocert", prefix: "/nocert", url: {url(mutual)}, tls: {{ca_file: {q(str(ca.certificate))}}}}}',
        f'  - {{name: "foreign", prefix: "/foreign", url: {url(foreign)}, tls: {{ca_file: {q(str(ca.certificate))}, {client_tls}}}}}',
        f'  - {{name: "named", prefix: "/named", url: {url(named)}, tls: {{ca_file: {q(str(ca.certificate))}, server_name: "app.internal", {client_tls}}}}}',
        f'  - {{name: "unnamed", prefix: "/unnamed", url: {url(named)}, tls: {{ca_file: {q(str(ca.certificate))}, {client_tls}}}}}',
        f'  - {{name: "untrusted", prefix: "/untrusted", url: {url(mutual)}, tls: {{{client_tls}}}}}',
        "access:",
        "  rules:",
        '    - {name: "open", paths: ["/**"], allow: "anyone"}',
        "",
    ])


def test_mutual_tls_towards_upstreams(serve, tmp_path, ca, backends):
    """The configured client certificate is presented (the backend sees its subject); without one, with another
    CA's certificate or with an upstream not trusted, the answer is 502 bad_gateway; `server_name` is what is
    checked when the URL's host is an IP address."""
    mutual, foreign, named = backends
    config = write_config(tmp_path, upstream_config(ca, mutual, foreign, named, ca.leaf("gatehouse-client")))
    gw = serve(tmp_path, ["--config", str(config)], env=NO_ENVIRONMENT_TRUST)

    r = requests.get(gw.url + "/v1/api/hello", timeout=10)
    assert r.status_code == 200, r.text
    assert r.json()["client"] == "gatehouse-client" and r.json()["path"] == "/hello"

    r = requests.get(gw.url + "/v1/api/named/x", timeout=10)
    assert r.status_code == 200, r.text
    assert r.json()["client"] == "gatehouse-client" and r.json()["host"].startswith("app.internal")

    for prefix in ("nocert", "foreign", "unnamed", "untrusted"):
        r = requests.get(gw.url + f"/v1/api/{prefix}/x", timeout=10)
        assert r.status_code == 502, (prefix, r.status_code, r.text)
        assert r.headers["Content-Type"].startswith("application/problem+json") and r.json()["code"] == "bad_gateway", (prefix, r.text)
    assert "upstream request failed" in gw.log()


def relayed(gw) -> float:
    for line in requests.get(gw.url + "/metrics", timeout=5).text.splitlines():
        if line.startswith("gatehouse_relayed_requests_total"):
            return float(line.split()[-1])
    return 0.0


def test_the_relay_carries_https_upstreams_on_kept_alive_tls_connections(serve, tmp_path, ca, backends):
    """An `https` upstream is the event-loop relay's (its counter grows by every call), with the client certificate,
    and its TLS connections are kept alive: forty calls cost a handshake or two, not forty."""
    mutual, foreign, named = backends
    config = write_config(tmp_path, upstream_config(ca, mutual, foreign, named, ca.leaf("gatehouse-client")))
    gw = serve(tmp_path, ["--config", str(config)], env=NO_ENVIRONMENT_TRUST)
    before, handshakes = relayed(gw), mutual.handshakes
    with requests.Session() as client:
        for index in range(40):
            r = client.get(gw.url + f"/v1/api/call/{index}", timeout=10)
            assert r.status_code == 200 and r.json()["client"] == "gatehouse-client", r.text
    assert relayed(gw) - before == 40, "an https upstream was left to the router"
    assert mutual.handshakes - handshakes <= 2, f"{mutual.handshakes - handshakes} TLS handshakes for 40 calls"


def test_sighup_reads_the_client_certificate_again(serve, tmp_path, ca, backends):
    """The files are read again on SIGHUP: a new client certificate is presented from then on."""
    mutual, foreign, named = backends
    first = ca.leaf("first-client")
    certificate, key = tmp_path / "client.pem", tmp_path / "client.key"
    certificate.write_text(first[0].read_text())
    key.write_text(first[1].read_text())
    config = write_config(tmp_path, upstream_config(ca, mutual, foreign, named, (certificate, key)))
    gw = serve(tmp_path, ["--config", str(config)], env=NO_ENVIRONMENT_TRUST)
    assert requests.get(gw.url + "/v1/api/x", timeout=10).json()["client"] == "first-client"

    second = ca.leaf("second-client")
    certificate.write_text(second[0].read_text())
    key.write_text(second[1].read_text())
    gw.signal(signal.SIGHUP)

    def presented() -> bool:
        r = requests.get(gw.url + "/v1/api/x", timeout=10)
        return r.status_code == 200 and r.json()["client"] == "second-client"

    assert wait_until(presented, 10, 0.2), gw.log()


@pytest.mark.parametrize("trusted", [True, False])
def test_a_provider_files_ca_file_serves_its_calls_and_its_api(serve, tmp_path, ca, trusted):
    """A provider behind the private CA: with `tls.ca_file` its probe (the adapter's own call) and its API
    (`/v1/proxy/{id}`) are reached; without it the sign-in is refused and nothing else trusts that CA."""
    site = TLSBackend(ca.server_context(*ca.leaf("legacy-site")))
    try:
        base = f"https://127.0.0.1:{site.port}"
        extra = [f"api: {{url: {q(base + '/api')}}}"] + ([f"tls: {{ca_file: {q(str(ca.certificate))}}}"] if trusted else [])
        write_capture_provider(tmp_path, base, extra=extra)
        config = write_config(tmp_path, 'store: {kind: "memory"}\n')
        gw = serve(tmp_path, ["--config", str(config)], env=NO_ENVIRONMENT_TRUST)
        created = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "captured"}, timeout=10)
        if not trusted:
            assert created.status_code == 503 and created.json()["code"] == "upstream_unavailable", created.text
            assert wait_until(lambda: "CERTIFICATE_VERIFY_FAILED" in gw.log(), 5), gw.log()[-2000:]
            return
        assert created.status_code == 201, created.text
        token = created.json()["session_token"]
        r = requests.get(gw.url + "/v1/proxy/legacy/things?x=1", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert r.status_code == 200 and r.json()["path"] == "/api/things?x=1", r.text
    finally:
        site.close()


def test_check_reports_every_bad_file_at_its_line(cli, tmp_path, ca):
    """Unreadable, not PEM, expired, a key that is not the certificate's, a key without certificate and the other
    way round: each at its line, with an unrelated mistake and a provider file's bad `tls.ca_file`, in one run."""
    client_certificate, client_key = ca.leaf("client")
    other_key = ca.lone_key("other")
    expired_certificate, expired_key = ca.expired("expired")
    (tmp_path / "notpem.pem").write_text("this is not a certificate\n")
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}',
        "outbound_tls:",
        "  ca_files:",
        f"    - {q(str(ca.certificate))}",
        '    - "missing.pem"',
        '    - "notpem.pem"',
        f"    - {q(str(expired_certificate))}",
        "  system_roots: false",
        "backend:",
        '  url: "https://127.0.0.1:1"',
        "  tls:",
        f"    client_certificate_file: {q(str(client_certificate))}",
        f"    client_key_file: {q(str(other_key))}",
        "upstreams:",
        '  - name: "a"',
        '    prefix: "/a"',
        '    url: "https://127.0.0.1:2"',
        "    tls:",
        f"      client_certificate_file: {q(str(client_certificate))}",
        '  - name: "b"',
        '    prefix: "/b"',
        '    url: "https://127.0.0.1:3"',
        "    tls:",
        f"      client_key_file: {q(str(client_key))}",
        '  - name: "c"',
        '    prefix: "/c"',
        '    url: "https://127.0.0.1:4"',
        "    tls:",
        f"      client_certificate_file: {q(str(expired_certificate))}",
        f"      client_key_file: {q(str(expired_key))}",
        '      server_name: "app.internal"',
        "limits:",
        '  upstream_timeout_seconds: "soon"',
        "",
    ]))
    provider = write_provider(tmp_path, "x", extra='tls:\n  ca_file: "../notpem.pem"\n')
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    text = config.read_text()
    lines = text.splitlines()

    def line(needle: str, after: int = 0) -> int:
        return next(n for n, l in enumerate(lines, start=1) if n > after and l.lstrip().startswith(needle))

    upstream_c = line('- name: "c"')
    assert_check_fails(result, [
        (config, line('- "missing.pem"'), ["outbound_tls.ca_files[1]", "cannot read the certificate file", "missing.pem"]),
        (config, line('- "notpem.pem"'), ["outbound_tls.ca_files[2]", "holds no PEM certificate"]),
        (config, line(f"- {q(str(expired_certificate))}"), ["outbound_tls.ca_files[3]", "expired on"]),
        (config, line("client_key_file", after=line("backend:")), ["backend.tls.client_key_file", "does not match the certificate"]),
        (config, line("client_certificate_file", after=line('- name: "a"')),
         ["upstreams[0].tls.client_certificate_file", "needs", "client_key_file"]),
        (config, line("client_key_file", after=line('- name: "b"')), ["upstreams[1].tls.client_key_file", "needs", "client_certificate_file"]),
        (config, line("client_certificate_file", after=upstream_c), ["upstreams[2].tls.client_certificate_file", "expired on"]),
        (config, line("upstream_timeout_seconds"), ["limits.upstream_timeout_seconds"]),
        (provider, line_of(provider, "ca_file"), ["tls.ca_file", "holds no PEM certificate"]),
    ])


def test_check_accepts_good_files_and_refuses_unknown_keys(cli, tmp_path, ca):
    client_certificate, client_key = ca.leaf("client")
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}',
        f"outbound_tls: {{ca_files: [{q(str(ca.certificate))}], system_roots: false}}",
        "backend:",
        '  url: "https://127.0.0.1:1"',
        f"  tls: {{ca_file: {q(str(ca.certificate))}, client_certificate_file: {q(str(client_certificate))}, "
        f'client_key_file: {q(str(client_key))}, server_name: "app.internal"}}',
        "",
    ]))
    write_provider(tmp_path, "x", extra=f"tls: {{ca_file: {q(str(ca.certificate))}}}\n")
    good = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert good.returncode == 0, good.stderr

    config.write_text(config.read_text() + "  unknown_key: 1\n")
    write_provider(tmp_path, "x", extra=f"tls: {{ca_file: {q(str(ca.certificate))}, cafile: \"x\"}}\n")
    bad = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert bad.returncode == 1 and "unknown key 'backend.unknown_key'" in bad.stderr and "unknown key 'tls.cafile'" in bad.stderr, bad.stderr


# --- the CLI against a gateway with a private certificate ----------------------------------------------------------

@pytest.fixture(scope="module")
def tls_gateway(gatehouse_bin, tmp_path_factory, ca):
    """`gatehouse serve` with `tls:` (a certificate of the private CA) and a redirect provider."""
    root = tmp_path_factory.mktemp("tls-gateway")
    chain, key = ca.leaf("gateway")
    write_config(root, "\n".join([
        'store: {kind: "memory"}',
        "tls:",
        f"  certificate_file: {q(str(chain))}",
        f"  private_key_file: {q(str(key))}",
        'allowed_redirect_uris: ["http://127.0.0.1/callback"]',
        "",
    ]))
    write_provider(root, "corp")
    gateway = TLSGateway(gatehouse_bin, root, ca.certificate, free_port(), NO_ENVIRONMENT_TRUST)
    yield gateway
    gateway.stop()


def login(gatehouse_bin, home: Path, gateway: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`gatehouse login --no-browser`: stopped as soon as it prints the sign-in URL (it reached the gateway)."""
    environment = clean_env({**NO_ENVIRONMENT_TRUST, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), **(env or {})})
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "BROWSER"):
        environment.pop(name, None)
    proc = subprocess.Popen([str(gatehouse_bin), "login", "--gateway", gateway, "--no-browser", "--timeout", "30", *args],
                            env=environment, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        if line.startswith("Open this URL to sign in:"):
            return 0, line, ""
        out, err = proc.communicate(timeout=30)
        return proc.returncode, line + out, err
    finally:
        stop_process(proc)


def test_cli_trusts_a_private_gateway_with_ca_file_or_ssl_cert_file(gatehouse_bin, tmp_path, tls_gateway, ca):
    code, out, err = login(gatehouse_bin, tmp_path, tls_gateway.url)
    assert code != 0 and "TLS certificate is not trusted" in err, (code, out, err)

    code, out, err = login(gatehouse_bin, tmp_path, tls_gateway.url, "--ca-file", str(ca.certificate))
    assert code == 0 and f"{tls_gateway.url}/v1/auth/corp/login?" in out, (code, out, err)

    code, out, err = login(gatehouse_bin, tmp_path, tls_gateway.url, env={"SSL_CERT_FILE": str(ca.certificate)})
    assert code == 0 and f"{tls_gateway.url}/v1/auth/corp/login?" in out, (code, out, err)

    code, out, err = login(gatehouse_bin, tmp_path, tls_gateway.url, "--ca-file", str(tmp_path / "missing.pem"))
    assert code != 0 and "--ca-file" in err and "cannot read the certificate file" in err, (code, out, err)


def test_the_ca_file_of_a_sign_in_serves_the_later_commands(gatehouse_bin, tmp_path, tls_gateway, ca):
    """`login --ca-file` keeps the file with the session: `whoami`, `api` and `logout` trust it without being told
    again (a stored session whose token the gateway does not know: they reach it, and it answers 401)."""
    home = tmp_path / "home"
    credentials = home / ".config" / "gatehouse" / "credentials.json"
    credentials.parent.mkdir(parents=True, mode=0o700)

    def stored(**entry) -> None:
        credentials.write_text(json.dumps({"version": 1, "gateways": {tls_gateway.url: {
            "gateway": tls_gateway.url, "provider": "corp", "session_token": "not-a-session", "token_type": "Bearer", **entry}}}))
        credentials.chmod(0o600)

    environment = clean_env({**NO_ENVIRONMENT_TRUST, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")})

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(gatehouse_bin), *args], env=environment, capture_output=True, text=True, timeout=30)

    stored()
    untrusted = run("whoami")
    assert untrusted.returncode != 0 and "TLS certificate is not trusted" in untrusted.stderr, untrusted.stderr
    stored(ca_file=str(ca.certificate))
    for command in (["whoami"], ["api", "/x"], ["logout"]):
        reached = run(*command)
        assert "TLS certificate is not trusted" not in reached.stderr, (command, reached.stderr)
        # The gateway answered: 401 to whoami and api; logout ends the entry whatever the gateway says of the token.
        assert ("invalid_session" in reached.stderr) if command != ["logout"] else reached.returncode == 0, (command, reached.stderr)
        stored(ca_file=str(ca.certificate))
    # --ca-file given wins over the stored one.
    wrong = run("whoami", "--ca-file", str(tmp_path / "missing.pem"))
    assert wrong.returncode != 0 and "--ca-file" in wrong.stderr, wrong.stderr
