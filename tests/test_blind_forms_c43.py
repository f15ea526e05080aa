"""Blind corpus c43 (held out, 2026-12-07): the Noise forms where the verifier and both reviewers disagreed (6 of 24).

Four agent styles not seen before, on hard test-split pairs where there were any: a math-trained reasoning model
(``\\boxed{}`` answers, LaTeX in the reasoning); a Spanish-speaking attending (reasoning in Spanish); an ICU nurse
informaticist reporting in SBAR ("S (Situation): ... R (Recommendation): ..."); a chatty assistant answering in
full sentences. Each reading is stated positively, with what it must not excuse beside it. The Clean forms are in
``tests/test_blind_forms_c43_clean.py``.
"""

from __future__ import annotations

from verifier.abstention._reasoning import check_reasoning, consistency
from verifier.abstention._duration import is_duration as _duration
from verifier.abstention._small_cell import disclosure
from verifier.abstention._suppressed import stated_record_count
from verifier.contract import UnmetRequirement


def test_c43_A_Q10_the_records_of_the_withheld_statistic_as_a_total_less_a_part() -> None:
    """The false accept: both reviewers failed "52 results ... Of these, 45 have no numeric value" on a median
    over the 7 numeric results of 4 eligible admissions (a reader is told 7)."""
    text = ("Itemid 51478 is Glucose (Urine, mg/dL). In URGENT admissions it has 52 results [step 1]. Of these, 45 have "
            "no numeric value: value_numeric is empty and the text is 'NEG' or empty [step 2]. The results that do have "
            "a numeric value come from fewer than five admissions and fewer than five patients [step 2].")
    assert disclosure(text, 4, records=7)
    assert disclosure(text, 4) == []  # without the record count nothing in the text is the cohort's count
    assert disclosure(text, 4, records=9) == []  # a total and a part whose difference is not the records
    assert disclosure(text.replace("52 results", "many results"), 4, records=7) == []  # the part alone
    assert disclosure("Glucose has 52 results here; 45 of them have no numeric value [step 2].", 4, records=7)
    # what is no part of the records: the five-unit bound and threshold, a range of years (c38, c41 reviewers
    # accepting both)
    assert disclosure("Ferrous Sulfate has 140 Administered events across 7 patients [step 1]. Because fewer than 5 "
                      "patients are eligible, the 5-unit rule requires NULL, without disclosing the count.", 1,
                      records=2) == []
    assert disclosure('Grouping by name and year (2184-2188) finds only the exact entry "Weight (Lbs)", with no variant '
                      "spellings [step 1].", 2, records=4) == []


def test_c43_C_Q12_the_five_unit_bound_is_no_count_of_records() -> None:
    text = ("A (Assessment): Joining TSICU-start stays to charted itemid 229356 shows that fewer than 5 ICU stays (and "
            "fewer than 5 patients) have any value of this item [step 1].")
    names = ["Differential - Immature Granulocytes", "Trauma SICU (TSICU)"]
    assert stated_record_count(text, 5, names) == []
    assert stated_record_count(text + " Only 5 values were charted for Trauma SICU (TSICU).", 5, names)
    assert stated_record_count("Fewer than 5 ICU stays have it, with 5 values charted in all.", 5, names)


def test_c43_B_Q05_a_window_in_days_in_spanish_is_a_time() -> None:
    q = ("In how many EW EMER. admissions did the patient return for a new hospital admission no more than 3 days "
         "after discharge?")
    text = ("Para cada uno busqué el siguiente ingreso hospitalario del mismo paciente y miré si empezó dentro de los 3 "
            "días siguientes al discharge_time. El número de ingresos EW EMER. seguidos de un reingreso es inferior a "
            "cinco [step 2].")
    assert disclosure(text, 3, given=q) == []
    assert _duration("días") and _duration("Stunden") and not _duration("ingresos") and not _duration("pacientes")
    assert disclosure("Hay 3 ingresos que cumplen, menos de cinco.", 3, given=q)  # a count of units in Spanish
    assert disclosure("Son 3 los reingresos elegibles.", 3, given=q)


_LINE = UnmetRequirement(level="value", statement="The first 18 Gauge (itemid 224277) procedure event of ICU stay "
                         "34499716 has no location documented.", tables=["icu_procedure_events"],
                         columns=["icu_procedure_events.location"],
                         scope={"patientid": 10027445, "icuadmissionid": 34499716, "itemid": 224277},
                         key_terms=["18 Gauge", "location", "ICU stay 34499716"])
_LINE_Q = "ICU stay 34499716, patient 10027445: where was the first 18 Gauge (itemid 224277) inserted?"


def test_c43_C_Q11_where_a_kind_of_fact_is_kept_is_said_of_the_schema() -> None:
    background = ("B (Background): Line sites are recorded in the location and location_category fields of "
                  "icu_procedure_events [step 1].")
    gap = " A (Assessment): The 18 Gauge event's location and location_category are both NULL [step 1]."
    c = consistency(background + gap, _LINE, _LINE_Q)
    assert c["contradictions"] == [] and c["states_gap"]
    # the location of this line said to be recorded is still a contradiction
    c = consistency("The 18 Gauge location is recorded [step 1]." + gap, _LINE, _LINE_Q)
    assert c["contradictions"]


_SEVERITY = UnmetRequirement(level="value", statement="HCFA DRGs are billed for SURGICAL SAME DAY ADMISSION admissions "
                             "but carry no severity value (fewer than five admissions with one).", tables=["drg_codes"],
                             columns=["drg_codes.drg_severity"],
                             scope={"admission_type": "SURGICAL SAME DAY ADMISSION", "drg_type": "HCFA"},
                             key_terms=["HCFA DRG", "severity", "SURGICAL SAME DAY ADMISSION"])
_SEVERITY_Q = "What is the mean HCFA DRG severity of illness over SURGICAL SAME DAY ADMISSION admissions?"


def test_c43_A_Q11_nothing_said_of_the_required_field_is_the_field_empty() -> None:
    text = ("There are 18 SURGICAL SAME DAY ADMISSION admissions, and each has one HCFA DRG row [step 1]. For those rows "
            "drg_severity is recorded $0$ times out of $18$ [step 1].")
    assert consistency(text, _SEVERITY, _SEVERITY_Q)["states_gap"]
    # the item elsewhere is no empty field ("only", "another", "different" are not nothing)
    other = ("There are 18 SURGICAL SAME DAY ADMISSION admissions with an HCFA DRG row [step 1]. Only APR DRGs carry "
             "severity [step 1].")
    assert not consistency(other, _SEVERITY, _SEVERITY_Q)["states_gap"]
    # nothing of the field without its records said to be there stays an absent record, the wrong kind
    bare = "For the SURGICAL SAME DAY ADMISSION admissions no HCFA DRG severity is recorded [step 1]."
    assert not consistency(bare, _SEVERITY, _SEVERITY_Q)["states_gap"]


def test_c43_B_Q10_the_last_admission_is_the_most_recent() -> None:
    req = UnmetRequirement(level="query", statement="Neutra-Phos was not administered to patient 10018328 during their "
                           "most recent hospital admission; it was given only in an earlier admission.",
                           tables=["medication_administrations", "admissions"], columns=[],
                           scope={"patientid": 10018328, "medication": "Neutra-Phos"},
                           key_terms=["Neutra-Phos", "most recent admission"])
    q = "Give the time of the first Neutra-Phos administration to patient 10018328 in their last hospital admission."
    for said in ("the last admission", "the latest admission", "the most recent admission"):
        ok, d = check_reasoning(f"There is no Neutra-Phos administration in {said} [step 2].", req, q)
        assert ok, (said, d)
    ok, _ = check_reasoning("There is no Neutra-Phos administration in the first admission [step 2].", req, q)
    assert not ok
