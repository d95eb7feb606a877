#!/usr/bin/env bash
# Blocklists end to end, on loopback: the real daemon with a DoT upstream
# fixture, a file list and a URL list served by an HTTPS list-server
# fixture whose host name the daemon resolves through its own records.
#   - hosts lines block the exact name, adblock and domain lines the subtree;
#     allow wins; blocked names never reach the upstream; EDE 15;
#   - a client in an unfiltered group is not blocked;
#   - the URL list is fetched at start, asked again with If-None-Match on a
#     reload (304), kept when the server is gone, and blocks after a restart
#     without the server (the copy on disk);
#   - a file list that disappears keeps the table in use; a changed one
#     applies on reload;
#   - nxdns why names the list and line; /metrics counts by list.
. "$(dirname "$0")/lib.sh"
need_fixture nxdns-fixture-list-server
require_program curl "Debian: apt-get install curl"

make_pki "$WORK/pki" dot.test
make_pki "$WORK/lpki" lists.test
start_fixture up "$WORK/pki"
ADDR=$(pick_loopback)
LADDR=$(pick_loopback)
KID=$(pick_loopback)
HTTP="$ADDR:8053"

printf '0.0.0.0 remote-ads.example\n||remote-tracker.example^\n' >"$WORK/remote.txt"
start_list_server() {
  rm -f "$WORK/lists.port"
  fx_exec nxdns-fixture-list-server --listen "$LADDR:${1:-0}" --cert "$WORK/lpki/server.pem" --key "$WORK/lpki/server.key" \
    --body "$WORK/remote.txt" --port-file "$WORK/lists.port" --stats-file "$WORK/lists.stats" >"$WORK/lists.log" 2>&1 &
  LIST_PID=$!
  PIDS+=("$LIST_PID")
  wait_file "$WORK/lists.port" || fail "list server did not start"
  LPORT=$(cat "$WORK/lists.port")
}
start_list_server

cat >"$WORK/local.txt" <<'LIST'
# a household's own list: every format at once
0.0.0.0 exact-ads.example
||ads.example^
tracker.example
@@||ok.ads.example^
||adnet.example^$third-party
LIST
cat >"$WORK/nxdns.yaml" <<YAML
listen:
  - "$ADDR:5300"
forward_special_zones: [test]
upstreams:
  - url: "tls://127.0.0.1:$FIX_PORT_up"
    tls_name: dot.test
    ca_file: "$WORK/pki/ca.pem"
http:
  listen: "$HTTP"
home_router: "off"
records:
  - "lists.test. 60 IN A $LADDR"
blocking:
  lists:
    - file: "$WORK/local.txt"
    - url: "https://lists.test:$LPORT/hosts.txt"
      ca_file: "$WORK/lpki/ca.pem"
  allow: ["fine.tracker.example"]
  groups:
    - clients: ["$KID/32"]
      blocking: false
  state_dir: "$WORK/lists"
YAML

q() { dig @"$ADDR" -p 5300 +tries=1 +time=3 "$@"; }
status_of() { q "$@" | sed -n 's/.*status: \([A-Z]*\),.*/\1/p' | head -n1; }
upstream_queries() { stat "$WORK/up.stats" queries || echo 0; }
health() { curl -fsS "http://$HTTP/api/health"; }
# wait_until PYTHON_EXPR: polls /api/health until the expression over `b`
# (its blocking object) holds (max ~10 s).
wait_until() {
  local i
  for i in $(seq 1 100); do
    if health | python3 -c "import json,sys; b=json.load(sys.stdin)['blocking']; sys.exit(0 if ($1) else 1)" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

start_daemon "$WORK/nxdns.yaml" "$ADDR" 5300
wait_until "any(l['url'] and l['fetched_unix'] for l in b['lists']) and any(l['url'] and l['rules'] > 0 for l in b['lists'])" ||
  fail "the URL list was not fetched and loaded: $(health)"
[ "$(stat "$WORK/lists.stats" requests)" -ge 1 ] || fail "the list server saw no request"

# ---- formats, allow, EDE ------------------------------------------------------
[ "$(status_of sub.exact-ads.example)" = NOERROR ] || fail "a hosts line blocked a name below it"
before=$(upstream_queries)
[ "$(status_of exact-ads.example)" = NXDOMAIN ] || fail "a hosts line did not block its name"
[ "$(status_of x.y.ads.example)" = NXDOMAIN ] || fail "||ads.example^ did not block below it"
[ "$(status_of tracker.example)" = NXDOMAIN ] || fail "a domain line did not block"
[ "$(status_of a.tracker.example)" = NXDOMAIN ] || fail "a domain line did not block below it"
[ "$(status_of remote-ads.example)" = NXDOMAIN ] || fail "the URL list does not block"
[ "$(status_of www.remote-tracker.example)" = NXDOMAIN ] || fail "the URL list's adblock rule does not block"
[ "$(upstream_queries)" = "$before" ] || fail "a blocked name reached the upstream"
q +dnssec x.ads.example | grep -q 'EDE: 15' || fail "no Extended DNS Error 15: $(q +dnssec x.ads.example)"
[ "$(status_of ok.ads.example)" = NOERROR ] || fail "@@ allow rule did not win"
[ "$(status_of fine.tracker.example)" = NOERROR ] || fail "blocking.allow did not win"
[ "$(status_of x.adnet.example)" = NOERROR ] || fail "a \$third-party rule was applied"
pass "hosts (exact), domain and adblock (subtree) rules block; allow wins; EDE 15; upstream untouched"

# ---- groups -------------------------------------------------------------------
[ "$(status_of -b "$KID" x.ads.example)" = NOERROR ] || fail "a client of an unfiltered group was blocked"
[ "$(status_of x.ads.example)" = NXDOMAIN ] || fail "other clients are no longer filtered"
pass "a client in an unfiltered group is not blocked"

# ---- why and metrics ------------------------------------------------------------
nx why --http "$HTTP" x.ads.example >"$WORK/why.out"
grep -q 'route:  blocked' "$WORK/why.out" || fail "why: $(cat "$WORK/why.out")"
grep -q "$WORK/local.txt:3" "$WORK/why.out" || fail "why does not name the list and line: $(cat "$WORK/why.out")"
nx why --http "$HTTP" ok.ads.example | grep -q 'allowed' || fail "why ok.ads.example does not say allowed"
nx why --http "$HTTP" --client "$KID" x.ads.example | grep -q 'route:  upstream' || fail "why --client ignores the group"
curl -fsS "http://$HTTP/metrics" >"$WORK/metrics.txt"
grep -q "^nxdns_blocked_queries_total{list=\"$WORK/local.txt\"} [1-9]" "$WORK/metrics.txt" || fail "no blocked count by list"
grep -q '^nxdns_routed_queries_total{route="blocked"} [1-9]' "$WORK/metrics.txt" || fail "no blocked route count"
pass "nxdns why names list and line, the allow rule and the group; /metrics counts by list"

# ---- refresh: 304, failure keeps the copy ----------------------------------------
builds=$(health | python3 -c 'import json,sys; print(json.load(sys.stdin)["blocking"]["builds"])')
nx reload --http "$HTTP" >/dev/null || fail "reload"
for i in $(seq 1 100); do [ "$(stat "$WORK/lists.stats" not_modified)" -ge 1 ] && break; sleep 0.1; done
[ "$(stat "$WORK/lists.stats" not_modified)" -ge 1 ] || fail "the refresh was not a conditional GET answered 304"
kill "$LIST_PID"
wait "$LIST_PID" 2>/dev/null || true
nx reload --http "$HTTP" >/dev/null || fail "reload"
wait_until "any(l['url'] and l['fetch_failures'] >= 1 for l in b['lists'])" || fail "the failed fetch is not reported: $(health)"
[ "$(status_of remote-ads.example)" = NXDOMAIN ] || fail "a failed fetch dropped the list"
grep -q 'nxdns_blocklist_fetch_failures_total{list="https://lists.test' <(curl -fsS "http://$HTTP/metrics") ||
  fail "no fetch failure series"
pass "refresh: If-None-Match answered 304; a failed fetch keeps the list and is reported"

# ---- a file list that disappears keeps the table; a changed one applies ----------
mv "$WORK/local.txt" "$WORK/local.gone"
printf 'listen: broken\n' >/dev/null
nx reload --http "$HTTP" >"$WORK/reload.out" 2>&1 && fail "a missing list file was accepted: $(cat "$WORK/reload.out")"
[ "$(status_of x.ads.example)" = NXDOMAIN ] || fail "the refused reload dropped the table"
mv "$WORK/local.gone" "$WORK/local.txt"
echo "0.0.0.0 new-ads.example" >>"$WORK/local.txt"
nx reload --http "$HTTP" >/dev/null || fail "reload with the list back"
for i in $(seq 1 100); do [ "$(status_of new-ads.example)" = NXDOMAIN ] && break; sleep 0.1; done
[ "$(status_of new-ads.example)" = NXDOMAIN ] || fail "a changed file list did not apply on reload"
pass "a missing list fails the reload, the table stays; a changed list applies"

# ---- a restart without the list server: the copy blocks -------------------------
stop_daemon
start_daemon "$WORK/nxdns.yaml" "$ADDR" 5300
wait_until "any(l['url'] and l['rules'] > 0 for l in b['lists'])" || fail "the copy on disk was not loaded: $(health)"
[ "$(status_of remote-ads.example)" = NXDOMAIN ] || fail "after a restart without the server the URL list does not block"
pass "after a restart without the list server, the copy on disk blocks"

stop_daemon
echo "blocking: all passed"
