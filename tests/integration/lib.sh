# Shared helpers for the loopback integration tests. Sourced, not run.
# Everything here talks to 127.0.0.0/8 only.
set -euo pipefail

WORK=$(mktemp -d "${TMPDIR:-/tmp}/nxdns-it.XXXXXX")
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
  done
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work dir kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

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
