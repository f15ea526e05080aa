"""Near misses (issue 33 point 2): a known reference with a known dropped or swapped
condition gives the known near-miss answer; old task files without the fields load.
Rule: verifier/construction/near_miss.py."""

from __future__ import annotations

import duckdb
import pytest

from verifier.construction.near_miss import difficulty, find_near_misses, overlay_runner, perturbations, time_columns_of
from verifier.contract import CountAnswer, Reference, Task

SPEC = {"kind": "count", "value": "n"}


@pytest.fixture()
def con():
    c = duckdb.connect()
    c.execute("CREATE TABLE lab_events (patientid INT, admissionid INT, itemid INT, chart_time TIMESTAMP, value_numeric DOUBLE)")
    c.execute("""INSERT INTO lab_events VALUES (1, 10, 5, '2150-01-01', 1), (1, 10, 5, '2150-01-02', 2),
                 (1, 11, 5, '2150-02-01', 3), (1, 11, 6, '2150-02-02', 4)""")
    yield c
    c.close()


def test_dropped_encounter_gives_other_admissions_answer(con):
    sql = "SELECT count(*) AS n FROM lab_events WHERE patientid = 1 AND admissionid = 10 AND itemid = 5 AND value_numeric > 1"
    res = find_near_misses(sql, SPEC, overlay_runner(con), reference=CountAnswer(value=1), time_columns=time_columns_of(con))
    got = {(n.kind, n.condition): n.answer.value for n in res.near_misses}
    assert got[("encounter", "admissionid = 10")] == 2
    assert got[("threshold", "value_numeric > 1")] == 2
    assert got[("bound", "value_numeric > 1")] == 2
    assert not any(k == "item" for k, _ in got)  # dropping the item asks another question: not run
    assert res.conditions == 4 and difficulty(res.near_misses, res.conditions) == "hard"


def test_noise_twin_any_answer_is_a_near_miss_and_order_swap(con):
    sql = "SELECT value_numeric AS n FROM lab_events WHERE patientid = 1 AND admissionid = 12 AND itemid = 5 ORDER BY chart_time LIMIT 1"
    res = find_near_misses(sql, {"kind": "number", "value": "n"}, overlay_runner(con), time_columns=time_columns_of(con))
    assert [(n.kind, n.answer.value) for n in res.near_misses] == [("encounter", 1.0)]
    kinds = [p.kind for p in perturbations(sql)]
    assert "first_last" in kinds and perturbations(sql) == perturbations(sql)  # deterministic


def test_five_unit_guard_is_kept():
    sql = "SELECT count(DISTINCT admissionid) AS n FROM lab_events WHERE itemid = 5 HAVING count(DISTINCT admissionid) >= 5"
    assert all("HAVING" in p.sql for p in perturbations(sql))


def test_old_task_without_fields_loads():
    t = Task(task_id="a-clean", pair_id="a", question="q", condition="clean", intent="billing", program="p",
             reference=Reference(sql="SELECT 1", answer=CountAnswer(value=1)))
    again = Task.model_validate_json(t.model_dump_json(exclude={"difficulty": True, "reference": {"near_misses", "conditions"}}))
    assert again.difficulty is None and again.reference.near_misses == [] and again.reference.conditions is None
