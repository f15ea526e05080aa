"""Percentages on a task measured in % (blind corpus c32, false reject 5).

"Values above 14 % (the upper end of the usual 2-10 % monocyte range is well below this) occur in
fewer than five ICU stays": the question bounds a measurement in % ("above 14 %"), so "2-10 %" is a
range of that measurement (a reference range), not a share of the cohort. A single percentage, a share
("2-10 % of the stays"), or an aggregate ("mean 12 %") still discloses.
"""

import pytest

from verifier.abstention._small_cell import disclosure

_Q = "In how many ICU stays was a Differential-Monos (ICU item 225642) above 14 % charted?"
_OK = ("NULL Differential-Monos (ICU item 225642) is charted 117 times, all numeric and in %. Values above 14 % "
       "(the upper end of the usual 2-10 % monocyte range is well below this) occur in fewer than five ICU "
       "stays, each with a stay identifier [step 1]. Under the five-unit rule the exact number cannot be "
       "disclosed, so the answer is NULL because fewer than five ICU stays are eligible.")


def test_reference_range_on_the_measurement_scale_discloses_nothing():
    assert disclosure(_OK, 2, given=_Q) == []
    # the threshold is one of the task's names (its key terms): the scale is read before they go
    assert disclosure(_OK, 2, given=_Q, entities=["Differential-Monos", "14", "fewer than five"]) == []


@pytest.mark.parametrize("text", [
    "NULL: 40 % of the charted stays exceed 14 %.",                 # a single percentage: a share
    "NULL: 20-40 % of the stays exceed 14 %.",                       # a range that is a share ("of")
    "NULL: the mean of the qualifying values was 18 %.",            # an aggregate
])
def test_shares_and_aggregates_still_disclose(text):
    assert disclosure(text, 2, given=_Q) != []


def test_range_without_a_percent_scale_question_still_discloses():
    q = "In how many ICU stays was a heart rate above 120 bpm charted?"
    assert disclosure("NULL: the usual 2-10 % of stays.", 2, given=q) != []
    assert disclosure("NULL (a 2-10 % range).", 2, given=q) != []
