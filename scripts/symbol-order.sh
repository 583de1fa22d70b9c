#!/usr/bin/env bash
# Regenerates scripts/symbol-order.txt: the functions a release gateway runs while it starts, answers
# its probes, signs a user in and relays API calls, in the order they first run. build-release.sh hands
# the file to the linker (lld --symbol-ordering-file), which places those functions next to each other.
#
# Why: the kernel maps a binary's code in 64 KiB windows around each page it faults in. Unordered, the
# ~9,000 functions of start-up lie scattered over 37 MB of code, and an idle gateway kept ~23 MiB of
# it resident; packed together, a few MiB (idle RSS 39 -> 29 MiB). It also keeps the request path's
# code together. A stale file costs nothing but memory: names that no longer exist are skipped, and new
# functions are placed as if there were no file. Regenerate it after larger changes (CI bounds the idle
# RSS, see .ci/run).
#
#   scripts/symbol-order.sh [BINARY]        (BINARY defaults to .build/dist/gatehouse)
#
# Needs valgrind (Debian: apt-get install valgrind) and python3; runs the binary under callgrind
# (slow: about a minute), in a temporary directory, on loopback ports only.
set -euo pipefail
cd "$(dirname "$0")/.."

binary=${1:-.build/dist/gatehouse}
[ -x "$binary" ] || { echo "symbol-order.sh: no binary at $binary (run scripts/build-release.sh first)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "symbol-order.sh: valgrind is not installed" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/symbol-order.XXXXXX")
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# Valgrind cannot read the DWARF 5 of current toolchains; the symbol table is all it needs.
strip --strip-debug -o "$work/gatehouse" "$binary"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_ready() { # url pid
    for _ in $(seq 240); do
        curl -s -o /dev/null -m 2 "$1" && return 0
        kill -0 "$2" 2>/dev/null || { echo "symbol-order.sh: the gateway exited" >&2; return 1; }
        sleep 0.5
    done
    echo "symbol-order.sh: $1 did not answer" >&2
    return 1
}
stop() { # pid: SIGINT, and wait for callgrind to write its file
    kill -INT "$1"
    wait "$1" 2>/dev/null || true
}

# 1. `gatehouse serve` with the repository's configuration (SQLite, the shipped provider files): start-up,
#    the probes, refused requests.
mkdir -p "$work/serve"
cp -r Providers "$work/serve/"
port=$(free_port)
(cd "$work/serve" && SPID_CLIENT_ID=order SPID_CLIENT_SECRET=order exec valgrind --tool=callgrind --demangle=no \
    --callgrind-out-file="$work/serve.out" "$work/gatehouse" serve --listen "127.0.0.1:$port" >"$work/serve.log" 2>&1) &
pids+=($!)
wait_ready "http://127.0.0.1:$port/readyz" "${pids[0]}"
for path in /healthz /readyz /v1/providers /v1/session /v1/api/x /metrics; do
    curl -s -o /dev/null "http://127.0.0.1:$port$path"
done
stop "${pids[0]}"

# 2. `gatehouse demo`: a sign-in through the stand-in provider, then calls relayed to the echo backend.
port=$(free_port)
(cd "$work" && exec valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/demo.out" \
    "$work/gatehouse" demo --listen "127.0.0.1:$port" --no-access-log >"$work/demo.log" 2>&1) &
pids+=($!)
wait_ready "http://127.0.0.1:$port/healthz" "${pids[1]}"
token=$(python3 bench/login.py "http://127.0.0.1:$port")
for _ in $(seq 20); do
    curl -s -o /dev/null -H "Authorization: Bearer $token" "http://127.0.0.1:$port/v1/api/order"
done
curl -s -o /dev/null -H "Authorization: Bearer $token" "http://127.0.0.1:$port/v1/session"
stop "${pids[1]}"

python3 - "$work/serve.out" "$work/demo.out" "$work/gatehouse" >scripts/symbol-order.txt <<'PYTHON'
import re, sys

*outputs, binary = sys.argv[1:]
order, seen = [], set()
for path in outputs:
    objects, functions, current_object = {}, {}, None
    with open(path) as profile:
        for line in profile:
            match = re.match(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if not match:
                continue
            kind, key, name = match.groups()
            table = objects if kind.endswith("ob") else functions
            if name:
                table[key] = name
            if kind == "ob":
                current_object = objects.get(key)
            elif kind == "fn" and current_object == binary:
                # callgrind marks a second function of the same name with 'N; the symbol is the name.
                symbol = re.sub(r"'\d+$", "", functions.get(key, ""))
                if symbol and not symbol.startswith("(") and symbol not in seen:
                    seen.add(symbol)
                    order.append(symbol)
if len(order) < 1000:
    sys.exit(f"symbol-order.sh: only {len(order)} functions in the profiles; is {binary} stripped?")
print("\n".join(order))
PYTHON
echo "wrote scripts/symbol-order.txt: $(wc -l <scripts/symbol-order.txt) functions" >&2
