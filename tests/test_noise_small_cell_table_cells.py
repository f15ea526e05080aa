"""Table cells are clauses for the small-cell aggregate rule (blind corpus c32, false reject 4).

"| 220181 NBP mean | mmHg | 1902 | 40 |" under a header "charted values": "mean" is part of the item's
name in one cell, and 1902 (a count of measurements of the whole item) stands in another cell. An
aggregate word states the number in its own cell; across a cell border (``|``) it states nothing. A
table whose header names an aggregate, or a cell holding an aggregate word and its number, still
discloses.
"""

import pytest

from verifier.abstention._small_cell import disclosure

_Q = "In how many ICU stays was a Non Invasive Blood Pressure mean (ICU item 220181) above 94 mmHg charted?"


def test_aggregate_word_in_another_cell_discloses_nothing():
    text = ("NULL\n| item | unit | charted values | ICU stays with any value |\n|---|---|---|---|\n"
            "| 220181 NBP mean | mmHg | 1902 | 40 |\n\n"
            "- Fewer than five ICU stays have a value above 94 mmHg [step 2]; under the five-unit rule the "
            "count is not disclosed, answer NULL.")
    assert disclosure(text, 2, given=_Q) == []


@pytest.mark.parametrize("text", [
    "NULL\n| item | unit | values |\n|---|---|---|\n| NBP mean 96.5 | mmHg | 1902 |",        # word and number in one cell
    "NULL\n| item | unit | stays above 94 |\n|---|---|---|\n| NBP mean | mmHg | 2 |",       # the count in a cell
])
def test_aggregates_and_counts_in_tables_still_disclose(text):
    assert disclosure(text, 2, given=_Q) != []


@pytest.mark.xfail(strict=True, reason="gap already on main (not from this change): a column headed by an aggregate "
                   "word without an eligibility word ('mean NBP') is not read as aggregates over the cohort")
def test_aggregate_named_by_the_header_alone():
    assert disclosure("NULL\n| cohort | mean NBP |\n|---|---|\n| stays above 94 mmHg | 96.5 |", 2, given=_Q) != []


# -- a column of counts with notes (blind corpus c32, false reject 7: the readmission table) -----------------

_Q29 = ("Count the OBSERVATION ADMIT admissions after which the patient was readmitted within 3 days "
        "(next admission minus discharge).")


def test_column_of_counts_with_notes_lists_groups_not_units():
    text = ("{\"answer\": null}\n| cohort | admissions |\n|---|---|\n"
            "| OBSERVATION ADMIT admissions | 45 (22 patients) |\n"
            "| \u2026followed by a readmission within 3 days | fewer than five |\n\n"
            "- 45 OBSERVATION ADMIT admissions exist [step 2].\n"
            "- Under the five-unit rule the count is not disclosed; answer NULL.")
    assert disclosure(text, 2, given=_Q29) == []


@pytest.mark.parametrize("text", [
    # the cohort's count in a noted cell
    "NULL\n| cohort | admissions |\n|---|---|\n| all OBSERVATION ADMIT | 45 |\n| readmitted within 3 days | 2 (2 patients) |",
    # rows that are units (identifiers), with notes
    "NULL\n| admissions |\n|---|\n| 24928679 (gap 3.8 days) |\n| 23132022 (gap 1.5 days) |",
])
def test_counts_and_units_in_noted_tables_still_disclose(text):
    assert disclosure(text, 2, given=_Q29) != []
