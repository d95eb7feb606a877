#!/usr/bin/env bash
# The core daemon's acceptance: with its only upstream on a closed
# loopback port it answers SERVFAIL over UDP and TCP within the total budget,
# survives a stream of random datagrams, keeps serving; a bad config exits
# non-zero with a one-line error and binds nothing.
source "$(dirname "$0")/lib.sh"

ADDR=$(pick_loopback)
PORT=5300
# A port nothing listens on: bind-and-close leaves it closed.
CLOSED=$((20000 + RANDOM % 20000))

cat >"$WORK/nxdns.yaml" <<YAML
listen:
  - "$ADDR:$PORT"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "tls://127.0.0.1:$CLOSED"
    tls_name: "dot.test"
budgets:
  attempt_ms: 1000
  total_ms: 2000
http:
  enabled: false
log:
  level: info
YAML

nx_exec run -c "$WORK/nxdns.yaml" >"$WORK/daemon.log" 2>&1 &
DPID=$!
PIDS+=("$DPID")
wait_for_dns "$ADDR" "$PORT" || fail "daemon did not answer on $ADDR:$PORT"
pass "daemon serving on $ADDR:$PORT"

for proto in udp tcp; do
  opt=()
  [ "$proto" = tcp ] && opt=(+tcp)
  t0=$(now_ms)
  st=$(dig_status "$ADDR" "$PORT" "closed-upstream.test" +tries=1 +time=5 "${opt[@]}")
  t1=$(now_ms)
  [ "$st" = SERVFAIL ] || fail "$proto: expected SERVFAIL, got '${st:-no answer}'"
  # Within the total budget (2000 ms) + 10%.
  [ $((t1 - t0)) -le 2200 ] || fail "$proto: SERVFAIL took $((t1 - t0)) ms (> 2200)"
  pass "$proto: SERVFAIL in $((t1 - t0)) ms"
done

# Random datagrams: sizes 0..600, 3000 of them. None may crash or stall it.
for i in $(seq 1 3000); do
  head -c $((RANDOM % 600)) /dev/urandom >"/dev/udp/$ADDR/$PORT" 2>/dev/null || true
done
# And hostile TCP: a zero-length frame, an oversized length, garbage.
printf '\x00\x00' >"/dev/tcp/$ADDR/$PORT" 2>/dev/null || true
printf '\xff\xff' >"/dev/tcp/$ADDR/$PORT" 2>/dev/null || true
head -c 3000 /dev/urandom >"/dev/tcp/$ADDR/$PORT" 2>/dev/null || true
kill -0 "$DPID" 2>/dev/null || fail "daemon died under random input"
st=$(dig_status "$ADDR" "$PORT" "after-noise.test" +tries=1 +time=5)
[ "$st" = SERVFAIL ] || fail "after noise: expected SERVFAIL, got '${st:-no answer}'"
st=$(dig_status "$ADDR" "$PORT" "after-noise-tcp.test" +tries=1 +time=5 +tcp)
[ "$st" = SERVFAIL ] || fail "after noise (tcp): expected SERVFAIL, got '${st:-no answer}'"
pass "survived 3000 random datagrams and hostile TCP; still answering"

# SIGTERM: drains and exits 0.
kill -TERM "$DPID"
rc=0
wait "$DPID" || rc=$?
PIDS=()
[ "$rc" = 0 ] || fail "exit status after SIGTERM was $rc"
pass "SIGTERM: exit 0"

# A bad config: non-zero exit, one line naming file:line:col and the key,
# and nothing bound.
BAD_ADDR=$(pick_loopback)
cat >"$WORK/bad.yaml" <<YAML
listen:
  - "$BAD_ADDR:$PORT"
upstreams:
  - url: "tls://127.0.0.1:853"
    tls_name: "dot.test"
    priorty: 1
YAML
rc=0
nx run -c "$WORK/bad.yaml" >"$WORK/bad.out" 2>"$WORK/bad.err" || rc=$?
[ "$rc" -ne 0 ] || fail "bad config: exit status 0"
lines=$(wc -l <"$WORK/bad.err")
[ "$lines" = 1 ] || fail "bad config: expected one line of error, got $lines: $(cat "$WORK/bad.err")"
grep -qE "bad.yaml:6:[0-9]+: upstreams\[0\]\.priorty: " "$WORK/bad.err" || fail "bad config: message lacks file:line:col and key: $(cat "$WORK/bad.err")"
if dig @"$BAD_ADDR" -p "$PORT" +tries=1 +time=1 x.test >/dev/null 2>&1; then fail "bad config: something answered"; fi
pass "bad config rejected: $(cat "$WORK/bad.err")"
echo "daemon_basics: all passed"
