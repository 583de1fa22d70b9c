"""The upstream request can never leave the base path (property-style, over real loopback HTTP).

Thousands of generated raw request targets (random bytes percent-encoded, dot segments in every
spelling, overlong UTF-8, encoded and raw separators, `..;`, mixed encodings, random queries) go to
`/v1/api/…` and `/v1/proxy/{p}/…` of a `gatehouse serve` whose backend and provider API are echo
servers with a base path. For every request, either the echo server saw a target under its base
path (and exactly the one a reference normalization predicts), or the gateway answered 400 and
the echo server saw nothing.
"""
from __future__ import annotations

import json
import random
import socket

import pytest
import requests

from conftest import q, write_capture_provider, write_config
from stub_backend import StubBackend

SEED = 20261123
CASES_PER_ROUTE = 2500


@pytest.fixture
def setup(serve, tmp_path):
    echo = StubBackend(answer=lambda seen: (200, {"target": seen.path}))
    base = echo.base
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}',
        'public_url: "https://gate.example.test"',
        "backend:",
        f"  url: {q(base + '/base')}",
        "",
    ]))
    write_capture_provider(tmp_path, base, extra=[f"api: {{url: {q(base + '/apibase/')}, auth: \"bearer\"}}"])
    gw = serve(tmp_path, ["--config", str(config)])
    created = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "captured"}, timeout=5)
    assert created.status_code == 201, created.text
    yield gw, echo, created.json()["session_token"]
    echo.close()


def send_raw(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Sends a request byte for byte (no client-side normalization) and reads to the end of the
    connection; returns status, headers (lowercase names) and the body."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        chunks = []
        while True:
            data = s.recv(65536)
            if not data:
                break
            chunks.append(data)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = dechunk(body)
    return int(lines[0].split(" ", 2)[1]), headers, body


def raw_request(port: int, target: bytes, token: str) -> tuple[int, bytes]:
    """GET of a raw target with the session token; returns status and body."""
    request = b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token.encode() + b"\r\nConnection: close\r\n\r\n"
    status, _, body = send_raw(port, request)
    return status, body


def dechunk(body: bytes) -> bytes:
    out = b""
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out += rest[:size]
        body = rest[size + 2:]
    return out


# --- generation ---------------------------------------------------------------------------------

DOTS = [".", "..", "%2e", "%2E", "%2e%2e", ".%2e", "%2E.", "%2e%2E", "..;", "..;x", ".;", "%2e%2e;", "...", ".%2e."]
OVERLONG = ["%C0%AE", "%C0%AF", "%E0%80%AE", "%E0%80%AF", "%C1%9C", "%F0%80%80%AF", "%C0%80", "%ED%A0%80", "%F4%90%80%80"]
SEPARATORS = ["%2F", "%2f", "%5C", "%5c", "\\", "%252F", "%00", "%0a", "%0D", "%7F", "%C2%85"]
VALID = ["a", "B", "x~y", "caf%C3%A9", "%E2%82%AC", "%F0%9F%98%80", "a:b", "a@b", "a;b=c", "%20", "a+b", "%41", "%7e", "(x)", "!$&'*,="]
RAW = list("abcXYZ019-._~!$&'()*+,;=:@")


def random_segment(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.18:
        return rng.choice(DOTS)
    if kind < 0.28:
        return rng.choice(OVERLONG)
    if kind < 0.36:
        return rng.choice(VALID) + rng.choice(SEPARATORS) + rng.choice(VALID)
    if kind < 0.55:
        # Random bytes, each percent-encoded (mostly invalid UTF-8).
        return "".join(f"%{rng.randrange(256):02X}" for _ in range(rng.randint(1, 4)))
    if kind < 0.65:
        return ""  # an empty segment: `//`
    if kind < 0.85:
        return rng.choice(VALID)
    # Mixed: raw characters and escapes of random bytes.
    parts = []
    for _ in range(rng.randint(1, 6)):
        parts.append(rng.choice(RAW) if rng.random() < 0.6 else f"%{rng.randrange(256):02x}")
    return "".join(parts)


def random_query(rng: random.Random) -> str:
    if rng.random() < 0.6:
        return ""
    choices = ["a=1", "b=%2F..%2F", "c=%FF", "x", "y=%", "z=%G1", "q=a/b?c", "e=%C0%AE", "w=caf%C3%A9", "k=;,"]
    return "?" + "&".join(rng.choice(choices) for _ in range(rng.randint(1, 3)))


def random_path(rng: random.Random) -> str:
    segments = [random_segment(rng) for _ in range(rng.randint(1, 7))]
    if not any(segments):
        segments[0] = "a"  # `/v1/api/` alone is no route (404), not a path to forward
    path = "/" + "/".join(segments)
    if rng.random() < 0.2:
        path += "/"
    return path + random_query(rng)


# --- a reference normalization (what the forwarded path must be) ------------------------------

UNRESERVED_KEPT = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@")


class Refused(Exception):
    pass


def reference(raw_path: str) -> str:
    """The encoded path below the route prefix, or Refused."""
    segments: list[str] = []
    raw_segments = [s for s in raw_path.split("/") if s]
    text = ""
    for raw in raw_segments:
        out = bytearray()
        i = 0
        while i < len(raw):
            ch = raw[i]
            if ch == "%":
                pair = raw[i + 1:i + 3]
                if len(pair) != 2 or any(c not in "0123456789abcdefABCDEF" for c in pair):
                    raise Refused("malformed escape")
                value = int(pair, 16)
                if value in (0x2F, 0x5C):
                    raise Refused("encoded separator")
                out.append(value)
                i += 3
            else:
                if ch == "\\":
                    raise Refused("backslash")
                out += ch.encode()
                i += 1
        if any(b < 0x20 or b == 0x7F for b in out):
            raise Refused("control")
        try:
            text = out.decode("utf-8", errors="strict")
        except UnicodeDecodeError:
            raise Refused("utf-8")
        if any(0xD800 <= ord(c) <= 0xDFFF or 0x80 <= ord(c) <= 0x9F for c in text):
            raise Refused("control or surrogate")
        if escapes_dot_or_separator(bytes(out)):
            raise Refused("an escape of '.', '/' or '\\' left after decoding (sent encoded twice)")
        if text == ".":
            continue
        if text == "..":
            if not segments:
                raise Refused("above root")
            segments.pop()
            continue
        if ";" in text and text.split(";", 1)[0] in (".", ".."):
            raise Refused("dot segment with parameter")
        segments.append(text)
    if not segments:
        return ""
    encoded = "".join("/" + "".join(chr(b) if b in UNRESERVED_KEPT else f"%{b:02X}" for b in s.encode()) for s in segments)
    # `/a/.` and `/a/b/..` name a directory (RFC 3986 §5.2.4): `text` is the last decoded segment.
    trailing = raw_path.endswith("/") or text in (".", "..")
    return encoded + ("/" if trailing else "")


def escapes_dot_or_separator(segment: bytes) -> bool:
    """Whether decoding a decoded segment again, as often as that changes it, shows `%2e`, `%2f` or `%5c`."""
    for _ in range(8):
        decoded, i = bytearray(), 0
        while i < len(segment):
            pair = segment[i + 1:i + 3]
            if segment[i] == 0x25 and len(pair) == 2 and all(c in b"0123456789abcdefABCDEF" for c in pair):
                value = int(pair, 16)
                if value in (0x2E, 0x2F, 0x5C):
                    return True
                decoded.append(value)
                i += 3
            else:
                decoded.append(segment[i])
                i += 1
        if len(decoded) == len(segment):
            return False
        segment = bytes(decoded)
    return True


def check(gw, echo, token, prefix: str, base: str, rng: random.Random) -> dict[str, int]:
    outcomes = {"forwarded": 0, "refused": 0}
    for _ in range(CASES_PER_ROUTE):
        generated = random_path(rng)
        path, _, query = generated.partition("?")
        before = echo.count()
        status, body = raw_request(gw.port, (prefix + generated).encode(), token)
        after = echo.count()
        try:
            expected = reference(path)
        except Refused as reason:
            expected = reason
        if status == 400:
            assert after == before, f"{prefix}{generated}: 400, but the upstream was contacted ({echo.last().path})"
            problem = json.loads(body)
            assert problem["code"] == "invalid_path", (generated, problem)
            assert isinstance(expected, Refused), f"{prefix}{generated}: refused, the reference forwards {expected!r}"
            outcomes["refused"] += 1
            continue
        assert status == 200, f"{prefix}{generated}: {status} {body[:300]!r}"
        assert after == before + 1
        target = echo.last().path
        assert target == base or target.startswith(base + "/") or target.startswith(base + "?"), f"{prefix}{generated} reached {target}"
        assert not isinstance(expected, Refused), f"{prefix}{generated}: forwarded as {target}, the reference refuses ({expected})"
        forwarded_path = target.split("?", 1)[0]
        assert forwarded_path == (base + expected if expected else base), f"{prefix}{generated}: {forwarded_path} != {base}{expected}"
        outcomes["forwarded"] += 1
    return outcomes


def test_generated_paths_never_leave_the_backend_base_path(setup):
    gw, echo, token = setup
    outcomes = check(gw, echo, token, "/v1/api", "/base", random.Random(SEED))
    # The generator reaches both sides of the property.
    assert outcomes["forwarded"] > 300 and outcomes["refused"] > 300, outcomes


def test_generated_paths_never_leave_the_provider_api_base_path(setup):
    gw, echo, token = setup
    outcomes = check(gw, echo, token, "/v1/proxy/legacy", "/apibase", random.Random(SEED + 1))
    assert outcomes["forwarded"] > 300 and outcomes["refused"] > 300, outcomes


@pytest.mark.parametrize("raw,forwarded", [
    ("/v1/api/%FF", None),                     # the escape that reached `/` of the backend
    ("/v1/api/%FF?admin=1", None),
    ("/v1/api/a/%C0%AE%C0%AE/x", None),        # overlong `..`
    ("/v1/api/..;/admin", None),
    ("/v1/api/%2e%2e/x", None),
    ("/v1/api/a%2Fb", None),
    ("/v1/api/a%00b", None),
    ("/v1//api/x", "/base/x"),                 # the route's prefix is cut by segments, not characters
    ("/v1/api//x//y/", "/base/x/y/"),
    ("/v1/api/%61%7e/%2e/b", "/base/a~/b"),
    ("/v1/api/a/../b?q=%FF", "/base/b?q=%FF"),
    ("/v1/api/caf%c3%a9", "/base/caf%C3%A9"),
])
def test_known_escapes(setup, raw, forwarded):
    gw, echo, token = setup
    before = echo.count()
    status, body = raw_request(gw.port, raw.encode(), token)
    if forwarded is None:
        assert status == 400, (raw, status, body)
        assert json.loads(body)["code"] == "invalid_path"
        assert echo.count() == before
    else:
        assert status == 200, (raw, status, body)
        assert echo.last().path == forwarded


def test_raw_non_ascii_bytes_in_the_target_never_reach_another_path(setup):
    gw, echo, token = setup
    for raw in [b"/v1/api/\xff", b"/v1/api/caf\xc3\xa9", b"/v1/api/\xc0\xae\xc0\xae/x"]:
        before = echo.count()
        status, _ = raw_request(gw.port, raw, token)
        if status == 200:
            assert echo.last().path.startswith("/base/"), (raw, echo.last().path)
        else:
            assert status == 400 and echo.count() == before, (raw, status)
