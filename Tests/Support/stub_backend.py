"""One stand-in HTTP backend for the pytest folders: it records every request it is sent, answers it (by default
with a JSON echo of the request), and can also be the `probe` a `capture` provider asks who a token belongs to.

Backends that misbehave on purpose (raw sockets, dropped connections, malformed answers) are not this one: they
stay next to the tests that need them.
"""
from __future__ import annotations

import json
import ssl
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Union

#: What an answer's body may be: bytes as they are, anything else as JSON.
Payload = Union[bytes, dict, list]
#: The user a probe answers for every token unless told otherwise.
DEFAULT_USER = {"id": "user-1", "email": "user1@example.test"}


@dataclass
class Seen:
    """One request as the backend received it."""

    method: str
    path: str
    #: Header fields as sent (names in their spelling; a repeated field keeps its last value).
    fields: dict[str, str]
    #: Header fields by lowercase name, every value in order.
    headers: dict[str, list[str]]
    body: bytes

    def header(self, name: str) -> str | None:
        """The first value of a header field (any case), or None."""
        values = self.headers.get(name.lower())
        return values[0] if values else None


def echo(seen: Seen) -> tuple[int, Payload]:
    """The default answer: 200 with the request as JSON (method, path, headers by lowercase name, body)."""
    return 200, {"method": seen.method, "path": seen.path, "headers": seen.headers, "body": seen.body.decode("utf-8", "replace")}


class StubBackend:
    """A threaded HTTP/1.1 server on 127.0.0.1 (`base`, `port`); with `tls` (a server context holding its
    certificate) an HTTPS one, `base` then `https://127.0.0.1:<port>`.

    - `answer(seen) -> (status, payload)` answers every request that is not a probe (default: ``echo``); it may
      sleep to be slow.
    - `probe`: requests whose path starts with `probe_path` are the capture provider's probe and are not
      recorded. `None`: no probe. A dict: that user for any token. A callable `(authorization) -> user | None`:
      that user, or 401 `invalid_token` for None.
    - `requests` holds what was received (not probes), `closed` the monotonic times its connections ended;
      read them under `lock` while the gateway may still be sending.
    """

    def __init__(
        self,
        answer: Callable[[Seen], tuple[int, Payload]] = echo,
        probe: dict | Callable[[str], dict | None] | None = DEFAULT_USER,
        probe_path: str = "/probe",
        tls: ssl.SSLContext | None = None,
    ):
        self.requests: list[Seen] = []
        self.closed: list[float] = []
        # Reentrant: views such as `count()` may be read by a caller already holding it.
        self.lock = threading.RLock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                if tls is not None:
                    self.request.do_handshake()  # on the connection's own thread, not the accepting one
                super().setup()

            def handle_one(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if probe is not None and self.path.startswith(probe_path):
                    status, payload = stub._probe(probe, self.headers.get("Authorization") or "")
                else:
                    lists: dict[str, list[str]] = {}
                    for name, value in self.headers.items():
                        lists.setdefault(name.lower(), []).append(value)
                    seen = Seen(self.command, self.path, dict(self.headers.items()), lists, body)
                    with stub.lock:
                        stub.requests.append(seen)
                    status, payload = answer(seen)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = handle_one

            def finish(self):
                super().finish()
                with stub.lock:
                    stub.closed.append(time.monotonic())

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True, do_handshake_on_connect=False)
        self.port = self.server.server_address[1]
        self.base = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def _probe(probe: dict | Callable[[str], dict | None], authorization: str) -> tuple[int, Payload]:
        user = probe if isinstance(probe, dict) else probe(authorization)
        return (200, user) if user is not None else (401, {"error": "invalid_token"})

    def count(self) -> int:
        """How many requests (not probes) were received."""
        with self.lock:
            return len(self.requests)

    def last(self) -> Seen:
        """The latest request received (not a probe)."""
        with self.lock:
            return self.requests[-1]

    def paths(self) -> list[str]:
        """The request targets received, in order."""
        with self.lock:
            return [seen.path for seen in self.requests]

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> StubBackend:
        return self

    def __exit__(self, *exc):
        self.close()
