"""Issue 31 point 4: proportionate cost. A response that cites no step cannot pass, so its evidence
is re-executed within ``uncited_evidence_budget_s`` (1 s), not the whole evidence budget
(``verifier.abstention._noise.evidence_budget_s``); the batch ratio is measured by
``benchmarks/bench_rexec_cost.py``, never timed here."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from verifier.abstention._citation import max_cited_steps
from verifier.abstention._evaluate import _analyse
from verifier.abstention._noise import evidence_budget_s
from verifier.abstention._proportion import proportional_budget_s, table_rows
from verifier.contract import Step, Trajectory, VerifyConfig
from verifier.sql import render_result, run_query, thread_connection
from verifier.verify import verify

#: CPU-bound and legal, its result known (an md5 text never sorts below '0'): ~0.1 s per 1M rows.
SLOW = "SELECT count(*) AS n FROM range({n}) a WHERE md5(a.range::VARCHAR) < '0'"


def _traj(task, db: Path, slow: int, cite: str) -> Trajectory:
    res = run_query(thread_connection(db), task.reference.sql, time_limit_s=30, row_cap=10_000)
    steps = [Step(index=1, kind="sql", code=task.reference.sql, output=render_result(res.columns, res.rows),
                  columns=res.columns, rows=[list(r) for r in res.rows])]
    steps += [Step(index=2 + i, kind="sql", code=SLOW.format(n=3_000_000 + i), output="n\n0\n(1 row)", columns=["n"], rows=[[0]])
              for i in range(slow)]
    unmet = task.reference.unmet_requirement
    return Trajectory(trajectory_id="t", task_id=task.task_id, steps=steps,
                      final_response=f"<answer>NULL</answer><reasoning>{unmet.statement} {cite} shows it. "
                                     f"Missing: {'; '.join(unmet.key_terms)}.</reasoning>")


def _noise_task(tasks: list):
    return next(t for t in tasks if t.condition == "noise" and t.reference.witness)


def test_uncited_evidence_is_checked_within_its_small_budget(synth_db: Path, synth_tasks: list) -> None:
    """Many slow uncited queries: the budget is at most ``uncited_evidence_budget_s`` (on main: the whole budget), the
    verdict fails as before, and the queries past it are over budget, not run."""
    task = _noise_task(synth_tasks)
    cfg = VerifyConfig(db_path=str(synth_db), query_time_limit_s=2.0, evidence_time_budget_s=20.0)
    assert cfg.uncited_evidence_budget_s == 1.0
    v = verify(_traj(task, synth_db, 12, "the first query"), task, cfg)
    budget = v.details["evidence"]["budget"]
    rows = table_rows(synth_db, _analyse(task.reference.sql, "duckdb")[1])
    assert budget["time_budget_s"] == min(1.0, proportional_budget_s(rows, cfg))
    assert not v.success
    statuses = [q["status"] for q in v.details["evidence"]["queries"]]
    assert "over_budget" in statuses and "EVIDENCE_BUDGET_EXCEEDED" in [getattr(r, "value", str(r)) for r in v.reasons]


def test_cited_honest_evidence_fits_its_proportional_budget(synth_db: Path, synth_tasks: list) -> None:
    """An honest response that cites its step: the proportional budget (floor + rate x the rows its
    reference reads; on main: the whole 20 s), not exhausted, and it passes as before."""
    task = _noise_task(synth_tasks)
    cfg = VerifyConfig(db_path=str(synth_db), query_time_limit_s=1.0, evidence_time_budget_s=20.0)
    v = verify(_traj(task, synth_db, 0, "[step 1]"), task, cfg)
    expected = proportional_budget_s(table_rows(synth_db, _analyse(task.reference.sql, "duckdb")[1]), cfg)
    assert v.details["evidence"]["budget"]["time_budget_s"] == expected < 20.0
    assert v.details["evidence"]["budget"]["exhausted"] is False
    assert v.success


def test_cited_slow_evidence_is_cut_at_the_proportional_budget(synth_db: Path, synth_tasks: list) -> None:
    """The worst legal shape: the most steps a response may cite, each a slow legal query, all cited
    (on main: the whole 20 s budget, every query run). Now the budget is the task's proportional one,
    the queries past it are over budget (not run) and the verdict says EVIDENCE_BUDGET_EXCEEDED."""
    task = _noise_task(synth_tasks)
    # a floor below the default (2 s): on this small database the slow queries must outrun it
    cfg = VerifyConfig(db_path=str(synth_db), query_time_limit_s=2.0, evidence_time_budget_s=20.0, evidence_budget_floor_s=0.5)
    n = max_cited_steps()
    cite = ", ".join(f"[step {2 + i}]" for i in range(n))
    v = verify(_traj(task, synth_db, n, cite), task, cfg)
    budget = v.details["evidence"]["budget"]
    assert budget["time_budget_s"] < 20.0 and budget["exhausted"] is True
    assert "over_budget" in [q["status"] for q in v.details["evidence"]["queries"]]
    assert "EVIDENCE_BUDGET_EXCEEDED" in [getattr(r, "value", str(r)) for r in v.reasons] and not v.success


@given(rows=st.integers(0, 10**10), floor=st.floats(0.01, 10), rate=st.floats(0, 1e-3), prate=st.floats(0, 1e-2),
       whole=st.floats(0.01, 100), uncited=st.floats(0.01, 10), cited=st.booleans(), python=st.booleans(),
       cap=st.integers(1, 10**6))
def test_budget_bounds_hold_per_trajectory(rows: int, floor: float, rate: float, prate: float, whole: float, uncited: float,
                                           cited: bool, python: bool, cap: int) -> None:
    """Per trajectory: the budget is at most the configured whole, at most floor + rate x rows (the
    proportion to the honest work; with a cited Python step, the Python rate on at most ``row_cap``
    rows), positive; an uncited response never has more than a cited one, and a cited Python step
    never less than SQL alone."""
    cfg = VerifyConfig(evidence_time_budget_s=whole, evidence_budget_floor_s=floor, evidence_budget_s_per_row=rate,
                       evidence_budget_s_per_python_row=prate, uncited_evidence_budget_s=uncited, row_cap=cap)
    b = evidence_budget_s([1] if cited else [], cfg, rows, python)
    per_row = max(rate * rows, prate * min(rows, cap)) if python and cited else rate * rows
    assert 0 < b <= whole and b <= floor + per_row
    assert evidence_budget_s([], cfg, rows, python) <= evidence_budget_s([1], cfg, rows, python)
    assert evidence_budget_s([1], cfg, rows, False) <= evidence_budget_s([1], cfg, rows, True)
    assert evidence_budget_s([], cfg, rows, True) == evidence_budget_s([], cfg, rows, False)


def test_uncited_cheap_evidence_keeps_its_reasons(synth_db: Path, synth_tasks: list) -> None:
    """An uncited response with cheap evidence gets the same reasons as under the whole budget
    (the smaller budget only bounds slow evidence): EVIDENCE_NOT_CITED, no budget reason."""
    task = _noise_task(synth_tasks)
    cfg = VerifyConfig(db_path=str(synth_db), query_time_limit_s=1.0, evidence_time_budget_s=20.0)
    v = verify(_traj(task, synth_db, 0, "the first query"), task, cfg)
    reasons = [getattr(r, "value", str(r)) for r in v.reasons]
    assert "EVIDENCE_NOT_CITED" in reasons and "EVIDENCE_BUDGET_EXCEEDED" not in reasons
