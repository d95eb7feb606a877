#!/usr/bin/env bash
# The "500 outstanding" row of docs/performance.md's targets: dnsperf with 500 queries outstanding from 10
# clients (-c 10 -q 500), unique names, one DoT upstream fixture on loopback
# (no added round trip), nxdns beside its peers in the same run. The servers
# alternate over --rounds N (nxdns, unbound[, kresd], nxdns, ...) so a load
# change on the shared machine hits every column alike; the summary is the
# median per server. Per run it prints: NOERROR share, NOERROR/s, REFUSED
# and SERVFAIL counts, lost/sent, CPU-seconds per 1,000 answers of the
# forwarder, of the fixture and of dnsperf (utime+stime from /proc, so the
# figure does not depend on how busy the machine is), and the load average.
# Loopback only.
#   bash bench/outstanding_500.sh BUILD_DIR [--seconds S] [--rounds N] [--peers "unbound kresd"] [--results DIR]
# --results DIR: the rounds also go to DIR/outstanding_500.json (bench/bench_result.py).
# nxdns runs with client_limits.queries_per_second 0 (bench/cache_lib.sh):
# dnsperf's 10 clients share one source address, which the per-client rate
# limit (300/s) would otherwise refuse (docs/reference/config.md, client_limits).
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH_COMMAND="bash bench/outstanding_500.sh $*"
BUILD=${1:?usage: $0 BUILD_DIR [--seconds S] [--rounds N] [--peers LIST]}
shift
SECONDS_RUN=10
ROUNDS=3
PEERS="unbound kresd"
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) SECONDS_RUN=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --peers) PEERS=$2; shift 2 ;;
    --results) BENCH_RESULTS=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=../tests/integration/lib.sh
source "$HERE/../tests/integration/lib.sh" "$BUILD/src/cli/nxdns" "$BUILD/tests/fixtures"
require_program dnsperf
KINDS=(nxdns)
for p in $PEERS; do
  if command -v "$p" >/dev/null 2>&1; then KINDS+=("$p"); else echo "# $p not installed: column left out"; fi
done
# shellcheck source=cache_lib.sh
source "$HERE/cache_lib.sh"  # and bench/lib.sh: cpu_ticks, server_start (kresd)
cache_bench_upstream
HZ=$(getconf CLK_TCK)

start_peer() {  # KIND PORT -> SRV_PID
  if [ "$1" = kresd ]; then
    server_start kresd "$ADDR" "$2" "$UP" "$WORK/pki" || fail "kresd did not start"
  else
    start_server "$1" "$2" false
  fi
}

echo "== 500 outstanding: dnsperf -c 10 -q 500 -l $SECONDS_RUN, unique names, one DoT upstream fixture (loopback), $ROUNDS round(s)"
echo "# $(nproc) CPU(s); *_cpu = CPU-seconds (utime+stime) per 1,000 NOERROR answers; conns = connections the fixture accepted"
printf '%-8s %-5s %-9s %-10s %-8s %-8s %-14s %-8s %-8s %-9s %-6s %s\n' server round NOERROR% "NOERROR/s" REFUSED SERVFAIL \
  lost/sent fwd_cpu fix_cpu perf_cpu conns "load avg"
RESULTS=$WORK/results
: >"$RESULTS"
ROUNDS_TSV=$WORK/rounds.tsv
printf 'server\tround\tnoerror_pct\tnoerror_qps\trefused\tservfail\tlost\tsent\tfwd_cpu_per_1k\tfix_cpu_per_1k\tperf_cpu_per_1k\tconns\tload1\n' \
  >"$ROUNDS_TSV"
port=5400
for round in $(seq 1 "$ROUNDS"); do
  for kind in "${KINDS[@]}"; do
    port=$((port + 1))
    start_peer "$kind" "$port"
    awk -v n=2000000 -v tag="$kind$round$RANDOM" 'BEGIN { for (i = 0; i < n; i++) printf "q%d-%s.perf.test A\n", i, tag }' \
      >"$WORK/names"
    out="$WORK/$kind.$round.perf"
    srv0=$(cpu_ticks "$SRV_PID"); fix0=$(cpu_ticks "$FIX_PID"); acc0=$(stat "$WORK/up.stats" accepts)
    # dnsperf's own CPU: the shell's cutime/cstime once it has reaped it.
    perf_ticks=$(timeout $((SECONDS_RUN + 30)) sh -c 'dnsperf "$@" >"$0" 2>&1; awk "{ print \$16 + \$17 }" /proc/$$/stat' \
      "$out" -s "$ADDR" -p "$port" -d "$WORK/names" -c 10 -q 500 -l "$SECONDS_RUN" -t 5 || true)
    srv1=$(cpu_ticks "$SRV_PID"); fix1=$(cpu_ticks "$FIX_PID"); acc1=$(stat "$WORK/up.stats" accepts)
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    sent=$(sed -n 's/.*Queries sent:[[:space:]]*\([0-9]*\).*/\1/p' "$out" | head -n1)
    lost=$(sed -n 's/.*Queries lost:[[:space:]]*\([0-9]*\).*/\1/p' "$out" | head -n1)
    rt=$(sed -n 's/.*Run time (s):[[:space:]]*\([0-9.]*\).*/\1/p' "$out" | head -n1)
    noerr=$(dnsperf_rcode "$out" NOERROR); refused=$(dnsperf_rcode "$out" REFUSED)
    servfail=$(dnsperf_rcode "$out" SERVFAIL)
    awk -v k="$kind" -v rd="$round" -v s="${sent:-0}" -v n="${noerr:-0}" -v r="${refused:-0}" -v f="${servfail:-0}" \
      -v l="${lost:-0}" -v rt="${rt:-0}" -v la="$load" -v hz="$HZ" -v sc="$((srv1 - srv0))" -v fc="$((fix1 - fix0))" \
      -v pc="${perf_ticks:-0}" -v res="$RESULTS" -v ac="$((acc1 - acc0))" -v tsv="$ROUNDS_TSV" 'BEGIN {
        k1 = (n > 0 ? 1000 / n / hz : 0)
        pct = (s > 0 ? 100 * n / s : 0); qps = (rt > 0 ? n / rt : 0)
        printf "%-8s %-5d %-9.2f %-10.0f %-8d %-8d %-14s %-8.4f %-8.4f %-9.4f %-6d %s\n", k, rd, pct, qps, r, f, l "/" s,
          sc * k1, fc * k1, pc * k1, ac, la
        printf "%s %.4f %.1f %.5f %.5f %.5f\n", k, pct, qps, sc * k1, fc * k1, pc * k1 >> res
        split(la, l1, " ")
        printf "%s\t%d\t%.4f\t%.1f\t%d\t%d\t%d\t%d\t%.5f\t%.5f\t%.5f\t%d\t%s\n", k, rd, pct, qps, r, f, l, s,
          sc * k1, fc * k1, pc * k1, ac, l1[1] >> tsv
      }'
    kill -TERM "$SRV_PID"; wait "$SRV_PID" 2>/dev/null || true
  done
done
echo "== median over $ROUNDS round(s)"
printf '%-8s %-9s %-10s %-8s %-8s %-9s %s\n' server NOERROR% "NOERROR/s" fwd_cpu fix_cpu perf_cpu "nxdns NOERROR/s ÷ this"
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
nx_qps=$(awk '$1 == "nxdns" { print $3 }' "$RESULTS" | median)
for kind in "${KINDS[@]}"; do
  col() { awk -v k="$kind" -v c="$1" '$1 == k { print $c }' "$RESULTS" | median; }
  qps=$(col 3)
  awk -v k="$kind" -v p="$(col 2)" -v q="$qps" -v s="$(col 4)" -v f="$(col 5)" -v d="$(col 6)" -v nx="$nx_qps" \
    'BEGIN { printf "%-8s %-9.2f %-10.0f %-8.4f %-8.4f %-9.4f %s\n", k, p, q, s, f, d, (q > 0 ? sprintf("%.2fx", nx / q) : "-") }'
done
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
peers=()
for kind in "${KINDS[@]}"; do [ "$kind" = nxdns ] || peers+=(--peer "$kind"); done
result_json outstanding_500 --table "rounds=$ROUNDS_TSV" --nxdns "nxdns=$BUILD/src/cli/nxdns" "${peers[@]}" --peer dnsperf \
  --param clients=10 --param outstanding=500 --param "seconds=$SECONDS_RUN" --param "rounds=$ROUNDS"
