#!/usr/bin/env bash
# Blocklist cost at the daemon, nxdns vs dnsmasq, on the same hosts list
# (bench/blocklist.sh generates it and calls this; it can also run alone).
#
# Each server runs on a loopback address of its own, first without the
# list (reloaded once, and nxdns's /api/health read as often as the load
# below reads it, so what a reload and the HTTP surface cost is paid before
# the RSS without the list is taken), then:
#   load   the list is switched on by a reload (nxdns: `blocking.lists`
#          added to the file, `nxdns reload --http`; dnsmasq: the empty
#          --addn-hosts file overwritten with the list, SIGHUP). RSS added
#          is VmRSS 1 s after the list is in use minus VmRSS before; the
#          time is from the reload to the list in use (nxdns: /api/health's
#          blocking.builds grows; dnsmasq: it logs "read FILE - N names").
#   idle   a stream of 100 queries a second for 12 s, nothing reloading:
#          the machine's own noise.
#   swap   the same stream with the same list reloaded 3 s in: every
#          query's latency, the peak RSS (VmHWM, reset just before), and
#          the queries sent while the reload ran (from the reload to the
#          list in use again): how many were answered within 50 ms, and how
#          many answers came back in that time (a server that stalled
#          answers its queue at the end: late, but inside the window).
#          Answers still outstanding when the stream ends are awaited until
#          the reload is in use and 2 s more; the rest count as lost.
#
# The query mix, the same for both servers, in turn: a name of the list
# (nxdns answers NXDOMAIN, dnsmasq 0.0.0.0) and one of 50 names outside it,
# answered by the server's upstream and from its cache after a first pass
# (nxdns: a DoT fixture; dnsmasq, which has no DoT: a plain DNS fixture
# answering the same names). Every query of the stream is decided against
# the list, either way.
#
# Goals (a row says ok or MISSED; the exit status is 1 if any is missed):
#   RSS added           <= 0.15 x dnsmasq's
#   blocking active     <= 0.5 x dnsmasq's time
#   worst latency       <= 50 ms at 100 queries/s while the list reloads
#
# usage: bench/blocklist_daemon.sh BUILD_DIR HOSTS_LIST
# With BENCH_RESULTS=DIR in the environment the figures also go to
# DIR/blocklist_daemon.json (bench/bench_result.py).
# Needs dnsmasq (dnsmasq-base) and python3; scripts/install-deps.sh --bench.
# Loopback only: every server, fixture and client is on 127.0.0.0/8.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH_COMMAND=${BENCH_COMMAND:-"bash bench/blocklist_daemon.sh $*"}
BUILD=$(cd "${1:?usage: $0 BUILD_DIR HOSTS_LIST}" && pwd)
LIST=$(realpath "${2:?usage: $0 BUILD_DIR HOSTS_LIST}")
RATE=100
SECONDS_STREAM=12
RELOAD_AT=3
GOAL_MS=50
# shellcheck source=../tests/integration/lib.sh
source "$HERE/../tests/integration/lib.sh" "$BUILD/src/cli/nxdns" "$BUILD/tests/fixtures" >/dev/null
# shellcheck source=lib.sh
source "$HERE/lib.sh"
require_program dnsmasq "apt package dnsmasq-base"
require_program python3
require_program curl
need_fixture nxdns-fixture-plain-dns
chmod 755 "$WORK"  # dnsmasq reads its list as the user it runs as
STREAM="$HERE/reload_stream.py"

# ---- the query mix --------------------------------------------------------
# 50 names of the list, spread over it, and 50 outside it, alternating.
total=$(awk '$1 == "0.0.0.0" && $2 != "0.0.0.0"' "$LIST" | wc -l)
awk -v step=$((total / 50)) '$1 == "0.0.0.0" && $2 != "0.0.0.0" { n++; if (n % step == 1 && k < 50) { print $2; k++ } }' \
  "$LIST" >"$WORK/listed.txt"
[ "$(wc -l <"$WORK/listed.txt")" = 50 ] || fail "could not pick 50 names of $LIST"
for i in $(seq 1 50); do echo "site-$i.bench.test"; done >"$WORK/other.txt"
paste -d '\n' "$WORK/listed.txt" "$WORK/other.txt" | sed 's/$/ A/' >"$WORK/names.txt"
: >"$WORK/empty.hosts"

make_pki "$WORK/pki" dot.test
start_fixture up "$WORK/pki"
A_ARGS=()
while read -r n; do A_ARGS+=(--a "$n=192.0.2.1"); done <"$WORK/other.txt"
(fx_exec nxdns-fixture-plain-dns --listen 127.0.0.1:0 --port-file "$WORK/plain.port" "${A_ARGS[@]}" \
  >"$WORK/plain.log" 2>&1) &
PIDS+=("$!")
wait_file "$WORK/plain.port" || fail "plain DNS fixture did not start"
PLAIN_PORT=$(cat "$WORK/plain.port")

# stream OUT ADDR PORT [reload_stream.py options]: one stream, JSON to OUT.
stream() {
  local out=$1 addr=$2 port=$3
  shift 3
  python3 "$STREAM" --server "$addr" --port "$port" --names "$WORK/names.txt" --goal-ms "$GOAL_MS" "$@" >"$out" ||
    fail "reload_stream.py failed ($out)"
}
# jget FILE KEY[.KEY]: a value of a stream's JSON ("-" when null or absent).
jget() {
  python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v.get(k) if isinstance(v, dict) else None
print("-" if v is None else v)' "$1" "$2"
}
# Linux 4.0+: "5" resets VmHWM to the current RSS, so the swap's peak is its own.
reset_hwm() { echo 5 >"/proc/$1/clear_refs"; }

# measure NAME PID ADDR PORT RELOAD_CMD ACTIVE_ARGS...: the load, idle and
# swap phases above against a server running without the list; writes
# $WORK/NAME.{load,idle,swap}.json and $WORK/NAME.rss: VmRSS without the
# list, with it, just before the swap, and VmHWM over the swap (KiB).
# PRIME names the function that reloads the server without the list;
# BEFORE_LOAD the one that puts the list in place.
measure() {
  local name=$1 pid=$2 addr=$3 port=$4 reload=$5 rss0 rss1 rss_swap hwm
  shift 5
  "$PRIME"
  sleep 1
  rss0=$(rss_kib "$pid")
  echo "blocklist: $name: loading the list by a reload" >&2
  "$BEFORE_LOAD"
  reset_hwm "$pid"
  stream "$WORK/$name.load.json" "$addr" "$port" --rate 0 --seconds 0 --reload-at 0 --reload "$reload" --pid "$pid" "$@"
  [ "$(jget "$WORK/$name.load.json" active_s)" != - ] || fail "$name: the list was not in use in time"
  [ "$(jget "$WORK/$name.load.json" reload_failed)" = - ] || fail "$name: $(jget "$WORK/$name.load.json" reload_failed)"
  sleep 1
  rss1=$(rss_kib "$pid")
  stream "$WORK/$name.warm.json" "$addr" "$port" --rate 200 --seconds 0.5
  echo "blocklist: $name: ${SECONDS_STREAM} s at $RATE queries/s, nothing reloading" >&2
  stream "$WORK/$name.idle.json" "$addr" "$port" --rate "$RATE" --seconds "$SECONDS_STREAM" --pid "$pid"
  echo "blocklist: $name: ${SECONDS_STREAM} s at $RATE queries/s, the list reloaded ${RELOAD_AT} s in" >&2
  sleep 1
  rss_swap=$(rss_kib "$pid")
  reset_hwm "$pid"
  stream "$WORK/$name.swap.json" "$addr" "$port" --rate "$RATE" --seconds "$SECONDS_STREAM" --reload-at "$RELOAD_AT" \
    --reload "$reload" --pid "$pid" "$@"
  [ "$(jget "$WORK/$name.swap.json" active_s)" != - ] || fail "$name: the reload during the stream was not in use in time"
  hwm=$(hwm_kib "$pid")
  echo "$rss0 $rss1 $rss_swap $hwm" >"$WORK/$name.rss"
}

# ---- nxdns ------------------------------------------------------------------
NX_ADDR=$(pick_loopback)
NX_PORT=$(free_port)
NX_HTTP="$NX_ADDR:$(free_port)"
nx_conf() {  # nx_conf BLOCKING_YAML
  cat >"$WORK/nxdns.yaml" <<YAML
listen:
  - "$NX_ADDR:$NX_PORT"
forward_special_zones: [test]
home_router: "off"
upstreams:
  - url: "tls://127.0.0.1:${FIX_PORT_up:?}"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
# One source address sends the whole stream.
client_limits:
  queries_per_second: 0
http:
  enabled: true
  listen: "$NX_HTTP"
log:
  level: info
$1
YAML
}
nx_conf ""
nxdns_run "$BUILD" "$WORK/nxdns.yaml" "$WORK/nxdns.log"
NX_PID=$SRV_PID
wait_tcp "$NX_ADDR" "$NX_PORT" "$NX_PID" 10 || fail "nxdns did not start: $(tail -5 "$WORK/nxdns.log")"
nx_list_on() { nx_conf "blocking:
  lists:
    - file: \"$LIST\""; }
nx_prime() {
  "$BUILD/src/cli/nxdns" reload --http "$NX_HTTP" >/dev/null
  for _ in $(seq 1 100); do curl -s --max-time 2 "http://$NX_HTTP/api/health" >/dev/null; done
}
PRIME=nx_prime
BEFORE_LOAD=nx_list_on
measure nxdns "$NX_PID" "$NX_ADDR" "$NX_PORT" "$BUILD/src/cli/nxdns reload --http $NX_HTTP" \
  --active-health "http://$NX_HTTP/api/health"
server_stop

# ---- dnsmasq ----------------------------------------------------------------
DM_ADDR=$(pick_loopback)
DM_PORT=$(free_port)
cp "$WORK/empty.hosts" "$WORK/dnsmasq.hosts"
dnsmasq --no-daemon --no-resolv --no-hosts --conf-file=/dev/null --pid-file= --user="$(id -un)" \
  --port "$DM_PORT" --listen-address "$DM_ADDR" --bind-interfaces --server="127.0.0.1#$PLAIN_PORT" \
  --addn-hosts="$WORK/dnsmasq.hosts" --log-facility=- >"$WORK/dnsmasq.log" 2>&1 &
DM_PID=$!
PIDS+=("$DM_PID")
SRV_PID=$DM_PID
wait_tcp "$DM_ADDR" "$DM_PORT" "$DM_PID" 10 || fail "dnsmasq did not start: $(tail -5 "$WORK/dnsmasq.log")"
dm_list_on() { cp "$LIST" "$WORK/dnsmasq.hosts"; }
dm_prime() {
  kill -HUP "$DM_PID"
  local i
  for i in $(seq 1 200); do
    [ "$(grep -c "read $WORK/dnsmasq.hosts - " "$WORK/dnsmasq.log")" -ge 2 ] && return 0
    sleep 0.05
  done
  fail "dnsmasq did not re-read its empty list"
}
PRIME=dm_prime
BEFORE_LOAD=dm_list_on
echo "blocklist: dnsmasq reads a million names in about a minute, twice here" >&2
measure dnsmasq "$DM_PID" "$DM_ADDR" "$DM_PORT" "kill -HUP $DM_PID" \
  --active-log "$WORK/dnsmasq.log" --active-text "read $WORK/dnsmasq.hosts - " --max-seconds 400
server_stop

# ---- the table ------------------------------------------------------------
read -r nx_rss0 nx_rss1 nx_rss_swap nx_hwm <"$WORK/nxdns.rss"
read -r dm_rss0 dm_rss1 dm_rss_swap dm_hwm <"$WORK/dnsmasq.rss"
row() {  # row NAME FILE KEY...: "nxdns-value dnsmasq-value" of one key
  echo "$(jget "$WORK/nxdns.$1.json" "$2") $(jget "$WORK/dnsmasq.$1.json" "$2")"
}
{
  echo "rss $nx_rss0 $nx_rss1 $dm_rss0 $dm_rss1"
  echo "swap_rss $nx_rss_swap $nx_hwm $dm_rss_swap $dm_hwm"
  echo "load_ms $(row load active_after_ms)"
  echo "swap_ms $(row swap active_after_ms)"
  echo "swap_max $(row swap max_ms)"
  echo "swap_p99 $(row swap p99_ms)"
  echo "swap_over $(row swap over_goal)"
  echo "idle_max $(row idle max_ms)"
  echo "swap_late $(row swap send_late_max_ms)"
  echo "idle_p99 $(row idle p99_ms)"
  echo "win_sent $(row swap window_sent)"
  echo "win_answered $(row swap window_answered)"
  echo "win_on_time $(row swap window_on_time)"
  echo "sent $(row swap sent)"
  echo "answered $(row swap answered)"
  echo "settled $(row swap rss_kib.settled_after_active_ms)"
  echo "last $(row swap rss_kib.last)"
} >"$WORK/summary.txt"
awk 'BEGIN { print "figure\tnxdns\tdnsmasq" }
  $1 == "rss" { printf "rss_without_kib\t%s\t%s\nrss_with_kib\t%s\t%s\n", $2, $4, $3, $5; next }
  $1 == "swap_rss" { printf "swap_rss_before_kib\t%s\t%s\nswap_hwm_kib\t%s\t%s\n", $2, $4, $3, $5; next }
  { printf "%s\t%s\t%s\n", $1, $2, $3 }' "$WORK/summary.txt" >"$WORK/figures.tsv"
result_json blocklist_daemon --table "figures=$WORK/figures.tsv" --nxdns "nxdns=$BUILD/src/cli/nxdns" --peer dnsmasq \
  --param "names=$total" --param "rate=$RATE" --param "seconds=$SECONDS_STREAM" --param "reload_at_s=$RELOAD_AT" \
  --param "goal_ms=$GOAL_MS"
status=0
awk -v rate="$RATE" -v secs="$SECONDS_STREAM" -v at="$RELOAD_AT" -v goal="$GOAL_MS" -v names="$total" '
  { v[$1, 1] = $2; v[$1, 2] = $3; v[$1, 3] = $4; v[$1, 4] = $5 }
  function mib(kib) { return sprintf("%.1f MiB", kib / 1024) }
  function verdict(ok) { if (!ok) missed = 1; return ok ? "ok" : "MISSED" }
  END {
    nx_add = v["rss", 2] - v["rss", 1]; dm_add = v["rss", 4] - v["rss", 3]
    printf "\ndaemon: %d names switched on by a reload, then reloaded under a stream of %d queries/s\n", names, rate
    printf "(%d s; half names of the list, half cached names outside it; the reload %d s in)\n\n", secs, at
    printf "%-40s %14s %14s %8s  %s\n", "", "nxdns", "dnsmasq", "ratio", "goal (ratio: nxdns / dnsmasq)"
    printf "%-40s %14s %14s\n", "RSS without the list", mib(v["rss", 1]), mib(v["rss", 3])
    printf "%-40s %14s %14s %8.3f  <= 0.15: %s\n", "RSS added by the list", mib(nx_add), mib(dm_add), nx_add / dm_add,
           verdict(nx_add <= 0.15 * dm_add)
    printf "%-40s %11.0f ms %12.1f s %8.3f  <= 0.5: %s\n", "reload until blocking is active", v["load_ms", 1],
           v["load_ms", 2] / 1000, v["load_ms", 1] / v["load_ms", 2], verdict(v["load_ms", 1] <= 0.5 * v["load_ms", 2])
    printf "%-40s %14s %14s\n", "swap: RSS before (list in use)", mib(v["swap_rss", 1]), mib(v["swap_rss", 3])
    printf "%-40s %14s %14s\n", "swap: peak RSS (VmHWM)", mib(v["swap_rss", 2]), mib(v["swap_rss", 4])
    printf "%-40s %14s %14s\n", "swap: peak over one list in use", mib(v["swap_rss", 2] - v["swap_rss", 1]),
           mib(v["swap_rss", 4] - v["swap_rss", 3])
    printf "%-40s %14s %14s\n", "swap: RSS when the stream ended", mib(v["last", 1]), mib(v["last", 2])
    printf "%-40s %11s ms %11s ms\n", "swap: back within 2 MiB of that, after", v["settled", 1], v["settled", 2]
    printf "%-40s %11.0f ms %12.1f s\n", "swap: reload until the new list in use", v["swap_ms", 1], v["swap_ms", 2] / 1000
    printf "%-40s %11.1f ms %11.1f ms %8.3f  <= %d ms: %s\n", "worst query latency, reload running", v["swap_max", 1],
           v["swap_max", 2], v["swap_max", 1] / v["swap_max", 2], goal,
           verdict(v["swap_max", 1] != "-" && v["swap_max", 1] <= goal)
    printf "%-40s %11.1f ms %11.1f ms\n", "  p99", v["swap_p99", 1], v["swap_p99", 2]
    printf "%-40s %14d %14d\n", "  queries over " goal " ms", v["swap_over", 1], v["swap_over", 2]
    printf "%-40s %11.1f ms %11.1f ms\n", "  the client sent late by at most", v["swap_late", 1], v["swap_late", 2]
    printf "%-40s %8d / %-5d %8d / %-5d\n", "sent during the reload: answered <= " goal " ms", v["win_on_time", 1],
           v["win_sent", 1], v["win_on_time", 2], v["win_sent", 2]
    printf "%-40s %8d / %-5d %8d / %-5d\n", "answers during the reload / queries sent", v["win_answered", 1],
           v["win_sent", 1], v["win_answered", 2], v["win_sent", 2]
    printf "%-40s %8d / %-5d %8d / %-5d\n", "answered / sent, whole stream", v["answered", 1], v["sent", 1],
           v["answered", 2], v["sent", 2]
    printf "%-40s %11.1f ms %11.1f ms\n", "worst query latency, nothing reloading", v["idle_max", 1], v["idle_max", 2]
    printf "%-40s %11.1f ms %11.1f ms\n", "  p99", v["idle_p99", 1], v["idle_p99", 2]
    exit missed
  }' "$WORK/summary.txt" || status=1
# The slowest queries of the reload stream, and how long the server's loop
# (nxdns: its event loop; dnsmasq: its one thread) and the client waited
# for a CPU meanwhile: a stall the loop did not wait out is the server's.
for srv in nxdns dnsmasq; do
  python3 -c 'import json, sys
for q in json.load(open(sys.argv[1])).get("slowest", []):
    print("  %-8s sent at %6.3f s: %8.1f ms (the loop waited %s ms for a CPU, the client %s ms)" % (
        sys.argv[2], q["sent_s"], q["ms"], q["loop_waited_cpu_ms"], q["client_waited_cpu_ms"]))' \
    "$WORK/$srv.swap.json" "$srv"
done
echo "  (the reload: $(jget "$WORK/nxdns.swap.json" reload_s) s in; in use at nxdns $(jget "$WORK/nxdns.swap.json" active_s) s, dnsmasq $(jget "$WORK/dnsmasq.swap.json" active_s) s)"
exit "$status"
