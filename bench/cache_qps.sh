#!/usr/bin/env bash
# Cached-answer QPS (issue 14 target: nxdns >= 1.5 x unbound, one thread
# each), nxdns vs unbound in the same run, loopback only, with the load
# average beside the figures. Both servers forward over DoT to one fixture
# (no relay: only the warm-up misses reach it); NAMES names are cached, then
# dnsperf (one client thread, -q 100 outstanding) asks them over and over for
# --seconds. The servers take turns for --rounds rounds (A B [C] A B [C] ...)
# so that a change in the shared machine's load hits each alike; the median
# round is reported. --baseline NXDNS_BINARY adds a second nxdns (e.g. the
# previous commit's) to the same run.
#
# usage: bench/cache_qps.sh BUILD_DIR [--seconds S] [--rounds N] [--baseline BIN]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:?usage: $0 BUILD_DIR [--seconds S] [--rounds N] [--baseline BIN]}
shift
SECONDS_QPS=5 ROUNDS=3 BASELINE="" NAMES=500
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) SECONDS_QPS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --baseline) BASELINE=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=../tests/integration/lib.sh
source "$HERE/../tests/integration/lib.sh" "$BUILD/src/cli/nxdns" "$BUILD/tests/fixtures"
for tool in unbound dnsperf; do require_program "$tool"; done

ADDR=$(pick_loopback)
make_pki "$WORK/pki" dot.test
start_fixture up "$WORK/pki"
UP=$FIX_PORT_up
seq 1 "$NAMES" | awk '{print "qps" $1 ".cache.test A"}' >"$WORK/names.txt"
# shellcheck source=cache_lib.sh
source "$HERE/cache_lib.sh"

labels=(nxdns unbound) ports=(5701 5702)
start_server nxdns 5701 false
start_server unbound 5702 false
if [ -n "$BASELINE" ]; then
  NXDNS_SAVED=$NXDNS NXDNS=$BASELINE
  start_server nxdns 5703 false
  NXDNS=$NXDNS_SAVED
  labels+=(baseline) ports+=(5703)
fi
for port in "${ports[@]}"; do
  dnsperf -s "$ADDR" -p "$port" -d "$WORK/names.txt" -n 1 -c 1 -T 1 -q 50 >/dev/null 2>&1 || true
done
load0=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A runs
for r in $(seq 1 "$ROUNDS"); do
  for i in "${!ports[@]}"; do
    q=$(dnsperf -s "$ADDR" -p "${ports[$i]}" -d "$WORK/names.txt" -l "$SECONDS_QPS" -c 1 -T 1 -q 100 2>&1 |
        awk '/Queries per second/ {print $4}')
    runs[${labels[$i]}]+="${q:-0} "
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
ub=$(echo "${runs[unbound]}" | median)
printf '%-9s %12s %10s  %s\n' server "median QPS" "x unbound" "rounds"
for l in "${labels[@]}"; do
  m=$(echo "${runs[$l]}" | median)
  printf '%-9s %12.0f %10.2f  %s\n' "$l" "$m" "$(awk -v a="$m" -v b="$ub" 'BEGIN {print a / b}')" "${runs[$l]}"
done
echo "fixture exchanges: $(stat "$WORK/up.stats" queries) (the warm-up misses: $NAMES per server)"
echo "load average: before $load0, after $(cut -d' ' -f1-3 /proc/loadavg) (nproc $(nproc)); ${SECONDS_QPS} s x ${ROUNDS} rounds each, dnsperf -c 1 -T 1 -q 100"
