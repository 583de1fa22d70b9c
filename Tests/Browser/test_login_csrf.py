"""Login CSRF (RFC 9700 §4.7), attacked for real in two Chromium profiles.

The attacker (profile A) starts a login and completes the provider step with the attacker's own
account, but stops before the gateway would finish it. The victim (profile B, another browser) is
then made to finish it: by opening the callback URL, the page-login URL or the success-page URL,
or by a cross-site form post of a valid Notify payload to the capture endpoint, from a page on
another loopback origin and from an opaque (sandboxed) origin. Each attack must end with no
session in the victim's browser. The legitimate single-browser logins still end in a session,
including the Notify capture posted from an opaque origin, which is what the binding cookie's
`SameSite=None` is for.
"""
from __future__ import annotations

import html
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def session_status(browser, gateway) -> int:
    """GET /v1/session with the browser's own cookies, from a page of the gateway's origin."""
    browser.get(gateway + "/healthz")
    return browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('/v1/session', {credentials: 'same-origin'}).then(r => done(r.status), e => done(String(e)));"
    )


def submit_without_following(browser, form_css: str, fill: dict[str, str]) -> str:
    """Posts the page's form with the browser's cookies but outside the browser, and returns where the
    answer redirects: the attacker completes a step and keeps the next URL instead of following it."""
    form = browser.find_element(By.CSS_SELECTOR, form_css)
    action = form.get_attribute("action")  # absolute, as the browser resolved it
    fields = {i.get_attribute("name"): i.get_attribute("value") for i in form.find_elements(By.CSS_SELECTOR, "input[name]")}
    fields.update(fill)
    cookies = {c["name"]: c["value"] for c in browser.get_cookies()}
    answer = requests.post(action, data=fields, cookies=cookies, allow_redirects=False, timeout=10)
    assert answer.status_code in (302, 303), (answer.status_code, answer.text[:300])
    return requests.compat.urljoin(action, answer.headers["Location"])


def error_code(browser) -> str | None:
    metas = browser.find_elements(By.CSS_SELECTOR, 'meta[name="gatehouse-error"]')
    return metas[0].get_attribute("content") if metas else None


class AttackerSite:
    """Pages on another origin that auto-post a form to the gateway (optionally sandboxed: an opaque origin)."""

    def __init__(self):
        self.pages: dict[str, tuple[str, bool]] = {}
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                page, sandboxed = site.pages.get(self.path, ("not found", False))
                body = page.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                if sandboxed:
                    self.send_header("Content-Security-Policy", "sandbox allow-scripts allow-forms")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # `localhost` is another site than the gateway's `127.0.0.1`: the post is cross-site.
        self.base = f"http://localhost:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def auto_post(self, name: str, action: str, fields: dict[str, str], sandboxed: bool) -> str:
        inputs = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">' for k, v in fields.items())
        self.pages["/" + name] = (
            f'<!doctype html><html><body><form id="f" method="post" action="{html.escape(action)}">{inputs}</form>'
            '<script>document.getElementById("f").submit();</script></body></html>',
            sandboxed,
        )
        return f"{self.base}/{name}"


@pytest.fixture(scope="module")
def attacker_site():
    site = AttackerSite()
    yield site
    site.server.shutdown()


def acs_notify_payload(acs_base: str, email: str) -> str:
    """A valid Notify string for `email`, fetched from the ACS stand-in as the attacker would."""
    s = requests.Session()
    page = s.post(acs_base + "/login", data={"email": email}, timeout=5).text
    literal = re.search(r"Notify\('((?:[^'\\]|\\.)*)'\)", page).group(1)
    return re.sub(r"\\(.)", r"\1", literal)


# --- redirect login ---------------------------------------------------------------------------

def test_callback_url_opened_in_another_browser_gives_no_session(browser, second_browser, gateway):
    attacker, victim = browser, second_browser
    attacker.get(f"{gateway}/v1/auth/demo/login?return_to=/")
    callback = submit_without_following(attacker, "form", {"username": "alice", "password": "alice-password"})
    assert callback.startswith(f"{gateway}/v1/auth/demo/callback?") and "code=" in callback, callback

    victim.get(callback)
    assert error_code(victim) == "login_not_bound", victim.page_source[:500]
    assert session_status(victim, gateway) == 401
    assert not any(c["name"].endswith("gatehouse_session") for c in victim.get_cookies())


def test_redirect_login_in_one_browser_ends_in_a_session(browser, gateway):
    browser.get(f"{gateway}/v1/auth/demo/login?return_to=/")
    browser.find_element(By.NAME, "username").send_keys("alice")
    browser.find_element(By.NAME, "password").send_keys("alice-password")
    browser.find_element(By.CSS_SELECTOR, 'button[type="submit"]:not([name])').click()
    WebDriverWait(browser, 20).until(lambda d: d.current_url == f"{gateway}/")
    assert session_status(browser, gateway) == 200
    # The binding was spent with the login.
    assert not any(c["name"].startswith("gatehouse_login_") for c in browser.get_cookies())


# --- page logins --------------------------------------------------------------------------------

@pytest.mark.parametrize("provider", ["azure", "legacy"])
def test_page_login_url_opened_in_another_browser_gives_no_session(browser, second_browser, gateway, provider):
    attacker, victim = browser, second_browser
    attacker.get(f"{gateway}/v1/auth/{provider}/pages?return_to=/")
    page_login = attacker.current_url
    assert page_login.startswith(f"{gateway}/v1/pages/"), page_login

    victim.get(page_login)
    assert error_code(victim) == "login_not_bound", victim.page_source[:500]
    assert not victim.find_elements(By.ID, "signin")
    assert session_status(victim, gateway) == 401


def test_success_page_url_opened_in_another_browser_gives_no_session(browser, second_browser, gateway):
    attacker, victim = browser, second_browser
    attacker.get(f"{gateway}/v1/auth/legacy/pages?return_to=/")
    # The legacy site's form (through the gateway, with the attacker's binding), prefilled with bob / secret.
    success = submit_without_following(attacker, "form", {})
    assert success.startswith(f"{gateway}/v1/pages/") and success.endswith("/welcome"), success

    victim.get(success)
    assert error_code(victim) == "login_not_bound", victim.page_source[:500]
    assert session_status(victim, gateway) == 401


@pytest.mark.parametrize("sandboxed", [False, True], ids=["other-origin", "opaque-origin"])
def test_cross_site_post_to_the_capture_endpoint_gives_no_session(browser, second_browser, gateway, demo_standins, attacker_site, sandboxed):
    attacker, victim = browser, second_browser
    attacker.get(f"{gateway}/v1/auth/azure/pages?return_to=/")
    login_id = attacker.current_url.split("/")[5]
    payload = acs_notify_payload(demo_standins["acs"], "mallory@acs.demo.test")
    lure = attacker_site.auto_post(f"lure-{login_id}-{sandboxed}", f"{gateway}/v1/pages/{login_id}/capture", {"payload": payload}, sandboxed)

    victim.get(lure)
    WebDriverWait(victim, 20).until(lambda d: d.current_url.startswith(gateway))
    assert error_code(victim) == "login_not_bound", victim.page_source[:500]
    assert session_status(victim, gateway) == 401

    # The same post from the browser that started the login (carrying its binding) does sign in: the
    # refusal above is the binding's, not a refusal of every cross-site post.
    attacker.get(attacker_site.auto_post(f"own-{login_id}-{sandboxed}", f"{gateway}/v1/pages/{login_id}/capture", {"payload": payload}, sandboxed))
    # The victim's attempt spent nothing: the login is still the attacker's to finish.
    WebDriverWait(attacker, 20).until(lambda d: d.current_url == f"{gateway}/")
    assert session_status(attacker, gateway) == 200
    me = json.loads(attacker.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('/v1/session').then(r => r.text()).then(done);"))
    assert me["identity"]["email"] == "mallory@acs.demo.test"
