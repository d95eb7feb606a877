#!/usr/bin/env bash
# Dead upstreams through the real daemon, loopback only:
#   - a black-holed primary (TLS up, queries swallowed) and a healthy
#     secondary: the attempt budget moves the query on, the answer comes from
#     the secondary, and once the primary is in backoff the secondary is
#     asked first (fast answers);
#   - black holes only: SERVFAIL at the total budget, not later (one
#     upstream with attempt = total; two upstreams whose second attempt the
#     total budget cuts short);
#   - an attempt timeout with total budget left gets one more attempt on
#     another session of the same upstream;
#   - a WAN flap: the only upstream sits behind the delay relay, which is
#     SIGSTOPped for 30 s (established connections go silent; new dials
#     complete TCP in the kernel's backlog and then stall in the handshake:
#     the realistic black hole) and SIGCONTed. A query every 0.5 s
#     throughout: every one is answered within the total budget, answers
#     resume within 2 s of the return, without a restart;
#   - the WAN's return with a new address: the relay black-holes every
#     connection from before the outage for good (SIGUSR1, SIGUSR2); once the
#     daemon has seen the outage, the first query after the return is sent
#     once, on a fresh connection (no re-send from a dead session), and the
#     connections from before are retired;
#   - an upstream that closes every connection after one answer: 30-name
#     bursts (warm and cold) get zero SERVFAIL.
source "$(dirname "$0")/lib.sh"
emulation_factor "time limits" " (budget upper bounds: +200 ms, still below the next budget step)"
# A SERVFAIL "at the 1500 ms budget" arrives by this much later at most:
# loopback takes a millisecond, but this runs on shared VMs that stall a
# process for a few hundred ms now and then (a 410 ms stall was seen once).
# Either way it stays below 2800 ms, where the two-upstream case would end if
# the total budget did not cut its second 1400 ms attempt.
LATE=$((T == 1 ? 800 : 1000))

ADDR=$(pick_loopback)
PORT=5300
make_pki "$WORK/pki" dot.test

# pair_config FILE ATTEMPT_MS TOTAL_MS PORT... : one upstream per port, in
# priority order.
pair_config() {
  local file=$1 attempt=$2 total=$3 prio=0
  shift 3
  {
    echo "listen:"
    echo "  - \"$ADDR:$PORT\""
    echo "forward_special_zones: [test]  # the test names live under test (RFC 6761)"
    echo "upstreams:"
    for p in "$@"; do
      echo "  - url: \"tls://127.0.0.1:$p\""
      echo "    tls_name: \"dot.test\""
      echo "    ca_file: \"$WORK/pki/ca.pem\""
      echo "    priority: $prio"
      prio=$((prio + 10))
    done
    echo "budgets:"
    echo "  attempt_ms: $attempt"
    echo "  total_ms: $total"
    echo "http:"
    echo "  enabled: false"
    echo "log:"
    echo "  level: info"
  } >"$file"
}
timed() {  # timed NAME -> "RCODE MS" (wall clock, dig allowed 8 s)
  local t0 t1 st
  t0=$(now_ms)
  st=$(dig_status "$ADDR" "$PORT" "$1" +tries=1 +time=8)
  t1=$(now_ms)
  echo "${st:-TIMEOUT} $((t1 - t0))"
}

# ---- 1. black-holed primary, healthy secondary -------------------------------------
start_fixture hole "$WORK/pki" --black-hole
start_fixture good "$WORK/pki"
pair_config "$WORK/failover.yaml" 800 3000 "$FIX_PORT_hole" "$FIX_PORT_good"
start_daemon "$WORK/failover.yaml" "$ADDR" "$PORT"
times=()
for i in 1 2 3 4; do
  read -r st ms < <(timed "failover-$i.dead.test")
  [ "$st" = NOERROR ] || fail "failover: query $i got $st after $ms ms"
  times+=("$ms")
done
# Queries 1 and 2 pay the primary's attempt budget (800 ms) and then the
# secondary; two failures in a row put the primary in backoff, so queries
# 3 and 4 go to the secondary first.
for i in 0 1; do
  [ "${times[$i]}" -ge 750 ] && [ "${times[$i]}" -le $((800 + 500 * T)) ] ||
    fail "failover: query $((i + 1)) took ${times[$i]} ms, want the 800 ms attempt budget plus an answer"
done
for i in 2 3; do
  [ "${times[$i]}" -le $((300 * T)) ] || fail "failover: query $((i + 1)) took ${times[$i]} ms with the primary in backoff"
done
[ "$(stat "$WORK/hole.stats" queries)" -ge 2 ] || fail "failover: the black hole was not tried first"
[ "$(stat "$WORK/good.stats" answers)" -ge 4 ] || fail "failover: the secondary answered $(stat "$WORK/good.stats" answers) of 4"
stop_daemon
pass "black-holed primary: NOERROR via the secondary in ${times[0]} and ${times[1]} ms (attempt budget 800 ms), then ${times[2]} and ${times[3]} ms with the primary in backoff"

# ---- 2. SERVFAIL at the total budget ------------------------------------------------
start_fixture hole2 "$WORK/pki" --black-hole
pair_config "$WORK/one.yaml" 1500 1500 "$FIX_PORT_hole"
start_daemon "$WORK/one.yaml" "$ADDR" "$PORT"
read -r st one_ms < <(timed single.dead.test)
[ "$st" = SERVFAIL ] || fail "one black hole: got $st"
[ "$one_ms" -ge 1450 ] && [ "$one_ms" -le $((1500 + LATE)) ] || fail "one black hole: SERVFAIL after $one_ms ms, budget 1500 ms"
stop_daemon
pair_config "$WORK/two.yaml" 1400 1500 "$FIX_PORT_hole" "$FIX_PORT_hole2"
start_daemon "$WORK/two.yaml" "$ADDR" "$PORT"
read -r st two_ms < <(timed double.dead.test)
[ "$st" = SERVFAIL ] || fail "two black holes: got $st"
[ "$two_ms" -ge 1450 ] && [ "$two_ms" -le $((1500 + LATE)) ] || fail "two black holes: SERVFAIL after $two_ms ms, total budget 1500 ms"
stop_daemon
pass "black holes only: SERVFAIL in $one_ms ms (one upstream, budget 1500 ms) and $two_ms ms (two upstreams, attempt 1400 ms, the total 1500 ms cuts the second)"

# ---- 2b. the one more attempt after an attempt timeout ------------------------------
# The only upstream swallows every query after the first on a connection: the
# warm-up query is answered on connection 1, the next one is swallowed there.
# Its attempt budget (200 ms, shorter than the 250 ms before a silent
# exchange earns its re-send on another session) runs out with the
# total budget mostly left: the daemon gives the attempt up (closing that
# session) and tries once more on another session, whose first query is
# answered. Before: SERVFAIL at 200 ms.
start_fixture once_more "$WORK/pki" --black-hole-after 1
ATT=$((200 * T))
pair_config "$WORK/again.yaml" "$ATT" $((3000 * T)) "$FIX_PORT_once_more"
start_daemon "$WORK/again.yaml" "$ADDR" "$PORT"
read -r st _ < <(timed warm.again.dead.test)
[ "$st" = NOERROR ] || fail "one more attempt: the warm-up query got $st"
read -r st again_ms < <(timed swallowed.again.dead.test)
[ "$st" = NOERROR ] || fail "one more attempt: got $st after $again_ms ms, want NOERROR from a second attempt on another session"
[ "$again_ms" -ge $((ATT - 50)) ] && [ "$again_ms" -le $((ATT + LATE)) ] ||
  fail "one more attempt: answered after $again_ms ms, want the $ATT ms attempt budget plus an answer"
[ "$(stat "$WORK/once_more.stats" closes_by_client)" -ge 1 ] || fail "one more attempt: the session that swallowed the query was not closed"
stop_daemon
pass "attempt timeout with budget left: NOERROR after $again_ms ms from the second attempt on another session ($(stat "$WORK/once_more.stats" accepts) connections)"
# At most one more: a black hole (case 2's) ends at two attempts, 2000 ms,
# with 1000 ms of the total unused, not at three.
q0=$(stat "$WORK/hole2.stats" queries)
pair_config "$WORK/again2.yaml" 1000 3000 "$FIX_PORT_hole2"
start_daemon "$WORK/again2.yaml" "$ADDR" "$PORT"
read -r st twice_ms < <(timed twice.again.dead.test)
[ "$st" = SERVFAIL ] || fail "one more attempt, black hole: got $st"
[ "$twice_ms" -ge 1950 ] && [ "$twice_ms" -le $((2000 + LATE)) ] ||
  fail "one more attempt, black hole: SERVFAIL after $twice_ms ms, want two 1000 ms attempts"
for _ in $(seq 1 20); do [ $(( $(stat "$WORK/hole2.stats" queries) - q0 )) -ge 2 ] && break; sleep 0.05; done
[ $(( $(stat "$WORK/hole2.stats" queries) - q0 )) = 2 ] || fail "one more attempt, black hole: $(( $(stat "$WORK/hole2.stats" queries) - q0 )) queries reached the fixture, want 2"
stop_daemon
pass "attempt timeout on a black hole: SERVFAIL after $twice_ms ms, exactly two attempts (attempt 1000 ms, total 3000 ms)"

# ---- 3. WAN flap: the only upstream silent for 30 s ----------------------------------
start_fixture flap "$WORK/pki"
start_relay wan "$FIX_PORT_flap" 10
RELAY_PID=${PIDS[-1]}
ATTEMPT_MS=2000 TOTAL_MS=5000 dot_config "$WORK/flap.yaml" "$ADDR" "$PORT" "$RELAY_PORT_wan" "$WORK/pki"
start_daemon "$WORK/flap.yaml" "$ADDR" "$PORT"
FLAP_DAEMON=$DAEMON_PID
python3 - "$ADDR" "$PORT" "$RELAY_PID" 30 >"$WORK/flap.out" 2>&1 <<'PY' || fail "flap: $(tail -n 20 "$WORK/flap.out")"
# A query every 0.5 s: 3 s before the stop, 30 s stopped, 5 s after.
import os, random, selectors, signal, socket, struct, sys, time
addr, port, relay, stop_s = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
pre, post, give_up = 3.0, 5.0, 8.0
def query(name, qid):
    hdr = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    return hdr + b"".join(bytes([len(l)]) + l.encode() for l in name.split(".") if l) + b"\0" + struct.pack(">HH", 1, 1)
sel = selectors.DefaultSelector()
live, recs = {}, []
t0 = time.monotonic(); nxt = t0; i = 0; stop_at = cont_at = None
while True:
    now = time.monotonic()
    if stop_at is None and now - t0 >= pre:
        os.kill(relay, signal.SIGSTOP); stop_at = now
    if stop_at is not None and cont_at is None and now - stop_at >= stop_s:
        os.kill(relay, signal.SIGCONT); cont_at = now
    sending = cont_at is None or now - cont_at < post
    if not sending and not live: break
    if sending and now >= nxt:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.setblocking(False)
        qid = random.randrange(65536)
        s.sendto(query("flap-%d-%d.dead.test" % (i, random.randrange(1 << 30)), qid), (addr, port))
        live[s.fileno()] = (s, now, i); sel.register(s, selectors.EVENT_READ)
        i += 1; nxt += 0.5
    for key, _ in sel.select(timeout=0.01):
        s, sent, idx = live.pop(key.fd); sel.unregister(s)
        d = s.recv(4096); s.close()
        recs.append((idx, sent, time.monotonic(), d[3] & 15))
    for fd, (s, sent, idx) in list(live.items()):
        if time.monotonic() - sent > give_up:
            live.pop(fd); sel.unregister(s); s.close(); recs.append((idx, sent, None, -1))
recs.sort()
def phase(sent):
    return "before" if sent < stop_at else ("stopped" if sent < cont_at else "after")
summary = {}
for idx, sent, done, rc in recs:
    k = phase(sent)
    summary.setdefault(k, {}).setdefault({0: "NOERROR", 2: "SERVFAIL", -1: "TIMEOUT"}.get(rc, "rc%d" % rc), 0)
    summary[k][{0: "NOERROR", 2: "SERVFAIL", -1: "TIMEOUT"}.get(rc, "rc%d" % rc)] += 1
first_ok = min((done for _, sent, done, rc in recs if rc == 0 and done is not None and done > cont_at), default=None)
slowest = max((done - sent for _, sent, done, rc in recs if done is not None), default=0)
late_fail = [idx for idx, sent, done, rc in recs if sent >= cont_at + 2.0 and rc != 0]
print("queries:", len(recs), "by phase:", summary)
print("slowest answer: %.0f ms" % (slowest * 1000))
print("first NOERROR after SIGCONT: %s" % ("none" if first_ok is None else "%.0f ms" % ((first_ok - cont_at) * 1000)))
print("RESULT", len(recs), sum(1 for r in recs if r[3] == -1), "%.0f" % (slowest * 1000),
      -1 if first_ok is None else "%.0f" % ((first_ok - cont_at) * 1000), len(late_fail),
      summary.get("before", {}).get("NOERROR", 0), sum(1 for r in recs if phase(r[1]) == "before"))
PY
sed -n '/^queries\|^slowest\|^first/s/^/  /p' "$WORK/flap.out"
read -r _ total timeouts slowest first late_fail before_ok before_n < <(grep '^RESULT' "$WORK/flap.out")
[ "$before_ok" = "$before_n" ] || fail "flap: only $before_ok of $before_n queries before the stop were answered NOERROR"
[ "$timeouts" = 0 ] || fail "flap: $timeouts of $total queries got no answer at all"
[ "$slowest" -le $((5000 + 300 * T)) ] || fail "flap: an answer took $slowest ms, over the 5000 ms total budget"
[ "$first" != -1 ] || fail "flap: no NOERROR after the upstream returned"
[ "$first" -le $((2000 * T)) ] || fail "flap: first NOERROR $first ms after the upstream returned, want <= $((2000 * T))"
[ "$late_fail" = 0 ] || emulated || fail "flap: $late_fail queries sent 2 s or more after the return still failed"
kill -0 "$FLAP_DAEMON" || fail "flap: the daemon died"
[ "$DAEMON_PID" = "$FLAP_DAEMON" ] || fail "flap: the daemon was restarted"
stop_daemon
pass "WAN flap (30 s SIGSTOP of the only path): $total queries, none unanswered (slowest $slowest ms); first NOERROR $first ms after SIGCONT, same daemon process"

# ---- 3b. the WAN's return with a new address ------------------------------------------
# The router reconnects with another public address: the path is back for
# new connections, every connection from before the outage is black-holed
# for good (tests/fixtures/delay_relay.cpp, SIGUSR1 then SIGUSR2). Two
# queries during the outage stall on the open session: the daemon has seen
# the outage. The first query after the return must then go out once, on a
# fresh connection: no re-send (which is what a query placed on the dead
# session would need), one outage dial or more on /metrics, and the
# connections from before retired when the fresh one comes up.
start_fixture ret "$WORK/pki"
start_relay ret "$FIX_PORT_ret" 10
RET_RELAY=${PIDS[-1]}
RET_HTTP=18153
cat >"$WORK/ret.yaml" <<YAML
listen:
  - "$ADDR:$PORT"
forward_special_zones: [test]
upstreams:
  - url: "tls://127.0.0.1:$RELAY_PORT_ret"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
budgets:
  attempt_ms: 2000
  total_ms: 5000
http:
  enabled: true
  listen: "$ADDR:$RET_HTTP"
log:
  level: debug  # the moment the outage is seen
YAML
start_daemon "$WORK/ret.yaml" "$ADDR" "$PORT"
ret_metric() {  # ret_metric NAME: its value for upstream 0 ("" when absent)
  local text
  text=$(curl -s --max-time 3 "http://$ADDR:$RET_HTTP/metrics")
  awk -v p="$1{upstream=\"0\"" 'index($0, p) == 1 { print $NF; exit }' <<<"$text"
}
read -r st _ < <(timed before.return.dead.test)
[ "$st" = NOERROR ] || fail "return: the query before the outage got $st"
kill -USR1 "$RET_RELAY"
lost=()
for i in 1 2; do
  dig_status "$ADDR" "$PORT" "lost$i.return.dead.test" +tries=1 +time=8 >/dev/null &
  lost+=("$!")
  sleep 0.3
done
for _ in $(seq 1 $((100 * T))); do grep -q 'no sign of life' "$WORK/daemon.log" && break; sleep 0.05; done
grep -q 'no sign of life' "$WORK/daemon.log" || fail "return: the daemon did not see the outage"
sleep 0.2  # past the fresh-dial window: the dial made for the stalls is not joined
resent0=$(ret_metric nxdns_upstream_resent_total)
dials0=$(ret_metric nxdns_upstream_outage_dials_total)
[ -n "$resent0" ] && [ -n "$dials0" ] || fail "return: no resent/outage dial counters on /metrics"
kill -USR2 "$RET_RELAY"
read -r st ret_ms < <(timed first.return.dead.test)
[ "$st" = NOERROR ] || fail "return: the first query after the return got $st after $ret_ms ms"
[ "$(ret_metric nxdns_upstream_resent_total)" = "$resent0" ] ||
  fail "return: the first query after the return was re-sent (resent $resent0 -> $(ret_metric nxdns_upstream_resent_total)): it went to a dead session first"
[ "$(ret_metric nxdns_upstream_outage_dials_total)" -gt "$dials0" ] ||
  fail "return: no fresh dial for the first query after the return (outage dials $dials0 -> $(ret_metric nxdns_upstream_outage_dials_total))"
grep -q 'reachable again .*closed [1-9]' "$WORK/daemon.log" || fail "return: the connections from before were not retired"
dials1=$(ret_metric nxdns_upstream_outage_dials_total)
wait "${lost[@]}" 2>/dev/null || true
stop_daemon
pass "WAN return with the old connections dead: first query NOERROR in $ret_ms ms, sent once on a fresh connection ($dials1 outage dials in all); connections from before retired"

# ---- 4. an upstream that closes after every answer -----------------------------------
start_fixture once "$WORK/pki" --close-after-answers 1
# Every answer here costs a fresh handshake; under emulation those are slow
# enough to meet a 2 s attempt budget, which is not what this case checks
# (re-placement, not budgets): the budgets scale with the time limits.
ATTEMPT_MS=$((2000 * T)) TOTAL_MS=$((5000 * T)) dot_config "$WORK/once.yaml" "$ADDR" "$PORT" "$FIX_PORT_once" "$WORK/pki"
start_daemon "$WORK/once.yaml" "$ADDR" "$PORT"
for kind in warm cold; do
  rc=0
  cold=()
  [ "$kind" = cold ] && cold=(--cold)
  nx burst --server "$ADDR:$PORT" --names 30 --zone once.dead.test "${cold[@]}" --json --timeout-ms $((6000 * T)) \
    >"$WORK/once-$kind.json" 2>"$WORK/once-$kind.err" || rc=$?
  read -r sf to wall < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["servfail"], r["timeouts"], round(r["wall_ms"]))' "$WORK/once-$kind.json") ||
    fail "close-after-answers: $kind burst printed no JSON: $(cat "$WORK/once-$kind.err")"
  [ "$sf" = 0 ] && [ "$to" = 0 ] || fail "close-after-answers: $kind burst: $sf SERVFAIL, $to timeouts (exit $rc)"
  echo "  $kind burst of 30: 0 SERVFAIL, 0 timeouts, wall $wall ms (connections so far: $(stat "$WORK/once.stats" accepts))"
done
stop_daemon
pass "upstream closing after every answer: two 30-name bursts with zero SERVFAIL over $(stat "$WORK/once.stats" accepts) connections"
echo "dead_upstreams: all passed"
