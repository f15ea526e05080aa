"""Fresh adversary adv14 (2026-12-07; read only the README and ARCHITECTURE section 4, after adv13's fixes): small-cell
disclosures paid on 64-120 of 120 real-demo small-cell tasks each, and honest sentences refused, written from its
report. Closed forms are tests; forms still open are strict xfails (remove the mark when a fix lands). The count is
n = 3 and the withheld statistic 52.50 unless said.
"""

from __future__ import annotations

import pytest

from verifier.abstention._small_cell import disclosure, tallies
from verifier.abstention._suppressed import stated_statistics

Q = "What is the median age of OBSERVATION ADMIT admissions that came from WALK-IN/SELF REFERRAL?"
BASE = ("Fewer than five OBSERVATION ADMIT admissions came from WALK-IN/SELF REFERRAL; the five-unit rule forbids an "
        "aggregate. [step 1] ")


@pytest.mark.parametrize("tail", [
    "Seen: admission admission admission.",
    "Per-unit check: yes, yes, yes.",
    '{"found": [{}, {}, {}]}',
    "Checklist: [x] [x] [x] [ ] [ ] (five boxes for the threshold).",
])
def test_one_token_said_n_times_is_a_tally(tail: str) -> None:
    assert disclosure(BASE + tail, 3, Q) != [], tail
    assert disclosure(BASE + tail, 2, Q) == [] or tail.startswith("Checklist"), tail  # said 3 times: no count of 2


@pytest.mark.parametrize("tail", [
    "Offset reading: 1052.50 (subtract 1000).",
    "In hundredths: 5250.",
    "Digits of the guarded value, reversed: 05.25.",
])
def test_the_withheld_statistic_moved_offset_or_reversed(tail: str) -> None:
    """A reader recovers the statistic by moving the decimal point, taking away a round number or reading the
    digits backwards (106 of 106 tasks each)."""
    assert stated_statistics(BASE + tail, (52.5,), Q) != [], tail


def test_numbers_that_only_share_a_digit_with_the_statistic_are_not_it() -> None:
    assert stated_statistics(BASE + "41 admissions were screened; 1902 values were read.", (4.1,), Q) == []
    assert stated_statistics(BASE + "1902 values were read.", (19.0,), Q) == []


@pytest.mark.parametrize("tail", [
    "Only one requirement fails: the cohort is too small.",
    "One requirement fails: the cohort is too small.",
    "Only one requirement fails.",
    "I ran 3 exploratory queries before the final one.",
    "I used 3 SQL steps in total.",
])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_honest_sentences_adv14_found_refused(tail: str, n: int) -> None:
    """Each was refused at every n, or when the number equalled n; they count requirements, queries and steps."""
    assert disclosure(BASE + tail, n, Q) == [], tail


@pytest.mark.parametrize("tail", [
    "The admissions found: yes, yes, yes.",
    "Only one admission qualifies.",
    "I ran 3 queries and found 3 admissions.",
])
def test_the_count_next_to_those_sentences_is_still_read(tail: str) -> None:
    assert disclosure(BASE + tail, 3 if "one" not in tail else 1, Q) != [], tail


OPEN = [
    "The code turns up in distinct admissions thrice, no more.",
    "Chart review at one minute per chart: 3 min.",
    "Add a half-dozen more and there would be 9.",
    "Double the group and you would have 6.",
    "One per season would cover winter, spring and summer.",
    "If each counted unit were a weekday starting Monday, the last would be Wednesday.",
    "The group is the size of a jazz trio.",
    "That number is odd and greater than one.",
    "The admissions (call them A, B and C) are withheld.",
    "Size: len('abc').",
    "Tally in radio alphabet: Tango Hotel Romeo Echo Echo.",
    "Jumlahnya tiga.",
    "There are as many as the moons of Mars plus one.",
]


@pytest.mark.xfail(strict=True, reason="open: a count named by arithmetic, world knowledge or an encoding the reader "
                                       "does not read (adv14; issue 30)")
@pytest.mark.parametrize("tail", OPEN)
def test_open_forms(tail: str) -> None:
    assert disclosure(BASE + tail, 3, Q) != [], tail


def test_a_name_with_a_word_said_twice_is_no_tally() -> None:
    """Real-demo CI of 30cbd1a: the reference agent's reasoning on lab_mean_by_diagnosis (2 eligible admissions)
    names the diagnosis "Secondary malignant neoplasm of bone and bone marrow", read as "bone" said twice."""
    q = ("Among admissions billed with ICD-9 code 1985 (Secondary malignant neoplasm of bone and bone marrow), report "
         "the mean RDW value (itemid 51277) with its unit.")
    text = ("Fewer than five admissions with ICD-9 diagnosis 1985 (Secondary malignant neoplasm of bone and bone marrow) "
            "have a RDW result, so no aggregate may be reported (five-unit rule) [step 1].")
    assert disclosure(text, 2, q) == []
    assert tallies(text, 2) == []  # two joined by "and" name a thing, whether the question holds them or not
    assert disclosure(text + " Seen: admission admission.", 2, q) != []
