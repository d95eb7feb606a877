#!/usr/bin/env python3
"""A deterministic synthetic household DNS trace (bench/cache.md).

Seeded; Zipf-distributed popularity over a few thousand names; a TTL mix from
30 s to 1 day; a share of negative answers (NXDOMAIN and NODATA, the way
search-domain typos and AAAA-less names produce them); devices that wake up
and fire a burst of their own favourite names at once.

Output, one query per line, sorted by time:
    <t_ms> <name> <qtype> <ttl> <kind>
where kind is pos, nxdomain or nodata, and ttl is what the upstream would
say for that name (positive: record TTL; negative: SOA MINIMUM). The same
name always has the same ttl and kind: the replay's upstream reads them.
"""
import argparse
import bisect
import random

TTL_MIX = [(30, 0.08), (60, 0.17), (300, 0.30), (600, 0.10), (1800, 0.10), (3600, 0.15), (86400, 0.10)]
NEG_TTL = [(60, 0.3), (300, 0.3), (900, 0.2), (3600, 0.2)]
QTYPES = [("A", 0.55), ("AAAA", 0.35), ("HTTPS", 0.10)]


def weighted(rng, table):
    x = rng.random() * sum(w for _, w in table)
    for v, w in table:
        x -= w
        if x <= 0:
            return v
    return table[-1][0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--names", type=int, default=3000, help="distinct names (default 3000)")
    ap.add_argument("--queries", type=int, default=100000, help="queries (default 100000)")
    ap.add_argument("--hours", type=float, default=6.0, help="trace duration (default 6 h)")
    ap.add_argument("--devices", type=int, default=12, help="phones, TVs, laptops (default 12)")
    ap.add_argument("--zipf", type=float, default=0.9, help="Zipf exponent (default 0.9)")
    ap.add_argument("--negative", type=float, default=0.08, help="share of names with a negative answer")
    ap.add_argument("--burst-share", type=float, default=0.3, help="share of queries sent in wake-up bursts")
    a = ap.parse_args()
    rng = random.Random(a.seed)

    names = []
    for i in range(a.names):
        zone = ["example.test", "cdn.test", "video.test", "ads.test", "iot.test"][i % 5]
        name = f"n{i}.{zone}"
        r = rng.random()
        if r < a.negative / 2:
            kind, ttl = "nxdomain", weighted(rng, NEG_TTL)
        elif r < a.negative:
            kind, ttl = "nodata", weighted(rng, NEG_TTL)
        else:
            kind, ttl = "pos", weighted(rng, TTL_MIX)
        names.append((name, weighted(rng, QTYPES), ttl, kind))

    weights = [1.0 / (rank + 1) ** a.zipf for rank in range(a.names)]
    cum = []
    total = 0.0
    for w in weights:
        total += w
        cum.append(total)

    def pick():
        return names[bisect.bisect_left(cum, rng.random() * total)]

    # Each device has favourites: a wake-up burst asks 10-40 of them at once.
    favourites = [[pick() for _ in range(60)] for _ in range(a.devices)]
    span_ms = int(a.hours * 3600 * 1000)
    out = []
    burst_queries = int(a.queries * a.burst_share)
    while len(out) < burst_queries:
        t = rng.randrange(span_ms)
        fav = favourites[rng.randrange(a.devices)]
        for _ in range(rng.randint(10, 40)):
            out.append((t + rng.randrange(1000), rng.choice(fav)))
    while len(out) < a.queries:
        out.append((rng.randrange(span_ms), pick()))
    out.sort(key=lambda x: x[0])
    for t, (name, qtype, ttl, kind) in out[: a.queries]:
        print(f"{t} {name} {qtype} {ttl} {kind}")


if __name__ == "__main__":
    main()
