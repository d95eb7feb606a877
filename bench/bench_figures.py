"""Reading bench result files (bench/bench_result.py writes them) and the
arithmetic and number formats the rendered tables share: medians and
ranges over runs, thousands separators, the provenance line under a table.

A figure in a record is either a number (one run's measurement; the
renderer takes the median and range over the runs) or, in a result
transcribed from an older record whose runs were not kept, an object
{"median": M, "min": A, "max": B, "n": N} standing for all of them.
"""
from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence, Union

SCHEMA = 1
Record = Mapping[str, object]

# What writes each result file: named in the error when one is missing.
PRODUCERS = {
    "states": "bash bench/run.sh --only states --results bench/results",
    "wan": "bash bench/run.sh --only wan --results bench/results",
    "doh": "bash bench/run.sh --only doh --results bench/results",
    "sustained": "bash bench/run.sh --only sustained --results bench/results",
    "memory": "bash bench/run.sh --only memory --results bench/results",
    "cpu": "bash bench/run.sh --only cpu --results bench/results",
    "handshake": "bash bench/run.sh --only handshake --results bench/results",
    "outstanding_500": "bash bench/outstanding_500.sh build --results bench/results",
    "cache_bench": "bash bench/cache_bench.sh build --results bench/results",
    "cache_outage": "bash bench/cache_outage.sh build --results bench/results",
    "cache_cpu": "bash bench/cache_cpu.sh build --results bench/results",
    "cache_qps": "bash bench/cache_qps.sh build --saturate --results bench/results",
    "cache_replay": "bash bench/cache_replay.sh build --results bench/results",
    "local_names": "bash bench/local_names.sh build --results bench/results",
    "blocklist": "bash bench/blocklist.sh build --results bench/results",
    "blocklist_daemon": "bash bench/blocklist.sh build --results bench/results",
    "doh_churn": "BENCH_RESULTS=bench/results bash bench/doh_churn.sh build/src/cli/nxdns",
}


class RenderError(Exception):
    """A result file or a document the renderer cannot use; the message
    names the file (and line or field) and why."""


class MissingResult(RenderError):
    """No result file for a bench: nothing was measured, so a table says
    so and a target is not judged (rather than judged on no figures)."""

    def __init__(self, path: Path, bench: str) -> None:
        self.file = path.name
        self.producer = PRODUCERS.get(bench, "its bench")
        super().__init__(f"{path}: missing (written by: {self.producer})")

    def not_measured(self) -> str:
        return f"not measured: no {self.file} (`{self.producer}` writes it)"


@dataclass(frozen=True)
class Spread:
    median: float
    low: float
    high: float
    n: int

    def ratio(self, digits: int = 2) -> str:
        """'3.41 (3.37..3.62)', or the median alone for one run."""
        if self.n <= 1 or self.low == self.high:
            return f"{self.median:.{digits}f}"
        return f"{self.median:.{digits}f} ({self.low:.{digits}f}..{self.high:.{digits}f})"

    def count(self) -> str:
        """'24,069 (21,796..25,707)' for figures read as whole numbers."""
        if self.n <= 1 or round(self.low) == round(self.high):
            return thousands(self.median)
        return f"{thousands(self.median)} ({thousands(self.low)}..{thousands(self.high)})"


def thousands(x: float) -> str:
    return f"{x:,.0f}"


def number(value: object) -> Optional[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def spread(records: Iterable[Record], field: str) -> Optional[Spread]:
    """Median and range of `field` over the records (runs); None when no
    record has a figure there."""
    values: list[float] = []
    for r in records:
        v = r.get(field)
        if isinstance(v, Mapping):
            m, lo, hi = number(v.get("median")), number(v.get("min")), number(v.get("max"))
            if m is None:
                continue
            n = number(v.get("n"))
            return Spread(m, lo if lo is not None else m, hi if hi is not None else m, int(n) if n else 1)
        x = number(v)
        if x is not None:
            values.append(x)
    if not values:
        return None
    return Spread(statistics.median(values), min(values), max(values), len(values))


def median(records: Iterable[Record], field: str) -> Optional[float]:
    s = spread(records, field)
    return None if s is None else s.median


def where(records: Iterable[Record], **match: object) -> list[Record]:
    return [r for r in records if all(r.get(k) == v for k, v in match.items())]


def dash(text: Optional[str]) -> str:
    return "—" if text is None else text


def table(header: Sequence[str], rows: Iterable[Sequence[str]], align: Optional[str] = None) -> list[str]:
    """A Markdown table; `align` is one letter per column, l or r."""
    align = align or "l" * len(header)
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


@dataclass(frozen=True)
class Result:
    bench: str
    path: Path
    data: Mapping[str, object]

    def table(self, name: str, fields: Sequence[str] = ()) -> list[Record]:
        tables = self.data.get("tables")
        records = tables.get(name) if isinstance(tables, Mapping) else None
        if not isinstance(records, list):
            raise RenderError(f"{self.path}: no table '{name}'")
        for i, r in enumerate(records):
            if not isinstance(r, Mapping):
                raise RenderError(f"{self.path}: table '{name}', record {i + 1}: not an object")
            missing = [f for f in fields if f not in r]
            if missing:
                raise RenderError(f"{self.path}: table '{name}', record {i + 1}: no field {', '.join(missing)}")
        return records

    def param(self, key: str) -> object:
        params = self.data.get("params")
        return params.get(key) if isinstance(params, Mapping) else None

    def provenance(self) -> str:
        """The line under a table: when, by what, on what, with what."""
        d = self.data
        host = d.get("host") if isinstance(d.get("host"), Mapping) else {}
        assert isinstance(host, Mapping)
        date = str(d.get("date", "?")).replace("T", " ").replace("Z", " UTC")
        # Where a run put its files says nothing about its figures.
        command = re.sub(r" --(out|results) \S+", "", str(d.get("command") or ""))
        # A build tree by its name in the source tree, not the path it had on the bench's machine.
        command = re.sub(r"(?<![\w.-])/\S*/(build[\w.-]*)(?=[\s/]|$)", r"\1", command)
        how = f"`{command}`" if command else "the bench"
        kind = str(d.get("provenance", "measured"))
        if kind == "measured":
            head = f"Measured {date} by {how}"
        else:
            head = f"{kind[:1].upper()}{kind[1:]} ({how}), not re-measured"
        machine = []
        if host.get("nproc"):
            cpu = f" ({host['cpu']})" if host.get("cpu") else ""
            machine.append(f"{host['nproc']} CPUs{cpu}")
        load0, load1 = host.get("load_start"), host.get("load_end")
        if isinstance(load0, list) and isinstance(load1, list) and load0 and load1:
            machine.append(f"load {load0[0]} → {load1[0]}")
        if host.get("isolation"):
            machine.append(str(host["isolation"]))
        parts = [head]
        if machine:
            parts.append(", ".join(machine))
        software = self.software()
        if software:
            parts.append(software)
        return "*" + "; ".join(parts) + ".*"

    def software(self) -> str:
        versions = self.data.get("versions")
        if not isinstance(versions, Mapping):
            return ""
        nxdns, libs, peers = [], [], []
        for label, v in versions.items():
            if isinstance(v, Mapping):
                nxdns.append(str(v.get("nxdns", "?")))
                if v.get("mbedtls"):
                    libs.append(f"mbedTLS {v['mbedtls']}")
            elif v is not None and label != "getdns":
                peers.append(f"{label} {v}")
        out = []
        if nxdns:
            commit = self.data.get("nxdns_commit")
            at = f" at {commit}" if commit else ""
            versions_of_lib = [v.removeprefix("mbedTLS ") for v in dict.fromkeys(libs)]
            lib = f" (mbedTLS {', '.join(versions_of_lib)})" if libs else ""
            out.append(f"nxdns {', '.join(dict.fromkeys(nxdns))}{at}{lib}")
        return ", ".join(out + peers)


class Results:
    """The result files of one directory, read once each."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._read: dict[str, Result] = {}

    def __getitem__(self, bench: str) -> Result:
        if bench not in self._read:
            self._read[bench] = self._load(bench)
        return self._read[bench]

    def _load(self, bench: str) -> Result:
        path = self.directory / f"{bench}.json"
        if not path.is_file():
            raise MissingResult(path, bench)
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as e:
            raise RenderError(f"{path}:{e.lineno}: not JSON ({e.msg})") from None
        if not isinstance(data, dict):
            raise RenderError(f"{path}: a JSON object expected")
        if data.get("schema") != SCHEMA:
            raise RenderError(f"{path}: schema {data.get('schema')!r}, this renderer reads {SCHEMA}")
        if data.get("bench") != bench:
            raise RenderError(f"{path}: holds bench {data.get('bench')!r}, not {bench!r}")
        return Result(bench, path, data)


Number = Union[int, float]
