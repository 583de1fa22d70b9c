#!/usr/bin/env python3
"""Set up and run the django-oauth-toolkit interop server.

    DOT_DATA_DIR=/tmp/x DOT_REDIRECT_URIS=http://127.0.0.1:8080/v1/auth/dot/callback python run.py

Steps: migrate a fresh SQLite DB in DOT_DATA_DIR, create the user and a confidential
authorization-code Application (plain, unhashed secret; skip_authorization so there is
no consent page; no OIDC), then serve on 127.0.0.1 with a threaded WSGI server and
print one line to stdout:

    DOT_READY {"url": ..., "issuer": ..., "db": ..., "client_id": ..., ...}

Environment (all optional except as noted):
  DOT_DATA_DIR                     directory for dot.sqlite3 (default: ./.data next to this file)
  DOT_PORT                         port on 127.0.0.1 (default 0 = any free port; the line tells which)
  DOT_REDIRECT_URIS                space-separated registered redirect URIs (the gateway callback)
  DOT_ACCESS_TOKEN_EXPIRE_SECONDS  access-token lifetime (default 6)
  DOT_AUTHZ_RESPONSE_ISS           1/0: RFC 9207 `iss` in the authorization response (default 1)
  DOT_CLIENT_ID, DOT_CLIENT_SECRET client credentials (defaults below)
  DOT_OIDC_REDIRECT_URIS           space-separated redirect URIs of the OIDC Application
  DOT_OIDC_CLIENT_ID, DOT_OIDC_CLIENT_SECRET   the OIDC Application's credentials
  DOT_USERNAME, DOT_PASSWORD, DOT_EMAIL   the resource owner (alice)
  DOT_FIRST_NAME, DOT_LAST_NAME    alice's name (the OIDC `name` claim)
  DOT_TLS_CERT_FILE, DOT_TLS_KEY_FILE   PEM certificate chain and key: serve https instead of http (the URL
                                   and issuer are then https://127.0.0.1:<port>; each connection's handshake
                                   runs on its own thread, so a stalled client holds up no other)
"""
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dot_settings")

DEFAULTS = {
    "DOT_CLIENT_ID": "gatehouse-interop",
    "DOT_CLIENT_SECRET": "gatehouse-interop-secret-0123456789abcdef",
    "DOT_USERNAME": "alice",
    "DOT_PASSWORD": "alice-password-1",
    "DOT_EMAIL": "alice@example.org",
    "DOT_FIRST_NAME": "Alice",
    "DOT_LAST_NAME": "Liddell",
    "DOT_OIDC_CLIENT_ID": "gatehouse-interop-oidc",
    "DOT_OIDC_CLIENT_SECRET": "gatehouse-interop-oidc-secret-fedcba9876543210",
}


def env(name: str) -> str:
    return os.environ.get(name) or DEFAULTS[name]


def rsa_private_key_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def tls_context():
    """The server's TLS context when DOT_TLS_CERT_FILE and DOT_TLS_KEY_FILE are set, else None (plain http)."""
    cert, key = os.environ.get("DOT_TLS_CERT_FILE"), os.environ.get("DOT_TLS_KEY_FILE")
    if not cert and not key:
        return None
    if not (cert and key):
        raise SystemExit("run.py: DOT_TLS_CERT_FILE and DOT_TLS_KEY_FILE go together")
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    return context


def main() -> int:
    data_dir = Path(os.environ.get("DOT_DATA_DIR") or HERE / ".data")
    data_dir.mkdir(parents=True, exist_ok=True)
    os.environ["DOT_DATA_DIR"] = str(data_dir)
    if not os.environ.get("DOT_OIDC_RSA_PRIVATE_KEY"):
        os.environ["DOT_OIDC_RSA_PRIVATE_KEY"] = rsa_private_key_pem()  # read by dot_settings

    import django

    django.setup()

    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application
    from oauth2_provider.models import get_application_model

    call_command("migrate", interactive=False, verbosity=0)

    User = get_user_model()
    user, _ = User.objects.get_or_create(username=env("DOT_USERNAME"))
    user.email = env("DOT_EMAIL")
    user.first_name = env("DOT_FIRST_NAME")
    user.last_name = env("DOT_LAST_NAME")
    user.set_password(env("DOT_PASSWORD"))
    user.save()

    Application = get_application_model()
    redirect_uris = " ".join(os.environ.get("DOT_REDIRECT_URIS", "").split())
    app, _ = Application.objects.get_or_create(
        client_id=env("DOT_CLIENT_ID"),
        defaults={"name": "gatehouse-interop", "user": user},
    )
    app.name = "gatehouse-interop"
    app.user = user
    app.client_type = Application.CLIENT_CONFIDENTIAL
    app.authorization_grant_type = Application.GRANT_AUTHORIZATION_CODE
    app.hash_client_secret = False  # keep the secret in clear so client_secret_basic works as given
    app.client_secret = env("DOT_CLIENT_SECRET")
    app.redirect_uris = redirect_uris
    app.skip_authorization = True  # no consent page: login form -> straight back with a code
    app.algorithm = Application.NO_ALGORITHM  # plain OAuth 2.0, no OIDC ID token
    app.save()

    oidc_redirect_uris = " ".join(os.environ.get("DOT_OIDC_REDIRECT_URIS", "").split())
    oidc_app, _ = Application.objects.get_or_create(
        client_id=env("DOT_OIDC_CLIENT_ID"),
        defaults={"name": "gatehouse-interop-oidc", "user": user},
    )
    oidc_app.name = "gatehouse-interop-oidc"
    oidc_app.user = user
    oidc_app.client_type = Application.CLIENT_CONFIDENTIAL
    oidc_app.authorization_grant_type = Application.GRANT_AUTHORIZATION_CODE
    oidc_app.hash_client_secret = False
    oidc_app.client_secret = env("DOT_OIDC_CLIENT_SECRET")
    oidc_app.redirect_uris = oidc_redirect_uris
    oidc_app.skip_authorization = True
    oidc_app.algorithm = Application.RS256_ALGORITHM  # ID tokens signed with OIDC_RSA_PRIVATE_KEY
    oidc_app.save()

    port = int(os.environ.get("DOT_PORT", "0"))
    WSGIRequestHandler.protocol_version = "HTTP/1.1"
    tls = tls_context()

    class Server(ThreadedWSGIServer):
        # Django's listen backlog is 10: under the scale-out storm (200 calls through two gateways) the
        # accept queue overflowed and the peer reset connections, a fault of this fixture, not the gateway's.
        request_queue_size = 1024

        def finish_request(self, request, client_address):
            # On the connection's own thread: the TLS handshake, then the requests over it.
            if tls is None:
                return super().finish_request(request, client_address)
            import ssl

            try:
                request = tls.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return  # a client that does not trust the certificate, or went away
            try:
                super().finish_request(request, client_address)
            finally:
                request.close()

    class Handler(WSGIRequestHandler):
        def get_environ(self):
            environ = super().get_environ()
            if tls is not None:
                environ["HTTPS"] = "on"  # wsgi.url_scheme https: Django's request.is_secure()
            return environ

    httpd = Server(("127.0.0.1", port), Handler, ipv6=False)
    httpd.daemon_threads = True
    httpd.set_app(get_wsgi_application())
    port = httpd.server_address[1]
    base = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    issuer = f"{base}/o"  # DOT's issuer when mounted under /o/; pinned so it never depends on Host
    from oauth2_provider.settings import oauth2_settings

    settings.OAUTH2_PROVIDER["OIDC_ISS_ENDPOINT"] = issuer
    oauth2_settings.reload()
    ready = {
        "url": base,
        "issuer": issuer,  # RFC 8414 / RFC 9207 / OIDC issuer (all three are OIDC_ISS_ENDPOINT)
        "db": settings.DATABASES["default"]["NAME"],
        "client_id": app.client_id,
        "client_secret": env("DOT_CLIENT_SECRET"),
        "username": env("DOT_USERNAME"),
        "password": env("DOT_PASSWORD"),
        "email": env("DOT_EMAIL"),
        "name": user.get_full_name(),
        "subject": str(user.pk),  # DOT's OIDC `sub`
        "oidc_client_id": oidc_app.client_id,
        "oidc_client_secret": env("DOT_OIDC_CLIENT_SECRET"),
        "oidc_redirect_uris": oidc_redirect_uris.split(),
        "redirect_uris": redirect_uris.split(),
        "access_token_expire_seconds": settings.OAUTH2_PROVIDER["ACCESS_TOKEN_EXPIRE_SECONDS"],
        "authz_response_iss": settings.OAUTH2_PROVIDER["COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS"],
        "pid": os.getpid(),
    }
    print("DOT_READY " + json.dumps(ready), flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
