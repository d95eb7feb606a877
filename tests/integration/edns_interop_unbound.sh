#!/usr/bin/env bash
# Interop (issue 13 item 2): Debian's unbound as the DoT upstream, serving
# only local-data (no recursion, no network: every other name is answered
# from a static "." zone), with its defaults for TLS clients - it pads
# responses (RFC 7830, pad-responses) and announces edns-tcp-keepalive
# (RFC 7828) when asked, which nxdns does on every DoT query. Through nxdns:
#   - dig/kdig +noedns get no OPT (UDP and TCP);
#   - EDNS clients get our OPT (udp 1232) and neither keepalive nor padding;
#   - a zone transfer never reaches unbound (its query counter).
# Exits 77 (SKIPPED) when unbound or kdig is not installed.
source "$(dirname "$0")/lib.sh"
PATH=$PATH:/usr/sbin
require_program unbound "Debian: unbound"
require_program unbound-control "Debian: unbound"
require_program kdig "Debian: knot-dnsutils"
UNBOUND=$(command -v unbound)

ADDR=$(pick_loopback)
PORT=5300
UB_ADDR=$(pick_loopback)
UB_PORT=8853
UB_CTL=8953
make_pki "$WORK/pki" dot.test
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
  do-not-query-localhost: yes
  outgoing-interface: 127.0.0.1
  edns-tcp-keepalive: yes
  pad-responses: yes
  local-zone: "." static
  local-zone: "interop.test." static
  local-data: "a.interop.test. 60 IN A 192.0.2.7"
  local-data: "b.interop.test. 60 IN A 192.0.2.8"
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
ub_queries() {
  unbound-control -c "$WORK/unbound.conf" stats_noreset 2>/dev/null | sed -n 's/^total.num.queries=\([0-9]*\)$/\1/p'
}

cat >"$WORK/nxdns.yaml" <<YAML
listen:
  - "$ADDR:$PORT"
upstreams:
  - url: "tls://$UB_ADDR:$UB_PORT"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
http:
  enabled: false
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
after=$(ub_queries)
[ "$after" = "$before" ] || fail "the AXFR reached unbound (queries $before -> $after)"
stop_daemon
pass "unbound 1.17 as DoT upstream: 0 of $cases client cases saw an unrequested OPT, keepalive or padding; AXFR not forwarded (unbound queries $before -> $after)"
echo "edns_interop_unbound: all passed"
