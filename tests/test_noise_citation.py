"""The Noise verdict needs a citation of a qualifying step (issue 18 point 3), on the synthetic hospital.

The evidence is a query the verifier re-executes against the real synthetic hospital (the oracle's
own query, or a patient-wide one written here); the final responses are written here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier import verify
from verifier.contract import Step, Task, Trajectory, VerifyConfig
from verifier.sql import render_result, run_query, thread_connection

FILLER = "SELECT 1 AS one"
ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth"]


def _step(db: Path, index: int, sql: str) -> Step:
    res = run_query(thread_connection(db), sql, time_limit_s=30, row_cap=10_000)
    return Step(index=index, kind="sql", code=sql, output=render_result(res.columns, res.rows))


def _final(task: Task, cite: str) -> str:
    req = task.reference.unmet_requirement
    assert req is not None
    return f"Answer: NULL\nReasoning: {req.statement} Not found: {'; '.join(req.key_terms)}. {cite}".strip()


def _reasons(db: Path, task: Task, steps: list[Step], final: str) -> list[str]:
    v = verify(Trajectory(trajectory_id="t", task_id=task.task_id, steps=steps, final_response=final), task,
               VerifyConfig(db_path=str(db)))
    return [r.value for r in v.reasons]


@pytest.fixture(scope="module")
def lab_task(synth_tasks: list) -> Task:
    """A patient-scope Noise task about one lab item in one admission."""
    return next(t for t in synth_tasks if t.condition == "noise" and t.program == "lab_first_value_in_admission")


@pytest.fixture(scope="module")
def evidence_at(synth_db: Path, lab_task: Task):
    """``steps(n, at)``: n steps, the oracle's evidence query at position ``at``, filler elsewhere."""
    good = _step(synth_db, 1, lab_task.reference.sql)

    def steps(n: int, at: int) -> list[Step]:
        return [good.model_copy(update={"index": i}) if i == at else _step(synth_db, i, FILLER) for i in range(1, n + 1)]
    return steps


def test_qualifying_evidence_without_any_citation_is_not_cited(synth_db: Path, lab_task: Task, evidence_at) -> None:
    assert _reasons(synth_db, lab_task, evidence_at(2, 1), _final(lab_task, "")) == ["EVIDENCE_NOT_CITED"]
    assert _reasons(synth_db, lab_task, evidence_at(2, 1), _final(lab_task, "[step 1]")) == []


NOTATIONS = ["[step {n}]", "step {n}", "(step {n})", "Step #{n}", "Step no. {n}", "[steps {n}-{n}]", "as steps {n} and {n} show",
             "in the {ordinal} step", "[step 1, step {n}]", "(steps 1, {n})"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(notation=st.sampled_from(NOTATIONS), n=st.integers(2, 5), where=st.sampled_from(["start", "end"]))
def test_every_accepted_notation_cites_the_evidence(synth_db: Path, lab_task: Task, evidence_at, notation: str, n: int,
                                                    where: str) -> None:
    cite = notation.format(n=n, ordinal=ORDINALS[n - 1])
    req = lab_task.reference.unmet_requirement
    assert req is not None
    final = (f"Answer: NULL\nReasoning: {cite}: {req.statement} ({'; '.join(req.key_terms)})" if where == "start"
             else _final(lab_task, cite))
    assert _reasons(synth_db, lab_task, evidence_at(n, n), final) == []


@pytest.mark.parametrize("cite, expected", [
    ("[steps 1-6]", ["EVIDENCE_NOT_CITED"]),  # every step of the trajectory, as a range
    (" ".join(f"[step {i}]" for i in range(1, 7)), ["EVIDENCE_NOT_CITED"]),  # every step, one by one
    ("steps 1 to 6", ["EVIDENCE_NOT_CITED"]),
    ("[steps 2-6]", []),  # five steps: still identifying
    ("[step 6]", []),
    ("[step 5]", ["EVIDENCE_NOT_SENSITIVE"]),  # a citation restricts the evidence: the filler step sees nothing
])
def test_a_citation_of_every_step_does_not_identify_the_evidence(synth_db: Path, lab_task: Task, evidence_at, cite: str,
                                                                 expected: list[str]) -> None:
    assert _reasons(synth_db, lab_task, evidence_at(6, 6), _final(lab_task, cite)) == expected


def test_empty_patient_wide_query_cited_beside_a_broad_one_qualifies(synth_db: Path, synth_tasks: list) -> None:
    """Issue 17 kind b: "no result of the item for this patient at all" (an empty query over every
    admission of the patient, a superset of the scope) cited together with a broader query that
    counts the item over the whole hospital (no evidence by itself) in the form
    "[step 1, step 2]". The empty superset shows the gap in the admission; the broad count beside
    it does not count against the agent (the list form once read as citing step 2 only, so the broad
    query alone was judged)."""
    con = thread_connection(synth_db)
    for task in (t for t in synth_tasks if t.condition == "noise" and t.program == "lab_first_value_in_admission"):
        p, item = task.params["patientid"], task.params["itemid"]
        if con.execute("SELECT count(*) FROM lab_events WHERE patientid = ? AND itemid = ?", [p, item]).fetchone()[0] == 0:
            break
    else:
        pytest.skip("no synthetic patient without the item at all")
    patient_wide = f"SELECT admissionid, chart_time, value, value_unit FROM lab_events WHERE patientid = {p} AND itemid = {item}"
    broad = (f"SELECT a.admissionid, (SELECT count(*) FROM lab_events l WHERE l.itemid = {item}) AS item_results_in_hospital "
             f"FROM admissions a WHERE a.patientid = {p} ORDER BY 1")
    steps = [_step(synth_db, 1, patient_wide), _step(synth_db, 2, broad)]
    assert steps[0].output.rstrip().endswith("(0 rows)")
    both = _final(task, "[step 1, step 2]. The hospital-wide count is in [step 2].")
    assert _reasons(synth_db, task, steps, both) == []
    assert _reasons(synth_db, task, steps, _final(task, "[step 2]")) != []  # the broad one alone is no evidence


def _context_then_gap(task: Task, gap_cite: str, context_steps: int) -> str:
    """A Reasoning that cites steps 1..``context_steps`` for context, one sentence each, then states the gap
    citing ``gap_cite`` (blind corpus c34, agent A: an honest Reasoning citing all six steps of its episode)."""
    req = task.reference.unmet_requirement
    assert req is not None
    context = " ".join(f"Step {i} was a check of the connection [step {i}]." for i in range(1, context_steps + 1))
    return f"Answer: NULL\nReasoning: {context} {req.statement.rstrip('.')} {gap_cite}. Not found: {'; '.join(req.key_terms)}."


@pytest.mark.parametrize("gap_cite, context_steps, expected", [
    ("[step 6]", 5, []),  # six steps cited in all; the gap's own sentence cites the qualifying one
    ("[step 6]", 6, []),
    ("[steps 1-6]", 5, ["EVIDENCE_NOT_CITED"]),  # the gap's sentence cites every step: not identifying
    ("[step 5]", 6, ["EVIDENCE_NOT_CITED"]),  # the gap's sentence cites a step that shows nothing
    ("", 6, ["EVIDENCE_NOT_CITED"]),  # no citation on the gap: six context citations do not identify it
])
def test_more_than_five_steps_cited_identify_by_the_statement_of_the_gap(synth_db: Path, lab_task: Task, evidence_at,
                                                                        gap_cite: str, context_steps: int,
                                                                        expected: list[str]) -> None:
    final = _context_then_gap(lab_task, gap_cite, context_steps)
    assert _reasons(synth_db, lab_task, evidence_at(6, 6), final) == expected
