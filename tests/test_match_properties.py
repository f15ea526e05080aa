"""Property tests (hypothesis) over verifier.strategies: invariances and sensitivities.

- unit-conversion invariance: a quantity converted to another unit matches;
- reformatting invariance: numbers, counts, dates written another way match;
- row-permutation invariance under multiset/set, sensitivity under ordered;
- whitespace/case/Markdown invariance of the response around the Answer;
- an abstention never matches a Clean answer;
- a changed value (number, quantity, count, date, text, record) never matches.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier import Task, Trajectory, verify
from verifier.contract import ReasonCode as R
from verifier.contract import Reference
from verifier.match.dispatch import match_answer
from verifier.parse import parse
from verifier.strategies import (
    Case,
    count_cases,
    datetime_cases,
    null_answers,
    number_cases,
    quantity_cases,
    records_cases,
    responses,
    text_cases,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ANY_CASE = st.one_of(quantity_cases(), number_cases(), count_cases(), datetime_cases(), text_cases(),
                     records_cases())


def _verify(case: Case, response: str):
    task = Task(task_id="t", pair_id="p", question="q", condition="clean", intent="laboratory_microbiology",
                program="prop", reference=Reference(sql="SELECT 1", answer=case.reference, answer_policy=case.policy))
    return verify(Trajectory(trajectory_id="r", task_id="t", final_response=response), task)


@SETTINGS
@given(quantity_cases(), st.data())
def test_unit_conversion_invariance(case: Case, data: st.DataObject) -> None:
    v = _verify(case, data.draw(responses(case.equivalent)))
    assert v.success, (case.note, v.details)


@SETTINGS
@given(st.one_of(number_cases(), count_cases(), datetime_cases()), st.data())
def test_reformatting_invariance(case: Case, data: st.DataObject) -> None:
    v = _verify(case, data.draw(responses(case.equivalent)))
    assert v.success, (case.equivalent, v.details)


@SETTINGS
@given(records_cases(order="multiset"), st.data())
def test_row_permutation_invariance_unordered(case: Case, data: st.DataObject) -> None:
    assert _verify(case, data.draw(responses(case.equivalent))).success
    set_case = Case(case.reference, case.policy.model_copy(update={"order": "set"}), case.equivalent, case.different)
    assert _verify(set_case, data.draw(responses(set_case.equivalent))).success


@SETTINGS
@given(records_cases(order="ordered"), st.data())
def test_row_permutation_sensitivity_ordered(case: Case, data: st.DataObject) -> None:
    assert _verify(case, data.draw(responses(case.equivalent))).success
    rows = list(case.reference.rows)
    perm = data.draw(st.permutations(rows).filter(lambda p: list(p) != rows))
    text = "\n".join([",".join(case.reference.columns)] +
                     [",".join(c.strftime("%Y-%m-%d %H:%M") if hasattr(c, "strftime") else str(c) for c in r)
                      for r in perm])
    v = _verify(case, data.draw(responses(text)))
    assert v.reasons == [R.WRONG_ORDER], v.details


@SETTINGS
@given(ANY_CASE, st.data())
def test_whitespace_case_markdown_invariance(case: Case, data: st.DataObject) -> None:
    first = parse(data.draw(responses(case.equivalent)))
    second = parse(data.draw(responses(case.equivalent)))
    a = match_answer(first.answer_text, case.reference, case.policy, first.answer_json)
    b = match_answer(second.answer_text, case.reference, case.policy, second.answer_json)
    assert a.ok and b.ok, (first, second)


@SETTINGS
@given(ANY_CASE, null_answers(), st.data())
def test_abstention_never_matches_clean(case: Case, null: str, data: st.DataObject) -> None:
    v = _verify(case, data.draw(responses(null)))
    assert not v.success and v.reasons == [R.ABSTAINED_ON_CLEAN] and v.abstained


@SETTINGS
@given(ANY_CASE, st.data())
def test_changed_value_never_matches(case: Case, data: st.DataObject) -> None:
    v = _verify(case, data.draw(responses(case.different)))
    assert not v.success, (case.note, case.different, v.details)
    assert R.VERIFIER_ERROR not in v.reasons
