#!/usr/bin/env python3
"""bench/render_performance.py: the tables of docs/performance.md and
bench/cache.md come from bench result files, never from hand copies.

- sample.md rendered from the small result files in results/ is exactly
  sample_expected.md (medians and ranges over runs, a transcribed result's
  figures and provenance, a forwarder that was not in the state it claims,
  failed answers, the WAN cycles' rcodes, the cache replay's policies per
  seed and prefetch's cost);
- rendering is idempotent and leaves the text outside the blocks alone;
- docs/performance.md and bench/cache.md are what the committed
  bench/results/ say;
- a malformed result file, an unknown, unclosed or stray block is an error
  naming the file and line, not a crash or a silent table; a missing result
  file renders "Not measured" and which bench writes it;
- a target is judged only on the state it names: the memory target says
  "not measured" for a run that did not open its sessions, or no run.
"""
import json
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import bench_figures  # noqa: E402
import performance_targets  # noqa: E402
import render_performance  # noqa: E402
from bench_figures import RenderError, Results  # noqa: E402


def render(text, results_dir=HERE / "results"):
    return render_performance.render(text, Results(results_dir), "doc.md")


class SampleDocument(unittest.TestCase):
    def test_renders_the_expected_tables(self):
        got = render((HERE / "sample.md").read_text())
        self.assertEqual((HERE / "sample_expected.md").read_text(), got)

    def test_rendering_twice_changes_nothing(self):
        once = render((HERE / "sample.md").read_text())
        self.assertEqual(once, render(once))

    def test_text_outside_the_blocks_is_kept(self):
        got = render((HERE / "sample.md").read_text())
        for line in ("# Sample", "Text outside the blocks stays as it is.", "Between the blocks.", "The end."):
            self.assertIn(line, got.split("\n"))
        self.assertNotIn("stale text that the renderer replaces", got)
        self.assertNotIn("| an old table |", got)


class CommittedDocument(unittest.TestCase):
    def test_the_documents_are_what_bench_results_say(self):
        self.assertEqual([ROOT / "docs" / "performance.md", ROOT / "bench" / "cache.md"], render_performance.DOCUMENTS)
        self.assertIn("<!-- generated: targets -->", (ROOT / "docs" / "performance.md").read_text())
        for doc in render_performance.DOCUMENTS:
            text = doc.read_text()
            self.assertEqual(text, render_performance.render(text, Results(ROOT / "bench" / "results"), str(doc)),
                             f"{doc} differs from bench/results/: run python3 bench/render_performance.py")

    def test_every_block_of_the_renderer_is_in_a_document(self):
        text = "\n".join(doc.read_text() for doc in render_performance.DOCUMENTS)
        missing = [b for b in render_performance.BLOCKS if f"<!-- generated: {b} -->" not in text]
        self.assertEqual([], missing)

    def test_check_mode_exits_1_on_a_stale_document_and_0_on_a_fresh_one(self):
        with tempfile.TemporaryDirectory() as d:
            doc = Path(d) / "doc.md"
            shutil.copy(HERE / "sample.md", doc)
            args = ["--results", str(HERE / "results"), "--check", str(doc)]
            self.assertEqual(1, render_performance.main(args))
            self.assertEqual((HERE / "sample.md").read_text(), doc.read_text(), "--check must write nothing")
            self.assertEqual(0, render_performance.main(args[:-2] + [str(doc)]))
            self.assertEqual(0, render_performance.main(args))


class Errors(unittest.TestCase):
    def assertRenderError(self, text, *parts, results_dir=HERE / "results"):
        with self.assertRaises(RenderError) as e:
            render(text, results_dir)
        for part in parts:
            self.assertIn(part, str(e.exception))

    def test_unknown_block(self):
        self.assertRenderError("a\n<!-- generated: nosuch -->\n<!-- end -->\n", "doc.md:2", "unknown block 'nosuch'")

    def test_block_without_end(self):
        self.assertRenderError("<!-- generated: states -->\n| table |\n", "doc.md:1", "no `<!-- end -->`")

    def test_end_without_block(self):
        self.assertRenderError("x\n<!-- end -->\n", "doc.md:2", "without a block open")

    def test_block_opened_inside_another(self):
        self.assertRenderError("<!-- generated: states -->\n<!-- generated: wan -->\n<!-- end -->\n", "doc.md:2",
                               "not closed")

    def test_malformed_marker(self):
        self.assertRenderError("<!-- generated: States table -->\n<!-- end -->\n", "doc.md:1", "malformed marker")

    def test_missing_result_is_not_measured_and_names_what_writes_it(self):
        got = render("<!-- generated: memory -->\n<!-- end -->\n")
        self.assertEqual("<!-- generated: memory -->\n*Not measured: no memory.json (`bash bench/run.sh --only memory "
                         "--results bench/results` writes it).*\n<!-- end -->\n", got)

    def test_malformed_result_names_its_line(self):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "states.json").write_text('{\n "schema": 1,\n "bench": "states",\n oops\n}\n')
            self.assertRenderError("<!-- generated: states -->\n<!-- end -->\n", "states.json:4", "not JSON",
                                   results_dir=Path(d))

    def test_result_of_another_bench_or_schema(self):
        with tempfile.TemporaryDirectory() as d:
            data = json.loads((HERE / "results" / "wan.json").read_text())
            (Path(d) / "states.json").write_text(json.dumps(data))
            self.assertRenderError("<!-- generated: states -->\n<!-- end -->\n", "holds bench 'wan'",
                                   results_dir=Path(d))
            data["bench"], data["schema"] = "states", 99
            (Path(d) / "states.json").write_text(json.dumps(data))
            self.assertRenderError("<!-- generated: states -->\n<!-- end -->\n", "schema 99", results_dir=Path(d))

    def test_record_without_a_field_the_table_needs(self):
        with tempfile.TemporaryDirectory() as d:
            data = json.loads((HERE / "results" / "states.json").read_text())
            del data["tables"]["runs"][2]["ratio"]
            (Path(d) / "states.json").write_text(json.dumps(data))
            self.assertRenderError("<!-- generated: states -->\n<!-- end -->\n", "record 3", "no field ratio",
                                   results_dir=Path(d))


def memory_result(directory, *servers):
    """A memory.json holding `servers`: (server, two_by_eight_kib, sessions0, sessions1)."""
    records = [{"server": name, "idle_kib": 9000, "after_burst_kib": 9500, "two_by_eight_kib": kib,
                "sessions0": s0, "sessions1": s1} for name, kib, s0, s1 in servers]
    data = {"schema": 1, "bench": "memory", "date": "2026-12-04T12:00Z", "command": "bash bench/run.sh --only memory",
            "tables": {"servers": records}}
    (Path(directory) / "memory.json").write_text(json.dumps(data))
    return Results(Path(directory))


class MemoryTarget(unittest.TestCase):
    """RSS <= 8 MiB with 2 upstreams x 8 sessions: judged only on a run that
    opened every session, never on fewer sessions (which would pass for
    less than the target asks) and never on no run."""
    CASES = [
        # (nxdns rows: server, RSS KiB at 2 x 8, sessions on upstream 0 and 1), verdict
        ([("nxdns-3.6", 7900, 8, 8), ("nxdns-2.28", 8000, 8, 8)], "met"),
        ([("nxdns-3.6", 8300, 8, 8), ("nxdns-2.28", 8400, 8, 8)], "**missed**"),
        ([("nxdns-3.6", 7900, 8, 8), ("nxdns-2.28", 8400, 8, 8)], "met on TLS 1.3; **missed** on TLS 1.2"),
        # One line short of its sessions: judged on the other alone.
        ([("nxdns-3.6", 7000, 7, 8), ("nxdns-2.28", 8000, 8, 8)], "met"),
        ([("nxdns-3.6", 7000, 7, 0), ("nxdns-2.28", 7100, 8, 0)],
         "not measured: the run reached 7 + 0 (TLS 1.3) and 8 + 0 (TLS 1.2) of the 8 + 8 open sessions"),
        ([("nxdns-3.6", 7000, 7, 0)], "not measured: the run reached 7 + 0 (TLS 1.3) of the 8 + 8 open sessions"),
        ([("nxdns-3.6", None, None, None), ("unbound", None, None, None)], "not measured: no nxdns run with 2 upstreams"),
        ([("unbound", None, None, None)], "not measured: no nxdns run with 2 upstreams"),
    ]

    def test_verdicts(self):
        for servers, want in self.CASES:
            with tempfile.TemporaryDirectory() as d:
                self.assertEqual(want, performance_targets.rss_two_by_eight(memory_result(d, *servers)), servers)

    def test_missing_result_is_not_measured_in_the_targets_table(self):
        with tempfile.TemporaryDirectory() as d:
            rows = [line for line in performance_targets.targets_table(Results(Path(d))) if "RSS ≤ 8 MiB" in line]
        self.assertEqual(1, len(rows))
        self.assertIn("| not measured: no memory.json (`bash bench/run.sh --only memory --results bench/results` "
                      "writes it) |", rows[0])


class Spreads(unittest.TestCase):
    CASES = [
        # (figures of the runs, median (low..high) as rendered)
        ([3.5], "3.50"),
        ([3.3, 3.9], "3.60 (3.30..3.90)"),
        ([3.9, 3.3, 3.5], "3.50 (3.30..3.90)"),
        ([1.0, 1.0, 1.0], "1.00"),
        ([{"median": 3.41, "min": 3.37, "max": 3.62, "n": 3}], "3.41 (3.37..3.62)"),
        ([None, "x", 2.0], "2.00"),
    ]

    def test_median_and_range_over_runs(self):
        for values, want in self.CASES:
            records = [{"ratio": v} for v in values]
            got = bench_figures.spread(records, "ratio")
            self.assertIsNotNone(got, values)
            assert got is not None
            self.assertEqual(want, got.ratio(), values)

    def test_no_figure_is_none(self):
        self.assertIsNone(bench_figures.spread([{"ratio": None}, {}], "ratio"))

    def test_counts_get_thousands_separators(self):
        got = bench_figures.spread([{"q": 24069.4}, {"q": 21796}, {"q": 25707}], "q")
        assert got is not None
        self.assertEqual("24,069 (21,796..25,707)", got.count())


if __name__ == "__main__":
    unittest.main()
