"""Settings from `GATEHOUSE_*` environment variables, against the real binary: `check` and `serve` both read
them, problems name the variable, a misspelt name is a did-you-mean warning, a secret is never printed."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
import requests

from conftest import STARTUP_TIMEOUT, clean_env, free_port, stop, tail, wait_until, write_config, write_provider
from gatehouse_testkit import missing

UNPRIVILEGED = 65534

SECRET = "pg-S3cr3t-never-printed"


def env(**settings: str) -> dict[str, str]:
    """`clean_env` (none of the shell's own GATEHOUSE_* settings) with these variables."""
    return clean_env(settings)


def run(gatehouse_bin: Path, args: list[str], cwd: Path, environment: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(gatehouse_bin), *args], cwd=str(cwd), env=environment, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=30)


@pytest.fixture
def started(gatehouse_bin, tmp_path_factory):
    """Starts `gatehouse serve` with no --listen (the environment's GATEHOUSE_LISTEN decides); stopped at teardown."""
    procs: list[subprocess.Popen] = []

    def start(cwd: Path, port: int, environment: dict[str, str]) -> tuple[subprocess.Popen, Path]:
        logs = tmp_path_factory.mktemp("serve-logs")
        log = logs / "output"
        with open(log, "wb") as out:
            proc = subprocess.Popen([str(gatehouse_bin), "serve"], cwd=str(cwd), env=environment,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        procs.append(proc)

        def ready() -> bool:
            if proc.poll() is not None:
                return True
            try:
                return requests.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200
            except requests.RequestException:
                return False

        ok = wait_until(ready, STARTUP_TIMEOUT, 0.05)
        assert proc.poll() is None, f"gateway exited with {proc.returncode}:\n{tail(log)}"
        assert ok, f"/readyz not 200 on port {port} after {STARTUP_TIMEOUT}s:\n{tail(log)}"
        return proc, log

    yield start
    for proc in procs:
        stop(proc)


def test_check_fails_naming_the_variable_of_a_bad_value(gatehouse_bin, tmp_path):
    write_config(tmp_path, 'store: {kind: "sqlite"}\nlimits:\n  max_body_bytes: big\n')
    result = run(gatehouse_bin, ["check"], tmp_path, env(GATEHOUSE_STORE_KIND="bogus"))
    assert result.returncode == 1, result
    assert "configuration OK" not in result.stdout
    lines = result.stderr.splitlines()
    assert "GATEHOUSE_STORE_KIND: 'store.kind' must be one of sqlite, memory, postgres, not 'bogus'" in lines, result.stderr
    # Reported together with the file's own problem.
    assert "gatehouse.yaml:3: 'limits.max_body_bytes' must be a whole number, not 'big'" in lines, result.stderr


def test_check_reports_a_malformed_json_list_by_its_variable(gatehouse_bin, tmp_path):
    write_config(tmp_path, "")
    result = run(gatehouse_bin, ["check"], tmp_path, env(GATEHOUSE_TRUSTED_PROXIES='["10.0.0.0/8"'))
    assert result.returncode == 1, result
    assert result.stderr.splitlines()[0].startswith(
        "GATEHOUSE_TRUSTED_PROXIES: 'trusted_proxies' is a list: write it as a JSON array of strings"), result.stderr


def test_check_warns_about_an_unknown_variable_with_the_likely_setting(gatehouse_bin, tmp_path):
    write_config(tmp_path, 'store: {kind: "memory"}\n')
    write_provider(tmp_path, "x", revocation=True)
    result = run(gatehouse_bin, ["check"], tmp_path, env(GATEHOUSE_STORE_KINDD="memory", GATEHOUSE_TEST_ANYTHING="1"))
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "warning: GATEHOUSE_STORE_KINDD is not a setting; did you mean GATEHOUSE_STORE_KIND (store.kind)?"
    ]
    assert "configuration OK" in result.stdout


def test_check_does_not_warn_about_variables_the_files_reference(gatehouse_bin, tmp_path):
    write_config(tmp_path, 'store:\n  kind: "postgres"\n  url: "${GATEHOUSE_DATABASE_URL}"\n')
    write_provider(tmp_path, "x", revocation=True, extra='client_secret: "${GATEHOUSE_X_SECRET}"\n')
    result = run(gatehouse_bin, ["check"], tmp_path, env(
        GATEHOUSE_DATABASE_URL=f"postgres://gh:{SECRET}@127.0.0.1:1/gh", GATEHOUSE_X_SECRET=SECRET))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert SECRET not in result.stdout


def test_check_without_a_file_uses_defaults_and_the_environment(gatehouse_bin, tmp_path):
    write_provider(tmp_path, "x")
    result = run(gatehouse_bin, ["check"], tmp_path, env(GATEHOUSE_STORE_KIND="memory", GATEHOUSE_LOGGING_FORMAT="json"))
    assert result.returncode == 0, result.stderr
    assert "configuration OK: built-in defaults and the environment (GATEHOUSE_STORE_KIND, GATEHOUSE_LOGGING_FORMAT)" \
        in result.stdout, result.stdout


def test_serve_listens_where_the_environment_says_without_a_file(started, tmp_path):
    write_provider(tmp_path, "x")
    port = free_port()
    public_url = "https://auth.example.test"
    _, log = started(tmp_path, port, env(
        GATEHOUSE_LISTEN=f"127.0.0.1:{port}", GATEHOUSE_PUBLIC_URL=public_url, GATEHOUSE_STORE_KIND="memory",
        GATEHOUSE_ALLOWED_REDIRECT_URIS=json.dumps(["com.example.app:/callback"])))
    providers = requests.get(f"http://127.0.0.1:{port}/v1/providers", timeout=5)
    assert providers.status_code == 200
    assert public_url in log.read_text(errors="replace")
    # memory store: no SQLite database anywhere under the working directory (keys may be generated under data/).
    assert not list(tmp_path.rglob("*.sqlite3*")), sorted(map(str, tmp_path.rglob("*")))


def test_serve_environment_wins_over_the_file(started, tmp_path):
    file_port, port = free_port(), free_port()
    write_config(tmp_path, f'listen: "127.0.0.1:{file_port}"\nstore: {{kind: "sqlite"}}\n')
    write_provider(tmp_path, "x")
    started(tmp_path, port, env(GATEHOUSE_LISTEN=f"127.0.0.1:{port}", GATEHOUSE_STORE_KIND="memory"))
    assert not list(tmp_path.rglob("*.sqlite3*"))


def test_a_secret_from_the_environment_is_never_printed(started, gatehouse_bin, tmp_path):
    write_provider(tmp_path, "x")
    url = f"postgres://gatehouse:{SECRET}@127.0.0.1:1/gatehouse"
    # Unused (memory store), at the most verbose log level: accepted, and not in any output.
    port = free_port()
    proc, log = started(tmp_path, port, env(
        GATEHOUSE_LISTEN=f"127.0.0.1:{port}", GATEHOUSE_STORE_KIND="memory", GATEHOUSE_STORE_URL=url,
        GATEHOUSE_LOGGING_LEVEL="trace", GATEHOUSE_STORE_PASWORD=SECRET))
    requests.get(f"http://127.0.0.1:{port}/readyz", timeout=5)
    stop(proc)
    output = log.read_text(errors="replace")
    assert "GATEHOUSE_STORE_PASWORD is not a setting; did you mean GATEHOUSE_STORE_PASSWORD" in output, output
    assert SECRET not in output
    # Wrong in several ways: every problem is reported, the secret in none.
    for settings in (
        dict(GATEHOUSE_STORE_KIND="postgres", GATEHOUSE_STORE_URL=f"mysql://u:{SECRET}@db/gh"),
        dict(GATEHOUSE_STORE_KIND="postgres", GATEHOUSE_STORE_URL=url, GATEHOUSE_STORE_HOST="db"),
        dict(GATEHOUSE_STORE_KIND="postgres", GATEHOUSE_STORE_HOST="db", GATEHOUSE_STORE_PASSWORD=SECRET,
             GATEHOUSE_STORE_PORT="0", GATEHOUSE_STORE_PASWORD=SECRET),
    ):
        for command in (["check"], ["serve"]):
            result = run(gatehouse_bin, command, tmp_path, env(**settings))
            assert result.returncode == 1, (command, settings, result)
            assert "GATEHOUSE_STORE_" in result.stderr, result.stderr
            assert SECRET not in result.stdout + result.stderr, (command, settings)
            if "GATEHOUSE_STORE_PASWORD" in settings:  # the misspelt name is warned about, by name only
                assert "warning: GATEHOUSE_STORE_PASWORD is not a setting; did you mean GATEHOUSE_STORE_PASSWORD" \
                    in result.stderr, (command, result.stderr)


def unprivileged_prefix() -> list[str]:
    """Runs the binary as uid/gid 65534 when the tests run as root (root writes anywhere); [] otherwise."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        missing("setpriv (util-linux) is needed to run the gateway as an unprivileged user")
    return ["setpriv", f"--reuid={UNPRIVILEGED}", f"--regid={UNPRIVILEGED}", "--clear-groups", "--"]


@pytest.fixture
def read_only_tree():
    """A working directory the gateway's user cannot write (0555), holding a provider file, and `state/`, a directory
    that user owns; both reachable by it (not under pytest's root-only tmp_path)."""
    root = Path(tempfile.mkdtemp(prefix="gatehouse-read-only-"))
    root.chmod(0o755)
    work = root / "work"
    write_provider(work, "x")
    state = root / "state"
    state.mkdir()
    if os.geteuid() == 0:
        os.chown(state, UNPRIVILEGED, UNPRIVILEGED)
    work.chmod(0o555)
    yield work, state
    work.chmod(0o755)
    shutil.rmtree(root, ignore_errors=True)


def test_an_unwritable_data_directory_is_one_line_for_check_and_serve_and_data_dir_moves_it(gatehouse_bin, read_only_tree):
    """Issue 38: from a read-only working directory `check` passed and `serve` died with a raw
    `NSCocoaErrorDomain Code=513 … /data`. Now both say, in one line, which directory cannot be created and what to do;
    `GATEHOUSE_DATA_DIR` alone (no file) puts the generated keys and the SQLite store elsewhere, created 0700."""
    work, state = read_only_tree
    prefix = unprivileged_prefix()
    data = work / "data"
    for command in (["check"], ["serve", "--listen", "127.0.0.1:0"], ["migrate"]):
        result = subprocess.run([*prefix, str(gatehouse_bin), *command], cwd=str(work), env=env(), stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=30)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        lines = [line for line in result.stderr.splitlines() if " warning " not in line and not line.startswith("warning:")]
        assert len(lines) == 1, (command, result.stderr)
        assert lines[0].startswith(f"data_dir: the data directory '{data}' cannot be created: '{work}' is not writable by uid "), lines
        assert "GATEHOUSE_DATA_DIR" in lines[0], lines
        assert "Cocoa" not in result.stderr and "Error Domain" not in result.stderr, result.stderr
        assert not data.exists()

    moved = state / "gatehouse"
    result = subprocess.run([*prefix, str(gatehouse_bin), "check"], cwd=str(work), env=env(GATEHOUSE_DATA_DIR=str(moved)),
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert "the environment (GATEHOUSE_DATA_DIR)" in result.stdout, result.stdout

    port = free_port()
    log = state / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([*prefix, str(gatehouse_bin), "serve", "--listen", f"127.0.0.1:{port}"], cwd=str(work),
                                env=env(GATEHOUSE_DATA_DIR=str(moved)), stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        def ready() -> bool:
            if proc.poll() is not None:
                return True
            try:
                return requests.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200
            except requests.RequestException:
                return False

        assert wait_until(ready, STARTUP_TIMEOUT, 0.05) and proc.poll() is None, tail(log)
    finally:
        stop(proc)
    assert {"gatehouse.sqlite3", "sealing-k1.key", "signing-s1.pem"} <= {p.name for p in moved.iterdir()}, list(moved.iterdir())
    assert stat.S_IMODE(moved.stat().st_mode) == 0o700
    assert not data.exists()
