"""Step-up per rule (RFC 9470): `access.rules[].require: {acr, max_age_seconds}` on both front ends.

The legacy site's probe names the user with the `acr` and `auth_time` its sign-in had (`mfa-…` tokens: a second
factor just now; `pwd-…`: a password 20 minutes ago). The same requests go through the event-loop relay (a
plain `/v1/api` call), the router (the same call with an `Origin` of the CORS list) and `/v1/authz` over
HTTP/1.1 (the relay's) and HTTP/1.0 (the router's): a session short of the rule's requirement gets 401
`step_up_required` with `WWW-Authenticate: Bearer error="insufficient_user_authentication"` naming what to sign
in again with; one that meets it passes; a session the rule's conditions refuse stays 403.
"""
from __future__ import annotations

import json
import time

import pytest
import requests
from urllib.parse import urlencode

from conftest import q, write_capture_provider, write_config
from gatehouse_testkit import loopback_server
from test_hostile_requests import ORIGIN, PUBLIC, RawBackend, raw, status_of


def probe(handler):
    token = handler.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    strong = token.startswith("mfa-")
    user = {"id": token.split("-", 1)[1], "acr": "urn:example:mfa" if strong else "urn:example:pwd",
            "auth_time": int(time.time()) - (5 if strong else 1200)}
    return 200, "application/json", json.dumps(user).encode()


def step_up_config(public_url: str, backend: RawBackend, rules: list[str], extra: list[str] = ()) -> str:
    """`gatehouse.yaml`: memory store, `backend`, the CORS origin whose requests go to the router, and the rule
    `payments` (`urn:example:mfa` within 300 s) before `rules`; every other path: any session."""
    return "\n".join([
        'store: {kind: "memory"}',
        f"public_url: {q(public_url)}",
        *extra,
        "backend:",
        f"  url: {q(f'http://127.0.0.1:{backend.port}/base')}",
        f"cors: {{allowed_origins: [{q(ORIGIN)}]}}",
        "access:",
        "  rules:",
        '    - {name: "payments", paths: ["/payments/**"], allow: "authenticated",'
        ' require: {acr: ["urn:example:mfa"], max_age_seconds: 300}}',
        *rules,
        '  default: "authenticated"',
        "",
    ])


@pytest.fixture
def gateway(serve, tmp_path):
    backend = RawBackend()
    site = loopback_server(probe)
    url = f"http://127.0.0.1:{site.server_address[1]}"
    config = write_config(tmp_path, step_up_config(PUBLIC, backend, [
        '    - {name: "recent", paths: ["/recent/**"], allow: "authenticated", require: {max_age_seconds: 600}}',
        '    - {name: "admin", paths: ["/admin/**"], allow: [{subject: "root"}], require: {acr: ["urn:example:mfa"]}}',
    ]))
    write_capture_provider(tmp_path, url, claims='{subject: "id"}')
    gw = serve(tmp_path, ["--config", str(config)])

    def sign_in(token: str) -> str:
        created = requests.post(gw.url + "/v1/auth/legacy/token", json={"token": token}, timeout=5)
        assert created.status_code == 201, created.text
        return created.json()["session_token"]

    yield gw, sign_in
    backend.close()
    site.shutdown()


def api(gw, front: str, path: str, token: str) -> tuple[int, str | None, str | None]:
    head = [f"GET /v1/api{path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", f"Authorization: Bearer {token}"]
    if front == "router":
        head.append(f"Origin: {ORIGIN}")
    answer = raw(gw.port, ("\r\n".join(head) + "\r\n\r\n").encode())
    head_part, _, content = answer.partition(b"\r\n\r\n")
    fields = {line.split(":", 1)[0].strip().lower(): line.split(":", 1)[1].strip()
              for line in head_part.decode("latin-1").split("\r\n")[1:] if ":" in line}
    code = json.loads(content)["code"] if b"problem+json" in head_part else None
    return status_of(answer), code, fields.get("www-authenticate")


@pytest.mark.parametrize("front", ["relay", "router"])
def test_a_session_short_of_the_rule_is_challenged_to_step_up_and_a_strong_one_passes(gateway, front):
    gw, sign_in = gateway
    weak, strong = sign_in("pwd-alice"), sign_in("mfa-alice")

    status, code, challenge = api(gw, front, "/payments/x", weak)
    assert (status, code) == (401, "step_up_required")
    assert challenge == 'Bearer error="insufficient_user_authentication", acr_values="urn:example:mfa", max_age=300'
    assert api(gw, front, "/payments/x", strong)[0] == 200

    # Too old for max_age alone: the challenge names only max_age.
    status, code, challenge = api(gw, front, "/recent/x", weak)
    assert (status, code, challenge) == (401, "step_up_required", 'Bearer error="insufficient_user_authentication", max_age=600')
    assert api(gw, front, "/recent/x", strong)[0] == 200
    # Paths without require: any session.
    assert api(gw, front, "/other", weak)[0] == 200


@pytest.mark.parametrize("front", ["relay", "router"])
def test_who_may_is_decided_before_how_strongly(gateway, front):
    gw, sign_in = gateway
    assert api(gw, front, "/admin/x", sign_in("mfa-alice"))[:2] == (403, "access_denied")
    assert api(gw, front, "/admin/x", sign_in("pwd-root"))[:2] == (401, "step_up_required")
    assert api(gw, front, "/admin/x", sign_in("mfa-root"))[0] == 200


@pytest.mark.parametrize("version", ["1.1", "1.0"])
def test_forward_auth_answers_the_same_challenge(gateway, version):
    gw, sign_in = gateway
    for token, expected in ((sign_in("pwd-alice"), 401), (sign_in("mfa-alice"), 200)):
        head = [f"GET /v1/authz HTTP/{version}", "Host: 127.0.0.1", "Connection: close", f"Authorization: Bearer {token}",
                "X-Forwarded-Method: GET", "X-Forwarded-Uri: /payments/x", "X-Forwarded-Proto: https",
                "X-Forwarded-Host: gate.example.test"]
        answer = raw(gw.port, ("\r\n".join(head) + "\r\n\r\n").encode())
        assert status_of(answer) == expected, answer[:400]
        if expected == 401:
            head_part, _, content = answer.partition(b"\r\n\r\n")
            assert json.loads(content)["code"] == "step_up_required"
            assert b'error="insufficient_user_authentication", acr_values="urn:example:mfa", max_age=300' in head_part
            # A proxy sends the browser to the login that can meet the rule, of the session's own provider.
            fields = {line.split(":", 1)[0].strip().lower(): line.split(":", 1)[1].strip()
                      for line in head_part.decode("latin-1").split("\r\n")[1:] if ":" in line}
            assert fields["x-gatehouse-sign-in"] == (f"{PUBLIC}/v1/auth/legacy/login?return_to=%2Fpayments%2Fx"
                                                     "&acr_values=urn%3Aexample%3Amfa&max_age=300")


def test_the_id_tokens_acr_and_auth_time_decide_at_an_oidc_login(serve, tmp_path):
    """The recorded ID token claims of a real OpenID Connect login (a provider run here), not a kind's answer."""
    from conftest import free_port
    from oidc_provider import NATIVE_REDIRECT_URI, OpenIDProvider, sign_in as oidc_sign_in, write_provider_file

    provider, backend = OpenIDProvider(), RawBackend()
    try:
        port = free_port()
        config = write_config(tmp_path, "\n".join([
            f"public_url: {q(f'http://127.0.0.1:{port}')}",
            'store: {kind: "memory"}',
            f"allowed_redirect_uris: [{q(NATIVE_REDIRECT_URI)}]",
            "backend:",
            f"  url: {q(f'http://127.0.0.1:{backend.port}/base')}",
            "access:",
            "  rules:",
            '    - {name: "payments", paths: ["/payments/**"], allow: "authenticated",'
            ' require: {acr: ["urn:example:mfa"], max_age_seconds: 300}}',
            "",
        ]))
        write_provider_file(tmp_path / "Providers", "idp", provider, backchannel_logout=None)
        gw = serve(tmp_path, ["--config", str(config)], port=port)
        now = int(time.time())
        strong = oidc_sign_in(gw.url, "idp", provider, sub="alice", acr="urn:example:mfa", auth_time=now - 10)["session_token"]
        stale = oidc_sign_in(gw.url, "idp", provider, sub="alice", acr="urn:example:mfa", auth_time=now - 3600)["session_token"]
        weak = oidc_sign_in(gw.url, "idp", provider, sub="alice", acr="urn:example:pwd", auth_time=now - 10)["session_token"]
        for front in ("relay", "router"):
            assert api(gw, front, "/payments/x", strong)[0] == 200
            assert api(gw, front, "/payments/x", stale)[:2] == (401, "step_up_required"), "auth_time older than max_age"
            assert api(gw, front, "/payments/x", weak)[:2] == (401, "step_up_required"), "another acr"
    finally:
        provider.close()
        backend.close()


class Browser:
    """A browser's cookie jar by hand (the gateway's cookies are `Secure` and `__Host-`, which `requests` would not
    send back over plain http): every cookie set is sent on every later request, a `Max-Age=0` one is dropped."""

    def __init__(self):
        self.cookies: dict[str, str] = {}

    def get(self, url: str, **headers) -> requests.Response:
        sent = {k.replace("_", "-"): v for k, v in headers.items()}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        response = requests.get(url, headers=sent, allow_redirects=False, timeout=10)
        for line in response.raw.headers.getlist("Set-Cookie"):
            pair, _, attributes = line.partition(";")
            name, _, value = pair.strip().partition("=")
            if "max-age=0" in attributes.lower().replace(" ", ""):
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
        return response

    def session_token(self) -> str:
        return next(v for k, v in self.cookies.items() if k.endswith("gatehouse_session"))

    def sign_in(self, gateway: str, provider_id: str, provider, return_to: str) -> requests.Response:
        """A browser login at `provider_id` coming back to `return_to`; returns the gateway's last answer."""
        return self.follow(f"{gateway}/v1/auth/{provider_id}/login?" + urlencode({"return_to": return_to}), provider)

    def follow(self, url: str, provider) -> requests.Response:
        """`url` (a gateway login) → the provider → the gateway's callback: the callback's answer."""
        start = self.get(url)
        assert start.status_code == 302, start.text
        assert start.headers["Location"].startswith(provider.url), start.headers["Location"]
        authorized = self.get(start.headers["Location"])
        assert authorized.status_code == 302, authorized.text
        return self.get(authorized.headers["Location"])


@pytest.fixture
def oidc_gateway(serve, tmp_path):
    """A gateway in front of an OpenID provider run here; `payments` asks for `urn:example:mfa` within 300 s, `fresh`
    for a sign-in at most 4 s old."""
    from conftest import free_port
    from oidc_provider import OpenIDProvider, write_provider_file

    provider, backend = OpenIDProvider(), RawBackend()
    port = free_port()
    config = write_config(tmp_path, step_up_config(
        f"http://127.0.0.1:{port}", backend,
        ['    - {name: "fresh", paths: ["/fresh/**"], allow: "authenticated", require: {max_age_seconds: 4}}'],
        ['sessions: {cookie: {secure: false, name: "gatehouse_session"}}']))
    write_provider_file(tmp_path / "Providers", "idp", provider, backchannel_logout=None)
    gw = serve(tmp_path, ["--config", str(config)], port=port)
    yield gw, provider
    provider.close()
    backend.close()


def session_id(gw, token: str) -> str:
    answer = requests.get(gw.url + "/v1/session", headers={"Authorization": f"Bearer {token}"}, timeout=5)
    assert answer.status_code == 200, answer.text
    return answer.json()["id"]


def test_a_browser_navigation_steps_up_at_the_provider_and_keeps_its_session(oidc_gateway):
    gw, provider = oidc_gateway
    provider.next_login = {"sub": "alice", "sid": "s1", "acr": "urn:example:pwd", "auth_time": int(time.time()) - 10}
    browser = Browser()
    landed = browser.sign_in(gw.url, "idp", provider, "/v1/api/other")
    assert landed.status_code == 303 and landed.headers["Location"] == "/v1/api/other"
    weak = browser.session_token()
    before = session_id(gw, weak)
    expected = (f"{gw.url}/v1/auth/idp/login?return_to=%2Fv1%2Fapi%2Fpayments%2Fx%3Fa%3D1"
                "&acr_values=urn%3Aexample%3Amfa&max_age=300")

    # A script's call is challenged (RFC 9470); a navigation is sent to the login that can meet the rule, on
    # both front ends (the router: a request with an Origin of the CORS list).
    script = browser.get(gw.url + "/v1/api/payments/x?a=1")
    assert script.status_code == 401 and script.json()["code"] == "step_up_required"
    for extra in ({}, {"Origin": ORIGIN}):
        navigation = browser.get(gw.url + "/v1/api/payments/x?a=1", Sec_Fetch_Mode="navigate", **extra)
        assert navigation.status_code == 303, (extra, navigation.text)
        assert navigation.headers["Location"] == expected
        assert "WWW-Authenticate" not in navigation.headers

    back = browser.follow(expected, provider)
    asked = provider.authorize_requests[-1]
    assert (asked["acr_values"], asked["max_age"]) == ("urn:example:mfa", "300")
    assert back.status_code == 303 and back.headers["Location"] == "/v1/api/payments/x?a=1"
    strong = browser.session_token()
    assert strong != weak, "a step-up re-issues the cookie with a new token"
    assert session_id(gw, strong) == before, "the session is replaced in place: same id"
    passed = browser.get(gw.url + "/v1/api/payments/x?a=1", Sec_Fetch_Mode="navigate")
    assert passed.status_code == 200, passed.text
    gone = requests.get(gw.url + "/v1/session", headers={"Authorization": f"Bearer {weak}"}, timeout=5)
    assert gone.status_code == 401, "the weaker token ends with the step-up"


def signed_in_weakly(gw, provider) -> tuple[Browser, str]:
    """A browser signed in as alice with a password (`urn:example:pwd`) 10 s ago, and its session token."""
    provider.next_login = {"sub": "alice", "sid": "s1", "acr": "urn:example:pwd", "auth_time": int(time.time()) - 10}
    browser = Browser()
    browser.sign_in(gw.url, "idp", provider, "/v1/api/other")
    return browser, browser.session_token()


def test_a_provider_that_does_not_step_up_ends_the_login_without_a_loop(oidc_gateway):
    gw, provider = oidc_gateway
    browser, weak = signed_in_weakly(gw, provider)
    provider.honours_step_up = False
    navigation = browser.get(gw.url + "/v1/api/payments/x", Sec_Fetch_Mode="navigate")
    assert navigation.status_code == 303
    refused = browser.follow(navigation.headers["Location"], provider)
    assert refused.status_code == 403 and "text/html" in refused.headers["Content-Type"], refused.text[:300]
    assert "Location" not in refused.headers
    # The session it held is untouched.
    assert browser.session_token() == weak
    assert browser.get(gw.url + "/v1/api/other").status_code == 200


def test_a_step_up_of_another_person_does_not_take_over_the_session(oidc_gateway):
    gw, provider = oidc_gateway
    browser, alice = signed_in_weakly(gw, provider)
    alice_id = session_id(gw, alice)
    provider.next_login = {"sub": "mallory", "sid": "s2"}
    navigation = browser.get(gw.url + "/v1/api/payments/x", Sec_Fetch_Mode="navigate")
    back = browser.follow(navigation.headers["Location"], provider)
    assert back.status_code == 303
    assert session_id(gw, browser.session_token()) != alice_id, "mallory's login is mallory's own session"
    assert requests.get(gw.url + "/v1/session", headers={"Authorization": f"Bearer {alice}"}, timeout=5).status_code == 401


def test_a_login_asked_for_max_age_refuses_an_id_token_without_auth_time(oidc_gateway):
    gw, provider = oidc_gateway
    provider.next_login = {"sub": "alice", "sid": "s1"}
    provider.honours_step_up = False
    browser = Browser()
    answer = browser.follow(f"{gw.url}/v1/auth/idp/login?return_to=%2F&max_age=60", provider)
    assert answer.status_code >= 400 and "text/html" in answer.headers["Content-Type"], answer.text[:300]
    assert not any(k.endswith("gatehouse_session") for k in browser.cookies)


def test_bad_step_up_parameters_are_refused_at_the_start(oidc_gateway):
    gw, _ = oidc_gateway
    for query in ("acr_values=a%22b", "max_age=-1", "max_age=soon", "acr_values="):
        answer = requests.get(f"{gw.url}/v1/auth/idp/login?return_to=%2F&{query}", allow_redirects=False, timeout=5)
        assert answer.status_code == 400, (query, answer.text)


def test_a_stepped_up_session_passes_until_max_age_has_passed_then_is_asked_again(oidc_gateway):
    gw, provider = oidc_gateway
    browser, _ = signed_in_weakly(gw, provider)
    target = gw.url + "/v1/api/fresh/x"
    navigation = browser.get(target, Sec_Fetch_Mode="navigate")
    assert navigation.status_code == 303
    assert navigation.headers["Location"] == f"{gw.url}/v1/auth/idp/login?return_to=%2Fv1%2Fapi%2Ffresh%2Fx&max_age=4"
    back = browser.follow(navigation.headers["Location"], provider)
    assert back.status_code == 303 and provider.authorize_requests[-1]["max_age"] == "4"
    assert browser.get(target, Sec_Fetch_Mode="navigate").status_code == 200
    time.sleep(5)
    again = browser.get(target, Sec_Fetch_Mode="navigate")
    assert again.status_code == 303 and again.headers["Location"] == navigation.headers["Location"]
    script = browser.get(target)
    assert script.status_code == 401
    assert script.headers["WWW-Authenticate"] == 'Bearer error="insufficient_user_authentication", max_age=4'
