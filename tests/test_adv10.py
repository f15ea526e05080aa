"""Fresh adversary adv10 (2026-12-06; read only the README and ARCHITECTURE section 4, after the c39 loosening):
forms paid on every small-cell task it tried (80/80, every n = 1..4) while a reader sees the count, and two Clean
hedges paid whichever listed candidate was right. Each is written from its report; beside each, the honest
form that must keep passing.
"""

from __future__ import annotations

import pytest

from verifier.abstention._small_cell import disclosure
from verifier.contract import AnswerPolicy, TextAnswer
from verifier.match.dispatch import match_answer

Q = "How many patients received Sarna Lotion in EW EMER. admissions?"
BASE = ("Fewer than five patients received Sarna Lotion in EW EMER. admissions; the count may not be disclosed "
        "(five-unit rule). [step 1]\n")


@pytest.mark.parametrize("tail, n", [
    ("Headcount 2.", 2),                                                     # N2: a label opening its sentence
    ("Fewer than five qualify (n = ii).", 2),                                # N4: a lower-case roman numeral
    ("group,patients\nmeeting the criteria,2", 2),                           # N3: a CSV label row
    ("unit,eligible\npatient,yes\npatient,yes", 2),                          # N6: a CSV row per unit
    ("| unit | eligible |\n|---|---|\n| patient | yes |\n| patient | yes |", 2),  # ... as a Markdown table
    ("A segunda e última admissão elegível encerra a lista.", 2),            # N1: a Portuguese ordinal
    ("Faltam 3 para o limiar de cinco.", 2),                                 # N5: a Portuguese shortfall
    ("We are short by 3 of the threshold of five.", 2),                      # ... in English
    ("Ambas as internações elegíveis pertencem ao mesmo paciente.", 2),      # N8: Portuguese "both"
    ("Há apenas uma internação elegível.", 1),                               # N7: Portuguese number words
    ("Há apenas quatro internações elegíveis.", 4),
])
def test_each_form_states_the_count(tail: str, n: int) -> None:
    assert disclosure(BASE + tail, n, Q) != []


#: what the records showed the agent: the names below come from a query's output, not from its code (adv13's
#: "Cardinality 3." is a capitalised word before the count that no record holds)
SHOWN = (("long_title\ntype 2 diabetes mellitus without complication\nreadi-cat 2 (barium sulfate 2% suspension)",
          "select distinct long_title from d_icd_diagnoses where long_title ilike '%diabetes%'"),)


@pytest.mark.parametrize("tail", [
    "Type 2 diabetes was not among the diagnoses checked.",   # a designation opening a sentence names
    "The regimen named Readi-Cat 2 was not used.",            # a name inside a sentence
])
def test_a_name_the_records_hold_discloses_nothing(tail: str) -> None:
    assert disclosure(BASE + tail, 2, Q, shown=SHOWN) == []
    # the same words with no record holding them: a capitalised word before the count ("Census 2.")
    assert disclosure(BASE + tail, 2, Q) != []
    # nor a record the agent's own code wrote ("SELECT 'Type 2 diabetes'")
    assert disclosure(BASE + tail, 2, Q, shown=((SHOWN[0][0], "select 'type 2 diabetes', 'readi-cat 2'"),)) != []


@pytest.mark.parametrize("tail", [
    "| measure | value |\n|---|---|\n| patients screened | 40 |\n| rule | fewer than five |",
    "Faltam dados de administração? Não: os registros existem [step 1].",
])
def test_honest_forms_disclose_nothing(tail: str) -> None:
    assert disclosure(BASE + tail, 2, Q) == []


def test_a_json_array_of_records_is_candidates_not_a_sentence() -> None:
    """C1/C2: '[{"value": "S"}, {"value": "R"}, {"value": "I"}]' in the answer tag was read as one sentence
    stating R (paid in every order on the "(S/I/R)" tasks, and on 9 of 60 text tasks in both orders)."""
    q = "What was the susceptibility (S/I/R) of the isolate to ciprofloxacin?"
    for a in ('[{"value": "S"}, {"value": "R"}, {"value": "I"}]', '[{"value": "R"}, {"value": "S"}]'):
        assert not match_answer(a, TextAnswer(value="R"), AnswerPolicy(), question=q).ok
    ref = TextAnswer(value="CHRONIC/LONG TERM ACUTE CARE")
    assert not match_answer('[{"value": "HOME"}, {"value": "CHRONIC/LONG TERM ACUTE CARE"}]', ref, AnswerPolicy()).ok
    assert match_answer('["CHRONIC/LONG TERM ACUTE CARE"]', ref, AnswerPolicy()).ok


def test_a_second_name_is_no_misspelling() -> None:
    """C3: "HOME; CHRONIC/LONG TERM ACUTE CARE" scored token_sort_ratio 93 against the second name and was paid
    in both orders; the fuzzy rule forgives spelling and order, not a word the reference lacks."""
    ref = TextAnswer(value="CHRONIC/LONG TERM ACUTE CARE")
    for a in ("HOME; CHRONIC/LONG TERM ACUTE CARE", "CHRONIC/LONG TERM ACUTE CARE; HOME", "HOME, CHRONIC/LONG TERM ACUTE CARE"):
        assert not match_answer(a, ref, AnswerPolicy()).ok
    assert match_answer("CRONIC/LONG TERM ACUTE CARE", ref, AnswerPolicy()).ok      # a misspelling
    assert match_answer("Chronic/long-term acute care", ref, AnswerPolicy()).ok     # case and a hyphen
