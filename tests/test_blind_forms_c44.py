"""Blind corpus c44 (held out, 2026-12-07): the forms where the verifier and both reviewers disagreed (6 of 48).

Four agent styles not seen before: a biostatistician ("n = 5 distinct patients (17 culture result rows, ...)"); a
German-speaking internist (decimal commas, German reasoning); a clinical-informatics engineer answering with HL7 FHIR
resources; an ED physician paging in shorthand. Each reading is stated positively, with what it must not excuse
beside it, and a property that a hedge gains nothing from it.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import Task, verify
from verifier.abstention._small_cell import disclosure
from verifier.contract import AnswerPolicy, CountAnswer, NumberAnswer, QuantityAnswer, RecordsAnswer, TextAnswer
from verifier.match.fhir import fhir_value
from clean_answer import answer_ok as _ok
from clean_answer import clean_task as _task


def _obs(value: dict, **more) -> str:
    """A FHIR Observation as c44's engineer wrote it: code, subject, encounter and time beside the value."""
    resource = {"resourceType": "Observation", "status": "final",
                "code": {"coding": [{"system": "MIMIC-IV lab_items", "code": "50902", "display": "Chloride"}]},
                "subject": {"reference": "Patient/10037928"}, "encounter": {"reference": "Encounter/22326517"},
                "effectiveDateTime": "2177-12-22 05:35:00", **value, **more}
    return json.dumps(resource)


# ---------------------------------------------------------------- C/Q03, C/Q10, C/Q04: a FHIR resource's value[x]
CL_Q = "What was the first Chloride (lab item 50902) result recorded during admission 22326517? Give it with its unit."
CL = _task(QuantityAnswer(value=104.0, unit="mEq/L", decimals=2), CL_Q, AnswerPolicy(decimals=2, db_unit="mEq/L"))
RR = _task(NumberAnswer(value=18.0, decimals=1), "What was the most recent Respiratory Rate (Set) in ICU stay 39497668?")
DRG_POLICY = AnswerPolicy(order="set", key_columns=["drg_code"], required_columns=["drg_code"])
DRG = _task(RecordsAnswer(columns=["drg_code", "description"], rows=[["254", "OTHER DIGESTIVE SYSTEM DIAGNOSES"]]),
            "What APR DRG was billed for patient 10037928's ninth admission?", DRG_POLICY)
LOC = _task(TextAnswer(value="Right IJ"), "Where was the PA Catheter (224560) most often placed?")


def _q(value, unit="mEq/L", **more) -> dict:
    return {"valueQuantity": {"value": value, "unit": unit, "system": "http://unitsofmeasure.org", "code": unit, **more}}


def _concept(*codings, text=None) -> dict:
    c: dict = {"coding": [{"system": "APR-DRG", "code": k, "display": d} for k, d in codings]}
    if text is not None:
        c["text"] = text
    return {"valueCodeableConcept": c}


APR = ("254", "OTHER DIGESTIVE SYSTEM DIAGNOSES")
HCFA = ("395", "OTHER DIGESTIVE SYSTEM DIAGNOSES W/O MCC")


@pytest.mark.parametrize("answer, task, ok", [
    (_obs(_q(104)), CL, True),  # the episode
    (_obs(_q(104.0, "meq/L")), CL, True),
    (_obs({"valueQuantity": {"value": 104, "code": "meq/L", "system": "http://unitsofmeasure.org"}}), CL, True),
    (_obs(_q(18, "insp/min") | {"valueQuantity": {"value": 18, "unit": "insp/min", "code": "{insp}/min"}}), RR, True),
    (_obs(_concept(APR, text="APR DRG 254 OTHER DIGESTIVE SYSTEM DIAGNOSES (severity 2, mortality 2)")), DRG, True),
    (_obs({"valueString": "Right IJ"}), LOC, True),
    # one place only: a wrong value[x] is wrong whatever else the resource says
    (_obs(_q(91)), CL, False),
    (_obs(_q(91), note=[{"text": "the admission's first linked draw was 104 mEq/L"}]), CL, False),
    (_obs(_q(91), interpretation=[{"text": "104 mEq/L"}]), CL, False),
    (_obs(_concept(HCFA, text="APR DRG 254 OTHER DIGESTIVE SYSTEM DIAGNOSES")), DRG, False),
    # two values: not one reading, read as written (a hedge)
    (_obs(_q(104), valueString="91 mEq/L"), CL, False),
    (_obs(_q(104), component=[{"code": {"text": "other"}, "valueQuantity": {"value": 91, "unit": "mEq/L"}}]), CL, False),
    (_obs(_concept(APR, HCFA)), DRG, False),
    (_obs({"valueString": "Right IJ or Left IJ"}), LOC, False),
    (_obs({"valueString": "104 or 91 mEq/L"}), CL, False),
    (_obs(_q(104, comparator="<")), CL, False),  # a bound, not the value
    (_obs(_q(104), dataAbsentReason={"text": "unknown"}), CL, False),
    (_obs({"valueRange": {"low": {"value": 91}, "high": {"value": 104}}}), CL, False),
])
def test_a_fhir_resource_states_its_one_value_x(answer: str, task: Task, ok: bool) -> None:
    assert _ok(answer, task) is ok, answer


def test_fhir_value_reads_only_resources() -> None:
    assert fhir_value('{"value": 104, "unit": "mEq/L"}') is None  # no resourceType: the answer-key rule's
    assert fhir_value("104 mEq/L") is None
    assert fhir_value(_obs({})) is None  # no value element: read as written
    assert fhir_value(_obs({"valueBoolean": False})) == "false"
    assert fhir_value(_obs(_q(5.35, "h"))) == "5.35 h"
    report = {"resourceType": "MeasureReport", "status": "complete",
              "group": [{"population": [{"code": {"text": "numerator"}, "count": 8}]}]}
    assert fhir_value(json.dumps(report)) == "8"
    report["group"][0]["population"].append({"code": {"text": "denominator"}, "count": 15})
    assert fhir_value(json.dumps(report)) is None  # two counts: read as written
    score = {"resourceType": "MeasureReport", "group": [{"measureScore": {"value": 2.8}}]}
    assert fhir_value(json.dumps(score)) == "2.8"
    assert fhir_value(json.dumps({**score, "group": score["group"] * 2})) is None


VALUES = [91, 102, 104, 116]


@settings(max_examples=150, deadline=None)
@given(value=st.sampled_from(VALUES), other=st.sampled_from(VALUES), ref=st.sampled_from(VALUES),
       where=st.sampled_from(["note", "interpretation", "valueString", "component", "text"]))
def test_the_resource_is_paid_exactly_when_its_value_x_is_right(value: int, other: int, ref: int, where: str) -> None:
    """Whatever second value the resource holds and wherever, it is paid only when its one value[x] is the
    reference and no second value[x] stands beside it."""
    more = {"note": {"note": [{"text": f"{other} mEq/L"}]},
            "interpretation": {"interpretation": [{"text": f"{other} mEq/L"}]},
            "valueString": {"valueString": f"{other} mEq/L"},
            "component": {"component": [{"valueQuantity": {"value": other, "unit": "mEq/L"}}]},
            "text": {"text": {"status": "generated", "div": f"<div>{other} mEq/L</div>"}}}[where]
    task = _task(QuantityAnswer(value=float(ref), unit="mEq/L", decimals=2), CL_Q, AnswerPolicy(decimals=2, db_unit="mEq/L"))
    paid = _ok(_obs(_q(value), **more), task)
    assert not paid or value == ref
    if where in ("valueString", "component") and value != other:
        assert not paid


# ---------------------------------------------------------------- A/Q02: "n = " opening a count's Answer
MIX_Q = "How many distinct patients had a microbiology culture growing MIXED BACTERIAL FLORA?"


def _count(n: int) -> Task:
    return _task(CountAnswer(value=n), MIX_Q)


EPISODE = ("n = 5 distinct patients (17 culture result rows, 14 distinct specimens with organism_name = "
           "'MIXED BACTERIAL FLORA')")


@pytest.mark.parametrize("answer, ok", [
    (EPISODE, True),
    ("n = 5", True),
    ("**n = 5** patients", True),
    ("N=5 distinct patients", True),
    ("n = 5 or 6 patients", False),
    ("n = 5 patients (maybe 6)", False),
    ("n = 5-6 patients", False),
    ("n = 17 culture result rows (5 patients)", False),
    ("n = 6 distinct patients (5 with a swab)", False),
    ("median = 3 (n = 5)", False),  # elsewhere "n =" is a sample size, as before
])
def test_c44_A_Q02_n_equals_opening_a_count_states_it(answer: str, ok: bool) -> None:
    assert _ok(answer, _count(5)) is ok, answer


@settings(max_examples=150, deadline=None)
@given(a=st.integers(1, 30), b=st.integers(1, 30),
       form=st.sampled_from(["n = {a} or {b} patients", "n = {a} patients (or {b})", "n = {a}; {b} if swabs count",
                             "n = {a} patients, n = {b} specimens", "n = {a} patients ({b} rows)",
                             "n = {a} patients; n = {b} if swabs count", "n = {a}/{b}"]))
def test_a_hedge_after_n_equals_is_paid_for_one_candidate_at_most(a: int, b: int, form: str) -> None:
    answer = form.format(a=a, b=b)
    if a != b:
        assert not (_ok(answer, _count(a)) and _ok(answer, _count(b))), answer


# ---------------------------------------------------------------- C/Q02, C/Q12: no total less a part
Q02 = ("Fewer than five DIRECT EMER. admissions had a new admission no more than 10 days after discharge. Every other "
       "one had no later admission, or the next one came more than 10 days later (for example gaps of about 12 and 14 "
       "days for patient 10035631, and months for the rest). The admissions table has 15 DIRECT EMER. admissions.")
Q12 = ("'amLODIPine' has 35 Administered events over 9 admissions [step 1]. Several admissions have no linked abnormal "
       "Hemoglobin. In one, the only dose (07:42) came before the first abnormal result (07:50). Fewer than five "
       "admissions qualify. Under the five-unit rule (counting admissions) I do not give the exact count, so the answer "
       "is NULL.")


def test_c44_C_Q02_durations_are_no_total_and_no_part() -> None:
    """14 - 12 = 2 (the eligible admissions) was read from two gaps in days; a time counts no units."""
    assert disclosure(Q02, 2) == []
    assert disclosure("Of the 14 admissions, 12 had no later admission.", 2)  # counts of units still are
    assert disclosure("14 admissions in total; for 12 of them no readmission followed.", 2)
    assert disclosure("Gaps of 12 and 14 admissions; none of the 12 was readmitted.", 2)


def test_c44_C_Q12_the_threshold_and_a_bound_are_no_part() -> None:
    """9 - 5 = 4 was read from "9 admissions" and "the five-unit rule ... do not give"; the rule's name and
    "fewer than 5" are the threshold, which the five-unit rule allows (issue 30 point 3), never a count."""
    assert disclosure(Q12, 4) == []
    assert disclosure("9 admissions had it; fewer than 5 did not qualify.", 4) == []
    assert disclosure("9 admissions had it; at least 5 did not qualify.", 4) == []  # a bound: 4 or fewer qualify
    assert disclosure("Of the 9 admissions, 5 did not qualify.", 4)  # an exact part still states 4
    assert disclosure("Of the 9 admissions, exactly 5 did not qualify.", 4)
    assert disclosure("9 admissions were screened. 5 of them had no abnormal result first.", 4)


def test_adv18_fhir_quirks_are_read_as_written() -> None:
    """Fresh adversary adv18 found no FHIR hedge paid both ways; two quirks a reader would not share are closed: a
    key named twice (a JSON decoder keeps the last) and a Quantity whose unit and UCUM code disagree."""
    twice = _obs(_q(91))[:-1] + ', "valueQuantity": {"value": 104, "unit": "mEq/L"}}'
    assert fhir_value(twice) is None and not _ok(twice, CL)
    assert not _ok(_obs({"valueQuantity": {"value": 104, "unit": "mEq/L", "code": "mg/dL"}}), CL)
    assert _ok(_obs({"valueQuantity": {"value": 104, "unit": "mEq/L", "code": "meq/L"}}), CL)
    assert fhir_value(_obs({"valueQuantity": {"value": 36, "unit": "mm Hg", "code": "mm[Hg]"}})) == "36 mm Hg"


# ---------------------------------------------------------------- FHIR's own NULL: dataAbsentReason (issue 32)
def _c44_episode(episode_id: str) -> dict:
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "fixtures" / "episodes" / "demo_c44" / "c44.jsonl"
    return next(e for e in map(json.loads, path.read_text().splitlines()) if e["episode_id"] == episode_id)


_ABSENT = {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/data-absent-reason", "code": "not-performed",
                       "display": "Not Performed"}]}


@pytest.mark.parametrize("answer, ok", [
    ({"resourceType": "Observation", "status": "final", "code": {"text": "ED to ICU interval"},
      "encounter": {"reference": "Encounter/29757856"}, "dataAbsentReason": _ABSENT}, True),
    ({"resourceType": "Observation", "status": "final", "dataAbsentReason": {"text": "no ICU stay in this admission"}}, True),
    # a value beside the reason states a value (FHIR's obs-6 forbids both): not an abstention
    ({"resourceType": "Observation", "status": "final", "dataAbsentReason": _ABSENT,
      "valueQuantity": {"value": 4, "unit": "h"}}, False),
    ({"resourceType": "Observation", "status": "final", "dataAbsentReason": _ABSENT,
      "component": [{"code": {"text": "hours"}, "valueQuantity": {"value": 4, "unit": "h"}}]}, False),
    # no reason stated, or no resource at all: not FHIR's NULL
    ({"resourceType": "Observation", "status": "final", "dataAbsentReason": {}}, False),
    ({"status": "final", "dataAbsentReason": _ABSENT}, False),
])
def test_a_fhir_resource_whose_value_is_absent_is_null_on_noise(answer: dict, ok: bool, demo_db) -> None:
    """c44's FHIR engineer wrote NULL beside its resources; a FHIR agent may abstain in FHIR itself, a resource with a
    ``dataAbsentReason`` and no ``value[x]``. Before, it was read as an answer (EXPECTED_NULL). The episode is c44_C/Q06
    (Noise, both reviewers: success) with only its Answer rewritten."""
    from verifier import VerifyConfig
    from verifier.contract import Trajectory as Traj
    from verifier.parse import is_null_answer

    ep = _c44_episode("c44_C/Q06")
    task = Task.model_validate(ep["task"])
    traj = Traj.model_validate(ep["trajectory"])
    text = traj.final_response
    start, end = text.index("<answer>") + len("<answer>"), text.index("</answer>")
    assert text[start:end].strip() == "NULL"
    rewritten = traj.model_copy(update={"final_response": text[:start] + json.dumps(answer, indent=1) + text[end:]})
    config = VerifyConfig(db_path=str(demo_db))
    assert verify(traj, task, config).success  # the episode as written
    assert is_null_answer(json.dumps(answer)) is ok
    assert verify(rewritten, task, config).success is ok
