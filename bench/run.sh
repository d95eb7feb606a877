#!/usr/bin/env bash
# nxdns benchmark suite: one entry point, loopback only.
#
#   bash bench/run.sh [--runs N] [--only SECTIONS] [--servers LIST] [--out DIR] [--results DIR]
#
#   --runs N          burst repetitions per row; the table shows the median
#                     and the best..worst range (default 3)
#   --only SECTIONS   comma-separated subset of: states,wan,doh,sustained,
#                     memory,cpu,handshake (the default: all of them) and
#                     bursts (cold and warm bursts at 0 and 40 ms, which the
#                     states section covers at 40 ms; only when named)
#   --servers LIST    comma-separated subset of:
#                     nxdns-2.28,nxdns-3.6,unbound,stubby,kresd
#   --out DIR         where the report and raw files go (default /tmp/nxdns-bench.<time>)
#   --results DIR     where each section writes its figures as SECTION.json
#                     (default OUT/results); bench/render_performance.py
#                     renders docs/performance.md from bench/results/
#
# Everything runs inside a network namespace of its own (ip netns add
# nxdns-bench-$$, only `lo` up, deleted on exit), so no packet can leave the
# machine and no port of the host is touched. Without the privilege to create
# one it falls back to the host's loopback and says so in the report.
#
# Build trees (configured RelWithDebInfo and built here when missing):
#   NXDNS_BENCH_228 (default build-bench)     nxdns on Debian's mbedTLS 2.28
#   NXDNS_BENCH_36  (default build-bench-m3)  nxdns on mbedTLS 3.6
#                   (scripts/build-mbedtls3.sh provides the prefix)
# Peers: unbound, stubby, knot-resolver (kresd), dnsperf, valgrind from Debian
# (sudo scripts/install-deps.sh --bench).
#
# Sections live beside this file when they have a file of their own:
# bench/states.sh (bursts by daemon state), bench/wan_return.sh (the first
# query after a WAN outage), bench/doh.sh (DoH bursts),
# bench/sustained.sh (dnsperf at a fixed outstanding limit) and
# bench/handshake_cpu.sh (instructions per handshake).
#
# Every upstream is the project's DoT fixture built against mbedTLS 3.6 (it
# speaks TLS 1.3 to whoever can), so each row talks to the same server and
# only the forwarder in the middle changes. docs/performance.md explains
# every column. Budget: about 25 minutes with the defaults (states: ~9, sustained:
# ~4, wan, memory, cpu, handshake: ~2.5 each, doh: ~1.5).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=3
ONLY=states,wan,doh,sustained,memory,cpu,handshake
SERVERS=nxdns-2.28,nxdns-3.6,unbound,stubby,kresd
OUT=
RESULTS=
ARGS=("$@")
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --servers) SERVERS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --results) RESULTS=$2; shift 2 ;;
    -h|--help) sed -n '2,41p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/run.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
T228=${NXDNS_BENCH_228:-$ROOT/build-bench}
T36=${NXDNS_BENCH_36:-$ROOT/build-bench-m3}

# ------------------------------------------------------------------ outside
if [ "${NXDNS_BENCH_INSIDE:-0}" != 1 ]; then
  for tool in dnsperf unbound stubby kresd valgrind callgrind_control curl; do
    command -v "$tool" >/dev/null ||
      { echo "bench/run.sh: $tool not found (sudo scripts/install-deps.sh --bench)" >&2; exit 1; }
  done
  build_tree() {  # build_tree DIR [cmake args...]
    local dir=$1 t missing=0
    shift
    for t in src/cli/nxdns tests/fixtures/nxdns-fixture-dot tests/fixtures/nxdns-fixture-doh \
             tests/fixtures/nxdns-delay-relay tests/fixtures/nxdns-test-pki; do
      [ -x "$dir/$t" ] || missing=1
    done
    [ $missing = 0 ] && return 0
    echo "bench: building $dir ..." >&2
    mkdir -p "$dir"
    cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNXDNS_WERROR=ON "$@" >"$dir/bench-build.log" 2>&1 ||
      { echo "bench: configuring $dir failed (see $dir/bench-build.log)" >&2; return 1; }
    cmake --build "$dir" -j2 --target nxdns nxdns-fixture-dot nxdns-fixture-doh nxdns-delay-relay \
      nxdns-test-pki >>"$dir/bench-build.log" 2>&1 ||
      { echo "bench: build of $dir failed (see $dir/bench-build.log)" >&2; return 1; }
  }
  build_tree "$T228" || exit 1
  PREFIX=$(bash "$ROOT/scripts/build-mbedtls3.sh" | tail -n1) || exit 1
  build_tree "$T36" -DMBEDTLS_ROOT="$PREFIX" || exit 1

  [ -n "$OUT" ] || OUT=/tmp/nxdns-bench.$(date -u +%Y%m%dT%H%M%SZ)
  mkdir -p "$OUT"
  [ -n "$RESULTS" ] || RESULTS=$OUT/results
  mkdir -p "$RESULTS"
  RESULTS=$(cd "$RESULTS" && pwd)
  export NXDNS_BENCH_INSIDE=1 NXDNS_BENCH_OUT=$OUT NXDNS_BENCH_228=$T228 NXDNS_BENCH_36=$T36 BENCH_RESULTS=$RESULTS
  NS=nxdns-bench-$$
  if ip netns add "$NS" 2>"$OUT/netns.err"; then
    netns_cleanup() {
      # Whatever still runs in the namespace was started by this run.
      local pid
      for pid in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
      ip netns del "$NS" 2>/dev/null || true
    }
    trap netns_cleanup EXIT
    trap 'exit 130' INT TERM
    if ip netns exec "$NS" ip link set lo up 2>>"$OUT/netns.err"; then
      NXDNS_BENCH_NETNS=$NS ip netns exec "$NS" bash "$0" "${ARGS[@]}"
      exit $?
    fi
  fi
  echo "NOTE: could not create a network namespace ($(tr '\n' ' ' <"$OUT/netns.err")):" \
    "running on the HOST loopback instead (peers still only talk to 127.0.0.1)" | tee "$OUT/netns.note"
  NXDNS_BENCH_NETNS='' bash "$0" "${ARGS[@]}"
  exit $?
fi

# ------------------------------------------------------------------- inside
OUT=$NXDNS_BENCH_OUT
FIXTURE_TREE=$T36
export NXDNS="$T228/src/cli/nxdns" FIXTURES="$FIXTURE_TREE/tests/fixtures"
# shellcheck source=tests/integration/lib.sh
source "$ROOT/tests/integration/lib.sh" >/dev/null
set +e
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
BENCH_COMMAND="bash bench/run.sh ${ARGS[*]}"
if [ -n "${NXDNS_BENCH_NETNS:-}" ]; then
  BENCH_ISOLATION="network namespace (only lo up)"
else
  BENCH_ISOLATION="host loopback (no network namespace)"
fi
# shellcheck source=bench/states.sh
source "$ROOT/bench/states.sh"
# shellcheck source=bench/wan_return.sh
source "$ROOT/bench/wan_return.sh"
# shellcheck source=bench/handshake_cpu.sh
source "$ROOT/bench/handshake_cpu.sh"
# shellcheck source=bench/doh.sh
source "$ROOT/bench/doh.sh"
# shellcheck source=bench/sustained.sh
source "$ROOT/bench/sustained.sh"
IFS=, read -r -a SRV_LIST <<<"$SERVERS"
HZ=$(getconf CLK_TCK)

want() { [[ ",$ONLY," == *",$1,"* ]]; }

# The DoT fixture packs answers that are ready together into one TLS record
# unless told otherwise; real resolvers (unbound, Knot Resolver) write one
# record per answer, and stubby 1.6 (getdns) needs that: of several answers
# in one record it handles the first and leaves the rest unread until more
# bytes arrive (29 of a 30-name burst timed out). Every forwarder in this
# report gets the same upstream, so every section starts it this way.
BENCH_FIXTURE_FLAGS=(--record-per-answer)


# ------------------------------------------------------------- the machine
header() {
  echo "nxdns benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
  if [ -n "${NXDNS_BENCH_NETNS:-}" ]; then
    echo "isolation: network namespace $NXDNS_BENCH_NETNS (only lo up)"
  else
    echo "isolation: NONE - host loopback (network namespace could not be created; see above)"
  fi
  echo "machine: $(nproc) CPU(s), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)," \
    "kernel $(uname -r)"
  echo "nxdns 2.28 tree: $T228 ($("$T228/src/cli/nxdns" version | tr '\n' ' '))"
  echo "nxdns 3.6 tree:  $T36 ($("$T36/src/cli/nxdns" version | sed -n 's/^mbedtls/mbedtls/p'))"
  echo "fixture: $FIXTURE_TREE/tests/fixtures (mbedTLS 3.6: TLS 1.3 capable), ${BENCH_FIXTURE_FLAGS[*]}"
  echo "unbound $(unbound -V | sed -n 's/^Version //p') ($(unbound -V | sed -n 's/^Linked libs: //p'))"
  echo "stubby $(dpkg-query -W -f='${Version}' stubby 2>/dev/null) (getdns $(dpkg-query -W -f='${Version}' libgetdns10 2>/dev/null))," \
    "dnsperf $(dpkg-query -W -f='${Version}' dnsperf 2>/dev/null), valgrind $(valgrind --version | sed 's/valgrind-//')"
  echo "kresd $(kresd --version 2>/dev/null | sed -n 's/.*version //p')"
  echo "command: bash bench/run.sh ${ARGS[*]}"
}

# ------------------------------------------------------------------ bursts
# SERVFAILs plus timeouts of a cold and a warm burst; a burst that printed
# nothing (the tool itself failed) counts all of its 30 queries as bad.
bad_count() {
  local cs ct co ws wt wo
  cs=$(jfield "$1" servfail) ct=$(jfield "$1" timeouts) co=$(jfield "$1" other_errors)
  ws=$(jfield "$2" servfail) wt=$(jfield "$2" timeouts) wo=$(jfield "$2" other_errors)
  [ -n "$1" ] || cs=30
  [ -n "$2" ] || ws=30
  echo $((${cs:-0} + ${ct:-0} + ${co:-0} + ${ws:-0} + ${wt:-0} + ${wo:-0}))
}

# burst_once SERVER KIND: one fresh upstream path and one fresh server, then a
# cold burst (no session yet) and a warm one. Prints
# "cold_wall cold_ratio cold_stair warm_wall warm_ratio warm_stair bad tls conns".
burst_once() {
  local srv=$1 kind=$2 mark rtt=0 flags=() addr cold warm bad
  mark=$(pids_mark)
  # Runs in a process substitution: a `fail` exit must still stop its processes.
  # shellcheck disable=SC2064  # expanded now on purpose: $mark is a local
  trap "pids_release $mark" EXIT
  case $kind in
    rtt0) rtt=0 ;;
    rtt40) rtt=40 ;;
    serial40) rtt=40 flags=(--serial --response-delay-ms 10) ;;
  esac
  start_fixture up "$WORK/pki" "${BENCH_FIXTURE_FLAGS[@]}" "${flags[@]}"
  # start_relay (tests/integration/lib.sh) does not remove a stale port file:
  # without this it could hand back the previous measurement's dead relay.
  rm -f "$WORK/rl.port"
  start_relay rl "$FIX_PORT_up" "$rtt"
  addr=$(pick_loopback)
  if ! server_start "$srv" "$addr" 5300 "$RELAY_PORT_rl" "$WORK/pki"; then
    pids_release "$mark"
    echo "- - - - - - 30 ? 0"
    return
  fi
  cold=$(timeout 30 "$NXDNS" burst --server "$addr:5300" --names 30 --cold --json 2>/dev/null)
  warm=$(timeout 30 "$NXDNS" burst --server "$addr:5300" --names 30 --json 2>/dev/null)
  server_stop
  sleep 0.1  # the fixture rewrites its stats once per loop iteration
  bad=$(bad_count "$cold" "$warm")
  echo "$(jfield "$cold" wall_ms) $(jfield "$cold" ratio) $(jfield "$cold" staircase)" \
    "$(jfield "$warm" wall_ms) $(jfield "$warm" ratio) $(jfield "$warm" staircase) $bad" \
    "$(fixture_tls "$WORK/up.stats") $(stat "$WORK/up.stats" accepts)"
  pids_release "$mark"
}

section_bursts() {
  make_pki "$WORK/pki" dot.test
  echo
  echo "== bursts: 30 concurrent unique names, one DoT upstream (fixture), median of $RUNS runs (best..worst)"
  printf '%-11s %-9s %-4s %-7s %-19s %-6s %-7s %-19s %-6s %-6s %s\n' server upstream TLS \
    "cold ms" "cold ratio" stair "warm ms" "warm ratio" stair "bad" conns
  local srv kind run
  tsv server kind run tls cold_ms cold_ratio cold_stair warm_ms warm_ratio warm_stair bad conns >"$WORK/bursts-runs.tsv"
  for kind in rtt0 rtt40 serial40; do
    for srv in "${SRV_LIST[@]}"; do
      local cw=() cr=() cs=() ww=() wr=() ws=() cn=() bad=0 tls='?' a b c d e f g h i
      for run in $(seq 1 "$RUNS"); do
        read -r a b c d e f g h i < <(burst_once "$srv" "$kind")
        tsv "$srv" "$kind" "$run" "$h" "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$i" >>"$WORK/bursts-runs.tsv"
        cw+=("$a") cr+=("$b") cs+=("$c") ww+=("$d") wr+=("$e") ws+=("$f") cn+=("$i")
        bad=$((bad + ${g:-30}))
        tls=$h
      done
      printf '%-11s %-9s %-4s %-7s %-19s %-6s %-7s %-19s %-6s %-6s %s\n' "$srv" "$kind" "$tls" \
        "$(median "${cw[@]}")" "$(stats "${cr[@]}")" "$(stats "${cs[@]}" | cut -d' ' -f1)" \
        "$(median "${ww[@]}")" "$(stats "${wr[@]}")" "$(stats "${ws[@]}" | cut -d' ' -f1)" "$bad" \
        "$(median "${cn[@]}")"
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$srv" "$kind" "$tls" "$(median "${cw[@]}")" \
        "$(stats "${cr[@]}")" "$(median "${ww[@]}")" "$(stats "${wr[@]}")" "$bad" "$(median "${cn[@]}")" \
        >>"$OUT/bursts.tsv"
    done
  done
  echo "ratio = burst wall / one warm query of the same run; stair = slope of sorted completions / single"
  echo "(0 = all at once, 1 = one after another); bad = SERVFAIL + timeouts + other errors over all runs (60 queries a run);"
  echo "conns = TLS connections the fixture accepted in one run; rtt40 = 40 ms simulated round trip;"
  echo "serial40 = upstream answers one query per connection at a time, 10 ms think time, 40 ms RTT"
  run_result bursts --table "runs=$WORK/bursts-runs.tsv" --param names=30 --param rtt_ms=40 \
    --param "fixture_flags=${BENCH_FIXTURE_FLAGS[*]}"
}

# ------------------------------------------------------------------ memory
# VmRSS of a server idle (started, no query), after a cold and a warm 30-name
# burst, and (nxdns) with 2 upstreams x 8 open sessions.
two_by_eight() {  # two_by_eight SERVER -> "rss_kib hwm_kib sessions0 sessions1 anon_kib file_kib pss_kib"
  local srv=$1 tree mark addr pa pb http s0 s1 i
  tree=$(tree_of "$srv") || return 1
  mark=$(pids_mark)
  # shellcheck disable=SC2064  # expanded now on purpose: $mark is a local
  trap "pids_release $mark" EXIT
  # Upstream A (priority 0) is down at first: every query fails over to B
  # (priority 1), whose 8 sessions open under 64-name bursts. Then A comes
  # back on the same port; once its backoff ends the bursts open A's 8
  # sessions while B's stay open. Both fixtures answer one query per
  # connection at a time (--serial), so placement spreads a 64-name burst
  # over every slot (an upstream that pipelines needs only 3 sessions for
  # it), and advertise a 300 s keepalive (RFC 7828), so B's idle sessions
  # outlive A's backoff instead of closing after the default 30 s.
  local two_flags=(--serial --response-delay-ms 100 --keepalive-ds 3000)
  start_fixture fa "$WORK/pki" "${BENCH_FIXTURE_FLAGS[@]}" "${two_flags[@]}"
  pa=$FIX_PORT_fa
  kill "${PIDS[-1]}" 2>/dev/null
  wait "${PIDS[-1]}" 2>/dev/null
  start_fixture fb "$WORK/pki" "${BENCH_FIXTURE_FLAGS[@]}" "${two_flags[@]}"
  pb=$FIX_PORT_fb
  addr=$(pick_loopback)
  http=18053
  cat >"$WORK/two.yaml" <<YAML
listen:
  - "$addr:5300"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "tls://127.0.0.1:$pa"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
    priority: 0
  - url: "tls://127.0.0.1:$pb"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
    priority: 1
budgets:
  attempt_ms: 2000
  total_ms: 5000
http:
  enabled: true
  listen: "$addr:$http"
log:
  level: error
YAML
  nxdns_run "$tree" "$WORK/two.yaml" "$WORK/two.log"
  wait_tcp "$addr" 5300 "$SRV_PID" 10 || { pids_release "$mark"; echo "- - - - - - -"; return; }
  for i in 1 2 3 4 5; do
    timeout 20 "$NXDNS" burst --server "$addr:5300" --names 64 --zone b.test --json >/dev/null 2>&1
    s1=$(open_sessions "$addr:$http" 1)
    [ "${s1:-0}" -ge 8 ] && break
  done
  start_fixture fa "$WORK/pki" "${BENCH_FIXTURE_FLAGS[@]}" "${two_flags[@]}" --listen "127.0.0.1:$pa"
  for i in $(seq 1 40); do
    timeout 20 "$NXDNS" burst --server "$addr:5300" --names 64 --zone a.test --json >/dev/null 2>&1
    s0=$(open_sessions "$addr:$http" 0)
    s1=$(open_sessions "$addr:$http" 1)
    [ "${s0:-0}" -ge 8 ] && [ "${s1:-0}" -ge 8 ] && break
    sleep 0.5
  done
  sleep 0.3
  smaps_summary "$SRV_PID" >"$OUT/smaps-$srv-2x8.txt"
  echo "$(rss_kib "$SRV_PID") $(hwm_kib "$SRV_PID") ${s0:-?} ${s1:-?} $(smaps_kib "$SRV_PID")"
  server_stop
  pids_release "$mark"
}

section_memory() {
  make_pki "$WORK/pki" dot.test
  echo
  echo "== memory: VmRSS (MiB) of the forwarder process"
  printf '%-11s %-8s %-12s %-22s %s\n' server idle "after burst" "2 upstreams x 8 sess" "peak (VmHWM)"
  local srv mark addr idle after two hwm s0 s1 idle_smaps two_kib anon2 file2 pss2 burst_hwm two_hwm
  tsv server idle_kib idle_anon_kib idle_file_kib idle_pss_kib after_burst_kib hwm_kib \
    two_by_eight_kib two_by_eight_hwm_kib sessions0 sessions1 two_by_eight_anon_kib two_by_eight_file_kib \
    two_by_eight_pss_kib >"$WORK/memory.tsv"
  for srv in "${SRV_LIST[@]}"; do
    mark=$(pids_mark)
    start_fixture up "$WORK/pki" "${BENCH_FIXTURE_FLAGS[@]}"
    addr=$(pick_loopback)
    server_start "$srv" "$addr" 5300 "$FIX_PORT_up" "$WORK/pki" || { pids_release "$mark"; continue; }
    sleep 1
    idle=$(rss_kib "$SRV_PID")
    idle_smaps=$(smaps_kib "$SRV_PID")
    [ -n "$idle_smaps" ] || idle_smaps="- - -"
    smaps_summary "$SRV_PID" >"$OUT/smaps-$srv-idle.txt"
    timeout 20 "$NXDNS" burst --server "$addr:5300" --names 30 --cold --json >/dev/null 2>&1
    timeout 20 "$NXDNS" burst --server "$addr:5300" --names 30 --json >/dev/null 2>&1
    sleep 0.3
    after=$(rss_kib "$SRV_PID")
    hwm=$(hwm_kib "$SRV_PID")
    server_stop
    pids_release "$mark"
    two="n/a (1 upstream)" two_kib=- s0=- s1=- anon2=- file2=- pss2=-
    burst_hwm=$hwm two_hwm=-
    if [[ $srv == nxdns-* ]]; then
      read -r two_kib two_hwm s0 s1 anon2 file2 pss2 < <(two_by_eight "$srv")
      hwm=$two_hwm
      two="$(mib "$two_kib") ($s0+$s1 sess)"
    fi
    # shellcheck disable=SC2086  # idle_smaps is three figures
    tsv "$srv" "$idle" $idle_smaps "$after" "$burst_hwm" "$two_kib" "$two_hwm" "$s0" "$s1" "$anon2" "$file2" "$pss2" \
      >>"$WORK/memory.tsv"
    printf '%-11s %-8s %-12s %-22s %s\n' "$srv" "$(mib "$idle")" "$(mib "$after")" "$two" "$(mib "$hwm")"
  done
  local f
  for f in "$OUT"/smaps-*-idle.txt "$OUT"/smaps-*-2x8.txt; do
    [ -f "$f" ] && echo "  $(basename "$f" .txt): $(head -n1 "$f")"
  done
  echo "2 upstreams x 8 sessions: sessions counted by nxdns_upstream_open_sessions on /metrics (upstream 0 + 1);"
  echo "peak = VmHWM of the 2x8 run for nxdns, of the burst run for the peers"
  run_result memory --table "servers=$WORK/memory.tsv" --param names=30 --param "fixture_flags=${BENCH_FIXTURE_FLAGS[*]}"
}

# --------------------------------------------------------------------- CPU
# Instructions per forwarded query on a warm session, counted by callgrind
# in the server process (user space only: kernel work in send/recv is not
# counted). After a warm-up query opens the session, counters are zeroed,
# N1 queries are sent one at a time (dnsperf -q 1) and dumped, then N2 more
# and dumped: per query = (Ir(N2) - Ir(N1)) / (N2 - N1), so whatever a dump
# window costs regardless of the query count (timers, the dump) cancels.
CPU_N1=100
CPU_N2=600

section_cpu() {
  make_pki "$WORK/pki" dot.test
  echo
  echo "== CPU: instructions per forwarded query, warm session, one query at a time (callgrind)"
  printf '%-11s %-4s %-12s %-12s %-14s %s\n' server TLS "Ir/${CPU_N1}q" "Ir/${CPU_N2}q" "Ir per query" "answers"
  local srv mark addr d1 d2 i1 i2 n1 n2 dumps per
  tsv server tls ir_window1 ir_window2 queries1 queries2 noerror1 noerror2 ir_per_query >"$WORK/cpu.tsv"
  tsv server share_pct ir function >"$WORK/cpu-top.tsv"
  for srv in "${SRV_LIST[@]}"; do
    mark=$(pids_mark)
    start_fixture up "$WORK/pki" "${BENCH_FIXTURE_FLAGS[@]}"
    addr=$(pick_loopback)
    callgrind_server_start "$WORK/cg-$srv" "$srv" "$addr" 5300 "$FIX_PORT_up" "$WORK/pki" ||
      { pids_release "$mark"; continue; }
    dig @"$addr" -p 5300 +tries=1 +time=20 warm1.perf.test >/dev/null 2>&1
    dig @"$addr" -p 5300 +tries=1 +time=20 warm2.perf.test >/dev/null 2>&1
    gen_names "$WORK/n1" "$CPU_N1" "a$RANDOM"
    gen_names "$WORK/n2" "$CPU_N2" "b$RANDOM"
    callgrind_control -z "$SRV_PID" >/dev/null 2>&1
    timeout 120 dnsperf -s "$addr" -p 5300 -d "$WORK/n1" -n 1 -q 1 -t 10 -v >"$WORK/cg1.out" 2>&1
    callgrind_control -d "$SRV_PID" >/dev/null 2>&1
    timeout 300 dnsperf -s "$addr" -p 5300 -d "$WORK/n2" -n 1 -q 1 -t 10 -v >"$WORK/cg2.out" 2>&1
    callgrind_control -d "$SRV_PID" >/dev/null 2>&1
    sleep 0.5
    server_stop
    sleep 0.1
    n1=$(grep -c '^> NOERROR ' "$WORK/cg1.out")
    n2=$(grep -c '^> NOERROR ' "$WORK/cg2.out")
    dumps=$(ls "$WORK/cg-$srv".*.1 2>/dev/null | head -n1)
    d1=$dumps
    d2=${dumps%.1}.2
    i1=$(ir_of "$d1" 2>/dev/null)
    i2=$(ir_of "$d2" 2>/dev/null)
    per=$(awk -v a="$i1" -v b="$i2" -v n1="$CPU_N1" -v n2="$CPU_N2" 'BEGIN{ if (a != "" && b != "") printf "%.0f", (b - a) / (n2 - n1); else print "-" }')
    printf '%-11s %-4s %-12s %-12s %-14s %s\n' "$srv" "$(fixture_tls "$WORK/up.stats")" "${i1:--}" "${i2:--}" \
      "$per" "$n1/$CPU_N1 + $n2/$CPU_N2"
    tsv "$srv" "$(fixture_tls "$WORK/up.stats")" "${i1:--}" "${i2:--}" "$CPU_N1" "$CPU_N2" "$n1" "$n2" "$per" >>"$WORK/cpu.tsv"
    if [ -f "$d2" ]; then
      cp "$d2" "$OUT/callgrind-$srv.out"
      callgrind_annotate --threshold=100 "$d2" >"$OUT/profile-$srv.txt" 2>/dev/null
      callgrind_annotate --inclusive=yes "$d2" >"$OUT/profile-$srv-inclusive.txt" 2>/dev/null
    fi
    pids_release "$mark"
  done
  echo "Ir = instructions executed in the server process (user space), per dump window; answers = NOERROR/sent"
  local p
  for srv in "${SRV_LIST[@]}"; do
    p="$OUT/profile-$srv.txt"
    [ -f "$p" ] || continue
    echo
    echo "-- $srv: top functions by own instructions over the $CPU_N2-query window (share of the window)"
    top_functions "$p" 10 | tee "$WORK/top-$srv.txt"
    # "  12.3%  1,234,567  function (object)" -> server, share, Ir, function
    awk -v s="$srv" '{ share = $1; sub(/%$/, "", share); ir = $2; gsub(",", "", ir)
      fn = $0; sub(/^ *[0-9.]+% +[0-9,]+ +/, "", fn); printf "%s\t%s\t%s\t%s\n", s, share, ir, fn }' \
      "$WORK/top-$srv.txt" >>"$WORK/cpu-top.tsv"
  done
  run_result cpu --table "servers=$WORK/cpu.tsv" --table "top=$WORK/cpu-top.tsv" --peer dnsperf --peer valgrind \
    --param "queries1=$CPU_N1" --param "queries2=$CPU_N2" --param "fixture_flags=${BENCH_FIXTURE_FLAGS[*]}"
}

# --------------------------------------------------------------------- run
{
  [ -f "$OUT/netns.note" ] && cat "$OUT/netns.note"
  header
  for sec in bursts states wan doh sustained memory cpu handshake; do
    want "$sec" || continue
    t0=$(date +%s)
    BENCH_LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
    (
      WORK=$(mktemp -d "${TMPDIR:-/tmp}/nxdns-bench-$sec.XXXXXX")
      PIDS=()
      trap cleanup EXIT
      "section_$sec"
    )
    echo "($sec: $(($(date +%s) - t0)) s)"
  done
} 2>&1 | tee "$OUT/report.txt"
echo "report: $OUT/report.txt"
