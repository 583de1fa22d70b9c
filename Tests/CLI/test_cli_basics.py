"""Small things an operator meets first: --version, key ids that cannot leave their directory, and a
check that warns about a configuration without providers."""
from __future__ import annotations


def test_version(cli, tmp_path):
    result = cli(["--version"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("gatehouse ") and result.stdout.strip() != "gatehouse"


def test_a_key_id_that_would_leave_the_directory_is_refused_and_nothing_is_written(cli, tmp_path):
    keys = tmp_path / "keys"
    for bad in ["../evil", "a/b", ".hidden", "", "x" * 65]:
        result = cli(["keys", "generate", "--id", bad, "--directory", str(keys)], cwd=tmp_path)
        assert result.returncode != 0, bad
        assert "--id" in result.stderr, result.stderr
        assert "wrote" not in result.stdout
    assert not (tmp_path / "sealing-evil.key").exists() and not (tmp_path / "evil").exists()
    assert not keys.exists() or not any(keys.iterdir())


def test_check_warns_when_no_provider_is_configured(cli, tmp_path):
    (tmp_path / "Providers").mkdir()
    result = cli(["check"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "0 provider(s)" in result.stdout
    assert result.stderr.startswith("warning: ") and "no provider" in result.stderr and "/readyz" in result.stderr
