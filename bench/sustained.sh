# shellcheck shell=bash
# bench/run.sh section "sustained": dnsperf at a fixed outstanding limit
# against every forwarder and the fixture itself. Sourced by bench/run.sh
# after tests/integration/lib.sh and bench/lib.sh; uses run.sh's header and
# the server list.
# --------------------------------------------------------------- sustained
# dnsperf at a fixed outstanding-query limit for a fixed time, unique names
# (no cache can help), straight at the fixture (no relay: the relay's own
# per-byte timers would be the bottleneck). Percentiles come from dnsperf -v
# (one "> RCODE name type latency" line per answer).
SUST_Q=64
SUST_L=10
SUST_NAMES=400000
perf_parse() {  # perf_parse OUTFILE -> "noerror_qps p50_ms p99_ms sent lost runtime noerror"
  local f=$1 rt sent lost noerr
  rt=$(sed -n 's/.*Run time (s):[[:space:]]*\([0-9.]*\).*/\1/p' "$f" | head -n1)
  sent=$(sed -n 's/.*Queries sent:[[:space:]]*\([0-9]*\).*/\1/p' "$f" | head -n1)
  lost=$(sed -n 's/.*Queries lost:[[:space:]]*\([0-9]*\).*/\1/p' "$f" | head -n1)
  noerr=$(grep -c '^> NOERROR ' "$f")
  local pct
  pct=$(awk '/^> NOERROR / {print $NF}' "$f" | sort -g | awk '{v[NR]=$1} END {
      if (NR == 0) { print "- -"; exit }
      i50 = int(NR * 0.50); if (i50 < 1) i50 = 1; i99 = int(NR * 0.99); if (i99 < 1) i99 = 1;
      printf "%.2f %.2f", v[i50] * 1000, v[i99] * 1000 }')
  awk -v n="$noerr" -v rt="${rt:-0}" -v pct="$pct" -v s="${sent:-0}" -v l="${lost:-0}" \
    'BEGIN { printf "%.0f %s %s %s %s %s\n", (rt > 0 ? n / rt : 0), pct, s, l, rt, n }'
}

SUST_RUNS=3
sust_row() {  # sust_row LABEL TLS QPS P50 P99 LOST CONNS SRVCPU FIXCPU USQ
  printf '%-24s %-4s %-9s %-8s %-8s %-12s %-6s %-8s %-8s %s\n' "$@"
}
pct_of() { awk -v t="$1" -v hz="$HZ" -v rt="$2" 'BEGIN{ if (rt > 0) printf "%.0f%%", 100 * t / hz / rt; else print "-" }'; }
# share_of TICKS RUNTIME -> the share of one core, as a fraction ("-" without a run time)
share_of() { awk -v t="$1" -v hz="$HZ" -v rt="$2" 'BEGIN{ if (rt > 0) printf "%.3f", t / hz / rt; else print "-" }'; }

section_sustained() {
  make_pki "$WORK/pki" dot.test
  echo
  echo "== sustained: dnsperf -q $SUST_Q -l $SUST_L, unique names, one DoT upstream (fixture, no added RTT), $SUST_RUNS rounds"
  sust_row server TLS "NOERR/s" "p50 ms" "p99 ms" "lost/sent" conns "srv CPU" "fix CPU" "srv us/q"
  local srv mark addr f0 f1 c0 c1 qps p50 p99 sent lost rt n fixpid round
  : >"$WORK/sust.tsv"
  tsv round server tls noerror_qps p50_ms p99_ms sent lost conns srv_cpu_share fix_cpu_share us_per_answer \
    >"$WORK/sust-rounds.tsv"
  # Rounds interleave the servers, so a slow phase of the machine spreads
  # over all of them instead of landing on one.
  for round in $(seq 1 "$SUST_RUNS"); do
    # Reference: the fixture alone, dnsperf speaking DoT to it over one
    # connection: what the upstream side of this machine can deliver.
    mark=$(pids_mark)
    start_fixture up "$WORK/pki" "${BENCH_FIXTURE_FLAGS[@]}"
    fixpid=${PIDS[-1]}
    gen_names "$WORK/names" "$SUST_NAMES" "ref$RANDOM"
    f0=$(cpu_ticks "$fixpid")
    timeout $((SUST_L + 30)) dnsperf -m dot -s 127.0.0.1 -p "$FIX_PORT_up" -d "$WORK/names" -q "$SUST_Q" \
      -l "$SUST_L" -t 5 -v >"$WORK/perf-ref.out" 2>&1
    f1=$(cpu_ticks "$fixpid")
    read -r qps p50 p99 sent lost rt n < <(perf_parse "$WORK/perf-ref.out")
    sust_row "#$round fixture direct" "$(fixture_tls "$WORK/up.stats")" "$qps" "$p50" "$p99" "$lost/$sent" \
      "$(stat "$WORK/up.stats" accepts)" "-" "$(pct_of $((f1 - f0)) "$rt")" "-"
    printf 'fixture-direct\t%s\t%s\t%s\t-\n' "$qps" "$p50" "$p99" >>"$WORK/sust.tsv"
    tsv "$round" fixture-direct "$(fixture_tls "$WORK/up.stats")" "$qps" "$p50" "$p99" "$sent" "$lost" \
      "$(stat "$WORK/up.stats" accepts)" - "$(share_of $((f1 - f0)) "$rt")" - >>"$WORK/sust-rounds.tsv"
    pids_release "$mark"
    for srv in "${SRV_LIST[@]}"; do
      mark=$(pids_mark)
      start_fixture up "$WORK/pki" "${BENCH_FIXTURE_FLAGS[@]}"
      fixpid=${PIDS[-1]}
      addr=$(pick_loopback)
      if ! server_start "$srv" "$addr" 5300 "$FIX_PORT_up" "$WORK/pki"; then
        echo "$srv: did not start"
        pids_release "$mark"
        continue
      fi
      # Same warm start for everyone: sessions open before the clock starts.
      timeout 20 "$NXDNS" burst --server "$addr:5300" --names 30 --zone warm.test --json >/dev/null 2>&1
      gen_names "$WORK/names" "$SUST_NAMES" "$srv$RANDOM"
      c0=$(cpu_ticks "$SRV_PID")
      f0=$(cpu_ticks "$fixpid")
      timeout $((SUST_L + 30)) dnsperf -s "$addr" -p 5300 -d "$WORK/names" -q "$SUST_Q" -l "$SUST_L" -t 5 -v \
        >"$WORK/perf-$srv.out" 2>&1
      c1=$(cpu_ticks "$SRV_PID")
      f1=$(cpu_ticks "$fixpid")
      server_stop
      sleep 0.1
      read -r qps p50 p99 sent lost rt n < <(perf_parse "$WORK/perf-$srv.out")
      local usq
      usq=$(awk -v t=$((c1 - c0)) -v hz="$HZ" -v n="$n" 'BEGIN{ if (n > 0) printf "%.0f", 1e6 * t / hz / n; else print "-" }')
      sust_row "#$round $srv" "$(fixture_tls "$WORK/up.stats")" "$qps" "$p50" "$p99" "$lost/$sent" \
        "$(stat "$WORK/up.stats" accepts)" "$(pct_of $((c1 - c0)) "$rt")" "$(pct_of $((f1 - f0)) "$rt")" "$usq"
      printf '%s\t%s\t%s\t%s\t%s\n' "$srv" "$qps" "$p50" "$p99" "$usq" >>"$WORK/sust.tsv"
      tsv "$round" "$srv" "$(fixture_tls "$WORK/up.stats")" "$qps" "$p50" "$p99" "$sent" "$lost" \
        "$(stat "$WORK/up.stats" accepts)" "$(share_of $((c1 - c0)) "$rt")" "$(share_of $((f1 - f0)) "$rt")" "$usq" \
        >>"$WORK/sust-rounds.tsv"
      grep -v '^>' "$WORK/perf-$srv.out" >"$OUT/dnsperf-$srv-round$round.txt"
      pids_release "$mark"
    done
  done
  cp "$WORK/sust.tsv" "$OUT/sustained.tsv"
  echo
  echo "-- sustained, median of $SUST_RUNS rounds (best..worst NOERR/s); x unbound = median NOERR/s over unbound's"
  printf '%-16s %-28s %-8s %-8s %-9s %s\n' server "NOERR/s" "p50 ms" "p99 ms" "srv us/q" "x unbound"
  local ub label
  ub=$(median $(awk -F'\t' '$1 == "unbound" {print $2}' "$WORK/sust.tsv"))
  for label in fixture-direct "${SRV_LIST[@]}"; do
    local q=() a=() b=() u=()
    mapfile -t q < <(awk -F'\t' -v s="$label" '$1 == s {print $2}' "$WORK/sust.tsv")
    mapfile -t a < <(awk -F'\t' -v s="$label" '$1 == s {print $3}' "$WORK/sust.tsv")
    mapfile -t b < <(awk -F'\t' -v s="$label" '$1 == s {print $4}' "$WORK/sust.tsv")
    mapfile -t u < <(awk -F'\t' -v s="$label" '$1 == s && $5 != "-" {print $5}' "$WORK/sust.tsv")
    [ ${#q[@]} -gt 0 ] || continue
    printf '%-16s %-28s %-8s %-8s %-9s %s\n' "$label" "$(stats "${q[@]}" | sed 's/\.00//g')" \
      "$(stats "${a[@]}" | cut -d' ' -f1)" "$(stats "${b[@]}" | cut -d' ' -f1)" "$(median "${u[@]}")" \
      "$(awk -v m="$(median "${q[@]}")" -v u="$ub" 'BEGIN{ if (u + 0 > 0 && m != "-") printf "%.2f", m / u; else print "-" }')"
  done
  echo "NOERR/s = NOERROR answers / run time; p50/p99 over NOERROR answers (dnsperf -v); lost = timed out;"
  echo "CPU = share of one core over the run (srv: the forwarder, fix: the fixture); us/q = forwarder CPU per answer"
  run_result sustained --table "rounds=$WORK/sust-rounds.tsv" --peer dnsperf --param "outstanding=$SUST_Q" \
    --param "seconds=$SUST_L" --param "rounds=$SUST_RUNS" --param "fixture_flags=${BENCH_FIXTURE_FLAGS[*]}"
}
