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
#   CACHE_MODES="off on"      throughput with store.session_cache_seconds off and/or on
#   CACHE_SECONDS=30          session_cache_seconds in the "on" mode, and store-lookup's cache time to live
#   SCRATCH_PATH              passed to `swift build --scratch-path` (default: .build)
#   BIN_DIR                   use gatehouse and gatehouse-bench from this directory instead of building
#   KEEP_TMP=1                keep the temp dir (configs, logs, raw wrk output)
set -euo pipefail
started_at=$SECONDS

SESSIONS=${SESSIONS:-10000 1000000}
LOOKUPS=${LOOKUPS:-20000}
MISSES=${MISSES:-2000}
LOOKUP_CONCURRENCY=${LOOKUP_CONCURRENCY:-1}
POOL_SIZE=${POOL_SIZE:-10}
CACHE_MODES=${CACHE_MODES:-off on}
CACHE_SECONDS=${CACHE_SECONDS:-30}

LOG_TAG=scale
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$script_dir/lib.sh" # wrk defaults, helpers; cds to the repository root

check_wrk_settings
require_counts LOOKUPS MISSES LOOKUP_CONCURRENCY POOL_SIZE CACHE_SECONDS
((LOOKUPS > 0 && LOOKUP_CONCURRENCY > 0 && POOL_SIZE > 0)) || die "LOOKUPS, LOOKUP_CONCURRENCY and POOL_SIZE must be > 0"
cache_modes=()
for m in $CACHE_MODES; do
    [[ $m == off || $m == on ]] || die "CACHE_MODES must list off and/or on (got '$CACHE_MODES')"
    [[ " ${cache_modes[*]} " == *" $m "* ]] || cache_modes+=("$m")
done
((${#cache_modes[@]} > 0)) || die "CACHE_MODES is empty"
if [[ " ${cache_modes[*]} " == *" on "* ]]; then
    ((CACHE_SECONDS >= 1 && CACHE_SECONDS <= 3600)) || die "CACHE_SECONDS must be 1…3600 (got $CACHE_SECONDS)"
    ((POOL_SIZE >= 2)) || die "the session cache needs POOL_SIZE >= 2 (its change feed holds a connection)"
fi
session_counts=()
for n in $SESSIONS; do
    [[ $n =~ ^[0-9]+$ && $n -gt 0 ]] || die "SESSIONS must list positive integers (got '$SESSIONS')"
    session_counts+=("$n")
done
((${#session_counts[@]} > 0)) || die "SESSIONS is empty"
mapfile -t session_counts < <(printf '%s\n' "${session_counts[@]}" | sort -n -u)

# --- tools -------------------------------------------------------------------------------------
install_load_tools
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
bin_kind=$(binary_kind "$GH")
build_done_at=$SECONDS

# --- temp dir and cleanup ------------------------------------------------------------------------
HTTP_WAIT=60
pg_started=0
nginx_pid=""
lb_pid=""
gw_a_pid=""
gw_b_pid=""
cleanup_pids=(gw_a_pid gw_b_pid lb_pid nginx_pid)
pg_run() { # PostgreSQL's tools refuse to run as root
    if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}
stop_postgres() {
    if [[ $pg_started == 1 ]]; then
        pg_run "$PG_BIN/pg_ctl" -D "$tmp/pg/data" -m immediate -w stop >>"$tmp/pg/ctl.out" 2>&1 || true
    fi
}
cleanup_hook=stop_postgres
make_tmp gatehouse-scale
chmod 755 "$tmp" # the postgres user must reach its data directory inside

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
# "postgres-cache" reads the PostgreSQL database just seeded, through CachingSessionStore with its change feed.
: >"$tmp/lookup.txt"
for n in "${session_counts[@]}"; do
    for store in sqlite postgres postgres-cache; do
        case $store in
        sqlite) target=(--store sqlite --path "$tmp/lookup.sqlite3") ;;
        postgres) target=(--store postgres --url "$(pg_url lookup)") ;;
        postgres-cache) target=(--store postgres --url "$(pg_url lookup)" --session-cache --cache-seconds "$CACHE_SECONDS") ;;
        esac
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

# --- 2. proxied requests/s through 1 and 2 instances, session cache off / on --------------------------
nginx_port=$(free_port)
start_backend "$tmp/nginx" "$nginx_port" nginx_pid

# Gateway configuration: PostgreSQL store, shared key files, one oauth2 provider whose endpoints are
# never called (the seeded credential has no expiry and no refresh token). One file per cache mode.
unused_port=$(free_port)
gwdir=$tmp/gateway
mkdir -p "$gwdir/Providers"
"$GH" keys generate --id k1 --directory "$gwdir/keys" >/dev/null || die "gatehouse keys generate failed"
[[ -f $gwdir/keys/sealing-k1.key && -f $gwdir/keys/signing-k1.pem ]] || die "gatehouse keys generate wrote no sealing-k1.key / signing-k1.pem"
write_config() { # mode port: $gwdir/gatehouse-<mode>.yaml; "on" adds session_cache_seconds
    local cache_line=""
    [[ $1 == on ]] && cache_line="  session_cache_seconds: $CACHE_SECONDS"
    # logging.level info: the "session cache synchronized" line is logged at info.
    cat >"$gwdir/gatehouse-$1.yaml" <<EOF
listen: "127.0.0.1:$2"
public_url: "http://127.0.0.1:$2"
providers_dir: "$gwdir/Providers"
store:
  kind: "postgres"
  url: "$(pg_url gatehouse)"
  pool_size: $POOL_SIZE
$cache_line
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
  access_log: false          # as the peers run here
EOF
    "$GH" check --config "$gwdir/gatehouse-$1.yaml" >"$tmp/check-$1.out" 2>&1 \
        || die "gatehouse check failed for cache $1: $(cat "$tmp/check-$1.out")"
    log "cache $1: $(cat "$tmp/check-$1.out")"
}
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
# Ports per cache mode: gateway A and B, the LB's two listeners.
declare -A gw_a_port_of gw_b_port_of lb_one_port_of lb_two_port_of
for mode in "${cache_modes[@]}"; do
    gw_a_port_of[$mode]=$(free_port) gw_b_port_of[$mode]=$(free_port)
    lb_one_port_of[$mode]=$(free_port) lb_two_port_of[$mode]=$(free_port)
    write_config "$mode" "${gw_a_port_of[$mode]}"
done
token=$("$GHB" seed-session --config "$gwdir/gatehouse-${cache_modes[0]}.yaml" --provider bench 2>"$tmp/seed-session.log") \
    || die "seed-session failed: $(cat "$tmp/seed-session.log")"
[[ -n $token ]] || die "seed-session printed no token"
auth=(-H "Authorization: Bearer $token")
targets=(direct-a lb-a lb-ab)

start_gateway() { # mode name port -> sets gw_<name>_pid
    local mode=$1 name=$2 port=$3
    "$GH" serve --config "$gwdir/gatehouse-$mode.yaml" --listen "127.0.0.1:$port" >"$tmp/gateway-$mode-$name.log" 2>&1 &
    printf -v "gw_${name}_pid" '%s' "$!"
}
start_lb() { # dir one_port two_port a_port b_port: one nginx, two listeners, keepalive upstreams, round robin
    local dir=$1
    local location='proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host $http_host;'
    mkdir -p "$dir"
    {
        nginx_conf_head "$dir" 4096
        cat <<EOF
    upstream gatehouse_one {
        server 127.0.0.1:$4;
        keepalive 64;
        keepalive_requests 1000000;
    }
    upstream gatehouse_two {
        server 127.0.0.1:$4;
        server 127.0.0.1:$5;
        keepalive 64;
        keepalive_requests 1000000;
    }
    server {
        listen 127.0.0.1:$2;
        location / { proxy_pass http://gatehouse_one; $location }
    }
    server {
        listen 127.0.0.1:$3;
        location / { proxy_pass http://gatehouse_two; $location }
    }
}
EOF
    } >"$dir/nginx.conf"
    start_nginx "$dir" lb_pid
    wait_http "http://127.0.0.1:$2/healthz" "$lb_pid" "nginx load balancer"
}

wrk_target() { # target index seconds, in cache $mode
    run_wrk "$1 run $2 (cache $mode)" "$tmp/wrk-$mode-$1-$2.txt" "$3" "${target_url[$1]}" "${auth[@]}"
    require_alive "$gw_a_pid" "gateway A died during the $1 run (log: $tmp/gateway-$mode-a.log)"
    require_alive "$gw_b_pid" "gateway B died during the $1 run (log: $tmp/gateway-$mode-b.log)"
}

log "binaries: $BIN_DIR ($bin_kind)"
log "wrk: $THREADS threads, $CONNECTIONS connections, ${DURATION}s x $RUNS runs per target, alternating: ${targets[*]}; session cache: ${cache_modes[*]}"
declare -A target_url=()
for mode in "${cache_modes[@]}"; do
    gw_a_port=${gw_a_port_of[$mode]} gw_b_port=${gw_b_port_of[$mode]}
    lb_one_port=${lb_one_port_of[$mode]} lb_two_port=${lb_two_port_of[$mode]}
    start_gateway "$mode" a "$gw_a_port"
    start_gateway "$mode" b "$gw_b_port"
    wait_http "http://127.0.0.1:$gw_a_port/readyz" "$gw_a_pid" "gateway A" 200
    wait_http "http://127.0.0.1:$gw_b_port/readyz" "$gw_b_pid" "gateway B" 200
    if [[ $mode == on ]]; then
        wait_log "$tmp/gateway-$mode-a.log" "session cache synchronized" "$gw_a_pid" "gateway A"
        wait_log "$tmp/gateway-$mode-b.log" "session cache synchronized" "$gw_b_pid" "gateway B"
    fi
    start_lb "$tmp/lb-$mode" "$lb_one_port" "$lb_two_port" "$gw_a_port" "$gw_b_port"
    target_url=(
        [direct-a]="http://127.0.0.1:$gw_a_port/v1/api/bench"
        [lb-a]="http://127.0.0.1:$lb_one_port/v1/api/bench"
        [lb-ab]="http://127.0.0.1:$lb_two_port/v1/api/bench"
        [gw-b]="http://127.0.0.1:$gw_b_port/v1/api/bench"
    )
    for t in "${targets[@]}" gw-b; do sanity_check "$t (cache $mode)" "${target_url[$t]}" "${auth[@]}"; done

    cpu_watch=("a=$gw_a_pid" "b=$gw_b_pid" "lb=$(pgrep -P "$lb_pid" | head -1 || echo 0)")
    if ((WARMUP > 0)); then
        log "cache $mode: warm-up ${WARMUP}s each"
        for t in "${targets[@]}"; do wrk_target "$t" warmup "$WARMUP"; done
    fi
    for i in $(seq "$RUNS"); do
        for t in "${targets[@]}"; do
            log "cache $mode: run $i/$RUNS: $t"
            wrk_target "$t" "$i" "$DURATION"
        done
    done
    stop_pid "$lb_pid"
    stop_pid "$gw_a_pid"
    stop_pid "$gw_b_pid"
    lb_pid="" gw_a_pid="" gw_b_pid=""
done
finished_at=$SECONDS

# --- report --------------------------------------------------------------------------------------
gateway_logs=("$tmp"/gateway-*.log)
log_problems=$(log_problem_lines "${gateway_logs[@]}" | grep -c . || true)
known_warnings=$(known_warning_count "${gateway_logs[@]}")
command_line="SESSIONS=\"${session_counts[*]}\" CACHE_MODES=\"${cache_modes[*]}\""
[[ -n ${SCRATCH_PATH:-} ]] && command_line+=" SCRATCH_PATH=$SCRATCH_PATH"
[[ -n ${BIN_DIR_GIVEN:-} ]] && command_line+=" BIN_DIR=$BIN_DIR"
command_line+=" LOOKUPS=$LOOKUPS MISSES=$MISSES DURATION=$DURATION RUNS=$RUNS bash bench/scale.sh"
report_rc=0
SCALE_TMP=$tmp SCALE_RUNS=$RUNS SCALE_CLK_TCK=$clk_tck SCALE_BIN_KIND=$bin_kind SCALE_DURATION=$DURATION \
SCALE_THREADS=$THREADS SCALE_CONNECTIONS=$CONNECTIONS SCALE_LOG_PROBLEMS=$log_problems SCALE_KNOWN_WARNINGS=$known_warnings \
SCALE_LOOKUP_CONCURRENCY=$LOOKUP_CONCURRENCY SCALE_POOL_SIZE=$POOL_SIZE SCALE_PG_SHARED_BUFFERS=$pg_shared_buffers \
SCALE_PG_VERSION=$pg_version SCALE_CACHE_MODES="${cache_modes[*]}" SCALE_CACHE_SECONDS=$CACHE_SECONDS \
SCALE_SECONDS_BUILD=$((build_done_at - started_at)) SCALE_SECONDS_LOOKUP=$((lookup_done_at - build_done_at)) \
SCALE_SECONDS_THROUGHPUT=$((finished_at - lookup_done_at)) SCALE_SECONDS_TOTAL=$((finished_at - started_at)) \
SCALE_COMMAND=$command_line \
    python3 "$script_dir/scale_report.py" || report_rc=$?
if ((log_problems > 0)); then
    log "gateway logs, warning/error lines (first 20):"
    log_problem_lines "${gateway_logs[@]}" | head -20 >&2
fi
exit "$report_rc"
