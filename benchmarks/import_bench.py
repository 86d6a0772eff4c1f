"""What a fresh process pays before its first result: ``import workbench`` over a bare
interpreter, and the first commit (``dc.init_local`` and a write of a small Arrow table), each
the median of fresh processes; and whether that write loaded pandas.

Run ``python -m benchmarks.import_bench [--runs 9]``. Targets (issue 34): the import under
150 ms, the first commit under 600 ms, and no pandas for a pyarrow-only write. Other jobs may
load the machine: the load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

FIRST_COMMIT = """
import io, sys, time, tempfile
import pyarrow.csv as csv
rows = csv.read_csv(io.BytesIO(b"id,v\\n1,a\\n2,b\\n"))  # Arrow-native: loads no pandas
start = time.perf_counter()
import workbench as dc
dc.init_local(sys.argv[1])
dc.write(rows, "t")
print(time.perf_counter() - start, "pandas" in sys.modules)
"""


# Bytecode is written and reused, as an installed package's is (a first run warms it up).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def median_process_seconds(code: str, runs: int) -> float:
    """Median wall-clock seconds of ``python -c code`` in fresh processes."""
    subprocess.run([sys.executable, "-c", code], check=True, env=ENV)
    took = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=ENV)
        took.append(time.perf_counter() - start)
    return statistics.median(took)


def first_commits(runs: int) -> tuple[float, bool]:
    """Median seconds from ``import workbench`` to a committed first write, and whether any
    run loaded pandas."""
    took, pandas = [], False
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            out = subprocess.run(
                [sys.executable, "-c", FIRST_COMMIT, folder],
                check=True,
                capture_output=True,
                text=True,
                env=ENV,
            ).stdout.split()
        took.append(float(out[0]))
        pandas = pandas or out[1] == "True"
    return statistics.median(took), pandas


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    runs = parser.parse_args().runs
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    bare = median_process_seconds("pass", runs)
    imported = median_process_seconds("import workbench", runs)
    print(
        f"import workbench over a bare interpreter: {(imported - bare) * 1000:.0f} ms "
        "(target < 150)"
    )
    first, pandas = first_commits(runs)
    print(f"a fresh process's first commit (import included): {first * 1000:.0f} ms (target < 600)")
    print(f"a pyarrow-only write loaded pandas: {pandas} (target False)")


if __name__ == "__main__":
    main()
