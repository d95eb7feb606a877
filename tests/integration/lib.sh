# Shared helpers for the loopback integration tests. Sourced, not run.
# Everything here talks to 127.0.0.0/8 only.
set -euo pipefail

WORK=$(mktemp -d "${TMPDIR:-/tmp}/nxdns-it.XXXXXX")
PIDS=()
# A test that cannot run must say so, never pass: this exit status is the
# SKIP_RETURN_CODE of every integration test (tests/integration/CMakeLists.txt),
# so ctest lists it as "Skipped" and scripts/test.sh counts it (and fails it
# under CI=true).
NXDNS_SKIP_STATUS=77
SKIPPED_PARTS=()
cleanup() {
  local rc=$? pid
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
  done
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work dir kept: $WORK"; else rm -rf "$WORK"; fi
  # Everything else passed but part of the test could not run: the test as a
  # whole is skipped, not passed (a failure still wins).
  if [ "$rc" = 0 ] && [ "${#SKIPPED_PARTS[@]}" -gt 0 ]; then
    echo "SKIPPED (in part): ${SKIPPED_PARTS[*]}"
    exit "$NXDNS_SKIP_STATUS"
  fi
}
trap cleanup EXIT

# skip WHY: the whole test cannot run here; stop now, reported as skipped.
skip() {
  echo "SKIPPED: $*"
  exit "$NXDNS_SKIP_STATUS"
}
# skip_part WHY: one check cannot run here; the rest runs, and a test that
# otherwise passes ends as skipped, naming what did not run.
skip_part() {
  echo "SKIPPED PART: $*"
  SKIPPED_PARTS+=("[$*]")
}
# require_program NAME WHY: skip the whole test when NAME is not installed.
require_program() { command -v "$1" >/dev/null 2>&1 || skip "$1 not installed (${2:-$1})"; }
# require_nghttpx: sets NGHTTPX to the nghttpx put in front of the DoH
# fixture, or skips. Searched as the CppUTest DoH cases search it
# (tests/upstream/doh_test_support.hpp): PATH, then /usr/sbin and
# /usr/local/sbin, executable files only (bash's `command -v` also returns a
# file it cannot run), so both kinds of test agree on whether it is there.
require_nghttpx() {
  local d IFS=:
  NGHTTPX=
  for d in $PATH /usr/sbin /usr/local/sbin; do
    if [ -n "$d" ] && [ -f "$d/nghttpx" ] && [ -x "$d/nghttpx" ]; then
      NGHTTPX=$d/nghttpx
      return 0
    fi
  done
  skip "nghttpx not found (Debian: apt-get install nghttp2-proxy)"
}

fail() {
  echo "FAIL: $*" >&2
  for f in "$WORK"/*.log; do
    [ -f "$f" ] || continue
    echo "---- $f (last 30 lines)" >&2
    tail -n 30 "$f" >&2
  done
  exit 1
}
pass() { echo "ok: $*"; }

# A loopback address of our own (127.x.y.z) so parallel tests never collide
# on ports, while every packet stays on this machine.
pick_loopback() {
  echo "127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))"
}

now_ms() { date +%s%3N; }

# wait_for_dns ADDR PORT: until the server answers anything (max ~5 s).
wait_for_dns() {
  local i
  for i in $(seq 1 50); do
    if dig @"$1" -p "$2" +tries=1 +time=1 +short ready.test >/dev/null 2>&1; then return 0; fi
    if dig @"$1" -p "$2" +tries=1 +time=1 ready.test 2>/dev/null | grep -q 'status:'; then return 0; fi
    sleep 0.1
  done
  return 1
}

# dig_status ADDR PORT NAME [dig options...]: prints the rcode word.
dig_status() {
  local addr=$1 port=$2 name=$3
  shift 3
  dig @"$addr" -p "$port" "$@" "$name" 2>&1 | sed -n 's/.*status: \([A-Z]*\),.*/\1/p' | head -n1
}

# ---- programs -------------------------------------------------------------
# Scripts take: $1 = path to nxdns, $2 = folder of the fixture programs.
# Under cross-compilation NXDNS_EMULATOR (e.g. qemu-aarch64-static) runs them.
NXDNS=${NXDNS:-${1:?usage: $0 path/to/nxdns [fixture-dir]}}
FIXTURES=${FIXTURES:-${2:-$(cd "$(dirname "$NXDNS")/../../tests/fixtures" 2>/dev/null && pwd)}}
nx() { ${NXDNS_EMULATOR:+$NXDNS_EMULATOR} "$NXDNS" "$@"; }
fx() { local prog=$1; shift; ${NXDNS_EMULATOR:+$NXDNS_EMULATOR} "$FIXTURES/$prog" "$@"; }
# For background jobs: `nx_exec ... &` makes $! the program itself (a plain
# function would leave a bash subshell there, and signals would hit bash).
nx_exec() { exec ${NXDNS_EMULATOR:+$NXDNS_EMULATOR} "$NXDNS" "$@"; }
fx_exec() { local prog=$1; shift; exec ${NXDNS_EMULATOR:+$NXDNS_EMULATOR} "$FIXTURES/$prog" "$@"; }
# need_fixture PROG: skip (not fail) when a fixture program was not built.
need_fixture() { [ -x "$FIXTURES/$1" ] || skip "fixture program $1 not built in ${FIXTURES:-?}"; }
require_program dig "Debian: apt-get install bind9-dnsutils"
emulated() { [ "${NXDNS_EMULATED:-0}" = 1 ]; }
# How many times longer a script's time limits and waits may be under
# emulation: qemu-user runs the daemon and the fixtures several times slower
# than native code. The budgets are the daemon's and stay as configured.
EMULATION_FACTOR=4
# emulation_factor WHAT [MORE]: sets T, the factor this script multiplies
# its time limits and waits by (1 natively, EMULATION_FACTOR emulated), and
# when emulated says so: "NOTE: emulated run (qemu): WHAT xT[MORE]".
emulation_factor() {
  T=1
  if emulated; then
    T=$EMULATION_FACTOR
    echo "NOTE: emulated run (qemu): $1 x$T${2:-}"
  fi
}
# An ASan/UBSan build: correct but several times slower per allocation, so
# timing ratios and RSS bounds are reported, not enforced (scripts say so).
sanitized() { grep -qa __asan_init "$NXDNS"; }
# GATE_MODE: the `nxdns burst --gate` mode for this build. Under emulation
# or in a sanitizer build the gates measure the emulator or the
# instrumentation, so they are reported, not enforced (--report-only; the
# output says so); SERVFAIL and timeouts still fail.
set_gate_mode() {
  GATE_MODE=()
  if emulated; then GATE_MODE=(--report-only); echo "NOTE: emulated run (qemu): gates reported, not enforced; SERVFAIL/timeouts still fail"; fi
  if sanitized; then GATE_MODE=(--report-only); echo "NOTE: sanitizer build: gates reported, not enforced; SERVFAIL/timeouts still fail"; fi
}
# maps_libcurl PID: the process has libcurl mapped. nxdns opens it only for
# DoH upstreams (src/upstream/curl_library.hpp).
maps_libcurl() { grep -q '/libcurl[^/]*\.so' "/proc/$1/maps"; }

# make_pki DIR NAME [VARIANT]
make_pki() { need_fixture nxdns-test-pki; mkdir -p "$1"; fx nxdns-test-pki --out "$1" --name "$2" ${3:+--variant "$3"} >/dev/null; }

# wait_file PATH: until it exists and is non-empty (max ~10 s).
wait_file() {
  local i
  for i in $(seq 1 200); do [ -s "$1" ] && return 0; sleep 0.05; done
  return 1
}

# start_fixture NAME PKI_DIR [fixture flags...]: a DoT fixture on 127.0.0.1.
# Sets FIX_PORT_<NAME>; stats in $WORK/NAME.stats.
start_fixture() {
  local name=$1 pki=$2
  shift 2
  need_fixture nxdns-fixture-dot
  rm -f "$WORK/$name.port"
  fx_exec nxdns-fixture-dot --listen 127.0.0.1:0 --port-file "$WORK/$name.port" --stats-file "$WORK/$name.stats" \
    --cert "$pki/server.pem" --key "$pki/server.key" "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=("$!")
  wait_file "$WORK/$name.port" || fail "fixture $name did not start"
  printf -v "FIX_PORT_$name" '%s' "$(cat "$WORK/$name.port")"
}

# start_relay NAME TO_PORT RTT_MS: sets RELAY_PORT_<NAME>.
start_relay() {
  local name=$1 to=$2 rtt=$3
  need_fixture nxdns-delay-relay
  rm -f "$WORK/$name.port"  # a reused name must not find the old relay's port
  fx_exec nxdns-delay-relay --listen 127.0.0.1:0 --to "127.0.0.1:$to" --rtt-ms "$rtt" --port-file "$WORK/$name.port" \
    >"$WORK/$name.log" 2>&1 &
  PIDS+=("$!")
  wait_file "$WORK/$name.port" || fail "relay $name did not start"
  printf -v "RELAY_PORT_$name" '%s' "$(cat "$WORK/$name.port")"
}

# stat FILE KEY: a counter from a fixture's JSON stats file.
stat() { sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$1"; }

# start_daemon CONFIG ADDR PORT: runs `nxdns run`, waits until its TCP
# listener accepts (no DNS query: that would warm an upstream session).
start_daemon() {
  nx_exec run -c "$1" >"$WORK/daemon.log" 2>&1 &
  DAEMON_PID=$!
  PIDS+=("$DAEMON_PID")
  local i
  for i in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/$2/$3") 2>/dev/null; then return 0; fi
    kill -0 "$DAEMON_PID" 2>/dev/null || fail "daemon exited at start"
    sleep 0.05
  done
  fail "daemon did not start listening on $2:$3"
}

# stop_daemon: SIGTERM, expect exit 0.
stop_daemon() {
  kill -TERM "$DAEMON_PID"
  local rc=0
  wait "$DAEMON_PID" || rc=$?
  [ "$rc" = 0 ] || fail "daemon exit status after SIGTERM: $rc"
}

# dot_config FILE LISTEN_ADDR LISTEN_PORT UPSTREAM_PORT PKI_DIR [TLS_NAME] [extra yaml]
dot_config() {
  cat >"$1" <<YAML
listen:
  - "$2:$3"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "tls://127.0.0.1:$4"
    tls_name: "${6:-dot.test}"
    ca_file: "$5/ca.pem"
budgets:
  attempt_ms: ${ATTEMPT_MS:-1500}
  total_ms: ${TOTAL_MS:-3000}
http:
  enabled: false
log:
  level: ${LOG_LEVEL:-info}
YAML
}
