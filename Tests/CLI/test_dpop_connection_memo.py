"""A DPoP-bound session on one keep-alive connection through the relay (`/v1/api/**`). The connection remembers the
session its `Authorization: DPoP <token>` resolved to (the token's look-up, as for a bearer token), but never the
proof: every request's proof is checked. The attacks, each on the same connection as the accepted calls:

- a proof signed by another key (one the gateway knows, so its signature is checked on the event loop);
- no proof at all, and a proof naming another URL;
- a proof replayed;
- the session signed out (from another connection): the next call with a fresh, valid proof is refused.

With `replay: instance` (the proof recorded in memory on the event loop) and `replay: store` (recorded in SQLite).
"""
from __future__ import annotations

import http.client
import json

import pytest
import requests

from conftest import free_port, q, write_capture_provider, write_config
from dpop_key import DPoPKey
from gatehouse_testkit import loopback_server

TIMEOUT = 10


@pytest.fixture
def peers():
    """The legacy site's probe (a session for `POST /v1/auth/legacy/token`) and the backend."""
    probe = loopback_server(lambda h: (200, "application/json", json.dumps({"id": "user-1", "email": "u1@example.test"}).encode()))
    backend = loopback_server(lambda h: (200, "application/json", json.dumps({"path": h.path}).encode()))
    yield probe, backend
    probe.shutdown()
    backend.shutdown()


@pytest.fixture(params=["instance", "store"])
def gateway(request, serve, tmp_path, peers):
    probe, backend = peers
    port = free_port()
    config = write_config(tmp_path, "\n".join([
        f"public_url: {q(f'http://127.0.0.1:{port}')}",
        'store: {kind: "sqlite", path: "data/g.sqlite3", session_cache_seconds: 30}',
        f"backend: {{url: {q(f'http://127.0.0.1:{backend.server_address[1]}')}}}",
        f'sessions: {{cookie: {{secure: false, name: "gatehouse_session"}}, dpop: {{replay: "{request.param}", require_nonce: true}}}}',
        "",
    ]))
    write_capture_provider(tmp_path, f"http://127.0.0.1:{probe.server_address[1]}")
    return serve(tmp_path, ["--config", str(config)], port=port)


def sign_in(gw, key: DPoPKey) -> tuple[str, str]:
    """A DPoP-bound session: the first proof has no nonce (400 use_dpop_nonce), the second the one given."""
    url = gw.url + "/v1/auth/legacy/token"
    first = requests.post(url, json={"token": "t"}, headers={"DPoP": key.proof("POST", url)}, timeout=TIMEOUT)
    assert first.status_code == 400 and first.json()["code"] == "use_dpop_nonce", first.text
    nonce = first.headers["DPoP-Nonce"]
    created = requests.post(url, json={"token": "t"}, headers={"DPoP": key.proof("POST", url, nonce=nonce)}, timeout=TIMEOUT)
    assert created.status_code == 201 and created.json()["token_type"] == "DPoP", created.text
    return created.json()["session_token"], created.headers.get("DPoP-Nonce", nonce)


class KeptConnection:
    """One HTTP/1.1 connection to the gateway; every call checks that it is still the same socket."""

    def __init__(self, gw):
        self.conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=TIMEOUT)
        self.conn.connect()
        self.sock = self.conn.sock

    def get(self, path: str, headers: dict[str, str]) -> tuple[int, dict]:
        self.conn.request("GET", path, headers=headers)
        answer = self.conn.getresponse()
        body = answer.read()
        assert self.conn.sock is self.sock, "the gateway closed the connection"
        assert answer.getheader("Connection", "").lower() != "close", answer.getheaders()
        return answer.status, json.loads(body) if body else {}

    def close(self):
        self.conn.close()


def lane_requests(gw) -> float:
    """`gatehouse_relay_lane_requests_total`."""
    for line in requests.get(gw.url + "/metrics", timeout=TIMEOUT).text.splitlines():
        if line.startswith("gatehouse_relay_lane_requests_total "):
            return float(line.split()[-1])
    return 0.0


def test_every_proof_is_checked_on_a_connection_that_remembers_the_session(gateway):
    gw = gateway
    key, other = DPoPKey(), DPoPKey()
    token, nonce = sign_in(gw, key)
    # The other key's own session, called once: the gateway keeps its verifier, so a proof it signs is judged on
    # the event loop (where the connection's memo answers) rather than off it.
    other_token, other_nonce = sign_in(gw, other)
    own = requests.get(gw.url + "/v1/api/other", timeout=TIMEOUT, headers={
        "Authorization": f"DPoP {other_token}", "DPoP": other.proof("GET", gw.url + "/v1/api/other", other_token, nonce=other_nonce)})
    assert own.status_code == 200, own.text

    url = gw.url + "/v1/api/x"
    authorization = f"DPoP {token}"
    connection = KeptConnection(gw)
    try:
        def call(proof: str | None, path: str = "/v1/api/x") -> tuple[int, dict]:
            headers = {"Authorization": authorization}
            if proof is not None:
                headers["DPoP"] = proof
            return connection.get(path, headers)

        # Accepted calls: the session is found, then remembered by the connection. The relay's byte lane serves them
        # (a proof's record, in memory or in the store, awaited there), so the connection stays on it.
        lane_before = lane_requests(gw)
        accepted = []
        for _ in range(3):
            accepted.append(key.proof("GET", url, token, nonce=nonce))
            status, body = call(accepted[-1])
            assert (status, body.get("path")) == (200, "/x"), (status, body)
        assert lane_requests(gw) - lane_before == 3

        # Signed by another key, with this token's ath and a valid nonce: not the key the session is bound to.
        status, body = call(other.proof("GET", url, token, nonce=nonce))
        assert status == 401 and body["code"] == "invalid_dpop_proof" and "another key" in body["detail"], (status, body)
        # No proof, and a proof of another URL.
        status, body = call(None)
        assert status == 401 and body["code"] == "invalid_dpop_proof", (status, body)
        status, body = call(key.proof("GET", gw.url + "/v1/api/elsewhere", token, nonce=nonce))
        assert status == 401 and body["code"] == "invalid_dpop_proof" and "htu" in body["detail"], (status, body)
        # The right key and URL, but made for another token (its ath): the remembered session does not stand for
        # the proof's ath, which is compared with this token's every time.
        status, body = call(key.proof("GET", url, other_token, nonce=nonce))
        assert status == 401 and body["code"] == "invalid_dpop_proof" and "ath" in body["detail"], (status, body)
        # The other session's token on this connection, with its own key's proof made for the first token: the
        # connection's memo moves to that token, and its ath is that token's.
        status, body = connection.get("/v1/api/x", {
            "Authorization": f"DPoP {other_token}", "DPoP": other.proof("GET", url, token, nonce=other_nonce)})
        assert status == 401 and body["code"] == "invalid_dpop_proof" and "ath" in body["detail"], (status, body)
        status, body = connection.get("/v1/api/x", {
            "Authorization": f"DPoP {other_token}", "DPoP": other.proof("GET", url, other_token, nonce=other_nonce)})
        assert status == 200, (status, body)
        # A proof accepted before, replayed (the last one and the first one).
        for replayed in (accepted[-1], accepted[0]):
            status, body = call(replayed)
            assert status == 401 and body["code"] == "invalid_dpop_proof" and "already used" in body["detail"], (status, body)
        # The connection still serves the session with a fresh proof.
        status, body = call(key.proof("GET", url, token, nonce=nonce))
        assert status == 200, (status, body)

        # Signed out from another connection: the remembered session is not used again.
        out = requests.delete(gw.url + "/v1/session", timeout=TIMEOUT, headers={
            "Authorization": authorization, "DPoP": key.proof("DELETE", gw.url + "/v1/session", token, nonce=nonce)})
        assert out.status_code in (200, 204), out.text
        status, body = call(key.proof("GET", url, token, nonce=nonce))
        assert status == 401 and body["code"] == "invalid_session", (status, body)
    finally:
        connection.close()
