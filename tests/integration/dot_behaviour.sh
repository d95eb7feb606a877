#!/usr/bin/env bash
# DoT session behaviour through the real daemon and a real client (dig),
# against the scripted loopback fixture (issue 3, item 5):
#   - two sequential exchanges share one connection (one accept);
#   - a server that closes a reused session as the next query arrives is
#     recovered by exactly one redial: answered, two accepts, no warning;
#   - one length-prefix byte then close on a REUSED session is final: SERVFAIL,
#     no second accept (no redial after a response byte);
#   - cancellation (budget) closes the session;
#   - wrong tls_name and an unknown CA are refused with a log line naming the
#     upstream and the failed check.
source "$(dirname "$0")/lib.sh"

ADDR=$(pick_loopback)
PORT=5300
make_pki "$WORK/pki" dot.test
q() { dig_status "$ADDR" "$PORT" "$1" +tries=1 +time=6 "${@:2}"; }

# -- 1. reuse: two sequential exchanges, one accept
start_fixture reuse "$WORK/pki"
dot_config "$WORK/reuse.yaml" "$ADDR" "$PORT" "$FIX_PORT_reuse" "$WORK/pki"
start_daemon "$WORK/reuse.yaml" "$ADDR" "$PORT"
[ "$(q one.reuse.test)" = NOERROR ] || fail "reuse: first query"
[ "$(q two.reuse.test +tcp)" = NOERROR ] || fail "reuse: second query"
sleep 0.2
[ "$(stat "$WORK/reuse.stats" accepts)" = 1 ] || fail "reuse: accepts = $(stat "$WORK/reuse.stats" accepts), want 1"
[ "$(stat "$WORK/reuse.stats" answers)" = 2 ] || fail "reuse: answers = $(stat "$WORK/reuse.stats" answers), want 2"
# DoT only: libcurl (and the TLS stack and libraries it pulls in) never mapped.
! maps_libcurl "$DAEMON_PID" || fail "reuse: a DoT-only daemon mapped libcurl"
stop_daemon
sleep 0.2
# SIGTERM closed the session with close_notify.
[ "$(stat "$WORK/reuse.stats" close_notify_received)" = 1 ] || fail "reuse: no close_notify at shutdown"
pass "two exchanges over one connection; close_notify at shutdown; libcurl not mapped"

# -- 2. stale reuse: the server drops the reused session on the next query
start_fixture stale "$WORK/pki" --close-on-query-after 1
dot_config "$WORK/stale.yaml" "$ADDR" "$PORT" "$FIX_PORT_stale" "$WORK/pki"
start_daemon "$WORK/stale.yaml" "$ADDR" "$PORT"
[ "$(q first.stale.test)" = NOERROR ] || fail "stale: first query"
[ "$(q second.stale.test)" = NOERROR ] || fail "stale: the reused-session query was not recovered"
sleep 0.2
[ "$(stat "$WORK/stale.stats" accepts)" = 2 ] || fail "stale: accepts = $(stat "$WORK/stale.stats" accepts), want 2 (one redial)"
if grep -qE ' (warn|error) ' "$WORK/daemon.log"; then fail "stale: a recovered stale session must not log a warning: $(grep -E ' (warn|error) ' "$WORK/daemon.log")"; fi
stop_daemon
pass "stale reused session recovered by exactly one redial, no warning"

# -- 3. one prefix byte then close, on a reused session: final, no redial
start_fixture prefix "$WORK/pki" --prefix-byte-then-close-after 1
dot_config "$WORK/prefix.yaml" "$ADDR" "$PORT" "$FIX_PORT_prefix" "$WORK/pki"
start_daemon "$WORK/prefix.yaml" "$ADDR" "$PORT"
[ "$(q first.prefix.test)" = NOERROR ] || fail "prefix: first query"
[ "$(q second.prefix.test)" = SERVFAIL ] || fail "prefix: expected SERVFAIL after a response byte"
sleep 0.2
[ "$(stat "$WORK/prefix.stats" accepts)" = 1 ] || fail "prefix: accepts = $(stat "$WORK/prefix.stats" accepts), want 1 (no redial after a byte)"
stop_daemon
pass "prefix byte then close on a reused session: SERVFAIL, no redial"

# -- 4. cancellation by the budget closes the session
# The attempt budget equals the total: with time left after an attempt
# timeout the query would get one more attempt on a fresh connection, which
# this fixture answers (dead_upstreams.sh pins that); here the total budget
# is what ends it.
start_fixture hole "$WORK/pki" --black-hole-after 1
ATTEMPT_MS=1500 TOTAL_MS=1500 dot_config "$WORK/hole.yaml" "$ADDR" "$PORT" "$FIX_PORT_hole" "$WORK/pki"
start_daemon "$WORK/hole.yaml" "$ADDR" "$PORT"
[ "$(q first.hole.test)" = NOERROR ] || fail "hole: first query"
t0=$(now_ms)
[ "$(q second.hole.test)" = SERVFAIL ] || fail "hole: expected SERVFAIL from the budget"
t1=$(now_ms)
[ $((t1 - t0)) -le 1650 ] || fail "hole: SERVFAIL after $((t1 - t0)) ms, budget 1500 ms (+10%)"
sleep 0.3
[ "$(stat "$WORK/hole.stats" closes_by_client)" -ge 1 ] || fail "hole: the cancelled session was not closed by the daemon"
stop_daemon
pass "budget cancellation: SERVFAIL in $((t1 - t0)) ms and the session closed"

# -- 5. certificate checks: wrong tls_name, unknown CA
start_fixture certs "$WORK/pki"
dot_config "$WORK/name.yaml" "$ADDR" "$PORT" "$FIX_PORT_certs" "$WORK/pki" other.test
start_daemon "$WORK/name.yaml" "$ADDR" "$PORT"
[ "$(q name.cert.test)" = SERVFAIL ] || fail "wrong tls_name: expected SERVFAIL"
stop_daemon
grep -q "tls://127.0.0.1:$FIX_PORT_certs" "$WORK/daemon.log" || fail "wrong tls_name: log does not name the upstream"
grep -qi "name mismatch\|expected other.test" "$WORK/daemon.log" || fail "wrong tls_name: log does not name the check: $(cat "$WORK/daemon.log")"
pass "wrong tls_name refused: $(grep -i 'certificate' "$WORK/daemon.log" | head -n1 | cut -c1-200)"

make_pki "$WORK/other-ca" dot.test
dot_config "$WORK/ca.yaml" "$ADDR" "$PORT" "$FIX_PORT_certs" "$WORK/other-ca"
start_daemon "$WORK/ca.yaml" "$ADDR" "$PORT"
[ "$(q ca.cert.test)" = SERVFAIL ] || fail "unknown CA: expected SERVFAIL"
stop_daemon
grep -qi "not trusted\|verify failed" "$WORK/daemon.log" || fail "unknown CA: log does not name the check: $(cat "$WORK/daemon.log")"
pass "unknown CA refused: $(grep -i 'certificate' "$WORK/daemon.log" | head -n1 | cut -c1-200)"
echo "dot_behaviour: all passed"
