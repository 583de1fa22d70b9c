#!/usr/bin/env bash
# Gatehouse benchmark: authenticated `GET /v1/api/…` through the gateway vs. direct calls to
# the same nginx upstream, in one run. See bench/README.md.
#
# Environment:
#   DURATION=8        seconds per wrk run
#   RUNS=3            measured runs per target (median is reported)
#   THREADS=2         wrk threads
#   CONNECTIONS=32    wrk connections
#   WARMUP=2          seconds of unmeasured load per target before the first run (0: none)
#   GATEHOUSE_BIN     use this gatehouse binary instead of building release
#   KEEP_TMP=1        keep the temp dir (nginx config, logs, raw wrk output)
set -euo pipefail

LOG_TAG=bench
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$script_dir/lib.sh" # wrk defaults, helpers; cds to the repository root
STOP_WAIT=5

check_wrk_settings

# --- tools -------------------------------------------------------------------------------------
install_load_tools

# --- gatehouse binary ----------------------------------------------------------------------------
if [[ -n ${GATEHOUSE_BIN:-} ]]; then
    [[ -x $GATEHOUSE_BIN ]] || die "GATEHOUSE_BIN=$GATEHOUSE_BIN is not an executable"
    BIN=$(cd "$(dirname "$GATEHOUSE_BIN")" && pwd)/$(basename "$GATEHOUSE_BIN")
else
    log "building release (swift build -c release --product gatehouse; the first build takes minutes)"
    swift build -c release --product gatehouse >&2 || die "release build failed"
    BIN="$(swift build -c release --show-bin-path)/gatehouse"
    [[ -x $BIN ]] || die "no binary at $BIN after the build"
fi
bin_kind=$(binary_kind "$BIN")

# --- temp dir and cleanup ------------------------------------------------------------------------
nginx_pid=""
gw_pid=""
cleanup_pids=(gw_pid nginx_pid)
remove_demo_dir() { # the demo keeps its files under $TMPDIR/gatehouse-demo-<pid>
    [[ -n $gw_pid ]] && rm -rf "${TMPDIR:-/tmp}/gatehouse-demo-$gw_pid"
}
cleanup_hook=remove_demo_dir
make_tmp gatehouse-bench

# --- nginx upstream ------------------------------------------------------------------------------
nginx_port=$(free_port)
start_backend "$tmp/nginx" "$nginx_port" nginx_pid
direct_url="http://127.0.0.1:$nginx_port/bench"

# --- gateway (demo mode: stand-in OAuth server on loopback, nginx as the backend) -----------------
gw_port=$(free_port)
gw="http://127.0.0.1:$gw_port"
"$BIN" demo --listen "127.0.0.1:$gw_port" --backend "http://127.0.0.1:$nginx_port" --token-lifetime 3600 \
    >"$tmp/gateway.log" 2>&1 &
gw_pid=$!
wait_http "$gw/healthz" "$gw_pid" gateway

token=$(python3 "$script_dir/login.py" "$gw") || die "login failed (gateway log: $tmp/gateway.log)"
[[ -n $token ]] || die "login printed no token"

gw_url="$gw/v1/api/bench"
auth=(-H "Authorization: Bearer $token")
sanity_check "the gateway" "$gw_url" "${auth[@]}"

# --- load ----------------------------------------------------------------------------------------
cpu_watch=("gateway=$gw_pid")
wrk_target() { # name index seconds url [wrk args…]
    local name=$1 idx=$2
    shift 2
    run_wrk "$name run $idx" "$tmp/wrk-$name-$idx.txt" "$@"
    require_alive "$gw_pid" "the gateway died during the $name run (log: $tmp/gateway.log)"
}

log "binary: $BIN ($bin_kind)"
log "wrk: $THREADS threads, $CONNECTIONS connections, ${DURATION}s x $RUNS runs per target, alternating; direct $direct_url, gateway $gw_url"
if ((WARMUP > 0)); then
    log "warm-up: ${WARMUP}s each"
    wrk_target direct warmup "$WARMUP" "$direct_url"
    wrk_target gateway warmup "$WARMUP" "$gw_url" "${auth[@]}"
fi
for i in $(seq "$RUNS"); do
    log "run $i/$RUNS: direct"
    wrk_target direct "$i" "$DURATION" "$direct_url"
    log "run $i/$RUNS: gateway"
    wrk_target gateway "$i" "$DURATION" "$gw_url" "${auth[@]}"
done

# --- report --------------------------------------------------------------------------------------
gw_log_problems=$(log_problem_lines "$tmp/gateway.log" | grep -c . || true)
report_rc=0
python3 - "$script_dir" "$tmp" "$RUNS" "$clk_tck" "$bin_kind" "$DURATION" "$THREADS" "$CONNECTIONS" "$gw_log_problems" <<'EOF' || report_rc=$?
import os, statistics, sys

script_dir, tmp, runs, clk_tck, bin_kind, duration, threads, conns, log_problems = sys.argv[1:]
runs, clk_tck = int(runs), int(clk_tck)
sys.path.insert(0, script_dir)
sys.dont_write_bytecode = True  # no bench/__pycache__
from scale_report import fmt_ms, read_wrk, wrk_problems  # noqa: E402 (the same wrk summary lines)

def parse(path):
    r = read_wrk(path)
    r["cpu_s"] = r["gateway"] / clk_tck
    return r

results = {name: [parse(os.path.join(tmp, f"wrk-{name}-{i}.txt")) for i in range(1, runs + 1)]
           for name in ("direct", "gateway")}
warm = {name: parse(os.path.join(tmp, f"wrk-{name}-warmup.txt"))
        for name in ("direct", "gateway") if os.path.exists(os.path.join(tmp, f"wrk-{name}-warmup.txt"))}

print()
print(f"Gatehouse benchmark ({bin_kind} binary): wrk {threads} threads, {conns} connections, "
      f"{duration} s x {runs} runs each, median; GET of a 64-byte JSON body from nginx")
print("per run (req/s):")
for name in ("direct", "gateway"):
    print(f"  {name:8} " + "  ".join(f"{r['rps']:9.0f}" for r in results[name]))
print()
med = {}
for name in ("direct", "gateway"):
    rs = results[name]
    med[name] = {k: statistics.median(r[k] for r in rs) for k in ("rps", "p50_ms", "p99_ms")}
    m = med[name]
    print(f"{name:8} {m['rps']:8.0f} req/s  p50 {fmt_ms(m['p50_ms']):>8}  p99 {fmt_ms(m['p99_ms']):>8}")
ratio = med["gateway"]["rps"] / med["direct"]["rps"]
print(f"ratio gateway/direct {ratio:.3f}")

gw = results["gateway"]
cpu = sum(r["cpu_s"] for r in gw)
reqs = int(sum(r["requests"] for r in gw))
if cpu > 0 and reqs > 0:
    print(f"gateway CPU: {cpu:.1f} s over {reqs} requests = {cpu / reqs * 1e6:.1f} us/request "
          f"({cpu / (runs * int(duration)):.2f} cores busy on average)")

problems = wrk_problems(list(results.items()) + [(f"{k} warm-up", [v]) for k, v in warm.items()])
if int(log_problems):
    problems.append(f"gateway log: {log_problems} warning/error lines")
if problems:
    print("PROBLEMS:")
    for p in problems:
        print("  " + p)
    sys.exit(2)
print("non-2xx responses: 0, socket errors: 0, gateway log: no warnings/errors")
EOF
if ((gw_log_problems > 0)); then
    log "gateway log, warning/error lines (first 20):"
    log_problem_lines "$tmp/gateway.log" | head -20 >&2
fi
exit "$report_rc"
