"""Benchmark: a batch with budget-exhausting trajectories costs them, not their neighbours (issue 16).

A batch of 64 Noise trajectories on the real demo: 56 honest ones (the reference evidence query,
its recorded output, an abstention naming the unmet requirement) and 8 built to exhaust the
evidence budget (the same evidence plus many slow legal queries, each under the per-query limit).
In the same run it times ``verify_batch`` (2 workers, a fresh pool each time, as a caller of
``verify_batch`` gets) on the 56 honest ones alone and on the 64 (alternated, best of 3), checks that every item is
scored, the 8 with ``EVIDENCE_BUDGET_EXCEEDED`` and the 56 with the verdicts they get alone, and
prints the time ratio (target: < 2x).

The limits are scaled down so the run takes seconds (``--query-limit`` 1 s, ``--budget``
0.5 s); with the defaults (5 s, 30 s) each budget-exhausting trajectory costs its worker up to
30 s instead of the minutes it took before the budget (136 s per ``verify`` in issue 16).

Usage:
    python benchmarks/bench_limits.py --db demo.duckdb --tasks tasks.jsonl [--workers 2]
(build them with ``ehr-verifier build-db`` and ``ehr-verifier make-tasks``, README).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from verifier.contract import Step, Trajectory, VerifyConfig, load_tasks
from verifier.scoring import verify_batch
from verifier.sql import render_result, run_query, thread_connection

SLOW = "SELECT count(*) AS n FROM range({n}) a, range(3000) b WHERE hash(a.range * 3001 + b.range) = 42"


def _honest(task, db: Path, tid: str, extra: list[Step] | None = None) -> Trajectory:
    res = run_query(thread_connection(db), task.reference.sql, time_limit_s=30, row_cap=10_000)
    steps = [Step(index=1, kind="sql", code=task.reference.sql, output=render_result(res.columns, res.rows),
                  columns=res.columns, rows=[list(r) for r in res.rows])] + (extra or [])
    unmet = task.reference.unmet_requirement
    cite = "the first query" if extra else "[step 1]"
    return Trajectory(trajectory_id=tid, task_id=task.task_id, steps=steps,
                      final_response=f"<answer>NULL</answer><reasoning>{unmet.statement} {cite} shows it. "
                                     f"Missing: {'; '.join(unmet.key_terms)}.</reasoning>")


def _slow_steps(count: int, seed: int) -> list[Step]:
    return [Step(index=2 + i, kind="sql", code=SLOW.format(n=5_000 + 7 * seed + i), output="n\n0\n(1 row)",
                 columns=["n"], rows=[[0]]) for i in range(count)]


def _timed(items: list[Trajectory], tasks: list, db: Path, cfg: VerifyConfig, workers: int) -> tuple[float, list[dict]]:
    t = time.perf_counter()
    out = list(verify_batch([x.model_dump(mode="json") for x in items], tasks, db, workers=workers, config=cfg,
                            item_time_limit_s=120))
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="the demo DuckDB (ehr-verifier build-db)")
    ap.add_argument("--tasks", type=Path, required=True, help="its tasks (ehr-verifier make-tasks)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--query-limit", type=float, default=1.0)
    ap.add_argument("--budget", type=float, default=0.5)
    ap.add_argument("--slow-queries", type=int, default=19)
    ap.add_argument("--repeat", type=int, default=3, help="alternated runs of each; the minimum is reported")
    args = ap.parse_args()
    if True:
        db, tasks_path = args.db, args.tasks
        tasks = [t for t in load_tasks(tasks_path).values() if t.condition == "noise" and t.reference.witness]
        tasks = tasks[:56]
        cfg = VerifyConfig(query_time_limit_s=args.query_limit, evidence_time_budget_s=args.budget)
        honest = [_honest(t, db, f"h{i}") for i, t in enumerate(tasks)]
        heavy = [_honest(t, db, f"s{i}", _slow_steps(args.slow_queries, i)) for i, t in enumerate(tasks[:8])]
        batch = list(honest)
        for i, h in enumerate(heavy):
            batch.insert(i * 8 + 3, h)
        times_honest, times_batch = [], []
        for _ in range(args.repeat):  # alternated; the minimum of each (the machine is shared)
            t, out_honest = _timed(honest, tasks, db, cfg, args.workers)
            times_honest.append(t)
            t, out_batch = _timed(batch, tasks, db, cfg, args.workers)
            times_batch.append(t)
        t_honest, t_batch = min(times_honest), min(times_batch)
        alone = {r["trajectory_id"]: r for r in out_honest}
        scored = sum(1 for r in out_batch if "success" in r)
        budget = [r for r in out_batch if r["trajectory_id"].startswith("s")]
        same = all(r == alone[r["trajectory_id"]] for r in out_batch if r["trajectory_id"].startswith("h"))
        print(f"batch of {len(batch)}: {scored} scored; {sum('EVIDENCE_BUDGET_EXCEEDED' in r['reasons'] for r in budget)}/8 "
              f"with EVIDENCE_BUDGET_EXCEEDED, {sum('TIMEOUT' in r['reasons'] for r in out_batch)} TIMEOUT; "
              f"honest verdicts same as alone: {same}; oracle passes {sum(r['success'] for r in out_honest)}/{len(honest)}")
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; best of {args.repeat} alternated runs")
        print(f"56 honest alone: {t_honest:.2f} s; 64 with 8 budget-exhausting: {t_batch:.2f} s; "
              f"ratio {t_batch / t_honest:.2f}x (target < 2x)")


if __name__ == "__main__":
    main()
