#!/usr/bin/env bash
# The answer cache through the real daemon, every claim read from
# the DoT fixture's `queries` counter or the daemon's /metrics:
#  1. a second query (other case, other ID) is answered without an upstream
#     exchange, with the client's 0x20 case and an aged TTL;
#  2. 30 identical concurrent queries cost exactly 1 upstream exchange;
#  3. operator flush (nxdns cache flush NAME over loopback HTTP) makes the
#     next query go upstream; the flush path is not reachable over DNS;
#  4. outage: upstream black-holed (SIGSTOP) -> a known name answers NOERROR
#     with TTL 30 at the 1.5 s client response timer (not before; inside
#     RFC 8767's 1.8 s), an unseen name SERVFAILs within the total budget;
#     then, with the upstream known dead (its attempts timed out, no success
#     since), another known name answers stale at once: in under a third of
#     the time the first one took, measured in the same run;
#     upstream dead (SIGKILL) -> stale at once (every attempt failed).
source "$(dirname "$0")/lib.sh"

require_program curl "Debian: curl"

ADDR=$(pick_loopback)
PORT=5300
HTTP_PORT=$((20000 + RANDOM % 20000))
make_pki "$WORK/pki" dot.test
# 400 ms per answer: the dedup burst overlaps for certain.
start_fixture up "$WORK/pki" --response-delay-ms 400
STATS="$WORK/up.stats"
queries() { stat "$STATS" queries; }

cat >"$WORK/nxdns.yaml" <<YAML
listen:
  - "$ADDR:$PORT"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "tls://127.0.0.1:$FIX_PORT_up"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
budgets:
  # The attempt outlasts RFC 8767's 1.8 s client response timer, so a
  # black-holed upstream is answered stale by that timer, not by a failure.
  attempt_ms: 2500
  total_ms: 4000
http:
  listen: "$ADDR:$HTTP_PORT"
cache:
  max_ttl: 2
  prefetch: false
log:
  level: info
YAML
start_daemon "$WORK/nxdns.yaml" "$ADDR" "$PORT"
metric() { curl -s --max-time 3 "http://$ADDR:$HTTP_PORT/metrics" | sed -n "s/^$1 \([0-9]*\)$/\1/p"; }
q() { dig @"$ADDR" -p "$PORT" +tries=1 +time=5 +noall +answer +comments "$@"; }

# 1. hit without an upstream exchange
q www.cache.test A >"$WORK/first.out"
grep -q 'status: NOERROR' "$WORK/first.out" || fail "first query: $(cat "$WORK/first.out")"
before=$(queries)
sleep 1.1
q WwW.CaChE.tEsT A >"$WORK/second.out"
after=$(queries)
grep -q 'status: NOERROR' "$WORK/second.out" || fail "second query: $(cat "$WORK/second.out")"
[ "$after" = "$before" ] || fail "second query went upstream (fixture queries $before -> $after)"
grep -q '^WwW\.CaChE\.tEsT\.' "$WORK/second.out" || fail "0x20 case not kept: $(grep -i cache.test "$WORK/second.out")"
ttl=$(awk '$1 ~ /^WwW/ && $4 == "A" {print $2}' "$WORK/second.out")
[ "$ttl" = 1 ] || fail "aged TTL: expected 1 (max_ttl 2, 1.1 s later), got '$ttl'"
[ "$(metric nxdns_cache_hits_total)" -ge 1 ] || fail "nxdns_cache_hits_total did not move"
pass "second query answered from the cache: fixture queries $before -> $after, case kept, TTL aged to $ttl"

# 2. dedup: 30 identical concurrent queries -> 1 exchange. One process sends
# all 30 (different IDs and letter case) before the first answer can come
# back (the fixture takes 400 ms): 30 dig processes could straggle.
require_program python3 "Debian: python3"
before=$(queries)
dedup_ok=$(python3 - "$ADDR" "$PORT" <<'PY'
import random, select, socket, struct, sys, time
addr, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
want = {}
for i in range(30):
    name = "".join(c.upper() if random.random() < 0.5 else c for c in "dedup.cache.test")
    wire = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
    qid = 1000 + i
    want[qid] = wire
    s.sendto(struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + wire + struct.pack(">HH", 1, 1), (addr, port))
ok, deadline = 0, time.time() + 5
while want and time.time() < deadline:
    if not select.select([s], [], [], 0.2)[0]:
        continue
    d = s.recv(4096)
    qid = struct.unpack(">H", d[:2])[0]
    w = want.pop(qid, None)
    # NOERROR, and the question echoed with this client's own letter case.
    if w is not None and (d[3] & 0xF) == 0 and d[12:12 + len(w)] == w:
        ok += 1
print(ok)
PY
)
after=$(queries)
[ "$dedup_ok" = 30 ] || fail "dedup: $dedup_ok of 30 answered NOERROR with their own ID and case"
[ $((after - before)) = 1 ] || fail "dedup: 30 identical queries cost $((after - before)) upstream exchanges (want 1)"
pass "30 identical concurrent queries: $((after - before)) upstream exchange, $(metric nxdns_cache_dedup_joins_total) dedup joins"

# 3. operator flush
q flush.cache.test A >/dev/null
before=$(queries)
q flush.cache.test A >/dev/null
[ "$(queries)" = "$before" ] || fail "flush setup: second query went upstream"
nx cache flush flush.cache.test --http "$ADDR:$HTTP_PORT" >"$WORK/flush.out" || fail "nxdns cache flush failed: $(cat "$WORK/flush.out")"
grep -q '"flushed":1' "$WORK/flush.out" || fail "flush output: $(cat "$WORK/flush.out")"
q flush.cache.test A >/dev/null
[ "$(queries)" = $((before + 1)) ] || fail "after flush the query did not go upstream"
# GET cannot flush; only POST from loopback.
code=$(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR:$HTTP_PORT/api/cache/flush")
[ "$code" = 405 ] || fail "GET /api/cache/flush: expected 405, got $code"
nx cache flush --http "$ADDR:$HTTP_PORT" >"$WORK/flushall.out" || fail "flush all failed"
[ "$(metric nxdns_cache_entries)" = 0 ] || fail "entries after flush all: $(metric nxdns_cache_entries)"
pass "operator flush by name and all; GET refused ($code)"

# 4. outage with serve-stale. Warm two names, let them go stale (max_ttl 2).
q outage.cache.test A >/dev/null
q outage2.cache.test A >/dev/null
sleep 2.2
kill -STOP "${PIDS[0]}"  # black hole: connections stay, nothing answers
t0=$(now_ms)
q outage.cache.test A >"$WORK/stale.out"
t1=$(now_ms)
stale_ms=$((t1 - t0))
grep -q 'status: NOERROR' "$WORK/stale.out" || { kill -CONT "${PIDS[0]}"; fail "stale: $(cat "$WORK/stale.out")"; }
ttl=$(awk '$1 ~ /^outage/ && $4 == "A" {print $2}' "$WORK/stale.out")
[ "$ttl" = 30 ] || { kill -CONT "${PIDS[0]}"; fail "stale TTL: expected 30, got '$ttl'"; }
# The 1.5 s client response timer, plus dig's own start-up, which is inside
# the measurement (about 190 ms seen at load 16 on 2 cores).
[ "$stale_ms" -le 2000 ] || { kill -CONT "${PIDS[0]}"; fail "stale answer took $stale_ms ms (> 1500 + 500)"; }
# Not before the timer: the refresh gets its 1.5 s to answer fresh.
[ "$stale_ms" -ge 1450 ] || { kill -CONT "${PIDS[0]}"; fail "stale answer after $stale_ms ms: before the 1.5 s timer"; }
t0=$(now_ms)
st=$(dig_status "$ADDR" "$PORT" unseen.cache.test +tries=1 +time=8)
t1=$(now_ms)
[ "$st" = SERVFAIL ] || { kill -CONT "${PIDS[0]}"; fail "unseen name during the outage: expected SERVFAIL, got '${st:-no answer}'"; }
[ $((t1 - t0)) -le 4400 ] || { kill -CONT "${PIDS[0]}"; fail "unseen name SERVFAIL took $((t1 - t0)) ms (total budget 4000 + 10 %)"; }
# The upstream is now known dead: two attempts timed out (the refresh
# behind the first stale answer, the unseen name's), none succeeded since.
# RFC 8767 §5: a recent failure is answered from stale data without waiting
# for the client response timer (which, before, every answer waited for).
t0=$(now_ms)
q outage2.cache.test A >"$WORK/stale3.out"
t1=$(now_ms)
kill -CONT "${PIDS[0]}"
dead_ms=$((t1 - t0))
grep -q 'status: NOERROR' "$WORK/stale3.out" || fail "stale with the upstream known dead: $(cat "$WORK/stale3.out")"
# Ratio in one run: "at once" is dig's start-up and one loop pass against
# the timer-bound answer above (under qemu the daemon's pass is slower).
ratio=3
emulated && ratio=2
[ $((dead_ms * ratio)) -lt "$stale_ms" ] ||
  fail "stale with the upstream known dead took $dead_ms ms: not under 1/$ratio of the timer-bound $stale_ms ms"
pass "black-holed upstream: stale NOERROR TTL 30 in $stale_ms ms, unseen SERVFAIL within the budget, then known dead: stale in $dead_ms ms"

kill -KILL "${PIDS[0]}"
wait "${PIDS[0]}" 2>/dev/null || true
t0=$(now_ms)
q outage.cache.test A >"$WORK/stale2.out"
t1=$(now_ms)
grep -q 'status: NOERROR' "$WORK/stale2.out" || fail "stale with the upstream dead: $(cat "$WORK/stale2.out")"
[ $((t1 - t0)) -le 2100 ] || fail "stale with the upstream dead took $((t1 - t0)) ms"
[ "$(metric nxdns_cache_stale_answers_total)" -ge 3 ] || fail "nxdns_cache_stale_answers_total: $(metric nxdns_cache_stale_answers_total)"
kill -0 "$DAEMON_PID" || fail "daemon died"
pass "dead upstream: stale answer in $((t1 - t0)) ms; daemon alive"
stop_daemon
