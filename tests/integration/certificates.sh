#!/usr/bin/env bash
# Certificate failures through the real daemon, loopback only. For each bad
# certificate the test PKI can make
#   expired, not-yet-valid, wrong-name (SAN wrong.invalid), untrusted (leaf
#   signed by a CA that is not the configured ca_file)
# the client gets SERVFAIL at once (no waiting for a budget), the fixture
# sees no completed handshake, and the daemon log says why, naming the
# upstream and the failed check. A second query is refused the same way
# without a second warning (one warn per distinct problem). The `ok`
# variant is the control: the same setup answers NOERROR.
# (Verification cannot be switched off: tls_config.cpp sets
# MBEDTLS_SSL_VERIFY_REQUIRED unconditionally; there is no option for it.)
source "$(dirname "$0")/lib.sh"
emulation_factor "time limits"

ADDR=$(pick_loopback)
PORT=5300
export ATTEMPT_MS=1500 TOTAL_MS=3000

check_variant() {  # check_variant VARIANT EXPECTED_RCODE [LOG_PATTERN]
  local variant=$1 want=$2 pattern=${3:-}
  local name=${variant//-/_}
  make_pki "$WORK/pki-$name" dot.test "$variant"
  start_fixture "$name" "$WORK/pki-$name"
  local port_var="FIX_PORT_$name"
  local url="tls://127.0.0.1:${!port_var}"
  dot_config "$WORK/$name.yaml" "$ADDR" "$PORT" "${!port_var}" "$WORK/pki-$name"
  start_daemon "$WORK/$name.yaml" "$ADDR" "$PORT"
  local t0 t1 st st2
  t0=$(now_ms)
  st=$(dig_status "$ADDR" "$PORT" "first.$name.cert.test" +tries=1 +time=5)
  t1=$(now_ms)
  st2=$(dig_status "$ADDR" "$PORT" "second.$name.cert.test" +tries=1 +time=5)
  kill -0 "$DAEMON_PID" || fail "$variant: daemon died"
  stop_daemon
  [ "$st" = "$want" ] || fail "$variant: first query got '$st', want $want"
  [ "$st2" = "$want" ] || fail "$variant: second query got '$st2', want $want"
  local stats="$WORK/$name.stats"
  if [ "$want" = NOERROR ]; then
    [ "$(stat "$stats" handshakes_ok)" -ge 1 ] || fail "$variant: no handshake completed ($(cat "$stats"))"
    pass "control ($variant certificate): NOERROR in $((t1 - t0)) ms"
    return
  fi
  [ $((t1 - t0)) -le $((500 * T)) ] || fail "$variant: SERVFAIL took $((t1 - t0)) ms; a refused certificate is final at once"
  [ "$(stat "$stats" handshakes_ok)" = 0 ] || fail "$variant: the daemon completed a handshake with a bad certificate ($(cat "$stats"))"
  [ "$(stat "$stats" handshakes_failed)" -ge 1 ] || fail "$variant: the fixture saw no failed handshake ($(cat "$stats"))"
  local line
  line=$(grep -m1 "dial failed: certificate" "$WORK/daemon.log" || true)
  [ -n "$line" ] || fail "$variant: no certificate failure in the daemon log: $(cat "$WORK/daemon.log")"
  grep -qF "$url" <<<"$line" || fail "$variant: the log line does not name the upstream $url: $line"
  grep -qiE "$pattern" <<<"$line" || fail "$variant: the log line does not say '$pattern': $line"
  local warns
  warns=$(grep -c "dial failed: certificate" "$WORK/daemon.log" || true)
  [ "$warns" = 1 ] || fail "$variant: $warns certificate warnings for one problem, want 1"
  pass "$variant: SERVFAIL in $((t1 - t0)) ms, no handshake; log: ${line#* warn  }"
}

check_variant ok NOERROR
check_variant expired SERVFAIL "certificate expired"
check_variant not-yet-valid SERVFAIL "not yet valid"
check_variant wrong-name SERVFAIL "name mismatch \(expected dot\.test\)"
check_variant untrusted SERVFAIL "not trusted by .*ca\.pem"
echo "certificates: all passed"
