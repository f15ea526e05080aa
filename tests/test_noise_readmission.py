"""Readmission evidence on the synthetic hospital (issue 17, Noise false rejects kind c).

The witness of a readmission task adds no unit: it adds the next admission of a patient whose
admission of the question's type exists already, so a list of next-admission gaps (LEAD over each
patient's admissions) shows the unit's gap changing (300 days -> 0.5), not a row appearing or an
empty cell filling. A changed row of the same unit whose value crosses a bound the task names
("within 21 days") shows the gap. And since those rows hold no value the task names, the task's
decoy moves them to a patient with no admission of that type: a query keyed on marks only the
witness rows carry (a stay of exactly one day) sees the decoy too and is not evidence.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier import verify
from verifier.abstention._witness import compare, task_bounds
from verifier.contract import Step, Task, Trajectory, VerifyConfig
from verifier.sql import QueryResult, render_result, run_query, thread_connection

GAPS = """
SELECT admissionid, patientid, discharge_time, next_admission,
       round(date_diff('minute', discharge_time, next_admission) / 1440.0, 2) AS gap_days
FROM (SELECT *, lead(admission_time) OVER (PARTITION BY patientid ORDER BY admission_time) AS next_admission
      FROM admissions) per_patient
WHERE admission_type = '{kind}' AND next_admission IS NOT NULL
ORDER BY gap_days
"""


def _verify(db: Path, task: Task, sql: str, final: str) -> list[str]:
    res = run_query(thread_connection(db), sql, time_limit_s=30, row_cap=10_000)
    step = Step(index=1, kind="sql", code=sql, output=render_result(res.columns, res.rows))
    v = verify(Trajectory(trajectory_id="t", task_id=task.task_id, steps=[step], final_response=final), task,
               VerifyConfig(db_path=str(db)))
    return [r.value for r in v.reasons]


@pytest.fixture(scope="module")
def readmission_tasks(synth_tasks: list) -> list[Task]:
    tasks = [t for t in synth_tasks if t.condition == "noise" and t.program == "readmissions_within_days"]
    assert tasks
    return tasks


def _final(task: Task) -> str:
    kind, days = task.params["admission_type"], task.params["days"]
    return (f"Answer: NULL\nReasoning: For every {kind} admission I took the patient's next admission [step 1]: "
            f"fewer than five were readmitted within {days} days, so the count is withheld.")


def test_a_next_admission_gap_list_shows_the_gap(synth_db: Path, readmission_tasks: list[Task]) -> None:
    for task in readmission_tasks:
        sql = GAPS.format(kind=task.params["admission_type"])
        assert _verify(synth_db, task, sql, _final(task)) == [], task.task_id


def test_a_query_keyed_on_the_witness_marks_sees_the_decoy(synth_db: Path, readmission_tasks: list[Task]) -> None:
    con = thread_connection(synth_db)
    marked = "SELECT count(*) AS n FROM admissions WHERE discharge_time - admission_time = INTERVAL 1 DAY AND admission_type = '{t}'"
    checked = 0
    for task in readmission_tasks:
        # witness rows of the question's own type carry a named value: their decoy is another type
        # (verifier.abstention._decoy, population rule), not the move to another patient tested here
        kinds = {r["admission_type"] for w in task.reference.witness for r in w.rows} - {task.params["admission_type"]}
        for kind in kinds:
            sql = marked.format(t=kind)
            if con.execute(sql).fetchone()[0] != 0:
                continue  # the mark is not unique to the witness on this database
            assert _verify(synth_db, task, sql, _final(task)) == ["EVIDENCE_NOT_SPECIFIC"], task.task_id
            checked += 1
    assert checked


def _r(rows: list[tuple]) -> QueryResult:
    return QueryResult(columns=["admissionid", "gap_days"], rows=rows)


_DAYS = st.integers(0, 100_000).map(lambda x: x / 100)  # gaps in days, to the hundredth


@given(gap=_DAYS, new=_DAYS, bound=st.integers(1, 90))
def test_a_changed_gap_shows_the_gap_exactly_when_it_crosses_the_bound(gap: float, new: float, bound: int) -> None:
    base, over = _r([(11, gap), (12, 400.0)]), _r([(11, new), (12, 400.0)])
    s = compare(base, over, bounds=(float(bound),))
    if gap == new:
        assert not s.sensitive
    else:  # a crossing, or (the older rule) a zero on the base filled with the witness
        assert s.shows_gap == (((gap <= bound) != (new <= bound)) or gap == 0)


def test_only_the_same_unit_and_a_named_bound_count() -> None:
    # two different units (no cell in common) are not one unit's gap changing
    swapped = compare(_r([(11, 300.0), (13, 5.0)]), _r([(12, 0.5), (13, 6.0)]), bounds=(21.0,))
    assert not swapped.shows_gap  # 11 gone, 12 new: no pair of the same unit crosses 21
    assert not compare(_r([(11, 300.0)]), _r([(11, 0.5)])).shows_gap  # no bound named
    assert task_bounds({"admission_type": "URGENT", "days": 21}, {"admissionid": 5, "itemid": 7, "threshold": 4.5}) == (4.5, 21.0)
