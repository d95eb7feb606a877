#!/usr/bin/env bash
# The field defect's acceptance (README.md), hermetic: one DoT upstream
# behind a 40 ms simulated round trip (the delay relay: this kernel has no
# sch_netem), 30 concurrent unique names, cold (no session yet) and warm,
# against a concurrent upstream and against a one-at-a-time one (answers a
# connection's queries serially, 10 ms each). Zero SERVFAIL/timeouts, and the
# ratio and staircase within the gates `cold`, `warm`, `serial-cold` and
# `serial-warm` of `nxdns burst --gate`: their one definition, with the
# measured figures and margins, is src/cli/burst_gates.cpp (the demo and the
# NixOS VM test read the same table). Each burst prints its measured ratio
# beside the gate and the design target.
# The household's usual state has its own gates, `one-session` and
# `serial-one-session`: a fresh daemon, one session open, then the burst.
# Ratios are burst wall time / a warm single query, measured in the same run.
# Under emulation (NXDNS_EMULATED=1) or in a sanitizer build the gates are
# reported, not enforced (--report-only): only the no-SERVFAIL/no-timeout
# part fails, and the output says so.
# A burst that misses only its ratio or staircase gate, every answer
# NOERROR, is measured once more from a fresh fixture, relay and daemon, and
# that second measurement must pass; both are printed. On a shared 2-core
# machine a burst's wall time has a tail: in back-to-back runs on mbedTLS 3.6
# about 1 run in 10 missed one gate, a different one each time, with the
# median well inside. A change that moves a median past its gate misses both
# measurements. SERVFAIL, timeouts and error answers fail at once.
source "$(dirname "$0")/lib.sh"

ADDR=$(pick_loopback)
PORT=5300
RTT=40
make_pki "$WORK/pki" dot.test
echo "tls library: $(nx version | grep mbedtls)"

set_gate_mode

FIRST_MEASUREMENT=1  # a gate-only miss may be measured again
GATE_MISSED=0        # set by run_burst on such a miss
REMEASURED=()

# gate_only_miss FILE: the burst's verdict failed on ratio or staircase alone.
gate_only_miss() {
  local line reasons
  line=$(grep -m1 '^  verdict: FAIL' "$1") || return 1
  reasons=$(grep -o '\[[^]]*\]' <<<"$line") || return 1
  ! grep -qv '^\[\(ratio\|staircase\) ' <<<"$reasons"
}

run_burst() {  # run_burst LABEL [burst options...]
  local label=$1
  shift
  local rc=0
  nx burst --server "$ADDR:$PORT" --names 30 --zone accept.test "$@" >"$WORK/$label.out" 2>&1 || rc=$?
  tail -n 6 "$WORK/$label.out" | sed "s/^/  [$label] /"
  [ "$rc" = 0 ] && return 0
  cat "$WORK/$label.out"
  if [ "$FIRST_MEASUREMENT" = 1 ] && gate_only_miss "$WORK/$label.out"; then
    echo "NOTE: [$label] missed a gate with every answer NOERROR: measured once more from a fresh daemon"
    GATE_MISSED=1
    return 0
  fi
  fail "$label burst failed its verdict"
}

# measured FN NAME [args...]: FN NAME once; after a gate-only miss FN
# NAME_again, where any miss fails. RUN_NAME: the run whose counters count.
measured() {
  local fn=$1 name=$2
  shift 2
  FIRST_MEASUREMENT=1
  GATE_MISSED=0
  "$fn" "$name" "$@"
  RUN_NAME=$name
  if [ "$GATE_MISSED" = 1 ]; then
    REMEASURED+=("$name")
    FIRST_MEASUREMENT=0
    "$fn" "${name}_again" "$@"
    RUN_NAME=${name}_again
    FIRST_MEASUREMENT=1
  fi
}

scenario() { measured scenario_once "$@"; }
scenario_once() {  # scenario_once NAME COLD_GATE WARM_GATE [fixture flags...]
  local name=$1 cold_gate=$2 warm_gate=$3
  shift 3
  start_fixture "$name" "$WORK/pki" "$@"
  local fport_var="FIX_PORT_$name"
  start_relay "${name}_relay" "${!fport_var}" "$RTT"
  local rport_var="RELAY_PORT_${name}_relay"
  ATTEMPT_MS=2000 TOTAL_MS=5000 dot_config "$WORK/$name.yaml" "$ADDR" "$PORT" "${!rport_var}" "$WORK/pki"
  start_daemon "$WORK/$name.yaml" "$ADDR" "$PORT"
  run_burst "$name cold" --gate "$cold_gate" "${GATE_MODE[@]}"
  run_burst "$name warm" --gate "$warm_gate" "${GATE_MODE[@]}"
  stop_daemon
  [ "$GATE_MISSED" = 1 ] && [ "$FIRST_MEASUREMENT" = 1 ] && return 0
  pass "$name upstream: cold and warm bursts within gates $cold_gate, $warm_gate (accepts: $(stat "$WORK/$name.stats" accepts))"
}

scenario concurrent cold warm
scenario serial serial-cold serial-warm --serial --response-delay-ms 10

# one_session NAME GATE [fixture flags...]: the
# household's usual state: a freshly started daemon, one open
# session (the burst tool's single queries open it), then the 30-name burst.
# Judged on the fixture's counters: against a concurrent upstream every
# answer comes over that one connection and nothing is sent twice; against
# a serial one the burst spreads (the line waiting on the open session is
# re-sent to the sessions dialled as headroom).
one_session() { measured one_session_once "$@"; }
one_session_once() {
  local name=$1 gate=$2
  shift 2
  start_fixture "$name" "$WORK/pki" "$@"
  local fport_var="FIX_PORT_$name"
  start_relay "${name}_relay" "${!fport_var}" "$RTT"
  local rport_var="RELAY_PORT_${name}_relay"
  ATTEMPT_MS=2000 TOTAL_MS=5000 dot_config "$WORK/$name.yaml" "$ADDR" "$PORT" "${!rport_var}" "$WORK/pki"
  start_daemon "$WORK/$name.yaml" "$ADDR" "$PORT"
  run_burst "$name one-session" --gate "$gate" "${GATE_MODE[@]}"
  sleep 0.3
  stop_daemon
  local st="$WORK/$name.stats"
  echo "  [$name one-session] fixture: accepts $(stat "$st" accepts), queries $(stat "$st" queries)," \
    "answers $(stat "$st" answers), most answers on one connection $(stat "$st" peak_answers_per_connection)"
}

one_session concurrent_one one-session
# The burst tool sends 3 single queries first (the median is the ratio's
# divisor), then 30: all 33 answered over the first connection, none twice.
st="$WORK/$RUN_NAME.stats"
[ "$(stat "$st" peak_answers_per_connection)" = 33 ] ||
  fail "one open session, concurrent upstream: $(stat "$st" peak_answers_per_connection) answers on the busiest connection, want all 33 on the open one"
[ "$(stat "$st" queries)" = 33 ] || fail "one open session, concurrent upstream: $(stat "$st" queries) queries reached the fixture, want 33 (nothing re-sent)"
grep -q "pipelining verdict: pipelining" "$WORK/daemon.log" || fail "one open session, concurrent upstream: no pipelining verdict logged"
pass "one open session, concurrent upstream: the burst rode the open session"

one_session serial_one serial-one-session --serial --response-delay-ms 10
st="$WORK/$RUN_NAME.stats"
# The serial verdict and the re-send are decided from answer timing (the
# stall watch: one fastest round trip); under qemu that timing is the
# emulator's, so there the counters are reported, not enforced.
spread_check() {  # spread_check CONDITION MESSAGE
  if eval "$1"; then return 0; fi
  if emulated; then echo "NOTE: emulated run (qemu): not enforced: $2"; return 0; fi
  fail "$2"
}
spread_check '[ "$(stat "$st" accepts)" -ge 4 ]' "one open session, serial upstream: $(stat "$st" accepts) connections, want the burst spread over >= 4"
# The serial fixture still answers the whole line on the open connection;
# the spreading shows as duplicates it received (the old placement sent 33).
spread_check '[ "$(stat "$st" queries)" -gt 33 ]' \
  "one open session, serial upstream: $(stat "$st" queries) queries reached the fixture, want the line re-sent (> 33)"
spread_check 'grep -q "pipelining verdict: serial" "$WORK/daemon.log"' "one open session, serial upstream: no serial verdict logged"
spread_check 'grep -q "re-sent [0-9]* exchange" "$WORK/daemon.log"' "one open session, serial upstream: nothing re-sent"
resent=$(grep -o 're-sent [0-9]* exchange' "$WORK/daemon.log" | head -n1 || true)
if [ -n "$resent" ]; then
  pass "one open session, serial upstream: detected serial, the line re-sent and spread ($resent)"
else
  pass "one open session, serial upstream: no SERVFAIL or timeout (spreading not enforced under emulation, see NOTE)"
fi
if [ "${#REMEASURED[@]}" -gt 0 ]; then
  echo "burst_acceptance: all passed; measured twice after a gate-only miss: ${REMEASURED[*]}"
else
  echo "burst_acceptance: all passed"
fi
