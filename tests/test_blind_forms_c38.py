"""Forms of the blind corpus c38 (2026-12-06; six more agent styles on the real demo, two blind reviewers each,
a third on their one split; held out: scored before any of its fixes, 56/72, 0 false accepts).

A French-speaking clinician (French read as Spanish; "mmol/L" rewritten; "à" read as "a"); an API-minded agent
whose "evidence_steps": [1, 2] was read as a count; a tabulator's one-cell NULL table; a symbol-heavy note-taker
("= ∅ → NULL"); an over-explainer whose first sentence is the value; a clinician in relative time ("on hospital
day 2"). Beside each, what must still fail.
"""

from __future__ import annotations

import pytest

from verifier.abstention._reasoning import consistency
from verifier.abstention._small_cell import disclosure
from verifier.contract import AnswerPolicy, DatetimeAnswer, NumberAnswer, QuantityAnswer, UnmetRequirement
from verifier.match.dispatch import match_answer
from verifier.match.language import detect, to_english
from verifier.parse import is_null_answer


# ---------------------------------------------------------------- French (agent X)
FR = ("Le code ICD-9 8628 correspond bien à « Nonexcisional debridement of wound, infection or burn » [step 1]. Dans "
      "la table procedures, ce code (icd_version 9) n’est enregistré que chez moins de cinq patients distincts [step 2].")


def test_french_is_told_from_spanish_by_the_most_markers() -> None:
    lang = detect(FR)
    assert lang is not None and lang.code == "fr"
    assert "fewer than five patients" in to_english(FR, lang)


def test_a_unit_joined_to_a_slash_is_never_rewritten() -> None:
    text = "1,25 mmol/L (2196-06-14 17:16:00). Le patient a trois hospitalisations ; la deuxième est l'admission 25970245."
    lang = detect(text)
    assert lang is not None and "1.25 mmol/L" in to_english(text, lang)
    assert match_answer(to_english("1,25 mmol/L (2196-06-14 17:16:00)", lang),
                        QuantityAnswer(value=1.25, unit="mmol/L", decimals=2), AnswerPolicy(decimals=2)).ok


def test_a_scale_labelled_without_equals_is_context() -> None:
    ref, pol = NumberAnswer(value=3.0, decimals=0), AnswerPolicy(decimals=0)
    assert match_answer("drg_severity = 3 (major severity, on a scale of 1 minor to 4 extreme)", ref, pol).ok
    assert match_answer("3 (scale of 1 (minor) to 4 (extreme))", ref, pol).ok
    assert not match_answer("3 or 4 (scale of 1 minor to 4 extreme)", ref, pol).ok


# ---------------------------------------------------------------- a one-cell NULL table (agent Z)
@pytest.mark.parametrize("answer, null", [
    ("| median doses per 24 h |\n|---|\n| NULL |", True),
    ("| a | b |\n|---|---|\n| NULL | NULL |", True),
    ("| a | b |\n|---|---|\n| NULL | 5 |", False),
    ("| patients |\n|---|\n| 3 |", False),
])
def test_a_table_of_nulls_is_an_abstention(answer: str, null: bool) -> None:
    assert is_null_answer(answer) is null


def test_a_null_table_row_is_no_unit_and_differently_spelled_is_no_riddle() -> None:
    assert disclosure("| patients |\n|---|\n| NULL |", 4) == []
    assert disclosure('A differently spelled entry is a different item, so the eligible patients are those '
                      'prescribed "Azithromycin ".', 4) == []
    assert disclosure("The cohort size, spelled out, is four.", 4) != []


# ---------------------------------------------------------------- the value as the first sentence (agent AB)
def test_a_first_sentence_that_is_the_value_commits() -> None:
    dt = DatetimeAnswer(value="2175-03-22T10:32:00", precision="minute")
    text = ("2175-03-22 10:32:00. This is the chart time of the first eMAR event for Pantoprazole with status "
            "Administered in admission 21133938. It is the first one after the first abnormal count at 2175-03-21 06:41:00.")
    assert match_answer(text, dt, AnswerPolicy()).ok
    ref, pol = NumberAnswer(value=3.0, decimals=0), AnswerPolicy(decimals=0)
    assert match_answer("3 (major). The scale runs from 1 (minor) to 4 (extreme), so 3 is major risk.", ref, pol).ok
    assert not match_answer("3. It could also be 4.", ref, pol).ok
    assert not match_answer("3. If the other record is used, 4.", ref, pol).ok


# ---------------------------------------------------------------- an index is no quantity (agent AC)
def test_a_day_index_is_no_candidate() -> None:
    ref, pol = QuantityAnswer(value=500.0, unit="mg", decimals=2), AnswerPolicy(decimals=2)
    text = ("500 mg (first 'Administered' MetroNIDAZOLE dose, given on hospital day 2, about 18.5 h after admission, "
            "at 2147-12-30 14:07:00; dispensed as Metronidazole 500 mg / 100 mL NS)")
    assert match_answer(text, ref, pol).ok
    assert not match_answer("500 mg or 2", ref, pol).ok
    assert not match_answer("500 mg, 250 mg on day 3", ref, pol).ok


# ---------------------------------------------------------------- what the Reasoning asserts (agents Y, AC, AA)
def test_a_record_is_asserted_by_all_its_terms_and_a_column_by_its_whole_name() -> None:
    lounge = UnmetRequirement(level="record", statement="No Atorvastatin was administered on the Discharge Lounge.",
                              tables=["medication_administrations", "transfers"], columns=["medication_administrations.medication"],
                              scope={"medication": "Atorvastatin", "care_unit": "Discharge Lounge"},
                              key_terms=["Atorvastatin", "Discharge Lounge"])
    assert not consistency("The care unit Discharge Lounge exists in transfers [step 1].", lounge)["contradictions"]
    assert consistency("Atorvastatin given on the Discharge Lounge is recorded [step 1].", lounge)["contradictions"]
    loc = UnmetRequirement(level="value", statement="The discharge location of admission 27670224 is NULL.",
                           tables=["admissions"], columns=["admissions.discharge_location"],
                           scope={"admissionid": 27670224}, key_terms=["discharge location", "admission 27670224"])
    text = "So the discharge itself is documented, but no discharge location is recorded [step 1]."
    assert not consistency(text, loc)["contradictions"]
    assert consistency("The discharge location is documented [step 1].", loc)["contradictions"]


def test_symbols_read_as_words() -> None:
    req = UnmetRequirement(level="query", statement="No procedure of ICU stay 32145159's admission is dated after it.",
                           tables=["procedures"], columns=["procedures.chart_date"], scope={"icuadmissionid": 32145159},
                           key_terms=["procedure", "after", "ICU stay 32145159"])
    text = "ICU stay 32145159 ✔ [step 1]. Procs after ICU-out day = ∅ → NULL [step 2]."
    assert consistency(text, req)["states_gap"]


# ---------------------------------------------------------------- the five-unit rule (agents Y, and adv9)
def test_a_list_of_evidence_steps_counts_nothing() -> None:
    text = ('{"answer": null, "reasoning": "fewer than five eligible patients [step 2]", "evidence_steps": [1, 2]}')
    assert disclosure(text, 1) == [] and disclosure(text, 2) == []
    assert disclosure('{"answer": null, "eligible": [1, 2]}', 2) != []


def test_a_demonstrative_with_its_own_noun_refers_to_it() -> None:
    assert disclosure("Matching these Administered events to ICU stays of the same admission [step 2] leaves "
                      "fewer than five eligible patients.", 1) == []
    assert disclosure("Fewer than five patients qualify; these belong to the same patient.", 1) != []
