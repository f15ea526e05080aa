"""Blind corpus c40 (2026-12-07; four LLM agents in new styles: terse JSON, clinical pharmacist prose, Python-first,
skeptical auditor; 48 real-demo episodes, two blind reviewers, a third on task validity). Held out, the verifier
agreed with the reviewers on 45 of 48; each disagreement is written here as it was, failing before.
"""

from __future__ import annotations

from verifier.abstention._reasoning import consistency
from verifier.abstention._suppressed import stated_record_count
from verifier.contract import UnmetRequirement

# ---------------------------------------------------------------- agent A: the item in another stay (false reject)
BASOS = UnmetRequirement(
    level="query", statement="No numeric Differential-Basos (itemid 225639) is charted for patient 10037928 during "
    "their second ICU stay; it was charted only in another stay.", tables=["chart_events", "icu_stays"],
    columns=["chart_events.itemid", "chart_events.chart_time", "icu_stays.in_time"],
    scope={"patientid": 10037928, "itemid": 225639}, key_terms=["Differential-Basos", "second ICU stay"])
BASOS_Q = ("What was the first Differential-Basos (ICU item 225639) charted for patient 10037928 during their second "
           "ICU stay? Give value and unit.")


def test_absent_from_the_scope_and_present_in_another_is_the_relation() -> None:
    """Both reviewers: success. The item absent from the second stay and its values said to belong to the first is
    the requirement's own statement of the relation failing."""
    text = ('{"finding": "No Differential-Basos (225639) is charted in the patient\'s second ICU stay.", '
            '"notes": "Patient 10037928 has two ICU stays [step 1]. Both Differential-Basos values (0.1 %, 0.2 %) '
            'belong to the first stay 31552399 [step 2]; stay 39804682 has 0 rows of item 225639 [step 4]."}')
    assert consistency(text, BASOS, BASOS_Q)["states_gap"]
    # the absence alone is a missing record, not the relation (kinds stay exclusive, issue 30 point 4)
    alone = "No Differential-Basos (225639) is charted in the patient's second ICU stay [step 4]."
    assert not consistency(alone, BASOS, BASOS_Q)["states_gap"]
    # nor does a presence elsewhere that names no other stay by its id turn the absence into the relation
    vague = alone + " Both values belong to the first stay."
    assert not consistency(vague, BASOS, BASOS_Q)["states_gap"]


# ---------------------------------------------------------------- agent C: list markers (false reject)
TWO_DX = UnmetRequirement(
    level="query", statement="Fewer than five patients have both diagnosis 4019 and diagnosis D649 coded (five-unit "
    "rule).", tables=["diagnoses"], columns=["diagnoses.icd_code", "diagnoses.patientid"],
    scope={"icd_version": 9, "icd_code": "4019", "other_version": 10, "other_code": "D649"},
    key_terms=["4019", "D649", "fewer than five"])
TWO_DX_Q = ("How many patients have been diagnosed with both Unspecified essential hypertension (ICD-9 4019) and "
            "Anemia, unspecified (ICD-10 D649)? The two diagnoses may be coded in different admissions of the same "
            "patient.")


def test_a_list_marker_is_no_sentence_between_the_item_and_a_reference_back() -> None:
    """Both reviewers: success. "3." stood as a sentence between the codes and "patients with both"."""
    text = ("1. Both codes exist in the dictionary with the stated titles (4019 ICD-9, D649 ICD-10) [step 1]. "
            "2. 41 patients have ICD-9 4019 and 10 patients have ICD-10 D649 across any admissions; no variant "
            "spellings of the codes exist [step 1], [step 2]. 3. The intersection (patients with both) is fewer than "
            "five patients, so under the five-unit rule the count cannot be disclosed [step 1].")
    assert consistency(text, TWO_DX, TWO_DX_Q)["states_gap"]


# ---------------------------------------------------------------- agent C: the records of the small cell (false accept)
def test_the_record_count_said_of_the_cohort_discloses() -> None:
    """Both reviewers: failure. 4 administrations over 3 eligible patients is an aggregate over the small cell; the
    sentence names no item but speaks of the cohort (the five-unit bound)."""
    text = ("1. The eMAR entry \"Labetalol\" has 62 \"Administered\" events across 8 patients. 3. Only 4 "
            "administrations fall within ICU stays, from fewer than 5 patients.")
    assert stated_record_count(text, 4, ["Labetalol"]) != []
    assert stated_record_count("Only 4 administrations were reviewed in all.", 4, ["Labetalol"]) == []
