#!/usr/bin/env bash
# New trust anchors written over an unchanged ca_file path, picked up by a
# reload, through the real daemon, loopback only. For a DoT and a DoH
# upstream in turn (one upstream per daemon, so no failover hides a
# refusal), whose server presents a certificate from CA "new":
#   - the ca_file holds CA "old": the query is refused (SERVFAIL, a
#     certificate failure in the log);
#   - CA "new" is written over the same path, SIGHUP: the reload line names
#     the upstream's new trust anchors, and the next query is answered;
#   - CA "old" is written back, SIGHUP: the next query is refused again, so
#     the session verified by "new" was not kept for new queries (it was
#     drained), and the server sees every connection closed.
# The ca_file's path, and every other key, stays the same throughout: only
# its contents change.
source "$(dirname "$0")/lib.sh"
emulation_factor "waits"

ADDR=$(pick_loopback)
PORT=5300
make_pki "$WORK/dot-old" dot.test
make_pki "$WORK/dot-new" dot.test
make_pki "$WORK/doh-old" doh.test
make_pki "$WORK/doh-new" doh.test

# reloaded N: until the daemon log holds N "applied" lines.
reloaded() {
  local i
  for i in $(seq 1 $((100 * T))); do
    [ "$(grep -c 'reload (SIGHUP): applied' "$WORK/daemon.log" || true)" -ge "$1" ] && return 0
    sleep 0.05
  done
  fail "reload $1 not applied: $(tail -3 "$WORK/daemon.log")"
}

# write_config KIND PORT ANCHORS: one upstream of KIND (dot|doh), HTTP off.
write_config() {
  local url name=dot.test
  if [ "$1" = dot ]; then url="tls://127.0.0.1:$2"; else url="https://127.0.0.1:$2/dns-query"; name=doh.test; fi
  cat >"$WORK/$1.yaml" <<YAML
listen:
  - "$ADDR:$PORT"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "$url"
    tls_name: "$name"
    ca_file: "$3"
budgets:
  attempt_ms: $((1500 * T))
  total_ms: $((3000 * T))
http:
  enabled: false
YAML
}

# check_kind KIND PORT STATS: the three steps against one upstream.
check_kind() {
  local kind=$1 port=$2 stats=$3
  local anchors="$WORK/$kind-anchors.pem" st line
  cat "$WORK/$kind-old/ca.pem" >"$anchors"
  write_config "$kind" "$port" "$anchors"
  start_daemon "$WORK/$kind.yaml" "$ADDR" "$PORT"

  st=$(dig_status "$ADDR" "$PORT" "old-1.$kind.anchors.test" +tries=1 +time=5)
  [ "$st" = SERVFAIL ] || fail "$kind: with the old CA the query got '$st', want SERVFAIL"
  grep -q "upstream 0 (.*): failing: certificate" "$WORK/daemon.log" ||
    fail "$kind: no certificate failure in the log: $(tail -3 "$WORK/daemon.log")"

  # Written in place: same path, same inode, other certificates.
  cat "$WORK/$kind-new/ca.pem" >"$anchors"
  kill -HUP "$DAEMON_PID"
  reloaded 1
  line=$(grep 'reload (SIGHUP): applied' "$WORK/daemon.log" | tail -1)
  case "$line" in
    *"1 drained, 1 started"*"new trust anchors (ca_file contents changed) for upstream(s) 0"*) ;;
    *) fail "$kind: the reload line does not name the new trust anchors: $line" ;;
  esac
  st=$(dig_status "$ADDR" "$PORT" "new-1.$kind.anchors.test" +tries=1 +time=5)
  [ "$st" = NOERROR ] || fail "$kind: after the new CA was written and reloaded the query got '$st', want NOERROR"
  [ "$(stat "$stats" answers)" -ge 1 ] || fail "$kind: the server answered nothing ($(cat "$stats"))"
  pass "$kind: new CA written over $anchors, SIGHUP: answered (${line#*applied })"

  cat "$WORK/$kind-old/ca.pem" >"$anchors"
  kill -HUP "$DAEMON_PID"
  reloaded 2
  st=$(dig_status "$ADDR" "$PORT" "old-2.$kind.anchors.test" +tries=1 +time=5)
  [ "$st" = SERVFAIL ] || fail "$kind: the old CA written back, reloaded: the query got '$st', want SERVFAIL (a session verified by the new CA still served)"
  local i
  for i in $(seq 1 $((100 * T))); do
    [ "$(stat "$stats" active_connections)" = 0 ] && break
    sleep 0.05
  done
  [ "$(stat "$stats" active_connections)" = 0 ] || fail "$kind: $(stat "$stats" active_connections) connection(s) verified by the replaced CA still open"
  stop_daemon
  pass "$kind: old CA written back, SIGHUP: refused again, the connection verified by the replaced CA closed"
}

start_fixture dot "$WORK/dot-new"
check_kind dot "$FIX_PORT_dot" "$WORK/dot.stats"

need_fixture nxdns-fixture-doh
fx_exec nxdns-fixture-doh --listen 127.0.0.1:0 --port-file "$WORK/doh.port" --stats-file "$WORK/doh.stats" \
  --cert "$WORK/doh-new/server.pem" --key "$WORK/doh-new/server.key" >"$WORK/doh.log" 2>&1 &
PIDS+=("$!")
wait_file "$WORK/doh.port" || fail "DoH fixture did not start"
check_kind doh "$(cat "$WORK/doh.port")" "$WORK/doh.stats"
echo "reload_trust_anchors: all passed"
