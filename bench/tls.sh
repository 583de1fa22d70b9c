#!/usr/bin/env bash
# Gatehouse terminating TLS itself (`tls:`) against nginx and Caddy terminating TLS in front of the same
# nginx backend: authenticated `GET /v1/api/bench` (Gatehouse) or `GET /bench` (the proxies) over
#   - HTTPS/1.1 keep-alive (wrk),
#   - HTTP/2 (h2load, from Debian's nghttp2-client: CONNECTIONS connections, STREAMS streams each),
#   - a new TLS connection per request (wrk with `Connection: close`): handshakes per second.
# One self-signed P-256 certificate (openssl) for all three; TLS 1.3. See bench/README.md, "TLS".
#
# Environment: as bench/run.sh (DURATION, RUNS, THREADS, CONNECTIONS, WARMUP, GATEHOUSE_BIN, KEEP_TMP), and
#   STREAMS=10        concurrent streams per HTTP/2 connection (h2load -m)
set -euo pipefail

LOG_TAG=bench-tls
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$script_dir/lib.sh" # wrk defaults, helpers; cds to the repository root
STOP_WAIT=5
STREAMS=${STREAMS:-10}
check_wrk_settings
require_counts STREAMS

install_load_tools
install_caddy
command -v h2load >/dev/null || apt_install nghttp2-client
command -v openssl >/dev/null || apt_install openssl
gatehouse_binary # sets BIN
bin_kind=$(binary_kind "$BIN")

nginx_pid="" caddy_pid="" proxy_pid="" gw_pid=""
cleanup_pids=(gw_pid caddy_pid proxy_pid nginx_pid)
cleanup_hook=""
make_tmp gatehouse-bench-tls

# --- certificate ---------------------------------------------------------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/key.pem" -out "$tmp/cert.pem" \
    -days 30 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>"$tmp/openssl.log" \
    || die "openssl could not make the certificate: $(cat "$tmp/openssl.log")"

# --- backend -------------------------------------------------------------------------------------
nginx_port=$(free_port)
start_probe_backend "$tmp/nginx" "$nginx_port" nginx_pid

# --- nginx and Caddy terminating TLS ---------------------------------------------------------------
proxy_port=$(free_port)
mkdir -p "$tmp/proxy"
{
    nginx_conf_head "$tmp/proxy" 4096 auto
    cat <<EOF
    upstream backend {
        server 127.0.0.1:$nginx_port;
        keepalive 64;
    }
    server {
        listen 127.0.0.1:$proxy_port ssl http2;
        ssl_certificate $tmp/cert.pem;
        ssl_certificate_key $tmp/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        location / {
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
EOF
} >"$tmp/proxy/nginx.conf"
start_nginx "$tmp/proxy" proxy_pid

caddy_port=$(free_port)
mkdir -p "$tmp/caddy"
cat >"$tmp/caddy/Caddyfile" <<EOF
{
	admin off
	auto_https off
}
https://127.0.0.1:$caddy_port {
	tls $tmp/cert.pem $tmp/key.pem
	reverse_proxy 127.0.0.1:$nginx_port
}
EOF
start_caddy "$tmp/caddy"

# --- Gatehouse with tls: (memory store, one capture provider whose probe is nginx's /probe) --------
gw_port=$(free_port)
mkdir -p "$tmp/gw/Providers"
capture_provider_file "$tmp/gw/Providers/bench.yaml"
cat >"$tmp/gw/gatehouse.yaml" <<EOF
listen: "127.0.0.1:$gw_port"
public_url: "https://127.0.0.1:$gw_port"
providers_dir: "$tmp/gw/Providers"
store: {kind: "memory"}
tls:
  certificate_file: "$tmp/cert.pem"
  private_key_file: "$tmp/key.pem"
backend:
  url: "$backend"
  audience: "bench"
logging:
  access_log: false          # as nginx (access_log off) and Caddy (no log directive) run here
EOF
"$BIN" check --config "$tmp/gw/gatehouse.yaml" >"$tmp/gw/check.out" 2>&1 || die "gatehouse check failed: $(cat "$tmp/gw/check.out")"
"$BIN" serve --config "$tmp/gw/gatehouse.yaml" >"$tmp/gateway.log" 2>&1 &
gw_pid=$!

curl_tls=(curl -s --cacert "$tmp/cert.pem")
wait_https() { # url pid name
    for _ in $(seq $((HTTP_WAIT * 10))); do
        require_alive "$2" "$3 exited during start-up (see $tmp)"
        [[ $("${curl_tls[@]}" -o /dev/null -w '%{http_code}' --max-time 1 "$1" || true) != 000 ]] && return 0
        sleep 0.1
    done
    die "$3 did not answer at $1"
}
wait_https "https://127.0.0.1:$proxy_port/bench" "$proxy_pid" "nginx TLS proxy"
wait_https "https://127.0.0.1:$caddy_port/bench" "$caddy_pid" "Caddy"
wait_https "https://127.0.0.1:$gw_port/healthz" "$gw_pid" "gateway"
status=$("${curl_tls[@]}" -o "$tmp/session.json" -w '%{http_code}' -H 'Content-Type: application/json' \
    -d '{"token": "bench"}' "https://127.0.0.1:$gw_port/v1/auth/bench/token") || true
[[ $status == 201 ]] || die "sign-in answered $status: $(head -c 1000 "$tmp/session.json")"
token=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["session_token"])' "$tmp/session.json")

declare -A url=(
    [nginx-tls]="https://127.0.0.1:$proxy_port/bench"
    [caddy-tls]="https://127.0.0.1:$caddy_port/bench"
    [gw-tls]="https://127.0.0.1:$gw_port/v1/api/bench"
)
declare -A label=(
    [nginx-tls]="nginx 1.22 TLS + reverse proxy -> backend"
    [caddy-tls]="Caddy $caddy_version TLS + reverse_proxy -> backend"
    [gw-tls]="Gatehouse ($bin_kind) tls: -> backend"
)
targets=(nginx-tls caddy-tls gw-tls)
for t in "${targets[@]}"; do
    for version in --http1.1 --http2; do
        sanity_check "$t $version" "${url[$t]}" --cacert "$tmp/cert.pem" "$version" -H "Authorization: Bearer $token"
    done
done
# CPU per request of each front (utime+stime over the runs / requests): on a shared machine it varies less than
# req/s, and it is what the hop costs. nginx: its workers together.
mapfile -t proxy_workers < <(nginx_workers "$proxy_pid")
((${#proxy_workers[@]} > 0)) || die "no nginx worker processes found"
declare -A front_pids=([nginx-tls]="${proxy_workers[*]}" [caddy-tls]=$caddy_pid [gw-tls]=$gw_pid)
front_ticks() { # target: the CPU ticks of its processes so far
    local pid sum=0
    for pid in ${front_pids[$1]}; do sum=$((sum + $(cpu_ticks "$pid"))); done
    echo "$sum"
}
ticks_per_second=$(getconf CLK_TCK)

# Like with like: the version, cipher suite and session resumption each server gives the clients (wrk's
# OpenSSL resumes a TLS 1.3 session from the server's ticket on every new connection of the handshake runs).
tls_facts() { # port: "TLSv1.3 TLS_AES_128_GCM_SHA256, tickets: 1, resumed: yes"
    local request=$'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' first second
    first=$( { printf '%s' "$request"; sleep 0.5; } | timeout 10 openssl s_client -connect "127.0.0.1:$1" -servername localhost \
        -alpn http/1.1 -sess_out "$tmp/session.$1" 2>&1 || true)
    second=$( { printf '%s' "$request"; sleep 0.5; } | timeout 10 openssl s_client -connect "127.0.0.1:$1" -servername localhost \
        -alpn http/1.1 -sess_in "$tmp/session.$1" 2>&1 || true)
    printf '%s, tickets: %s, resumed: %s' "$(sed -n 's/^New, \(TLSv[0-9.]*\), Cipher is \(.*\)/\1 \2/p' <<<"$first" | head -1)" \
        "$(grep -c 'TLS session ticket:' <<<"$first")" "$(grep -q '^Reused,' <<<"$second" && echo yes || echo no)"
}
declare -A facts=(
    [nginx-tls]=$(tls_facts "$proxy_port")
    [caddy-tls]=$(tls_facts "$caddy_port")
    [gw-tls]=$(tls_facts "$gw_port")
)
for t in "${targets[@]}"; do log "$t: ${facts[$t]}"; done

# The CPU of the clients the script has run and waited for so far (wrk, h2load), in microseconds: the handshake
# rows' client does a TLS handshake per request on the same two cores, which bounds every server's rate.
# Sets client_cpu (`times` must run in this shell, not in a command substitution's).
read_client_cpu() {
    times >"$tmp/times.txt"
    client_cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); sum += t[1] * 60 + t[2] } } END { printf "%.0f", sum * 1e6 }' "$tmp/times.txt")
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/.*[ ]$1=\([^ ]*\).*/\1/p" "$2"; }

# h2load: requests/s and the mean request time (it reports no percentiles).
run_h2load() { # out url
    timeout --kill-after=5 $((DURATION + 30)) h2load -D "$DURATION" -c "$CONNECTIONS" -m "$STREAMS" -t "$THREADS" \
        -H "Authorization: Bearer $token" "$2" >"$1" 2>&1 || die "h2load failed: $(tail -5 "$1")"
    grep -q ' 0 failed, 0 errored' "$1" || die "h2load saw failures: $(grep -E 'requests:|status codes:' "$1")"
    awk '/^finished in/ { gsub(/,/, ""); rps = $4 } /^requests:/ { done = $8 } /^time for request:/ { mean = $5 } END { printf "h2load rps=%s mean=%s requests=%s\n", rps, mean, done }' "$1" >>"$1"
}

declare -A result
for t in "${targets[@]}"; do
    ((WARMUP > 0)) && run_wrk "$t warm-up" "$tmp/$t.warmup" "$WARMUP" "${url[$t]}" -H "Authorization: Bearer $token" >/dev/null
    for mode in keepalive h2 handshake; do
        values=() ticks=0 requests=0
        read_client_cpu
        client_before=$client_cpu
        for run in $(seq "$RUNS"); do
            out=$tmp/$t.$mode.$run
            before=$(front_ticks "$t")
            case $mode in
            keepalive) run_wrk "$t" "$out" "$DURATION" "${url[$t]}" -H "Authorization: Bearer $token" ;;
            handshake) run_wrk "$t" "$out" "$DURATION" "${url[$t]}" -H "Authorization: Bearer $token" -H "Connection: close" ;;
            h2) run_h2load "$out" "${url[$t]}" ;;
            esac
            ticks=$((ticks + $(front_ticks "$t") - before))
            requests=$((requests + $(field requests "$out")))
            values+=("$(field rps "$out") $(field p99_ms "$out")$(field mean "$out")")
        done
        result[$t.$mode.cpu]=$(awk -v t="$ticks" -v n="$requests" -v hz="$ticks_per_second" 'BEGIN { printf "%.0f", (n > 0 ? t / hz * 1e6 / n : 0) }')
        read_client_cpu
        result[$t.$mode.client]=$(awk -v c="$((client_cpu - client_before))" -v n="$requests" 'BEGIN { printf "%.0f", (n > 0 ? c / n : 0) }')
        result[$t.$mode.rps]=$(printf '%s\n' "${values[@]}" | awk '{print $1}' | median)
        result[$t.$mode.lat]=$(printf '%s\n' "${values[@]}" | awk '{print $2}' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
        log "$t $mode: ${result[$t.$mode.rps]} req/s (median of $RUNS)"
    done
done

printf '\nTLS benchmark: %s s x %s runs, %s threads, %s connections (h2: %s streams each), binary %s\n\n' \
    "$DURATION" "$RUNS" "$THREADS" "$CONNECTIONS" "$STREAMS" "$bin_kind"
printf '| target | HTTPS/1.1 keep-alive req/s | p99 ms | CPU/request | HTTP/2 req/s | mean ms | CPU/request | handshakes/s (new connection per request) | CPU/handshake | client CPU/handshake |\n|---|---|---|---|---|---|---|---|---|---|\n'
for t in "${targets[@]}"; do
    printf '| %s | %s | %s | %s us | %s | %s | %s us | %s | %s us | %s us |\n' "${label[$t]}" "${result[$t.keepalive.rps]}" "${result[$t.keepalive.lat]}" \
        "${result[$t.keepalive.cpu]}" "${result[$t.h2.rps]}" "${result[$t.h2.lat]}" "${result[$t.h2.cpu]}" "${result[$t.handshake.rps]}" \
        "${result[$t.handshake.cpu]}" "${result[$t.handshake.client]}"
done
printf '\nTLS as each server gives it to openssl s_client (wrk resumes the same way):\n'
for t in "${targets[@]}"; do printf -- '- %s: %s\n' "${label[$t]}" "${facts[$t]}"; done
awk -v g="${result[gw-tls.keepalive.rps]}" -v c="${result[caddy-tls.keepalive.rps]}" -v gh="${result[gw-tls.handshake.rps]}" \
    -v ch="${result[caddy-tls.handshake.rps]}" -v g2="${result[gw-tls.h2.rps]}" -v c2="${result[caddy-tls.h2.rps]}" \
    'BEGIN { printf "\nGatehouse / Caddy: keep-alive %.2fx, HTTP/2 %.2fx, handshakes %.2fx\n", g / c, g2 / c2, gh / ch }'
awk -v g="${result[gw-tls.keepalive.rps]}" -v g2="${result[gw-tls.h2.rps]}" -v n="${result[nginx-tls.keepalive.rps]}" \
    -v n2="${result[nginx-tls.h2.rps]}" -v c="${result[caddy-tls.keepalive.rps]}" -v c2="${result[caddy-tls.h2.rps]}" \
    'BEGIN { printf "HTTP/2 / own HTTPS/1.1: Gatehouse %.2fx, Caddy %.2fx, nginx %.2fx\n", g2 / g, c2 / c, n2 / n }'
awk -v g="${result[gw-tls.handshake.cpu]}" -v c="${result[caddy-tls.handshake.cpu]}" -v n="${result[nginx-tls.handshake.cpu]}" \
    -v w="${result[gw-tls.handshake.client]}" \
    'BEGIN { printf "CPU per handshake: Gatehouse %s us, Caddy %s us (%.2fx), nginx %s us; the client, on the same cores: %s us\n", g, c, g / c, n, w }'
problems=$(log_problem_lines "$tmp/gateway.log")
[[ -z $problems ]] || { log "gateway log problems:"; echo "$problems" >&2; }
