#!/usr/bin/env python3
"""Sign in to a `gatehouse demo` gateway as alice (stdlib only) and print a session token.

Usage: login.py GATEWAY_URL [USERNAME PASSWORD]

Native-app flow (RFC 8252) with PKCE S256: gateway /v1/auth/demo/login -> stand-in /authorize
(login form) -> POST the form -> gateway callback -> handoff code -> POST /v1/session.
"""
import base64
import hashlib
import html.parser
import json
import secrets
import sys
import urllib.error
import urllib.parse
import urllib.request

REDIRECT_URI = "http://127.0.0.1:9/callback"
STATE = "s"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def request(url, data=None, headers=None, method=None):
    """Returns (status, headers, body) without following redirects."""
    req = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with OPENER.open(req, timeout=10) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


def expect_redirect(step, status, headers, body, base):
    if status not in (301, 302, 303, 307, 308) or not headers.get("Location"):
        sys.exit(f"login.py: {step}: expected a redirect, got {status}: {body[:500]!r}")
    return urllib.parse.urljoin(base, headers["Location"])


class FormParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.action = None
        self.hidden = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = attrs.get("action")
        elif tag == "input" and attrs.get("type") == "hidden" and attrs.get("name"):
            self.hidden.append((attrs["name"], attrs.get("value") or ""))


def main():
    if len(sys.argv) not in (2, 4):
        sys.exit(__doc__)
    gateway = sys.argv[1].rstrip("/")
    username, password = (sys.argv[2], sys.argv[3]) if len(sys.argv) == 4 else ("alice", "alice-password")

    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()

    # 1. Gateway login -> 302 to the provider's /authorize.
    query = urllib.parse.urlencode({
        "redirect_uri": REDIRECT_URI, "state": STATE,
        "code_challenge": challenge, "code_challenge_method": "S256",
    })
    login_url = f"{gateway}/v1/auth/demo/login?{query}"
    status, headers, body = request(login_url)
    authorize_url = expect_redirect("gateway login", status, headers, body, login_url)

    # 2. The stand-in's login form.
    status, headers, body = request(authorize_url)
    if status != 200:
        sys.exit(f"login.py: authorize page: {status}: {body[:500]!r}")
    form = FormParser()
    form.feed(body.decode("utf-8", "replace"))
    if form.action is None:
        sys.exit("login.py: authorize page has no form")

    # 3. Submit the credentials with the hidden fields -> 302 to the gateway callback.
    fields = form.hidden + [("username", username), ("password", password)]
    submit_url = urllib.parse.urljoin(authorize_url, form.action)
    status, headers, body = request(
        submit_url, data=urllib.parse.urlencode(fields).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"}, method="POST")
    callback_url = expect_redirect("sign-in form", status, headers, body, submit_url)

    # 4. Gateway callback -> 302 to our redirect_uri with the one-time handoff code.
    status, headers, body = request(callback_url)
    final_url = expect_redirect("gateway callback", status, headers, body, callback_url)
    params = urllib.parse.parse_qs(urllib.parse.urlsplit(final_url).query)
    if "code" not in params:
        sys.exit(f"login.py: no code in the final redirect: {final_url}")
    if params.get("state") != [STATE]:
        sys.exit(f"login.py: state mismatch in the final redirect: {final_url}")

    # 5. Exchange the handoff code for a session token.
    payload = json.dumps({
        "grant_type": "authorization_code", "code": params["code"][0],
        "code_verifier": verifier, "redirect_uri": REDIRECT_URI,
    }).encode()
    status, headers, body = request(
        f"{gateway}/v1/session", data=payload, headers={"Content-Type": "application/json"}, method="POST")
    if status != 201:
        sys.exit(f"login.py: POST /v1/session: {status}: {body[:500]!r}")
    token = json.loads(body).get("session_token")
    if not token:
        sys.exit(f"login.py: no session_token in {body[:500]!r}")
    print(token)


if __name__ == "__main__":
    main()
