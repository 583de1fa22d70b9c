#!/usr/bin/env python3
"""The benchmark's identity provider on loopback, for the provider-token rows of bench/run.sh.

Usage: issuer.py PORT TLS_PORT OUT_DIR AUDIENCE CLIENT_ID CLIENT_SECRET

Serves, on 127.0.0.1:PORT over http and on 127.0.0.1:TLS_PORT over https (HTTP/1.1 keep-alive, a thread per
connection; the same issuer, keys and tokens on both):
- GET  /.well-known/openid-configuration  the discovery document (issuer http://127.0.0.1:PORT);
- GET  /jwks                               one ES256 public key (kid bench-es256), made at start-up;
- POST /introspect                         RFC 7662 introspection, client_secret_basic as CLIENT_ID:CLIENT_SECRET;
                                           the one opaque token is active, anything else is not;
- GET  /calls                              how often each of the above was asked, per port (JSON: {"http": {…},
                                           "https": {…}}), for the report: the gateway asks on the http port,
                                           Apache on the https one.

Before it serves it writes OUT_DIR/jwt.txt (an RFC 9068 access token, `typ: at+jwt`, ES256, valid for a year),
OUT_DIR/opaque.txt (a random opaque token; the same identity and audience stand behind both) and
OUT_DIR/issuer-cert.pem, the self-signed certificate (for 127.0.0.1) of the https port: mod_auth_openidc takes
only https JWKS and introspection URLs and trusts that file (OIDCCABundlePath). The gateway, which takes http on
loopback, uses the http port.
Needs `cryptography` (Debian: python3-cryptography); the JWT is made here, without PyJWT.
"""
import base64
import datetime
import ipaddress
import json
import os
import secrets
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

KID = "bench-es256"
LIFETIME = 365 * 24 * 3600


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def es256_jwt(key: ec.EllipticCurvePrivateKey, header: dict, claims: dict) -> str:
    signing_input = b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + \
        b64url(json.dumps(claims, separators=(",", ":")).encode())
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def self_signed(out_dir: str) -> tuple[str, str]:
    """A P-256 key and a self-signed certificate for 127.0.0.1 (also a CA, so that it can be the trust anchor)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gatehouse bench issuer")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = os.path.join(out_dir, "issuer-cert.pem"), os.path.join(out_dir, "issuer-key.pem")
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


def main():
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    port, tls_port, out_dir, audience, client_id, client_secret = int(sys.argv[1]), int(sys.argv[2]), *sys.argv[3:]
    os.umask(0o077)  # its files (the signing key, the tokens) are for this user only
    url = f"http://127.0.0.1:{port}"
    key = ec.generate_private_key(ec.SECP256R1())
    numbers = key.public_key().public_numbers()
    jwk = {"kty": "EC", "crv": "P-256", "kid": KID, "alg": "ES256", "use": "sig",
           "x": b64url(numbers.x.to_bytes(32, "big")), "y": b64url(numbers.y.to_bytes(32, "big"))}

    now = int(time.time())
    claims = {"iss": url, "sub": "svc-bench", "aud": [audience], "exp": now + LIFETIME, "iat": now,
              "scope": "api", "client_id": "bench-job", "jti": secrets.token_hex(8)}
    access_jwt = es256_jwt(key, {"alg": "ES256", "typ": "at+jwt", "kid": KID}, claims)
    opaque = "bench-opaque-" + secrets.token_urlsafe(32)
    introspection = {"active": True, "token_type": "Bearer", **{k: v for k, v in claims.items() if k != "jti"}}
    expected_auth = "Basic " + base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()

    discovery = json.dumps({
        "issuer": url,
        "authorization_endpoint": url + "/authorize",
        "token_endpoint": url + "/token",
        "jwks_uri": url + "/jwks",
        "introspection_endpoint": url + "/introspect",
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256"],
    }).encode()
    jwks = json.dumps({"keys": [jwk]}).encode()
    calls = {scheme: {"discovery": 0, "jwks": 0, "introspect": 0, "introspect_active": 0} for scheme in ("http", "https")}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def count(self, name: str):
            with lock:
                calls["https" if self.server.server_address[1] == tls_port else "http"][name] += 1

        def send_json(self, status: int, body: bytes):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/.well-known/openid-configuration":
                self.count("discovery")
                self.send_json(200, discovery)
            elif self.path == "/jwks":
                self.count("jwks")
                self.send_json(200, jwks)
            elif self.path == "/calls":
                with lock:
                    body = json.dumps(calls).encode()
                self.send_json(200, body)
            else:
                self.send_json(404, b"{}")

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path != "/introspect":
                self.send_json(404, b"{}")
                return
            self.count("introspect")
            if self.headers.get("Authorization") != expected_auth:
                self.send_json(401, b'{"error": "invalid_client"}')
                return
            form = urllib.parse.parse_qs(body.decode())
            if form.get("token") == [opaque]:
                self.count("introspect_active")
                self.send_json(200, json.dumps(introspection).encode())
            else:
                self.send_json(200, b'{"active": false}')

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    tls_server = ThreadingHTTPServer(("127.0.0.1", tls_port), Handler)
    tls_server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*self_signed(out_dir))
    tls_server.socket = context.wrap_socket(tls_server.socket, server_side=True)
    threading.Thread(target=tls_server.serve_forever, daemon=True).start()
    for name, value in (("jwt.txt", access_jwt), ("opaque.txt", opaque)):
        path = os.path.join(out_dir, name)
        with open(path + ".new", "w") as f:
            f.write(value + "\n")
        os.replace(path + ".new", path)
    server.serve_forever()


if __name__ == "__main__":
    main()
