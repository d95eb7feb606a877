#!/usr/bin/env bash
# Reload without a blip, through the real daemon, loopback
# only. Three DoT fixtures: A (kept through every reload), B (added by the
# first reload, removed by the second) and C (added by the second).
#   - SIGHUP adding B (preferred): A's connections are untouched (fixture
#     accepts and open connections unchanged), traffic moves to B;
#   - SIGHUP removing B and adding C DURING a 30-name burst with exchanges
#     in flight at B: zero SERVFAIL, A's accepts and open connections do not
#     change, B's exchanges in flight are answered and then every B
#     connection closes (fixture counters, the daemon's "drained" line), C
#     serves; a listener added on the way starts answering while the old
#     one keeps answering;
#   - SIGHUP with a broken file: one log line with FILE:LINE:COL, the daemon
#     still answers from the same upstream set (/metrics);
#   - `nxdns reload` prints the same error and exits 1 while the file is
#     broken, applies and exits 0 once it is fixed (dropping the listener
#     added before: it stops answering, the other one does not);
#   - every reload, applied or refused, is RELOADING=1 + MONOTONIC_USEC then
#     READY=1 on NOTIFY_SOCKET (systemd's reload protocol).
source "$(dirname "$0")/lib.sh"
require_program dig "the DNS client the checks use"
require_program curl "reads the daemon's /metrics"
emulation_factor "waits and delays"

ADDR=$(pick_loopback)
ADDR2=$(pick_loopback)
PORT=5300
HTTP="$ADDR:8053"
make_pki "$WORK/pki" dot.test
start_fixture A "$WORK/pki"
start_fixture B "$WORK/pki" --response-delay-ms $((400 * T))
start_fixture C "$WORK/pki"
CONF="$WORK/nxdns.yaml"

# write_config LISTEN_YAML UPSTREAM_YAML: the daemon's file, rewritten in
# place (the daemon re-reads the path it was started with).
upstream() {  # upstream PORT PRIORITY
  printf '  - url: "tls://127.0.0.1:%s"\n    tls_name: "dot.test"\n    ca_file: "%s"\n    priority: %s\n' \
    "$1" "$WORK/pki/ca.pem" "$2"
}
write_config() {
  {
    printf 'forward_special_zones: [test]\nlisten:\n%s\nupstreams:\n%s\n' "$1" "$2"
    printf 'budgets:\n  attempt_ms: %s\n  total_ms: %s\n' $((1500 * T)) $((3000 * T))
    printf 'http:\n  listen: "%s"\ncache:\n  enabled: true\nlog:\n  level: info\n' "$HTTP"
  } >"$CONF.tmp"
  mv "$CONF.tmp" "$CONF"
}
LISTEN1="  - \"$ADDR:$PORT\""
LISTEN2="$LISTEN1
  - \"$ADDR2:$PORT\""

# reloaded N: until the daemon log holds N "applied" lines (max ~5 s x T).
reloaded() {
  local i
  for i in $(seq 1 $((100 * T))); do
    [ "$(grep -c 'reload (.*): applied' "$WORK/daemon.log" || true)" -ge "$1" ] && return 0
    sleep 0.05
  done
  fail "reload $1 not applied: $(tail -3 "$WORK/daemon.log")"
}
# burst ZONE OUT: a 30-name burst, JSON; prints "servfail timeouts wall_ms".
burst() {
  nx burst --server "$ADDR:$PORT" --names 30 --zone "$1" --json --timeout-ms $((6000 * T)) >"$2" 2>"$2.err" || true
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["servfail"], r["timeouts"], round(r["wall_ms"]))' "$2" ||
    fail "burst $1 printed no JSON: $(cat "$2.err")"
}
# in_flight_at URL: the daemon's nxdns_upstream_in_flight for that upstream.
in_flight_at() { curl -s --max-time 5 "http://$HTTP/metrics" | sed -n "s|^nxdns_upstream_in_flight{.*url=\"$1\".*} \([0-9]*\)$|\1|p"; }
upstream_urls() { curl -s --max-time 5 "http://$HTTP/metrics" | sed -n 's/^nxdns_upstream_slots{.*url="\([^"]*\)".*/\1/p' | sort | tr '\n' ' '; }

# systemd's side of the notify protocol: every datagram, one per line.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
out = open(sys.argv[2], "a", buffering=1)
while True:
    out.write(s.recv(4096).decode().replace("\n", "|") + "\n")
' "$WORK/notify.sock" "$WORK/notify.log" &
PIDS+=("$!")
for i in $(seq 1 100); do [ -S "$WORK/notify.sock" ] && break; sleep 0.05; done

# ---- start on A alone, warm it ---------------------------------------------
write_config "$LISTEN1" "$(upstream "$FIX_PORT_A" 5)"
export NOTIFY_SOCKET="$WORK/notify.sock"
start_daemon "$CONF" "$ADDR" "$PORT"
unset NOTIFY_SOCKET
read -r sf to wall < <(burst warm-a.test "$WORK/warm-a.json")
[ "$sf" = 0 ] && [ "$to" = 0 ] || fail "warm-up burst on A: $sf SERVFAIL, $to timeouts"
A_ACCEPTS=$(stat "$WORK/A.stats" accepts)
A_OPEN=$(stat "$WORK/A.stats" active_connections)
A_QUERIES=$(stat "$WORK/A.stats" queries)
[ "$A_OPEN" -ge 1 ] || fail "A holds no connection after its warm-up burst"
echo "  A warm: $A_ACCEPTS accepts, $A_OPEN open"

# ---- SIGHUP 1: add B, preferred ---------------------------------------------
write_config "$LISTEN1" "$(upstream "$FIX_PORT_A" 5; upstream "$FIX_PORT_B" 0)"
kill -HUP "$DAEMON_PID"
reloaded 1
read -r sf to wall < <(burst warm-b.test "$WORK/warm-b.json")
[ "$sf" = 0 ] && [ "$to" = 0 ] || fail "burst after adding B: $sf SERVFAIL, $to timeouts"
[ "$(stat "$WORK/B.stats" answers)" -ge 30 ] || fail "the added, preferred upstream B did not serve the burst"
[ "$(stat "$WORK/A.stats" accepts)" = "$A_ACCEPTS" ] || fail "adding B redialled A: accepts $A_ACCEPTS -> $(stat "$WORK/A.stats" accepts)"
[ "$(stat "$WORK/A.stats" active_connections)" = "$A_OPEN" ] || fail "adding B closed A's connections"
B_OPEN=$(stat "$WORK/B.stats" active_connections)
pass "SIGHUP added B: B served 30 names, A kept its $A_OPEN connection(s) and dialled none"

# ---- SIGHUP 2 during a burst: remove B, add C, add a listener --------------
write_config "$LISTEN2" "$(upstream "$FIX_PORT_A" 5; upstream "$FIX_PORT_C" 0)"
burst during.test "$WORK/during.json" >"$WORK/during.result" &
BURST_PID=$!
# SIGHUP once the daemon has at least 10 of the burst's exchanges in flight
# at B (its /metrics gauge; B answers after 400 ms), so the drain has
# something to drain. Not the fixture's queries - answers: under emulation
# the stall watch re-sends slow exchanges, and a copy left unanswered after
# its original was answered is not an exchange in flight.
in_flight_b=0
for i in $(seq 1 $((300 * T))); do
  b_answers_at_reload=$(stat "$WORK/B.stats" answers)
  in_flight_b=$(in_flight_at "tls://127.0.0.1:$FIX_PORT_B")
  [ "${in_flight_b:-0}" -ge 10 ] && break
  sleep 0.01
done
[ "${in_flight_b:-0}" -ge 10 ] || fail "the burst never had 10 exchanges in flight at B (saw ${in_flight_b:-none})"
kill -HUP "$DAEMON_PID"
wait "$BURST_PID" || fail "burst during the reload failed"
read -r sf to wall <"$WORK/during.result"
reloaded 2
[ "$sf" = 0 ] && [ "$to" = 0 ] || fail "burst during the reload: $sf SERVFAIL, $to timeouts"
# Each exchange in flight at B when the reload came was answered by B (its
# answers counted after the gauge was read), none failed over.
B_ANSWERED=$(($(stat "$WORK/B.stats" answers) - b_answers_at_reload))
[ "$B_ANSWERED" -ge "$in_flight_b" ] || fail "B answered $B_ANSWERED of the $in_flight_b exchanges in flight at the reload"
for i in $(seq 1 $((100 * T))); do
  [ "$(stat "$WORK/B.stats" active_connections)" = 0 ] && break
  sleep 0.05
done
[ "$(stat "$WORK/B.stats" active_connections)" = 0 ] || fail "removed upstream B still holds $(stat "$WORK/B.stats" active_connections) connection(s)"
grep -q "reload: upstream 1 (tls://127.0.0.1:$FIX_PORT_B) drained; its sessions are closed" "$WORK/daemon.log" ||
  fail "no drained line for B in the daemon log"
[ "$(stat "$WORK/A.stats" accepts)" = "$A_ACCEPTS" ] || fail "the reload redialled unchanged A: accepts $A_ACCEPTS -> $(stat "$WORK/A.stats" accepts)"
[ "$(stat "$WORK/A.stats" active_connections)" = "$A_OPEN" ] || fail "the reload closed unchanged A's connections"
[ "$(dig_status "$ADDR2" "$PORT" new-listener.test)" = NOERROR ] || fail "the added listener $ADDR2:$PORT does not answer"
[ "$(dig_status "$ADDR" "$PORT" old-listener.test)" = NOERROR ] || fail "the kept listener stopped answering"
curl -s --max-time 5 "http://$HTTP/api/health" | grep -q "\"$ADDR2:$PORT\"" || fail "/api/health does not list the added listener"
# Queries after the reload go to C, the new preferred upstream.
[ "$(stat "$WORK/C.stats" answers)" -ge 2 ] || fail "added upstream C answered $(stat "$WORK/C.stats" answers) of the 2 queries after the reload"
[ "$(stat "$WORK/A.stats" queries)" = "$A_QUERIES" ] || fail "queries after the reload went to A, not to the preferred C"
pass "SIGHUP during a burst ($in_flight_b in flight at B): 0 SERVFAIL, B answered them and closed its $B_OPEN connection(s), A untouched ($A_ACCEPTS accepts, $A_OPEN open), C serving, new listener answering"

# ---- SIGHUP with a broken file ---------------------------------------------
URLS_BEFORE=$(upstream_urls)
write_config "$LISTEN2" "$(upstream "$FIX_PORT_A" 5; upstream "$FIX_PORT_C" 0)"
sed -i 's/^    priority: 0$/    priority: high/' "$CONF"
BAD_LINE=$(grep -n 'priority: high' "$CONF" | cut -d: -f1)
kill -HUP "$DAEMON_PID"
for i in $(seq 1 $((100 * T))); do grep -q 'configuration NOT applied' "$WORK/daemon.log" && break; sleep 0.05; done
line=$(grep 'configuration NOT applied' "$WORK/daemon.log" | tail -1)
case "$line" in
  *"reload (SIGHUP): configuration NOT applied, the daemon runs unchanged: $CONF:$BAD_LINE:15: upstreams[1].priority: expected a decimal integer"*) ;;
  *) fail "broken file: expected one error line with $CONF:$BAD_LINE:15, got: ${line:-nothing}" ;;
esac
[ "$(grep -c 'configuration NOT applied' "$WORK/daemon.log")" = 1 ] || fail "the broken file was reported more than once"
[ "$(dig_status "$ADDR" "$PORT" after-broken.test)" = NOERROR ] || fail "the daemon stopped answering after a broken file"
[ "$(upstream_urls)" = "$URLS_BEFORE" ] || fail "the upstream set changed after a broken file: $URLS_BEFORE -> $(upstream_urls)"
pass "SIGHUP with a broken file: one line ($CONF:$BAD_LINE:15: ...), still answering with upstreams $URLS_BEFORE"

# ---- nxdns reload: error, then success --------------------------------------
rc=0
nx reload --http "$HTTP" >"$WORK/reload-bad.out" 2>"$WORK/reload-bad.err" || rc=$?
[ "$rc" = 1 ] || fail "nxdns reload with a broken file: exit $rc, want 1"
grep -q "\"reloaded\":false" "$WORK/reload-bad.err" && grep -q "$CONF:$BAD_LINE:15: upstreams\[1\].priority" "$WORK/reload-bad.err" ||
  fail "nxdns reload did not print the error: $(cat "$WORK/reload-bad.err")"
# Fixed, and the second listener dropped.
write_config "$LISTEN1" "$(upstream "$FIX_PORT_A" 5; upstream "$FIX_PORT_C" 0)"
rc=0
nx reload --http "$HTTP" >"$WORK/reload-ok.out" 2>"$WORK/reload-ok.err" || rc=$?
[ "$rc" = 0 ] || fail "nxdns reload with a good file: exit $rc: $(cat "$WORK/reload-ok.err")"
grep -q '"reloaded":true' "$WORK/reload-ok.out" || fail "nxdns reload printed: $(cat "$WORK/reload-ok.out")"
[ "$(stat "$WORK/A.stats" accepts)" = "$A_ACCEPTS" ] || fail "nxdns reload redialled A"
grep -q "listeners: 1 kept, 1 closed, 0 opened; stopped listening on $ADDR2:$PORT" "$WORK/reload-ok.out" ||
  fail "nxdns reload did not report the removed listener: $(cat "$WORK/reload-ok.out")"
[ -z "$(dig_status "$ADDR2" "$PORT" removed-listener.test +tries=1 +time=1)" ] || fail "the removed listener $ADDR2:$PORT still answers"
[ "$(dig_status "$ADDR" "$PORT" kept-listener.test)" = NOERROR ] || fail "the kept listener stopped answering after nxdns reload"
pass "nxdns reload: exit 1 with the daemon's error ($(head -c 120 "$WORK/reload-bad.err")...), exit 0 once fixed; the dropped listener went quiet"

stop_daemon
# Five reloads (two applied by SIGHUP, one refused, then nxdns reload refused
# and applied): each RELOADING=1 with MONOTONIC_USEC, then READY=1, whether
# the file applied or not (systemd's Type=notify-reload protocol).
notes=$(tr '\n' ' ' <"$WORK/notify.log")
reloads=$(grep -cE '^RELOADING=1\|MONOTONIC_USEC=[0-9]+$' "$WORK/notify.log" || true)
[ "$reloads" = 5 ] || fail "sd_notify: $reloads RELOADING=1 + MONOTONIC_USEC messages, want 5: $notes"
pattern='^READY=1 (RELOADING=1\|MONOTONIC_USEC=[0-9]+ READY=1 ){5}STOPPING=1 $'
[[ "$notes" =~ $pattern ]] || fail "sd_notify sequence: $notes"
pass "sd_notify: READY=1, five times RELOADING=1 + MONOTONIC_USEC then READY=1, STOPPING=1"
echo "reload: all passed"
