"""Page logins (`capture` by cookie and by title, `acs` with its Notify post) on two gateway processes
sharing the real PostgreSQL: each step of one login goes to the other instance, as a round-robin balancer
sends it, and the login continues from the state the other instance stored. The stand-in sites are those
of `gatehouse demo` (its banner names them)."""
from __future__ import annotations

import re
import shutil

import pytest
import requests

from gatehouse_testkit import running_demo, yaml_quote as q

TIMEOUT = 30
# The ACS stand-in's fixed demo key (StandInACS.signingKeyBase64's default) and the demo's realm.
ACS_SIGNING_KEY = "N4QeKa3c062VBjnVK6fb+rnwURkcwGXh7EoNK34n0uM="
ACS_REALM = "urn:gatehouse:demo"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture(scope="module")
def page_pair(cluster):
    """Two more instances (c, d) on the cluster's PostgreSQL, with the page-login providers."""
    with running_demo("gatehouse-scaleout-pages-", 60) as (_, banner_log):
        banner = banner_log.read_text(errors="replace")
        acs = re.search(r"ACS stand-in\s+(http://\S+)", banner).group(1)
        legacy = re.search(r"legacy site\s+(http://\S+)", banner).group(1)
        providers = cluster.root / "PageProviders"
        providers.mkdir(exist_ok=True)
        key_file = cluster.root / "acs-signing-key"
        key_file.write_text(ACS_SIGNING_KEY + "\n")
        key_file.chmod(0o600)
        (providers / "azure.yaml").write_text(
            f"id: azure\nkind: acs\nlogin_url: {q(acs + '/login')}\nallowed_origins: [{q(acs)}]\nrealm: {q(ACS_REALM)}\n"
            f"issuer: {q(acs + '/')}\nsigning_key_file: {q(str(key_file))}\n")
        for provider, capture in (("legacy", "{from: cookie}"), ("legacytitle", "{from: title}")):
            (providers / f"{provider}.yaml").write_text(
                f"id: {provider}\nkind: capture\nlogin_url: {q(legacy + '/login')}\nallowed_origins: [{q(legacy)}]\n"
                f"success_url: {q(legacy + '/welcome*')}\ncapture: {capture}\nprobe: {{url: {q(legacy + '/api/me')}}}\n")
        text = re.sub(r"^providers_dir: .*$", f"providers_dir: {q(str(providers))}", cluster.config.read_text(), flags=re.M)
        config = cluster.root / "gatehouse-pages.yaml"
        config.write_text(text)
        c, d = cluster.new_gateway("c", config), cluster.new_gateway("d", config)
        try:
            c.start()
            d.start()
            yield c, d, acs
        finally:
            c.stop()
            d.stop()
            shutil.rmtree(providers, ignore_errors=True)


def binding(response: requests.Response) -> dict:
    """The login's binding cookie as a header (it is `Secure`: requests would not send it over http)."""
    for value in response.raw.headers.getlist("Set-Cookie"):
        pair = value.split(";")[0]
        if pair.startswith("gatehouse_login_") or "_login_" in pair.split("=")[0]:
            return {"Cookie": pair}
    raise AssertionError(f"no login binding cookie in {response.headers}")


def start(gateway, provider: str) -> tuple[str, str, dict]:
    r = requests.get(f"{gateway.url}/v1/auth/{provider}/pages", params={"return_to": "/"}, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 303, r.text
    path = r.headers["Location"]
    return path, path.split("/")[3], binding(r)


@pytest.mark.parametrize("provider", ["legacy", "legacytitle"])
def test_capture_login_alternates_instances_on_postgres(page_pair, provider):
    c, d, _ = page_pair
    for first, second in ((c, d), (d, c)):
        path, _, bound = start(first, provider)
        page = requests.get(second.url + path, headers=bound, allow_redirects=False, timeout=TIMEOUT)
        assert page.status_code == 200, f"{second.name}: {page.status_code} {page.text}"
        posted = requests.post(first.url + path, headers={**bound, **FORM}, data="user=bob&password=secret",
                               allow_redirects=False, timeout=TIMEOUT)
        assert posted.status_code == 302, posted.text
        # The welcome page's capture needs the cookies the site set through the other instance.
        welcome = requests.get(second.url + posted.headers["Location"], headers=bound, allow_redirects=False, timeout=TIMEOUT)
        assert welcome.status_code == 303, f"{second.name}: {welcome.status_code} {welcome.text}"
        session = next(v.split(";")[0] for v in welcome.raw.headers.getlist("Set-Cookie") if not v.startswith("gatehouse_login_") and "_login_" not in v.split("=")[0])
        me = requests.get(first.url + "/v1/session", headers={"Cookie": session}, timeout=TIMEOUT)
        assert me.status_code == 200 and me.json()["subject"] == "user-bob", me.text
        again = requests.get(first.url + path, headers=bound, timeout=TIMEOUT)
        assert again.status_code == 404 and again.json()["code"] == "unknown_login", again.text


def test_acs_login_alternates_instances_on_postgres(page_pair):
    c, d, _ = page_pair
    path, login_id, bound = start(c, "azure")
    posted = requests.post(d.url + path, headers={**bound, **FORM}, data="email=carol%40acs.demo.test", allow_redirects=False, timeout=TIMEOUT)
    assert posted.status_code == 302, posted.text
    # The result page (JavaScript string escapes undone below) needs the ACS session cookie set through d; it carries the Notify payload.
    result = requests.get(c.url + posted.headers["Location"], headers=bound, timeout=TIMEOUT)
    assert result.status_code == 200 and "window.external.Notify('" in result.text, result.text[:500]
    payload = re.search(r"window\.external\.Notify\('(.*?)'\)", result.text, re.S).group(1)
    notified = requests.post(f"{d.url}/v1/pages/{login_id}/capture", headers={**bound, "Content-Type": "text/plain"},
                             data=re.sub(r"\\(.)", r"\1", payload).encode(), timeout=TIMEOUT)
    assert notified.status_code == 200, notified.text
    assert notified.json()["location"] == "/"
