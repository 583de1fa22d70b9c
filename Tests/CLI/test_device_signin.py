"""Device sign-in (RFC 8628's shape) against `gatehouse serve`, over real sockets, with an OpenID provider run here
(Tests/Support/oidc_provider.py) and the person's browser played by `requests`:

- `POST /v1/device/authorize` → device code and `XXXX-XXXX` user code; the page `GET /v1/device` takes the code
  (any case, without the dash), shows the client's address and time, and its confirmation (a POST with the
  gateway's Origin and the page's CSRF token, bound to the browser's cookie) starts the provider login, which ends
  with a page and no session cookie;
- `POST /v1/device/token`: `authorization_pending`, `slow_down` (and the interval grows by 5 s), `access_denied`,
  `expired_token`, `invalid_grant` for an unknown or used code, `unsupported_grant_type`, `invalid_request`; on
  approval 201 with the body of `POST /v1/session`, once;
- at most 5 wrong codes per browser per minute; a forged confirmation (other origin, no Origin, another browser's
  token) is refused; a DPoP-bound device session answers only its key;
- `gatehouse login --device` as the device, then `gatehouse whoami` with the stored session;
- `device:` in gatehouse.yaml: unknown keys and bad values are `file:line` errors; `enabled: false` is 404.

The Chromium version of the person's side: Tests/Browser/test_device_signin.py.
"""
from __future__ import annotations

import base64
import json
import re
import subprocess
import threading
import time

import pytest
import requests

from conftest import clean_env, free_port, q, write_config
from device_signin import GRANT, TIMEOUT, Person, authorize, error_of, poll
from dpop_key import DPoPKey
from oidc_provider import OpenIDProvider, write_provider_file


@pytest.fixture
def provider():
    server = OpenIDProvider()
    yield server
    server.close()


def start(serve, tmp_path, provider, device: str = "{interval_seconds: 1}", extra: str = ""):
    port = free_port()
    config = write_config(tmp_path, "\n".join([
        f"public_url: {q(f'http://127.0.0.1:{port}')}",
        'store: {kind: "sqlite", path: "data/g.sqlite3"}',
        f"device: {device}",
        # Plain http: the browser here (requests) sends no `Secure` cookie, as Chromium would on loopback.
        'sessions: {cookie: {secure: false, name: "gatehouse_session"}}',
        extra,
        "",
    ]))
    write_provider_file(tmp_path / "Providers", "idp", provider, backchannel_logout=None)
    return serve(tmp_path, ["--config", str(config)], port=port)


@pytest.fixture
def gateway(serve, tmp_path, provider):
    return start(serve, tmp_path, provider)


# --- the tests ---------------------------------------------------------------------------------

def test_a_device_signs_in_once_the_person_has_confirmed_and_signed_in(gateway, provider):
    provider.next_login = {"sub": "dev-alice", "sid": "sid-d"}
    answer = authorize(gateway)
    assert set(answer) == {"device_code", "user_code", "verification_uri", "verification_uri_complete", "expires_in", "interval"}
    assert re.fullmatch(r"[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}", answer["user_code"]), answer
    assert answer["verification_uri"] == gateway.url + "/v1/device"
    assert answer["verification_uri_complete"] == gateway.url + "/v1/device?user_code=" + answer["user_code"]
    assert answer["expires_in"] == 600 and answer["interval"] == 1
    assert len(base64.urlsafe_b64decode(answer["device_code"] + "=" * (-len(answer["device_code"]) % 4))) == 32

    assert error_of(poll(gateway, answer["device_code"])) == "authorization_pending"

    person = Person(gateway)
    # Lower case, no dash, spaces: the same code.
    typed = " " + answer["user_code"].lower().replace("-", "") + " "
    page = person.type_code(typed)
    assert page.status_code == 200, page.text
    assert answer["user_code"] in page.text and "127.0.0.1" in page.text
    assert re.search(r'id="requested-at">\d{4}-\d\d-\d\dT', page.text), page.text
    done = person.sign_in(answer["user_code"])
    assert done.status_code == 200, done.text
    assert "Return to your terminal" in done.text
    assert not any(c.name.endswith("gatehouse_session") for c in person.browser.cookies), list(person.browser.cookies)
    assert "gatehouse_session" not in done.headers.get("Set-Cookie", "")

    time.sleep(1.1)
    granted = poll(gateway, answer["device_code"])
    assert granted.status_code == 201, granted.text
    grant = granted.json()
    assert set(grant) == {"session_token", "token_type", "expires_in", "session"}, grant
    assert grant["token_type"] == "Bearer" and grant["session"]["subject"] == "dev-alice"
    assert grant["session"]["provider"] == "idp"
    view = requests.get(gateway.url + "/v1/session", headers={"Authorization": "Bearer " + grant["session_token"]}, timeout=TIMEOUT)
    assert view.status_code == 200 and view.json()["subject"] == "dev-alice", view.text

    # The device code works once; the user code is spent too.
    time.sleep(1.1)
    assert error_of(poll(gateway, answer["device_code"])) == "invalid_grant"
    assert person.type_code(answer["user_code"]).status_code == 400
    # The device routes are in the access log and the metrics like every other route.
    metrics = gateway.get("/metrics").text
    assert 'route="/v1/device/token"' in metrics and 'route="/v1/device/authorize"' in metrics, metrics[:3000]
    assert "/v1/device/token" in gateway.log()
    assert answer["device_code"] not in gateway.log() and grant["session_token"] not in gateway.log()


def test_polling_faster_than_the_interval_is_slow_down_and_the_interval_grows_by_5_seconds(gateway):
    code = authorize(gateway)["device_code"]
    assert error_of(poll(gateway, code)) == "authorization_pending"
    assert error_of(poll(gateway, code)) == "slow_down"
    # 2 s is past the configured interval (1 s) but not past the grown one (6 s).
    time.sleep(2)
    assert error_of(poll(gateway, code)) == "slow_down"
    time.sleep(2)
    assert error_of(poll(gateway, code)) == "slow_down"


def test_a_denial_is_access_denied(gateway):
    answer = authorize(gateway)
    person = Person(gateway)
    denied = person.confirm(answer["user_code"], action="deny")
    assert denied.status_code == 200 and "denied" in denied.text, denied.text
    assert error_of(poll(gateway, answer["device_code"])) == "access_denied"
    # Answered: the page no longer takes the code.
    assert person.type_code(answer["user_code"]).status_code == 400


def test_an_expired_code_is_expired_token_and_the_page_refuses_it(serve, tmp_path, provider):
    gateway = start(serve, tmp_path, provider, device="{code_lifetime_seconds: 2, interval_seconds: 1}")
    answer = authorize(gateway)
    assert answer["expires_in"] == 2
    time.sleep(2.5)
    assert error_of(poll(gateway, answer["device_code"])) == "expired_token"
    assert Person(gateway).type_code(answer["user_code"]).status_code == 400


def test_unknown_codes_and_bad_requests(gateway):
    assert error_of(poll(gateway, "not-a-device-code")) == "invalid_grant"
    r = requests.post(gateway.url + "/v1/device/token", data={"grant_type": "authorization_code", "device_code": "x"}, timeout=TIMEOUT)
    assert error_of(r) == "unsupported_grant_type"
    r = requests.post(gateway.url + "/v1/device/token", data={"device_code": "x"}, timeout=TIMEOUT)
    assert error_of(r) == "invalid_request"
    r = requests.post(gateway.url + "/v1/device/token", data={"grant_type": GRANT}, timeout=TIMEOUT)
    assert error_of(r) == "invalid_request"
    r = requests.post(gateway.url + "/v1/device/authorize", data={"provider": "nope"}, timeout=TIMEOUT)
    assert error_of(r) == "invalid_request"


def test_the_sixth_wrong_code_within_a_minute_is_refused_even_when_it_is_right(gateway):
    answer = authorize(gateway)
    attacker = Person(gateway)
    assert attacker.browser.get(gateway.url + "/v1/device", timeout=TIMEOUT).status_code == 200  # gets its cookie
    for _ in range(5):
        assert attacker.type_code("BBBB-BBBB").status_code == 400
    refused = attacker.type_code(answer["user_code"])
    assert refused.status_code == 429, refused.text
    assert "Too many wrong codes" in refused.text and refused.headers["Retry-After"] == "60"
    # Another browser is not held back by this one's tries.
    assert Person(gateway).type_code(answer["user_code"]).status_code == 200


def test_a_forged_confirmation_is_refused(gateway):
    answer = authorize(gateway)
    person = Person(gateway)
    page = person.type_code(answer["user_code"])
    assert page.status_code == 200
    # Another site's form, a request with no Origin and no Sec-Fetch-Site, another browser's token.
    assert person.post(page, "approve", origin="https://evil.example").status_code == 403
    assert person.post(page, "deny", origin=None).status_code == 403
    attacker = Person(gateway)
    attacker.type_code(answer["user_code"])
    assert attacker.post(page, "approve").status_code == 403  # the person's token, the attacker's cookie
    assert error_of(poll(gateway, answer["device_code"])) == "authorization_pending"
    # The real one still works.
    assert person.post(page, "deny").status_code == 200


def test_a_dpop_bound_device_session_answers_only_its_key(gateway, provider):
    key, other = DPoPKey(), DPoPKey()
    answer = authorize(gateway, key)
    time.sleep(1.1)
    assert error_of(poll(gateway, answer["device_code"])) == "invalid_dpop_proof"
    assert error_of(poll(gateway, answer["device_code"], other)) == "invalid_dpop_proof"
    assert error_of(poll(gateway, answer["device_code"], key)) == "authorization_pending"
    done = Person(gateway).sign_in(answer["user_code"])
    assert done.status_code == 200, done.text
    time.sleep(1.1)
    # Still refused to anyone else, and that refusal does not spend the code.
    assert error_of(poll(gateway, answer["device_code"], other)) == "invalid_dpop_proof"
    granted = poll(gateway, answer["device_code"], key)
    assert granted.status_code == 201, granted.text
    grant = granted.json()
    assert grant["token_type"] == "DPoP"
    token = grant["session_token"]
    url = gateway.url + "/v1/session"
    assert requests.get(url, headers={"Authorization": "Bearer " + token}, timeout=TIMEOUT).status_code == 401
    assert requests.get(url, headers={"Authorization": "DPoP " + token, "DPoP": other.proof("GET", url, token)}, timeout=TIMEOUT).status_code == 401
    ok = requests.get(url, headers={"Authorization": "DPoP " + token, "DPoP": key.proof("GET", url, token)}, timeout=TIMEOUT)
    assert ok.status_code == 200, ok.text


def test_two_token_calls_racing_get_one_session(gateway, provider):
    answer = authorize(gateway)
    Person(gateway).sign_in(answer["user_code"])
    time.sleep(1.1)
    results: list[requests.Response] = []
    barrier = threading.Barrier(4)

    def race():
        barrier.wait()
        results.append(poll(gateway, answer["device_code"]))

    threads = [threading.Thread(target=race) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(r.status_code for r in results)
    assert statuses.count(201) == 1, [(r.status_code, r.text) for r in results]
    assert all(error_of(r) in ("invalid_grant", "slow_down") for r in results if r.status_code != 201)


def test_the_page_shows_the_clients_address_a_client_cannot_forge_it(serve, tmp_path, provider):
    plain = start(serve, tmp_path / "plain", provider)
    forged = requests.post(plain.url + "/v1/device/authorize", headers={"X-Forwarded-For": "203.0.113.9"}, timeout=TIMEOUT).json()
    page = Person(plain).type_code(forged["user_code"])
    assert 'id="client-address">127.0.0.1<' in page.text and "203.0.113.9" not in page.text
    # Behind a trusted proxy, the client the proxy names.
    proxied = start(serve, tmp_path / "proxied", provider, extra='trusted_proxies: ["127.0.0.1"]')
    named = requests.post(proxied.url + "/v1/device/authorize", headers={"X-Forwarded-For": "203.0.113.9"}, timeout=TIMEOUT).json()
    assert 'id="client-address">203.0.113.9<' in Person(proxied).type_code(named["user_code"]).text


def test_two_instances_on_one_sqlite_file_serve_any_step_and_the_code_works_once(serve, tmp_path, provider):
    first = start(serve, tmp_path, provider)
    second = serve(tmp_path, ["--config", str(tmp_path / "gatehouse.yaml")], name="second")
    answer = authorize(first)
    # The page, the confirmation and the provider's callback on the other instance.
    done = Person(second, public_url=first.url).sign_in(answer["user_code"])
    assert done.status_code == 200, done.text
    time.sleep(1.1)
    results: list[requests.Response] = []
    barrier = threading.Barrier(2)

    def race(gateway):
        barrier.wait()
        results.append(poll(gateway, answer["device_code"]))

    threads = [threading.Thread(target=race, args=(g,)) for g in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.status_code for r in results) == [201, 400], [(r.status_code, r.text) for r in results]
    refused = next(r for r in results if r.status_code == 400)
    assert error_of(refused) in ("invalid_grant", "slow_down")


def test_gatehouse_login_device_stores_the_session_for_whoami(gatehouse_bin, gateway, provider, tmp_path):
    provider.next_login = {"sub": "cli-bob", "sid": "sid-c"}
    env = clean_env({"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "BROWSER"):
        env.pop(name, None)
    proc = subprocess.Popen([str(gatehouse_bin), "login", "--device", "--gateway", gateway.url, "--provider", "idp"], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()
        match = re.search(r"open (\S+) in a browser and enter the code: ([A-Z]{4}-[A-Z]{4})", first)
        assert match, first
        assert match.group(1) == gateway.url + "/v1/device"
        done = Person(gateway).sign_in(match.group(2))
        assert done.status_code == 200, done.text
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "Signed in as cli-bob" in out
    stored = json.loads((tmp_path / "xdg" / "gatehouse" / "credentials.json").read_text())["gateways"][gateway.url]
    assert stored["token_type"] == "DPoP" and "PRIVATE KEY" in stored["dpop_private_key"], stored.keys()
    whoami = subprocess.run([str(gatehouse_bin), "whoami"], env=env, capture_output=True, text=True, timeout=30)
    assert whoami.returncode == 0 and "cli-bob" in whoami.stdout, whoami


def test_device_configuration_errors_name_file_and_line(cli, tmp_path):
    config = write_config(tmp_path, "\n".join([
        "device:",
        "  interval_seconds: 0",
        "  code_lifetime: 60",
        "",
    ]))
    r = cli(["check", "--config", str(config)], cwd=tmp_path)
    assert r.returncode != 0
    assert re.search(r"gatehouse\.yaml:2: .*device\.interval_seconds", r.stderr), r.stderr
    assert re.search(r"gatehouse\.yaml:3: .*code_lifetime", r.stderr), r.stderr


def test_device_sign_in_switched_off_is_404(serve, tmp_path, provider):
    gateway = start(serve, tmp_path, provider, device="{enabled: false}")
    assert requests.post(gateway.url + "/v1/device/authorize", timeout=TIMEOUT).status_code == 404
    assert requests.post(gateway.url + "/v1/device/token", data={"grant_type": GRANT}, timeout=TIMEOUT).status_code == 404
    assert gateway.get("/v1/device").status_code == 404
