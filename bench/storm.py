#!/usr/bin/env python3
"""A refresh storm: COUNT calls at once (one thread and one new connection each, released together by a
barrier) to one URL with one session token. Prints one JSON line: statuses, p50/p99/max latency in ms.

usage: storm.py URL TOKEN [COUNT]
"""
from __future__ import annotations

import http.client
import json
import sys
import threading
import time
from urllib.parse import urlsplit


def main() -> int:
    url, token = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    barrier = threading.Barrier(count)
    results: list[tuple[int, float]] = [(0, 0.0)] * count

    def call(i: int) -> None:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        try:
            barrier.wait()
            started = time.monotonic()
            connection.request("GET", target, headers={"Authorization": f"Bearer {token}"})
            response = connection.getresponse()
            response.read()
            results[i] = (response.status, time.monotonic() - started)
        except Exception:  # a refused or reset connection counts as a failure (status 0)
            results[i] = (0, 0.0)
        finally:
            connection.close()

    threading.stack_size(256 * 1024)
    threads = [threading.Thread(target=call, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses: dict[str, int] = {}
    for status, _ in results:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    latencies = sorted(seconds for status, seconds in results if status)
    def pick(q: float) -> float:
        return round(latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000, 1) if latencies else 0.0
    print(json.dumps({"count": count, "statuses": statuses, "p50_ms": pick(0.50), "p99_ms": pick(0.99), "max_ms": pick(1.0)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
