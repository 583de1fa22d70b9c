"""`gatehouse demo`: its access log is on by default (one line per request) and it leaves nothing in the
temporary directory once it exits."""
from __future__ import annotations

import signal
import subprocess
import tempfile
from pathlib import Path

import requests

from conftest import clean_env, free_port, wait_until


def test_the_demo_logs_each_request_and_removes_its_directory(gatehouse_bin, tmp_path):
    port = free_port()
    log = tmp_path / "demo.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(gatehouse_bin), "demo", "--listen", f"127.0.0.1:{port}"], cwd=str(tmp_path),
                                env=clean_env(), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    directory = Path(tempfile.gettempdir()) / f"gatehouse-demo-{proc.pid}"
    try:
        def up() -> bool:
            try:
                return requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
            except requests.RequestException:
                return proc.poll() is not None
        assert wait_until(up, 60) and proc.poll() is None, log.read_text()[-2000:]
        assert directory.is_dir()
        assert requests.get(f"http://127.0.0.1:{port}/v1/providers", timeout=5).status_code == 200
        assert wait_until(lambda: "/v1/providers" in log.read_text(), 5), log.read_text()[-2000:]
    finally:
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(timeout=20)
    assert status == 0, log.read_text()[-2000:]
    assert not directory.exists()
