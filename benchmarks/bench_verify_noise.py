"""Benchmark: verify() on Noise trajectories vs running their evidence SQL raw.

Uses the hand-made synthetic fixtures (fixtures/noise/synthetic.json) over the
synthetic hospital (generated and built here, seed 0, unless --db and --hospital
are given). In ONE process and the same run it times:

- baseline: executing each trajectory's evidence SQL once on a plain DuckDB
  connection (the least any re-executing verifier must do);
- verify(): parse, evidence extraction, read-only check, re-execution,
  fabrication check, witness overlay run, five-unit and reasoning checks;
- verify() with a query cache installed (verifier.sql._cache, as
  verify_batch does per worker): repeated samples of the same task.

It prints verifications per second and the ratio to the baseline.

Usage: python benchmarks/bench_verify_noise.py [--rounds 200] [--db synth.duckdb --hospital dir]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from verifier import verify
from verifier.abstention import extract_evidence, load_cases
from verifier.contract import Trajectory, VerifyConfig
from verifier.sql import _cache as query_cache
from verifier.sql import open_readonly


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200, help="passes over the fixture trajectories")
    ap.add_argument("--db", type=Path, help="built synthetic database (with --hospital)")
    ap.add_argument("--hospital", type=Path, help="generated synthetic hospital folder (gaps.json)")
    args = ap.parse_args(argv)

    from verifier.synthetic.gaps import read_gaps

    if args.db is None:
        from verifier.database import build_database
        from verifier.synthetic import generate_hospital

        work = Path(tempfile.mkdtemp(prefix="bench_noise_"))
        args.hospital = generate_hospital(work / "hospital", seed=0)
        args.db = work / "synth.duckdb"
        build_database(args.hospital, args.db)
    pairs = [(task, Trajectory.model_validate(e["trajectory"]))
             for task, entries in load_cases("synthetic", read_gaps(args.hospital)) for e in entries]
    cfg = VerifyConfig(db_path=str(args.db))
    for task, traj in pairs:  # warm caches and overlays
        verify(traj, task, cfg)

    con = open_readonly(args.db)  # same configuration as the verifier (DuckDB requires it per file)
    sqls = [q.sql for _, traj in pairs for q in extract_evidence(traj).queries if not q.failed]
    t0 = time.perf_counter()
    for _ in range(args.rounds):
        for sql in sqls:
            try:
                con.execute(sql).fetchmany(10_001)
            except duckdb.Error:
                pass
    base = time.perf_counter() - t0

    t0 = time.perf_counter()
    for _ in range(args.rounds):
        for task, traj in pairs:
            verify(traj, task, cfg)
    plain = time.perf_counter() - t0

    previous = query_cache.install(query_cache.QueryCache())
    try:
        t0 = time.perf_counter()
        for _ in range(args.rounds):
            for task, traj in pairs:
                verify(traj, task, cfg)
        cached = time.perf_counter() - t0
    finally:
        query_cache.install(previous)

    n = args.rounds * len(pairs)
    print(f"{len(pairs)} trajectories x {args.rounds} rounds = {n} verifications ({len(sqls)} evidence queries per round)")
    print(f"baseline raw SQL      : {n / base:10.0f} trajectories/s")
    print(f"verify()              : {n / plain:10.0f} trajectories/s  ({plain / base:.1f}x the baseline time)")
    print(f"verify() + query cache: {n / cached:10.0f} trajectories/s  ({cached / base:.2f}x the baseline time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
