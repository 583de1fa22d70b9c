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

DURATION=${DURATION:-8}
RUNS=${RUNS:-3}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
WARMUP=${WARMUP:-2}
KEEP_TMP=${KEEP_TMP:-0}

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/.." && pwd)
cd "$repo_root"

log() { printf '[bench] %s\n' "$*" >&2; }
die() { printf '[bench] ERROR: %s\n' "$*" >&2; exit 1; }

for v in DURATION RUNS THREADS CONNECTIONS WARMUP; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer (got '${!v}')"
done
((DURATION > 0 && RUNS > 0 && THREADS > 0 && CONNECTIONS >= THREADS)) || die "DURATION, RUNS, THREADS must be > 0 and CONNECTIONS >= THREADS"

# --- tools -------------------------------------------------------------------------------------
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else die "need root to run: $*"; fi; }
apt_updated=0
apt_install() {
    command -v apt-get >/dev/null || die "missing $* and no apt-get; install it yourself"
    if [[ $apt_updated -eq 0 ]] && ! apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
        as_root apt-get update -qq
        apt_updated=1
    fi
    log "installing $*"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
command -v wrk >/dev/null || apt_install wrk
command -v curl >/dev/null || apt_install curl
command -v python3 >/dev/null || apt_install python3
NGINX=$(command -v nginx || true)
[[ -z $NGINX && -x /usr/sbin/nginx ]] && NGINX=/usr/sbin/nginx
if [[ -z $NGINX ]]; then
    apt_install nginx-light || apt_install nginx
    NGINX=$(command -v nginx || echo /usr/sbin/nginx)
fi
[[ -x $NGINX ]] || die "nginx not found"

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
case $BIN in
*/release/*) bin_kind=release ;;
*/debug/*) bin_kind=debug ;;
*) bin_kind=unknown ;;
esac

# --- temp dir and cleanup ------------------------------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-bench.XXXXXX")
nginx_pid=""
gw_pid=""
wrk_pid=""
stop_pid() { # pid: TERM, wait up to 5 s, then KILL
    local pid=$1
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    stop_pid "$wrk_pid"
    stop_pid "$gw_pid"
    stop_pid "$nginx_pid"
    # The demo keeps its files under $TMPDIR/gatehouse-demo-<pid>.
    [[ -n $gw_pid ]] && rm -rf "${TMPDIR:-/tmp}/gatehouse-demo-$gw_pid"
    # Kept on a failure (not on Ctrl-C / TERM) for the logs, or when asked.
    if [[ $KEEP_TMP == 1 || ($rc -ne 0 && $rc -ne 130 && $rc -ne 143) ]]; then
        log "kept $tmp (logs, configs, raw wrk output)"
    else
        rm -rf "$tmp"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
wait_http() { # url pid name: wait up to 30 s for any HTTP answer
    local url=$1 pid=$2 name=$3
    for _ in $(seq 300); do
        kill -0 "$pid" 2>/dev/null || die "$name exited during start-up (see $tmp)"
        curl -s -o /dev/null --max-time 1 "$url" && return 0
        sleep 0.1
    done
    die "$name did not answer at $url within 30 s"
}

# --- nginx upstream ------------------------------------------------------------------------------
# A 64-byte JSON body, as in PERFORMANCE.md.
body=$(python3 -c '
base = "{\"message\":\"hello from the benchmark upstream\",\"pad\":\"\"}"
b = base[:-2] + "x" * (64 - len(base)) + base[-2:]
assert len(b) == 64, len(b)
print(b, end="")')
nginx_port=$(free_port)
mkdir -p "$tmp/nginx"
cat >"$tmp/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $tmp/nginx/client_body;
    proxy_temp_path $tmp/nginx/proxy;
    fastcgi_temp_path $tmp/nginx/fastcgi;
    uwsgi_temp_path $tmp/nginx/uwsgi;
    scgi_temp_path $tmp/nginx/scgi;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$nginx_port;
        location / {
            default_type application/json;
            return 200 '$body';
        }
    }
}
EOF
"$NGINX" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log" >"$tmp/nginx/stdout.log" 2>&1 &
nginx_pid=$!
direct_url="http://127.0.0.1:$nginx_port/bench"
wait_http "$direct_url" "$nginx_pid" nginx
[[ $(curl -s "$direct_url") == "$body" ]] || die "nginx does not return the expected body"

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
status=$(curl -s -o "$tmp/sanity.body" -w '%{http_code}' -H "Authorization: Bearer $token" "$gw_url") || true
if [[ $status != 200 || $(cat "$tmp/sanity.body") != "$body" ]]; then
    printf '[bench] sanity check through the gateway failed: status %s, body:\n' "$status" >&2
    head -c 2000 "$tmp/sanity.body" >&2; echo >&2
    die "GET $gw_url must return 200 and nginx's body"
fi

# --- load ----------------------------------------------------------------------------------------
clk_tck=$(getconf CLK_TCK)
cpu_ticks() { # utime + stime of a pid, in clock ticks
    awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
wrk_run() { # name index seconds url [wrk args…]
    local name=$1 idx=$2 secs=$3 url=$4
    shift 4
    local out="$tmp/wrk-$name-$idx.txt"
    local before after
    before=$(cpu_ticks "$gw_pid")
    # In the background, so that a signal to this script is handled at once (cleanup stops wrk too).
    timeout --kill-after=5 $((secs + 30)) \
        wrk -t"$THREADS" -c"$CONNECTIONS" -d"${secs}s" --latency "$@" "$url" >"$out" 2>&1 &
    wrk_pid=$!
    wait "$wrk_pid" || die "wrk failed for $name run $idx: $(cat "$out")"
    wrk_pid=""
    after=$(cpu_ticks "$gw_pid")
    echo "gateway_cpu_ticks $((after - before))" >>"$out"
    kill -0 "$gw_pid" 2>/dev/null || die "the gateway died during the $name run (log: $tmp/gateway.log)"
}
auth=(-H "Authorization: Bearer $token")

log "binary: $BIN ($bin_kind)"
log "wrk: $THREADS threads, $CONNECTIONS connections, ${DURATION}s x $RUNS runs per target, alternating; direct $direct_url, gateway $gw_url"
if ((WARMUP > 0)); then
    log "warm-up: ${WARMUP}s each"
    wrk_run direct warmup "$WARMUP" "$direct_url"
    wrk_run gateway warmup "$WARMUP" "$gw_url" "${auth[@]}"
fi
for i in $(seq "$RUNS"); do
    log "run $i/$RUNS: direct"
    wrk_run direct "$i" "$DURATION" "$direct_url"
    log "run $i/$RUNS: gateway"
    wrk_run gateway "$i" "$DURATION" "$gw_url" "${auth[@]}"
done

# --- report --------------------------------------------------------------------------------------
gw_log_problems=$(grep -ciE '\b(warning|error|critical)\b' "$tmp/gateway.log" || true)
report_rc=0
python3 - "$tmp" "$RUNS" "$clk_tck" "$bin_kind" "$DURATION" "$THREADS" "$CONNECTIONS" "$gw_log_problems" <<'EOF' || report_rc=$?
import os, re, statistics, sys

tmp, runs, clk_tck, bin_kind, duration, threads, conns, log_problems = sys.argv[1:]
runs, clk_tck = int(runs), int(clk_tck)
UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}

def ms(value):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", value)
    if not m:
        raise ValueError(f"unparsable latency {value!r}")
    return float(m.group(1)) * UNITS[m.group(2)]

def parse(path):
    text = open(path).read()
    r = {}
    r["rps"] = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    r["p50"] = ms(re.search(r"^\s+50%\s+(\S+)", text, re.M).group(1))
    r["p99"] = ms(re.search(r"^\s+99%\s+(\S+)", text, re.M).group(1))
    r["requests"] = int(re.search(r"(\d+) requests in", text).group(1))
    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    r["non2xx"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    r["sockerr"] = sum(map(int, m.groups())) if m else 0
    r["cpu_s"] = int(re.search(r"gateway_cpu_ticks (-?\d+)", text).group(1)) / clk_tck
    return r

results = {name: [parse(os.path.join(tmp, f"wrk-{name}-{i}.txt")) for i in range(1, runs + 1)]
           for name in ("direct", "gateway")}
warm = {name: parse(os.path.join(tmp, f"wrk-{name}-warmup.txt"))
        for name in ("direct", "gateway") if os.path.exists(os.path.join(tmp, f"wrk-{name}-warmup.txt"))}

def fmt_ms(v):
    return f"{v:.2f} ms" if v < 10 else f"{v:.1f} ms"

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
    med[name] = {k: statistics.median(r[k] for r in rs) for k in ("rps", "p50", "p99")}
    m = med[name]
    print(f"{name:8} {m['rps']:8.0f} req/s  p50 {fmt_ms(m['p50']):>8}  p99 {fmt_ms(m['p99']):>8}")
ratio = med["gateway"]["rps"] / med["direct"]["rps"]
print(f"ratio gateway/direct {ratio:.3f}")

gw = results["gateway"]
cpu = sum(r["cpu_s"] for r in gw)
reqs = sum(r["requests"] for r in gw)
if cpu > 0 and reqs > 0:
    print(f"gateway CPU: {cpu:.1f} s over {reqs} requests = {cpu / reqs * 1e6:.1f} us/request "
          f"({cpu / (runs * int(duration)):.2f} cores busy on average)")

problems = []
for name, rs in list(results.items()) + [(f"{k} warm-up", [v]) for k, v in warm.items()]:
    for i, r in enumerate(rs, 1):
        if r["non2xx"]:
            problems.append(f"{name} run {i}: {r['non2xx']} non-2xx/3xx responses")
        if r["sockerr"]:
            problems.append(f"{name} run {i}: {r['sockerr']} socket errors")
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
    grep -iE '\b(warning|error|critical)\b' "$tmp/gateway.log" | head -20 >&2
fi
exit "$report_rc"
