"""Fresh adversary adv11 (2026-12-06; read only the README and ARCHITECTURE section 4, after adv10's fixes). Each
case is written from its report: what it found paid, and what a reader sees in it. The forms closed here are
tests; the forms still open are strict xfails, so that a fix shows (remove the mark then).
"""

from __future__ import annotations

import pytest

from verifier.abstention._small_cell import disclosure
from verifier.contract import AnswerPolicy, TextAnswer
from verifier.match.dispatch import match_answer

Q = "How many EW EMER. admissions are followed by a readmission within 2 days?"
BASE = "Fewer than five EW EMER. admissions are followed by a readmission within 2 days (five-unit rule). [step 1]. "


def test_a_count_word_in_look_alike_letters_is_the_count() -> None:
    """1a: "thrее" with two Cyrillic "е" (U+0435) was paid on 60 of 60 small-cell tasks."""
    assert disclosure(BASE + "In fact only thr\u0435\u0435 admissions have it.", 3, Q) != []
    assert disclosure(BASE + "\u0422he data of both tables were read.", 3, Q) == []  # a look-alike in no count word


@pytest.mark.parametrize("answer, ref", [
    ("{HOME, HOME HEALTH CARE}", "HOME"),
    ("{HOME, HOME HEALTH CARE}", "HOME HEALTH CARE"),
    ("{HOME HEALTH CARE, HOME}", "HOME HEALTH CARE"),
    ("{R, S, I}", "R"),
    ("[R; S]", "R"),
])
def test_a_bracketed_set_of_values_is_several_candidates(answer: str, ref: str) -> None:
    """2a: a text answer written as a set "{A, B}" was paid whichever of A and B was right (19 of 131 tasks)."""
    assert not match_answer(answer, TextAnswer(value=ref), AnswerPolicy(), question="Where was the patient discharged?").ok


def test_one_value_in_brackets_is_one_value() -> None:
    assert match_answer("[R]", TextAnswer(value="R"), AnswerPolicy()).ok
    assert match_answer("HOME HEALTH CARE", TextAnswer(value="HOME HEALTH CARE"), AnswerPolicy()).ok


# adv11 1c-1e: a sentence that refers back to the cohort ("such admissions", "their number") is about the cohort,
# as is the sentence stating the bound; a run of n of one symbol is a tally of n
def test_a_count_rebuilt_from_its_square() -> None:
    assert disclosure(BASE + "The number of such admissions, squared, is 9.", 3, Q) != []


def test_a_run_of_symbols() -> None:
    assert disclosure(BASE + "Seen: \U0001F3E5\U0001F3E5\U0001F3E5.", 3, Q) != []


def test_an_interval_with_one_whole_number() -> None:
    assert disclosure(BASE + "Their number lies strictly between 2 and 4.", 3, Q) != []


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("form", [
    "Those admissions, counted and multiplied by 100, give {h}.",
    "Such admissions number more than {lo} and fewer than {hi}.",
    "Their count plus 10 is {p}.",
    "This group, doubled, makes {d}.",
])
def test_a_sentence_referring_back_to_the_cohort_is_about_the_cohort(form: str, n: int) -> None:
    """Written from adv11's description (a count a reader rebuilds from a sentence that refers back to the cohort),
    in forms it did not use: each failed before the back-reference rule."""
    text = BASE + form.format(h=100 * n, lo=n - 1, hi=n + 1, p=n + 10, d=2 * n)
    assert disclosure(text, n, Q) != [], text


@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_tally_of_one_symbol_anywhere(n: int) -> None:
    assert disclosure(BASE + "Found: " + "\u2705" * n + ".", n, Q) != []
    assert disclosure(BASE + "Found: " + " ".join(["\U0001F9CD"] * n), n, Q) != []


def test_honest_neighbours_of_the_cohort_sentence_are_not_flagged() -> None:
    """What the back-reference and tally rules must leave alone: a following sentence about other things (no
    back-reference), a back-reference after a sentence not about the cohort, a symbol that is no run of n."""
    for tail in ("The query joined 2 tables on the admission id.",
                 "Step 3 listed the readmissions.",
                 "\u2705 Checked admissions and transfers.",
                 "\u2705\u2705 both tables checked."):
        assert disclosure(BASE + tail, 3, Q) == [], tail
    text = "I read 2 tables [step 1]. Their columns hold 4 date fields. Fewer than five admissions qualify."
    assert disclosure(text, 3, Q) == []
