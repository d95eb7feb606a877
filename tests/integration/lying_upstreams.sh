#!/usr/bin/env bash
# Lying upstreams through the real daemon, loopback only.
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
#     so the late answer never reaches a live exchange, the daemon serves on;
#   - error answers (fixture --answer-rcode N): a primary
#     that answers SERVFAIL, REFUSED, NOTIMP or FORMERR to everything, an
#     honest secondary: NOERROR from the secondary, counted by rcode on
#     /metrics; REFUSED/NOTIMP/FORMERR put the primary into backoff, SERVFAIL
#     does not; NXDOMAIN is an answer (no failover); when both upstreams answer
#     with an error the client gets the best upstream answer, relayed.
source "$(dirname "$0")/lib.sh"
# Under emulation (NXDNS_EMULATED=1, qemu) the daemon and fixtures run much
# slower: time limits are multiplied by T (the budgets themselves are the
# daemon's, unchanged).
emulation_factor "time limits"

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
  # A truncated frame can only be given up at the attempt budget; with time
  # left the query would get one more attempt on a fresh connection (whose
  # first query the fixture answers honestly: dead_upstreams.sh pins that).
  # Here the total equals the attempt budget, so the lie itself is what the
  # client's query meets.
  total=$TOTAL_MS
  [ "$mode" = truncated-frame ] && total=$ATTEMPT_MS
  TOTAL_MS=$total dot_config "$WORK/$name.yaml" "$ADDR" "$PORT" "${!port_var}" "$WORK/pki"
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
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
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
[ "$(status_of "$out")" = SERVFAIL ] || fail "late: expected SERVFAIL at the total budget: $out"
# Let the fixture's think time run out: the late answer has nowhere to go.
sleep "$(awk -v ms=$((ATTEMPT_MS + 700 - (t1 - t0) + 300)) 'BEGIN { print (ms > 0 ? ms : 0) / 1000 }')"
[ "$(stat "$WORK/late.stats" closes_by_client)" -ge 1 ] || fail "late: the given-up session was not closed ($(cat "$WORK/late.stats"))"
[ "$(stat "$WORK/late.stats" answers)" = 1 ] || fail "late: the late answer was written to a live session ($(cat "$WORK/late.stats"))"
[ "$(status_of "$(dig_full next.late.test)")" = NOERROR ] || fail "late: the next query after the given-up one failed"
kill -0 "$DAEMON_PID" || fail "late: daemon died"
stop_daemon
pass "answer later than the attempt budget: SERVFAIL in $((t1 - t0)) ms (one more attempt after the first, cut by the total budget), session closed (late answer dropped by the closed stream), next query NOERROR"
# ---- error answers fail over ----------------------------------------------------
# err_config FILE PRIMARY_PORT SECONDARY_PORT: two upstreams in that priority
# order, /metrics on $ADDR:8053.
err_config() {
  cat >"$1" <<YAML
listen:
  - "$ADDR:$PORT"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "tls://127.0.0.1:$2"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
    priority: 0
  - url: "tls://127.0.0.1:$3"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
    priority: 10
budgets:
  attempt_ms: $ATTEMPT_MS
  total_ms: $TOTAL_MS
http:
  listen: "$ADDR:8053"
log:
  level: info
YAML
}
# metric PREFIX: the value of the first /metrics sample line starting with PREFIX.
metric() {
  local text
  text=$(curl -s --max-time 5 "http://$ADDR:8053/metrics")  # whole, before awk exits early (pipefail)
  awk -v p="$1" 'index($0, p) == 1 { print $NF; exit }' <<<"$text"
}
up0='upstream="0",url="tls://127.0.0.1:'

start_fixture fine "$WORK/pki"
declare -A RCODE_NUM=([SERVFAIL]=2 [REFUSED]=5 [NOTIMP]=4 [FORMERR]=1)
for rc in SERVFAIL REFUSED NOTIMP FORMERR; do
  n=${RCODE_NUM[$rc]}
  fname="says_${rc,,}"
  start_fixture "$fname" "$WORK/pki" --answer-rcode "$n"
  fport="FIX_PORT_$fname"
  err_config "$WORK/$fname.yaml" "${!fport}" "$FIX_PORT_fine"
  before_fine=$(stat "$WORK/fine.stats" answers)
  start_daemon "$WORK/$fname.yaml" "$ADDR" "$PORT"
  for i in 1 2 3; do
    out=$(dig_full "q$i.$fname.lie.test")
    [ "$(status_of "$out")" = NOERROR ] || fail "$rc primary: query $i got $(status_of "$out"), want NOERROR from the secondary: $out"
    grep -q "^q$i\.$fname\.lie\.test\..*IN[[:space:]]A[[:space:]]192\.0\.2\.1" <<<"$out" || fail "$rc primary: query $i has no answer record: $out"
  done
  asked=$(stat "$WORK/$fname.stats" answers)
  answered=$(( $(stat "$WORK/fine.stats" answers) - before_fine ))
  [ "$answered" = 3 ] || fail "$rc primary: the secondary answered $answered of 3"
  counted=$(metric "nxdns_upstream_error_answers_total{$up0${!fport}\",rcode=\"$rc\"}")
  [ "$counted" = "$asked" ] || fail "$rc primary: error_answers_total{rcode=$rc} = '$counted', the primary sent $asked"
  state=$(curl -s --max-time 5 "http://$ADDR:8053/api/health" | python3 -c 'import json,sys; print(json.load(sys.stdin)["upstreams"][0]["state"])')
  if [ "$rc" = SERVFAIL ]; then
    # Neutral for health: still asked first every time, never in backoff.
    [ "$asked" = 3 ] || fail "SERVFAIL primary: asked $asked times of 3 (SERVFAIL must not back it off)"
    [ "$state" = healthy ] || fail "SERVFAIL primary: state $state, want healthy"
  else
    # Two in a row back it off: the third query goes to the secondary first.
    [ "$asked" = 2 ] || fail "$rc primary: asked $asked times of 3, want 2 (then backoff)"
    [ "$state" = backoff ] || fail "$rc primary: state $state, want backoff"
  fi
  kill -0 "$DAEMON_PID" || fail "$rc primary: daemon died"
  stop_daemon
  pass "$rc from the primary: 3 x NOERROR from the secondary; counted ($counted) by rcode; primary asked $asked times, state $state"
done

# NXDOMAIN is an answer about the name: relayed, the secondary never asked.
start_fixture says_nxdomain "$WORK/pki" --answer-rcode 3
err_config "$WORK/nx.yaml" "$FIX_PORT_says_nxdomain" "$FIX_PORT_fine"
before_fine=$(stat "$WORK/fine.stats" answers)
start_daemon "$WORK/nx.yaml" "$ADDR" "$PORT"
out=$(dig_full "gone.nx.lie.test")
[ "$(status_of "$out")" = NXDOMAIN ] || fail "NXDOMAIN primary: got $(status_of "$out"): $out"
[ "$(stat "$WORK/fine.stats" answers)" = "$before_fine" ] || fail "NXDOMAIN primary: the secondary was asked"
stop_daemon
pass "NXDOMAIN from the primary is relayed; the secondary is not asked"

# Both upstreams answer with an error: the best upstream answer is relayed
# (SERVFAIL > REFUSED > NOTIMP > FORMERR, ties to the higher priority), and
# no SERVFAIL is made up (nxdns_query_failures_total{reason="upstream_failed"}
# stays 0). A REFUSED reaching the client can only be an upstream's.
for pair in "REFUSED SERVFAIL SERVFAIL" "NOTIMP REFUSED REFUSED" "REFUSED NOTIMP REFUSED"; do
  read -r first second want <<<"$pair"
  f1="says_${first,,}" f2="says_${second,,}"
  p1="FIX_PORT_$f1" p2="FIX_PORT_$f2"
  err_config "$WORK/both.yaml" "${!p1}" "${!p2}"
  a1=$(stat "$WORK/$f1.stats" answers) a2=$(stat "$WORK/$f2.stats" answers)
  start_daemon "$WORK/both.yaml" "$ADDR" "$PORT"
  out=$(dig_full "both.$f1.$f2.lie.test")
  [ "$(status_of "$out")" = "$want" ] || fail "$first + $second: client got $(status_of "$out"), want $want relayed: $out"
  grep -q "^;both\.$f1\.$f2\.lie\.test\." <<<"$out" || fail "$first + $second: the reply does not echo the question: $out"
  [ $(( $(stat "$WORK/$f1.stats" answers) - a1 )) = 1 ] && [ $(( $(stat "$WORK/$f2.stats" answers) - a2 )) = 1 ] ||
    fail "$first + $second: each upstream should have been asked once"
  made_up=$(metric 'nxdns_query_failures_total{reason="upstream_failed"}')
  [ "$made_up" = 0 ] || fail "$first + $second: $made_up SERVFAIL(s) made up by the daemon"
  stop_daemon
  pass "$first from the primary, $second from the secondary: the client gets the upstream's $want"
done
echo "lying_upstreams: all passed"
