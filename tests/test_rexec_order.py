"""Issue 31, first acceptance point: any permutation of a batch (with neighbours that scan large
tables, use the buffer pool or time out) scored with 1, 2 or 4 workers gives byte-identical
verdict JSON for every item, and the same trajectories scored three times give identical verdicts.

Small synthetic hospital, a small configured query limit (time-outs are cheap), few examples.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.contract import Step, Trajectory, VerifyConfig
from verifier.scoring import verify_batch
from verifier.sql import render_result, run_query, thread_connection

#: Needs far more than the configured 0.3 s limit: a time-out on any machine.
TIMES_OUT = "SELECT count(*) AS n FROM range(300000000) a WHERE md5(a.range::VARCHAR) = 'x'"
#: Scans the largest tables (fills the buffer pool), well within the limit.
SCAN = "SELECT count(*) AS n, count(DISTINCT patientid) AS p FROM lab_events"
#: Reads the catalog and the process's view of it (must not depend on the neighbours).
CATALOG = "SELECT count(*) AS n FROM duckdb_tables()"


def _traj(task, db: Path, tid: str, extra: list[str], cite: str) -> Trajectory:
    steps = []
    for i, sql in enumerate([task.reference.sql, *extra], start=1):
        if sql == TIMES_OUT:  # recorded as run in the episode (its output claimed), never run here
            steps.append(Step(index=i, kind="sql", code=sql, output="n\n0\n(1 row)", columns=["n"], rows=[[0]]))
            continue
        res = run_query(thread_connection(db), sql, time_limit_s=30, row_cap=10_000)
        steps.append(Step(index=i, kind="sql", code=sql, output=render_result(res.columns, res.rows),
                          columns=res.columns, rows=[list(r) for r in res.rows]))
    unmet = task.reference.unmet_requirement
    return Trajectory(trajectory_id=tid, task_id=task.task_id, steps=steps,
                      final_response=f"<answer>NULL</answer><reasoning>{unmet.statement} {cite} shows it. "
                                     f"Missing: {'; '.join(unmet.key_terms)}.</reasoning>")


@pytest.fixture(scope="module")
def batch(synth_db: Path, synth_tasks: list) -> tuple[list[dict], list, Path]:
    noise = [t for t in synth_tasks if t.condition == "noise" and t.reference.witness][:3]
    assert len(noise) >= 2
    items = []
    for i, t in enumerate(noise):
        items.append(_traj(t, synth_db, f"honest{i}", [], "[step 1]"))
        items.append(_traj(t, synth_db, f"scan{i}", [SCAN, CATALOG], "[step 1]"))
    items.append(_traj(noise[0], synth_db, "timeout", [TIMES_OUT], "the first query"))
    items.append(_traj(noise[1], synth_db, "timeout-cited", [TIMES_OUT], "[step 2]"))
    return [x.model_dump(mode="json") for x in items], noise, synth_db


# a floor above the query limit, so the time-out is judged (EVIDENCE_QUERY_FAILED), not cut by the proportional budget
CONFIG = VerifyConfig(query_time_limit_s=0.3, evidence_time_budget_s=3.0, evidence_budget_floor_s=3.0)


def _scored(items: list[dict], tasks: list, db: Path, workers: int) -> dict[str, str]:
    lines = list(verify_batch(items, tasks, db, workers=workers, config=CONFIG, as_json=True))
    assert len(lines) == len(items)
    return {json.loads(line)["trajectory_id"]: line for line in lines}


@pytest.fixture(scope="module")
def baseline(batch) -> dict[str, str]:
    items, tasks, db = batch
    return _scored(items, tasks, db, 1)


def test_same_verdicts_three_times(batch, baseline) -> None:
    items, tasks, db = batch
    runs = [baseline, _scored(items, tasks, db, 1), _scored(items, tasks, db, 2)]
    assert runs[0] == runs[1] == runs[2]
    assert '"EVIDENCE_QUERY_FAILED"' in runs[0]["timeout-cited"]  # the time-out is judged, and charged


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_order_and_worker_count_gives_the_same_verdicts(batch, baseline, data) -> None:
    items, tasks, db = batch
    order = data.draw(st.permutations(range(len(items))))
    workers = data.draw(st.sampled_from([1, 2, 4]))
    assert _scored([items[i] for i in order], tasks, db, workers) == baseline
