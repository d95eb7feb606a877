#!/usr/bin/env bash
# The daemon explains itself. Against the in-repo DoT fixture, on
# loopback only:
#  - under a burst past the per-upstream cap (64), a live scrape shows the
#    exact queue (depth > 0, in-flight at the cap) and queued_total rising;
#  - a slow upstream (answers past the stall deadline's cap) is not taken
#    for a WAN outage;
#  - a stale reused session recovered by the one redial shows as
#    reuse_recoveries_total 1, with no diagnostics episode and no warning;
#  - the live /metrics passes `promtool check metrics`;
#  - the HTTP surface: 404, 405 + Allow, HEAD without a body, and a stalled
#    HTTP client does not delay DNS on the same loop;
#  - `nxdns check`: a good upstream is an ok row and exit 0, a closed port a
#    FAIL row and exit 1, and the probe's session is closed after every
#    iteration, on the error path (a black-holed probe) too.
source "$(dirname "$0")/lib.sh"

FIX=$FIXTURES
PKI=$FIX/nxdns-test-pki
DOT=$FIX/nxdns-fixture-dot
RELAY=$FIX/nxdns-delay-relay
[ -x "$PKI" ] && [ -x "$DOT" ] && [ -x "$RELAY" ] ||
  skip "fixtures not built in $FIX (build nxdns-test-pki, nxdns-fixture-dot, nxdns-delay-relay)"
PROMTOOL=$(command -v promtool || true)

fx nxdns-test-pki --out "$WORK/pki" --name dot.test >"$WORK/pki.log" 2>&1 || fail "test PKI"

# start_fixture NAME [fixture flags...]: sets FPORT (and records the pid).
start_fixture() {
  local name=$1 i
  shift
  fx_exec nxdns-fixture-dot --listen 127.0.0.1:0 --port-file "$WORK/$name.port" --stats-file "$WORK/$name.stats" \
    --cert "$WORK/pki/server.pem" --key "$WORK/pki/server.key" "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=("$!")
  for i in $(seq 1 100); do
    [ -s "$WORK/$name.port" ] && break
    sleep 0.05
  done
  FPORT=$(cat "$WORK/$name.port" 2>/dev/null) || fail "fixture $name did not start"
}

# start_relay NAME TO_PORT: a zero-delay TCP relay to a fixture, so that
# two configured upstreams (the config refuses the same server twice) reach
# one fixture, whose counters then show whether the first probe's session
# was closed before the second one dialed. Sets RPORT.
start_relay() {
  local name=$1 to=$2 i
  fx_exec nxdns-delay-relay --listen 127.0.0.1:0 --to "127.0.0.1:$to" --rtt-ms 0 --port-file "$WORK/$name.port" \
    >"$WORK/$name.log" 2>&1 &
  PIDS+=("$!")
  for i in $(seq 1 100); do
    [ -s "$WORK/$name.port" ] && break
    sleep 0.05
  done
  RPORT=$(cat "$WORK/$name.port" 2>/dev/null) || fail "relay $name did not start"
}

# fx_stat NAME KEY: one counter from a fixture's stats file.
fx_stat() { sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$WORK/$1.stats"; }

# start_daemon NAME ADDR UPSTREAM_PORT: nxdns on ADDR:5300 (DNS) and
# ADDR:8053 (HTTP), one DoT upstream on 127.0.0.1:UPSTREAM_PORT. Sets DPID.
start_daemon() {
  local name=$1 addr=$2 up=$3 i
  cat >"$WORK/$name.yaml" <<YAML
listen:
  - "$addr:5300"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "tls://127.0.0.1:$up"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
# Room for the 1500 ms upstream plus a queue wave, also under emulation:
# this file checks visibility, not budgets.
budgets:
  attempt_ms: 4000
  total_ms: 9000
http:
  listen: "$addr:8053"
log:
  level: info
YAML
  nx_exec run -c "$WORK/$name.yaml" >"$WORK/$name.log" 2>&1 &
  DPID=$!
  PIDS+=("$DPID")
  # Ready when the HTTP surface answers: no DNS query may warm the upstream.
  for i in $(seq 1 100); do
    curl -s -o /dev/null --max-time 1 "http://$addr:8053/api/health" && return 0
    kill -0 "$DPID" 2>/dev/null || fail "daemon $name exited"
    sleep 0.05
  done
  fail "daemon $name: no HTTP surface on $addr:8053"
}

scrape() { curl -s --max-time 5 "http://$1:8053/metrics"; }
# metric TEXT PREFIX: the value of the first sample line starting with PREFIX.
metric() { awk -v p="$2" 'index($0, p) == 1 { print $NF; exit }' <<<"$1"; }

# ===========================================================================
echo "# queue visibility under a burst past the cap"
start_fixture slow --response-delay-ms 1500
SLOW=$FPORT
A1=$(pick_loopback)
start_daemon burst "$A1" "$SLOW"
U='{upstream="0",url="tls://127.0.0.1:'$SLOW'"}'

# 64 concurrent UDP names (the UDP cap) plus 10 over TCP: 74 > 64 in flight.
nx_exec burst --server "$A1:5300" --names 64 --cold --zone burst.test --timeout-ms 9000 >"$WORK/burst.out" 2>&1 &
BURST=$!
EXTRA=()
for i in $(seq 1 10); do
  dig @"$A1" -p 5300 +tcp +tries=1 +time=9 "extra-$i.burst.test" >"$WORK/extra-$i.out" 2>&1 &
  EXTRA+=("$!")
done

max_depth=0 max_inflight=0 q_while_waiting=""
for i in $(seq 1 60); do
  m=$(scrape "$A1")
  depth=$(metric "$m" "nxdns_upstream_queue_depth$U")
  infl=$(metric "$m" "nxdns_upstream_in_flight$U")
  qt=$(metric "$m" "nxdns_upstream_queued_total$U")
  [ "${depth:-0}" -gt "$max_depth" ] && max_depth=$depth
  [ "${infl:-0}" -gt "$max_inflight" ] && max_inflight=$infl
  if [ "${depth:-0}" -gt 0 ] && [ -z "$q_while_waiting" ]; then
    q_while_waiting=$qt
    echo "  while waiting: in_flight=$infl queue_depth=$depth queued_total=$qt"
  fi
  [ -n "$q_while_waiting" ] && [ "${depth:-0}" = 0 ] && break
  sleep 0.1
done
[ "$max_depth" -gt 0 ] || fail "queue depth never above 0 during the burst (max in flight $max_inflight)"
[ "$max_inflight" = 64 ] || fail "in flight peaked at $max_inflight, expected the cap 64"
wait "$BURST" || fail "cold burst: $(tail -3 "$WORK/burst.out")"
for p in "${EXTRA[@]}"; do wait "$p" || true; done
m=$(scrape "$A1")
qt_after=$(metric "$m" "nxdns_upstream_queued_total$U")
qs_after=$(metric "$m" "nxdns_upstream_queued_seconds_total$U")
[ "$qt_after" -gt "$q_while_waiting" ] || fail "queued_total did not rise: $q_while_waiting -> $qt_after"
[ "$qt_after" -ge "$max_depth" ] || fail "queued_total $qt_after < the $max_depth waiters seen"
awk -v s="$qs_after" 'BEGIN { exit !(s > 0) }' || fail "queued_seconds_total is $qs_after"
servfails=$(cat "$WORK"/extra-*.out | grep -c 'status: SERVFAIL' || true)
[ "$servfails" = 0 ] || fail "$servfails queued TCP queries got SERVFAIL"
pass "burst: max depth $max_depth at in_flight $max_inflight; queued_total $q_while_waiting -> $qt_after (${qs_after}s queued)"

# A slow upstream is not a dead path. Its fastest answer (1.5 s) is now
# known, so every exchange passes the 1 s cap of the silent stall deadline
# before its answer comes: each gets its one duplicate, and none of that
# may read as a WAN outage (sessions retired under their exchanges, every
# re-sent copy stalling the same way until the budget ends in SERVFAIL).
nx burst --server "$A1:5300" --names 40 --zone warm.burst.test --timeout-ms 9000 >"$WORK/warm.out" 2>&1 ||
  fail "burst at the slow upstream with its latency known: $(tail -3 "$WORK/warm.out")"
m=$(scrape "$A1")
odials=$(metric "$m" "nxdns_upstream_outage_dials_total$U")
[ "${odials:-x}" = 0 ] || fail "a slow upstream read as an outage: outage dials ${odials:-missing}"
! grep -q "reachable again" "$WORK/burst.log" || fail "a slow upstream read as an outage: $(grep -m1 'reachable again' "$WORK/burst.log")"
pass "a slow upstream (1.5 s answers) is not an outage: 40 names NOERROR, no outage dial ($(grep -o 'wall [0-9.]* ms' "$WORK/warm.out"))"

if [ -n "$PROMTOOL" ]; then
  scrape "$A1" >"$WORK/live.prom"
  "$PROMTOOL" check metrics <"$WORK/live.prom" >"$WORK/promtool.log" 2>&1 || fail "promtool: $(cat "$WORK/promtool.log")"
  pass "promtool check metrics on a live scrape ($(grep -vc '^#' "$WORK/live.prom") samples)"
else
  skip_part "promtool check metrics (promtool not installed; Debian: prometheus)"
fi
kill -TERM "$DPID"
wait "$DPID" || fail "burst daemon: exit status $? after SIGTERM"

# ===========================================================================
echo "# stale-session recovery is a counter, not an episode"
start_fixture stale --close-on-query-after 1
STALE=$FPORT
A2=$(pick_loopback)
start_daemon stale "$A2" "$STALE"
U='{upstream="0",url="tls://127.0.0.1:'$STALE'"}'
for n in first second; do
  st=$(dig_status "$A2" 5300 "$n.stale.test" +tries=1 +time=3)
  [ "$st" = NOERROR ] || fail "$n query: ${st:-no answer}"
done
m=$(scrape "$A2")
[ "$(metric "$m" "nxdns_upstream_reuse_recoveries_total$U")" = 1 ] ||
  fail "reuse_recoveries_total is $(metric "$m" "nxdns_upstream_reuse_recoveries_total$U"), expected 1"
[ "$(metric "$m" "nxdns_upstream_redials_total$U")" = 1 ] || fail "redials_total is not 1"
[ "$(metric "$m" "nxdns_upstream_connections_total$U")" = 2 ] || fail "connections_total is not 2"
ok_attempts=$(metric "$m" "nxdns_upstream_attempts_total{upstream=\"0\",url=\"tls://127.0.0.1:$STALE\",outcome=\"ok\"}")
[ "$ok_attempts" = 2 ] || fail "attempts_total{outcome=ok} is $ok_attempts, expected 2"
diagjson=$(curl -s --max-time 5 "http://$A2:8053/api/diagnostics")
grep -q '"episodes":\[\]' <<<"$diagjson" || fail "the recovery opened an episode: $diagjson"
if grep -Eq ' (warn|error) ' "$WORK/stale.log"; then fail "the recovery was logged as a problem"; fi
pass "stale reused session: reuse_recoveries_total 1, no episode, no warning"

# ===========================================================================
echo "# HTTP surface"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://$A2:8053/nope")
[ "$code" = 404 ] || fail "unknown path: HTTP $code"
curl -s -D "$WORK/405.h" -o /dev/null -X POST --data x=1 "http://$A2:8053/metrics"
grep -q '^HTTP/1\.[01] 405' "$WORK/405.h" || fail "POST: $(head -n1 "$WORK/405.h")"
grep -qi '^Allow: GET, HEAD' "$WORK/405.h" || fail "405 without Allow: GET, HEAD"
exec 3<>"/dev/tcp/$A2/8053"
printf 'HEAD /metrics HTTP/1.0\r\nHost: %s:8053\r\n\r\n' "$A2" >&3
timeout 5 cat <&3 >"$WORK/head.raw" || true
exec 3<&-
grep -q '^HTTP/1\.[01] 200' "$WORK/head.raw" || fail "HEAD: $(head -n1 "$WORK/head.raw")"
grep -Eqi '^Content-Length: [1-9][0-9]*' "$WORK/head.raw" || fail "HEAD without Content-Length"
[ "$(tail -c 4 "$WORK/head.raw" | od -An -tx1 | tr -d ' \n')" = 0d0a0d0a ] || fail "HEAD response carried a body"
ctype=$(curl -s -D - -o /dev/null "http://$A2:8053/metrics" | tr -d '\r' | sed -n 's/^Content-Type: //Ip')
[ "$ctype" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "metrics Content-Type: $ctype"
code=$(curl -s -o "$WORK/health.json" -w '%{http_code}' "http://$A2:8053/api/health")
[ "$code" = 200 ] && grep -q '"status":"ok"' "$WORK/health.json" || fail "health: $code $(cat "$WORK/health.json")"
pass "404, 405 + Allow, HEAD without body, metrics content type, health ok"

# A stalled HTTP client: half a request, then nothing. DNS on the same loop
# must not notice (the connection timeout is 5 s: a blocked loop would show).
exec 4<>"/dev/tcp/$A2/8053"
printf 'GET /metr' >&4
sleep 0.2
t0=$(now_ms)
st=$(dig_status "$A2" 5300 "during-stall.stale.test" +tries=1 +time=4)
t1=$(now_ms)
[ "$st" = NOERROR ] || fail "DNS during a stalled HTTP client: ${st:-no answer}"
[ $((t1 - t0)) -lt 1000 ] || fail "DNS took $((t1 - t0)) ms while an HTTP client stalled"
t2=$(now_ms)
code=$(curl -s -o /dev/null --max-time 4 -w '%{http_code}' "http://$A2:8053/api/health")
t3=$(now_ms)
[ "$code" = 200 ] && [ $((t3 - t2)) -lt 1000 ] || fail "a scrape beside the stalled client: HTTP $code in $((t3 - t2)) ms"
exec 4<&-
pass "stalled HTTP client: DNS answered in $((t1 - t0)) ms, a scrape in $((t3 - t2)) ms"
kill -TERM "$DPID"
wait "$DPID" || fail "stale daemon: exit status $? after SIGTERM"

# ===========================================================================
echo "# nxdns check"
# check_config NAME ATTEMPT_MS PORT...: one DoT upstream per PORT.
check_config() {
  local name=$1 attempt=$2 p
  shift 2
  {
    echo "listen:"
    echo "  - \"127.0.0.1:5300\""
    echo "forward_special_zones: [test]  # the test names live under test (RFC 6761)"
    echo "upstreams:"
    for p in "$@"; do
      echo "  - url: \"tls://127.0.0.1:$p\""
      echo "    tls_name: \"dot.test\""
      echo "    ca_file: \"$WORK/pki/ca.pem\""
    done
    echo "budgets:"
    echo "  attempt_ms: $attempt"
    echo "http:"
    echo "  enabled: false"
  } >"$WORK/$name.yaml"
}
# settled NAME N: the fixture saw N connections, all closed by the client
# (with close_notify), none left open, never two at once.
settled() {
  local name=$1 n=$2 i
  for i in $(seq 1 40); do
    [ "$(fx_stat "$name" accepts)" = "$n" ] && [ "$(fx_stat "$name" active_connections)" = 0 ] &&
      [ "$(fx_stat "$name" closes_by_client)" = "$n" ] && break
    sleep 0.05
  done
  [ "$(fx_stat "$name" accepts)" = "$n" ] || fail "$name: $(fx_stat "$name" accepts) connections, expected $n"
  [ "$(fx_stat "$name" active_connections)" = 0 ] || fail "$name: a probe session was left open"
  [ "$(fx_stat "$name" closes_by_client)" = "$n" ] || fail "$name: closes_by_client $(fx_stat "$name" closes_by_client) != $n"
  [ "$(fx_stat "$name" peak_active_connections)" = 1 ] ||
    fail "$name: $(fx_stat "$name" peak_active_connections) probe sessions open at once (one was not closed before the next)"
}

start_fixture good
GOOD=$FPORT
start_relay good-relay "$GOOD"
GOOD_R=$RPORT
check_config good 2000 "$GOOD" "$GOOD_R"
rc=0
nx check -c "$WORK/good.yaml" >"$WORK/check-good.out" 2>&1 || rc=$?
cat "$WORK/check-good.out"
[ "$rc" = 0 ] || fail "check against a good upstream: exit $rc"
grep -qE '^0 +tls://127\.0\.0\.1:'"$GOOD"' +dot +TLS[^ ]+ +[0-9.]+ +ok +NOERROR' "$WORK/check-good.out" ||
  fail "check: no ok row for upstream 0"
grep -qE '^1 +tls://127\.0\.0\.1:'"$GOOD_R"' +dot +TLS[^ ]+ +[0-9.]+ +ok +NOERROR' "$WORK/check-good.out" ||
  fail "check: no ok row for upstream 1"
settled good 2
[ "$(fx_stat good close_notify_received)" = 2 ] || fail "good: sessions not closed with close_notify"
pass "check: good upstream -> ok rows, exit 0, each probe's session closed before the next"

CLOSED=$((20000 + RANDOM % 20000))
check_config mixed 2000 "$GOOD" "$CLOSED"
rc=0
nx check -c "$WORK/mixed.yaml" >"$WORK/check-mixed.out" 2>&1 || rc=$?
cat "$WORK/check-mixed.out"
[ "$rc" = 1 ] || fail "check with a closed port: exit $rc, expected 1"
grep -qE '^0 .* ok +NOERROR' "$WORK/check-mixed.out" || fail "check: the good row is missing"
grep -qE '^1 +tls://127\.0\.0\.1:'"$CLOSED"' +dot +- +- +FAIL +connect_failed' "$WORK/check-mixed.out" ||
  fail "check: no FAIL row naming connect_failed for the closed port"
settled good 3
pass "check: closed port -> FAIL row with its reason, exit 1"

start_fixture hole --black-hole
HOLE=$FPORT
start_relay hole-relay "$HOLE"
check_config hole 700 "$HOLE" "$RPORT"
rc=0
nx check -c "$WORK/hole.yaml" >"$WORK/check-hole.out" 2>&1 || rc=$?
cat "$WORK/check-hole.out"
[ "$rc" = 1 ] || fail "check against a black hole: exit $rc, expected 1"
[ "$(grep -cE 'FAIL +attempt_timeout' "$WORK/check-hole.out")" = 2 ] || fail "check: expected two attempt_timeout rows"
settled hole 2
pass "check: black-holed probe times out, and its session is closed anyway"

# DoH upstreams are probed through the daemon's own transport factory.
DOHFX=$FIX/nxdns-fixture-doh
if [ -x "$DOHFX" ]; then
  fx_exec nxdns-fixture-doh --listen 127.0.0.1:0 --cert "$WORK/pki/server.pem" --key "$WORK/pki/server.key" \
    --port-file "$WORK/doh.port" --stats-file "$WORK/doh.stats" >"$WORK/doh.log" 2>&1 &
  PIDS+=("$!")
  for i in $(seq 1 100); do
    [ -s "$WORK/doh.port" ] && break
    sleep 0.05
  done
  DOHP=$(cat "$WORK/doh.port") || fail "DoH fixture did not start"
  cat >"$WORK/doh.yaml" <<YAML
listen:
  - "127.0.0.1:5300"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "https://127.0.0.1:$DOHP/dns-query"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
http:
  enabled: false
YAML
  rc=0
  nx check -c "$WORK/doh.yaml" >"$WORK/check-doh.out" 2>&1 || rc=$?
  cat "$WORK/check-doh.out"
  [ "$rc" = 0 ] || fail "check against the DoH fixture: exit $rc"
  grep -qE '^0 +https://127\.0\.0\.1:'"$DOHP"'/dns-query +doh +TLS[^ ]+ +[0-9.]+ +ok +NOERROR' "$WORK/check-doh.out" ||
    fail "check: no ok row for the DoH upstream"
  for i in $(seq 1 40); do
    [ "$(fx_stat doh active_connections)" = 0 ] && break
    sleep 0.05
  done
  [ "$(fx_stat doh active_connections)" = 0 ] || fail "DoH probe left its connection open"
  pass "check: DoH upstream -> ok row, connection closed"
else
  skip_part "check's DoH probe row (nxdns-fixture-doh not built)"
fi

before=$(fx_stat good accepts)
rc=0
nx check --offline -c "$WORK/good.yaml" >"$WORK/check-offline.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "check --offline: exit $rc"
sleep 0.1
[ "$(fx_stat good accepts)" = "$before" ] || fail "check --offline touched the network"
pass "check --offline validates only"

echo "observability: all passed"
