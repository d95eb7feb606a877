#!/usr/bin/env bash
# Burst benchmark: cold and warm 30-name bursts through nxdns against one DoT
# upstream behind a simulated 40 ms round trip, for each mbedTLS line and for
# a concurrent and a one-at-a-time upstream. Prints the median, best and worst
# of RUNS runs. Everything runs on 127.0.0.0/8.
#
#   bash bench/burst.sh [RUNS]            (default 5)
# Build trees (built here when missing):
#   NXDNS_BENCH_228=build-ci/main       mbedTLS 2.28 (Debian)
#   NXDNS_BENCH_36=build-ci/mbedtls3    mbedTLS 3.6 (scripts/build-mbedtls3.sh)
# Targets to beat (docs/performance.md, "Targets"): warm <= 1.05, cold <= 3.0 with TLS 1.3; the best
# established forwarder measured on this workload: 1.06 warm, 3.16 cold.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
T228=${NXDNS_BENCH_228:-$ROOT/build-ci/main}
T36=${NXDNS_BENCH_36:-$ROOT/build-ci/mbedtls3}

build_tree() {  # build_tree DIR [cmake args...]
  local dir=$1
  shift
  if [ ! -x "$dir/src/cli/nxdns" ] || [ ! -x "$dir/tests/fixtures/nxdns-fixture-dot" ]; then
    echo "building $dir ..." >&2
    cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null &&
      cmake --build "$dir" -j"$(nproc)" --target nxdns nxdns-fixture-dot nxdns-delay-relay nxdns-test-pki >/dev/null
  fi
}
build_tree "$T228" || exit 1
PREFIX=$(bash "$ROOT/scripts/build-mbedtls3.sh" | tail -n1) || exit 1
build_tree "$T36" -DMBEDTLS_ROOT="$PREFIX" || exit 1

# One measurement: a fresh daemon (so the first burst is cold), then cold and
# warm bursts. Prints "cold_ratio cold_stair warm_ratio warm_stair servfail".
measure() {  # measure TREE FIXTURE_FLAGS...
  local tree=$1
  shift
  (
    set -e
    export NXDNS="$tree/src/cli/nxdns" FIXTURES="$tree/tests/fixtures"
    source "$ROOT/tests/integration/lib.sh" "$NXDNS" "$FIXTURES" >/dev/null
    ADDR=$(pick_loopback)
    make_pki "$WORK/pki" dot.test
    start_fixture up "$WORK/pki" "$@"
    start_relay rl "$FIX_PORT_up" 40
    ATTEMPT_MS=2000 TOTAL_MS=5000 dot_config "$WORK/c.yaml" "$ADDR" 5300 "$RELAY_PORT_rl" "$WORK/pki"
    start_daemon "$WORK/c.yaml" "$ADDR" 5300
    cold=$(nx burst --server "$ADDR:5300" --names 30 --cold --json || true)
    warm=$(nx burst --server "$ADDR:5300" --names 30 --json || true)
    stop_daemon
    field() { sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" <<<"$1" | head -n1; }
    echo "$(field "$cold" ratio) $(field "$cold" staircase) $(field "$warm" ratio) $(field "$warm" staircase)" \
      "$(($(field "$cold" servfail) + $(field "$warm" servfail) + $(field "$cold" timeouts) + $(field "$warm" timeouts)))"
  )
}

stats() {  # stats VALUES... -> "median (best..worst)"
  printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2;
    printf "%.2f (%.2f..%.2f)", m, v[1], v[NR]}'
}

printf '\nnxdns burst benchmark: 30 names, one DoT upstream, 40 ms simulated RTT, %s runs each\n' "$RUNS"
printf '%-24s %-8s %-22s %-10s %-22s %-10s %s\n' "line / upstream" "TLS" "cold ratio" "cold stair" "warm ratio" "warm stair" "SERVFAIL+timeouts"
for line in 2.28 3.6; do
  tree=$T228
  [ "$line" = 3.6 ] && tree=$T36
  tls=$("$tree/src/cli/nxdns" version | grep -q "mbedtls 3" && echo "1.3" || echo "1.2")
  for kind in concurrent serial; do
    flags=()
    [ "$kind" = serial ] && flags=(--serial --response-delay-ms 10)
    cr=() cs=() wr=() ws=() bad=0
    for _ in $(seq 1 "$RUNS"); do
      read -r a b c d e < <(measure "$tree" "${flags[@]}")
      cr+=("$a") cs+=("$b") wr+=("$c") ws+=("$d") bad=$((bad + ${e:-1}))
    done
    printf '%-24s %-8s %-22s %-10s %-22s %-10s %s\n' "mbedTLS $line / $kind" "$tls" "$(stats "${cr[@]}")" \
      "$(stats "${cs[@]}" | cut -d' ' -f1)" "$(stats "${wr[@]}")" "$(stats "${ws[@]}" | cut -d' ' -f1)" "$bad"
  done
done
echo
echo "ratio = burst wall time / one warm query, same run; stair = slope of sorted completions / single (1 = serial)"
