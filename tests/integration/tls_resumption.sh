#!/usr/bin/env bash
# TLS session resumption through the real daemon, against
# the loopback fixture with --session-tickets, on whichever mbedTLS line this
# tree is built with (2.28: TLS 1.2 / RFC 5077 tickets; 3.6: TLS 1.3
# NewSessionTicket PSKs, and TLS 1.2 with --tls-max 1.2):
#   - after the fixture closed the idle session, the reconnect resumes: the
#     fixture counts one ticket presented and one resumption, the daemon one
#     full and one resumed handshake;
#   - a fixture refusing every ticket still answers: a full handshake in the
#     same attempt, counted as refused, no failure and no warning;
#   - a ticket is never offered to another upstream: two fixtures with the
#     same CA and name on different ports; after the first dies the second
#     is dialled with no ticket presented.
# Every claim is read from the fixture's and the daemon's counters.
source "$(dirname "$0")/lib.sh"

ADDR=$(pick_loopback)
PORT=5300
HTTP=8053
make_pki "$WORK/pki" dot.test
q() { dig_status "$ADDR" "$PORT" "$1" +tries=1 +time=6; }
scrape() { curl -s --max-time 5 "http://$ADDR:$HTTP/metrics"; }
# metric PREFIX: the value of the first sample line starting with PREFIX.
# (The scrape is read whole first: awk leaving early must not fail curl.)
metric() {
  local text
  text=$(scrape)
  awk -v p="$1" 'index($0, p) == 1 { print $NF; exit }' <<<"$text"
}
wait_http() {
  local i
  for i in $(seq 1 100); do
    curl -s -o /dev/null --max-time 1 "http://$ADDR:$HTTP/api/health" && return 0
    sleep 0.05
  done
  fail "no HTTP surface on $ADDR:$HTTP"
}

# config FILE PORT... : one DoT upstream per port, in priority order.
config() {
  local file=$1 prio=0 p
  shift
  {
    printf 'forward_special_zones: [test]\nlisten:\n  - "%s:%s"\nupstreams:\n' "$ADDR" "$PORT"
    for p in "$@"; do
      printf '  - url: "tls://127.0.0.1:%s"\n    tls_name: "dot.test"\n    ca_file: "%s/ca.pem"\n    priority: %s\n' \
        "$p" "$WORK/pki" "$prio"
      prio=$((prio + 1))
    done
    printf 'budgets:\n  attempt_ms: 2000\n  total_ms: 4000\nhttp:\n  listen: "%s:%s"\nlog:\n  level: info\n' \
      "$ADDR" "$HTTP"
  } >"$file"
}

line=$(nx version 2>/dev/null | grep -i '^mbedtls [0-9.]*' | head -n1 || true)
case "$line" in
  "mbedtls 3."*) versions="1.3 1.2" ;;
  "mbedtls 2."*) versions="1.2" ;;
  *) skip "cannot tell the mbedTLS line from 'nxdns version' ($line)" ;;
esac
echo "mbedTLS line: $line; TLS versions exercised: $versions"

# fixture idle close: the daemon notices the peer close of an idle session
# at once (DESIGN: noticed, not probed), so the next query must dial.
IDLE_MS=300
for v in $versions; do
  key="v${v/./}"
  want_hs_key="tls${v/./}_handshakes"
  # -- 1. resumed after the upstream closed the idle session
  start_fixture "res$key" "$WORK/pki" --session-tickets --idle-close-ms "$IDLE_MS" --tls-max "$v"
  fport="FIX_PORT_res$key"
  config "$WORK/res$key.yaml" "${!fport}"
  start_daemon "$WORK/res$key.yaml" "$ADDR" "$PORT"
  wait_http
  [ "$(q one.res.test)" = NOERROR ] || fail "TLS $v resume: first query"
  sleep $(awk -v m="$IDLE_MS" 'BEGIN { print (m + 500) / 1000 }')
  st="$WORK/res$key.stats"
  [ "$(stat "$st" closes_by_server)" = 1 ] || fail "TLS $v resume: the fixture did not close the idle session"
  [ "$(q two.res.test)" = NOERROR ] || fail "TLS $v resume: query after the idle close"
  sleep 0.2
  [ "$(stat "$st" accepts)" = 2 ] || fail "TLS $v resume: accepts = $(stat "$st" accepts), want 2"
  [ "$(stat "$st" "$want_hs_key")" = 2 ] || fail "TLS $v resume: $want_hs_key = $(stat "$st" "$want_hs_key"), want 2"
  [ "$(stat "$st" tickets_presented)" = 1 ] ||
    fail "TLS $v resume: tickets presented = $(stat "$st" tickets_presented), want 1 (the reconnect)"
  [ "$(stat "$st" resumptions)" = 1 ] || fail "TLS $v resume: fixture resumptions = $(stat "$st" resumptions), want 1"
  full=$(metric 'nxdns_upstream_tls_handshakes_total{upstream="0",url="tls://127.0.0.1:'"${!fport}"'",kind="full"}')
  resumed=$(metric 'nxdns_upstream_tls_handshakes_total{upstream="0",url="tls://127.0.0.1:'"${!fport}"'",kind="resumed"}')
  [ "$full" = 1 ] && [ "$resumed" = 1 ] || fail "TLS $v resume: daemon counts full=$full resumed=$resumed, want 1 and 1"
  hs_count=$(metric 'nxdns_upstream_tls_handshake_seconds_count{upstream="0",url="tls://127.0.0.1:'"${!fport}"'",kind="resumed"}')
  [ "$hs_count" = 1 ] || fail "TLS $v resume: resumed handshake duration count = $hs_count, want 1"
  stop_daemon
  pass "TLS $v: reconnect after the upstream's idle close resumed (fixture: 1 ticket, 1 resumption; daemon: full=1 resumed=1)"

  # -- 2. a fixture that refuses every ticket still answers
  start_fixture "ref$key" "$WORK/pki" --session-tickets --refuse-resumption --idle-close-ms "$IDLE_MS" --tls-max "$v"
  fport="FIX_PORT_ref$key"
  config "$WORK/ref$key.yaml" "${!fport}"
  start_daemon "$WORK/ref$key.yaml" "$ADDR" "$PORT"
  wait_http
  [ "$(q one.ref.test)" = NOERROR ] || fail "TLS $v refuse: first query"
  sleep $(awk -v m="$IDLE_MS" 'BEGIN { print (m + 500) / 1000 }')
  [ "$(q two.ref.test)" = NOERROR ] || fail "TLS $v refuse: a refused resumption must fall back to a full handshake"
  sleep 0.2
  st="$WORK/ref$key.stats"
  [ "$(stat "$st" accepts)" = 2 ] || fail "TLS $v refuse: accepts = $(stat "$st" accepts), want 2 (same attempt, no retry)"
  [ "$(stat "$st" resumptions_refused)" = 1 ] || fail "TLS $v refuse: fixture refused $(stat "$st" resumptions_refused), want 1"
  [ "$(stat "$st" resumptions)" = 0 ] || fail "TLS $v refuse: fixture resumed $(stat "$st" resumptions), want 0"
  [ "$(stat "$st" handshakes_failed)" = 0 ] || fail "TLS $v refuse: $(stat "$st" handshakes_failed) failed handshakes"
  lbl='{upstream="0",url="tls://127.0.0.1:'"${!fport}"'"'
  refused=$(metric "nxdns_upstream_tls_resumptions_refused_total$lbl}")
  full=$(metric "nxdns_upstream_tls_handshakes_total$lbl,kind=\"full\"}")
  fails=$(metric "nxdns_upstream_consecutive_failures$lbl}")
  [ "$refused" = 1 ] && [ "$full" = 2 ] || fail "TLS $v refuse: daemon counts refused=$refused full=$full, want 1 and 2"
  [ "$fails" = 0 ] || fail "TLS $v refuse: consecutive failures $fails: a refused ticket is not a failure"
  if grep -qE ' (warn|error) ' "$WORK/daemon.log"; then fail "TLS $v refuse: warning logged: $(grep -E ' (warn|error) ' "$WORK/daemon.log")"; fi
  stop_daemon
  pass "TLS $v: refused resumption answered by a full handshake in the same attempt (refused=1, no failure)"

  # -- 3. never offered to another upstream
  start_fixture "a$key" "$WORK/pki" --session-tickets --tls-max "$v"
  start_fixture "b$key" "$WORK/pki" --session-tickets --tls-max "$v"
  pa="FIX_PORT_a$key"
  pb="FIX_PORT_b$key"
  config "$WORK/two$key.yaml" "${!pa}" "${!pb}"
  start_daemon "$WORK/two$key.yaml" "$ADDR" "$PORT"
  wait_http
  [ "$(q one.two.test)" = NOERROR ] || fail "TLS $v two upstreams: first query"
  [ "$(stat "$WORK/a$key.stats" handshakes_ok)" = 1 ] || fail "TLS $v two upstreams: the first query did not go to A"
  # A goes away: its listener closes and its session dies with it.
  a_pid=$(pgrep -f -- "--port-file $WORK/a$key.port" | head -n1)
  kill "$a_pid"
  sleep 0.3
  [ "$(q two.two.test)" = NOERROR ] || fail "TLS $v two upstreams: failover to B"
  sleep 0.2
  sb="$WORK/b$key.stats"
  [ "$(stat "$sb" handshakes_ok)" -ge 1 ] || fail "TLS $v two upstreams: B never completed a handshake"
  [ "$(stat "$sb" tickets_presented)" = 0 ] ||
    fail "TLS $v two upstreams: B was offered $(stat "$sb" tickets_presented) ticket(s) (A's ticket leaked)"
  stop_daemon
  pass "TLS $v: A's ticket never offered to B (same CA and name, other port): B saw 0 tickets"
done
