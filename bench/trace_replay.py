#!/usr/bin/env python3
"""Replays a household trace (household_trace.py) against a DNS server over
UDP, in real time compressed by --speed, and prints one JSON line: queries
sent, answered, rcodes, and client-seen latency p50/p99 in milliseconds.
Loopback only: refuses any server address outside 127.0.0.0/8.
"""
import argparse
import ipaddress
import json
import random
import select
import socket
import struct
import time

QTYPES = {"A": 1, "AAAA": 28, "HTTPS": 65}


def wire_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--server", required=True, help="IPv4 loopback address")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--speed", type=float, default=360.0, help="trace seconds per real second")
    ap.add_argument("--limit", type=int, default=0, help="stop after N queries (0 = all)")
    ap.add_argument("--timeout", type=float, default=3.0)
    a = ap.parse_args()
    if not ipaddress.ip_address(a.server).is_loopback:
        raise SystemExit("trace_replay: loopback addresses only")

    lines = []
    with open(a.trace) as f:
        for ln in f:
            p = ln.split()
            if len(p) >= 3:
                lines.append((int(p[0]), p[1], QTYPES.get(p[2], 1)))
    if a.limit:
        lines = lines[: a.limit]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setblocking(False)
    rng = random.Random(1)
    pending = {}  # id -> sent time
    lat = []
    rcodes = {}
    start = time.monotonic()
    t0 = lines[0][0] if lines else 0
    i = 0
    next_id = rng.randrange(65536)

    def drain(wait):
        r, _, _ = select.select([sock], [], [], wait)
        while r:
            try:
                data = sock.recv(4096)
            except BlockingIOError:
                break
            if len(data) >= 4:
                qid = struct.unpack(">H", data[:2])[0]
                sent = pending.pop(qid, None)
                if sent is not None:
                    lat.append((time.monotonic() - sent) * 1000.0)
                    rc = data[3] & 0xF
                    rcodes[rc] = rcodes.get(rc, 0) + 1
            r, _, _ = select.select([sock], [], [], 0)

    while i < len(lines):
        due = start + (lines[i][0] - t0) / 1000.0 / a.speed
        now = time.monotonic()
        if now < due:
            drain(due - now)
            continue
        _, name, qtype = lines[i]
        next_id = (next_id + 1) & 0xFFFF
        while next_id in pending:
            next_id = (next_id + 1) & 0xFFFF
        pkt = struct.pack(">HHHHHH", next_id, 0x0100, 1, 0, 0, 0) + wire_name(name) + struct.pack(">HH", qtype, 1)
        pending[next_id] = time.monotonic()
        sock.sendto(pkt, (a.server, a.port))
        i += 1
        drain(0)
    deadline = time.monotonic() + a.timeout
    while pending and time.monotonic() < deadline:
        drain(0.05)
    lat.sort()

    def pct(p):
        return round(lat[min(len(lat) - 1, int(p * len(lat)))], 3) if lat else None

    print(json.dumps({"sent": len(lines), "answered": len(lat), "lost": len(pending), "rcodes": rcodes,
                      "p50_ms": pct(0.50), "p99_ms": pct(0.99)}))


if __name__ == "__main__":
    main()
