"""Device sign-in across two gateway instances sharing one PostgreSQL: the device asks A, the person types the
code, confirms and comes back from the provider at B, and the device's token calls racing on A and B get one
session (DPoP-bound to the device's key); the code is then spent on both.

The OpenID provider is Tests/Support/oidc_provider.py, run here; the instances are `gatehouse serve` processes
on one configuration (public_url = A's, as behind a load balancer).
"""
from __future__ import annotations

import threading
import time

import pytest
import requests

from conftest import oidc_pair
from device_signin import Person, authorize, error_of, poll
from dpop_key import DPoPKey


@pytest.fixture(scope="module")
def pair():
    with oidc_pair("gatehouse-device-", config_extra='sessions: {cookie: {secure: false, name: "gatehouse_session"}}\n'
                   "device: {interval_seconds: 1}\n", backchannel_logout=None) as both:
        yield both.a, both.b, both.provider


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
