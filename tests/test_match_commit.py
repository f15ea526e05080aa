"""One-value rule: hedged / multi-value Answers fail, legitimate forms still match.

Rules: verifier/match/commit.py, verifier/match/numbers.py, verifier/parse.py.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.contract import (
    AnswerPolicy,
    CountAnswer,
    DatetimeAnswer,
    NumberAnswer,
    QuantityAnswer,
    ReasonCode,
    RecordsAnswer,
)
from verifier.match.dispatch import match_answer
from verifier.parse import parse

BICARB = QuantityAnswer(value=27, unit="mEq/L", decimals=0)
BICARB_POLICY = AnswerPolicy(db_unit="mEq/L")
K = QuantityAnswer(value=5.2, unit="mmol/L", decimals=1)
K_POLICY = AnswerPolicy(analyte="potassium", db_unit="mEq/L")
NUM = NumberAnswer(value=1.83, decimals=2)
COUNT5 = CountAnswer(value=5)
DATE = DatetimeAnswer(value="2116-02-09T00:00:00", precision="day")
POL = AnswerPolicy()


def _match(response: str, ref, policy=POL):
    p = parse(response)
    assert p.error is None, p.error
    return match_answer(p.answer_text, ref, policy, p.answer_json)


ATTACKS = [
    ("Answer: 27 mEq/L or 35 mEq/L", BICARB, BICARB_POLICY),
    ("Answer: 35 or 27 mEq/L", BICARB, BICARB_POLICY),
    ("Answer: not 27 mEq/L", BICARB, BICARB_POLICY),
    ("Answer: 27 mEq/L and 35 mEq/L", BICARB, BICARB_POLICY),
    ("Answer: 1.83 or 2.5", NUM, POL),
    ("Answer: 1.83-2.50", NUM, POL),
    ("Answer: 5 or 6", COUNT5, POL),
    ("Answer: 5-6 admissions", COUNT5, POL),
    ("Answer: 5 (maybe 6)", COUNT5, POL),
    ("Answer: at least 5", COUNT5, POL),
    ("Answer: 10^999999", CountAnswer(value=10), POL),
    ("Answer: 2116-02-09 or 2116-03-01", DATE, POL),
    ("Answer: 2116-02-09, 2116-03-01", DATE, POL),
    ("Answer: 1,2,3", NumberAnswer(value=1), POL),
    ("Answer: 1,2,3", CountAnswer(value=1), POL),
    ('{"answer": {"a": {"b": 1}}}', NumberAnswer(value=1), POL),
    ('{"answer": {"a": {"b": 1}}}', CountAnswer(value=1), POL),
]


@pytest.mark.parametrize("response,ref,policy", ATTACKS)
def test_hedged_or_multi_value_answers_fail(response, ref, policy):
    res = _match(response, ref, policy)
    assert not res.ok
    assert res.reasons == (ReasonCode.WRONG_VALUE,)


@pytest.mark.parametrize("response", ["Answer: 27 mEq/L or 35 mEq/L", "Answer: 5 (maybe 6)", "Answer: 1.83-2.50"])
def test_ambiguity_is_named_in_details(response):
    ref = {"27": (BICARB, BICARB_POLICY), "5 (": (COUNT5, POL), "1.8": (NUM, POL)}
    r, p = next(v for k, v in ref.items() if k in response)
    assert "ambiguous answer" in _match(response, r, p).details["why"]


LEGIT = [
    ("Answer: 5.2 mmol/L (potassium)", K, K_POLICY),
    ("Answer: 5.2 mmol/L (5.2 mEq/L)", K, K_POLICY),
    ("Answer: 5.2 mEq/L on 2180-07-23 14:00", K, K_POLICY),
    ("Answer: **5.2** mEq/L.", K, K_POLICY),
    ("Answer: 5.2 mEq/L [step 3]", K, K_POLICY),
    ("Answer: Patient 10000032: 5.2 mEq/L", K, K_POLICY),
    ("Answer: 5.2 mEq/L for admission 22595853 [steps 2-4]", K, K_POLICY),
    ("Answer: 27", BICARB, BICARB_POLICY),
    ("Answer: 1,234.5", NumberAnswer(value=1234.5, decimals=1), POL),
    ("Answer: -2.5", NumberAnswer(value=-2.5, decimals=1), POL),
    ("Answer: 1.83 [step 4]", NUM, POL),
    ("Answer: 1.83 for patient 10000032", NUM, POL),
    ("Answer: 5 admissions", COUNT5, POL),
    ("Answer: 5 admissions in 2180 [step 2]", COUNT5, POL),
    ("Answer: 1,204 patients", CountAnswer(value=1204), POL),
    ("Answer: 2116-02-09", DATE, POL),
    ("Answer: 2116-02-09 (admission 22595853)", DATE, POL),
    ("Answer: 2116-02-09 14:00, i.e. 2116-02-09", DATE, POL),
    ("Answer: 35.2%", NumberAnswer(value=0.352, decimals=3), POL),
    ('{"answer": 1}', NumberAnswer(value=1), POL),
]


@pytest.mark.parametrize("response,ref,policy", LEGIT)
def test_legitimate_forms_still_match(response, ref, policy):
    res = _match(response, ref, policy)
    assert res.ok, res.details


def test_percent_rule_only_for_proportions():
    assert not _match("Answer: 183%", NUM).ok
    assert _match("Answer: 183%", NumberAnswer(value=183)).ok


@pytest.mark.parametrize("response,reason", [
    ("Answer: 27 foo", ReasonCode.INCOMPATIBLE_UNIT),
    ("Answer: 27 mg", ReasonCode.INCOMPATIBLE_UNIT),
])
def test_unknown_unit_is_not_missing(response, reason):
    res = _match(response, BICARB, BICARB_POLICY)
    assert res.reasons == (reason,)


def test_pathological_unit_string_is_bounded():
    t0 = time.process_time()
    res = _match("Answer: 27 " + "m/" * 2000 + "m", BICARB, BICARB_POLICY)
    assert not res.ok
    assert time.process_time() - t0 < 2.0  # was 7.6 s; generous bound, the fix makes it milliseconds


@pytest.mark.parametrize("text", ["1e999", "10^999999", "1e400"])
def test_huge_values_never_match(text):
    assert not _match(f"Answer: {text}", CountAnswer(value=10)).ok
    assert not _match(f"Answer: {text}", NumberAnswer(value=10)).ok


@pytest.mark.parametrize("response,abstained", [
    ("Answer: NULL; actually 1.8 mmol/L", False),
    ("Answer: None - but probably 1.8 mmol/L", False),
    ("Answer: NULL (likely around 1.8)", False),
    ("Answer: NULL - no potassium recorded during admission 22595853 [step 2]", True),
    ("Answer: NULL", True),
    ("Answer: N/A - the lab was never drawn [steps 2, 3]", True),
    ("Answer: NULL - but no potassium was measured for patient 10000032", True),
])
def test_null_with_a_hedged_value_is_not_an_abstention(response, abstained):
    assert parse(response).abstained is abstained


def test_bare_markdown_table_is_the_answer():
    p = parse("| drg_code |\n|---|\n| 638 |")
    assert p.error is None and p.format == "table"
    ref = RecordsAnswer(columns=("drg_code",), rows=(("638",),))
    assert match_answer(p.answer_text, ref, POL).ok


def test_unlabelled_prose_is_unparseable():
    assert parse("The first bicarbonate was 27 mEq/L.").error is not None


def test_scalar_for_single_cell_record_set():
    ref = RecordsAnswer(columns=("drg_code", "description"), rows=(("638", "DIABETES W CC"),))
    policy = AnswerPolicy(required_columns=["drg_code"])
    assert _match("Answer: 638", ref, policy).ok
    assert not _match("Answer: 639", ref, policy).ok


_finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(lambda x: round(x, 2))


@settings(max_examples=150, deadline=None)
@given(_finite, _finite)
def test_two_different_values_never_match(a, b):
    """Invariance: whichever order and joiner, two different numbers never match either one."""
    if round(a, 2) == round(b, 2):
        return
    ref = NumberAnswer(value=a, decimals=2)
    for joiner in (" or ", ", ", " and ", " (maybe ", " / "):
        for x, y in ((a, b), (b, a)):
            assert not _match(f"Answer: {x:.2f}{joiner}{y:.2f}", ref).ok


@settings(max_examples=150, deadline=None)
@given(_finite, st.sampled_from(["[step 3]", "(potassium)", "for patient 10000032", "on 2180-07-23 14:00", ""]))
def test_context_does_not_change_a_matching_value(a, context):
    """Invariance: appending context (citation, label, id, date) keeps a matching value matching."""
    ref = NumberAnswer(value=a, decimals=2)
    assert _match(f"Answer: {a:.2f} {context}".rstrip(), ref).ok
