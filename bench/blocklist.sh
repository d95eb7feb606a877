#!/usr/bin/env bash
# Blocklist cost, nxdns vs dnsmasq, on the same generated hosts list
# (bench/blocklist.cpp writes it: NAMES deterministic names, ~24
# characters on average, behind the header entries published lists carry).
#
#   nxdns    bench/blocklist.cpp measure: the table's RSS added and build
#            peak (the process's VmRSS/VmHWM), build time, lookup cost,
#            and a reload on a real libevent loop: time until the new
#            table is in use, worst lateness of a 10 ms timer meanwhile.
#   dnsmasq  `--addn-hosts LIST` on a loopback port, no upstream, logging to
#            stderr: loaded when it logs "read LIST - N names". RSS added is
#            its VmRSS then minus its VmRSS with an empty list; load time
#            is start-to-that-line minus the same for the empty list.
#   daemon   bench/blocklist_daemon.sh on the same hosts list: both servers
#            running, the list switched on by a reload and reloaded again
#            under 100 queries/s (RSS added, time until active, peak RSS of
#            the swap, every query's latency meanwhile); its own table.
#
# Goals (a row says ok or MISSED; the exit status is 1 if any is missed):
#   RSS added         <= 0.15 x dnsmasq's for the same list
#   blocking active   <= 0.5 x dnsmasq's load time
#   lookup            < 1 us per query (CPU time of the thread: the machine
#                     is shared, and other processes inflate wall time)
#   worst latency     <= 50 ms at 100 queries/s while the list reloads
#                     (daemon part)
#
# usage: bench/blocklist.sh BUILD_DIR [NAMES] [--results DIR]   (NAMES: 1000000)
# --results DIR: the figures also go to DIR/blocklist.json and (the daemon
# part) DIR/blocklist_daemon.json (bench/bench_result.py).
# Needs dnsmasq (apt package dnsmasq-base; scripts/install-deps.sh --bench),
# python3, and in BUILD_DIR nxdns and the test fixtures besides
# nxdns-blocklist. Loopback only: every server, fixture and client is on
# 127.0.0.0/8.
set -euo pipefail
BENCH_COMMAND="bash bench/blocklist.sh $*"
BUILD=${1:?usage: $0 BUILD_DIR [NAMES] [--results DIR]}
shift
NAMES=1000000
while [ $# -gt 0 ]; do
  case $1 in
    --results) BENCH_RESULTS=$2; shift 2 ;;
    *) NAMES=$1; shift ;;
  esac
done
PROG=$BUILD/bench/nxdns-blocklist
HERE=$(cd "$(dirname "$0")" && pwd)
for p in "$PROG" "$BUILD/src/cli/nxdns" "$BUILD/tests/fixtures/nxdns-fixture-dot" "$BUILD/tests/fixtures/nxdns-test-pki" \
  "$BUILD/tests/fixtures/nxdns-fixture-plain-dns"; do
  [ -x "$p" ] || { echo "blocklist: $p not built (cmake --build $BUILD --target $(basename "$p"))" >&2; exit 2; }
done
command -v dnsmasq >/dev/null || { echo "blocklist: dnsmasq not installed (apt package dnsmasq-base)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/nxdns-blocklist.XXXXXX)
chmod 755 "$WORK"  # dnsmasq may read its lists after dropping to another user
DNSMASQ_PID=""
cleanup() {
  if [ -n "$DNSMASQ_PID" ]; then kill "$DNSMASQ_PID" 2>/dev/null || true; wait "$DNSMASQ_PID" 2>/dev/null || true; fi
  [ "${KEEP_WORK:-0}" = 1 ] && echo "work files kept in $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
# shellcheck source=lib.sh
source "$HERE/lib.sh"  # free_port

# dnsmasq_load LIST: prints "SECONDS RSS_KIB HWM_KIB NAMES" once dnsmasq has
# read LIST, then stops it.
dnsmasq_load() {
  local list=$1 log=$WORK/dnsmasq.log addr port start end line
  port=$(free_port) || { echo "blocklist: no free loopback port" >&2; return 1; }
  # An address of its own in 127.0.0.0/8: other servers on this machine
  # crowd 127.0.0.1.
  addr="127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))"
  : >"$log"
  start=$EPOCHREALTIME
  dnsmasq --no-daemon --no-resolv --no-hosts --conf-file=/dev/null --pid-file= --user="$(id -un)" \
    --port "$port" --listen-address "$addr" --bind-interfaces --addn-hosts="$list" --log-facility=- \
    >"$log" 2>&1 &
  DNSMASQ_PID=$!
  until line=$(grep -m1 "read $list - " "$log"); do
    if ! kill -0 "$DNSMASQ_PID" 2>/dev/null; then
      echo "blocklist: dnsmasq exited:" >&2; cat "$log" >&2; return 1
    fi
    sleep 0.02
  done
  end=$EPOCHREALTIME
  local rss hwm
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$DNSMASQ_PID/status")
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$DNSMASQ_PID/status")
  kill "$DNSMASQ_PID"; wait "$DNSMASQ_PID" 2>/dev/null || true
  DNSMASQ_PID=""
  echo "$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f", b - a}') $rss $hwm $(sed -n 's/.* - \([0-9]*\) names.*/\1/p' <<<"$line")"
}

echo "blocklist: generating $NAMES names in $WORK" >&2
"$PROG" generate "$WORK/list.hosts" "$NAMES" hosts
"$PROG" generate "$WORK/list.domains" "$NAMES" domains
: >"$WORK/empty.hosts"
echo "blocklist: nxdns" >&2
"$PROG" measure "$WORK/list.hosts" "$WORK/list.domains" >"$WORK/nxdns.txt"
echo "blocklist: dnsmasq, empty list, then the list (a million names take it about a minute)" >&2
read -r dm_t0 dm_rss0 _ _ < <(dnsmasq_load "$WORK/empty.hosts")
read -r dm_t1 dm_rss1 dm_hwm1 dm_names < <(dnsmasq_load "$WORK/list.hosts")

{
  tsv figure value
  tr ' ' '\t' <"$WORK/nxdns.txt"
} >"$WORK/nxdns.tsv"
{
  tsv load_s_empty rss_empty_kib load_s rss_kib hwm_kib names
  tsv "$dm_t0" "$dm_rss0" "$dm_t1" "$dm_rss1" "$dm_hwm1" "$dm_names"
} >"$WORK/dnsmasq.tsv"
result_json blocklist --table "nxdns=$WORK/nxdns.tsv" --table "dnsmasq=$WORK/dnsmasq.tsv" --peer dnsmasq \
  --nxdns "nxdns=$BUILD/src/cli/nxdns" --param "names=$NAMES" --param "list_mib=$(du -m "$WORK/list.hosts" | cut -f1)"
export BENCH_RESULTS BENCH_COMMAND
status=0
awk -v dm_t0="$dm_t0" -v dm_rss0="$dm_rss0" -v dm_t1="$dm_t1" -v dm_rss1="$dm_rss1" -v dm_hwm1="$dm_hwm1" \
    -v dm_names="$dm_names" -v list_mib="$(du -m "$WORK/list.hosts" | cut -f1)" '
  { v[$1] = $2 }
  function mib(kib) { return sprintf("%.1f MiB", kib / 1024) }
  function verdict(ok) { if (!ok) missed = 1; return ok ? "ok" : "MISSED" }
  END {
    dm_added = dm_rss1 - dm_rss0; dm_load = dm_t1 - dm_t0
    rss_ratio = v["rss_added_kib"] / dm_added
    load_ratio = v["reload_in_use_ms"] / 1000 / dm_load
    printf "hosts list: %d names, %d MiB\n\n", v["rules"], list_mib
    printf "%-36s %14s %14s %8s  %s\n", "", "nxdns", "dnsmasq", "ratio", "goal"
    printf "%-36s %14d %14d\n", "names loaded", v["rules"], dm_names
    printf "%-36s %14s %14s %8.3f  <= 0.15: %s\n", "RSS added", mib(v["rss_added_kib"]), mib(dm_added), rss_ratio,
           verdict(rss_ratio <= 0.15)
    printf "%-36s %14s %14s\n", "peak RSS added while loading", mib(v["build_peak_kib"]), mib(dm_hwm1 - dm_rss0)
    printf "%-36s %12.0f ms %12.2f s %8.3f  <= 0.5: %s\n", "load until blocking is active", v["reload_in_use_ms"],
           dm_load, load_ratio, verdict(load_ratio <= 0.5)
    printf "%-36s %12.0f ms %14s\n", "  build alone, wall", v["build_wall_ms"], ""
    printf "%-36s %12.0f ms %14s\n", "  build alone, CPU", v["build_cpu_ms"], ""
    printf "\nlookup, ns per query (CPU / wall)       goal < 1000 ns CPU\n"
    printf "%-36s %7.0f / %-6.0f %s\n", "hosts list, listed name", v["lookup_hit_cpu_ns"], v["lookup_hit_ns"],
           verdict(v["lookup_hit_cpu_ns"] < 1000 && v["lookup_hit_blocked"] == 1000000)
    printf "%-36s %7.0f / %-6.0f %s\n", "hosts list, other name", v["lookup_miss_cpu_ns"], v["lookup_miss_ns"],
           verdict(v["lookup_miss_cpu_ns"] < 1000 && v["lookup_miss_blocked"] == 0)
    printf "%-36s %7.0f / %-6.0f %s\n", "domain list, www.<listed>", v["subtree_lookup_hit_cpu_ns"],
           v["subtree_lookup_hit_ns"], verdict(v["subtree_lookup_hit_cpu_ns"] < 1000 && v["subtree_lookup_hit_blocked"] == 1000000)
    printf "%-36s %7.0f / %-6.0f %s\n", "domain list, www.<other>", v["subtree_lookup_miss_cpu_ns"],
           v["subtree_lookup_miss_ns"], verdict(v["subtree_lookup_miss_cpu_ns"] < 1000 && v["subtree_lookup_miss_blocked"] == 0)
    printf "\nreload on the loop (the list built again while its table is in use)\n"
    printf "%-36s %12.1f ms\n", "10 ms timer, worst lateness, idle", v["idle_timer_worst_late_ms"]
    printf "%-36s %12.1f ms  (%d firings)\n", "10 ms timer, worst lateness, reload", v["reload_timer_worst_late_ms"],
           v["reload_timer_fired"]
    printf "%-36s %14s\n", "peak RSS over one table in use", mib(v["swap_peak_over_one_table_kib"])
    printf "%-36s %14s\n", "RSS change across the swap", mib(v["swap_rss_change_kib"])
    printf "%-36s %12.2f ms\n", "old table released (on the loop)", v["old_table_release_ms"]
    exit missed
  }' "$WORK/nxdns.txt" || status=1
echo "blocklist: the daemons" >&2
bash "$HERE/blocklist_daemon.sh" "$BUILD" "$WORK/list.hosts" || status=1
exit "$status"
