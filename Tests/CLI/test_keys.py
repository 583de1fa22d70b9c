"""`gatehouse keys generate`, and a gateway that uses the generated keys."""
from __future__ import annotations

import base64
import stat

from conftest import q, write_config, write_provider


def b64url_decode(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def pem_der(text: str) -> tuple[str, bytes]:
    lines = text.strip().splitlines()
    assert lines[0].startswith("-----BEGIN ") and lines[-1].startswith("-----END "), text
    label = lines[0][len("-----BEGIN "):].rstrip("-")
    return label, base64.b64decode("".join(lines[1:-1]), validate=True)


P256_OID = bytes.fromhex("06082a8648ce3d030107")  # 1.2.840.10045.3.1.7 (prime256v1)
EC_PUBLIC_KEY_OID = bytes.fromhex("06072a8648ce3d0201")  # 1.2.840.10045.2.1


def test_keys_generate_writes_sealing_and_signing_key_files_mode_0600(cli, tmp_path):
    keys = tmp_path / "keys"
    result = cli(["keys", "generate", "--id", "k9", "--directory", str(keys)], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    sealing, signing = keys / "sealing-k9.key", keys / "signing-k9.pem"
    assert sorted(p.name for p in keys.iterdir()) == ["sealing-k9.key", "signing-k9.pem"]
    for path in (sealing, signing):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, f"{path.name}: {oct(path.stat().st_mode)}"
    assert len(base64.b64decode(sealing.read_text().strip(), validate=True)) == 32
    label, der = pem_der(signing.read_text())
    assert label in {"PRIVATE KEY", "EC PRIVATE KEY"}, label
    assert P256_OID in der, "not a P-256 key"
    if label == "PRIVATE KEY":
        assert EC_PUBLIC_KEY_OID in der, "PKCS#8 key that is not an EC key"

    # Issue 38: the directory it creates (parents included) is the owner's only, as the files are, so the deploy
    # instructions need no `install -d -m 0700` of their own.
    assert stat.S_IMODE(keys.stat().st_mode) == 0o700, oct(keys.stat().st_mode)
    nested = tmp_path / "a" / "b"
    assert cli(["keys", "generate", "--id", "k1", "--directory", str(nested)], cwd=tmp_path).returncode == 0
    assert [stat.S_IMODE(d.stat().st_mode) for d in (tmp_path / "a", nested)] == [0o700, 0o700]
    # An existing directory keeps its mode: it is the operator's.
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o750)
    shared.chmod(0o750)
    assert cli(["keys", "generate", "--id", "k1", "--directory", str(shared)], cwd=tmp_path).returncode == 0
    assert stat.S_IMODE(shared.stat().st_mode) == 0o750

    # A second run with the same id refuses to overwrite either file.
    before = {p: p.read_bytes() for p in (sealing, signing)}
    again = cli(["keys", "generate", "--id", "k9", "--directory", str(keys)], cwd=tmp_path)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "exists" in again.stderr
    assert {p: p.read_bytes() for p in (sealing, signing)} == before


def test_gateway_with_generated_keys_publishes_their_kid_in_jwks(cli, serve, tmp_path):
    keys = tmp_path / "secrets"
    assert cli(["keys", "generate", "--id", "k9", "--directory", str(keys)], cwd=tmp_path).returncode == 0
    config = write_config(tmp_path, f"""\
store: {{kind: "memory"}}
keys:
  sealing: [{{id: "k9", file: {q(str(keys / "sealing-k9.key"))}}}]
  signing: [{{id: "k9", file: {q(str(keys / "signing-k9.pem"))}}}]
""")
    write_provider(tmp_path, "x")
    gw = serve(tmp_path, ["--config", str(config)])
    r = gw.get("/.well-known/jwks.json")
    assert r.status_code == 200
    jwks = r.json()["keys"]
    assert [k["kid"] for k in jwks] == ["k9"]
    key = jwks[0]
    assert (key["kty"], key["crv"], key["alg"]) == ("EC", "P-256", "ES256")
    assert "d" not in key, "the private key is published"
    # The published point is the public half of the generated PEM (its DER ends with 04 || X || Y).
    _, der = pem_der((keys / "signing-k9.pem").read_text())
    point = b"\x04" + b64url_decode(key["x"]) + b64url_decode(key["y"])
    assert len(point) == 65 and point in der
    assert not (tmp_path / "data").exists() or not list((tmp_path / "data").glob("*.key")), \
        "keys were generated although keys are configured"


def test_gateway_resolves_key_files_relative_to_the_config_file(cli, serve, tmp_path):
    conf = tmp_path / "conf"
    assert cli(["keys", "generate", "--id", "k9", "--directory", str(conf / "secrets")], cwd=tmp_path).returncode == 0
    config = write_config(conf, """\
store: {kind: "memory"}
keys:
  sealing: [{id: "k9", file: "secrets/sealing-k9.key"}]
  signing: [{id: "k9", file: "secrets/signing-k9.pem"}]
""")
    write_provider(conf, "x")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    gw = serve(elsewhere, ["--config", str(config)])
    assert [k["kid"] for k in gw.get("/.well-known/jwks.json").json()["keys"]] == ["k9"]


def test_check_and_serve_report_bad_key_files_at_the_line_that_names_them(cli, tmp_path):
    """A missing key file, a sealing key of the wrong size and a signing key that is no PEM: `check` names all
    three with file:line, and `serve` refuses to start with the same lines (not a bare error)."""
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "short.key").write_text(base64.b64encode(b"x" * 16).decode() + "\n")
    (tmp_path / "secrets" / "signing.pem").write_text("not a pem\n")
    config = write_config(tmp_path, """\
store: {kind: "memory"}
keys:
  sealing:
    - {id: "k2", file: "secrets/short.key"}
    - {id: "k1", file: "secrets/missing.key"}
  signing:
    - {id: "s1", file: "secrets/signing.pem"}
""")
    write_provider(tmp_path, "x")
    for command in (["check"], ["serve", "--listen", "127.0.0.1:0"]):
        result = cli([*command, "--config", str(config)], cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        lines = result.stderr
        assert "gatehouse.yaml:4: key 'k2': the sealing key file" in lines and "must hold 32 bytes in base64" in lines, lines
        assert "gatehouse.yaml:5: key 'k1': cannot read the key file" in lines, lines
        assert "gatehouse.yaml:7: key 's1': the signing key file" in lines, lines


def test_serve_reports_bad_key_files_with_the_configurations_other_problems_in_one_run(cli, tmp_path):
    """Issue 38: `serve` refuses to start with the lines `check` prints: a key file that is not a key is reported in
    the same run as another problem of gatehouse.yaml, not only once that one is fixed."""
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "signing.pem").write_text("not a pem\n")
    config = write_config(tmp_path, """\
store: {kind: "memory"}
colour: blue
keys:
  signing:
    - {id: "s1", file: "secrets/signing.pem"}
""")
    write_provider(tmp_path, "x")
    for command in (["check"], ["serve", "--listen", "127.0.0.1:0"]):
        result = cli([*command, "--config", str(config)], cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        lines = [line for line in result.stderr.splitlines() if line.startswith(str(config))]
        assert len(lines) == 2, (command, result.stderr)
        assert lines[0] == f"{config}:2: unknown key 'colour'", lines
        assert lines[1].startswith(f"{config}:5: key 's1': the signing key file"), lines
