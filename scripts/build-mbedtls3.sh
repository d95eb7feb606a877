#!/usr/bin/env bash
# Builds mbedTLS 3.6 (the LTS branch nixpkgs ships) from Debian trixie's
# source package into a private, cached prefix, so the nxdns suite can run
# against 3.6 as well as bookworm's system 2.28:
#
#   prefix=$(scripts/build-mbedtls3.sh)
#   cmake -S . -B build-mbedtls3 -DMBEDTLS_ROOT="$prefix"
#
# Usage: scripts/build-mbedtls3.sh [--refresh] [--threading] [--fast-ecc] [PREFIX]
#   PREFIX       install prefix (default $NXDNS_MBEDTLS3_PREFIX, else
#                /var/cache/nxdns/mbedtls-3.6, with --fast-ecc
#                /var/cache/nxdns/mbedtls-3.6-fast-ecc)
#   --refresh    re-read trixie's source index (network) and rebuild if a
#                newer 3.6 source version is available
#   --threading  also enable MBEDTLS_THREADING_C/_PTHREAD, as nixpkgs does
#                (default: upstream's stock config, which is what Debian's
#                source tree contains before debian/rules edits it)
#   --fast-ecc   apply scripts/mbedtls-fast-ecc.sh (Everest's X25519; the
#                same edits as the Nix override nix/mbedtls.nix)
# Environment:
#   NXDNS_MBEDTLS3_PREFIX   default prefix
#   NXDNS_MBEDTLS3_VERSION  exact Debian source version to build (pin)
#   NXDNS_CACHE_DIR         where the private apt state and build tree live
#                           (default: the prefix's parent directory)
#   NXDNS_JOBS              parallel compile jobs (default 2)
#
# Fast path: when PREFIX holds a stamp for the same build options (and the
# pinned version, if any), nothing is fetched or built. Without --refresh
# this check is offline, so CI with a cached prefix never touches the network.
#
# Only the prefix is printed on stdout (as its last and only line); progress
# goes to stderr. Never installs any trixie binary package: the trixie
# deb-src entry lives in a private apt configuration (below) that the
# system's apt never reads.
set -euo pipefail

refresh=0
threading=0
fast_ecc=0
prefix=
for arg in "$@"; do
  case "$arg" in
    --refresh) refresh=1 ;;
    --threading) threading=1 ;;
    --fast-ecc) fast_ecc=1 ;;
    -h|--help) sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build-mbedtls3: unknown option: $arg" >&2; exit 2 ;;
    *) prefix=$arg ;;
  esac
done
# Its own default prefix: a cached stock prefix (CI's) and a fast-ecc one
# never replace each other back and forth.
if [[ -z "$prefix" ]]; then
  prefix=${NXDNS_MBEDTLS3_PREFIX:-/var/cache/nxdns/mbedtls-3.6}
  (( fast_ecc )) && prefix="$prefix-fast-ecc"
fi
[[ "$prefix" == /* ]] || prefix="$PWD/$prefix"
prefix=${prefix%/}
cache=${NXDNS_CACHE_DIR:-${prefix%/*}}
jobs=${NXDNS_JOBS:-2}
pin=${NXDNS_MBEDTLS3_VERSION:-}

say() { echo "build-mbedtls3: $*" >&2; }
die() { say "error: $*"; exit 1; }

# The options that shape the installed files. Stored in the stamp so that
# changing any of them here rebuilds the cached prefix instead of silently
# reusing a prefix built differently.
cmake_opts=(
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_INSTALL_PREFIX="$prefix"
  # GNUInstallDirs would pick lib64 or lib/<multiarch> on some hosts;
  # FindMbedTLS.cmake and the rpath below expect plain lib/.
  -DCMAKE_INSTALL_LIBDIR=lib
  # libmbedtls.so needs libmbedx509/libmbedcrypto of the SAME version; the
  # system's 2.28 ones have other sonames, so resolve them next to itself.
  -DCMAKE_INSTALL_RPATH=\$ORIGIN
  -DENABLE_TESTING=OFF
  -DENABLE_PROGRAMS=OFF
  -DUSE_SHARED_MBEDTLS_LIBRARY=ON
  # Static copies would double the compile time and nothing links them.
  -DUSE_STATIC_MBEDTLS_LIBRARY=OFF
  # Release tarballs ship the generated sources; regenerating needs
  # python3-jinja2 and would not change them.
  -DGEN_FILES=OFF
  # Upstream's -Werror is tuned for their CI compilers, not for ours.
  -DMBEDTLS_FATAL_WARNINGS=OFF
)
# The edit list's content, not just the flag, goes into the stamp: a
# changed list rebuilds the prefix.
fast_ecc_script="$(cd "$(dirname "$0")" && pwd)/mbedtls-fast-ecc.sh"
options="threading=$threading cmake=${cmake_opts[*]}"
if (( fast_ecc )); then
  [[ -r "$fast_ecc_script" ]] || die "$fast_ecc_script missing"
  options="fast_ecc=$(sha256sum "$fast_ecc_script" | cut -c1-16) $options"
fi
stamp="$prefix/.nxdns-build-stamp"

stamp_field() { sed -n "s/^$1=//p" "$stamp" 2>/dev/null | head -n 1; }

stamp_matches() {  # $1: wanted version, empty = any
  [[ -f "$stamp" ]] || return 1
  [[ "$(stamp_field options)" == "$options" ]] || return 1
  [[ -z "$1" || "$(stamp_field version)" == "$1" ]]
}

done_with() { say "$1"; echo "$prefix"; exit 0; }

if (( !refresh )) && stamp_matches "$pin"; then
  done_with "cached: mbedtls $(stamp_field version) in $prefix"
fi

for tool in apt-get apt-cache dpkg-source cmake make cc flock; do
  command -v "$tool" >/dev/null || die "'$tool' not found (run scripts/install-deps.sh as root)"
done
(( threading || fast_ecc )) && { command -v python3 >/dev/null || die "--threading and --fast-ecc need python3"; }

if ! mkdir -p "$cache" "${prefix%/*}" 2>/dev/null || [[ ! -w "$cache" || ! -w "${prefix%/*}" ]]; then
  die "cannot write to $cache or ${prefix%/*} (run as root or pass a writable PREFIX)"
fi

# Two CI jobs sharing a cache must not build (or update the shared apt
# state) at the same time.
exec 9>"$cache/.build-mbedtls3.lock"
flock 9
# Another run may have finished the build while we waited for the lock.
if (( !refresh )) && stamp_matches "$pin"; then
  done_with "cached: mbedtls $(stamp_field version) in $prefix"
fi

# The prefix is replaced wholesale below; refuse to do that to a directory
# this script did not create (e.g. a mistyped PREFIX=/usr/local).
if [[ -e "$prefix" && ! -f "$stamp" ]] && [[ -n "$(ls -A "$prefix" 2>/dev/null)" ]]; then
  die "$prefix exists, is not empty and has no $stamp; refusing to replace it"
fi

# --- private apt configuration: trixie deb-src only -----------------------
# A file in /etc/apt/sources.list.d would also work (deb-src never offers
# binaries), but it would make every system `apt-get update` download
# trixie's ~10 MB Sources index and make a plain `apt-get source X` on this
# host resolve to trixie. A private apt state keeps the system untouched.
aptdir="$cache/apt-trixie-src"
mkdir -p "$aptdir/sources.d" "$aptdir/prefs.d" "$aptdir/lists/partial" \
         "$aptdir/cache/archives/partial"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
# bookworm's debian-archive-keyring (>= 2023.3+deb12u1) carries the trixie
# archive and security keys; older keyrings fail in `apt-get update` below
# with NO_PUBKEY, which is reported verbatim.
[[ -r "$keyring" ]] || die "$keyring missing (apt-get install debian-archive-keyring)"
cat >"$aptdir/trixie-src.sources" <<EOF
# Written by nxdns scripts/build-mbedtls3.sh; read only by that script.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: $keyring

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: trixie-security
Components: main
Signed-By: $keyring
EOF
apt_opts=(
  -o Dir::Etc::SourceList="$aptdir/trixie-src.sources"
  -o Dir::Etc::SourceParts="$aptdir/sources.d"
  -o Dir::Etc::Preferences=/dev/null
  -o Dir::Etc::PreferencesParts="$aptdir/prefs.d"
  -o Dir::State::Lists="$aptdir/lists"
  -o Dir::Cache="$aptdir/cache"
  # Files are fetched into our own directory; dropping to _apt only
  # produces "unsandboxed" warnings.
  -o APT::Sandbox::User=root
  -o Acquire::Languages=none
)
(( EUID == 0 )) || apt_opts=("${apt_opts[@]/APT::Sandbox::User=root/APT::Sandbox::User=$(id -un)}")

log="$cache/build-mbedtls3.log"
: >"$log"
run() {  # run a step quietly; on failure show the command and its output
  if ! "$@" >>"$log" 2>&1; then
    say "command failed: $*"
    tail -n 40 "$log" >&2
    die "full log: $log"
  fi
}

say "fetching trixie source index"
run apt-get -q "${apt_opts[@]}" update

# Highest mbedtls source version across trixie and trixie-security.
want=$pin
if [[ -z "$want" ]]; then
  while read -r v; do
    if [[ -z "$want" ]] || dpkg --compare-versions "$v" gt "$want"; then want=$v; fi
  done < <(apt-cache "${apt_opts[@]}" showsrc --only-source mbedtls 2>>"$log" |
           sed -n 's/^Version: //p')
  [[ -n "$want" ]] || die "no mbedtls source package in trixie (see $log)"
fi
[[ "${want#*:}" == 3.6.* ]] ||
  die "trixie offers mbedtls $want, not a 3.6.x; pin one with NXDNS_MBEDTLS3_VERSION"

if stamp_matches "$want"; then
  done_with "up to date: mbedtls $want in $prefix"
fi

t0=$(date +%s)
work=$(mktemp -d "$cache/build-mbedtls3.XXXXXX")
trap 'rm -rf "$work"' EXIT
say "downloading mbedtls $want source"
(cd "$work" && run apt-get -q "${apt_opts[@]}" source --download-only "mbedtls=$want")
# Debian's quilt patches (a GCC 14 build fix, no 3rdparty/ subdir in CMake)
# are applied; its config edits (threading, CMAC, DTLS-SRTP) happen in
# debian/rules, which we do not run, so the config below is upstream's.
# dpkg-source warns that it cannot verify the .dsc's maintainer signature
# (that needs debian-keyring); integrity already comes from apt, which
# checked every file's hash against the archive-signed Sources index.
run dpkg-source -x "$work"/mbedtls_*.dsc "$work/src"
src="$work/src"

config_h="$src/include/mbedtls/mbedtls_config.h"
# nxdns's DoT needs TLS 1.3; 3.6 enables it by default. Check rather than
# trust it, because a silently missing TLS 1.3 would only show up as
# handshake differences in the 3.6 test run.
grep -q '^#define MBEDTLS_SSL_PROTO_TLS1_3$' "$config_h" ||
  die "MBEDTLS_SSL_PROTO_TLS1_3 is not enabled in $config_h"
if (( threading )); then
  run python3 "$src/scripts/config.py" -f "$config_h" set MBEDTLS_THREADING_C
  run python3 "$src/scripts/config.py" -f "$config_h" set MBEDTLS_THREADING_PTHREAD
fi
if (( fast_ecc )); then
  run bash "$fast_ecc_script" "$src"
fi

say "building mbedtls $want (-j$jobs)"
run cmake -S "$src" -B "$work/build" "${cmake_opts[@]}"
run cmake --build "$work/build" -j"$jobs"
# DESTDIR staging keeps the old prefix usable until the new one is complete,
# and keeps the absolute prefix inside the installed pkg-config/CMake files.
run env DESTDIR="$work/stage" cmake --install "$work/build"
staged="$work/stage$prefix"

# Smoke test: the staged headers and libraries agree on 3.6 and TLS 1.3.
cat >"$work/smoke.c" <<'EOF'
#include <mbedtls/build_info.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <stdio.h>
#include <string.h>
#if !defined(MBEDTLS_SSL_PROTO_TLS1_3)
#error "TLS 1.3 not enabled"
#endif
int main(void) {
    char v[32];
    mbedtls_version_get_string(v);
    mbedtls_ssl_config conf;
    mbedtls_ssl_config_init(&conf);
    mbedtls_ssl_config_free(&conf);
    printf("%s\n", v);
    return strcmp(v, MBEDTLS_VERSION_STRING) != 0;
}
EOF
run cc -o "$work/smoke" "$work/smoke.c" -I"$staged/include" -L"$staged/lib" \
  -Wl,-rpath,"$staged/lib" -lmbedtls -lmbedx509 -lmbedcrypto
libver=$("$work/smoke" 2>>"$log") || die "smoke test failed (see $log)"
if (( fast_ecc )); then
  grep -q '^#define MBEDTLS_ECDH_VARIANT_EVEREST_ENABLED$' "$staged/include/mbedtls/mbedtls_config.h" ||
    die "--fast-ecc: the installed mbedtls_config.h lacks MBEDTLS_ECDH_VARIANT_EVEREST_ENABLED"
fi
[[ "$libver" == 3.6.* ]] || die "built library reports version '$libver', expected 3.6.x"

{
  echo "version=$want"
  echo "options=$options"
  echo "library=$libver"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$staged/.nxdns-build-stamp"

# Swap in the new prefix; the old one is removed only once the new one is
# in place, and never anything but the prefix itself.
if [[ -e "$prefix" ]]; then
  mv "$prefix" "$work/old-prefix"
fi
mv "$staged" "$prefix"
say "built mbedtls $want (library $libver) in $(( $(date +%s) - t0 ))s," \
    "$(du -sh "$prefix" | cut -f1) in $prefix"
echo "$prefix"
