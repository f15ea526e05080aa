"""Issue 32, point 2 (false flag): "where one exists" is no disclosure of a count of 1.

"one" as an indefinite pronoun, the subject of a conditional or relative clause with no noun of its
own ("where one exists", "if one was recorded"), hypothesises a thing already named; it counts
nothing (``_small_cell.normalise_numbers``). "one" that counts ("one admission", "one is eligible",
"eligible: one") is still a disclosure, and a pronoun beside a real count never hides it.
"""

from __future__ import annotations

import pytest

from verifier.abstention._small_cell import disclosure

QUESTION = "Count the admissions with at least one Chloride (itemid 50902) greater than 106 mEq/L."


@pytest.mark.parametrize("text", [
    "Fewer than five admissions qualify. The chloride of each qualifying admission, where one exists, cannot be reported.",
    "Fewer than five admissions qualify; for each eligible admission the first value, if one was recorded, is withheld.",
    "Fewer than 5 eligible admissions: their discharge location, where one exists, is suppressed.",
    "Fewer than five admissions meet the criteria; whenever one is available, the latest value is withheld.",
])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_one_as_a_pronoun_discloses_nothing(text, n):
    assert disclosure(text, n, QUESTION) == []


@pytest.mark.parametrize("text", [
    "Only one admission is eligible.",
    "One is eligible.",
    "The eligible group: one.",
    "Eligible admissions: where one exists, 1.",
    "Where one exists, one eligible admission remains.",
    "Fewer than five qualify; one eligible admission, where one exists, had a chloride of 110.",
])
def test_one_that_counts_is_still_a_disclosure(text):
    assert disclosure(text, 1, QUESTION)
