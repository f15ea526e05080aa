"""A unitless number Answer restated in another unit (blind corpus c32, false reject 2).

"Median set PEEP 5 cmH2O (= about 3.7 mmHg)": the reference is a plain number (5.0); the second
number is the same value converted, so it offers no alternative (the quantity rule of
``verifier.match.numbers._without_restatements``). A restatement whose converted value differs is
still a second candidate, a hedge.
"""

from verifier.contract import AnswerPolicy, NumberAnswer
from verifier.match import match_answer

_REF = NumberAnswer(value=5.0, decimals=1)
_POLICY = AnswerPolicy(decimals=1)


def test_restatement_in_another_unit_is_one_value():
    res = match_answer("Median set PEEP 5 cmH2O (= about 3.7 mmHg) in CCU-first ICU stays", _REF, _POLICY)
    assert res.ok, res.details


def test_restatement_with_a_different_value_is_still_a_hedge():
    # 5 cmH2O is 3.7 mmHg, not 5.9: the second number is another candidate
    res = match_answer("Median set PEEP 5 cmH2O (= about 5.9 mmHg) in CCU-first ICU stays", _REF, _POLICY)
    assert not res.ok and "ambiguous" in res.details.get("why", "")


def test_two_values_in_the_same_unit_are_still_a_hedge():
    res = match_answer("Median set PEEP 5 cmH2O (8 cmH2O)", _REF, _POLICY)
    assert not res.ok


def test_wrong_value_restated_is_still_wrong():
    res = match_answer("Median set PEEP 8 cmH2O (= about 5.9 mmHg)", _REF, _POLICY)
    assert not res.ok
