"""One version: the image tags of deploy/ (Kubernetes manifests, compose files) name the release that
`gatehouse --version` prints."""
from __future__ import annotations

import re

from conftest import REPO

IMAGE = "registry.example.com/gatehouse"


def test_the_manifests_name_the_binarys_version(cli, tmp_path):
    printed = cli(["--version"], cwd=tmp_path)
    assert printed.returncode == 0
    version = re.fullmatch(r"gatehouse (\S+)\n", printed.stdout).group(1)
    tags = []
    for path in sorted([*REPO.glob("deploy/**/*.yaml"), *REPO.glob("deploy/**/*.yml")]):
        text = path.read_text()
        tags += [(path.name, tag) for tag in re.findall(re.escape(IMAGE) + r":([\w.-]+)", text)]
        tags += [(path.name, tag) for tag in re.findall(r"newTag:\s*\"?([\w.-]+)\"?", text)]
        tags += [(path.name, tag) for tag in re.findall(r"image:\s*\"?gatehouse:(\d[\w.-]*)\"?", text)]
    assert tags, "no gatehouse image tag found in deploy/"
    assert all(tag == version for _, tag in tags), f"gatehouse --version says {version}; deploy/ says {tags}"
