"""`gatehouse serve`: --listen, health endpoints, /v1/providers, and the no-configuration defaults."""
from __future__ import annotations

import base64
import stat
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from conftest import free_port, port_is_open, q, wait_until, write_config, write_provider

CAPABILITY_KEYS = {"refresh", "revocation", "expiry_known", "userinfo", "legacy_capture"}


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_serve_listen_flag_overrides_listen_from_the_file(serve, tmp_path):
    file_port = free_port()
    config = write_config(tmp_path, f'listen: {q(f"127.0.0.1:{file_port}")}\nstore: {{kind: "memory"}}\n')
    write_provider(tmp_path, "x")
    gw = serve(tmp_path, ["--config", str(config)])
    assert gw.port != file_port
    assert gw.get("/healthz").status_code == 200
    assert not port_is_open(file_port), "the gateway also listens on the file's `listen`"


def test_serve_healthz_and_readyz_are_200_with_providers_loaded(serve, tmp_path):
    config = write_config(tmp_path, 'store: {kind: "memory"}\n')
    write_provider(tmp_path, "x")
    gw = serve(tmp_path, ["--config", str(config)])
    assert gw.get("/healthz").status_code == 200
    ready = gw.get("/readyz")
    assert ready.status_code == 200, ready.text


def test_serve_readyz_is_not_ready_without_providers(serve, tmp_path):
    config = write_config(tmp_path, 'store: {kind: "memory"}\n')
    gw = serve(tmp_path, ["--config", str(config)])
    assert gw.get("/healthz").status_code == 200
    assert gw.get("/readyz").status_code == 503


def test_serve_v1_providers_has_the_shape_of_the_spec_and_matches_the_providers_command(serve, cli, tmp_path):
    config = write_config(tmp_path, 'store: {kind: "memory"}\n')
    write_provider(tmp_path, "full", name="Full server", userinfo=True, revocation=True)
    write_provider(tmp_path, "bare", name="Bare server")
    gw = serve(tmp_path, ["--config", str(config)])
    r = gw.get("/v1/providers")
    assert r.status_code == 200
    assert r.headers["Content-Type"].split(";")[0].strip() == "application/json"
    body = r.json()
    assert set(body) == {"providers"}
    by_id = {}
    for p in body["providers"]:
        assert set(p) == {"id", "kind", "name", "login", "capabilities"}, p
        assert set(p["capabilities"]) == CAPABILITY_KEYS, p
        assert all(isinstance(v, bool) for v in p["capabilities"].values()), p
        assert p["login"] in {"redirect", "assertion", "token"}
        by_id[p["id"]] = p
    assert sorted(by_id) == ["bare", "full"]
    assert by_id["full"] == {
        "id": "full", "kind": "oauth2", "name": "Full server", "login": "redirect",
        "capabilities": {"refresh": True, "revocation": True, "expiry_known": True, "userinfo": True,
                         "legacy_capture": False},
    }
    assert by_id["bare"]["capabilities"]["revocation"] is False
    assert by_id["bare"]["capabilities"]["userinfo"] is False
    assert by_id["bare"]["capabilities"]["legacy_capture"] is False

    # `gatehouse providers` reports the same flags as the running gateway.
    listed = cli(["providers", "--config", str(config)], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    for line in listed.stdout.splitlines():
        fields = line.split("\t")
        flags = set(fields[4].split(",")) if len(fields) > 4 and fields[4] else set()
        http = {k for k, v in by_id[fields[0]]["capabilities"].items() if v}
        assert flags == http, f"{fields[0]}: CLI {flags} != HTTP {http}"


def test_serve_without_config_file_uses_defaults_and_creates_store_and_keys_under_data(serve, tmp_path):
    cwd = tmp_path / "empty"
    write_provider(cwd, "x")
    assert sorted(p.name for p in cwd.iterdir()) == ["Providers"]
    gw = serve(cwd)  # no --config, no gatehouse.yaml: built-in defaults, relative to the cwd
    assert gw.get("/readyz").status_code == 200
    assert [p["id"] for p in gw.get("/v1/providers").json()["providers"]] == ["x"]

    data = cwd / "data"
    assert (data / "gatehouse.sqlite3").is_file()
    sealing = sorted(data.glob("sealing-*.key"))
    signing = sorted(data.glob("signing-*.pem"))
    assert len(sealing) == 1 and len(signing) == 1, sorted(p.name for p in data.iterdir())
    assert mode(sealing[0]) == 0o600, oct(mode(sealing[0]))
    assert mode(signing[0]) == 0o600, oct(mode(signing[0]))
    # The sessions and sealed credentials too, with SQLite's companions, in a directory only the owner reads.
    assert mode(data) == 0o700, oct(mode(data))
    for store_file in sorted(data.glob("gatehouse.sqlite3*")):
        assert mode(store_file) == 0o600, (store_file.name, oct(mode(store_file)))
    assert {p.name for p in data.glob("gatehouse.sqlite3*")} >= {"gatehouse.sqlite3", "gatehouse.sqlite3-wal"}
    assert len(base64.b64decode(sealing[0].read_text().strip(), validate=True)) == 32
    assert signing[0].read_text().startswith("-----BEGIN ")
    assert not (cwd / "gatehouse.yaml").exists()


def test_serve_without_config_file_reuses_its_generated_keys_after_a_restart(serve, tmp_path):
    cwd = tmp_path / "empty"
    write_provider(cwd, "x")
    first = serve(cwd, name="first")
    jwks = first.get("/.well-known/jwks.json").json()
    first.signal(15)
    assert first.proc.wait(timeout=10) == 0
    files = {p.name: p.read_bytes() for p in (cwd / "data").glob("s*-*.*")}

    second = serve(cwd, name="second")
    assert second.get("/.well-known/jwks.json").json() == jwks
    assert {p.name: p.read_bytes() for p in (cwd / "data").glob("s*-*.*")} == files


def callback_of_login(gw, provider: str) -> str:
    """The redirect_uri the gateway sends to the provider for a browser login."""
    r = gw.get(f"/v1/auth/{provider}/login", params={"return_to": "/"})
    assert r.status_code == 302, r.text
    query = parse_qs(urlsplit(r.headers["Location"]).query)
    return query["redirect_uri"][0]


def test_serve_listen_flag_keeps_an_explicit_public_url_for_callbacks(serve, tmp_path):
    config = write_config(tmp_path, 'public_url: "https://gate.example.com"\nstore: {kind: "memory"}\n')
    write_provider(tmp_path, "x")
    gw = serve(tmp_path, ["--config", str(config)])
    assert callback_of_login(gw, "x") == "https://gate.example.com/v1/auth/x/callback"


def test_serve_listen_flag_without_public_url_sends_callbacks_to_the_listening_port(serve, tmp_path):
    cwd = tmp_path / "empty"
    write_provider(cwd, "x")
    gw = serve(cwd)
    assert callback_of_login(gw, "x") == f"http://127.0.0.1:{gw.port}/v1/auth/x/callback"


def test_serve_on_a_port_in_use_says_so_and_creates_nothing(cli, tmp_path):
    """Without a configuration the defaults would create ./data (store and keys): not when the port is taken."""
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        write_provider(tmp_path, "x")
        result = cli(["serve", "--listen", f"127.0.0.1:{port}"], cwd=tmp_path)
    assert result.returncode == 1, result
    assert result.stderr.strip().splitlines()[-1] == (
        f"cannot listen on 127.0.0.1:{port}: the address is in use "
        "(another process listens there; choose another with --listen or 'listen:')")
    assert not (tmp_path / "data").exists()


def test_metrics_listen_serves_metrics_on_its_own_address_and_not_on_the_public_one(serve, cli, tmp_path):
    port = free_port()
    config = write_config(tmp_path, f'store: {{kind: "memory"}}\nmetrics_listen: "127.0.0.1:{port}"\n')
    write_provider(tmp_path, "x")
    gw = serve(tmp_path, ["--config", str(config)])
    assert wait_until(lambda: port_is_open(port), 10)
    scraped = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5)
    assert scraped.status_code == 200 and "gatehouse_" in scraped.text
    assert requests.get(f"http://127.0.0.1:{port}/v1/providers", timeout=5).status_code == 404
    assert gw.get("/metrics").status_code == 404
    assert gw.get("/healthz").status_code == 200

    write_config(tmp_path / "bad", 'metrics_listen: "9090"\n')
    result = cli(["check"], cwd=tmp_path / "bad")
    assert result.returncode == 1 and "'metrics_listen' must be host:port" in result.stderr
