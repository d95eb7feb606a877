# Shared by the cache benchmarks (cache_bench.sh, cache_cpu.sh,
# cache_outage.sh, cache_qps.sh, callgrind_per_answer.sh, outstanding_500.sh):
# the DoT upstream fixture they forward to, the nxdns configuration and
# unbound's cache they compare, and starting either server. Sourced after
# tests/integration/lib.sh (WORK, PIDS, fail); sources bench/lib.sh (its
# unbound_conf is the one unbound configuration). Loopback only. start_server
# needs ADDR (the listen address) and UP (the upstream's DoT port on
# 127.0.0.1): cache_bench_upstream sets both.

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# cache_bench_upstream: a loopback address for the servers (ADDR), the test
# PKI in $WORK/pki, and the DoT fixture "up" every server forwards to (UP its
# port, FIX_PID its process; its counters in $WORK/up.stats).
cache_bench_upstream() {
  ADDR=$(pick_loopback)
  make_pki "$WORK/pki" dot.test
  start_fixture up "$WORK/pki"
  UP=$FIX_PORT_up
  FIX_PID=${PIDS[-1]}
}

# SRV_WRAP: a command the server runs under (valgrind), empty by default.
SRV_WRAP=()
# Extra YAML under nxdns's cache: section / lines under unbound's server:.
NX_CACHE_EXTRA=${NX_CACHE_EXTRA:-}
UB_EXTRA=${UB_EXTRA:-}

nxdns_conf() {  # FILE PORT PREFETCH
  cat >"$1" <<YAML
listen:
  - "$ADDR:$2"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "tls://127.0.0.1:$UP"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
http:
  enabled: false
# Every client of these benchmarks (dnsperf, trace_replay.py) sends from one
# address, and unbound runs without a per-client limit: under nxdns's default
# (300/s, burst 3000) all but the first few thousand queries of a run came
# back REFUSED, which counted as cached answers (QPS) or as hits (no
# upstream exchange) and left the 100k-name fill mostly uncached.
client_limits:
  queries_per_second: 0
cache:
  max_bytes: 16777216
  prefetch: $3
$NX_CACHE_EXTRA
log:
  level: warn
YAML
}

# unbound's cache here: 8 MiB each for messages and RRsets, PREFETCH, and
# UB_EXTRA.
unbound_cache() {  # PREFETCH(yes|no)
  printf '  msg-cache-size: 8m\n  rrset-cache-size: 8m\n  prefetch: %s\n%s' "$1" "$UB_EXTRA"
}

start_server() {  # KIND PORT PREFETCH(true|false) -> SRV_PID
  local dir="$WORK/$1-$2"
  mkdir -p "$dir"
  if [ "$1" = nxdns ]; then
    nxdns_conf "$dir/c.yaml" "$2" "$3"
    ${SRV_WRAP[@]+"${SRV_WRAP[@]}"} "$NXDNS" run -c "$dir/c.yaml" >"$dir/log" 2>&1 &
  else
    unbound_conf "$dir/u.conf" "$dir" "$ADDR" "$2" "$UP" "$WORK/pki" \
      "$(unbound_cache "$([ "$3" = true ] && echo yes || echo no)")"
    ${SRV_WRAP[@]+"${SRV_WRAP[@]}"} unbound -d -c "$dir/u.conf" >"$dir/log" 2>&1 &
  fi
  SRV_PID=$!
  PIDS+=("$SRV_PID")
  local i
  for i in $(seq 1 600); do
    (exec 3<>"/dev/tcp/$ADDR/$2") 2>/dev/null && return 0
    kill -0 "$SRV_PID" 2>/dev/null || fail "$1 exited at start: $(tail -n 3 "$dir/log")"
    sleep 0.05
  done
  fail "$1 did not start"
}
