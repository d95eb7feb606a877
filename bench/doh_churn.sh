#!/usr/bin/env bash
# Connections nxdns opens to Knot Resolver's DoH under load (they must stay
# within the slots: docs/architecture.md, "No connection churn"):
#   bash bench/doh_churn.sh path/to/nxdns [fixture-dir]
# kresd (Debian knot-resolver, 5.6) serves DoH (HTTP/2 over TLS, the test
# PKI's certificate for doh.test) on a 127.x address and answers every query
# itself: policy.ANSWER (A 192.0.2.1, NODATA for any other type) for all
# names, no trust anchor (no RFC 5011 refresh), and the modules that send
# queries of their own (priming, detect_time_skew, detect_time_jump)
# unloaded, so it never recurses. When `unshare -rn` works the whole run is
# in a network namespace of its own holding only lo: nothing can leave
# loopback even by mistake. The daemon forwards to kresd over DoH and dnsperf
# sends it unique names for LENGTH s at OUTSTANDING queries in flight.
#
# Per run: connections the daemon opened to kresd (client-side sockets to
# kresd's port in any state, TIME-WAIT included, from ss: closed ones stay
# listed for 60 s), nxdns_upstream_connections_total, queries per second,
# and with KRESD_DEBUG=1 the streams kresd refused (its doh debug log: slows
# kresd down, so figures are then not comparable). Exits 1 when a run opened
# more connections than the upstream's 8 slots (the interop check), 77
# (skipped) when kresd or dnsperf is missing.
#
# TARGET=fixture runs the same against the in-repo stand-in instead of
# kresd: nxdns-fixture-doh-h2gate --refuse-interleaved (kresd's refusal of
# interleaved requests, and the connection counter) in front of nghttpx's
# cleartext HTTP/2 frontend and nxdns-fixture-doh --plain; connections are
# then the gate's count.
#
# Env: RUNS (3), LENGTH (5), OUTSTANDING (64), METHOD (post | get; post is
# the default method and the one that churned), TARGET (kresd | fixture),
# BENCH_RESULTS (a directory: the runs also go to DIR/doh_churn.json, written
# by bench/bench_result.py).
set -euo pipefail
BENCH_COMMAND="bash bench/doh_churn.sh $*"
if [ -z "${NXDNS_IN_NETNS:-}" ] && unshare -rn true 2>/dev/null; then
  exec unshare -rn env NXDNS_IN_NETNS=1 bash "$0" "$@"
fi
source "$(dirname "$0")/../tests/integration/lib.sh"
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"  # result_json, tsv
PATH=$PATH:/usr/sbin
TARGET=${TARGET:-kresd}
if [ "$TARGET" = kresd ]; then
  require_program kresd "Debian: knot-resolver (scripts/install-deps.sh --bench)"
else
  require_program nghttpx "Debian: nghttp2-proxy"
  need_fixture nxdns-fixture-doh
  need_fixture nxdns-fixture-doh-h2gate
fi
require_program dnsperf "Debian: dnsperf"
require_program ss "Debian: iproute2"
if [ -n "${NXDNS_IN_NETNS:-}" ]; then
  ip link set lo up
  echo "network namespace of its own (only lo)"
else
  echo "NOTE: unshare -rn unavailable: kresd's configuration alone keeps it off the network"
fi
RUNS=${RUNS:-3}
LENGTH=${LENGTH:-5}
OUTSTANDING=${OUTSTANDING:-64}
METHOD=${METHOD:-post}
SLOTS=8

KR_ADDR=$(pick_loopback)
KR_PORT=8443
ADDR=$(pick_loopback)
PORT=5300
make_pki "$WORK/pki" doh.test
debug=""
if [ "$TARGET" = kresd ]; then
  [ "${KRESD_DEBUG:-0}" = 1 ] && debug="log_groups({'doh'}) log_level('debug')"
  cat >"$WORK/kresd.conf" <<CONF
net.ipv6 = false
net.listen('$KR_ADDR', $KR_PORT, { kind = 'doh2' })
net.tls('$WORK/pki/server.pem', '$WORK/pki/server.key')
trust_anchors.remove('.')
modules.unload('priming')
modules.unload('detect_time_skew')
modules.unload('detect_time_jump')
cache.size = 10 * MB
policy.add(policy.all(policy.ANSWER({ [kres.type.A] = { rdata = kres.str2ip('192.0.2.1'), ttl = 300 } }, true)))
$debug
CONF
  kresd -n -c "$WORK/kresd.conf" "$WORK" >"$WORK/kresd.log" 2>&1 &
  SRV_PID=$!
  SRV_NAME="kresd $(kresd --version | sed -n 's/.*version //p')"
else
  fx_exec nxdns-fixture-doh --listen 127.0.0.1:0 --plain --port-file "$WORK/fx.port" >"$WORK/fx.log" 2>&1 &
  PIDS+=("$!")
  wait_file "$WORK/fx.port" || fail "DoH fixture did not start"
  NGX_PORT=$((20000 + RANDOM % 30000))
  nghttpx --conf=/dev/null --single-process --workers=1 --no-ocsp "--frontend=127.0.0.1,$NGX_PORT;no-tls" \
    "--backend=127.0.0.1,$(cat "$WORK/fx.port")" --backend-connections-per-host=64 --backend-keep-alive-timeout=60s \
    "--errorlog-file=$WORK/nghttpx.log" >"$WORK/nghttpx.out" 2>&1 &
  PIDS+=("$!")
  fx_exec nxdns-fixture-doh-h2gate --listen "$KR_ADDR:$KR_PORT" --to "127.0.0.1:$NGX_PORT" --refuse-interleaved \
    --cert "$WORK/pki/server.pem" --key "$WORK/pki/server.key" --stats-file "$WORK/gate.stats" >"$WORK/gate.log" 2>&1 &
  SRV_PID=$!
  SRV_NAME="nxdns-fixture-doh-h2gate --refuse-interleaved (nghttpx, nxdns-fixture-doh)"
fi
PIDS+=("$SRV_PID")
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/$KR_ADDR/$KR_PORT") 2>/dev/null && break
  kill -0 "$SRV_PID" 2>/dev/null || break
  sleep 0.05
done
(exec 3<>"/dev/tcp/$KR_ADDR/$KR_PORT") 2>/dev/null || fail "$TARGET did not start"

cat >"$WORK/nxdns.yaml" <<YAML
listen:
  - "$ADDR:$PORT"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "https://doh.test:$KR_PORT/dns-query"
    address: "$KR_ADDR"
    ca_file: "$WORK/pki/ca.pem"
    method: $METHOD
budgets:
  attempt_ms: 2000
  total_ms: 5000
# dnsperf sends from one address: under the default per-client rate limit
# (300/s) most of a run would be answered REFUSED and never reach the DoH
# upstream whose connections this counts.
client_limits:
  queries_per_second: 0
http:
  listen: "$ADDR:8053"
log:
  level: warn
YAML
gen_names() { awk -v n="$1" -v tag="$2" 'BEGIN { for (i = 0; i < n; i++) printf "q%d-%s.churn.test A\n", i, tag }'; }
# Connections opened so far: the gate's own count, or for kresd the
# client-side sockets to its port in any state (ss; TIME-WAIT included).
opened_so_far() {
  if [ "$TARGET" = kresd ]; then ss -tan | awk -v p="$KR_ADDR:$KR_PORT" '$5 == p' | wc -l
  else sleep 0.3; stat "$WORK/gate.stats" connections; fi
}
refusals() {
  if [ "$TARGET" = kresd ]; then grep -c 'refusing (begin_headers' "$WORK/kresd.log" || true
  else sleep 0.3; stat "$WORK/gate.stats" refused; fi
}
[ "$TARGET" = fixture ] && debug=gate

echo "$SRV_NAME DoH on $KR_ADDR:$KR_PORT, nxdns $METHOD, dnsperf -q $OUTSTANDING -l $LENGTH, unique names"
worst=0
tsv run opened connections_total queries_per_s lost refused >"$WORK/runs.tsv"
for run in $(seq 1 "$RUNS"); do
  start_daemon "$WORK/nxdns.yaml" "$ADDR" "$PORT"
  gen_names 400000 "r$run-$RANDOM" >"$WORK/names"
  before=$(opened_so_far)
  refused_before=$(refusals)
  timeout $((LENGTH + 30)) dnsperf -s "$ADDR" -p "$PORT" -d "$WORK/names" -q "$OUTSTANDING" -l "$LENGTH" -t 5 \
    >"$WORK/dnsperf.out" 2>&1 || true
  opened=$(($(opened_so_far) - before))
  total=$(curl -s --max-time 5 "http://$ADDR:8053/metrics" |
    sed -n 's/^nxdns_upstream_connections_total{[^}]*} \([0-9]*\)$/\1/p')
  qps=$(sed -n 's/.*Queries per second: *\([0-9.]*\).*/\1/p' "$WORK/dnsperf.out")
  lost=$(sed -n 's/.*Queries lost: *\([0-9]*\).*/\1/p' "$WORK/dnsperf.out")
  line="run $run: connections opened $opened (nxdns_upstream_connections_total ${total:-?}), ${qps:-?} queries/s, ${lost:-?} lost"
  refused=-
  [ -n "$debug" ] && refused=$(($(refusals) - refused_before)) && line="$line, $TARGET refused $refused streams"
  tsv "$run" "$opened" "${total:--}" "${qps:--}" "${lost:--}" "$refused" >>"$WORK/runs.tsv"
  echo "$line"
  [ "$opened" -gt "$worst" ] && worst=$opened
  stop_daemon
done
peers=(--peer dnsperf)
if [ "$TARGET" = kresd ]; then peers+=(--peer kresd); else peers+=(--peer nghttpx); fi
result_json doh_churn --table "runs=$WORK/runs.tsv" --nxdns "nxdns=$NXDNS" "${peers[@]}" --param "target=$TARGET" \
  --param "method=$METHOD" --param "outstanding=$OUTSTANDING" --param "seconds=$LENGTH" --param "slots=$SLOTS" \
  --param "isolation=$([ -n "${NXDNS_IN_NETNS:-}" ] && echo "network namespace (unshare -rn)" || echo "host loopback")"
[ "$worst" -le "$SLOTS" ] || fail "a run opened $worst connections to $TARGET (the upstream has $SLOTS slots)"
echo "ok: at most $worst connection(s) per ${LENGTH} s run (slots: $SLOTS)"
