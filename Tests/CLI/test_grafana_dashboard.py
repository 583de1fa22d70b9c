"""deploy/grafana-dashboard.json is built on what the gateway exposes: every metric its panels query is in a
running gateway's /metrics, every panel uses the dashboard's data-source variable, and the ids are unique."""
from __future__ import annotations

import json
import re

import requests

from conftest import REPO, q, write_capture_provider, write_config
from test_access_policy import Site


def test_every_metric_the_dashboard_queries_is_exposed(serve, tmp_path):
    dashboard = json.loads((REPO / "deploy" / "grafana-dashboard.json").read_text())
    panels = dashboard["panels"]
    assert panels and len({p["id"] for p in panels}) == len(panels)
    exprs = [t["expr"] for p in panels for t in p["targets"]]
    assert all(p["datasource"]["uid"] == "${datasource}" for p in panels)
    queried = set(re.findall(r"\bgatehouse_[a-z_]+_(?:total|bucket)\b", " ".join(exprs)))

    site = Site()
    base = f"http://127.0.0.1:{site.port}"
    config = write_config(tmp_path, "\n".join([
        'store: {kind: "memory"}', "backend:", f"  url: {q(base)}",
        "access:", "  rules:", '    - {name: "nobody", paths: ["/secret/**"], allow: [{email: "nobody@example.test"}]}', "",
    ]))
    write_capture_provider(tmp_path, base)
    gw = serve(tmp_path, ["--config", str(config)])
    token = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "alice-token"}, timeout=5).json()["session_token"]
    # One denial, so that the labelled counter has a series.
    assert requests.get(gw.url + "/v1/api/secret/x", headers={"Authorization": f"Bearer {token}"}, timeout=5).status_code == 403
    # And one call that reaches the backend, for the upstream latency histogram.
    requests.get(gw.url + "/v1/api/open", headers={"Authorization": f"Bearer {token}"}, timeout=5)
    exposed = set(re.findall(r"^(gatehouse_[a-z_]+_(?:total|bucket))\b", gw.get("/metrics").text, re.M))
    assert queried and queried <= exposed, queried - exposed
    site.server.shutdown()
