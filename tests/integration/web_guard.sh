#!/usr/bin/env bash
# The HTTP surface cannot be driven from a web page (the real daemon, curl,
# loopback only):
#  1. a foreign Host (a page that rebound its own name to this address) is
#     421 on every path, the JSON and the status page included; the
#     surface's own names are served; HTTP/1.0 without Host is served,
#     HTTP/1.1 without Host is 400;
#  2. a simple cross-origin POST (text/plain, foreign Origin, no
#     X-Nxdns-Request) is 403 and flushes nothing; with the header but a
#     foreign Origin, 403 too; a CORS preflight is granted nothing; a reload
#     with any of these is refused and never runs (the daemon log says so);
#  3. `nxdns cache flush` and `nxdns reload` still work, and so does the
#     status page's own origin;
#  4. http.allowed_hosts adds a name, and a reload removes it in place.
# Every "nothing happened" is read from the daemon: nxdns_cache_entries,
# nxdns_cache_flushed_total, the fixture's query counter and the log's
# reload lines.
source "$(dirname "$0")/lib.sh"
require_program curl "Debian: curl"

ADDR=$(pick_loopback)
PORT=5300
HTTP_PORT=$((20000 + RANDOM % 20000))
HTTP="$ADDR:$HTTP_PORT"
make_pki "$WORK/pki" dot.test
start_fixture up "$WORK/pki"

write_config() {
  cat >"$WORK/nxdns.yaml" <<YAML
listen:
  - "$ADDR:$PORT"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "tls://127.0.0.1:$FIX_PORT_up"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
http:
  listen: "$HTTP"
$1
YAML
}
write_config '  allowed_hosts: ["nxdns.home.arpa"]'
start_daemon "$WORK/nxdns.yaml" "$ADDR" "$PORT"

metric() { curl -s --max-time 3 "http://$HTTP/metrics" | sed -n "s/^$1 \([0-9]*\)$/\1/p"; }
# code [curl args...]: the HTTP status alone.
code() { curl -s --max-time 5 -o "$WORK/body" -w '%{http_code}' "$@"; }
reloads() { grep -c 'reload (nxdns reload)' "$WORK/daemon.log" || true; }
q() { dig @"$ADDR" -p "$PORT" +tries=1 +time=5 "$@"; }

# ---- 1. Host -----------------------------------------------------------------
for path in / /summary /api/health /api/diagnostics /api/history /metrics /page.js /nope; do
  c=$(code -H "Host: rebind.example:$HTTP_PORT" "http://$HTTP$path")
  [ "$c" = 421 ] || fail "GET $path with a foreign Host: HTTP $c, want 421"
  if grep -q '"status"\|nxdns_\|<html' "$WORK/body"; then fail "GET $path with a foreign Host leaked: $(head -c 200 "$WORK/body")"; fi
done
for host in "$HTTP" "$ADDR" "$ADDR:9999" "localhost:$HTTP_PORT" "nxdns.home.arpa:$HTTP_PORT"; do
  c=$(code -H "Host: $host" "http://$HTTP/api/health")
  [ "$c" = 200 ] || fail "GET /api/health with Host $host: HTTP $c, want 200"
done
c=$(code -H "Host: $ADDR.rebind.example" "http://$HTTP/")
[ "$c" = 421 ] || fail "a name that starts with the address: HTTP $c, want 421"
exec 3<>"/dev/tcp/$ADDR/$HTTP_PORT"
printf 'GET /api/health HTTP/1.0\r\n\r\n' >&3
timeout 5 cat <&3 >"$WORK/http10.raw" || true
exec 3<&-
grep -q '^HTTP/1\.[01] 200' "$WORK/http10.raw" || fail "HTTP/1.0 without Host: $(head -n1 "$WORK/http10.raw")"
exec 3<>"/dev/tcp/$ADDR/$HTTP_PORT"
printf 'GET /api/health HTTP/1.1\r\nConnection: close\r\n\r\n' >&3
timeout 5 cat <&3 >"$WORK/http11.raw" || true
exec 3<&-
grep -q '^HTTP/1\.1 400' "$WORK/http11.raw" || fail "HTTP/1.1 without Host: $(head -n1 "$WORK/http11.raw")"
pass "foreign Host: 421 on 8 paths, nothing leaked; own names served (any port); HTTP/1.0 without Host 200, HTTP/1.1 400"

# ---- 2. POST from a web page ------------------------------------------------
q guard.cache.test A >/dev/null
[ "$(metric nxdns_cache_entries)" = 1 ] || fail "setup: nxdns_cache_entries $(metric nxdns_cache_entries), want 1"
c=$(code -X POST -H 'Content-Type: text/plain' -H 'Origin: http://rebind.example' --data 'x' "http://$HTTP/api/cache/flush")
[ "$c" = 403 ] || fail "simple cross-origin POST /api/cache/flush: HTTP $c, want 403"
c=$(code -X POST -H 'Content-Type: text/plain' --data 'x' "http://$HTTP/api/cache/flush")
[ "$c" = 403 ] || fail "text/plain POST without the header: HTTP $c, want 403"
c=$(code -X POST -H 'X-Nxdns-Request: 1' -H 'Origin: http://rebind.example' "http://$HTTP/api/cache/flush")
[ "$c" = 403 ] || fail "POST with the header from a foreign Origin: HTTP $c, want 403"
c=$(code -X POST -H 'X-Nxdns-Request: 1' -H "Host: rebind.example:$HTTP_PORT" "http://$HTTP/api/cache/flush")
[ "$c" = 421 ] || fail "POST with the header to a foreign Host: HTTP $c, want 421"
curl -s --max-time 5 -D "$WORK/preflight.h" -o /dev/null -X OPTIONS -H 'Origin: http://rebind.example' \
  -H 'Access-Control-Request-Method: POST' -H 'Access-Control-Request-Headers: x-nxdns-request' "http://$HTTP/api/cache/flush"
grep -q '^HTTP/1\.[01] 405' "$WORK/preflight.h" || fail "preflight: $(head -n1 "$WORK/preflight.h")"
if grep -qi '^Access-Control-' "$WORK/preflight.h"; then fail "the preflight was granted something: $(cat "$WORK/preflight.h")"; fi
[ "$(metric nxdns_cache_entries)" = 1 ] && [ "$(metric nxdns_cache_flushed_total)" = 0 ] ||
  fail "a refused POST flushed: entries $(metric nxdns_cache_entries), flushed $(metric nxdns_cache_flushed_total)"
before=$(reloads)
for args in "-H Content-Type:text/plain -H Origin:http://rebind.example --data x" "-H X-Nxdns-Request:1 -H Origin:null" \
  "-H X-Nxdns-Request:1 -H Host:rebind.example"; do
  # shellcheck disable=SC2086  # the words of $args are curl arguments
  c=$(code -X POST $args "http://$HTTP/api/reload")
  case $c in 403 | 421) ;; *) fail "POST /api/reload with $args: HTTP $c, want 403 or 421" ;; esac
done
sleep 0.2
[ "$(reloads)" = "$before" ] && ! grep -q 'reload (' "$WORK/daemon.log" || fail "a refused POST reloaded: $(grep 'reload (' "$WORK/daemon.log")"
pass "simple and foreign-origin POSTs 403, foreign Host 421, preflight 405 without CORS: nothing flushed, nothing reloaded"

# ---- 3. the CLI and the page's own origin ------------------------------------
nx cache flush guard.cache.test --http "$HTTP" >"$WORK/flush.out" 2>&1 || fail "nxdns cache flush: $(cat "$WORK/flush.out")"
grep -q '"flushed":1' "$WORK/flush.out" || fail "nxdns cache flush printed: $(cat "$WORK/flush.out")"
[ "$(metric nxdns_cache_entries)" = 0 ] || fail "entries after nxdns cache flush: $(metric nxdns_cache_entries)"
nx cache flush -c "$WORK/nxdns.yaml" >"$WORK/flush-c.out" 2>&1 || fail "nxdns cache flush -c: $(cat "$WORK/flush-c.out")"
c=$(code -X POST -H 'X-Nxdns-Request: 1' -H "Origin: http://$HTTP" "http://$HTTP/api/cache/flush")
[ "$c" = 200 ] || fail "POST from the surface's own origin: HTTP $c: $(cat "$WORK/body")"
nx reload --http "$HTTP" >"$WORK/reload.out" 2>&1 || fail "nxdns reload: $(cat "$WORK/reload.out")"
grep -q '"reloaded":true' "$WORK/reload.out" || fail "nxdns reload printed: $(cat "$WORK/reload.out")"
[ "$(reloads)" = $((before + 1)) ] || fail "nxdns reload did not reach the daemon: $(grep 'reload (' "$WORK/daemon.log")"
pass "nxdns cache flush (--http, -c), nxdns reload and a same-origin POST work"

# ---- 4. http.allowed_hosts applies at reload ---------------------------------
write_config ''
nx reload --http "$HTTP" >"$WORK/reload2.out" 2>&1 || fail "nxdns reload without allowed_hosts: $(cat "$WORK/reload2.out")"
grep -q '"needs_restart":\[\]' "$WORK/reload2.out" || fail "allowed_hosts should apply in place: $(cat "$WORK/reload2.out")"
c=$(code -H "Host: nxdns.home.arpa:$HTTP_PORT" "http://$HTTP/api/health")
[ "$c" = 421 ] || fail "a name removed from http.allowed_hosts by reload: HTTP $c, want 421"
c=$(code "http://$HTTP/api/health")
[ "$c" = 200 ] || fail "the listen address after the reload: HTTP $c"
pass "http.allowed_hosts: the listed name served, then 421 once a reload removed it"

stop_daemon
