#!/usr/bin/env bash
# Household names end to end: the real daemon, a DoT upstream fixture and a
# plain-DNS "home router" fixture, all on loopback.
#   - the router's zones (lan, home.arpa, internal) and a configured reverse
#     zone go to the router and nowhere else; its NXDOMAIN is relayed;
#   - a truncated UDP answer is asked again over TCP;
#   - localhost, invalid, test and the private reverse zones are answered
#     here (AA, synthesized SOA); hosts files and records too, WAN or not;
#   - a router that stops answering costs a local NXDOMAIN, not a wait or a
#     SERVFAIL, and /api/health says it does not serve DNS;
#   - a reload with a bad hosts line changes nothing; a good one applies;
#   - `nxdns why` and /metrics say which route each name took.
# Nothing of it reaches the encrypted upstream (its fixture counts queries).
. "$(dirname "$0")/lib.sh"
need_fixture nxdns-fixture-plain-dns

make_pki "$WORK/pki" dot.test
start_fixture up "$WORK/pki"
ADDR=$(pick_loopback)
RADDR=$(pick_loopback)
TADDR=$(pick_loopback)
HTTP="$ADDR:8053"

# start_router NAME ADDR [fixture flags]: sets ROUTER_PORT_<NAME>.
start_router() {
  local name=$1 addr=$2
  shift 2
  rm -f "$WORK/$name.port"
  fx_exec nxdns-fixture-plain-dns --listen "$addr:0" --port-file "$WORK/$name.port" --stats-file "$WORK/$name.stats" \
    "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=("$!")
  printf -v "ROUTER_PID_$name" '%s' "$!"
  wait_file "$WORK/$name.port" || fail "router fixture $name did not start"
  printf -v "ROUTER_PORT_$name" '%s' "$(cat "$WORK/$name.port")"
}
start_router home "$RADDR" --zone lan --a printer.lan=192.168.1.30 --a tv.home.arpa=192.168.1.31 --a nas.internal=192.168.1.32
start_router trunc "$TADDR" --zone trunc.example --truncate-udp --a big.trunc.example=192.0.2.77

cat >"$WORK/hosts" <<'HOSTS'
# the household's own names
192.168.1.20	nas2.home.arpa nas2
fd00::20	nas2.home.arpa
HOSTS

write_config() {
  cat >"$WORK/nxdns.yaml" <<YAML
listen:
  - "$ADDR:5300"
upstreams:
  - url: "tls://127.0.0.1:$FIX_PORT_up"
    tls_name: dot.test
    ca_file: "$WORK/pki/ca.pem"
budgets:
  attempt_ms: 1000
  total_ms: 3000
http:
  listen: "$HTTP"
home_router: "$RADDR:$ROUTER_PORT_home"
local_zones:
  - zone: "1.168.192.in-addr.arpa"
    servers: ["$RADDR:$ROUTER_PORT_home"]
  - zone: "trunc.example"
    servers: ["$TADDR:$ROUTER_PORT_trunc"]
hosts_files: ["$WORK/hosts"]
records:
  - "files.home.arpa. 120 IN CNAME nas2.home.arpa."
  - "_smb._tcp.home.arpa. SRV 0 0 445 nas2.home.arpa."
YAML
}
write_config
start_daemon "$WORK/nxdns.yaml" "$ADDR" 5300

q() { dig @"$ADDR" -p 5300 +tries=1 +time=3 "$@"; }
status_of() { q "$@" | sed -n 's/.*status: \([A-Z]*\),.*/\1/p' | head -n1; }
upstream_queries() { stat "$WORK/up.stats" queries || echo 0; }
router_udp() { stat "$WORK/home.stats" udp_queries || echo 0; }

# ---- the router's zones go to the router ----------------------------------
[ "$(q +short printer.lan)" = 192.168.1.30 ] || fail "printer.lan not answered by the router: $(q printer.lan)"
[ "$(q +short tv.home.arpa)" = 192.168.1.31 ] || fail "tv.home.arpa not answered by the router"
[ "$(q +short nas.internal)" = 192.168.1.32 ] || fail "nas.internal not answered by the router"
before=$(router_udp)
[ "$(status_of -x 192.168.1.30)" = NXDOMAIN ] || fail "the router's NXDOMAIN for a PTR was not relayed"
[ "$(router_udp)" -gt "$before" ] || fail "the configured reverse zone did not go to the router"
[ "$(status_of unknown.lan)" = NXDOMAIN ] || fail "unknown.lan: the router's NXDOMAIN was not relayed"
pass "lan, home.arpa, internal and a configured reverse zone answered by the router"

# ---- TCP when truncated ---------------------------------------------------
[ "$(q +short big.trunc.example)" = 192.0.2.77 ] || fail "a truncated LAN answer was not asked again over TCP"
[ "$(stat "$WORK/trunc.stats" tcp_queries)" -ge 1 ] || fail "no TCP query reached the truncating server"
pass "a truncated UDP answer is asked again over TCP"

# ---- answered here ----------------------------------------------------------
[ "$(q +short localhost)" = 127.0.0.1 ] || fail "localhost A"
[ "$(q +short app.localhost AAAA)" = ::1 ] || fail "app.localhost AAAA"
[ "$(q +short -x 127.0.0.1)" = localhost. ] || fail "PTR of 127.0.0.1"
for name in x.invalid y.test z.onion; do
  out=$(q "$name")
  echo "$out" | grep -q 'status: NXDOMAIN' || fail "$name: $out"
  echo "$out" | grep -q 'flags: qr aa' || fail "$name is not authoritative: $out"
  echo "$out" | grep -q 'IN[[:space:]]*SOA' || fail "$name has no SOA: $out"
done
[ "$(status_of -x 10.1.2.3)" = NXDOMAIN ] || fail "10/8 PTR"
[ "$(status_of -x 172.20.0.9)" = NXDOMAIN ] || fail "172.16/12 PTR"
[ "$(status_of -x 169.254.1.1)" = NXDOMAIN ] || fail "link-local PTR"
[ "$(status_of -x fd12::1)" = NXDOMAIN ] || fail "ULA PTR"
[ "$(q +short nas2.home.arpa)" = 192.168.1.20 ] || fail "hosts file A"
[ "$(q +short nas2.home.arpa AAAA)" = fd00::20 ] || fail "hosts file AAAA"
[ "$(q +short -x 192.168.1.20)" = nas2.home.arpa. ] || fail "hosts file PTR (beats the router's reverse zone)"
[ "$(q +short files.home.arpa | tr '\n' ' ')" = "nas2.home.arpa. 192.168.1.20 " ] || fail "records CNAME chain: $(q files.home.arpa)"
q +short _smb._tcp.home.arpa SRV | grep -q '0 0 445 nas2.home.arpa.' || fail "records SRV"
[ "$(upstream_queries)" = 0 ] || fail "a local name reached the encrypted upstream ($(upstream_queries) queries)"
pass "localhost, invalid, test, onion, private reverse zones, hosts files and records answered here; upstream untouched"

# ---- forwarded names still go upstream --------------------------------------
[ "$(status_of www.example.org)" = NOERROR ] || fail "a public name was not forwarded"
[ "$(upstream_queries)" -ge 1 ] || fail "the public name did not reach the upstream"

# ---- nxdns why ----------------------------------------------------------------
nx why --http "$HTTP" printer.lan >"$WORK/why1.out" || fail "nxdns why printer.lan failed"
grep -q 'route:  lan' "$WORK/why1.out" || fail "why printer.lan: $(cat "$WORK/why1.out")"
grep -q "$RADDR:$ROUTER_PORT_home" "$WORK/why1.out" || fail "why printer.lan does not name the router"
nx why --http "$HTTP" nas2.home.arpa --type AAAA >"$WORK/why2.out"
grep -q "$WORK/hosts:3" "$WORK/why2.out" || fail "why nas2.home.arpa does not name the hosts line: $(cat "$WORK/why2.out")"
nx why --http "$HTTP" x.invalid | grep -q 'RFC 6761' || fail "why x.invalid does not name RFC 6761"
nx why --http "$HTTP" www.example.org | grep -q 'route:  upstream' || fail "why www.example.org"
if nx why --http "$HTTP" 'bad..name' >/dev/null 2>&1; then fail "why accepted a bad name"; fi
pass "nxdns why names the router, the hosts line, the RFC and the upstream"

# ---- metrics --------------------------------------------------------------------
curl -fsS "http://$HTTP/metrics" >"$WORK/metrics.txt"
grep -q '^nxdns_routed_queries_total{route="lan"} [1-9]' "$WORK/metrics.txt" || fail "no lan route counted"
grep -q '^nxdns_routed_queries_total{route="records"} [1-9]' "$WORK/metrics.txt" || fail "no records route counted"
grep -q "^nxdns_upstream_info{upstream=\"lan:$RADDR:$ROUTER_PORT_home\"" "$WORK/metrics.txt" ||
  fail "the router has no upstream series"
pass "/metrics counts routes and gives the LAN servers the upstream series"

# ---- a bad hosts line changes nothing; a good edit applies --------------------
printf '192.168.1.20 nas2.home.arpa\n192.168.1.999 broken.home.arpa\n' >"$WORK/hosts"
if nx reload --http "$HTTP" >"$WORK/reload1.out" 2>&1; then fail "a bad hosts line was applied"; fi
grep -q "$WORK/hosts:2" "$WORK/reload1.out" || fail "the refusal does not name the file and line: $(cat "$WORK/reload1.out")"
[ "$(q +short nas2.home.arpa AAAA)" = fd00::20 ] || fail "the refused reload changed the names"
printf '192.168.1.21 nas3.home.arpa\n' >"$WORK/hosts"
nx reload --http "$HTTP" >"$WORK/reload2.out" 2>&1 || fail "reload of a good hosts file: $(cat "$WORK/reload2.out")"
[ "$(q +short nas3.home.arpa)" = 192.168.1.21 ] || fail "the reloaded hosts file is not served"
[ "$(status_of nas2.home.arpa)" = NXDOMAIN ] || fail "a name removed from the hosts file is still served"
pass "reload: a bad hosts line is refused with FILE:LINE, a good file applies"

# ---- the router goes away -------------------------------------------------------
kill "$ROUTER_PID_home"
wait "$ROUTER_PID_home" 2>/dev/null || true
for name in tv.lan second.lan third.home.arpa; do
  t0=$(now_ms)
  [ "$(status_of "$name")" = NXDOMAIN ] || fail "$name with the router down: not the local NXDOMAIN"
  t1=$(now_ms)
  # A refused datagram fails the attempt at once: far below the attempt
  # budget (1 s) -- loose enough for any machine, tight enough to catch a
  # wait for a timeout.
  [ $((t1 - t0)) -lt 900 ] || fail "$name took $((t1 - t0)) ms with the router down"
done
curl -fsS "http://$HTTP/api/health" >"$WORK/health.json"
python3 - "$WORK/health.json" <<'PY' || fail "health does not say the router does not serve DNS: $(cat "$WORK/health.json")"
import json, sys
h = json.load(open(sys.argv[1]))
servers = [s for s in h["local_names"]["lan_servers"] if s["home_router"]]
assert servers and not servers[0]["serves_dns"], servers
PY
curl -fsS "http://$HTTP/metrics" | grep -q '^nxdns_lan_fallbacks_total [1-9]' || fail "no LAN fallback counted"
[ "$(q +short nas3.home.arpa)" = 192.168.1.21 ] || fail "hosts names stop with the router"
pass "a router that stops answering costs a quick local NXDOMAIN; health says so"

# ---- the WAN goes away ------------------------------------------------------------
kill "$(pgrep -f "nxdns-fixture-dot.*$WORK/up.port" | head -n1)" 2>/dev/null || true
sleep 0.2
[ "$(q +short nas3.home.arpa)" = 192.168.1.21 ] || fail "hosts names need the WAN"
[ "$(q +short localhost)" = 127.0.0.1 ] || fail "localhost needs the WAN"
pass "local names answer with the WAN down"

stop_daemon
echo "local_names: all passed"
