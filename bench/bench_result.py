#!/usr/bin/env python3
"""One bench run's machine-readable result: a JSON file that
bench/render_performance.py turns into the tables of docs/performance.md.

    bench_result.py --bench NAME --out FILE [--table NAME=FILE.tsv]...
                    [--jsonl NAME=FILE]... [--command CMD] [--param KEY=VALUE]...
                    [--nxdns LABEL=BINARY]... [--peer NAME]... [--load-start "1m 5m 15m"]

A table is a list of records, one per measurement (a run, a round, a
server): a TSV file whose first line names the columns, or JSON lines. TSV
cells that read as numbers are stored as numbers; "-" and empty cells as
null. The figures stay raw (every run, not the median): the renderer takes
medians and ranges, so a result can be read again another way.

Beside the tables the file records what the figures depend on: the date,
the machine (CPUs, model, kernel, load average at start and end), the
command, the workload parameters, and the versions of nxdns (each build
measured, and the tree's commit) and of every peer program named.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Optional, Union

Cell = Union[int, float, str, None]
SCHEMA = 1
ROOT = Path(__file__).resolve().parent.parent


def cell(text: str) -> Cell:
    if text in ("", "-"):
        return None
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", text):
        return float(text)
    return text


def read_tsv(path: str) -> list[dict[str, Cell]]:
    lines = Path(path).read_text().splitlines()
    if not lines:
        raise SystemExit(f"bench_result: {path}: empty (a header line naming the columns is needed)")
    header = lines[0].split("\t")
    records = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            raise SystemExit(f"bench_result: {path}:{number}: {len(cells)} cells, the header names {len(header)}")
        records.append({k: cell(v) for k, v in zip(header, cells)})
    return records


def read_jsonl(path: str) -> list[dict[str, object]]:
    records = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            raise SystemExit(f"bench_result: {path}:{number}: not JSON ({e.msg})") from None
        if not isinstance(value, dict):
            raise SystemExit(f"bench_result: {path}:{number}: a JSON object per line expected")
        records.append(value)
    return records


def run(argv: list[str]) -> Optional[str]:
    if shutil.which(argv[0]) is None and not os.path.isfile(argv[0]):
        return None
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout + done.stderr


def first_match(pattern: str, text: Optional[str]) -> Optional[str]:
    if text is None:
        return None
    m = re.search(pattern, text, re.MULTILINE)
    return m.group(1).strip() if m else None


def dpkg_version(package: str) -> Optional[str]:
    out = run(["dpkg-query", "-W", "-f=${Version}", package])
    return out.strip() if out and "no packages found" not in out else None


# How each peer program tells its version.
PEERS: dict[str, Callable[[], Optional[str]]] = {
    "unbound": lambda: first_match(r"^Version (\S+)", run(["unbound", "-V"])),
    "stubby": lambda: dpkg_version("stubby"),
    "getdns": lambda: dpkg_version("libgetdns10"),
    "kresd": lambda: first_match(r"version (\S+)", run(["kresd", "--version"])),
    "dnsperf": lambda: dpkg_version("dnsperf"),
    "dnsmasq": lambda: first_match(r"^Dnsmasq version (\S+)", run(["dnsmasq", "--version"])),
    "valgrind": lambda: first_match(r"valgrind-(\S+)", run(["valgrind", "--version"])),
    "nghttpx": lambda: first_match(r"nghttpx nghttp2/(\S+)", run(["nghttpx", "--version"])),
    "openssl": lambda: first_match(r"^OpenSSL (\S+)", run(["openssl", "version"])),
}


def nxdns_version(binary: str) -> dict[str, str]:
    # `nxdns version` prints "name version" lines: the daemon and its libraries.
    out = run([binary, "version"]) or ""
    found = {}
    for line in out.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2:
            found[parts[0]] = parts[1].strip()
    return found


def commit() -> Optional[str]:
    head = run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"])
    if head is None or not re.fullmatch(r"[0-9a-f]+\s*", head):
        return None
    dirty = run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"])
    return head.strip() + ("-dirty" if dirty else "")


def load_average() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def cpu_model() -> Optional[str]:
    try:
        return first_match(r"^model name\s*:\s*(.*)$", Path("/proc/cpuinfo").read_text())
    except OSError:
        return None


def named(spec: str, option: str) -> tuple[str, str]:
    name, sep, value = spec.partition("=")
    if not sep or not name:
        raise SystemExit(f"bench_result: {option} {spec!r}: NAME=VALUE expected")
    return name, value


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--bench", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--table", action="append", default=[], help="NAME=FILE.tsv")
    p.add_argument("--jsonl", action="append", default=[], help="NAME=FILE of JSON lines")
    p.add_argument("--command", default=None)
    p.add_argument("--param", action="append", default=[], help="KEY=VALUE (a workload parameter)")
    p.add_argument("--nxdns", action="append", default=[], help="LABEL=BINARY (a build measured)")
    p.add_argument("--peer", action="append", default=[], help="a peer program: " + ", ".join(PEERS))
    p.add_argument("--load-start", default=None, help="/proc/loadavg's first three fields when the bench began")
    p.add_argument("--isolation", default=None)
    args = p.parse_args(argv)

    tables: dict[str, object] = {}
    for spec in args.table:
        name, path = named(spec, "--table")
        tables[name] = read_tsv(path)
    for spec in args.jsonl:
        name, path = named(spec, "--jsonl")
        tables[name] = read_jsonl(path)
    if not tables:
        raise SystemExit("bench_result: no --table or --jsonl: a result without figures")
    versions: dict[str, object] = {}
    for spec in args.nxdns:
        label, binary = named(spec, "--nxdns")
        versions[label] = nxdns_version(binary)
    for peer in args.peer:
        if peer not in PEERS:
            raise SystemExit(f"bench_result: --peer {peer}: unknown (known: {', '.join(PEERS)})")
        versions[peer] = PEERS[peer]()
    host: dict[str, object] = {
        "nproc": os.cpu_count(),
        "cpu": cpu_model(),
        "kernel": platform.release(),
        "load_end": load_average(),
    }
    if args.load_start:
        host["load_start"] = [float(x) for x in args.load_start.split()[:3]]
    if args.isolation:
        host["isolation"] = args.isolation
    result = {
        "schema": SCHEMA,
        "bench": args.bench,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
        "provenance": "measured",
        "command": args.command,
        "host": host,
        "nxdns_commit": commit(),
        "versions": versions,
        "params": {k: cell(v) for k, v in (named(s, "--param") for s in args.param)},
        "tables": tables,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dump(result))
    return 0


def dump(result: dict[str, object]) -> str:
    # One record per line: a result stays a small file that a diff reads.
    lines = ["{"]
    keys = list(result)
    for i, key in enumerate(keys):
        comma = "," if i + 1 < len(keys) else ""
        value = result[key]
        if key == "tables" and isinstance(value, dict):
            lines.append(' "tables": {')
            names = list(value)
            for j, name in enumerate(names):
                records = value[name]
                lines.append(f"  {json.dumps(name)}: [")
                for k, record in enumerate(records):
                    lines.append("   " + json.dumps(record) + ("," if k + 1 < len(records) else ""))
                lines.append("  ]" + ("," if j + 1 < len(names) else ""))
            lines.append(" }" + comma)
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
