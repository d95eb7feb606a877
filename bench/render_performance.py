#!/usr/bin/env python3
"""Renders the generated tables of docs/performance.md and bench/cache.md
from bench result files (bench/results/*.json, written by the benches
through bench/bench_result.py).

    render_performance.py [--results DIR] [--check] [DOC...]

A generated block is the text between a line `<!-- generated: NAME -->`
and the next `<!-- end -->`; everything between them is replaced by the
table NAME renders, with the provenance of its figures under it (when and
how they were measured, or that they were transcribed); a block whose
result file is missing says "Not measured" and which bench writes it.
Text outside the blocks is left as it is. --check writes nothing: it
prints what would change and exits 1 if anything would, so a test can hold
the documents to their result files.
"""
from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path
from typing import Callable

from bench_figures import MissingResult, RenderError, Results
import performance_tables
from performance_targets import targets_table

ROOT = Path(__file__).resolve().parent.parent
OPEN = re.compile(r"^<!-- generated: ([a-z0-9_-]+) -->$")
CLOSE = "<!-- end -->"
BLOCKS: dict[str, Callable[[Results], list[str]]] = {**performance_tables.BLOCKS, "targets": targets_table}
# The documents with generated blocks: rendered when no DOC is named.
DOCUMENTS = [ROOT / "docs" / "performance.md", ROOT / "bench" / "cache.md"]


def render(text: str, results: Results, name: str = "document") -> str:
    """`text` with every generated block rendered again from `results`."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        m = OPEN.match(line)
        i += 1
        if not m:
            if line.startswith("<!-- generated:"):
                raise RenderError(f"{name}:{i}: malformed marker (expected `<!-- generated: NAME -->`)")
            if line == CLOSE:
                raise RenderError(f"{name}:{i}: `{CLOSE}` without a block open")
            continue
        block = m.group(1)
        opened = i
        while i < len(lines) and lines[i] != CLOSE:
            if OPEN.match(lines[i]):
                raise RenderError(f"{name}:{i + 1}: block '{block}' (line {opened}) is not closed before this one")
            i += 1
        if i == len(lines):
            raise RenderError(f"{name}:{opened}: block '{block}' has no `{CLOSE}`")
        make: Callable[[Results], list[str]] | None = BLOCKS.get(block)
        if make is None:
            raise RenderError(f"{name}:{opened}: unknown block '{block}' (known: {', '.join(sorted(BLOCKS))})")
        try:
            body = make(results)
        except MissingResult as e:
            # Said in the document, where a table would stand: a run that
            # wrote no result measured nothing, which is no error of the text.
            said = e.not_measured()
            body = [f"*{said[:1].upper()}{said[1:]}.*"]
        except RenderError as e:
            raise RenderError(f"{name}:{opened}: block '{block}': {e}") from None
        # A comment line ends an HTML block and may interrupt a paragraph
        # (CommonMark), so the table can follow the marker directly.
        out += body
        out.append(CLOSE)
        i += 1
    return "\n".join(out)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--results", type=Path, default=ROOT / "bench" / "results")
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a document is not what its results say")
    p.add_argument("docs", nargs="*", type=Path, default=DOCUMENTS)
    args = p.parse_args(argv)
    results = Results(args.results)
    stale = 0
    for doc in args.docs:
        try:
            before = doc.read_text()
            after = render(before, results, str(doc))
        except OSError as e:
            print(f"render_performance: {doc}: {e.strerror}", file=sys.stderr)
            return 2
        except RenderError as e:
            print(f"render_performance: {e}", file=sys.stderr)
            return 2
        if after == before:
            continue
        if args.check:
            stale += 1
            sys.stdout.writelines(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                                       f"{doc} (as committed)", f"{doc} (rendered from {args.results})"))
        else:
            doc.write_text(after)
            print(f"render_performance: {doc}: tables rendered again from {args.results}")
    if stale:
        print(f"render_performance: {stale} document(s) differ from their results "
              f"(run bench/render_performance.py to render them)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
