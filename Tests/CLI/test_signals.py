"""Signals: SIGHUP reloads the provider files (an invalid set is refused); SIGTERM stops cleanly."""
from __future__ import annotations

import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import requests

from conftest import provider_yaml, q, wait_until, write_capture_provider, write_config, write_provider
from stub_backend import Seen, StubBackend


def assert_stops_cleanly(gw, started: float) -> None:
    """The gateway sent SIGTERM at `started` exits with status 0 within 10 s of it."""
    try:
        status = gw.proc.wait(timeout=max(0.1, 10 - (time.monotonic() - started)))
    except subprocess.TimeoutExpired:
        raise AssertionError(f"gateway still running 10 s after SIGTERM:\n{gw.log()[-2000:]}")
    assert status == 0, f"exit status {status}:\n{gw.log()}"
    assert time.monotonic() - started < 10


def test_sighup_reloads_provider_files_and_keeps_the_previous_set_when_invalid(serve, tmp_path):
    config = write_config(tmp_path, 'store: {kind: "memory"}\nlogging: {level: "info", format: "text"}\n')
    write_provider(tmp_path, "x")
    gw = serve(tmp_path, ["--config", str(config)])
    assert gw.provider_ids() == ["x"]

    # A second provider file appears: SIGHUP picks it up.
    write_provider(tmp_path, "y", name="Y server")
    gw.signal(signal.SIGHUP)
    assert wait_until(lambda: sorted(gw.provider_ids()) == ["x", "y"], 10), gw.provider_ids()
    y = next(p for p in gw.get("/v1/providers").json()["providers"] if p["id"] == "y")
    assert y["name"] == "Y server"

    # An invalid provider file: the reload is refused, the previous set stays, the log says why.
    bad = write_provider(tmp_path, "z", provider_yaml("z") + 'colour: "blue"\n')
    colour_line = len(bad.read_text().splitlines())
    gw.signal(signal.SIGHUP)
    assert wait_until(lambda: str(bad) in gw.log(), 10), f"the log never names {bad}:\n{gw.log()}"
    assert sorted(gw.provider_ids()) == ["x", "y"]
    assert gw.get("/healthz").status_code == 200
    assert gw.get("/readyz").status_code == 200
    assert gw.proc.poll() is None, "SIGHUP with an invalid file stopped the gateway"
    error_lines = [line for line in gw.log().splitlines() if str(bad) in line]
    assert any(f"{bad}:{colour_line}:" in line and "colour" in line for line in error_lines), error_lines

    # Fixing the file and reloading again brings in all three.
    write_provider(tmp_path, "z")
    gw.signal(signal.SIGHUP)
    assert wait_until(lambda: sorted(gw.provider_ids()) == ["x", "y", "z"], 10), gw.provider_ids()


def test_sigterm_stops_the_gateway_within_10_seconds_with_status_0(serve, tmp_path):
    config = write_config(tmp_path, 'store: {kind: "sqlite", path: "data/g.sqlite3"}\n')
    write_provider(tmp_path, "x")
    gw = serve(tmp_path, ["--config", str(config)])
    with requests.Session() as client:  # an idle keep-alive connection must not hold the shutdown up
        assert client.get(gw.url + "/healthz", timeout=5).status_code == 200
        started = time.monotonic()
        gw.signal(signal.SIGTERM)
        assert_stops_cleanly(gw, started)
    assert "shutting down" in gw.log(), gw.log()[-2000:]


def test_sigterm_lets_the_relayed_requests_in_flight_finish(serve, tmp_path):
    """The relay answers a connection without a task of its own: SIGTERM must still wait for its request in
    flight (the backend answers 2 s later), answer it whole, and only then stop with status 0."""

    def slow(seen: Seen) -> tuple[int, dict]:
        time.sleep(2)
        return 200, {"slow": True, "padding": "x" * 2000}

    backend = StubBackend(answer=slow, probe={"id": "u-1", "email": "u1@example.test"})
    try:
        config = write_config(tmp_path, f'store: {{kind: "memory"}}\nbackend: {{url: {q(backend.base)}}}\n')
        write_capture_provider(tmp_path, backend.base)
        gw = serve(tmp_path, ["--config", str(config)])
        token = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "t"}, timeout=5).json()["session_token"]
        with ThreadPoolExecutor(2) as pool:
            calls = [
                pool.submit(requests.get, f"{gw.url}/v1/api/slow/{n}", headers={"Authorization": f"Bearer {token}"}, timeout=20)
                for n in range(2)
            ]
            assert wait_until(lambda: len(backend.requests) == 2, 10), "the backend never got both requests"
            started = time.monotonic()
            gw.signal(signal.SIGTERM)
            answers = [call.result() for call in calls]
        for answer in answers:
            assert answer.status_code == 200, answer.text
            assert answer.json() == {"slow": True, "padding": "x" * 2000}
        assert_stops_cleanly(gw, started)
    finally:
        backend.server.shutdown()


def test_sigterm_stops_a_gateway_whose_postgres_store_is_down(serve, tmp_path):
    """Started while PostgreSQL cannot be reached, the gateway serves 503 and retries the store in the
    background; SIGTERM must still stop it, not wait for the store."""
    config = write_config(tmp_path, 'store: {kind: "postgres", url: "postgres://gatehouse@127.0.0.1:9/gatehouse?sslmode=disable"}\n')
    write_provider(tmp_path, "x")
    gw = serve(tmp_path, ["--config", str(config)])
    assert gw.get("/readyz").status_code == 503
    assert wait_until(lambda: "still unreachable" in gw.log(), 10)
    started = time.monotonic()
    gw.signal(signal.SIGTERM)
    assert_stops_cleanly(gw, started)


def test_a_gateway_started_without_providers_warns(serve, tmp_path):
    config = write_config(tmp_path, 'store: {kind: "memory"}\n')
    gw = serve(tmp_path, ["--config", str(config)])
    assert wait_until(lambda: "no provider is configured" in gw.log(), 5), gw.log()[-2000:]
