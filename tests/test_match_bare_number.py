"""A bare number (no unit) on a Clean quantity task: one rule for hand-written and generated tasks.

The failure kind: the same Answer, a number without a unit, was judged two ways. On a task written
by hand (no ``answer_policy.db_unit``, as the README's example) it was ``WRONG_UNIT``; on tasks from
``make-tasks`` (which record the reference's unit as ``db_unit``) it was read in the reference's
unit and accepted. The rule now: a bare number is read in the reference's unit, unless the task
makes the unit ambiguous (its ``db_unit`` is another unit than the reference's) - then
``WRONG_UNIT``. Real data: tasks of the synthetic hospital; the README's own task.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import verify
from verifier.contract import AnswerPolicy, QuantityAnswer, ReasonCode, Task, Trajectory
from verifier.match.dispatch import match_answer


def _say(task: Task, answer: str) -> Trajectory:
    return Trajectory(trajectory_id="t", task_id=task.task_id, steps=[],
                      final_response=f"Answer: {answer}\nReasoning: read from the lab table.")


def _hand_written(unit: str = "mEq/L", policy: dict | None = None) -> Task:
    return Task.model_validate({
        "task_id": "k-clean", "pair_id": "k", "condition": "clean",
        "question": "What was the patient's first potassium value on admission 2001?",
        "intent": "laboratory_microbiology", "program": "hand_written",
        "reference": {"sql": "SELECT 1", "answer": {"type": "quantity", "value": 4.1, "unit": unit, "decimals": 1},
                      "answer_policy": policy if policy is not None else {"analyte": "potassium"}},
    })


def test_a_hand_written_task_reads_a_bare_number_in_the_reference_unit() -> None:
    task = _hand_written()
    v = verify(_say(task, "4.1"), task)
    assert v.success, (v.reasons, v.details)
    wrong = verify(_say(task, "4.3"), task)
    assert not wrong.success and wrong.reasons == [ReasonCode.WRONG_VALUE]


def test_generated_tasks_read_a_bare_number_in_the_reference_unit(synth_tasks: list) -> None:
    tasks = [t for t in synth_tasks if t.condition == "clean" and isinstance(t.reference.answer, QuantityAnswer)]
    assert tasks, "the synthetic hospital builds Clean quantity tasks"
    for task in tasks[:6]:
        ref = task.reference.answer
        value = f"{ref.value:.{ref.decimals}f}" if ref.decimals is not None else repr(ref.value)
        v = verify(_say(task, value), task)
        assert v.success, (task.task_id, value, v.reasons, v.details)
        hand = task.model_copy(deep=True)
        hand.reference.answer_policy.db_unit = None  # the same task written by hand: the same verdict
        assert verify(_say(hand, value), hand).success


def test_a_bare_number_is_wrong_unit_when_the_database_stores_another_unit() -> None:
    # the reference was converted to mmol/L from a database in mg/dL: "90" could be either
    task = _hand_written("mmol/L", {"analyte": "glucose", "db_unit": "mg/dL"})
    v = verify(_say(task, "4.1"), task)
    assert not v.success and v.reasons == [ReasonCode.WRONG_UNIT]
    assert "ambiguous" in str(v.details)
    assert verify(_say(task, "4.1 mmol/L"), task).success


UNITS = ["mEq/L", "mg/dL", "mmol/L", "g/dL", "K/uL", "%", "mL", "h", "bpm", "mmHg"]


@settings(max_examples=120, deadline=None)
@given(unit=st.sampled_from(UNITS), db=st.sampled_from([None, "same", "other"]),
       tenths=st.integers(min_value=1, max_value=99999), delta=st.integers(min_value=1, max_value=40))
def test_bare_number_rule(unit: str, db: str | None, tenths: int, delta: int) -> None:
    """Property: a bare number is accepted exactly when it is the reference's value and no other
    database unit is recorded; a changed value never matches; a recorded other unit is WRONG_UNIT."""
    ref = QuantityAnswer(value=tenths / 10, unit=unit, decimals=1)
    db_unit = {None: None, "same": unit, "other": "mg/dL" if unit != "mg/dL" else "mmol/L"}[db]
    policy = AnswerPolicy(decimals=1, db_unit=db_unit)
    same = match_answer(f"{tenths / 10:.1f}", ref, policy)
    changed = match_answer(f"{(tenths + delta) / 10:.1f}", ref, policy)
    if db == "other":
        assert same.reasons == (ReasonCode.WRONG_UNIT,) and changed.reasons == (ReasonCode.WRONG_UNIT,)
    else:
        assert same.ok, same
        assert changed.reasons == (ReasonCode.WRONG_VALUE,), changed
