#!/usr/bin/env bash
# `home_router: auto` in network namespaces this test creates (and removes):
# the daemon's namespace has a LAN (192.168.77.2/24 on a veth) with its
# default route through a "router" namespace (192.168.77.1) that runs the
# plain-DNS fixture on port 53. Checks that the daemon finds the router,
# sends it lan and the reverse zone of its own subnet, follows a change of
# the default route at run time, and stops using it when the route goes.
# Nothing leaves the two namespaces; needs root (skipped otherwise).
. "$(dirname "$0")/lib.sh"
need_fixture nxdns-fixture-plain-dns
need_fixture nxdns-fixture-dot
[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces"
require_program ip "Debian: apt-get install iproute2"

NS_A="nxdns-it-host-$$"
NS_R="nxdns-it-router-$$"
ns_cleanup() {
  ip netns del "$NS_A" 2>/dev/null || true
  ip netns del "$NS_R" 2>/dev/null || true
}
trap 'rc=$?; ns_cleanup; (exit $rc); cleanup' EXIT
ip netns add "$NS_A" 2>/dev/null || skip "cannot create a network namespace here"
ip netns add "$NS_R"
ip link add "nxa$$" type veth peer name "nxr$$" || skip "cannot create a veth pair here"
ip link set "nxa$$" netns "$NS_A"
ip link set "nxr$$" netns "$NS_R"
ip -n "$NS_A" link set lo up
ip -n "$NS_R" link set lo up
ip -n "$NS_A" addr add 192.168.77.2/24 dev "nxa$$"
ip -n "$NS_R" addr add 192.168.77.1/24 dev "nxr$$"
ip -n "$NS_A" link set "nxa$$" up
ip -n "$NS_R" link set "nxr$$" up
ip -n "$NS_A" route add default via 192.168.77.1

in_a() { ip netns exec "$NS_A" "$@"; }

# The upstream (DoT) and the daemon live in the host namespace's loopback.
make_pki "$WORK/pki" dot.test
(exec ip netns exec "$NS_A" ${NXDNS_EMULATOR:+$NXDNS_EMULATOR} "$FIXTURES/nxdns-fixture-dot" --listen 127.0.0.1:0 \
  --port-file "$WORK/up.port" --stats-file "$WORK/up.stats" --cert "$WORK/pki/server.pem" \
  --key "$WORK/pki/server.key" >"$WORK/up.log" 2>&1) &
PIDS+=("$!")
wait_file "$WORK/up.port" || fail "upstream fixture did not start"
(exec ip netns exec "$NS_R" ${NXDNS_EMULATOR:+$NXDNS_EMULATOR} "$FIXTURES/nxdns-fixture-plain-dns" \
  --listen 192.168.77.1:53 --netns "$NS_R" --port-file "$WORK/router.port" --stats-file "$WORK/router.stats" --zone lan \
  --a printer.lan=192.168.77.30 >"$WORK/router.log" 2>&1) &
PIDS+=("$!")
wait_file "$WORK/router.port" || fail "router fixture did not start"

cat >"$WORK/nxdns.yaml" <<YAML
listen:
  - "127.0.0.1:5300"
upstreams:
  - url: "tls://127.0.0.1:$(cat "$WORK/up.port")"
    tls_name: dot.test
    ca_file: "$WORK/pki/ca.pem"
budgets:
  attempt_ms: 1000
  total_ms: 3000
http:
  listen: "127.0.0.1:8053"
home_router: auto
YAML
(exec ip netns exec "$NS_A" ${NXDNS_EMULATOR:+$NXDNS_EMULATOR} "$NXDNS" run -c "$WORK/nxdns.yaml" >"$WORK/daemon.log" 2>&1) &
DAEMON_PID=$!
PIDS+=("$DAEMON_PID")
for i in $(seq 1 100); do
  in_a bash -c 'exec 3<>/dev/tcp/127.0.0.1/5300' 2>/dev/null && break
  kill -0 "$DAEMON_PID" 2>/dev/null || fail "daemon exited at start"
  sleep 0.05
done

q() { in_a dig @127.0.0.1 -p 5300 +tries=1 +time=3 "$@"; }
router_udp() { stat "$WORK/router.stats" udp_queries || echo 0; }
health_router() { in_a curl -fsS http://127.0.0.1:8053/api/health | python3 -c 'import json,sys; print(json.load(sys.stdin)["local_names"]["home_router"])'; }

grep -q "home router 192.168.77.1:53 (found: default gateway on nxa$$)" "$WORK/daemon.log" ||
  fail "the router was not found (log: $(grep 'home router' "$WORK/daemon.log"))"
[ "$(q +short printer.lan)" = 192.168.77.30 ] || fail "printer.lan not answered by the router: $(q printer.lan)"
before=$(router_udp)
q -x 192.168.77.30 >/dev/null
[ "$(router_udp)" -gt "$before" ] || fail "the PTR of the host's own subnet did not go to the router"
before=$(router_udp)
q -x 192.168.78.30 | grep -q 'status: NXDOMAIN' || fail "another 192.168/16 PTR"
[ "$(router_udp)" = "$before" ] || fail "a PTR outside the host's subnet went to the router"
case "$(health_router)" in *"192.168.77.1:53 (found"*) ;; *) fail "health: $(health_router)" ;; esac
[ "$(stat "$WORK/up.stats" queries)" = 0 ] || fail "a LAN name reached the upstream"
pass "auto: the default gateway is asked lan and the host subnet's reverse zone"

# The route changes while the daemon runs: it follows (netlink).
ip -n "$NS_R" addr add 192.168.77.254/24 dev "nxr$$"
(exec ip netns exec "$NS_R" ${NXDNS_EMULATOR:+$NXDNS_EMULATOR} "$FIXTURES/nxdns-fixture-plain-dns" \
  --listen 192.168.77.254:53 --netns "$NS_R" --port-file "$WORK/router2.port" --stats-file "$WORK/router2.stats" --zone lan \
  --a printer.lan=192.168.77.31 >"$WORK/router2.log" 2>&1) &
PIDS+=("$!")
wait_file "$WORK/router2.port" || fail "second router fixture did not start"
ip -n "$NS_A" route replace default via 192.168.77.254
for i in $(seq 1 100); do
  grep -q "home router 192.168.77.254:53" "$WORK/daemon.log" && break
  sleep 0.05
done
grep -q "home router 192.168.77.254:53" "$WORK/daemon.log" || fail "the new default gateway was not noticed"
[ "$(q +short printer.lan)" = 192.168.77.31 ] || fail "printer.lan not asked of the new router"
pass "a new default gateway is followed at run time"

ip -n "$NS_A" route del default
for i in $(seq 1 100); do
  grep -q "home router none found" "$WORK/daemon.log" && break
  sleep 0.05
done
grep -q "home router none found" "$WORK/daemon.log" || fail "the removed default route was not noticed"
before=$(stat "$WORK/up.stats" queries)
q printer.lan >/dev/null
[ "$(stat "$WORK/up.stats" queries)" -gt "$before" ] || fail "without a router, lan did not go to the upstreams"
pass "without a default gateway, lan is no longer sent to a router"

kill -TERM "$DAEMON_PID"
wait "$DAEMON_PID" || fail "daemon exit status after SIGTERM"
echo "home_router_auto: all passed"
