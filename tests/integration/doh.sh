#!/usr/bin/env bash
# DNS-over-HTTPS through the real daemon, loopback only:
#  1. a black-holed DoH upstream first in priority and a DoT one second:
#     every answer arrives within one attempt budget (+ slack), the DoH entry
#     backs off (most queries never reach it), and it is back in use once the
#     DoH fixture is restarted healthy on the same port;
#  2. a warm 30-name burst through DoH over HTTP/2 (nghttpx terminating TLS
#     and HTTP/2 in front of the fixture, 40 ms round trip from the delay
#     relay) passes `nxdns burst --gate doh-warm` (src/cli/burst_gates.cpp);
#  3. the same burst over HTTP/1.1 (no multiplexing: at most 8
#     connections), reported for comparison, required free of SERVFAILs;
#  4. no hidden queue: over HTTP/1.1 /metrics shows
#     capacity 8 and the burst's waiting in the upstream's queue counters,
#     and the fixture saw at most 8 connections for two bursts;
#  5. the one safe retry: an HTTP/2 connection the server
#     closed while idle (nxdns-delay-relay --close-when-idle-ms) costs the
#     next query nothing: NOERROR, reuse_recoveries 1, upstream healthy.
# Needs nghttpx (Debian package nghttp2-proxy). Under emulation
# (NXDNS_EMULATED=1) timing limits are relaxed, in a sanitizer build the
# burst ratio limit is; the output says so.
source "$(dirname "$0")/lib.sh"

require_nghttpx
if emulated; then echo "NOTE: emulated run (qemu): timing limits relaxed; failures and SERVFAILs still fail"; fi
SLACK_MS=400
emulated && SLACK_MS=3000

make_pki "$WORK/doh-pki" doh.test
make_pki "$WORK/dot-pki" dot.test

# start_doh NAME LISTEN [fixture flags...]: a DoH fixture (TLS unless
# --plain is among the flags). Sets DOH_PID and DOH_PORT.
start_doh() {
  local name=$1 listen=$2
  shift 2
  local tls=(--cert "$WORK/doh-pki/server.pem" --key "$WORK/doh-pki/server.key")
  case " $* " in *" --plain "*) tls=() ;; esac
  rm -f "$WORK/$name.port"
  fx_exec nxdns-fixture-doh --listen "$listen" --port-file "$WORK/$name.port" --stats-file "$WORK/$name.stats" \
    "${tls[@]}" "$@" >>"$WORK/$name.log" 2>&1 &
  DOH_PID=$!
  PIDS+=("$DOH_PID")
  wait_file "$WORK/$name.port" || fail "DoH fixture $name did not start"
  DOH_PORT=$(cat "$WORK/$name.port")
}

# doh_config FILE ADDR PORT UPSTREAM_PORT: one DoH upstream, HTTP surface off.
doh_config() {
  cat >"$1" <<YAML
listen:
  - "$2:$3"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "https://doh.test:$4/dns-query"
    address: "127.0.0.1"
    ca_file: "$WORK/doh-pki/ca.pem"
budgets:
  attempt_ms: 2000
  total_ms: 5000
http:
  enabled: false
YAML
}

query_ms() { # ADDR PORT NAME: prints "RCODE MS"
  local t0 t1 st
  t0=$(now_ms)
  st=$(dig_status "$1" "$2" "$3" +tries=1 +time=5)
  t1=$(now_ms)
  echo "${st:-none} $((t1 - t0))"
}

# ---------------------------------------------------------------- 1. failover
start_fixture dot "$WORK/dot-pki"
start_doh hole 127.0.0.1:0 --black-hole
HOLE_PID=$DOH_PID
HOLE_PORT=$DOH_PORT

ADDR=$(pick_loopback)
PORT=5300
ATTEMPT_MS=500
cat >"$WORK/failover.yaml" <<YAML
listen:
  - "$ADDR:$PORT"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "https://doh.test:$HOLE_PORT/dns-query"
    address: "127.0.0.1"
    ca_file: "$WORK/doh-pki/ca.pem"
    priority: 0
  - url: "tls://127.0.0.1:$FIX_PORT_dot"
    tls_name: "dot.test"
    ca_file: "$WORK/dot-pki/ca.pem"
    priority: 1
budgets:
  attempt_ms: $ATTEMPT_MS
  total_ms: 3000
http:
  enabled: false
log:
  level: info
YAML
start_daemon "$WORK/failover.yaml" "$ADDR" "$PORT"
maps_libcurl "$DAEMON_PID" || fail "a daemon with a DoH upstream did not map libcurl"

n=12
slow=0
for i in $(seq 1 $n); do
  read -r st ms < <(query_ms "$ADDR" "$PORT" "failover$i.test")
  [ "$st" = NOERROR ] || fail "query $i with the DoH upstream black-holed: got $st in $ms ms"
  # One attempt budget at most is spent on the black hole, then DoT answers.
  [ "$ms" -le $((ATTEMPT_MS + SLACK_MS)) ] || fail "query $i took $ms ms (attempt budget $ATTEMPT_MS ms)"
  [ "$ms" -ge "$ATTEMPT_MS" ] && slow=$((slow + 1))
  sleep 0.1
done
sleep 0.2  # the fixtures publish their counters a moment after the wire
held=$(stat "$WORK/hole.stats" black_holed)
# Backoff: after two failures the DoH entry is skipped, so most queries never
# reach it (only those that re-probe it when a backoff runs out do).
[ "$held" -lt $((n / 2)) ] || fail "DoH entry not backing off: $held of $n queries reached the black hole"
[ "$(stat "$WORK/dot.stats" answers)" -ge "$n" ] || fail "DoT did not answer all $n queries"
pass "DoH black-holed: $n/$n answered via DoT within ${ATTEMPT_MS} ms + slack; $held reached the black hole, $slow paid the attempt budget"

# Recovery: the DoH server comes back, healthy, on the same port.
kill "$HOLE_PID"
wait "$HOLE_PID" 2>/dev/null || true
start_doh doh "127.0.0.1:$HOLE_PORT"
[ "$DOH_PORT" = "$HOLE_PORT" ] || fail "DoH fixture did not get its port back"
deadline=$(($(now_ms) + 25000))  # the backoff is capped at 16 s
i=0
while :; do
  i=$((i + 1))
  read -r st ms < <(query_ms "$ADDR" "$PORT" "recover$i.test")
  [ "$st" = NOERROR ] || fail "during recovery: got $st"
  sleep 0.05
  [ "$(stat "$WORK/doh.stats" answers)" -ge 1 ] && break
  [ "$(now_ms)" -lt "$deadline" ] || fail "the DoH entry never came back"
  sleep 0.2
done
pass "DoH entry back in use after recovery (query $i)"
sleep 0.2
dot_before=$(stat "$WORK/dot.stats" answers)
doh_before=$(stat "$WORK/doh.stats" answers)
for i in 1 2 3 4 5; do
  read -r st ms < <(query_ms "$ADDR" "$PORT" "after$i.test")
  [ "$st" = NOERROR ] || fail "after recovery: got $st"
done
sleep 0.2
[ "$(stat "$WORK/dot.stats" answers)" = "$dot_before" ] || fail "after recovery, queries still went to DoT"
[ "$(stat "$WORK/doh.stats" answers)" -eq $((doh_before + 5)) ] || fail "after recovery, DoH did not answer all 5"
pass "after recovery the preferred DoH upstream answers everything (5/5), DoT idle"
stop_daemon

# ------------------------------------------------------------ 2./3. bursts
# burst_through NAME UPSTREAM_PORT [burst limits...]: a daemon with one DoH
# upstream; a first burst warms everything up (the daemon's connection(s)
# and, on the HTTP/2 path, nghttpx's backend connections to the fixture:
# test plumbing a real DoH server does not have); the second is measured.
burst_through() {
  local name=$1 port=$2
  shift 2
  local addr
  addr=$(pick_loopback)
  doh_config "$WORK/$name.yaml" "$addr" "$PORT" "$port"
  start_daemon "$WORK/$name.yaml" "$addr" "$PORT"
  nx burst --server "$addr:$PORT" --names 30 --zone warmup.test >"$WORK/$name-warmup.out" 2>&1 ||
    { cat "$WORK/$name-warmup.out"; fail "$name: warm-up burst failed"; }
  local rc=0
  nx burst --server "$addr:$PORT" --names 30 "$@" >"$WORK/$name.out" 2>&1 || rc=$?
  sed "s/^/  [$name] /" "$WORK/$name.out"
  stop_daemon  # exit 0, also no sanitizer finding in a sanitizer build
  return $rc
}

# HTTP/2: relay (40 ms) -> nghttpx (TLS, h2) -> fixture (plain HTTP/1.1).
start_doh h2fx 127.0.0.1:0 --plain
H2FX_PORT=$DOH_PORT
up=0
for attempt in 1 2 3; do
  NGX_PORT=$((20000 + RANDOM % 30000))
  "$NGHTTPX" --conf=/dev/null --single-process --workers=1 --no-ocsp \
    "--frontend=127.0.0.1,$NGX_PORT" "--backend=127.0.0.1,$H2FX_PORT" \
    --backend-connections-per-host=64 --backend-keep-alive-timeout=60s "--errorlog-file=$WORK/nghttpx.log" \
    "$WORK/doh-pki/server.key" "$WORK/doh-pki/server.pem" >"$WORK/nghttpx.out" 2>&1 &
  NGX_PID=$!
  PIDS+=("$NGX_PID")
  for _ in $(seq 1 60); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$NGX_PORT") 2>/dev/null; then up=1; break; fi
    kill -0 "$NGX_PID" 2>/dev/null || break
    sleep 0.05
  done
  [ "$up" = 1 ] && break
  kill "$NGX_PID" 2>/dev/null || true
done
[ "$up" = 1 ] || fail "nghttpx did not start"
start_relay h2relay "$NGX_PORT" 40
limits=(--gate doh-warm)
# A sanitizer build spends its extra CPU per allocation (libcurl allocates
# per transfer), which lands in the burst's wall time: it keeps the limits
# this test had before the gate (ratio loosened to 2.0, staircase 0.2), says
# so. The optimized build is judged by the gate.
if sanitized; then
  echo "NOTE: sanitizer build: HTTP/2 burst judged by --max-ratio 2.0 --max-stair 0.2 instead of gate doh-warm (1.5, 0.10)"
  limits=(--max-ratio 2.0 --max-stair 0.2)
fi
emulated && limits=(--gate doh-warm --report-only)
burst_through h2 "$RELAY_PORT_h2relay" "${limits[@]}" ||
  fail "warm 30-name burst over DoH/HTTP/2 at 40 ms RTT did not pass"
pass "warm 30-name burst through DoH over HTTP/2 (40 ms RTT): PASS"

# HTTP/1.1: relay (40 ms) -> fixture (TLS, HTTP/1.1 only).
start_doh h1fx 127.0.0.1:0
start_relay h1relay "$DOH_PORT" 40
burst_through h1 "$RELAY_PORT_h1relay" || fail "30-name burst over DoH/HTTP/1.1 had failures"
sleep 0.2
conns=$(stat "$WORK/h1fx.stats" connections)
[ "$conns" -le 8 ] || fail "HTTP/1.1 upstream got $conns connections (cap 8)"
pass "30-name burst through DoH over HTTP/1.1 (40 ms RTT): no SERVFAIL, $conns connection(s)"

# ------------------------------------------------- 4. no hidden queue on DoH
# doh_http_config FILE ADDR UPSTREAM_PORT: one DoH upstream, /metrics on ADDR:8053.
doh_http_config() {
  cat >"$1" <<YAML
listen:
  - "$2:$PORT"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "https://doh.test:$3/dns-query"
    address: "127.0.0.1"
    ca_file: "$WORK/doh-pki/ca.pem"
budgets:
  attempt_ms: 2000
  total_ms: 5000
http:
  listen: "$2:8053"
YAML
}
scrape() { curl -s --max-time 5 "http://$1:8053/metrics"; }
# metric TEXT PREFIX: the value of the first sample line starting with PREFIX.
metric() { awk -v p="$2" 'index($0, p) == 1 { print $NF; exit }' <<<"$1"; }

start_doh h1q 127.0.0.1:0 --response-delay-ms 200
A4=$(pick_loopback)
doh_http_config "$WORK/h1q.yaml" "$A4" "$DOH_PORT"
start_daemon "$WORK/h1q.yaml" "$A4" "$PORT"
for round in 1 2; do
  nx burst --server "$A4:$PORT" --names 30 --zone "h1q$round.test" >"$WORK/h1q$round.out" 2>&1 ||
    { cat "$WORK/h1q$round.out"; fail "HTTP/1.1 queue burst $round failed"; }
done
m=$(scrape "$A4")
cap=$(metric "$m" 'nxdns_upstream_capacity{')
queued=$(metric "$m" 'nxdns_upstream_queued_total{')
depth=$(metric "$m" 'nxdns_upstream_queue_depth{')
sleep 0.2
conns=$(stat "$WORK/h1q.stats" connections)
[ "$cap" = 8 ] || fail "HTTP/1.1 upstream capacity on /metrics: '$cap' (want 8: 8 connections x 1)"
# 2 bursts x (30 - 8) waiters at least: the waiting is in the pool's FIFO.
[ "${queued:-0}" -ge 44 ] || fail "HTTP/1.1 bursts queued only '${queued}' callers in the pool (want >= 44): a hidden queue"
[ "$depth" = 0 ] || fail "queue depth after the bursts: $depth"
[ "$conns" -le 8 ] || fail "HTTP/1.1 upstream got $conns connections for two bursts (slots: 8)"
stop_daemon
pass "DoH over HTTP/1.1: capacity 8 on /metrics, $queued callers waited visibly in the pool's queue over two 30-name bursts, $conns connection(s)"

# ----------------------------------------------- 5. idle-closed HTTP/2 connection
start_doh idlefx 127.0.0.1:0 --plain
up=0
for attempt in 1 2 3; do
  IDLE_NGX_PORT=$((20000 + RANDOM % 30000))
  "$NGHTTPX" --conf=/dev/null --single-process --workers=1 --no-ocsp \
    "--frontend=127.0.0.1,$IDLE_NGX_PORT" "--backend=127.0.0.1,$DOH_PORT" "--errorlog-file=$WORK/nghttpx-idle.log" \
    "$WORK/doh-pki/server.key" "$WORK/doh-pki/server.pem" >"$WORK/nghttpx-idle.out" 2>&1 &
  IDLE_NGX_PID=$!
  PIDS+=("$IDLE_NGX_PID")
  for _ in $(seq 1 60); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$IDLE_NGX_PORT") 2>/dev/null; then up=1; break; fi
    kill -0 "$IDLE_NGX_PID" 2>/dev/null || break
    sleep 0.05
  done
  [ "$up" = 1 ] && break
  kill "$IDLE_NGX_PID" 2>/dev/null || true
done
[ "$up" = 1 ] || fail "nghttpx (idle case) did not start"
rm -f "$WORK/idlerelay.port"
fx_exec nxdns-delay-relay --listen 127.0.0.1:0 --to "127.0.0.1:$IDLE_NGX_PORT" --rtt-ms 0 \
  --close-when-idle-ms 500 --port-file "$WORK/idlerelay.port" >"$WORK/idlerelay.log" 2>&1 &
PIDS+=("$!")
wait_file "$WORK/idlerelay.port" || fail "idle-closing relay did not start"
A5=$(pick_loopback)
doh_http_config "$WORK/idle.yaml" "$A5" "$(cat "$WORK/idlerelay.port")"
start_daemon "$WORK/idle.yaml" "$A5" "$PORT"
read -r st ms < <(query_ms "$A5" "$PORT" "before-idle.test")
[ "$st" = NOERROR ] || fail "first query over DoH/HTTP/2: $st"
sleep 1
read -r st ms < <(query_ms "$A5" "$PORT" "after-idle.test")
m=$(scrape "$A5")
rec=$(metric "$m" 'nxdns_upstream_reuse_recoveries_total{')
redials=$(metric "$m" 'nxdns_upstream_redials_total{')
failed=$(grep '^nxdns_upstream_attempts_total{' <<<"$m" | grep -v 'outcome="ok"' | awk '{ s += $NF } END { print s + 0 }')
okays=$(grep '^nxdns_upstream_attempts_total{' <<<"$m" | grep 'outcome="ok"' | awk '{ print $NF }')
[ "$st" = NOERROR ] || fail "query after the server closed the idle HTTP/2 connection: $st (redials $redials)"
[ "$rec" = 1 ] && [ "$redials" = 1 ] || fail "idle close: redials '$redials', reuse_recoveries '$rec' (want 1 and 1)"
[ "$failed" = 0 ] && [ "$okays" = 2 ] || fail "idle close counted as a failed attempt: $failed failed, $okays ok"
grep -q 'nxdns_upstream_health{.*state="healthy"} 1' <<<"$m" || fail "upstream not healthy after the idle close"
stop_daemon
pass "HTTP/2 connection closed while idle: next query NOERROR in $ms ms by the one redial (redials 1, reuse_recoveries 1), upstream healthy"
