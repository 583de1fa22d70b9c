#!/usr/bin/env bash
# Container health check: GET http://HOST:PORT/PATH and succeed on "200". Uses bash's /dev/tcp,
# so the runtime image needs no curl/wget (fewer packages, fewer CVEs to patch).
#   gatehouse-healthcheck [HOST:PORT] [PATH]      (defaults: 127.0.0.1:8080 /healthz)
# Environment: GATEHOUSE_HEALTH_ADDRESS, GATEHOUSE_HEALTH_PATH override the defaults.
set -euo pipefail
address="${1:-${GATEHOUSE_HEALTH_ADDRESS:-127.0.0.1:8080}}"
path="${2:-${GATEHOUSE_HEALTH_PATH:-/healthz}}"
host="${address%:*}"
port="${address##*:}"
exec 3<>"/dev/tcp/$host/$port"
printf 'GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$path" "$address" >&3
IFS= read -r -t 5 status <&3
exec 3<&-
case "$status" in
    "HTTP/1."[01]" 200 "*) exit 0 ;;
    *) echo "unhealthy: GET $path -> ${status%$'\r'}" >&2; exit 1 ;;
esac
