"""The task's own reference query as evidence needs no perturbation runs (issue 15).

A qualifying evidence query must also stay the same under the task's perturbations (the decoy,
the item nuisance), but only under those the task's reference query passes
(``_evaluate._perturbations`` calibrates them by running those very checks on it). So when the
evidence IS the reference query (the same checked SQL: cosmetic rewrites included), the check
cannot fail, and building the decoy and nuisance overlays and running the query on them was
wasted work, a third of the query process's on a batch where agents converge on the reference.
The verdict must be the same with and without the check, on the real demo, except that the runs
not made are not charged to the trajectory's evidence time budget (a budget the check's own runs
would exhaust fails the checked verdict only; never the reverse).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.abstention import _evaluate
from verifier.abstention._budget import EvidenceBudget
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


def test_calibration_follows_a_task_changed_in_place(demo_db: Path, noise_tasks: list[Task]) -> None:
    """The calibration is memoised on what it is made of, not on the task id: a task whose
    reference SQL is changed in place (here to a statement that cannot be calibrated, as it
    fails the read-only check) gets no perturbation, not the ones calibrated before."""
    from verifier.abstention._rekey import rekeyed_witness, task_named_values

    config = VerifyConfig(db_path=str(demo_db))
    changed = 0
    for original in noise_tasks[:6]:
        task = original.model_copy(deep=True)
        threshold = _evaluate._small_cell_threshold(task)
        variant = rekeyed_witness(demo_db, task.reference.witness, task_named_values(task)) or task.reference.witness
        if not _evaluate._perturbations(demo_db, task, config, threshold, variant):
            continue
        task.reference.sql = "DELETE FROM patients"
        assert _evaluate._perturbations(demo_db, task, config, threshold, variant) == [], task.task_id
        changed += 1
    assert changed >= 3, "too few sampled tasks have a calibrated perturbation"


BUDGET = "EVIDENCE_BUDGET_EXCEEDED"


def _two_steps(db: Path, task: Task) -> Trajectory:
    """A count over the witnessed table, then the reference query; both cited (the reference first)."""
    ref = _trajectory(db, task, task.reference.sql)
    count = _trajectory(db, task, f"SELECT COUNT(*) AS n FROM {task.reference.witness[0].table}").steps[0]
    return ref.model_copy(update={"steps": [count, ref.steps[0].model_copy(update={"index": 2})],
                                  "final_response": tagged_response("NULL", abstention_reasoning(task, [1, 2]))})


def _both(db: Path, task: Task, traj: Trajectory, budget: float, monkeypatch: pytest.MonkeyPatch) -> tuple:
    """``(skipped, checked, starts_skipped, starts_checked)`` under ``budget``: the verdicts, and the
    seconds already spent when each run started (its last item: the total), every run charged from
    the installed query cache (what it cost when it ran: the same in both modes)."""
    from verifier.abstention import _noise

    starts: list[list[float]] = []

    class Recorded(EvidenceBudget):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.log: list[float] = []
            starts.append(self.log)  # one budget per verdict

        def run(self, *args, **kwargs):
            self.log.append(self.spent_s)
            return super().run(*args, **kwargs)

        def summary(self):  # once per verdict, after the last charge
            self.log.append(self.spent_s)
            return super().summary()

    monkeypatch.setattr(_noise, "EvidenceBudget", Recorded)
    config = VerifyConfig(db_path=str(db), evidence_time_budget_s=budget)
    skipped = verify(traj, task, config)
    with monkeypatch.context() as m:
        m.setattr(_evaluate, "reference_safe", lambda task: None)
        checked = verify(traj, task, config)
    return skipped, checked, starts[0], starts[1]


@pytest.fixture()
def cached():
    """A query cache installed for the test (charges then come from it)."""
    from verifier.sql import _cache as query_cache

    previous = query_cache.install(query_cache.QueryCache(4096))
    yield
    query_cache.install(previous)


def test_a_budget_between_the_two_costs(demo_db: Path, noise_tasks: list[Task], cached: None,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The one way the two differ: the check's runs of the reference query on the perturbation
    overlays are charged to the trajectory's budget, and the skip makes (and charges) none. A
    budget between the two totals exhausts the check only."""
    split = 0
    for task in noise_tasks[:10]:
        traj = _two_steps(demo_db, task)
        _both(demo_db, task, traj, 30.0, monkeypatch)  # every run made once: now cached
        skipped, checked, starts_skip, starts_check = _both(demo_db, task, traj, 30.0, monkeypatch)
        assert skipped.model_dump_json() == checked.model_dump_json(), task.task_id
        assert starts_skip[-1] <= starts_check[-1], task.task_id
        # a run of the check that starts when the skip has spent all it ever spends: with that as
        # the budget, the check has nothing left there, the skip never runs short
        later = [s for s in starts_check[:-1] if s > starts_skip[-1]]
        if not skipped.success or not later:
            continue
        skipped, checked, _, _ = _both(demo_db, task, traj, min(later), monkeypatch)
        assert skipped.success, (task.task_id, skipped.reasons)
        assert BUDGET in {r.value for r in checked.reasons}, (task.task_id, checked.reasons)
        split += 1
    assert split >= 3, "too few sampled tasks run their reference query on a perturbation before another run"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_only_the_budget_tells_the_two_apart(demo_db: Path, noise_tasks: list[Task], data: st.DataObject,
                                             cached: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under any evidence time budget the skip runs short only where the check does, and unless the
    check exhausts the budget (then it stops early and may have spent less) the skip spends no more
    and the verdicts are byte-identical."""
    task = data.draw(st.sampled_from(noise_tasks), label="task")
    traj = _two_steps(demo_db, task)
    with monkeypatch.context() as m:
        _both(demo_db, task, traj, 30.0, m)  # every run made once: now cached
    budget = 10 ** data.draw(st.floats(min_value=-4.0, max_value=-0.5), label="log10 budget")
    skipped, checked, starts_skip, starts_check = _both(demo_db, task, traj, budget, monkeypatch)
    over = {r.value for r in checked.reasons}
    assert BUDGET not in {r.value for r in skipped.reasons} or BUDGET in over
    if BUDGET not in over:
        assert starts_skip[-1] <= starts_check[-1] + 1e-9
        assert skipped.model_dump_json() == checked.model_dump_json()
