#!/usr/bin/env bash
# What crosses the hop between a LAN client and the upstream never lets one
# client spoil the answer another gets, through the real daemon and dig,
# loopback only. The DoT fixture answers like a recursive resolver that
# takes a client's query at its word: RD clear gets an empty NOERROR (its
# cache is empty), a COOKIE comes back with a server cookie, an NSID request
# gets an NSID, AD is set for a query with AD or DO, and every reply carries
# an Extended DNS Error (RFC 8914). Checked:
#   - dig +norec, then a plain query for the same name: both get the record
#     (the upstream only ever sees RD set), each with its own RD bit;
#   - COOKIE and NSID never go upstream; no client gets a COOKIE or an NSID
#     back, the one that sent another cookie included (cached answer);
#     no client option at all reaches the upstream (+ednsopt);
#   - the Extended DNS Error reaches clients, fresh and cached;
#   - AD only for a client that asked (AD or DO), from one cached answer;
#     CD is echoed, in forwarded answers and in nxdns's own replies;
#   - version.bind CH TXT, other classes, meta-types (TKEY, TSIG, MAILA)
#     and a query with TC set are answered locally (REFUSED / FORMERR) and
#     never reach the upstream (its query counter).
# "Reaches the upstream" is read from the fixture's counters.
source "$(dirname "$0")/lib.sh"
require_program kdig "Debian: knot-dnsutils"

ADDR=$(pick_loopback)
PORT=5300
make_pki "$WORK/pki" dot.test
start_fixture iso "$WORK/pki" --norec-empty --answer-cookie --nsid upstream-ns --ede 0 --ad-when-asked
dot_config "$WORK/iso.yaml" "$ADDR" "$PORT" "$FIX_PORT_iso" "$WORK/pki"
start_daemon "$WORK/iso.yaml" "$ADDR" "$PORT"

d() { dig @"$ADDR" -p "$PORT" +tries=1 +time=3 "$@" 2>&1 || true; }
fixture() { stat "$WORK/iso.stats" "$1"; }
# The fixture itself, asked directly, does answer RD=0 empty and send
# COOKIE, NSID and AD back: otherwise the checks below would prove nothing.
direct=$(kdig @127.0.0.1 -p "$FIX_PORT_iso" +tls +retry=0 +time=3 +norec +cookie +nsid +adflag direct.iso.test 2>&1 || true)
grep -q "NOERROR" <<<"$direct" || fail "the fixture did not answer over TLS: $direct"
grep -q "192.0.2.1" <<<"$direct" && fail "the fixture answered RD=0 with the record: the RD check would be vacuous: $direct"
for what in COOKIE NSID; do
  grep -q "$what:" <<<"$direct" || fail "the fixture sent no $what: the check below would be vacuous: $direct"
done
grep -Eiq "flags:.* ad" <<<"$direct" || fail "the fixture did not set AD: $direct"
# Counters from here on count what came through nxdns only.
declare -A base
for key in rd_clear_queries cookie_queries nsid_queries client_option_queries; do base[$key]=$(fixture "$key"); done
through_nxdns() { echo $(($(fixture "$1") - base[$1])); }
status_of() { sed -n 's/.*status: \([A-Z]*\),.*/\1/p' <<<"$1" | head -n1; }
flags_of() { sed -n 's/^;; flags: \([a-z ]*\);.*/\1/p' <<<"$1" | head -n1; }
has_flag() { [[ " $(flags_of "$2") " == *" $1 "* ]]; }

# ---- 1. RD=0 does not poison RD=1 ----------------------------------------------------
out=$(d +norec +noadflag rd.iso.test)
[ "$(status_of "$out")" = NOERROR ] || fail "dig +norec: $out"
grep -q "192.0.2.1" <<<"$out" || fail "dig +norec: the upstream was asked without RD (empty answer): $out"
has_flag rd "$out" && fail "dig +norec: the reply sets RD, the query did not: $out"
out=$(d +noadflag rd.iso.test)
grep -q "192.0.2.1" <<<"$out" || fail "a plain query after dig +norec got the non-recursive answer: $out"
has_flag rd "$out" || fail "a plain query: RD not echoed: $out"
[ "$(through_nxdns rd_clear_queries)" = 0 ] || fail "a query with RD clear reached the upstream ($(through_nxdns rd_clear_queries))"
pass "dig +norec then a plain query: both answered in full, each with its own RD; the upstream saw RD set only"

# ---- 2. COOKIE and NSID are hop-by-hop; Extended DNS Errors are not ----------------
out=$(d +cookie=0102030405060708 cookie.iso.test)
[ "$(status_of "$out")" = NOERROR ] || fail "dig +cookie: $out"
grep -q "^; COOKIE:" <<<"$out" && fail "a client got a COOKIE back: $out"
grep -q "EDE: 0" <<<"$out" || fail "the upstream's Extended DNS Error did not reach the client: $out"
out=$(d +cookie=a1a2a3a4a5a6a7a8 cookie.iso.test)  # another client, answered from the cache
grep -q "192.0.2.1" <<<"$out" || fail "second cookie client: $out"
grep -q "^; COOKIE:" <<<"$out" && fail "another client's (or the upstream's) COOKIE was replayed: $out"
grep -q "EDE: 0" <<<"$out" || fail "the Extended DNS Error is missing from the cached answer: $out"
[ "$(through_nxdns cookie_queries)" = 0 ] || fail "a client's COOKIE reached the upstream ($(through_nxdns cookie_queries) queries)"

out=$(d +nsid nsid.iso.test)
[ "$(status_of "$out")" = NOERROR ] || fail "dig +nsid: $out"
grep -q "^; NSID:" <<<"$out" && fail "an NSID was relayed: $out"
out=$(d +nocookie nsid.iso.test)  # a client that never asked, from the cache
grep -q "^; NSID:" <<<"$out" && fail "an NSID was replayed to a client that never asked: $out"
[ "$(through_nxdns nsid_queries)" = 0 ] || fail "an NSID request reached the upstream"
out=$(d +ednsopt=65001:abcd +subnet=192.0.2.0/24 +padding=468 other.iso.test)
[ "$(status_of "$out")" = NOERROR ] || fail "dig +ednsopt: $out"
[ "$(through_nxdns client_option_queries)" = 0 ] || fail "$(through_nxdns client_option_queries) queries carried a client's EDNS option upstream"
pass "COOKIE, NSID, Client Subnet and unknown options never reached the upstream; no COOKIE or NSID came back; EDE did, fresh and cached"

# ---- 3. AD for those who ask; CD echoed ------------------------------------------------
out=$(d +adflag ad.iso.test)
has_flag ad "$out" || fail "dig +adflag: the validated answer lost AD: $out"
out=$(d +noadflag ad.iso.test)  # the same cached answer
has_flag ad "$out" && fail "a client that set neither AD nor DO got AD (cached): $out"
out=$(d +noadflag fresh-ad.iso.test)
has_flag ad "$out" && fail "a client that set neither AD nor DO got AD (fresh): $out"
out=$(d +noadflag +dnssec fresh-ad.iso.test)
has_flag ad "$out" || fail "a DO client did not get AD: $out"
out=$(d +cd cd.iso.test)
has_flag cd "$out" || fail "dig +cd: CD not echoed in a forwarded answer: $out"
out=$(d +cd cd.iso.test)
has_flag cd "$out" || fail "dig +cd: CD not echoed in a cached answer: $out"
pass "AD only for clients that set AD or DO, from one cached answer; CD echoed"

# ---- 4. answered locally, never forwarded ----------------------------------------------
before=$(fixture queries)
for i in 1 2 3; do
  out=$(d version.bind CH TXT)
  [ "$(status_of "$out")" = REFUSED ] || fail "version.bind CH TXT ($i): want REFUSED: $out"
done
out=$(d +cd hostname.bind CH TXT)
[ "$(status_of "$out")" = REFUSED ] || fail "hostname.bind CH TXT: $out"
has_flag cd "$out" || fail "our own REFUSED does not echo CD: $out"
out=$(d meta.iso.test HS A)
[ "$(status_of "$out")" = REFUSED ] || fail "class HS: want REFUSED: $out"
for t in TKEY TSIG MAILA TYPE200; do
  out=$(d +tcp meta.iso.test "$t")
  [ "$(status_of "$out")" = FORMERR ] || fail "$t: want FORMERR: $out"
done
tc_rcode=$(python3 - "$ADDR" "$PORT" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
name = b"".join(bytes([len(l)]) + l for l in b"tc.iso.test".split(b".")) + b"\0"
s.sendto(struct.pack(">HHHHHH", 0x7C7C, 0x0310, 1, 0, 0, 0) + name + struct.pack(">HH", 1, 1), (sys.argv[1], int(sys.argv[2])))
d = s.recv(4096)
flags = struct.unpack(">H", d[2:4])[0]
print("%d tc=%d cd=%d" % (flags & 15, (flags >> 9) & 1, (flags >> 4) & 1) if d[:2] == b"\x7c\x7c" else "wrong-id")
PY
)
[ "$tc_rcode" = "1 tc=0 cd=1" ] || fail "a query with TC set: want FORMERR, no TC, CD echoed; got '$tc_rcode'"
after=$(fixture queries)
[ "$after" = "$before" ] || fail "locally answered queries reached the upstream ($before -> $after)"
pass "CH/HS classes REFUSED, meta-types FORMERR, a TC query FORMERR: none reached the upstream ($before -> $after)"
stop_daemon
echo "client_isolation: all passed"
