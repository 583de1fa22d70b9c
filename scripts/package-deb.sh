#!/usr/bin/env bash
# Debian package of the release build: OUTPUT_DIR/gatehouse_<version>_<arch>.deb.
#
#   scripts/package-deb.sh [--binary PATH] [OUTPUT_DIR]        (OUTPUT_DIR defaults to .build/dist)
#
# The binary is --binary PATH, else OUTPUT_DIR/gatehouse; when that is missing,
# scripts/build-release.sh OUTPUT_DIR builds it first (8-9 minutes on 2 cores). The package's
# version is the binary's own (`gatehouse --version`). Contents (sources in deploy/deb/):
#   /usr/bin/gatehouse                         the binary, stripped (as dh_strip does)
#   /lib/systemd/system/gatehouse.service      runs as the system user `gatehouse` (made by postinst),
#                                              state in /var/lib/gatehouse (StateDirectory)
#   /etc/gatehouse/gatehouse.yaml              conffile: SQLite in /var/lib/gatehouse, 127.0.0.1:8080
#   /etc/gatehouse/Providers/README            conffile: where provider files go
#   /etc/gatehouse/data -> /var/lib/gatehouse  where keys are generated on first start
#   /usr/share/doc/gatehouse/                  copyright (DEP-5, from LICENSE), changelog.gz, README.Debian,
#                                              examples (gatehouse.example.yaml, Providers/*.yaml)
#   /usr/share/man/man1/gatehouse.1.gz
#   /usr/share/lintian/overrides/gatehouse     the statically linked copies of libyaml and zlib (see there)
# Depends is computed from the binary's shared libraries by dpkg-shlibdeps (glibc >= 2.36 at least:
# the binary uses packed relocations, DT_RELR), plus adduser for postinst and ca-certificates: the
# gateway's outbound TLS (providers, https upstreams) trusts the system roots in /etc/ssl/certs, which
# no library of the binary pulls in (Tests/Package installs the package into a bare Debian 12 to see).
# Needs dpkg-dev (dpkg-shlibdeps) and binutils (strip); check the result with
# `lintian --fail-on error OUTPUT_DIR/gatehouse_<version>_amd64.deb` (scripts/test does).
# Maintainer: $DEBFULLNAME <$DEBEMAIL> when both are set.
set -euo pipefail
caller="$PWD"
cd "$(dirname "$0")/.."

binary=""
output=".build/dist"
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) [ $# -ge 2 ] || { echo "package-deb.sh: --binary needs a path" >&2; exit 2; }
                  binary="$2"; shift ;;
        --binary=*) binary="${1#--binary=}" ;;
        -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "package-deb.sh: unknown option $1" >&2; exit 2 ;;
        *) output="$1" ;;
    esac
    shift
done
say() { echo "package-deb.sh: $*" >&2; }
# Paths given on the command line are the caller's; the default is the repository's .build/dist.
absolute() { case "$1" in /*) echo "$1" ;; *) echo "$caller/$1" ;; esac; }
[ -z "$binary" ] || binary="$(absolute "$binary")"
[ "$output" = ".build/dist" ] || output="$(absolute "$output")"

for tool in dpkg-deb dpkg-shlibdeps strip gzip; do
    command -v "$tool" >/dev/null 2>&1 || { say "$tool is missing (apt-get install dpkg-dev binutils)"; exit 1; }
done

if [ -z "$binary" ]; then
    binary="$output/gatehouse"
    if [ ! -x "$binary" ]; then
        say "no release binary at $binary: building it (scripts/build-release.sh $output)"
        bash scripts/build-release.sh "$output"
    fi
fi
[ -x "$binary" ] || { say "not an executable: $binary"; exit 1; }
mkdir -p "$output"

# The version the binary reports: "gatehouse 0.9.0".
version_line="$("$binary" --version)"
version="${version_line#gatehouse }"
if ! [[ "$version" =~ ^[0-9][0-9A-Za-z.+~-]*$ ]] || [ "$version_line" = "$version" ]; then
    say "cannot read a version from \`$binary --version\`: $version_line"; exit 1
fi
arch="$(dpkg --print-architecture)"
package="gatehouse"
maintainer="Gatehouse maintainers <gatehouse@example.org>"
if [ -n "${DEBFULLNAME:-}" ] && [ -n "${DEBEMAIL:-}" ]; then maintainer="$DEBFULLNAME <$DEBEMAIL>"; fi
# Dates in the package: the commit's (reproducible), else now.
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

work="$(mktemp -d "${TMPDIR:-/tmp}/package-deb.XXXXXX")"
trap 'rm -rf "$work"' EXIT
umask 022
# The package's tree, where dpkg-shlibdeps expects it (debian/<package>, below).
root="$work/build/debian/gatehouse"
src="deploy/deb"

# ---------------------------------------------------------------- files
install -d "$root/usr/bin" "$root/lib/systemd/system" "$root/etc/gatehouse/Providers" \
    "$root/usr/share/doc/$package/examples/Providers" "$root/usr/share/man/man1" "$root/DEBIAN"
install -m 0755 "$binary" "$root/usr/bin/gatehouse"
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$root/usr/bin/gatehouse"
install -m 0644 "$src/gatehouse.service" "$root/lib/systemd/system/gatehouse.service"
install -m 0644 "$src/gatehouse.yaml" "$root/etc/gatehouse/gatehouse.yaml"
install -m 0644 "$src/Providers-README" "$root/etc/gatehouse/Providers/README"
# Without `keys:` the gateway generates them in data/ next to gatehouse.yaml (as the image does).
ln -s /var/lib/gatehouse "$root/etc/gatehouse/data"
gzip -9n <"$src/gatehouse.1" >"$root/usr/share/man/man1/gatehouse.1.gz"
chmod 0644 "$root/usr/share/man/man1/gatehouse.1.gz"
install -m 0644 "$src/README.Debian" "$root/usr/share/doc/$package/README.Debian"
install -d "$root/usr/share/lintian/overrides"
install -m 0644 "$src/lintian-overrides" "$root/usr/share/lintian/overrides/$package"
install -m 0644 gatehouse.example.yaml "$root/usr/share/doc/$package/examples/gatehouse.example.yaml"
install -m 0644 Providers/*.yaml "$root/usr/share/doc/$package/examples/Providers/"

# copyright: machine-readable (DEP-5); the license is Apache-2.0, whose text Debian ships in
# /usr/share/common-licenses (a full copy there is what lintian refuses).
if ! grep -q "Apache License" LICENSE || ! grep -q "Version 2.0, January 2004" LICENSE; then
    say "LICENSE is not the Apache License 2.0: update the copyright file this script writes"; exit 1
fi
cat >"$root/usr/share/doc/$package/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: Gatehouse
Upstream-Contact: $maintainer

Files: *
Copyright: $(date -u -d "@$epoch" +%Y) Gatehouse contributors
License: Apache-2.0

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License");
 you may not use this file except in compliance with the License.
 You may obtain a copy of the License at
 .
     http://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an "AS IS" BASIS,
 WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 See the License for the specific language governing permissions and
 limitations under the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0
 can be found in "/usr/share/common-licenses/Apache-2.0".
EOF
# The version has no Debian revision (it is the binary's own): a native package's changelog.gz.
cat >"$work/changelog" <<EOF
$package ($version) unstable; urgency=medium

  * Gatehouse $version, built from commit $commit.

 -- $maintainer  $(date -u -R -d "@$epoch")
EOF
gzip -9n <"$work/changelog" >"$root/usr/share/doc/$package/changelog.gz"
chmod 0644 "$root/usr/share/doc/$package/changelog.gz"

# ---------------------------------------------------------------- Depends
# dpkg-shlibdeps maps each NEEDED library to its package and the symbol versions used to a
# minimum version; it wants a debian/control in the directory it runs in.
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$package" "$package" >"$work/build/debian/control"
(cd "$work/build" && dpkg-shlibdeps -O -e "$root/usr/bin/gatehouse") >"$work/substvars"
shlibs="$(sed -n 's/^shlibs:Depends=//p' "$work/substvars")"
[ -n "$shlibs" ] || { say "dpkg-shlibdeps found no dependencies"; cat "$work/substvars" >&2; exit 1; }
# DT_RELR needs glibc 2.36 even where no symbol version says so.
libc_minimum="$(sed -n 's/.*libc6 (>= \([^)]*\)).*/\1/p' <<<"$shlibs")"
if [ -z "$libc_minimum" ] || dpkg --compare-versions "$libc_minimum" lt 2.36; then
    shlibs="$(sed -E 's/(^|, )libc6( \([^)]*\))?(,|$)/\1libc6 (>= 2.36)\3/' <<<"$shlibs")"
fi
# Run-time needs that no NEEDED entry names: adduser (postinst) and ca-certificates (the trust store).
depends="adduser, ca-certificates, $shlibs"

# ---------------------------------------------------------------- control
installed_size="$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
cat >"$root/DEBIAN/control" <<EOF
Package: $package
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: $depends
Section: net
Priority: optional
Description: authentication gateway in front of web applications and APIs
 Gatehouse signs users in with OAuth 2.0, OpenID Connect and other identity
 providers, keeps their sessions, and forwards authenticated requests to a
 backend with signed identity headers, or answers forward-authentication
 requests of a reverse proxy.
 .
 This package runs one instance under systemd (gatehouse.service) as the
 system user gatehouse, configured by /etc/gatehouse/gatehouse.yaml, with
 its SQLite database and generated keys in /var/lib/gatehouse.
EOF
printf '/etc/gatehouse/gatehouse.yaml\n/etc/gatehouse/Providers/README\n' >"$root/DEBIAN/conffiles"
for script in postinst prerm postrm; do
    install -m 0755 "$src/$script" "$root/DEBIAN/$script"
done
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"

# Every file's time is the commit's (reproducible).
find "$root" -exec touch --no-dereference -d "@$epoch" {} +
deb="$output/${package}_${version}_${arch}.deb"
SOURCE_DATE_EPOCH="$epoch" dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "built $deb ($(du -h "$deb" | cut -f1)): $package $version, Depends: $depends"
