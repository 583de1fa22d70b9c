"""The package built from this commit, installed into a fresh Debian 12 (debootstrap minbase) with apt and run as its
unit runs it, then purged (see conftest.py for how). The tests run in this order and share one gateway; each
says what it needs from the ones before.

  * the install: `Depends` resolved by the root's apt bring everything the binary needs (ca-certificates
    included); the system user and the state directory
  * the unit's ExecStartPre and ExecStart as `gatehouse`: ready, which needs the provider's discovery over
    https, trusted through the root's own trust store
  * a browser sign-in through django-oauth-toolkit's OpenID Connect over https; GET /v1/session
  * /v1/api to the plain-http backend and to the https upstream, as the signed-in user
  * /v1/authz as nginx asks it, with and without the session cookie
  * sign-out (POST /v1/sign-out), after which the cookie reaches nothing
  * `apt-get purge gatehouse`: nothing the package or the gateway made remains; what the operator added to
    /etc/gatehouse stays (as dpkg leaves it), and so does the system user (deploy/README.md: "The user stays")
"""
from __future__ import annotations

import os
import stat
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from conftest import CA_NAME, MOUNTED, PROVIDER_ID, UPSTREAM_PREFIX, UNIT_PATH, phase
from gatehouse_testkit import wait_until
from interop_support import dot_sign_in

TIMEOUT = 10
COOKIE = "gatehouse_session"  # the packaged gatehouse.yaml's sessions.cookie.name (plain http on loopback)
OPERATOR_DIRECTORIES = ["/etc/gatehouse", "/etc/gatehouse/Providers"]


@pytest.fixture(scope="module")
def signed_in() -> dict:
    """What the sign-in test leaves for the tests after it: the session cookie's value."""
    return {}


def session_cookie(signed_in: dict) -> str:
    if "cookie" not in signed_in:
        pytest.fail("no session: the sign-in test above failed", pytrace=False)
    return signed_in["cookie"]


def with_cookie(value: str) -> dict:
    return {"Cookie": f"{COOKIE}={value}"}


# ---------------------------------------------------------------- installed

def test_apt_installs_the_package_and_its_depends_into_a_fresh_debian_12(installed):
    root = installed.root
    assert root.package_status("gatehouse") == "installed"
    # Brought by Depends alone (none of them is in a minbase root): the trust store and SQLite.
    for package in ["ca-certificates", "libsqlite3-0", "adduser"]:
        assert root.package_status(package) == "installed", f"{package} is not installed:\n{installed.output[-3000:]}"
    assert (root / "etc/ssl/certs/ca-certificates.crt").is_file()
    ldd = root.run(["ldd", "/usr/bin/gatehouse"])
    assert ldd.returncode == 0 and "not found" not in ldd.stdout, ldd.stdout + ldd.stderr
    version = root.run(["/usr/bin/gatehouse", "--version"])
    assert version.returncode == 0 and version.stdout.startswith("gatehouse "), version

    account = root.passwd("gatehouse")
    assert account and account[5:] == ["/var/lib/gatehouse", "/usr/sbin/nologin"], account
    assert int(account[2]) < 1000, f"not a system user: {account}"
    state = os.stat(root / "var/lib/gatehouse")
    assert (state.st_uid, stat.S_IMODE(state.st_mode)) == (int(account[2]), 0o700)


# ---------------------------------------------------------------- the unit

def test_unit_start_commands_run_as_the_gatehouse_user(service):
    runner = service.runner
    assert runner.one("User") == "gatehouse" and runner.one("Group") == "gatehouse"
    # ExecStartPre: `gatehouse check` as that user, with the operator's files.
    assert service.pre, "the unit has no ExecStartPre"
    assert "configuration OK" in service.pre[0].stdout + service.pre[0].stderr, service.pre[0]
    # The running gateway is the ExecStart process itself, as that user, without privileges.
    status = dict(line.split(":\t", 1) for line in open(f"/proc/{service.proc.pid}/status").read().splitlines() if ":\t" in line)
    assert status["Name"].strip() == "gatehouse", status["Name"]
    assert status["Uid"].split() == [str(runner.uid)] * 4, status["Uid"]
    assert status["Gid"].split() == [str(runner.gid)] * 4, status["Gid"]
    assert int(status["CapEff"], 16) == 0 and int(status["CapBnd"], 16) == 0, (status["CapEff"], status["CapBnd"])
    assert status["NoNewPrivs"].strip() == "1"


def test_gateway_is_ready_with_the_provider_discovered_over_https(service, dot):
    """/readyz is 200 only once DOT's discovery document was fetched: over https, trusted through the root's
    /etc/ssl/certs (ca-certificates, from Depends, plus the operator's CA)."""
    def ready() -> bool:
        try:
            return requests.get(service.url + "/readyz", timeout=TIMEOUT).status_code == 200
        except requests.RequestException:
            return False

    wait_until(ready, 30, 0.2)
    r = requests.get(service.url + "/readyz", timeout=TIMEOUT)
    assert r.status_code == 200, f"/readyz {r.status_code}: {r.text}"
    state = service.runner.root / "var/lib/gatehouse"
    made = {p.name: p.stat() for p in state.iterdir()}
    assert {"gatehouse.sqlite3", "sealing-k1.key", "signing-s1.pem"} <= set(made), sorted(made)
    for name in ["sealing-k1.key", "signing-s1.pem"]:
        assert made[name].st_uid == service.runner.uid and stat.S_IMODE(made[name].st_mode) == 0o600, name


# ---------------------------------------------------------------- a user

def test_browser_signs_in_through_the_oidc_provider_over_https(service, dot, certificates, signed_in):
    browser = requests.Session()  # the browser's cookies on the gateway (plain http on loopback)
    with phase("sign-in"):
        r = browser.get(f"{service.url}/v1/auth/{PROVIDER_ID}/login", params={"return_to": "/"},
                        allow_redirects=False, timeout=TIMEOUT)
        assert r.status_code == 302, f"login: {r.status_code}: {r.text[:1000]}"
        to_provider = r.headers["Location"]
        assert to_provider.startswith(dot.url + "/o/authorize/?"), to_provider
        assert to_provider.startswith("https://")
        at_provider = requests.Session()  # the same browser at the provider, which trusts the private CA
        at_provider.trust_env = False      # (else REQUESTS_CA_BUNDLE of the environment wins over `verify`)
        at_provider.verify = str(certificates.ca)
        final = dot_sign_in(at_provider, to_provider, dot.username, dot.password)
        callback = final.headers["Location"]
        assert callback.startswith(f"{service.url}/v1/auth/{PROVIDER_ID}/callback?"), callback
        assert parse_qs(urlsplit(callback).query)["iss"] == [dot.issuer]
        r = browser.get(callback, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 303, f"callback: {r.status_code}: {r.text[:1000]}"
    assert r.headers["Location"] == "/", r.headers["Location"]
    cookie = browser.cookies.get(COOKIE)
    assert cookie, f"no {COOKIE} cookie after the callback: {r.headers.get('Set-Cookie')}"
    signed_in["cookie"] = cookie

    r = requests.get(f"{service.url}/v1/session", headers=with_cookie(cookie), timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    view = r.json()
    assert view["provider"] == PROVIDER_ID
    assert view["subject"] == dot.subject
    assert view["identity"]["email"] == dot.email
    signed_in["subject"] = dot.subject


def test_api_reaches_the_http_backend_as_the_user(service, http_backend, signed_in):
    cookie = session_cookie(signed_in)
    before = http_backend.count()
    r = requests.get(f"{service.url}/v1/api/orders/7?x=1", headers=with_cookie(cookie), timeout=TIMEOUT)
    assert r.status_code == 200, f"/v1/api to http backend {http_backend.base}: {r.status_code}: {r.text[:1000]}"
    assert http_backend.count() == before + 1
    seen = http_backend.last()
    assert seen.path == "/orders/7?x=1"
    assert seen.header("X-Gatehouse-Subject") == signed_in["subject"]
    assert seen.header("X-Gatehouse-Provider") == PROVIDER_ID
    assert seen.header("X-Gatehouse-Assertion")
    assert COOKIE not in (seen.header("Cookie") or "")


def test_api_reaches_the_https_upstream_as_the_user(service, https_upstream, signed_in):
    """The upstream's certificate is trusted through the root's trust store, as the provider's is."""
    cookie = session_cookie(signed_in)
    before = https_upstream.count()
    r = requests.get(f"{service.url}/v1/api{UPSTREAM_PREFIX}/reports/q1", headers=with_cookie(cookie), timeout=TIMEOUT)
    assert r.status_code == 200, f"/v1/api to https upstream {https_upstream.base}: {r.status_code}: {r.text[:1000]}"
    assert https_upstream.count() == before + 1
    seen = https_upstream.last()
    assert seen.path == "/reports/q1"
    assert seen.header("X-Gatehouse-Subject") == signed_in["subject"]
    assert seen.header("X-Gatehouse-Assertion")


def test_authz_answers_as_nginx_asks(service, signed_in):
    cookie = session_cookie(signed_in)
    original = {"X-Original-URI": "/app/page?q=1", "X-Original-Method": "GET"}
    r = requests.get(f"{service.url}/v1/authz", headers={**original, **with_cookie(cookie)}, timeout=TIMEOUT)
    assert r.status_code == 200, f"/v1/authz with the cookie: {r.status_code}: {r.text[:1000]}"
    assert r.headers["X-Gatehouse-Subject"] == signed_in["subject"]
    assert r.headers["X-Gatehouse-Provider"] == PROVIDER_ID
    assert r.headers["X-Gatehouse-Assertion"]
    r = requests.get(f"{service.url}/v1/authz", headers=original, timeout=TIMEOUT)
    assert r.status_code == 401, f"/v1/authz without a session: {r.status_code}: {r.text[:1000]}"


def test_sign_out_ends_the_session(service, signed_in):
    cookie = session_cookie(signed_in)
    r = requests.post(f"{service.url}/v1/sign-out", data={"return_to": "/"},
                      headers={**with_cookie(cookie), "Origin": service.url}, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 303, f"POST /v1/sign-out: {r.status_code}: {r.text[:1000]}"
    assert f"{COOKIE}=;" in r.headers.get("Set-Cookie", "") or "Max-Age=0" in r.headers.get("Set-Cookie", ""), r.headers
    for path in ["/v1/api/orders/7", "/v1/session"]:
        r = requests.get(service.url + path, headers=with_cookie(cookie), timeout=TIMEOUT)
        assert r.status_code == 401, f"{path} after sign-out: {r.status_code}: {r.text[:500]}"
    r = requests.get(f"{service.url}/v1/authz", headers={"X-Original-URI": "/app/page", **with_cookie(cookie)}, timeout=TIMEOUT)
    assert r.status_code == 401, f"/v1/authz after sign-out: {r.status_code}"


# ---------------------------------------------------------------- purge

#: Where apt and dpkg keep their own records and caches (they change with any installation).
BOOKKEEPING = ("/var/lib/dpkg/", "/var/lib/apt/", "/var/cache/apt/", "/var/cache/debconf/", "/var/log/")
#: Made by the maintainer scripts of ca-certificates (a dependency, which stays): its configuration, the
#: directory for local CAs, and the trust store update-ca-certificates writes.
OTHER_PACKAGES_MADE = ("/etc/ca-certificates.conf", "/usr/local/share/ca-certificates", "/etc/ssl/certs/",
                       # the backups of the account files that adduser's useradd and groupadd write when they
                       # add the system user, which stays
                       "/etc/shadow-", "/etc/gshadow-")


def test_purge_leaves_nothing_but_the_operators_files(service, installed):
    root = installed.root
    assert service.stop() in (0, -15), f"the gateway did not stop on SIGTERM within TimeoutStopSec: {service.exit_code}"
    uid, gid = service.runner.uid, service.runner.gid
    with phase("apt-get purge"):
        purged = root.run(["apt-get", "purge", "-y", "gatehouse"], timeout=240)
    assert purged.returncode == 0, f"apt-get purge gatehouse:\n{purged.stdout}\n{purged.stderr}"
    assert root.package_status("gatehouse") == "not-installed", root.run(["dpkg", "-s", "gatehouse"]).stdout

    after = root.snapshot()
    for gone in ["/usr/bin/gatehouse", UNIT_PATH, "/var/lib/gatehouse", "/etc/gatehouse/gatehouse.yaml",
                 "/etc/gatehouse/data", "/etc/gatehouse/Providers/README", "/usr/share/doc/gatehouse",
                 "/usr/share/man/man1/gatehouse.1.gz", "/usr/share/lintian/overrides/gatehouse",
                 "/etc/systemd/system/gatehouse.service",
                 "/etc/systemd/system/multi-user.target.wants/gatehouse.service"]:
        assert gone not in after, f"{gone} is still there after the purge"

    # /etc/gatehouse: exactly what the operator added, in the directories dpkg keeps for them.
    kept = sorted(p for p in after if p == "/etc/gatehouse" or p.startswith("/etc/gatehouse/"))
    operator = sorted([f for f in installed.operator_files if f.startswith("/etc/gatehouse/")] + OPERATOR_DIRECTORIES)
    assert kept == operator, f"/etc/gatehouse after the purge: {kept}, the operator's: {operator}"
    for path in installed.operator_files:
        assert path in after, f"the operator's {path} was removed"

    # Nothing the gateway made: no file of its user or group is left anywhere.
    theirs = sorted(p for p, (owner, group) in after.items() if owner == uid or group == gid)
    assert not theirs, f"files of the gatehouse user or group after the purge: {theirs}"

    # Every path that is new since before the installation belongs to something else: apt's and dpkg's
    # records, an installed package (the dependencies stay, as apt leaves them), what their maintainer scripts
    # made (ca-certificates' trust store, the account files' backups), or the operator.
    owned = root.owned_by_packages()
    new = sorted(p for p in set(after) - set(installed.before)
                 if not p.startswith(BOOKKEEPING) and p not in owned
                 and not any(p == m.rstrip("/") or (m.endswith("/") and p.startswith(m)) for m in OTHER_PACKAGES_MADE)
                 and p not in installed.operator_files and p not in OPERATOR_DIRECTORIES
                 and p.split("/")[1] not in MOUNTED)
    assert not new, f"left by the package or the gateway after the purge: {new}"
    assert not [p for p in after if "gatehouse" in p and p not in installed.operator_files
                and p not in OPERATOR_DIRECTORIES and CA_NAME not in p], "a path named gatehouse is left"

    # The system user stays (deploy/README.md: "The user stays", as Debian keeps system users: files it owned
    # elsewhere, e.g. a backup, keep a known owner, and a reinstallation gets the same uid).
    account = root.passwd("gatehouse")
    assert account and int(account[2]) == uid, account
    assert root.group("gatehouse") and int(root.group("gatehouse")[2]) == gid
