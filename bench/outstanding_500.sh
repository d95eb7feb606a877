#!/usr/bin/env bash
# The issue-17 load row: dnsperf with 500 queries outstanding from 10
# clients (-c 10 -q 500), unique names, one DoT upstream fixture on loopback
# (no added round trip), nxdns beside unbound in the same run. Prints, per
# server: NOERROR share, NOERROR/s, REFUSED and SERVFAIL counts, lost, and
# the load average. Loopback only.
#   bash bench/outstanding_500.sh BUILD_DIR [--seconds S]
# nxdns runs with client_limits.queries_per_second 0: dnsperf's 10 clients
# share one source address, which the per-client rate limit (300/s) would
# otherwise refuse (docs/reference/config.md, client_limits).
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:?usage: $0 BUILD_DIR [--seconds S]}
shift
SECONDS_RUN=10
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) SECONDS_RUN=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=../tests/integration/lib.sh
source "$HERE/../tests/integration/lib.sh" "$BUILD/src/cli/nxdns" "$BUILD/tests/fixtures"
for tool in unbound dnsperf; do require_program "$tool"; done
ADDR=$(pick_loopback)
make_pki "$WORK/pki" dot.test
start_fixture up "$WORK/pki"
UP=$FIX_PORT_up
# shellcheck source=cache_lib.sh
source "$HERE/cache_lib.sh"
NX_CACHE_EXTRA='client_limits:
  queries_per_second: 0'
echo "== 500 outstanding: dnsperf -c 10 -q 500 -l $SECONDS_RUN, unique names, one DoT upstream fixture (loopback)"
printf '%-8s %-9s %-10s %-8s %-8s %-12s %s\n' server NOERROR% "NOERROR/s" REFUSED SERVFAIL lost/sent "load avg"
port=5400
for kind in nxdns unbound; do
  port=$((port + 1))
  start_server "$kind" "$port" false
  awk -v n=2000000 -v tag="$kind$RANDOM" 'BEGIN { for (i = 0; i < n; i++) printf "q%d-%s.perf.test A\n", i, tag }' >"$WORK/names"
  out="$WORK/$kind.perf"
  timeout $((SECONDS_RUN + 30)) dnsperf -s "$ADDR" -p "$port" -d "$WORK/names" -c 10 -q 500 -l "$SECONDS_RUN" -t 5 \
    >"$out" 2>&1 || true
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  sent=$(sed -n 's/.*Queries sent:[[:space:]]*\([0-9]*\).*/\1/p' "$out" | head -n1)
  lost=$(sed -n 's/.*Queries lost:[[:space:]]*\([0-9]*\).*/\1/p' "$out" | head -n1)
  rt=$(sed -n 's/.*Run time (s):[[:space:]]*\([0-9.]*\).*/\1/p' "$out" | head -n1)
  rc_of() { sed -n "s/.*Response codes:.*$1 \([0-9]*\).*/\1/p" "$out" | head -n1; }
  noerr=$(rc_of NOERROR); refused=$(rc_of REFUSED); servfail=$(rc_of SERVFAIL)
  awk -v k="$kind" -v s="${sent:-0}" -v n="${noerr:-0}" -v r="${refused:-0}" -v f="${servfail:-0}" -v l="${lost:-0}" \
    -v rt="${rt:-0}" -v la="$load" 'BEGIN { printf "%-8s %-9.2f %-10.0f %-8d %-8d %-12s %s\n", k,
      (s > 0 ? 100 * n / s : 0), (rt > 0 ? n / rt : 0), r, f, l "/" s, la }'
  kill -TERM "$SRV_PID"; wait "$SRV_PID" 2>/dev/null || true
done
