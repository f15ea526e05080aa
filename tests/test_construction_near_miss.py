"""Near misses (issue 33 point 2): a known reference with a known dropped or swapped
condition gives the known near-miss answer; old task files without the fields load.
Rule: verifier/construction/near_miss.py."""

from __future__ import annotations

import duckdb
import pytest

from verifier.construction.near_miss import difficulty, find_near_misses, overlay_runner, perturbations, time_columns_of
from verifier.contract import CountAnswer, NumberAnswer, Reference, Task

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


def test_recorded_near_misses_reproduce_on_synthetic_hospital(synth_tasks, synth_db):
    """Every task built from the synthetic hospital carries near misses that the database gives again:
    re-running the perturbations of its reference yields the recorded (kind, condition, answer)s, the
    convention readings come from the audit, and ``difficulty`` follows from the recorded fields."""
    from verifier.construction import load_programs

    specs = {p.name: p for p in load_programs()}
    noise = [t for t in synth_tasks if t.condition == "noise"]
    assert {t.noise_type for t in noise if t.reference.near_misses} == {"record", "value", "query"}
    con = duckdb.connect(str(synth_db), read_only=True)
    try:
        cols = time_columns_of(con)
        checked = 0
        for t in sorted(synth_tasks, key=lambda t: t.task_id)[::7]:
            assert t.difficulty == difficulty(t.reference.near_misses, t.reference.conditions)
            clean = t.condition == "clean"
            ref = t.reference.answer if clean else None
            alts = t.reference.alternatives if clean else ()
            res = find_near_misses(t.reference.sql, specs[t.program].answer, overlay_runner(con), reference=ref,
                                   alternatives=alts, time_columns=cols, population=t.scope == "population")
            want = [(n.kind, n.condition, n.answer) for n in t.reference.near_misses if n.kind != "convention"]
            assert [(n.kind, n.condition, n.answer) for n in res.near_misses] == want, t.task_id
            assert res.conditions == t.reference.conditions
            for n in t.reference.near_misses:
                assert n.answer is not None and (not clean or n.answer != t.reference.answer)
            checked += 1
        assert checked >= 20
    finally:
        con.close()


def test_several_rows_where_one_value_is_asked_give_one_answer_in_any_order() -> None:
    """Clean-clone CI: dropping proc_days_after_admission's encounter link left one row per admission of the
    database and no order; the near miss recorded at construction (365 days) re-ran as 43, its first row moving
    with DuckDB's threads. Then (904c213) such perturbations were no near miss at all, and the real demo's
    value-level near-miss rate fell from 53% to 38%, under issue 33's 40%: yet a careless reading that gets several
    rows still answers, with one of them. The near miss is the answer of the first answering row under the rows'
    total order: the same for every order of the rows (this test fails on the unordered first row and on 904c213)."""
    sql = ("SELECT date_diff('day', CAST(a.admission_time AS DATE), min(p.chart_date)) AS days FROM procedures p "
           "JOIN admissions a ON a.admissionid = p.admissionid WHERE p.patientid = 1 AND p.admissionid = 2 "
           "GROUP BY a.admission_time")

    def run(rows_when_dropped: list[tuple]):
        def go(q: str) -> tuple[list[str], list[tuple]]:
            return ["days"], ([(0,)] if "a.admissionid = p.admissionid" in q else rows_when_dropped)
        return go

    spec = {"kind": "number", "value": "days", "decimals": 0}
    ref = NumberAnswer(value=0.0, decimals=0)
    for rows, want in (([(365,), (43,)], 43.0), ([(43,), (365,)], 43.0), ([(None,), (365,), (120,)], 120.0),
                       ([(365,), (365.0,)], 365.0), ([(365,)], 365.0)):
        got = find_near_misses(sql, spec, run(rows), reference=ref)
        assert [n.answer.value for n in got.near_misses if n.kind == "encounter"] == [want], rows
    # a row that gives the reference is one answer among them; the first answering row decides, whatever it is
    both = find_near_misses(sql, spec, run([(0,), (43,)]), reference=ref)
    assert not [n for n in both.near_misses if n.kind == "encounter"]
