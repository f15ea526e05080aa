"""Benchmark: building the task set vs. a baseline measured in the same run.

Baseline: executing only the kept tasks' reference SQLs once each (what any
construction must at least do). Prints both times and their ratio.

Usage: python benchmarks/bench_make_tasks.py [DB] [--seed N]
(default DB: /work/data/demo.duckdb or $EHR_DEMO_DB).
"""

from __future__ import annotations

import argparse
import os
import time

from verifier.construction import make_tasks
from verifier.construction.overlay import Overlay


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("db", nargs="?", default=os.environ.get("EHR_DEMO_DB", "/work/data/demo.duckdb"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    tasks, report = make_tasks(args.db, seed=args.seed)
    build = time.perf_counter() - t0
    ov = Overlay(args.db)
    t1 = time.perf_counter()
    for t in tasks:
        ov.query(t.reference.sql)
    base = time.perf_counter() - t1
    ov.close()
    print(f"make_tasks: {build:.1f} s for {report.pairs} pairs ({report.candidates} candidates verified)")
    print(f"baseline (run {len(tasks)} reference SQLs once): {base:.2f} s")
    print(f"ratio build/baseline: {build / max(base, 1e-9):.1f}x; target: build < 300 s -> {'OK' if build < 300 else 'SLOW'}")


if __name__ == "__main__":
    main()
