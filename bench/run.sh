#!/usr/bin/env bash
# Gatehouse benchmark: authenticated `GET /v1/api/…` through the gateway and through its peers, in one
# run: the nginx upstream directly, nginx and Caddy as plain reverse proxies in front of it, Gatehouse
# on the memory store (`gatehouse demo`) and on the SQLite store (`gatehouse serve`) with its session
# cache on and off, and with a DPoP-bound session (a fresh ES256 proof per request) against a bearer one,
# and with tracing on (`sample_ratio: 0.01`, spans exported to a local OTLP/HTTP sink) against off;
# machine clients with provider-issued access tokens (a JWT, an introspected opaque token) on the SQLite
# gateway against Apache httpd + mod_auth_openidc in resource-server mode (`AuthType oauth20`).
# See bench/README.md.
#
# Environment:
#   DURATION=8        seconds per wrk run
#   RUNS=3            measured runs per target (median is reported)
#   THREADS=2         wrk threads
#   CONNECTIONS=32    wrk connections
#   WARMUP=2          seconds of unmeasured load per target before the first run (0: none)
#   GATEHOUSE_BIN     use this gatehouse binary (gatehouse-bench beside it, if there) instead of
#                     building the shipped release binary (scripts/build-release.sh --with-bench)
#   STORM=1000        calls at once in the refresh storm (0: no storm)
#   DPOP_RATE=32000   DPoP proofs made per second of a DPoP run (more than the gateway can take: a run
#                     that uses them all gets replay refusals, reported as non-2xx)
#   KEEP_TMP=1        keep the temp dir (nginx/Caddy/gateway configs, logs, raw wrk output)
#   TARGETS="…"       measure only these targets (direct and caddy are always measured: the ratios need them)
#   TLS_ROWS=1        then run bench/tls.sh with the same binary: Gatehouse with `tls:` (HTTPS/1.1 keep-alive,
#                     HTTP/2, new-connection handshakes) against nginx and Caddy terminating TLS (0: skip)
#   HTTPS_UPSTREAM_ROWS=1  then run bench/https-upstream.sh with the same binary: the relay to an `https` backend
#                     against the relay to the `http` one and Caddy with TLS to the same backend (0: skip)
set -euo pipefail

LOG_TAG=bench
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib.sh
source "$script_dir/lib.sh" # wrk defaults, helpers; cds to the repository root
STOP_WAIT=5
SESSION_CACHE_SECONDS=30 # store.session_cache_seconds of the "cache on" SQLite gateway (the default)

STORM=${STORM:-1000}
TLS_ROWS=${TLS_ROWS:-1}
HTTPS_UPSTREAM_ROWS=${HTTPS_UPSTREAM_ROWS:-1}
check_wrk_settings
require_counts STORM TLS_ROWS HTTPS_UPSTREAM_ROWS

# --- tools -------------------------------------------------------------------------------------
install_load_tools
install_caddy
python_with_cryptography # bench/issuer.py
wants() { [[ -z ${TARGETS:-} || " $TARGETS " == *" $1 "* ]]; } # target: measured in this run?
if wants apache-oidc-jwt || wants apache-oidc-introspect; then install_apache_oidc; fi

# --- gatehouse binary ----------------------------------------------------------------------------
gatehouse_binary # sets BIN
bench_binary     # sets BENCH_BIN (DPoP proofs)
DPOP_RATE=${DPOP_RATE:-32000}
require_counts DPOP_RATE
bin_kind=$(binary_kind "$BIN")

# --- temp dir and cleanup ------------------------------------------------------------------------
nginx_pid=""
proxy_pid=""
caddy_pid=""
gw_pid=""
sqlite_pid=""
sqlite0_pid=""
memdpop_pid=""
sqlitedpop_pid=""
sqlitelog_pid=""
traced_pid=""
otlp_pid=""
storm_pid=""
authz_pid=""
apache_pid=""
issuer_pid=""
relay_pid=""
httprelay_pid=""
headrelay_pid=""
cleanup_pids=(relay_pid httprelay_pid headrelay_pid gw_pid sqlite_pid sqlite0_pid memdpop_pid sqlitedpop_pid sqlitelog_pid traced_pid otlp_pid storm_pid caddy_pid proxy_pid authz_pid apache_pid issuer_pid nginx_pid)
remove_demo_dir() { # each demo keeps its files under $TMPDIR/gatehouse-demo-<pid>
    local pid
    for pid in "$gw_pid" "$storm_pid"; do
        [[ -n $pid ]] && rm -rf "${TMPDIR:-/tmp}/gatehouse-demo-$pid"
    done
    return 0
}
cleanup_hook=remove_demo_dir
make_tmp gatehouse-bench

# --- nginx upstream ------------------------------------------------------------------------------
# /probe is the capture provider's probe of the SQLite gateways (it validates a captured token and
# answers the identity); every other path answers the 64-byte body.
nginx_port=$(free_port)
start_probe_backend "$tmp/nginx" "$nginx_port" nginx_pid

# --- plain reverse proxies: nginx and Caddy ----------------------------------------------------------
# nginx with one worker per core (worker_processes auto), HTTP/1.1 keep-alive to the upstream.
proxy_port=$(free_port)
mkdir -p "$tmp/proxy"
{
    nginx_conf_head "$tmp/proxy" 4096 auto
    cat <<EOF
    upstream backend {
        server 127.0.0.1:$nginx_port;
        keepalive 64;
        keepalive_requests 1000000;
    }
    server {
        listen 127.0.0.1:$proxy_port;
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
wait_http "http://127.0.0.1:$proxy_port/healthz" "$proxy_pid" "nginx reverse proxy"

# Caddy: a Caddyfile with nothing but `reverse_proxy` (its defaults: keep-alive, GOMAXPROCS = cores);
# no admin endpoint, no automatic HTTPS, its data and config dirs (autosave.json) in the temp dir.
caddy_port=$(free_port)
mkdir -p "$tmp/caddy"
cat >"$tmp/caddy/Caddyfile" <<EOF
{
	admin off
	auto_https off
}

http://127.0.0.1:$caddy_port {
	reverse_proxy 127.0.0.1:$nginx_port
}
EOF
start_caddy "$tmp/caddy"
wait_http "http://127.0.0.1:$caddy_port/healthz" "$caddy_pid" "Caddy"

# The floors of a SwiftNIO proxy hop here, each client connection joined to a backend connection of its own on the
# same event loop, no policy, no log: bytes relayed as read (gatehouse-bench byte-relay), heads read from the bytes
# and written as bytes (gatehouse-bench head-relay), and NIOHTTP1's parts passed on as decoded (gatehouse-bench
# http-relay). The byte relay minus nginx's proxy is SwiftNIO's own overhead; the head relay minus the byte relay,
# what HTTP/1.1 framing costs when done on the bytes; the HTTP relay minus the byte relay, NIOHTTP1's; a gateway row
# minus the HTTP relay, the gateway's own work.
start_floor() { # gatehouse-bench command, port: starts it in front of the nginx backend (log: $tmp/<command>.log), sets floor_pid
    "$BENCH_BIN" "$1" --port "$2" --backend-port "$nginx_port" >"$tmp/$1.log" 2>&1 &
    floor_pid=$!
    wait_http "http://127.0.0.1:$2/healthz" "$floor_pid" "gatehouse-bench $1"
}
relay_port=$(free_port)
start_floor byte-relay "$relay_port"
relay_pid=$floor_pid
httprelay_port=$(free_port)
start_floor http-relay "$httprelay_port"
httprelay_pid=$floor_pid
headrelay_port=$(free_port)
start_floor head-relay "$headrelay_port"
headrelay_pid=$floor_pid

# --- gateway, memory store (demo mode: stand-in OAuth server on loopback, nginx as the backend) -----
gw_port=$(free_port)
gw="http://127.0.0.1:$gw_port"
"$BIN" demo --listen "127.0.0.1:$gw_port" --backend "$backend" --token-lifetime 3600 --no-access-log \
    >"$tmp/gateway.log" 2>&1 &
gw_pid=$!
wait_http "$gw/healthz" "$gw_pid" gateway
rss_kib "$gw_pid" >"$tmp/idle-rss-memory"

token=$(python3 "$script_dir/login.py" "$gw") || die "login failed (gateway log: $tmp/gateway.log)"
[[ -n $token ]] || die "login printed no token"

# --- the identity provider of the machine clients (bench/issuer.py) ---------------------------------
# Discovery, an ES256 JWKS and RFC 7662 introspection (client_secret_basic) on loopback, over http for the
# gateways and over https (a self-signed certificate it writes) for mod_auth_openidc, which takes only https
# URLs. It mints one JWT access token (`typ: at+jwt`, valid for a year) and one opaque token for wrk.
BEARER_AUDIENCE="https://api.bench.example"
ISSUER_CLIENT_SECRET=bench-issuer-secret
issuer_port=$(free_port)
issuer_tls_port=$(free_port)
issuer="http://127.0.0.1:$issuer_port"
mkdir -p "$tmp/issuer"
"$PYTHON_CRYPTO" "$script_dir/issuer.py" "$issuer_port" "$issuer_tls_port" "$tmp/issuer" "$BEARER_AUDIENCE" gatehouse \
    "$ISSUER_CLIENT_SECRET" >"$tmp/issuer/issuer.log" 2>&1 &
issuer_pid=$!
wait_http "$issuer/jwks" "$issuer_pid" "the issuer (bench/issuer.py)" 200
provider_jwt=$(cat "$tmp/issuer/jwt.txt")
provider_opaque=$(cat "$tmp/issuer/opaque.txt")
issuer_calls() { curl -s "$issuer/calls"; } # how often the gateways (http) and Apache (https) asked the issuer

# --- gateways, SQLite store (`gatehouse serve`), session cache on and off --------------------------
# One capture provider, `bench`, whose probe is nginx's /probe: POST /v1/auth/bench/token with a token
# makes the gateway call the probe (Bearer <token>), take the subject from {"id": "u1"} and start a
# session. The credential has no expiry, so nothing refreshes during the run. Shared key files; one
# directory (config, SQLite file) per gateway.
serve_root=$tmp/serve
mkdir -p "$serve_root/Providers"
"$BIN" keys generate --id k1 --directory "$serve_root/keys" >/dev/null || die "gatehouse keys generate failed"
[[ -f $serve_root/keys/sealing-k1.key && -f $serve_root/keys/signing-k1.pem ]] || die "gatehouse keys generate wrote no sealing-k1.key / signing-k1.pem"
capture_provider_file "$serve_root/Providers/bench.yaml"
# The machine clients' provider: its access tokens are accepted on /v1/api (the verdict cached for
# bearer_tokens.cache_seconds, 300 s by default); http is accepted on loopback.
(umask 077 && printf '%s' "$ISSUER_CLIENT_SECRET" >"$serve_root/issuer-client-secret")
cat >"$serve_root/Providers/issuer.yaml" <<EOF
id: "issuer"
kind: "oidc"
name: "Benchmark issuer (machine clients)"
issuer: "$issuer"
client_id: "gatehouse"
client_secret_file: "$serve_root/issuer-client-secret"
bearer_tokens:
  accept: true
  audiences: ["$BEARER_AUDIENCE"]
  required_scopes: ["api"]
EOF
serve_sqlite() { # name port cache_seconds pid_variable [access_log] [store_kind] [more YAML: tracing, sessions]: `gatehouse serve` on SQLite (or memory), waits for /readyz
    local name=$1 port=$2 cache=$3 access_log=${5:-false} kind=${6:-sqlite} tracing=${7:-} dir=$serve_root/$1 store_path
    mkdir -p "$dir"
    store_path=""
    if [[ $kind == sqlite ]]; then printf -v store_path '\n  path: "%s"' "$dir/gatehouse.sqlite3"; fi
    cat >"$dir/gatehouse.yaml" <<EOF
listen: "127.0.0.1:$port"
public_url: "http://127.0.0.1:$port"
providers_dir: "$serve_root/Providers"
store:
  kind: "$kind"$store_path
  session_cache_seconds: $cache
keys:
  sealing:
    - {id: "k1", file: "$serve_root/keys/sealing-k1.key"}
  signing:
    - {id: "k1", file: "$serve_root/keys/signing-k1.pem"}
backend:
  url: "$backend"
  audience: "bench"
logging:
  level: "info"
  format: "text"
  # false: as nginx (access_log off) and Caddy (no log directive) run here; true (gw-sqlite-log): as shipped
  access_log: $access_log
$tracing
EOF
    "$BIN" check --config "$dir/gatehouse.yaml" >"$dir/check.out" 2>&1 || die "gatehouse check failed for $name: $(cat "$dir/check.out")"
    "$BIN" serve --config "$dir/gatehouse.yaml" >"$tmp/gateway-$name.log" 2>&1 &
    printf -v "$4" '%s' "$!"
    wait_http "http://127.0.0.1:$port/readyz" "${!4}" "gateway $name" 200
    rss_kib "${!4}" >"$tmp/idle-rss-$name"
    if ((cache > 0)); then
        wait_log "$tmp/gateway-$name.log" "session cache synchronized" "${!4}" "gateway $name"
    fi
}
capture_session() { # gateway_url name: POST /v1/auth/bench/token; prints the session token
    local status
    status=$(curl -s -o "$tmp/session-$2.json" -w '%{http_code}' -H 'Content-Type: application/json' \
        -d "{\"token\": \"bench-$2\"}" "$1/v1/auth/bench/token") || true
    [[ $status == 201 ]] || die "POST $1/v1/auth/bench/token answered $status: $(head -c 1000 "$tmp/session-$2.json")"
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["session_token"])' "$tmp/session-$2.json" \
        || die "no session_token in $(head -c 1000 "$tmp/session-$2.json")"
}
# The DPoP rows' settings: proofs are made before each run, so nonces must outlast it. `instance`: a proof's
# `jti` is recorded in the process's memory (nonces name the process); `store`: in the session store.
dpop_settings() { # replay
    printf 'sessions:\n  dpop:\n    replay: "%s"\n    require_nonce: true\n    nonce_lifetime_seconds: 86400\n' "$1"
}
sqlite_port=$(free_port)
serve_sqlite sqlite "$sqlite_port" "$SESSION_CACHE_SECONDS" sqlite_pid false sqlite "$(dpop_settings instance)"
sqlite0_port=$(free_port)
serve_sqlite sqlite0 "$sqlite0_port" 0 sqlite0_pid
# The same gateway with the access log as shipped (on, `info`, text lines on standard error into a file).
if [[ " ${TARGETS:-gw-sqlite-log} " == *" gw-sqlite-log "* ]]; then
    sqlitelog_port=$(free_port)
    serve_sqlite sqlitelog "$sqlitelog_port" "$SESSION_CACHE_SECONDS" sqlitelog_pid true
    sqlitelog_token=$(capture_session "http://127.0.0.1:$sqlitelog_port" sqlitelog)
else
    sqlitelog_port=0 sqlitelog_pid=$sqlite_pid sqlitelog_token=none
fi
# The same gateway with tracing on: 1 % of new traces recorded, exported to a sink that answers 200 to everything.
if [[ " ${TARGETS:-gw-sqlite-traced} " == *" gw-sqlite-traced "* ]]; then
    otlp_port=$(free_port)
    python3 -c '
import http.server, sys
class Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
' "$otlp_port" >"$tmp/otlp-sink.log" 2>&1 &
    otlp_pid=$!
    traced_port=$(free_port)
    serve_sqlite traced "$traced_port" "$SESSION_CACHE_SECONDS" traced_pid false sqlite \
        "tracing: {otlp_endpoint: \"http://127.0.0.1:$otlp_port\", sample_ratio: 0.01}"
    traced_token=$(capture_session "http://127.0.0.1:$traced_port" traced)
else
    traced_port=0 traced_pid=$sqlite_pid traced_token=none
fi
sqlite_token=$(capture_session "http://127.0.0.1:$sqlite_port" sqlite)
sqlite0_token=$(capture_session "http://127.0.0.1:$sqlite0_port" sqlite0)
# A second session on the cached SQLite gateway, bound to an ES256 key (DPoP): its sign-in carries a proof,
# with the nonce the gateway gives (every proof of the row carries it).
dpop_key=$tmp/dpop.p256
dpop_proofs() { # method url [token] [count] [nonce]: proofs from gatehouse-bench, one per line
    "$BENCH_BIN" dpop-proofs --key "$dpop_key" --method "$1" --url "$2" ${3:+--token "$3"} --count "${4:-1}" ${5:+--nonce "$5"}
}
dpop_sign_in() { # port name: a DPoP-bound session; prints "token nonce"
    local signin="http://127.0.0.1:$1/v1/auth/bench/token" status nonce
    # Without a nonce: 400 use_dpop_nonce and the gateway's DPoP-Nonce.
    nonce=$(curl -s -o /dev/null -D - -H 'Content-Type: application/json' -H "DPoP: $(dpop_proofs POST "$signin")" \
        -d "{\"token\": \"bench-$2\"}" "$signin" | tr -d '\r' | awk 'tolower($1) == "dpop-nonce:" { print $2 }') || true
    [[ -n $nonce ]] || die "the DPoP sign-in ($2) gave no DPoP-Nonce"
    status=$(curl -s -o "$tmp/session-$2.json" -w '%{http_code}' -H 'Content-Type: application/json' \
        -H "DPoP: $(dpop_proofs POST "$signin" "" 1 "$nonce")" -d "{\"token\": \"bench-$2\"}" "$signin") || true
    [[ $status == 201 ]] || die "the DPoP sign-in ($2) answered $status: $(head -c 1000 "$tmp/session-$2.json")"
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["token_type"] == "DPoP", d["token_type"]; print(d["session_token"], sys.argv[2])' \
        "$tmp/session-$2.json" "$nonce" || die "the DPoP sign-in ($2) gave no DPoP-bound session"
}
read -r dpop_token dpop_nonce < <(dpop_sign_in "$sqlite_port" dpop)
[[ -n ${dpop_nonce:-} ]] || die "the DPoP sign-in failed"
# The same bound call with `replay: store` (`gw-sqlite-dpop-store`): each proof's `jti` is written to SQLite.
if wants gw-sqlite-dpop-store; then
    sqlitedpop_port=$(free_port)
    serve_sqlite sqlitedpop "$sqlitedpop_port" "$SESSION_CACHE_SECONDS" sqlitedpop_pid false sqlite "$(dpop_settings store)"
    read -r sqlitedpop_token sqlitedpop_nonce < <(dpop_sign_in "$sqlitedpop_port" sqlitedpop)
    [[ -n ${sqlitedpop_nonce:-} ]] || die "the DPoP sign-in (replay: store) failed"
else
    sqlitedpop_port=0 sqlitedpop_pid=$sqlite_pid sqlitedpop_token=none sqlitedpop_nonce=none
fi
# The same bound call on a gateway whose store is memory (`gw-memory-dpop`, `replay: store`): a proof's `jti`
# record is a map insert under a lock, but still a trip off the event loop.
if wants gw-memory-dpop; then
    memdpop_port=$(free_port)
    serve_sqlite memdpop "$memdpop_port" "$SESSION_CACHE_SECONDS" memdpop_pid false memory "$(dpop_settings store)"
    read -r memdpop_token memdpop_nonce < <(dpop_sign_in "$memdpop_port" memdpop)
    [[ -n ${memdpop_nonce:-} ]] || die "the DPoP sign-in (memory store) failed"
else
    memdpop_port=0 memdpop_pid=$sqlite_pid memdpop_token=none memdpop_nonce=none
fi

# --- forward authentication: nginx auth_request -> the SQLite gateway's /v1/authz, then the backend ------
# The price of forward auth per request, against the plain nginx proxy above: the same nginx settings,
# plus one keep-alive subrequest to Gatehouse per request (no access rules: any session passes).
authz_port=$(free_port)
mkdir -p "$tmp/authz"
{
    nginx_conf_head "$tmp/authz" 4096 auto
    cat <<EOF
    upstream backend {
        server 127.0.0.1:$nginx_port;
        keepalive 64;
        keepalive_requests 1000000;
    }
    upstream gatehouse {
        server 127.0.0.1:$sqlite_port;
        keepalive 64;
        keepalive_requests 1000000;
    }
    server {
        listen 127.0.0.1:$authz_port;
        location = /_gatehouse_authz {
            internal;
            proxy_pass http://gatehouse/v1/authz;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header X-Original-URI \$request_uri;
            proxy_set_header X-Original-Method \$request_method;
        }
        location / {
            auth_request /_gatehouse_authz;
            auth_request_set \$gh_subject \$upstream_http_x_gatehouse_subject;
            proxy_set_header X-Gatehouse-Subject \$gh_subject;
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
EOF
} >"$tmp/authz/nginx.conf"
start_nginx "$tmp/authz" authz_pid
wait_http "http://127.0.0.1:$authz_port/bench" "$authz_pid" "nginx auth_request" 401

# --- Apache httpd + mod_auth_openidc, resource server (`AuthType oauth20`), -> the backend ------------------
# The peer of the provider-token rows: one httpd (MPM event, two processes of 64 threads, keep-alive without a
# request limit, no access log, a child of this script like the nginx instances) with two virtual hosts in
# front of the same nginx: JWT access tokens verified with the issuer's JWKS (OIDCOAuthVerifyJwksUri, the key
# set cached in shm), and opaque tokens introspected (OIDCOAuthIntrospectionEndpoint, the answer cached in the
# shm cache, OIDCCacheType shm, until the answer's exp). Both require aud to hold the audience, as the gateway
# does. mod_auth_openidc takes only https URLs: the issuer's https port, its certificate as the CA bundle.
apache_version="" oidc_version=""
if wants apache-oidc-jwt || wants apache-oidc-introspect; then
    apache_jwt_port=$(free_port)
    apache_intro_port=$(free_port)
    apache_dir=$tmp/apache
    mkdir -p "$apache_dir"
    apache_user=""
    if [[ $(id -u) -eq 0 ]]; then
        # httpd will not serve as root: its children run as www-data (nobody elsewhere), which must be able to
        # reach the CA bundle in its directory (mktemp made the temp dir 0700; 0711 lets it pass, not list; the
        # throwaway tokens and keys of this run are files of fixed names in it, on a loopback-only bench).
        if id www-data >/dev/null 2>&1; then apache_user="User www-data"$'\n'"Group www-data"; else apache_user="User nobody"$'\n'"Group nogroup"; fi
        chmod 711 "$tmp"
    fi
    cp "$tmp/issuer/issuer-cert.pem" "$apache_dir/issuer-ca.pem"
    chmod 644 "$apache_dir/issuer-ca.pem"
    cat >"$apache_dir/httpd.conf" <<EOF
ServerRoot "$apache_dir"
ServerName 127.0.0.1
PidFile "$apache_dir/httpd.pid"
DefaultRuntimeDir "$apache_dir"
ErrorLog "$apache_dir/error.log"
LogLevel warn
LoadModule mpm_event_module $APACHE_MODULES/mod_mpm_event.so
LoadModule authn_core_module $APACHE_MODULES/mod_authn_core.so
LoadModule authz_core_module $APACHE_MODULES/mod_authz_core.so
LoadModule authz_user_module $APACHE_MODULES/mod_authz_user.so
LoadModule proxy_module $APACHE_MODULES/mod_proxy.so
LoadModule proxy_http_module $APACHE_MODULES/mod_proxy_http.so
LoadModule auth_openidc_module $APACHE_MODULES/mod_auth_openidc.so
$apache_user
# Two processes of 64 threads, kept for the whole run (no spare-thread reaping, no child recycling). 64, not
# fewer: the event MPM closes idle keep-alive connections of a process that has more connections than its
# threads can take (wrk's 32 may all land on one process), which wrk reports as read errors.
StartServers 2
ServerLimit 2
ThreadsPerChild 64
ThreadLimit 64
MaxRequestWorkers 128
MinSpareThreads 1
MaxSpareThreads 128
AsyncRequestWorkerFactor 4
MaxConnectionsPerChild 0
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 60
Listen 127.0.0.1:$apache_jwt_port
Listen 127.0.0.1:$apache_intro_port
OIDCCacheType shm
OIDCCryptoPassphrase bench-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
OIDCCABundlePath "$apache_dir/issuer-ca.pem"
<VirtualHost 127.0.0.1:$apache_jwt_port>
    OIDCOAuthVerifyJwksUri https://127.0.0.1:$issuer_tls_port/jwks
    <Location />
        AuthType oauth20
        Require claim aud:$BEARER_AUDIENCE
    </Location>
    ProxyPass / http://127.0.0.1:$nginx_port/
</VirtualHost>
<VirtualHost 127.0.0.1:$apache_intro_port>
    OIDCOAuthIntrospectionEndpoint https://127.0.0.1:$issuer_tls_port/introspect
    OIDCOAuthIntrospectionEndpointAuth client_secret_basic
    OIDCOAuthClientID gatehouse
    OIDCOAuthClientSecret $ISSUER_CLIENT_SECRET
    <Location />
        AuthType oauth20
        Require claim aud:$BEARER_AUDIENCE
    </Location>
    ProxyPass / http://127.0.0.1:$nginx_port/
</VirtualHost>
EOF
    "$APACHE" -t -f "$apache_dir/httpd.conf" >"$apache_dir/check.out" 2>&1 || die "apache2 -t failed: $(cat "$apache_dir/check.out")"
    "$APACHE" -f "$apache_dir/httpd.conf" -DFOREGROUND >"$apache_dir/stdout.log" 2>&1 &
    apache_pid=$!
    wait_http "http://127.0.0.1:$apache_jwt_port/bench" "$apache_pid" "Apache (mod_auth_openidc, JWT)" 401
    wait_http "http://127.0.0.1:$apache_intro_port/bench" "$apache_pid" "Apache (mod_auth_openidc, introspection)" 401
    apache_version=$("$APACHE" -v | sed -n 's/^Server version: Apache\/\([^ ]*\).*/\1/p')
    oidc_version=$(dpkg-query -W -f '${Version}' libapache2-mod-auth-openidc 2>/dev/null | sed 's/-[^-]*$//' || true)
else
    apache_jwt_port=0 apache_intro_port=0 apache_pid=""
fi

# --- targets ---------------------------------------------------------------------------------------
# name, label, CPU key (run_wrk's "cpu" line; nginx's workers are <key>_<n>), pids for the RSS, URL, token
targets=(direct nginx-proxy caddy nio-relay nio-head-relay nio-http-relay gw-memory gw-sqlite gw-sqlite-log gw-sqlite-traced gw-sqlite-dpop gw-sqlite-dpop-store gw-memory-dpop gw-sqlite-nocache nginx-authz
    gw-bearer-jwt gw-bearer-opaque apache-oidc-jwt apache-oidc-introspect)
if [[ -n ${TARGETS:-} ]]; then
    chosen=" direct caddy $TARGETS "
    kept=()
    for t in "${targets[@]}"; do
        if [[ $chosen == *" $t "* ]]; then kept+=("$t"); fi
    done
    for t in $TARGETS; do
        if [[ " ${targets[*]} " != *" $t "* ]]; then die "TARGETS: unknown target '$t' (known: ${targets[*]})"; fi
    done
    targets=("${kept[@]}")
fi
declare -A label url tok cpu_key rss_pids nonce
label=(
    [direct]="nginx backend, direct"
    [nginx-proxy]="nginx reverse proxy -> backend"
    [caddy]="Caddy $caddy_version reverse_proxy -> backend"
    [nio-relay]="SwiftNIO byte relay, no HTTP (gatehouse-bench byte-relay) -> backend"
    [nio-head-relay]="SwiftNIO HTTP/1.1 relay, heads read and written as bytes (gatehouse-bench head-relay) -> backend"
    [nio-http-relay]="SwiftNIO HTTP/1.1 relay, NIOHTTP1 parts as decoded (gatehouse-bench http-relay) -> backend"
    [gw-memory]="Gatehouse, memory store (demo)"
    [gw-sqlite]="Gatehouse, SQLite, session cache ${SESSION_CACHE_SECONDS} s"
    [gw-sqlite-log]="Gatehouse, SQLite, cache ${SESSION_CACHE_SECONDS} s, access log on (as shipped)"
    [gw-sqlite-traced]="Gatehouse, SQLite, cache ${SESSION_CACHE_SECONDS} s, tracing sample_ratio 0.01 (OTLP/HTTP to a local sink)"
    [gw-sqlite-dpop]="Gatehouse, SQLite, cache ${SESSION_CACHE_SECONDS} s, DPoP-bound (ES256 proof each), replay: instance"
    [gw-sqlite-dpop-store]="Gatehouse, SQLite, cache ${SESSION_CACHE_SECONDS} s, DPoP-bound (ES256 proof each), replay: store"
    [gw-memory-dpop]="Gatehouse, memory store (serve), DPoP-bound (ES256 proof each), replay: store"
    [gw-sqlite-nocache]="Gatehouse, SQLite, session cache 0"
    [nginx-authz]="nginx auth_request -> Gatehouse /v1/authz, -> backend"
    [gw-bearer-jwt]="Gatehouse, SQLite, provider JWT (at+jwt ES256, verdict cached)"
    [gw-bearer-opaque]="Gatehouse, SQLite, provider opaque token (introspected, verdict cached)"
    [apache-oidc-jwt]="Apache ${apache_version} + mod_auth_openidc ${oidc_version}, oauth20 JWT (JWKS) -> backend"
    [apache-oidc-introspect]="Apache ${apache_version} + mod_auth_openidc ${oidc_version}, oauth20 introspection, shm cache -> backend"
)
url=(
    [direct]="$backend/bench"
    [nginx-proxy]="http://127.0.0.1:$proxy_port/bench"
    [caddy]="http://127.0.0.1:$caddy_port/bench"
    [nio-relay]="http://127.0.0.1:$relay_port/bench"
    [nio-head-relay]="http://127.0.0.1:$headrelay_port/bench"
    [nio-http-relay]="http://127.0.0.1:$httprelay_port/bench"
    [gw-memory]="$gw/v1/api/bench"
    [gw-sqlite]="http://127.0.0.1:$sqlite_port/v1/api/bench"
    [gw-sqlite-log]="http://127.0.0.1:$sqlitelog_port/v1/api/bench"
    [gw-sqlite-traced]="http://127.0.0.1:$traced_port/v1/api/bench"
    [gw-sqlite-dpop]="http://127.0.0.1:$sqlite_port/v1/api/bench"
    [gw-sqlite-dpop-store]="http://127.0.0.1:$sqlitedpop_port/v1/api/bench"
    [gw-memory-dpop]="http://127.0.0.1:$memdpop_port/v1/api/bench"
    [gw-sqlite-nocache]="http://127.0.0.1:$sqlite0_port/v1/api/bench"
    [nginx-authz]="http://127.0.0.1:$authz_port/bench"
    [gw-bearer-jwt]="http://127.0.0.1:$sqlite_port/v1/api/bench"
    [gw-bearer-opaque]="http://127.0.0.1:$sqlite_port/v1/api/bench"
    [apache-oidc-jwt]="http://127.0.0.1:$apache_jwt_port/bench"
    [apache-oidc-introspect]="http://127.0.0.1:$apache_intro_port/bench"
)
# Every target gets the same request: the proxies and nginx ignore the Authorization header.
tok=([direct]=$token [nginx-proxy]=$token [caddy]=$token [nio-relay]=$token [nio-head-relay]=$token [nio-http-relay]=$token [gw-memory]=$token [gw-sqlite]=$sqlite_token [gw-sqlite-log]=$sqlitelog_token [gw-sqlite-traced]=$traced_token [gw-sqlite-dpop]=$dpop_token [gw-memory-dpop]=$memdpop_token [gw-sqlite-nocache]=$sqlite0_token [nginx-authz]=$sqlite_token)
tok+=([gw-sqlite-dpop-store]=$sqlitedpop_token)
nonce=([gw-sqlite-dpop]=$dpop_nonce [gw-sqlite-dpop-store]=$sqlitedpop_nonce [gw-memory-dpop]=$memdpop_nonce)
tok+=([gw-bearer-jwt]=$provider_jwt [gw-bearer-opaque]=$provider_opaque [apache-oidc-jwt]=$provider_jwt [apache-oidc-introspect]=$provider_opaque)
cpu_key=([direct]=backend [nginx-proxy]=proxy [caddy]=caddy [nio-relay]=relay [nio-head-relay]=headrelay [nio-http-relay]=httprelay [gw-memory]=memory [gw-sqlite]=sqlite [gw-sqlite-log]=sqlitelog [gw-sqlite-traced]=traced [gw-sqlite-dpop]=sqlite [gw-memory-dpop]=memdpop [gw-sqlite-nocache]=sqlite0 [nginx-authz]=authz)
cpu_key+=([gw-sqlite-dpop-store]=sqlitedpop)
cpu_key+=([gw-bearer-jwt]=sqlite [gw-bearer-opaque]=sqlite [apache-oidc-jwt]=apache [apache-oidc-introspect]=apache)
mapfile -t backend_workers < <(nginx_workers "$nginx_pid")
mapfile -t proxy_workers < <(nginx_workers "$proxy_pid")
mapfile -t authz_workers < <(nginx_workers "$authz_pid")
apache_workers=()
if [[ -n $apache_pid ]]; then mapfile -t apache_workers < <(nginx_workers "$apache_pid"); fi # httpd's children, as nginx's
((${#backend_workers[@]} > 0 && ${#proxy_workers[@]} > 0)) || die "no nginx worker processes found"
rss_pids=(
    [direct]="$nginx_pid ${backend_workers[*]}"
    [nginx-proxy]="$proxy_pid ${proxy_workers[*]}"
    [caddy]=$caddy_pid [nio-relay]=$relay_pid [nio-head-relay]=$headrelay_pid [nio-http-relay]=$httprelay_pid [gw-memory]=$gw_pid [gw-sqlite]=$sqlite_pid [gw-sqlite-log]=$sqlitelog_pid [gw-sqlite-traced]=$traced_pid [gw-sqlite-dpop]=$sqlite_pid [gw-memory-dpop]=$memdpop_pid [gw-sqlite-nocache]=$sqlite0_pid
    [gw-sqlite-dpop-store]=$sqlitedpop_pid
    [nginx-authz]="$authz_pid ${authz_workers[*]} $sqlite_pid"
    [gw-bearer-jwt]=$sqlite_pid [gw-bearer-opaque]=$sqlite_pid
    [apache-oidc-jwt]="$apache_pid ${apache_workers[*]}" [apache-oidc-introspect]="$apache_pid ${apache_workers[*]}"
)
cpu_watch=("backend=${backend_workers[0]}" "caddy=$caddy_pid" "relay=$relay_pid" "httprelay=$httprelay_pid" "headrelay=$headrelay_pid" "memory=$gw_pid" "sqlite=$sqlite_pid" "sqlite0=$sqlite0_pid" "sqlitelog=$sqlitelog_pid" "traced=$traced_pid" "memdpop=$memdpop_pid" "sqlitedpop=$sqlitedpop_pid")
for i in "${!proxy_workers[@]}"; do cpu_watch+=("proxy_$((i + 1))=${proxy_workers[i]}"); done
# The forward-auth row's CPU: its nginx workers and the gateway answering /v1/authz (the SQLite row's
# gateway, idle during the other targets' runs).
for i in "${!authz_workers[@]}"; do cpu_watch+=("authz_$((i + 1))=${authz_workers[i]}"); done
cpu_watch+=("authz_gw=$sqlite_pid")
# Apache's rows: its children (the threads that serve); the parent only supervises.
for i in "${!apache_workers[@]}"; do cpu_watch+=("apache_$((i + 1))=${apache_workers[i]}"); done

for t in "${targets[@]}"; do
    if [[ $t == *-dpop* ]]; then
        sanity_check "${label[$t]}" "${url[$t]}" -H "Authorization: DPoP ${tok[$t]}" -H "DPoP: $(dpop_proofs GET "${url[$t]}" "${tok[$t]}" 1 "${nonce[$t]}")"
    else
        sanity_check "${label[$t]}" "${url[$t]}" -H "Authorization: Bearer ${tok[$t]}"
    fi
done

# The sanity checks made the one verification per token (JWKS fetch, introspection); what the issuer is
# asked from here on is the caches' misses.
issuer_calls >"$tmp/issuer-calls-before.json"

# --- load ----------------------------------------------------------------------------------------
require_all_alive() {
    require_alive "$nginx_pid" "the nginx backend died during the $1 run (see $tmp/nginx)"
    require_alive "$proxy_pid" "the nginx reverse proxy died during the $1 run (see $tmp/proxy)"
    require_alive "$caddy_pid" "Caddy died during the $1 run (log: $tmp/caddy/caddy.log)"
    require_alive "$relay_pid" "gatehouse-bench byte-relay died during the $1 run (log: $tmp/byte-relay.log)"
    require_alive "$httprelay_pid" "gatehouse-bench http-relay died during the $1 run (log: $tmp/http-relay.log)"
    require_alive "$headrelay_pid" "gatehouse-bench head-relay died during the $1 run (log: $tmp/head-relay.log)"
    require_alive "$gw_pid" "the memory-store gateway died during the $1 run (log: $tmp/gateway.log)"
    require_alive "$sqlite_pid" "the SQLite gateway died during the $1 run (log: $tmp/gateway-sqlite.log)"
    require_alive "$sqlitelog_pid" "the SQLite gateway with the access log died during the $1 run (log: $tmp/gateway-sqlitelog.log)"
    require_alive "$traced_pid" "the SQLite gateway with tracing died during the $1 run (log: $tmp/gateway-traced.log)"
    require_alive "$sqlite0_pid" "the SQLite gateway without cache died during the $1 run (log: $tmp/gateway-sqlite0.log)"
    require_alive "$memdpop_pid" "the memory-store gateway of the DPoP row died during the $1 run (log: $tmp/gateway-memdpop.log)"
    require_alive "$sqlitedpop_pid" "the SQLite gateway of the replay: store DPoP row died during the $1 run (log: $tmp/gateway-sqlitedpop.log)"
    require_alive "$authz_pid" "the nginx auth_request proxy died during the $1 run (see $tmp/authz)"
    require_alive "$issuer_pid" "the issuer died during the $1 run (log: $tmp/issuer/issuer.log)"
    if [[ -n $apache_pid ]]; then require_alive "$apache_pid" "Apache died during the $1 run (log: $tmp/apache/error.log)"; fi
}
wrk_target() { # name index seconds
    if [[ $1 == *-dpop* ]]; then
        # Made just before the run (iat: now; the gateway accepts 60 s), each sent once.
        dpop_proofs GET "${url[$1]}" "${tok[$1]}" $((DPOP_RATE * $3)) "${nonce[$1]}" >"$tmp/proofs.txt" || die "gatehouse-bench dpop-proofs failed"
        WRK_SCRIPT_ARGS=("$tmp/proofs.txt" "${tok[$1]}" "$THREADS")
        run_wrk "$1 run $2" "$tmp/wrk-$1-$2.txt" "$3" "${url[$1]}" -s "$script_dir/dpop.lua"
        WRK_SCRIPT_ARGS=()
    else
        run_wrk "$1 run $2" "$tmp/wrk-$1-$2.txt" "$3" "${url[$1]}" -H "Authorization: Bearer ${tok[$1]}"
    fi
    require_all_alive "$1"
}

log "binary: $BIN ($bin_kind); Caddy $caddy_version; nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///')"
log "wrk: $THREADS threads, $CONNECTIONS connections, ${DURATION}s x $RUNS runs per target, alternating: ${targets[*]}"
for t in "${targets[@]}"; do log "  $t: ${url[$t]}"; done
if ((WARMUP > 0)); then
    log "warm-up: ${WARMUP}s each"
    for t in "${targets[@]}"; do wrk_target "$t" warmup "$WARMUP"; done
fi
for i in $(seq "$RUNS"); do
    for t in "${targets[@]}"; do
        log "run $i/$RUNS: $t"
        wrk_target "$t" "$i" "$DURATION"
    done
done

# The cost of one ES256 proof signature check, the call the gateway makes per DPoP-bound request, measured
# now on the same machine: the DPoP rows are compared with it (median of RUNS).
if [[ " ${targets[*]} " == *-dpop* ]]; then
    for i in $(seq "$RUNS"); do
        "$BENCH_BIN" dpop-verify --iterations 20000 || die "gatehouse-bench dpop-verify failed"
    done >"$tmp/dpop-verify.txt"
fi

# RSS after the runs, then the target table the report reads.
for t in "${targets[@]}"; do
    # shellcheck disable=SC2086 # a list of pids
    printf '%s\t%s\t%s\t%s\n' "$t" "${label[$t]}" "${cpu_key[$t]}" "$(rss_kib ${rss_pids[$t]})"
done >"$tmp/targets.tsv"
issuer_calls >"$tmp/issuer-calls-after.json"

# --- refresh storm -----------------------------------------------------------------------------------
# STORM calls at once (one new connection each) on one session whose provider credential is due for a
# refresh: a demo gateway whose stand-in issues 20 s access tokens, which the gateway refreshes within half
# their lifetime of expiry (min(refresh skew 30 s, lifetime / 2)), so 11 s after the login every call needs
# the new one (and the new one is good for another 10 s, far longer than the storm). The provider API (/v1/proxy/demo/…) carries
# the credential. Exactly one refresh may reach the provider, and every call must succeed.
if ((STORM > 0)); then
    storm_port=$(free_port)
    storm="http://127.0.0.1:$storm_port"
    "$BIN" demo --listen "127.0.0.1:$storm_port" --backend "$backend" --token-lifetime 20 --no-access-log >"$tmp/gateway-storm.log" 2>&1 &
    storm_pid=$!
    wait_http "$storm/healthz" "$storm_pid" "storm gateway"
    storm_token=$(python3 "$script_dir/login.py" "$storm") || die "storm login failed (log: $tmp/gateway-storm.log)"
    refreshes() { curl -s "$storm/metrics" | awk '$1 == "gatehouse_refreshes_total" { print $2 }'; }
    storm_before=$(refreshes)
    log "refresh storm: $STORM calls at once, 11 s after the login"
    sleep 11
    python3 "$script_dir/storm.py" "$storm/v1/proxy/demo/echo/storm" "$storm_token" "$STORM" >"$tmp/storm.json" \
        || die "the storm client failed"
    storm_after=$(refreshes)
    require_alive "$storm_pid" "the storm gateway died (log: $tmp/gateway-storm.log)"
fi

# --- report --------------------------------------------------------------------------------------
gateway_logs=("$tmp"/gateway*.log)
gw_log_problems=$(log_problem_lines "${gateway_logs[@]}" | grep -c . || true)
caddy_problem_lines() { grep -E '"level":"(error|fatal|panic)"' "$tmp/caddy/caddy.log" || true; }
caddy_log_problems=$(caddy_problem_lines | grep -c . || true)
# httpd's error log: error and worse (mod_auth_openidc warns at start-up that its resource-server mode is deprecated).
apache_problem_lines() { [[ -f $tmp/apache/error.log ]] && grep -E '^\[[^]]*\] \[[a-z_0-9]+:(error|crit|alert|emerg)\]' "$tmp/apache/error.log" || true; }
apache_log_problems=$(apache_problem_lines | grep -c . || true)
command_line="GATEHOUSE_BIN=${GATEHOUSE_BIN:-} DURATION=$DURATION RUNS=$RUNS THREADS=$THREADS CONNECTIONS=$CONNECTIONS WARMUP=$WARMUP${TARGETS:+ TARGETS=\"$TARGETS\"} bash bench/run.sh"
[[ -z ${GATEHOUSE_BIN:-} ]] && command_line=${command_line#GATEHOUSE_BIN= }
report_rc=0
python3 "$script_dir/run_report.py" "$tmp" "$RUNS" "$clk_tck" "$bin_kind" "$DURATION" "$THREADS" "$CONNECTIONS" \
    "$gw_log_problems" "$caddy_log_problems" "$command_line" "$apache_log_problems" || report_rc=$?
# Idle: once started and answering its first probe, before any sign-in or load.
idle_line="idle RSS after start-up:"
for name in memory sqlite sqlite0; do
    [[ -s $tmp/idle-rss-$name ]] && idle_line+=" $name $(awk '{printf "%.1f", $1 / 1024}' "$tmp/idle-rss-$name") MiB;"
done
printf '%s\n' "${idle_line%;}"
if ((STORM > 0)); then
    storm_line=$(python3 - "$tmp/storm.json" "${storm_before:-0}" "${storm_after:-0}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
refreshed = int(float(sys.argv[3]) - float(sys.argv[2]))
ok = sum(n for s, n in r["statuses"].items() if s.startswith("2"))
print(f"refresh storm: {r['count']} calls at once on an expiring credential: {refreshed} provider refresh(es), "
      f"{r['count'] - ok} non-2xx {r['statuses']}, p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms, max {r['max_ms']} ms")
print("ok" if refreshed == 1 and ok == r["count"] else "FAILED")
PY
)
    printf '%s\n' "${storm_line%$'\n'*}"
    [[ ${storm_line##*$'\n'} == ok ]] || { log "the refresh storm failed: expected exactly 1 refresh and no failures"; report_rc=1; }
fi
if ((gw_log_problems > 0)); then
    log "gateway logs, warning/error lines (first 20):"
    log_problem_lines "${gateway_logs[@]}" | head -20 >&2
fi
if ((caddy_log_problems > 0)); then
    log "Caddy log, error lines (first 20):"
    caddy_problem_lines | head -20 >&2
fi
if ((apache_log_problems > 0)); then
    log "Apache error log, error lines (first 20):"
    apache_problem_lines | head -20 >&2
fi
# The TLS rows: their own servers on their own ports (this run's servers are idle by now).
if ((TLS_ROWS > 0)); then
    echo
    GATEHOUSE_BIN="$BIN" DURATION="$DURATION" RUNS="$RUNS" THREADS="$THREADS" CONNECTIONS="$CONNECTIONS" \
        bash "$script_dir/tls.sh" || { log "bench/tls.sh failed"; report_rc=1; }
fi
if ((HTTPS_UPSTREAM_ROWS > 0)); then
    echo
    GATEHOUSE_BIN="$BIN" DURATION="$DURATION" RUNS="$RUNS" THREADS="$THREADS" CONNECTIONS="$CONNECTIONS" WARMUP="$WARMUP" \
        bash "$script_dir/https-upstream.sh" || { log "bench/https-upstream.sh failed"; report_rc=1; }
fi
exit "$report_rc"
