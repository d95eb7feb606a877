#!/usr/bin/env bash
# nxdns's instructions per forwarded answer: the daemon under callgrind,
# one DoT upstream fixture on loopback, counters zeroed after a 1,000-name
# warm-up (sessions open), then N unique names from dnsperf (-c 10 -q Q).
# Deterministic where wall-clock figures on a shared machine are not.
# Q defaults to 100: at 500 the callgrind slowdown makes queries outlive
# their budget and sessions redial, which measures handshakes instead.
#   bash bench/callgrind_per_answer.sh BUILD_DIR [--names N] [--outstanding Q] [--top K]
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:?usage: $0 BUILD_DIR [--names N] [--outstanding Q] [--top K]}
shift
N=20000 Q=100 TOP=25
while [ $# -gt 0 ]; do
  case $1 in
    --names) N=$2; shift 2 ;;
    --outstanding) Q=$2; shift 2 ;;
    --top) TOP=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=../tests/integration/lib.sh
source "$HERE/../tests/integration/lib.sh" "$BUILD/src/cli/nxdns" "$BUILD/tests/fixtures"
require_program dnsperf
require_program valgrind
require_program callgrind_control "Debian: valgrind"
# shellcheck source=cache_lib.sh
source "$HERE/cache_lib.sh"
cache_bench_upstream
SRV_WRAP=(valgrind --tool=callgrind "--callgrind-out-file=$WORK/callgrind.out")
start_server nxdns 5399 false
awk 'BEGIN { for (i = 0; i < 1000; i++) printf "warm%d.perf.test A\n", i }' >"$WORK/warm"
dnsperf -s "$ADDR" -p 5399 -d "$WORK/warm" -n 1 -c 10 -q "$Q" -t 30 >"$WORK/warm.perf" 2>&1
callgrind_control -z "$SRV_PID" >/dev/null
acc0=$(stat "$WORK/up.stats" accepts)
awk -v n="$N" 'BEGIN { for (i = 0; i < n; i++) printf "q%d.perf.test A\n", i }' >"$WORK/names"
dnsperf -s "$ADDR" -p 5399 -d "$WORK/names" -n 1 -c 10 -q "$Q" -t 30 >"$WORK/run.perf" 2>&1
kill -TERM "$SRV_PID"; wait "$SRV_PID" 2>/dev/null || true
echo "== nxdns under callgrind: $N unique names, dnsperf -c 10 -q $Q, one DoT fixture (loopback)"
grep -E "Queries (completed|lost)|Response codes" "$WORK/run.perf"
echo "fixture connections accepted during the run: $(( $(stat "$WORK/up.stats" accepts) - acc0 ))"
noerr=$(dnsperf_rcode "$WORK/run.perf" NOERROR)
python3 "$HERE/callgrind_per_answer.py" "$WORK/callgrind.out" "${noerr:-1}" "$TOP"
