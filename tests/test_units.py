"""Clinical units: registry, spellings, analyte bridges, UCUM codes, caching, threads."""

from __future__ import annotations

import pickle
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from verifier.contract import UnitError, load_toml
from verifier.units import (
    analyte_keys,
    convert,
    get_analyte,
    get_registry,
    linear_converter,
    parse_unit,
    same_unit,
)


@pytest.mark.parametrize(
    "value, src, dst, analyte, want",
    [
        (5.2, "mEq/L", "mmol/L", "potassium", 5.2),
        (2.4, "mmol/L", "mEq/L", "calcium", 4.8),
        (2.0, "mEq/L", "mmol/L", "Mg_ion", 1.0),
        (90, "mg/dL", "mmol/L", "glucose", 90 / 18.0156),
        (1.0, "mg/dL", "umol/L", "creatinine", 88.40),
        (28.014, "mg/dL", "mmol/L", "BUN", 10.0),
        (10, "mg/dL", "mmol/L", "calcium", 2.4952),
        (3.1, "mg/dL", "mmol/L", "phosphorus", 1.0009),
        (200, "mg/dL", "mmol/L", "cholesterol", 5.1726),
        (1.0, "mg/dL", "umol/L", "bilirubin", 17.104),
        (40, "IU/L", "U/L", "ALT", 40.0),
        (98.6, "°F", "degC", None, 37.0),
        (37, "Cel", "[degF]", None, 98.6),
        (7.5, "x10^9/L", "K/uL", None, 7.5),
        (7.5, "10*9/L", "10*3/uL", None, 7.5),
        (7500, "/uL", "K/uL", None, 7.5),
        (4.5, "m/uL", "10*12/L", None, 4.5),
        (120, "mm Hg", "mm[Hg]", None, 120.0),
        (120, "mmHg", "kPa", None, 15.9987),
        (10, "cmH2O", "cm[H2O]", None, 10.0),
        (60, "mL/min/1.73 m2", "mL/min/1.73m^2", None, 60.0),
        (60, "mL/min/1.73 m2", "mL/s/m2", None, 1.0 / 1.73),
        (35.2, "%", "1", None, 0.352),
        (72, "bpm", "/min", None, 72.0),
        (4, "insulin units", "[iU]", None, 4.0),
        (1, "Kcal", "kJ", None, 4.184),
        (12, "mcg/kg/min", "mg/kg/h", None, 0.72),
        (2.0, "g/dl", "g/L", None, 20.0),
        (1.0, "mg/24hr", "mg/d", None, 1.0),
    ],
)
def test_conversions(value: float, src: str, dst: str, analyte: str | None, want: float) -> None:
    assert convert(value, src, dst, analyte) == pytest.approx(want, rel=2e-4)


@pytest.mark.parametrize(
    "src, dst, analyte, why",
    [
        ("mEq/L", "mmol/L", None, "no analyte"),
        ("mg/dL", "mmol/L", None, "no analyte"),
        ("mg/dL", "mmol/L", "alanine_aminotransferase", "cannot convert"),  # enzyme: no molar mass
        ("mEq/L", "mmol/L", "glucose", "cannot convert"),  # glucose has no valence
        ("IU/L", "U/L", None, "cannot convert"),  # IU is per substance
        ("#/hpf", "/uL", None, "cannot convert"),
        ("mmHg", "mg/dL", None, "cannot convert"),
        ("kg", "mmol/L", "glucose", "cannot convert"),
    ],
)
def test_refused_conversions(src: str, dst: str, analyte: str | None, why: str) -> None:
    c = linear_converter(src, dst, analyte)
    assert c.error and why in c.error and c.incompatible
    with pytest.raises(UnitError):
        convert(1.0, src, dst, analyte)


@pytest.mark.parametrize("bad", ["N/A", "TAB", "log10 copies/mL", "furlongs per fortnight per zorp", "", "mg PE"])
def test_unparseable_units_raise_unit_error(bad: str) -> None:
    with pytest.raises(UnitError) as exc:
        parse_unit(bad)
    assert exc.value.unit == bad


def test_mimic_spellings_are_not_misread_by_pint() -> None:
    # pint alone reads K as kelvin, m as metre, 'mm Hg' as a product: the spelling table wins
    assert parse_unit("K/uL").factor == 1000.0
    assert parse_unit("m/uL").factor == 1e6
    assert same_unit("mm Hg", "mmHg") and same_unit("mEq/L", "meq/L") and same_unit("°C", "degC")
    assert not same_unit("mg/dL", "mg/L")


def test_ucum_codes_are_accepted() -> None:
    for code, same in [("mmol/L", "mmol/L"), ("meq/L", "mEq/L"), ("mm[Hg]", "mmHg"), ("10*3/uL", "K/uL"),
                       ("[iU]/L", "IU/L"), ("U/L", "U/L"), ("Cel", "°C"), ("[degF]", "°F"), ("%", "%"),
                       ("/min", "bpm"), ("g/dL", "g/dl"), ("10*9/L", "x10^9/L"), ("mL/min/{1.73_m2}", "mL/min")]:
        assert same_unit(code, same), code


def test_analyte_table_has_sources_and_required_entries() -> None:
    raw = load_toml("analytes.toml")
    for key in ["glucose", "creatinine", "urea_nitrogen", "calcium", "magnesium", "phosphate", "cholesterol",
                "bilirubin", "potassium", "sodium", "chloride", "bicarbonate"]:
        assert key in analyte_keys()
        assert raw[key]["source"]
    assert get_analyte("BUN").molar_mass == pytest.approx(28.014)
    assert get_analyte("phosphorus").molar_mass == pytest.approx(30.974)
    for ion in ["potassium", "sodium", "chloride", "bicarbonate"]:
        assert get_analyte(ion).valence == 1
    assert get_analyte("Ca").valence == 2
    with pytest.raises(UnitError):
        get_analyte("unobtainium")


def test_registry_is_a_singleton_and_conversions_are_cached() -> None:
    assert get_registry() is get_registry()
    linear_converter.cache_clear()
    linear_converter("mg/dL", "mmol/L", "glucose")
    hits = linear_converter.cache_info().hits
    linear_converter("mg/dL", "mmol/L", "glucose")
    assert linear_converter.cache_info().hits == hits + 1


def test_conversion_is_picklable_and_thread_safe() -> None:
    c = linear_converter("mg/dL", "mmol/L", "glucose")
    assert pickle.loads(pickle.dumps(c)) == c
    pairs = [("mg/dL", "mmol/L", "glucose"), ("°F", "degC", None), ("mEq/L", "mmol/L", "calcium"),
             ("K/uL", "x10^9/L", None), ("mg/dL", "umol/L", "creatinine")] * 40
    linear_converter.cache_clear()
    barrier = threading.Barrier(8)

    def run(p: tuple) -> float:
        try:
            barrier.wait(timeout=5)
        except threading.BrokenBarrierError:
            pass
        return convert(3.0, *p)

    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(run, pairs))
    assert got == [convert(3.0, *p) for p in pairs]


@pytest.mark.parametrize(
    "spelling, same_as",
    [("×10⁹/L", "K/uL"), ("10³/µL", "K/uL"), ("K/µL", "K/uL"), ("K/mcL", "K/uL"), ("thou/uL", "K/uL"),
     ("x 10*9 /L", "K/uL"), ("µmol/L", "umol/L"), ("μg/mL", "ug/mL"), ("mL/min/1.73m²", "mL/min/1.73 m2"),
     ("° F", "degF"), ("degrees celsius", "degC"), ("breaths/min", "insp/min"), ("mmol/l", "mmol/L")],
)
def test_agent_spellings(spelling: str, same_as: str) -> None:
    assert same_unit(spelling, same_as)
