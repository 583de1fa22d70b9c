"""gatehouse.example.yaml does what its header says: copied as gatehouse.yaml it passes `gatehouse check`, and
so it does once its `keys` lines are uncommented after `gatehouse keys generate` as its comment says."""
from __future__ import annotations

import re

from conftest import REPO

EXAMPLE = REPO / "gatehouse.example.yaml"


def test_the_example_copied_as_it_is_passes_check(cli, tmp_path):
    (tmp_path / "gatehouse.yaml").write_text(EXAMPLE.read_text())
    result = cli(["check"], cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("configuration OK: gatehouse.yaml")


def test_the_example_with_its_keys_uncommented_passes_check_once_they_are_generated(cli, tmp_path):
    text = EXAMPLE.read_text()
    start = text.index("# keys:\n")
    block = re.match(r"(# .*\n)+", text[start:]).group(0)
    uncommented = "".join(line[2:] + "\n" for line in block.splitlines())
    (tmp_path / "gatehouse.yaml").write_text(text.replace(block, uncommented))
    for key_id in sorted(set(re.findall(r'id: "(\w+)"', uncommented))):
        assert cli(["keys", "generate", "--id", key_id, "--directory", "secrets"], cwd=tmp_path).returncode == 0
    result = cli(["check"], cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_fresh_clones_home_page_marks_the_example_providers(serve, tmp_path):
    """The repository's Providers/ name hosts that do not exist (SURFnet's demo is gone, legacy.example.com):
    the home page says plainly that they are examples."""
    config = tmp_path / "gatehouse.yaml"
    config.write_text(f'store: {{kind: "memory"}}\nproviders_dir: "{REPO / "Providers"}"\n')
    gw = serve(tmp_path, ["--config", str(config)])
    page = gw.get("/").text
    for name in ("SURFnet php-oauth demo (example:", "Legacy relying party (example:"):
        assert name in page, page
