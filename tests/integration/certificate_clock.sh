#!/usr/bin/env bash
# A certificate rejected because this host's clock is behind its notBefore
# says so (the no-RTC Pi before NTP): loopback only.
# For DoT and DoH, an upstream whose leaf is valid from now+30d:
#   - the client gets SERVFAIL;
#   - the daemon log line names the cause certificate_clock_behind and says
#     the clock is behind ("is the clock set?");
#   - /api/health shows the upstream with "certificate_clock_behind": true
#     and "last_failure": "certificate_clock_behind";
#   - /metrics has nxdns_upstream_certificate_clock_behind 1 and the attempt
#     counted under outcome="certificate_clock_behind".
# Control: an EXPIRED certificate is a plain `certificate` failure (0, false):
# setting the clock forward would not cure it.
# (That the retry follows a clock step is pinned by the unit tests: stepping
# this machine's clock is not something a test may do.)
source "$(dirname "$0")/lib.sh"

ADDR=$(pick_loopback)
PORT=5300
HTTP="$ADDR:8053"
command -v curl >/dev/null || { echo "SKIPPED: curl not installed"; exit 77; }

with_http() {  # with_http FILE: the web surface on $HTTP instead of off
  sed -i "s|^  enabled: false|  enabled: true\n  listen: \"$HTTP\"|" "$1"
}

wait_http() {
  local i
  for i in $(seq 1 100); do
    curl -s -o /dev/null --max-time 1 "http://$HTTP/api/health" && return 0
    sleep 0.05
  done
  fail "no web surface on $HTTP"
}

# check NAME KIND CLOCK_BEHIND(1|0): after one SERVFAIL, the log, health and
# metrics agree on whether the clock is to blame.
check() {
  local name=$1 kind=$2 behind=$3
  local st
  st=$(dig_status "$ADDR" "$PORT" "first.$name.clock.test" +tries=1 +time=5)
  [ "$st" = SERVFAIL ] || fail "$name: got '$st', want SERVFAIL"
  local cause=certificate json=false
  [ "$behind" = 1 ] && cause=certificate_clock_behind json=true
  curl -s --max-time 5 "http://$HTTP/api/health" >"$WORK/$name.health.json"
  curl -s --max-time 5 "http://$HTTP/metrics" >"$WORK/$name.prom"
  stop_daemon
  local line
  line=$(grep -m1 "failed: certificate" "$WORK/daemon.log" || true)
  [ -n "$line" ] || fail "$name: no certificate failure in the log: $(cat "$WORK/daemon.log")"
  grep -q "$cause:" <<<"$line" || fail "$name ($kind): the log line does not name $cause: $line"
  if [ "$behind" = 1 ]; then
    grep -q "clock is behind its notBefore (is the clock set?" <<<"$line" ||
      fail "$name ($kind): the log line does not say the clock is behind: $line"
  else
    ! grep -q "is behind its notBefore" <<<"$line" || fail "$name ($kind): blames the clock: $line"
  fi
  python3 - "$WORK/$name.health.json" "$cause" "$json" <<'PY' || fail "$name ($kind): /api/health: $(cat "$WORK/$name.health.json")"
import json, sys
u = json.load(open(sys.argv[1]))["upstreams"][0]
want_cause, want_flag = sys.argv[2], sys.argv[3] == "true"
assert u["last_failure"] == want_cause, u
assert u["certificate_clock_behind"] is want_flag, u
PY
  grep -qE "^nxdns_upstream_certificate_clock_behind\{[^}]*\} $behind\$" "$WORK/$name.prom" ||
    fail "$name ($kind): nxdns_upstream_certificate_clock_behind is not $behind: $(grep clock_behind "$WORK/$name.prom")"
  grep -qE "^nxdns_upstream_attempts_total\{[^}]*outcome=\"$cause\"\} [1-9]" "$WORK/$name.prom" ||
    fail "$name ($kind): no attempt counted as $cause: $(grep attempts_total "$WORK/$name.prom")"
  pass "$kind, $name certificate: SERVFAIL; log, /api/health and /metrics say $cause; log: ${line#* warn  }"
}

for variant in not-yet-valid expired; do
  name=${variant//-/_}
  behind=0
  [ "$variant" = not-yet-valid ] && behind=1

  # DoT
  make_pki "$WORK/pki-$name" dot.test "$variant"
  start_fixture "$name" "$WORK/pki-$name"
  port_var="FIX_PORT_$name"
  dot_config "$WORK/$name.yaml" "$ADDR" "$PORT" "${!port_var}" "$WORK/pki-$name"
  with_http "$WORK/$name.yaml"
  start_daemon "$WORK/$name.yaml" "$ADDR" "$PORT"
  wait_http
  check "$name" DoT "$behind"

  # DoH: the same certificate from the DoH fixture; curl (OpenSSL) reports
  # which check failed through CURLINFO_SSL_VERIFYRESULT.
  make_pki "$WORK/doh-pki-$name" doh.test "$variant"
  rm -f "$WORK/doh-$name.port"
  fx_exec nxdns-fixture-doh --listen 127.0.0.1:0 --port-file "$WORK/doh-$name.port" \
    --stats-file "$WORK/doh-$name.stats" --cert "$WORK/doh-pki-$name/server.pem" \
    --key "$WORK/doh-pki-$name/server.key" >"$WORK/doh-$name.log" 2>&1 &
  PIDS+=("$!")
  wait_file "$WORK/doh-$name.port" || fail "DoH fixture did not start"
  cat >"$WORK/doh-$name.yaml" <<YAML
listen:
  - "$ADDR:$PORT"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "https://doh.test:$(cat "$WORK/doh-$name.port")/dns-query"
    address: "127.0.0.1"
    ca_file: "$WORK/doh-pki-$name/ca.pem"
budgets:
  attempt_ms: 1500
  total_ms: 3000
http:
  enabled: true
  listen: "$HTTP"
YAML
  start_daemon "$WORK/doh-$name.yaml" "$ADDR" "$PORT"
  wait_http
  check "doh_$name" DoH "$behind"
done
echo "certificate_clock: all passed"
