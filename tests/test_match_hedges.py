"""Hedges on Clean answers: one rule for approximation words, uncertainty words and a value beside NULL.

The failure kind: hedge words were judged inconsistently. An approximation word that introduces
no alternative ("about", "approximately", "~") passed, and so it should: the Answer still commits
to the value it states. But some words of uncertainty passed too ("could be", "unsure", a
question mark), while "maybe" failed; and an Answer that states a value AND a NULL spelling (a
value and an abstention at once) passed as the value. The rule (``verifier.match.commit``):
approximation words pass with the reference's value on quantities and numbers (a count or a date
is exact: there "about" does not commit, adv2 row 3c); uncertainty, alternatives and a value beside
NULL fail with ``WRONG_VALUE`` and an "ambiguous answer" detail naming the word. Real data: Clean
tasks of the synthetic hospital through ``verify``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import verify
from verifier.agents.format import format_answer
from verifier.contract import (
    AnswerPolicy,
    CountAnswer,
    DatetimeAnswer,
    NumberAnswer,
    QuantityAnswer,
    ReasonCode,
    Trajectory,
)
from verifier.match.dispatch import match_answer

#: Words and signs that state an approximation of one value (no alternative).
APPROXIMATIONS = ["about {v}", "approximately {v}", "approx. {v}", "around {v}", "roughly {v}", "~{v}", "~ {v}",
                  "≈ {v}", "circa {v}", "{v} approximately"]
#: Spellings that leave the value open or add an abstention (written for these tests).
NONCOMMITTAL = ["maybe {v}", "{v}, maybe", "possibly {v}", "perhaps {v}", "probably {v}", "likely {v}",
                "it might be {v}", "{v} might be right", "could be {v}", "may be {v}", "{v}?", "{v} (unsure)",
                "uncertain: {v}", "{v} - unclear", "my guess is {v}", "presumably {v}", "either {v} or NULL",
                "{v} or NULL", "NULL or {v}", "{v} NULL", "NULL {v}", "{v} (NULL)", "{v}; N/A", "N/A, {v}",
                "{v} - None", "{v}, alternatively NULL"]
#: NULL describing the data behind a committed value: not an abstention.
DESCRIBED_NULL = ["{v} (3 values were NULL and left out)", "{v} (NULL values excluded)", "{v} (non-NULL rows only)",
                  "{v}; none of the later draws differ"]

K = QuantityAnswer(value=4.1, unit="mEq/L", decimals=1)
K_POLICY = AnswerPolicy(analyte="potassium", db_unit="mEq/L")


def _ok(text: str, ref=K, policy=K_POLICY):
    return match_answer(text, ref, policy)


@pytest.mark.parametrize("form", APPROXIMATIONS)
def test_an_approximation_word_with_the_value_passes(form: str) -> None:
    assert _ok(form.format(v="4.1 mEq/L")).ok, form
    assert not _ok(form.format(v="4.4 mEq/L")).ok  # still compared: a changed value fails


@pytest.mark.parametrize("form", NONCOMMITTAL)
def test_an_answer_that_does_not_commit_fails_as_ambiguous(form: str) -> None:
    res = _ok(form.format(v="4.1 mEq/L"))
    assert not res.ok and res.reasons == (ReasonCode.WRONG_VALUE,), (form, res)
    assert str(res.details.get("why", "")).startswith("ambiguous answer"), res.details


@pytest.mark.parametrize("form", DESCRIBED_NULL)
def test_null_describing_the_data_is_not_an_abstention(form: str) -> None:
    assert _ok(form.format(v="4.1 mEq/L")).ok, form


REFS = [
    (QuantityAnswer(value=4.1, unit="mEq/L", decimals=1), AnswerPolicy(analyte="potassium"), "4.1 mEq/L"),
    (NumberAnswer(value=1.83, decimals=2), AnswerPolicy(), "1.83"),
    (CountAnswer(value=12), AnswerPolicy(), "12"),
    (DatetimeAnswer(value="2150-03-01T00:00:00", precision="day"), AnswerPolicy(), "2150-03-01"),
]


@pytest.mark.parametrize("ref,policy,said", REFS, ids=["quantity", "number", "count", "datetime"])
def test_the_rule_holds_for_every_scalar_type(ref, policy, said: str) -> None:
    # an approximation is a number's own rounding: it commits on quantities and numbers; a count
    # or a date is exact, so "about 12" / "about 2150-03-01" does not commit (adv2 row 3c)
    exact = isinstance(ref, (CountAnswer, DatetimeAnswer))
    res = match_answer(f"about {said}", ref, policy)
    assert res.ok is not exact, res
    if exact:
        assert res.reasons == (ReasonCode.WRONG_VALUE,) and "ambiguous answer" in res.details["why"]
    for form in ("maybe {v}", "{v} NULL", "{v}?", "could be {v}"):
        res = match_answer(form.format(v=said), ref, policy)
        assert res.reasons == (ReasonCode.WRONG_VALUE,), (form, res)


@settings(max_examples=150, deadline=None)
@given(tenths=st.integers(min_value=1, max_value=99999), unit=st.sampled_from(["mEq/L", "mg/dL", "mmol/L", "%", "h"]),
       hedge=st.sampled_from(NONCOMMITTAL), approx=st.sampled_from(APPROXIMATIONS))
def test_hedges_fail_and_approximations_pass_for_any_value(tenths: int, unit: str, hedge: str, approx: str) -> None:
    """Property: for any reference value and unit, an approximation word with the exact value passes
    and every non-committal form of the same value fails as ambiguous."""
    ref = QuantityAnswer(value=tenths / 10, unit=unit, decimals=1)
    said = f"{tenths / 10:.1f} {unit}"
    assert match_answer(approx.format(v=said), ref, AnswerPolicy()).ok, approx
    res = match_answer(hedge.format(v=said), ref, AnswerPolicy())
    assert res.reasons == (ReasonCode.WRONG_VALUE,), (hedge, said, res)


def test_on_synthetic_hospital_tasks(synth_tasks: list) -> None:
    kinds = (QuantityAnswer, NumberAnswer, CountAnswer, DatetimeAnswer)
    picked, seen = [], set()
    for t in synth_tasks:
        if t.condition == "clean" and isinstance(t.reference.answer, kinds) and type(t.reference.answer) not in seen:
            seen.add(type(t.reference.answer))
            picked.append(t)
    assert len(picked) >= 3
    for task in picked:
        value = format_answer(task.reference.answer)

        def say(answer: str):
            traj = Trajectory(trajectory_id="t", task_id=task.task_id, steps=[],
                              final_response=f"<answer>{answer}</answer><reasoning>read from the database</reasoning>")
            return verify(traj, task)

        exact = isinstance(task.reference.answer, (CountAnswer, DatetimeAnswer))
        assert say(value).success and say(f"approximately {value}").success is not exact, task.task_id
        for form in ("maybe {v}", "{v} NULL", "{v} or NULL", "{v} (unsure)"):
            v = say(form.format(v=value))
            assert not v.success and v.reasons == [ReasonCode.WRONG_VALUE], (task.task_id, form, v.reasons)
