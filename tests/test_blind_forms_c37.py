"""Forms of the blind corpus c37 (2026-12-06; six more agent styles on the real demo, two blind reviewers each;
held out: measured before any of its fixes, 49/72, 0 false accepts, 23 false rejects).

Each case is a form an agent wrote and both reviewers judged, which the verifier judged otherwise before: a
math-trained model's ``\\boxed{...}`` answer; a Markdown "### Answer" section inside the answer tag; caveats
numbered "(1) ... (2) ..." read as a count of 1; "The question asks which location is recorded most often"
read as asserting the location is recorded; a Markdown table row stating a field NULL read as asserting the
value; an item id from the question read as the count; and, once the boxed answers were read, the count of
the withheld median's records ("only 6 carry a doses_per_24_hrs value"), which both reviewers failed.
Beside each, what must still fail.
"""

from __future__ import annotations

import pytest

from verifier.abstention._reasoning import consistency
from verifier.abstention._small_cell import disclosure
from verifier.abstention._suppressed import stated_record_count
from verifier.contract import AnswerPolicy, CountAnswer, UnmetRequirement
from verifier.match.dispatch import match_answer
from verifier.match.emphasis import boxed
from verifier.parse import parse


# ---------------------------------------------------------------- \boxed{} (agent R)
@pytest.mark.parametrize("answer, value", [
    (r"mean = 4268.9/182 \Rightarrow \boxed{23.46\ \text{K/uL}}", "23.46 K/uL"),
    (r"\min\{\text{chart\_date}\} \Rightarrow \boxed{2179\text{-}04\text{-}03}", "2179-04-03"),
    (r"|\{\text{adm}\}| < 5 \Rightarrow \boxed{\text{NULL}}", "NULL"),
    (r"\Rightarrow \boxed{\text{Right Metacarpal}}", "Right Metacarpal"),
    (r"\boxed{5 \text{ or } 6}", "5 or 6"),  # a hedge inside the box stays one
    (r"\boxed{5} or \boxed{6}", None),  # two boxes: read as written
])
def test_the_one_box_is_the_answer(answer: str, value) -> None:
    assert boxed(answer) == value


def test_a_boxed_null_is_an_abstention_and_a_boxed_hedge_fails() -> None:
    assert parse(r"<answer>x = \varnothing \Rightarrow \boxed{\text{NULL}}</answer><reasoning>r</reasoning>").abstained
    p = parse(r"<answer>\boxed{5 \text{ or } 6}</answer><reasoning>r</reasoning>")
    assert not match_answer(p.answer_text, CountAnswer(value=5), AnswerPolicy()).ok
    p = parse(r"<answer>n \Rightarrow \boxed{15\ \text{ICU stays}}</answer><reasoning>r</reasoning>")
    assert match_answer(p.answer_text, CountAnswer(value=15), AnswerPolicy()).ok


# ---------------------------------------------------------------- "### Answer" inside the tag (agent S)
def test_the_answer_section_of_a_markdown_answer_is_the_value() -> None:
    body = ("\n### Answer\n**Left Antecubital**\n\n### Details\n- Left Antecubital: 12 events\n"
            "- Runners-up: Right Antecubital (10 events)\n")
    assert parse(f"<answer>{body}</answer><reasoning>r</reasoning>").answer_text == "Left Antecubital"
    assert parse("<answer>NULL\n\n### Answer\n**NULL**\n\n### Details\n- fewer than five</answer>").abstained
    two = "### Answer\n5\n### Answer\n6"
    assert parse(f"<answer>{two}</answer>").answer_text.count("Answer") == 2  # two answer sections: as written


# ---------------------------------------------------------------- caveats numbered "(1) ... (2)" (agent V)
def test_inline_numbered_caveats_count_points_not_units() -> None:
    text = ("Fewer than five units are eligible. Confidence: high Caveats: (1) Diagnosis matching uses the exact "
            "ICD-10 code I25118. (2) I did not compute the average, since disclosing it is not allowed.")
    assert disclosure(text, 1) == []
    assert disclosure("Fewer than five eligible. Only (1) admission qualifies.", 1) != []
    assert disclosure("Eligible admissions: (2)", 2) != []


# ---------------------------------------------------------------- reports of the question, NULL in a table (W, S)
ECHO = UnmetRequirement(level="value", statement="Every Transthoracic Echo event has an empty location.",
                        tables=["icu_procedure_events"], columns=["icu_procedure_events.location"],
                        scope={"itemid": 225432}, key_terms=["Transthoracic Echo", "location"])


def test_a_report_of_the_question_asserts_nothing() -> None:
    text = ("The question asks which body location is recorded most often for the ICU procedure Transthoracic Echo "
            "(itemid 225432). All 26 Transthoracic Echo procedure events have an empty location [step 1].")
    c = consistency(text, ECHO)
    assert c["states_gap"] and not c["contradictions"]
    assert consistency("The Transthoracic Echo location is recorded most often as Chest [step 1].", ECHO)["contradictions"]


def test_a_table_row_stating_the_field_null_asserts_no_value() -> None:
    req = UnmetRequirement(level="value", statement="The latest Ventilator Type entry has no numeric value.",
                           tables=["chart_events"], columns=["chart_events.value_numeric"],
                           scope={"icuadmissionid": 39497668, "itemid": 223848}, key_terms=["Ventilator Type"])
    text = ("| [step 3] | Ventilator Type entries for the stay | The latest entry (2189-09-12 14:00:00) has "
            "value_numeric NULL; the earlier three have 1.0 |")
    assert not consistency(text, req)["contradictions"]


# ---------------------------------------------------------------- the question's id is no count (agent U)
def test_an_item_id_the_question_gives_is_no_candidate() -> None:
    q = "In how many ICU stays was a Ionized Calcium (ICU item 225667) above 1.3 mmol/L charted?"
    text = "12 ICU stays w/ iCa (225667) >1.3 mmol/L charted."
    assert match_answer(text, CountAnswer(value=12), AnswerPolicy(), None, (), q).ok
    assert not match_answer("13 ICU stays w/ iCa (225667)", CountAnswer(value=12), AnswerPolicy(), None, (), q).ok


# ---------------------------------------------------------------- the withheld median's records (agent R, Q08)
def test_the_count_of_the_withheld_statistics_records_is_a_disclosure() -> None:
    text = ("The exact entry \"Octreotide Acetate\" has 14 prescriptions, but only 6 carry a doses_per_24_hrs value; "
            "the other 8 have it empty [step 1],[step 2]. They come from fewer than five admissions.")
    assert stated_record_count(text, 6, ["Octreotide Acetate"])
    assert not stated_record_count(text, 7, ["Octreotide Acetate"])  # not the records' count
    assert not stated_record_count("Octreotide Acetate was checked in [step 6].", 6, ["Octreotide Acetate"])
    assert not stated_record_count("Only 6 carry a value.", 6, ["Octreotide Acetate"])  # names no item
