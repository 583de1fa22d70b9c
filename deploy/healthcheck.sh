#!/usr/bin/env bash
# Container health check: GET PATH on the gateway and succeed on "200", over plain HTTP or, when the
# gateway terminates TLS itself (`tls:`), over HTTPS. Plain HTTP uses bash's /dev/tcp and HTTPS
# `openssl s_client` (openssl comes with ca-certificates), so the runtime image needs no curl/wget
# (fewer packages, fewer CVEs to patch).
#   gatehouse-healthcheck [[http://|https://]HOST:PORT] [PATH]    (defaults: 127.0.0.1:8080 /healthz)
# Environment:
#   GATEHOUSE_HEALTH_ADDRESS, GATEHOUSE_HEALTH_PATH  override the defaults
#   GATEHOUSE_HEALTH_SCHEME      http or https when the address has no scheme; unset: https if the
#                                configuration has a `tls:` block, else http
#   GATEHOUSE_HEALTH_CONFIG      that configuration (default /etc/gatehouse/gatehouse.yaml)
#   GATEHOUSE_HEALTH_SERVER_NAME the TLS server name (SNI) sent; default: public_url's host
# Towards loopback the certificate is not verified (it names the public host, not 127.0.0.1: the probe
# checks that the gateway answers, not who it is); towards any other host it must verify for that host.
set -euo pipefail
address="${1:-${GATEHOUSE_HEALTH_ADDRESS:-127.0.0.1:8080}}"
path="${2:-${GATEHOUSE_HEALTH_PATH:-/healthz}}"
config="${GATEHOUSE_HEALTH_CONFIG:-/etc/gatehouse/gatehouse.yaml}"
scheme="${GATEHOUSE_HEALTH_SCHEME:-}"
case "$address" in
    http://*) scheme=http address="${address#http://}" ;;
    https://*) scheme=https address="${address#https://}" ;;
esac
address="${address%%/*}"
host="${address%:*}"
port="${address##*:}"
# A top-level key of the configuration, unquoted: `tls:` (a mapping) or `public_url: "…"`.
config_value() { [[ -r $config ]] && sed -n "s/^$1:[[:space:]]*[\"']\{0,1\}\([^\"'#[:space:]]*\).*/\1/p" "$config" | head -1; }
if [[ -z $scheme ]]; then
    if [[ -r $config ]] && grep -q '^tls:' "$config"; then scheme=https; else scheme=http; fi
fi
printf -v request 'GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$path" "$address"

case "$scheme" in
    http)
        exec 3<>"/dev/tcp/$host/$port"
        printf '%s' "$request" >&3
        IFS= read -r -t 5 status <&3 || true
        exec 3<&-
        ;;
    https)
        server_name="${GATEHOUSE_HEALTH_SERVER_NAME:-}"
        if [[ -z $server_name ]]; then
            public_url=$(config_value public_url || true)
            server_name="${public_url#https://}"
            server_name="${server_name%%[:/]*}"
        fi
        [[ -n $server_name ]] || server_name=$host
        verify=()
        case "$host" in
            127.* | localhost | ::1 | "[::1]") ;;
            *) verify=(-verify_return_error -verify_hostname "$host" -CApath /etc/ssl/certs) ;;
        esac
        # -quiet: only the answer on stdout, and s_client waits for the server to close (Connection: close).
        status=$(printf '%s' "$request" | timeout 5 openssl s_client -quiet -connect "$host:$port" \
            -servername "$server_name" -alpn http/1.1 "${verify[@]}" 2>/dev/null | head -1) || true
        ;;
    *) echo "unhealthy: unknown scheme '$scheme' (http or https)" >&2; exit 1 ;;
esac
case "${status:-}" in
    "HTTP/1."[01]" 200 "*) exit 0 ;;
    *) echo "unhealthy: GET $scheme://$address$path -> ${status:-no answer}" | tr -d '\r' >&2; exit 1 ;;
esac
