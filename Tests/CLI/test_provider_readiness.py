"""An OIDC provider whose discovery document cannot be fetched: the log says so at start-up (not only at the
first login), `/readyz` reports it as degraded, and a login there answers 503 with a log line naming why
(the connection error itself)."""
from __future__ import annotations

from conftest import free_port, q, wait_until, write_config, write_provider


def test_discovery_failure_is_logged_at_start_and_at_a_login(serve, tmp_path):
    issuer = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    config = write_config(tmp_path, 'store: {kind: "memory"}\nallowed_redirect_uris: ["http://127.0.0.1/cb"]\n')
    write_provider(tmp_path, "sso", "\n".join(['id: "sso"', 'kind: "oidc"', f"issuer: {q(issuer)}", 'client_id: "gatehouse"', ""]))
    write_provider(tmp_path, "x")
    gw = serve(tmp_path, ["--config", str(config)])
    assert wait_until(lambda: "provider not ready" in gw.log() and "sso" in gw.log(), 15), gw.log()[-2000:]
    # The line says why: the connection error under the discovery failure, not only that it failed.
    start_line = next(line for line in gw.log().splitlines() if "provider not ready" in line)
    assert "connection refused" in start_line.lower(), start_line
    ready = gw.get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "degraded"
    login = gw.get("/v1/auth/sso/login", params={
        "redirect_uri": "http://127.0.0.1/cb", "state": "s", "code_challenge": "a" * 43, "code_challenge_method": "S256"})
    assert login.status_code == 503 and login.json()["code"] == "provider_unavailable"
    assert wait_until(lambda: "login refused: provider not ready" in gw.log(), 5), gw.log()[-2000:]
    login_line = next(line for line in gw.log().splitlines() if "login refused: provider not ready" in line)
    assert "connection refused" in login_line.lower(), login_line
