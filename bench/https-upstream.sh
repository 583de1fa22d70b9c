#!/usr/bin/env bash
# Gatehouse's event-loop relay towards an `https` backend against the same relay towards a plain `http` one, and
# Caddy with TLS to the same `https` backend: authenticated `GET /v1/api/…` (Gatehouse) or `GET /bench` (Caddy),
# HTTP/1.1 keep-alive from wrk to each front, which keeps its own connections to the backend alive.
# The backend: two nginx processes answering the same 64-byte body, one plain, one over TLS 1.3 with a
# self-signed P-256 certificate (openssl) that Gatehouse (`tls.ca_file`) and Caddy (`tls_trusted_ca_certs`) trust.
# See bench/README.md, "An https backend".
#
# Environment: as bench/run.sh (DURATION, RUNS, THREADS, CONNECTIONS, WARMUP, GATEHOUSE_BIN, KEEP_TMP).
set -euo pipefail

LOG_TAG=bench-https-upstream
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$script_dir/lib.sh" # wrk defaults, helpers; cds to the repository root
STOP_WAIT=5
check_wrk_settings

install_load_tools
install_caddy
command -v openssl >/dev/null || apt_install openssl
gatehouse_binary # sets BIN
bin_kind=$(binary_kind "$BIN")

nginx_pid="" tls_pid="" caddy_pid="" gw_pid=""
cleanup_pids=(gw_pid caddy_pid tls_pid nginx_pid)
cleanup_hook=""
make_tmp gatehouse-bench-https-upstream

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/key.pem" -out "$tmp/cert.pem" \
    -days 30 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>"$tmp/openssl.log" \
    || die "openssl could not make the certificate: $(cat "$tmp/openssl.log")"

# --- the backend, plain and over TLS -------------------------------------------------------------------
nginx_port=$(free_port)
start_probe_backend "$tmp/nginx" "$nginx_port" nginx_pid
tls_port=$(free_port)
mkdir -p "$tmp/tls"
{
    nginx_conf_head "$tmp/tls" 1024
    cat <<EOF
    server {
        listen 127.0.0.1:$tls_port ssl;
        ssl_certificate $tmp/cert.pem;
        ssl_certificate_key $tmp/key.pem;
        ssl_protocols TLSv1.3;
        location / {
            default_type application/json;
            return 200 '$body';
        }
    }
}
EOF
} >"$tmp/tls/nginx.conf"
start_nginx "$tmp/tls" tls_pid
secure_backend="https://127.0.0.1:$tls_port"

# --- Caddy with TLS to the backend ------------------------------------------------------------------------
caddy_port=$(free_port)
mkdir -p "$tmp/caddy"
cat >"$tmp/caddy/Caddyfile" <<EOF
{
	admin off
	auto_https off
}
http://127.0.0.1:$caddy_port {
	reverse_proxy $secure_backend {
		transport http {
			tls_trusted_ca_certs $tmp/cert.pem
		}
	}
}
EOF
start_caddy "$tmp/caddy"

# --- Gatehouse: backend plain, upstream `secure` over TLS (memory store, one capture provider) -------------
gw_port=$(free_port)
mkdir -p "$tmp/gw/Providers"
capture_provider_file "$tmp/gw/Providers/bench.yaml"
cat >"$tmp/gw/gatehouse.yaml" <<EOF
listen: "127.0.0.1:$gw_port"
public_url: "http://127.0.0.1:$gw_port"
providers_dir: "$tmp/gw/Providers"
store: {kind: "memory"}
backend:
  url: "$backend"
  audience: "bench"
upstreams:
  - {name: "secure", prefix: "/secure", url: "$secure_backend", audience: "bench", tls: {ca_file: "$tmp/cert.pem"}}
logging:
  access_log: false          # as Caddy (no log directive) runs here
EOF
"$BIN" check --config "$tmp/gw/gatehouse.yaml" >"$tmp/gw/check.out" 2>&1 || die "gatehouse check failed: $(cat "$tmp/gw/check.out")"
"$BIN" serve --config "$tmp/gw/gatehouse.yaml" >"$tmp/gateway.log" 2>&1 &
gw_pid=$!
wait_http "http://127.0.0.1:$caddy_port/bench" "$caddy_pid" "Caddy"
wait_http "http://127.0.0.1:$gw_port/healthz" "$gw_pid" "gateway"
status=$(curl -s -o "$tmp/session.json" -w '%{http_code}' -H 'Content-Type: application/json' \
    -d '{"token": "bench"}' "http://127.0.0.1:$gw_port/v1/auth/bench/token") || true
[[ $status == 201 ]] || die "sign-in answered $status: $(head -c 1000 "$tmp/session.json")"
token=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["session_token"])' "$tmp/session.json")

declare -A url=(
    [caddy-https]="http://127.0.0.1:$caddy_port/bench"
    [gw-http]="http://127.0.0.1:$gw_port/v1/api/bench"
    [gw-https]="http://127.0.0.1:$gw_port/v1/api/secure/bench"
)
declare -A label=(
    [caddy-https]="Caddy $caddy_version reverse_proxy -> https backend"
    [gw-http]="Gatehouse ($bin_kind) relay -> http backend"
    [gw-https]="Gatehouse ($bin_kind) relay -> https backend"
)
targets=(caddy-https gw-http gw-https)
for t in "${targets[@]}"; do sanity_check "$t" "${url[$t]}" -H "Authorization: Bearer $token"; done
relayed() { curl -s "http://127.0.0.1:$gw_port/metrics" | awk '/^gatehouse_relayed_requests_total/ { print $2 }'; }
relayed_before=$(relayed)

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/.*[ ]$1=\([^ ]*\).*/\1/p" "$2"; }
declare -A result
for t in "${targets[@]}"; do
    if [[ $t == gw-* ]]; then cpu_watch=("gw=$gw_pid"); else cpu_watch=("caddy=$caddy_pid"); fi
    ((WARMUP > 0)) && run_wrk "$t warm-up" "$tmp/$t.warmup" "$WARMUP" "${url[$t]}" -H "Authorization: Bearer $token" >/dev/null
    values=()
    for run in $(seq "$RUNS"); do
        out=$tmp/$t.$run
        run_wrk "$t" "$out" "$DURATION" "${url[$t]}" -H "Authorization: Bearer $token"
        [[ $(field non2xx "$out") == 0 && $(field sockerr "$out") == 0 ]] || die "$t: errors in $(cat "$out")"
        ticks=$(sed -n 's/^cpu .*=\([0-9]*\)$/\1/p' "$out")
        values+=("$(field rps "$out") $(field p99_ms "$out") $(awk -v t="$ticks" -v n="$(field requests "$out")" -v hz="$clk_tck" \
            'BEGIN { printf "%.0f", t / hz / n * 1e6 }')")
    done
    result[$t.rps]=$(printf '%s\n' "${values[@]}" | awk '{print $1}' | median)
    result[$t.p99]=$(printf '%s\n' "${values[@]}" | awk '{print $2}' | median)
    result[$t.cpu]=$(printf '%s\n' "${values[@]}" | awk '{print $3}' | median)
    log "$t: ${result[$t.rps]} req/s (median of $RUNS)"
done
# Every call to the gateway was the relay's (its counter).
relayed_after=$(relayed)
log "relayed requests during the runs: $(awk -v a="$relayed_after" -v b="$relayed_before" 'BEGIN { printf "%.0f", a - b }')"

printf '\nAn https backend: %s s x %s runs, %s threads, %s connections, binary %s\n\n' "$DURATION" "$RUNS" "$THREADS" "$CONNECTIONS" "$bin_kind"
printf '| target | req/s | p99 ms | CPU/request (front) |\n|---|--:|--:|--:|\n'
for t in "${targets[@]}"; do
    printf '| %s | %s | %s | %s us |\n' "${label[$t]}" "${result[$t.rps]}" "${result[$t.p99]}" "${result[$t.cpu]}"
done
awk -v s="${result[gw-https.rps]}" -v p="${result[gw-http.rps]}" -v c="${result[caddy-https.rps]}" \
    'BEGIN { printf "\nGatehouse https / http backend: %.2fx; Gatehouse / Caddy, both to the https backend: %.2fx\n", s / p, s / c }'
problems=$(log_problem_lines "$tmp/gateway.log")
[[ -z $problems ]] || { log "gateway log problems:"; echo "$problems" >&2; }
