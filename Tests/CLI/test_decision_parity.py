"""One decision per request: the same request gets the same answer on every front end.

A table of requests — sessions of every presentation (none, Bearer, cookie with and without X-CSRF, a
DPoP-bound one with its proof, without it, with a replayed or misdirected proof, an unknown and a revoked
token, a malformed Authorization), every access outcome (a public rule, a GET-only admin rule, an
authenticated rule), paths that normalize, that do not, and doubly encoded ones, methods GET, HEAD, POST and
DELETE, a body over the limit, a WebSocket handshake — is sent three ways to one `gatehouse serve`:

- through the event-loop relay (a plain `/v1/api` call), which must decide every row itself: its counters
  of forwarded and refused requests grow by exactly the number of rows;
- through the router (the same call with an `Origin` from the CORS list, which the relay leaves to it);
- as a forward-auth question to `/v1/authz` about the same original request.

The relay and the router must give the same status, problem `code` and upstream request (target and
identity) for every row; `/v1/authz` the same verdict (200 where the call was forwarded) and code, except
where the documentation says forward auth differs (no X-CSRF is asked of a cookie there; a body is the
proxy's business; an upgrade is not a forward-auth question).
"""
from __future__ import annotations

import json
import socket
import time

import pytest
import requests

from conftest import q, write_capture_provider, write_config
from test_hostile_requests import COOKIE, ORIGIN, PUBLIC, DPoPKey, RawBackend, probe_server, raw, sign_in, status_of

RELAY_COUNTERS = ("gatehouse_relayed_requests_total", "gatehouse_relayed_refusals_total")


@pytest.fixture
def gateway(serve, tmp_path):
    backend, probe = RawBackend(), probe_server()
    site = f"http://127.0.0.1:{probe.server_address[1]}"
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}',
        f"public_url: {q(PUBLIC)}",
        "backend:",
        f"  url: {q(f'http://127.0.0.1:{backend.port}/base')}",
        f"cors: {{allowed_origins: [{q(ORIGIN)}]}}",
        "limits: {max_body_bytes: 1000}",
        "access:",
        "  rules:",
        '    - {name: "public", paths: ["/public/**"], allow: "anyone"}',
        '    - {name: "admin", paths: ["/admin/**"], methods: ["GET"], allow: [{subject: "admin"}]}',
        '    - {name: "app", paths: ["/app/**"], allow: "authenticated"}',
        '  default: "deny"',
        "",
    ]))
    write_capture_provider(tmp_path, site)
    gw = serve(tmp_path, ["--config", str(config)])
    yield gw, backend
    backend.close()
    probe.shutdown()


def counters(gw) -> float:
    total = 0.0
    for line in requests.get(gw.url + "/metrics", timeout=5).text.splitlines():
        if line.startswith(RELAY_COUNTERS):
            total += float(line.split()[-1])
    return total


class Credentials:
    """Every way a row presents (or fails to present) a session."""

    def __init__(self, gw):
        self.gw = gw
        self.user = sign_in(gw, "user-token")["session_token"]
        self.admin = sign_in(gw, "admin-token")["session_token"]
        self.key = DPoPKey()
        bound = sign_in(gw, "admin-token", dpop=self.key)
        assert bound["token_type"] == "DPoP"
        self.bound = bound["session_token"]
        self.revoked = sign_in(gw, "user-token")["session_token"]
        assert requests.delete(gw.url + "/v1/session", headers={"Authorization": f"Bearer {self.revoked}"}, timeout=5).status_code == 200
        self.replayed_proof: dict[str, str] = {}

    def fields(self, kind: str, method: str, url: str) -> dict[str, str]:
        """The fields of one presentation for a request whose DPoP target is `method url`."""
        match kind:
            case "none": return {}
            case "bearer-user": return {"Authorization": f"Bearer {self.user}"}
            case "bearer-admin": return {"Authorization": f"Bearer {self.admin}"}
            case "cookie-user": return {"Cookie": f"{COOKIE}={self.user}"}
            case "cookie-user-csrf": return {"Cookie": f"{COOKIE}={self.user}", "X-CSRF": "1"}
            case "unknown": return {"Authorization": "Bearer not-a-session-token"}
            case "revoked": return {"Authorization": f"Bearer {self.revoked}"}
            case "malformed": return {"Authorization": "Basic dXNlcjpwYXNz"}
            case "dpop": return {"Authorization": f"DPoP {self.bound}", "DPoP": self.key.proof(method, url, self.bound)}
            case "dpop-as-bearer": return {"Authorization": f"Bearer {self.bound}"}
            case "dpop-as-cookie": return {"Cookie": f"{COOKIE}={self.bound}"}
            case "dpop-no-proof": return {"Authorization": f"DPoP {self.bound}"}
            case "dpop-wrong-htu": return {"Authorization": f"DPoP {self.bound}", "DPoP": self.key.proof(method, url + "/other", self.bound)}
            case "dpop-replayed":
                # A proof spent before the row (through the router, whose requests the relay's counters leave out):
                # every front end of the row sees it replayed.
                if method + url not in self.replayed_proof:
                    proof = self.replayed_proof[method + url] = self.key.proof(method, url, self.bound)
                    self.spend(method, url, {"Authorization": f"DPoP {self.bound}", "DPoP": proof})
                return {"Authorization": f"DPoP {self.bound}", "DPoP": self.replayed_proof[method + url]}
        raise AssertionError(kind)

    def spend(self, method: str, url: str, fields: dict[str, str]) -> None:
        """Presents `fields` once for `method url`: a `/v1/api` call through the router, or a forward-auth question
        over HTTP/1.0 (the router's alone) about the original request `url`."""
        api = PUBLIC + "/v1/api"
        if url.startswith(api):
            send(self.gw, method, url[len(api):], {**fields, "Origin": ORIGIN}, None)
        else:
            authz(self.gw, method, url[len("https://gate.example.test"):], fields, "1.0")


KINDS = ["none", "bearer-user", "bearer-admin", "cookie-user", "cookie-user-csrf", "unknown", "revoked", "malformed", "dpop",
         "dpop-as-bearer", "dpop-as-cookie", "dpop-no-proof", "dpop-wrong-htu", "dpop-replayed"]
PATHS = ["/public/x", "/admin/x", "/app/x", "/other", "/app/../admin/x", "/%61dmin/x", "/public/%252e%252e/admin/x", "/%2e%2e/x"]
ROWS = (
    [(method, path, kind, None) for kind in KINDS for path in PATHS for method in ("GET",)]
    + [(method, path, kind, None) for kind in ("none", "bearer-user", "bearer-admin", "cookie-user", "cookie-user-csrf", "dpop")
       for path in ("/public/x", "/admin/x", "/app/x") for method in ("HEAD", "POST", "DELETE")]
    + [("POST", "/app/x", kind, "big") for kind in ("bearer-user", "none", "cookie-user")]
)


def send(gw, method: str, path: str, fields: dict[str, str], body: str | None) -> tuple[int, str | None, dict | None]:
    """(status, problem code, what the backend got) for one request written byte for byte."""
    head = [f"{method} /v1/api{path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *[f"{k}: {v}" for k, v in fields.items()]]
    payload = b""
    if body == "big":
        payload = b"x" * 2000
        head.append(f"Content-Length: {len(payload)}")
    elif method in ("POST",):
        head.append("Content-Length: 0")
    answer = raw(gw.port, ("\r\n".join(head) + "\r\n\r\n").encode() + payload)
    status = status_of(answer)
    head_part, _, content = answer.partition(b"\r\n\r\n")
    code = seen = None
    if b"application/problem+json" in head_part.lower() and method != "HEAD":
        code = json.loads(content)["code"]
    if method == "HEAD":
        assert not content, ("a HEAD answer with a body", answer[:300])
    elif status == 200 and method != "HEAD" and content:
        got = json.loads(content)
        seen = {"target": got["target"], "subject": got["headers"].get("x-gatehouse-subject")}
    return status, code, seen


def authz(gw, method: str, path: str, fields: dict[str, str], version: str = "1.1") -> tuple[int, str | None]:
    """A forward-auth question; HTTP/1.1 is the relay's to answer, HTTP/1.0 only the router's."""
    headers = {"X-Forwarded-Method": method, "X-Forwarded-Uri": path, "X-Forwarded-Proto": "https", "X-Forwarded-Host": "gate.example.test", **fields}
    head = [f"GET /v1/authz HTTP/{version}", "Host: 127.0.0.1", "Connection: close", *[f"{k}: {v}" for k, v in headers.items()]]
    answer = raw(gw.port, ("\r\n".join(head) + "\r\n\r\n").encode())
    head_part, _, content = answer.partition(b"\r\n\r\n")
    code = json.loads(content)["code"] if b"application/problem+json" in head_part.lower() else None
    return status_of(answer), code


def test_the_relay_the_router_and_authz_give_every_row_the_same_answer(gateway):
    gw, backend = gateway
    creds = Credentials(gw)
    assert len(ROWS) >= 60, len(ROWS)
    before = counters(gw)
    mismatches = []
    outcomes: dict[tuple[int, str | None], int] = {}
    for method, path, kind, body in ROWS:
        url = PUBLIC + "/v1/api" + path
        relay = send(gw, method, path, creds.fields(kind, method, url), body)
        router = send(gw, method, path, {**creds.fields(kind, method, url), "Origin": ORIGIN}, body)
        outcomes[relay[:2]] = outcomes.get(relay[:2], 0) + 1
        if relay != router:
            mismatches.append(("relay/router", method, path, kind, body, relay, router))
        # Forward auth: the same question about the original request (the path as the application sees it).
        if kind.startswith("cookie") and method not in ("GET", "HEAD") or body is not None:
            continue
        original = "https://gate.example.test" + path
        expected = (200, None) if relay[0] == 200 else relay[:2]
        for version in ("1.1", "1.0"):
            asked = authz(gw, method, path, creds.fields(kind, method, original), version)
            # A HEAD's answer has no body, so no code to compare.
            if (asked[0], asked[1] if method != "HEAD" else None) != (expected[0], expected[1] if method != "HEAD" else None):
                mismatches.append(("authz HTTP/" + version, method, path, kind, body, expected, asked))
    assert not mismatches, "\n".join(map(str, mismatches))
    # Every row was the relay's to decide: none was handed to the router for its verdict.
    assert counters(gw) - before == len(ROWS), (counters(gw) - before, len(ROWS))
    # The table reaches every outcome it is about.
    statuses = {status for status, _ in outcomes}
    assert {200, 400, 401, 403, 413} <= statuses, outcomes
    codes = {code for _, code in outcomes}
    assert {"invalid_session", "invalid_token", "invalid_dpop_proof", "access_denied", "invalid_path", "csrf_required"} <= codes, outcomes


def test_every_forward_auth_question_over_http11_is_the_relays_to_answer(gateway):
    """The relay asks `/v1/authz`'s one decision from memory, else once off the loop (the store, a DPoP proof naming
    the original request, an assertion to sign): no question goes to the router to be judged again. The relay once
    handed every DPoP-bound question, and every session not in memory, to the router."""
    gw, _ = gateway
    creds = Credentials(gw)

    def relayed() -> float:
        line = next(l for l in requests.get(gw.url + "/metrics", timeout=5).text.splitlines() if l.startswith("gatehouse_relayed_authz_total "))
        return float(line.split()[-1])

    before, asked, answers = relayed(), 0, {}
    for kind in KINDS:
        for path in ("/app/x", "/public/x", "/admin/x"):
            answers[(kind, path)] = authz(gw, "GET", path, creds.fields(kind, "GET", "https://gate.example.test" + path))
            asked += 1
    assert relayed() - before == asked, (relayed() - before, asked)
    assert answers[("dpop", "/admin/x")] == (200, None) and answers[("dpop", "/app/x")] == (200, None), answers
    assert answers[("dpop-replayed", "/app/x")] == (401, "invalid_dpop_proof"), answers
    assert answers[("dpop-replayed", "/public/x")] == (200, None), answers
    # A proof shown to /v1/authz is spent there: shown again, it is a replay.
    proof = creds.key.proof("GET", "https://gate.example.test/app/x", creds.bound)
    fields = {"Authorization": f"DPoP {creds.bound}", "DPoP": proof}
    assert authz(gw, "GET", "/app/x", fields) == (200, None)
    assert authz(gw, "GET", "/app/x", fields) == (401, "invalid_dpop_proof")


def test_a_replayed_proof_is_refused_on_whichever_front_end_sees_it_second(gateway):
    gw, backend = gateway
    creds = Credentials(gw)
    url = PUBLIC + "/v1/api/app/x"
    for first, second in ((None, ORIGIN), (ORIGIN, None)):
        proof = creds.key.proof("GET", url, creds.bound)
        fields = {"Authorization": f"DPoP {creds.bound}", "DPoP": proof}
        a = send(gw, "GET", "/app/x", {**fields, **({"Origin": first} if first else {})}, None)
        b = send(gw, "GET", "/app/x", {**fields, **({"Origin": second} if second else {})}, None)
        assert a[0] == 200 and b[:2] == (401, "invalid_dpop_proof"), (first, a, b)


def test_a_proof_is_spent_with_its_credential_even_when_the_rules_refuse_the_request(gateway):
    """One order on both front ends: the proof is spent before the rules, so a proof shown with a refused request
    (POST on the GET-only admin path: 403) is used up, and the same request again is a replay, wherever it goes.
    The relay once spent only what it forwarded: the second request got 403 again there, 401 at the router."""
    gw, backend = gateway
    creds = Credentials(gw)
    url = PUBLIC + "/v1/api/admin/x"
    for first, second in ((None, ORIGIN), (ORIGIN, None), (None, None)):
        proof = creds.key.proof("POST", url, creds.bound)
        fields = {"Authorization": f"DPoP {creds.bound}", "DPoP": proof}
        a = send(gw, "POST", "/admin/x", {**fields, **({"Origin": first} if first else {})}, None)
        b = send(gw, "POST", "/admin/x", {**fields, **({"Origin": second} if second else {})}, None)
        assert a[:2] == (403, "access_denied") and b[:2] == (401, "invalid_dpop_proof"), (first, second, a, b)


def test_a_replayed_proof_on_a_path_open_to_anyone_goes_on_without_identity_on_both_front_ends(gateway):
    """A replayed proof makes the credential unusable, like an unknown token: a public path still answers, with no
    identity sent upstream. The relay once answered it 401 invalid_dpop_proof, the router 200."""
    gw, backend = gateway
    creds = Credentials(gw)
    url = PUBLIC + "/v1/api/public/x"
    for first, second in ((None, ORIGIN), (ORIGIN, None), (None, None)):
        proof = creds.key.proof("GET", url, creds.bound)
        fields = {"Authorization": f"DPoP {creds.bound}", "DPoP": proof}
        a = send(gw, "GET", "/public/x", {**fields, **({"Origin": first} if first else {})}, None)
        b = send(gw, "GET", "/public/x", {**fields, **({"Origin": second} if second else {})}, None)
        assert a[0] == 200 and a[2]["subject"] == ["admin"], (first, a)
        assert b[0] == 200 and b[2]["subject"] is None, (second, b)


def test_a_websocket_handshake_is_decided_like_a_get(gateway):
    """Upgrades are the relay's alone (the router forwards no upgrade), so its refusals are compared with the
    plain GET's answer of the router."""
    gw, backend = gateway
    creds = Credentials(gw)
    for kind in ("none", "bearer-user", "unknown", "dpop-as-bearer"):
        for path in ("/admin/x", "/other", "/public/%252e%252e/admin/x"):
            fields = creds.fields(kind, "GET", PUBLIC + "/v1/api" + path)
            handshake = {**fields, "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                         "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
            upgraded = send(gw, "GET", path, handshake, None)
            plain = send(gw, "GET", path, {**fields, "Origin": ORIGIN}, None)
            assert upgraded[:2] == plain[:2], (kind, path, upgraded, plain)
