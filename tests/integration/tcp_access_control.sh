#!/usr/bin/env bash
# access_control over TCP through the real daemon, loopback only. The ACL
# allows 127.0.0.1 alone (refuse 127.0.0.0/8, allow 127.0.0.1/32); the
# refused host is 127.0.0.2 (client sockets bound to it: all of 127/8 is
# local on Linux).
#   - a refused host opens 300 TCP connections and keeps them open: it holds
#     at most the refused clients' budget (8), the rest are closed at once
#     (nxdns_rejections_total{reason="tcp_refused_budget"}, never
#     tcp_connection_cap), and the allowed client keeps getting NOERROR over
#     TCP and UDP meanwhile; a refused connection answers one REFUSED (two
#     queries pipelined) and closes;
#   - a reload that takes 127.0.0.1 off access_control (and lets 127.0.0.2
#     in) reaches a connection already open: the client that got NOERROR on
#     it gets REFUSED for its next query on the SAME connection, which then
#     closes; a fresh client on 127.0.0.2 is served.
source "$(dirname "$0")/lib.sh"
require_program python3
require_program curl "reads the daemon's /metrics"

ADDR=$(pick_loopback)
PORT=5300
HTTP="$ADDR:8053"
ALLOWED=127.0.0.1
REFUSED=127.0.0.2
make_pki "$WORK/pki" dot.test
start_fixture up "$WORK/pki"

CONF="$WORK/nxdns.yaml"
acl_config() {  # acl_config ALLOWED_ADDRESS: only that address of 127/8 is served
  dot_config "$CONF.tmp" "$ADDR" "$PORT" "$FIX_PORT_up" "$WORK/pki"
  sed -i "s|^  enabled: false|  enabled: true\n  listen: \"$HTTP\"|" "$CONF.tmp"
  printf 'access_control:\n  allow: ["%s/32"]\n  refuse: ["127.0.0.0/8"]\n' "$1" >>"$CONF.tmp"
  mv "$CONF.tmp" "$CONF"
}
rejections() {  # rejections REASON
  curl -fsS "http://$HTTP/metrics" | sed -n "s/^nxdns_rejections_total{reason=\"$1\"} \([0-9]*\)$/\1/p"
}
status_from() {  # status_from SOURCE NAME [dig options]: the rcode word, empty without an answer
  { dig @"$ADDR" -p "$PORT" -b "$1" +tries=1 +time=3 "${@:3}" "$2" 2>&1 || true; } | sed -n 's/.*status: \([A-Z]*\),.*/\1/p' | head -n1
}
acl_config "$ALLOWED"
start_daemon "$CONF" "$ADDR" "$PORT"
[ "$(status_from "$ALLOWED" warm.acl-tcp.test +tcp)" = NOERROR ] || fail "the allowed client $ALLOWED is not served over TCP"
[ "$(status_from "$REFUSED" refused.acl-tcp.test)" = REFUSED ] || fail "$REFUSED is not refused over UDP"

# ---- 1. a refused host cannot take the TCP connections ---------------------
python3 - "$ADDR" "$PORT" "$REFUSED" "$WORK/hold" >"$WORK/hold.out" 2>&1 <<'PY' &
# Opens 300 connections from the refused address and keeps every one the
# daemon keeps; reports how many it closed at once, says "ready", and holds
# them until told "done". Then two pipelined queries on a kept one: one
# REFUSED, then the close.
import socket, struct, sys, time, select, os, json
addr, port, src, base = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
n = 300
def query(name, qid):
    qn = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".") if l) + b"\0"
    m = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + qn + struct.pack(">HH", 1, 1)
    return struct.pack(">H", len(m)) + m
def closed(s):
    if not select.select([s], [], [], 0)[0]: return False
    try: return s.recv(1) == b""
    except ConnectionResetError: return True
held = []
for i in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.connect((addr, port))
    held.append(s)
time.sleep(1.0)
open_ = [s for s in held if not closed(s)]
res = {"opened": n, "closed_at_once": n - len(open_), "kept": len(open_)}
with open(base + ".ready", "w") as f: f.write(json.dumps(res))
t0 = time.monotonic()
while not os.path.exists(base + ".done") and time.monotonic() - t0 < 30: time.sleep(0.05)
# Still held by the refused host while the allowed client was served.
res["kept_while_served"] = sum(1 for s in open_ if not closed(s))
probe = open_[0]
probe.sendall(query("one.acl-tcp.test", 0x0101) + query("two.acl-tcp.test", 0x0202))
buf, answers, eof, t0 = b"", [], False, time.monotonic()
while not eof and time.monotonic() - t0 < 5:
    if not select.select([probe], [], [], 0.1)[0]: continue
    try: d = probe.recv(4096)
    except ConnectionResetError: d = b""
    if not d: eof = True
    buf += d
    while len(buf) >= 2 and len(buf) >= 2 + struct.unpack(">H", buf[:2])[0]:
        ln = struct.unpack(">H", buf[:2])[0]
        m, buf = buf[2:2 + ln], buf[2 + ln:]
        answers.append("%04x:%d" % (struct.unpack(">H", m[:2])[0], m[3] & 15))
res["probe_answers"] = answers
res["probe_closed"] = eof
print(json.dumps(res))
PY
HOLD_PID=$!
wait_file "$WORK/hold.ready" || fail "hold: the client script did not get ready: $(cat "$WORK/hold.out")"
echo "  refused host: $(cat "$WORK/hold.ready")"
# The refused host holds what it can: the allowed client must not notice.
for i in 1 2 3 4 5; do
  st=$(status_from "$ALLOWED" "during-$i.acl-tcp.test" +tcp)
  [ "$st" = NOERROR ] || fail "hold: the allowed client's TCP query $i got '${st:-no answer}' while $REFUSED held its connections"
  st=$(status_from "$ALLOWED" "during-udp-$i.acl-tcp.test")
  [ "$st" = NOERROR ] || fail "hold: the allowed client's UDP query $i got '${st:-no answer}'"
done
touch "$WORK/hold.done"
wait "$HOLD_PID" || fail "hold: client script failed: $(cat "$WORK/hold.out")"
res=$(tail -n1 "$WORK/hold.out")
pyget() { python3 -c "import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print(v if not isinstance(v, list) else ' '.join(map(str, v)))" "$res" "$1"; }
kept=$(pyget kept)
[ "$kept" = 8 ] || fail "hold: the refused host kept $kept connections, want the refused budget of 8 ($res)"
[ "$(pyget kept_while_served)" = "$kept" ] || fail "hold: refused connections closed while held ($res)"
[ "$(rejections tcp_refused_budget)" = "$(pyget closed_at_once)" ] ||
  fail "hold: nxdns_rejections_total{tcp_refused_budget} = $(rejections tcp_refused_budget), want $(pyget closed_at_once) ($res)"
[ "$(rejections tcp_connection_cap)" = 0 ] || fail "hold: the connection cap was reached ($(rejections tcp_connection_cap))"
[ "$(pyget probe_answers)" = "0101:5" ] && [ "$(pyget probe_closed)" = True ] ||
  fail "hold: two pipelined queries on a refused connection got '$(pyget probe_answers)' (closed: $(pyget probe_closed)), want one REFUSED then the close"
[ "$(rejections tcp_access_refused)" = 1 ] || fail "hold: nxdns_rejections_total{tcp_access_refused} = $(rejections tcp_access_refused), want 1"
pass "300 connections from refused $REFUSED: $kept kept, $(pyget closed_at_once) closed at once (tcp_refused_budget), cap never reached; $ALLOWED served over TCP and UDP; a refused connection answers one REFUSED and closes"

# ---- 2. a reload's access_control reaches an open connection ---------------
python3 - "$ADDR" "$PORT" "$ALLOWED" "$WORK/open" >"$WORK/open.out" 2>&1 <<'PY' &
# One connection from the allowed address: a query before the reload, then
# (told "reloaded") one after it on the SAME connection.
import socket, struct, sys, time, select, os
addr, port, src, base = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def query(name, qid):
    qn = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".") if l) + b"\0"
    m = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + qn + struct.pack(">HH", 1, 1)
    return struct.pack(">H", len(m)) + m
def answer(s):  # "ID:RCODE", or "closed"
    buf, t0 = b"", time.monotonic()
    while time.monotonic() - t0 < 5:
        if not select.select([s], [], [], 0.1)[0]: continue
        try: d = s.recv(4096)
        except ConnectionResetError: d = b""
        if not d: return "closed"
        buf += d
        if len(buf) >= 2 and len(buf) >= 2 + struct.unpack(">H", buf[:2])[0]:
            return "%04x:%d" % (struct.unpack(">H", buf[2:4])[0], buf[5] & 15)
    return "silent"
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind((src, 0))
s.connect((addr, port))
s.sendall(query("before.reload.acl-tcp.test", 0x0a0a))
before = answer(s)
with open(base + ".ready", "w") as f: f.write(before)
t0 = time.monotonic()
while not os.path.exists(base + ".reloaded") and time.monotonic() - t0 < 8: time.sleep(0.05)
s.sendall(query("after.reload.acl-tcp.test", 0x0b0b))
print(before, answer(s), answer(s))
PY
OPEN_PID=$!
wait_file "$WORK/open.ready" || fail "reload: the client script did not get ready: $(cat "$WORK/open.out")"
[ "$(cat "$WORK/open.ready")" = "0a0a:0" ] || fail "reload: the query before the reload got '$(cat "$WORK/open.ready")', want NOERROR"
refused_before=$(rejections tcp_access_refused)
acl_config "$REFUSED"
nx reload --http "$HTTP" >"$WORK/reload.out" 2>&1 || fail "reload: not applied: $(cat "$WORK/reload.out")"
touch "$WORK/open.reloaded"
wait "$OPEN_PID" || fail "reload: client script failed: $(cat "$WORK/open.out")"
read -r before after then <"$WORK/open.out"
[ "$after" = "0b0b:5" ] || fail "reload: the next query on the connection opened before the reload got '$after', want REFUSED (0b0b:5)"
[ "$then" = closed ] || fail "reload: after its REFUSED the connection was not closed ('$then')"
[ "$(rejections tcp_access_refused)" = $((refused_before + 1)) ] ||
  fail "reload: nxdns_rejections_total{tcp_access_refused} = $(rejections tcp_access_refused), want $((refused_before + 1))"
[ "$(status_from "$REFUSED" after.reload.acl-tcp.test +tcp)" = NOERROR ] || fail "reload: $REFUSED, now allowed, is not served over TCP"
[ "$(status_from "$ALLOWED" new.after.reload.acl-tcp.test +tcp)" = REFUSED ] || fail "reload: a new connection from $ALLOWED was not refused"
pass "reload taking $ALLOWED off access_control: its open connection answered NOERROR before, REFUSED after on the same connection, then closed; $REFUSED served"
stop_daemon
echo "tcp_access_control: all passed"
