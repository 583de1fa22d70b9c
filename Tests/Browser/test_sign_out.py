"""Signing out from a page, in a real headless Chromium against `gatehouse demo`.

Alice signs in through the demo's OpenID Connect stand-in, opens `/v1/sign-out?return_to=…` and presses its
one button: the browser posts the form with its own `Origin`, the gateway ends the session and sends the
browser to the stand-in's `end_session_endpoint`, which returns it to `/v1/sign-out/done` with the `state`,
and the browser lands on `return_to`, signed out. Before that, the same form auto-posted from a page on
another origin signs no one out.
"""
from __future__ import annotations

import html
import re

import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from gatehouse_testkit import loopback_server


def session_status(browser, gateway) -> int:
    """GET /v1/session with the browser's own cookies, from a page of the gateway's origin."""
    browser.get(gateway + "/healthz")
    return browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('/v1/session', {credentials: 'same-origin'}).then(r => done(r.status), e => done(String(e)));"
    )


def done_redirects(gateway) -> int:
    """How many GETs of /v1/sign-out/done the gateway answered with a redirect (3xx), from /metrics."""
    text = requests.get(gateway + "/metrics", timeout=10).text
    pattern = r'^gatehouse_http_requests_total\{(?=[^}]*route="/v1/sign-out/done")(?=[^}]*method="GET")(?=[^}]*status="3xx")[^}]*\} (\d+)'
    return sum(int(m.group(1)) for m in re.finditer(pattern, text, re.M))


def oidc_issuer(demo) -> str:
    match = re.search(r"OpenID Connect\s+(http://\S+)", demo[1].read_text(errors="replace"))
    assert match, "the demo banner names no OpenID Connect stand-in"
    return match.group(1)


def test_sign_out_page_ends_the_session_through_the_oidc_logout_and_returns(browser, demo, gateway):
    issuer = oidc_issuer(demo)
    # Sign in: the gateway's login, the stand-in's form, back with the session cookie.
    browser.get(gateway + "/v1/auth/oidc/login?return_to=%2Fhealthz")
    assert browser.current_url.startswith(issuer + "/authorize"), browser.current_url
    browser.find_element(By.NAME, "username").send_keys("alice")
    browser.find_element(By.NAME, "password").send_keys("alice-password")
    browser.find_element(By.TAG_NAME, "button").click()
    WebDriverWait(browser, 15).until(lambda b: b.current_url == gateway + "/healthz")
    assert session_status(browser, gateway) == 200

    # Another origin (`localhost` is another site than `127.0.0.1`) auto-posts the sign-out form: refused.
    attack = (
        '<!doctype html><form method="post" action="' + html.escape(gateway + "/v1/sign-out") + '">'
        '<input type="hidden" name="return_to" value="/"></form><script>document.forms[0].submit()</script>'
    ).encode()
    site = loopback_server(lambda handler: (200, "text/html; charset=utf-8", attack))
    try:
        browser.get(f"http://localhost:{site.server_address[1]}/")
        WebDriverWait(browser, 15).until(lambda b: b.current_url.startswith(gateway + "/v1/sign-out"))
        assert "csrf_required" in browser.page_source, browser.page_source[:500]
    finally:
        site.shutdown()
    assert session_status(browser, gateway) == 200, "a cross-origin post signed the user out"

    # The page: one button, return_to carried along.
    browser.get(gateway + "/v1/sign-out?return_to=%2Fhealthz%3Fbye%3D1")
    form = browser.find_element(By.CSS_SELECTOR, "form")
    assert form.get_attribute("method") == "post" and form.get_attribute("action") == gateway + "/v1/sign-out"
    assert browser.find_element(By.NAME, "return_to").get_attribute("value") == "/healthz?bye=1"
    assert session_status(browser, gateway) == 200, "showing the page changes nothing"

    browser.get(gateway + "/v1/sign-out?return_to=%2Fhealthz%3Fbye%3D1")
    before = done_redirects(gateway)
    browser.find_element(By.TAG_NAME, "button").click()
    # Through the provider's logout and /v1/sign-out/done, to return_to.
    WebDriverWait(browser, 15).until(lambda b: b.current_url == gateway + "/healthz?bye=1")
    assert session_status(browser, gateway) == 401
    assert not [c for c in browser.get_cookies() if c["name"] == "gatehouse_session"]
    # The provider sent the browser back to /v1/sign-out/done, which redirected it (the gateway's request metrics).
    assert done_redirects(gateway) == before + 1
