#!/usr/bin/env python3
"""Queries several DNS servers side by side over UDP during a WAN outage
(bench/cache_outage.sh) and prints one JSON object per server: for names
the household asked before the outage ("known"), how many answered NOERROR,
how many within --within-ms, the latency p50 and max; for names never asked
("unseen"), every rcode and latency. Both kinds are sent at a steady rate
for --seconds; an unanswered query counts as a timeout after --timeout.
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


def query(qid, name, qtype):
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + wire_name(name) + struct.pack(">HH", qtype, 1)


def pct(xs, p):
    if not xs:
        return None
    s = sorted(xs)
    return round(s[min(len(s) - 1, int(p * len(s)))], 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True, help="IPv4 loopback address")
    ap.add_argument("--ports", required=True, help="comma-separated, one per server")
    ap.add_argument("--labels", required=True, help="comma-separated, one per port")
    ap.add_argument("--known", required=True, help="file of 'name TYPE' lines asked before the outage")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--known-rate", type=float, default=20.0, help="known-name queries per second per server")
    ap.add_argument("--unseen-rate", type=float, default=1.0, help="unseen-name queries per second per server")
    ap.add_argument("--within-ms", type=float, default=1800.0)
    ap.add_argument("--timeout", type=float, default=8.0)
    a = ap.parse_args()
    if not ipaddress.ip_address(a.server).is_loopback:
        raise SystemExit("outage_probe: loopback addresses only")
    known = []
    with open(a.known) as f:
        for ln in f:
            p = ln.split()
            if len(p) >= 2:
                known.append((p[0], QTYPES.get(p[1], 1)))
    ports = [int(p) for p in a.ports.split(",")]
    labels = a.labels.split(",")
    rng = random.Random(30)
    socks = []
    for port in ports:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setblocking(False)
        s.connect((a.server, port))
        socks.append(s)
    res = [{"known": [], "unseen": []} for _ in ports]  # (kind, latency_ms or None, rcode or None)
    pending = [dict() for _ in ports]  # qid -> (kind, sent)
    next_id = [rng.randrange(65536) for _ in ports]
    start = time.monotonic()
    next_known = start
    next_unseen = start
    unseen_n = 0

    def send(i, kind, name, qtype):
        while True:
            next_id[i] = (next_id[i] + 1) & 0xFFFF
            if next_id[i] not in pending[i]:
                break
        pending[i][next_id[i]] = (kind, time.monotonic())
        socks[i].send(query(next_id[i], name, qtype))

    while True:
        now = time.monotonic()
        sending = now - start < a.seconds
        if not sending and not any(pending):
            break
        if not sending and now - start > a.seconds + a.timeout:
            break
        if sending and now >= next_known:
            name, qtype = rng.choice(known)
            for i in range(len(ports)):
                send(i, "known", name, qtype)
            next_known += 1.0 / a.known_rate
        if sending and now >= next_unseen:
            unseen_n += 1
            name = "unseen%d-%d.outage.test" % (unseen_n, rng.randrange(1 << 30))
            for i in range(len(ports)):
                send(i, "unseen", name, 1)
            next_unseen += 1.0 / a.unseen_rate
        wait = max(0.0, min(next_known, next_unseen) - time.monotonic()) if sending else 0.05
        r, _, _ = select.select(socks, [], [], wait)
        for s in r:
            i = socks.index(s)
            while True:
                try:
                    data = s.recv(4096)
                except (BlockingIOError, ConnectionRefusedError):
                    break
                if len(data) < 4:
                    continue
                got = pending[i].pop(struct.unpack(">H", data[:2])[0], None)
                if got:
                    kind, sent = got
                    res[i][kind].append(((time.monotonic() - sent) * 1000.0, data[3] & 0xF))
        for i in range(len(ports)):
            for qid, (kind, sent) in list(pending[i].items()):
                if time.monotonic() - sent > a.timeout:
                    del pending[i][qid]
                    res[i][kind].append((None, None))

    names = {0: "NOERROR", 2: "SERVFAIL", 3: "NXDOMAIN", 5: "REFUSED", None: "timeout"}
    for i, label in enumerate(labels):
        k = res[i]["known"]
        ok = [ms for ms, rc in k if rc == 0]
        u = res[i]["unseen"]
        out = {
            "server": label,
            "known_sent": len(k),
            "known_noerror": len(ok),
            "known_noerror_within": sum(1 for ms in ok if ms <= a.within_ms),
            "within_ms": a.within_ms,
            "known_p50_ms": pct(ok, 0.5),
            "known_max_ms": round(max(ok), 1) if ok else None,
            "known_other": {},
            "unseen_sent": len(u),
            "unseen_rcodes": {},
            "unseen_p50_ms": pct([ms for ms, rc in u if ms is not None], 0.5),
            "unseen_max_ms": max([round(ms, 1) for ms, rc in u if ms is not None], default=None),
        }
        for ms, rc in k:
            if rc != 0:
                n = names.get(rc, str(rc))
                out["known_other"][n] = out["known_other"].get(n, 0) + 1
        for ms, rc in u:
            n = names.get(rc, str(rc))
            out["unseen_rcodes"][n] = out["unseen_rcodes"].get(n, 0) + 1
        print(json.dumps(out))


if __name__ == "__main__":
    main()
