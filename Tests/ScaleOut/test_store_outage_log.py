"""Operators' signals under a fault: PostgreSQL stopped for 12 s under load on two instances.

While the store is down each instance logs one line when it goes down, at most one line per 10 s with the
number of requests refused meanwhile, and one line when it is back, however many requests it refuses; and its
access log still has a line for every request it answered.
"""
from __future__ import annotations

import re
import threading
import time

import requests

from test_scale_out import bearer, new_session

TIMEOUT = 30
OUTAGE_SECONDS = 12


def test_postgres_stopped_12s_under_load_logs_a_bounded_number_of_lines_and_every_request(cluster):
    token = new_session(cluster)
    gateways = (cluster.a, cluster.b)
    offsets = {gw.name: gw.log.stat().st_size for gw in gateways}
    sent = {gw.name: 0 for gw in gateways}
    statuses: dict[str, list[int]] = {gw.name: [] for gw in gateways}
    lock = threading.Lock()
    running = threading.Event()
    running.set()

    def traffic(gw) -> None:
        session = requests.Session()
        while running.is_set():
            status = session.get(f"{gw.url}/v1/session", headers=bearer(token), timeout=TIMEOUT).status_code
            with lock:
                sent[gw.name] += 1
                statuses[gw.name].append(status)

    threads = [threading.Thread(target=traffic, args=(gw,), daemon=True) for gw in gateways for _ in range(3)]
    for t in threads:
        t.start()
    try:
        time.sleep(1)
        cluster.pg.stop()
        try:
            time.sleep(OUTAGE_SECONDS)
        finally:
            cluster.pg.start()
        # Until both serve again, then a little more traffic on the recovered store.
        deadline = time.monotonic() + 30
        while not all(statuses[gw.name][-5:] == [200] * 5 for gw in gateways):
            assert time.monotonic() < deadline, "not recovered 30 s after PostgreSQL came back"
            time.sleep(0.2)
    finally:
        running.clear()
        for t in threads:
            t.join(timeout=TIMEOUT)
    time.sleep(1.5)  # the access log is written in batches

    for gw in gateways:
        with open(gw.log, "rb") as f:
            f.seek(offsets[gw.name])
            lines = f.read().decode("utf-8", "replace").splitlines()
        refused = statuses[gw.name].count(503)
        assert refused > 100, f"{gw.name}: only {refused} requests refused: not under load"
        access = [line for line in lines if re.search(r" method=GET .*route=/v1/session .*status=\d+ .*\] request$", line)]
        odd = [line for line in lines if "/v1/session" in line and line not in access][:5]
        assert len(access) == sent[gw.name], f"{gw.name}: {sent[gw.name]} requests, {len(access)} access-log lines; others: {odd}"
        others = [line for line in lines if line not in access]
        down = [line for line in others if "session store unavailable" in line]
        still = [line for line in others if "session store still unavailable" in line]
        back = [line for line in others if "session store reachable again" in line]
        assert len(down) == 1 and len(back) == 1, (gw.name, down, back)
        assert len(still) <= OUTAGE_SECONDS // 10 + 1, (gw.name, still)
        # Whatever else the outage makes the instance say stays a handful of lines, not one per request.
        assert len(others) <= 12, f"{gw.name}: {len(others)} lines besides the access log for {refused} refusals:\n" + "\n".join(others)
        counted = sum(int(m.group(1)) for line in still + back if (m := re.search(r"refused=(\d+)", line)))
        assert counted >= refused * 0.9, f"{gw.name}: the lines count {counted} refusals, the clients got {refused}"
