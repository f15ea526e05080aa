"""Benchmark: the database fingerprint (``verifier.database``) and its cost inside ``verify()``.

In ONE process and the same run it times:

- baseline: opening the database read-only and closing it (``verifier.sql.open_readonly``: the
  least any read of the file costs), against computing its fingerprint (``compute_fingerprint``:
  catalog, exact row counts, columns, the rows of the key tables); the target is well under 100 ms;
- ``database_fingerprint`` after the first call (an ``os.stat`` and a dictionary lookup) and
  ``recent_fingerprint``, which ``verify`` uses (a dictionary lookup), in µs;
- ``verify()`` (best of three interleaved passes each) on Clean answers to tasks without a fingerprint (the check skipped) against the same
  tasks carrying the database's fingerprint with ``db_path`` set (the check on every call): the
  ratio is the check's share of the hot path.

Usage: python benchmarks/bench_db_fingerprint.py [--db demo.duckdb --tasks tasks.jsonl] [--rounds 50]
(default: the synthetic hospital, seed 0, generated, built and its tasks made here).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, help="a built database (with --tasks built on it)")
    ap.add_argument("--tasks", type=Path, help="tasks JSONL built on --db")
    ap.add_argument("--rounds", type=int, default=50, help="passes over the Clean tasks")
    ap.add_argument("--reads", type=int, default=15, help="cold reads of the file to take the median of")
    args = ap.parse_args(argv)

    from verifier import verify
    from verifier.agents.format import format_answer
    from verifier.contract import Trajectory, VerifyConfig, load_tasks
    from verifier.database import compute_fingerprint, database_fingerprint, recent_fingerprint
    from verifier.sql import open_readonly

    if args.db is None:
        from verifier.construction import make_tasks
        from verifier.database import build_database
        from verifier.synthetic import generate_hospital

        work = Path(tempfile.mkdtemp(prefix="bench_fp_"))
        args.db = work / "synth.duckdb"
        build_database(generate_hospital(work / "hospital", seed=0), args.db)
        tasks = make_tasks(args.db, seed=0)[0]
    else:
        tasks = list(load_tasks(args.tasks).values())

    def cold(fn) -> float:
        times = []
        for _ in range(args.reads):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    compute_fingerprint(args.db)  # imports and the OS page cache, for both
    opened = cold(lambda: open_readonly(args.db).close())
    computed = cold(lambda: compute_fingerprint(args.db))
    fp = database_fingerprint(args.db)
    n = 100_000
    t0 = time.perf_counter()
    for _ in range(n):
        database_fingerprint(args.db)
    cached = (time.perf_counter() - t0) / n
    recent_fingerprint(str(args.db))
    t0 = time.perf_counter()
    for _ in range(n):
        recent_fingerprint(str(args.db))
    recent = (time.perf_counter() - t0) / n
    print(f"database {args.db} ({args.db.stat().st_size / 1e6:.1f} MB): fingerprint {fp}")
    print(f"  baseline open read-only + close : {opened * 1e3:7.1f} ms (median of {args.reads})")
    print(f"  compute_fingerprint             : {computed * 1e3:7.1f} ms ({computed / opened:.2f}x the baseline; target < 100 ms)")
    print(f"  database_fingerprint, cached    : {cached * 1e6:7.2f} us per call (an os.stat and a lookup)")
    print(f"  recent_fingerprint (verify's)   : {recent * 1e6:7.2f} us per call (a lookup)")

    clean = [t for t in tasks if t.condition == "clean"]
    plain = [t.model_copy(update={"db_fingerprint": None}) for t in clean]
    stamped = [t.model_copy(update={"db_fingerprint": fp}) for t in clean]
    trajs = [Trajectory(trajectory_id=f"{t.task_id}#0", task_id=t.task_id,
                        final_response=f"Answer: {format_answer(t.reference.answer)}\nReasoning: from the database.")
             for t in clean]
    cfg = VerifyConfig(db_path=str(args.db))

    def run(batch) -> float:
        for tr, t in zip(trajs, batch):  # warm
            verify(tr, t, cfg)
        t0 = time.perf_counter()
        for _ in range(args.rounds):
            for tr, t in zip(trajs, batch):
                verify(tr, t, cfg)
        return time.perf_counter() - t0

    base, checked = float("inf"), float("inf")
    for _ in range(3):  # interleaved, best of three: other work on the machine hits both alike
        base, checked = min(base, run(plain)), min(checked, run(stamped))
    k = args.rounds * len(clean)
    print(f"verify() on {len(clean)} Clean answers x {args.rounds} rounds:")
    print(f"  baseline, no fingerprint        : {k / base:9.0f} verdicts/s")
    print(f"  fingerprint checked every call  : {k / checked:9.0f} verdicts/s ({checked / base:.3f}x the baseline time; "
          f"{(checked - base) / k * 1e6:+.1f} us per verdict)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
