#!/usr/bin/env bash
# Installs every Debian 12 (bookworm) package that building and testing nxdns
# needs. Idempotent: on a machine that already has everything it does no apt
# work at all (no update, no lock), so CI can call it unconditionally.
#
# Usage: sudo scripts/install-deps.sh [--list] [--no-update] [--cross] [--bench]
#   --list       print the package list and exit (no root needed)
#   --no-update  never run apt-get update (e.g. offline mirror already fresh)
#   --bench      also install the peer resolvers bench/run.sh compares
#                nxdns with (unbound, stubby, knot-resolver), dnsmasq for
#                bench/blocklist.sh, and their tools (BENCH_PKGS)
#   --cross      also install the aarch64 cross toolchain, qemu-user and the
#                arm64 libraries (adds dpkg arch arm64; see cross_packages)
# Environment:
#   NXDNS_APT_MAX_AGE_H  package lists younger than this many hours are
#                        trusted without `apt-get update` (default 6)
#
# Exit status: 0 when everything is installed, non-zero otherwise.
set -euo pipefail

# Grouped so a reader can see why each package is here; all groups are
# installed by default because the test suite uses every one of them.
readonly BUILD_PKGS=(build-essential cmake pkg-config git ca-certificates)
readonly LIB_PKGS=(libevent-dev libmbedtls-dev libcurl4-openssl-dev libyaml-cpp-dev
                   libmicrohttpd-dev)
readonly UNIT_TEST_PKGS=(cpputest libcmocka-dev)
# dig and kdig drive the end-to-end tests; promtool lints the /metrics output.
# bookworm has no smaller package than `prometheus` that ships promtool.
# nghttp2-proxy gives nghttpx: the real HTTP/2 front of the DoH fixture;
# dnsperf drives the 10,000- and 100,000-query leak checks.
# curl reads /metrics and drives the cache flush API in the shell tests;
# unbound (its daemon, never its system service: see policy-rc.d below) is
# the DoT upstream of the EDNS interop test (tests/integration/
# edns_interop_unbound.sh).
readonly E2E_PKGS=(dnsutils knot-dnsutils prometheus iproute2 procps python3 nghttp2-proxy dnsperf curl unbound)
# clang's libFuzzer runtime (libclang_rt.fuzzer-*.a) lives in
# libclang-rt-14-dev, which clang-14 only Recommends; with
# --no-install-recommends it must be named or -fsanitize=fuzzer fails to link.
readonly FUZZ_PKGS=(clang-14 libclang-rt-14-dev)
# The newest clang in bookworm builds the tree with warnings as errors
# (scripts/test.sh, stage clang), so diagnostics that newer compilers add
# fail here before they fail on a developer's machine or in nixpkgs. ccache
# keeps that second full build cheap (the cross build uses it too).
readonly CLANG_PKGS=(clang-16 ccache)
# nix-instantiate/nix evaluate the flake, the NixOS module and the Pi
# profiles; mypy and pyflakes check the VM tests' Python scripts as the NixOS
# test driver does (scripts/nix-checks.sh).
readonly LINT_PKGS=(nix-bin python3-mypy python3-pyflakes)
# The status page's browser tests (tests/browser/run.sh): headless Chromium,
# driven by playwright-core, which npm installs from the lockfile under
# tests/browser/ (never a browser download: Debian's chromium is used).
readonly BROWSER_PKGS=(chromium nodejs npm)
# bench/run.sh only (never CI): the established forwarders it runs beside
# nxdns on the same workload, and its measuring tools (unbound is also in
# E2E_PKGS; --list skips the repeat). dnsmasq-base is the dnsmasq binary
# alone (no system service) that bench/blocklist.sh loads a list into.
readonly BENCH_PKGS=(unbound stubby knot-resolver dnsmasq-base dnsperf valgrind iproute2 procps)

# The aarch64 cross build (scripts/aarch64.sh). Only the :arm64 RUNTIME
# libraries come from apt: an :arm64 copy of a package that a list above also
# names would make that name ambiguous to is_installed (dpkg-query reports
# one status per architecture), and libevent-dev/libyaml-cpp-dev cannot be
# installed for two architectures at all. scripts/aarch64.sh unpacks the
# arm64 -dev files (.so links, .pc, CMake package) of those into a private
# prefix instead. So never list here a package named in the groups above.
# libcpputest-dev and libgnutls28-dev (whose gnutls.pc libmicrohttpd.pc
# requires) are Multi-Arch: same and named nowhere else: plain :arm64 installs.
# libc6/libstdc++6:arm64 give qemu-user the target's dynamic loader
# (/lib/ld-linux-aarch64.so.1), so the tests run without `qemu -L` (mixing
# the -cross sysroot's glibc with libc6:arm64 hangs at the first thread).
# ccache (CLANG_PKGS) serves the cross build too.
cross_packages() {
  printf '%s\n' g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user-static \
    libc6:arm64 libstdc++6:arm64 \
    libmbedcrypto7:arm64 libmbedx509-1:arm64 libmbedtls14:arm64 \
    libcurl4:arm64 libmicrohttpd12:arm64 libgnutls28-dev:arm64 \
    libcmocka0:arm64 libcpputest-dev:arm64 \
    libevent-2.1-7:arm64 libevent-core-2.1-7:arm64 libevent-pthreads-2.1-7:arm64 \
    libyaml-cpp0.7:arm64
}
# Runs after the regular update check: a freshly added architecture has no
# package lists yet, so it forces one update of its own, even under
# --no-update (without arm64 lists nothing :arm64 can be installed).
enable_cross_arch() {
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "install-deps: dpkg --add-architecture arm64"
    dpkg --add-architecture arm64
  fi
  if ! compgen -G '/var/lib/apt/lists/*_binary-arm64_Packages*' >/dev/null; then
    apt_update
    updated=1
  fi
}

max_age_h=${NXDNS_APT_MAX_AGE_H:-6}
do_update=1
want_cross=0
want_bench=0
list_only=0

for arg in "$@"; do
  case "$arg" in
    --list) list_only=1 ;;
    --no-update) do_update=0 ;;
    --cross) want_cross=1 ;;
    --bench) want_bench=1 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-deps: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

packages=("${BUILD_PKGS[@]}" "${LIB_PKGS[@]}" "${UNIT_TEST_PKGS[@]}" "${E2E_PKGS[@]}"
          "${FUZZ_PKGS[@]}" "${CLANG_PKGS[@]}" "${LINT_PKGS[@]}" "${BROWSER_PKGS[@]}")
if (( want_cross )); then
  mapfile -t cross < <(cross_packages)
  if (( ${#cross[@]} == 0 )); then
    echo "install-deps: --cross: no cross packages defined yet (fill in cross_packages in $0)" >&2
    exit 2
  fi
  packages+=("${cross[@]}")
fi
if (( want_bench )); then
  # Skip names a default group already holds, so --list stays duplicate-free.
  for p in "${BENCH_PKGS[@]}"; do
    [[ " ${packages[*]} " == *" $p "* ]] || packages+=("$p")
  done
fi

if (( list_only )); then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

NATIVE_ARCH=$(dpkg --print-architecture)
is_installed() {
  # Status-Status is "installed" only for fully configured packages; a
  # half-installed or config-files-only package must be (re)installed.
  # With arm64 enabled a name can match one package per architecture: an
  # unqualified name means the native one (or an Architecture: all package).
  local name=${1%%:*} want=$NATIVE_ARCH
  [[ "$1" == *:* ]] && want=${1#*:}
  dpkg-query -W -f='${db:Status-Status} ${Architecture}\n' "$name" 2>/dev/null |
    grep -qE "^installed ($want|all)\$" && return 0
  # Or an installed package provides it, as apt would accept: a nodejs
  # build that bundles npm (and Conflicts with Debian's npm) provides npm.
  # Native names only: an :arm64 name must be that very package.
  [[ "$1" != *:* ]] || return 1
  # grep reads everything (no -q): under pipefail, a grep that quits at its
  # first match leaves dpkg-query to die of SIGPIPE and fails the pipeline.
  dpkg-query -W -f='${db:Status-Status} ${Provides}\n' 2>/dev/null |
    grep -E "^installed .*(^| |,)$name( |,|\$)" >/dev/null
}

missing=()
for p in "${packages[@]}"; do
  is_installed "$p" || missing+=("$p")
done

if (( ${#missing[@]} == 0 )); then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

if (( EUID != 0 )); then
  echo "install-deps: must run as root to install: ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp /tmp/nxdns-install-deps.XXXXXX.log)
created_policy=0
cleanup() {
  # Remove only the policy-rc.d this script created, never a pre-existing one.
  if (( created_policy )); then rm -f /usr/sbin/policy-rc.d; fi
}
trap cleanup EXIT

run_apt() {
  if ! apt-get -qq -o Dpkg::Use-Pty=0 "$@" >>"$log" 2>&1; then
    echo "install-deps: 'apt-get $*' failed; last lines of $log:" >&2
    tail -n 40 "$log" >&2
    return 1
  fi
}

# Outside /var/lib/apt/lists: apt-get update deletes unknown files there.
readonly update_stamp=/var/cache/nxdns/apt-update.stamp
lists_fresh() {
  # apt sets downloaded index files' mtimes to the server's Last-Modified,
  # so their age says nothing about when we last updated; use our own stamp.
  compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null || return 1
  [[ -e "$update_stamp" ]] || return 1
  [[ -z "$(find "$update_stamp" -mmin +"$((max_age_h * 60))" 2>/dev/null)" ]]
}

apt_update() {
  echo "install-deps: apt-get update"
  run_apt update
  mkdir -p "${update_stamp%/*}"
  touch "$update_stamp"
}

updated=0
if (( do_update )) && ! lists_fresh; then
  apt_update
  updated=1
fi

if (( want_cross )); then enable_cross_arch; fi

# Installing `prometheus` would start a Prometheus server (listening on all
# interfaces) on systemd hosts; we only want promtool, so block service starts
# for the duration of the install.
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod 0755 /usr/sbin/policy-rc.d
  created_policy=1
fi

echo "install-deps: installing ${missing[*]}"
install_cmd=(install -y --no-install-recommends "${missing[@]}")
if ! run_apt "${install_cmd[@]}"; then
  # Stale lists make apt ask for files the mirror no longer has (404);
  # one refresh and retry fixes that without hiding real failures.
  if (( updated || !do_update )); then exit 1; fi
  echo "install-deps: retrying after apt-get update" >&2
  apt_update
  run_apt "${install_cmd[@]}"
fi

# Likewise unbound: bench/run.sh starts its own instance on a loopback port;
# a system one would hold port 53 and send root-hint queries off the machine.
if [[ " ${missing[*]} " == *" unbound "* && -d /run/systemd/system ]]; then
  systemctl disable --now unbound.service unbound-resolvconf.service >>"$log" 2>&1 || true
  echo "install-deps: disabled unbound.service (bench/run.sh runs its own)"
fi

# And Knot Resolver: the bench starts its own kresd on a loopback port.
if [[ " ${missing[*]} " == *" knot-resolver "* && -d /run/systemd/system ]]; then
  systemctl disable --now kresd@1.service kresd.target kres-cache-gc.service >>"$log" 2>&1 || true
  echo "install-deps: disabled kresd (bench/run.sh runs its own)"
fi

# Keep a freshly installed Prometheus from being started at the next boot.
if [[ " ${missing[*]} " == *" prometheus "* && -d /run/systemd/system ]]; then
  systemctl disable --now prometheus.service >>"$log" 2>&1 || true
  echo "install-deps: disabled prometheus.service (only promtool is needed)"
fi

still_missing=()
for p in "${missing[@]}"; do
  is_installed "$p" || still_missing+=("$p")
done
if (( ${#still_missing[@]} )); then
  echo "install-deps: still not installed: ${still_missing[*]} (log: $log)" >&2
  exit 1
fi
rm -f "$log"
echo "install-deps: done (${#missing[@]} installed)"
