"""How real agents write a Clean answer (issue 17, kinds 1-3, 6-8, 10).

Each kind has a table of phrasings that must match (they failed before the
fix) and a table of near misses that must still fail (hedges, ranges,
negations, changed values); hypothesis properties check that a changed value
never matches in the new phrasings. Cases are written from the issue's
description of each kind, with our own values.

Rules: verifier/match/commit.py (what the value is), verifier/match/text.py
(qualifying detail, symbols), verifier/match/records.py (prose records, empty
results), verifier/match/numbers.py (an answer at its own precision),
rules/analytes.toml and rules/synonyms.toml (insulin and heparin units).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.contract import (
    AnswerPolicy,
    CountAnswer,
    NumberAnswer,
    QuantityAnswer,
    ReasonCode,
)
from verifier.match.dispatch import match_answer
from verifier.parse import parse

POL = AnswerPolicy()


@pytest.fixture(scope="module")
def synthetic_tasks(synth_db) -> list:
    """Tasks built from the synthetic default hospital (seed 0)."""
    from verifier.construction import make_tasks

    return make_tasks(synth_db, seed=0)[0]


SETTINGS = settings(max_examples=120, deadline=None)


def _match(response: str, ref, policy=POL):
    p = parse(response)
    assert p.error is None, p.error
    assert not p.abstained
    return match_answer(p.answer_text, ref, policy, p.answer_json)


# ---------------------------------------------------------------- kind 1: numbers in unit phrases are context
DOSES = NumberAnswer(value=1.0, decimals=1)
SEVERITY = NumberAnswer(value=2.83, decimals=2)
COUNT4 = CountAnswer(value=4)
COUNT3 = CountAnswer(value=3)
DOSE12 = QuantityAnswer(value=12, unit="mg", decimals=0)
K52 = QuantityAnswer(value=5.2, unit="mmol/L", decimals=1)
K_POL = AnswerPolicy(analyte="potassium", db_unit="mmol/L")

KIND1_MATCH = [
    ("<answer>1.0 doses per 24 hours</answer>", DOSES, POL),
    ("<answer>1.0 (doses/24 h)</answer>", DOSES, POL),
    ("Answer: 1.0 dose every 24 hours", DOSES, POL),
    ("Answer: 2.83 (mean severity on the 1-4 scale; 35 admissions)", SEVERITY, POL),
    ("Answer: 2.83 on a scale of 1 to 4 (n = 35)", SEVERITY, POL),
    ("Answer: 2.83 out of 4, averaged over 35 admissions", SEVERITY, POL),
    ("<answer>4 doses per 24 hours</answer>", COUNT4, POL),
    ("Answer: 4 administrations in the first 24 hours", COUNT4, POL),
    ("Answer: In the first 48 hours, 4 doses were given", COUNT4, POL),
    ("Answer: 3 admissions in 2150", COUNT3, POL),
    ("Answer: 3 admissions (of 12 patients screened)", COUNT3, POL),
    ("Answer: 3 patients, from 17 lab results", COUNT3, POL),
    ("Answer: 12 mg every 8 hours", DOSE12, POL),
    ("Answer: 12 mg per dose, given every 6 h for 3 days", DOSE12, POL),
    ("Answer: 12 mg (within 24 hours of admission)", DOSE12, POL),
    ("Answer: 5.2 mmol/L at 06:00", K52, K_POL),
    ("Answer: 5.2 (reference range 3.5-5.0) at 6:15 AM", K52, K_POL),
    ("Answer: 5.2 mmol/L, first of 3 measurements", K52, K_POL),
]


@pytest.mark.parametrize("response,ref,policy", KIND1_MATCH)
def test_kind1_numbers_in_unit_phrases_are_context(response, ref, policy):
    res = _match(response, ref, policy)
    assert res.ok, res.details


KIND1_STILL_FAIL = [
    ("Answer: 1.0 or 2.0 doses per 24 hours", DOSES),
    ("Answer: 1.0-2.0 doses per 24 hours", DOSES),
    ("Answer: not 1.0 doses per 24 hours", DOSES),
    ("Answer: 2.0 doses per 24 hours", DOSES),
    ("Answer: 2.83 (maybe 2.9) on the 1-4 scale", SEVERITY),
    ("Answer: 2.83 (2.91 on the 1-4 scale)", SEVERITY),
    ("Answer: 2.91 (mean severity on the 1-4 scale; 35 admissions)", SEVERITY),
    ("Answer: 4 or 5 doses per 24 hours", COUNT4),
    ("Answer: 4-5 doses per 24 hours", COUNT4),
    ("Answer: 4 patients, 5 patients", COUNT4),
    ("Answer: 5 doses per 24 hours", COUNT4),
    ("Answer: 12 mg or 24 mg every 8 hours", DOSE12),
    ("Answer: 12 mg, then 24 mg every 8 hours", DOSE12),
    ("Answer: at least 12 mg every 8 hours", DOSE12),
    ("Answer: 8 mg every 12 hours", DOSE12),
]


@pytest.mark.parametrize("response,ref", KIND1_STILL_FAIL)
def test_kind1_hedges_ranges_and_other_values_still_fail(response, ref):
    res = _match(response, ref)
    assert not res.ok
    assert res.reasons == (ReasonCode.WRONG_VALUE,), res.details


_PHRASES = [
    " doses per {n} hours", " (every {n} hours)", " on the 1-{n} scale", " ({n} admissions)",
    " in the first {n} hours", " (n = {n})", ", {n} events", " at 0{m}:30", " with a reading above {n}",
    " (APR DRG {n})", "; the DRG is {n}", " (at least {m} results)",
]


@SETTINGS
@given(st.floats(min_value=0.1, max_value=900, allow_nan=False).map(lambda x: round(x, 2)),
       st.floats(min_value=0.1, max_value=900, allow_nan=False).map(lambda x: round(x, 2)),
       st.sampled_from(_PHRASES), st.integers(2, 96), st.integers(1, 9))
def test_kind1_a_changed_value_never_matches(value, other, phrase, n, m):
    """With any context phrase (itself holding a number), the stated value decides:
    the reference matches, a different value never does."""
    ref = NumberAnswer(value=value, decimals=2)
    tail = phrase.format(n=n, m=m)
    assert _match(f"Answer: {value:.2f}{tail}", ref).ok
    if round(other, 2) != round(value, 2):
        assert not _match(f"Answer: {other:.2f}{tail}", ref).ok
        assert not _match(f"Answer: {other:.2f} or {value:.2f}{tail}", ref).ok


# ---------------------------------------------------------------- kind 2: a text answer with a qualifying detail
from verifier.contract import TextAnswer  # noqa: E402

LINE = TextAnswer(value="Right Basilic Lower Arm")
HOME = TextAnswer(value="HOME")
ECOLI = TextAnswer(value="ESCHERICHIA COLI")

KIND2_MATCH = [
    ("Answer: Right Basilic Lower Arm (location category: Peripheral)", LINE),
    ("Answer: Right Basilic Lower Arm - charted on the first line insertion", LINE),
    ("Answer: Right Basilic Lower Arm; site recorded for order 4", LINE),
    ("Answer: HOME (discharged 2150-06-07)", HOME),
    ("Answer: HOME, as recorded in admissions.discharge_location", HOME),
    ("Answer: **HOME** (discharge_location = HOME)", HOME),
    ("Answer: E. coli (ESCHERICHIA COLI)", ECOLI),
    ("Answer: ESCHERICHIA COLI (E. coli)", ECOLI),
    ("Answer: ESCHERICHIA COLI, 2 isolates from the first urine culture", ECOLI),
]


@pytest.mark.parametrize("response,ref", KIND2_MATCH)
def test_kind2_text_with_qualifying_detail_matches(response, ref):
    res = _match(response, ref)
    assert res.ok, res.details


KIND2_STILL_FAIL = [
    ("Answer: HOME (or SKILLED NURSING FACILITY)", HOME),
    ("Answer: HOME (SKILLED NURSING FACILITY)", HOME),
    ("Answer: SKILLED NURSING FACILITY (HOME)", HOME),
    ("Answer: HOME, SKILLED NURSING FACILITY", HOME),
    ("Answer: HOME (probably)", HOME),
    ("Answer: HOME HEALTH CARE (discharged 2150-06-07)", HOME),
    ("Answer: Left Basilic Lower Arm (location category: Peripheral)", LINE),
    ("Answer: K. pneumoniae (KLEBSIELLA PNEUMONIAE)", ECOLI),
    ("Answer: E. coli (KLEBSIELLA PNEUMONIAE)", ECOLI),
]


@pytest.mark.parametrize("response,ref", KIND2_STILL_FAIL)
def test_kind2_alternatives_hedges_and_other_values_still_fail(response, ref):
    res = _match(response, ref)
    assert not res.ok and res.reasons == (ReasonCode.WRONG_VALUE,), res.details


_WORDS = st.sampled_from(["HOME", "REHAB", "HOSPICE", "ICU", "Right", "Left", "Arm", "Basilic", "Femoral", "Radial",
                          "Subclavian", "Lower", "Upper", "ESCHERICHIA", "KLEBSIELLA", "COLI", "AUREUS"])
_DETAILS = ["(location category: Peripheral)", "(discharged 2150-06-07)", "- charted 3 times", "; recorded at 08:00",
            "(2 isolates)", ", as recorded in the table"]


@SETTINGS
@given(st.lists(_WORDS, min_size=1, max_size=4), st.lists(_WORDS, min_size=1, max_size=4), st.sampled_from(_DETAILS))
def test_kind2_a_changed_value_never_matches(words, other, detail):
    """A qualifying detail keeps the reference matching and never makes another value match."""
    ref = " ".join(words)
    assert _match(f"Answer: {ref} {detail}", TextAnswer(value=ref)).ok
    sub = " ".join(other)
    if sorted(s.casefold() for s in other) != sorted(w.casefold() for w in words):
        from verifier.match.text import text_equivalent

        if not text_equivalent(sub, ref)[0]:  # the bare value does not match: the detail must not change that
            assert not _match(f"Answer: {sub} {detail}", TextAnswer(value=ref)).ok


# ---------------------------------------------------------------- kind 6: meaning in symbols and prefixes
KIND6_DIFFERENT = [
    ("STAPH AUREUS COAG +", "STAPH AUREUS COAG -"),
    ("STAPH AUREUS COAG (+)", "STAPH AUREUS COAG (-)"),
    ("Platelet count <150", "Platelet count >150"),
    ("Troponin T >=0.01", "Troponin T <=0.01"),
    ("Hypokalemia, unspecified type in adults", "Hyperkalemia, unspecified type in adults"),
    ("Hypoglycemia due to type 2 diabetes mellitus", "Hyperglycemia due to type 2 diabetes mellitus"),
    ("Preoperative evaluation of chronic anemia", "Postoperative evaluation of chronic anemia"),
    ("Pre-op evaluation of chronic anemia status", "Post-op evaluation of chronic anemia status"),
    ("SEPTICEMIA OR SEVERE SEPSIS W/O MV 96+ HOURS W MCC", "SEPTICEMIA OR SEVERE SEPSIS W MV 96+ HOURS W MCC"),
    ("SEPTICEMIA OR SEVERE SEPSIS W MV 96+ HOURS W MCC", "SEPTICEMIA OR SEVERE SEPSIS W MV 96 HOURS W MCC"),
    ("Methicillin resistant Staphylococcus aureus infection", "Methicillin susceptible Staphylococcus aureus infection"),
]


@pytest.mark.parametrize("submitted,reference", KIND6_DIFFERENT)
def test_kind6_meaning_in_symbols_is_not_normalised_away(submitted, reference):
    assert not _match(f"Answer: {submitted}", TextAnswer(value=reference)).ok
    assert not _match(f"Answer: {reference}", TextAnswer(value=submitted)).ok


@pytest.mark.parametrize("submitted,reference", [
    ("STAPH AUREUS COAG +", "STAPH AUREUS COAG POSITIVE"),
    ("STAPH AUREUS COAG -", "staph aureus coag negative"),
    ("STAPH AUREUS COAG POS", "STAPH AUREUS COAG +"),
    ("Platelet count < 150", "platelet count <150"),
    ("SEPTICEMIA OR SEVERE SEPSIS W/O MV 96+ HOURS W MCC", "Septicemia or severe sepsis w/o MV 96+ hours w MCC"),
])
def test_kind6_same_symbol_spelled_otherwise_still_matches(submitted, reference):
    assert _match(f"Answer: {submitted}", TextAnswer(value=reference)).ok


# ---------------------------------------------------------------- kind 7: insulin and heparin units
INSULIN_RATE = QuantityAnswer(value=4, unit="units/hr", decimals=0)
INSULIN_POL = AnswerPolicy(analyte="Insulin", db_unit="units/hr")
HEPARIN = QuantityAnswer(value=5000, unit="UNIT", decimals=0)
HEPARIN_POL = AnswerPolicy(analyte="Heparin Sodium", db_unit="UNIT")
HEPARIN_RATE = QuantityAnswer(value=18, unit="U/kg/hr", decimals=0)

KIND7_MATCH = [
    ("Answer: 4 U/hr", INSULIN_RATE, INSULIN_POL),
    ("Answer: 4 U/h", INSULIN_RATE, INSULIN_POL),
    ("Answer: 4 IU/hr", INSULIN_RATE, INSULIN_POL),
    ("Answer: 4 unit/hr", INSULIN_RATE, INSULIN_POL),
    ("Answer: 4 units per hour", INSULIN_RATE, INSULIN_POL),
    ("Answer: 5000 U", HEPARIN, HEPARIN_POL),
    ("Answer: 5,000 IU", HEPARIN, HEPARIN_POL),
    ("Answer: 5000 units", HEPARIN, HEPARIN_POL),
    ("Answer: 18 units/kg/hr", HEPARIN_RATE, HEPARIN_POL),
    ("Answer: 18 unit/kg/h", HEPARIN_RATE, HEPARIN_POL),
    ("Answer: 18 IU/kg/hr", HEPARIN_RATE, HEPARIN_POL),
]


@pytest.mark.parametrize("response,ref,policy", KIND7_MATCH)
def test_kind7_insulin_and_heparin_units_are_one_unit(response, ref, policy):
    res = _match(response, ref, policy)
    assert res.ok, res.details


KIND7_STILL_FAIL = [
    ("Answer: 5 U/hr", INSULIN_RATE, INSULIN_POL, ReasonCode.WRONG_VALUE),
    ("Answer: 4 U", INSULIN_RATE, INSULIN_POL, ReasonCode.INCOMPATIBLE_UNIT),  # a dose is not a rate
    ("Answer: 4 units/min", INSULIN_RATE, INSULIN_POL, ReasonCode.WRONG_UNIT),  # 240 units/hr
    ("Answer: 4 mg/hr", INSULIN_RATE, INSULIN_POL, ReasonCode.INCOMPATIBLE_UNIT),
    ("Answer: 5000 mg", HEPARIN, HEPARIN_POL, ReasonCode.INCOMPATIBLE_UNIT),
    # issue 32: without a drug named, U against the word 'units' is that unit (4 U/hr now matches 4 units/hr,
    # tests/test_units_demo_verdicts.py); IU against U alone stays apart (an IU is defined per substance)
    ("Answer: 4 U/hr", QuantityAnswer(value=4, unit="IU/hr", decimals=0), AnswerPolicy(), ReasonCode.INCOMPATIBLE_UNIT),
]


@pytest.mark.parametrize("response,ref,policy,reason", KIND7_STILL_FAIL)
def test_kind7_other_values_doses_and_units_still_fail(response, ref, policy, reason):
    res = _match(response, ref, policy)
    assert res.reasons == (reason,), res.details


@pytest.mark.parametrize("medication,analyte", [
    ("Insulin", "insulin"), ("Heparin", "heparin"), ("Heparin Sodium", "heparin"), ("Insulin Glargine", "insulin"),
    ("Metoprolol Tartrate", None),
])
def test_kind7_medication_dose_tasks_name_their_drug_as_analyte(medication, analyte):
    """Construction: a medication dose task carries its drug as the analyte, so an insulin or
    heparin dose in U matches its reference in units (and nothing is bridged for other drugs)."""
    from verifier.construction.engine import _policy
    from verifier.construction.spec import load_programs

    spec = next(p for p in load_programs() if p.name == "med_first_dose_missing")
    policy = _policy(spec, {"medication": medication}, QuantityAnswer(value=5000, unit="UNIT", decimals=2))
    assert policy.analyte == analyte


# ---------------------------------------------------------------- kind 8: an empty result is an answer
from verifier.contract import ListAnswer, RecordsAnswer  # noqa: E402

NO_RX = RecordsAnswer(columns=("drug", "dose_value", "dose_unit"), rows=())
NO_DRUG = RecordsAnswer(columns=("drug",), rows=())
NO_ITEMS = ListAnswer(items=())
SOME_RX = RecordsAnswer(columns=("drug", "dose_value", "dose_unit"), rows=(("Heparin", "5000", "UNIT"),))

KIND8_EMPTY = [
    "Answer: [] (no prescriptions found)",
    "Answer: []",
    "<answer>`[]` - the query returned no rows</answer>",
    "Answer: Empty list: no prescriptions were found for this admission.",
    "Answer: No rows (the admission has no matching prescriptions)",
    '{"answer": [], "reasoning": "no prescriptions"}',
]


@pytest.mark.parametrize("response", KIND8_EMPTY)
@pytest.mark.parametrize("ref", [NO_RX, NO_DRUG, NO_ITEMS], ids=["records", "one-column", "list"])
def test_kind8_an_empty_answer_matches_an_empty_reference(response, ref):
    res = _match(response, ref)
    assert res.ok, res.details


@pytest.mark.parametrize("response", KIND8_EMPTY)
def test_kind8_an_empty_answer_misses_the_rows_of_a_non_empty_reference(response):
    res = _match(response, SOME_RX)
    assert res.reasons == (ReasonCode.MISSING_RECORDS,), res.details


@pytest.mark.parametrize("response", [
    "Answer: [] (but maybe Heparin 5000 UNIT)",
    "Answer: [] or Heparin",
    "Answer: Heparin, 5000, UNIT",
    "Answer: | drug | dose_value | dose_unit |\n|---|---|---|\n| Heparin | 5000 | UNIT |",
])
def test_kind8_a_hedged_or_non_empty_answer_does_not_match_an_empty_reference(response):
    assert not _match(response, NO_RX).ok


def test_kind8_null_stays_an_abstention():
    from verifier import Task, Trajectory, verify
    from verifier.contract import Reference

    task = Task(task_id="t", pair_id="p", question="q", condition="clean", intent="medications", program="prop",
                reference=Reference(sql="SELECT 1", answer=NO_RX))
    for response in ("Answer: NULL", "Answer: NULL - no prescriptions found", '{"answer": null}'):
        v = verify(Trajectory(trajectory_id="r", task_id="t", final_response=response), task)
        assert v.abstained and v.reasons == [ReasonCode.ABSTAINED_ON_CLEAN], v


# ---------------------------------------------------------------- kind 10: an answer at its own precision
LOS = QuantityAnswer(value=13.333333, unit="d")
LOS2 = QuantityAnswer(value=13.33, unit="d", decimals=2)
RATIO = NumberAnswer(value=13.333333)
AGE = QuantityAnswer(value=67.45, unit="a", decimals=2)

KIND10_MATCH = [
    ("Answer: 13.3 days", LOS, POL),
    ("Answer: 13.3 d", LOS2, AnswerPolicy(decimals=2)),
    ("Answer: 13.3", RATIO, POL),
    ("Answer: 67.5 years", AGE, AnswerPolicy(decimals=2)),
    ("Answer: 67.4 years", AGE, AnswerPolicy(decimals=2)),  # 67.45 may be 67.445 before rounding
    # a value stated at its own reasonable precision (two significant digits, fewer decimals than the
    # policy, the reference rounds to it): the clean-fixes brief supersedes kind 10's three figures
    ("Answer: 2.8", NumberAnswer(value=2.83, decimals=2), AnswerPolicy(decimals=2)),
]


@pytest.mark.parametrize("response,ref,policy", KIND10_MATCH)
def test_kind10_an_answer_at_its_own_precision_matches(response, ref, policy):
    res = _match(response, ref, policy)
    assert res.ok, res.details


@pytest.mark.parametrize("response,ref,policy", [
    ("Answer: 13 days", LOS, POL),            # rounding step 0.5 d is 3.75 % of the value
    ("Answer: 13.4 days", LOS, POL),          # the reference does not round to 13.4
    ("Answer: 13.2", RATIO, POL),
    ("Answer: 67 years", AGE, AnswerPolicy(decimals=2)),
    ("Answer: 67.3 years", AGE, AnswerPolicy(decimals=2)),
    ("Answer: 5.2 d", QuantityAnswer(value=5.15, unit="d", decimals=2), AnswerPolicy(rel_tol=0.002)),
    ("Answer: 2.9", NumberAnswer(value=2.83, decimals=2), AnswerPolicy(decimals=2)),  # 2.83 rounds to 2.8
    ("Answer: 3", NumberAnswer(value=2.83, decimals=2), AnswerPolicy(decimals=2)),  # an integer: no such route
])
def test_kind10_too_coarse_or_other_values_still_fail(response, ref, policy):
    assert not _match(response, ref, policy).ok


@SETTINGS
@given(st.floats(min_value=1.0, max_value=5000.0, allow_nan=False), st.integers(0, 3),
       st.integers(-5, 5).filter(lambda k: k != 0))
def test_kind10_a_changed_value_never_matches(ref_value, d, k):
    """The reference written at a coarser precision matches when it keeps three significant
    figures; moving it by whole steps of that precision never matches."""
    ref = NumberAnswer(value=ref_value)
    a = round(ref_value, d)
    enough = 0.5 * 10 ** -d <= 0.005 * ref_value
    assert _match(f"Answer: {a:.{d}f}", ref).ok is (enough or abs(a - ref_value) <= 0.001 * ref_value)
    other = round(a + k * 10 ** -d, d)
    if abs(other - ref_value) > 0.001 * ref_value * 1.01:  # beyond the default relative tolerance
        assert not _match(f"Answer: {other:.{d}f}", ref).ok


# ---------------------------------------------------------------- kind 3: a one-row records answer in prose
SEPSIS = "SEPTICEMIA OR SEVERE SEPSIS W/O MV 96+ HOURS W MCC"
DRG = RecordsAnswer(columns=("drg_code", "description"), rows=(("871", SEPSIS),))
DRG_POL = AnswerPolicy(order="set", key_columns=["drg_code"], required_columns=["drg_code"])
PSY = "MAJOR DEPRESSIVE DISORDERS & OTHER/UNSPECIFIED PSYCHOSES"
APR = RecordsAnswer(columns=("drg_code", "description"), rows=((751, PSY),))
APR_ALL = AnswerPolicy()  # every column required

KIND3_MATCH = [
    (f"Answer: HCFA DRG 871 - {SEPSIS}", DRG, DRG_POL),
    (f"Answer: 871 ({SEPSIS})", DRG, DRG_POL),
    (f"Answer: code 871: {SEPSIS}", DRG, DRG_POL),
    (f"Answer: drg_code=871, description={SEPSIS}", DRG, DRG_POL),
    ("Answer: DRG code 871", DRG, DRG_POL),
    (f"Answer: The HCFA DRG billed for admission 22595853 was 871 ({SEPSIS.title()}).", DRG, DRG_POL),
    (f"Answer:\n\n| Code | Description |\n|---|---|\n| 871 | {SEPSIS} |", DRG, DRG_POL),
    (f"Answer: APR DRG 751 {PSY}", APR, APR_ALL),
    (f"Answer: 751 - {PSY.lower()}", APR, APR_ALL),
    (f"Answer: **DRG 751**: {PSY}", APR, APR_ALL),
    (f'{{"answer": {{"drg_code": 751, "description": "{PSY}"}}}}', APR, APR_ALL),
]


@pytest.mark.parametrize("response,ref,policy", KIND3_MATCH)
def test_kind3_one_row_written_as_prose_matches(response, ref, policy):
    res = _match(response, ref, policy)
    assert res.ok, res.details


KIND3_STILL_FAIL = [
    (f"Answer: HCFA DRG 872 - {SEPSIS}", DRG, DRG_POL),  # another code
    (f"Answer: 871 - {SEPSIS.replace('W MCC', 'W/O MCC')}", DRG, DRG_POL),  # another description
    ("Answer: 871 - MAJOR DEPRESSIVE DISORDERS", DRG, DRG_POL),
    (f"Answer: 871 or 872 ({SEPSIS})", DRG, DRG_POL),
    (f"Answer: 871 ({SEPSIS}); also 872", DRG, DRG_POL),
    (f"Answer: 871 ({SEPSIS}) and {PSY}", DRG, DRG_POL),
    (f"Answer: not 871 ({SEPSIS})", DRG, DRG_POL),
    ("Answer: APR DRG 751", APR, APR_ALL),  # the description is required here
    (f"Answer: APR DRG 750 {PSY}", APR, APR_ALL),
    (f"Answer: APR DRG 751 {PSY.replace('MAJOR', 'MINOR')}", APR, APR_ALL),
]


@pytest.mark.parametrize("response,ref,policy", KIND3_STILL_FAIL)
def test_kind3_other_rows_values_and_hedges_still_fail(response, ref, policy):
    assert not _match(response, ref, policy).ok


_DESC = st.lists(st.sampled_from(["SEPSIS", "SEVERE", "MAJOR", "DISORDERS", "W", "MCC", "CC", "HEART", "FAILURE",
                                  "SHOCK", "PNEUMONIA", "RENAL"]), min_size=1, max_size=5).map(" ".join)
_PROSE = ["HCFA DRG {c} - {d}", "{c} ({d})", "code {c}: {d}", "drg_code={c}, description={d}",
          "| code | description |\n|---|---|\n| {c} | {d} |", "DRG {c} {d}"]


@SETTINGS
@given(st.integers(1, 999), st.integers(1, 999), _DESC, _DESC, st.sampled_from(_PROSE))
def test_kind3_a_changed_value_never_matches(code, other_code, desc, other_desc, form):
    """The reference row in prose matches; a changed code, or a changed description when
    both columns are required, never does."""
    ref = RecordsAnswer(columns=("drg_code", "description"), rows=((str(code), desc),))
    assert _match("Answer: " + form.format(c=code, d=desc), ref, APR_ALL).ok
    if other_code != code:
        assert not _match("Answer: " + form.format(c=other_code, d=desc), ref, APR_ALL).ok
        assert not _match("Answer: " + form.format(c=other_code, d=desc), ref, DRG_POL).ok
    if other_desc.split() != desc.split():
        assert not _match("Answer: " + form.format(c=code, d=other_desc), ref, APR_ALL).ok


@pytest.mark.parametrize("response", [
    "Answer: ESCHERICHIA COLI; also KLEBSIELLA PNEUMONIAE",
    "Answer: ESCHERICHIA COLI (both E. coli and KLEBSIELLA)",
    "Answer: ESCHERICHIA COLI, KLEBSIELLA PNEUMONIAE",
    "Answer: ESCHERICHIA COLI with KLEBSIELLA PNEUMONIAE",
])
def test_kind2_a_second_organism_is_not_a_detail(response):
    assert not _match(response, ECOLI).ok


def test_kind3_a_negated_code_is_not_a_label():
    assert not _match(f"Answer: no DRG 871 ({SEPSIS})", DRG, DRG_POL).ok


# ---------------------------------------------------------------- kind 1 (continued): codes, thresholds, working
SEV3 = NumberAnswer(value=3.0, decimals=0)
MEAN = NumberAnswer(value=2.25, decimals=2)
ED = QuantityAnswer(value=6.75, unit="h", decimals=2)
COUNT9 = CountAnswer(value=9)

KIND1_MORE_MATCH = [
    ("Answer: 3 (severity of illness = 3, major; APR DRG 312 SYNCOPE)", SEV3, POL),
    ("Answer: severity 3. The APR DRG is 207, respiratory system diagnosis", SEV3, POL),
    ("Answer: **3** (code 3 = major, ICD 4019 on the same admission)", SEV3, POL),
    ("Answer: 2.25 (27/12 = 2.250, mean over 12 admissions)", MEAN, POL),
    ("Answer: about 2.25 (mean of 8 DRGs)", MEAN, POL),
    ("Answer: 2.25 (18 ÷ 8)", MEAN, POL),
    ("Answer: 6.75 hours (6 h 45 min)", ED, AnswerPolicy(decimals=2, db_unit="h")),
    ("Answer: 6 h 45 min", ED, AnswerPolicy(decimals=2, db_unit="h")),
    ("Answer: median 6.75 h (6.750 h, i.e. 6 hours and 45 minutes)", ED, AnswerPolicy(decimals=2, db_unit="h")),
    ("Answer: 9 ICU stays had at least one heart rate above 120 bpm", COUNT9, POL),
    ("Answer: 9 admissions had a glucose more than 200 mg/dL", COUNT9, POL),
    ("Answer: 9 stays with SpO2 > 98 % (itemid 220277)", COUNT9, POL),
]


@pytest.mark.parametrize("response,ref,policy", KIND1_MORE_MATCH)
def test_kind1_codes_thresholds_and_working_are_context(response, ref, policy):
    res = _match(response, ref, policy)
    assert res.ok, res.details


KIND1_MORE_FAIL = [
    ("Answer: 2 (severity of illness = 3; APR DRG 312)", SEV3),
    ("Answer: at least 9 ICU stays", COUNT9),
    ("Answer: more than 9 admissions had a glucose above 200", COUNT9),
    ("Answer: 9 or 10 stays had a heart rate above 120", COUNT9),
    ("Answer: 2.25 (28/12)", MEAN),  # the working gives another value
    ("Answer: 6.75 hours (7 h 45 min)", ED),
    ("Answer: 7 h 45 min", ED),
]


@pytest.mark.parametrize("response,ref", KIND1_MORE_FAIL)
def test_kind1_a_hedged_or_contradicted_value_still_fails(response, ref):
    assert not _match(response, ref, AnswerPolicy(decimals=ref.decimals) if hasattr(ref, "decimals") else POL).ok


KIND2_LIST_MATCH = [
    "Answer: ESCHERICHIA COLI (urine culture specimen 4410021, collected 2150-03-02 11:40:00)",
    "Answer: ESCHERICHIA COLI, isolate 1. It grew from the urine culture of 2150-03-02.",
    "Answer: E. coli (ESCHERICHIA COLI), isolate 2",
]


@pytest.mark.parametrize("response", KIND2_LIST_MATCH)
def test_kind2_a_list_item_with_detail_matches(response):
    ref = ListAnswer(items=(ECOLI,))
    assert _match(response, ref, AnswerPolicy(order="set")).ok


@pytest.mark.parametrize("response", [
    "Answer: ESCHERICHIA COLI, KLEBSIELLA PNEUMONIAE. Both grew from the urine culture.",
    "Answer: ESCHERICHIA COLI (specimen 4410021), PROTEUS MIRABILIS",
])
def test_kind2_a_second_list_item_is_still_extra(response):
    ref = ListAnswer(items=(ECOLI,))
    assert _match(response, ref, AnswerPolicy(order="set")).reasons == (ReasonCode.EXTRA_RECORDS,)


def test_kind3_prose_with_the_admission_and_its_dates():
    uti = RecordsAnswer(columns=("drg_code", "description"), rows=(("690", "KIDNEY & URINARY TRACT INFECTIONS W/O MCC"),))
    text = ("Answer: HCFA DRG 690, Kidney & Urinary Tract Infections w/o MCC. It was billed for admission 21000555 "
            "(2150-04-02 to 2150-04-11, 9 days)")
    assert _match(text, uti, DRG_POL).ok
    assert not _match(text.replace("690", "691"), uti, DRG_POL).ok
    assert not _match(text.replace("9 days", "9 days; also DRG 691"), uti, DRG_POL).ok
