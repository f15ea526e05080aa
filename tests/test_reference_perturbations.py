"""The task's own reference query as evidence needs no perturbation runs (issue 15).

A qualifying evidence query must also stay the same under the task's perturbations (the decoy,
the item nuisance), but only under those the task's reference query passes
(``_evaluate._perturbations`` calibrates them by running those very checks on it). So when the
evidence IS the reference query (the same checked SQL: cosmetic rewrites included), the check
cannot fail, and building the decoy and nuisance overlays and running the query on them was
wasted work, a third of the query process's on a batch where agents converge on the reference.
The verdict must be the same with and without the check, on the real demo.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.abstention import _evaluate
from verifier.agents.format import tagged_response
from verifier.agents.reference_agents import abstention_reasoning
from verifier.contract import Step, Task, Trajectory, VerifyConfig
from verifier.sql import render_result, run_query, thread_connection
from verifier.verify import verify


def _trajectory(db: Path, task: Task, sql: str) -> Trajectory:
    res = run_query(thread_connection(db), sql, time_limit_s=30, row_cap=10_000)
    step = Step(index=1, kind="sql", code=sql, output=render_result(res.columns, res.rows),
                columns=list(res.columns), rows=[[v if v is None or isinstance(v, (bool, int, float, str)) else str(v)
                                                  for v in r] for r in res.rows])
    return Trajectory(trajectory_id=f"{task.task_id}#ref", task_id=task.task_id, steps=[step],
                      final_response=tagged_response("NULL", abstention_reasoning(task, [1])))


def _cosmetic(sql: str, rnd: random.Random) -> str:
    """The same tokens written differently: keyword case, line breaks, a trailing comment."""
    out = re.sub(r"\b(select|from|where|and|group by|order by|join|on|as|limit)\b",
                 lambda m: m.group(1).upper() if rnd.random() < 0.5 else m.group(1).lower(), sql, flags=re.I)
    return re.sub(r" (FROM|WHERE) ", lambda m: "\n  " + m.group(1) + " ", out) + "  -- the scope"


@pytest.fixture(scope="module")
def noise_tasks(demo_tasks: list) -> list[Task]:
    """Noise tasks with witness rows, two per construction program (every noise type, both scopes)."""
    by: dict[str, list[Task]] = {}
    for t in demo_tasks:
        if t.condition == "noise" and t.reference.witness:
            by.setdefault(t.program, []).append(t)
    rnd = random.Random(15)
    return [t for p in sorted(by) for t in rnd.sample(by[p], min(2, len(by[p])))]


def _calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Task ids ``_perturbations`` is asked for (it builds the decoy and nuisance overlays)."""
    seen: list[str] = []
    real = _evaluate._perturbations

    def spy(db, task, *args):
        seen.append(task.task_id)
        return real(db, task, *args)

    monkeypatch.setattr(_evaluate, "_perturbations", spy)
    return seen


def test_reference_evidence_builds_no_perturbation(demo_db: Path, noise_tasks: list[Task],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _calls(monkeypatch)
    config = VerifyConfig(db_path=str(demo_db))
    qualified = 0
    for task in noise_tasks:
        v = verify(_trajectory(demo_db, task, task.reference.sql), task, config)
        qualified += bool(v.details["evidence"]["used"])
    assert qualified >= len(noise_tasks) * 9 // 10, "the reference query should qualify as evidence almost everywhere"
    assert calls == [], f"perturbations calibrated for the reference query itself on {sorted(set(calls))}"


def test_another_qualifying_query_is_still_checked(demo_db: Path, noise_tasks: list[Task],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference wrapped in a subquery gives the same rows but other checked SQL: its perturbations run."""
    calls = _calls(monkeypatch)
    config = VerifyConfig(db_path=str(demo_db))
    checked = []
    for task in noise_tasks[:8]:
        wrapped = f"SELECT * FROM ({task.reference.sql.strip().rstrip(';')}) AS r"
        v = verify(_trajectory(demo_db, task, wrapped), task, config)
        if v.details["evidence"]["queries"][0]["status"] in ("qualifies", "not_specific"):
            checked.append(task.task_id)
    assert checked, "no wrapped reference query reached the perturbation check"
    assert set(checked) <= set(calls), sorted(set(checked) - set(calls))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_verdict_is_the_same_with_the_check(demo_db: Path, noise_tasks: list[Task], data: st.DataObject,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Invariance: the verdict on the reference query (or a cosmetic rewrite of it) is byte-identical
    whether the perturbation check is skipped or run."""
    task = data.draw(st.sampled_from(noise_tasks), label="task")
    sql = task.reference.sql
    if data.draw(st.booleans(), label="cosmetic"):
        sql = _cosmetic(sql, random.Random(data.draw(st.integers(0, 2**16), label="seed")))
    traj = _trajectory(demo_db, task, sql)
    config = VerifyConfig(db_path=str(demo_db))
    skipped = verify(traj, task, config).model_dump_json()
    with monkeypatch.context() as m:
        m.setattr(_evaluate, "reference_safe", lambda task: None)  # the check runs for every query
        checked = verify(traj, task, config).model_dump_json()
    assert skipped == checked
