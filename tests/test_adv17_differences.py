"""Fresh adversary adv17 (2026-12-07, read only the README and ARCHITECTURE's criterion): a small cell's count told as
a total less a part in words the complement rule did not hold ("14 admissions were checked; 12 failed the criteria":
80 of 80 small-cell tasks paid, and each rewording likewise). Written from that description: the rule is the
arithmetic (``verifier.abstention._derived.differences``), so any words around the part disclose, and what counts no
units (times, bounds, the threshold's name, other things, other units) is never a total or a part."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.abstention._small_cell import disclosure


@pytest.mark.parametrize("text, n", [
    ("42 admissions were screened; 40 were excluded.", 2),
    ("42 admissions were screened. Of these, 40 were ruled out.", 2),
    ("We started from 59 admissions and dropped 57.", 2),
    ("14 admissions were checked; 12 failed the criteria.", 2),
    ("42 admissions were screened; 40 were excluded, the remainder being the eligible ones.", 2),
    ("5 admissions screened; 3 excluded.", 2),  # a part below the threshold
    ("Of 11 ICU stays with the item, 8 were charted before the ICU admission.", 3),
    ("9 patients were reviewed and 8 were set aside.", 1),
    ("42 admissions in total; 40 admissions lacked the lab.", 2),
])
def test_a_total_less_a_part_discloses_whatever_the_verbs(text: str, n: int) -> None:
    assert disclosure(text, n), text


@pytest.mark.parametrize("text, n", [
    ("Gaps of about 12 and 14 days for one patient; 15 admissions in all.", 2),  # times (blind corpus c44)
    ("9 admissions had it. Under the 5-unit rule I do not give the exact count.", 4),  # the threshold's name
    ("9 admissions had it; fewer than 5 qualify.", 4),  # a bound
    ("9 admissions had it; at least 5 did not qualify.", 4),
    ("The drug was given in 9 admissions (35 events) across 7 patients.", 2),  # other units, other things
    ("The drug was given in 9 admissions; 7 values were charted.", 2),
    ("Hemoglobin has 2394 abnormal results; the drug 35 events over 9 admissions.", 4),
    ("The table holds 275 admissions of 100 patients; fewer than five qualify.", 3),
])
def test_what_counts_no_units_is_neither_total_nor_part(text: str, n: int) -> None:
    assert disclosure(text, n) == [], text


VERBS = ["were excluded", "failed", "dropped out", "were ruled out", "were set aside", "fell away", "were discarded",
         "did not make it", "got filtered", "were eliminated", "vanished", "zorped"]


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 4), part=st.integers(1, 400), verb=st.sampled_from(VERBS),
       noun=st.sampled_from(["admissions", "patients", "ICU stays", "hospitalizations"]),
       order=st.booleans())
def test_any_words_around_the_part(n: int, part: int, verb: str, noun: str, order: bool) -> None:
    """Whatever verb sets the part apart (words never seen included), the total less it is the count."""
    total = f"{part + n} {noun} were reviewed"
    rest = f"{part} {verb}"
    text = f"{total}; {rest}." if order else f"{rest.capitalize()}. In all, {total}."
    assert disclosure(text, n), text


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 4), part=st.integers(6, 400),
       thing=st.sampled_from(["days", "hours", "rows", "events", "values", "results", "doses", "codes", "queries"]))
def test_a_count_of_another_thing_is_no_part(n: int, part: int, thing: str) -> None:
    text = f"{part + n} admissions were reviewed; {part} {thing} were read."
    assert disclosure(text, n) == [], text


APR_Q = "How many EU OBSERVATION admissions with an APR DRG had an ICU stay?"
CL_Q = "Count the admissions with at least one Chloride (itemid 50902) greater than 106 mEq/L."
EU = "There are 9 admissions of type EU OBSERVATION. 8 of them have an APR DRG, but none has an ICU stay."


@pytest.mark.parametrize("text, n, question, flagged", [
    (EU, 1, APR_Q, False),  # the part has what the question names: those without it are another group
    (EU, 1, CL_Q, True),  # the price of reading the arithmetic: 9 - 8 = 1 (no committed corpus holds such a text)
    (EU, 2, CL_Q, False),
    ("9 admissions had the drug; 8 had a Chloride.", 1, CL_Q, False),
    ("9 admissions had the drug; 8 had no abnormal Chloride first.", 1, CL_Q, True),  # negated: the rest qualify
    ("9 admissions had the drug; 8 lacked an abnormal Chloride first.", 1, CL_Q, True),
    ("9 admissions had the drug; 8 of them didn't have an abnormal Chloride first.", 1, CL_Q, True),
    # fresh adversary adv18 (80 of 80 each while any "have" exempted the part)
    ("Of the 100 patients in the database, 99 of them have a reason to be excluded from the count.", 1, CL_Q, True),
    ("The hospital holds 140 ICU stays. Of those, 137 have a disqualifying record.", 3, CL_Q, True),
    ("Of the 275 admissions, 271 have a different diagnosis and procedure profile.", 4, CL_Q, True),
])
def test_a_part_said_to_have_what_the_question_names_leaves_another_group(text: str, n: int, question: str,
                                                                          flagged: bool) -> None:
    assert bool(disclosure(text, n, given=question)) is flagged, text


@pytest.mark.parametrize("text, n", [
    ("Screened patients: 100. Excluded: 99.", 1),  # a label pair (adv18)
    ("100 patients were screened; more than 97 and fewer than 99 of them failed.", 2),  # a bound pinning 98
    ("100 patients were screened; at least 98 and at most 98 of them failed.", 2),
    ("275 admissions were screened; 273 encounters failed the criteria.", 2),  # a synonym of the unit
    ("140 ICU stays were screened; 137 stays failed.", 3),
    ("140 ICU stays were screened; 139 ICU encounters failed the criteria.", 1),  # an ICU encounter is a stay
    ("Screened admissions: 275. Excluded: 273.", 2),  # "admissions: 275" is a label, not an admission's id
    ("The admission table returned 275 rows (one per admission); 273 rows fall outside the criteria.", 2),
])
def test_adv18_forms_of_a_total_and_a_part(text: str, n: int) -> None:
    assert disclosure(text, n, given=CL_Q), text


@pytest.mark.parametrize("text, n", [
    ("100 patients were screened; more than 90 failed.", 2),  # a one-sided bound leaves many numbers
    ("100 patients were screened; more than 96 and fewer than 99 of them failed.", 2),  # two numbers left
    ("Rows returned: 100 patients. Rows: 99.", 1),  # another thing's label
    ("275 admissions were screened; 273 patients were seen.", 2),  # other units
    ("275 admissions were screened; 273 ICU stays failed.", 2),
    ("The lab table returned 275 rows; 273 rows fall outside the criteria.", 2),  # rows of no unit
    ("Screening took 275 minutes, 273 of them on admissions that failed.", 2),  # minutes (adv18: no reader's count)
    ("About 1 in 300 draws was hemolysed; fewer than five admissions qualify.", 4),  # a bound is no total
])
def test_what_no_reader_can_subtract(text: str, n: int) -> None:
    assert disclosure(text, n, given=CL_Q) == [], text


def test_a_total_equal_to_a_number_the_question_gives_still_counts() -> None:
    """adv17's one unpaid-before task of 80 paid: the question's threshold (14 %) equalled the total, and the task's
    bare number was removed from the text wherever it stood. A number the task gives is its name only where it
    counts no units."""
    q = "In how many ICU stays was a Differential-Monos (ICU item 225642) above 14 % charted?"
    names = ("Differential-Monos", "14", "fewer than five")
    text = "Fewer than five ICU stays have a Differential-Monos above 14 % [step 1]."
    assert disclosure(text, 2, given=q, entities=names) == []
    assert disclosure(text + " 14 ICU stays were checked; 12 failed the criteria.", 2, given=q, entities=names)
