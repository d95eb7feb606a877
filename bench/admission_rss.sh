#!/usr/bin/env bash
# RSS cost of admission, loopback only: the daemon's VmRSS
# with N UDP queries held in flight against a black-holed DoT upstream (the
# fixture accepts and never answers), and with M idle TCP connections open.
# Prints KiB per in-flight query and per connection; the caps in
# src/server/limits.hpp and docs/reference/config.md ("Limits") cite them.
#   bash bench/admission_rss.sh build/src/cli/nxdns [fixture-dir]
source "$(dirname "$0")/../tests/integration/lib.sh"
ADDR=$(pick_loopback)
PORT=5300
N=${N:-4000}
M=${M:-240}
make_pki "$WORK/pki" dot.test
start_fixture hole "$WORK/pki" --black-hole
ATTEMPT_MS=20000 TOTAL_MS=30000 dot_config "$WORK/rss.yaml" "$ADDR" "$PORT" "$FIX_PORT_hole" "$WORK/pki"
start_daemon "$WORK/rss.yaml" "$ADDR" "$PORT"
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$DAEMON_PID/status"; }
# One query first: opens the upstream session (TLS buffers are not per query).
dig @"$ADDR" -p "$PORT" +tries=1 +time=1 warm.rss.test >/dev/null 2>&1 || true
sleep 0.5
base=$(rss)
python3 - "$ADDR" "$PORT" "$N" <<'PY'
# N unique queries from N/200 source addresses (each under its client share
# and rate burst), left unanswered: the daemon holds them all.
import socket, struct, sys, time
addr, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
socks = []
for i in range(n):
    if i % 200 == 0:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.99.%d.%d" % (i // 200 // 250, i // 200 % 250 + 1), 0)); socks.append(s)
    name = b"".join(bytes([len(p)]) + p for p in (b"q%d" % i, b"rss", b"test")) + b"\0"
    s.sendto(struct.pack(">HHHHHH", i & 0xFFFF, 0x0100, 1, 0, 0, 0) + name + b"\0\1\0\1", (addr, port))
    if i % 100 == 99: time.sleep(0.01)
time.sleep(1.0)
PY
held=$(rss)
echo "udp: $N queries in flight: VmRSS $base -> $held KiB: $(( (held - base) * 1000 / N )) bytes/query"
kill -TERM "$DAEMON_PID"; wait "$DAEMON_PID" || true
start_daemon "$WORK/rss.yaml" "$ADDR" "$PORT"
sleep 0.3
base=$(rss)
python3 - "$ADDR" "$PORT" "$M" "$WORK/tcp.ready" <<'PY' &
import socket, sys, time
addr, port, m, ready = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
held = []
for i in range(m):
    s = socket.socket(); s.bind(("127.98.%d.1" % (i // 16 + 1), 0)); s.connect((addr, port)); held.append(s)
open(ready, "w").write("1"); time.sleep(3)
PY
TCP_PY=$!
wait_file "$WORK/tcp.ready"
sleep 0.5
held=$(rss)
echo "tcp: $M idle connections: VmRSS $base -> $held KiB: $(( (held - base) * 1000 / M )) bytes/connection"
wait "$TCP_PY"
stop_daemon
