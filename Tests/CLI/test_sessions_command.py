"""`gatehouse sessions list|revoke` against the store of a running `gatehouse serve` (one SQLite file): the
sessions are listed (never a token), and a revoked one is refused by the running gateway within its cache's
bound, a user's other sessions and other users' kept."""
from __future__ import annotations

import requests

from conftest import q, wait_until, write_capture_provider, write_config
from test_access_policy import Site


def test_list_and_revoke_on_a_running_gateways_store(cli, serve, tmp_path):
    site = Site()
    base = f"http://127.0.0.1:{site.port}"
    config = write_config(tmp_path, "\n".join(['store: {kind: "sqlite", path: "data/g.sqlite3"}', "backend:", f"  url: {q(base)}", ""]))
    write_capture_provider(tmp_path, base)
    gw = serve(tmp_path, ["--config", str(config)])

    def login(token: str) -> dict:
        r = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": token}, timeout=5)
        assert r.status_code == 201, r.text
        return r.json()

    alice1, alice2, mallory = login("alice-token"), login("alice-token"), login("mallory-token")

    def status(grant: dict) -> int:
        return requests.get(gw.url + "/v1/session", headers={"Authorization": f"Bearer {grant['session_token']}"}, timeout=5).status_code

    assert {status(g) for g in (alice1, alice2, mallory)} == {200}

    listed = cli(["sessions", "list", "--config", str(config)], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = [line.split("\t") for line in listed.stdout.strip().splitlines()]
    assert rows[0][:3] == ["id", "provider", "subject"]
    assert sorted(r[0] for r in rows[1:]) == sorted(g["session"]["id"] for g in (alice1, alice2, mallory))
    assert all(g["session_token"] not in listed.stdout for g in (alice1, alice2, mallory))
    only = cli(["sessions", "list", "--subject", "u-alice", "--config", str(config)], cwd=tmp_path)
    assert sorted(line.split("\t")[0] for line in only.stdout.strip().splitlines()[1:]) == sorted([alice1["session"]["id"], alice2["session"]["id"]])

    revoked = cli(["sessions", "revoke", "--subject", "u-alice", "--provider", "legacy", "--config", str(config)], cwd=tmp_path)
    assert revoked.returncode == 0 and "revoked 2 session(s)" in revoked.stdout, revoked.stdout + revoked.stderr
    assert wait_until(lambda: status(alice1) == 401 and status(alice2) == 401, 5)
    assert status(mallory) == 200

    one = cli(["sessions", "revoke", "--id", mallory["session"]["id"], "--config", str(config)], cwd=tmp_path)
    assert one.returncode == 0 and "revoked 1 session(s)" in one.stdout
    assert wait_until(lambda: status(mallory) == 401, 5)
    assert cli(["sessions", "revoke", "--id", "no-such-session", "--config", str(config)], cwd=tmp_path).returncode == 1
    # Ids are base64url, so one in 64 starts with '-': it is taken as the id, not as an unknown option (exit 64).
    dashed = cli(["sessions", "revoke", "--id", "-h2bpBBTyipSx59D9dS9Ag", "--config", str(config)], cwd=tmp_path)
    assert dashed.returncode == 1 and "revoked 0 session(s)" in dashed.stdout, dashed.stdout + dashed.stderr
    dashed = cli(["sessions", "list", "--subject", "-u", "--config", str(config)], cwd=tmp_path)
    assert dashed.returncode == 0, dashed.stdout + dashed.stderr
    assert cli(["sessions", "revoke", "--config", str(config)], cwd=tmp_path).returncode != 0
    site.server.shutdown()


def test_read_only_commands_never_create_a_store(cli, tmp_path):
    """`sessions list` (and a `revoke` that finds nothing) in a fresh directory: no sessions, and no `./data`."""
    listed = cli(["sessions", "list"], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == ["\t".join(["id", "provider", "subject", "created_at", "last_seen_at", "expires_at"])]
    assert "no store at" in listed.stderr
    revoked = cli(["sessions", "revoke", "--subject", "alice"], cwd=tmp_path)
    assert revoked.returncode == 1 and "revoked 0 session(s)" in revoked.stdout
    assert not (tmp_path / "data").exists(), list(tmp_path.iterdir())
