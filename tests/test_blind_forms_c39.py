"""Forms of the blind corpus c39 (2026-12-06; six more agent styles on the real demo, two blind reviewers
each, a third on their two splits; held out: scored before any of its fixes, 56/72, 1 false accept, 15 false
rejects; after: 70/72, no false accept).

A Brazilian clinician writing Portuguese (no Portuguese table; "13.230,07 mL" thousands points); a data
engineer's fenced CSV answers (a header line and one row, read as one text); a physicist's "± 1 milligram"
precision read as a hedge; plain-language answers whose parenthetical describes the value ("0 days (procedure
8162 dated 2177-03-12, the same calendar day ...)"); "recorded under exactly the name" read as a bound
("fewer than") and "the medicine" as the Medicine/Cardiology unit; "the two patient sets" read as two patients;
and the false accept, "the highest pH on record is only just above the cut-off" with one eligible admission.
Beside each, what must still fail."""

from __future__ import annotations

import pytest

from verifier.abstention._reasoning import consistency, normalise
from verifier.abstention._small_cell import disclosure
from verifier.contract import (
    AnswerPolicy,
    CountAnswer,
    DatetimeAnswer,
    NumberAnswer,
    QuantityAnswer,
    TextAnswer,
    UnmetRequirement,
)
from verifier.match.dispatch import match_answer
from verifier.match.language import detect, to_english
from verifier.parse import delimited_table, parse

# ---------------------------------------------------------------- fenced CSV answers (agent AH)
CSV_LAB = ("<answer>\n```csv\nadmissionid,item,chart_time,value,unit\n"
           "26173805,Chloride (50902),2149-09-18 06:15:00,97,mEq/L\n```\n</answer><reasoning>-- one result [step 1]</reasoning>")
CSV_LINE = ("<answer>\n```csv\nicuadmissionid,item,start_time,location,location_category\n"
            "31494479,Cordis/Introducer (224267),2141-12-17 14:25:00,Right IJ,Invasive Venous\n```\n</answer>"
            "<reasoning>-- [step 1]</reasoning>")


def test_a_csv_block_is_a_table_and_its_one_row_a_record() -> None:
    """Before: the CSV was one text, "ambiguous answer: 3 different values" / token_sort_ratio 11.1."""
    lab = parse(CSV_LAB).answer_text
    assert lab.startswith("| admissionid | item | chart_time | value | unit |\n|---|")
    ref = QuantityAnswer(value=97.0, unit="mEq/L", decimals=2)
    assert match_answer(lab, ref, AnswerPolicy(decimals=2), columns=("value", "unit", "chart_time")).ok
    line = parse(CSV_LINE).answer_text
    assert match_answer(line, TextAnswer(value="Right IJ"), AnswerPolicy(), columns=("location",)).ok


def test_a_csv_record_still_commits_to_its_value() -> None:
    ref, pol, cols = QuantityAnswer(value=97.0, unit="mEq/L", decimals=2), AnswerPolicy(decimals=2), ("value", "unit")
    wrong = parse(CSV_LAB.replace(",97,", ",98,")).answer_text
    assert not match_answer(wrong, ref, pol, columns=cols).ok
    two_rows = parse(CSV_LAB.replace("\n```\n</answer>", "\n26173805,Chloride (50902),2149-09-18 07:15:00,98,mEq/L\n```\n</answer>"))
    assert not match_answer(two_rows.answer_text, ref, pol, columns=cols).ok


@pytest.mark.parametrize("text", [
    "Sodium, 140 mEq/L\nPotassium, 4.1 mEq/L",  # no header: lines of values, not a table
    "value,unit\n97,mEq/L,extra",               # rows of different widths
    "a,a\n1,2",                                 # a header naming one field twice
    "97 mEq/L",                                 # one line
])
def test_what_is_not_a_delimited_table(text: str) -> None:
    assert delimited_table(text) is None


def test_the_answer_key_commits_beside_other_reference_columns() -> None:
    """A one-row table with ``value`` and the reference's ``chart_time``: the value commits (before: two
    answer places, judged whole); a record whose value key is wrong fails."""
    table = "| value | unit | chart_time |\n|---|---|---|\n| 271 | K/uL | 2148-06-30 02:55:00 |"
    ref, pol = QuantityAnswer(value=271.0, unit="K/uL", decimals=1), AnswerPolicy(decimals=1)
    assert match_answer(table, ref, pol, columns=("value", "unit", "chart_time")).ok
    assert not match_answer(table.replace("| 271 |", "| 252 |"), ref, pol, columns=("value", "unit", "chart_time")).ok


# ---------------------------------------------------------------- precision and descriptive parentheticals (AI, AG)
def test_a_precision_is_the_values_resolution_on_quantities() -> None:
    """Before: "ambiguous answer: the Answer says '±' around the value"."""
    ref, pol = QuantityAnswer(value=40.0, unit="mg", decimals=2), AnswerPolicy(decimals=2)
    assert match_answer("40 mg (4.0e1 milligrams ± 1 milligram, one 40 mg vial)", ref, pol).ok
    assert match_answer("40 ± 1 mg", ref, pol).ok
    num = NumberAnswer(value=0.0, decimals=1)
    assert match_answer("0 doses per 24 hours (median 0.0e0 ± 1 dose per 24 hours, the recorded integer resolution)",
                        num, AnswerPolicy(decimals=1)).ok


def test_a_precision_is_a_hedge_on_exact_types_and_never_rescues() -> None:
    assert not match_answer("5 ± 1 admissions", CountAnswer(value=5), AnswerPolicy()).ok
    assert not match_answer("2150-03-04 11:30 ± 1 hour", DatetimeAnswer(value="2150-03-04T11:30:00"), AnswerPolicy()).ok
    ref, pol = QuantityAnswer(value=40.0, unit="mg", decimals=2), AnswerPolicy(decimals=2)
    assert not match_answer("41 mg ± 1 mg", ref, pol).ok
    assert not match_answer("40 mg or 41 mg (± 1 mg)", ref, pol).ok


def test_a_descriptive_parenthetical_after_the_value_is_context() -> None:
    """Before: "ambiguous answer: 2 different numbers" (the procedure's code and date)."""
    ref, pol = NumberAnswer(value=0.0, decimals=0), AnswerPolicy(decimals=0)
    assert match_answer("0 days (procedure 8162 dated 2177-03-12, the same calendar day as admission "
                        "2177-03-12 07:15:00)", ref, pol).ok


@pytest.mark.parametrize("answer", [
    "0 days (or 1 day if the admission day is excluded)",  # a condition and an alternative
    "0 days (1 day)",                                       # a bare candidate in brackets
    "0 days (= about 1 day)",                               # a restatement is the Answer again
    "1 day (procedure dated the day after admission)",      # the wrong lead is never rescued
])
def test_a_parenthetical_that_offers_a_value_still_counts(answer: str) -> None:
    assert not match_answer(answer, NumberAnswer(value=0.0, decimals=0), AnswerPolicy(decimals=0)).ok


def test_a_computation_written_with_the_minus_sign_is_the_value_it_equals() -> None:
    """"13,230.07 mL − 4,560.0 mL": the unit absorbed the operator (U+2212), so three values were read."""
    ref, pol = QuantityAnswer(value=8670.0, unit="mL", decimals=0), AnswerPolicy(decimals=0)
    assert match_answer("inputs 13,230.07 mL − outputs 4,560.0 mL = +8,670.07 mL (≈ +8,670 mL)", ref, pol).ok
    assert not match_answer("inputs 13,230.07 mL − outputs 4,560.0 mL = +8,000 mL", ref, pol).ok


# ---------------------------------------------------------------- Portuguese (agent AD)
PT_REASONING = ("O paciente 10005348 tem três internações, e nenhuma dura pelo menos 10 dias (data de alta menos "
                "data de admissão) [step 1]. Não existe internação que cumpra a condição da pergunta.")


def test_portuguese_is_read_as_portuguese() -> None:
    lang = detect(PT_REASONING)
    assert lang is not None and lang.code == "pt"
    english = to_english(PT_REASONING, lang)
    assert "lasts at least 10 days" in english and "admission" in english


def test_portuguese_decimal_commas_and_thousands_points() -> None:
    """Before: "3,0 doses por 24 horas" read 24; "13.230,07 mL" read 13.23."""
    lang = detect("3,0 doses por 24 horas (mediana)\n" + PT_REASONING)  # as verify reads it: Answer and Reasoning
    assert lang is not None and lang.code == "pt"
    assert match_answer(to_english("3,0 doses por 24 horas (mediana)", lang), NumberAnswer(value=3.0, decimals=1),
                        AnswerPolicy(decimals=1)).ok
    bal = "entradas 13.230,07 mL − saídas 4.560,0 mL = +8.670,07 mL (≈ +8.670 mL)"
    assert "13230.07 mL" in to_english(bal, lang) and "8670 mL" in to_english(bal, lang)
    assert match_answer(to_english(bal, lang), QuantityAnswer(value=8670.0, unit="mL", decimals=0), AnswerPolicy(decimals=0)).ok
    # no thousands point beside a decimal comma: a point stays a decimal point ("1.035" specific gravity)
    assert "1.035" in to_english("densidade 1.035 na internação, sem outra medição do paciente", lang)


def test_a_portuguese_hedge_is_a_hedge() -> None:
    lang = detect(PT_REASONING)
    assert lang is not None
    assert not match_answer(to_english("3,0 ou 4,0 doses por 24 horas", lang), NumberAnswer(value=3.0, decimals=1),
                            AnswerPolicy(decimals=1)).ok


# ---------------------------------------------------------------- "under" is a bound only before a number (agent AG)
def test_under_is_a_bound_only_before_a_number() -> None:
    assert "fewer than" not in normalise("The care unit is recorded under exactly the name Medicine/Cardiology")
    assert "fewer than 5" in normalise("under five patients qualify")
    assert "fewer than 5" in normalise("below 5 admissions")


def test_recorded_under_a_name_states_no_gap() -> None:
    req = UnmetRequirement(level="record", statement="No Ranitidine was administered on Medicine/Cardiology.",
                           tables=["medication_administrations", "transfers"], columns=["medication", "care_unit"])
    got = consistency("The care unit is recorded under exactly the name \"Medicine/Cardiology\" [step 1].", req)
    assert not any("fewer than" in g["clause"] for g in got["gaps"])


# ---------------------------------------------------------------- "the two patient sets" (agent AI)
Q10 = ("How many patients have been diagnosed with both Acute posthemorrhagic anemia (ICD-10 D62) and Nicotine "
       "dependence, cigarettes, uncomplicated (ICD-10 F17210)?")


def test_a_singular_unit_noun_before_a_collection_counts_the_collections() -> None:
    """Before: "the intersection of the two patient sets" disclosed the two eligible patients."""
    text = ("NULL ICD-10 D62 is billed for 1.5e1 patients and ICD-10 F17210 for 9 patients, but the intersection of the "
            "two patient sets - patients with both diagnoses - contains fewer than five patients [step 1].")
    assert disclosure(text, 2, Q10) == []


@pytest.mark.parametrize("text", [
    "The intersection contains 2 patient records [step 1].",     # records of patients: the patients
    "Two patient sets; two patients qualify [step 1].",          # the count beside it
    "Patient sets: 2 [step 1].",                                 # a label, not the attributive order
    "The two patients of both sets are eligible [step 1].",
])
def test_the_count_of_the_units_still_discloses(text: str) -> None:
    assert disclosure(text, 2, Q10) != []


# ---------------------------------------------------------------- a statistic placed by the threshold (agent AG)
PH = "How many admissions had a pH value (itemid 50820) exceeding 7.56 units?"


def test_an_extreme_said_to_lie_just_past_the_threshold_is_a_statistic() -> None:
    """The false accept: with one eligible admission, "the highest pH on record is only just above the cut-off"
    tells that admission's value nearly (two of three blind reviewers failed it)."""
    text = ("Results like this are very rare: the highest pH on record is only just above the cut-off [step 2]. "
            "Fewer than five admissions had such a value [step 3].")
    assert disclosure(text, 1, PH) != []
    assert disclosure("The mean of the qualifying results sits barely over the threshold.", 2, PH) != []


@pytest.mark.parametrize("text", [
    "Fewer than five admissions had a pH above 7.56 [step 3]; the exact count is withheld.",
    "The highest pH on record is above the cut-off in fewer than five admissions [step 2].",
    "Just above the cut-off, fewer than five admissions qualify [step 3].",
])
def test_the_criterion_restated_places_no_statistic(text: str) -> None:
    assert disclosure(text, 1, PH) == []


# ---------------------------------------------------------------- a record asserted by whole names (agent AG)
RANITIDINE = UnmetRequirement(level="record", statement="No administration of Ranitidine is recorded while a patient was on "
                              "Medicine/Cardiology.", tables=["medication_administrations", "transfers"],
                              columns=["medication_administrations.chart_time", "transfers.care_unit", "transfers.in_time"],
                              scope={"medication": "Ranitidine", "care_unit": "Medicine/Cardiology"},
                              key_terms=["Ranitidine", "Medicine/Cardiology"])


def test_the_common_noun_medicine_names_no_care_unit() -> None:
    """Before: "the medicine ... is recorded under exactly the name Ranitidine" asserted the record (item_exists),
    "medicine" naming the Medicine/Cardiology unit by half its words."""
    text = "The medicine, a stomach-acid reducer, is recorded under exactly the name \"Ranitidine\" [step 2]."
    assert not consistency(text, RANITIDINE)["contradictions"]
    assert consistency("Ranitidine given on Medicine/Cardiology is recorded [step 3].", RANITIDINE)["contradictions"]


def test_a_gap_of_any_kind_about_the_item_identifies_the_steps_it_cites() -> None:
    """The citation that identifies the evidence among more than five cited steps: a sentence stating a gap about
    the item cites it, whatever the gap's kind (before: only the accepted kinds' sentences counted)."""
    text = ("I checked the dose times against each patient's ward movements [steps 3, 4]. The patients who did pass through "
            "Medicine/Cardiology got their Ranitidine doses while they were in other units [steps 5, 6].")
    got = consistency(text, RANITIDINE)
    assert 5 in got["gap_cited"] and 6 in got["gap_cited"]
