"""Both sides of a device sign-in (RFC 8628's shape) for tests, over HTTP with `requests`: the device (`authorize`,
`poll`, with an optional DPoP key) and the person at the gateway's device page (`Person`: types the code,
confirms with the page's CSRF token and the gateway's Origin, signs in at a provider that answers `/authorize`
at once, such as Tests/Support/oidc_provider.py). `gateway` is anything with a `.url`.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

import requests

from dpop_key import DPoPKey

GRANT = "urn:ietf:params:oauth:grant-type:device_code"
TIMEOUT = 10


# --- the device ---------------------------------------------------------------------------------

def authorize(gateway, key: DPoPKey | None = None, **form) -> dict:
    url = gateway.url + "/v1/device/authorize"
    headers = {"DPoP": key.proof("POST", url)} if key else {}
    r = requests.post(url, data=form, headers=headers, timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    assert r.headers["Cache-Control"] == "no-store"
    return r.json()


def poll(gateway, device_code: str, key: DPoPKey | None = None, public_url: str | None = None) -> requests.Response:
    """`POST /v1/device/token` at `gateway`; a proof of `key` names the URL under `public_url` (default: the gateway's)."""
    url = gateway.url + "/v1/device/token"
    headers = {"DPoP": key.proof("POST", (public_url or gateway.url) + "/v1/device/token")} if key else {}
    return requests.post(url, data={"grant_type": GRANT, "device_code": device_code}, headers=headers, timeout=TIMEOUT)


def error_of(response: requests.Response) -> str:
    assert response.status_code == 400, (response.status_code, response.text)
    assert response.headers["Content-Type"].startswith("application/json"), response.headers
    body = response.json()
    assert set(body) <= {"error", "error_description"}, body
    return body["error"]


# --- the person --------------------------------------------------------------------------------

class Person:
    """A browser (cookies kept) at the device page."""

    def __init__(self, gateway, public_url: str | None = None):
        self.gateway = gateway
        self.public_url = public_url or gateway.url  # the Origin of the gateway's own pages
        self.browser = requests.Session()

    def type_code(self, code: str) -> requests.Response:
        return self.browser.get(self.gateway.url + "/v1/device", params={"user_code": code}, allow_redirects=False, timeout=TIMEOUT)

    def confirm(self, code: str, action: str = "approve", provider: str = "idp", origin: str | None = "same") -> requests.Response:
        page = self.type_code(code)
        assert page.status_code == 200, page.text
        return self.post(page, action=action, provider=provider, origin=origin)

    def post(self, page: requests.Response, action: str, provider: str = "idp", origin: str | None = "same",
             csrf: str | None = None) -> requests.Response:
        token = csrf or re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        code = re.search(r'name="user_code" value="([^"]+)"', page.text).group(1)
        headers = {} if origin is None else {"Origin": self.public_url if origin == "same" else origin}
        return self.browser.post(self.gateway.url + "/v1/device", data={"user_code": code, "csrf": token, "action": action, "provider": provider},
                                 headers=headers, allow_redirects=False, timeout=TIMEOUT)

    def sign_in(self, code: str) -> requests.Response:
        """Confirms and signs in at the provider; returns the gateway's last page."""
        started = self.confirm(code)
        assert started.status_code == 303, started.text
        at_provider = requests.get(started.headers["Location"], allow_redirects=False, timeout=TIMEOUT)
        assert at_provider.status_code == 302, at_provider.text
        back = urlsplit(at_provider.headers["Location"])
        return self.browser.get(f"{self.gateway.url}{back.path}?{back.query}", allow_redirects=False, timeout=TIMEOUT)
