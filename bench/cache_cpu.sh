#!/usr/bin/env bash
# Instructions per cached answer, nxdns vs unbound, one
# thread each, counted by callgrind in the server process (user space only:
# the kernel's send/recv work is not counted). Load-independent, unlike QPS
# on a shared machine.
#
# Method (as bench/run.sh's CPU section does for forwarded queries): the
# server runs under callgrind; NAMES names are asked once (misses: the
# cache fills), counters are zeroed, then the same names are asked again
# N1 times over and dumped, then N2 times over and dumped, one query at a
# time (dnsperf -q 1). Every query in both windows is a hit (prefetch off,
# TTL 60 from the fixture, the windows end well within it). Per answer =
# (Ir(N2 window) - Ir(N1 window)) / (queries in N2 - queries in N1): what a
# dump window costs regardless of its query count cancels.
#
# usage: bench/cache_cpu.sh BUILD_DIR [--profile OUT_DIR] [--results DIR]
#   --profile: keep the callgrind files and callgrind_annotate's inclusive
#   and exclusive views of the N2 window there (nxdns and unbound).
#   --results: the figures also go to DIR/cache_cpu.json (bench/bench_result.py).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH_COMMAND="bash bench/cache_cpu.sh $*"
BUILD=${1:?usage: $0 BUILD_DIR [--profile OUT_DIR]}
shift
PROFILE=""
while [ $# -gt 0 ]; do
  case $1 in
    --profile) PROFILE=$2; shift 2 ;;
    --results) BENCH_RESULTS=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=../tests/integration/lib.sh
source "$HERE/../tests/integration/lib.sh" "$BUILD/src/cli/nxdns" "$BUILD/tests/fixtures"
for tool in unbound dnsperf valgrind callgrind_control; do require_program "$tool"; done

NAMES=50 N1=2 N2=12
# shellcheck source=cache_lib.sh
source "$HERE/cache_lib.sh"  # and bench/lib.sh: ir_of
cache_bench_upstream
seq 1 "$NAMES" | awk '{print "hit" $1 ".cpu.test A"}' >"$WORK/names.txt"
answered() { grep -c '^> NOERROR ' "$1" || true; }

printf '%-8s %14s %14s %10s %s\n' server "Ir/$((NAMES * N1))q" "Ir/$((NAMES * N2))q" Ir/answer answers
ROWS=$WORK/rows.tsv
tsv server ir_window1 ir_window2 queries1 queries2 noerror1 noerror2 ir_per_answer >"$ROWS"
port=5500
for kind in nxdns unbound; do
  port=$((port + 1))
  SRV_WRAP=(valgrind --tool=callgrind "--callgrind-out-file=$WORK/cg-$kind.%p" --dump-instr=no --collect-systime=no)
  start_server "$kind" "$port" false
  SRV_WRAP=()
  dnsperf -s "$ADDR" -p "$port" -d "$WORK/names.txt" -n 1 -q 1 -t 20 >"$WORK/$kind.warm" 2>&1 || true
  callgrind_control -z "$SRV_PID" >/dev/null 2>&1
  timeout 300 dnsperf -s "$ADDR" -p "$port" -d "$WORK/names.txt" -n "$N1" -q 1 -t 10 -v >"$WORK/$kind.w1" 2>&1 || true
  callgrind_control -d "$SRV_PID" >/dev/null 2>&1
  timeout 300 dnsperf -s "$ADDR" -p "$port" -d "$WORK/names.txt" -n "$N2" -q 1 -t 10 -v >"$WORK/$kind.w2" 2>&1 || true
  callgrind_control -d "$SRV_PID" >/dev/null 2>&1
  sleep 0.5
  kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null || true
  dump=$(ls "$WORK/cg-$kind".*.1 2>/dev/null | head -n1)
  [ -n "$dump" ] || fail "$kind: no callgrind dump"
  i1=$(ir_of "$dump") i2=$(ir_of "${dump%.1}.2")
  a1=$(answered "$WORK/$kind.w1") a2=$(answered "$WORK/$kind.w2")
  awk -v k="$kind" -v i1="$i1" -v i2="$i2" -v a1="$a1" -v a2="$a2" -v n1=$((NAMES * N1)) -v n2=$((NAMES * N2)) \
    'BEGIN { printf "%-8s %14s %14s %10.0f %d/%d + %d/%d\n", k, i1, i2, (i2 - i1) / (a2 - a1), a1, n1, a2, n2 }'
  tsv "$kind" "$i1" "$i2" $((NAMES * N1)) $((NAMES * N2)) "$a1" "$a2" \
    "$(awk -v i1="$i1" -v i2="$i2" -v a1="$a1" -v a2="$a2" 'BEGIN { printf "%.0f", (i2 - i1) / (a2 - a1) }')" >>"$ROWS"
  if [ -n "$PROFILE" ]; then
    mkdir -p "$PROFILE"
    cp "${dump%.1}.2" "$PROFILE/callgrind-$kind.out"
    callgrind_annotate --inclusive=yes "${dump%.1}.2" >"$PROFILE/inclusive-$kind.txt" 2>/dev/null || true
    callgrind_annotate "${dump%.1}.2" >"$PROFILE/exclusive-$kind.txt" 2>/dev/null || true
  fi
done
echo "Ir = instructions in the server process (user space) per dump window; every answer in both windows is a cache hit"
echo "fixture exchanges in all: $(stat "$WORK/up.stats" queries) (2 x $NAMES expected: the warm-up misses only)"
result_json cache_cpu --table "rows=$ROWS" --nxdns "nxdns=$NXDNS" --peer unbound --peer valgrind --peer dnsperf \
  --param "names=$NAMES" --param "fixture_exchanges=$(stat "$WORK/up.stats" queries)"
