#!/usr/bin/env bash
# Release build of the `gatehouse` binary with the Swift runtime and Foundation linked in
# statically (`--static-swift-stdlib`), so the machine that runs it needs no Swift toolchain:
# only glibc, libstdc++, libsqlite3-0 and zlib1g (plus ca-certificates for TLS to providers).
#
#   scripts/build-release.sh [--strip] [OUTPUT_DIR]      (OUTPUT_DIR defaults to .build/dist)
#
# The builder stage of deploy/Dockerfile runs this script; run it the same way on a build host
# to get a binary for the systemd unit (deploy/gatehouse.service). Build requirements (Debian):
# a Swift 6 toolchain and libcurl4-openssl-dev zlib1g-dev libsqlite3-dev (the static
# Foundation link line names libcurl even though Gatehouse does not use URLSession).
# A clean release build takes about 8-9 minutes on 2 cores. CI (.ci/run) runs this script, then
# scripts/check-deploy.sh starts and probes the binary it built with each deployment's configuration.
set -euo pipefail
cd "$(dirname "$0")/.."

strip_binary=false
output=".build/dist"
while [ $# -gt 0 ]; do
    case "$1" in
        --strip) strip_binary=true ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "build-release.sh: unknown option $1" >&2; exit 2 ;;
        *) output="$1" ;;
    esac
    shift
done

flags=(-c release --static-swift-stdlib)
swift build "${flags[@]}" --product gatehouse
bin_dir="$(swift build "${flags[@]}" --show-bin-path)"

mkdir -p "$output"
install -m 0755 "$bin_dir/gatehouse" "$output/gatehouse"
if $strip_binary; then
    # Drops the symbol tables (127 MB -> about 31 MB). Crash backtraces then show addresses
    # only; keep an unstripped copy next to the build if you symbolicate them.
    strip "$output/gatehouse"
fi

# Show what the binary still needs from the system: the runtime image must provide it.
echo "built $output/gatehouse ($(du -h "$output/gatehouse" | cut -f1)); shared libraries:"
if command -v ldd >/dev/null 2>&1; then
    ldd "$output/gatehouse" | sed 's/^/  /'
fi
"$output/gatehouse" --help >/dev/null
