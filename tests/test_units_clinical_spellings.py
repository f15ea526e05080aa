"""Clinical spellings of a unit and of a decimal number (QA pass, finding 1).

Clinical text writes units in upper case ("MG/DL"), as "milligrams percent" ("mg%") or per 100 mL,
and some writers use a decimal comma ("1,7"). Each spelling of the reference's value matches; a
changed value never does; case is read loosely only when the exact spelling does not parse.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier import verify
from verifier.contract import AnswerPolicy as P
from verifier.contract import QuantityAnswer, Trajectory
from verifier.contract import ReasonCode as R
from verifier.match.dispatch import match_answer
from verifier.units import parse_unit
from verifier.units.convert import same_unit

SPELLINGS = ["{v} MG/DL", "{v} mg%", "{v} mg %", "{v} mg/100mL", "{v} mg/100 mL", "{v} Mg/Dl", "{v} mg/dL"]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_clinical_spellings_of_mg_per_dl_match(spelling: str) -> None:
    ref = QuantityAnswer(value=1.7, unit="mg/dL", decimals=1)
    res = match_answer(spelling.format(v="1.7"), ref, P(), None)
    assert res.ok, res


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_clinical_spellings_convert_from_molar(spelling: str) -> None:
    # glucose 90 mg/dL is 5.0 mmol/L whatever the spelling of mg/dL
    res = match_answer(spelling.format(v="90"), QuantityAnswer(value=5.0, unit="mmol/L", decimals=1),
                       P(analyte="glucose"), None)
    assert res.ok, res


def test_upper_case_molar_unit_parses() -> None:
    assert same_unit("MMOL/L", "mmol/L")
    assert same_unit("NG/ML", "ng/mL")


def test_case_is_not_folded_when_the_exact_spelling_parses() -> None:
    # UCUM is case-sensitive: "Ms" is a megasecond, not a millisecond
    assert not same_unit("Ms", "ms")
    assert parse_unit("Ms").via != "casefold"


def test_ambiguous_case_folding_is_refused() -> None:
    # lower case reads "u/hr" as atomic mass units per hour, UCUM's case-insensitive codes as
    # enzyme units per hour: the readings disagree, so no guess is made
    with pytest.raises(Exception):
        parse_unit("U/HR")


@pytest.mark.parametrize("text", ["1,7 mg/dL", "1,70 mg/dL"])
def test_unambiguous_decimal_comma(text: str) -> None:
    assert match_answer(text, QuantityAnswer(value=1.7, unit="mg/dL", decimals=1), P(), None).ok


@pytest.mark.parametrize("text", ["1,700 mg/dL", "1,7,0 mg/dL", "1,7.0 mg/dL"])
def test_ambiguous_commas_are_not_decimal(text: str) -> None:
    assert not match_answer(text, QuantityAnswer(value=1.7, unit="mg/dL", decimals=1), P(), None).ok


def test_thousands_separator_kept() -> None:
    assert match_answer("1,700 mg/dL", QuantityAnswer(value=1700, unit="mg/dL", decimals=0), P(), None).ok


ALL = SPELLINGS + ["{c} mg/dL", "{c} MG/DL", "{c} mg%"]


@settings(max_examples=60, deadline=None)
@given(tenths=st.integers(min_value=1, max_value=999), delta=st.integers(min_value=1, max_value=50),
       sign=st.sampled_from([-1, 1]), spelling=st.sampled_from(ALL))
def test_changed_value_never_matches(tenths: int, delta: int, sign: int, spelling: str) -> None:
    """Property: a value changed by at least 0.1 fails in every spelling; the true value passes."""
    ref = QuantityAnswer(value=tenths / 10, unit="mg/dL", decimals=1)
    changed = (tenths + sign * delta) / 10
    if changed <= 0:
        return
    def say(v: float) -> str:
        return spelling.format(v=f"{v:.1f}", c=f"{v:.1f}".replace(".", ","))
    assert match_answer(say(ref.value), ref, P(), None).ok
    res = match_answer(say(changed), ref, P(), None)
    assert not res.ok and R.WRONG_VALUE in res.reasons, (say(changed), res)


def test_clean_quantity_task_on_real_data_accepts_upper_case(synth_tasks: list) -> None:
    """On the synthetic hospital, a Clean quantity task in mg/dL accepts the upper-case spelling."""
    tasks = [t for t in synth_tasks if t.condition == "clean" and isinstance(t.reference.answer, QuantityAnswer)
             and t.reference.answer.unit and t.reference.answer.unit.casefold() == "mg/dl"]
    if not tasks:
        pytest.skip("the synthetic hospital built no Clean mg/dL quantity task")
    task = tasks[0]
    ref = task.reference.answer
    value = f"{ref.value:.{ref.decimals or 0}f}" if ref.decimals is not None else f"{ref.value}"
    for unit in ("MG/DL", "mg%", "mg/100 mL"):
        traj = Trajectory(trajectory_id="t", task_id=task.task_id, steps=[],
                          final_response=f"<answer>{value} {unit}</answer><reasoning>from labs</reasoning>")
        v = verify(traj, task)
        assert v.success, (unit, v.reasons, v.details)


# ---------------------------------------------------------------- mixed case that parses as something else
#: Concentration units of clinical chemistry; each letter's case is varied by the properties below.
CONCENTRATIONS = ["mg/dL", "g/dL", "mmol/L", "mEq/L", "ng/mL", "pg/mL", "ug/mL", "mg/L", "umol/L", "g/L",
                  "ng/dL", "ug/dL"]


def _recased(unit: str, upper: list[bool]) -> str:
    letters = iter(upper)
    return "".join((c.upper() if next(letters, False) else c.lower()) if c.isalpha() else c for c in unit)


@pytest.mark.parametrize("spelling", ["MG/dL", "mG/dL", "MG/dl", "Mg/DL"])
def test_mixed_case_mg_per_dl_matches_when_its_exact_reading_is_no_concentration(spelling: str) -> None:
    # "MG" as written is a megagauss: no concentration can be one, so the clinical reading is the only one
    ref = QuantityAnswer(value=4.1, unit="mg/dL", decimals=1)
    res = match_answer(f"4.1 {spelling}", ref, P(), None)
    assert res.ok, res
    glucose = match_answer(f"90 {spelling}", QuantityAnswer(value=5.0, unit="mmol/L", decimals=1), P(analyte="glucose"), None)
    assert glucose.ok, glucose


def test_a_mixed_case_reading_that_is_a_concentration_as_written_is_kept() -> None:
    # "Mg/dL" is megagrams per decilitre: a concentration, a billion times mg/dL; never re-read
    res = match_answer("4.1 Mg/dL", QuantityAnswer(value=4.1, unit="mg/dL", decimals=1), P(), None)
    assert not res.ok and R.INCOMPATIBLE_UNIT not in res.reasons, res
    assert not same_unit("Ms", "ms") and not same_unit("ng/ML", "ng/mL")  # megalitre as written


@settings(max_examples=150, deadline=None)
@given(unit=st.sampled_from(CONCENTRATIONS), upper=st.lists(st.booleans(), min_size=6, max_size=6),
       tenths=st.integers(min_value=1, max_value=9999))
def test_a_recased_concentration_is_read_as_written_when_that_is_compatible_else_as_the_clinical_unit(
        unit: str, upper: list[bool], tenths: int) -> None:
    """Property: any letter case of a clinical concentration unit either keeps its exact-case reading
    (when that parses and is dimensionally compatible with the reference: then no case folding
    happens) or denotes the reference unit itself (the same value matches)."""
    from verifier.units import linear_converter

    spelling = _recased(unit, upper)
    ref = QuantityAnswer(value=tenths / 10, unit=unit, decimals=1)
    written = parse_unit(spelling)
    conv = linear_converter(spelling, unit)
    assert conv.error is None, (spelling, conv)
    if written.via != "casefold" and written.dimensionality == parse_unit(unit).dimensionality:
        assert "case-insensitively" not in conv.bridge, (spelling, conv)  # the exact reading wins
        expected = match_answer(f"{tenths / 10:.1f} {unit}", ref, P(), None).ok and abs(conv.scale - 1) < 1e-12
        assert match_answer(f"{tenths / 10:.1f} {spelling}", ref, P(), None).ok == expected
    else:
        assert abs(conv.scale - 1.0) < 1e-12 and conv.offset == 0.0, (spelling, conv)
        assert match_answer(f"{tenths / 10:.1f} {spelling}", ref, P(), None).ok, spelling
