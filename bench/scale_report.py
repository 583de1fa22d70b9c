"""Report of bench/scale.sh: reads the temp dir it wrote, prints the figures and a summary block.

Input (environment, set by scale.sh): SCALE_TMP (lookup.txt, wrk-<target>-<run>.txt), SCALE_RUNS,
SCALE_CLK_TCK, SCALE_BIN_KIND, SCALE_DURATION, SCALE_THREADS, SCALE_CONNECTIONS, SCALE_LOG_PROBLEMS, SCALE_KNOWN_WARNINGS,
SCALE_LOOKUP_CONCURRENCY, SCALE_POOL_SIZE, SCALE_PG_VERSION, SCALE_PG_SHARED_BUFFERS, SCALE_SECONDS_*,
SCALE_COMMAND. Exit status 2 when a wrk run saw errors or a gateway logged warnings/errors.
"""
import datetime
import os
import re
import statistics
import sys

env = os.environ
tmp = env["SCALE_TMP"]
runs = int(env["SCALE_RUNS"])
clk_tck = int(env["SCALE_CLK_TCK"])
duration = int(env["SCALE_DURATION"])
UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}
TARGETS = {
    "direct-a": "instance A, direct (no LB)",
    "lb-a": "nginx LB -> A (1 instance)",
    "lb-ab": "nginx LB -> A + B (2 instances)",
}


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def ms(value):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", value)
    if not m:
        raise ValueError(f"unparsable latency {value!r}")
    return float(m.group(1)) * UNITS[m.group(2)]


def parse_wrk(path):
    text = open(path).read()
    r = {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1)),
        "p50": ms(re.search(r"^\s+50%\s+(\S+)", text, re.M).group(1)),
        "p99": ms(re.search(r"^\s+99%\s+(\S+)", text, re.M).group(1)),
        "requests": int(re.search(r"(\d+) requests in", text).group(1)),
    }
    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    r["non2xx"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    r["sockerr"] = sum(map(int, m.groups())) if m else 0
    for who in ("a", "b", "lb"):
        r[f"cpu_{who}"] = int(re.search(rf"cpu_ticks_{who} (-?\d+)", text).group(1)) / clk_tck
    return r


def fmt_ms(v):
    return f"{v:.2f} ms" if v < 10 else f"{v:.1f} ms"


def fmt_us(v):
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


# --- lookups ------------------------------------------------------------------------------------
lookups = []
for line in open(os.path.join(tmp, "lookup.txt")):
    if line.startswith("lookup "):
        lookups.append(dict(f.split("=", 1) for f in line.split()[1:]))
hits = [r for r in lookups if r["kind"] == "hit"]
misses = {(r["store"], r["sessions"]): r for r in lookups if r["kind"] == "miss"}

lookup_lines = [
    f"{'store':<9}{'sessions':>10}{'p50':>8}{'p90':>8}{'p99':>8}{'max':>9}   {'miss p50/p99':>13}  {'on disk':>9}  seeded in",
]
for r in hits:
    miss = misses.get((r["store"], r["sessions"]))
    miss_text = f"{fmt_us(float(miss['p50_us']))}/{fmt_us(float(miss['p99_us']))}" if miss else "-"
    lookup_lines.append(
        f"{r['store']:<9}{int(r['sessions']):>10,}{fmt_us(float(r['p50_us'])):>8}{fmt_us(float(r['p90_us'])):>8}"
        f"{fmt_us(float(r['p99_us'])):>8}{fmt_us(float(r['max_us'])):>9}   {miss_text:>13}  "
        f"{float(r['size_mib']):>6.0f} MiB  {float(r['seed_s']):.1f} s")
lookup_counts = sorted({int(r["lookups"]) for r in hits})
miss_counts = sorted({int(r["lookups"]) for r in misses.values()})

# --- throughput ---------------------------------------------------------------------------------
results = {t: [parse_wrk(os.path.join(tmp, f"wrk-{t}-{i}.txt")) for i in range(1, runs + 1)] for t in TARGETS}
warm = {t: parse_wrk(os.path.join(tmp, f"wrk-{t}-warmup.txt"))
        for t in TARGETS if os.path.exists(os.path.join(tmp, f"wrk-{t}-warmup.txt"))}
med = {t: {k: statistics.median(r[k] for r in rs) for k in ("rps", "p50", "p99")} for t, rs in results.items()}
ratio_lb = med["lb-ab"]["rps"] / med["lb-a"]["rps"]
ratio_direct = med["lb-a"]["rps"] / med["direct-a"]["rps"]

throughput_lines = []
for t, label in TARGETS.items():
    m = med[t]
    throughput_lines.append(f"{label:<32} {m['rps']:7,.0f} req/s  p50 {fmt_ms(m['p50']):>8}  p99 {fmt_ms(m['p99']):>8}")
cpu_lines = []
for t, label in TARGETS.items():
    rs = results[t]
    secs = runs * duration
    a = sum(r["cpu_a"] for r in rs) / secs
    b = sum(r["cpu_b"] for r in rs) / secs
    lb = sum(r["cpu_lb"] for r in rs) / secs
    cpu_lines.append(f"{label:<32} A {a:.2f}  B {b:.2f}  LB nginx {lb:.2f}")

cores = os.cpu_count() or 0
now = datetime.date.today().strftime("%d %b %Y")
problems = []
for t, rs in list(results.items()) + [(f"{k} warm-up", [v]) for k, v in warm.items()]:
    for i, r in enumerate(rs, 1):
        if r["non2xx"]:
            problems.append(f"{t} run {i}: {r['non2xx']} non-2xx/3xx responses")
        if r["sockerr"]:
            problems.append(f"{t} run {i}: {r['sockerr']} socket errors")
if int(env["SCALE_LOG_PROBLEMS"]):
    problems.append(f"gateway logs: {env['SCALE_LOG_PROBLEMS']} warning/error lines")

print()
print("per run (req/s):")
for t in TARGETS:
    print(f"  {t:9} " + "  ".join(f"{r['rps']:8.0f}" for r in results[t]))
print("cores busy on average (utime+stime / wall time of the measured runs):")
for line in cpu_lines:
    print("  " + line)
print()
print("=" * 100)
print(f"Gatehouse scale benchmark (issue #7), {now}, {env['SCALE_BIN_KIND']} binaries, "
      f"{cores} cores ({cpu_model()})")
print()
print(f"Session lookup: SessionStore.session(tokenHash:) on the real store, microseconds, "
      f"{'/'.join(map(str, lookup_counts))} random hits of stored sessions (+{'/'.join(map(str, miss_counts)) or 0} misses), "
      f"{env['SCALE_LOOKUP_CONCURRENCY']} task(s), after a warm-up; SQLite WAL file, PostgreSQL "
      f"{env['SCALE_PG_VERSION']} on loopback (shared_buffers {env['SCALE_PG_SHARED_BUFFERS']}, fsync off)")
for line in lookup_lines:
    print("  " + line)
print()
print(f"Proxied GET /v1/api/bench (Bearer session token, PostgreSQL store, nginx backend with a 64-byte JSON body): "
      f"wrk {env['SCALE_THREADS']} threads, {env['SCALE_CONNECTIONS']} connections, {duration} s x {runs} runs each, "
      f"median; LB = one nginx worker, round robin, keepalive upstream")
for line in throughput_lines:
    print("  " + line)
print(f"  ratio 2 instances / 1 instance through the LB: {ratio_lb:.2f}   (LB -> A / A direct: {ratio_direct:.2f})")
if cores <= 2:
    print(f"  NOTE: this machine has only {cores} cores. wrk, both nginx processes, PostgreSQL and both gateways share")
    print("  them, so a second instance brings no CPU of its own: the 1-vs-2 ratio shows how the same cores are")
    print("  shared, not horizontal scaling. Run the instances on separate hosts to measure that.")
print()
print(f"Run time: {env['SCALE_SECONDS_TOTAL']} s (build {env['SCALE_SECONDS_BUILD']} s, lookups "
      f"{env['SCALE_SECONDS_LOOKUP']} s, throughput {env['SCALE_SECONDS_THROUGHPUT']} s)")
print(f"Command: {env['SCALE_COMMAND']}")
if problems:
    print("PROBLEMS:")
    for p in problems:
        print("  " + p)
else:
    print("non-2xx responses: 0, socket errors: 0, gateway logs: no warnings/errors", end="")
    known = int(env.get("SCALE_KNOWN_WARNINGS", "0"))
    print(f" (but {known} PostgresNIO 'lease before run()' start-up warning(s): a harmless race in `gatehouse serve`)"
          if known else "")
print("=" * 100)
sys.exit(2 if problems else 0)
