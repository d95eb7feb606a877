#!/usr/bin/env bash
# The answer cache through the real daemon (issue 14), every claim read from
# the DoT fixture's `queries` counter or the daemon's /metrics:
#  1. a second query (other case, other ID) is answered without an upstream
#     exchange, with the client's 0x20 case and an aged TTL;
#  2. 30 identical concurrent queries cost exactly 1 upstream exchange;
#  3. operator flush (nxdns cache flush NAME over loopback HTTP) makes the
#     next query go upstream; the flush path is not reachable over DNS;
#  4. outage: upstream black-holed (SIGSTOP) -> a known name answers NOERROR
#     with TTL 30 within 1.8 s (+ client slack), an unseen name SERVFAILs
#     within the total budget; upstream dead (SIGKILL) -> stale at once.
source "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || { echo "SKIPPED: curl not found"; exit 77; }

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
upstreams:
  - url: "tls://127.0.0.1:$FIX_PORT_up"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
budgets:
  attempt_ms: 1500
  total_ms: 3000
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

# 2. dedup: 30 identical concurrent queries -> 1 exchange
before=$(queries)
for i in $(seq 1 30); do
  dig @"$ADDR" -p "$PORT" +tries=1 +time=5 dedup.cache.test A >"$WORK/dedup.$i" 2>&1 &
done
DIGS=$(jobs -p | grep -v -x -F -f <(printf '%s\n' "${PIDS[@]}") || true)
# shellcheck disable=SC2086
wait $DIGS 2>/dev/null || true
wait_dig_ok=0
for i in $(seq 1 30); do grep -q 'status: NOERROR' "$WORK/dedup.$i" && wait_dig_ok=$((wait_dig_ok + 1)); done
after=$(queries)
[ "$wait_dig_ok" = 30 ] || fail "dedup: $wait_dig_ok of 30 answered NOERROR"
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

# 4. outage with serve-stale. Warm a name, let it go stale (max_ttl 2).
q outage.cache.test A >/dev/null
sleep 2.2
kill -STOP "${PIDS[0]}"  # black hole: connections stay, nothing answers
t0=$(now_ms)
q outage.cache.test A >"$WORK/stale.out"
t1=$(now_ms)
stale_ms=$((t1 - t0))
grep -q 'status: NOERROR' "$WORK/stale.out" || { kill -CONT "${PIDS[0]}"; fail "stale: $(cat "$WORK/stale.out")"; }
ttl=$(awk '$1 ~ /^outage/ && $4 == "A" {print $2}' "$WORK/stale.out")
[ "$ttl" = 30 ] || { kill -CONT "${PIDS[0]}"; fail "stale TTL: expected 30, got '$ttl'"; }
# RFC 8767's 1.8 s client response timer, plus dig's own start-up.
[ $((t1 - t0)) -le 2100 ] || { kill -CONT "${PIDS[0]}"; fail "stale answer took $((t1 - t0)) ms (> 1800 + 300)"; }
t0=$(now_ms)
st=$(dig_status "$ADDR" "$PORT" unseen.cache.test +tries=1 +time=6)
t1=$(now_ms)
kill -CONT "${PIDS[0]}"
[ "$st" = SERVFAIL ] || fail "unseen name during the outage: expected SERVFAIL, got '${st:-no answer}'"
[ $((t1 - t0)) -le 3300 ] || fail "unseen name SERVFAIL took $((t1 - t0)) ms (total budget 3000 + 10 %)"
pass "black-holed upstream: stale NOERROR TTL 30 in $stale_ms ms, unseen SERVFAIL within the budget"

kill -KILL "${PIDS[0]}"
wait "${PIDS[0]}" 2>/dev/null || true
t0=$(now_ms)
q outage.cache.test A >"$WORK/stale2.out"
t1=$(now_ms)
grep -q 'status: NOERROR' "$WORK/stale2.out" || fail "stale with the upstream dead: $(cat "$WORK/stale2.out")"
[ $((t1 - t0)) -le 2100 ] || fail "stale with the upstream dead took $((t1 - t0)) ms"
[ "$(metric nxdns_cache_stale_answers_total)" -ge 2 ] || fail "nxdns_cache_stale_answers_total: $(metric nxdns_cache_stale_answers_total)"
kill -0 "$DAEMON_PID" || fail "daemon died"
pass "dead upstream: stale answer in $((t1 - t0)) ms; daemon alive"
stop_daemon
