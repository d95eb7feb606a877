#!/usr/bin/env bash
# The 30 s WAN outage (the serve-stale target), nxdns vs unbound in
# the same run, loopback only. Both servers forward over DoT to one fixture
# behind the 40 ms delay relay; they learn the names of the first hour of
# the household trace (household_trace.py), every entry is let go past its
# TTL (nxdns cache.max_ttl 2, unbound cache-max-ttl 2), then the fixture is
# black-holed (SIGSTOP: connections stay open, nothing answers) for
# --seconds while outage_probe.py asks both servers, side by side, known
# names at a steady rate and one unseen name per second.
#
# Serve-stale: nxdns serve_stale on (default, RFC 8767 client response timer
# 1.8 s); unbound serve-expired: yes, serve-expired-client-timeout: 1800.
# Prints, per server: known names answered NOERROR within 1.8 s (fraction),
# p50 and max latency, what else they got; unseen names' rcodes and
# latencies; whether the server process is still the one that started.
#
# usage: bench/cache_outage.sh BUILD_DIR [--seconds S] [--results DIR]
# --results DIR: the figures also go to DIR/cache_outage.json (bench/bench_result.py).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH_COMMAND="bash bench/cache_outage.sh $*"
BUILD=${1:?usage: $0 BUILD_DIR [--seconds S]}
shift
OUTAGE=30
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) OUTAGE=$2; shift 2 ;;
    --results) BENCH_RESULTS=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=../tests/integration/lib.sh
source "$HERE/../tests/integration/lib.sh" "$BUILD/src/cli/nxdns" "$BUILD/tests/fixtures"
for tool in unbound dnsperf python3; do require_program "$tool"; done

# shellcheck source=cache_lib.sh
source "$HERE/cache_lib.sh"
cache_bench_upstream
start_relay rl "$FIX_PORT_up" 40
UP=$RELAY_PORT_rl
python3 "$HERE/household_trace.py" >"$WORK/trace.txt"
# The names the household asked in the trace's first hour.
awk '$1 < 3600000 {print $2, $3}' "$WORK/trace.txt" | sort -u >"$WORK/known.txt"
NX_CACHE_EXTRA="  max_ttl: 2
  serve_stale: true"
UB_EXTRA="  cache-max-ttl: 2
  cache-max-negative-ttl: 2
  serve-expired: yes
  serve-expired-client-timeout: 1800"

start_server nxdns 5601 false
NX_PID=$SRV_PID
start_server unbound 5602 false
UB_PID=$SRV_PID
for port in 5601 5602; do
  dnsperf -s "$ADDR" -p "$port" -d "$WORK/known.txt" -n 1 -q 50 -t 5 >"$WORK/warm-$port.txt" 2>&1 || true
done
sleep 3  # every entry is past its 2 s TTL: only stale answers are left
kill -STOP "$FIX_PID"
python3 "$HERE/outage_probe.py" --server "$ADDR" --ports 5601,5602 --labels nxdns,unbound --known "$WORK/known.txt" \
  --seconds "$OUTAGE" >"$WORK/probe.json"
kill -CONT "$FIX_PID"

printf '%-8s %6s %14s %10s %10s %-24s %8s %-28s %10s %10s %s\n' server known "NOERROR<=1.8s" p50_ms max_ms "known other" unseen "unseen rcodes" p50_ms max_ms alive
for kind in nxdns unbound; do
  pid=$([ "$kind" = nxdns ] && echo "$NX_PID" || echo "$UB_PID")
  alive=$(kill -0 "$pid" 2>/dev/null && echo "same pid" || echo "GONE")
  python3 - "$kind" "$alive" "$WORK/probe.json" <<'PY'
import json, sys
kind, alive, path = sys.argv[1], sys.argv[2], sys.argv[3]
for ln in open(path):
    r = json.loads(ln)
    if r["server"] != kind:
        continue
    frac = r["known_noerror_within"] / r["known_sent"] if r["known_sent"] else 0
    other = ",".join("%s:%d" % kv for kv in sorted(r["known_other"].items())) or "-"
    urc = ",".join("%s:%d" % kv for kv in sorted(r["unseen_rcodes"].items())) or "-"
    print("%-8s %6d %14s %10s %10s %-24s %8d %-28s %10s %10s %s" % (kind, r["known_sent"], "%.4f" % frac,
          r["known_p50_ms"], r["known_max_ms"], other, r["unseen_sent"], urc, r["unseen_p50_ms"], r["unseen_max_ms"], alive))
PY
done
echo "known = names of the trace's first hour ($(wc -l <"$WORK/known.txt") names), all past their TTL when the outage starts"
echo "outage: fixture SIGSTOPped for ${OUTAGE} s; load during the run: $(cut -d' ' -f1-3 /proc/loadavg) (nproc $(nproc))"
ALIVE=$WORK/alive.tsv
tsv server alive >"$ALIVE"
tsv nxdns "$(kill -0 "$NX_PID" 2>/dev/null && echo yes || echo no)" >>"$ALIVE"
tsv unbound "$(kill -0 "$UB_PID" 2>/dev/null && echo yes || echo no)" >>"$ALIVE"
result_json cache_outage --jsonl "servers=$WORK/probe.json" --table "alive=$ALIVE" --nxdns "nxdns=$NXDNS" \
  --peer unbound --param "outage_s=$OUTAGE" --param rtt_ms=40 --param max_ttl_s=2 --param within_ms=1800 \
  --param "known_names=$(wc -l <"$WORK/known.txt")"
