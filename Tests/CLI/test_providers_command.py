"""`gatehouse providers`: one line per provider with id, kind, login style and capability flags."""
from __future__ import annotations

from conftest import write_config, write_provider

CAPABILITIES = {"refresh", "revocation", "expiry_known", "userinfo", "legacy_capture"}


def parse_providers_output(stdout: str) -> dict[str, dict]:
    """`id<TAB>kind=…<TAB>login=…<TAB>name="…"<TAB>flag,flag` → {id: {kind, login, name, flags}}."""
    providers = {}
    for line in stdout.splitlines():
        if not line.strip():
            continue
        fields = line.split("\t")
        assert len(fields) in (4, 5), f"unexpected line {line!r}"
        pid, rest = fields[0], dict(f.split("=", 1) for f in fields[1:4])
        flags = set(fields[4].split(",")) if len(fields) == 5 and fields[4] else set()
        assert flags <= CAPABILITIES, f"unknown capability flag in {line!r}"
        providers[pid] = {"kind": rest["kind"], "login": rest["login"], "name": rest["name"].strip('"'), "flags": flags}
    return providers


def test_providers_lists_id_kind_login_style_and_capability_flags(cli, tmp_path):
    config = write_config(tmp_path, 'store: {kind: "memory"}\n')
    write_provider(tmp_path, "full", name="Full server", userinfo=True, revocation=True)
    write_provider(tmp_path, "bare", name="Bare server")
    result = cli(["providers", "--config", str(config)], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    listed = parse_providers_output(result.stdout)
    assert listed == {
        "full": {"kind": "oauth2", "login": "redirect", "name": "Full server",
                 "flags": {"refresh", "revocation", "expiry_known", "userinfo"}},
        "bare": {"kind": "oauth2", "login": "redirect", "name": "Bare server",
                 "flags": {"refresh", "expiry_known"}},
    }


def test_providers_with_an_empty_providers_directory_says_so(cli, tmp_path):
    config = write_config(tmp_path, 'store: {kind: "memory"}\n')
    result = cli(["providers", "--config", str(config)], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "no providers" in result.stdout


def test_providers_with_an_invalid_provider_file_exits_1_with_file_and_line(cli, tmp_path):
    config = write_config(tmp_path, 'store: {kind: "memory"}\n')
    bad = write_provider(tmp_path, "y", 'id: "y"\nkind: "nosuchkind"\n')
    result = cli(["providers", "--config", str(config)], cwd=tmp_path)
    assert result.returncode == 1
    assert f"{bad}:2: " in result.stderr
