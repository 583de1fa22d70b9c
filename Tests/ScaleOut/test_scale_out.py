"""Two gateway instances sharing one PostgreSQL: nothing depends on which instance a request reaches."""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit, urlunsplit

import requests

from interop_support import dot_sign_in, expire_access_tokens_now, pkce_pair, query_of

TIMEOUT = 30
# The SPEC: with the store unreachable every request that needs it gets its 503 within 1 s of the fault,
# the first requests on each instance included. Measured here client-side, with room for the HTTP round trip.
FAULT_BOUND = 1.2
REDIRECT_URI = "http://127.0.0.1:9/cb"


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def on(gateway, url: str) -> str:
    """The same URL sent to another instance (what a load balancer does)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, f"127.0.0.1:{gateway.port}", parts.path, parts.query, parts.fragment))


def login(start, callback, cluster) -> dict:
    """Login started at `start`, DOT's redirect delivered to `callback`. Returns the handoff code and verifier."""
    verifier, challenge = pkce_pair()
    r = requests.get(f"{start.url}/v1/auth/dot/login",
                     params={"redirect_uri": REDIRECT_URI, "state": "s1", "code_challenge": challenge,
                             "code_challenge_method": "S256"}, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 302, r.text
    final = dot_sign_in(requests.Session(), r.headers["Location"], cluster.dot["username"], cluster.dot["password"])
    r = requests.get(on(callback, final.headers["Location"]), allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 302, f"callback at {callback.name}: {r.status_code} {r.text}"
    q = query_of(r.headers["Location"])
    assert "error" not in q, q
    return {"code": q["code"], "verifier": verifier}


def redeem(gateway, handoff) -> requests.Response:
    return requests.post(f"{gateway.url}/v1/session",
                         json={"grant_type": "authorization_code", "code": handoff["code"],
                               "code_verifier": handoff["verifier"], "redirect_uri": REDIRECT_URI}, timeout=TIMEOUT)


def new_session(cluster) -> str:
    r = redeem(cluster.a, login(cluster.a, cluster.b, cluster))
    assert r.status_code == 201, r.text
    return r.json()["session_token"]


def test_login_on_a_callback_on_b_redeemed_on_a_replay_on_b_refused(cluster):
    handoff = login(cluster.a, cluster.b, cluster)
    r = redeem(cluster.a, handoff)
    assert r.status_code == 201, r.text
    token = r.json()["session_token"]
    replay = redeem(cluster.b, handoff)
    assert replay.status_code == 400, replay.text
    assert replay.json()["code"] == "invalid_grant"
    # The replay revokes the session the code produced, on every instance.
    for gw in (cluster.a, cluster.b):
        assert requests.get(f"{gw.url}/v1/session", headers=bearer(token), timeout=TIMEOUT).status_code == 401


def test_session_works_on_both_instances(cluster):
    token = new_session(cluster)
    for gw in (cluster.a, cluster.b):
        r = requests.get(f"{gw.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
        assert r.status_code == 200, r.text
        r = requests.get(f"{gw.url}/v1/proxy/dot/me", headers=bearer(token), timeout=TIMEOUT)
        assert r.status_code == 200, r.text


def test_logout_on_b_is_refused_at_a_at_once(cluster):
    token = new_session(cluster)
    assert requests.get(f"{cluster.a.url}/v1/session", headers=bearer(token), timeout=TIMEOUT).status_code == 200
    r = requests.delete(f"{cluster.b.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
    assert r.status_code in (200, 204), r.text
    r = requests.get(f"{cluster.a.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
    assert r.status_code == 401, r.text


def test_200_concurrent_calls_over_a_and_b_on_an_expired_credential_refresh_once(cluster):
    rt0, at0 = cluster.db.max_ids()
    token = new_session(cluster)
    rt1, at1 = cluster.db.max_ids()
    assert rt1 == rt0 + 1
    # DOT now answers 401 to the access token: every call needs the refreshed credential.
    assert expire_access_tokens_now(cluster.dot["db"], at0) >= 1

    def call(i: int) -> int:
        gw = cluster.a if i % 2 == 0 else cluster.b
        return requests.get(f"{gw.url}/v1/proxy/dot/me", headers=bearer(token), timeout=60).status_code

    with ThreadPoolExecutor(max_workers=100) as pool:
        statuses = list(pool.map(call, range(200)))
    assert statuses.count(200) == 200, {s: statuses.count(s) for s in set(statuses)}
    new_refresh_tokens = cluster.db.refresh_tokens(after_id=rt1)
    assert len(new_refresh_tokens) == 1, f"expected exactly one refresh at DOT, saw {len(new_refresh_tokens)}"
    # The rotated refresh token was kept: one more refresh works.
    r = requests.post(f"{cluster.b.url}/v1/session/refresh", headers=bearer(token), timeout=TIMEOUT)
    assert r.status_code == 200, r.text


def test_postgres_down_is_503_store_unavailable_and_recovers_without_restart(cluster):
    token = new_session(cluster)
    cluster.pg.stop()
    try:
        for gw in (cluster.a, cluster.b):
            started = time.monotonic()
            r = requests.get(f"{gw.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
            assert r.status_code == 503, r.text
            assert r.json()["code"] == "store_unavailable"
            assert int(r.headers["Retry-After"]) > 0
            assert time.monotonic() - started < FAULT_BOUND, "the first request after the stop waited for a deadline"
            r = requests.get(f"{gw.url}/readyz", timeout=TIMEOUT)
            assert r.status_code == 503
    finally:
        cluster.pg.start()
    deadline = time.monotonic() + 30
    for gw in (cluster.a, cluster.b):
        while True:
            r = requests.get(f"{gw.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
            if r.status_code == 200:
                break
            assert r.status_code == 503 and time.monotonic() < deadline, r.text
            time.sleep(0.5)
        assert requests.get(f"{gw.url}/readyz", timeout=TIMEOUT).status_code == 200


def test_postgres_stopped_mid_traffic_fails_every_request_within_1s_and_recovers_by_itself(cluster):
    """A fast shutdown closes every connection and refuses new ones: known at once on both instances."""
    fault_mid_traffic(cluster, cluster.pg.stop, cluster.pg.start)


def test_postgres_paused_mid_traffic_fails_every_request_within_1s_and_recovers_by_itself(cluster):
    """SIGSTOP leaves connections half-open and refuses nothing, as an unreachable host does: only the
    request path's short deadline on a silent store shows it."""
    fault_mid_traffic(cluster, cluster.pg.pause, cluster.pg.resume)


def fault_mid_traffic(cluster, fault, recover) -> None:
    """Traffic on A and B; `fault` mid-traffic. Every request that ends after the fault began is a 200
    (it was answered before) or a 503 `store_unavailable` with Retry-After within FAULT_BOUND of the later
    of its start and the fault; every request begun after `fault` returned fails. After `recover`, both
    instances serve again without a restart."""
    token = new_session(cluster)
    results: list[tuple[str, float, float, int, str | None, str | None]] = []
    lock = threading.Lock()
    running = threading.Event()
    running.set()

    def traffic(gw) -> None:
        session = requests.Session()
        while running.is_set():
            started = time.monotonic()
            r = session.get(f"{gw.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
            ended = time.monotonic()
            try:
                code = r.json().get("code") if r.status_code != 200 else None
            except ValueError:
                code = r.text[:100]
            with lock:
                results.append((gw.name, started, ended, r.status_code, code, r.headers.get("Retry-After")))
            if r.status_code != 200:
                time.sleep(0.01)

    threads = [threading.Thread(target=traffic, args=(gw,), daemon=True) for gw in (cluster.a, cluster.b) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + 30
        while sum(1 for r in results if r[3] == 200) < 40:
            assert time.monotonic() < deadline, "no traffic before the fault"
            time.sleep(0.05)
        began = time.monotonic()
        fault()
        done = time.monotonic()
        try:
            time.sleep(3)
        finally:
            running.clear()
            for t in threads:
                t.join(timeout=TIMEOUT)
        after = [r for r in results if r[2] > began]
        for name in ("a", "b"):
            assert any(r[0] == name and r[1] > done for r in after), f"no request on {name} after the fault"
        slow = []
        waits = [r[2] - max(r[1], began) for r in after if r[3] != 200]
        print(f"\n{fault.__name__}: {len(after)} requests after the fault, {len(waits)} were 503, "
              f"the slowest waited {max(waits, default=0):.3f} s")
        for name, started, ended, status, code, retry_after in after:
            if status == 200:
                assert started < done, f"{name}: a request begun after the fault succeeded"
                continue
            assert status == 503 and code == "store_unavailable", (name, status, code)
            assert retry_after is not None and int(retry_after) > 0, (name, retry_after)
            waited = ended - max(started, began)
            if waited > FAULT_BOUND:
                slow.append((name, round(started - began, 3), round(waited, 3)))
        assert not slow, f"requests that waited longer than {FAULT_BOUND} s for their 503 (instance, start after fault, wait): {slow}"
    finally:
        recover()
    deadline = time.monotonic() + 30
    for gw in (cluster.a, cluster.b):
        while True:
            r = requests.get(f"{gw.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
            if r.status_code == 200:
                break
            assert r.status_code == 503 and time.monotonic() < deadline, r.text
            time.sleep(0.2)
        with ThreadPoolExecutor(max_workers=8) as pool:
            statuses = list(pool.map(
                lambda _: requests.get(f"{gw.url}/v1/session", headers=bearer(token), timeout=TIMEOUT).status_code, range(16)))
        assert statuses == [200] * 16, statuses


def test_instance_started_while_postgres_is_down_serves_503_and_recovers_without_restart(cluster):
    token = new_session(cluster)
    c = cluster.new_gateway("c")
    cluster.pg.stop()
    try:
        try:
            c.start(probe="/healthz")
            r = requests.get(f"{c.url}/readyz", timeout=TIMEOUT)
            assert r.status_code == 503, r.text
            r = requests.get(f"{c.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
            assert r.status_code == 503, r.text
            assert r.json()["code"] == "store_unavailable"
            assert int(r.headers["Retry-After"]) > 0
        finally:
            cluster.pg.start()
        deadline = time.monotonic() + 30
        while requests.get(f"{c.url}/readyz", timeout=TIMEOUT).status_code != 200:
            assert c.proc.poll() is None, "the instance exited instead of waiting for PostgreSQL"
            assert time.monotonic() < deadline, "not ready 30 s after PostgreSQL came back"
            time.sleep(0.3)
        assert c.proc.poll() is None
        r = requests.get(f"{c.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
        assert r.status_code == 200, r.text
        # A session made on the late instance works on the others.
        r = redeem(c, login(c, c, cluster))
        assert r.status_code == 201, r.text
        assert requests.get(f"{cluster.b.url}/v1/session", headers=bearer(r.json()["session_token"]),
                            timeout=TIMEOUT).status_code == 200
    finally:
        c.stop()


def test_key_rotation_keeps_old_sessions_on_both_instances(cluster):
    token = new_session(cluster)
    jwks_before = requests.get(f"{cluster.a.url}/.well-known/jwks.json", timeout=TIMEOUT).json()
    cluster.generate_key("k2")
    cluster.keys = ["k2", "k1"]
    cluster.write_config(cluster.a.port)
    cluster.restart_gateways()
    for gw in (cluster.a, cluster.b):
        r = requests.get(f"{gw.url}/v1/proxy/dot/me", headers=bearer(token), timeout=TIMEOUT)
        assert r.status_code == 200, f"{gw.name}: {r.text}"
    ja = requests.get(f"{cluster.a.url}/.well-known/jwks.json", timeout=TIMEOUT).json()
    jb = requests.get(f"{cluster.b.url}/.well-known/jwks.json", timeout=TIMEOUT).json()
    assert ja == jb
    kids = [k["kid"] for k in ja["keys"]]
    assert "k2" in kids and "k1" in kids, kids
    assert len(jwks_before["keys"]) == 1
    # A session made after the rotation (sealed under k2) works on both, too.
    fresh = new_session(cluster)
    for gw in (cluster.a, cluster.b):
        assert requests.get(f"{gw.url}/v1/session", headers=bearer(fresh), timeout=TIMEOUT).status_code == 200


def test_instance_killed_mid_refresh_blocks_nobody_longer_than_the_lease(cluster):
    rt0, at0 = cluster.db.max_ids()
    token = new_session(cluster)
    rt1, _ = cluster.db.max_ids()
    assert expire_access_tokens_now(cluster.dot["db"], at0) >= 1
    proxy = cluster.token_proxy
    proxy.held.clear()
    proxy.release.clear()
    proxy.hold = True
    outcome = {}

    def call_a():
        try:
            outcome["a"] = requests.get(f"{cluster.a.url}/v1/proxy/dot/me", headers=bearer(token), timeout=60).status_code
        except requests.RequestException as error:
            outcome["a"] = repr(error)

    caller = threading.Thread(target=call_a)
    caller.start()
    try:
        assert proxy.held.wait(20), "A never called the provider to refresh"
        cluster.a.kill9()  # A dies holding the refresh lease; its refresh never reaches DOT
    finally:
        proxy.hold = False
        proxy.release.set()
    caller.join(30)
    started = time.monotonic()
    r = requests.get(f"{cluster.b.url}/v1/proxy/dot/me", headers=bearer(token), timeout=90)
    waited = time.monotonic() - started
    assert r.status_code == 200, r.text
    assert waited < 30, f"B waited {waited:.1f}s, longer than the lease"
    assert len(cluster.db.refresh_tokens(after_id=rt1)) == 1, "exactly one refresh reached DOT (B's)"
    cluster.a.start()
    r = requests.get(f"{cluster.a.url}/v1/proxy/dot/me", headers=bearer(token), timeout=TIMEOUT)
    assert r.status_code == 200, r.text


def test_gatehouse_migrate_on_the_shared_store_is_harmless_while_instances_run(cluster):
    import subprocess
    r = subprocess.run([str(cluster.binary), "migrate", "--config", str(cluster.config)], capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PostgreSQL database" in r.stdout and cluster.pg.url not in r.stdout, "the URL (a secret) must not be printed"
    token = new_session(cluster)
    assert requests.get(f"{cluster.b.url}/v1/session", headers=bearer(token), timeout=TIMEOUT).status_code == 200


def test_two_instances_on_one_sqlite_file_share_logins_logouts_and_one_refresh(cluster):
    """SQLite is the one-machine store; two processes on the same file must still be correct."""
    config = cluster.write_sqlite_config(cluster.root / "shared.sqlite3")
    s1, s2 = cluster.new_gateway("sqlite-1", config), cluster.new_gateway("sqlite-2", config)
    try:
        s1.start()
        s2.start()
        handoff = login(s1, s2, cluster)
        r = redeem(s1, handoff)
        assert r.status_code == 201, r.text
        token = r.json()["session_token"]
        replay = redeem(s2, handoff)
        assert replay.status_code == 400 and replay.json()["code"] == "invalid_grant", replay.text

        _, at0 = cluster.db.max_ids()
        token = redeem(s2, login(s2, s1, cluster)).json()["session_token"]
        rt1, _ = cluster.db.max_ids()
        assert expire_access_tokens_now(cluster.dot["db"], at0) >= 1

        def call(i: int) -> int:
            gw = s1 if i % 2 == 0 else s2
            return requests.get(f"{gw.url}/v1/proxy/dot/me", headers=bearer(token), timeout=60).status_code

        with ThreadPoolExecutor(max_workers=50) as pool:
            statuses = list(pool.map(call, range(100)))
        assert statuses.count(200) == 100, {s: statuses.count(s) for s in set(statuses)}
        assert len(cluster.db.refresh_tokens(after_id=rt1)) == 1, "expected exactly one refresh at DOT"

        r = requests.delete(f"{s2.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
        assert r.status_code == 200, r.text
        assert requests.get(f"{s1.url}/v1/session", headers=bearer(token), timeout=TIMEOUT).status_code == 401
    finally:
        s1.stop()
        s2.stop()


def test_two_processes_on_one_sqlite_file_with_session_caches_honour_a_logout_within_one_second(cluster):
    """The default store caches sessions in memory; a second process's logout reaches the cache through
    the SQLite change watch (PRAGMA data_version), within 1 s."""
    config = cluster.write_sqlite_config(cluster.root / "cached.sqlite3", cache_seconds=60)
    s1, s2 = cluster.new_gateway("sqlite-cached-1", config), cluster.new_gateway("sqlite-cached-2", config)
    try:
        start_caching(s1, s2)
        token = redeem(s1, login(s1, s2, cluster)).json()["session_token"]
        for _ in range(3):  # resolved at both, so each holds a copy
            for gw in (s1, s2):
                assert requests.get(f"{gw.url}/v1/session", headers=bearer(token), timeout=TIMEOUT).status_code == 200
        # The instance that ends it refuses at once; the other within 1 s.
        log_out_and_expect_refusal_within_one_second(s2, s1, token)
        assert requests.get(f"{s2.url}/v1/session", headers=bearer(token), timeout=TIMEOUT).status_code == 401
    finally:
        s1.stop()
        s2.stop()


def test_with_session_caches_an_end_at_one_instance_reaches_the_other_within_one_second(cluster):
    config = cluster.write_cached_config(60)
    c, d = cluster.new_gateway("cache-c", config), cluster.new_gateway("cache-d", config)
    try:
        start_caching(c, d)

        # Concurrent calls on an expired credential over both caching instances: still one refresh.
        _, at0 = cluster.db.max_ids()
        token = redeem(c, login(c, d, cluster)).json()["session_token"]
        rt1, _ = cluster.db.max_ids()
        for gw in (c, d):  # resolved, so each instance holds a copy
            assert requests.get(f"{gw.url}/v1/session", headers=bearer(token), timeout=TIMEOUT).status_code == 200
        assert expire_access_tokens_now(cluster.dot["db"], at0) >= 1

        def call(i: int) -> int:
            gw = c if i % 2 == 0 else d
            return requests.get(f"{gw.url}/v1/proxy/dot/me", headers=bearer(token), timeout=60).status_code

        with ThreadPoolExecutor(max_workers=50) as pool:
            statuses = list(pool.map(call, range(100)))
        assert statuses.count(200) == 100, {s: statuses.count(s) for s in set(statuses)}
        assert len(cluster.db.refresh_tokens(after_id=rt1)) == 1, "expected exactly one refresh at DOT"

        # Logout at C: D, which has the session cached, refuses it within 1 s.
        assert requests.get(f"{d.url}/v1/session", headers=bearer(token), timeout=TIMEOUT).status_code == 200
        log_out_and_expect_refusal_within_one_second(c, d, token)
    finally:
        c.stop()
        d.stop()


def start_caching(*gateways) -> None:
    """Starts gateways whose session cache must be following the store's changes before the test goes on."""
    for gw in gateways:
        gw.start()
    for gw in gateways:
        assert wait_for_log(gw, "session cache synchronized"), f"{gw.name}: the change feed never listened"


def log_out_and_expect_refusal_within_one_second(at, other, token: str) -> None:
    """Logs the session out at one instance; the other, which holds a cached copy, refuses it within 1 s."""
    r = requests.delete(f"{at.url}/v1/session", headers=bearer(token), timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    ended = time.monotonic()
    while requests.get(f"{other.url}/v1/session", headers=bearer(token), timeout=TIMEOUT).status_code != 401:
        assert time.monotonic() - ended < 1.0, "the caching instance still accepts the ended session after 1 s"
        time.sleep(0.02)


def wait_for_log(gateway, text: str, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if gateway.log.exists() and text in gateway.log.read_text(errors="replace"):
            return True
        time.sleep(0.1)
    return False
