# Helpers for bench/run.sh (and, through cache_lib.sh, the cache
# benchmarks). Sourced after tests/integration/lib.sh (which
# provides WORK, PIDS, make_pki, start_fixture, start_relay, wait_file, fail,
# pick_loopback, stat). Everything here binds and connects to 127.0.0.0/8
# only; the peers' configurations name no address outside it.
#
# A "server" is one of: nxdns-2.28, nxdns-3.6 (the daemon built against that
# mbedTLS line), unbound, stubby, kresd (Knot Resolver). server_start runs it
# with ONE DoT upstream
# (the fixture at 127.0.0.1:UPPORT, certificate name dot.test, verified
# against the test CA) so every row compares the same work.

# A port no socket of any state holds, UDP or TCP (a connected UDP socket
# is not listed as listening, yet its port cannot be bound).
free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 40000))
    if [ -z "$(ss -Hanu "sport = :$p" 2>/dev/null)" ] && [ -z "$(ss -Hant "sport = :$p" 2>/dev/null)" ]; then
      echo "$p"; return 0
    fi
  done
  return 1
}

BENCH_SERVERS_ALL=(nxdns-2.28 nxdns-3.6 unbound stubby kresd)

tree_of() {  # tree_of SERVER -> build tree of an nxdns server
  case $1 in
    nxdns-2.28) echo "$T228" ;;
    nxdns-3.6) echo "$T36" ;;
    *) return 1 ;;
  esac
}

# wait_tcp ADDR PORT PID SECONDS: until ADDR:PORT accepts a TCP connection.
# A bare connect, no DNS query: a query would open the upstream session and
# spoil the "cold" measurement that follows.
wait_tcp() {
  local addr=$1 port=$2 pid=$3 secs=$4 i
  for i in $(seq 1 $((secs * 20))); do
    if (exec 3<>"/dev/tcp/$addr/$port") 2>/dev/null; then return 0; fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# nxdns_yaml FILE ADDR PORT UPPORT PKI [HTTP_PORT]: one DoT upstream; the
# HTTP surface only when HTTP_PORT is given (the memory figures read
# /metrics; elsewhere it stays off so it costs nothing).
nxdns_yaml() {
  local http="enabled: false"
  [ -n "${6:-}" ] && http=$(printf 'enabled: true\n  listen: "%s:%s"' "$2" "$6")
  cat >"$1" <<YAML
listen:
  - "$2:$3"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "tls://127.0.0.1:$4"
    tls_name: "dot.test"
    ca_file: "$5/ca.pem"
budgets:
  attempt_ms: 2000
  total_ms: 5000
# dnsperf's clients share one source address: under the default per-client
# rate limit the sustained section measured REFUSED answers (99 % of them).
# The peers run without one, so nxdns does here too.
client_limits:
  queries_per_second: 0
http:
  $http
log:
  level: warn
YAML
}

# unbound: a pure forwarder. module-config "iterator" (no validator, so no
# trust anchor and no priming); forward-first: no (the default) so it never
# falls back to recursion; do-not-query-localhost: no because the only
# upstream IS on loopback; local-zone "test." nodefault (below). One thread,
# as nxdns has one (and the machine has few cores). CACHE is its cache, as
# lines under server: (the cache benchmarks pass theirs, bench/cache_lib.sh);
# by default UNBOUND_NO_CACHE: caches shrunk and every TTL capped to 0 — the
# unique names of every workload here defeat caching anyway.
UNBOUND_NO_CACHE='  msg-cache-slabs: 1
  rrset-cache-slabs: 1
  infra-cache-slabs: 1
  key-cache-slabs: 1
  msg-cache-size: 64k
  rrset-cache-size: 64k
  cache-max-ttl: 0
  cache-max-negative-ttl: 0
  prefetch: no'
unbound_conf() {  # unbound_conf FILE DIR ADDR PORT UPPORT PKI [CACHE]
  cat >"$1" <<CONF
server:
  verbosity: 0
  use-syslog: no
  logfile: "$2/unbound.log"
  username: ""
  chroot: ""
  directory: "$2"
  pidfile: "$2/unbound.pid"
  do-daemonize: no
  interface: $3@$4
  port: $4
  outgoing-interface: 127.0.0.1
  do-ip4: yes
  do-ip6: no
  access-control: 127.0.0.0/8 allow
  num-threads: 1
  module-config: "iterator"
  do-not-query-localhost: no
  tls-cert-bundle: "$6/ca.pem"
${7-$UNBOUND_NO_CACHE}
  qname-minimisation: no
  # Every workload queries names under .test, which unbound would otherwise
  # answer itself (RFC 6761 default local zone: NXDOMAIN) without forwarding.
  local-zone: "test." nodefault
forward-zone:
  name: "."
  forward-tls-upstream: yes
  forward-first: no
  forward-addr: 127.0.0.1@$5#dot.test
CONF
}

# stubby (getdns): strict DoT to the one fixture. No DNSSEC option is set, so
# getdns never wants trust anchors (Debian's getdns 1.6 even rejects
# trust_anchors_url: it is built without the anchor fetcher).
stubby_conf() {  # stubby_conf FILE DIR ADDR PORT UPPORT PKI
  cat >"$1" <<YAML
resolution_type: GETDNS_RESOLUTION_STUB
dns_transport_list:
  - GETDNS_TRANSPORT_TLS
tls_authentication: GETDNS_AUTHENTICATION_REQUIRED
tls_ca_file: "$6/ca.pem"
idle_timeout: 10000
round_robin_upstreams: 0
appdata_dir: "$2"
listen_addresses:
  - $3@$4
upstream_recursive_servers:
  - address_data: 127.0.0.1
    tls_port: $5
    tls_auth_name: "dot.test"
YAML
}

# Knot Resolver (kresd 5.x) as a pure TLS forwarder to the fixture:
# policy.TLS_FORWARD with the test CA and name, DNSSEC validation off (no
# trust anchor: the fixture's .test answers are unsigned, and the other
# peers do not validate either), one process, a small cache of its own.
kresd_conf() {  # kresd_conf FILE DIR ADDR PORT UPPORT PKI
  cat >"$1" <<CONF
net.listen('$3', $4, { kind = 'dns' })
net.ipv6 = false
trust_anchors.remove('.')
cache.open(16 * MB, 'lmdb://$2/cache')
policy.add(policy.all(policy.TLS_FORWARD({ { '127.0.0.1@$5', hostname = 'dot.test', ca_file = '$6/ca.pem' } })))
CONF
}

# server_start SERVER ADDR PORT UPPORT PKI [HTTP_PORT]: starts it in the
# background (prefixed by "${SRV_WRAP[@]}" when set, e.g. valgrind), waits
# until it accepts TCP on ADDR:PORT. Sets SRV_PID and SRV_DIR.
SRV_WRAP=()
server_start() {
  local srv=$1 addr=$2 port=$3 up=$4 pki=$5 http=${6:-}
  SRV_DIR="$WORK/srv-$srv-$addr-$port-$RANDOM"
  mkdir -p "$SRV_DIR"
  case $srv in
    nxdns-*)
      nxdns_yaml "$SRV_DIR/c.yaml" "$addr" "$port" "$up" "$pki" "$http"
      "${SRV_WRAP[@]}" "$(tree_of "$srv")/src/cli/nxdns" run -c "$SRV_DIR/c.yaml" >"$SRV_DIR/log" 2>&1 &
      ;;
    unbound)
      unbound_conf "$SRV_DIR/unbound.conf" "$SRV_DIR" "$addr" "$port" "$up" "$pki"
      unbound-checkconf "$SRV_DIR/unbound.conf" >"$SRV_DIR/checkconf" 2>&1 ||
        { cat "$SRV_DIR/checkconf" >&2; return 1; }
      "${SRV_WRAP[@]}" unbound -d -c "$SRV_DIR/unbound.conf" >"$SRV_DIR/log" 2>&1 &
      ;;
    stubby)
      stubby_conf "$SRV_DIR/stubby.yml" "$SRV_DIR" "$addr" "$port" "$up" "$pki"
      "${SRV_WRAP[@]}" stubby -C "$SRV_DIR/stubby.yml" >"$SRV_DIR/log" 2>&1 &
      ;;
    kresd)
      kresd_conf "$SRV_DIR/kresd.conf" "$SRV_DIR" "$addr" "$port" "$up" "$pki"
      "${SRV_WRAP[@]}" kresd -n -q -c "$SRV_DIR/kresd.conf" "$SRV_DIR" >"$SRV_DIR/log" 2>&1 &
      ;;
    *) echo "unknown server $srv" >&2; return 1 ;;
  esac
  SRV_PID=$!
  PIDS+=("$SRV_PID")
  local secs=10
  [ ${#SRV_WRAP[@]} -gt 0 ] && secs=60
  if ! wait_tcp "$addr" "$port" "$SRV_PID" "$secs"; then
    echo "$srv did not start listening on $addr:$port; its log:" >&2
    tail -n 20 "$SRV_DIR/log" >&2
    [ -f "$SRV_DIR/unbound.log" ] && tail -n 20 "$SRV_DIR/unbound.log" >&2
    return 1
  fi
}

# nxdns_run TREE YAML LOG: that build tree's nxdns on YAML in the background
# (SRV_PID, and PIDS for the exit trap), for sections that write a
# configuration of their own instead of nxdns_yaml's.
nxdns_run() {
  "$1/src/cli/nxdns" run -c "$2" >"$3" 2>&1 &
  SRV_PID=$!
  PIDS+=("$SRV_PID")
}

server_stop() {  # server_stop: SIGTERM and reap SRV_PID (bounded: 20 s, then SIGKILL)
  kill -TERM "$SRV_PID" 2>/dev/null || return 0
  local i
  for i in $(seq 1 200); do
    kill -0 "$SRV_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$SRV_PID" 2>/dev/null || true
  wait "$SRV_PID" 2>/dev/null || true
}

# TLS version and connection count the fixture saw (its stats file).
fixture_tls() {  # fixture_tls STATS_FILE -> "1.3" | "1.2" | "?"
  local t13 t12
  t13=$(stat "$1" tls13_handshakes)
  t12=$(stat "$1" tls12_handshakes)
  if [ "${t13:-0}" -gt 0 ] && [ "${t12:-0}" -eq 0 ]; then echo 1.3
  elif [ "${t12:-0}" -gt 0 ] && [ "${t13:-0}" -eq 0 ]; then echo 1.2
  elif [ "${t12:-0}" -gt 0 ]; then echo mixed
  else echo "?"; fi
}

# dnsperf_rcode FILE RCODE -> answers with that rcode in a dnsperf report
# ("" when none).
dnsperf_rcode() { sed -n "s/.*Response codes:.*$2 \([0-9]*\).*/\1/p" "$1" | head -n1; }
# dnsperf_noerror_qps FILE -> NOERROR answers per second of a dnsperf report
# (its "Queries per second" counts every rcode).
dnsperf_noerror_qps() {
  awk -v n="$(dnsperf_rcode "$1" NOERROR)" '/Queries completed/ {c = $3} /Queries per second/ {q = $4}
    END {printf "%.0f", (c > 0 ? q * n / c : 0)}' "$1"
}

jfield() {  # jfield JSON KEY -> numeric value
  sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" <<<"$1" | head -n1
}

# stats VALUES... -> "median (best..worst)"; "-" when there is no value.
stats() {
  local v=()
  for x in "$@"; do [ -n "$x" ] && v+=("$x"); done
  [ ${#v[@]} -eq 0 ] && { echo "-"; return; }
  printf '%s\n' "${v[@]}" | sort -g | awk '{v[NR]=$1} END {m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2;
    if (NR == 1) printf "%.2f", m; else printf "%.2f (%.2f..%.2f)", m, v[1], v[NR]}'
}
median() {  # median VALUES... -> median only
  local v=()
  for x in "$@"; do [ -n "$x" ] && v+=("$x"); done
  [ ${#v[@]} -eq 0 ] && { echo "-"; return; }
  printf '%s\n' "${v[@]}" | sort -g | awk '{v[NR]=$1} END {m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2;
    printf "%.0f", m}'
}

rss_kib() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status"; }
hwm_kib() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$1/status"; }
mib() { awk -v k="$1" 'BEGIN { if (k == "") print "-"; else printf "%.1f", k / 1024 }'; }

# CPU time (user+system) of a process in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null; }

# names FILE COUNT TAG: COUNT unique A queries under perf.test for dnsperf.
gen_names() {
  awk -v n="$2" -v tag="$3" 'BEGIN { for (i = 0; i < n; i++) printf "q%d-%s.perf.test A\n", i, tag }' >"$1"
}

# open_sessions HTTP_ADDR:PORT UPSTREAM_INDEX -> nxdns_upstream_open_sessions
open_sessions() {
  curl -s --max-time 2 "http://$1/metrics" |
    sed -n "s/^nxdns_upstream_open_sessions{upstream=\"$2\"[^}]*} \([0-9]*\).*/\1/p" | head -n1
}

# smaps_summary PID: where the resident memory is. First line: private
# anonymous (heap, stacks: what the process itself allocated) vs file-backed
# (program and shared-library pages, mostly shared with other processes);
# then the RSS of the largest mappings by name.
# RSS counts every resident page mapped, shared library pages in full; PSS
# divides each page by the number of processes mapping it (what this process
# costs on this machine, given what else runs).
smaps_summary() {
  awk '
    /^[0-9a-f]+-[0-9a-f]+ / { name = (NF >= 6) ? $6 : "[anon]"; next }
    /^Rss:/ { rss[name] += $2; if (name ~ /^\//) file += $2; else anon += $2 }
    /^Pss:/ { pss += $2; if (name ~ /^\//) pfile += $2 }
    END {
      printf "anon+heap+stack %.1f MiB, file-backed (binary+libraries) %.1f MiB; PSS %.1f MiB (file-backed share %.1f MiB)\n",
        anon / 1024, file / 1024, pss / 1024, pfile / 1024
      for (n in rss) printf "%8d KiB  %s\n", rss[n], n | "sort -rn | head -n 12"
    }' "/proc/$1/smaps"
}

# smaps_kib PID -> "anon_kib file_kib pss_kib": smaps_summary's first line as
# figures (private anonymous and file-backed resident KiB, and PSS).
smaps_kib() {
  awk '
    /^[0-9a-f]+-[0-9a-f]+ / { name = (NF >= 6) ? $6 : "[anon]"; next }
    /^Rss:/ { if (name ~ /^\//) file += $2; else anon += $2 }
    /^Pss:/ { pss += $2 }
    END { printf "%d %d %d\n", anon, file, pss }' "/proc/$1/smaps"
}

# ------------------------------------------------------ callgrind windows
# bench/run.sh's "cpu" section and bench/handshake_cpu.sh count the daemon's
# user-space instructions the same way: the daemon under callgrind, counters
# zeroed (callgrind_control -z), one step run, dumped (-d; a dump zeroes).

# Processes started since a mark are stopped together (a measurement's
# fixture, relay and server), so nothing of one row survives into the next.
pids_mark() { echo "${#PIDS[@]}"; }
pids_release() {
  local i
  for ((i = $1; i < ${#PIDS[@]}; i++)); do kill "${PIDS[$i]}" 2>/dev/null; done
  for ((i = $1; i < ${#PIDS[@]}; i++)); do wait "${PIDS[$i]}" 2>/dev/null; done
  PIDS=("${PIDS[@]:0:$1}")
}

# callgrind_server_start OUT_PREFIX SERVER ADDR PORT UPPORT PKI [HTTP_PORT]:
# server_start with the server under callgrind (no per-instruction data, no
# system time); its dumps are OUT_PREFIX.PID.1, .2, ... in dump order.
callgrind_server_start() {
  local out=$1 rc
  shift
  SRV_WRAP=(valgrind --tool=callgrind "--callgrind-out-file=$out.%p" --dump-instr=no --collect-systime=no)
  server_start "$@"
  rc=$?
  SRV_WRAP=()
  return $rc
}

# ir_of DUMP: the instructions a callgrind dump counted.
ir_of() { sed -n 's/^\(summary\|totals\): *\([0-9]*\).*/\2/p' "$1" | head -n1; }

# top_functions ANNOTATE_FILE N: "share  Ir  function (object)" of the N
# costliest functions, the share computed against the program total.
top_functions() {
  awk -v n="$2" '
    /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 + 0; next }
    /file:function/ { body = 1; next }
    body && /^ *[0-9][0-9,]* / {
      ir = $1; gsub(",", "", ir); ir = ir + 0
      line = $0; sub(/^ *[0-9,]+ +(\([^)]*\) +)?/, "", line)
      # Frames on the stack when callgrind dumps (main, the event loop) are
      # listed with the whole window as their cost: not own work, skip them.
      if (total > 0 && ir >= 0.99 * total) next
      if (total > 0 && shown < n) { printf "  %5.1f%%  %12s  %s\n", 100 * ir / total, $1, line; shown++ }
    }' "$1"
}

# ------------------------------------------------------------ result files
# A bench run also writes its figures as one JSON file per bench into
# BENCH_RESULTS (bench/run.sh --results DIR, or the variable for the scripts
# that run alone), through bench/bench_result.py; bench/render_performance.py
# renders docs/performance.md's tables from those files. The records stay raw
# (every run or round), the renderer takes medians.
BENCH_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_RESULTS=${BENCH_RESULTS:-}
# The load average when the bench began (bench/run.sh sets it per section).
BENCH_LOAD0=${BENCH_LOAD0:-$(cut -d' ' -f1-3 /proc/loadavg)}
BENCH_COMMAND=${BENCH_COMMAND:-}

# result_json BENCH ARGS...: BENCH.json in BENCH_RESULTS (nothing when it is
# empty); ARGS go to bench_result.py (--table NAME=TSV, --jsonl, --param
# KEY=VALUE, --nxdns LABEL=BINARY, --peer NAME). A failure to write is said,
# and does not fail the measurement.
result_json() {
  [ -n "$BENCH_RESULTS" ] || return 0
  local bench=$1
  shift
  mkdir -p "$BENCH_RESULTS"
  python3 "$BENCH_HOME/bench_result.py" --bench "$bench" --out "$BENCH_RESULTS/$bench.json" \
    --load-start "$BENCH_LOAD0" ${BENCH_COMMAND:+--command "$BENCH_COMMAND"} "$@" ||
    echo "bench: could not write $BENCH_RESULTS/$bench.json" >&2
  [ -f "$BENCH_RESULTS/$bench.json" ] && echo "result: $BENCH_RESULTS/$bench.json"
  return 0
}

# result_servers: bench_result.py's version arguments for SRV_LIST (the
# nxdns builds T228 / T36 and the peers), as lines for mapfile.
result_servers() {
  local srv
  for srv in "${SRV_LIST[@]}"; do
    case $srv in
      nxdns-*) printf '%s\n' --nxdns "$srv=$(tree_of "$srv")/src/cli/nxdns" ;;
      stubby) printf '%s\n' --peer stubby --peer getdns ;;
      *) printf '%s\n' --peer "$srv" ;;
    esac
  done
}

# run_result BENCH ARGS...: result_json with the versions of the servers in
# SRV_LIST, and from bench/run.sh the isolation and the burst repetitions.
run_result() {
  local bench=$1 servers=() extra=()
  shift
  mapfile -t servers < <(result_servers)
  [ -n "${BENCH_ISOLATION:-}" ] && extra+=(--isolation "$BENCH_ISOLATION")
  [ -n "${RUNS:-}" ] && extra+=(--param "runs=$RUNS")
  result_json "$bench" "${extra[@]}" "${servers[@]}" "$@"
}

# tsv LINE_FIELDS...: one tab-separated line.
tsv() { (IFS=$'\t'; printf '%s\n' "$*"); }
