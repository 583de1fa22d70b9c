"""The messages the documentation quotes are the ones the binary prints.

docs/operations.md's table of start-up failures ("Other start-up failures that are not `file:line`
messages"), its "Keys and rotation" block and docs/configuration.md's sentence on key files quote what
`gatehouse check` and `gatehouse serve` print. Each quoted message is reproduced here and compared with
what the binary prints; `…` in a quote stands for any text, and the documentation's `/etc/gatehouse/`
paths are this test's own. A quote no scenario reproduces fails the test, so a message the binary no
longer prints cannot stay in the table."""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from conftest import REPO, clean_env, write_config

OPERATIONS = REPO / "docs" / "operations.md"
CONFIGURATION = REPO / "docs" / "configuration.md"

# Quotes that no test run can reproduce (ports below 1024 are open to root, who runs CI containers).
UNREPRODUCIBLE = {"cannot listen on …: permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)"}


def table_quotes() -> list[str]:
    """The backticked messages of the first column of operations.md's start-up failure table."""
    text = OPERATIONS.read_text()
    start = text.index("Other start-up failures that are not `file:line` messages")
    table = text[start:text.index("\n\n", text.index("|---|", start))]
    quotes = []
    for row in table.splitlines()[3:]:
        first = row.split(" | ")[0].lstrip("| ")
        quotes += re.findall(r"`([^`]+)`", first)
    return quotes


def pattern(quote: str, root: Path) -> re.Pattern[str]:
    """A quote as a regular expression: `…` is any text, `/etc/gatehouse/` is `root`."""
    parts = [re.escape(part.replace("/etc/gatehouse/", f"{root}/")) for part in quote.split("…")]
    return re.compile(".*".join(parts))


def keys_config(root: Path) -> Path:
    return write_config(root, 'store: {kind: "memory"}\nkeys:\n'
                              f'  sealing: [{{id: "k1", file: "{root}/secrets/sealing-k1.key"}}]\n'
                              f'  signing: [{{id: "k1", file: "{root}/secrets/signing-k1.pem"}}]\n')


def unwritable_data_directory(gatehouse_bin: Path) -> str:
    """What `check` prints in a working directory its user cannot write, without a configuration file (as uid
    65534 when the tests run as root, who may write anywhere)."""
    prefix = []
    if os.geteuid() == 0:
        assert shutil.which("setpriv"), "setpriv (util-linux) is needed to run the binary as an unprivileged user"
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    directory = Path(tempfile.mkdtemp(prefix="gatehouse-read-only-"))
    directory.chmod(0o555)
    try:
        result = subprocess.run([*prefix, str(gatehouse_bin), "check"], cwd=str(directory), env=clean_env(),
                                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    finally:
        directory.chmod(0o755)
        shutil.rmtree(directory, ignore_errors=True)
    assert result.returncode != 0, (result.stdout, result.stderr)
    return result.stdout + result.stderr


def scenarios(cli, root: Path, gatehouse_bin: Path) -> str:
    """Everything the binary prints in the failures the docs describe, one run after the other."""
    printed = [unwritable_data_directory(gatehouse_bin)]

    def run(args: list[str]) -> None:
        result = cli(args, cwd=root)
        assert result.returncode != 0, (args, result.stdout, result.stderr)
        printed.append(result.stdout + result.stderr)

    run(["serve", "--listen", "x"])
    run(["check", "--config", f"{root}/gatehouse.yaml"])  # not written yet
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        write_config(root, 'store: {kind: "memory"}\n')
        result = cli(["serve", "--config", f"{root}/gatehouse.yaml", "--listen", f"127.0.0.1:{port}"], cwd=root)
        printed.append((result.stdout + result.stderr).replace(f"127.0.0.1:{port}", "127.0.0.1:8080"))
    config = keys_config(root)
    run(["check", "--config", str(config)])  # no key files
    (root / "secrets").mkdir()
    assert cli(["keys", "generate", "--id", "k1", "--directory", str(root / "generated")], cwd=root).returncode == 0
    (root / "secrets" / "sealing-k1.key").write_text("too short\n")
    (root / "secrets" / "signing-k1.pem").write_text("not a key\n")
    run(["check", "--config", str(config)])
    run(["serve", "--config", str(config), "--listen", "127.0.0.1:0"])
    return "\n".join(printed)


def test_the_troubleshooting_table_quotes_what_the_binary_prints(cli, gatehouse_bin, tmp_path):
    quotes = [quote for quote in table_quotes() if quote not in UNREPRODUCIBLE]
    assert len(quotes) >= 5, quotes
    printed = scenarios(cli, tmp_path, gatehouse_bin)
    missing = [quote for quote in quotes if not pattern(quote, tmp_path).search(printed)]
    assert not missing, f"docs/operations.md quotes messages the binary does not print: {missing}\n--- printed:\n{printed}"


def test_the_key_file_messages_the_docs_quote_are_printed_by_check(cli, gatehouse_bin, tmp_path):
    printed = scenarios(cli, tmp_path, gatehouse_bin)
    block = OPERATIONS.read_text().split("## Keys and rotation", 1)[1].split("### Rotation", 1)[0]
    quoted = [line for language, fence in re.findall(r"^```(\w*)\n(.*?)^```", block, re.S | re.M) if not language
              for line in fence.splitlines() if "key file" in line]
    quoted += re.findall(r"`([^`]*cannot read the key file[^`]*)`", CONFIGURATION.read_text())
    assert len(quoted) >= 3, quoted
    for quote in quoted:
        # The docs' line numbers and file are theirs; the message after `file:line: ` must be printed.
        message = re.sub(r"^\S+\.yaml:\d+: ", "", quote)
        assert pattern(message, tmp_path).search(printed), (
            f"docs quote {quote!r}, which the binary does not print:\n{printed}")


def test_check_reads_key_files_as_the_docs_say(cli, tmp_path):
    config = keys_config(tmp_path)
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert result.returncode == 1 and "cannot read the key file" in result.stdout + result.stderr
    for page in (CONFIGURATION, OPERATIONS):
        text = page.read_text()
        assert not re.search(r"check` does not\s+read", text), f"{page.name} still says check does not read key files"
        assert "Does not read the key files" not in text
