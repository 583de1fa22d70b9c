"""An OIDC provider whose discovery document cannot be fetched: the log says so at start-up (not only at the
first login), `/readyz` reports it as degraded, and a login there answers 503 with a log line naming why
(the connection error itself)."""
from __future__ import annotations

import requests

from conftest import REPO, free_port, q, wait_until, write_capture_provider, write_config, write_provider


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


# What a library's own account of a failure looks like: its type names and codes, and the build's source paths.
LIBRARY_TEXT = ["NIOSSL", "BoringSSL", "SSL_", "errno", "IOError", ".swift", str(REPO), "/.build/", "Sources/", "handshakeFailed"]


def test_untrusted_certificate_is_said_in_words_to_clients_and_in_full_in_the_log(serve, tmp_path):
    """A provider whose certificate chains to a CA the gateway does not trust: `/readyz` and the login's 503 say
    so in words; BoringSSL's codes and source paths stay in the log line that carries the technical cause."""
    from test_tls import Certificates  # a CA and leaves made with openssl
    import http.server
    import ssl
    import threading

    (tmp_path / "certs").mkdir()
    certs = Certificates(tmp_path / "certs")
    chain, key = certs.leaf("localhost")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(chain, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        issuer = f"https://127.0.0.1:{server.server_address[1]}"
        # `debug`: past the first failure of an outage, a failed call's own line (with its request id) is a debug line.
        config = write_config(tmp_path, 'store: {kind: "memory"}\nallowed_redirect_uris: ["http://127.0.0.1/cb"]\nlogging: {level: "debug"}\n')
        write_provider(tmp_path, "sso", "\n".join(['id: "sso"', 'kind: "oidc"', f"issuer: {q(issuer)}", 'client_id: "gatehouse"', ""]))
        write_capture_provider(tmp_path, issuer)
        gw = serve(tmp_path, ["--config", str(config)])
        assert wait_until(lambda: "provider not ready" in gw.log(), 15), gw.log()[-2000:]
        ready = gw.get("/readyz").json()
        (entry,) = ready["not_ready"]  # the capture provider needs no discovery
        assert "certificate is not trusted" in entry, entry
        login = gw.get("/v1/auth/sso/login", params={
            "redirect_uri": "http://127.0.0.1/cb", "state": "s", "code_challenge": "a" * 43, "code_challenge_method": "S256"})
        assert login.status_code == 503
        detail = login.json()["detail"]
        assert "certificate is not trusted" in detail, detail
        for text in [entry, detail, login.text]:
            assert not [marker for marker in LIBRARY_TEXT if marker in text], text
        # The log line of the failed call has the library's own account (the discovery document was fetched, and
        # failed, at start-up: the login reuses that answer).
        cause = next(line for line in gw.log().splitlines() if "provider unreachable" in line)
        assert "warning" in cause and "CERTIFICATE_VERIFY_FAILED" in cause, cause
        # A call made for a request (a capture provider's probe of a posted token) logs its cause with that
        # request's id, the one its problem carries.
        posted = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": "captured"}, timeout=10)
        assert posted.status_code == 503, posted.text
        problem = posted.json()
        assert not [marker for marker in LIBRARY_TEXT if marker in posted.text], posted.text
        assert wait_until(lambda: any("provider call failed" in line and problem["request_id"] in line
                                      for line in gw.log().splitlines()), 5), gw.log()[-3000:]
        line = next(line for line in gw.log().splitlines() if "provider call failed" in line and problem["request_id"] in line)
        assert "CERTIFICATE_VERIFY_FAILED" in line and "/probe" in line, line
        # One host, one outage: its warning was written once, not once per failed call.
        assert sum("provider unreachable" in line for line in gw.log().splitlines()) == 1
    finally:
        server.shutdown()
