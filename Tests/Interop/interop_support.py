"""Helpers shared by the interop tests: PKCE, the DOT login form, DOT's database."""
from __future__ import annotations

import base64
import hashlib
import secrets
import socket
import sqlite3
from html.parser import HTMLParser
from urllib.parse import parse_qsl, urljoin, urlsplit

import requests

TIMEOUT = 20  # seconds for every single HTTP request


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pkce_pair() -> tuple[str, str]:
    """(code_verifier, S256 code_challenge) as in RFC 7636 §4.1-4.2."""
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def query_of(url: str) -> dict[str, str]:
    pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), f"repeated query parameter in {url!r}"
    return dict(pairs)


def without_query(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}{p.path}"


class _Forms(HTMLParser):
    """Collects every <form> with its action, method and named <input> values."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[dict] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action") or "", "method": (a.get("method") or "get").lower(), "fields": {}})
        elif tag == "input" and self.forms and a.get("name"):
            self.forms[-1]["fields"][a["name"]] = a.get("value") or ""


def parse_forms(html: str) -> list[dict]:
    p = _Forms()
    p.feed(html)
    return p.forms


def dot_sign_in(browser: requests.Session, authorize_url: str, username: str, password: str) -> requests.Response:
    """Drive DOT like a browser from its authorize URL to its final redirect.

    GET authorize (302 to login) -> GET login page -> POST the real login form with its
    csrfmiddlewaretoken -> 302 back to authorize -> 302 to the client's redirect_uri.
    The registered Application has skip_authorization=True, so a consent page is a failure.
    Returns DOT's final 302 response (its Location is the redirect to the client).
    """
    r = browser.get(authorize_url, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 302, f"DOT authorize: expected 302 to login, got {r.status_code}: {r.text[:500]}"
    login_url = urljoin(authorize_url, r.headers["Location"])
    assert urlsplit(login_url).path == "/accounts/login/", f"DOT did not send us to its login page: {login_url}"

    r = browser.get(login_url, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 200, f"DOT login page: {r.status_code}"
    forms = [f for f in parse_forms(r.text) if f["method"] == "post"]
    assert len(forms) == 1, f"expected one login form, found {forms}"
    form = forms[0]
    assert form["fields"].get("csrfmiddlewaretoken"), "login form has no csrfmiddlewaretoken"
    data = dict(form["fields"])
    data.update(username=username, password=password)
    assert data.get("next"), "login form lost the ?next= authorize URL"
    post_url = urljoin(login_url, form["action"] or login_url)  # exactly what a browser would post to
    r = browser.post(post_url, data=data, headers={"Referer": login_url}, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 302, f"DOT login POST: expected 302, got {r.status_code}: {r.text[:500]}"
    back = urljoin(login_url, r.headers["Location"])
    assert urlsplit(back).path == urlsplit(authorize_url).path, f"login did not return to authorize: {back}"
    assert query_of(back) == query_of(authorize_url), "login changed the authorize request"

    r = browser.get(back, allow_redirects=False, timeout=TIMEOUT)
    if r.status_code == 200 and "allow" in r.text:
        raise AssertionError("DOT showed a consent page; the Application should have skip_authorization=True")
    assert r.status_code == 302, f"DOT authorize after login: expected 302, got {r.status_code}: {r.text[:500]}"
    return r


class DotDB:
    """Read-only look at DOT's SQLite tables (tokens are stored in clear text)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def _q(self, sql: str, args=()) -> list[sqlite3.Row]:
        con = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=20)
        con.row_factory = sqlite3.Row
        try:
            return con.execute(sql, args).fetchall()
        finally:
            con.close()

    def max_ids(self) -> tuple[int, int]:
        """(max refresh-token id, max access-token id): a baseline before a test's login."""
        rt = self._q("SELECT COALESCE(MAX(id), 0) AS m FROM oauth2_provider_refreshtoken")[0]["m"]
        at = self._q("SELECT COALESCE(MAX(id), 0) AS m FROM oauth2_provider_accesstoken")[0]["m"]
        return rt, at

    def refresh_tokens(self, after_id: int = 0) -> list[sqlite3.Row]:
        return self._q(
            "SELECT id, token, access_token_id, revoked, created FROM oauth2_provider_refreshtoken "
            "WHERE id > ? ORDER BY id",
            (after_id,),
        )

    def access_tokens(self, after_id: int = 0) -> list[sqlite3.Row]:
        return self._q(
            "SELECT id, token, expires, scope FROM oauth2_provider_accesstoken WHERE id > ? ORDER BY id",
            (after_id,),
        )


    def max_id_token_id(self) -> int:
        return self._q("SELECT COALESCE(MAX(id), 0) AS m FROM oauth2_provider_idtoken")[0]["m"]

    def id_tokens(self, after_id: int = 0) -> list[sqlite3.Row]:
        """OIDC ID tokens DOT issued (it stores their jti, not the JWT)."""
        return self._q(
            "SELECT id, jti, scope, user_id, application_id FROM oauth2_provider_idtoken WHERE id > ? ORDER BY id",
            (after_id,),
        )

    def access_tokens_with_id_token(self, after_id: int = 0) -> list[sqlite3.Row]:
        return self._q(
            "SELECT id, token, scope, id_token_id FROM oauth2_provider_accesstoken WHERE id > ? ORDER BY id",
            (after_id,),
        )


def expire_access_tokens_now(db_path: str, after_id: int) -> int:
    """Make DOT consider the live access tokens (id > after_id) expired, as if time had passed.

    Only `expires` changes; the refresh token stays valid. Returns the number of rows changed.
    """
    con = sqlite3.connect(db_path, timeout=20)
    try:
        with con:
            cur = con.execute(
                "UPDATE oauth2_provider_accesstoken SET expires = '2000-01-01 00:00:00' WHERE id > ?", (after_id,)
            )
            return cur.rowcount
    finally:
        con.close()
