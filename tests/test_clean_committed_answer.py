"""A Clean Answer commits to one value (adversary adv2, rows 3a-3c).

Two or more candidate values of the answer's type that differ, joined by any connective or
structure ("vs", "/", "and", "unless", "otherwise", a list, a JSON array, a "reference value"
label), are a hedge: ``WRONG_VALUE`` with "ambiguous answer". An aside is context only after a
committed value and only when it describes another source; a bare value after "vs" is a
candidate. Approximation words that are not a number's own rounding ("something like",
"-ish"; and for exact types, counts and datetimes, "about", "approximately" too) are hedges.
A value in an aside never rescues a wrong (or missing) committed value.
"""

from __future__ import annotations

import pytest

from verifier.contract import (
    AnswerPolicy,
    CountAnswer,
    DatetimeAnswer,
    NumberAnswer,
    QuantityAnswer,
    ReasonCode,
)
from verifier.match.dispatch import match_answer
from verifier.parse import parse

K = QuantityAnswer(value=4.6, unit="mEq/L", decimals=1)
K_POL = AnswerPolicy(analyte="potassium", db_unit="mEq/L", decimals=1)
COUNT = CountAnswer(value=7)
NUM = NumberAnswer(value=1.83, decimals=2)
NUM_POL = AnswerPolicy(decimals=2)
DT = DatetimeAnswer(value="2177-02-11T00:00:00", precision="second")
POL = AnswerPolicy()


def _match(answer: str, ref, policy):
    p = parse(f"<answer>{answer}</answer><reasoning>From the records.</reasoning>")
    assert p.error is None, p.error
    return match_answer(p.answer_text, ref, policy, p.answer_json)


def _json(answer: str, ref, policy):
    p = parse(answer)
    assert p.error is None, p.error
    return match_answer(p.answer_text, ref, policy, p.answer_json)


# 3a: two candidates joined by "vs" or a condition, the right value first or second
TWO = [
    (COUNT, POL, "7", "14.9"), (COUNT, POL, "7", "12"),
    (NUM, NUM_POL, "1.83", "6.11"),
    (K, K_POL, "4.6 mEq/L", "10.82"), (K, K_POL, "4.6 mEq/L", "10.82 mEq/L"),
    (DT, POL, "2177-02-11 00:00:00", "2177-03-01 00:00:00"),
]
JOINS = [
    "{a} vs {b}", "{b} vs {a}", "{a} versus {b}",
    "{a} if the record is reliable, otherwise {b}", "{b} if the record is reliable, otherwise {a}",
    "{a} / {b}", "{a} and {b}", "1. {a}\n2. {b}", "- {a}\n- {b}",
    "{a} unless recorded elsewhere as {b}", "{b}; reference value {a}",
    "{a}; otherwise {b}", "{a} (if the later record counts, {b})",
]


@pytest.mark.parametrize("ref,policy,right,wrong", TWO)
@pytest.mark.parametrize("join", JOINS)
def test_two_differing_candidates_are_a_hedge(ref, policy, right, wrong, join):
    res = _match(join.format(a=right, b=wrong), ref, policy)
    assert not res.ok, (join, res.details)
    # a count Answer opening with "14.9" holds no whole number to commit to: WRONG_TYPE
    assert res.reasons in ((ReasonCode.WRONG_VALUE,), (ReasonCode.WRONG_TYPE,)), res.details


@pytest.mark.parametrize("ref,policy,right,wrong", TWO)
def test_json_array_of_two_differing_values_is_a_hedge(ref, policy, right, wrong):
    res = _json('{"answer": ["%s", "%s"]}' % (right, wrong), ref, policy)
    assert not res.ok, res.details
    assert res.reasons == (ReasonCode.WRONG_VALUE,)


@pytest.mark.parametrize("answer", [
    "something like 2177-02-11 00:00:00", "2177-02-11 00:00:00-ish", "2177-02-11 00:00:00 ish",
    "about 2177-02-11 00:00:00", "approximately 2177-02-11 00:00:00", "around 2177-02-11 00:00:00",
    "roughly 2177-02-11", "~2177-02-11 00:00:00",
])
def test_approximate_datetime_is_a_hedge(answer):
    res = _match(answer, DT if "00:00" in answer else DatetimeAnswer(value="2177-02-11T00:00:00",
                                                                         precision="day"), POL)
    assert not res.ok and res.reasons == (ReasonCode.WRONG_VALUE,), res.details
    assert "ambiguous answer" in res.details["why"]


@pytest.mark.parametrize("answer", ["approximately 7", "about 7", "around 7 admissions", "~7", "7-ish",
                                    "something like 7"])
def test_approximate_count_is_a_hedge(answer):
    res = _match(answer, COUNT, POL)
    assert not res.ok and res.reasons == (ReasonCode.WRONG_VALUE,), res.details


@pytest.mark.parametrize("answer", ["something like 4.6 mEq/L", "4.6 mEq/L-ish", "4.6-ish mEq/L"])
def test_vague_quantity_is_a_hedge(answer):
    res = _match(answer, K, K_POL)
    assert not res.ok and res.reasons == (ReasonCode.WRONG_VALUE,), res.details


@pytest.mark.parametrize("answer", ["about 4.6 mEq/L", "approximately 4.6 mEq/L", "~4.6 mEq/L"])
def test_rounded_quantity_with_about_still_commits(answer):
    assert _match(answer, K, K_POL).ok


@pytest.mark.parametrize("answer,ref,policy", [
    ("HOME (the other record shows 2177-02-11 00:00:00)", DT, POL),
    ("DIED (another record shows 7)", COUNT, POL),
    ("HOME (the other record shows 4.6 mEq/L)", K, K_POL),
    ("2177-03-01 00:00:00 (the other record shows 2177-02-11 00:00:00)", DT, POL),
    ("10.82 mEq/L (the chart event shows 4.6 mEq/L)", K, K_POL),
])
def test_an_aside_never_rescues_the_committed_value(answer, ref, policy):
    assert not _match(answer, ref, policy).ok


# what stays context: the committed value is the answer
@pytest.mark.parametrize("answer,ref,policy", [
    ("4.6 mEq/L (4.6 mmol/L)", K, K_POL),
    ("4.6 mEq/L (the chart event shows 4.5 mEq/L)", K, K_POL),
    ("4.6 mEq/L (vs 4.2 mEq/L in the earlier draw)", K, K_POL),
    ("7 admissions (over 15 stays in total)", COUNT, POL),
    ("7 (scale 1-4)", COUNT, POL),
    ("7 [step 3]", COUNT, POL),
    ("7 admissions in 2180", COUNT, POL),
    ("1.79 (34/19 rounded)", NumberAnswer(value=1.79, decimals=2), NUM_POL),
    ("2177-02-11 00:00:00 (discharged 2177-02-15)", DT, POL),
    ("2177-02-11 00:00:00 (the ICU input record shows 2177-02-11 01:00:00)", DT, POL),
    ("the eMAR records 2177-02-11 00:00:00; the input record shows 2177-02-11 01:00:00", DT, POL),
    ('{"answer": ["4.6 mEq/L"]}', K, K_POL),
    ("4.6 mEq/L, 4.6 mEq/L", K, K_POL),
])
def test_context_beside_the_committed_value_still_matches(answer, ref, policy):
    res = _json(answer, ref, policy) if answer.startswith("{") else _match(answer, ref, policy)
    assert res.ok, res.details


@pytest.mark.parametrize("answer", ["7 (to be confirmed)", "7, tentatively", "7 (pending verification)",
                                    "7 or so", "7, give or take"])
def test_an_unconfirmed_value_does_not_commit(answer):
    res = _match(answer, COUNT, POL)
    assert not res.ok and res.reasons == (ReasonCode.WRONG_VALUE,), res.details
