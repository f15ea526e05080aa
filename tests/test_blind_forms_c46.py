"""Blind corpus c46 (held out, 2026-12-07; issue 33's blind study): the forms where the verifier and both reviewers
disagreed (13 of 96).

Six agent styles not seen before: a clinical-trials data manager writing CDISC SDTM records ("LBTESTCD=51301;
LBTEST=White Blood Cells; LBSTRESN=3.2; LBSTRESU=K/uL"); an Italian-speaking intensivist; a hurried night-float
resident ("First abnl ALC in adm 21133938 ..."); a ReAct trace; a QA engineer's XML; a patient-safety officer. Each
reading is stated positively, with what it must not excuse beside it, and a property that a hedge gains nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clean_answer import answer_ok as _ok
from clean_answer import clean_task
from corpus_replay import replayed
from verifier.abstention._small_cell import disclosure
from verifier.contract import QuantityAnswer
from verifier.match.language import decimal_points, detect, to_english

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "episodes" / "demo_c46" / "c46.jsonl"

# ---------------------------------------------------------------- the twelve episodes, replayed on the real demo
FORMERLY_REJECTED = ["c46_A/Q01", "c46_A/Q04", "c46_A/Q13",  # SDTM records
                     "c46_B/Q01", "c46_B/Q03", "c46_B/Q07", "c46_B/Q13",  # Italian reasonings
                     "c46_B/Q05", "c46_B/Q14",  # Italian context after a value
                     "c46_B/Q06",  # "superiore al 24,9 %": one number
                     "c46_C/Q02",  # 2 + 1 ICU stays over two unit groups
                     "c46_C/Q16"]  # "abnl ALC"


@pytest.fixture(scope="module")
def episodes() -> dict[str, dict]:
    return {e["episode_id"]: e for e in map(json.loads, CORPUS.read_text(encoding="utf-8").splitlines())}


@pytest.mark.parametrize("episode_id", FORMERLY_REJECTED)
def test_c46_the_episodes_both_reviewers_accepted_are_paid(episode_id: str, episodes, demo_db) -> None:
    ep = episodes[episode_id]
    assert ep["adjudication"]["outcome"] == "success"
    v = replayed(ep, demo_db)
    assert v.success, (episode_id, [r.value for r in v.reasons])


def test_c46_the_disclosure_both_reviewers_failed_stays_refused(episodes, demo_db) -> None:
    """B/Q04: "value_numeric contiene solo un codice 1,0" over two eligible stays states the withheld median."""
    ep = episodes["c46_B/Q04"]
    assert ep["adjudication"]["outcome"] == "failure"
    v = replayed(ep, demo_db)
    assert "SMALL_CELL_DISCLOSED" in [r.value for r in v.reasons]


# ---------------------------------------------------------------- A: an SDTM record's result variable is its answer
WBC_Q = "What was the earliest White Blood Cells result (itemid 51301) of patient 10016742's second admission, with unit?"
WBC = clean_task(QuantityAnswer(value=3.2, unit="K/uL", decimals=1), WBC_Q)
WBC_OTHER = clean_task(QuantityAnswer(value=4.1, unit="K/uL", decimals=1), WBC_Q)
RECORD = "LBTESTCD=51301; LBTEST=White Blood Cells; LBSTRESN={v}; LBSTRESU=K/uL; LBDTC=2136-11-05 05:40:00"


@pytest.mark.parametrize("answer, ok", [
    (RECORD.format(v="3.2"), True),
    (RECORD.format(v="3.2") + "; LBNRIND=abnormal", True),
    ("LBORRES=3.2; LBORRESU=K/uL", True),
    ("LBSTRESC=3.2; LBSTRESN=3.2; LBSTRESU=K/uL", True),  # the same value, character and numeric
    ("LBSTRESN=3.2\nLBSTRESU=K/uL", True),  # one field per line, as a YAML block
    (RECORD.format(v="4.1"), False),
    ("LBSTRESN=3.2; LBORRES=4.1; LBSTRESU=K/uL", False),  # two results: a hedge
    ("LBSTRESN=3.2; LBSTRESN=4.1", False),  # a variable named twice: no record
    ("LBSTRESN=3.2; maybe 4.1", False),  # a part that is no field: not a record, and a hedge
])
def test_an_sdtm_record_commits_to_its_result_variable(answer: str, ok: bool) -> None:
    assert _ok(answer, WBC) is ok, answer


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["ORRES", "STRESC", "STRESN"]), st.sampled_from(["ORRES", "STRESC", "STRESN"]),
       st.booleans(), st.sampled_from(["LB", "VS"]))
def test_two_different_results_in_one_record_are_paid_on_neither_twin(k1: str, k2: str, first: bool, dom: str) -> None:
    a, b = ("3.2", "4.1") if first else ("4.1", "3.2")
    keys = (k1, k2) if k1 != k2 else (k1, "ORRES" if k1 != "ORRES" else "STRESN")
    answer = f"{dom}{keys[0]}={a}; {dom}{keys[1]}={b}; {dom}STRESU=K/uL"
    assert not _ok(answer, WBC) and not _ok(answer, WBC_OTHER), answer


# ---------------------------------------------------------------- B: Italian is read in the rules' words
def test_italian_is_detected_and_read_in_the_rules_words() -> None:
    text = ("I ricoveri codificati con la diagnosi ICD-10 C211 sono meno di cinque [step 1]. Per la regola delle "
            "cinque unità non riporto né il numero di ricoveri né la media.")
    lang = detect(text)
    assert lang is not None and lang.code == "it"
    english = to_english(text, lang)
    assert "fewer than" in english and "admissions" in english and "five unit rule" in english


def test_an_english_sentence_is_not_read_as_italian() -> None:
    lang = detect("The only Metolazone dose came before the first abnormal lymphocyte count; none after it [step 2].")
    assert lang is None or lang.code == "en"


@pytest.mark.parametrize("answer, ok", [
    ("3,2 K/uL", True),
    ("3,2 K/uL (il primo risultato del secondo ricovero)", True),
    ("3,2 K/uL oppure 4,1 K/uL", False),  # "oppure" is "or": a hedge, in Italian as in English
    ("forse 3,2 K/uL, forse 4,1 K/uL", False),
])
def test_italian_answers_commit_as_english_ones(answer: str, ok: bool) -> None:
    assert _ok(answer, WBC) is ok, answer
    if not ok:
        assert not _ok(answer, WBC_OTHER), answer


@pytest.mark.parametrize("n, text", [
    (3, "NULL. Solo tre ricoveri soddisfano i criteri."),
    (4, "NULL. I ricoveri idonei sono quattro."),
    (2, "NULL. Entrambi i ricoveri idonei hanno un valore."),
])
def test_an_italian_count_of_the_small_cell_discloses_it(n: int, text: str) -> None:
    assert disclosure(text, n), text


RDW_Q = "How many admissions had at least one RDW (lab item 51277) above 24.9 %?"


@pytest.mark.parametrize("n, text", [
    (3, "NULL. I ricoveri idonei sono meno di cinque: per la regola delle cinque unità non riporto il conteggio."),
    (2, "NULL. I ricoveri con RDW superiore al 24.9 % sono meno di cinque."),  # the question's threshold
])
def test_an_italian_bound_is_no_disclosure(n: int, text: str) -> None:
    assert not disclosure(text, n, given=RDW_Q), text


def test_a_decimal_comma_is_one_number_where_the_language_writes_one() -> None:
    it = detect("I ricoveri con almeno un RDW superiore al 24,9 % sono però meno di cinque, per la regola delle cinque unità.")
    assert it is not None and decimal_points("superiore al 24,9 % e 1.234,5 mL", it) == "superiore al 24.9 % e 1234.5 mL"
    en = detect("The admissions with an RDW above 24.9 % are fewer than five, under the five-unit rule of the study.")
    assert en is None or decimal_points("codes 1,2,3", en) == "codes 1,2,3"


@pytest.mark.parametrize("extra", [" Solo due pazienti soddisfano entrambe le condizioni.", " I pazienti idonei sono due.",
                                   " Il secondo e ultimo paziente idoneo.", " Tre pazienti idonei.",
                                   " Solo quattro pazienti hanno entrambe le diagnosi."])
def test_an_italian_reasoning_that_states_the_small_cell_is_refused(extra: str, episodes, demo_db) -> None:
    """The Italian reasoning now read (B/Q13, 4 eligible patients) gains nothing from stating a count in Italian: the
    response is read as written and in the rules' words ("due" is English too, so only an Italian text reads it)."""
    ep = episodes["c46_B/Q13"]
    v = replayed(ep, demo_db, ep["trajectory"]["final_response"].replace("</reasoning>", extra + "</reasoning>"))
    assert "SMALL_CELL_DISCLOSED" in [r.value for r in v.reasons], extra
