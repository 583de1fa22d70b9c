"""ACS (window.external.Notify on load) and legacy (cookie, title) logins through the gateway's
login-page proxy, in a real headless Chromium, ending in a cookie session."""
from __future__ import annotations

import json

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def session_of(browser, gateway):
    """GET /v1/session from the page, with the browser's cookies."""
    text = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('/v1/session', {credentials: 'same-origin'}).then(r => r.text()).then(done, e => done(String(e)));"
    )
    return json.loads(text)


def sign_in(browser, gateway, provider, fields):
    browser.get(f"{gateway}/v1/auth/{provider}/pages?return_to=/")
    assert browser.current_url.startswith(f"{gateway}/v1/pages/"), browser.current_url
    for name, value in fields.items():
        box = browser.find_element(By.ID, name)
        box.clear()
        box.send_keys(value)
    browser.find_element(By.ID, "signin").click()
    WebDriverWait(browser, 20).until(lambda d: d.current_url == f"{gateway}/")


def cookie_names(browser):
    return {cookie["name"] for cookie in browser.get_cookies()}


def test_acs_notify_on_load_ends_in_a_session(browser, gateway):
    sign_in(browser, gateway, "azure", {"email": "carol@acs.demo.test"})
    session = session_of(browser, gateway)
    assert session["provider"] == "azure"
    assert session["identity"]["email"] == "carol@acs.demo.test"
    # The ACS stand-in's session cookie stayed in the gateway's jar.
    assert "acs_session" not in cookie_names(browser)
    assert "gatehouse_session" in cookie_names(browser)


def test_legacy_cookie_ends_in_a_session(browser, gateway):
    sign_in(browser, gateway, "legacy", {"user": "bob", "password": "secret"})
    session = session_of(browser, gateway)
    assert session["provider"] == "legacy"
    assert session["subject"] == "user-bob"
    assert not {"oauth_token", "site_session"} & cookie_names(browser)


def test_legacy_title_ends_in_a_session(browser, gateway):
    sign_in(browser, gateway, "legacytitle", {"user": "bob", "password": "secret"})
    session = session_of(browser, gateway)
    assert session["provider"] == "legacytitle"
    assert not {"oauth_token", "site_session"} & cookie_names(browser)


def test_proxy_refuses_outside_a_login_and_other_origins(browser, gateway):
    import requests

    assert requests.get(f"{gateway}/v1/pages/not-a-login/0/login", timeout=5).status_code == 404
    browser.get(f"{gateway}/v1/auth/legacy/pages?return_to=/")
    login_id = browser.current_url.split("/")[5]
    # With the login's binding cookie (taken from the browser), an origin index off the list is refused.
    cookies = {c["name"]: c["value"] for c in browser.get_cookies()}
    assert requests.get(f"{gateway}/v1/pages/{login_id}/7/login", cookies=cookies, timeout=5).status_code == 403
    # The page's link to another origin is not routed through the proxy.
    assert browser.find_element(By.ID, "elsewhere").get_attribute("href") == "https://elsewhere.example.test/"
    # The provider's page runs sandboxed: an opaque origin, so its scripts cannot use the gateway's API.
    assert browser.execute_script("return window.origin") == "null"
