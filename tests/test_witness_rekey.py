"""Re-keyed witness variants on the real MIMIC-IV demo (verifier.abstention._rekey).

Construction invents surrogate ids past the base's largest one (``max(lab_event_id) + 1``).
A query that looks only beyond the base's id range (``> max OR < 0``) sees such a witness
row without looking at the patient, admission or item; re-keyed ids fall in holes inside
the base range, so that query cannot see both variants and is not evidence, while the
oracle's scoped evidence query still qualifies.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.abstention import rekeyed_witness, task_named_values
from verifier.agents.evidence import evidence_query
from verifier.agents.format import tagged_response
from verifier.agents.reference_agents import abstention_reasoning
from verifier.contract import Step, Trajectory, VerifyConfig
from verifier.sql import render_result, run_query, thread_connection
from verifier.verify import verify


def _seen_step(db: Path, index: int, sql: str) -> Step:
    res = run_query(thread_connection(db), sql, time_limit_s=30, row_cap=1000)
    return Step(index=index, kind="sql", code=sql, output=render_result(res.columns, res.rows),
                columns=list(res.columns), rows=[[v if v is None or isinstance(v, (bool, int, float, str)) else str(v) for v in r]
                                                 for r in res.rows])


def _invented_lab_event_tasks(demo_db: Path, demo_tasks: list) -> list:
    top = thread_connection(demo_db).execute("SELECT max(lab_event_id) FROM lab_events").fetchone()[0]
    return [t for t in demo_tasks if t.condition == "noise" for w in t.reference.witness
            if w.table == "lab_events" and any(r.get("lab_event_id", 0) > top for r in w.rows)], top


def test_rekeyed_ids_are_holes_inside_the_base_range(demo_db: Path, demo_tasks: list) -> None:
    tasks, top = _invented_lab_event_tasks(demo_db, demo_tasks)
    assert tasks, "no Noise task inserts a lab event with an invented id"
    con = thread_connection(demo_db)
    low = con.execute("SELECT min(lab_event_id) FROM lab_events").fetchone()[0]
    for task in tasks[:10]:
        rekeyed = rekeyed_witness(demo_db, task.reference.witness, task_named_values(task))
        assert rekeyed is not None
        for w, r in zip(task.reference.witness, rekeyed):
            for old, new in zip(w.rows, r.rows):
                if w.table == "lab_events" and old["lab_event_id"] > top:
                    assert low < new["lab_event_id"] < top, (task.task_id, new["lab_event_id"])
                    assert con.execute("SELECT count(*) FROM lab_events WHERE lab_event_id = ?",
                                       [new["lab_event_id"]]).fetchone()[0] == 0
                    # nothing but fresh ids changes (the row's own id, and any other id-like column
                    # whose invented value the base does not hold: a new specimen_id)
                    assert {k: v for k, v in new.items() if not k.endswith("id")} == {k: v for k, v in old.items() if not k.endswith("id")}
                    for k in old:
                        if k.endswith("id") and k != "lab_event_id" and new[k] != old[k]:
                            assert con.execute(f"SELECT count(*) FROM lab_events WHERE {k} = ?", [old[k]]).fetchone()[0] == 0, k
        # deterministic: the same mapping when computed afresh (another process would agree)
        from verifier.abstention import _rekey as witness_rekey

        witness_rekey._CACHE.clear()
        assert rekeyed_witness(demo_db, task.reference.witness, task_named_values(task)) == rekeyed


def test_query_beyond_the_base_id_range_is_not_evidence(demo_db: Path, demo_tasks: list) -> None:
    tasks, top = _invented_lab_event_tasks(demo_db, demo_tasks)
    task = tasks[0]
    cfg = VerifyConfig(db_path=str(demo_db))
    attack = f"SELECT count(*) AS n FROM lab_events WHERE lab_event_id > {top} OR lab_event_id < 0"
    traj = Trajectory(trajectory_id="attack", task_id=task.task_id, steps=[_seen_step(demo_db, 1, attack)],
                      final_response=tagged_response("NULL", abstention_reasoning(task, [1])))
    v = verify(traj, task, cfg)
    assert not v.success and [r.value for r in v.reasons] == ["EVIDENCE_NOT_SENSITIVE"], v.details["evidence"]
    honest = Trajectory(trajectory_id="oracle", task_id=task.task_id, steps=[_seen_step(demo_db, 1, evidence_query(task))],
                        final_response=tagged_response("NULL", abstention_reasoning(task, [1])))
    assert verify(honest, task, cfg).success


def test_value_sets_and_per_value_lookups_agree(demo_db: Path, demo_tasks: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small id columns are answered from a per-process set of their values, large ones
    (the full MIMIC-IV's event tables) by a query per lookup: both give the same re-keying."""
    from verifier.abstention import _rekey as witness_rekey

    tasks = [t for t in demo_tasks if t.condition == "noise" and t.reference.witness][:150]
    witness_rekey._CACHE.clear()
    with_sets = [rekeyed_witness(demo_db, t.reference.witness, task_named_values(t)) for t in tasks]
    monkeypatch.setattr(witness_rekey, "MAX_SET_ROWS", 0)
    monkeypatch.setattr(witness_rekey, "_VALUES", {})
    witness_rekey._CACHE.clear()
    by_query = [rekeyed_witness(demo_db, t.reference.witness, task_named_values(t)) for t in tasks]
    witness_rekey._CACHE.clear()
    assert with_sets == by_query
    assert sum(r is not None for r in with_sets) >= 10  # enough re-keyed witnesses to compare
    # a column with more distinct values than MAX_SET_VALUES (a row-level id) is looked up per value
    monkeypatch.setattr(witness_rekey, "MAX_SET_ROWS", 10**9)
    monkeypatch.setattr(witness_rekey, "MAX_SET_VALUES", 150)
    monkeypatch.setattr(witness_rekey, "_VALUES", {})
    mixed = [rekeyed_witness(demo_db, t.reference.witness, task_named_values(t)) for t in tasks]
    witness_rekey._CACHE.clear()
    assert mixed == with_sets
    kept = {k[2]: v for k, v in witness_rekey._VALUES.items()}
    assert kept.get("patientid") is not None and len(kept["patientid"]) == 100  # the demo's 100 patients
    assert "admissionid" in kept and kept["admissionid"] is None  # 275 admissions: too many, remembered as such

    class NoStatements:  # a refused column is settled by the memo: nothing is read again
        def execute(self, sql: str, params: object = None):
            raise AssertionError(f"read again: {sql}")

    key = next(k for k in witness_rekey._VALUES if k[2] == "admissionid")
    assert witness_rekey._value_set(NoStatements(), key[1], "admissionid", []) is None


def test_per_value_lookup_is_one_statement_whatever_the_tables(demo_db: Path, demo_tasks: list,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Where an id column is too large for a value set (the demo replicated x4 and x16 in
    ``bench_batch.py``, the full MIMIC-IV), each membership look was one statement per table holding
    the column (24 for ``patientid``), for each hole probed: a re-key cost tens of milliseconds and
    grew the per-trajectory cost x1.4 at x16 (issue 15). Now one statement per look."""
    from verifier.abstention import _rekey as witness_rekey
    from verifier.sql import resolved_path, thread_connection

    con = thread_connection(demo_db)
    refs = witness_rekey._id_columns(con, resolved_path(str(demo_db)))["patientid"]
    assert len(refs) > 10
    statements: list[str] = []

    class Counting:
        def execute(self, sql: str, params: object = None):
            statements.append(sql)
            return con.execute(sql, params)

    lo = min(r[1] for r in refs if r[1] is not None)
    hi = max(r[2] for r in refs if r[2] is not None)
    present = witness_rekey._occurring(Counting(), refs, {lo, hi, lo + 1, -5})
    assert len(statements) == 1
    every = {r[0] for r in con.execute(
        " UNION ALL ".join(f"SELECT {ref} FROM {ref.split('.')[0]}" for ref, *_ in refs)).fetchall()}
    assert present == {lo, hi, lo + 1, -5} & every
    assert witness_rekey._occurring(Counting(), refs, {-5}) == set() and len(statements) == 1  # out of range: no statement


def test_named_values_follow_a_task_changed_in_place(synth_tasks: list) -> None:
    """``task_named_values`` is memoised on what it is made of, not on the task object: a task
    whose question or params change in place names the new values (review of issue 15's memo)."""
    task = next(t for t in synth_tasks if t.condition == "noise").model_copy(deep=True)
    before = task_named_values(task)
    assert "424242" not in before and "777" not in before
    task.params["probe"] = 424242
    task.question += " 777"
    after = task_named_values(task)
    assert {"424242", "777"} <= after and before <= after
