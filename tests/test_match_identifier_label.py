"""A label ending in an identifier word before a measured value (blind corpus c32, false reject 3).

"First charted prothrombin time in the stay: 13.2 sec": "stay:" was read as an identifier label, so
13.2 was no candidate. Identifiers of patients, admissions and stays are whole numbers: a number with
a fractional part after such a word is a value, not an identifier (``verifier.match.commit``).
"""

import pytest

from verifier.contract import AnswerPolicy, QuantityAnswer
from verifier.match import match_answer

_REF = QuantityAnswer(value=13.2, unit="sec", decimals=1)
_POLICY = AnswerPolicy(decimals=1, db_unit="sec")


def test_value_after_stay_label_is_the_answer():
    res = match_answer("First charted prothrombin time in the stay: 13.2 sec "
                       "(typical adult reference roughly 11-13.5 sec)", _REF, _POLICY)
    assert res.ok, res.details


@pytest.mark.parametrize("text", [
    "in the stay: 13.2 sec or 14.1 sec",           # an alternative is still a hedge
    "in the stay: 13.2 sec, 14.1 sec",             # two values are still two candidates
    "in the stay: 14.1 sec",                       # a wrong value is still wrong
    "stay 35889503: 14.1 sec (first of 13.2 sec and 14.1 sec)",
])
def test_hedges_and_wrong_values_after_the_label_still_fail(text):
    assert not match_answer(text, _REF, _POLICY).ok


def test_whole_identifiers_are_still_context():
    assert match_answer("stay 35889503: 13.2 sec", _REF, _POLICY).ok
