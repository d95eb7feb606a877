#!/usr/bin/env bash
# A web surface bound to a wildcard address (http.listen 0.0.0.0) answers
# to this machine's own addresses and name, read when a request comes (an
# address added while the daemon runs is served at once), and to no other
# Host. It runs in user, network and UTS namespaces of its own (unshare
# -rnu): the namespace's lo gets the extra address 192.0.2.1 (TEST-NET-1,
# RFC 5737; it exists only in here) and the host name nxdns-guard-test.
# Every connection goes to 127.0.0.1; the other addresses appear only in
# Host headers, as a LAN browser would write them.
if [ "${NXDNS_IN_NAMESPACE:-0}" != 1 ]; then
  if ! command -v unshare >/dev/null 2>&1 || ! unshare -rnu true 2>/dev/null; then
    echo "SKIPPED: cannot create user, network and UTS namespaces here (unshare -rnu)"
    exit 77
  fi
  exec unshare -rnu env NXDNS_IN_NAMESPACE=1 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
require_program curl "Debian: curl"
require_program ip "Debian: iproute2"

ip link set lo up
ip addr add 192.0.2.1/32 dev lo
echo nxdns-guard-test >/proc/sys/kernel/hostname

cat >"$WORK/nxdns.yaml" <<YAML
listen:
  - "127.0.0.1:5300"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "tls://127.0.0.1:853"
    tls_name: "dot.test"
http:
  listen: "0.0.0.0:8053"
YAML
start_daemon "$WORK/nxdns.yaml" 127.0.0.1 5300

code() { curl -s --max-time 5 -o /dev/null -w '%{http_code}' -H "Host: $1" http://127.0.0.1:8053/api/diagnostics; }
expect() {
  local c
  c=$(code "$2")
  [ "$c" = "$1" ] || fail "Host $2: HTTP $c, want $1"
}

for host in 127.0.0.1:8053 localhost:8053 "[::1]:8053" 192.0.2.1:8053 192.0.2.1 nxdns-guard-test:8053 \
  nxdns-guard-test.local:8053 NXDNS-Guard-Test; do
  expect 200 "$host"
done
for host in 192.0.2.2:8053 rebind.example:8053 nxdns-guard-test.rebind.example 192.0.2.1.rebind.example; do
  expect 421 "$host"
done
pass "wildcard bind: loopback, localhost, the machine's address and name (and NAME.local) served; others 421"

ip addr add 192.0.2.2/32 dev lo
expect 200 192.0.2.2:8053
ip addr del 192.0.2.2/32 dev lo
expect 421 192.0.2.2:8053
pass "an address added while the daemon runs is served at once, and refused once removed"

nx cache flush -c "$WORK/nxdns.yaml" >"$WORK/flush.out" 2>&1 || fail "nxdns cache flush -c: $(cat "$WORK/flush.out")"
grep -q '"flushed":0' "$WORK/flush.out" || fail "nxdns cache flush printed: $(cat "$WORK/flush.out")"
pass "nxdns cache flush reaches a wildcard-bound surface through loopback"

stop_daemon
