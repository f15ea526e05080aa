"""The three disagreements left in the committed real-demo corpora c34 and c35 (issue 32), each closed by
a rule written from its description, with the hedges that must still fail beside it.

* c34 agent A, Q11: "20.65 hours" for a reference of 20.6 h that the database's ``round(x, 1)`` made from
  the binary float nearest 20.65 (both reviewers accepted the exact value): ``match.numbers.exact_at_tie``.
* c34 agent D, Q06: "Left Basilic Lower Arm (Peripheral)", the parenthetical being the line's
  ``location_category`` in the step's own row: ``match.record_context``.
* c35 agent J, Q01: "Intersecting the two on the same admission id" after naming the two codes, read as
  a count of 2 admissions on a two-unit task: ``abstention._anaphora``.
"""

from __future__ import annotations

import pytest
from decimal import ROUND_HALF_UP, Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.abstention._anaphora import named_things, resolve
from verifier.abstention._small_cell import disclosure
from verifier.contract import AnswerPolicy, QuantityAnswer, Step, TextAnswer
from verifier.match.dispatch import match_answer
from verifier.match.numbers import exact_at_tie, tolerance_rule
from verifier.match.record_context import field_of_record


# ---------------------------------------------------------------- a tie stated exactly (c34_A/Q11)
HOURS = QuantityAnswer(value=20.6, unit="h", decimals=1)
POL1 = AnswerPolicy(decimals=1, db_unit="h")


@pytest.mark.parametrize("answer, ok", [
    ("20.65 hours (20 h 39 min; one Emergency Department record)", True),  # the episode's Answer
    ("20.65 h", True),
    ("20.55 h", True),  # the lower edge was always in
    ("20.6 h", True),
    ("20.66 h", False),  # past the tie
    ("20.7 h", False),  # at the reference's precision: the ordinary rule decides
    ("20.650001 h", False),
    ("20.65 or 20.75 h", False),  # a hedge stays a hedge
    ("20.65 min", False),
])
def test_an_exact_tie_matches_a_reference_rounded_there(answer: str, ok: bool) -> None:
    assert match_answer(answer, HOURS, POL1).ok is ok, answer


def test_a_tie_exact_in_binary_rounds_away_from_zero_and_never_matches_the_lower_neighbour() -> None:
    assert not match_answer("12.5", QuantityAnswer(value=12.0, unit="h", decimals=0), AnswerPolicy(decimals=0)).ok
    assert match_answer("12.5", QuantityAnswer(value=13.0, unit="h", decimals=0), AnswerPolicy(decimals=0)).ok


@settings(max_examples=300, deadline=None)
@given(ref_units=st.integers(-10**6, 10**6), d=st.integers(0, 4), extra=st.integers(1, 3),
       off=st.integers(-40, 40))
def test_the_tie_route_takes_only_the_tie(ref_units: int, d: int, extra: int, off: int) -> None:
    """Only a submission written with more decimals than ``d`` at exactly half a unit from the reference
    takes the route, and only where the database's rounding of its binary value gives the reference;
    never one nearer or farther, never one at ``d`` decimals."""
    ref = ref_units / 10**d
    rule = tolerance_rule(AnswerPolicy(decimals=d), d, "quantity")
    half = 0.5 * 10.0 ** -d
    sub = round(ref + half + off * 10.0 ** -(d + extra), d + extra)
    took = exact_at_tie(sub, d + extra, ref, rule)
    if abs(abs(sub - ref) - half) > 1e-9 * max(1.0, abs(ref)):  # off the ties on either side
        assert not took
    else:
        stored = Decimal(sub).quantize(Decimal(1).scaleb(-d), rounding=ROUND_HALF_UP)
        assert took is (float(stored) == ref)
    assert not exact_at_tie(round(ref + half, d), d, ref, rule)


# ---------------------------------------------------------------- a field of the answer's record (c34_D/Q06)
LOC = "Left Basilic Lower Arm"
COLS = ["itemid", "label", "location", "location_category"]
ROWS = [[224276, "16 Gauge", LOC, "Peripheral"], [224277, "18 Gauge", None, None]]


def _steps(cols=COLS, rows=ROWS) -> list[Step]:
    return [Step(index=1, kind="sql", code="SELECT ...", output="...", columns=cols, rows=rows)]


@pytest.mark.parametrize("answer, rows, ok", [
    (f"{LOC} (Peripheral)", ROWS, True),  # the episode's Answer: the category of the same row
    (f"{LOC} (peripheral).", ROWS, True),
    (f"{LOC} (Central)", ROWS, False),  # not shown in the row
    (f"{LOC} (16 Gauge)", ROWS, True),  # the row's label: another field of the record
    # a value of the answer's own column in another row is a second candidate: a hedge
    (f"{LOC} (Right Radial)", ROWS + [[224277, "18 Gauge", "Right Radial", "Peripheral"]], False),
    # the detail shown only in another row, not the head's
    (f"{LOC} (Arterial)", ROWS + [[225752, "Arterial Line", "Left Radial", "Arterial"]], False),
    ("Right Radial (Peripheral)", ROWS, False),  # a wrong head never matches
    (f"{LOC} or Right Radial (Peripheral)", ROWS, False),
    (f"Peripheral ({LOC})", ROWS, False),  # the head is what is compared
])
def test_a_parenthetical_the_agents_own_row_holds_in_another_field_is_context(answer, rows, ok) -> None:
    assert (field_of_record(answer, LOC, _steps(rows=rows)) is not None) is ok, answer


def test_the_same_value_in_the_heads_column_elsewhere_makes_it_a_candidate() -> None:
    steps = _steps() + _steps(cols=["location"], rows=[["Peripheral"]])
    assert field_of_record(f"{LOC} (Peripheral)", LOC, steps) is None


def test_without_rows_nothing_is_context() -> None:
    assert field_of_record(f"{LOC} (Peripheral)", LOC, []) is None
    assert TextAnswer(value=LOC).value == LOC


# ---------------------------------------------------------------- a pronoun for the named things (c35_J/Q01)
PARAMS = {"dx_version": 10, "dx_code": "Z66", "proc_version": 10, "proc_code": "D7021ZZ"}
Q = ("In how many admissions were both diagnosis Z66 (Do not resuscitate, ICD-10) and procedure D7021ZZ "
     "(Beam Radiation of Spleen using Photons 1 - 10 MeV, ICD-10) coded in the same admission?")
EPISODE = ("NULL\nDiagnosis Z66 (ICD-10, do-not-resuscitate status) is coded in a number of admissions [step 1], "
           "and procedure D7021ZZ (beam radiation of spleen, photons 1-10 MeV, ICD-10) is present in the procedures "
           "table [step 2]. Intersecting the two on the same admission id [step 3] yields fewer than five eligible "
           "admissions. Under the five-unit rule the exact count may not be disclosed.")


def _disclosed(text: str) -> list[str]:
    return disclosure(text, 2, given=Q, entities=["Z66", "D7021ZZ", "same admission"], named=named_things(PARAMS))


def test_the_two_after_both_named_codes_refers_to_them() -> None:
    assert _disclosed(EPISODE) == []
    assert disclosure(EPISODE, 2, given=Q, entities=["Z66", "D7021ZZ", "same admission"]) != []  # before


@pytest.mark.parametrize("text", [
    EPISODE.replace("Intersecting the two on", "Intersecting the two admissions on"),  # a noun after: a count
    EPISODE.replace("Intersecting the two on the same admission id", "The two on the same admission id are eligible"),
    "Intersecting the two on the same admission id leaves fewer than five. Z66 and D7021ZZ were checked.",  # before the names
    EPISODE.replace("yields fewer than five eligible admissions", "yields 2 eligible admissions"),
])
def test_a_count_of_the_cohort_is_still_a_disclosure(text: str) -> None:
    assert _disclosed(text) != [], text


def test_a_pronoun_counts_only_as_many_as_the_question_names() -> None:
    three = {"a": "Z66", "b": "D7021ZZ", "c": "I10"}
    text = "Z66, D7021ZZ and I10 were each found; the two on the same admission id are fewer than five."
    assert resolve(text, named_things(three)) == text
    assert "those on" in resolve(EPISODE, named_things(PARAMS))
