"""The sign-in page (`GET /` and `GET /v1/sign-in`): every provider a browser can sign in with has a link,
page-login kinds included, each carrying a `return_to` that a login accepts and nothing else."""
from __future__ import annotations

import re

import pytest
import requests


def links(html: str) -> dict[str, str]:
    return {m.group(2): m.group(1).replace("&amp;", "&") for m in re.finditer(r'<a href="([^"]+)">Sign in with ([^<]+)</a>', html)}


@pytest.mark.parametrize("path", ["/", "/v1/sign-in"])
def test_every_browser_provider_has_a_link_that_returns_where_asked(gateway, path):
    page = requests.get(gateway + path, params={"return_to": "/reports?tab=1&x=2"}, timeout=10)
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    found = links(page.text)
    kinds = {p["id"]: p["kind"] for p in requests.get(gateway + "/v1/providers", timeout=10).json()["providers"]}
    by_id = {re.search(r"/v1/auth/([^/]+)/", href).group(1): href for href in found.values()}
    # Redirect kinds start at /login, the page-login kinds (acs, capture) at /pages; BrowserID posts assertions.
    for pid, kind in kinds.items():
        if kind == "browserid":
            assert pid not in by_id
        else:
            assert by_id[pid] == f"/v1/auth/{pid}/{'pages' if kind in ('acs', 'capture') else 'login'}?return_to=%2Freports%3Ftab%3D1%26x%3D2"


@pytest.mark.parametrize("unsafe", ["https://evil.example/", "//evil.example/x", "/\\evil.example"])
def test_a_return_to_a_login_would_refuse_is_replaced_by_the_home_page(gateway, unsafe):
    page = requests.get(gateway + "/v1/sign-in", params={"return_to": unsafe}, timeout=10)
    assert page.status_code == 200
    assert all(href.endswith("?return_to=%2F") for href in links(page.text).values()), page.text
