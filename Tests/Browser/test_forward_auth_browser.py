"""The browser round trip behind a proxy: a real headless Chromium opens a page of an application that the
documented nginx block (docs/forward-auth.md) protects with `/v1/authz`; without a session it is sent to the
gateway's sign-in page, signs in at the provider (the demo's stand-in OAuth 2.0 server, through its form),
and lands back on the page it asked for, query and all, now served with the identity the proxy copied."""
from __future__ import annotations

import re
import subprocess

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from gatehouse_testkit import free_port, loopback_server, require_gateway_binary, stop_process, wait_for_http
from proxy_kit import Proxy


class App:
    """The application behind the proxy: a page that shows who the proxy says the user is."""

    def __init__(self):
        def page(request) -> tuple[int, str, bytes]:
            subject = request.headers.get("X-Gatehouse-Subject") or ""
            return 200, "text/html", f"<!doctype html><title>App</title><p id=path>{request.path}</p><p id=user>{subject}</p>".encode()

        self.server = loopback_server(page)
        self.port = self.server.server_address[1]


@pytest.fixture()
def protected_app(demo, tmp_path):
    """nginx (the documented block) in front of the app and of a `gatehouse serve` whose provider is the demo's
    stand-in OAuth 2.0 server; public_url is the proxy's origin, as the page says it must be."""
    match = re.search(r"stand-in OAuth 2\.0\s+(http://\S+)", demo[1].read_text(errors="replace"))
    assert match, "the demo banner names no stand-in OAuth 2.0 server"
    oauth = match.group(1)
    app = App()
    proxy_port, gateway_port = free_port(), free_port()
    root = tmp_path / "gw"
    (root / "Providers").mkdir(parents=True)
    (root / "gatehouse.yaml").write_text("\n".join([
        'store: {kind: "memory"}',
        f'public_url: "http://127.0.0.1:{proxy_port}"',
        f'backend: {{url: "http://127.0.0.1:{app.port}"}}',
        'sessions: {cookie: {name: "gatehouse_session", secure: false}}',
        "access:",
        "  rules:",
        '    - {name: "app", paths: ["/**"], allow: "authenticated"}',
        "",
    ]))
    (root / "Providers" / "demo.yaml").write_text("\n".join([
        'id: "demo"', 'kind: "oauth2"', 'name: "Stand-in OAuth 2.0"',
        f'authorization_endpoint: "{oauth}/authorize"', f'token_endpoint: "{oauth}/token"',
        f'userinfo_endpoint: "{oauth}/userinfo"', f'issuer: "{oauth}"', 'client_id: "demo-client"', 'scopes: ["grades"]', "",
    ]))
    log = tmp_path / "gateway.log"
    with log.open("wb") as out:
        gateway = subprocess.Popen(
            [str(require_gateway_binary()), "serve", "--config", str(root / "gatehouse.yaml"), "--listen", f"127.0.0.1:{gateway_port}"],
            cwd=root, stdout=out, stderr=subprocess.STDOUT)
    proxy = None
    try:
        wait_for_http(gateway, f"http://127.0.0.1:{gateway_port}/healthz", 30, log)
        proxy = Proxy("nginx", tmp_path, gateway_port, app.port, port=proxy_port)
        yield proxy.url, log
    finally:
        if proxy:
            proxy.stop()
        stop_process(gateway)
        app.server.shutdown()


def test_a_browser_is_sent_to_sign_in_and_comes_back_signed_in(browser, protected_app):
    base, log = protected_app
    page = "/reports/q3?tab=summary&sort=desc"
    browser.get(base + page)
    # The sign-in page, on the proxy's origin, offering the provider with a link that returns here.
    WebDriverWait(browser, 20).until(lambda b: "/v1/sign-in" in b.current_url)
    link = browser.find_element(By.PARTIAL_LINK_TEXT, "Sign in with Stand-in OAuth 2.0")
    link.click()
    # The provider's own form.
    WebDriverWait(browser, 20).until(lambda b: b.find_elements(By.NAME, "username"))
    browser.find_element(By.NAME, "username").send_keys("alice")
    browser.find_element(By.NAME, "password").send_keys("alice-password")
    browser.find_element(By.CSS_SELECTOR, 'button[type="submit"]:not([name])').click()
    # Back on the page asked for, through the proxy, with the identity the proxy copied from /v1/authz.
    WebDriverWait(browser, 20).until(lambda b: b.current_url == base + page)
    assert browser.find_element(By.ID, "path").text == page
    assert browser.find_element(By.ID, "user").text == "alice", log.read_text(errors="replace")[-3000:]
    # The session is the gateway's cookie on the application's origin: the API sees it too.
    cookies = {c["name"]: c["value"] for c in browser.get_cookies()}
    view = requests.get(base + "/v1/session", cookies={"gatehouse_session": cookies["gatehouse_session"]}, timeout=10)
    assert view.status_code == 200 and view.json()["subject"] == "alice"
