"""The documentation is checked like code: every block of gatehouse configuration in README.md, docs/ and
deploy/ passes `gatehouse check`, and every link resolves to a file inside the repository.

A block of gatehouse configuration is a ```yaml block whose first line names the file it is:
`# gatehouse.yaml` or `# Providers/<id>.yaml`. Each is checked on its own (a gatehouse.yaml block with no
provider files; a provider block alone in Providers/), with every `${VAR}` it references set to a dummy.
YAML for other tools (Traefik, Envoy, Kubernetes) carries no such line and is left to those tools."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO

PAGES = sorted([REPO / "README.md", *REPO.glob("docs/**/*.md"), *REPO.glob("deploy/**/*.md")])
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
MARKER = re.compile(r"#\s*(gatehouse\.yaml|Providers/([A-Za-z0-9._-]+)\.yaml)\s*$")
# Top-level keys that only gatehouse configuration has: a block with them but no marker escaped the check.
GATEHOUSE_KEYS = re.compile(r"^(listen|public_url|providers_dir|store|sessions|access|backend|keys|cookie|cors|refresh|limits|allowed_redirect_uris):", re.M)
PROVIDER_KINDS = re.compile(r"^kind:\s*\"?(oauth2|oidc|spid|acs|browserid|capture)\"?\s*$", re.M)


def yaml_blocks():
    for page in PAGES:
        for match in FENCE.finditer(page.read_text()):
            if match.group(1) in ("yaml", "yml"):
                line = page.read_text()[:match.start()].count("\n") + 1
                yield pytest.param(page, line, match.group(2), id=f"{page.relative_to(REPO)}:{line}")


BLOCKS = list(yaml_blocks())


@pytest.mark.parametrize("page,line,text", BLOCKS)
def test_every_gatehouse_yaml_block_passes_check(cli, tmp_path, page, line, text):
    first = text.splitlines()[0] if text.strip() else ""
    marker = MARKER.fullmatch(first.strip())
    if not marker:
        assert not GATEHOUSE_KEYS.search(text) and not PROVIDER_KINDS.search(text), (
            f"{page.relative_to(REPO)}:{line}: gatehouse configuration without a '# gatehouse.yaml' or "
            "'# Providers/<id>.yaml' first line is not checked; add the line")
        return
    (tmp_path / "Providers").mkdir()
    target = tmp_path / marker.group(1)
    target.write_text(text)
    env = {name: "x" for name in re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", text)}
    # Secrets given as files in examples: create them, so the check reads something.
    for path in re.findall(r"_file:\s*\"?([^\s\"#]+)", text):
        file = Path(path) if path.startswith("/") else target.parent / path
        if not path.startswith("/"):
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text("x\n")
    # Key files named by `keys:` (`file: …`): real ones, made by `gatehouse keys generate`.
    key_paths = re.findall(r"\bfile:\s*\"?([^\s\"#,}]+)", text)
    if key_paths:
        made = tmp_path / "generated-keys"
        assert cli(["keys", "generate", "--id", "doc", "--directory", str(made)], cwd=tmp_path).returncode == 0
        for path in key_paths:
            # An absolute path of a deployment (/etc/gatehouse/…) is checked under the test's directory.
            file = tmp_path / "root" / path.lstrip("/") if path.startswith("/") else target.parent / path
            if path.startswith("/"):
                text = text.replace(path, str(file))
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes((made / ("signing-doc.pem" if path.endswith(".pem") else "sealing-doc.key")).read_bytes())
        target.write_text(text)
    result = cli(["check"] + (["--config", str(target)] if marker.group(1) == "gatehouse.yaml" else []), cwd=tmp_path, env=env)
    assert result.returncode == 0, f"{page.relative_to(REPO)}:{line}:\n{result.stderr}"


LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_every_link_resolves_inside_the_repository(page):
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # an external reference (RFCs, upstream docs) or an anchor on the page
        path = (page.parent / target.split("#", 1)[0]).resolve()
        assert path.is_relative_to(REPO), f"{page.relative_to(REPO)}: link {target} leaves the repository"
        assert path.exists(), f"{page.relative_to(REPO)}: link {target} names no file"


def test_nothing_points_to_the_teams_own_specification():
    for path in [*PAGES, *REPO.glob("Sources/**/*.swift"), *REPO.glob("scripts/*"), *REPO.glob("Providers/*")]:
        assert "../shared" not in path.read_text(errors="replace"), path


def defined_metrics() -> dict[str, list[str]]:
    """The metrics GatewayMetrics registers through its helpers, by full name, with their label names:
    `counter("x")` is `gatehouse_x_total`, `labelled("x", …, [("a", …)])` is `gatehouse_x_total{a}`,
    `histogram("x", …, label: ("a", …))` is `gatehouse_x_seconds{a}`."""
    source = (REPO / "Sources" / "GatehouseServer" / "Services" / "GatewayMetrics.swift").read_text()
    metrics: dict[str, list[str]] = {}
    for name in re.findall(r'\bcounter\("([a-z_]+)"', source):
        metrics[f"gatehouse_{name}_total"] = []
    for name, labels in re.findall(r'\blabelled\(\s*"([a-z_]+)",\s*"[^"]*",\s*\[((?:\("[a-z_]+",[^)]*\),?\s*)+)\]', source):
        metrics[f"gatehouse_{name}_total"] = re.findall(r'\("([a-z_]+)",', labels)
    for name, label in re.findall(r'\bhistogram\(\s*"([a-z_]+)",\s*"[^"]*",\s*label:\s*\("([a-z_]+)"', source):
        metrics[f"gatehouse_{name}_seconds"] = [label]
    return metrics


def test_every_metric_the_gateway_registers_is_in_the_operator_guides_tables():
    """Issue 38: `gatehouse_upstream_failures_total{upstream}` was served but in no table of docs/operations.md."""
    metrics = defined_metrics()
    assert "gatehouse_upstream_failures_total" in metrics and len(metrics) >= 15, metrics
    text = (REPO / "docs" / "operations.md").read_text()
    section = text[text.index("\n## Metrics"):]
    section = section[:section.index("\n## ", 1)]
    documented = dict(re.findall(r"^\| `(gatehouse_[a-z_]+)(?:\{([a-z_,=\"…]*)\})?` \|", section, re.M))
    missing = sorted(name for name in metrics if name not in documented)
    assert not missing, f"metrics docs/operations.md's Metrics tables lack: {missing}"
    unlabelled = {name: labels for name, labels in metrics.items()
                  if labels and not any(re.fullmatch(rf"\| `{name}\{{{','.join(labels)}\}}` \|.*", row)
                                        for row in section.splitlines())}
    assert not unlabelled, f"labelled metrics documented without their labels {{…}}: {unlabelled}"
