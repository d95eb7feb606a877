# shellcheck shell=bash
# shellcheck disable=SC2154  # FIX_PORT_* and RELAY_PORT_* are set by start_fixture / start_relay (printf -v)
# bench/run.sh section "states": a 30-name burst in every
# state a household daemon is in before a burst, side by side with the peers
# in one run. Sourced by bench/run.sh after tests/integration/lib.sh and
# bench/lib.sh (burst_state_once uses their start_fixture, start_relay,
# server_start, pids_mark/pids_release, stats, median).
#
# Every row: a fresh upstream path (fixture -> 40 ms delay relay) and a fresh
# forwarder, then:
#   first        no session ever: the first burst after start
#   one-open     restart, one query (opens one session), burst
#   warm         a burst opens sessions, then the measured burst
#   idle-closed  a burst opens sessions; the upstream closes them all while
#                idle (fixture --idle-close-ms); then the burst is measured
#   serial-first serial upstream (one query at a time per connection, 10 ms
#                each), the first burst after start
#   serial-one   serial upstream, restart, one query, burst
#   serial-warm  serial upstream, a burst, then the measured burst
#   first-slow   as `first`, with the forwarder's CPU held to a Pi-class share
#                (SLOW_CPU_PERCENT of one core, through a cgroup CPU quota):
#                a TLS handshake then costs what it costs on a Raspberry Pi
#                (docs/performance.md, "A cold burst on a slow CPU"); every
#                forwarder runs under the same quota. Needs root and a cgroup
#                CPU controller; without one the row says "skipped".
# The fixture issues session tickets in every state (public DoT resolvers
# do), so a forwarder that resumes may do so after the idle close. The ratio
# is the burst's wall time over one warm query of the same run (nxdns burst).
#
# A forwarder may open its upstream session on its own at start: Knot
# Resolver 5.6 sends two queries (its root priming and time-skew check)
# through policy.TLS_FORWARD as soon as it runs, so with the burst started
# the moment its listener accepted, its "first burst" rode a handshake
# already under way (97 ms, below the 3-round-trip floor of 120 ms). So
# after start every forwarder gets the same quiet settle before its first
# client query, and the row reports `pre`: the fixture's open connections
# just before the measured burst. In the rows that claim "no session" (first,
# idle-closed) a pre above 0 means the forwarder was not in that state.
STATE_IDLE_MS=1000
STATE_SETTLE_MS=1000
STATE_LIST=(first one-open warm idle-closed serial-first serial-one serial-warm first-slow)
# 20 % of one core: mbedTLS 3.6's full TLS 1.3 handshake (5-6 ms on this
# machine's x86-64 core) then takes ~25-30 ms, inside the Pi 4 estimate of
# 20-55 ms (docs/performance.md, "Handshake CPU").
SLOW_CPU_PERCENT=${SLOW_CPU_PERCENT:-20}
SLOW_CPU_PERIOD_US=10000
# STATES=first,one-open narrows a run to some states (development).
[ -n "${STATES:-}" ] && IFS=, read -r -a STATE_LIST <<<"$STATES"

# slow_cpu_group: creates a cgroup whose CPU quota is SLOW_CPU_PERCENT of one
# core (cgroup v1 cpu controller or cgroup v2 cpu.max) and sets SLOW_CPU_TASKS
# to the file a process writes its pid into to join it. Returns 1 (and sets
# nothing) where neither exists or it cannot be written.
SLOW_CPU_DIR=
SLOW_CPU_TASKS=
slow_cpu_group() {
  [ -n "$SLOW_CPU_TASKS" ] && return 0
  local quota=$((SLOW_CPU_PERIOD_US * SLOW_CPU_PERCENT / 100)) dir cg=/sys/fs/cgroup v1=/sys/fs/cgroup/cpu
  # `ip netns exec` (bench/run.sh) mounts a fresh sysfs on /sys, without the
  # cgroup mounts. Mounting the v1 cpu hierarchy again, in this run's own
  # mount namespace, reaches the same hierarchy (and goes with the run).
  if [ ! -e "$v1/cpu.cfs_quota_us" ] && [ ! -e "$cg/cgroup.controllers" ]; then
    mkdir -p "$WORK/cgroup-cpu"
    mount -t cgroup -o cpu none "$WORK/cgroup-cpu" 2>/dev/null && v1=$WORK/cgroup-cpu
  fi
  if [ -f "$v1/cpu.cfs_quota_us" ]; then
    dir=$v1/nxdns-bench-slow-$$
    mkdir -p "$dir" 2>/dev/null && echo "$SLOW_CPU_PERIOD_US" >"$dir/cpu.cfs_period_us" 2>/dev/null &&
      echo "$quota" >"$dir/cpu.cfs_quota_us" 2>/dev/null || { rmdir "$dir" 2>/dev/null; return 1; }
    SLOW_CPU_DIR=$dir SLOW_CPU_TASKS=$dir/tasks
    return 0
  fi
  if grep -qw cpu "$cg/cgroup.controllers" 2>/dev/null; then
    dir=$cg/nxdns-bench-slow-$$
    echo +cpu >"$cg/cgroup.subtree_control" 2>/dev/null
    mkdir -p "$dir" 2>/dev/null && echo "$quota $SLOW_CPU_PERIOD_US" >"$dir/cpu.max" 2>/dev/null ||
      { rmdir "$dir" 2>/dev/null; return 1; }
    SLOW_CPU_DIR=$dir SLOW_CPU_TASKS=$dir/cgroup.procs
    return 0
  fi
  return 1
}
slow_cpu_cleanup() {
  [ -n "$SLOW_CPU_DIR" ] && rmdir "$SLOW_CPU_DIR" 2>/dev/null
  mountpoint -q "$WORK/cgroup-cpu" 2>/dev/null && umount "$WORK/cgroup-cpu"
  SLOW_CPU_DIR= SLOW_CPU_TASKS=
}

# burst_state_once SERVER STATE -> "wall ratio stair bad tls conns resumptions pre"
burst_state_once() {
  local srv=$1 state=$2 mark addr flags=("${BENCH_FIXTURE_FLAGS[@]}" --session-tickets) out mode=()
  mark=$(pids_mark)
  # shellcheck disable=SC2064  # expanded now on purpose: $mark is a local
  trap "pids_release $mark" EXIT
  case $state in
    idle-closed) flags+=(--idle-close-ms "$STATE_IDLE_MS") ;;
    serial-*) flags+=(--serial --response-delay-ms 10) ;;
  esac
  start_fixture st "$WORK/pki" "${flags[@]}"
  rm -f "$WORK/strl.port"
  start_relay strl "$FIX_PORT_st" 40
  addr=$(pick_loopback)
  # first-slow: the forwarder joins the quota group before it execs.
  # shellcheck disable=SC2016  # $$ and $@ belong to the inner shell
  [ "$state" = first-slow ] && SRV_WRAP=(bash -c 'echo $$ >"$0"; exec "$@"' "$SLOW_CPU_TASKS")
  local started=0
  server_start "$srv" "$addr" 5300 "$RELAY_PORT_strl" "$WORK/pki" || started=$?
  SRV_WRAP=()
  if [ "$started" != 0 ]; then
    pids_release "$mark"
    echo "- - - 30 ? 0 0 -"
    return
  fi
  # Start-up traffic of its own (see above) finishes before the first query.
  sleep "$(awk -v m="$STATE_SETTLE_MS" 'BEGIN { print m / 1000 }')"
  case $state in
    # nxdns burst's warm mode sends its single query first: that query is
    # the "one query" that opens the one session.
    one-open | serial-one) mode=() ;;
    first | first-slow | serial-first) mode=(--cold) ;;
    idle-closed)
      timeout 30 "$NXDNS" burst --server "$addr:5300" --names 30 --zone open.test --json >/dev/null 2>&1
      # The fixture closes every session once it has been idle this long;
      # the measured burst then finds none open (cold mode: burst first).
      sleep "$(awk -v m="$STATE_IDLE_MS" 'BEGIN { print m / 1000 + 1 }')"
      mode=(--cold)
      ;;
    warm | serial-warm)
      timeout 30 "$NXDNS" burst --server "$addr:5300" --names 30 --cold --zone open.test --json >/dev/null 2>&1
      mode=()
      ;;
  esac
  local pre
  pre=$(stat "$WORK/st.stats" active_connections)
  out=$(timeout 30 "$NXDNS" burst --server "$addr:5300" --names 30 "${mode[@]}" --json 2>/dev/null)
  server_stop
  sleep 0.1  # the fixture rewrites its stats once per loop iteration
  local bad
  bad=$(($(jfield "$out" servfail) + $(jfield "$out" timeouts) + $(jfield "$out" other_errors)))
  [ -n "$out" ] || bad=30
  echo "$(jfield "$out" wall_ms) $(jfield "$out" ratio) $(jfield "$out" staircase) $bad" \
    "$(fixture_tls "$WORK/st.stats") $(stat "$WORK/st.stats" accepts) $(stat "$WORK/st.stats" resumptions) ${pre:--}"
  pids_release "$mark"
}

section_states() {
  make_pki "$WORK/pki" dot.test
  : >"$OUT/states.tsv"
  tsv state server run tls wall_ms ratio stair bad conns resumed pre >"$WORK/states-runs.tsv"
  echo
  echo "== burst by daemon state: 30 unique names, one DoT upstream (fixture, session tickets), 40 ms RTT," \
    "median of $RUNS runs (best..worst)"
  printf '%-12s %-11s %-5s %-8s %-19s %-6s %-5s %-6s %-7s %s\n' state server TLS "wall ms" ratio stair bad conns resumed pre
  local state srv run skipped=()
  for state in "${STATE_LIST[@]}"; do
    if [ "$state" = first-slow ] && ! slow_cpu_group; then
      echo "first-slow   skipped: no writable cgroup CPU controller (needs root)"
      skipped+=("$state")
      continue
    fi
    for srv in "${SRV_LIST[@]}"; do
      local w=() r=() s=() cn=() rs=() pr=() bad=0 tls='?' a b c d e f g h note
      for run in $(seq 1 "$RUNS"); do
        read -r a b c d e f g h < <(burst_state_once "$srv" "$state")
        tsv "$state" "$srv" "$run" "$e" "$a" "$b" "$c" "$d" "$f" "$g" "$h" >>"$WORK/states-runs.tsv"
        w+=("$a") r+=("$b") s+=("$c") cn+=("$f") rs+=("$g") pr+=("$h")
        bad=$((bad + ${d:-30}))
        tls=$e
      done
      note=
      case $state in
        first | first-slow | serial-first | idle-closed)
          for h in "${pr[@]}"; do
            if [ "$h" != 0 ]; then note="  NOT in this state: sessions open before the burst (pre)"; fi
          done
          ;;
      esac
      printf '%-12s %-11s %-5s %-8s %-19s %-6s %-5s %-6s %-7s %s%s\n' "$state" "$srv" "$tls" "$(median "${w[@]}")" \
        "$(stats "${r[@]}")" "$(stats "${s[@]}" | cut -d' ' -f1)" "$bad" "$(median "${cn[@]}")" "$(median "${rs[@]}")" \
        "$(echo "${pr[@]}" | tr ' ' ,)" "$note"
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$state" "$srv" "$tls" "$(stats "${r[@]}")" "$bad" "$(median "${cn[@]}")" \
        "$(echo "${pr[@]}" | tr ' ' ,)" >>"$OUT/states.tsv"
    done
  done
  slow_cpu_cleanup
  run_result states --table "runs=$WORK/states-runs.tsv" --param names=30 --param rtt_ms=40 \
    --param "idle_close_ms=$STATE_IDLE_MS" --param "settle_ms=$STATE_SETTLE_MS" \
    --param "slow_cpu_percent=$SLOW_CPU_PERCENT" --param "skipped=${skipped[*]}" \
    --param "fixture_flags=${BENCH_FIXTURE_FLAGS[*]} --session-tickets"
  echo "ratio = burst wall / one warm query of the same run; bad = SERVFAIL + timeouts + other errors over all runs;"
  echo "conns = TLS connections the fixture accepted in one run (all bursts of the row); resumed = of those, resumed"
  echo "from a session ticket (counted when the handshake completed: headroom dials still under way when the"
  echo "forwarder stops are not); pre = fixture connections open just before the measured burst, per run, after a"
  echo "${STATE_SETTLE_MS} ms quiet settle from start. first-slow: as first, every forwarder held to ${SLOW_CPU_PERCENT} % of one core"
  echo "(cgroup CPU quota, ${SLOW_CPU_PERIOD_US} us period). States: see bench/states.sh (and docs/performance.md, 'Bursts by daemon state')."
}
