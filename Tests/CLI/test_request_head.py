"""Hostile request heads, sent byte for byte over loopback: Host rules (RFC 9112 §3.2), the URL
limit (414), and the headers a client may not smuggle to the backend."""
from __future__ import annotations

import json

from test_upstream_paths import send_raw as send, setup  # noqa: F401  (the gateway + echo backend fixture)


def request(target: str, token: str, *fields: str) -> bytes:
    lines = [f"GET {target} HTTP/1.1", f"Authorization: Bearer {token}", "Connection: close", *fields]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_a_request_without_host_or_with_two_hosts_is_refused(setup):
    gw, echo, token = setup
    for fields in [(), ("Host: 127.0.0.1", "Host: evil.example")]:
        before = echo.count()
        status, headers, body = send(gw.port, request("/v1/api/x", token, *fields))
        assert status == 400, (fields, status, body)
        assert headers["content-type"] == "application/problem+json"
        assert json.loads(body)["code"] == "invalid_request"
        assert echo.count() == before
    status, _, _ = send(gw.port, request("/v1/api/x", token, "Host: 127.0.0.1"))
    assert status == 200


def test_a_long_url_gets_414_with_a_problem(setup):
    gw, echo, token = setup
    before = echo.count()
    status, headers, body = send(gw.port, request("/v1/api/" + "a" * 9000, token, "Host: 127.0.0.1"))
    assert status == 414, (status, body[:200])
    assert json.loads(body)["code"] == "uri_too_long"
    status, _, body = send(gw.port, request("/v1/api/x?" + "q=1&" * 2500, token, "Host: 127.0.0.1"))
    assert status == 414
    assert echo.count() == before


def test_underscore_spellings_of_the_gateways_headers_never_reach_the_backend(setup):
    gw, echo, token = setup
    smuggled = [
        "X_Gatehouse_Subject: mallory", "X-Gatehouse_Email: mallory@evil.example", "x_forwarded_for: 10.0.0.1",
        "X_Forwarded_Host: evil.example", "Forwarded_: for=10.0.0.1", "X_Real_IP: 10.0.0.1", "Auth_orization: Bearer x",
    ]
    status, _, body = send(gw.port, request("/v1/api/x", token, "Host: evil.example", "X-Kept: yes", *smuggled))
    assert status == 200, body
    seen = echo.last().headers
    assert not [name for name in seen if "_" in name], seen
    assert seen["x-gatehouse-subject"] == ["user-1"]
    assert seen["x-kept"] == ["yes"]
    # The host the client reached is the gateway's public one, not the Host it sent.
    assert seen["x-forwarded-host"] == ["gate.example.test"]


def test_a_head_larger_than_the_parser_takes_gets_431_with_a_problem(setup):
    gw, echo, token = setup
    before = echo.count()
    filler = [f"X-Filler-{i}: " + "f" * 1000 for i in range(90)]  # about 90 KiB
    status, headers, body = send(gw.port, request("/v1/api/x", token, "Host: 127.0.0.1", *filler))
    assert status == 431, (status, body[:200])
    assert headers["content-type"] == "application/problem+json"
    assert json.loads(body)["code"] == "headers_too_large"
    assert echo.count() == before


def test_a_request_that_is_not_http_gets_400_with_a_problem(setup):
    gw, _, _ = setup
    status, headers, body = send(gw.port, b"GET /v1/api/x HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Without Colon\r\n\r\n")
    assert status == 400, (status, body[:200])
    assert headers["content-type"] == "application/problem+json"
    assert json.loads(body)["code"] == "invalid_request"


def test_a_cross_origin_request_over_a_head_limit_gets_its_431_and_414_with_cors(serve, tmp_path):
    """The relay once answered these itself, without the CORS fields the router adds: a browser then saw a
    CORS failure instead of the 431 or 414."""
    import requests
    from conftest import q, write_capture_provider, write_config
    from stub_backend import StubBackend

    origin = "https://app.example.test"
    echo = StubBackend(answer=lambda seen: (200, {"target": seen.path}))
    try:
        config = write_config(tmp_path, "\n".join([
            'store: {kind: "memory"}', f"backend: {{url: {q(echo.base)}}}", f"cors: {{allowed_origins: [{q(origin)}]}}",
            "limits: {max_header_bytes: 2048}", ""]))
        write_capture_provider(tmp_path, echo.base)
        gw = serve(tmp_path, ["--config", str(config)])
        token = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "captured"}, timeout=5).json()["session_token"]
        for target, fields, expected in [("/v1/api/x", ("X-Big: " + "b" * 3000,), 431), ("/v1/api/" + "a" * 9000, (), 414)]:
            status, headers, body = send(gw.port, request(target, token, "Host: 127.0.0.1", f"Origin: {origin}", *fields))
            assert status == expected, (status, body[:200])
            assert headers.get("access-control-allow-origin") == origin, headers
        # Without an Origin the relay answers it, the same status.
        status, headers, _ = send(gw.port, request("/v1/api/x", token, "Host: 127.0.0.1", "X-Big: " + "b" * 3000))
        assert status == 431 and "access-control-allow-origin" not in headers
        assert echo.count() == 0
    finally:
        echo.close()
