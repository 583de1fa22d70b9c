# shellcheck shell=bash
# Helpers shared by bench/run.sh and bench/scale.sh; sourced, never run. See bench/README.md.
#
# Set LOG_TAG (the prefix of log lines) before sourcing. Sourcing sets the wrk settings' defaults (DURATION,
# RUNS, THREADS, CONNECTIONS, WARMUP, KEEP_TMP) and cds to the repository root. Globals the helpers use:
#   tmp               the temp dir (make_tmp)
#   wrk_pid           the running wrk, stopped first by cleanup
#   cleanup_pids      names of the variables holding the pids cleanup stops, in order, after wrk
#   cleanup_hook      a function cleanup calls after stopping them (optional)
#   STOP_WAIT         seconds stop_pid waits after TERM before KILL (default 10)
#   HTTP_WAIT         seconds wait_http waits for an answer (default 30)
#   KEEP_TMP          1: keep the temp dir after a success too
#   NGINX             the nginx binary (install_load_tools)
#   CADDY             the caddy binary (install_caddy)
#   APACHE            the apache2 binary, APACHE_MODULES its module directory (install_apache_oidc)
#   PYTHON_CRYPTO     a python3 with the cryptography package (python_with_cryptography)
#   cpu_watch         "label=pid" words: run_wrk records each pid's CPU ticks over the run
#   body              the backend's 64-byte JSON body (start_backend)

LOG_TAG=${LOG_TAG:-bench}
# The load settings both scripts take from the environment (see their headers).
DURATION=${DURATION:-8}
RUNS=${RUNS:-3}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
WARMUP=${WARMUP:-2}
KEEP_TMP=${KEEP_TMP:-0}
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"

STOP_WAIT=10
HTTP_WAIT=30
wrk_pid=""
cleanup_pids=()
cleanup_hook=""
cpu_watch=()

log() { printf '[%s] %s\n' "$LOG_TAG" "$*" >&2; }
die() { printf '[%s] ERROR: %s\n' "$LOG_TAG" "$*" >&2; exit 1; }

require_counts() { # variable names: each must hold a non-negative integer
    local v
    for v in "$@"; do
        [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer (got '${!v}')"
    done
}
check_wrk_settings() { # DURATION RUNS THREADS CONNECTIONS WARMUP
    require_counts DURATION RUNS THREADS CONNECTIONS WARMUP
    ((DURATION > 0 && RUNS > 0 && THREADS > 0 && CONNECTIONS >= THREADS)) \
        || die "DURATION, RUNS, THREADS must be > 0 and CONNECTIONS >= THREADS"
}

# --- tools ---------------------------------------------------------------------------------------
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else die "need root to run: $*"; fi; }
apt_updated=0
apt_install() { # packages: apt-get install (apt-get update first only when the first package has no candidate)
    command -v apt-get >/dev/null || die "missing $* and no apt-get; install it yourself"
    if [[ $apt_updated -eq 0 ]] && ! apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
        as_root apt-get update -qq
        apt_updated=1
    fi
    log "installing $*"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
install_load_tools() { # wrk, curl, python3 and nginx, installed if missing; sets NGINX
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
}
install_caddy() { # caddy (the Debian package), installed if missing; sets CADDY
    CADDY=$(command -v caddy || true)
    if [[ -z $CADDY ]]; then
        apt_install caddy
        CADDY=$(command -v caddy || echo /usr/bin/caddy)
    fi
    [[ -x $CADDY ]] || die "caddy not found"
}
install_apache_oidc() { # Apache httpd and mod_auth_openidc (Debian packages), installed if missing; sets APACHE, APACHE_MODULES
    APACHE=$(command -v apache2 || true)
    [[ -z $APACHE && -x /usr/sbin/apache2 ]] && APACHE=/usr/sbin/apache2
    APACHE_MODULES=/usr/lib/apache2/modules # Debian's module directory
    if [[ -z $APACHE || ! -f $APACHE_MODULES/mod_auth_openidc.so ]]; then
        apt_install apache2 libapache2-mod-auth-openidc
        APACHE=$(command -v apache2 || echo /usr/sbin/apache2)
    fi
    [[ -x $APACHE ]] || die "apache2 not found"
    [[ -f $APACHE_MODULES/mod_auth_openidc.so && -f $APACHE_MODULES/mod_mpm_event.so ]] \
        || die "no mod_auth_openidc.so / mod_mpm_event.so in $APACHE_MODULES"
}
python_with_cryptography() { # sets PYTHON_CRYPTO: a python3 that imports `cryptography` (python3-cryptography if none)
    local p
    for p in python3 /usr/bin/python3; do
        if command -v "$p" >/dev/null && "$p" -c 'import cryptography.x509' 2>/dev/null; then
            PYTHON_CRYPTO=$(command -v "$p")
            return 0
        fi
    done
    apt_install python3-cryptography
    /usr/bin/python3 -c 'import cryptography.x509' 2>/dev/null || die "no python3 with the cryptography package"
    PYTHON_CRYPTO=/usr/bin/python3
}
gatehouse_binary() { # sets BIN: $GATEHOUSE_BIN (absolute), or the shipped release build made here
    if [[ -n ${GATEHOUSE_BIN:-} ]]; then
        [[ -x $GATEHOUSE_BIN ]] || die "GATEHOUSE_BIN=$GATEHOUSE_BIN is not an executable"
        BIN=$(cd "$(dirname "$GATEHOUSE_BIN")" && pwd)/$(basename "$GATEHOUSE_BIN")
    else
        # The binary as shipped (static Swift runtime, lld, packed relocations), gatehouse-bench beside it.
        log "building release (scripts/build-release.sh --with-bench .build/bench-dist; the first build takes minutes)"
        bash scripts/build-release.sh --with-bench .build/bench-dist >&2 || die "release build failed"
        BIN="$PWD/.build/bench-dist/gatehouse"
        [[ -x $BIN ]] || die "no binary at $BIN after the build"
    fi
}
bench_binary() { # sets BENCH_BIN: gatehouse-bench next to $BIN, else a release build made here
    BENCH_BIN=$(dirname "$BIN")/gatehouse-bench
    if [[ ! -x $BENCH_BIN ]]; then
        log "building release (swift build -c release --product gatehouse-bench)"
        swift build -c release --product gatehouse-bench >&2 || die "release build of gatehouse-bench failed"
        BENCH_BIN="$(swift build -c release --show-bin-path)/gatehouse-bench"
        [[ -x $BENCH_BIN ]] || die "no gatehouse-bench at $BENCH_BIN after the build"
    fi
}

binary_kind() { # path of a binary: release, debug or unknown, from the build directory in its path
    case $1 in
    */release/*|*dist*/*) echo release ;; # .build/release, build-release.sh output dirs
    */debug/*) echo debug ;;
    *) echo unknown ;;
    esac
}

# --- temp dir, processes, cleanup ------------------------------------------------------------------
make_tmp() { # name: creates $tmp and installs the cleanup traps
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}
stop_pid() { # pid: TERM, wait up to STOP_WAIT s, then KILL
    local pid=$1
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq $((STOP_WAIT * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
cleanup() {
    local rc=$? v
    trap - EXIT INT TERM
    stop_pid "$wrk_pid"
    for v in "${cleanup_pids[@]}"; do stop_pid "${!v:-}"; done
    [[ -n $cleanup_hook ]] && "$cleanup_hook"
    # Kept on a failure (not on Ctrl-C / TERM) for the logs, or when asked.
    if [[ $KEEP_TMP == 1 || ($rc -ne 0 && $rc -ne 130 && $rc -ne 143) ]]; then
        log "kept $tmp (logs, configs, raw wrk output)"
    else
        rm -rf "$tmp"
    fi
    exit "$rc"
}
require_alive() { # pid message: dies with the message when the process is gone
    kill -0 "$1" 2>/dev/null || die "$2"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
wait_http() { # url pid name [status]: wait up to HTTP_WAIT s for an HTTP answer (with that status, if given)
    local url=$1 pid=$2 name=$3 want=${4:-} secs=$HTTP_WAIT
    local code
    for _ in $(seq $((secs * 10))); do
        require_alive "$pid" "$name exited during start-up (see $tmp)"
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$url" || true)
        if [[ $code != 000 && (-z $want || $code == "$want") ]]; then return 0; fi
        sleep 0.1
    done
    die "$name did not answer at $url within $secs s"
}
wait_log() { # file text pid name [seconds]: wait (30 s) until the file has a line containing text
    local file=$1 text=$2 pid=$3 name=$4 secs=${5:-30}
    for _ in $(seq $((secs * 10))); do
        grep -qF "$text" "$file" 2>/dev/null && return 0
        require_alive "$pid" "$name exited while waiting for '$text' (log: $file)"
        sleep 0.1
    done
    die "$name did not log '$text' within $secs s (log: $file)"
}

# --- nginx -------------------------------------------------------------------------------------------
nginx_conf_head() { # dir worker_connections [worker_processes]: an nginx.conf up to inside `http {`, every file under dir
    cat <<EOF
daemon off;
worker_processes ${3:-1};
pid $1/nginx.pid;
error_log $1/error.log warn;
events { worker_connections $2; }
http {
    access_log off;
    client_body_temp_path $1/client_body;
    proxy_temp_path $1/proxy;
    fastcgi_temp_path $1/fastcgi;
    uwsgi_temp_path $1/uwsgi;
    scgi_temp_path $1/scgi;
    keepalive_requests 1000000;
EOF
}
start_nginx() { # dir pid_variable: runs nginx on dir/nginx.conf in the background
    "$NGINX" -p "$1" -c "$1/nginx.conf" -e "$1/error.log" >"$1/stdout.log" 2>&1 &
    printf -v "$2" '%s' "$!"
}
start_backend() { # dir port pid_variable [locations]: the upstream nginx answering every path with $body (set here)
    # locations: more nginx `location` blocks for its server (e.g. a probe answering other JSON)
    local dir=$1 port=$2 locations=${4:-}
    # A 64-byte JSON body: the usual upstream of a proxy benchmark.
    body=$(python3 -c '
base = "{\"message\":\"hello from the benchmark upstream\",\"pad\":\"\"}"
b = base[:-2] + "x" * (64 - len(base)) + base[-2:]
assert len(b) == 64, len(b)
print(b, end="")')
    mkdir -p "$dir"
    {
        nginx_conf_head "$dir" 1024
        cat <<EOF
    server {
        listen 127.0.0.1:$port;
        location / {
            default_type application/json;
            return 200 '$body';
        }
$locations
    }
}
EOF
    } >"$dir/nginx.conf"
    start_nginx "$dir" "$3"
    wait_http "http://127.0.0.1:$port/bench" "${!3}" "nginx backend"
    [[ $(curl -s "http://127.0.0.1:$port/bench") == "$body" ]] || die "nginx does not return the expected body"
}

start_probe_backend() { # dir port pid_variable: start_backend, and /probe answers {"id": "u1"} (the capture
    # provider's probe: it validates a captured token and names the user); sets backend (its URL)
    start_backend "$1" "$2" "$3" '        location = /probe {
            default_type application/json;
            return 200 '"'"'{"id": "u1"}'"'"';
        }'
    backend="http://127.0.0.1:$2"
}

capture_provider_file() { # path: the capture provider `bench` whose probe is $backend/probe (start_probe_backend)
    cat >"$1" <<EOF
id: "bench"
kind: "capture"
name: "Benchmark capture provider"
login_url: "$backend/login"
allowed_origins: ["$backend"]
success_url: "$backend/welcome*"
probe: {url: "$backend/probe"}
claims: {subject: "id"}
EOF
}

start_caddy() { # dir: runs caddy on dir/Caddyfile in the background (its state under dir); sets caddy_pid, caddy_version
    XDG_DATA_HOME=$1/data XDG_CONFIG_HOME=$1/config HOME=$1 \
        "$CADDY" run --config "$1/Caddyfile" --adapter caddyfile >"$1/caddy.log" 2>&1 &
    caddy_pid=$!
    caddy_version=$("$CADDY" version | awk '{print $1}')
}

nginx_workers() { # nginx master pid: the pids of its worker processes, one a line
    pgrep -P "$1" || true
}
rss_kib() { # pids: their summed resident set size in KiB (ps), 0 for none
    local pids=("$@") total=0 v
    ((${#pids[@]} > 0)) || { echo 0; return; }
    for v in $(ps -o rss= -p "$(IFS=,; echo "${pids[*]}")" 2>/dev/null); do total=$((total + v)); done
    echo "$total"
}

# --- load ----------------------------------------------------------------------------------------
sanity_check() { # name url [curl args…]: the url must answer 200 with $body
    local name=$1 url=$2
    shift 2
    local status
    status=$(curl -s -o "$tmp/sanity.body" -w '%{http_code}' "$@" "$url") || true
    if [[ $status != 200 || $(cat "$tmp/sanity.body") != "$body" ]]; then
        printf '[%s] sanity check failed for %s: status %s, body:\n' "$LOG_TAG" "$name" "$status" >&2
        head -c 2000 "$tmp/sanity.body" >&2; echo >&2
        die "GET $url must return 200 and nginx's body"
    fi
}
clk_tck=$(getconf CLK_TCK)
cpu_ticks() { # pid: utime + stime, in clock ticks
    awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
WRK_SCRIPT_ARGS=() # arguments for a wrk script's init(), which wrk takes after the URL
run_wrk() { # what out seconds url [wrk args…]: one bounded wrk run into out, then its summary lines
    local what=$1 out=$2 secs=$3 url=$4
    shift 4
    local w before=() line="cpu"
    for w in "${cpu_watch[@]}"; do before+=("$(cpu_ticks "${w#*=}")"); done
    # In the background, so that a signal to the script is handled at once (cleanup stops wrk too).
    timeout --kill-after=5 $((secs + 30)) \
        wrk -t"$THREADS" -c"$CONNECTIONS" -d"${secs}s" --latency "$@" "$url" "${WRK_SCRIPT_ARGS[@]}" >"$out" 2>&1 &
    wrk_pid=$!
    wait "$wrk_pid" || die "wrk failed for $what: $(cat "$out")"
    wrk_pid=""
    local i=0
    for w in "${cpu_watch[@]}"; do
        line+=" ${w%%=*}=$(($(cpu_ticks "${w#*=}") - before[i]))"
        i=$((i + 1))
    done
    wrk_summary "$out" >>"$out" || die "cannot read wrk's output for $what: $(cat "$out")"
    echo "$line" >>"$out"
}
# wrk --latency output -> "wrk rps=… p50_ms=… p99_ms=… requests=… non2xx=… sockerr=…", which the reports read.
wrk_summary() { # file
    awk '
        function ms(v,   u) {
            u = v; sub(/^[0-9.]+/, "", u)
            if (!(u in unit)) { print "unparsable latency " v > "/dev/stderr"; bad = 1; exit 1 }
            return (v + 0) * unit[u]
        }
        BEGIN { unit["us"] = 0.001; unit["ms"] = 1; unit["s"] = 1000; unit["m"] = 60000; unit["h"] = 3600000 }
        /Requests\/sec:/ { rps = $2 }
        /^ +50% / { p50 = ms($2) }
        /^ +99% / { p99 = ms($2) }
        / requests in / { requests = $1 }
        /Non-2xx or 3xx responses:/ { non2xx = $NF }
        /Socket errors:/ { gsub(/,/, ""); sockerr = $4 + $6 + $8 + $10 }
        END {
            if (bad || rps == "" || p50 == "" || p99 == "" || requests == "") exit 1
            printf "wrk rps=%s p50_ms=%.6g p99_ms=%.6g requests=%d non2xx=%d sockerr=%d\n", rps, p50, p99, requests, non2xx, sockerr
        }' "$1"
}

# --- gateway logs --------------------------------------------------------------------------------
# PostgresNIO's "lease before run()" warning is a start-up race in `gatehouse serve`; it is harmless and
# reported separately, every other warning/error line is a problem.
known_warning='Trying to lease connection from `PostgresClient`, but `PostgresClient.run()` hasn'"'"'t been called yet'
log_problem_lines() { # log files: their warning/error/critical lines, the known harmless one left out
    cat "$@" | grep -iE '\b(warning|error|critical)\b' | grep -vF "$known_warning" || true
}
known_warning_count() { # log files
    cat "$@" | grep -cF "$known_warning" || true
}
