#!/usr/bin/env python3
"""The traffic and the sampling of bench/soak.sh (run it through soak.sh, which starts the processes).

WORKERS threads, each with its own session at the gateway, pick actions at random for DURATION
seconds: native logins (PKCE through the stand-in's sign-in form), GET /v1/session, explicit refreshes,
proxied calls with JSON bodies to the backend (/v1/api, a few KB, sometimes ~200 KB) and to the
provider's API (/v1/proxy/demo, which the gateway refreshes transparently: the stand-in's access
tokens live 5 s and its refresh tokens rotate), bursts of concurrent calls on one session, logouts,
and deliberate errors. Every response status is compared with the set the action expects; the echo
answers are also checked (body size and SHA-256 as the backend saw them).

Every --interval seconds (10) it reads the gateway's VmRSS (/proc/PID/status) and counts
/proc/PID/fd. At the end: requests by action and status, the unexpected ones, RSS and FDs at the end
of the warm-up and at the end, their drift and least-squares slope after warm-up, and the same as a
Markdown block for bench/README.md. Exit 1 when any status was unexpected or RSS / FDs are not flat.
"""
from __future__ import annotations

import argparse
import base64
import concurrent.futures
import datetime
import hashlib
import json
import os
import random
import re
import secrets
import sys
import threading
import time
from collections import Counter, defaultdict
from urllib.parse import parse_qs, urlsplit

import requests

REDIRECT_URI = "http://127.0.0.1/callback"  # allowed_redirect_uris of the soak's gatehouse.yaml
USER, PASSWORD = "alice", "alice-password"
TIMEOUT = 30  # seconds per request
SESSION_SECONDS = (2.0, 20.0)  # a session's life before its logout, uniform (--session-seconds)
REFRESH_SECONDS = (4.0, 12.0)  # between explicit refreshes of a session, uniform

# Flatness: the end sample against the warm-up sample, and the least-squares trend after warm-up.
RSS_END_TOLERANCE = 0.10  # |RSS_end - RSS_warm| <= 10 % of RSS_warm
FD_END_TOLERANCE = 5  # |FD_end - FD_warm| <= 5
RSS_TREND_TOLERANCE = 0.05  # fitted RSS rise over the post-warm-up window <= 5 % of RSS_warm
FD_TREND_TOLERANCE = 3.0  # fitted FD rise over the post-warm-up window <= 3


# --- bookkeeping ----------------------------------------------------------------------------------

class Stats:
    """Counts by (action, status), latencies by action, and the unexpected answers (kept for the report)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: dict[str, Counter] = defaultdict(Counter)
        self.expected: dict[str, set] = {}
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.unexpected: list[str] = []
        self.unexpected_count = 0
        self.total = 0

    def record(self, action: str, status, expected: set, seconds: float, detail: str = "") -> bool:
        ok = status in expected and not detail
        with self.lock:
            self.counts[action][status] += 1
            self.expected.setdefault(action, set()).update(expected)
            self.latency[action].append(seconds)
            self.total += 1
            if not ok:
                self.unexpected_count += 1
                if len(self.unexpected) < 200:
                    stamp = datetime.datetime.now().strftime("%H:%M:%S")
                    self.unexpected.append(f"{stamp} {action}: {status} {detail}".strip())
        if not ok:
            print(f"  UNEXPECTED {action}: status {status} (expected {sorted(expected)}) {detail[:300]}", flush=True)
        return ok


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def snippet(response: requests.Response) -> str:
    return response.text[:200].replace("\n", " ")


# --- the client ------------------------------------------------------------------------------------

class Worker(threading.Thread):
    def __init__(self, index: int, args, stats: Stats, stop: threading.Event, bursts: concurrent.futures.Executor):
        super().__init__(name=f"worker-{index}", daemon=True)
        self.gw = args.gateway
        self.args = args
        self.stats = stats
        self.stop = stop
        self.bursts = bursts
        self.rng = random.Random(index * 7919 + int(time.time()))
        self.http = requests.Session()
        self.token: str | None = None
        self.think = args.think_ms / 1000.0
        # Each session lives SESSION_SECONDS (random) and then logs out; an explicit refresh every
        # REFRESH_SECONDS (random). Between them the 5 s access tokens expire, so the proxied calls
        # make the gateway refresh transparently (and the bursts meet those refreshes).
        self.logout_at = 0.0
        self.refresh_at = 0.0

    # One request through this worker's keep-alive session; records it; returns the response or None.
    def call(self, action: str, expected: set, method: str, url: str, *, session: requests.Session | None = None,
             check=None, **kwargs) -> requests.Response | None:
        kwargs.setdefault("timeout", TIMEOUT)
        kwargs.setdefault("allow_redirects", False)
        started = time.monotonic()
        try:
            response = (session or self.http).request(method, url, **kwargs)
        except requests.RequestException as error:
            self.stats.record(action, f"EXC:{type(error).__name__}", expected, time.monotonic() - started, str(error)[:300])
            return None
        elapsed = time.monotonic() - started
        detail = ""
        if response.status_code in expected and check is not None:
            try:
                detail = check(response) or ""
            except Exception as error:  # a body that does not parse is a finding too
                detail = f"check failed: {type(error).__name__}: {error}"
        elif response.status_code not in expected:
            detail = snippet(response)
        self.stats.record(action, response.status_code, expected, elapsed, detail)
        return response

    def auth(self, token: str | None = None) -> dict:
        return {"Authorization": f"Bearer {token or self.token}"}

    # --- native login (as Tests/API/demo_login.py) ---
    def login(self) -> None:
        # A fresh client connection pool per login: connections open and close all through the run.
        self.http.close()
        self.http = requests.Session()
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        state = secrets.token_urlsafe(12)
        start = self.call("login.start", {302}, "GET", f"{self.gw}/v1/auth/demo/login", params={
            "redirect_uri": REDIRECT_URI, "state": state, "code_challenge": challenge, "code_challenge_method": "S256",
        })
        if start is None or start.status_code != 302:
            return
        authorize = urlsplit(start.headers["Location"])
        form = {key: values[0] for key, values in parse_qs(authorize.query).items()}
        form.update(username=USER, password=PASSWORD)
        # The stand-in's sign-in form (not the gateway): counted under its own name.
        signed_in = self.call("login.standin_authorize", {302, 303}, "POST",
                              f"{authorize.scheme}://{authorize.netloc}/authorize", data=form)
        if signed_in is None or signed_in.status_code not in (302, 303):
            return
        callback = self.call("login.callback", {302}, "GET", signed_in.headers["Location"])
        if callback is None or callback.status_code != 302:
            return
        back = parse_qs(urlsplit(callback.headers["Location"]).query)
        if back.get("state") != [state] or "code" not in back:
            self.stats.record("login.callback", "bad_redirect", {302}, 0, callback.headers["Location"][:200])
            return

        def session_body(response: requests.Response) -> str:
            body = response.json()
            return "" if body.get("session_token") else f"no session_token: {snippet(response)}"

        grant = self.call("login.session", {201}, "POST", f"{self.gw}/v1/session", json={
            "grant_type": "authorization_code", "code": back["code"][0], "code_verifier": verifier, "redirect_uri": REDIRECT_URI,
        }, check=session_body)
        if grant is not None and grant.status_code == 201:
            self.token = grant.json()["session_token"]
            now = time.monotonic()
            self.logout_at = now + self.rng.uniform(*self.args.session_seconds)
            self.refresh_at = now + self.rng.uniform(*REFRESH_SECONDS)

    # --- with a session ---
    def session_view(self) -> None:
        self.call("session.get", {200}, "GET", f"{self.gw}/v1/session", headers=self.auth(), check=self.check_view)

    @staticmethod
    def check_view(response: requests.Response) -> str:
        body = response.json()
        if body.get("provider") != "demo" or body.get("subject") != USER or not body.get("credential", {}).get("refreshable"):
            return f"session view: {snippet(response)}"
        return ""

    def refresh(self) -> None:
        def check(response):
            problem = self.check_view(response)
            if problem:
                return problem
            # A forced refresh gets a new access token from the stand-in: it expires about 5 s from now.
            expires = response.json()["credential"].get("expires_at")
            left = datetime.datetime.fromisoformat(expires.replace("Z", "+00:00")).timestamp() - time.time()
            return "" if left >= 2 else f"credential.expires_at {expires} is {left:.1f} s away after a refresh"
        self.call("session.refresh", {200}, "POST", f"{self.gw}/v1/session/refresh", headers=self.auth(), check=check)

    def api_get(self) -> None:
        n = self.rng.randrange(1000)

        def check(response):
            body = response.json()
            if body.get("method") != "GET" or body.get("path") != f"/items/{n}" or body.get("query") != f"page={n % 7}":
                return f"echo mismatch: {snippet(response)}"
            headers = {name.lower(): value for name, value in body.get("headers", {}).items()}
            subject = headers.get("x-gatehouse-subject")
            return "" if subject == USER else f"X-Gatehouse-Subject {subject!r}"
        self.call("api.get", {200}, "GET", f"{self.gw}/v1/api/items/{n}?page={n % 7}", headers=self.auth(), check=check)

    def json_body(self, size: int) -> bytes:
        filler = secrets.token_hex(max(1, (size - 80) // 2))
        return json.dumps({"order": self.rng.randrange(10**6), "items": [1, 2, 3], "note": filler}).encode()

    def api_post(self, action: str, size: int) -> None:
        body = self.json_body(size)
        digest = hashlib.sha256(body).hexdigest()

        def check(response):
            echo = response.json()
            if echo.get("method") != "POST" or echo.get("body_bytes") != len(body) or echo.get("body_sha256") != digest:
                return f"echo mismatch: sent {len(body)} bytes, echo said {echo.get('body_bytes')} / {str(echo.get('body_sha256'))[:12]}"
            return ""
        self.call(action, {200}, "POST", f"{self.gw}/v1/api/orders", data=body,
                  headers={**self.auth(), "Content-Type": "application/json"}, check=check)

    def proxy_grades(self, session: requests.Session | None = None, action: str = "proxy.grades") -> None:
        def check(response):
            body = response.json()
            return "" if body.get("id") == USER and body.get("grades") else f"grades body: {snippet(response)}"
        self.call(action, {200}, "GET", f"{self.gw}/v1/proxy/demo/grades/@me", headers=self.auth(), session=session, check=check)

    def proxy_echo_post(self) -> None:
        body = self.json_body(self.rng.randrange(1024, 4096))

        def check(response):
            echo = response.json()
            if echo.get("body_bytes") != len(body) or echo.get("sub") != USER or echo.get("token_via") != "header":
                return f"provider echo mismatch: sent {len(body)}: {snippet(response)}"
            return ""
        self.call("proxy.echo_post", {200}, "POST", f"{self.gw}/v1/proxy/demo/echo/soak", data=body,
                  headers={**self.auth(), "Content-Type": "application/json"}, check=check)

    def burst(self) -> None:
        """4 calls at once on this session (new connections each), so concurrent requests meet a refresh."""
        def one(_):
            with requests.Session() as fresh:
                self.proxy_grades(session=fresh, action="proxy.grades_burst")
        list(self.bursts.map(one, range(4)))

    def logout(self) -> None:
        token = self.token
        self.token = None

        def check(response):
            outcome = response.json().get("provider_logout")
            return "" if outcome == "revoked" else f"provider_logout {outcome!r}"
        response = self.call("session.logout", {200}, "DELETE", f"{self.gw}/v1/session", headers=self.auth(token), check=check)
        if response is not None and response.status_code == 200:
            # The ended session is refused at once (this instance evicts its cached copy on logout).
            self.call("error.after_logout", {401}, "GET", f"{self.gw}/v1/api/items/1", headers=self.auth(token))

    # --- deliberate errors ---
    def unknown_token(self) -> None:
        self.call("error.unknown_token", {401}, "GET", f"{self.gw}/v1/api/items/1", headers=self.auth(secrets.token_urlsafe(32)))

    def no_session(self) -> None:
        self.call("error.no_session", {401}, "GET", f"{self.gw}/v1/session")

    def bad_path(self) -> None:
        self.call("error.bad_path", {400}, "GET", f"{self.gw}/v1/api/%2e%2e/x", headers=self.auth())

    def unknown_provider(self) -> None:
        if self.rng.random() < 0.5:
            self.call("error.unknown_provider_login", {404}, "GET", f"{self.gw}/v1/auth/nosuchprovider/login", params={
                "redirect_uri": REDIRECT_URI, "state": "s", "code_challenge": "x" * 43, "code_challenge_method": "S256"})
        else:
            self.call("error.unknown_provider_proxy", {404}, "GET", f"{self.gw}/v1/proxy/nosuchprovider/x", headers=self.auth())

    def oversize(self) -> None:
        body = b"x" * (self.args.max_body_bytes + 64 * 1024)
        # The gateway answers 413 and closes: a fresh connection, so the worker's pool is not affected.
        with requests.Session() as fresh:
            self.call("error.oversize", {413}, "POST", f"{self.gw}/v1/api/upload", data=body, session=fresh,
                      headers={**self.auth(), "Content-Type": "application/octet-stream"})

    ACTIONS = [  # (weight, method name)
        (10, "session_view"),
        (20, "api_get"),
        (16, "api_post_small"),
        (2, "api_post_large"),
        (10, "proxy_grades"),
        (8, "proxy_echo_post"),
        (2, "burst"),
        (3, "unknown_token"),
        (2, "no_session"),
        (3, "bad_path"),
        (2, "unknown_provider"),
        (0.5, "oversize"),
    ]

    def api_post_small(self) -> None:
        self.api_post("api.post", self.rng.randrange(2048, 8192))

    def api_post_large(self) -> None:
        self.api_post("api.post_large", 200 * 1024)

    def run(self) -> None:
        names = [name for _, name in self.ACTIONS]
        weights = [weight for weight, _ in self.ACTIONS]
        while not self.stop.is_set():
            try:
                if self.token is None:
                    self.login()
                    if self.token is None:
                        self.stop.wait(1)  # a failed login is recorded; do not spin
                elif time.monotonic() >= self.logout_at:
                    self.logout()
                elif time.monotonic() >= self.refresh_at:
                    self.refresh_at = time.monotonic() + self.rng.uniform(*REFRESH_SECONDS)
                    self.refresh()
                else:
                    getattr(self, self.rng.choices(names, weights)[0])()
            except Exception as error:  # a client bug must not silently end a worker
                self.stats.record("worker.exception", f"EXC:{type(error).__name__}", set(), 0, str(error)[:300])
                self.token = None
            if self.think:
                self.stop.wait(self.think)
        self.http.close()


# --- sampling --------------------------------------------------------------------------------------

def read_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def read_threads(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return -1


def count_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


TCP_STATES = {"01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1", "05": "FIN_WAIT2", "06": "TIME_WAIT",
              "07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING"}
FD_KINDS = ("listen", "client", "backend", "provider", "tcp_other", "socket_other", "file", "other")


def port_of(url: str) -> int:
    return urlsplit(url).port or 0 if url else 0


def fd_breakdown(pid: int, ports: dict[str, int]) -> tuple[Counter, Counter]:
    """The process's FDs by kind (client connections to the gateway's port, connections to the backend and to
    the provider, other TCP, other sockets, files, the rest) and its TCP sockets by state (not ESTABLISHED)."""
    tcp: dict[str, tuple[int, int, str]] = {}  # inode -> (local port, remote port, state)
    for table in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{table}") as lines:
                next(lines)
                for line in lines:
                    fields = line.split()
                    local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
                    tcp[inode] = (int(local.rsplit(":", 1)[1], 16), int(remote.rsplit(":", 1)[1], 16), TCP_STATES.get(state, state))
        except OSError:
            pass
    kinds, states = Counter(), Counter()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue  # closed meanwhile
        if link.startswith("socket:["):
            entry = tcp.get(link[8:-1])
            if entry is None:
                kinds["socket_other"] += 1
                continue
            local, remote, state = entry
            if state == "LISTEN":
                kinds["listen"] += 1
                continue
            if state != "ESTABLISHED":
                states[state] += 1
            if local == ports["gateway"]:
                kinds["client"] += 1
            elif remote and remote == ports["backend"]:
                kinds["backend"] += 1
            elif remote and remote == ports["provider"]:
                kinds["provider"] += 1
            else:
                kinds["tcp_other"] += 1
        elif link.startswith("/"):
            kinds["file"] += 1
        else:
            kinds["other"] += 1
    return kinds, states


def format_kinds(kinds: Counter, states: Counter) -> str:
    text = " ".join(f"{kind}={kinds.get(kind, 0)}" for kind in FD_KINDS)
    return text + ("" if not states else ", not established: " + " ".join(f"{state}={count}" for state, count in sorted(states.items())))


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def file_bytes(path: str) -> int:
    return os.path.getsize(path) if path and os.path.exists(path) else 0


def sample(args, t: float, stats: Stats) -> dict:
    kinds, states = fd_breakdown(args.pid, args.ports)
    return {
        "kinds": kinds, "states": states,
        "t": t, "rss_kib": read_rss_kib(args.pid), "fds": count_fds(args.pid), "threads": read_threads(args.pid),
        "cpu_s": cpu_seconds(args.pid), "db_bytes": file_bytes(args.db), "wal_bytes": file_bytes(args.db and args.db + "-wal"),
        "requests": stats.total,
        "unexpected": stats.unexpected_count,
    }


def print_sample(s: dict, previous: dict | None) -> None:
    rate = ""
    if previous is not None and s["t"] > previous["t"]:
        span = s["t"] - previous["t"]
        rate = (f" req/s={(s['requests'] - previous['requests']) / span:6.1f}"
                f" cpu={(s['cpu_s'] - previous['cpu_s']) / span * 100:5.1f}%")
    print(f"sample t={s['t']:5.0f}s rss={s['rss_kib'] / 1024:7.1f}MiB fds={s['fds']:4d} threads={s['threads']:3d}"
          f" db={s['db_bytes'] / 1024:6.0f}KiB wal={s['wal_bytes'] / 1024:6.0f}KiB requests={s['requests']:7d}{rate} unexpected={s['unexpected']}", flush=True)
    print(f"    fds by kind: {format_kinds(s['kinds'], s['states'])}", flush=True)


def slope_per_minute(points: list[tuple[float, float]]) -> float:
    n = len(points)
    if n < 2:
        return 0.0
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    if var == 0:
        return 0.0
    return sum((t - mean_t) * (v - mean_v) for t, v in points) / var * 60


def metrics(gateway: str) -> dict[str, float]:
    """The gateway's /metrics counters without labels, and labelled ones summed by name."""
    values: dict[str, float] = defaultdict(float)
    try:
        text = requests.get(f"{gateway}/metrics", timeout=10).text
    except requests.RequestException:
        return {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
        if match:
            try:
                values[match.group(1) + (match.group(2) or "")] = float(match.group(3))
            except ValueError:
                pass
    return values


def store_counts(path: str | None) -> str:
    """Rows in the SQLite store (read-only), e.g. the pending records kept until they expire."""
    if not path or not os.path.exists(path):
        return ""
    import sqlite3
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            parts = []
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'grdb%' ORDER BY name"):
                query = 'SELECT count(*) FROM "%s"' % table
                parts.append(f"{table} {db.execute(query).fetchone()[0]}")
            return ", ".join(parts)
        finally:
            db.close()
    except sqlite3.Error as error:
        return f"(cannot read: {error})"


def log_problems(path: str | None) -> tuple[int, Counter]:
    if not path or not os.path.exists(path):
        return 0, Counter()
    lines = Counter()
    pattern = re.compile(r"\b(warning|error|critical)\b", re.IGNORECASE)
    with open(path, errors="replace") as log:
        for line in log:
            if pattern.search(line):
                # Without the time stamp and the request id, so repeated messages group.
                key = re.sub(r"^\S+\s+", "", line.strip())
                key = re.sub(r"request[_-]?id=\S+|[0-9a-f]{8}-[0-9a-f-]{27}", "…", key)
                lines[key[:240]] += 1
    return sum(lines.values()), lines


# --- main ------------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gateway", required=True)
    parser.add_argument("--pid", type=int, required=True, help="the gateway process to sample")
    parser.add_argument("--duration", type=float, default=600)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--interval", type=float, default=10, help="seconds between samples")
    parser.add_argument("--warmup", type=float, default=None, help="seconds (default: 120, or 20%% of shorter runs)")
    parser.add_argument("--cooldown", type=float, default=70, help="seconds idle after the load before a last sample (0: none)")
    parser.add_argument("--think-ms", type=float, default=10, help="pause of each worker between actions")
    parser.add_argument("--session-seconds", default=",".join(f"{v:g}" for v in SESSION_SECONDS),
                        type=lambda text: tuple(float(v) for v in text.split(",", 1)),
                        help="MIN,MAX life of a session before its logout (uniform)")
    parser.add_argument("--backend", default="", help="the backend URL (to tell its connections apart in the FD breakdown)")
    parser.add_argument("--provider", default="", help="the provider's base URL (likewise)")
    parser.add_argument("--max-body-bytes", type=int, required=True)
    parser.add_argument("--db", default=None)
    parser.add_argument("--gateway-log", default=None)
    parser.add_argument("--samples", default=None, help="write the samples as CSV here")
    parser.add_argument("--binary", default="?")
    parser.add_argument("--command", default="bash bench/soak.sh")
    args = parser.parse_args()
    warmup = args.warmup if args.warmup is not None else min(120.0, 0.2 * args.duration)
    args.ports = {"gateway": port_of(args.gateway), "backend": port_of(args.backend), "provider": port_of(args.provider)}

    stats = Stats()
    stop = threading.Event()
    metrics_before = metrics(args.gateway)
    idle_before = sample(args, 0, stats)
    print(f"soak: {args.duration:.0f} s, {args.workers} workers, gateway {args.gateway} (pid {args.pid}), "
          f"warm-up {warmup:.0f} s, sample every {args.interval:.0f} s", flush=True)
    print(f"idle before: rss={idle_before['rss_kib'] / 1024:.1f}MiB fds={idle_before['fds']} threads={idle_before['threads']}", flush=True)

    bursts = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="burst")
    workers = [Worker(i, args, stats, stop, bursts) for i in range(args.workers)]
    started = time.monotonic()
    for worker in workers:
        worker.start()

    samples: list[dict] = []
    previous = None
    k = 0
    gateway_died = False
    while True:
        due = started + k * args.interval
        if due > started + args.duration + 1e-6:
            break
        time.sleep(max(0.0, due - time.monotonic()))
        try:
            s = sample(args, round(time.monotonic() - started), stats)
        except (OSError, RuntimeError) as error:
            print(f"cannot sample pid {args.pid}: {error} (gateway gone?)", flush=True)
            gateway_died = True
            break
        samples.append(s)
        print_sample(s, previous)
        previous = s
        k += 1
    stop.set()
    for worker in workers:
        worker.join(TIMEOUT + 5)
    bursts.shutdown(wait=True)
    elapsed = time.monotonic() - started
    time.sleep(3)  # let closed client connections go
    idle_after = None if gateway_died else sample(args, round(time.monotonic() - started), stats)
    cooled = None
    if args.cooldown > 0 and not gateway_died:
        # Idle pools time out (AsyncHTTPClient closes idle connections after 60 s): what stays is not traffic.
        print(f"cool-down: {args.cooldown:.0f} s without traffic", flush=True)
        time.sleep(args.cooldown)
        try:
            cooled = sample(args, round(time.monotonic() - started), stats)
        except (OSError, RuntimeError):
            gateway_died = True
    metrics_after = metrics(args.gateway)
    store_rows = store_counts(args.db)
    log_count, log_lines = log_problems(args.gateway_log)

    if args.samples:
        with open(args.samples, "w") as out:
            out.write("t_s,rss_kib,fds,threads,cpu_s,db_bytes,wal_bytes,requests,unexpected," + ",".join(f"fd_{k}" for k in FD_KINDS)
                      + ",tcp_not_established\n")
            for s in samples:
                out.write(f"{s['t']:.0f},{s['rss_kib']},{s['fds']},{s['threads']},{s['cpu_s']:.2f},{s['db_bytes']},{s['wal_bytes']},{s['requests']},{s['unexpected']},"
                          + ",".join(str(s["kinds"].get(k, 0)) for k in FD_KINDS) + f",{' '.join(f'{k}={v}' for k, v in sorted(s['states'].items()))}\n")

    # --- flatness ---
    after_warmup = [s for s in samples if s["t"] >= warmup - 1e-6]
    verdict_lines: list[str] = []
    flat = False
    if gateway_died or len(after_warmup) < 2:
        verdict_lines.append("not enough samples after warm-up" if not gateway_died else "the gateway died")
        verdict_md = verdict_lines[0]
        warm = end = samples[-1] if samples else idle_before
        rss_drift = fd_drift = rss_slope = fd_slope = rss_max_drift = rss_min_drift = 0.0
        fd_max_dev = 0
        rss_fit_rise = fd_fit_rise = 0.0
    else:
        warm, end = after_warmup[0], after_warmup[-1]
        window_min = (end["t"] - warm["t"]) / 60
        rss_drift = (end["rss_kib"] - warm["rss_kib"]) / warm["rss_kib"] * 100
        rss_max_drift = max((s["rss_kib"] - warm["rss_kib"]) / warm["rss_kib"] * 100 for s in after_warmup)
        rss_min_drift = min((s["rss_kib"] - warm["rss_kib"]) / warm["rss_kib"] * 100 for s in after_warmup)
        fd_drift = end["fds"] - warm["fds"]
        fd_max_dev = max(abs(s["fds"] - warm["fds"]) for s in after_warmup)
        rss_slope = slope_per_minute([(s["t"], s["rss_kib"]) for s in after_warmup])  # KiB/min
        fd_slope = slope_per_minute([(s["t"], s["fds"]) for s in after_warmup])  # FDs/min
        rss_fit_rise = rss_slope * window_min / warm["rss_kib"] * 100  # % of warm-up RSS over the window
        fd_fit_rise = fd_slope * window_min
        checks = [
            (abs(rss_drift) <= RSS_END_TOLERANCE * 100, f"RSS end vs warm-up {rss_drift:+.1f}% (limit ±{RSS_END_TOLERANCE * 100:.0f}%)"),
            (abs(fd_drift) <= FD_END_TOLERANCE, f"FDs end vs warm-up {fd_drift:+d} (limit ±{FD_END_TOLERANCE})"),
            (rss_fit_rise <= RSS_TREND_TOLERANCE * 100,
             f"RSS trend {rss_slope:+.0f} KiB/min = {rss_fit_rise:+.1f}% of warm-up RSS over {window_min:.1f} min (limit +{RSS_TREND_TOLERANCE * 100:.0f}%)"),
            (fd_fit_rise <= FD_TREND_TOLERANCE,
             f"FD trend {fd_slope:+.2f}/min = {fd_fit_rise:+.1f} FDs over {window_min:.1f} min (limit +{FD_TREND_TOLERANCE:.0f})"),
        ]
        flat = all(ok for ok, _ in checks)
        verdict_lines = [("ok   " if ok else "FAIL ") + text for ok, text in checks]
        verdict_md = "; ".join(("ok: " if ok else "**FAIL**: ") + text for ok, text in checks)

    passed = flat and stats.unexpected_count == 0 and not gateway_died

    # --- plain summary ---
    print()
    print("=== requests by action and status ===")
    for action in sorted(stats.counts):
        statuses = ", ".join(f"{status}: {count}" for status, count in sorted(stats.counts[action].items(), key=lambda kv: str(kv[0])))
        lat = stats.latency[action]
        print(f"  {action:30s} expected {sorted(stats.expected.get(action, set()))!s:12s} {statuses:40s}"
              f" p50={percentile(lat, 0.5) * 1000:.1f}ms p99={percentile(lat, 0.99) * 1000:.1f}ms")
    print(f"  total {stats.total} requests in {elapsed:.0f} s ({stats.total / elapsed:.1f}/s)")
    print(f"=== unexpected: {stats.unexpected_count} ===")
    for line in stats.unexpected[:50]:
        print(f"  {line}")
    print("=== RSS / FDs (gateway pid %d) ===" % args.pid)
    print(f"  idle before load: rss={idle_before['rss_kib'] / 1024:.1f}MiB fds={idle_before['fds']} threads={idle_before['threads']}")
    print(f"  warm-up end (t={warm['t']:.0f}s): rss={warm['rss_kib'] / 1024:.1f}MiB fds={warm['fds']}")
    print(f"  end         (t={end['t']:.0f}s): rss={end['rss_kib'] / 1024:.1f}MiB fds={end['fds']}")
    if idle_after:
        print(f"  idle after load (+3 s): rss={idle_after['rss_kib'] / 1024:.1f}MiB fds={idle_after['fds']} threads={idle_after['threads']}")
    if cooled:
        print(f"  after {args.cooldown:.0f} s cool-down: rss={cooled['rss_kib'] / 1024:.1f}MiB fds={cooled['fds']} threads={cooled['threads']}")
    print(f"  RSS drift after warm-up: end {rss_drift:+.1f}%, max {rss_max_drift:+.1f}%, min {rss_min_drift:+.1f}%; slope {rss_slope:+.0f} KiB/min")
    print(f"  FD drift after warm-up: end {fd_drift:+d}, max |dev| {fd_max_dev}; slope {fd_slope:+.2f}/min")
    print(f"  FDs by kind, idle before: {format_kinds(idle_before['kinds'], idle_before['states'])}")
    print(f"  FDs by kind, warm-up end: {format_kinds(warm['kinds'], warm['states'])}")
    print(f"  FDs by kind, end:         {format_kinds(end['kinds'], end['states'])}")
    if idle_after:
        print(f"  FDs by kind, idle after:  {format_kinds(idle_after['kinds'], idle_after['states'])}")
    if cooled:
        print(f"  FDs by kind, cooled:      {format_kinds(cooled['kinds'], cooled['states'])}")
    if store_rows:
        print(f"  store rows at the end: {store_rows}")
    for line in verdict_lines:
        print(f"  {line}")
    counters = sorted(k for k in set(metrics_before) | set(metrics_after) if k.split("{")[0].endswith("_total"))
    metric_deltas = [(k, metrics_after.get(k, 0) - metrics_before.get(k, 0)) for k in counters]
    print("=== gateway /metrics deltas ===")
    for key, delta in metric_deltas:
        print(f"  {key} {delta:+g}")
    print(f"=== gateway log: {log_count} warning/error/critical lines ===")
    for line, count in log_lines.most_common(15):
        print(f"  {count:6d} x {line}")
    print(f"=== {'PASS' if passed else 'FAIL'} ===")

    # --- Markdown for bench/README.md ---
    today = datetime.date.today().isoformat()
    md: list[str] = []
    md.append(f"### Soak run, {today}: {elapsed:.0f} s, {args.workers} workers — {'PASS' if passed else 'FAIL'}")
    md.append("")
    md.append(f"`{args.command}` — `gatehouse serve` (`{args.binary}`) on the SQLite store (session cache on, the default), "
              f"provider `demo` (oauth2) at the `gatehouse demo` stand-in (access tokens 5 s, rotating refresh tokens), "
              f"the demo echo backend; `limits.max_body_bytes` {args.max_body_bytes}. "
              f"{os.cpu_count()} cores, shared with other work.")
    md.append("")
    md.append("| action | expected | responses by status | p50 ms | p99 ms |")
    md.append("|---|---|---|---:|---:|")
    for action in sorted(stats.counts):
        statuses = ", ".join(f"{status}: {count}" for status, count in sorted(stats.counts[action].items(), key=lambda kv: str(kv[0])))
        lat = stats.latency[action]
        expected = ", ".join(str(s) for s in sorted(stats.expected.get(action, set()))) or "—"
        md.append(f"| {action} | {expected} | {statuses} | {percentile(lat, 0.5) * 1000:.1f} | {percentile(lat, 0.99) * 1000:.1f} |")
    md.append(f"| **total** | | {stats.total} ({stats.total / elapsed:.0f}/s) | | |")
    md.append("")
    md.append(f"Unexpected statuses: **{stats.unexpected_count}**." + (
        " " + "; ".join(stats.unexpected[:5]) if stats.unexpected else ""))
    md.append("")
    md.append(f"| gateway | idle before | warm-up end (t={warm['t']:.0f} s) | end (t={end['t']:.0f} s) | end − warm-up | max drift after warm-up | LSQ slope after warm-up |")
    md.append("|---|---:|---:|---:|---:|---:|---:|")
    md.append(f"| RSS (VmRSS) | {idle_before['rss_kib'] / 1024:.1f} MiB | {warm['rss_kib'] / 1024:.1f} MiB | {end['rss_kib'] / 1024:.1f} MiB "
              f"| {rss_drift:+.1f} % | {rss_max_drift:+.1f} % / {rss_min_drift:+.1f} % | {rss_slope:+.0f} KiB/min |")
    md.append(f"| open FDs | {idle_before['fds']} | {warm['fds']} | {end['fds']} | {fd_drift:+d} | ±{fd_max_dev} | {fd_slope:+.2f}/min |")
    if idle_after:
        md.append(f"| idle 3 s after the load | | | rss {idle_after['rss_kib'] / 1024:.1f} MiB, {idle_after['fds']} FDs, {idle_after['threads']} threads | | | |")
    if cooled:
        md.append(f"| idle {args.cooldown:.0f} s after the load | | | rss {cooled['rss_kib'] / 1024:.1f} MiB, {cooled['fds']} FDs, {cooled['threads']} threads | | | |")
    md.append("")
    md.append("Open FDs by kind (listen: the gateway's listening socket; client: connections to it; backend / provider: the gateway's "
              "connections to the echo backend / the stand-in; file: regular files (SQLite connections: database + WAL each, the log); "
              "other: eventfd, epoll, timerfd, signalfd, pipe) — "
              f"idle before: {format_kinds(idle_before['kinds'], idle_before['states'])}; "
              f"warm-up end: {format_kinds(warm['kinds'], warm['states'])}; end: {format_kinds(end['kinds'], end['states'])}"
              + (f"; 3 s after: {format_kinds(idle_after['kinds'], idle_after['states'])}" if idle_after else "")
              + (f"; after the {args.cooldown:.0f} s cool-down: {format_kinds(cooled['kinds'], cooled['states'])}" if cooled else "") + ".")
    md.append("")
    md.append(f"\"Flat\" means, over the {len(after_warmup)} samples (every {args.interval:.0f} s) from the end of the warm-up "
              f"({warmup:.0f} s) to the end: the last RSS within ±{RSS_END_TOLERANCE * 100:.0f} % of the warm-up sample and the last FD "
              f"count within ±{FD_END_TOLERANCE}, and a least-squares line through them rising by at most "
              f"{RSS_TREND_TOLERANCE * 100:.0f} % of the warm-up RSS and {FD_TREND_TOLERANCE:.0f} FDs over the window. "
              f"Result: {'flat' if flat else '**NOT flat**'} ({verdict_md}).")
    if metric_deltas:
        md.append("")
        md.append("Gateway counters over the run (`/metrics`): " + ", ".join(f"`{k}` {d:+g}" for k, d in metric_deltas) + ".")
    if samples:
        md.append("")
        md.append(f"SQLite database file {samples[0]['db_bytes'] / 1024:.0f} KiB at the start, {samples[-1]['db_bytes'] / 1024:.0f} KiB at the end "
                  f"(WAL {samples[0]['wal_bytes'] / 1024:.0f} → {samples[-1]['wal_bytes'] / 1024:.0f} KiB). "
                  f"Gateway CPU: {samples[-1]['cpu_s'] - samples[0]['cpu_s']:.0f} s over the run. "
                  f"Gateway log: {log_count} warning/error lines." + (f" Store rows at the end: {store_rows}." if store_rows else ""))
    print()
    print("----- Markdown (bench/README.md) -----")
    print("\n".join(md))
    print("----- end -----")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
