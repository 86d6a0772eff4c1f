"""Scale-out checks (issue 22), one run, ratios. So far: time travel on S3 without replaying
history.

``as_of``: a catalog on the local S3 server (moto) whose table is replaced by 1,000
transactions, so every state holds one small file and a read costs the same whatever its age.
A fresh process opens the catalog, then times latest reads, the first ``as_of`` read (which
loads the catalog log's history once) and ``as_of`` reads of 20 random past states, among them
the one 1,000 transactions old. Target: an ``as_of`` read at most 2x a latest read.

Run ``python -m benchmarks.scale_bench [--transactions N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

# The timed side, in a fresh process: nothing about the table is cached yet.
READER = """
import json, random, statistics, sys, time
import workbench as dc

root, options, oldest = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
dc.init({"default": dc.Catalog(dc.CatalogProperties(root, options))})
dc.read("t", read_as="pyarrow")  # the catalog is open, as in a session

def timed(**kwargs):
    started = time.perf_counter()
    dc.read("t", read_as="pyarrow", **kwargs)
    return time.perf_counter() - started

latest = statistics.median(timed() for _ in range(9))
first = timed(as_of=oldest)
past = random.Random(7).sample(dc.transactions()["transaction_id"].to_pylist(), 20)
as_of = statistics.median([timed(as_of=oldest)] + [timed(as_of=p) for p in past])
print(json.dumps({"latest": latest, "first_as_of": first, "as_of": as_of}))
"""


def as_of_on_s3(transactions: int) -> dict[str, float]:
    """Latest and ``as_of`` read times on a moto S3 catalog ``transactions`` commits deep."""
    import pandas as pd

    import workbench as dc
    from workbench.testing import LocalS3

    with LocalS3() as s3:
        root = f"s3://{s3.new_bucket()}/catalog"
        dc.init({"default": dc.Catalog(dc.CatalogProperties(root, s3.options))})
        dc.write(pd.DataFrame({"id": [0], "v": ["x"]}), "t")
        oldest = dc.transactions()["transaction_id"][0].as_py()
        started = time.perf_counter()
        for i in range(1, transactions + 1):
            dc.write(pd.DataFrame({"id": [i], "v": ["x"]}), "t", mode="replace")
        built = time.perf_counter() - started
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        out = subprocess.run(
            [sys.executable, "-c", READER, root, json.dumps(s3.options), oldest],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "build_seconds": built}


def report(results: dict[str, float], transactions: int) -> str:
    """The figures and their ratio to a latest read."""
    latest = results["latest"]
    return "\n".join(
        [
            f"load average at start: {results['load']:.2f}",
            f"catalog of {transactions} transactions built in {results['build_seconds']:.0f} s",
            f"latest read: {latest * 1e3:.1f} ms",
            f"as_of read (median of 21 past states): {results['as_of'] * 1e3:.1f} ms "
            f"({results['as_of'] / latest:.2f}x latest; target <= 2x)",
            f"first as_of read (loads the log's history): {results['first_as_of'] * 1e3:.1f} ms "
            f"({results['first_as_of'] / latest:.1f}x latest)",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transactions", type=int, default=1000)
    args = parser.parse_args()
    results = {"load": os.getloadavg()[0], **as_of_on_s3(args.transactions)}
    print(report(results, args.transactions))


if __name__ == "__main__":
    main()
