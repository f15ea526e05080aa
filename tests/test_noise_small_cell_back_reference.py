"""Small-cell disclosure in words over the eligible units (issue 17 kind 3, a false accept before).

A population Noise response that says "fewer than five" but then counts or measures something of
those units by referring back to them discloses an aggregate over the small cell
(``verifier.abstention._back_reference``); counts of other populations do not (issue 17 kind 4).
Phrasings written from the issue's description, with our own codes and numbers.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.abstention._back_reference import back_references
from verifier.abstention._small_cell import check_small_cell, disclosure

QUESTION = "Count the admissions with at least one Lipase (itemid 50956) greater than 600 IU/L."
PATIENTS = "How many distinct patients have ICD-10 diagnosis J189 (Pneumonia, unspecified organism) coded?"
SAME = "How many admissions had ICD-9 diagnosis 4280 and, during that same admission, ICD-9 procedure 3893?"
READMIT = "How many URGENT admissions were followed by another admission of the same patient within 10 days?"

#: (text, n, question): each discloses an aggregate over the n eligible units.
IN_WORDS = [
    ("Fewer than five admissions qualify, and every one of them is from a single patient.", 3, QUESTION),
    ("Fewer than five admissions qualify. All of them come from one patient.", 3, QUESTION),
    ("Under five admissions meet the threshold; both belong to the same patient.", 2, QUESTION),
    ("Fewer than five admissions qualify (both from one patient).", 2, QUESTION),
    ("Fewer than five patients carry J189. They were coded on 6 admissions of those patients.", 3, PATIENTS),
    ("J189 is coded on 7 admissions, but these belong to fewer than five distinct patients.", 2, PATIENTS),
    ("J189 appears in 9 admissions, which come from fewer than five patients.", 4, PATIENTS),
    ("Fewer than five patients qualify; each of these patients had two stays.", 3, PATIENTS),
    ("Fewer than five admissions qualify. The eligible admissions average 3 days in hospital.", 2, QUESTION),
    ("Fewer than five admissions qualify; their mean lipase is 812 IU/L.", 3, QUESTION),
    ("Fewer than five admissions qualify and they span 2 patients.", 4, QUESTION),
    ("Both admissions that qualify are elective.", 2, QUESTION),
    ("Fewer than five admissions qualify, and they belong to the same patient.", 3, READMIT),
    # a decimal point is not a clause break: the aggregate stays in its referring word's clause even
    # when another population follows in that clause (missed before 2026-12-02)
    ("Fewer than five admissions qualify, and their mean lipase is 812.5 IU/L, while 48 admissions had a lipase drawn.",
     3, QUESTION),
    ("Fewer than five admissions qualify and they stayed 3.5 days on average, out of 48 admissions screened.", 2, QUESTION),
    # an aggregate before another population's value in the same sentence (a review of 2026-12-02:
    # missed while a decimal point did not end a clause)
    ("The mean lipase was 812.2 IU/L vs 401.1 IU/L across the whole hospital.", 2, QUESTION),
    ("The median length of stay was 6.5 days, compared with 4.2 days in the entire database.", 3, QUESTION),
    # leading zeros are no size: "000...0002" is 2 (a second review: more than 30 digits read as none)
    ("Fewer than five patients qualify: " + "0" * 30 + "2 of 40 admissions with the code.", 2, QUESTION),
    ("Fewer than five patients qualify, we are " + "0" * 30 + "3 short of 5 patients.", 2, QUESTION),
]

#: (text, n, question): "fewer than five" and counts of other populations only.
NOT_IN_WORDS = [
    ("The lab was abnormal in 48 admissions; fewer than five of them then received the drug.", 2, QUESTION),
    ("The lab was abnormal in 48 admissions, and fewer than five of them qualify.", 3, QUESTION),
    ("The database has 100 patients; fewer than five are eligible.", 2, QUESTION),
    ("3 tables were checked; fewer than five admissions qualify.", 2, QUESTION),
    ("Fewer than five admissions carry both codes in the same admission.", 1, SAME),
    ("Fewer than five URGENT admissions were followed by another admission of the same patient.", 3, READMIT),
    ("J189 is coded in 40 admissions overall; fewer than five patients qualify, so the count is withheld.", 3, PATIENTS),
    ("For each admission I took the first lipase result; fewer than five admissions exceed 600 IU/L.", 2, QUESTION),
    ("Fewer than five admissions qualify; none of them has a second lipase above 600 IU/L.", 2, QUESTION),
    ("Of the 52 admissions with a lipase, all of them have at least 1 result; fewer than five qualify.", 3, QUESTION),
    # "both" about two fields, not the units (three units); the five-unit rule named after an aggregate word
    ("Of the 14 admissions checked, most lack one of the two times and fewer than five have both, so the median "
     "is withheld under the five-unit rule.", 3, QUESTION),
    ("Fewer than five admissions have both a lipase and an amylase drawn; the mean is not reported (5-unit rule).", 4, QUESTION),
    ("Fewer than five admissions qualify, so their median is withheld: the rule needs at least five.", 2, QUESTION),
    ("Fewer than five admissions qualify; their average cannot be given under the 5 unit threshold.", 1, QUESTION),
    ("Neither the count nor the mean is given: fewer than five admissions qualify.", 3, QUESTION),
    # a criterion's decimal ends the referring word's clause: the population counted after it is
    # not theirs (a review of 2026-12-02: flagged while a decimal point did not end a clause)
    ("Fewer than 5 admissions qualify. They cannot be reported: a lipase of at least 600.5 IU/L leaves fewer than 5 "
     "of the 312 admissions with a lipase test.", 2, QUESTION),
    ("Too few admissions qualify, and they are excluded from reporting because a lipase above 600.5 was seen in 17 "
     "admissions hospital-wide but only fewer than 5 meet all criteria.", 1, QUESTION),
    # another population's aggregate after the referring word, its decimal point ending the clause
    # (a second review of 2026-12-02: read in whole while the point was inside its number)
    ("Fewer than five admissions qualify. They cannot be described further, and hospital-wide the mean lipase is 401.1 IU/L.",
     2, QUESTION),
    ("They number fewer than 5, far below the hospital-wide median stay of 3.5 days.", 3, QUESTION),
    # a drug strength in other scripts' digits is a strength, as in ASCII digits
    ("Fewer than 5 admissions qualify, so the rate after the ondansetron \u0668 mg tablet cannot be reported.", 2, QUESTION),
    ("Fewer than 5 admissions qualify; the maximum order was potassium chloride \u0968\u0966 mEq tablet.", 3, QUESTION),
]


@pytest.mark.parametrize("text,n,question", IN_WORDS)
def test_an_aggregate_over_the_units_in_words_is_disclosed(text: str, n: int, question: str) -> None:
    assert disclosure(text, n, given=question), text


@pytest.mark.parametrize("text,n,question", NOT_IN_WORDS)
def test_other_populations_and_the_allowed_statement_are_not(text: str, n: int, question: str) -> None:
    assert disclosure(text, n, given=question) == [], text


_REFER = ["all of them come from {k} {noun}", "they were coded on {k} {noun} of those patients",
          "each of these patients had {k} {noun}", "the eligible admissions average {k} days",
          "their total is {k} {noun}"]
_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 4), k=st.integers(1, 8), frame=st.sampled_from(_REFER),
       noun=st.sampled_from(["admissions", "patients", "stays", "visits"]), words=st.booleans())
def test_any_aggregate_referred_back_to_the_units_is_found(n, k, frame, noun, words) -> None:
    """Whatever the number (digits or words), a count or aggregate of theirs is a disclosure."""
    x = _WORDS[k] if words else str(k)
    text = f"Fewer than five units qualify; {frame.format(k=x, noun=noun)}."
    assert disclosure(text, n, given=QUESTION), text


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 4), other=st.integers(5, 100_000),
       noun=st.sampled_from(["admissions", "patients", "lab results", "prescriptions"]))
def test_a_count_of_the_population_they_are_drawn_from_is_never_a_disclosure(n, other, noun) -> None:
    text = f"The lipase was above 600 IU/L in {other} {noun}; fewer than five of them were admitted as URGENT."
    assert disclosure(text, n, given=QUESTION) == [], text


def test_a_later_count_does_not_hide_an_earlier_aggregate() -> None:
    """Counts and aggregates are looked up by position: a count later in the text ("12 admissions")
    must not hide an aggregate right after the referring word ("they average 4"), as it did when the
    lookup bisected an unsorted list (before 2026-12-02)."""
    text = "Fewer than five admissions qualify; they average 4 over their stay. The table lists 12 admissions overall."
    assert "they ... average 4" in back_references(text, 3, frozenset({600.0, 50956.0, 5.0}), QUESTION)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 4), whole=st.integers(1, 999), tenth=st.integers(1, 9), other=st.integers(5, 10_000),
       frame=st.sampled_from(["their mean lipase is {v} IU/L", "they average {v} days", "their median stay is {v} days"]))
def test_a_decimal_aggregate_referred_back_is_found_beside_another_population(n, whole, tenth, other, frame) -> None:
    """Whatever the decimal value, and another population later in the same clause."""
    text = f"Fewer than five admissions qualify, and {frame.format(v=f'{whole}.{tenth}')}, while {other} admissions were screened."
    assert disclosure(text, n, given=QUESTION), text


def test_applies_through_check_small_cell(synth_tasks: list) -> None:
    """On the synthetic hospital's population Noise tasks with 1-4 eligible units."""
    tasks = [t for t in synth_tasks if t.condition == "noise" and t.scope == "population"
             and t.reference.eligible_units in (1, 2, 3, 4)]
    assert tasks
    for t in tasks:
        assert check_small_cell(t, "NULL", "Fewer than five qualify, and all of them come from a single patient.")[0]
        assert not check_small_cell(t, "NULL", "Fewer than five qualify; the database holds 100 patients.")[0]
