#!/usr/bin/env python3
"""The WAN's return, side by side (bench/wan_return.sh): several DNS servers
forward over DoT through one nxdns-delay-relay; this script drives the
outage itself (SIGUSR1 to the relay: every connection black-holed; SIGUSR2:
the path is back, connections from before stay dead, as after a household
router reconnects with a new public address) and queries every server over
UDP with names never asked before, so each query goes upstream:

  settle   --settle-rate names/s for --settle seconds (sessions open, the
           servers' view of the upstream normal again)
  outage   --rate names/s for --outage seconds plus a random part of one
           query interval (they fail: the servers see the outage; the return
           falls at a random moment between two of the queries, as a real
           one does, not in step with them)
  return   SIGUSR2, then at once one new name ("the first query after the
           return"), then --after-rate names/s for --after seconds

for --cycles cycles. Prints one JSON object per server: per cycle the first
query's latency (ms, or its rcode / "timeout") and how long after the return
the first NOERROR answer to any query sent after it came; the outage's
rcodes. Loopback only: refuses any server address outside 127.0.0.0/8.
"""
import argparse
import json
import os
import random
import select
import signal
import socket
import struct
import time

from dns_wire import query, require_loopback

RCODES = {0: "NOERROR", 2: "SERVFAIL", 3: "NXDOMAIN", 5: "REFUSED"}


class Server:
    def __init__(self, label, addr, port, rng):
        self.label = label
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setblocking(False)
        self.sock.connect((addr, port))
        self.next_id = rng.randrange(65536)
        self.pending = {}  # qid -> (tag, sent)
        self.done = []  # (tag, sent, latency_s or None, rcode or None)

    def send(self, tag, name):
        while True:
            self.next_id = (self.next_id + 1) & 0xFFFF
            if self.next_id not in self.pending:
                break
        self.pending[self.next_id] = (tag, time.monotonic())
        self.sock.send(query(self.next_id, name, 1))

    def receive(self):
        while True:
            try:
                data = self.sock.recv(4096)
            except (BlockingIOError, ConnectionRefusedError):
                return
            if len(data) < 4:
                continue
            got = self.pending.pop(struct.unpack(">H", data[:2])[0], None)
            if got:
                tag, sent = got
                self.done.append((tag, sent, time.monotonic() - sent, data[3] & 0xF))

    def expire(self, timeout):
        now = time.monotonic()
        for qid, (tag, sent) in list(self.pending.items()):
            if now - sent > timeout:
                del self.pending[qid]
                self.done.append((tag, sent, None, None))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True, help="IPv4 loopback address")
    ap.add_argument("--ports", required=True, help="comma-separated, one per server")
    ap.add_argument("--labels", required=True, help="comma-separated, one per port")
    ap.add_argument("--relay-pid", type=int, required=True)
    ap.add_argument("--zone", default="wan.test")
    ap.add_argument("--cycles", type=int, default=3)
    ap.add_argument("--outage", type=float, default=30.0, help="seconds")
    ap.add_argument("--rate", type=float, default=1.0, help="new names/s to each server during the outage")
    ap.add_argument("--settle", type=float, default=6.0, help="seconds before each outage")
    ap.add_argument("--settle-rate", type=float, default=2.0)
    ap.add_argument("--after", type=float, default=6.0, help="seconds of queries after the return")
    ap.add_argument("--after-rate", type=float, default=5.0)
    ap.add_argument("--timeout", type=float, default=8.0)
    a = ap.parse_args()
    require_loopback(a.server, "wan_return_probe")
    rng = random.Random(31)
    servers = [Server(l, a.server, int(p), rng) for l, p in zip(a.labels.split(","), a.ports.split(","))]
    socks = {s.sock: s for s in servers}
    serial = [0]

    def ask_all(tag):
        serial[0] += 1
        name = "n%d-%d.%s" % (serial[0], rng.randrange(1 << 30), a.zone)
        for s in servers:
            s.send(tag, name)

    def run_for(seconds, rate, tag):
        # Sends every server one new name per 1/rate s (the first at once)
        # while reading answers; 0 rate: only reads.
        end = time.monotonic() + seconds
        nxt = time.monotonic()
        while True:
            now = time.monotonic()
            if now >= end:
                return
            if rate > 0 and now >= nxt:
                ask_all(tag)
                nxt += 1.0 / rate
            wait = max(0.0, min(end, nxt if rate > 0 else end) - time.monotonic())
            for sk in select.select(list(socks), [], [], min(wait, 0.05))[0]:
                socks[sk].receive()
            for s in servers:
                s.expire(a.timeout)

    returns = []
    for c in range(a.cycles):
        run_for(a.settle, a.settle_rate, "settle%d" % c)
        os.kill(a.relay_pid, signal.SIGUSR1)
        run_for(a.outage + (rng.uniform(0, 1.0 / a.rate) if a.rate > 0 else 0), a.rate, "outage%d" % c)
        os.kill(a.relay_pid, signal.SIGUSR2)
        back = time.monotonic()
        returns.append(back)
        ask_all("first%d" % c)
        run_for(a.after, a.after_rate, "after%d" % c)
    # Everything still pending gets its answer or its timeout.
    while any(s.pending for s in servers):
        run_for(0.2, 0, "drain")

    for s in servers:
        cycles = []
        outage = {}
        for c, back in enumerate(returns):
            first = [d for d in s.done if d[0] == "first%d" % c]
            after = [d for d in s.done if d[0] in ("first%d" % c, "after%d" % c) and d[3] == 0]
            f = first[0] if first else None
            if f is None or f[2] is None:
                first_v = "timeout"
            elif f[3] != 0:
                first_v = RCODES.get(f[3], str(f[3]))
            else:
                first_v = round(f[2] * 1000.0, 1)
            answered = min((d[1] + d[2] - back for d in after), default=None)
            cycles.append({"first_ms": first_v,
                           "first_answer_after_return_ms": None if answered is None else round(answered * 1000.0, 1)})
        for tag, sent, lat, rc in s.done:
            if tag.startswith("outage"):
                k = "timeout" if lat is None else RCODES.get(rc, str(rc))
                outage[k] = outage.get(k, 0) + 1
        print(json.dumps({"server": s.label, "cycles": cycles, "outage": outage}))


if __name__ == "__main__":
    main()
