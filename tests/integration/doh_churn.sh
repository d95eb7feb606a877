#!/usr/bin/env bash
# No DoH connection churn (docs/architecture.md), counted by the fixture that
# accepts the connections (nxdns-fixture-doh-h2gate):
#  1. against an HTTP/2 DoH server that, like Knot Resolver 5.6, refuses a
#     request arriving while another request's body is still open
#     (RST_STREAM REFUSED_STREAM; curl then retires the whole connection and
#     re-sends on a new one), a cold 30-name burst and 300 more queries
#     (bursts of 60: within one client's share of the listener) open ONE
#     connection: what the slots need, since the server allows 100 streams
#     per connection and the entry runs at most 64 exchanges (PIPEWAIT puts
#     the cold burst on the first connection). Today's main opened 9 (2-3
#     refused requests);
#  2. a server that sends GOAWAY after every 50 streams (nghttpx
#     --frontend-max-requests) costs one new connection per GOAWAY, not one
#     per query: at most ceil(requests / 50) + 1 connections.
#   daemon -> nxdns-fixture-doh-h2gate --refuse-interleaved (TLS, h2)
#          -> nghttpx (cleartext HTTP/2 frontend) -> nxdns-fixture-doh --plain
# Needs nghttpx (Debian: nghttp2-proxy). Correctness only: nothing here is
# timed, so emulation (NXDNS_EMULATED=1) and sanitizer builds run it as is.
source "$(dirname "$0")/lib.sh"

require_nghttpx
need_fixture nxdns-fixture-doh
need_fixture nxdns-fixture-doh-h2gate

make_pki "$WORK/pki" doh.test
fx_exec nxdns-fixture-doh --listen 127.0.0.1:0 --plain --port-file "$WORK/fx.port" --stats-file "$WORK/fx.stats" \
  >"$WORK/fx.log" 2>&1 &
PIDS+=("$!")
wait_file "$WORK/fx.port" || fail "DoH fixture did not start"

# start_nghttpx NAME [nghttpx flags...]: a cleartext HTTP/2 frontend in
# front of the fixture. Sets NGX_PORT.
start_nghttpx() {
  local name=$1 up=0 attempt
  shift
  for attempt in 1 2 3; do
    NGX_PORT=$((20000 + RANDOM % 30000))
    "$NGHTTPX" --conf=/dev/null --single-process --workers=1 --no-ocsp \
      "--frontend=127.0.0.1,$NGX_PORT;no-tls" "--backend=127.0.0.1,$(cat "$WORK/fx.port")" \
      --backend-connections-per-host=64 --backend-keep-alive-timeout=60s "--errorlog-file=$WORK/$name.log" "$@" \
      >"$WORK/$name.out" 2>&1 &
    local pid=$!
    PIDS+=("$pid")
    for _ in $(seq 1 60); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$NGX_PORT") 2>/dev/null; then up=1; break; fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    [ "$up" = 1 ] && return 0
    kill "$pid" 2>/dev/null || true
  done
  fail "nghttpx ($name) did not start"
}

# start_gate NAME TO_PORT [gate flags...]: stats in $WORK/NAME.stats. Sets GATE_PORT.
start_gate() {
  local name=$1 to=$2
  shift 2
  fx_exec nxdns-fixture-doh-h2gate --listen 127.0.0.1:0 --to "127.0.0.1:$to" "$@" \
    --cert "$WORK/pki/server.pem" --key "$WORK/pki/server.key" \
    --port-file "$WORK/$name.port" --stats-file "$WORK/$name.stats" >"$WORK/$name-gate.log" 2>&1 &
  PIDS+=("$!")
  wait_file "$WORK/$name.port" || fail "h2 gate $name did not start"
  GATE_PORT=$(cat "$WORK/$name.port")
}

# workload NAME GATE_PORT: a daemon with the one DoH upstream, a cold
# 30-name burst, five bursts of 60; fails on any SERVFAIL or timeout (timing
# is only reported). Prints the fixture's answers for it.
workload() {
  local name=$1 port=$2 round addr before
  addr=$(pick_loopback)
  cat >"$WORK/$name.yaml" <<YAML
listen:
  - "$addr:5300"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "https://doh.test:$port/dns-query"
    address: "127.0.0.1"
    ca_file: "$WORK/pki/ca.pem"
budgets:
  attempt_ms: 4000
  total_ms: 8000
http:
  enabled: false
YAML
  before=$(stat "$WORK/fx.stats" answers)
  start_daemon "$WORK/$name.yaml" "$addr" 5300
  burst() {
    nx burst --server "$addr:5300" --names "$1" --zone "$2.$name.test" --timeout-ms 10000 --gate "$3" --report-only \
      >"$WORK/$name-$2.out" 2>&1 || { cat "$WORK/$name-$2.out" >&2; fail "$name: burst of $1 had failures"; }
  }
  burst 30 cold cold
  for round in 1 2 3 4 5; do burst 60 "more$round" warm; done
  stop_daemon  # exit 0, and no sanitizer finding in a sanitizer build
  sleep 0.3    # the fixtures publish their counters right after the wire
  echo $(($(stat "$WORK/fx.stats" answers) - before))
}

# ------------------------------------------- 1. refused interleaved requests
start_nghttpx ngx-refuse
start_gate refuse "$NGX_PORT" --refuse-interleaved
answers=$(workload refuse "$GATE_PORT")
conns=$(stat "$WORK/refuse.stats" connections)
interleaved=$(stat "$WORK/refuse.stats" interleaved)
refused=$(stat "$WORK/refuse.stats" refused)
echo "refusing server: $conns connection(s), $(stat "$WORK/refuse.stats" streams) request streams," \
  "$interleaved interleaved, $refused refused; $answers answers"
[ "$answers" -ge 330 ] || fail "the fixture answered only $answers of 330 queries"
[ "$conns" = 1 ] ||
  fail "$conns connections for $answers queries where one carries them all ($refused refused interleaved requests: curl retires a connection for each)"
pass "$answers queries over DoH/HTTP/2 to a server refusing interleaved requests: $conns connection, $interleaved interleaved"

# ------------------------------------------------ 2. GOAWAY after 50 streams
start_nghttpx ngx-goaway --frontend-max-requests=50
start_gate goaway "$NGX_PORT"
answers=$(workload goaway "$GATE_PORT")
conns=$(stat "$WORK/goaway.stats" connections)
bound=$(((answers + 49) / 50 + 1))
# Under qemu or ASan a GOAWAY can land while the replacement connection is
# still being set up, and one more dial carries the streams curl re-sends
# (9 for 348 answers measured in both; 8 natively). Under qemu on a loaded
# machine that happened twice in one run (10 connections, a CI rehearsal
# beside two builds), so emulation allows two.
if emulated; then
  bound=$((bound + 2))
  echo "NOTE: emulated run: GOAWAY bound +2 ($bound)"
elif sanitized; then
  bound=$((bound + 1))
  echo "NOTE: sanitizer run: GOAWAY bound +1 ($bound)"
fi
echo "GOAWAY after 50 streams: $conns connection(s) for $answers answers (bound $bound)"
[ "$conns" -le "$bound" ] || fail "GOAWAY after 50 streams: $conns connections for $answers answers (bound $bound: one per GOAWAY)"
pass "a server's GOAWAY after 50 streams costs one reconnection each: $conns connections for $answers answers"
