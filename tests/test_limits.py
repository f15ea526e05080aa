"""Issue 16: every limit holds, per query, per trajectory, per batch.

Per query (``verifier.sql._guard``): queries that build huge strings and lists outside DuckDB's
buffer manager, large cross joins, deep recursive CTEs and long sorts are run in a subprocess
(its own memory limit, so this test process is safe); there, each stops within 1.1x its time
limit, and the peak RSS of the scoring process and of its query process, read from ``/proc`` and
``getrusage``, stays under the documented bound, 1.5x DuckDB's ``memory_limit``.
Per trajectory (``verifier.abstention._budget``): the evidence budget. Per batch: the
budget-exceeding trajectories are charged alone (``test_batch_budget`` below).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from verifier import verify
from verifier.abstention._budget import select
from verifier.abstention._evidence import EvidenceQuery
from verifier.contract import ReasonCode, Step, Trajectory, VerifyConfig

MEMORY_LIMIT_MB = 512  # MiB
TIME_LIMIT_S = 1.0

#: Each materialises data DuckDB's memory_limit does not bound, or runs past any limit.
HEAVY = {
    "huge string": "SELECT length(repeat('x', 1500000000)) AS n",
    "huge padded string": "SELECT length(lpad('x', 1500000000, 'y')) AS n",
    "huge list": "SELECT len(range(300000000)) AS n",
    "unnested huge list": "SELECT count(*) AS n FROM (SELECT unnest(range(300000000)))",
    "strings doubled in CTEs": ("WITH a AS (SELECT repeat('ab', 1000) s), b AS (SELECT s||s||s||s||s||s||s||s||s||s s FROM a), "
                                "c AS (SELECT s||s||s||s||s||s||s||s||s||s s FROM b), d AS (SELECT s||s||s||s||s||s||s||s||s||s s FROM c), "
                                "e AS (SELECT s||s||s||s||s||s||s||s||s||s s FROM d), f AS (SELECT s||s||s||s||s||s||s||s||s||s s FROM e), "
                                "g AS (SELECT s||s||s||s||s||s||s||s||s||s s FROM f) SELECT length(s) AS n FROM g"),
    "many large strings": "SELECT repeat('x', 100000) AS s FROM range(10000)",
    "large cross join": "SELECT count(*) AS n FROM range(200000) a, range(200000) b",
    "deep recursive CTE": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000000000) SELECT count(*) FROM r",
    "long sort": "SELECT a.range * 7919 % 1000003 AS k FROM range(4000) a, range(4000) b ORDER BY k DESC, a.range",
}

_PROBE = textwrap.dedent("""
    import json, os, resource, sys, time
    from verifier.sql import LIMITS, QueryFailed, base_spec, check_read_only, execute_guarded, thread_process

    def hwm_mb():
        with open(f"/proc/{os.getpid()}/status") as f:
            return int(next(l for l in f if l.startswith("VmHWM")).split()[1]) / 1024

    db, limit, queries = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
    spec = base_spec(db)
    execute_guarded(spec, "SELECT 1", time_limit_s=30, row_cap=1)
    out = {"budget_mb": LIMITS.rss_budget_bytes / 2**20}
    for name, sql in queries.items():
        t = time.monotonic()
        try:
            res = execute_guarded(spec, check_read_only(sql), time_limit_s=limit, row_cap=10_000)
            outcome, took = "ok", res.elapsed_s
        except QueryFailed as exc:
            outcome, took = type(exc).__name__ + ": " + exc.message[:80], exc.elapsed_s
            assert exc.cost_s >= exc.elapsed_s
        tp = thread_process()
        out[name] = {"outcome": outcome, "stopped_after_s": took, "call_s": time.monotonic() - t,
                     "ready_after": bool(tp._is_ready and tp.pid)}
    after = execute_guarded(spec, "SELECT count(*) FROM patients", time_limit_s=30, row_cap=1).rows
    out["after"] = after[0][0]
    out["scoring_hwm_mb"] = hwm_mb()
    out["query_process_hwm_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps(out))
""")


def _probe(db: Path, queries: dict[str, str]) -> dict:
    env = dict(os.environ, EHR_VERIFIER_DUCKDB_MEMORY=f"{MEMORY_LIMIT_MB}MiB")
    env.pop("EHR_VERIFIER_QUERY_RSS", None)
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(db), str(TIME_LIMIT_S), json.dumps(queries)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_heavy_query_stops_within_its_limits(synth_db: Path) -> None:
    """Acceptance (issue 16): each heavy query stops (answer, error or kill) within 1.1x its time
    limit; the peak RSS of the scoring process and of its query process stays under 1.5x the
    memory limit; the next query runs normally. Before the query process, ``repeat`` and
    ``range`` lists reached 2-3 GB RSS under a 512 MB limit and ran 4-9 s against a 2 s limit."""
    out = _probe(synth_db, HEAVY)
    bound = 1.5 * MEMORY_LIMIT_MB  # MiB, as the probe reports both
    assert out["budget_mb"] == pytest.approx(1.5 * MEMORY_LIMIT_MB)
    for name in HEAVY:
        rec = out[name]
        assert rec["stopped_after_s"] <= 1.1 * TIME_LIMIT_S, (name, rec)
        assert rec["outcome"] != "ok" or name == "long sort", (name, rec)  # none of them finishes in 1 s
        assert rec["ready_after"], (name, rec)  # a killed query process was replaced inside the call that overran
    assert out["scoring_hwm_mb"] < 1.5 * MEMORY_LIMIT_MB, out
    assert out["query_process_hwm_mb"] < bound, out
    assert out["after"] > 0


def test_memory_budget_kills_only_the_query_process(synth_db: Path) -> None:
    """A value built outside the buffer manager faster than the time limit is stopped by the
    RSS budget (``MemoryBudgetExceeded``), not by the clock, and the scoring process stays small."""
    out = _probe(synth_db, {"list": "SELECT len(range(400000000)) AS n"})
    assert out["list"]["outcome"].startswith(("MemoryBudgetExceeded", "QueryTimeout")), out
    assert out["query_process_hwm_mb"] < 1.5 * MEMORY_LIMIT_MB, out
    assert out["scoring_hwm_mb"] < 1.5 * MEMORY_LIMIT_MB, out


def test_result_size_is_capped_before_it_reaches_the_scoring_process(synth_db: Path) -> None:
    """A result of many large strings is refused by the query process (result-size cap)."""
    from verifier.sql import LIMITS, QueryFailed, base_spec, execute_guarded

    n = LIMITS.result_bytes_cap // 50_000 + 10
    with pytest.raises(QueryFailed, match="MiB are returned"):
        execute_guarded(base_spec(synth_db), f"SELECT repeat('x', 50000) AS s FROM range({n})", time_limit_s=30, row_cap=n)
    assert execute_guarded(base_spec(synth_db), "SELECT 42", time_limit_s=30, row_cap=1).rows == [(42,)]


# ------------------------------------------------------------------ per trajectory
def _q(step: int, position: int = 0) -> EvidenceQuery:
    return EvidenceQuery(step=step, position=position, sql=f"SELECT {step}", origin="sql")


def test_selection_takes_cited_steps_first_then_the_latest() -> None:
    qs = [_q(i) for i in range(1, 11)]
    evaluated, skipped = select(qs, [2, 5], 4)
    assert [q.step for q in evaluated] == [5, 2, 10, 9]
    assert [q.step for q in skipped] == [1, 3, 4, 6, 7, 8]
    assert select(qs, [], 20) == (sorted(qs, key=lambda q: -q.step), [])


def _noise_task(tasks: list) -> object:
    return next(t for t in tasks if t.condition == "noise" and t.reference.witness and t.scope == "patient")


def _oracle_steps(task, db: Path) -> list[Step]:
    from verifier.sql import render_result, run_query, thread_connection

    res = run_query(thread_connection(db), task.reference.sql, time_limit_s=30, row_cap=10_000)
    return [Step(index=1, kind="sql", code=task.reference.sql, output=render_result(res.columns, res.rows),
                 columns=res.columns, rows=[list(r) for r in res.rows])]


SLOW = "SELECT count(*) AS n FROM range({n}) a, range(3000) b WHERE hash(a.range * 3001 + b.range) = 42"


def _slow_steps(start: int, count: int, n: int) -> list[Step]:
    return [Step(index=start + i, kind="sql", code=SLOW.format(n=n + i), output="n\n0\n(1 row)",
                 columns=["n"], rows=[[0]]) for i in range(count)]


def _response(task, cite: str = "[step 1]") -> str:
    unmet = task.reference.unmet_requirement
    return (f"<answer>NULL</answer><reasoning>{unmet.statement} {cite} shows it. "
            f"Missing: {'; '.join(unmet.key_terms)}.</reasoning>")


def test_slow_legal_queries_exceed_the_time_budget_with_their_own_reason(demo_db: Path, demo_tasks: list) -> None:
    """A trajectory of many slow legal queries (each under the per-query limit) fails with
    EVIDENCE_BUDGET_EXCEEDED once their total time passes the budget, instead of running on;
    the same evidence without them passes."""
    task = _noise_task(demo_tasks)
    cfg = VerifyConfig(db_path=str(demo_db), query_time_limit_s=2.0, evidence_time_budget_s=1.0)
    good = _oracle_steps(task, demo_db)
    ok = verify(Trajectory(trajectory_id="ok", task_id=task.task_id, steps=good, final_response=_response(task)), task, cfg)
    assert ok.success, ok.reasons
    steps = good + _slow_steps(2, 12, 20000)
    traj = Trajectory(trajectory_id="slow", task_id=task.task_id, steps=steps, final_response=_response(task, "the first query"))
    v = verify(traj, task, cfg.model_copy(update={"evidence_time_budget_s": 0.5}))
    assert ReasonCode.EVIDENCE_BUDGET_EXCEEDED in v.reasons, v.details["evidence"]
    budget = v.details["evidence"]["budget"]
    assert budget["exhausted"] and budget["time_budget_s"] == 0.5
    statuses = {q["status"] for q in v.details["evidence"]["queries"]}
    assert "over_budget" in statuses


def test_count_limit_evaluates_cited_steps(demo_db: Path, demo_tasks: list) -> None:
    """Beyond max_evidence_queries the uncited queries are not evaluated; the cited evidence
    still passes, and an uncited flood cannot push it out."""
    task = _noise_task(demo_tasks)
    cfg = VerifyConfig(db_path=str(demo_db), max_evidence_queries=3)
    filler = [Step(index=i, kind="sql", code=f"SELECT {i} AS k", output=f"k\n{i}\n(1 row)", columns=["k"], rows=[[i]])
              for i in range(2, 12)]
    traj = Trajectory(trajectory_id="many", task_id=task.task_id, steps=_oracle_steps(task, demo_db) + filler,
                      final_response=_response(task))
    v = verify(traj, task, cfg)
    assert v.success, v.reasons
    uncited = traj.model_copy(update={"final_response": _response(task, "the first query")})
    u = verify(uncited, task, cfg)
    assert not u.success and ReasonCode.EVIDENCE_BUDGET_EXCEEDED not in u.reasons
    assert u.details["evidence"]["budget"]["not_evaluated"] == 8


# ------------------------------------------------------------------ per batch
def test_batch_charges_the_budget_to_its_trajectory(demo_db: Path, demo_tasks: list) -> None:
    """A batch mixing honest trajectories with budget-exhausting ones (many slow legal queries):
    every item is scored, the slow ones with EVIDENCE_BUDGET_EXCEEDED (not TIMEOUT), the honest
    ones with the verdicts they get alone. (benchmarks/bench_limits.py times the 64-item batch.)"""
    from verifier.scoring import verify_batch

    noise = [t for t in demo_tasks if t.condition == "noise" and t.reference.witness][:6]
    cfg = VerifyConfig(query_time_limit_s=1.0, evidence_time_budget_s=0.5)
    honest = [Trajectory(trajectory_id=f"h{i}", task_id=t.task_id, steps=_oracle_steps(t, demo_db),
                         final_response=_response(t)) for i, t in enumerate(noise)]
    slow = [Trajectory(trajectory_id=f"s{i}", task_id=t.task_id, steps=_oracle_steps(t, demo_db) + _slow_steps(2, 8, 20000 + 7 * i),
                       final_response=_response(t, "the first query")) for i, t in enumerate(noise[:2])]
    batch = honest[:3] + slow[:1] + honest[3:] + slow[1:]
    out = list(verify_batch([t.model_dump(mode="json") for t in batch], noise, demo_db, workers=2, config=cfg, item_time_limit_s=60))
    assert [r["trajectory_id"] for r in out] == [t.trajectory_id for t in batch]
    alone = {t.trajectory_id: verify(t, next(x for x in noise if x.task_id == t.task_id),
                                     cfg.model_copy(update={"db_path": str(demo_db)})).model_dump(mode="json") for t in honest}
    for rec in out:
        if rec["trajectory_id"].startswith("s"):
            assert rec["reasons"][-1:] == ["EVIDENCE_BUDGET_EXCEEDED"] and "TIMEOUT" not in rec["reasons"], rec["details"]["evidence"]
        else:
            assert rec == alone[rec["trajectory_id"]]


def test_query_process_ends_with_its_thread(synth_db: Path) -> None:
    """A thread's query process is killed when the thread ends (a thread-per-request caller
    does not accumulate processes)."""
    import gc
    import threading

    from verifier.sql import base_spec, execute_guarded, thread_process

    pids: list[int] = []

    def work() -> None:
        execute_guarded(base_spec(synth_db), "SELECT 1", time_limit_s=30, row_cap=1)
        pids.append(thread_process().pid)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    gc.collect()
    assert pids and pids[0] is not None
    assert not Path(f"/proc/{pids[0]}").exists() or "Z" in Path(f"/proc/{pids[0]}/stat").read_text().split()[2]
