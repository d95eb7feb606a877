#!/usr/bin/env bash
# How a client's connection and the operator's signals end:
#   1. a TCP client that pipelines N queries and half-closes (shutdown
#      SHUT_WR) reads all N answers, then the daemon's EOF (RFC 7766 §6.2.4
#      spirit); kdig +tcp gets its answer too (knot 3.2's kdig does not
#      half-close: strace shows no shutdown(), so it is a plain TCP check);
#   2. SIGHUP with the file unchanged reloads it and changes nothing (the
#      upstream is kept): the daemon keeps answering (reload.sh has the rest);
#   3. clients that reset their connection while the daemon is writing their
#      answers (EPIPE / SIGPIPE territory) do not kill it.
# The upstream answers after 150 ms, so every answer is still owed when the
# client's FIN arrives.
source "$(dirname "$0")/lib.sh"

ADDR=$(pick_loopback)
PORT=5300
require_program kdig "kdig (apt package knot-dnsutils)"
make_pki "$WORK/pki" dot.test
start_fixture up "$WORK/pki" --response-delay-ms 150
dot_config "$WORK/nxdns.yaml" "$ADDR" "$PORT" "$FIX_PORT_up" "$WORK/pki"
start_daemon "$WORK/nxdns.yaml" "$ADDR" "$PORT"

# ---- 1. half-close ------------------------------------------------------------
python3 - "$ADDR" "$PORT" 20 >"$WORK/halfclose.out" 2>&1 <<'PY' || fail "half-close: $(cat "$WORK/halfclose.out")"
import socket, struct, sys, time, select
addr, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def query(name, qid):
    hdr = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    qn = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".") if l) + b"\0"
    return hdr + qn + struct.pack(">HH", 1, 1)
s = socket.create_connection((addr, port))
ids = set(range(0x4000, 0x4000 + n))
s.sendall(b"".join(struct.pack(">H", len(q)) + q for q in (query("hc%d.lifecycle.test" % i, i) for i in sorted(ids))))
s.shutdown(socket.SHUT_WR)
buf, t0, eof = b"", time.monotonic(), False
while time.monotonic() - t0 < 5:
    r, _, _ = select.select([s], [], [], 0.1)
    if not r: continue
    d = s.recv(65536)
    if not d:
        eof = True
        break
    buf += d
got, rcodes = set(), []
while len(buf) >= 2 and len(buf) >= 2 + struct.unpack(">H", buf[:2])[0]:
    m = buf[2:2 + struct.unpack(">H", buf[:2])[0]]
    buf = buf[2 + len(m):]
    got.add(struct.unpack(">H", m[:2])[0]); rcodes.append(m[3] & 0xF)
print("answers %d of %d, rcodes %s, eof %s after %.0f ms" % (len(got & ids), n, sorted(set(rcodes)), eof, (time.monotonic() - t0) * 1000))
sys.exit(0 if got == ids and eof and set(rcodes) == {0} else 1)
PY
pass "half-close: $(cat "$WORK/halfclose.out")"

kdig @"$ADDR" -p "$PORT" +tcp +timeout=5 +retry=0 kdig.lifecycle.test A >"$WORK/kdig.out" 2>&1 || true
grep -q 'status: NOERROR' "$WORK/kdig.out" || fail "kdig +tcp got no NOERROR answer: $(cat "$WORK/kdig.out")"
pass "kdig +tcp: NOERROR"

# ---- 2. SIGHUP ----------------------------------------------------------------
kill -HUP "$DAEMON_PID"
sleep 0.3
kill -0 "$DAEMON_PID" 2>/dev/null || fail "the daemon died of SIGHUP"
grep -q 'reload (SIGHUP): applied .*: upstreams: 1 kept, 0 drained, 0 started' "$WORK/daemon.log" || fail "no reload line for SIGHUP"
st=$(dig_status "$ADDR" "$PORT" after-hup.lifecycle.test +tries=1 +time=5)
[ "$st" = NOERROR ] || fail "after SIGHUP: expected NOERROR, got '${st:-no answer}'"
pass "SIGHUP reloaded the unchanged file (1 upstream kept); still answering"

# ---- 3. resets while the daemon writes ----------------------------------------
# Each client pipelines 40 queries, reads the first answer and resets the
# connection (SO_LINGER 0) while the rest are still being written to it;
# then clients that close unread while answers are still owed (EPIPE).
python3 - "$ADDR" "$PORT" >"$WORK/reset.out" 2>&1 <<'PY' || fail "resets: $(cat "$WORK/reset.out")"
import socket, struct, sys, time, select
addr, port = sys.argv[1], int(sys.argv[2])
def query(name, qid):
    hdr = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    qn = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".") if l) + b"\0"
    return hdr + qn + struct.pack(">HH", 1, 1)
first = 0
for c in range(10):
    s = socket.create_connection((addr, port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    s.sendall(b"".join(struct.pack(">H", len(q)) + q for q in (query("rst%d-%d.lifecycle.test" % (c, i), i) for i in range(40))))
    r, _, _ = select.select([s], [], [], 3)
    if r and s.recv(1): first += 1
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
print("10 connections reset after their first answer byte (%d saw one)" % first)
# Clients that close (FIN, not a reset) without reading, between two batches
# of queries: the daemon takes the FIN as a half-close and writes the first
# batch's answers, the closed socket answers with a reset, and the second
# batch's writes then fail with EPIPE: the SIGPIPE a daemon must not die of.
for c in range(5):
    s = socket.create_connection((addr, port))
    s.sendall(b"".join(struct.pack(">H", len(q)) + q for q in (query("fin%d-a%d.lifecycle.test" % (c, i), i) for i in range(20))))
    time.sleep(0.1)
    s.sendall(b"".join(struct.pack(">H", len(q)) + q for q in (query("fin%d-b%d.lifecycle.test" % (c, i), 100 + i) for i in range(20))))
    s.close()
    time.sleep(0.05)
print("and 5 connections closed unread between two batches of 20 queries")
PY
sleep 0.5
kill -0 "$DAEMON_PID" 2>/dev/null || fail "the daemon died when clients reset or closed mid-write (SIGPIPE?)"
st=$(dig_status "$ADDR" "$PORT" after-reset.lifecycle.test +tries=1 +time=5 +tcp)
[ "$st" = NOERROR ] || fail "after resets: expected NOERROR over TCP, got '${st:-no answer}'"
pass "resets mid-write: $(cat "$WORK/reset.out"); still answering"

stop_daemon
echo "client_lifecycle: all passed"
