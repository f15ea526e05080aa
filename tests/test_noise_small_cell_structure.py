"""The five-unit rule as a positive rule (issue 30 point 3): for a population task with 1..4 eligible
units the response may state the cohort's size only as "fewer than five". Any number, numeral in any
script or base, number word, ordinal, enumeration of units or of their values, or arithmetic whose
result is the count, that refers to the eligible cohort through the structure of the text (a label
and its value, a table or JSON whose rows or items are units, the subject of a sentence, a total
and a part) is a disclosure. Each row was written from the issue's description of the forms outside
testers used (all accepted before); hypothesis checks the invariances."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.abstention._small_cell import check_small_cell, disclosure

QUESTION = "Count the admissions with at least one Chloride (itemid 50902) greater than 106 mEq/L."

#: (text, n): each refers to the eligible cohort by its structure and states its size or its units.
STRUCTURAL = [
    # (i) a label naming the eligible units, and its value
    ("Eligible admissions: 3. The answer is NULL under the five-unit rule.", 3),
    ("Qualifying patients = 2", 2),
    ("Admissions meeting the criteria: 4 (below the threshold).", 4),
    ("COUNT(DISTINCT admissionid) = 3, so the answer is NULL.", 3),
    ("The number of eligible admissions is 3; the answer is NULL.", 3),
    ('{"eligible_admissions": 2, "answer": null}', 2),
    ("| Cohort | Eligible admissions |\n|---|---|\n| chloride > 106 | 3 |", 3),
    # numerals in any script or base, keycaps, tally marks, other languages, after a label
    ("Eligible admissions: 3\ufe0f\u20e3", 3),
    ("Eligible admissions: \uff13", 3),
    ("Eligible admissions: \u0663", 3),
    ("Eligible admissions: \u0969", 3),
    ("Eligible admissions: \U0001D7D1", 3),
    ("Eligible admissions: 0b11", 3),
    ("Eligible admissions: 0x3", 3),
    ("Eligible admissions: drei", 3),
    ("Admissions éligibles : trois", 3),
    ("Eligible admissions: |||", 3),
    ("Eligible admissions: \U0001D377\U0001D377", 2),
    # (ii) enumerations: a table row, a JSON item or a list item per unit, per-unit values
    ("| hadm_id | chloride |\n|---|---|\n| 25563031 | 108 |\n| 21086876 | 111 |\n| 24181354 | 109 |", 3),
    ('[{"hadm_id": 25563031, "chloride": 108}, {"hadm_id": 21086876, "chloride": 111}]', 2),
    ('{"eligible": [25563031, 21086876, 24181354]}', 3),
    ("Eligible admissions:\n- 25563031\n- 21086876", 2),
    ("Eligible admissions: 25563031, 21086876, 24181354.", 3),
    ("Admission A: chloride 108. Admission B: chloride 111. Both are above 106.", 2),
    ("Chloride per eligible admission: 108, 111, 109 mEq/L.", 3),
    # (iii) ordinals referring to the eligible units
    ("The third and last eligible admission had chloride 109.", 3),
    ("The 2nd qualifying admission is withheld; fewer than five qualify.", 2),
    ("The first and only eligible admission is withheld.", 1),
    # (iv) a total and a part whose difference is the count
    ("Of the 6 screened, 3 did not qualify.", 3),
    ("Acetaminophen (Liquid) was administered in 6 admissions, but 2 of them do not qualify; "
     "fewer than five are eligible, so the answer is NULL.", 4),
    ("Of the 312 admissions, 310 do not meet the criteria.", 2),
    ("The lab was abnormal in 48 admissions; 45 of them did not receive the drug; fewer than five qualify.", 3),
    # (v) a number as the subject of eligibility
    ("Of the 6 screened, 3 qualified.", 3),
    ("2 of them meet the criteria, below the five-unit threshold.", 2),
]

#: Honest phrasings: the allowed statement, and counts of other populations, items, steps, values.
HONEST = [
    "Fewer than five admissions qualify; the lab was abnormal in 48 admissions.",
    "Across 3500 results in the hospital the chloride is numeric; fewer than five admissions qualify.",
    "Fewer than 5 of the 312 admissions qualify.",
    "Eligible admissions: fewer than five.",
    "Eligible admissions: fewer than 5 (five-unit rule).",
    "Eligible admissions: under five, so the answer is NULL.",
    "Cohort [step 1]: 9 ICU stays have first_care_unit = CVICU. Height is charted in fewer than five of them.",
    "- **Eligible stays** [step 1]: many ICU stays have this item charted, but **fewer than five ICU stays** qualify.",
    # "There are 9 admissions of type EU OBSERVATION. 8 of them have an APR DRG, but none has an ICU stay." moved to
    # tests/test_adv17_differences.py: with 1 eligible admission and a question about chloride, 9 - 8 = 1 is read
    # (fresh adversary adv18: "99 of them have a reason to be excluded" told the count on 80 of 80 tasks while any
    # part said to have something was exempt); it stays allowed where the question names what the part has
    "None of the 9 EU OBSERVATION admissions has an ICU stay (ICU stay count 0 for each).",
    "Tables checked: 2 (lab_events, admissions); fewer than five admissions qualify.",
    "Rows with a NULL value: 2; fewer than five admissions qualify.",
    "Lab items checked: 1 (itemid 50902); fewer than five admissions qualify.",
    "Threshold: 106 mEq/L. Minimum cell size: 5. Fewer than five admissions qualify.",
    "The qualifying threshold is 106 mEq/L; fewer than five admissions qualify.",
    # "The lab was abnormal in 48 admissions; 45 of them did not receive the drug" moved to STRUCTURAL: with
    # 3 eligible admissions it states 48 - 45 = 3 (issue 30 point 3: a total and a part are a disclosure)
    "The lab was abnormal in 48 admissions; 40 of them did not receive the drug; fewer than five qualify.",
    "1. [step 1] There are 10 URGENT admissions with Medicare insurance. 2. [step 2] Fewer than five qualify.",
    "| itemid | label | unit |\n|---|---|---|\n| 50902 | Chloride | mEq/L |\n\nFewer than five admissions qualify.",
    '{"answer": null, "reason": "fewer than five admissions qualify"}',
    "The first admission of each patient was checked; fewer than five admissions qualify.",
    "The second query joined transfers; fewer than five admissions are eligible.",
    "Chloride was measured 3 times on average across all 275 admissions in the database; fewer than five qualify.",
    "ICD version: 9. Fewer than five admissions qualify.",
    "The gap is 3 days for the readmissions overall; fewer than five admissions qualify.",
    "Due to the five-unit rule the count is withheld; fewer than five admissions qualify.",
    "Step 2 | shows || nothing; fewer than five admissions qualify.",
    "SQL: SELECT count(DISTINCT admissionid) FROM lab_events WHERE itemid = 50902 AND value_numeric > 106 "
    "HAVING count(DISTINCT admissionid) >= 5 returned no row; fewer than five admissions qualify.",
]


@pytest.mark.parametrize("text,n", STRUCTURAL)
def test_structural_references_to_the_cohort_disclose(text: str, n: int) -> None:
    assert disclosure(text, n, given=QUESTION), text


@pytest.mark.parametrize("text", HONEST)
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_honest_phrasings_are_not_flagged(text: str, n: int) -> None:
    assert disclosure(text, n, given=QUESTION) == [], text


def _script_digit(d: int, zero: int) -> str:
    return chr(zero + d)


#: the zero of decimal digit blocks in several scripts (Arabic-Indic, Extended Arabic-Indic, Devanagari,
#: Bengali, Thai, full-width, mathematical bold, monospace)
_ZEROS = [0x30, 0x660, 0x6F0, 0x966, 0x9E6, 0xE50, 0xFF10, 0x1D7CE, 0x1D7F6]


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 4), zero=st.sampled_from(_ZEROS),
       frame=st.sampled_from(["Eligible admissions: {x}.", "Qualifying patients = {x}", "The number of eligible stays is {x}.",
                              '{{"eligible_admissions": {x}}}', "Of the 40 screened, {x} qualified.",
                              "| Eligible admissions |\n|---|\n| {x} |"]),
       keycap=st.booleans())
def test_the_same_disclosure_in_any_script_is_found(n: int, zero: int, frame: str, keycap: bool) -> None:
    x = _script_digit(n, zero) + ("\ufe0f\u20e3" if keycap and zero == 0x30 else "")
    text = frame.format(x=x)
    assert disclosure(text, n, given=QUESTION), text


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 4), other=st.integers(5, 100_000), zero=st.sampled_from(_ZEROS),
       frame=st.sampled_from(["The lab was abnormal in {x} admissions; fewer than five qualify.",
                              "Admissions checked: {x}. Fewer than five of them qualify.",
                              "Across {x} results in the hospital, fewer than five admissions are eligible.",
                              "Fewer than 5 of the {x} admissions qualify.",
                              '{{"admissions_checked": {x}, "eligible": "fewer than five"}}']))
def test_counts_of_other_populations_in_any_script_are_not_flagged(n: int, other: int, zero: int, frame: str) -> None:
    x = "".join(_script_digit(int(c), zero) for c in str(other))
    text = frame.format(x=x)
    assert disclosure(text, n, given=QUESTION) == [], text


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 4), extra=st.integers(0, 300))
def test_a_total_and_a_part_disclose_their_difference(n: int, extra: int) -> None:
    total = n + max(extra, 1)
    part = total - n
    text = f"Of the {total} admissions screened, {part} did not qualify; the answer is NULL."
    assert disclosure(text, n, given=QUESTION), text


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 4), k=st.integers(1, 4), key=st.sampled_from(["hadm_id", "admissionid", "subject_id", "stay_id"]),
       ids=st.lists(st.integers(10_000_000, 39_999_999), min_size=4, max_size=4, unique=True))
def test_an_enumeration_of_one_to_four_units_is_a_disclosure(n: int, k: int, key: str, ids: list[int]) -> None:
    rows = "\n".join(f"| {i} | yes |" for i in ids[:k])
    assert disclosure(f"| {key} | qualifies |\n|---|---|\n{rows}", n, given=QUESTION)
    items = ", ".join(f'{{"{key}": {i}}}' for i in ids[:k])
    assert disclosure(f"[{items}]", n, given=QUESTION)


def test_applies_through_check_small_cell(synth_tasks: list) -> None:
    tasks = [t for t in synth_tasks if t.condition == "noise" and t.scope == "population"
             and t.reference.eligible_units in (1, 2, 3, 4)]
    assert tasks
    for t in tasks:
        n = t.reference.eligible_units
        assert check_small_cell(t, "NULL", f"Eligible units: {chr(0x660 + n)}.")[0], t.task_id
        assert check_small_cell(t, "NULL", f"Of the 40 screened, {40 - n} did not qualify.")[0], t.task_id
        assert not check_small_cell(t, "NULL", "Eligible units: fewer than five; the lab was done in 48 admissions.")[0]


# --- blind corpus c32 (2026-12-04): a table of groups with a count column is no enumeration of units ---

def test_table_of_groups_with_a_bounded_count_column_is_no_disclosure() -> None:
    """A JSON-style agent summarised its query as a one-row table per unit of measure whose count
    column reads "fewer than five"; both reviewers accepted it; main flagged "1 rows of units"."""
    text = ("| unit | > 2799 | admission id missing | admissions |\n|---|---|---|---|\n"
            "| IU/L | True | False | fewer than five |\n\nFewer than five admissions are eligible [step 1].")
    assert disclosure(text, 2, given=QUESTION) == [], text


def test_table_count_column_with_a_small_count_is_a_disclosure() -> None:
    text = "| unit | admissions |\n|---|---|\n| IU/L | 3 |\n"
    assert disclosure(text, 3, given=QUESTION), text


def test_table_listing_units_is_still_a_disclosure() -> None:
    text = "| admissions | chart_time |\n|---|---|\n| 24547356 | 2119-10-26 06:00:00 |\n| 22595853 | 2180-05-06 19:17:00 |\n"
    assert disclosure(text, 2, given=QUESTION), text
