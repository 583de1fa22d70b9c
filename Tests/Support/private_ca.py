"""A private certificate authority for the tests of outbound trust (`outbound_tls`, `tls.ca_file`, mutual TLS,
the CLI's `--ca-file`): made with `openssl` on this machine in a directory of the test's, and what it signs.

    ca = PrivateCA(tmp_path / "ca", "Corp Test Root")
    chain, key = ca.leaf("dot", sans="IP:127.0.0.1,DNS:localhost")
    context = ca.server_context(chain, key, client_ca=ca.certificate)   # requires a client certificate
"""
from __future__ import annotations

import datetime
import shutil
import ssl
import subprocess
from pathlib import Path


def openssl(*args: str, cwd: Path) -> None:
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"openssl {' '.join(args)}:\n{done.stderr}"


class PrivateCA:
    """A CA (`certificate`, its key) in `directory`; `leaf` signs server and client certificates."""

    def __init__(self, directory: Path, name: str):
        assert shutil.which("openssl"), "openssl is not installed (scripts/test-setup installs it)"
        directory.mkdir(parents=True, exist_ok=True)
        self.dir = directory
        self.name = name
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
                "-out", "ca.pem", "-days", "30", "-subj", f"/CN={name}",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=directory)
        self.certificate = directory / "ca.pem"

    def leaf(self, name: str, sans: str = "IP:127.0.0.1,DNS:localhost") -> tuple[Path, Path]:
        """A certificate whose subject CN is `name`, for the names `sans`, signed by this CA: (chain, key)."""
        (self.dir / f"{name}.ext").write_text(f"subjectAltName={sans}\nbasicConstraints=CA:FALSE\n")
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", f"{name}.key",
                "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=self.dir)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.crt", "-days", "20", "-extfile", f"{name}.ext", cwd=self.dir)
        chain = self.dir / f"{name}.pem"
        chain.write_text((self.dir / f"{name}.crt").read_text() + self.certificate.read_text())
        return chain, self.dir / f"{name}.key"

    def lone_key(self, name: str) -> Path:
        """A key of no certificate."""
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", f"{name}.key", cwd=self.dir)
        return self.dir / f"{name}.key"

    def expired(self, name: str) -> tuple[Path, Path]:
        """A self-signed certificate that expired yesterday, and its key (openssl cannot write a past date)."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        not_after = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1)
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        certificate = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
                       .serial_number(x509.random_serial_number())
                       .not_valid_before(not_after - datetime.timedelta(days=60)).not_valid_after(not_after)
                       .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                       .sign(key, hashes.SHA256()))
        chain, key_file = self.dir / f"{name}.pem", self.dir / f"{name}.key"
        chain.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        return chain, key_file

    @staticmethod
    def server_context(chain: Path, key: Path, client_ca: Path | None = None) -> ssl.SSLContext:
        """A server's TLS context; with `client_ca`, a client certificate that CA signed is required."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(chain), str(key))
        if client_ca is not None:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(cafile=str(client_ca))
        return context
