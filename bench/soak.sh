#!/usr/bin/env bash
# Gatehouse soak test: DURATION seconds (default 600) of mixed traffic against a release
# `gatehouse serve` on the SQLite store, sampling the gateway's RSS and open file descriptors every
# 10 s. Not run in CI; see bench/README.md.
#
# Usage: bash bench/soak.sh [DURATION_SECONDS]
#
# What runs (all on 127.0.0.1, free ports, files in a temp dir):
#   - `gatehouse demo --token-lifetime 5`, only for its stand-ins: the OAuth 2.0 server (short-lived
#     access tokens, rotating refresh tokens) and the echo backend. Its own gateway (memory store)
#     gets no traffic.
#   - `gatehouse serve` (the measured process) on SQLite, one provider `demo` (kind oauth2) pointed at
#     that stand-in, the echo backend as backend.url, limits.max_body_bytes = MAX_BODY_BYTES.
#   - bench/soak.py: WORKERS threads of logins (native flow), session views, explicit refreshes,
#     proxied calls with JSON bodies (/v1/api and /v1/proxy/demo, which refreshes transparently),
#     logouts and deliberate errors (401, 400, 404, 413); every status is checked against what the
#     action expects. Samples RSS and FDs (by kind: client connections, connections to the backend and
#     to the provider, files, other) every 10 s, and once more after COOLDOWN idle seconds.
#     Exit 1 on any unexpected status or when RSS / FDs are not flat after warm-up.
#
# Environment:
#   GATEHOUSE_BIN    the gateway binary (default: `swift build -c release --product gatehouse`, as bench/run.sh)
#   WORKERS=8        concurrent client threads
#   MAX_BODY_BYTES=1048576   limits.max_body_bytes of the gateway (the 413 case sends more)
#   SESSION_SECONDS=2,20     MIN,MAX seconds a client session lives before its logout (fewer: more logins)
#   COOLDOWN=70      seconds without traffic after the load, then a last sample (idle pools time out; 0: none)
#   KEEP_TMP=1       keep the temp dir (configs, logs, samples.csv) after a success too
set -euo pipefail

LOG_TAG=soak
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$script_dir/lib.sh" # log, die, stop_pid, free_port, wait_http, wait_log, make_tmp/cleanup; cds to the repo root
STOP_WAIT=10

SOAK_SECONDS=${1:-600}
WORKERS=${WORKERS:-8}
MAX_BODY_BYTES=${MAX_BODY_BYTES:-1048576}
SESSION_SECONDS=${SESSION_SECONDS:-2,20}
COOLDOWN=${COOLDOWN:-70}
[[ $SESSION_SECONDS =~ ^[0-9.]+,[0-9.]+$ ]] || die "SESSION_SECONDS must be MIN,MAX (got '$SESSION_SECONDS')"
TOKEN_LIFETIME=5 # seconds: the stand-in's access tokens, so transparent refresh happens all the time
require_counts SOAK_SECONDS WORKERS MAX_BODY_BYTES COOLDOWN
((SOAK_SECONDS >= 30 && WORKERS > 0 && MAX_BODY_BYTES > 0)) || die "DURATION must be >= 30 s, WORKERS and MAX_BODY_BYTES > 0"
command -v curl >/dev/null || die "curl is needed"

# --- gatehouse binary (release) ---------------------------------------------------------------------
gatehouse_binary # sets BIN
[[ $(binary_kind "$BIN") == release ]] || log "WARNING: $BIN does not look like a release build"

# --- python with requests --------------------------------------------------------------------------
if [[ -x $repo_root/.venv/bin/python ]]; then
    PY=$repo_root/.venv/bin/python
else
    venv=/tmp/gatehouse-soak-venv
    if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import requests' 2>/dev/null; then
        log "creating $venv with requests"
        /usr/bin/python3 -m venv "$venv" || die "python3 -m venv failed (apt-get install python3-venv?)"
        "$venv/bin/pip" install -q requests >&2 || die "pip install requests failed"
    fi
    PY=$venv/bin/python
fi
"$PY" -c 'import requests' || die "$PY cannot import requests"

# --- temp dir and cleanup --------------------------------------------------------------------------
demo_pid=""
gw_pid=""
cleanup_pids=(gw_pid demo_pid)
make_tmp gatehouse-soak

# --- stand-ins: `gatehouse demo` (its banner names them) ---------------------------------------------
demo_port=$(free_port)
# TMPDIR: the demo keeps its files in $TMPDIR/gatehouse-demo-<pid>, so they go with the temp dir.
TMPDIR=$tmp "$BIN" demo --listen "127.0.0.1:$demo_port" --token-lifetime "$TOKEN_LIFETIME" >"$tmp/demo.log" 2>&1 &
demo_pid=$!
wait_http "http://127.0.0.1:$demo_port/healthz" "$demo_pid" "gatehouse demo" 200
wait_log "$tmp/demo.log" "  backend " "$demo_pid" "gatehouse demo"
oauth=$(awk '$1 == "stand-in" && $2 == "OAuth" { print $4; exit }' "$tmp/demo.log")
backend=$(awk '$1 == "backend" { print $2; exit }' "$tmp/demo.log")
[[ $oauth =~ ^http://127\.0\.0\.1:[0-9]+$ ]] || die "no stand-in OAuth 2.0 URL in the demo banner: $(head -c 2000 "$tmp/demo.log")"
[[ $backend =~ ^http://127\.0\.0\.1:[0-9]+$ ]] || die "no backend URL in the demo banner: $(head -c 2000 "$tmp/demo.log")"
log "stand-in OAuth 2.0 server $oauth, echo backend $backend (demo pid $demo_pid)"

# --- the measured gateway: `gatehouse serve` on SQLite -------------------------------------------------
gw_port=$(free_port)
gw="http://127.0.0.1:$gw_port"
serve=$tmp/serve
mkdir -p "$serve/Providers" "$serve/data"
"$BIN" keys generate --id k1 --directory "$serve/keys" >/dev/null || die "gatehouse keys generate failed"
# The stand-in's one client (public, PKCE), its issuer (it sends RFC 9207 iss), scope and resource server.
cat >"$serve/Providers/demo.yaml" <<EOF
id: "demo"
kind: "oauth2"
name: "Stand-in OAuth 2.0 server"
authorization_endpoint: "$oauth/authorize"
token_endpoint: "$oauth/token"
userinfo_endpoint: "$oauth/userinfo"
revocation_endpoint: "$oauth/revoke"
issuer: "$oauth"
client_id: "demo-client"
token_endpoint_auth_method: "none"
scopes: ["grades"]
api:
  url: "$oauth/api"
  auth: "bearer"
EOF
cat >"$serve/gatehouse.yaml" <<EOF
listen: "127.0.0.1:$gw_port"
public_url: "$gw"
providers_dir: "./Providers"
store:
  kind: "sqlite"
  path: "./data/gatehouse.sqlite3"
keys:
  sealing:
    - {id: "k1", file: "./keys/sealing-k1.key"}
  signing:
    - {id: "k1", file: "./keys/signing-k1.pem"}
backend:
  url: "$backend"
  audience: "soak"
allowed_redirect_uris:
  - "http://127.0.0.1/callback"
limits:
  max_body_bytes: $MAX_BODY_BYTES
logging:
  level: "info"
  format: "text"
EOF
"$BIN" check --config "$serve/gatehouse.yaml" >"$serve/check.out" 2>&1 || die "gatehouse check failed: $(cat "$serve/check.out")"
(cd "$serve" && exec "$BIN" serve --config "$serve/gatehouse.yaml" --listen "127.0.0.1:$gw_port") >"$tmp/gateway.log" 2>&1 &
gw_pid=$!
wait_http "$gw/readyz" "$gw_pid" "gatehouse serve" 200
wait_log "$tmp/gateway.log" "session cache synchronized" "$gw_pid" "gatehouse serve"
log "gateway $gw (pid $gw_pid, $BIN), SQLite store $serve/data/gatehouse.sqlite3"

# --- the soak --------------------------------------------------------------------------------------
command="bash bench/soak.sh $SOAK_SECONDS"
[[ $SESSION_SECONDS == 2,20 ]] || command="SESSION_SECONDS=$SESSION_SECONDS $command"
[[ $MAX_BODY_BYTES == 1048576 ]] || command="MAX_BODY_BYTES=$MAX_BODY_BYTES $command"
[[ $WORKERS == 8 ]] || command="WORKERS=$WORKERS $command"
[[ $COOLDOWN == 70 ]] || command="COOLDOWN=$COOLDOWN $command"
rc=0
"$PY" "$script_dir/soak.py" \
    --gateway "$gw" --pid "$gw_pid" --duration "$SOAK_SECONDS" --workers "$WORKERS" \
    --max-body-bytes "$MAX_BODY_BYTES" --db "$serve/data/gatehouse.sqlite3" --session-seconds "$SESSION_SECONDS" \
    --backend "$backend" --provider "$oauth" --cooldown "$COOLDOWN" \
    --gateway-log "$tmp/gateway.log" --samples "$tmp/samples.csv" \
    --binary "$BIN" --command "$command" || rc=$?
require_alive "$gw_pid" "the gateway exited during the soak (log: $tmp/gateway.log)"
require_alive "$demo_pid" "gatehouse demo (the stand-ins) exited during the soak (log: $tmp/demo.log)"
if ((rc != 0)); then
    log "FAILED (soak.py exit $rc); gateway log: $tmp/gateway.log"
    exit 1
fi
log "passed"
