"""Ties at a LIMIT (issue 17 kind 9): construction records the tied alternatives in the
reference, matching accepts any of them, old task files still load.

The reference SQL is the real programs' (verifier/construction/programs/*.toml), run on a
small database this test builds with tied rows; rule: verifier/construction/ties.py.
"""

from __future__ import annotations

import json

import duckdb
import pytest

from verifier import Task, Trajectory, verify
from verifier.construction.sqltext import render
from verifier.construction.spec import load_programs
from verifier.construction.ties import tied_alternatives
from verifier.construction.typed import to_answer
from verifier.contract import ReasonCode, Reference


@pytest.fixture()
def con():
    c = duckdb.connect()
    c.execute("""CREATE TABLE lab_events (lab_event_id INT, patientid INT, admissionid INT, itemid INT,
                 chart_time TIMESTAMP, value_numeric DOUBLE, value_unit VARCHAR)""")
    c.execute("""INSERT INTO lab_events VALUES
        (1, 7, 70, 50971, '2150-01-01 08:00', 4.1, 'mEq/L'),
        (2, 7, 70, 50971, '2150-01-01 08:00', 4.4, 'mEq/L'),
        (3, 7, 70, 50971, '2150-01-01 08:00', 4.1, 'mEq/L'),
        (4, 7, 70, 50971, '2150-01-01 09:00', 3.9, 'mEq/L'),
        (5, 8, 80, 50971, '2150-01-01 08:00', 5.0, 'mEq/L'),
        (6, 8, 80, 50971, '2150-01-01 10:00', 5.5, 'mEq/L')""")
    c.execute("""CREATE TABLE icu_procedure_events (order_id INT, patientid INT, icuadmissionid INT, itemid INT,
                 start_time TIMESTAMP, location VARCHAR)""")
    rows = [(i, 1, 100 + i, 224263, f"2150-01-0{1 + i % 5} 10:00", loc)
            for i, loc in enumerate(["Right Arm", "Left Arm", "Right Arm", "Left Arm", "Neck", "Right Arm", "Left Arm"])]
    rows.append((20, 9, 900, 224263, "2150-02-01 10:00", "Left Subclavian"))
    rows.append((21, 9, 900, 224263, "2150-02-01 10:00", "Right Subclavian"))
    c.executemany("INSERT INTO icu_procedure_events VALUES (?, ?, ?, ?, ?, ?)", rows)
    c.execute("CREATE TABLE medication_administrations (emar_id VARCHAR, patientid INT, admissionid INT, "
              "medication VARCHAR, event_text VARCHAR, chart_time TIMESTAMP)")
    c.execute("""INSERT INTO medication_administrations VALUES
        ('e1', 7, 70, 'Heparin', 'Administered', '2150-01-01 08:00'),
        ('e2', 7, 70, 'Heparin', 'Administered', '2150-01-01 08:00'),
        ('e3', 7, 70, 'Heparin', 'Administered', '2150-01-02 08:00')""")
    c.execute("CREATE TABLE medication_administration_details (emar_id VARCHAR, dose_given VARCHAR, "
              "dose_given_unit VARCHAR)")
    c.execute("INSERT INTO medication_administration_details VALUES ('e1', '5000', 'UNIT'), ('e2', '2500', 'UNIT'),"
              " ('e3', '1000', 'UNIT')")
    yield c
    c.close()


def _program(name: str):
    return next(p for p in load_programs() if p.name == name)


def _reference(con, name: str, ctx: dict):
    spec = _program(name)
    sql = render(spec.reference, ctx, sql=True, where=name)

    def query(text: str):
        cur = con.execute(text)
        return [d[0] for d in cur.description], cur.fetchall()

    cols, rows = query(sql)
    answer = to_answer(spec.answer, cols, rows)
    return answer, tied_alternatives(sql, spec.answer, query, answer)


def _values(answers) -> list:
    return sorted(a.value for a in answers)


def test_first_lab_value_tied_on_chart_time(con):
    """ORDER BY chart_time, lab_event_id LIMIT 1: the id breaks the tie, the question does not."""
    answer, alts = _reference(con, "lab_first_value_in_admission", {"patientid": 7, "admissionid": 70, "itemid": 50971})
    assert answer.value == 4.1
    assert _values(alts) == [4.4]  # the other 4.1 row is the same answer


def test_no_tie_no_alternatives(con):
    answer, alts = _reference(con, "lab_first_value_in_admission", {"patientid": 8, "admissionid": 80, "itemid": 50971})
    assert answer.value == 5.0 and alts == []


def test_last_lab_value_descending(con):
    answer, alts = _reference(con, "lab_last_value_missing", {"patientid": 8, "admissionid": 80, "itemid": 50971})
    assert answer.value == 5.5 and alts == []


def test_most_common_location_tied_on_count(con):
    """A tie for the most frequent location (population) is no answer: blind reviewers judged
    "the answer is a tie, not one location" (issue 12), so the reference gives none and the
    candidate is dropped as clean_unsupported (it used to break the tie by the location's name)."""
    answer, alts = _reference(con, "icu_line_common_location", {"itemid": 224263})
    assert answer is None and alts == []


def test_line_location_tied_on_start_time(con):
    answer, alts = _reference(con, "icu_line_location_missing", {"patientid": 9, "icuadmissionid": 900, "itemid": 224263})
    assert {answer.value, *_values(alts)} == {"Left Subclavian", "Right Subclavian"} and len(alts) == 1


def test_first_dose_tied_inside_a_cte(con):
    """The LIMIT 1 is in a CTE (the first administration); the dose comes from the tied row."""
    answer, alts = _reference(con, "med_first_dose_missing", {"patientid": 7, "admissionid": 70, "medication": "Heparin"})
    assert {answer.value, *_values(alts)} == {5000.0, 2500.0} and len(alts) == 1


def _task(answer, alternatives) -> Task:
    return Task(task_id="t", pair_id="p", question="q", condition="clean", intent="laboratory_microbiology",
                program="lab_first_value_in_admission",
                reference=Reference(sql="SELECT 1", answer=answer, alternatives=alternatives))


@pytest.mark.parametrize("response,ok", [
    ("Answer: 4.1 mEq/L", True),
    ("Answer: 4.4 mEq/L", True),
    ("<answer>4.40 mEq/L</answer> (two results at 08:00; this is one of them)", True),
    ("Answer: 4.4", True),
    ("Answer: 3.9 mEq/L", False),
    ("Answer: 4.1 or 4.4 mEq/L", False),  # naming both is still a hedge
])
def test_matching_accepts_any_tied_value(con, response, ok):
    answer, alts = _reference(con, "lab_first_value_in_admission", {"patientid": 7, "admissionid": 70, "itemid": 50971})
    task = _task(answer, alts)
    task.reference.answer_policy.db_unit = "mEq/L"
    v = verify(Trajectory(trajectory_id="r", task_id="t", final_response=response), task)
    assert v.success is ok, v.details
    if not ok:
        assert v.reasons == [ReasonCode.WRONG_VALUE]


def test_contract_round_trip_and_old_task_files_load(con):
    answer, alts = _reference(con, "lab_first_value_in_admission", {"patientid": 7, "admissionid": 70, "itemid": 50971})
    task = _task(answer, alts)
    again = Task.model_validate_json(task.model_dump_json())
    assert again == task and again.reference.alternatives == alts
    old = json.loads(task.model_dump_json())
    del old["reference"]["alternatives"]  # a task file written before the field existed
    assert Task.model_validate(old).reference.alternatives == []
