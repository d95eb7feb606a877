#!/usr/bin/env python3
"""mypy --strict over the bench's result writer and renderer (bench/*.py
that docs/performance.md is rendered by). Exits 77 (ctest: Skipped) where
no Python here has mypy (Debian: python3-mypy)."""
import shutil
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent.parent / "bench"
FILES = ["bench_result.py", "bench_figures.py", "performance_tables.py", "performance_targets.py",
         "render_performance.py"]

for python in dict.fromkeys(p for p in (sys.executable, shutil.which("python3"), "/usr/bin/python3") if p):
    if subprocess.run([python, "-c", "import mypy"], capture_output=True).returncode == 0:
        done = subprocess.run([python, "-m", "mypy", "--strict", "--cache-dir=/dev/null", *FILES], cwd=BENCH)
        sys.exit(done.returncode)
print("SKIPPED: mypy is not installed for any python3 here (Debian: python3-mypy)")
sys.exit(77)
