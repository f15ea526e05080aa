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


# still open (adv11 1c-1e, 1g): a count rebuilt by a reader's arithmetic or read from a symbol run
@pytest.mark.xfail(strict=True, reason="open: the count rebuilt from a square (adv11 1c)")
def test_open_a_count_rebuilt_from_its_square() -> None:
    assert disclosure(BASE + "The number of such admissions, squared, is 9.", 3, Q) != []


@pytest.mark.xfail(strict=True, reason="open: a run of symbols, one per unit (adv11 1e)")
def test_open_a_run_of_symbols() -> None:
    assert disclosure(BASE + "Seen: \U0001F3E5\U0001F3E5\U0001F3E5.", 3, Q) != []


@pytest.mark.xfail(strict=True, reason="open: an open interval holding one whole number (adv11 1e)")
def test_open_an_interval_with_one_whole_number() -> None:
    assert disclosure(BASE + "Their number lies strictly between 2 and 4.", 3, Q) != []
