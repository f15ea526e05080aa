"""``benchmarks/bench_batch.py`` growth section (issue 15): a replicated database is another
database, so tasks recording the original's fingerprint (``make-tasks`` stamps every task) are
refused there as ``InputError`` records; the benchmark re-stamps them for each size and stops
on any error record instead of timing errors (before, on a fresh machine, x4 and x16 "scored"
0/512 in 0.1 ms per trajectory and printed a growth of x0.05)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from verifier.scoring import BatchVerifier

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_batch  # noqa: E402


def _score(lines: list[str], tasks: dict, db: Path) -> list[dict]:
    with BatchVerifier(tasks, db, backend="serial") as bv:
        return [json.loads(line) for line in bv.score_lines(lines)]


def test_growth_scores_real_work_on_a_replicated_database(synth_db: Path, synth_tasks: list, tmp_path: Path) -> None:
    tasks = {t.task_id: t for t in synth_tasks}
    assert all(t.db_fingerprint for t in tasks.values()), "make_tasks stamps every task with its database"
    picked = bench_batch._pick({k: t for k, t in tasks.items() if t.scope == "patient"}, 4, 0)
    rdb = bench_batch.replicate(synth_db, tmp_path / "x2.duckdb", 2)
    lines = bench_batch.grpo_batch(picked, rdb, seed=0)

    unstamped = _score(lines, tasks, rdb)
    assert all("error" in r and "success" not in r for r in unstamped)
    with pytest.raises(SystemExit, match="error records"):
        bench_batch._check_errors([json.dumps(r) for r in unstamped], "x2")

    stamped = _score(lines, bench_batch._stamped(tasks, rdb), rdb)
    assert all("success" in r for r in stamped)
    assert any(r["success"] for r in stamped)
    bench_batch._check_errors([json.dumps(r) for r in stamped], "x2")  # no error record: returns
