"""Clean answers that carry more than the value (issue 17, Clean side).

Kind 1: a one-row record written as prose followed by a parenthetical of OTHER fields
(``verifier.match.prose`` rules 4-5, ``rules/synonyms.toml`` ``[records] qualifier_fields``).
Kind 2: a committed value with a value of another source mentioned only as context
(``verifier.match.aside``). Each table was written from the issue's description with our own
codes, descriptions and times; near misses (a wrong code or description, a second record, a
parenthetical contradicting a reference column, a genuine hedge) must still fail, and hypothesis
properties check that a changed value never matches in the new phrasings.
"""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.contract import (
    AnswerPolicy,
    CountAnswer,
    DatetimeAnswer,
    QuantityAnswer,
    RecordsAnswer,
)
from verifier.match.dispatch import match_answer
from verifier.parse import parse

SETTINGS = settings(max_examples=120, deadline=None)


POL = AnswerPolicy()


def _match(response: str, ref, policy=POL):
    p = parse(response)
    assert p.error is None and not p.abstained, p
    return match_answer(p.answer_text, ref, policy, p.answer_json)


# ---------------------------------------------------------------- kind 1: a record with a qualifying parenthetical
CARDIAC = "CARDIAC ARRHYTHMIA & CONDUCTION DISORDERS"
APR = RecordsAnswer(columns=("drg_code", "description"), rows=(("201", CARDIAC),))
APR_CODE = AnswerPolicy(order="set", key_columns=["drg_code"], required_columns=["drg_code"])
APR_BOTH = AnswerPolicy()
HF = "HEART FAILURE & SHOCK W MCC"
HCFA = RecordsAnswer(columns=("drg_type", "drg_code", "description"), rows=(("HCFA", "291", HF),))
SEVERE = RecordsAnswer(columns=("drg_code", "description", "drg_severity"), rows=(("201", CARDIAC, 3),))

QUALIFIED = [
    (f"Answer: APR DRG 201 {CARDIAC} (severity 3, mortality risk 2)", APR, APR_CODE),
    (f"Answer: APR DRG 201 - {CARDIAC} (severity of illness 3; risk of mortality 2)", APR, APR_BOTH),
    (f"<answer>201 – {CARDIAC.title()} (admission 21234567; severity 2, mortality 1)</answer>", APR, APR_CODE),
    (f"Answer: HCFA 291 - {HF} (weight 1.34)", HCFA, APR_BOTH),
    (f"Answer: HCFA DRG 291, {HF} (relative weight: 1.3, severity major)", HCFA, APR_BOTH),
    (f"Answer: DRG 201 {CARDIAC} (severity 3, mortality risk 1)", SEVERE, APR_BOTH),
]


@pytest.mark.parametrize("response,ref,policy", QUALIFIED)
def test_kind1_a_record_with_other_fields_in_a_parenthetical_matches(response, ref, policy):
    res = _match(response, ref, policy)
    assert res.ok, res.details


CONTRADICTED = [
    (f"Answer: APR DRG 202 {CARDIAC} (severity 3, mortality risk 2)", APR, APR_CODE),  # wrong code
    ("Answer: APR DRG 201 HEART FAILURE (severity 3)", APR, APR_BOTH),  # wrong description
    (f"Answer: APR DRG 201 {CARDIAC} (severity 3; code 202)", APR, APR_CODE),  # a second code
    (f"Answer: APR DRG 201 {CARDIAC} (code 202)", APR, APR_CODE),
    (f"Answer: APR DRG 201 {CARDIAC} (severity 3); the HCFA DRG is 308", APR, APR_CODE),  # a second record
    (f"Answer: APR DRG 201 {CARDIAC} (HCFA 308, severity 3)", APR, APR_CODE),
    (f"Answer: APR DRG 201 {CARDIAC} (severity 3 or 4)", APR, APR_CODE),  # a hedge
    (f"Answer: HCFA 291 - {HF} (type APR, weight 1.34)", HCFA, APR_BOTH),  # contradicts drg_type
    (f"Answer: DRG 201 {CARDIAC} (severity 4, mortality risk 1)", SEVERE, APR_BOTH),  # contradicts drg_severity
]


@pytest.mark.parametrize("response,ref,policy", CONTRADICTED)
def test_kind1_wrong_second_or_contradicting_records_still_fail(response, ref, policy):
    assert not _match(response, ref, policy).ok


_FIELDS = st.lists(st.sampled_from(["severity", "mortality risk", "weight", "risk of mortality", "admission"]),
                   min_size=1, max_size=3, unique=True)


@SETTINGS
@given(st.integers(1, 999), st.integers(1, 999), _FIELDS, st.lists(st.integers(1, 4), min_size=3, max_size=3),
       st.sampled_from(["APR DRG {c} {d}", "{c} - {d}", "DRG {c}: {d}"]))
def test_kind1_a_changed_code_never_matches_with_qualifiers(code, other, fields, values, form):
    """The reference row with a qualifying parenthetical matches; another code never does,
    nor does a qualifier that restates the code column with another value."""
    ref = RecordsAnswer(columns=("drg_code", "description"), rows=((str(code), CARDIAC),))
    tail = " (" + ", ".join(f"{f} {v}" for f, v in zip(fields, values)) + ")"
    assert _match("Answer: " + form.format(c=code, d=CARDIAC) + tail, ref, APR_BOTH).ok
    if other != code:
        assert not _match("Answer: " + form.format(c=other, d=CARDIAC) + tail, ref, APR_BOTH).ok
        assert not _match("Answer: " + form.format(c=code, d=CARDIAC) + tail[:-1] + f"; code {other})", ref,
                          APR_CODE).ok


def test_kind1_on_the_synthetic_billing_tasks(synthetic_records_tasks):
    """Every one-row DRG reference of the synthetic hospital, stated in prose with a qualifying
    parenthetical, matches; with its code changed it does not."""
    for task in synthetic_records_tasks:
        ref, pol = task.reference.answer, task.reference.answer_policy
        code, desc = ref.rows[0][ref.columns.index("drg_code")], ref.rows[0][ref.columns.index("description")]
        assert _match(f"Answer: DRG {code} - {desc} (severity 2, mortality risk 1)", ref, pol).ok, task.task_id
        assert not _match(f"Answer: DRG {int(code) + 1} - {desc} (severity 2, mortality risk 1)", ref, pol).ok


@pytest.fixture(scope="module")
def synthetic_records_tasks(synth_tasks) -> list:
    """Clean one-row DRG tasks of the synthetic default hospital (seed 0)."""
    tasks = [t for t in synth_tasks if t.condition == "clean"
             and isinstance(t.reference.answer, RecordsAnswer) and len(t.reference.answer.rows) == 1
             and {"drg_code", "description"} <= set(t.reference.answer.columns)]
    assert tasks
    return tasks


# ---------------------------------------------------------------- kind 2: context from another source
WHEN = DatetimeAnswer(value=dt.datetime(2161, 5, 17, 8, 45), precision="minute")
DOSE = QuantityAnswer(value=40, unit="mg", decimals=0)
SIX = CountAnswer(value=6)

ASIDES = [
    ("Answer: 2161-05-17 08:45 (eMAR; the ICU input record shows 2161-05-17 08:40)", WHEN),
    ("Answer: 2161-05-17 08:45 - note the pharmacy order was placed at 2161-05-17 07:10", WHEN),
    ("<answer>2161-05-17 08:45:00 (vs 2161-05-17 08:52 in inputevents)</answer>", WHEN),
    ("Answer: 2161-05-17 08:45 (first administration; ordered 2161-05-16 22:00)", WHEN),
    ("Answer: 2161-05-17 08:45, whereas the input chart has 2161-05-17 08:30", WHEN),
    ("Answer: 40 mg (the prescription lists 20 mg)", DOSE),
    ("Answer: 40 mg; note the eMAR dose field reads 20 mg", DOSE),
    ("Answer: 6 (note the prescriptions table lists 8)", SIX),
]


@pytest.mark.parametrize("response,ref", ASIDES)
def test_kind2_a_value_from_another_source_is_context(response, ref):
    res = _match(response, ref)
    assert res.ok, res.details


HEDGES = [
    "Answer: 2161-05-17 08:45 or 2161-05-17 08:40",
    "Answer: either 2161-05-17 08:45 or 2161-05-17 08:40 depending on the source",
    "Answer: 2161-05-17 08:45 (maybe 2161-05-17 08:40 per the input record)",
    "Answer: 2161-05-17 08:45, 2161-05-17 08:40",
    "Answer: 2161-05-17 08:40 (the eMAR shows 2161-05-17 08:45)",  # commits to the other value
]


@pytest.mark.parametrize("response", HEDGES)
def test_kind2_hedges_and_the_other_value_still_fail(response):
    assert not _match(response, WHEN).ok


_MARKERS = [" (the ICU input record shows {o})", " - note the pharmacy order was at {o}", " (vs {o} in inputevents)",
            "; the prescription lists {o}", " (ordered {o})"]


@SETTINGS
@given(st.datetimes(min_value=dt.datetime(2100, 1, 1), max_value=dt.datetime(2200, 1, 1)),
       st.datetimes(min_value=dt.datetime(2100, 1, 1), max_value=dt.datetime(2200, 1, 1)),
       st.sampled_from(_MARKERS))
def test_kind2_a_changed_value_never_matches(value, other, marker):
    """The committed (leading) value decides; with the reference only in the aside it fails."""
    ref = DatetimeAnswer(value=value.replace(second=0, microsecond=0), precision="minute")
    fmt = "%Y-%m-%d %H:%M"
    tail = marker.format(o=other.strftime(fmt))
    assert _match(f"Answer: {value.strftime(fmt)}{tail}", ref).ok
    if other.strftime(fmt) != value.strftime(fmt):
        assert not _match(f"Answer: {other.strftime(fmt)}" + marker.format(o=value.strftime(fmt)), ref).ok
        assert not _match(f"Answer: {value.strftime(fmt)} or {other.strftime(fmt)}{tail}", ref).ok
