"""A client whose own chunked body is malformed mid-stream gets 400 `invalid_request` (never 413, never a
5xx), on the event-loop relay (`/v1/api`), the router's proxy (`/v1/proxy`) and the JSON routes, and the
gateway's log does not blame an upstream for it."""
from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import pytest

from demo_login import native_login

BAD_CHUNKS = "5\r\nhello\r\nZZZ\r\nnot a chunk\r\n0\r\n\r\n"


def send_raw(gateway: str, method: str, path: str, headers: dict[str, str], body: str) -> tuple[int, dict]:
    """One request with a chunked body written as is; returns the answer's status and JSON body."""
    url = urlsplit(gateway)
    fields = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    with socket.create_connection((url.hostname, url.port), timeout=10) as s:
        s.sendall(f"{method} {path} HTTP/1.1\r\nHost: {url.netloc}\r\n{fields}Transfer-Encoding: chunked\r\n\r\n{body}".encode())
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(65536)
        head, _, payload = data.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        length = int(next(line.split(":", 1)[1] for line in lines if line.lower().startswith("content-length:")))
        while len(payload) < length:
            payload += s.recv(65536)
    return int(lines[0].split(" ")[1]), json.loads(payload)


@pytest.mark.parametrize("method,path,session", [
    ("POST", "/v1/api/upload", True),
    # An upstream that reads the body before it answers (one that answered first would win the race).
    ("POST", "/v1/proxy/demo/echo/x", True),
    ("POST", "/v1/session", False),
    ("POST", "/v1/auth/browserid/assertion", False),
])
def test_a_malformed_chunked_body_is_the_clients_400(gateway, gateway_log, method, path, session):
    headers = {"Content-Type": "application/json"}
    if session:
        headers["Authorization"] = "Bearer " + native_login(gateway)["session_token"]
    status, problem = send_raw(gateway, method, path, headers, BAD_CHUNKS)
    assert (status, problem["code"]) == (400, "invalid_request"), problem
    assert "upstream request failed" not in gateway_log.read_text(errors="replace")
