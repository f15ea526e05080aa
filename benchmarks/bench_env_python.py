"""Benchmark: cost of the bubblewrap sandbox for Python steps (issue 11).

In one run, for each isolation mode of ``PythonLimits``:

- ``in_process`` (the baseline: the worker as before issue 11, with the
  ``unshare`` network and read-only mount namespaces where they work);
- ``bwrap`` (the default: the bubblewrap sandbox with its seccomp filter);

it times, over ``--episodes`` episodes on a small DuckDB file made here:

- the first Python step of an episode (starts the worker: namespaces,
  mounts, interpreter start-up, audit hook);
- later steps: a pure-Python step (``x += 1``) and a step running one
  ``db.sql`` query through the parent's proxy.

It prints milliseconds per step (median) and the ratio bwrap / in_process.
No target: the figures say what the isolation costs.

Usage: python benchmarks/bench_env_python.py [--episodes 20] [--steps 20]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

from verifier.env import EHREnv, EnvConfig, PythonLimits
from verifier.env.sandbox import sandbox_status
from verifier.contract import Task, Verdict

TASK = Task.model_validate({
    "task_id": "bench-1", "pair_id": "bench", "question": "How many lab events?", "condition": "clean",
    "intent": "laboratory_microbiology", "program": "bench",
    "reference": {"sql": "SELECT 1", "answer": {"type": "count", "value": 1}},
})


def _scorer(traj, task, cfg):
    return Verdict(task_id=task.task_id, trajectory_id=traj.trajectory_id, success=False, score=0.0,
                   condition=task.condition, abstained=False, verifier_version="bench")


def _timed(env: EHREnv, code: str) -> float:
    t0 = time.perf_counter()
    env.step({"kind": "python", "code": code})
    dt = time.perf_counter() - t0
    if env.steps[-1].error:
        raise SystemExit(f"step failed: {env.steps[-1].error}")
    return dt * 1000


def measure(db: Path, isolation: str, episodes: int, steps: int) -> dict[str, float]:
    """Median milliseconds of the first step, a pure-Python step and a db.sql step."""
    env = EHREnv(str(db), EnvConfig(max_steps=2 * steps + 5, python=PythonLimits(isolation=isolation)), scorer=_scorer)
    first, plain, query = [], [], []
    for _ in range(episodes):
        env.reset(TASK)
        first.append(_timed(env, "x = 0"))
        for _ in range(steps):
            plain.append(_timed(env, "x += 1"))
            query.append(_timed(env, "n = db.sql('SELECT count(*) FROM lab_events').rows[0][0]"))
    env.close()
    return {"first step": statistics.median(first), "python step": statistics.median(plain),
            "db.sql step": statistics.median(query)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    ok, detail = sandbox_status(PythonLimits(isolation="bwrap"))
    if not ok:
        raise SystemExit(f"bwrap sandbox unavailable: {detail}")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        con = duckdb.connect(str(db))
        con.execute("CREATE TABLE lab_events AS SELECT range AS id, range % 97 AS itemid FROM range(10000)")
        con.close()
        measure(db, "bwrap", 1, 1)  # warm caches (runtime view, probe, page cache)
        base = measure(db, "in_process", args.episodes, args.steps)
        sand = measure(db, "bwrap", args.episodes, args.steps)
    print(f"Python steps, median ms ({args.episodes} episodes x {args.steps} steps each); sandbox: {detail}")
    print(f"{'':<14}{'in_process':>12}{'bwrap':>12}{'ratio':>8}")
    for key in base:
        print(f"{key:<14}{base[key]:>12.2f}{sand[key]:>12.2f}{sand[key] / base[key]:>8.2f}")


if __name__ == "__main__":
    main()
