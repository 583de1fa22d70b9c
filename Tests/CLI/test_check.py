"""`gatehouse check`: a valid configuration passes; every error is `file:line: message`."""
from __future__ import annotations

import re
import shutil
import time

import pytest
import requests

from conftest import REPO, UNSET_VAR, free_port, provider_yaml, q, write_config, write_provider

ERROR_LINE = re.compile(r"^(?P<file>[^:\n]+):(?P<line>[1-9][0-9]*): (?P<message>.+)$")

VALID_CONFIG = """\
# a small but complete gatehouse.yaml
listen: "127.0.0.1:18080"
public_url: "http://127.0.0.1:18080"
providers_dir: "./Providers"
store:
  kind: "memory"
sessions:
  idle_timeout_seconds: 600
refresh:
  skew_seconds: 30
backend:
  url: "http://127.0.0.1:9000"
  audience: "backend"
allowed_redirect_uris:
  - "com.example.app:/callback"
logging:
  level: "info"
  format: "text"
"""


def error_lines(stderr: str) -> list[tuple[str, int, str]]:
    """Every stderr line, parsed as `file:line: message`; a line of another form fails the test."""
    parsed = []
    for line in stderr.splitlines():
        if not line.strip():
            continue
        m = ERROR_LINE.match(line)
        assert m, f"stderr line is not `file:line: message`: {line!r}\n--- stderr ---\n{stderr}"
        parsed.append((m["file"], int(m["line"]), m["message"]))
    return parsed


def assert_check_fails(result, expected: list[tuple[str, int, list[str]]]) -> None:
    """`expected`: (file, line, words the message must contain), in any order; nothing else reported."""
    assert result.returncode == 1, f"exit {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    assert "configuration OK" not in result.stdout
    got = error_lines(result.stderr)
    assert sorted((f, n) for f, n, _ in got) == sorted((str(f), n) for f, n, _ in expected), result.stderr
    for file, line, words in expected:
        message = next(m for f, n, m in got if f == str(file) and n == line)
        for word in words:
            assert word in message, f"{file}:{line}: message {message!r} lacks {word!r}"


def line_of(path, needle: str) -> int:
    """1-based number of the first line of `path` that starts with `needle`."""
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.lstrip().startswith(needle):
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def valid_tree(root):
    config = write_config(root, VALID_CONFIG)
    write_provider(root, "x", userinfo=True, revocation=True, extra=f'client_secret: "${{X_CLIENT_SECRET}}"\n')
    return config


def test_check_valid_configuration_exits_0_and_prints_configuration_ok(cli, tmp_path):
    config = valid_tree(tmp_path)
    result = cli(["check", "--config", str(config)], cwd=tmp_path, env={"X_CLIENT_SECRET": "s3cret"})
    assert result.returncode == 0, result.stderr
    assert "configuration OK" in result.stdout
    assert result.stderr == ""
    assert "s3cret" not in result.stdout  # secrets are never printed


def test_check_reads_gatehouse_yaml_from_the_working_directory_by_default(cli, tmp_path):
    valid_tree(tmp_path)
    result = cli(["check"], cwd=tmp_path, env={"X_CLIENT_SECRET": "s3cret"})
    assert result.returncode == 0, result.stderr
    assert "configuration OK" in result.stdout
    assert "1 provider" in result.stdout

    # The same directory with a typo: the default file really is read, and named as found.
    (tmp_path / "gatehouse.yaml").write_text(VALID_CONFIG + "lisen: \"127.0.0.1:1\"\n")
    result = cli(["check"], cwd=tmp_path, env={"X_CLIENT_SECRET": "s3cret"})
    assert_check_fails(result, [("gatehouse.yaml", VALID_CONFIG.count("\n") + 1, ["'lisen'"])])


def test_check_unknown_top_level_key_is_reported_at_its_line(cli, tmp_path):
    config = write_config(tmp_path, VALID_CONFIG.replace('providers_dir: "./Providers"\n',
                                                         'providers_dir: "./Providers"\nlisten_adress: "x"\n'))
    write_provider(tmp_path, "x")
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert_check_fails(result, [(config, line_of(config, "listen_adress"), ["unknown key", "listen_adress"])])


def test_check_unknown_nested_key_is_reported_with_its_dotted_name(cli, tmp_path):
    config = write_config(tmp_path, VALID_CONFIG.replace('  kind: "memory"\n', '  kind: "memory"\n  pth: "x.db"\n'))
    write_provider(tmp_path, "x")
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert_check_fails(result, [(config, line_of(config, "pth:"), ["unknown key", "store.pth"])])


def test_check_wrong_type_is_reported_at_the_line_of_the_key(cli, tmp_path):
    config = write_config(tmp_path, VALID_CONFIG.replace("skew_seconds: 30", 'skew_seconds: "soon"')
                          .replace('  audience: "backend"', '  audience: "backend"\n  identity_headers: "maybe"'))
    write_provider(tmp_path, "x")
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert_check_fails(result, [
        (config, line_of(config, "skew_seconds"), ["refresh.skew_seconds"]),
        (config, line_of(config, "identity_headers"), ["backend.identity_headers"]),
    ])


def test_check_sequence_for_a_number_says_a_whole_number_is_expected(cli, tmp_path):
    config = write_config(tmp_path, VALID_CONFIG + "limits: {max_body_bytes: [1]}\n")
    write_provider(tmp_path, "x")
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert_check_fails(result, [(config, line_of(config, "limits:"), ["limits.max_body_bytes", "whole number"])])


def test_check_unknown_provider_kind_is_reported_at_the_kind_line(cli, tmp_path):
    config = write_config(tmp_path, VALID_CONFIG)
    bad = write_provider(tmp_path, "y", 'id: "y"\nname: "Y"\nkind: "nosuchkind"\n')
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert_check_fails(result, [(bad, 3, ["nosuchkind"])])


def test_check_provider_id_differing_from_file_name_is_reported_at_the_id_line(cli, tmp_path):
    config = write_config(tmp_path, VALID_CONFIG)
    bad = write_provider(tmp_path, "z", "# provider z\n" + provider_yaml("zz"))
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert_check_fails(result, [(bad, 2, ["'id'", "'z'", "zz"])])


def test_check_unknown_key_in_provider_file_is_reported_at_its_line(cli, tmp_path):
    config = write_config(tmp_path, VALID_CONFIG)
    bad = write_provider(tmp_path, "w", provider_yaml("w") + "colour: blue\n")
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert_check_fails(result, [(bad, line_of(bad, "colour"), ["unknown key", "colour"])])


def test_check_unset_environment_variable_in_secret_is_reported_at_the_secret_line(cli, tmp_path):
    config = write_config(tmp_path, VALID_CONFIG)
    bad = write_provider(tmp_path, "x", provider_yaml("x") + f'client_secret: "${{{UNSET_VAR}}}"\n')
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert_check_fails(result, [(bad, line_of(bad, "client_secret"), ["client_secret", UNSET_VAR])])


def test_check_reports_errors_of_several_provider_files_in_one_run(cli, tmp_path):
    config = write_config(tmp_path, VALID_CONFIG)
    write_provider(tmp_path, "ok")
    kind = write_provider(tmp_path, "a", 'id: "a"\nkind: "nosuchkind"\n')
    key = write_provider(tmp_path, "b", provider_yaml("b") + "colour: blue\n")
    secret = write_provider(tmp_path, "c", provider_yaml("c") + f'client_secret: "${{{UNSET_VAR}}}"\n')
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert_check_fails(result, [
        (kind, 2, ["nosuchkind"]),
        (key, line_of(key, "colour"), ["colour"]),
        (secret, line_of(secret, "client_secret"), [UNSET_VAR]),
    ])


def test_check_reports_errors_of_gatehouse_yaml_and_provider_file_in_one_run(cli, tmp_path):
    config = write_config(tmp_path, VALID_CONFIG.replace('  kind: "memory"\n', '  kind: "memory"\n  bogus_key: 1\n'))
    bad = write_provider(tmp_path, "w", provider_yaml("w") + "colour: blue\n")
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert_check_fails(result, [
        (config, line_of(config, "bogus_key"), ["store.bogus_key"]),
        (bad, line_of(bad, "colour"), ["colour"]),
    ])


HTTPS_CONFIG = VALID_CONFIG.replace('public_url: "http://127.0.0.1:18080"', 'public_url: "https://gate.example.test"')


def insecure_provider(pid: str, extra: str = "") -> str:
    """An oauth2 provider whose token and userinfo endpoints are http on a non-loopback host."""
    return "\n".join([
        f"id: {q(pid)}",
        'kind: "oauth2"',
        'authorization_endpoint: "http://idp.example.test/authorize"',  # the browser's, not checked
        'token_endpoint: "http://idp.example.test/token"',
        'userinfo_endpoint: "http://idp.example.test/userinfo"',
        'revocation_endpoint: "https://idp.example.test/revoke"',
        'client_id: "c"',
        'client_secret: "${X_CLIENT_SECRET}"',
    ]) + "\n" + extra


def test_check_refuses_http_secret_endpoints_with_an_https_public_url(cli, tmp_path):
    """Item 7 of issue 15: the token and userinfo endpoints would carry the secret, the code and tokens in clear."""
    config = write_config(tmp_path, HTTPS_CONFIG)
    bad = write_provider(tmp_path, "idp", insecure_provider("idp"))
    result = cli(["check", "--config", str(config)], cwd=tmp_path, env={"X_CLIENT_SECRET": "s3cret"})
    assert_check_fails(result, [
        (bad, line_of(bad, "token_endpoint"), ["'token_endpoint' must be https", "http://idp.example.test/token", "allow_insecure_http"]),
        (bad, line_of(bad, "userinfo_endpoint"), ["'userinfo_endpoint' must be https", "http://idp.example.test/userinfo"]),
    ])
    assert "s3cret" not in result.stderr


def test_check_accepts_http_endpoints_on_loopback_or_with_allow_insecure_http(cli, tmp_path):
    config = write_config(tmp_path, HTTPS_CONFIG)
    write_provider(tmp_path, "allowed", insecure_provider("allowed", "allow_insecure_http: true\n"))
    write_provider(tmp_path, "local", insecure_provider("local").replace("idp.example.test", "127.0.0.1:9"))
    result = cli(["check", "--config", str(config)], cwd=tmp_path, env={"X_CLIENT_SECRET": "s3cret"})
    assert result.returncode == 0, result.stderr
    assert "configuration OK" in result.stdout


def test_serve_refuses_to_start_with_an_invalid_provider_file(cli, tmp_path):
    config = write_config(tmp_path, VALID_CONFIG)
    bad = write_provider(tmp_path, "w", provider_yaml("w") + "colour: blue\n")
    result = cli(["serve", "--config", str(config), "--listen", f"127.0.0.1:{free_port()}"], cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert f"{bad}:{line_of(bad, 'colour')}: " in result.stderr


def test_serve_refuses_a_listen_flag_that_is_not_host_port(cli, tmp_path):
    config = write_config(tmp_path, VALID_CONFIG)
    result = cli(["serve", "--config", str(config), "--listen", "no-port-here"], cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "--listen" in result.stderr


SECRET_VARIABLES = ("SPID_CLIENT_ID", "SPID_CLIENT_SECRET", "OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET", "ACS_SIGNING_KEY")


def test_a_fresh_clone_checks_clean_and_serves_without_any_environment(cli, serve, tmp_path, monkeypatch):
    """The repository's own Providers/, no variables set: the examples that need secrets are `optional: true`
    and skipped with a warning naming what is missing; the others load, and the gateway is ready."""
    for variable in SECRET_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    shutil.copytree(REPO / "Providers", tmp_path / "Providers")
    files = len(list((tmp_path / "Providers").glob("*.yaml")))

    checked = cli(["check"], cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert checked.stderr.count("provider skipped (optional: true)") == 3, checked.stderr
    for variable in SECRET_VARIABLES:
        assert variable in checked.stderr
    assert f"{files - 3} provider(s)" in checked.stdout

    gateway = serve(tmp_path)
    ready = gateway.get("/readyz")
    assert ready.status_code == 200 and ready.json()["providers"] == files - 3
    assert not {"spid", "oidc", "azure-acs"} & set(gateway.provider_ids())
    assert "provider skipped (optional: true)" in gateway.log()


def test_config_errors_teach_misspelled_keys_numbers_for_strings_and_every_unknown_key(cli, tmp_path):
    """Issue 17 item 4: a misspelled required key is named as the near miss it is, `client_id: 42` is a number
    (quote it), and several unknown keys of one section are all reported, each with the key it likely meant."""
    write_config(tmp_path, 'listn: "127.0.0.1:8080"\nsessions:\n  idle_timeout_secnds: 3600\n  absolute_lifetime_second: 7200\n')
    write_provider(tmp_path, "typo", "\n".join([
        'id: "typo"', 'kind: "oauth2"', 'authorization_endpoint: "https://idp.example.test/authorize"',
        'tokn_endpoint: "https://idp.example.test/token"', 'client_id: "c"', "",
    ]))
    write_provider(tmp_path, "number", "\n".join([
        'id: "number"', 'kind: "oauth2"', 'authorization_endpoint: "https://idp.example.test/authorize"',
        'token_endpoint: "https://idp.example.test/token"', "client_id: 42", "",
    ]))
    result = cli(["check"], cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert "gatehouse.yaml:1: unknown key 'listn': did you mean 'listen'?" in lines
    assert "gatehouse.yaml:3: unknown key 'sessions.idle_timeout_secnds': did you mean 'sessions.idle_timeout_seconds'?" in lines
    assert "gatehouse.yaml:4: unknown key 'sessions.absolute_lifetime_second': did you mean 'sessions.absolute_lifetime_seconds'?" in lines
    assert any(line.endswith("typo.yaml:4: 'token_endpoint' is required; 'tokn_endpoint' is not a known key: did you mean 'token_endpoint'?")
               for line in lines), lines
    assert any(line.endswith("number.yaml:5: 'client_id' must be a string, and 42 is a number: write it quoted, \"42\"") for line in lines), lines


def test_an_empty_providers_dir_is_one_error_not_the_config_read_as_a_provider(cli, tmp_path):
    write_config(tmp_path, 'providers_dir: ""\n')
    result = cli(["check"], cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == ["gatehouse.yaml:1: 'providers_dir' must not be empty"], result.stderr


def test_check_refuses_an_inline_client_secret_without_printing_it(cli, tmp_path):
    """Issue 17: a secret is never written in a provider file; the refusal names the two forms to use and
    does not repeat the value (which would put it in logs)."""
    config = write_config(tmp_path, VALID_CONFIG)
    bad = write_provider(tmp_path, "x", provider_yaml("x") + 'client_secret: "s3cret-inline-value"\n')
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    line = line_of(bad, "client_secret")
    assert result.stderr.splitlines() == [
        f"{bad}:{line}: 'client_secret' must not be written inline: "
        'use client_secret: "${ENV_VAR}" or client_secret_file: path'
    ], result.stderr
    assert_check_fails(result, [(bad, line, ["client_secret"])])
    assert "s3cret-inline-value" not in result.stdout + result.stderr

    # The two forms it names are accepted.
    write_provider(tmp_path, "x", provider_yaml("x") + 'client_secret: "${X_CLIENT_SECRET}"\n')
    result = cli(["check", "--config", str(config)], cwd=tmp_path, env={"X_CLIENT_SECRET": "s3cret-inline-value"})
    assert result.returncode == 0, result.stderr
    (tmp_path / "Providers" / "x-secret").write_text("s3cret-inline-value\n")
    write_provider(tmp_path, "x", provider_yaml("x") + 'client_secret_file: "x-secret"\n')
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "s3cret-inline-value" not in result.stdout + result.stderr


def test_check_refuses_a_postgres_url_with_an_inline_password(cli, tmp_path):
    config = write_config(tmp_path, 'store:\n  kind: "postgres"\n  url: "postgres://gate:pg-inline-pw@db.internal/gh"\n')
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert_check_fails(result, [(config, 3, ["'store.url' must not be written inline with a password", "url_file"])])
    assert "pg-inline-pw" not in result.stdout + result.stderr


def test_check_reports_every_problem_of_a_provider_file_in_one_run(cli, tmp_path):
    """Issue 17: a misspelled key, a missing required key and a number for a string in one file are printed
    together, each at its line and in line order, with the other files' problems, instead of one per run."""
    config = write_config(tmp_path, VALID_CONFIG)
    bad = write_provider(tmp_path, "many", "\n".join([
        'id: "many"',
        'kind: "oauth2"',
        'authorization_endpoint: "https://idp.example.test/authorize"',
        'userinfo_endpont: "https://idp.example.test/userinfo"',
        "client_id: 42",
        'scopes: ["read"]',
        "",
    ]))
    other = write_provider(tmp_path, "other", provider_yaml("other") + "colour: blue\n")
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert_check_fails(result, [
        (bad, 1, ["'token_endpoint' is required"]),
        (bad, line_of(bad, "userinfo_endpont"), ["unknown key 'userinfo_endpont'", "did you mean 'userinfo_endpoint'?"]),
        (bad, line_of(bad, "client_id"), ["'client_id' must be a string", "42 is a number"]),
        (other, line_of(other, "colour"), ["unknown key 'colour'"]),
    ])
    lines = [(f, n) for f, n, _ in error_lines(result.stderr)]
    assert lines == sorted(lines, key=lambda entry: (entry[0], entry[1])), "each file's problems are printed in line order"


def test_check_reports_a_duplicate_key_and_bad_key_files_with_the_other_problems_in_one_run(cli, tmp_path):
    """Issue 38: a repeated key is one problem among the file's others (the rest of the file is still read), and
    the key files `keys:` names are read even when other sections have problems: one run, every line."""
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "signing.pem").write_text("not a pem\n")
    config = write_config(tmp_path, """\
listen: "127.0.0.1:18080"
store:
  kind: "memory"
  kind: "sqlite"
sessions:
  idle_timeout_seconds: "soon"
keys:
  signing:
    - {id: "s1", file: "secrets/signing.pem"}
  sealing:
    - {id: "k1", file: "secrets/missing.key"}
colour: blue
""")
    provider = write_provider(tmp_path, "x", provider_yaml("x") + 'scopes: ["write"]\nflavour: 1\n')
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert_check_fails(result, [
        (config, 4, ["duplicate key 'store.kind'"]),
        (config, 6, ["'sessions.idle_timeout_seconds' must be a whole number"]),
        (config, 9, ["key 's1'", "P-256"]),
        (config, 11, ["key 'k1'", "cannot read the key file"]),
        (config, 12, ["unknown key 'colour'"]),
        (provider, line_of(provider, "scopes") + 4, ["duplicate key 'scopes'"]),
        (provider, line_of(provider, "flavour"), ["unknown key 'flavour'"]),
    ])


def test_check_warns_when_an_https_public_url_has_a_cookie_that_is_not_secure(cli, tmp_path):
    """Issue 38: valid (the gateway may sit behind a proxy that terminates TLS), but a cookie browsers would also
    send over plain http: a warning at the line that sets it, and the check still passes."""
    config = write_config(tmp_path, HTTPS_CONFIG.replace(
        "sessions:\n", 'sessions:\n  cookie:\n    name: "gatehouse_session"\n    secure: false\n'))
    write_provider(tmp_path, "x", userinfo=True, revocation=True)
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "configuration OK" in result.stdout
    assert result.stderr.splitlines() == [
        f"warning: {config}:{line_of(config, 'secure:')}: 'sessions.cookie.secure' is false while 'public_url' is https "
        "(https://gate.example.test): browsers would also send the session cookie over plain http; "
        'set it to true (with the cookie name "__Host-gatehouse_session")'
    ], result.stderr
    plain = write_config(tmp_path, VALID_CONFIG.replace(
        "sessions:\n", 'sessions:\n  cookie:\n    name: "gatehouse_session"\n    secure: false\n'))
    result = cli(["check", "--config", str(plain)], cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_check_warns_of_a_provider_whose_sign_out_cannot_revoke(cli, tmp_path):
    """Issue 38: a sign-out that cannot revoke leaves the provider's tokens valid; the files tell for oauth2 (and spid)."""
    config = write_config(tmp_path, VALID_CONFIG)
    write_provider(tmp_path, "x", userinfo=True)
    write_provider(tmp_path, "y", userinfo=True, revocation=True)
    result = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "warning: provider 'x' (oauth2) has no revocation_endpoint: signing out ends the gateway's session, but the "
        "provider's tokens stay valid until they expire; set revocation_endpoint in its file"
    ], result.stderr


def test_serve_says_when_an_oidc_providers_discovery_names_no_revocation_endpoint(serve, tmp_path):
    """An `oidc` file may leave the endpoint to discovery: only a started gateway can tell, once it has the document
    (at `notice`: many providers have none, and a warning could not be silenced)."""
    from oidc_provider import OpenIDProvider, write_provider_file

    provider = OpenIDProvider()
    try:
        for named in (False, True):
            root = tmp_path / f"named-{named}"
            path = write_provider_file(root / "Providers", "idp", provider, backchannel_logout=None)
            if named:
                path.write_text(path.read_text() + f'revocation_endpoint: "{provider.url}/revoke"\n')
            gw = serve(root, ["--config", str(write_config(root, 'store: {kind: "memory"}\n'))])
            deadline = time.time() + 10
            while time.time() < deadline and requests.get(gw.url + "/readyz", timeout=5).status_code != 200:
                time.sleep(0.1)
            time.sleep(0.5)
            logs = gw.stdout.read_text() + gw.stderr.read_text()
            lines = [line for line in logs.splitlines() if "provider 'idp' (oidc) has no revocation_endpoint" in line]
            assert bool(lines) != named, logs[-2000:]
            assert all("notice" in line and "warning" not in line for line in lines), lines
    finally:
        provider.close()
