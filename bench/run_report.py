"""Report of bench/run.sh: reads the temp dir it wrote and prints the per-target table.

Arguments: tmp runs clk_tck bin_kind duration threads connections gateway_log_problems caddy_log_problems command
[apache_log_problems].
tmp holds targets.tsv (name, label, CPU key, RSS KiB after the runs; in run order) and wrk-<name>-<run>.txt, and
issuer-calls-before.json / issuer-calls-after.json (bench/issuer.py's /calls around the measured runs).
Exit status 2 when a wrk run saw errors or a log had warnings/errors.
"""
import datetime
import json
import os
import statistics
import sys

sys.dont_write_bytecode = True  # no bench/__pycache__
from scale_report import cpu_model, fmt_ms, read_wrk, wrk_problems  # noqa: E402 (the same wrk summary lines)


def cpu_ticks(r, key):
    """CPU ticks of the process(es) behind a target: `key`, or `key_1`, `key_2`, … (nginx's workers)."""
    return sum(v for k, v in r.items() if k == key or k.startswith(key + "_"))


def provider_token_ratios(by_name, caddy, tmp):
    """Issue #27's goals for machine clients: the gateway with a provider token >= 2x Apache + mod_auth_openidc in
    resource-server mode with the same token, and >= 1.4x Caddy's plain proxy; and how often the issuer was asked."""
    pairs = (("provider JWT", "gw-bearer-jwt", "apache-oidc-jwt", "mod_auth_openidc JWT"),
             ("provider opaque token", "gw-bearer-opaque", "apache-oidc-introspect", "mod_auth_openidc introspection"))
    for what, gw, peer, peer_label in pairs:
        if gw not in by_name:
            continue
        g = by_name[gw]
        line = f"{what}: Gatehouse {g['rps']:,.0f} req/s"
        if peer in by_name:
            p = by_name[peer]
            line += (f" / {peer_label} {p['rps']:,.0f} = {g['rps'] / p['rps']:.3f}x (goal >= 2x"
                     f", {'met' if g['rps'] >= 2 * p['rps'] else 'NOT met'})")
        line += (f"; / Caddy {caddy:,.0f} = {g['rps'] / caddy:.3f}x (goal >= 1.4x, "
                 f"{'met' if g['rps'] >= 1.4 * caddy else 'NOT met'})")
        if peer in by_name:
            line += f"; CPU/request {g['cpu_us']:.0f} us vs {by_name[peer]['cpu_us']:.0f} us"
        print(line)
    before, after = (os.path.join(tmp, f"issuer-calls-{w}.json") for w in ("before", "after"))
    if os.path.exists(before) and os.path.exists(after):
        b, a = json.load(open(before)), json.load(open(after))

        def delta(scheme, key):
            return a[scheme][key] - b[scheme][key]
        print(f"issuer asked during the load (after the first call per token): gateway JWKS {delta('http', 'jwks')}, "
              f"introspection {delta('http', 'introspect')}; Apache JWKS {delta('https', 'jwks')}, "
              f"introspection {delta('https', 'introspect')}")


def main():
    tmp, runs, clk_tck, bin_kind, duration, threads, conns, gw_problems, caddy_problems, command = sys.argv[1:11]
    apache_problems = sys.argv[11] if len(sys.argv) > 11 else "0"
    runs, clk_tck, duration = int(runs), int(clk_tck), int(duration)
    targets = []
    for line in open(os.path.join(tmp, "targets.tsv")):
        name, label, key, rss = line.rstrip("\n").split("\t")
        targets.append({"name": name, "label": label, "key": key, "rss_kib": int(rss)})

    def wrk_file(name, run):
        return os.path.join(tmp, f"wrk-{name}-{run}.txt")

    results = {t["name"]: [read_wrk(wrk_file(t["name"], i)) for i in range(1, runs + 1)] for t in targets}
    warm = {t["name"]: read_wrk(wrk_file(t["name"], "warmup")) for t in targets
            if os.path.exists(wrk_file(t["name"], "warmup"))}
    for t in targets:
        rs = results[t["name"]]
        t.update({k: statistics.median(r[k] for r in rs) for k in ("rps", "p50_ms", "p99_ms")})
        cpu_s = sum(cpu_ticks(r, t["key"]) for r in rs) / clk_tck
        reqs = sum(r["requests"] for r in rs)
        t["cpu_us"] = cpu_s / reqs * 1e6 if reqs else 0.0
        t["cores"] = cpu_s / (runs * duration)
    by_name = {t["name"]: t for t in targets}
    direct, caddy = by_name["direct"]["rps"], by_name["caddy"]["rps"]

    print()
    print("per run (req/s):")
    for t in targets:
        print(f"  {t['name']:18} " + "  ".join(f"{r['rps']:9.0f}" for r in results[t["name"]]))
    print()
    print("=" * 100)
    now = datetime.date.today().strftime("%d %b %Y")
    print(f"Gatehouse and peers, {now}, {bin_kind} gatehouse binary, {os.cpu_count()} cores ({cpu_model()})")
    print(f"GET of a 64-byte JSON body from nginx, with Authorization: Bearer <session token> (provider rows: <provider "
          f"access token>); wrk {threads} threads, {conns} connections, {duration} s x {runs} runs per target, alternating, median")
    print()
    header = ["target", "req/s", "x direct", "x Caddy", "p50", "p99", "CPU/request", "cores busy", "RSS after"]
    rows = [[t["label"], f"{t['rps']:,.0f}", f"{t['rps'] / direct:.3f}", f"{t['rps'] / caddy:.2f}",
             fmt_ms(t["p50_ms"]), fmt_ms(t["p99_ms"]), f"{t['cpu_us']:.0f} us", f"{t['cores']:.2f}",
             f"{t['rss_kib'] / 1024:.0f} MiB"] for t in targets]
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]

    def line(cells):
        return "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))) + " |"

    print(line(header))
    print("|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|")
    for r in rows:
        print(line(r))
    print()
    print("CPU/request and cores busy: utime+stime of the serving process over the measured runs (nginx: its workers;")
    print("the backend row: the backend's worker); RSS: ps after the runs (nginx: master + workers).")
    floors = [(name, what, cost) for name, what, cost in
              (("nio-relay", "SwiftNIO byte relay", "event loop, syscalls, loopback"),
               ("nio-head-relay", "SwiftNIO head relay", "HTTP/1.1 heads read and written as bytes"),
               ("nio-http-relay", "SwiftNIO HTTP/1.1 relay", "NIOHTTP1 on both sides")) if name in by_name]
    if floors:
        line = "floors of a hop here, CPU/request: " + "; ".join(
            f"{what} ({cost}) {by_name[name]['cpu_us']:.0f} us" for name, what, cost in floors)
        if "nginx-proxy" in by_name:
            line += f"; nginx's proxy hop {by_name['nginx-proxy']['cpu_us']:.0f} us"
        print(line)
        http_floors = [(name, what) for name, what, _ in floors if name != "nio-relay"]
        for name, what in (("gw-sqlite-log", "bearer as shipped"), ("gw-sqlite", "bearer, no access log")):
            if name in by_name and http_floors:
                above = ", ".join(f"{by_name[name]['cpu_us'] - by_name[floor]['cpu_us']:.0f} us above the {floor_what}"
                                  for floor, floor_what in http_floors)
                print(f"  the gateway's {what}: {by_name[name]['cpu_us']:.0f} us, {above}")
    if "gw-sqlite" in by_name and "gw-sqlite-nocache" in by_name:
        on, off = by_name["gw-sqlite"], by_name["gw-sqlite-nocache"]
        print(f"SQLite session cache on / off: {on['rps']:,.0f} / {off['rps']:,.0f} req/s = {on['rps'] / off['rps']:.2f}x "
              f"(p50 {fmt_ms(on['p50_ms'])} vs {fmt_ms(off['p50_ms'])})")
    if "gw-sqlite" in by_name and "gw-sqlite-log" in by_name:
        on, off = by_name["gw-sqlite-log"], by_name["gw-sqlite"]
        print(f"Access log on (as shipped) / off: {on['rps']:,.0f} / {off['rps']:,.0f} req/s = {on['rps'] / off['rps']:.2f}x; "
              f"{on['rps'] / caddy:.2f}x Caddy (gateway CPU/request {on['cpu_us']:.0f} us vs {off['cpu_us']:.0f} us)")
    if "gw-sqlite" in by_name and "gw-sqlite-traced" in by_name:
        on, off = by_name["gw-sqlite-traced"], by_name["gw-sqlite"]
        print(f"Tracing sample_ratio 0.01 / off: {on['rps']:,.0f} / {off['rps']:,.0f} req/s = {on['rps'] / off['rps']:.2f}x "
              f"(gateway CPU/request {on['cpu_us']:.0f} us vs {off['cpu_us']:.0f} us; p50 {fmt_ms(on['p50_ms'])} vs {fmt_ms(off['p50_ms'])})")
    if "gw-sqlite" in by_name and "gw-sqlite-dpop" in by_name:
        bearer, dpop = by_name["gw-sqlite"], by_name["gw-sqlite-dpop"]
        print(f"DPoP-bound / bearer session (SQLite, cache on): {dpop['rps']:,.0f} / {bearer['rps']:,.0f} req/s = "
              f"{dpop['rps'] / bearer['rps']:.2f}x; gateway CPU/request {dpop['cpu_us']:.0f} us vs {bearer['cpu_us']:.0f} us "
              f"(p50 {fmt_ms(dpop['p50_ms'])} vs {fmt_ms(bearer['p50_ms'])}; wrk signs nothing: the proofs are made before each run)")
    verify_file = os.path.join(tmp, "dpop-verify.txt")
    if "gw-sqlite" in by_name and os.path.exists(verify_file):
        lines = [line for line in open(verify_file) if line.strip()]
        verify_us = statistics.median(float(line.split(": ")[1].split(" us")[0]) for line in lines)
        # The same proof checked again and again (the CPU learns its branches): shown, not compared with.
        again = [float(line.split("again and again: ")[1].split(" us")[0]) for line in lines if "again and again: " in line]
        print(f"one ES256 proof signature check (gatehouse-bench dpop-verify over distinct proofs, median of {runs}): {verify_us:.1f} us"
              + (f" (one proof again and again: {statistics.median(again):.1f} us)" if again else ""))
        bearer = by_name["gw-sqlite"]
        for name in ("gw-sqlite-dpop", "gw-sqlite-dpop-store", "gw-memory-dpop"):
            if name in by_name:
                extra = by_name[name]["cpu_us"] - bearer["cpu_us"]
                print(f"  {name}: DPoP CPU - bearer CPU = {extra:.0f} us = {extra / verify_us:.2f} x one verification")
    if "gw-sqlite" in by_name and "gw-memory-dpop" in by_name:
        bearer, dpop = by_name["gw-sqlite"], by_name["gw-memory-dpop"]
        print(f"DPoP-bound on the memory store (no store write) / bearer session (SQLite): {dpop['rps']:,.0f} / {bearer['rps']:,.0f} req/s = "
              f"{dpop['rps'] / bearer['rps']:.2f}x; gateway CPU/request {dpop['cpu_us']:.0f} us vs {bearer['cpu_us']:.0f} us")
    provider_token_ratios(by_name, caddy, tmp)
    print(f"command: {command}")

    problems = wrk_problems([(t["name"], results[t["name"]]) for t in targets]
                            + [(f"{k} warm-up", [v]) for k, v in warm.items()])
    if int(gw_problems):
        problems.append(f"gateway logs: {gw_problems} warning/error lines")
    if int(caddy_problems):
        problems.append(f"Caddy log: {caddy_problems} error lines")
    if int(apache_problems):
        problems.append(f"Apache error log: {apache_problems} error lines")
    if problems:
        print("PROBLEMS:")
        for p in problems:
            print("  " + p)
        sys.exit(2)
    print("non-2xx responses: 0, socket errors: 0, gateway, Caddy and Apache logs: no warnings/errors")


if __name__ == "__main__":
    main()
