#!/usr/bin/env bash
# What a name answered at home costs, beside a cached answer and beside
# dnsmasq answering the same hosts file, in one run on loopback:
#   nxdns  records   names of a hosts file (local records: AA, built here)
#   nxdns  special   x.invalid and private PTRs (a zone answered here)
#   nxdns  cached    names in the answer cache (the bar to meet)
#   dnsmasq hosts    the same hosts file through --addn-hosts
# Each is dnsperf, one client thread, -q 100 outstanding, for --seconds,
# rounds taken in turn (A B C D A B C D ...) so a change of the shared
# machine's load hits each alike; the median round is printed with the
# server's CPU per 1,000 answers (utime+stime around the run).
#
# usage: bench/local_names.sh BUILD_DIR [--seconds S] [--rounds N] [--results DIR]
# --results DIR: every round also goes to DIR/local_names.json (bench/bench_result.py).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH_COMMAND="bash bench/local_names.sh $*"
BUILD=${1:?usage: $0 BUILD_DIR [--seconds S] [--rounds N]}
shift
SECS=4 ROUNDS=3
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) SECS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --results) BENCH_RESULTS=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=../tests/integration/lib.sh
source "$HERE/../tests/integration/lib.sh" "$BUILD/src/cli/nxdns" "$BUILD/tests/fixtures"
# shellcheck source=lib.sh
source "$HERE/lib.sh"
for tool in dnsperf dnsmasq; do require_program "$tool" "Debian: apt-get install dnsperf dnsmasq-base"; done

make_pki "$WORK/pki" dot.test
start_fixture up "$WORK/pki"
ADDR=$(pick_loopback)
MADDR=$(pick_loopback)
NAMES=200
for i in $(seq 1 "$NAMES"); do echo "192.168.$((i / 250)).$((i % 250 + 1)) host$i.home.arpa"; done >"$WORK/hosts"
awk '{print $2 " A"}' "$WORK/hosts" >"$WORK/q-records"
for i in $(seq 1 "$NAMES"); do echo "x$i.invalid A"; echo "$i.1.10.in-addr.arpa PTR"; done >"$WORK/q-special"
for i in $(seq 1 "$NAMES"); do echo "c$i.cached.test A"; done >"$WORK/q-cached"

nxdns_yaml "$WORK/nxdns.yaml" "$ADDR" 5300 "$FIX_PORT_up" "$WORK/pki"
cat >>"$WORK/nxdns.yaml" <<YAML
home_router: "off"
hosts_files: ["$WORK/hosts"]
YAML
nxdns_run "$BUILD" "$WORK/nxdns.yaml" "$WORK/nxdns.log"
NX_PID=$SRV_PID
wait_tcp "$ADDR" 5300 "$NX_PID" 10 || fail "nxdns did not start"
dnsmasq --no-daemon --no-resolv --no-hosts --port 5301 --listen-address "$MADDR" --bind-interfaces \
  --addn-hosts "$WORK/hosts" --local-ttl 60 >"$WORK/dnsmasq.log" 2>&1 &
DM_PID=$!
PIDS+=("$DM_PID")
for i in $(seq 1 100); do dig @"$MADDR" -p 5301 +short host1.home.arpa >/dev/null 2>&1 && break; sleep 0.05; done
[ "$(dig @"$MADDR" -p 5301 +short host1.home.arpa)" = 192.168.0.2 ] || fail "dnsmasq does not answer the hosts file"
[ "$(dig @"$ADDR" -p 5300 +short host1.home.arpa)" = 192.168.0.2 ] || fail "nxdns does not answer the hosts file"
# Warm the cache.
dnsperf -s "$ADDR" -p 5300 -d "$WORK/q-cached" -n 1 -c 1 -T 1 >/dev/null 2>&1

run() {  # run LABEL ADDR PORT PID QUERIES -> "qps cpu_ms_per_1000"
  local out="$WORK/$1.$RANDOM" t0 t1
  t0=$(cpu_ticks "$4")
  dnsperf -s "$2" -p "$3" -d "$5" -l "$SECS" -c 1 -T 1 -q 100 >"$out" 2>&1 || true
  t1=$(cpu_ticks "$4")
  local n q
  n=$(sed -n 's/.*Queries completed:[[:space:]]*\([0-9]*\).*/\1/p' "$out")
  q=$(sed -n 's/.*Queries per second:[[:space:]]*\([0-9.]*\).*/\1/p' "$out")
  awk -v q="$q" -v n="$n" -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" \
    'BEGIN {printf "%.0f %.3f\n", q, (n > 0 ? t / hz * 1000 * 1000 / n : 0)}'
}
declare -A QPS CPU
tsv label round answers_per_s cpu_ms_per_1k >"$WORK/rounds.tsv"
labels=("nxdns-records" "nxdns-special" "nxdns-cached" "dnsmasq-hosts")
for r in $(seq 1 "$ROUNDS"); do
  for l in "${labels[@]}"; do
    case $l in
      nxdns-records) set -- "$ADDR" 5300 "$NX_PID" "$WORK/q-records" ;;
      nxdns-special) set -- "$ADDR" 5300 "$NX_PID" "$WORK/q-special" ;;
      nxdns-cached) set -- "$ADDR" 5300 "$NX_PID" "$WORK/q-cached" ;;
      dnsmasq-hosts) set -- "$MADDR" 5301 "$DM_PID" "$WORK/q-records" ;;
    esac
    read -r q c < <(run "$l" "$@")
    tsv "$l" "$r" "$q" "$c" >>"$WORK/rounds.tsv"
    QPS[$l]+="$q " CPU[$l]+="$c "
  done
done
[ "$(stat "$WORK/up.stats" queries)" -le "$NAMES" ] || fail "local names reached the upstream"
echo "# local names vs a cached answer vs dnsmasq; $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, median of $ROUNDS x ${SECS}s"
printf '%-15s %10s %18s\n' "server/names" "answers/s" "CPU ms / 1000 ans"
for l in "${labels[@]}"; do
  # shellcheck disable=SC2086
  printf '%-15s %10s %18s\n' "$l" "$(median ${QPS[$l]})" "$(median ${CPU[$l]})"
done
result_json local_names --table "rounds=$WORK/rounds.tsv" --nxdns "nxdns=$NXDNS" --peer dnsmasq --peer dnsperf \
  --param "seconds=$SECS" --param "rounds=$ROUNDS" --param "names=$NAMES" --param "dnsperf=-c 1 -T 1 -q 100"
