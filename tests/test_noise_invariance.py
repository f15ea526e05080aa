"""Specificity as invariance (issue 18 point 2): honest broad queries that show the task's scope
next to its neighbours qualify; the decoy is out of scope in every way the question names; a
row of another item or code in the task's scope (a nuisance) does not change evidence that
observes the requirement. On the synthetic hospital and, where the program exists only there,
the real demo."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.abstention import decoy_witness
from verifier.abstention._decoy import decoy_markers, item_nuisance
from verifier.abstention._invariance import nuisance_tolerated
from verifier.agents.format import tagged_response
from verifier.agents.reference_agents import abstention_reasoning
from verifier.contract import Step, Trajectory, VerifyConfig
from verifier.sql import QueryResult, render_result, run_query, thread_connection
from verifier.verify import verify


def _step(db: Path, index: int, sql: str) -> Step:
    res = run_query(thread_connection(db), sql, time_limit_s=30, row_cap=10_000)
    return Step(index=index, kind="sql", code=sql, output=render_result(res.columns, res.rows))


def _verdict(db: Path, task, sql: str):
    traj = Trajectory(trajectory_id="t", task_id=task.task_id, steps=[_step(db, 1, sql)],
                      final_response=tagged_response("NULL", abstention_reasoning(task, [1])))
    return verify(traj, task, VerifyConfig(db_path=str(db)))


def _lit(v) -> str:
    return "'" + str(v).replace("'", "''") + "'"


def _of(tasks: list, program: str) -> list:
    return [t for t in tasks if t.condition == "noise" and t.program == program and t.reference.witness]


GROUP_BY_TYPE = ("SELECT d.drg_type, count(*) AS drg_rows, count(d.drg_severity) AS with_severity "
                 "FROM drg_codes d JOIN admissions a ON a.admissionid = d.admissionid "
                 "WHERE a.admission_type = {admission_type} GROUP BY d.drg_type ORDER BY d.drg_type")


@pytest.mark.parametrize("which", ["synthetic", "demo"])
def test_group_by_every_drg_type_qualifies(which: str, request: pytest.FixtureRequest) -> None:
    """The scope's row (the question's DRG type: rows, 0 with severity) next to the other types:
    the decoy (the witness moved to another DRG type) changes the other type's row only."""
    db = request.getfixturevalue("synth_db" if which == "synthetic" else "demo_db")
    tasks = _of(request.getfixturevalue("synth_tasks" if which == "synthetic" else "demo_tasks"), "drg_mean_severity_by_type")
    if not tasks:
        pytest.skip(f"no drg_mean_severity_by_type Noise task in the {which} construction")
    for task in tasks:
        v = _verdict(db, task, GROUP_BY_TYPE.format(admission_type=_lit(task.params["admission_type"])))
        assert v.success, (task.task_id, [r.value for r in v.reasons], v.details["evidence"]["queries"][0]["why"])


def test_patient_drg_rows_next_to_each_other_qualify(synth_db: Path, synth_tasks: list) -> None:
    """Every DRG row of the admission (the question's type with no severity, the other type with
    one): the nuisance (a row of the other type for the same admission) shows as its own row."""
    tasks = _of(synth_tasks, "drg_severity_missing")
    assert tasks
    for task in tasks:
        sql = f"SELECT drg_type, drg_code, description, drg_severity FROM drg_codes WHERE admissionid = {int(task.params['admissionid'])}"
        v = _verdict(synth_db, task, sql)
        assert v.success, (task.task_id, [r.value for r in v.reasons], v.details["evidence"]["queries"][0]["why"])


def test_code_or_description_match_qualifies_on_demo(demo_db: Path, demo_tasks: list) -> None:
    """drg_code IN (...) OR description ILIKE ...: the decoy replaces the code AND its description."""
    tasks = _of(demo_tasks, "drg_admissions_count")
    assert tasks
    con = thread_connection(demo_db)
    for task in tasks:
        code = task.params["drg_code"]
        desc = con.execute("SELECT description FROM drg_codes WHERE drg_code = ? AND drg_type = ? LIMIT 1",
                           [code, task.params["drg_type"]]).fetchone()[0]
        words = " ".join(desc.split()[:3]).replace("'", "''")
        for sql in (
            f"SELECT drg_type, drg_code, description, count(DISTINCT admissionid) AS admissions FROM drg_codes "
            f"WHERE drg_code IN ({_lit(code)}, {_lit(code.lstrip('0'))}) OR description ILIKE '%{words}%' GROUP BY ALL ORDER BY ALL",
            f"SELECT count(DISTINCT admissionid) AS admissions FROM drg_codes "
            f"WHERE drg_code = {_lit(code)} OR description ILIKE {_lit(desc)}",
        ):
            v = _verdict(demo_db, task, sql)
            assert v.success, (task.task_id, sql, [r.value for r in v.reasons], v.details["evidence"]["queries"][0]["why"])


def test_code_or_label_match_qualifies(synth_db: Path, synth_tasks: list) -> None:
    """itemid = N OR label ILIKE ...: the decoy's item never shares a word with the question."""
    tasks = _of(synth_tasks, "lab_admissions_above_threshold")
    assert tasks
    con = thread_connection(synth_db)
    for task in tasks:
        itemid = int(task.params["itemid"])
        label = con.execute("SELECT label FROM lab_items WHERE itemid = ?", [itemid]).fetchone()[0].split(",")[0].replace("'", "''")
        sql = ("SELECT count(DISTINCT l.admissionid) AS admissions FROM lab_events l JOIN lab_items i ON i.itemid = l.itemid "
               f"WHERE (l.itemid = {itemid} OR i.label ILIKE '%{label}%') AND l.value_numeric > {task.params['threshold']}")
        v = _verdict(synth_db, task, sql)
        assert v.success, (task.task_id, sql, [r.value for r in v.reasons], v.details["evidence"]["queries"][0]["why"])


def test_population_decoy_is_out_of_scope_in_every_named_way(demo_db: Path, demo_tasks: list) -> None:
    """The decoy's code, item or drug shares no content word with the question, and its label
    columns are the other code's (never the task's description)."""
    checked = 0
    for task in [t for t in demo_tasks if t.condition == "noise" and t.scope == "population" and t.reference.witness][:60]:
        decoy = decoy_witness(demo_db, task)
        if decoy is None:
            continue
        introduced, replaced = decoy_markers(demo_db, task)
        assert introduced and not introduced & replaced, task.task_id
        for w, d in zip(task.reference.witness, decoy):
            for old, new in zip(w.rows, d.rows):
                if "description" in old and old.get("drg_code") != new.get("drg_code"):
                    assert new["description"] != old["description"], (task.task_id, old, new)
        checked += 1
    assert checked >= 20


def test_nuisance_keeps_the_scope_and_changes_the_item(synth_db: Path, synth_tasks: list) -> None:
    checked = 0
    for task in [t for t in synth_tasks if t.condition == "noise" and t.scope != "population" and t.reference.witness]:
        n = item_nuisance(synth_db, task, task.reference.witness)
        if n is None:
            continue
        rows, introduced, replaced = n
        assert introduced and replaced and not introduced & replaced
        for w in rows:
            for row in w.rows:
                for col in ("patientid", "admissionid", "icuadmissionid"):
                    if col in row and row[col] is not None:
                        originals = {r.get(col) for t in task.reference.witness for r in t.rows}
                        assert row[col] in originals, (task.task_id, col)
        checked += 1
    assert checked >= 20


def _r(cols: list[str], *rows: tuple) -> QueryResult:
    return QueryResult(columns=cols, rows=list(rows))


NUISANCE_CASES = [
    # (what the query shows, base, witness, nuisance, tolerated)
    ("a count of every row in scope, 0 on the base", _r(["n"], (0,)), _r(["n"], (1,)), _r(["n"], (1,)), False),
    ("the item's count next to a total", _r(["k", "n"], (0, 37)), _r(["k", "n"], (1, 38)), _r(["k", "n"], (0, 38)), True),
    ("every lab of the admission with its item id", _r(["itemid", "v"], (50912, 1.0)),
     _r(["itemid", "v"], (50912, 1.0), (50971, 4.1)), _r(["itemid", "v"], (50912, 1.0), (51214, 2.0)), True),
    ("every lab time of the admission, items not shown", _r(["t"], ("08:00",)), _r(["t"], ("08:00",), ("09:00",)),
     _r(["t"], ("08:00",), ("09:00",)), False),
    ("nothing at all in scope on the base", _r(["itemid"]), _r(["itemid"], (50971,)), _r(["itemid"], (51214,)), True),
    ("the severity cell, another DRG type's row beside it", _r(["s"], (None,)), _r(["s"], (2,)), _r(["s"], (None,), (2,)), True),
    ("an opaque flag over the scope", _r(["changed"], (False,)), _r(["changed"], (True,)), _r(["changed"], (True,)), False),
]


@pytest.mark.parametrize("what,base,witness,nuisance,tolerated", NUISANCE_CASES, ids=[c[0] for c in NUISANCE_CASES])
def test_nuisance_rule(what: str, base, witness, nuisance, tolerated: bool) -> None:
    assert nuisance_tolerated(base, witness, nuisance, None, frozenset({"51214"})) is tolerated, what


def test_item_count_next_to_a_total_qualifies(synth_db: Path, synth_tasks: list) -> None:
    """The cell that shows the gap (the item's count) is untouched by the nuisance; the total beside it may change."""
    tasks = _of(synth_tasks, "lab_first_value_in_admission")
    assert tasks
    for task in tasks:
        adm, item = int(task.params["admissionid"]), int(task.params["itemid"])
        sql = (f"SELECT count(*) FILTER (WHERE itemid = {item}) AS this_item, count(*) AS all_labs "
               f"FROM lab_events WHERE admissionid = {adm}")
        v = _verdict(synth_db, task, sql)
        assert v.success, (task.task_id, [r.value for r in v.reasons], v.details["evidence"]["queries"][0]["why"])
