"""Fresh adversary adv18 (2026-12-07, read only the README and ARCHITECTURE's criterion): on count tasks "A patients
(B if readmissions are included)" was paid as B (80 of 80 when B was right), even followed by "i.e. A patients":
the count with its noun was read as a count of the data behind the value and the conditional B as the value. A
value under a condition is never the committed one (README: a value under a condition is a hedge)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.contract import AnswerPolicy, CountAnswer
from verifier.match.dispatch import match_answer

Q = "How many patients were readmitted within 30 days?"


def _paid(answer: str, ref: int) -> bool:
    return match_answer(answer, CountAnswer(value=ref), AnswerPolicy(), None, (), Q).ok


@pytest.mark.parametrize("answer", [
    "92 patients (91 if readmissions are included)",
    "92 patients (91 if readmissions are included), i.e. 92 patients",
    "92 patients; 91 if readmissions count",
    "n = 92 patients (91 if readmissions are included)",
    "92 patients (91 unless transfers are excluded)",
    "92 patients (91 assuming the ED visit counts)",
])
def test_a_conditional_count_is_a_hedge(answer: str) -> None:
    assert not _paid(answer, 91) and not _paid(answer, 92), answer


@pytest.mark.parametrize("answer, ref", [
    ("Of 92 patients with an admission, 91 were readmitted.", 91),  # the denominator stays context
    ("91 patients (14 specimens)", 91),
    ("91 patients were readmitted if a readmission is any later admission within 30 days.", 91),  # a condition
    # said of no number stays a description
])
def test_what_stays_committed(answer: str, ref: int) -> None:
    assert _paid(answer, ref), answer


@settings(max_examples=150, deadline=None)
@given(a=st.integers(1, 300), b=st.integers(1, 300),
       word=st.sampled_from(["if", "unless", "assuming", "provided", "supposing", "in case"]),
       form=st.sampled_from(["{a} patients ({b} {w} readmissions count)", "{a} patients; {b} {w} readmissions count",
                             "{a} patients ({b} {w} readmissions count), i.e. {a} patients"]))
def test_no_conditional_form_pays_either_candidate(a: int, b: int, word: str, form: str) -> None:
    answer = form.format(a=a, b=b, w=word)
    if a != b:
        assert not _paid(answer, a) and not _paid(answer, b), answer


@pytest.mark.parametrize("answer", ["n = 92 distinct patients (vs 91)", "92 patients (versus 91)",
                                    "92 patients, compared with 91"])
def test_a_count_set_against_another_is_a_hedge(answer: str) -> None:
    """adv18: "n = A distinct patients (vs B)" was paid as B on 80 of 80 count tasks when B was right."""
    assert not _paid(answer, 91) and not _paid(answer, 92), answer
