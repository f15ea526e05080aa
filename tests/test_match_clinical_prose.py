"""Issue 32, point 2: answers in clinical prose, and why no hedge gains from reading them.

- explanatory parentheticals are context, not candidates: a scale's labelled points ("2.8 (scale
  1 = minor to 4 = extreme), over 15 DIRECT EMER. admissions" is 2.8);
- a self-correction commits to the last value ("X, corrected: Y", "X — no, Y" are Y);
- a committed value with an alternative *convention* labelled as such ("Day 4 after admission:
  2161-11-19 ... (hospital day 5 if the admission date is counted as day 1)") is the committed
  value: the parenthetical offers no second value of the asked type (a day count is not a date).
  Offering a second *date* under a condition ("(or 2161-11-20 if ...)") stays a hedge.

The invariances: whatever a response adds (a scale, a correction, a convention note), it is
judged as the one value it commits to would be alone, so a response stating two values of the
asked type never passes on both the reference and a wrong value.
"""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.contract import AnswerPolicy, DatetimeAnswer, NumberAnswer, QuantityAnswer
from verifier.match.dispatch import match_answer
from verifier.parse import parse

SCORE = NumberAnswer(value=2.8, decimals=1)
POL = AnswerPolicy()
DAY = DatetimeAnswer(value=dt.datetime(2161, 11, 19), precision="day")
K = QuantityAnswer(value=4.6, unit="mEq/L", decimals=1)
K_POL = AnswerPolicy(analyte="potassium", db_unit="mEq/L", decimals=1)


def _ok(answer: str, ref=SCORE, policy=POL) -> bool:
    p = parse(f"<answer>{answer}</answer><reasoning>From the records [step 1].</reasoning>")
    assert p.error is None, p.error
    return match_answer(p.answer_text, ref, policy, p.answer_json).ok


# ---- explanatory parentheticals ------------------------------------------------------------------

@pytest.mark.parametrize("answer", [
    "2.8 (scale 1 = minor to 4 = extreme), over 15 DIRECT EMER. admissions",
    "2.8 (scale 1 = minor to 4 = extreme)",
    "Mean severity 2.8 (scale: 1 = minor, 2 = moderate, 3 = major, 4 = extreme), averaged over 15 results",
    "2.8 (range 0 = none to 10 = worst)",
])
def test_a_scale_with_labelled_points_is_context(answer):
    assert _ok(answer)


@pytest.mark.parametrize("answer", [
    "2.1 (scale 1 = minor to 4 = extreme), over 15 DIRECT EMER. admissions",   # wrong value stays wrong
    "2.1 (scale 1 = minor to 2.8 = extreme)",                                  # the right value hidden in the scale
    "2.8 or 2.1 (scale 1 = minor to 4 = extreme)",                             # a hedge stays a hedge
    "2.8 (scale 1 = minor to 4 = extreme) 2.1",
])
def test_a_scale_never_rescues_a_wrong_or_hedged_answer(answer):
    assert not _ok(answer)


# ---- self-corrections ----------------------------------------------------------------------------

@pytest.mark.parametrize("answer", [
    "2.1, corrected: 2.8", "2.1 — no, 2.8", "2.1 - no, 2.8", "2.1 (corrected to 2.8)", "2.1; correction: 2.8",
    "2.1, sorry, 2.8", "2.1 -- no, 2.8",
    "2.1 no: 2.8", "2.1\n\nFinal: 2.8", "2.1\nCorrection: 2.8",   # fresh adversary adv4: "R no: W" was R
])
def test_a_self_correction_commits_to_the_last_value(answer):
    assert _ok(answer)


@pytest.mark.parametrize("answer", [
    "2.8, corrected: 2.1", "2.8 — no, 2.1", "2.8 (corrected to 2.1)",   # R, corrected: W is W
    "2.1, corrected: 2.8 or 3.0", "2.1, corrected: maybe 2.8", "2.1 or, corrected: 2.8",
    "2.8 no: 2.1", "2.8\n\nFinal: 2.1", "2.8\nCorrection: 2.1",      # adv4 5a: "R no: W" was credited R
])
def test_a_self_correction_to_a_wrong_value_or_a_hedge_fails(answer):
    assert not _ok(answer)


def test_a_corrected_quantity():
    assert _ok("4.1 mEq/L, corrected: 4.6 mEq/L", K, K_POL)
    assert not _ok("4.6 mEq/L, corrected: 4.1 mEq/L", K, K_POL)


# ---- a committed value with an alternative convention labelled as such ----------------------------

def test_day_after_admission_with_the_other_convention_labelled():
    assert _ok("Day 4 after admission: 2161-11-19 (hospital day 5 if the admission date is counted as day 1)", DAY)


@pytest.mark.parametrize("answer", [
    "2161-11-19 (or 2161-11-20 if the admission date is counted as day 1)",
    "2161-11-20 (or 2161-11-19 if the admission date is counted as day 1)",
    "2161-11-19 (2161-11-20 if the admission date is counted as day 1)",
    "Day 4 after admission: 2161-11-20 (hospital day 5 if the admission date is counted as day 1)",
])
def test_a_second_date_under_a_convention_is_a_hedge_or_wrong(answer):
    assert not _ok(answer, DAY)


# ---- no hedging policy gains ---------------------------------------------------------------------

_WRONG = st.sampled_from(["2.1", "3.4", "0.9", "2.7"])
_JOIN = st.sampled_from([", corrected: ", " — no, ", " (corrected to ", "; correction: ", " or ", " vs ", " / ",
                         " (scale 1 = minor to 4 = extreme) ", " (if counted from day 1: ", ", actually ",
                         " no: ", "\n\nFinal: ", " no "])
_TAIL = st.sampled_from(["", ")", " (scale 1 = minor to 4 = extreme)", ", over 15 admissions", " (n = 15)"])


@settings(max_examples=300, deadline=None)
@given(wrong=_WRONG, join=_JOIN, tail=_TAIL, right_first=st.booleans())
def test_two_values_never_pass_both_ways(wrong, join, tail, right_first):
    """A response stating the reference and a wrong value, joined by anything, passes at most in
    one order: the one whose committed (last corrected) value is the reference. Swapping the two
    values never passes too, so writing both gains nothing over writing one."""
    a = f"2.8{join}{wrong}{tail}"
    b = f"{wrong}{join}2.8{tail}"
    assert not (_ok(a) and _ok(b)), (a, b)


@settings(max_examples=200, deadline=None)
@given(wrong=_WRONG, join=_JOIN, tail=_TAIL)
def test_what_passes_is_judged_as_its_committed_value_alone(wrong, join, tail):
    """When a two-value response passes, its committed value alone passes too (it is the
    reference), so the extra text adds nothing a policy could use."""
    for text, last in ((f"2.8{join}{wrong}{tail}", wrong), (f"{wrong}{join}2.8{tail}", "2.8")):
        if _ok(text):
            assert _ok(last) or _ok("2.8"), text
            assert "2.8" in text


# ---- a lead phrase followed by field: value lines is a record ------------------------------------

from verifier.contract import RecordsAnswer  # noqa: E402

LINE = RecordsAnswer(columns=("location", "location_category", "starttime"),
                     rows=(("Left Radial", "Invasive Arterial", "2150-03-04 11:30:00"),))
_FIELDS = "location: {loc}\nlocation_category: Invasive Arterial\nstarttime: 2150-03-04 11:30:00"


@pytest.mark.parametrize("answer", [
    "Left radial artery\n" + _FIELDS.format(loc="Left Radial"),
    "Arterial line placed in the left radial artery\n" + "\n".join(f"- {ln}" for ln in _FIELDS.format(loc="Left Radial").splitlines()),
    "**Left radial artery**\n\n" + _FIELDS.format(loc="Left Radial"),
])
def test_a_lead_phrase_with_field_lines_is_the_record(answer):
    assert _ok(answer, LINE)


@pytest.mark.parametrize("answer", [
    "Left radial artery\n" + _FIELDS.format(loc="Right Femoral"),                        # a wrong field
    "Left radial or right femoral\n" + _FIELDS.format(loc="Left Radial"),                 # a hedged lead
    "Left radial artery\n" + _FIELDS.format(loc="Left Radial") + "\nlocation: Right Femoral",  # a second value
    "Left radial artery\n" + _FIELDS.format(loc="Left Radial or Right Femoral"),
])
def test_field_lines_never_rescue_a_wrong_or_hedged_record(answer):
    assert not _ok(answer, LINE)
