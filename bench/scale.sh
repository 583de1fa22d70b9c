#!/usr/bin/env bash
# Gatehouse scale benchmark (issue #7): session-lookup latency at 10 k and 1 M stored sessions in
# SQLite and PostgreSQL, and proxied requests/s through 1 and 2 gateway instances behind nginx.
# See bench/README.md ("Scale: bench/scale.sh").
#
# Environment:
#   SESSIONS="10000 1000000"  stored-session counts for the lookup latency (ascending; each store is topped up)
#   LOOKUPS=20000             timed hits per store and count (plus MISSES unknown hashes)
#   MISSES=2000               timed misses per store and count (0: none)
#   LOOKUP_CONCURRENCY=1      concurrent lookup tasks
#   DURATION=8                seconds per wrk run
#   RUNS=3                    measured runs per target (median is reported)
#   THREADS=2                 wrk threads
#   CONNECTIONS=32            wrk connections
#   WARMUP=2                  seconds of unmeasured load per target before the first run (0: none)
#   POOL_SIZE=10              PostgreSQL connections per gateway instance
#   SCRATCH_PATH              passed to `swift build --scratch-path` (default: .build)
#   BIN_DIR                   use gatehouse and gatehouse-bench from this directory instead of building
#   KEEP_TMP=1                keep the temp dir (configs, logs, raw wrk output)
set -euo pipefail
started_at=$SECONDS

SESSIONS=${SESSIONS:-10000 1000000}
LOOKUPS=${LOOKUPS:-20000}
MISSES=${MISSES:-2000}
LOOKUP_CONCURRENCY=${LOOKUP_CONCURRENCY:-1}
DURATION=${DURATION:-8}
RUNS=${RUNS:-3}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
WARMUP=${WARMUP:-2}
POOL_SIZE=${POOL_SIZE:-10}
KEEP_TMP=${KEEP_TMP:-0}

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/.." && pwd)
cd "$repo_root"

log() { printf '[scale] %s\n' "$*" >&2; }
die() { printf '[scale] ERROR: %s\n' "$*" >&2; exit 1; }

for v in LOOKUPS MISSES LOOKUP_CONCURRENCY DURATION RUNS THREADS CONNECTIONS WARMUP POOL_SIZE; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer (got '${!v}')"
done
((LOOKUPS > 0 && LOOKUP_CONCURRENCY > 0 && POOL_SIZE > 0)) || die "LOOKUPS, LOOKUP_CONCURRENCY and POOL_SIZE must be > 0"
((DURATION > 0 && RUNS > 0 && THREADS > 0 && CONNECTIONS >= THREADS)) || die "DURATION, RUNS, THREADS must be > 0 and CONNECTIONS >= THREADS"
session_counts=()
for n in $SESSIONS; do
    [[ $n =~ ^[0-9]+$ && $n -gt 0 ]] || die "SESSIONS must list positive integers (got '$SESSIONS')"
    session_counts+=("$n")
done
((${#session_counts[@]} > 0)) || die "SESSIONS is empty"
mapfile -t session_counts < <(printf '%s\n' "${session_counts[@]}" | sort -n -u)

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
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
if [[ -z $(pg_bin) || ! -x $(pg_bin)/initdb ]]; then
    apt_install postgresql
fi
PG_BIN=$(pg_bin)
[[ -x $PG_BIN/initdb && -x $PG_BIN/pg_ctl && -x $PG_BIN/psql ]] || die "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin"

# --- binaries ------------------------------------------------------------------------------------
BIN_DIR_GIVEN=${BIN_DIR:-}
if [[ -n ${BIN_DIR:-} ]]; then
    BIN_DIR=$(cd "$BIN_DIR" && pwd)
else
    build=(swift build -c release)
    [[ -n ${SCRATCH_PATH:-} ]] && build+=(--scratch-path "$SCRATCH_PATH")
    log "building release (${build[*]} --product gatehouse / gatehouse-bench; the first build takes minutes)"
    "${build[@]}" --product gatehouse >&2 || die "release build of gatehouse failed"
    "${build[@]}" --product gatehouse-bench >&2 || die "release build of gatehouse-bench failed"
    BIN_DIR=$("${build[@]}" --show-bin-path)
fi
GH=$BIN_DIR/gatehouse
GHB=$BIN_DIR/gatehouse-bench
[[ -x $GH && -x $GHB ]] || die "no gatehouse / gatehouse-bench in $BIN_DIR"
case $BIN_DIR in
*/release*) bin_kind=release ;;
*/debug*) bin_kind=debug ;;
*) bin_kind=unknown ;;
esac
build_done_at=$SECONDS

# --- temp dir and cleanup ------------------------------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-scale.XXXXXX")
chmod 755 "$tmp" # the postgres user must reach its data directory inside
pg_started=0
nginx_pid=""
lb_pid=""
gw_a_pid=""
gw_b_pid=""
wrk_pid=""
pg_run() { # PostgreSQL's tools refuse to run as root
    if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}
stop_pid() { # pid: TERM, wait up to 10 s, then KILL
    local pid=$1
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    stop_pid "$wrk_pid"
    stop_pid "$gw_a_pid"
    stop_pid "$gw_b_pid"
    stop_pid "$lb_pid"
    stop_pid "$nginx_pid"
    if [[ $pg_started == 1 ]]; then
        pg_run "$PG_BIN/pg_ctl" -D "$tmp/pg/data" -m immediate -w stop >>"$tmp/pg/ctl.out" 2>&1 || true
    fi
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
wait_http() { # url pid name [status]: wait up to 60 s for an HTTP answer (with that status, if given)
    local url=$1 pid=$2 name=$3 want=${4:-}
    local code
    for _ in $(seq 600); do
        kill -0 "$pid" 2>/dev/null || die "$name exited during start-up (see $tmp)"
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$url" || true)
        if [[ $code != 000 && (-z $want || $code == "$want") ]]; then return 0; fi
        sleep 0.1
    done
    die "$name did not answer at $url within 60 s"
}

# --- PostgreSQL ----------------------------------------------------------------------------------
# A throwaway cluster as in Tests/ScaleOut/conftest.py: trust auth, loopback only, fsync off (this
# measures reads; seeding and the gateways' rare writes need no durability here).
mkdir -p "$tmp/pg"
[[ $(id -u) -eq 0 ]] && chown postgres:postgres "$tmp/pg"
pg_port=$(free_port)
pg_version=$("$PG_BIN/postgres" --version | awk '{print $3}')
log "PostgreSQL $pg_version on 127.0.0.1:$pg_port"
pg_run "$PG_BIN/initdb" -D "$tmp/pg/data" -U postgres -A trust --no-sync -E UTF8 >>"$tmp/pg/ctl.out" 2>&1 \
    || die "initdb failed: $(tail -5 "$tmp/pg/ctl.out")"
pg_run "$PG_BIN/pg_ctl" -D "$tmp/pg/data" -l "$tmp/pg/postgres.log" -w -t 60 \
    -o "-p $pg_port -k $tmp/pg -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start \
    >>"$tmp/pg/ctl.out" 2>&1 || die "pg_ctl start failed: $(tail -5 "$tmp/pg/postgres.log" 2>/dev/null)"
pg_started=1
psql_do() { "$PG_BIN/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -q -v ON_ERROR_STOP=1 -c "$1" >/dev/null; }
psql_do "CREATE DATABASE lookup"
psql_do "CREATE DATABASE gatehouse"
pg_url() { echo "postgres://postgres@127.0.0.1:$pg_port/$1?sslmode=disable"; }
pg_shared_buffers=$("$PG_BIN/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -Atc "SHOW shared_buffers")

# --- 1. session-lookup latency -------------------------------------------------------------------
# The same SQLite file and PostgreSQL database grow from one count to the next: only the difference is seeded.
: >"$tmp/lookup.txt"
for n in "${session_counts[@]}"; do
    for store in sqlite postgres; do
        if [[ $store == sqlite ]]; then
            target=(--store sqlite --path "$tmp/lookup.sqlite3")
        else
            target=(--store postgres --url "$(pg_url lookup)")
        fi
        log "lookup latency: $store, $n sessions ($LOOKUPS hits, $MISSES misses, concurrency $LOOKUP_CONCURRENCY)"
        "$GHB" store-lookup "${target[@]}" --sessions "$n" --lookups "$LOOKUPS" --misses "$MISSES" \
            --concurrency "$LOOKUP_CONCURRENCY" >>"$tmp/lookup.txt" 2>"$tmp/lookup-$store-$n.log" \
            || die "store-lookup failed for $store at $n sessions: $(tail -5 "$tmp/lookup-$store-$n.log")"
        sed 's/^/  /' "$tmp/lookup-$store-$n.log" >&2
        tail -n 2 "$tmp/lookup.txt" | sed 's/^/  /' >&2
    done
done
rm -f "$tmp/lookup.sqlite3" "$tmp/lookup.sqlite3-wal" "$tmp/lookup.sqlite3-shm"
psql_do "DROP DATABASE lookup"
lookup_done_at=$SECONDS

# --- 2. proxied requests/s through 1 and 2 instances ----------------------------------------------
# nginx backend: a 64-byte JSON body, as in bench/run.sh and PERFORMANCE.md.
body=$(python3 -c '
base = "{\"message\":\"hello from the benchmark upstream\",\"pad\":\"\"}"
b = base[:-2] + "x" * (64 - len(base)) + base[-2:]
assert len(b) == 64, len(b)
print(b, end="")')
nginx_temp_paths() { # dir
    printf '    client_body_temp_path %s/client_body;\n    proxy_temp_path %s/proxy;\n' "$1" "$1"
    printf '    fastcgi_temp_path %s/fastcgi;\n    uwsgi_temp_path %s/uwsgi;\n    scgi_temp_path %s/scgi;\n' "$1" "$1" "$1"
}
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
$(nginx_temp_paths "$tmp/nginx")
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
wait_http "http://127.0.0.1:$nginx_port/bench" "$nginx_pid" "nginx backend"
[[ $(curl -s "http://127.0.0.1:$nginx_port/bench") == "$body" ]] || die "nginx does not return the expected body"

# Gateway configuration: PostgreSQL store, shared key files, one oauth2 provider whose endpoints are
# never called (the seeded credential has no expiry and no refresh token).
gw_a_port=$(free_port)
gw_b_port=$(free_port)
unused_port=$(free_port)
gwdir=$tmp/gateway
mkdir -p "$gwdir/Providers"
"$GH" keys generate --id k1 --directory "$gwdir/keys" >/dev/null || die "gatehouse keys generate failed"
[[ -f $gwdir/keys/sealing-k1.key && -f $gwdir/keys/signing-k1.pem ]] || die "gatehouse keys generate wrote no sealing-k1.key / signing-k1.pem"
cat >"$gwdir/gatehouse.yaml" <<EOF
listen: "127.0.0.1:$gw_a_port"
public_url: "http://127.0.0.1:$gw_a_port"
providers_dir: "$gwdir/Providers"
store:
  kind: "postgres"
  url: "$(pg_url gatehouse)"
  pool_size: $POOL_SIZE
keys:
  sealing:
    - {id: "k1", file: "$gwdir/keys/sealing-k1.key"}
  signing:
    - {id: "k1", file: "$gwdir/keys/signing-k1.pem"}
backend:
  url: "http://127.0.0.1:$nginx_port"
  audience: "bench"
allowed_redirect_uris:
  - "http://127.0.0.1:9/cb"
logging:
  level: "info"
  format: "text"
EOF
cat >"$gwdir/Providers/bench.yaml" <<EOF
id: "bench"
kind: "oauth2"
name: "Benchmark provider (never called)"
authorization_endpoint: "http://127.0.0.1:$unused_port/authorize"
token_endpoint: "http://127.0.0.1:$unused_port/token"
client_id: "gatehouse-bench"
token_endpoint_auth_method: "none"
scopes: ["read"]
EOF
"$GH" check --config "$gwdir/gatehouse.yaml" >"$tmp/check.out" 2>&1 || die "gatehouse check failed: $(cat "$tmp/check.out")"
log "$(cat "$tmp/check.out")"
token=$("$GHB" seed-session --config "$gwdir/gatehouse.yaml" --provider bench 2>"$tmp/seed-session.log") \
    || die "seed-session failed: $(cat "$tmp/seed-session.log")"
[[ -n $token ]] || die "seed-session printed no token"

start_gateway() { # name port -> sets gw_<name>_pid
    local name=$1 port=$2
    "$GH" serve --config "$gwdir/gatehouse.yaml" --listen "127.0.0.1:$port" >"$tmp/gateway-$name.log" 2>&1 &
    printf -v "gw_${name}_pid" '%s' "$!"
}
start_gateway a "$gw_a_port"
start_gateway b "$gw_b_port"
wait_http "http://127.0.0.1:$gw_a_port/readyz" "$gw_a_pid" "gateway A" 200
wait_http "http://127.0.0.1:$gw_b_port/readyz" "$gw_b_pid" "gateway B" 200

# The load balancer: one nginx, two listeners, keepalive upstreams; round robin (nginx's default).
lb_one_port=$(free_port)
lb_two_port=$(free_port)
mkdir -p "$tmp/lb"
lb_location='proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host $http_host;'
cat >"$tmp/lb/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $tmp/lb/nginx.pid;
error_log $tmp/lb/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
$(nginx_temp_paths "$tmp/lb")
    keepalive_requests 1000000;
    upstream gatehouse_one {
        server 127.0.0.1:$gw_a_port;
        keepalive 64;
        keepalive_requests 1000000;
    }
    upstream gatehouse_two {
        server 127.0.0.1:$gw_a_port;
        server 127.0.0.1:$gw_b_port;
        keepalive 64;
        keepalive_requests 1000000;
    }
    server {
        listen 127.0.0.1:$lb_one_port;
        location / { proxy_pass http://gatehouse_one; $lb_location }
    }
    server {
        listen 127.0.0.1:$lb_two_port;
        location / { proxy_pass http://gatehouse_two; $lb_location }
    }
}
EOF
"$NGINX" -p "$tmp/lb" -c "$tmp/lb/nginx.conf" -e "$tmp/lb/error.log" >"$tmp/lb/stdout.log" 2>&1 &
lb_pid=$!
wait_http "http://127.0.0.1:$lb_one_port/healthz" "$lb_pid" "nginx load balancer"

declare -A target_url=(
    [direct-a]="http://127.0.0.1:$gw_a_port/v1/api/bench"
    [lb-a]="http://127.0.0.1:$lb_one_port/v1/api/bench"
    [lb-ab]="http://127.0.0.1:$lb_two_port/v1/api/bench"
)
targets=(direct-a lb-a lb-ab)
auth=(-H "Authorization: Bearer $token")
for t in "${targets[@]}" gw-b; do
    url=${target_url[$t]:-http://127.0.0.1:$gw_b_port/v1/api/bench}
    status=$(curl -s -o "$tmp/sanity.body" -w '%{http_code}' "${auth[@]}" "$url") || true
    if [[ $status != 200 || $(cat "$tmp/sanity.body") != "$body" ]]; then
        printf '[scale] sanity check failed for %s: status %s, body:\n' "$t" "$status" >&2
        head -c 2000 "$tmp/sanity.body" >&2; echo >&2
        die "GET $url must return 200 and nginx's body"
    fi
done

clk_tck=$(getconf CLK_TCK)
cpu_ticks() { # utime + stime of a pid, in clock ticks
    awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
lb_worker=$(pgrep -P "$lb_pid" | head -1 || true)
wrk_run() { # target index seconds
    local name=$1 idx=$2 secs=$3
    local out="$tmp/wrk-$name-$idx.txt"
    local a0 b0 l0
    a0=$(cpu_ticks "$gw_a_pid") b0=$(cpu_ticks "$gw_b_pid") l0=$(cpu_ticks "${lb_worker:-0}")
    # In the background, so that a signal to this script is handled at once (cleanup stops wrk too).
    timeout --kill-after=5 $((secs + 30)) \
        wrk -t"$THREADS" -c"$CONNECTIONS" -d"${secs}s" --latency "${auth[@]}" "${target_url[$name]}" >"$out" 2>&1 &
    wrk_pid=$!
    wait "$wrk_pid" || die "wrk failed for $name run $idx: $(cat "$out")"
    wrk_pid=""
    {
        echo "cpu_ticks_a $(($(cpu_ticks "$gw_a_pid") - a0))"
        echo "cpu_ticks_b $(($(cpu_ticks "$gw_b_pid") - b0))"
        echo "cpu_ticks_lb $(($(cpu_ticks "${lb_worker:-0}") - l0))"
    } >>"$out"
    kill -0 "$gw_a_pid" 2>/dev/null || die "gateway A died during the $name run (log: $tmp/gateway-a.log)"
    kill -0 "$gw_b_pid" 2>/dev/null || die "gateway B died during the $name run (log: $tmp/gateway-b.log)"
}

log "binaries: $BIN_DIR ($bin_kind)"
log "wrk: $THREADS threads, $CONNECTIONS connections, ${DURATION}s x $RUNS runs per target, alternating: ${targets[*]}"
if ((WARMUP > 0)); then
    log "warm-up: ${WARMUP}s each"
    for t in "${targets[@]}"; do wrk_run "$t" warmup "$WARMUP"; done
fi
for i in $(seq "$RUNS"); do
    for t in "${targets[@]}"; do
        log "run $i/$RUNS: $t"
        wrk_run "$t" "$i" "$DURATION"
    done
done
finished_at=$SECONDS

# --- report --------------------------------------------------------------------------------------
# PostgresNIO's "lease before run()" warning is a start-up race in `gatehouse serve` (GatewayLauncher starts the
# pool in a Task and migrates at once); it is harmless and reported separately, every other line is a problem.
known_warning='Trying to lease connection from `PostgresClient`, but `PostgresClient.run()` hasn'"'"'t been called yet'
gateway_problem_lines() {
    cat "$tmp/gateway-a.log" "$tmp/gateway-b.log" | grep -iE '\b(warning|error|critical)\b' | grep -vF "$known_warning" || true
}
log_problems=$(gateway_problem_lines | grep -c . || true)
known_warnings=$(cat "$tmp/gateway-a.log" "$tmp/gateway-b.log" | grep -cF "$known_warning" || true)
command_line="SESSIONS=\"${session_counts[*]}\""
[[ -n ${SCRATCH_PATH:-} ]] && command_line+=" SCRATCH_PATH=$SCRATCH_PATH"
[[ -n ${BIN_DIR_GIVEN:-} ]] && command_line+=" BIN_DIR=$BIN_DIR"
command_line+=" LOOKUPS=$LOOKUPS MISSES=$MISSES DURATION=$DURATION RUNS=$RUNS bash bench/scale.sh"
report_rc=0
SCALE_TMP=$tmp SCALE_RUNS=$RUNS SCALE_CLK_TCK=$clk_tck SCALE_BIN_KIND=$bin_kind SCALE_DURATION=$DURATION \
SCALE_THREADS=$THREADS SCALE_CONNECTIONS=$CONNECTIONS SCALE_LOG_PROBLEMS=$log_problems SCALE_KNOWN_WARNINGS=$known_warnings \
SCALE_LOOKUP_CONCURRENCY=$LOOKUP_CONCURRENCY SCALE_POOL_SIZE=$POOL_SIZE SCALE_PG_SHARED_BUFFERS=$pg_shared_buffers \
SCALE_PG_VERSION=$pg_version \
SCALE_SECONDS_BUILD=$((build_done_at - started_at)) SCALE_SECONDS_LOOKUP=$((lookup_done_at - build_done_at)) \
SCALE_SECONDS_THROUGHPUT=$((finished_at - lookup_done_at)) SCALE_SECONDS_TOTAL=$((finished_at - started_at)) \
SCALE_COMMAND=$command_line \
    python3 "$script_dir/scale_report.py" || report_rc=$?
if ((log_problems > 0)); then
    log "gateway logs, warning/error lines (first 20):"
    gateway_problem_lines | head -20 >&2
fi
exit "$report_rc"
