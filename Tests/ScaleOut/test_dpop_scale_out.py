"""DPoP-bound sessions (RFC 9449) on two instances sharing one PostgreSQL: a proof's `jti` is spent for
the whole cluster, not per process.

Both instances run one configuration whose public_url is A's, as behind a load balancer: every proof
names `{public_url}{path}` whichever instance receives it. The client is requests_oauth2client
(see Tests/Interop/dpop_support.py).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import requests

from dpop_support import (
    assert_dpop_refusal,
    assert_grant,
    assert_problem,
    dpop_auth,
    dpop_headers,
    exchange,
    library_call,
    native_login,
    new_key,
    proof,
)

TIMEOUT = 30


def public(cluster) -> str:
    return cluster.a.url  # the configuration's public_url


def login(cluster) -> dict:
    """Started at A, DOT's redirect delivered to B (what a load balancer may do)."""
    return native_login(cluster.a.url, "dot", cluster.dot["username"], cluster.dot["password"], callback_base=cluster.b.url)


def bind(cluster, key, at=None) -> str:
    gw = at or cluster.a
    r = exchange(gw.url, login(cluster), dpop=proof(key, "POST", f"{public(cluster)}/v1/session"))
    return assert_grant(r, "DPoP")


def get(gw, path: str, headers: dict) -> requests.Response:
    return requests.get(f"{gw.url}{path}", headers=headers, allow_redirects=False, timeout=TIMEOUT)


def test_proof_spent_on_a_is_refused_on_b(cluster):
    key = new_key("ES256")
    token = bind(cluster, key)
    for path in ("/v1/session", "/v1/proxy/dot/me"):
        headers = dpop_headers(key, "GET", f"{public(cluster)}{path}", token)
        r = get(cluster.a, path, headers)
        assert r.status_code == 200, f"A {path}: {r.status_code} {r.text[:500]}"
        r = get(cluster.b, path, headers)  # the same proof, same jti, at the other instance
        assert_dpop_refusal(r)
        r = get(cluster.b, path, dpop_headers(key, "GET", f"{public(cluster)}{path}", token))
        assert r.status_code == 200, f"B {path} with a fresh proof: {r.status_code} {r.text[:500]}"


def test_proof_spent_on_b_is_refused_on_a(cluster):
    key = new_key("EdDSA")
    token = bind(cluster, key, at=cluster.b)
    headers = dpop_headers(key, "GET", f"{public(cluster)}/v1/session", token)
    assert get(cluster.b, "/v1/session", headers).status_code == 200
    assert_dpop_refusal(get(cluster.a, "/v1/session", headers))
    assert_dpop_refusal(get(cluster.b, "/v1/session", headers))


def test_concurrent_uses_of_one_proof_over_both_instances_pass_once(cluster):
    key = new_key()
    token = bind(cluster, key)
    headers = dpop_headers(key, "GET", f"{public(cluster)}/v1/session", token)
    targets = [cluster.a if i % 2 == 0 else cluster.b for i in range(16)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(lambda gw: get(gw, "/v1/session", headers), targets))
    statuses = [r.status_code for r in answers]
    assert statuses.count(200) == 1, f"one proof, 16 concurrent uses over A and B: {statuses}"
    for r in answers:
        if r.status_code != 200:
            assert_dpop_refusal(r)


def test_proof_must_name_the_public_url_not_the_instance(cluster):
    key = new_key()
    token = bind(cluster, key)
    r = get(cluster.b, "/v1/session", dpop_headers(key, "GET", f"{cluster.b.url}/v1/session", token))
    assert_dpop_refusal(r)
    # the library's DPoPToken names the URL it calls, which is the public one at A
    auth = dpop_auth(key, token)
    assert library_call("GET", f"{cluster.a.url}/v1/session", auth).status_code == 200


def test_sign_in_proof_spent_on_a_is_refused_on_b(cluster):
    key = new_key()
    p = proof(key, "POST", f"{public(cluster)}/v1/session")
    assert_grant(exchange(cluster.a.url, login(cluster), dpop=p), "DPoP")
    r = exchange(cluster.b.url, login(cluster), dpop=p)
    assert_problem(r, 400, "invalid_dpop_proof")


def test_bad_sign_in_proof_on_b_spends_the_code_for_a(cluster):
    key = new_key()
    handoff = login(cluster)
    r = exchange(cluster.b.url, handoff, dpop=proof(key, "POST", f"{cluster.b.url}/v1/session"))  # htu not public_url
    assert_problem(r, 400, "invalid_dpop_proof")
    r = exchange(cluster.a.url, handoff, dpop=proof(key, "POST", f"{public(cluster)}/v1/session"))
    assert_problem(r, 400, "invalid_grant")


def test_logout_on_b_with_proof_ends_the_bound_session_on_a(cluster):
    key = new_key("RS256")
    token = bind(cluster, key)
    url = f"{public(cluster)}/v1/session"
    assert get(cluster.a, "/v1/session", dpop_headers(key, "GET", url, token)).status_code == 200
    r = requests.delete(f"{cluster.b.url}/v1/session", headers=dpop_headers(key, "DELETE", url, token), timeout=TIMEOUT)
    assert r.status_code in (200, 204), r.text
    assert_problem(get(cluster.a, "/v1/session", dpop_headers(key, "GET", url, token)), 401, "invalid_session")
