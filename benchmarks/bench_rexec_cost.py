"""Benchmark: a batch with 20% trajectories that max out their evidence budget costs at most 2x
the honest-only batch (issue 31 point 4).

On the real demo, in the same run: a batch of 10 honest Noise trajectories (the reference evidence
query, its recorded output, ``[step 1]`` cited, an abstention naming the unmet requirement) and
the same batch with 2 of them replaced by heavy ones: 8 legal evidence queries each just under the
per-query limit (calibrated here to about 0.9x ``--query-limit`` of CPU), uncited. Also, for the
record, heavy ones that cite 5 slow steps (``max_cited_steps``) instead, and the worst legal shape
the budget does not stop by time: ``max_evidence_queries`` (32) cheap distinct queries, 5 cited
(each run costs the query process's round trip, which the CPU budget does not charge). The budget
is the task's proportional one (``verifier.abstention._proportion``). ``verify_batch`` with 2
workers (a fresh pool each time), alternated, best of ``--repeat``; prints the ratios (target:
<= 2x for every heavy batch) and checks the honest items' verdicts are the same in every batch.

Usage:
    python benchmarks/bench_rexec_cost.py --db demo.duckdb --tasks tasks.jsonl [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from verifier.contract import Step, Trajectory, VerifyConfig, load_tasks
from verifier.scoring import verify_batch
from verifier.sql import render_result, run_query, thread_connection

#: A CPU-bound query whose result is known (a hash is never negative): ``n`` sets its cost.
SLOW = "SELECT count(*) AS n FROM range({n}) a WHERE md5(a.range::VARCHAR) < '0'"


def _calibrated_rows(db: Path, target_s: float) -> int:
    """Rows for ``SLOW`` to take about ``target_s`` seconds here (one DuckDB thread, as re-execution)."""
    n = 200_000
    while True:
        t = time.process_time()
        run_query(thread_connection(db), SLOW.format(n=n), time_limit_s=60, row_cap=1)
        took = time.process_time() - t
        if took > 0.3:
            return int(n * target_s / took)
        n *= 4


def _trajectory(task, db: Path, tid: str, slow: list[str], cite: str) -> Trajectory:
    res = run_query(thread_connection(db), task.reference.sql, time_limit_s=30, row_cap=10_000)
    steps = [Step(index=1, kind="sql", code=task.reference.sql, output=render_result(res.columns, res.rows),
                  columns=res.columns, rows=[list(r) for r in res.rows])]
    steps += [Step(index=2 + i, kind="sql", code=sql, output="n\n0\n(1 row)", columns=["n"], rows=[[0]])
              for i, sql in enumerate(slow)]
    unmet = task.reference.unmet_requirement
    return Trajectory(trajectory_id=tid, task_id=task.task_id, steps=steps,
                      final_response=f"<answer>NULL</answer><reasoning>{unmet.statement} {cite} shows it. "
                                     f"Missing: {'; '.join(unmet.key_terms)}.</reasoning>")


def _timed(items: list[Trajectory], tasks: list, db: Path, cfg: VerifyConfig, workers: int) -> tuple[float, list[dict]]:
    t = time.perf_counter()
    out = list(verify_batch([x.model_dump(mode="json") for x in items], tasks, db, workers=workers, config=cfg,
                            item_time_limit_s=300))
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="the demo DuckDB (ehr-verifier build-db)")
    ap.add_argument("--tasks", type=Path, required=True, help="its tasks (ehr-verifier make-tasks)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--query-limit", type=float, default=5.0)
    ap.add_argument("--repeat", type=int, default=2, help="alternated runs of each; the minimum is reported")
    args = ap.parse_args()
    db = args.db
    tasks = [t for t in load_tasks(args.tasks).values() if t.condition == "noise" and t.reference.witness][:10]
    cfg = VerifyConfig(query_time_limit_s=args.query_limit)
    n = _calibrated_rows(db, 0.9 * args.query_limit)
    honest = [_trajectory(t, db, f"h{i}", [], "[step 1]") for i, t in enumerate(tasks)]

    def heavy(i: int, cite: str) -> Trajectory:
        return _trajectory(tasks[i], db, f"s{i}", [SLOW.format(n=n + 7 * i + k) for k in range(8)], cite)

    def many(i: int) -> Trajectory:
        cheap = [f"SELECT count(*) AS n FROM range({1000 + 13 * i + k}) a WHERE a.range < 0" for k in range(cfg.max_evidence_queries)]
        return _trajectory(tasks[i], db, f"s{i}", cheap, "[step 2] [step 3] [step 4] [step 5] [step 6]")

    uncited = list(honest)
    cited = list(honest)
    cheap = list(honest)
    for i in (3, 7):  # 20%
        uncited[i] = heavy(i, "the first query")
        cited[i] = heavy(i, "[step 2] [step 3] [step 4] [step 5] [step 6]")
        cheap[i] = many(i)
    best = {"honest": float("inf"), "uncited": float("inf"), "cited": float("inf"), "cheap": float("inf")}
    outs: dict[str, list[dict]] = {}
    for _ in range(args.repeat):
        for name, items in (("honest", honest), ("uncited", uncited), ("cited", cited), ("cheap", cheap)):
            t, outs[name] = _timed(items, tasks, db, cfg, args.workers)
            best[name] = min(best[name], t)
    alone = {r["trajectory_id"]: r for r in outs["honest"]}
    same = all(r == alone[r["trajectory_id"]] for name in ("uncited", "cited", "cheap") for r in outs[name]
               if r["trajectory_id"].startswith("h"))
    heavy_reasons = sorted({c for name in ("uncited", "cited", "cheap") for r in outs[name] if r["trajectory_id"].startswith("s")
                            for c in r.get("reasons", [])})
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; {args.workers} workers; "
          f"query limit {args.query_limit:g} s, slow query calibrated to ~{0.9 * args.query_limit:.1f} s CPU; best of {args.repeat}")
    print(f"honest verdicts the same in every batch: {same}; oracle passes {sum(r['success'] for r in outs['honest'])}/10; "
          f"heavy reasons: {heavy_reasons}")
    print(f"10 honest: {best['honest']:.2f} s; with 2 heavy uncited: {best['uncited']:.2f} s, ratio "
          f"{best['uncited'] / best['honest']:.2f}x (target <= 2x); with 2 heavy citing 5 slow steps: {best['cited']:.2f} s, "
          f"ratio {best['cited'] / best['honest']:.2f}x (target <= 2x); with 2 heavy of 32 cheap queries: "
          f"{best['cheap']:.2f} s, ratio {best['cheap'] / best['honest']:.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
