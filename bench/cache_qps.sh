#!/usr/bin/env bash
# Cached-answer QPS (target: nxdns >= 1.5 x unbound, one thread
# each), nxdns vs unbound in the same run, loopback only, with the load
# average beside the figures. Both servers forward over DoT to one fixture
# (no relay: only the warm-up misses reach it); NAMES names are cached, then
# dnsperf (one client thread, -q 100 outstanding) asks them over and over for
# --seconds. The servers take turns for --rounds rounds (A B [C] A B [C] ...)
# so that a change in the shared machine's load hits each alike; the median
# round is reported. --baseline NXDNS_BINARY adds a second nxdns (e.g. the
# previous commit's) to the same run.
#
# dnsperf's one thread is near its own ceiling at these rates, so its QPS
# alone cannot show a server's capacity. Beside it each round measures the
# server's CPU: utime+stime from /proc/PID/stat (every thread of the
# process) around the run, as CPU-seconds per 1,000 answers, and the
# capacity that implies (answers per server CPU-second), in three runs:
#   open    dnsperf -T 1 -q 100, as fast as it goes (the QPS column);
#   paced   dnsperf -T 1 -Q --qps: the same offered load for every server,
#           below every ceiling, so CPU per answer compares like with like;
#   sat     (--saturate) dnsperf -T 2 -c 2 -q 200, two client threads
#           against the one-thread server: the saturating figure, on a
#           2-core machine only meaningful when it is otherwise quiet.
# CPU ticks are 1/CLK_TCK s (10 ms): at these rates a 5 s run costs the
# server hundreds of ticks, so the rounding is under 1 %.
#
# usage: bench/cache_qps.sh BUILD_DIR [--seconds S] [--rounds N] [--qps Q] [--saturate] [--baseline BIN] [--results DIR]
# --results DIR: every run also goes to DIR/cache_qps.json (bench/bench_result.py).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH_COMMAND="bash bench/cache_qps.sh $*"
BUILD=${1:?usage: $0 BUILD_DIR [--seconds S] [--rounds N] [--baseline BIN]}
shift
SECONDS_QPS=5 ROUNDS=3 BASELINE="" NAMES=500 PACED_QPS=30000 SATURATE=false
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) SECONDS_QPS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --baseline) BASELINE=$2; shift 2 ;;
    --qps) PACED_QPS=$2; shift 2 ;;
    --saturate) SATURATE=true; shift ;;
    --results) BENCH_RESULTS=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=../tests/integration/lib.sh
source "$HERE/../tests/integration/lib.sh" "$BUILD/src/cli/nxdns" "$BUILD/tests/fixtures"
for tool in unbound dnsperf; do require_program "$tool"; done
# shellcheck source=cache_lib.sh
source "$HERE/cache_lib.sh"

cache_bench_upstream
seq 1 "$NAMES" | awk '{print "qps" $1 ".cache.test A"}' >"$WORK/names.txt"

labels=(nxdns unbound) ports=(5701 5702) pids=()
start_server nxdns 5701 false
pids+=("$SRV_PID")
start_server unbound 5702 false
pids+=("$SRV_PID")
if [ -n "$BASELINE" ]; then
  NXDNS_SAVED=$NXDNS NXDNS=$BASELINE
  start_server nxdns 5703 false
  pids+=("$SRV_PID")
  NXDNS=$NXDNS_SAVED
  labels+=(baseline) ports+=(5703)
fi
for port in "${ports[@]}"; do
  dnsperf -s "$ADDR" -p "$port" -d "$WORK/names.txt" -n 1 -c 1 -T 1 -q 50 >/dev/null 2>&1 || true
done
load0=$(cut -d' ' -f1-3 /proc/loadavg)
TICK=$(getconf CLK_TCK)
# utime and stime apart, all threads (fields 14 and 15; the command name in
# field 2 has no spaces for these servers). bench/lib.sh's cpu_ticks is
# their sum; the user% column needs them apart.
user_sys_ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }
# run MODE INDEX -> appends "qps:answers:ticks:user_ticks" to runs[MODE,label]
declare -A runs
ROWS=$WORK/runs.tsv
tsv mode server round noerror_qps noerror completed cpu_ticks user_ticks >"$ROWS"
run() {
  local mode=$1 i=$2 args
  case $mode in
    open) args=(-c 1 -T 1 -q 100) ;;
    paced) args=(-c 1 -T 1 -q 100 -Q "$PACED_QPS") ;;
    sat) args=(-c 2 -T 2 -q 200) ;;
  esac
  local u0 s0 u1 s1 out
  read -r u0 s0 < <(user_sys_ticks "${pids[$i]}")
  out=$WORK/perf.txt
  dnsperf -s "$ADDR" -p "${ports[$i]}" -d "$WORK/names.txt" -l "$SECONDS_QPS" "${args[@]}" >"$out" 2>&1
  read -r u1 s1 < <(user_sys_ticks "${pids[$i]}")
  # Only NOERROR answers count (QPS and capacity alike): a REFUSED or
  # SERVFAIL is not a cached answer, and the share is printed beside.
  local q a c
  c=$(awk '/Queries completed/ {print $3}' "$out")
  a=$(dnsperf_rcode "$out" NOERROR)
  q=$(dnsperf_noerror_qps "$out")
  runs[$mode,${labels[$i]}]+="${q:-0}:${a:-0}:$((u1 + s1 - u0 - s0)):$((u1 - u0)):${c:-0} "
  tsv "$mode" "${labels[$i]}" "$r" "${q:-0}" "${a:-0}" "${c:-0}" "$((u1 + s1 - u0 - s0))" "$((u1 - u0))" >>"$ROWS"
}
modes=(open paced)
$SATURATE && modes+=(sat)
for r in $(seq 1 "$ROUNDS"); do
  for mode in "${modes[@]}"; do
    for i in "${!ports[@]}"; do run "$mode" "$i"; done
  done
done
# Per round: qps, CPU-s per 1,000 answers, answers per CPU-second; the
# median of each over the rounds.
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
field() {  # MODE LABEL COLUMN(qps|cpu|cap|user|noerr)
  local x
  for x in ${runs[$1,$2]}; do
    awk -F: -v c="$3" -v tick="$TICK" '{ s = $3 / tick
      if (c == "qps") print $1; else if (c == "cpu") print ($2 > 0 ? 1000 * s / $2 : 0)
      else if (c == "user") print ($3 > 0 ? 100 * $4 / $3 : 0)
      else if (c == "noerr") print ($5 > 0 ? 100 * $2 / $5 : 0); else print (s > 0 ? $2 / s : 0) }' <<<"$x"
  done | tr '\n' ' '
}
printf '%-6s %-9s %8s %11s %9s %14s %6s %16s %9s  %s\n' run server "NOERROR%" "median QPS" "x unbound" "CPU-ms/1000 a" "user%" "answers/CPU-s" "x unbound" "rounds (QPS)"
for mode in "${modes[@]}"; do
  ubq=$(field "$mode" unbound qps | median) ubc=$(field "$mode" unbound cap | median)
  for l in "${labels[@]}"; do
    mq=$(field "$mode" "$l" qps | median) mc=$(field "$mode" "$l" cpu | median) mk=$(field "$mode" "$l" cap | median)
    mu=$(field "$mode" "$l" user | median) mn=$(field "$mode" "$l" noerr | median)
    # (parenthesised: a bare ">" after awk's print redirects to a file)
    printf '%-6s %-9s %8.2f %11.0f %9.2f %14.1f %6.0f %16.0f %9.2f  %s\n' "$mode" "$l" "$mn" "$mq" "$(awk -v a="$mq" -v b="$ubq" 'BEGIN {print (b > 0 ? a / b : 0)}')" \
      "$(awk -v c="$mc" 'BEGIN {print c * 1000}')" "$mu" "$mk" "$(awk -v a="$mk" -v b="$ubc" 'BEGIN {print (b > 0 ? a / b : 0)}')" "$(field "$mode" "$l" qps)"
  done
done
echo "QPS and answers count NOERROR answers only (NOERROR% = their share of the completed queries, median round)"
echo "CPU = utime+stime of the server process (/proc/PID/stat, all threads, CLK_TCK $TICK) over each dnsperf run (user% = utime's share); capacity = answers / that CPU; medians over the rounds"
echo "runs: open = dnsperf -c 1 -T 1 -q 100; paced = the same with -Q $PACED_QPS (same offered load for each server)$($SATURATE && echo "; sat = dnsperf -c 2 -T 2 -q 200")"
echo "fixture exchanges: $(stat "$WORK/up.stats" queries) (the warm-up misses: $NAMES per server)"
echo "load average: before $load0, after $(cut -d' ' -f1-3 /proc/loadavg) (nproc $(nproc)); ${SECONDS_QPS} s x ${ROUNDS} rounds per run and server, servers alternating"
baseline=()
[ -n "$BASELINE" ] && baseline=(--nxdns "baseline=$BASELINE")
result_json cache_qps --table "runs=$ROWS" --nxdns "nxdns=$NXDNS" "${baseline[@]}" --peer unbound --peer dnsperf \
  --param "seconds=$SECONDS_QPS" --param "rounds=$ROUNDS" --param "names=$NAMES" --param "paced_qps=$PACED_QPS" \
  --param "clk_tck=$TICK" --param "open=-c 1 -T 1 -q 100" --param "sat=-c 2 -T 2 -q 200"
