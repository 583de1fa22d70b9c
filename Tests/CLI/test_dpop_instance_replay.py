"""`sessions.dpop.replay: instance` over real sockets: two `gatehouse serve` on one SQLite file, each recording the
proofs it accepted in its own memory and issuing nonces that name it. The attacks:

- a proof replayed on the instance that accepted it (through the relay and through the router);
- the same proof, carrying instance A's nonce, sent to instance B: 401 `use_dpop_nonce` with B's own nonce;
- A restarted: a proof with the nonce of the old process is refused, as is the proof A accepted before;
- a proof without a nonce: 401 `use_dpop_nonce` and a nonce;
- `gatehouse login --device` and `gatehouse api` through a proxy that sends each connection to the other
  instance: every call succeeds (the client answers a stranger's nonce by retrying once);
- `replay: instance` with `require_nonce: false`: a `file:line` error.
"""
from __future__ import annotations

import json
import re
import socket
import subprocess
import threading

import pytest
import requests

from conftest import clean_env, q, stop, write_capture_provider, write_config
from device_signin import Person
from dpop_key import DPoPKey
from gatehouse_testkit import loopback_server
from oidc_provider import OpenIDProvider, write_provider_file

TIMEOUT = 10


class AlternatingProxy:
    """A TCP proxy on loopback that sends each new connection to the next of its backends in turn (a load balancer
    without affinity); it counts the connections each backend got."""

    def __init__(self):
        self.backends: list[int] = []
        self.connections: list[int] = []
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.turn = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                index = self.turn % len(self.backends)
                self.turn += 1
                self.connections[index] += 1
            try:
                upstream = socket.create_connection(("127.0.0.1", self.backends[index]), timeout=TIMEOUT)
            except OSError:
                client.close()
                continue
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket):
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.sock.close()


@pytest.fixture
def peers():
    """The legacy site's probe (a session for `POST /v1/auth/legacy/token`), the backend, an OpenID provider."""
    probe = loopback_server(lambda h: (200, "application/json", json.dumps({"id": "user-1", "email": "u1@example.test"}).encode()))
    backend = loopback_server(lambda h: (200, "application/json", json.dumps({"path": h.path}).encode()))
    provider = OpenIDProvider()
    yield probe, backend, provider
    probe.shutdown()
    backend.shutdown()
    provider.close()


@pytest.fixture
def cluster(serve, tmp_path, peers):
    """Instances A and B of one configuration on one SQLite file, behind an alternating proxy (their public_url)."""
    probe, backend, provider = peers
    proxy = AlternatingProxy()
    site = f"http://127.0.0.1:{probe.server_address[1]}"
    config = write_config(tmp_path, "\n".join([
        f"public_url: {q(proxy.url)}",
        'store: {kind: "sqlite", path: "data/g.sqlite3"}',
        f"backend: {{url: {q(f'http://127.0.0.1:{backend.server_address[1]}')}}}",
        "device: {interval_seconds: 1}",
        'sessions: {cookie: {secure: false, name: "gatehouse_session"}, dpop: {replay: "instance"}}',
        "",
    ]))
    write_capture_provider(tmp_path, site)
    write_provider_file(tmp_path / "Providers", "idp", provider, backchannel_logout=None)
    first = serve(tmp_path, ["--config", str(config)], name="a")
    second = serve(tmp_path, ["--config", str(config)], name="b")
    proxy.backends = [first.port, second.port]
    proxy.connections = [0, 0]
    yield {"a": first, "b": second, "proxy": proxy, "config": config, "dir": tmp_path, "provider": provider}
    proxy.close()


def nonce_of(answer: requests.Response) -> str:
    """The `use_dpop_nonce` refusal's nonce, after checking the refusal."""
    assert answer.status_code in (400, 401), (answer.status_code, answer.text)
    assert answer.headers["Content-Type"].startswith("application/problem+json"), answer.headers
    assert answer.json()["code"] == "use_dpop_nonce", answer.text
    if answer.status_code == 401:
        assert 'error="use_dpop_nonce"' in answer.headers["WWW-Authenticate"], answer.headers
    return answer.headers["DPoP-Nonce"]


def sign_in(gw, public: str, key: DPoPKey) -> tuple[str, str]:
    """A DPoP-bound session at `gw`: the first proof has no nonce (400 use_dpop_nonce), the second the one given.
    Returns the token and the instance's nonce."""
    url = public + "/v1/auth/legacy/token"
    first = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "t"}, headers={"DPoP": key.proof("POST", url)}, timeout=TIMEOUT)
    assert first.status_code == 400, first.text
    nonce = nonce_of(first)
    created = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "t"}, headers={"DPoP": key.proof("POST", url, nonce=nonce)},
                            timeout=TIMEOUT)
    assert created.status_code == 201, created.text
    assert created.json()["token_type"] == "DPoP"
    return created.json()["session_token"], created.headers.get("DPoP-Nonce", nonce)


def call(gw, token: str, proof: str, path: str = "/v1/api/x", **headers) -> requests.Response:
    return requests.get(gw.url + path, headers={"Authorization": f"DPoP {token}", "DPoP": proof, **headers}, timeout=TIMEOUT)


# --- the attacks --------------------------------------------------------------------------------

@pytest.mark.parametrize("front_end", ["relay", "router"])
def test_a_replayed_proof_is_refused_on_the_instance_that_accepted_it(cluster, front_end):
    a, public = cluster["a"], cluster["proxy"].url
    key = DPoPKey()
    token, nonce = sign_in(a, public, key)
    # /v1/api is the relay's; /v1/session is a route of the router.
    path = "/v1/api/x" if front_end == "relay" else "/v1/session"
    proof = key.proof("GET", public + path, token, nonce=nonce)
    assert call(a, token, proof, path).status_code == 200
    replayed = call(a, token, proof, path)
    assert replayed.status_code == 401, replayed.text
    assert replayed.json()["code"] == "invalid_dpop_proof" and "already used" in replayed.json()["detail"], replayed.text
    # A fresh proof with the same nonce passes: only the proof was spent.
    assert call(a, token, key.proof("GET", public + path, token, nonce=nonce), path).status_code == 200


def test_a_proof_with_instance_a_nonce_is_refused_on_instance_b(cluster):
    a, b, public = cluster["a"], cluster["b"], cluster["proxy"].url
    key = DPoPKey()
    token, nonce_a = sign_in(a, public, key)
    proof = key.proof("GET", public + "/v1/api/x", token, nonce=nonce_a)
    assert call(a, token, proof).status_code == 200
    # The proof A accepted, replayed on B (which never saw its jti): B did not issue its nonce.
    nonce_b = nonce_of(call(b, token, proof))
    assert nonce_b != nonce_a
    # Before A saw it, too: a fresh proof with A's nonce is B's to refuse, and stays A's to accept.
    fresh = key.proof("GET", public + "/v1/api/x", token, nonce=nonce_a)
    assert nonce_of(call(b, token, fresh)) != nonce_a
    assert call(a, token, fresh).status_code == 200
    # B's nonce works on B and not on A.
    assert call(b, token, key.proof("GET", public + "/v1/api/x", token, nonce=nonce_b)).status_code == 200
    assert nonce_of(call(a, token, key.proof("GET", public + "/v1/api/x", token, nonce=nonce_b))) != nonce_b


def test_after_a_restart_a_proof_with_the_old_nonce_is_refused(cluster, serve):
    a, public = cluster["a"], cluster["proxy"].url
    key = DPoPKey()
    token, nonce = sign_in(a, public, key)
    accepted = key.proof("GET", public + "/v1/api/x", token, nonce=nonce)
    assert call(a, token, accepted).status_code == 200
    unused = key.proof("GET", public + "/v1/api/x", token, nonce=nonce)
    stop(a.proc)
    restarted = serve(cluster["dir"], ["--config", str(cluster["config"])], port=a.port, name="a-again")
    # The process that recorded the proof is gone; its nonces went with it.
    fresh_nonce = nonce_of(call(restarted, token, accepted))
    assert fresh_nonce != nonce
    assert nonce_of(call(restarted, token, unused)) != nonce
    # The session (in the store) is still there: a proof with the new process's nonce passes.
    assert call(restarted, token, key.proof("GET", public + "/v1/api/x", token, nonce=fresh_nonce)).status_code == 200


def test_a_proof_without_a_nonce_is_refused_with_one(cluster):
    a, public = cluster["a"], cluster["proxy"].url
    key = DPoPKey()
    token, _ = sign_in(a, public, key)
    for path in ("/v1/api/x", "/v1/session"):
        refused = call(a, token, key.proof("GET", public + path, token), path)
        assert refused.status_code == 401
        assert nonce_of(refused)
        forged = call(a, token, key.proof("GET", public + path, token, nonce="AAAA" + nonce_of(refused)[4:]), path)
        assert nonce_of(forged)


def test_the_cli_signs_in_and_calls_api_on_both_instances_in_turn(gatehouse_bin, cluster, tmp_path):
    proxy, provider = cluster["proxy"], cluster["provider"]
    provider.next_login = {"sub": "cli-carol", "sid": "sid-i"}
    env = clean_env({"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY", "BROWSER"):
        env.pop(name, None)
    login = subprocess.Popen([str(gatehouse_bin), "login", "--device", "--gateway", proxy.url, "--provider", "idp"], env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        match = re.search(r"open (\S+) in a browser and enter the code: ([A-Z]{4}-[A-Z]{4})", login.stderr.readline())
        assert match
        done = Person(cluster["a"], public_url=proxy.url).sign_in(match.group(2))
        assert done.status_code == 200, done.text
        out, err = login.communicate(timeout=60)
    finally:
        if login.poll() is None:
            login.kill()
    assert login.returncode == 0, err
    assert "Signed in as cli-carol" in out
    before = list(proxy.connections)
    for i in range(4):
        api = subprocess.run([str(gatehouse_bin), "api", f"/call-{i}"], env=env, capture_output=True, text=True, timeout=60)
        assert api.returncode == 0, api
        assert json.loads(api.stdout)["path"].endswith(f"/call-{i}"), api.stdout
    served = [after - earlier for after, earlier in zip(proxy.connections, before)]
    assert all(n >= 2 for n in served), served  # each instance took calls


def test_replay_instance_with_nonces_turned_off_is_a_file_line_error(cli, tmp_path):
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}',
        "sessions:",
        "  dpop:",
        '    replay: "instance"',
        "    require_nonce: false",
        "",
    ]))
    checked = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert checked.returncode != 0
    assert f"{config}:5: 'sessions.dpop.require_nonce' must not be false with 'replay: instance'" in checked.stderr + checked.stdout, checked
