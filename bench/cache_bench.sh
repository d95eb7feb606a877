#!/usr/bin/env bash
# Cache benchmark: nxdns vs unbound, one run, the same DoT
# upstream fixture (40 ms round trip through the delay relay), loopback only.
#
#   1. trace replay: the seeded household trace (household_trace.py),
#      compressed in time (--speed), sent over UDP by trace_replay.py;
#      upstream exchanges counted by the fixture's `queries` counter.
#      Hit ratio is 1 - exchanges/queries for both servers (one yardstick).
#      The fixture answers every name with TTL 60, so the trace's TTL mix is
#      not what the servers see: bench/cache_replay (no network) replays the
#      TTL mix through the real cache code.
#   2. cached-answer QPS: dnsperf on names already cached, one client
#      thread, for SECONDS; one server thread each.
#   3. RSS after filling the cache with 100k unique names (nxdns:
#      cache.max_bytes 16 MiB; unbound: msg+rrset cache 8+8 MiB).
#
# usage: bench/cache_bench.sh BUILD_DIR [--queries N] [--speed X] [--seconds S] [--results DIR]
# Prints a table; raw files stay in the work directory with KEEP_WORK=1;
# --results DIR: the rows also go to DIR/cache_bench.json (bench/bench_result.py).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH_COMMAND="bash bench/cache_bench.sh $*"
BUILD=${1:?usage: $0 BUILD_DIR [--queries N] [--speed X] [--seconds S]}
shift
QUERIES=20000 SPEED=720 SECONDS_QPS=10
while [ $# -gt 0 ]; do
  case $1 in
    --queries) QUERIES=$2; shift 2 ;;
    --speed) SPEED=$2; shift 2 ;;
    --seconds) SECONDS_QPS=$2; shift 2 ;;
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
python3 "$HERE/household_trace.py" --queries "$QUERIES" >"$WORK/trace.txt"
awk '{print $2, $3}' "$WORK/trace.txt" | sort -u >"$WORK/names.txt"
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
queries() { stat "$WORK/up.stats" queries; }

printf '%-8s %-8s %9s %12s %8s %8s %8s %10s %10s %10s %8s\n' server prefetch hit_ratio upstream/1k p50_ms p99_ms refused cached_qps rss_base rss_full filled
ROWS=$WORK/rows.tsv
tsv server prefetch sent exchanges hit_ratio upstream_per_1k p50_ms p99_ms refused cached_qps rss_base_kib \
  rss_full_kib filled >"$ROWS"
port=5400
for prefetch in false true; do
  for kind in nxdns unbound; do
    port=$((port + 1))
    start_server "$kind" "$port" "$prefetch"
    base=$(rss_kb "$SRV_PID")
    before=$(queries)
    json=$(python3 "$HERE/trace_replay.py" "$WORK/trace.txt" --server "$ADDR" --port "$port" --speed "$SPEED")
    ex=$(( $(queries) - before ))
    sent=$(echo "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sent"])')
    p50=$(echo "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["p50_ms"])')
    p99=$(echo "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["p99_ms"])')
    # A REFUSED answer costs no upstream exchange: it would pass for a hit.
    refused=$(echo "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rcodes"].get("5", 0))')
    echo "$json" >"$WORK/$kind-$prefetch.replay.json"
    # Cached-answer QPS: warm the trace's names, then dnsperf over them.
    dnsperf -s "$ADDR" -p "$port" -d "$WORK/names.txt" -l 2 -c 1 -T 1 -q 100 >/dev/null 2>&1 || true
    # NOERROR answers per second (dnsperf's QPS counts every rcode).
    dnsperf -s "$ADDR" -p "$port" -d "$WORK/names.txt" -l "$SECONDS_QPS" -c 1 -T 1 -q 100 >"$WORK/$kind-$prefetch.qps.txt" 2>&1
    qps=$(dnsperf_noerror_qps "$WORK/$kind-$prefetch.qps.txt")
    # RSS with a full cache: 100k unique names (once per server: prefetch
    # does not change what a full cache holds).
    full=0 filled=-
    if [ "$prefetch" = false ]; then
      [ -s "$WORK/fill.txt" ] || seq 1 100000 | awk '{print "fill" $1 ".rss.test A"}' >"$WORK/fill.txt"
      # 50 outstanding: below the listener's 64-in-flight cap (REFUSED beyond).
      dnsperf -s "$ADDR" -p "$port" -d "$WORK/fill.txt" -n 1 -c 1 -T 1 -q 50 >"$WORK/$kind.fill.txt" 2>&1 || true
      full=$(rss_kb "$SRV_PID")
      filled=$(dnsperf_rcode "$WORK/$kind.fill.txt" NOERROR)
    fi
    kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null || true
    awk -v k="$kind" -v pf="$prefetch" -v s="$sent" -v e="$ex" -v p50="$p50" -v p99="$p99" -v q="$qps" -v b="$base" -v f="$full" \
      -v r="$refused" -v fl="${filled:--}" \
      'BEGIN { printf "%-8s %-8s %9.4f %12.1f %8s %8s %8s %10s %9dk %9dk %8s\n", k, pf, 1 - e / s, 1000 * e / s, p50, p99, r, q, b, f, fl }'
    [ "$prefetch" = true ] && full=- filled=-
    tsv "$kind" "$prefetch" "$sent" "$ex" "$(awk -v e="$ex" -v s="$sent" 'BEGIN { printf "%.4f", 1 - e / s }')" \
      "$(awk -v e="$ex" -v s="$sent" 'BEGIN { printf "%.1f", 1000 * e / s }')" "$p50" "$p99" "$refused" "$qps" "$base" \
      "$full" "$filled" >>"$ROWS"
  done
done
echo "refused = REFUSED answers in the replay (none expected: a REFUSED would pass for a hit); cached_qps = NOERROR answers/s;"
echo "filled = NOERROR answers of the 100k-name fill (rss_full is only a full cache when it is ~100000)"
echo "load during the run: $(cut -d' ' -f1-3 /proc/loadavg) (nproc $(nproc))"
result_json cache_bench --table "rows=$ROWS" --nxdns "nxdns=$NXDNS" --peer unbound --peer dnsperf \
  --param "queries=$QUERIES" --param "speed=$SPEED" --param "qps_seconds=$SECONDS_QPS" --param rtt_ms=40 \
  --param fill_names=100000 --param nxdns_cache_bytes=16777216 --param unbound_cache="msg 8m + rrset 8m"
