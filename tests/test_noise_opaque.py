"""Evidence is deterministic and interpretable (issue 18 point 1), on the synthetic hospital.

A query using a volatile function or a random sample is never evidence
(``EVIDENCE_NONDETERMINISTIC``), and a query whose change between base and witness is an
opaque digest of whole rows (hash, md5, bit_xor, a row serialised, an aggregate compared
with a constant read earlier) is ``EVIDENCE_OPAQUE``; each is still re-executed and shown
in the details. The oracle's scoped evidence still qualifies on the same tasks.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

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
def patient_tasks(synth_tasks: list) -> list:
    """Noise tasks scoped to one admission, with witness rows (one per program)."""
    by: dict[str, object] = {}
    for t in synth_tasks:
        if t.condition == "noise" and t.reference.witness and "admissionid" in t.params:
            by.setdefault(t.program, t)
    return list(by.values())


def _scope_filter(task) -> str:
    return f"admissionid = {int(task.params['admissionid'])}"


def _witnessed(task) -> str:
    return task.reference.witness[0].table


def test_the_oracle_still_qualifies(synth_db: Path, patient_tasks: list) -> None:
    assert len(patient_tasks) >= 5
    for task in patient_tasks:
        assert _verdict(synth_db, task, [_step(synth_db, 1, evidence_query(task))], 1).success, task.task_id


@pytest.mark.parametrize("template", [
    "SELECT CASE WHEN random() < 0.5 THEN 1 ELSE 0 END AS x FROM (SELECT count(*) FROM {t} WHERE {f})",
    "SELECT count(*) AS n, now() AS at FROM {t} WHERE {f}",
    "SELECT count(*) AS n FROM (SELECT * FROM {t} USING SAMPLE 50%) s WHERE {f}",
    "SELECT gen_random_uuid() AS u, count(*) AS n FROM {t} WHERE {f}",
])
def test_volatile_query_is_never_evidence(synth_db: Path, patient_tasks: list, template: str) -> None:
    """Scoped to the right admission (so sensitive to the witness), but nondeterministic."""
    for task in patient_tasks:
        sql = template.format(t=_witnessed(task), f=_scope_filter(task))
        v = _verdict(synth_db, task, [_step(synth_db, 1, sql)], 1)
        codes = [r.value for r in v.reasons]
        assert not v.success and codes == ["EVIDENCE_NONDETERMINISTIC"], (task.task_id, codes)
        q = v.details["evidence"]["queries"][0]
        assert q["status"] == "nondeterministic" and q["sql"] == sql  # still shown in the details


@pytest.mark.parametrize("template", [
    "SELECT bit_xor(hash(x)) <> {v} AS changed FROM {t} x WHERE {f}",
    "SELECT md5(string_agg(x::VARCHAR, ',')) <> '{v}' AS changed FROM {t} x WHERE {f}",
    "SELECT coalesce(sum(hash(x)), 0) AS fp FROM {t} x WHERE {f}",
    "SELECT to_json(list(x)) AS rows FROM {t} x WHERE {f}",
    "SELECT 1 AS changed WHERE (SELECT sum(length(x::VARCHAR)) FROM {t} x WHERE {f}) IS DISTINCT FROM {v}",
])
def test_opaque_digest_of_scope_is_not_evidence(synth_db: Path, patient_tasks: list, template: str) -> None:
    """Step 1 reads the digest V of the admission's rows; step 2 compares with it (false on the
    base, true with the witness): a change of an opaque digest, not an observation."""
    rnd = random.Random(0)
    for task in rnd.sample(patient_tasks, min(6, len(patient_tasks))):
        t, f = _witnessed(task), _scope_filter(task)
        probe = {
            "bit_xor": f"SELECT bit_xor(hash(x)) AS v FROM {t} x WHERE {f}",
            "md5": f"SELECT md5(string_agg(x::VARCHAR, ',')) AS v FROM {t} x WHERE {f}",
            "length": f"SELECT sum(length(x::VARCHAR)) AS v FROM {t} x WHERE {f}",
        }
        kind = "bit_xor" if "bit_xor" in template else "md5" if "md5" in template else "length"
        first = run_query(thread_connection(synth_db), probe[kind], time_limit_s=30, row_cap=10).rows[0][0]
        value = "NULL" if first is None else str(first)
        sql = template.format(t=t, f=f, v=value)
        v = _verdict(synth_db, task, [_step(synth_db, 1, probe[kind]), _step(synth_db, 2, sql)], 2)
        codes = [r.value for r in v.reasons]
        assert not v.success and "EVIDENCE_OPAQUE" in codes, (task.task_id, sql, codes)


def test_aggregate_compared_with_a_constant_read_earlier(synth_db: Path, patient_tasks: list) -> None:
    """No digest function: sum(epoch(...)) of the admission's rows read in step 1, then ``<> V``."""
    hit = 0
    for task in patient_tasks:
        t, f = _witnessed(task), _scope_filter(task)
        cols = [c for c, in thread_connection(synth_db).execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND data_type LIKE 'TIMESTAMP%'", [t]).fetchall()]
        if not cols:
            continue
        expr = f"coalesce(sum(epoch({cols[0]})), 0) + count(*)"
        first = run_query(thread_connection(synth_db), f"SELECT {expr} AS v FROM {t} WHERE {f}", time_limit_s=30, row_cap=10).rows[0][0]
        if not first:
            continue  # no row in scope on the base: "<> 0" is an existence test of the scope, not a digest
        steps = [_step(synth_db, 1, f"SELECT {expr} AS v FROM {t} WHERE {f}"),
                 _step(synth_db, 2, f"SELECT {expr} <> {first} AS changed FROM {t} WHERE {f}")]
        v = _verdict(synth_db, task, steps, 2)
        assert not v.success and "EVIDENCE_OPAQUE" in [r.value for r in v.reasons], task.task_id
        hit += 1
    assert hit >= 3


def test_scoped_filters_with_constants_read_earlier_still_qualify(synth_db: Path, synth_tasks: list) -> None:
    """Honest: the agent looks up the item id, then filters on it (a column compared with a
    constant read earlier is a filter, not a digest)."""
    tasks = [t for t in synth_tasks if t.condition == "noise" and t.program == "lab_first_value_in_admission"][:4]
    assert tasks
    for task in tasks:
        itemid, adm = int(task.params["itemid"]), int(task.params["admissionid"])
        steps = [_step(synth_db, 1, f"SELECT itemid, label FROM lab_items WHERE itemid = {itemid}"),
                 _step(synth_db, 2, f"SELECT count(*) AS n FROM lab_events WHERE admissionid = {adm} AND itemid = {itemid}")]
        v = _verdict(synth_db, task, steps, 2)
        assert v.success, (task.task_id, v.reasons, v.details["evidence"])
