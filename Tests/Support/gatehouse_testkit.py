"""Helpers every pytest folder under Tests/ shares: ports, logs, processes, the gateway binary.

Each folder's conftest.py puts this directory on sys.path (the folders run as separate pytest
sessions, each with its own conftest) and imports what it needs from here.
"""
from __future__ import annotations

import contextlib
import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Iterator

import pytest
import requests

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def yaml_quote(s: str) -> str:
    """A YAML double-quoted scalar (JSON string syntax is valid YAML)."""
    return json.dumps(s)


def tail(path: Path, limit: int = 8000) -> str:
    """The last `limit` characters of a log file, for a failing test's report."""
    try:
        return path.read_text(errors="replace")[-limit:]
    except FileNotFoundError:
        return f"(no log at {path})"


def stop_process(proc: subprocess.Popen, timeout: float = 10) -> None:
    """SIGTERM, then SIGKILL after `timeout` seconds."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.1) -> bool:
    """Polls `predicate` until it is true (True) or `timeout` seconds passed (False)."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


REQUIRE_ALL = "GATEHOUSE_TEST_REQUIRE_ALL"


def require_all() -> bool:
    """Whether every test must run: `GATEHOUSE_TEST_REQUIRE_ALL` (set by scripts/test) or `CI` is set
    (non-empty). Then a missing prerequisite (PostgreSQL, Chromium, a Python package, the gateway
    binary) is a failure; run by hand without them, the tests that need it are skipped."""
    return bool(os.environ.get(REQUIRE_ALL) or os.environ.get("CI"))


def missing(message: str):
    """A prerequisite is missing: a failure when every test must run (`require_all()`), a skip elsewhere."""
    if require_all():
        pytest.fail(f"{message} [not skipped: {REQUIRE_ALL} or CI is set, every test must run]", pytrace=False)
    pytest.skip(message)


def require_module(name: str, hint: str):
    """`import name`, or `missing(...)` when it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        missing(f"Python module {name} is not installed ({error}; {hint})")


def gateway_binary() -> Path:
    """`$GATEHOUSE_BIN`, or the debug build."""
    return Path(os.environ.get("GATEHOUSE_BIN") or REPO / ".build" / "debug" / "gatehouse")


def require_gateway_binary() -> Path:
    """The gateway binary; skips the tests when it is not built, except when every test must run
    (`require_all()`) or when one was named."""
    binary = gateway_binary()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        message = f"gateway binary not found at {binary} (build it with `swift build` or set GATEHOUSE_BIN)"
        if os.environ.get("GATEHOUSE_BIN"):
            pytest.fail(message)  # a binary was named: its absence is a failure, not a skip
        missing(message)
    return binary


def wait_for_http(proc: subprocess.Popen, url: str, timeout: float, log: Path, name: str = "gateway") -> None:
    """Waits until `url` answers 200. Fails the test, with the tail of `log`, when the process exits first
    or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{name} exited with {proc.returncode} at start-up:\n{tail(log)}")
        try:
            if requests.get(url, timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"{name}: {url} not 200 after {timeout}s:\n{tail(log)}")
        time.sleep(0.2)


@contextlib.contextmanager
def running_demo(prefix: str, timeout: float) -> Iterator[tuple[str, Path]]:
    """`$GATEHOUSE_BIN demo` on a free loopback port until the block ends: (base URL, path of its log,
    whose first lines are the banner naming the stand-ins)."""
    binary = require_gateway_binary()
    port = free_port()
    log = Path(tempfile.mkdtemp(prefix=prefix)) / "gateway.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(binary), "demo", "--listen", f"127.0.0.1:{port}"], stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(proc, base + "/healthz", timeout, log)
        yield base, log
    finally:
        stop_process(proc)
        shutil.rmtree(log.parent, ignore_errors=True)


def loopback_server(respond: Callable[[BaseHTTPRequestHandler], tuple[int, str, bytes]]) -> ThreadingHTTPServer:
    """A threaded HTTP/1.0 server on 127.0.0.1 (its port: `server.server_address[1]`) whose GETs are answered by
    `respond(handler) -> (status, content type, body)`; `server.shutdown()` stops it."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            status, content_type, body = respond(self)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
