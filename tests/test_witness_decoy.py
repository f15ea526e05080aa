"""Evidence must be specific to the task's scope (verifier.abstention._decoy), on the real demo.

Red-team finding: a task-agnostic pair of queries (a fingerprint of whole tables,
``sum(hash(t))``, then the same minus its base value: all zeros on the base, non-zero
with any inserted row) passed 815 of 826 Noise tasks, and queries keyed on marks only
witness rows carry passed 414. Evidence must now also NOT see the witness rows moved
out of the task's scope; the oracle's scoped evidence still qualifies everywhere.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from verifier.abstention import ENTITY_COLUMNS, decoy_witness
from verifier.agents.evidence import evidence_query
from verifier.agents.format import tagged_response
from verifier.agents.reference_agents import abstention_reasoning
from verifier.contract import Step, Trajectory, VerifyConfig
from verifier.sql import render_result, run_query, thread_connection
from verifier.verify import verify


def _step(db: Path, index: int, sql: str) -> Step:
    res = run_query(thread_connection(db), sql, time_limit_s=30, row_cap=10_000)
    return Step(index=index, kind="sql", code=sql, output=render_result(res.columns, res.rows))


def _verdict(db: Path, task, steps: list[Step], cite: int):
    traj = Trajectory(trajectory_id="t", task_id=task.task_id, steps=steps,
                      final_response=tagged_response("NULL", abstention_reasoning(task, [cite])))
    return verify(traj, task, VerifyConfig(db_path=str(db)))


@pytest.fixture(scope="module")
def sample(demo_tasks: list) -> list:
    """Two Noise tasks per construction program (both scopes, every noise type)."""
    by: dict[str, list] = {}
    for t in demo_tasks:
        if t.condition == "noise" and t.reference.witness:
            by.setdefault(t.program, []).append(t)
    rnd = random.Random(0)
    return [t for p in sorted(by) for t in rnd.sample(by[p], min(2, len(by[p])))]


def test_table_fingerprint_is_not_evidence(demo_db: Path, sample: list) -> None:
    tables = sorted({w.table for t in sample for w in t.reference.witness})
    fingerprint = "SELECT " + ", ".join(f"(SELECT sum(hash(x)) FROM {t} x) AS {t}" for t in tables)
    base = run_query(thread_connection(demo_db), fingerprint, time_limit_s=60, row_cap=10).rows[0]
    delta = "SELECT " + ", ".join(f"(SELECT sum(hash(x)) FROM {t} x) - {int(v)} AS {t}" for t, v in zip(tables, base))
    steps = [_step(demo_db, 1, fingerprint), _step(demo_db, 2, delta)]
    passed, specific = [], 0
    for task in sample:
        v = _verdict(demo_db, task, steps, 2)
        if v.success:
            passed.append(task.task_id)
        # a digest of whole rows is now refused as opaque before the decoy is consulted (issue 18)
        specific += bool({"EVIDENCE_NOT_SPECIFIC", "EVIDENCE_OPAQUE"} & {r.value for r in v.reasons})
        # the honest, scoped evidence still qualifies on the same task
        assert _verdict(demo_db, task, [_step(demo_db, 1, evidence_query(task))], 1).success, task.task_id
    # before the decoy check every sampled task passed; a few relational tasks whose
    # decoy is not clean (the check is skipped there, see _evaluate._perturbations) remain
    assert len(passed) <= len(sample) // 10, passed
    assert specific >= len(sample) * 8 // 10


def test_witness_only_marks_are_not_evidence(demo_db: Path, demo_tasks: list) -> None:
    """Invented medication administrations carry emar ids no base row has; a query selecting
    such rows sees every medication witness, scope or not: not specific."""
    mark = "SELECT patientid, admissionid, medication, chart_time FROM medication_administrations WHERE emar_id LIKE 'witness%'"
    tasks = [t for t in demo_tasks if t.condition == "noise"
             and any(w.table == "medication_administrations" for w in t.reference.witness)][:12]
    assert len(tasks) >= 5
    steps = [_step(demo_db, 1, mark)]
    results = [_verdict(demo_db, t, steps, 1) for t in tasks]
    assert sum(v.success for v in results) <= 1, [t.task_id for t, v in zip(tasks, results) if v.success]


def test_decoy_moves_the_patient_scope_and_nothing_else(demo_db: Path, demo_tasks: list) -> None:
    con = thread_connection(demo_db)
    checked = 0
    for task in demo_tasks:
        if task.condition != "noise" or task.scope == "population" or not task.reference.witness:
            continue
        decoy = decoy_witness(demo_db, task)
        if decoy is None:
            continue
        for w, d in zip(task.reference.witness, decoy):
            assert d.table == w.table and d.mode == "insert" and len(d.rows) == len(w.rows)
            for old, new in zip(w.rows, d.rows):
                assert {k: v for k, v in old.items() if k.lower() not in ENTITY_COLUMNS} == \
                       {k: v for k, v in new.items() if k.lower() not in ENTITY_COLUMNS}
                for col in ("patientid", "admissionid"):
                    if old.get(col) is not None and old[col] != new[col]:
                        table = "patients" if col == "patientid" else "admissions"
                        assert con.execute(f"SELECT count(*) FROM {table} WHERE {col} = ?", [new[col]]).fetchone()[0] == 1
                        assert str(new[col]) not in {str(v) for v in task.params.values()}
                moved = [c for c in ("patientid", "admissionid", "icuadmissionid") if old.get(c) != new.get(c)]
                assert moved, (task.task_id, old)
        # deterministic
        from verifier.abstention import _decoy as witness_decoy

        witness_decoy._CACHE.clear()
        assert decoy_witness(demo_db, task) == decoy
        checked += 1
        if checked >= 25:
            break
    assert checked >= 10
