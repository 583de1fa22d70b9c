"""Device sign-in with the real pieces: `gatehouse login --device` as the device (a subprocess polling the demo
gateway), headless Chromium as the person's browser (typing the code on `/v1/device`, confirming, signing in at
the demo's stand-in OAuth server), then `gatehouse whoami` and `gatehouse api` with the session the device stored;
and the page-login kinds (`acs` by its page script, `capture` by the success page's cookie) signing a device in.

The HTTP-level cases (slow_down, denial, expiry, wrong codes, forged confirmations, DPoP): Tests/CLI/test_device_signin.py.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from gatehouse_testkit import require_gateway_binary

CLIENT_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY", "BROWSER")


def client_env(home) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CLIENT_VARS and not (k.startswith("GATEHOUSE_") and k != "GATEHOUSE_BIN")}
    env["XDG_CONFIG_HOME"] = str(home / "xdg")
    return env


def test_the_cli_signs_in_through_a_code_typed_in_chromium(browser, gateway, tmp_path):
    binary = str(require_gateway_binary())
    env = client_env(tmp_path)
    device = subprocess.Popen([binary, "login", "--device", "--gateway", gateway, "--provider", "demo"], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = device.stderr.readline()
        match = re.search(r"open (\S+) in a browser and enter the code: ([A-Z]{4}-[A-Z]{4})", line)
        assert match, line
        url, code = match.groups()
        assert url == gateway + "/v1/device"

        browser.get(url)
        field = browser.find_element(By.NAME, "user_code")
        field.send_keys(code.lower().replace("-", " "))  # as a person might type it
        field.submit()
        WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.ID, "user-code"))
        assert browser.find_element(By.ID, "user-code").text == code
        assert browser.find_element(By.ID, "client-address").text == "127.0.0.1"
        browser.find_element(By.CSS_SELECTOR, 'button[name="provider"][value="demo"]').click()

        WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.NAME, "username"))
        browser.find_element(By.NAME, "username").send_keys("alice")
        browser.find_element(By.NAME, "password").send_keys("alice-password")
        browser.find_element(By.CSS_SELECTOR, 'button[type="submit"]:not([name])').click()
        WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.ID, "device-done"))
        assert "Return to your terminal" in browser.find_element(By.ID, "device-done").text
        # The browser is not signed in: the session went to the device.
        assert not any(c["name"].endswith("gatehouse_session") for c in browser.get_cookies())
        assert not any(c["name"].startswith("gatehouse_login_") for c in browser.get_cookies())

        out, err = device.communicate(timeout=60)
    finally:
        if device.poll() is None:
            device.kill()
    assert device.returncode == 0, err
    assert "Signed in as" in out and "with demo" in out, out

    stored = json.loads((tmp_path / "xdg" / "gatehouse" / "credentials.json").read_text())["gateways"][gateway]
    assert stored["token_type"] == "DPoP"
    whoami = subprocess.run([binary, "whoami"], env=env, capture_output=True, text=True, timeout=30)
    assert whoami.returncode == 0, whoami.stderr
    assert json.loads(whoami.stdout)["provider"] == "demo", whoami.stdout
    api = subprocess.run([binary, "api", "/hello"], env=env, capture_output=True, text=True, timeout=30)
    assert api.returncode == 0, api.stderr


@pytest.mark.parametrize("provider,fields", [
    ("azure", {"email": "carol@acs.demo.test"}),  # captured by the page script (Notify), which then navigates
    ("legacy", {"user": "bob", "password": "secret"}),  # captured by the gateway from the success page's cookie
])
def test_a_page_login_kind_signs_a_device_in(browser, gateway, provider, fields):
    answer = requests.post(gateway + "/v1/device/authorize", data={"provider": provider}, timeout=10).json()
    browser.get(answer["verification_uri_complete"])
    WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.ID, "user-code"))
    browser.find_element(By.CSS_SELECTOR, f'button[name="provider"][value="{provider}"]').click()
    WebDriverWait(browser, 20).until(lambda d: d.current_url.startswith(f"{gateway}/v1/pages/"))
    for name, value in fields.items():
        box = browser.find_element(By.ID, name)
        box.clear()
        box.send_keys(value)
    browser.find_element(By.ID, "signin").click()
    WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.ID, "device-done"))
    assert not any(c["name"].endswith("gatehouse_session") for c in browser.get_cookies())
    deadline = time.time() + 30
    while True:
        time.sleep(answer["interval"])
        polled = requests.post(gateway + "/v1/device/token", data={
            "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": answer["device_code"]}, timeout=10)
        if polled.status_code != 400 or polled.json()["error"] != "authorization_pending" or time.time() > deadline:
            break
    assert polled.status_code == 201, polled.text
    assert polled.json()["session"]["provider"] == provider
