# shellcheck shell=bash
# shellcheck disable=SC2154  # FIX_PORT_* and RELAY_PORT_* are set by start_fixture / start_relay (printf -v)
# bench/run.sh section "handshake": instructions on the
# daemon's loop per cold handshake, per reconnect (resumed) and per
# one-session burst, counted by callgrind in the daemon process the way
# section "cpu" counts them per query. Sourced by bench/run.sh after
# tests/integration/lib.sh and bench/lib.sh; also runs alone:
#
#   bash bench/handshake_cpu.sh TREE228 [TREE36]   (build trees of nxdns)
#   HS_CHAINS="ecdsa rsa" HS_SERVERS=nxdns-2.28,nxdns-3.6 (the defaults)
#
# Method. One fixture (session tickets on, idle close after HS_IDLE_MS) and
# one nxdns under callgrind, one DoT upstream, no added latency. Counters are
# zeroed, then each step runs and is dumped on its own (a dump zeroes):
#   cold      one query, no session yet: TCP + full TLS handshake + query
#   warm      one query on the session just opened
#   reconnect after the fixture closed the idle session: TCP + resumed
#             handshake + query
#   burst     30 unique names at once on the one open session (the "one
#             open session" state of the burst table: whatever sessions
#             placement dials are in it)
# handshake = step - warm: the query's own cost taken out. The kinds are
# read back from nxdns_upstream_tls_handshakes_total, so a "reconnect" row
# that did not resume says so. User-space instructions only (callgrind does
# not see the kernel's TCP work); the fixture's own CPU is not counted.
#
# Each row runs once per certificate chain in HS_CHAINS (default "ecdsa
# rsa"): ecdsa is the test PKI (P-256 CA and leaf), rsa an RSA-2048 CA and
# leaf made by openssl, so the handshake's public-key work is measured both
# with and without ECDSA verification. The "openssl" row is the same full
# handshake done by OpenSSL's client (`openssl s_time -new`, TLS 1.3, chain
# verified against the same CA), under callgrind for two durations: its
# instructions per handshake are the difference of the two totals over the
# difference of their handshake counts, so process start-up cancels out.
# Its "Ir cold q" column is that figure; s_time's own user-CPU rate (not
# under callgrind) is printed beside it.
# Long enough that the cold and warm steps (callgrind_control takes a second
# or two per dump on a loaded machine) finish on the one session.
HS_IDLE_MS=${HS_IDLE_MS:-8000}

hs_minus() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "-"; else printf "%.0f", a - b }'; }
hs_metric() {  # hs_metric HTTP_ADDR:PORT KIND -> nxdns_upstream_tls_handshakes_total{kind=KIND}
  curl -s --max-time 5 "http://$1/metrics" |
    sed -n "s/^nxdns_upstream_tls_handshakes_total{[^}]*kind=\"$2\"} \([0-9]*\).*/\1/p" | head -n1
}
# Pi 4 estimate (see docs/performance.md, "Handshake CPU"): a model, not a
# measurement. ms = Ir x R / (IPC x 1.5 GHz), with R = AArch64 / x86-64
# instructions for the same work in 1.0..1.5 (bignum: AArch64 needs mul +
# umulh where x86-64 has one mul) and the Cortex-A72's IPC on this code in
# 1.5..0.8 (3-wide, one multiply pipeline). Printed as best..worst.
hs_pi_ms() {
  awk -v ir="$1" 'BEGIN { if (ir == "-" || ir == "" || ir < 0) { print "-"; exit }
    printf "%.1f..%.1f", ir * 1.0 / (1.5e9 * 1.5) * 1000, ir * 1.5 / (1.5e9 * 0.8) * 1000 }'
}

# hs_rsa_pki DIR NAME: ca.pem, server.pem, server.key (RSA-2048, SHA-256),
# the layout nxdns-test-pki writes.
hs_rsa_pki() {
  local d=$1 name=$2
  mkdir -p "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -keyout "$d/ca.key" -out "$d/ca.pem" \
    -subj "/O=nxdns test/CN=nxdns test RSA CA" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign" 2>/dev/null &&
  openssl req -newkey rsa:2048 -nodes -sha256 -keyout "$d/server.key" -out "$d/server.csr" \
    -subj "/O=nxdns test/CN=$name" 2>/dev/null &&
  openssl x509 -req -sha256 -days 30 -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
    -extfile <(printf 'subjectAltName=DNS:%s\nbasicConstraints=CA:FALSE\n' "$name") -out "$d/server.pem" 2>/dev/null
}

# hs_openssl_once CHAIN: the "openssl" row (see the header).
hs_openssl_once() {
  local chain=$1 pki=$WORK/pki-$1 mark t n ir n1 ir1 n2 ir2 rate
  mark=$(pids_mark)
  start_fixture hs "$pki"
  for t in 3 9; do
    n=$(valgrind --tool=callgrind "--callgrind-out-file=$WORK/hs-openssl-$chain-$t.out" --collect-systime=no \
          openssl s_time -connect "127.0.0.1:$FIX_PORT_hs" -new -tls1_3 -verify 2 -CAfile "$pki/ca.pem" \
          -time "$t" 2>/dev/null | sed -n 's/^\([0-9]*\) connections in.*/\1/p' | head -n1)
    ir=$(ir_of "$WORK/hs-openssl-$chain-$t.out")
    if [ "$t" = 3 ]; then n1=$n ir1=$ir; else n2=$n ir2=$ir; fi
  done
  rate=$(openssl s_time -connect "127.0.0.1:$FIX_PORT_hs" -new -tls1_3 -verify 2 -CAfile "$pki/ca.pem" -time 3 2>/dev/null |
           sed -n 's/.*; *\([0-9.]*\) connections\/user sec.*/\1/p' | head -n1)
  local per
  per=$(awk -v a="$ir1" -v b="$ir2" -v m="$n1" -v k="$n2" 'BEGIN {
    if (a == "" || b == "" || m == "" || k == "" || k <= m) print "-"; else printf "%.0f", (b - a) / (k - m) }')
  printf '%-11s %-6s %-4s %-12s %-10s %-14s %-12s %-16s %-12s %-8s %s\n' openssl "$chain" "$(fixture_tls "$WORK/hs.stats")" \
    "$per" - "$per" - - - - "handshakes=${n1:-?}+${n2:-?} user-cpu=$(awk -v r="$rate" 'BEGIN { if (r > 0) printf "%.3f ms/handshake", 1000 / r; else print "?" }')"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "openssl-$chain" "$per" - - "$(hs_pi_ms "$per")" - >>"$WORK/hs.tsv"
  tsv openssl "$chain" "$(fixture_tls "$WORK/hs.stats")" - - - - "$per" - "${n1:--}" - - - - \
    "$(awk -v r="$rate" 'BEGIN { if (r > 0) printf "%.3f", 1000 / r; else print "-" }')" >>"$WORK/hs-rows.tsv"
  pids_release "$mark"
}

# handshake_once SERVER CHAIN: one row of figures for one nxdns line.
handshake_once() {
  local srv=$1 chain=$2 pki=$WORK/pki-$2 mark addr http=18054 i cold warm recon burst full resumed base
  mark=$(pids_mark)
  start_fixture hs "$pki" --session-tickets --idle-close-ms "$HS_IDLE_MS"
  addr=$(pick_loopback)
  callgrind_server_start "$WORK/hs-$srv-$chain" "$srv" "$addr" 5300 "$FIX_PORT_hs" "$pki" "$http" ||
    { pids_release "$mark"; echo "$srv: did not start"; return; }
  # The HTTP surface answers before any DNS query (no upstream session yet).
  for i in $(seq 1 100); do curl -s -o /dev/null --max-time 1 "http://$addr:$http/api/health" && break; sleep 0.1; done
  callgrind_control -z "$SRV_PID" >/dev/null 2>&1
  dig @"$addr" -p 5300 +tries=1 +time=20 cold.hs.test >/dev/null 2>&1
  callgrind_control -d "$SRV_PID" >/dev/null 2>&1
  dig @"$addr" -p 5300 +tries=1 +time=20 warm.hs.test >/dev/null 2>&1
  callgrind_control -d "$SRV_PID" >/dev/null 2>&1
  sleep 0.1
  local warm_accepts
  warm_accepts=$(stat "$WORK/hs.stats" accepts)
  # The fixture closes the idle session; the daemon notices the close at once.
  sleep "$(awk -v m="$HS_IDLE_MS" 'BEGIN { print m / 1000 + 1.5 }')"
  callgrind_control -z "$SRV_PID" >/dev/null 2>&1
  dig @"$addr" -p 5300 +tries=1 +time=20 recon.hs.test >/dev/null 2>&1
  callgrind_control -d "$SRV_PID" >/dev/null 2>&1
  timeout 60 "$NXDNS" burst --server "$addr:5300" --names 30 --zone hsburst.test --json >"$WORK/hs-burst.json" 2>/dev/null
  callgrind_control -d "$SRV_PID" >/dev/null 2>&1
  full=$(hs_metric "$addr:$http" full)
  resumed=$(hs_metric "$addr:$http" resumed)
  server_stop
  sleep 0.1
  base=$(ls "$WORK/hs-$srv-$chain".*.1 2>/dev/null | head -n1)
  base=${base%.1}
  cold=$(ir_of "$base.1")
  warm=$(ir_of "$base.2")
  recon=$(ir_of "$base.3")
  burst=$(ir_of "$base.4")
  printf '%-11s %-6s %-4s %-12s %-10s %-14s %-12s %-16s %-12s %-8s %s\n' "$srv" "$chain" "$(fixture_tls "$WORK/hs.stats")" \
    "${cold:--}" "${warm:--}" "$(hs_minus "$cold" "$warm")" "${recon:--}" "$(hs_minus "$recon" "$warm")" \
    "${burst:--}" "$(awk -v b="$burst" 'BEGIN { if (b == "") print "-"; else printf "%.0f", b / 30 }')" \
    "warm-on-1-session=$([ "$warm_accepts" = 1 ] && echo yes || echo "NO($warm_accepts)") full=${full:-?} resumed=${resumed:-?} accepts=$(stat "$WORK/hs.stats" accepts) fixture-resumptions=$(stat "$WORK/hs.stats" resumptions)"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$srv-$chain" "$(hs_minus "$cold" "$warm")" "$(hs_minus "$recon" "$warm")" "$burst" \
    "$(hs_pi_ms "$(hs_minus "$cold" "$warm")")" "$(hs_pi_ms "$(hs_minus "$recon" "$warm")")" >>"$WORK/hs.tsv"
  tsv "$srv" "$chain" "$(fixture_tls "$WORK/hs.stats")" "${cold:--}" "${warm:--}" "${recon:--}" "${burst:--}" \
    "$(hs_minus "$cold" "$warm")" "$(hs_minus "$recon" "$warm")" "${full:--}" "${resumed:--}" \
    "$(stat "$WORK/hs.stats" accepts)" "$(stat "$WORK/hs.stats" resumptions)" \
    "$([ "$warm_accepts" = 1 ] && echo yes || echo no)" - >>"$WORK/hs-rows.tsv"
  if [ -f "$base.1" ]; then
    cp "$base.1" "$OUT/callgrind-handshake-cold-$srv-$chain.out"
    callgrind_annotate --inclusive=yes "$base.1" >"$OUT/profile-handshake-cold-$srv-$chain.txt" 2>/dev/null
    callgrind_annotate --threshold=100 "$base.1" >"$OUT/profile-handshake-cold-$srv-$chain-self.txt" 2>/dev/null
  fi
  if [ -f "$base.3" ]; then
    callgrind_annotate --threshold=100 "$base.3" >"$OUT/profile-handshake-reconnect-$srv-$chain-self.txt" 2>/dev/null
  fi
  pids_release "$mark"
}

section_handshake() {
  local chain srv p
  for chain in ${HS_CHAINS:-ecdsa rsa}; do
    case $chain in
      ecdsa) make_pki "$WORK/pki-ecdsa" dot.test ;;
      rsa) hs_rsa_pki "$WORK/pki-rsa" dot.test || { echo "handshake: cannot make the RSA chain (openssl)"; return; } ;;
      *) echo "handshake: unknown chain '$chain' in HS_CHAINS (ecdsa, rsa)"; return ;;
    esac
  done
  : >"$WORK/hs.tsv"
  # One row per client and chain; openssl's: full handshake only, and
  # "full" is the handshakes of its shorter callgrind run.
  tsv server chain tls ir_cold_query ir_warm_query ir_reconnect_query ir_burst ir_full_handshake \
    ir_resumed_handshake full resumed accepts fixture_resumptions warm_on_one_session user_ms_per_handshake \
    >"$WORK/hs-rows.tsv"
  echo
  echo "== handshake CPU: instructions in the daemon per cold handshake, per resumed reconnect, per one-session burst (callgrind)"
  printf '%-11s %-6s %-4s %-12s %-10s %-14s %-12s %-16s %-12s %-8s %s\n' server chain TLS "Ir cold q" "Ir warm q" \
    "Ir handshake" "Ir reconn q" "Ir resumed hs" "Ir burst" "Ir/q" "check"
  for chain in ${HS_CHAINS:-ecdsa rsa}; do
    for srv in "${SRV_LIST[@]}"; do
      [[ $srv == nxdns-* ]] || continue
      handshake_once "$srv" "$chain"
    done
    command -v openssl >/dev/null && hs_openssl_once "$chain"
  done
  echo "handshake = cold (or reconnect) query - warm query; burst = 30 names on the one open session"
  echo "check: the daemon's handshake counters and the fixture's accepts/resumptions (reconnect must be resumed)"
  echo "openssl: instructions per full handshake of openssl s_time -new (TLS 1.3), see bench/handshake_cpu.sh"
  echo
  echo "-- Pi 4 estimate (model: Cortex-A72 1.5 GHz, IPC 1.5..0.8, AArch64/x86-64 instructions 1.0..1.5):"
  printf '%-18s %-22s %s\n' server-chain "cold handshake ms" "resumed handshake ms"
  awk -F'\t' '{ printf "%-18s %-22s %s\n", $1, $5, $6 }' "$WORK/hs.tsv"
  cp "$WORK/hs.tsv" "$OUT/handshake.tsv"
  local nx=()
  for srv in "${SRV_LIST[@]}"; do [[ $srv == nxdns-* ]] && nx+=("$srv"); done
  SRV_LIST=("${nx[@]}")  # only nxdns and openssl have rows
  run_result handshake --table "rows=$WORK/hs-rows.tsv" --peer valgrind --peer openssl \
    --param "chains=${HS_CHAINS:-ecdsa rsa}" --param "idle_close_ms=$HS_IDLE_MS" --param burst_names=30
  for chain in ${HS_CHAINS:-ecdsa rsa}; do
    for srv in "${SRV_LIST[@]}"; do
      p="$OUT/profile-handshake-cold-$srv-$chain-self.txt"
      [ -f "$p" ] || continue
      echo
      echo "-- $srv, $chain chain: top functions by own instructions, cold query (share of the window)"
      top_functions "$p" 8
    done
  done
}

# Alone: bash bench/handshake_cpu.sh TREE... (loopback only; no namespace).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  ROOT=$(cd "$(dirname "$0")/.." && pwd)
  [ $# -ge 1 ] || { echo "usage: bash bench/handshake_cpu.sh TREE [TREE]" >&2; exit 2; }
  T228=$1
  T36=${2:-}
  export NXDNS="$T228/src/cli/nxdns" FIXTURES="${T36:-$T228}/tests/fixtures"
  # shellcheck source=tests/integration/lib.sh
  source "$ROOT/tests/integration/lib.sh" >/dev/null
  set +e
  # shellcheck source=bench/lib.sh
  source "$ROOT/bench/lib.sh"
  OUT=${OUT:-$WORK/out}
  mkdir -p "$OUT"
  SRV_LIST=(nxdns-2.28)
  [ -n "$T36" ] && SRV_LIST+=(nxdns-3.6)
  # HS_SERVERS=nxdns-3.6 measures one line only (e.g. two 3.6 builds of
  # the library, one run each).
  [ -n "${HS_SERVERS:-}" ] && IFS=, read -r -a SRV_LIST <<<"$HS_SERVERS"
  section_handshake
  echo "raw files: $OUT (KEEP_WORK=1 keeps them)"
fi
