#!/usr/bin/env bash
# Lying upstreams through the real daemon (issue 8, item 2), loopback only.
# For each lie the fixture tells (--lie MODE --lie-after 1: the first query
# on a connection is answered honestly, every later one is a lie):
#   wrong-id, wrong-question, qr-clear, garbage, oversized (65535 random
#   octets), truncated-frame (the length prefix promises more than follows)
# the client gets SERVFAIL - never the lie -, the daemon closes the session
# (the stream is no longer trustworthy: fixture closes_by_client moves), and
# the next query is answered on a new connection. Then:
#   - a lying primary with an honest secondary: the answer comes from the
#     secondary;
#   - an answer arriving after its exchange was given up (think time longer
#     than the attempt budget): SERVFAIL at the budget, the session is closed
#     so the late answer never reaches a live exchange, the daemon serves on.
source "$(dirname "$0")/lib.sh"
# Under emulation (NXDNS_EMULATED=1, qemu) the daemon and fixtures run much
# slower: time limits are multiplied by T (the budgets themselves are the
# daemon's, unchanged).
T=1
if emulated; then
  T=4
  echo "NOTE: emulated run (qemu): time limits x$T"
fi

ADDR=$(pick_loopback)
PORT=5300
make_pki "$WORK/pki" dot.test
export ATTEMPT_MS=1000 TOTAL_MS=2000

dig_full() { dig @"$ADDR" -p "$PORT" +tries=1 +time=4 "$@" 2>&1; }
status_of() { sed -n 's/.*status: \([A-Z]*\),.*/\1/p' <<<"$1" | head -n1; }

for mode in wrong-id wrong-question qr-clear garbage oversized truncated-frame; do
  name=${mode//-/_}
  start_fixture "$name" "$WORK/pki" --lie "$mode" --lie-after 1
  port_var="FIX_PORT_$name"
  dot_config "$WORK/$name.yaml" "$ADDR" "$PORT" "${!port_var}" "$WORK/pki"
  start_daemon "$WORK/$name.yaml" "$ADDR" "$PORT"
  stats="$WORK/$name.stats"

  out=$(dig_full "honest.$name.lie.test")
  [ "$(status_of "$out")" = NOERROR ] || fail "$mode: the honest first query got: $out"
  t0=$(now_ms)
  out=$(dig_full "lie.$name.lie.test")
  t1=$(now_ms)
  [ "$(status_of "$out")" = SERVFAIL ] || fail "$mode: the lie was not turned into SERVFAIL: $out"
  # What reached the client is our SERVFAIL for its own question, nothing
  # of the lie: no answer records, the question it asked, the ID it sent
  # (dig would report a mismatch and keep waiting otherwise).
  grep -q "ANSWER: 0," <<<"$out" || fail "$mode: the SERVFAIL carries answers: $out"
  grep -q "^;lie\.$name\.lie\.test\." <<<"$out" || fail "$mode: the reply does not echo the question asked: $out"
  if grep -qi "mismatch\|wrong-question\|WARNING" <<<"$out"; then fail "$mode: dig saw something of the lie: $out"; fi
  took=$((t1 - t0))
  # A lie that can be read is refused at once; a truncated frame can only
  # be given up at the attempt budget.
  if [ "$mode" = truncated-frame ]; then
    [ "$took" -ge $((ATTEMPT_MS - 50)) ] && [ "$took" -le $((ATTEMPT_MS * 13 / 10 + 300 * (T - 1))) ] ||
      fail "$mode: SERVFAIL after $took ms, want the attempt budget ($ATTEMPT_MS ms)"
  else
    [ "$took" -le $((500 * T)) ] || fail "$mode: SERVFAIL took $took ms for a lie that can be read at once"
  fi
  for _ in $(seq 1 40); do [ "$(stat "$stats" closes_by_client)" -ge 1 ] && break; sleep 0.05; done
  [ "$(stat "$stats" closes_by_client)" -ge 1 ] || fail "$mode: the daemon kept the lying session open ($(cat "$stats"))"
  out=$(dig_full "after.$name.lie.test")
  [ "$(status_of "$out")" = NOERROR ] || fail "$mode: the query after the lie got: $out"
  [ "$(stat "$stats" accepts)" = 2 ] || fail "$mode: accepts = $(stat "$stats" accepts), want 2 (the lying session replaced once)"
  kill -0 "$DAEMON_PID" || fail "$mode: daemon died"
  reason=$(grep -m1 -o 'failing: .*' "$WORK/daemon.log" | cut -c1-110 || true)
  stop_daemon
  pass "$mode: SERVFAIL in $took ms (never the lie), session closed by the daemon, next query NOERROR on connection 2 [log: $reason]"
done

# ---- a lying primary, an honest secondary --------------------------------------
start_fixture liar "$WORK/pki" --lie wrong-question
start_fixture honest "$WORK/pki"
cat >"$WORK/pair.yaml" <<YAML
listen:
  - "$ADDR:$PORT"
upstreams:
  - url: "tls://127.0.0.1:$FIX_PORT_liar"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
    priority: 0
  - url: "tls://127.0.0.1:$FIX_PORT_honest"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
    priority: 10
budgets:
  attempt_ms: $ATTEMPT_MS
  total_ms: $TOTAL_MS
http:
  enabled: false
log:
  level: info
YAML
start_daemon "$WORK/pair.yaml" "$ADDR" "$PORT"
t0=$(now_ms)
out=$(dig_full "failover.lie.test")
t1=$(now_ms)
[ "$(status_of "$out")" = NOERROR ] || fail "failover: a lying primary with an honest secondary got: $out"
if grep -q "wrong-question" <<<"$out"; then fail "failover: the lie reached the client: $out"; fi
[ "$(stat "$WORK/honest.stats" answers)" = 1 ] || fail "failover: the secondary did not answer ($(cat "$WORK/honest.stats"))"
[ "$(stat "$WORK/liar.stats" answers)" = 1 ] || fail "failover: the primary was not asked first ($(cat "$WORK/liar.stats"))"
stop_daemon
pass "lying primary, honest secondary: NOERROR from the secondary in $((t1 - t0)) ms"

# ---- an answer after its exchange was given up --------------------------------
# delay-<ms> as the first label sets the fixture's think time for that query.
start_fixture late "$WORK/pki"
dot_config "$WORK/late.yaml" "$ADDR" "$PORT" "$FIX_PORT_late" "$WORK/pki"
start_daemon "$WORK/late.yaml" "$ADDR" "$PORT"
[ "$(status_of "$(dig_full warm.late.test)")" = NOERROR ] || fail "late: warm-up query"
t0=$(now_ms)
out=$(dig_full "delay-$((ATTEMPT_MS + 700)).late.test")
t1=$(now_ms)
[ "$(status_of "$out")" = SERVFAIL ] || fail "late: expected SERVFAIL at the attempt budget: $out"
# Let the fixture's think time run out: the late answer has nowhere to go.
sleep "$(awk -v ms=$((ATTEMPT_MS + 700 - (t1 - t0) + 300)) 'BEGIN { print (ms > 0 ? ms : 0) / 1000 }')"
[ "$(stat "$WORK/late.stats" closes_by_client)" -ge 1 ] || fail "late: the given-up session was not closed ($(cat "$WORK/late.stats"))"
[ "$(stat "$WORK/late.stats" answers)" = 1 ] || fail "late: the late answer was written to a live session ($(cat "$WORK/late.stats"))"
[ "$(status_of "$(dig_full next.late.test)")" = NOERROR ] || fail "late: the next query after the given-up one failed"
kill -0 "$DAEMON_PID" || fail "late: daemon died"
stop_daemon
pass "answer later than the attempt budget: SERVFAIL in $((t1 - t0)) ms, session closed (late answer dropped by the closed stream), next query NOERROR"
echo "lying_upstreams: all passed"
