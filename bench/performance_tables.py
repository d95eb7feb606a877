"""The tables of docs/performance.md, one function per generated block,
each from its bench's result file (bench/bench_figures.py reads them).
A block returns Markdown lines: the table, then the provenance of its
figures. Targets live here, beside the figures they judge, so a verdict is
computed, never copied.
"""
from __future__ import annotations

import re
from typing import Callable, Optional, Sequence

from bench_figures import (Record, RenderError, Result, Results, Spread, dash, median, number, spread, table,
                           thousands, where)

# ------------------------------------------------------------------ bursts
FORWARDERS = [("nxdns-3.6", "nxdns, TLS 1.3"), ("nxdns-2.28", "nxdns, TLS 1.2"), ("unbound", "unbound"),
              ("stubby", "stubby"), ("kresd", "Knot Resolver")]
PEERS = ("unbound", "stubby", "kresd")
STATES = [
    ("first", "no session ever"),
    ("one-open", "one open session"),
    ("warm", "sessions open from a burst before"),
    ("idle-closed", "sessions closed by the upstream while idle"),
    ("serial-first", "serial upstream, no session ever"),
    ("serial-one", "serial upstream, one open session"),
    ("serial-warm", "serial upstream, sessions open from a burst before"),
    ("first-slow", "no session ever, forwarder at 20 % of a core"),
]
# States that claim no open session: a forwarder that had one (`pre`) was
# not in them.
NO_SESSION = {"first", "first-slow", "serial-first", "idle-closed"}
# Staircase: all answers at once scores 0, one after another 1; four waves
# of eight score 0.12 (src/cli/burst_gates.cpp uses the same bound).
STAIRCASE_LIMIT = 0.10


def state_runs(results: Results, state: str, server: str) -> list[Record]:
    return where(results["states"].table("runs", ("state", "server", "ratio", "pre", "bad")), state=state,
                 server=server)


def ordered(records: Sequence[Record]) -> list[Record]:
    """Records in the tables' order of forwarders (nxdns first), others after."""
    rank = {server: i for i, (server, _) in enumerate(FORWARDERS)}
    return sorted(records, key=lambda r: rank.get(str(r.get("server")), len(rank)))


def in_state(runs: Sequence[Record]) -> bool:
    return not runs or runs[0]["state"] not in NO_SESSION or all(r.get("pre") in (0, None) for r in runs)


def state_ratio(results: Results, state: str, server: str) -> Optional[Spread]:
    runs = state_runs(results, state, server)
    return spread(runs, "ratio") if in_state(runs) else None


def measured(results: Results) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The states and the forwarders of the run (a run may narrow both)."""
    runs = results["states"].table("runs", ("state", "server"))
    return ([s for s in STATES if where(runs, state=s[0])], [f for f in FORWARDERS if where(runs, server=f[0])])


def states_table(results: Results) -> list[str]:
    res = results["states"]
    states, forwarders = measured(results)
    rows = []
    for state, label in states:
        cells = [f"{label} (`{state}`)"]
        for server, _ in forwarders:
            runs = state_runs(results, state, server)
            s = spread(runs, "ratio")
            if s is None:
                cells.append("—")
            elif not in_state(runs):
                cells.append("not in this state: opens a session at start")
            else:
                bad = sum(int(number(r.get("bad")) or 0) for r in runs)
                cells.append(s.ratio() + (f"; {bad} failed" if bad else ""))
        rows.append(cells)
    out = table(["state before the burst"] + [f for _, f in forwarders], rows, "l" + "r" * len(forwarders))
    return out + ["", res.provenance()]


def states_detail(results: Results) -> list[str]:
    res = results["states"]
    rows = []
    for state, _ in measured(results)[0]:
        nx = state_runs(results, state, "nxdns-3.6")
        if not nx:
            continue
        walls = [spread(state_runs(results, state, s), "wall_ms") for s in ("nxdns-3.6", "nxdns-2.28", "unbound")]
        conns, resumed = median(nx, "conns"), median(nx, "resumed")
        nx_stair = max((spread(state_runs(results, state, s), "stair") or Spread(0, 0, 0, 0)).high
                       for s in ("nxdns-3.6", "nxdns-2.28"))
        peer_stair = max((spread(state_runs(results, state, s), "stair") or Spread(0, 0, 0, 0)).high for s in PEERS)
        rows.append([f"`{state}`", " / ".join(dash(None if w is None else f"{w.median:.0f}") for w in walls),
                     f"{conns:.0f}" + (f" ({resumed:.0f} resumed)" if resumed else "") if conns is not None else "—",
                     f"{nx_stair:.2f}", f"{peer_stair:.2f}"])
    return table(["state", "wall ms: nxdns 1.3 / 1.2 / unbound", "nxdns 1.3 connections", "worst staircase, nxdns",
                  "worst staircase, peers"], rows, "lrrrr") + ["", f"*The runs of the table above ({res.path.name}).*"]


def doh_table(results: Results) -> list[str]:
    res = results["doh"]
    runs = res.table("runs", ("server", "upstream", "rtt_ms", "cold_ms", "cold_ratio", "warm_ms", "warm_ratio", "bad"))
    rows = []
    for proto, proto_label in (("h2", "HTTP/2 (nghttpx)"), ("h1", "HTTP/1.1")):
        # At 0 ms the ratio divides by a sub-millisecond query: scheduling
        # noise, which the result keeps and the table leaves out.
        for rtt in (40,):
            for server, label in FORWARDERS[:2]:
                r = where(runs, server=server, upstream=proto, rtt_ms=rtt)
                if not r:
                    continue
                cold, warm = spread(r, "cold_ratio"), spread(r, "warm_ratio")
                rows.append([label, f"{proto_label}, {rtt} ms", dash(ms(spread(r, "cold_ms"))),
                             dash(cold.ratio() if cold else None), dash(ms(spread(r, "warm_ms"))),
                             dash(warm.ratio() if warm else None),
                             f"{sum(int(number(x.get('bad')) or 0) for x in r)}"])
    return table(["forwarder", "upstream, RTT", "cold ms", "cold ratio", "warm ms", "warm ratio", "failed"], rows,
                  "llrrrrr") + ["", res.provenance()]


def ms(s: Optional[Spread]) -> Optional[str]:
    return None if s is None else f"{s.median:.0f}"


# --------------------------------------------------------- the WAN's return
def wan_table(results: Results) -> list[str]:
    res = results["wan"]
    rows = []
    for r in ordered(res.table("servers", ("server", "cycles"))):
        cycles = r["cycles"]
        if not isinstance(cycles, list):
            raise RenderError(f"{res.path}: server {r['server']}: cycles is not a list")
        firsts = [c.get("first_ms") for c in cycles if isinstance(c, dict)]
        answers = [c.get("first_answer_after_return_ms") for c in cycles if isinstance(c, dict)]
        outage = r.get("outage") if isinstance(r.get("outage"), dict) else {}
        assert isinstance(outage, dict)
        asked = sum(int(v) for v in outage.values())
        rows.append([label_of(str(r["server"])), ", ".join(wan_cell(x) for x in firsts),
                     ", ".join(wan_cell(x, "none") for x in answers),
                     f"{outage.get('NOERROR', 0)} of {asked}"])
    return table(["forwarder", "first query after the return, ms (each outage)",
                  "first answer to anything after it, ms", "names asked in the outage: answered"], rows) + [
        "", res.provenance()]


def wan_cell(x: object, missing: str = "timeout") -> str:
    n = number(x)
    if n is not None:
        return f"{n:.0f}"
    return missing if x is None else str(x)


def label_of(server: str) -> str:
    return dict(FORWARDERS).get(server, server)


# --------------------------------------------------------------- sustained
def sustained_table(results: Results) -> list[str]:
    res = results["sustained"]
    rounds = res.table("rounds", ("round", "server", "noerror_qps", "p50_ms", "p99_ms", "us_per_answer"))
    ub = median(where(rounds, server="unbound"), "noerror_qps")
    rows = []
    for server, label in [("fixture-direct", "the fixture alone (dnsperf speaks DoT to it)")] + FORWARDERS:
        r = where(rounds, server=server)
        q = spread(r, "noerror_qps")
        if q is None:
            continue
        us, cpu = median(r, "us_per_answer"), median(r, "srv_cpu_share")
        rows.append([label, q.count(), f"{median(r, 'p50_ms'):.2f} / {median(r, 'p99_ms'):.2f}",
                     dash(None if us is None else f"{us:.0f} µs"), dash(None if cpu is None else f"{100 * cpu:.0f} %"),
                     dash(None if not ub or server == "fixture-direct" else f"{q.median / ub:.2f}")])
    return table(["server", "NOERROR/s", "p50 / p99 ms", "CPU per answer", "CPU (one core)", "× unbound"], rows,
                 "lrrrrr") + ["", res.provenance()]


def outstanding_table(results: Results) -> list[str]:
    res = results["outstanding_500"]
    rounds = res.table("rounds", ("server", "noerror_pct", "noerror_qps", "fwd_cpu_per_1k", "fix_cpu_per_1k"))
    nx = median(where(rounds, server="nxdns"), "noerror_qps")
    rows = []
    for server in ("nxdns", "unbound", "kresd"):
        r = where(rounds, server=server)
        q = spread(r, "noerror_qps")
        pct = spread(r, "noerror_pct")
        if q is None or pct is None:
            continue
        rows.append([server, pct.ratio(), q.count(), f"{1000 * (median(r, 'fwd_cpu_per_1k') or 0):.0f} µs",
                     f"{1000 * (median(r, 'fix_cpu_per_1k') or 0):.0f} µs",
                     "—" if server == "nxdns" or not nx else f"{nx / q.median:.2f}"])
    return table(["server", "NOERROR %", "NOERROR/s", "CPU per answer", "the fixture's CPU per answer",
                  "nxdns ÷ this"], rows, "lrrrrr") + ["", res.provenance()]


# ------------------------------------------------------------------ memory
def mib(kib: object) -> str:
    n = number(kib)
    return "—" if n is None else f"{n / 1024:.1f} MiB"


def memory_table(results: Results) -> list[str]:
    res = results["memory"]
    rows = []
    for r in ordered(res.table("servers", ("server", "idle_kib", "after_burst_kib", "two_by_eight_kib"))):
        two = "—" if number(r.get("two_by_eight_kib")) is None else \
            f"{mib(r['two_by_eight_kib'])} ({r.get('sessions0')} + {r.get('sessions1')} sessions)"
        pss = mib(r.get("idle_pss_kib"))
        if number(r.get("two_by_eight_pss_kib")) is not None:
            pss += f" / {mib(r['two_by_eight_pss_kib'])}"
        own = mib(r.get("idle_anon_kib"))
        if number(r.get("two_by_eight_anon_kib")) is not None:
            own += f" / {mib(r['two_by_eight_anon_kib'])}"
        rows.append([label_of(str(r["server"])), mib(r["idle_kib"]), mib(r["after_burst_kib"]), two, pss, own])
    return table(["forwarder", "idle", "after a cold and a warm burst", "2 upstreams × 8 sessions",
                  "PSS idle / 2 × 8", "own (anonymous) idle / 2 × 8"], rows, "lrrrrr") + ["", res.provenance()]


# --------------------------------------------------------------------- CPU
def cpu_table(results: Results) -> list[str]:
    res = results["cpu"]
    rows = []
    for r in ordered(res.table("servers", ("server", "tls", "ir_per_query", "noerror1", "noerror2", "queries1",
                                           "queries2"))):
        sent = (number(r["queries1"]) or 0) + (number(r["queries2"]) or 0)
        answered = (number(r["noerror1"]) or 0) + (number(r["noerror2"]) or 0)
        ir = number(r["ir_per_query"])
        rows.append([label_of(str(r["server"])), str(r["tls"]), dash(None if ir is None else thousands(ir)),
                     "all" if answered == sent else f"{answered:.0f} of {sent:.0f}"])
    return table(["forwarder", "TLS", "instructions per query", "answered NOERROR"], rows, "llrr") + [
        "", res.provenance()]


def function_name(text: str) -> str:
    text = re.sub(r"^[^:\s]+:(?!:)", "", text.strip())  # callgrind's "file:" prefix
    m = re.match(r"(.*?)(?: \[([^\]]+)\])?$", text)
    fn, obj = (m.group(1), m.group(2)) if m else (text, None)
    fn = fn.split("(")[0] or fn
    lib = obj.rsplit("/", 1)[-1].split(".so")[0] if obj else ""
    return f"`{fn}`" + (f" ({lib})" if lib and "nxdns" not in lib and "???" not in fn else "")


def cpu_profile(results: Results) -> list[str]:
    res = results["cpu"]
    # callgrind counts an inlined function apart in each file it was inlined
    # from: one line per function here.
    shares: dict[str, float] = {}
    for r in where(res.table("top", ("server", "share_pct", "function")), server="nxdns-3.6"):
        name = function_name(str(r["function"]))
        shares[name] = shares.get(name, 0.0) + (number(r["share_pct"]) or 0.0)
    top = sorted(shares.items(), key=lambda kv: -kv[1])[:8]
    rows = [[f"{share:.1f} %", name] for name, share in top]
    return table(["share of nxdns's instructions", "function"], rows, "rl") + [
        "", f"*The 600-query window of the TLS 1.3 row above ({res.path.name}).*"]


PI_CLOCK_HZ = 1.5e9  # Raspberry Pi 4 B, Cortex-A72
PI_IPC = (1.5, 0.8)  # best and worst instructions per cycle on bignum code
PI_ISA = (1.0, 1.5)  # AArch64 / x86-64 instructions for the same work


def pi_ms(ir: Optional[float]) -> Optional[str]:
    if ir is None:
        return None
    low = ir * PI_ISA[0] / (PI_IPC[0] * PI_CLOCK_HZ) * 1000
    high = ir * PI_ISA[1] / (PI_IPC[1] * PI_CLOCK_HZ) * 1000
    return f"{low:.0f}..{high:.0f}" if low >= 1 else f"{low:.1f}..{high:.1f}"


def mega(ir: Optional[float]) -> Optional[str]:
    return None if ir is None else f"{ir / 1e6:.1f} M"


CHAINS = {"ecdsa": "ECDSA P-256", "rsa": "RSA-2048"}


def handshake_table(results: Results) -> list[str]:
    res = results["handshake"]
    rows_in = res.table("rows", ("server", "chain", "ir_full_handshake", "ir_resumed_handshake"))
    rank = {s: i for i, s in enumerate(["nxdns-3.6", "nxdns-2.28", "openssl"])}
    chains = list(dict.fromkeys(str(r["chain"]) for r in rows_in))
    rows = []
    for r in sorted(rows_in, key=lambda r: (chains.index(str(r["chain"])), rank.get(str(r["server"]), 9))):
        full = number(r["ir_full_handshake"])
        base = where(rows_in, server="openssl", chain=r["chain"])
        ossl = number(base[0]["ir_full_handshake"]) if base else None
        resumed = mega(number(r["ir_resumed_handshake"]))
        if resumed and r.get("resumed") == 0:
            resumed += " (not resumed)"
        client = "OpenSSL 3 `s_time`" if r["server"] == "openssl" else label_of(str(r["server"]))
        rows.append([client, CHAINS.get(str(r["chain"]), str(r["chain"])), dash(mega(full)), dash(resumed),
                     dash(None if not (full and ossl) else f"{full / ossl:.1f}"),
                     dash(pi_ms(full)) + " / " + dash(pi_ms(number(r["ir_resumed_handshake"]))),
                     dash(mega(number(r.get("ir_burst"))))])
    return table(["client", "chain", "full handshake", "resumed", "full ÷ OpenSSL's", "Pi 4 model, ms: full / resumed",
                  "30-name burst on one open session"], rows, "llrrrrr") + ["", res.provenance()]


# ------------------------------------------------------------ answer cache
def cache_trace(results: Results) -> list[str]:
    res = results["cache_bench"]
    rows = []
    for r in res.table("rows", ("server", "prefetch", "hit_ratio", "upstream_per_1k", "p50_ms", "p99_ms")):
        full = mib(r.get("rss_full_kib"))
        rows.append([str(r["server"]), "on" if r["prefetch"] in (True, "true") else "off",
                     f"{number(r['hit_ratio']) or 0:.4f}", f"{number(r['upstream_per_1k']) or 0:.1f}",
                     f"{r['p50_ms']} / {r['p99_ms']}", mib(r.get("rss_base_kib")),
                     full if full == "—" else f"{full} ({thousands(number(r.get('filled')) or 0)} names)"])
    return table(["server", "prefetch", "hit ratio", "upstream exchanges per 1,000 queries", "p50 / p99 ms",
                  "RSS idle", "RSS after 100,000 names"], rows, "llrrrrr") + ["", res.provenance()]


def cache_outage(results: Results) -> list[str]:
    res = results["cache_outage"]
    alive = {str(r["server"]): r.get("alive") for r in res.table("alive", ("server", "alive"))}
    rows = []
    for r in res.table("servers", ("server", "known_sent", "known_noerror_within", "known_p50_ms", "known_max_ms")):
        sent = number(r["known_sent"]) or 0
        within = number(r["known_noerror_within"]) or 0
        other = r.get("known_other") if isinstance(r.get("known_other"), dict) else {}
        assert isinstance(other, dict)
        unseen = r.get("unseen_rcodes") if isinstance(r.get("unseen_rcodes"), dict) else {}
        assert isinstance(unseen, dict)
        rows.append([str(r["server"]), f"{within / sent:.4f}" if sent else "—", f"{r['known_p50_ms']} / {r['known_max_ms']}",
                     ", ".join(f"{k} {v}" for k, v in sorted(other.items())) or "none",
                     ", ".join(f"{k} {v}" for k, v in sorted(unseen.items())) or "—",
                     "yes" if alive.get(str(r["server"])) == "yes" else "no"])
    return table(["server", "known names NOERROR within 1.8 s", "their p50 / max ms", "known names answered otherwise",
                  "unseen names", "same process after"], rows, "lrrlll") + ["", res.provenance()]


def cache_cpu(results: Results) -> list[str]:
    res = results["cache_cpu"]
    rows = [[str(r["server"]), thousands(number(r["ir_per_answer"]) or 0),
             "all" if r["noerror1"] == r["queries1"] and r["noerror2"] == r["queries2"] else "not all"]
            for r in res.table("rows", ("server", "ir_per_answer", "noerror1", "noerror2", "queries1", "queries2"))]
    return table(["server", "instructions per cached answer", "answered NOERROR"], rows, "lrr") + ["", res.provenance()]


def cache_qps_rows(res: Result) -> dict[tuple[str, str], dict[str, float]]:
    tick = number(res.param("clk_tck")) or 100.0
    out: dict[tuple[str, str], dict[str, float]] = {}
    runs = res.table("runs", ("mode", "server", "noerror_qps", "noerror", "cpu_ticks"))
    for mode in dict.fromkeys(str(r["mode"]) for r in runs):
        for server in dict.fromkeys(str(r["server"]) for r in runs):
            r = where(runs, mode=mode, server=server)
            if not r:
                continue
            caps = [{"cap": (number(x["noerror"]) or 0) / ((number(x["cpu_ticks"]) or 0) / tick)}
                    for x in r if number(x["cpu_ticks"])]
            out[(mode, server)] = {"qps": median(r, "noerror_qps") or 0, "cap": median(caps, "cap") or 0}
    return out


def cache_qps(results: Results) -> list[str]:
    res = results["cache_qps"]
    figures = cache_qps_rows(res)
    names = {"open": "open (`-T 1 -q 100`)", "paced": f"paced (`-Q {res.param('paced_qps')}`)",
             "sat": "saturating (`-T 2 -q 200`)"}
    rows = []
    for (mode, server), f in figures.items():
        ub = figures.get((mode, "unbound"))
        rows.append([names.get(mode, mode), server, thousands(f["qps"]),
                     "—" if server == "unbound" or not ub else f"{f['qps'] / ub['qps']:.2f}",
                     thousands(f["cap"]), "—" if server == "unbound" or not ub else f"{f['cap'] / ub['cap']:.2f}"])
    return table(["run", "server", "NOERROR/s", "× unbound", "answers per CPU-second", "× unbound"], rows,
                 "llrrrr") + ["", res.provenance()]


# ------------------------------------------- the cache on the trace, replayed
def octets(n: float) -> str:
    """A cache size as the configuration would say it: 64 KiB, 16 MiB."""
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n / size:.0f} {unit}"
    return f"{n:.0f} octets"


def points(difference: float) -> str:
    """A difference of two ratios in percentage points, signed: +0.53, −0.72, 0.00."""
    text = f"{100 * difference:+.2f}"
    return "0.00" if text in ("+0.00", "-0.00") else text.replace("-", "−")


def replay_rows(res: Result) -> list[Record]:
    return res.table("rows", ("seed", "policy", "prefetch", "max_bytes", "hit_ratio", "upstream_per_1k", "prefetches",
                              "entries"))


def replay_one(rows: Sequence[Record], **match: object) -> Optional[Record]:
    found = where(rows, **match)
    return found[0] if found else None


def cache_eviction(results: Results) -> list[str]:
    res = results["cache_replay"]
    rows = replay_rows(res)
    seeds = list(dict.fromkeys(r["seed"] for r in rows))
    out = []
    for size in sorted({number(r["max_bytes"]) or 0 for r in rows}):
        cells: dict[str, list[str]] = {"lru": [], "sieve": [], "gain": []}
        for seed in seeds:
            lru = replay_one(rows, seed=seed, policy="lru", prefetch="off", max_bytes=size)
            sieve = replay_one(rows, seed=seed, policy="sieve", prefetch="off", max_bytes=size)
            a = number(lru["hit_ratio"]) if lru else None
            b = number(sieve["hit_ratio"]) if sieve else None
            cells["lru"].append(dash(None if a is None else f"{a:.4f}"))
            cells["sieve"].append(dash(None if b is None else f"{b:.4f}"))
            cells["gain"].append(dash(None if a is None or b is None else points(b - a)))
        entries = median(where(rows, prefetch="off", max_bytes=size), "entries")
        out.append([octets(size), dash(None if entries is None else thousands(entries))] +
                   [" / ".join(cells[k]) for k in ("lru", "sieve", "gain")])
    each = " / ".join(str(s) for s in seeds)
    return table(["max_bytes", "entries held", f"LRU hit ratio (seeds {each})", f"SIEVE hit ratio (seeds {each})",
                  "SIEVE − LRU, points"], out, "rrlll") + ["", res.provenance()]


def cache_prefetch(results: Results) -> list[str]:
    res = results["cache_replay"]
    rows = replay_rows(res)
    seed = rows[0]["seed"] if rows else None
    out = []
    for size in sorted({number(r["max_bytes"]) or 0 for r in rows}):
        off = replay_one(rows, seed=seed, policy="sieve", prefetch="off", max_bytes=size)
        on = replay_one(rows, seed=seed, policy="sieve", prefetch="on", max_bytes=size)
        if off is None or on is None:
            continue
        out.append([octets(size),
                    f"{number(off['hit_ratio']) or 0:.4f} → {number(on['hit_ratio']) or 0:.4f}",
                    f"{number(off['upstream_per_1k']) or 0:.1f} → {number(on['upstream_per_1k']) or 0:.1f}",
                    thousands(number(on["prefetches"]) or 0)])
    return table(["max_bytes", "hit ratio, prefetch off → on", "upstream exchanges per 1,000 queries, off → on",
                  "prefetches"], out, "rrrr") + ["", f"*Seed {seed}, SIEVE: the runs of the table above "
                                                     f"({res.path.name}).*"]


# ---------------------------------------------------- names answered here
LOCAL_LABELS = [("nxdns-records", "nxdns, hosts-file names"), ("nxdns-special", "nxdns, `.invalid` and private PTR"),
                ("nxdns-cached", "nxdns, cached answers"), ("dnsmasq-hosts", "dnsmasq, the same hosts file")]


def local_names(results: Results) -> list[str]:
    res = results["local_names"]
    rounds = res.table("rounds", ("label", "answers_per_s", "cpu_ms_per_1k"))
    rows = []
    for label, text in LOCAL_LABELS:
        r = where(rounds, label=label)
        q = spread(r, "answers_per_s")
        if q is None:
            continue
        cpu = median(r, "cpu_ms_per_1k")
        rows.append([text, q.count(), dash(None if cpu is None else f"{cpu:.1f} µs")])
    return table(["answered", "answers/s", "CPU per answer"], rows, "lrr") + ["", res.provenance()]


def figures_of(res: Result, table_name: str) -> dict[str, Record]:
    return {str(r["figure"]): r for r in res.table(table_name, ("figure",))}


def blocklist(results: Results) -> list[str]:
    res = results["blocklist"]
    nx = {k: number(r.get("value")) for k, r in figures_of(res, "nxdns").items()}
    dm = res.table("dnsmasq", ("load_s_empty", "rss_empty_kib", "load_s", "rss_kib", "hwm_kib", "names"))[0]
    dm_load = (number(dm["load_s"]) or 0) - (number(dm["load_s_empty"]) or 0)

    def ns(key: str) -> str:
        cpu, wall = nx.get(f"{key}_cpu_ns"), nx.get(f"{key}_ns")
        return f"{cpu or 0:.0f} ns CPU ({wall or 0:.0f} ns wall)"
    # What the running daemons show (memory added, time until in use) is
    # the daemon table's: here only what that one does not measure.
    rows = [
        ["names loaded", thousands(nx.get("rules") or 0), thousands(number(dm["names"]) or 0)],
        ["peak memory added while loading at start", mib(nx.get("build_peak_kib")),
         mib((number(dm["hwm_kib"]) or 0) - (number(dm["rss_empty_kib"]) or 0))],
        ["building the table alone, CPU", f"{(nx.get('build_cpu_ms') or 0) / 1000:.2f} s", ""],
        ["from start until the list is read", "", f"{dm_load:.1f} s"],
        ["lookup, hosts list: listed / other name", ns("lookup_hit") + " / " + ns("lookup_miss"), ""],
        ["lookup, domain list: below a listed / other name",
         ns("subtree_lookup_hit") + " / " + ns("subtree_lookup_miss"), ""],
        ["10 ms timer on the loop, worst lateness: idle / while the list is built again",
         f"{nx.get('idle_timer_worst_late_ms') or 0:.1f} / {nx.get('reload_timer_worst_late_ms') or 0:.1f} ms", ""],
    ]
    return table(["", "nxdns", "dnsmasq"], rows, "lrr") + ["", res.provenance()]


def milliseconds(x: Optional[float]) -> str:
    return "—" if x is None else (f"{x:,.0f} ms" if x >= 100 else f"{x:.1f} ms")


def blocklist_daemon(results: Results) -> list[str]:
    res = results["blocklist_daemon"]
    f = figures_of(res, "figures")

    def both(key: str, fmt: Callable[[Optional[float]], str]) -> list[str]:
        r = f.get(key, {})
        return [fmt(number(r.get("nxdns"))), fmt(number(r.get("dnsmasq")))]

    def of(key: str) -> list[str]:
        sent, on_time = f.get("win_sent", {}), f.get(key, {})
        return [f"{on_time.get(s)} of {sent.get(s)}" for s in ("nxdns", "dnsmasq")]

    def added(kib: Optional[float]) -> str:
        return mib(kib)
    rss_with, rss_without = f.get("rss_with_kib", {}), f.get("rss_without_kib", {})
    peak, before = f.get("swap_hwm_kib", {}), f.get("swap_rss_before_kib", {})
    rows = [
        ["resident memory added by the list"] + [added((number(rss_with.get(s)) or 0) - (number(rss_without.get(s)) or 0))
                                                 for s in ("nxdns", "dnsmasq")],
        ["reload until blocking is active"] + both("load_ms", lambda x: "—" if x is None else f"{x / 1000:.2f} s"),
        ["peak while the same list reloads, over one list in use"] + [
            added((number(peak.get(s)) or 0) - (number(before.get(s)) or 0)) for s in ("nxdns", "dnsmasq")],
        ["slowest query while it reloads"] + both("swap_max", milliseconds),
        ["slowest query, nothing reloading"] + both("idle_max", milliseconds),
        [f"queries sent during the reload answered within {res.param('goal_ms')} ms"] + of("win_on_time"),
        ["queries of the stream answered"] + [f"{f.get('answered', {}).get(s)} of {f.get('sent', {}).get(s)}"
                                              for s in ("nxdns", "dnsmasq")],
    ]
    return table(["", "nxdns", "dnsmasq"], rows, "lrr") + ["", res.provenance()]


def doh_churn(results: Results) -> list[str]:
    res = results["doh_churn"]
    runs = res.table("runs", ("run", "opened", "queries_per_s", "lost"))

    def each(field: str, fmt: Callable[[float], str] = lambda x: f"{x:.0f}") -> str:
        return ", ".join(dash(None if number(r[field]) is None else fmt(number(r[field]) or 0)) for r in runs)
    rows = [[each("opened"), each("queries_per_s", thousands), each("lost")]]
    return table(["connections opened, each run", "queries/s", "lost"], rows, "rrr") + ["", res.provenance()]


BLOCKS: dict[str, Callable[[Results], list[str]]] = {
    "states": states_table,
    "states-detail": states_detail,
    "doh": doh_table,
    "wan": wan_table,
    "sustained": sustained_table,
    "outstanding": outstanding_table,
    "memory": memory_table,
    "cpu": cpu_table,
    "cpu-profile": cpu_profile,
    "handshake": handshake_table,
    "cache-trace": cache_trace,
    "cache-outage": cache_outage,
    "cache-cpu": cache_cpu,
    "cache-qps": cache_qps,
    "cache-eviction": cache_eviction,
    "cache-prefetch": cache_prefetch,
    "local-names": local_names,
    "blocklist": blocklist,
    "blocklist-daemon": blocklist_daemon,
    "doh-churn": doh_churn,
}

