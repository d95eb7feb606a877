#!/usr/bin/env bash
# The field defect's acceptance, hermetic (issue 3, item 8): one DoT upstream
# behind a 40 ms simulated round trip (the delay relay: this kernel has no
# sch_netem), 30 concurrent unique names, cold (no session yet) and warm.
#   concurrent upstream: zero SERVFAIL/timeouts, cold ratio <= 4.5, warm <= 1.5,
#                        staircase <= 0.2
#   one-at-a-time upstream (answers a connection's queries serially, 10 ms
#   each): zero SERVFAIL/timeouts, staircase <= 0.3, warm ratio <= 4.5, cold
#   ratio <= 5.0 (its per-session line comes on top of the cold floor)
# On a TLS 1.2-only library the cold limits are one round trip higher (below).
#   one open session (fresh daemon, one session open, then the burst; issue
#   15): concurrent upstream ratio <= 1.10, every answer over that session;
#   serial upstream ratio <= 4.0 (TLS 1.2: 5.0), staircase <= 0.2, spread.
# Ratios are burst wall time / a warm single query, measured in the same run.
# Under emulation (NXDNS_EMULATED=1) or in a sanitizer build only the
# no-SERVFAIL/no-timeout part is enforced, and the output says so.
source "$(dirname "$0")/lib.sh"

ADDR=$(pick_loopback)
PORT=5300
RTT=40
make_pki "$WORK/pki" dot.test
TLSLIB=$(nx version | grep mbedtls)
echo "tls library: $TLSLIB"
# A cold session costs TCP + TLS + query round trips: 3 with TLS 1.3, 4 with
# TLS 1.2. Debian's mbedTLS 2.28 has no TLS 1.3 and no False Start, so its
# floor is ratio 4.0 before any CPU; the cold limits rise by that one round
# trip (1.0) there. Warm and staircase limits are the same on both lines.
COLD_EXTRA=0
case "$TLSLIB" in
  "mbedtls 2."*)
    COLD_EXTRA=1.0
    echo "NOTE: TLS 1.2-only library: cold ratio limits +1.0 (one more round trip per new session)"
    ;;
esac
cold_limit() { awk -v a="$1" -v b="$COLD_EXTRA" 'BEGIN { printf "%.1f", a + b }'; }

limits() {  # limits MAX_RATIO MAX_STAIR -> burst options
  if emulated || sanitized; then echo ""; else echo "--max-ratio $1 --max-stair $2"; fi
}
if emulated; then echo "NOTE: emulated run (qemu): ratio and staircase thresholds relaxed; SERVFAIL/timeouts still fail"; fi
if sanitized; then echo "NOTE: sanitizer build: ratio and staircase thresholds relaxed; SERVFAIL/timeouts still fail"; fi

run_burst() {  # run_burst LABEL [burst options...]
  local label=$1
  shift
  local rc=0
  nx burst --server "$ADDR:$PORT" --names 30 --zone accept.test "$@" >"$WORK/$label.out" 2>&1 || rc=$?
  tail -n 3 "$WORK/$label.out" | sed "s/^/  [$label] /"
  [ "$rc" = 0 ] || { cat "$WORK/$label.out"; fail "$label burst failed its verdict"; }
}

scenario() {  # scenario NAME COLD_RATIO COLD_STAIR WARM_RATIO WARM_STAIR [fixture flags...]
  local name=$1 cr=$2 cs=$3 wr=$4 ws=$5
  shift 5
  start_fixture "$name" "$WORK/pki" "$@"
  local fport_var="FIX_PORT_$name"
  start_relay "${name}_relay" "${!fport_var}" "$RTT"
  local rport_var="RELAY_PORT_${name}_relay"
  ATTEMPT_MS=2000 TOTAL_MS=5000 dot_config "$WORK/$name.yaml" "$ADDR" "$PORT" "${!rport_var}" "$WORK/pki"
  start_daemon "$WORK/$name.yaml" "$ADDR" "$PORT"
  # shellcheck disable=SC2046
  run_burst "$name cold" --cold $(limits "$(cold_limit "$cr")" "$cs")
  # shellcheck disable=SC2046
  run_burst "$name warm" $(limits "$wr" "$ws")
  stop_daemon
  pass "$name upstream: cold and warm bursts within limits (accepts: $(stat "$WORK/$name.stats" accepts))"
}

# one_session NAME MAX_RATIO MAX_STAIR MAX_RATIO_TLS12 [fixture flags...]: the
# household's usual state (issue 15): a freshly started daemon, one open
# session (the burst tool's single queries open it), then the 30-name burst.
# Judged on the fixture's counters: against a concurrent upstream every
# answer comes over that one connection and nothing is sent twice; against
# a serial one the burst spreads (the line waiting on the open session is
# re-sent to the sessions dialled as headroom).
one_session() {
  local name=$1 ratio=$2 stair=$3 ratio12=$4
  shift 4
  [ "$COLD_EXTRA" = 0 ] || ratio=$ratio12
  start_fixture "$name" "$WORK/pki" "$@"
  local fport_var="FIX_PORT_$name"
  start_relay "${name}_relay" "${!fport_var}" "$RTT"
  local rport_var="RELAY_PORT_${name}_relay"
  ATTEMPT_MS=2000 TOTAL_MS=5000 dot_config "$WORK/$name.yaml" "$ADDR" "$PORT" "${!rport_var}" "$WORK/pki"
  start_daemon "$WORK/$name.yaml" "$ADDR" "$PORT"
  # shellcheck disable=SC2046
  run_burst "$name one-session" $(limits "$ratio" "$stair")
  sleep 0.3
  stop_daemon
  local st="$WORK/$name.stats"
  echo "  [$name one-session] fixture: accepts $(stat "$st" accepts), queries $(stat "$st" queries)," \
    "answers $(stat "$st" answers), most answers on one connection $(stat "$st" peak_answers_per_connection)"
}

scenario concurrent 4.5 0.2 1.5 0.2
# A serial upstream's cold burst also waits for each session's line (30 names
# over 5 sessions x 10 ms) on top of the cold floor: +0.5 there. Its warm
# burst keeps the issue's limits and is the discriminating check (without
# spreading it would be (40 + 30 x 10) / 50 = 6.8).
scenario serial 5.0 0.3 4.5 0.3 --serial --response-delay-ms 10
# Targets (issue 15): one open session <= 1.10 on both TLS lines; against
# a serial upstream <= 4.0 (TLS 1.3) / 5.0 (TLS 1.2), staircase <= 0.2.
# The concurrent gate is the warm gate (1.5): the burst needs one round trip
# like a warm one (measured 0.66-1.64 with the machine at load 16, where
# the old placement measured 7.5-10.5); what discriminates is the fixture's
# counters below. The serial gate is the issue's target (old placement on
# a quiet machine: 3.90).
one_session concurrent_one 1.5 0.2 1.5
# The burst tool sends 3 single queries first (the median is the ratio's
# divisor), then 30: all 33 answered over the first connection, none twice.
st="$WORK/concurrent_one.stats"
[ "$(stat "$st" peak_answers_per_connection)" = 33 ] ||
  fail "one open session, concurrent upstream: $(stat "$st" peak_answers_per_connection) answers on the busiest connection, want all 33 on the open one"
[ "$(stat "$st" queries)" = 33 ] || fail "one open session, concurrent upstream: $(stat "$st" queries) queries reached the fixture, want 33 (nothing re-sent)"
grep -q "pipelining verdict: pipelining" "$WORK/daemon.log" || fail "one open session, concurrent upstream: no pipelining verdict logged"
pass "one open session, concurrent upstream: the burst rode the open session"

one_session serial_one 4.0 0.2 5.0 --serial --response-delay-ms 10
st="$WORK/serial_one.stats"
[ "$(stat "$st" accepts)" -ge 4 ] || fail "one open session, serial upstream: $(stat "$st" accepts) connections, want the burst spread over >= 4"
# The serial fixture still answers the whole line on the open connection;
# the spreading shows as duplicates it received (the old placement sent 33).
[ "$(stat "$st" queries)" -gt 33 ] ||
  fail "one open session, serial upstream: $(stat "$st" queries) queries reached the fixture, want the line re-sent (> 33)"
grep -q "pipelining verdict: serial" "$WORK/daemon.log" || fail "one open session, serial upstream: no serial verdict logged"
grep -q "re-sent [0-9]* exchange" "$WORK/daemon.log" || fail "one open session, serial upstream: nothing re-sent"
pass "one open session, serial upstream: detected serial, the line re-sent and spread ($(grep -o 're-sent [0-9]* exchange' "$WORK/daemon.log" | head -n1))"
echo "burst_acceptance: all passed"
