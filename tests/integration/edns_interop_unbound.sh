#!/usr/bin/env bash
# Interop: Debian's unbound as the DoT upstream, serving
# only local-data (no recursion, no network: every other name is answered
# from a static "." zone), with its defaults for TLS clients - it pads
# responses (RFC 7830, pad-responses) and announces edns-tcp-keepalive
# (RFC 7828) when asked, which nxdns does on every DoT query. Through nxdns:
#   - dig/kdig +noedns get no OPT (UDP and TCP);
#   - EDNS clients get our OPT (udp 1232) and neither keepalive nor padding;
#   - a zone transfer never reaches unbound (its query counter);
#   - dig +norec for two names unbound resolves (from a second unbound,
#     authoritative for rd.test, as a stub zone): unbound (access-control
#     allow, no cache snooping) REFUSEs a query with RD clear; nxdns asks
#     with RD set, so the client gets the record with its own RD clear, and
#     the upstream stays healthy (/api/health: no failure counted);
#   - unbound answers NSID (it is configured with one): dig +nsid through
#     nxdns gets none, and neither does the next client (cached);
#   - version.bind CH TXT (which unbound would answer with its version) and
#     a TSIG-type query are answered by nxdns, never reaching unbound.
# Exits 77 (SKIPPED) when unbound or kdig is not installed.
source "$(dirname "$0")/lib.sh"
PATH=$PATH:/usr/sbin
require_program unbound "Debian: unbound"
require_program unbound-control "Debian: unbound"
require_program kdig "Debian: knot-dnsutils"
require_program curl "Debian: curl"
UNBOUND=$(command -v unbound)

ADDR=$(pick_loopback)
PORT=5300
UB_ADDR=$(pick_loopback)
UB_PORT=8853
UB_CTL=8953
AUTH_PORT=8854
HTTP_PORT=8053
make_pki "$WORK/pki" dot.test
# A second unbound, authoritative for rd.test (static local data on
# loopback), stands for the Internet: the DoT unbound recurses to it as a
# stub zone, so rd.test names are resolved, not local data, and unbound
# treats a query with RD clear as it treats one for any Internet name.
cat >"$WORK/auth.conf" <<CONF
server:
  username: ""
  chroot: ""
  directory: "$WORK"
  pidfile: "$WORK/auth.pid"
  use-syslog: no
  logfile: "$WORK/auth.log"
  interface: $UB_ADDR@$AUTH_PORT
  do-ip6: no
  access-control: 127.0.0.0/8 allow
  module-config: "iterator"
  local-zone: "rd.test." static
  local-data: "rd.test. 60 IN SOA ns.rd.test. host.rd.test. 1 3600 600 86400 60"
  local-data: "rd.test. 60 IN NS ns.rd.test."
  local-data: "c.rd.test. 60 IN A 192.0.2.9"
  local-data: "d.rd.test. 60 IN A 192.0.2.10"
remote-control:
  control-enable: no
CONF
"$UNBOUND" -d -c "$WORK/auth.conf" >"$WORK/auth.stdout" 2>&1 &
PIDS+=("$!")
cat >"$WORK/unbound.conf" <<CONF
server:
  username: ""
  chroot: ""
  directory: "$WORK"
  pidfile: "$WORK/unbound.pid"
  use-syslog: no
  logfile: "$WORK/unbound.log"
  verbosity: 1
  interface: $UB_ADDR@$UB_PORT
  tls-port: $UB_PORT
  tls-service-key: "$WORK/pki/server.key"
  tls-service-pem: "$WORK/pki/server.pem"
  do-ip6: no
  do-udp: yes
  do-tcp: yes
  access-control: 127.0.0.0/8 allow
  module-config: "iterator"
  do-not-query-localhost: no
  outgoing-interface: 127.0.0.1
  edns-tcp-keepalive: yes
  pad-responses: yes
  nsid: "ascii_unbound-interop"
  local-zone: "." static
  local-zone: "interop.test." static
  local-data: "a.interop.test. 60 IN A 192.0.2.7"
  local-data: "b.interop.test. 60 IN A 192.0.2.8"
  local-data: "nsid.interop.test. 60 IN A 192.0.2.11"
  local-zone: "rd.test." transparent
stub-zone:
  name: "rd.test."
  stub-addr: $UB_ADDR@$AUTH_PORT
remote-control:
  control-enable: yes
  control-use-cert: no
  control-interface: $UB_ADDR
  control-port: $UB_CTL
CONF
"$UNBOUND" -d -c "$WORK/unbound.conf" >"$WORK/unbound.stdout" 2>&1 &
PIDS+=("$!")
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/$UB_ADDR/$UB_PORT") 2>/dev/null && break
  sleep 0.05
done
(exec 3<>"/dev/tcp/$UB_ADDR/$UB_PORT") 2>/dev/null || fail "unbound did not start: $(cat "$WORK/unbound.log" "$WORK/unbound.stdout" 2>/dev/null)"
(exec 3<>"/dev/tcp/$UB_ADDR/$AUTH_PORT") 2>/dev/null || fail "the authoritative unbound did not start: $(cat "$WORK/auth.log" "$WORK/auth.stdout" 2>/dev/null)"
ub_queries() {
  unbound-control -c "$WORK/unbound.conf" stats_noreset 2>/dev/null | sed -n 's/^total.num.queries=\([0-9]*\)$/\1/p'
}

cat >"$WORK/nxdns.yaml" <<YAML
listen:
  - "$ADDR:$PORT"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "tls://$UB_ADDR:$UB_PORT"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
http:
  enabled: true
  listen: "$ADDR:$HTTP_PORT"
YAML
start_daemon "$WORK/nxdns.yaml" "$ADDR" "$PORT"
d() { dig @"$ADDR" -p "$PORT" +tries=1 +time=3 "$@" 2>&1 || true; }
k() { kdig @"$ADDR" -p "$PORT" +retry=0 +time=3 "$@" 2>&1 || true; }
has_opt() { grep -q "OPT PSEUDOSECTION\|EDNS PSEUDOSECTION" <<<"$1"; }

# unbound itself, asked directly over TLS, does add keepalive and padding:
# otherwise this test would prove nothing.
direct=$(kdig @"$UB_ADDR" -p "$UB_PORT" +tls +keepopen +padding +retry=0 +time=3 a.interop.test 2>&1 || true)
grep -q "192.0.2.7" <<<"$direct" || fail "unbound did not answer over TLS: $direct"
grep -qi "padding" <<<"$direct" || fail "unbound (direct) did not pad: the check below would be vacuous: $direct"

cases=0 leaks=0
for args in "+noedns" "+noedns +tcp" "" "+tcp" "+bufsize=4096" "+dnssec"; do
  # shellcheck disable=SC2086
  out=$(d $args a.interop.test)
  grep -q "192.0.2.7" <<<"$out" || fail "dig $args: no answer: $out"
  cases=$((cases + 1))
  if [[ "$args" == *noedns* ]]; then
    has_opt "$out" && { leaks=$((leaks + 1)); echo "leak: dig $args received an OPT"; }
  else
    has_opt "$out" || fail "dig $args: no OPT for an EDNS client: $out"
    grep -q "udp: 1232" <<<"$out" || fail "dig $args: the OPT is not ours: $out"
  fi
  if grep -Eqi "keepalive|padding" <<<"$out"; then leaks=$((leaks + 1)); echo "leak: dig $args: $out"; fi
done
for args in "+noedns" "+noedns +tcp" "" "+padding"; do
  # shellcheck disable=SC2086
  out=$(k $args b.interop.test)
  grep -q "192.0.2.8" <<<"$out" || fail "kdig $args: no answer: $out"
  cases=$((cases + 1))
  if [[ "$args" == *noedns* ]] && has_opt "$out"; then leaks=$((leaks + 1)); echo "leak: kdig $args received an OPT"; fi
  if grep -Eqi "keepalive|padding" <<<"$out"; then leaks=$((leaks + 1)); echo "leak: kdig $args: $out"; fi
done
[ "$leaks" = 0 ] || fail "$leaks of $cases client cases received an OPT they did not ask for or unbound's keepalive/padding"

before=$(ub_queries)
[ -n "$before" ] || fail "unbound-control gave no query counter: $(unbound-control -c "$WORK/unbound.conf" stats_noreset 2>&1 | head -3)"
out=$(d axfr interop.test)
grep -q "Transfer failed" <<<"$out" || fail "axfr: $out"
for q in "version.bind CH TXT" "id.server CH TXT" "a.interop.test TSIG"; do
  # shellcheck disable=SC2086
  out=$(d $q)
  grep -Eq "status: (REFUSED|FORMERR)" <<<"$out" || fail "$q: want REFUSED or FORMERR from nxdns: $out"
done
after=$(ub_queries)
[ "$after" = "$before" ] || fail "an AXFR, CH or meta-type query reached unbound (queries $before -> $after)"
pass "unbound 1.17 as DoT upstream: 0 of $cases client cases saw an unrequested OPT, keepalive or padding; AXFR, CH TXT and TSIG not forwarded (unbound queries $before -> $after)"

# unbound itself refuses RD=0 (no cache snooping for this client) and sends
# an NSID when asked: otherwise the checks below would prove nothing.
direct=$(kdig @"$UB_ADDR" -p "$UB_PORT" +tls +norec +nsid +retry=0 +time=3 c.rd.test 2>&1 || true)
grep -q "status: REFUSED" <<<"$direct" || fail "unbound (direct) did not refuse RD=0: the check below would be vacuous: $direct"
grep -q "NSID:" <<<"$direct" || fail "unbound (direct) sent no NSID: the check below would be vacuous: $direct"
health() { curl -s --max-time 5 "http://$ADDR:$HTTP_PORT/api/health"; }
# Two names nxdns has not cached, so that both queries reach unbound.
before=$(ub_queries)
for name in c d; do
  out=$(d +norec "$name.rd.test")
  grep -q "192.0.2.$([ $name = c ] && echo 9 || echo 10)" <<<"$out" || fail "dig +norec $name through nxdns: want the record: $out"
  grep -q "flags: qr ra" <<<"$out" || fail "dig +norec $name: the reply's RD is not the client's: $out"
done
after=$(ub_queries)
[ $((after - before)) = 2 ] || fail "the two +norec queries did not both reach unbound (queries $before -> $after)"
h=$(health)
grep -q '"consecutive_failures":0' <<<"$h" || fail "dig +norec cost the upstream health failures: $h"
grep -q '"state":"healthy"' <<<"$h" || fail "the upstream is not healthy after dig +norec: $h"
out=$(d +nsid nsid.interop.test)  # a name nxdns has not cached
grep -q "192.0.2.11" <<<"$out" || fail "dig +nsid: $out"
grep -q "^; NSID:" <<<"$out" && fail "unbound's NSID reached a client: $out"
out=$(d nsid.interop.test)
grep -q "^; NSID:" <<<"$out" && fail "unbound's NSID was replayed to a client that never asked: $out"
stop_daemon
pass "unbound: dig +norec answered in full twice with RD clear and no health failure; unbound's NSID never relayed"
echo "edns_interop_unbound: all passed"
