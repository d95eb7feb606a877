# shellcheck shell=bash
# bench/run.sh section "doh": nxdns's DoH bursts (HTTP/2 through nghttpx and
# HTTP/1.1 straight to the fixture). Sourced by bench/run.sh after
# tests/integration/lib.sh and bench/lib.sh; uses run.sh's header, bad_count
# and the server list.
# --------------------------------------------------------------------- DoH
# nxdns only: neither unbound 1.17 nor stubby forwards over DoH. Paths:
#   h2: relay (RTT) -> nghttpx (TLS, HTTP/2) -> DoH fixture (plain HTTP/1.1).
#       Cold also includes nghttpx opening its backend connections, which a
#       real DoH server does not have to do.
#   h1: relay (RTT) -> DoH fixture (TLS, HTTP/1.1 only: libmicrohttpd), so
#       curl opens up to 8 connections (slots_per_entry) and a burst of 30
#       runs in ~4 rounds.
doh_once() {  # doh_once SERVER RTT h2|h1 -> same fields as burst_once
  local srv=$1 rtt=$2 proto=$3 mark addr cold warm bad ngx_port ngx_pid up=0 tree front
  mark=$(pids_mark)
  # shellcheck disable=SC2064  # expanded now on purpose: $mark is a local
  trap "pids_release $mark" EXIT
  tree=$(tree_of "$srv") || return 1
  rm -f "$WORK/dohfx.port"
  if [ "$proto" = h1 ]; then
    fx_exec nxdns-fixture-doh --listen 127.0.0.1:0 --port-file "$WORK/dohfx.port" \
      --cert "$WORK/dohpki/server.pem" --key "$WORK/dohpki/server.key" >"$WORK/dohfx.log" 2>&1 &
  else
    fx_exec nxdns-fixture-doh --listen 127.0.0.1:0 --port-file "$WORK/dohfx.port" --plain >"$WORK/dohfx.log" 2>&1 &
  fi
  PIDS+=("$!")
  wait_file "$WORK/dohfx.port" || { pids_release "$mark"; echo "- - - - - - 60 - -"; return; }
  front=$(cat "$WORK/dohfx.port")
  [ "$proto" = h1 ] && up=1
  for _ in 1 2 3; do
    [ "$proto" = h1 ] && break
    ngx_port=$((20000 + RANDOM % 30000))
    nghttpx --conf=/dev/null --single-process --workers=1 --no-ocsp "--frontend=127.0.0.1,$ngx_port" \
      "--backend=127.0.0.1,$(cat "$WORK/dohfx.port")" --backend-connections-per-host=64 \
      --backend-keep-alive-timeout=60s "--errorlog-file=$WORK/nghttpx.log" \
      "$WORK/dohpki/server.key" "$WORK/dohpki/server.pem" >"$WORK/nghttpx.out" 2>&1 &
    ngx_pid=$!
    PIDS+=("$ngx_pid")
    if wait_tcp 127.0.0.1 "$ngx_port" "$ngx_pid" 3; then up=1; front=$ngx_port; break; fi
    kill "$ngx_pid" 2>/dev/null
  done
  [ $up = 1 ] || { pids_release "$mark"; echo "- - - - - - 60 - -"; return; }
  rm -f "$WORK/dohrl.port"
  start_relay dohrl "$front" "$rtt"
  addr=$(pick_loopback)
  cat >"$WORK/doh.yaml" <<YAML
listen:
  - "$addr:5300"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "https://doh.test:$RELAY_PORT_dohrl/dns-query"
    address: "127.0.0.1"
    ca_file: "$WORK/dohpki/ca.pem"
budgets:
  attempt_ms: 2000
  total_ms: 5000
http:
  enabled: false
log:
  level: warn
YAML
  nxdns_run "$tree" "$WORK/doh.yaml" "$WORK/doh-daemon.log"
  wait_tcp "$addr" 5300 "$SRV_PID" 10 || { pids_release "$mark"; echo "- - - - - - 60 - -"; return; }
  cold=$(timeout 30 "$NXDNS" burst --server "$addr:5300" --names 30 --cold --json 2>/dev/null)
  warm=$(timeout 30 "$NXDNS" burst --server "$addr:5300" --names 30 --json 2>/dev/null)
  server_stop
  bad=$(bad_count "$cold" "$warm")
  echo "$(jfield "$cold" wall_ms) $(jfield "$cold" ratio) $(jfield "$cold" staircase)" \
    "$(jfield "$warm" wall_ms) $(jfield "$warm" ratio) $(jfield "$warm" staircase) $bad $proto -"
  pids_release "$mark"
}

section_doh() {
  command -v nghttpx >/dev/null || { echo; echo "== DoH: skipped (nghttpx not installed)"; return; }
  make_pki "$WORK/dohpki" doh.test
  echo
  echo "== DoH bursts (nxdns only; unbound and stubby have no DoH upstream): 30 names, HTTP/2 via nghttpx, HTTP/1.1 direct"
  printf '%-11s %-12s %-7s %-19s %-6s %-7s %-19s %-6s %s\n' server upstream "cold ms" "cold ratio" stair \
    "warm ms" "warm ratio" stair bad
  local srv rtt proto run
  tsv server upstream rtt_ms run cold_ms cold_ratio cold_stair warm_ms warm_ratio warm_stair bad >"$WORK/doh-runs.tsv"
  for proto in h2 h1; do
  for rtt in 0 40; do
    for srv in "${SRV_LIST[@]}"; do
      [[ $srv == nxdns-* ]] || continue
      local cw=() cr=() cs=() ww=() wr=() ws=() bad=0 a b c d e f g h i
      for run in $(seq 1 "$RUNS"); do
        read -r a b c d e f g h i < <(doh_once "$srv" "$rtt" "$proto")
        tsv "$srv" "$proto" "$rtt" "$run" "$a" "$b" "$c" "$d" "$e" "$f" "$g" >>"$WORK/doh-runs.tsv"
        cw+=("$a") cr+=("$b") cs+=("$c") ww+=("$d") wr+=("$e") ws+=("$f")
        bad=$((bad + ${g:-30}))
      done
      printf '%-11s %-12s %-7s %-19s %-6s %-7s %-19s %-6s %s\n' "$srv" "doh-$proto-rtt$rtt" \
        "$(median "${cw[@]}")" "$(stats "${cr[@]}")" "$(stats "${cs[@]}" | cut -d' ' -f1)" \
        "$(median "${ww[@]}")" "$(stats "${wr[@]}")" "$(stats "${ws[@]}" | cut -d' ' -f1)" "$bad"
    done
  done
  done
  local nx=()
  for srv in "${SRV_LIST[@]}"; do [[ $srv == nxdns-* ]] && nx+=("$srv"); done
  SRV_LIST=("${nx[@]}")  # the section runs in a subshell of its own
  run_result doh --table "runs=$WORK/doh-runs.tsv" --peer nghttpx --param names=30
}
