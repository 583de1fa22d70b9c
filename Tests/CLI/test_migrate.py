"""`gatehouse migrate`: creates the configured SQLite store's schema; running it again is harmless."""
from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from conftest import REPO, write_config


def schema(db) -> list[tuple[str, str]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return sorted(conn.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").fetchall())


def test_migrate_creates_the_sqlite_database_and_a_second_run_is_harmless(cli, tmp_path):
    config = write_config(tmp_path, 'store:\n  kind: "sqlite"\n  path: "db/sessions.sqlite3"\n')
    db = tmp_path / "db" / "sessions.sqlite3"
    assert not db.exists()

    first = cli(["migrate", "--config", str(config)], cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert db.is_file()
    tables = schema(db)
    assert any(kind == "table" for kind, _ in tables), tables

    second = cli(["migrate", "--config", str(config)], cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert schema(db) == tables


def test_migrate_with_an_invalid_configuration_exits_1_and_creates_nothing(cli, tmp_path):
    config = write_config(tmp_path, 'store:\n  kind: "sqlite"\n  path: "db/sessions.sqlite3"\n  colour: 1\n')
    result = cli(["migrate", "--config", str(config)], cwd=tmp_path)
    assert result.returncode == 1
    assert f"{config}:4: " in result.stderr
    assert not (tmp_path / "db").exists()


def test_migrate_says_in_one_line_which_store_it_migrated(cli, tmp_path):
    config = write_config(tmp_path, 'store:\n  kind: "sqlite"\n  path: "db/sessions.sqlite3"\n')
    result = cli(["migrate", "--config", str(config)], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"store migrated: SQLite database {tmp_path / 'db' / 'sessions.sqlite3'}\n"
    assert "Store(" not in result.stdout


def test_the_migrate_lines_the_operator_guide_quotes_are_what_it_prints(cli, tmp_path):
    """Issue 38: docs/operations.md quoted `store migrated: Store(kind: …, url: <redacted>, …)`, a line the binary
    no longer prints. Every `store migrated: …` quote of the guide has the form the binary prints: the SQLite one
    reproduced here exactly (its path this test's own), the PostgreSQL one as `PostgreSQL database at HOST[:PORT]/DB`."""
    text = (REPO / "docs" / "operations.md").read_text()
    quotes = re.findall(r"`(store migrated: [^`]+)`", text)
    assert quotes, "docs/operations.md quotes no `store migrated: …` line"
    config = write_config(tmp_path, 'store:\n  kind: "sqlite"\n  path: "gatehouse.sqlite3"\n')
    printed = cli(["migrate", "--config", str(config)], cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    for quote in quotes:
        assert "Store(" not in quote and "<redacted>" not in quote, quote
        if quote.startswith("store migrated: SQLite database "):
            path = quote.removeprefix("store migrated: SQLite database ")
            assert printed.stdout == f"store migrated: SQLite database {tmp_path / Path(path).name}\n", (quote, printed.stdout)
        else:
            assert re.fullmatch(r"store migrated: PostgreSQL database at [a-z0-9.-]+(:[0-9]+)?/[a-z_]+", quote), quote
