"""Device sign-in across two gateway instances sharing one PostgreSQL: the device asks A, the person types the
code, confirms and comes back from the provider at B, and the device's token calls racing on A and B get one
session (DPoP-bound to the device's key); the code is then spent on both.

The OpenID provider is Tests/Support/oidc_provider.py, run here; the instances are `gatehouse serve` processes
on one configuration (public_url = A's, as behind a load balancer).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
import requests

from conftest import Gateway, Postgres, _q
from device_signin import Person, authorize, error_of, poll
from dpop_key import DPoPKey
from gatehouse_testkit import free_port, require_gateway_binary
from oidc_provider import OpenIDProvider, write_provider_file


@pytest.fixture(scope="module")
def pair():
    binary = require_gateway_binary()
    tmp = Path(tempfile.mkdtemp(prefix="gatehouse-device-"))
    tmp.chmod(0o755)
    pg = Postgres(tmp / "pg")
    provider = OpenIDProvider()
    root = tmp / "gateway"
    (root / "Providers").mkdir(parents=True)
    a = b = None
    try:
        subprocess.run([str(binary), "keys", "generate", "--id", "k1", "--directory", str(root / "keys")],
                       check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        a_port = free_port()
        config = root / "gatehouse.yaml"
        config.write_text(f"""public_url: {_q(f"http://127.0.0.1:{a_port}")}
providers_dir: {_q(str(root / "Providers"))}
store:
  kind: "postgres"
  url: {_q(pg.url)}
  pool_size: 10
sessions: {{cookie: {{secure: false, name: "gatehouse_session"}}}}
device: {{interval_seconds: 1}}
keys:
  sealing: [{{id: "k1", file: {_q(str(root / "keys" / "sealing-k1.key"))}}}]
  signing: [{{id: "k1", file: {_q(str(root / "keys" / "signing-k1.pem"))}}}]
""")
        write_provider_file(root / "Providers", "idp", provider, backchannel_logout=None)
        a, b = Gateway("a", binary, config, root), Gateway("b", binary, config, root)
        a.port, a.url = a_port, f"http://127.0.0.1:{a_port}"
        a.start()
        b.start()
        yield a, b, provider
    finally:
        for gateway in (a, b):
            if gateway is not None:
                gateway.stop()
        provider.close()
        pg.destroy()
        if os.environ.get("SCALEOUT_KEEP_TMP") != "1":
            shutil.rmtree(tmp, ignore_errors=True)


def test_a_device_asks_a_the_person_signs_in_at_b_and_racing_token_calls_get_one_session(pair):
    a, b, provider = pair
    provider.next_login = {"sub": "pg-dev", "sid": "sid-pg"}
    key = DPoPKey()
    answer = authorize(a, key)
    assert error_of(poll(b, answer["device_code"], key, public_url=a.url)) == "authorization_pending"
    done = Person(b, public_url=a.url).sign_in(answer["user_code"])
    assert done.status_code == 200 and "Return to your terminal" in done.text, done.text
    time.sleep(1.1)
    results: list[requests.Response] = []
    barrier = threading.Barrier(2)

    def race(gateway):
        barrier.wait()
        results.append(poll(gateway, answer["device_code"], key, public_url=a.url))

    threads = [threading.Thread(target=race, args=(g,)) for g in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.status_code for r in results) == [201, 400], [(r.status_code, r.text) for r in results]
    grant = next(r for r in results if r.status_code == 201).json()
    assert grant["token_type"] == "DPoP" and grant["session"]["subject"] == "pg-dev"
    assert error_of(next(r for r in results if r.status_code == 400)) in ("invalid_grant", "slow_down")
    time.sleep(1.1)
    for gateway in (a, b):
        assert error_of(poll(gateway, answer["device_code"], key, public_url=a.url)) == "invalid_grant"
    url = a.url + "/v1/session"
    for gateway in (a, b):
        view = requests.get(gateway.url + "/v1/session", timeout=10,
                            headers={"Authorization": "DPoP " + grant["session_token"], "DPoP": key.proof("GET", url, grant["session_token"])})
        assert view.status_code == 200, view.text
