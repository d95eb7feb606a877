# shellcheck shell=bash
# shellcheck disable=SC2154  # FIX_PORT_* and RELAY_PORT_* are set by start_fixture / start_relay (printf -v)
# bench/run.sh section "wan": the WAN's return after an outage, as a new
# household sees it when the router reconnects with a new public address:
# the path comes back, every connection from before it is silently dead.
# Sourced by bench/run.sh after tests/integration/lib.sh and bench/lib.sh.
#
# Every forwarder of the run at once, side by side: one DoT fixture (session
# tickets, as public resolvers issue them) behind one 40 ms delay relay, each
# forwarder its own listener. bench/wan_return_probe.py drives the relay
# (SIGUSR1: an outage, every connection black-holed; SIGUSR2: the path is
# back for new connections only, tests/fixtures/delay_relay.cpp) and asks
# every forwarder names it never saw, so each goes upstream: a few per
# second before the outage, WAN_RATE per second during its WAN_OUTAGE_S
# seconds (and a random part of a second, so the return falls between two
# of them), then one at the instant of the return (the row's "first query")
# and five per second for 6 s. WAN_CYCLES outages in a row (default: --runs);
# the forwarders keep running across them.
WAN_OUTAGE_S=${WAN_OUTAGE_S:-30}
WAN_RATE=${WAN_RATE:-1}
WAN_CYCLES=${WAN_CYCLES:-$RUNS}

section_wan() {
  make_pki "$WORK/pki" dot.test
  local mark addr relay_pid srv port=5400 ports=() labels=()
  mark=$(pids_mark)
  start_fixture wan "$WORK/pki" "${BENCH_FIXTURE_FLAGS[@]}" --session-tickets
  rm -f "$WORK/wanrl.port"
  start_relay wanrl "$FIX_PORT_wan" 40
  relay_pid=${PIDS[-1]}
  addr=$(pick_loopback)
  for srv in "${SRV_LIST[@]}"; do
    if server_start "$srv" "$addr" "$port" "$RELAY_PORT_wanrl" "$WORK/pki"; then
      ports+=("$port") labels+=("$srv")
    else
      echo "$srv did not start; left out"
    fi
    port=$((port + 1))
  done
  echo
  echo "== the WAN's return: ${WAN_OUTAGE_S} s outage (${WAN_RATE} new name/s to each forwarder), then the path back with" \
    "every connection from before it dead; one DoT upstream (fixture, session tickets), 40 ms RTT, $WAN_CYCLES outages"
  python3 "$ROOT/bench/wan_return_probe.py" --server "$addr" --ports "$(IFS=,; echo "${ports[*]}")" \
    --labels "$(IFS=,; echo "${labels[*]}")" --relay-pid "$relay_pid" --cycles "$WAN_CYCLES" \
    --outage "$WAN_OUTAGE_S" --rate "$WAN_RATE" >"$OUT/wan.json"
  printf '%-11s %-28s %-8s %-28s %-8s %s\n' server "first query ms (each outage)" median \
    "first answer after return ms" median "during the outage"
  python3 - "$OUT/wan.json" <<'PY'
import json, statistics, sys
def med(xs):
    # A cycle without an answer counts as slower than any answer.
    v = statistics.median_low([x if isinstance(x, (int, float)) else float("inf") for x in xs]) if xs else None
    return "-" if v is None else ("none" if v == float("inf") else "%.0f" % v)
def show(xs):
    return ",".join(("%.0f" % x) if isinstance(x, (int, float)) else ("none" if x is None else str(x)) for x in xs)
for ln in open(sys.argv[1]):
    r = json.loads(ln)
    first = [c["first_ms"] for c in r["cycles"]]
    ans = [c["first_answer_after_return_ms"] for c in r["cycles"]]
    outage = ",".join("%s:%d" % kv for kv in sorted(r["outage"].items())) or "-"
    print("%-11s %-28s %-8s %-28s %-8s %s" % (r["server"], show(first), med(first), show(ans), med(ans), outage))
PY
  pids_release "$mark"
  run_result wan --jsonl "servers=$OUT/wan.json" --param "outage_s=$WAN_OUTAGE_S" --param "rate=$WAN_RATE" \
    --param "cycles=$WAN_CYCLES" --param rtt_ms=40 --param "fixture_flags=${BENCH_FIXTURE_FLAGS[*]} --session-tickets"
  echo "first query = a new name sent at the instant the path came back (latency; an rcode or timeout if it got no"
  echo "answer); first answer after return = from that instant to the first NOERROR answer to any name sent after it;"
  echo "during the outage = rcodes of the names asked during it (timeout: no answer within 8 s). One round trip is"
  echo "40 ms: a fresh TLS 1.3 connection and its query take 3 (120 ms), TLS 1.2 4 (160 ms; 3 when resumed)."
  echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
}
