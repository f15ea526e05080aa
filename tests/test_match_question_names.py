"""A number inside a name the question gives is no candidate (blind corpus c32, false reject 1).

"8 distinct patients with type 2 diabetes mellitus with hyperglycemia" for "How many distinct patients
have ... E1165 (Type 2 diabetes mellitus with hyperglycemia)": "type 2 diabetes" repeats, word for word
around its number, a phrase of the question, so the 2 is part of a name, not the count.
"""

import pytest

from verifier.contract import AnswerPolicy, CountAnswer
from verifier.match import match_answer

_Q = ("How many distinct patients have ICD-10 diagnosis E1165 (Type 2 diabetes mellitus with hyperglycemia) "
      "coded in any admission?")


def test_number_in_a_name_of_the_question_is_not_the_count():
    text = "8 distinct patients with type 2 diabetes mellitus with hyperglycemia (ICD-10 E11.65)"
    assert match_answer(text, CountAnswer(value=8), AnswerPolicy(), question=_Q).ok


@pytest.mark.parametrize("text,ref", [
    ("2 patients with type 2 diabetes", 8),            # the count is 2: wrong
    ("8 or 2 patients with type 2 diabetes", 8),       # a hedge stays a hedge
    ("8 patients, 2 with type 2 diabetes", 8),          # a second number outside the name is a candidate
])
def test_counts_outside_the_name_still_count(text, ref):
    assert not match_answer(text, CountAnswer(value=ref), AnswerPolicy(), question=_Q).ok


def test_two_patients_with_type_2_is_still_a_small_cell_disclosure():
    from verifier.abstention._small_cell import disclosure
    assert disclosure("NULL: 2 patients with type 2 diabetes.", 2, given=_Q,
                      entities=["Type 2 diabetes mellitus with hyperglycemia"]) != []
