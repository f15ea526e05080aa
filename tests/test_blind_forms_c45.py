"""Blind corpus c45 (held out, 2026-12-07): the forms where the verifier and both reviewers disagreed (11 of 48).

Four agent styles not seen before: a radiologist-informaticist writing a structured report ("FINDINGS: ... /
IMPRESSION: 12 ICU stays"); a French-speaking hospital pharmacist; a data scientist answering in CSV; a teaching
physician who states the value and then its clinical meaning ("32.07 hours (...): ... i.e. a ward-to-ICU
escalation, not a boarding delay"). Each reading is stated positively, with what it must not excuse beside it,
and a property that a hedge gains nothing from it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import Task
from verifier.contract import AnswerPolicy, CountAnswer, DatetimeAnswer, QuantityAnswer, TextAnswer
from verifier.parse import is_null_answer
from clean_answer import answer_ok as _ok
from clean_answer import clean_task
from corpus_replay import replayed


def _task(answer, question: str, policy=None):
    return clean_task(answer, question, policy, intent="vitals_icu")


CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "episodes" / "demo_c45" / "c45.jsonl"


# ---------------------------------------------------------------- the eleven episodes, replayed on the real demo
FORMERLY_REJECTED = ["c45_A/Q01", "c45_A/Q05", "c45_A/Q06", "c45_A/Q09", "c45_A/Q10", "c45_A/Q07",
                     "c45_D/Q02", "c45_D/Q03", "c45_D/Q09", "c45_D/Q11", "c45_D/Q12"]


@pytest.fixture(scope="module")
def episodes() -> dict[str, dict]:
    return {e["episode_id"]: e for e in map(json.loads, CORPUS.read_text(encoding="utf-8").splitlines())}


@pytest.mark.parametrize("episode_id", FORMERLY_REJECTED)
def test_c45_the_episodes_both_reviewers_accepted_are_paid(episode_id: str, episodes, demo_db) -> None:
    ep = episodes[episode_id]
    assert ep["adjudication"]["outcome"] == "success"
    v = replayed(ep, demo_db)
    assert v.success, (episode_id, [r.value for r in v.reasons], v.details.get("match"))


# ---------------------------------------------------------------- A: a report's IMPRESSION is its answer
STAYS_Q = "Count the ICU stays with at least one charted Tidal Volume (set) (itemid 224684) greater than 500 mL."
STAYS = _task(CountAnswer(value=12), STAYS_Q)
FINDINGS = ("FINDINGS: Tidal Volume (set) has 769 charted rows (range 0.0-550.0 mL). 99 rows are above 500 mL; 95 of "
            "them fall in 12 distinct ICU stays, the other 4 have no stay id.")


@pytest.mark.parametrize("answer, ok", [
    (f"{FINDINGS}\nIMPRESSION: 12 ICU stays", True),
    (f"{FINDINGS}\nCONCLUSION: 12 ICU stays", True),
    (f"{FINDINGS}\nImpression: 12", True),
    # one place read: the findings never rescue a wrong impression, and a hedge there is still a hedge
    (f"{FINDINGS}\nIMPRESSION: 11 ICU stays", False),
    (f"{FINDINGS}\nIMPRESSION: 12 or 13 ICU stays", False),
    (f"{FINDINGS}\nIMPRESSION: 12 ICU stays\nALTERNATIVELY: 13 ICU stays", False),
    (f"{FINDINGS}\nIMPRESSION: 12 ICU stays\nCONCLUSION: 13 ICU stays", False),  # two conclusions: judged whole
])
def test_c45_A_the_impression_of_a_report_commits(answer: str, ok: bool) -> None:
    assert _ok(answer, STAYS) is ok, answer


LOC = _task(TextAnswer(value="Left Metacarpal"), "Where was the 18 Gauge line of ICU stay 39623478 placed?")


def test_c45_A_Q09_a_text_impression_with_its_context() -> None:
    findings = ("FINDINGS: ICU stay 39623478 has one 18 Gauge procedure event (itemid 224277). Its location is "
                "'Left Metacarpal' (location_category Peripheral).")
    assert _ok(f"{findings}\nIMPRESSION: Left Metacarpal (peripheral), 18 Gauge line started 2177-03-15 06:00:00", LOC)
    assert not _ok(f"{findings}\nIMPRESSION: Right Antecubital (peripheral)", LOC)


@pytest.mark.parametrize("answer, null", [
    ("NULL\n\nFINDINGS: no output event is charted in the window.\nIMPRESSION: NULL - no output is charted, so the "
     "balance cannot be computed.", True),
    ("NULL\nFINDINGS: no output event is charted in the window.", True),
    # a NULL lead over a conclusion that states a value is no abstention
    ("NULL\nFINDINGS: inputs total 1200 mL.\nIMPRESSION: 1200 mL", False),
])
def test_c45_A_Q07_a_null_lead_over_its_findings_and_impression(answer: str, null: bool) -> None:
    assert is_null_answer(answer) is null


# ---------------------------------------------------------------- D: "not" negating a kind of thing
ED_Q = "How many hours passed between patient 10018328's ED departure and their ICU admission?"
ED = _task(QuantityAnswer(value=32.1, unit="h", decimals=1), ED_Q, AnswerPolicy(decimals=1, db_unit="h"))


@pytest.mark.parametrize("answer, ok", [
    ("32.07 hours, a ward-to-ICU escalation, not a boarding delay", True),
    ("32.07 hours; a typical stay for such a patient, not an outlier", True),
    ("32.07 hours (not an ED boarding time)", True),
    # a "not" said of the Answer stays a hedge
    ("32.07 hours, not sure", False),
    ("32.07 hours (not final)", False),
    ("32.07 hours, not a final value", False),
    ("32.07 hours, not a final count", False),
    ("32.07 hours, not 31.2 hours", True),  # a rejected value: the Answer commits to the other (as before)
    ("not 32.07 hours", False),
])
def test_c45_D_a_not_before_a_kind_of_thing_describes(answer: str, ok: bool) -> None:
    assert _ok(answer, ED) is ok, answer


# ---------------------------------------------------------------- D: a value that opens the Answer, then its context
ENC_Q = "How many patients had an admission billed ICD-9 34830?"
ENC = _task(CountAnswer(value=7), ENC_Q)
BAL_Q = ("What was the fluid balance (input minus output, mL) of patient 10001217 over the first 24 hours of ICU stay "
         "37067082?")
BAL = _task(QuantityAnswer(value=352.0, unit="mL", decimals=0), BAL_Q, AnswerPolicy(decimals=0, db_unit="mL"))
EDLOS_Q = "What is the median ED length of stay (hours) of URGENT admissions with Other insurance?"
EDLOS = _task(QuantityAnswer(value=5.35, unit="h", decimals=2), EDLOS_Q, AnswerPolicy(decimals=2, db_unit="h"))
DOSE = _task(DatetimeAnswer(value="2148-08-17T08:38:00", precision="minute"),
             "When was Multivitamins first given after the first abnormal bicarbonate of admission 29235263?")


@pytest.mark.parametrize("answer, task, ok", [
    ("7 patients have at least one admission billed ICD-9 348.30 (Encephalopathy, unspecified) - 7 admissions, one "
     "per patient. Clinically, 348.30 is the nonspecific code; metabolic (348.31) and other (348.39) encephalopathy "
     "are coded separately and are not counted here.", ENC, True),
    ("+352.25 mL (about +352 mL; input 3097.25 mL minus output 2745 mL) over the first 24 h of SICU stay 37067082 - "
     "a modestly positive balance. That is well within what we expect (roughly 0 to +1 L is common), and urine "
     "output of about 2.6 L in 24 h shows good renal perfusion.", BAL, True),
    ("Median 5.35 hours (5 h 21 min) from ED registration to ED departure, over the admissions with both ED "
     "timestamps. For context, a typical ED length of stay runs about 4-6 hours, so this is not an outlier.", EDLOS, True),
    ("2148-08-17 08:38:00 - first 'Multivitamins' dose after the first abnormal bicarbonate, which was 21 mEq/L at "
     "2148-08-16 12:35:00 (it fell further to 19 mEq/L on 2148-08-17 03:03:00).", DOSE, True),
    # the lead commits alone: a right value only in the context never rescues a wrong lead
    ("6 patients - 7 if the readmission counts.", ENC, False),
    ("6 patients: 7 admissions, one per patient.", ENC, False),
    ("+410 mL - a positive balance; the other reading gives 352 mL.", BAL, False),
    # a range or a second value right after the dash or colon is no apposition
    ("6 - 7 patients.", ENC, False),
    ("7 - 8 patients, depending on the readmission.", ENC, False),
    ("7: or 8 patients.", ENC, False),
    # an alternative, a condition or a correction after the lead keeps the whole Answer judged
    ("7 patients - possibly 8.", ENC, False),
    # only words of the question may name the value before it
    ("Perhaps 5.35 hours from ED registration to ED departure.", EDLOS, False),
])
def test_c45_D_a_value_opening_the_answer_commits_before_its_context(answer: str, task: Task, ok: bool) -> None:
    assert _ok(answer, task) is ok, answer


@settings(max_examples=200, deadline=None)
@given(lead=st.integers(5, 9), other=st.integers(5, 9), ref=st.integers(5, 9),
       sep=st.sampled_from([" - ", " — ", ": ", "; ", ", i.e. "]),
       context=st.sampled_from(["{o} admissions, one per patient", "roughly {o} are typical", "not a boarding delay",
                                "the other reading gives {o} patients", "{o} if the readmission counts"]))
def test_a_value_opening_the_answer_is_paid_only_when_it_is_right(lead: int, other: int, ref: int, sep: str,
                                                                   context: str) -> None:
    """Whatever the context after the opening value says, the Answer is paid only when that value is the
    reference: a hedging policy gains nothing by putting the right value second."""
    answer = f"{lead} patients{sep}{context.format(o=other)}."
    paid = _ok(answer, _task(CountAnswer(value=ref), ENC_Q))
    assert not paid or lead == ref
