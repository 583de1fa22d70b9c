#!/usr/bin/env bash
# Release build of the `gatehouse` binary with the Swift runtime and Foundation linked in
# statically (`--static-swift-stdlib`), so the machine that runs it needs no Swift toolchain:
# only glibc, libstdc++, libsqlite3-0 and zlib1g (plus ca-certificates for TLS to providers).
#
#   scripts/build-release.sh [--strip] [--with-bench] [OUTPUT_DIR]      (OUTPUT_DIR defaults to .build/dist)
#
# --with-bench also builds gatehouse-bench the same way (bench/run.sh measures the binary as shipped).
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
with_bench=false
output=".build/dist"
while [ $# -gt 0 ]; do
    case "$1" in
        --strip) strip_binary=true ;;
        --with-bench) with_bench=true ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "build-release.sh: unknown option $1" >&2; exit 2 ;;
        *) output="$1" ;;
    esac
    shift
done

# Linked with the toolchain's lld, for three things that keep start-up memory down (idle RSS ~31 MiB
# instead of ~43; the pages are the binary's own):
#  - pack-relative-relocs (DT_RELR): the ~160,000 relative relocations of a position-independent
#    executable packed into ~30 KB instead of a 3.8 MB table that the loader reads page by page at
#    every start. Needs glibc >= 2.36 on the machine that runs it (Debian 12, Ubuntu 22.10+).
#  - no-export-dynamic: the static-stdlib link line exports every symbol (60,000) to the dynamic
#    symbol table, and every library symbol lookup at start-up then walks its hash chains. Nothing
#    looks symbols of this binary up by name (the Swift runtime finds its metadata through sections;
#    crash backtraces read the ELF symbol table, not the dynamic one).
#  - symbol-ordering-file: the functions that start-up and a request run, packed together in that
#    order (scripts/symbol-order.txt, made by scripts/symbol-order.sh; see there): the kernel maps
#    code around each page touched, and scattered start-up code kept ~23 MiB of it resident.
# The address-space layout stays randomized (PIE), unlike a -no-pie link.
flags=(-c release --static-swift-stdlib -Xswiftc -use-ld=lld
    -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic
    -Xlinker "--symbol-ordering-file=$PWD/scripts/symbol-order.txt" -Xlinker --no-warn-symbol-ordering)
swift build "${flags[@]}" --product gatehouse
if $with_bench; then swift build "${flags[@]}" --product gatehouse-bench; fi
bin_dir="$(swift build "${flags[@]}" --show-bin-path)"

mkdir -p "$output"
install -m 0755 "$bin_dir/gatehouse" "$output/gatehouse"
if $with_bench; then install -m 0755 "$bin_dir/gatehouse-bench" "$output/gatehouse-bench"; fi
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
