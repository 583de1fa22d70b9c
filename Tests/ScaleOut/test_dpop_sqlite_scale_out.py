"""DPoP-bound sessions on two gateway processes sharing one SQLite file: a proof's `jti` is spent for both.

Each process keeps in memory what it has seen of the file's append-only replay log and reads the other's
new records inside the write that records its own, so a proof accepted by one is refused by the other,
also when both receive it at the same moment, and after a restart.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import requests

from dpop_support import assert_dpop_refusal, assert_grant, dpop_headers, exchange, native_login, new_key, proof

TIMEOUT = 30


def public(cluster) -> str:
    return cluster.a.url  # the configuration's public_url, which every proof names


def bound_token(cluster, start, callback, key) -> str:
    handoff = native_login(start.url, "dot", cluster.dot["username"], cluster.dot["password"], callback_base=callback.url)
    return assert_grant(exchange(start.url, handoff, dpop=proof(key, "POST", f"{public(cluster)}/v1/session")), "DPoP")


def get(gw, headers: dict) -> requests.Response:
    return requests.get(f"{gw.url}/v1/session", headers=headers, allow_redirects=False, timeout=TIMEOUT)


def test_a_proof_is_spent_once_over_two_processes_on_one_sqlite_file(cluster):
    config = cluster.write_sqlite_config(cluster.root / "dpop-shared.sqlite3")
    s1, s2 = cluster.new_gateway("dpop-sqlite-1", config), cluster.new_gateway("dpop-sqlite-2", config)
    try:
        s1.start()
        s2.start()
        key = new_key()
        token = bound_token(cluster, s1, s2, key)
        url = f"{public(cluster)}/v1/session"

        # One after the other, both ways.
        headers = dpop_headers(key, "GET", url, token)
        assert get(s1, headers).status_code == 200
        assert_dpop_refusal(get(s2, headers))
        headers = dpop_headers(key, "GET", url, token)
        assert get(s2, headers).status_code == 200
        assert_dpop_refusal(get(s1, headers))

        # Many proofs, each sent to both processes at once: each passes exactly once.
        proofs = [dpop_headers(key, "GET", url, token) for _ in range(40)]
        uses = [(gw, h) for h in proofs for gw in (s1, s2, s1, s2)]
        with ThreadPoolExecutor(max_workers=32) as pool:
            statuses = list(pool.map(lambda use: get(*use).status_code, uses))
        per_proof = [statuses[i:i + 4] for i in range(0, len(statuses), 4)]
        assert all(s.count(200) == 1 and s.count(401) == 3 for s in per_proof), per_proof

        # A restarted process still refuses a proof spent before the restart (by itself or the other).
        spent = dpop_headers(key, "GET", url, token)
        assert get(s1, spent).status_code == 200
        s2.stop()
        s2.start()
        assert_dpop_refusal(get(s2, spent))
        assert_dpop_refusal(get(s2, headers))
        assert get(s2, dpop_headers(key, "GET", url, token)).status_code == 200
    finally:
        s1.stop()
        s2.stop()
