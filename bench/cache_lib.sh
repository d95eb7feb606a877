# Shared by the cache benchmarks (cache_bench.sh, cache_cpu.sh,
# cache_outage.sh): the nxdns and unbound configurations they compare, and
# starting either server. Sourced after tests/integration/lib.sh (WORK, PIDS,
# fail); loopback only. Needs ADDR (the listen address) and UP (the
# upstream fixture's DoT port on 127.0.0.1).

# SRV_WRAP: a command the server runs under (valgrind), empty by default.
SRV_WRAP=()
# Extra YAML under nxdns's cache: section / lines under unbound's server:.
NX_CACHE_EXTRA=${NX_CACHE_EXTRA:-}
UB_EXTRA=${UB_EXTRA:-}

nxdns_conf() {  # FILE PORT PREFETCH
  cat >"$1" <<YAML
listen:
  - "$ADDR:$2"
upstreams:
  - url: "tls://127.0.0.1:$UP"
    tls_name: "dot.test"
    ca_file: "$WORK/pki/ca.pem"
http:
  enabled: false
cache:
  max_bytes: 16777216
  prefetch: $3
$NX_CACHE_EXTRA
log:
  level: warn
YAML
}

unbound_conf() {  # FILE DIR PORT PREFETCH(yes|no)
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
  interface: $ADDR@$3
  port: $3
  outgoing-interface: 127.0.0.1
  do-ip6: no
  access-control: 127.0.0.0/8 allow
  num-threads: 1
  module-config: "iterator"
  do-not-query-localhost: no
  tls-cert-bundle: "$WORK/pki/ca.pem"
  msg-cache-size: 8m
  rrset-cache-size: 8m
  prefetch: $4
  qname-minimisation: no
  local-zone: "test." nodefault
$UB_EXTRA
forward-zone:
  name: "."
  forward-tls-upstream: yes
  forward-addr: 127.0.0.1@$UP#dot.test
CONF
}

start_server() {  # KIND PORT PREFETCH(true|false) -> SRV_PID
  local dir="$WORK/$1-$2"
  mkdir -p "$dir"
  if [ "$1" = nxdns ]; then
    nxdns_conf "$dir/c.yaml" "$2" "$3"
    ${SRV_WRAP[@]+"${SRV_WRAP[@]}"} "$NXDNS" run -c "$dir/c.yaml" >"$dir/log" 2>&1 &
  else
    unbound_conf "$dir/u.conf" "$dir" "$2" "$([ "$3" = true ] && echo yes || echo no)"
    ${SRV_WRAP[@]+"${SRV_WRAP[@]}"} unbound -d -c "$dir/u.conf" >"$dir/log" 2>&1 &
  fi
  SRV_PID=$!
  PIDS+=("$SRV_PID")
  local i
  for i in $(seq 1 600); do
    (exec 3<>"/dev/tcp/$ADDR/$2") 2>/dev/null && return 0
    kill -0 "$SRV_PID" 2>/dev/null || fail "$1 exited at start: $(tail -n 3 "$dir/log")"
    sleep 0.05
  done
  fail "$1 did not start"
}
