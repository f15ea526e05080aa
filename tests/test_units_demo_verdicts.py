"""Issue 32, point 3: every distinct unit string of the real MIMIC-IV demo, with its verdict.

The list below is held here, not derived: each unit string either converts (to the unit named,
one of it being that many of the target: a pint base-unit expression, or the unit the verdict
relies on) or is explicitly not a unit, with why. The test reads every unit column of the demo
CSVs (``*uom``, ``*_unit``, ``unitname``; ``MIMIC_DEMO_DIR``) when the folder is present, so a
unit string the data holds and this list does not fails it (skipped, saying so, when absent).

Insulin and heparin: ``units``, ``unit``, ``UNIT``, ``U`` and ``IU`` name one unit on dose and
rate columns; ``U`` against the word ``unit(s)`` converts 1:1 whatever the analyte
(``verifier.units.convert._dose_unit_bridges``), never to a mass.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import NamedTuple

import pytest

from verifier.contract import UnitError
from verifier.units import parse_unit
from verifier.units.convert import linear_converter


class NOT(NamedTuple):
    """Explicitly not a unit (parse_unit refuses it), and why."""

    why: str


#: Unit columns of the demo CSVs (careunit columns name wards, not units).
_UNIT_COLUMN = re.compile(r"(uom|_unit|unitname)$", re.I)

DEMO_UNITS = {
    ' ': NOT('listed in rules/unparsed_units.toml: blank unit field (labevents rows without a unit)'),
    '#/hpf': ('count / high_power_field', 1.0),
    '#/lpf': ('count / low_power_field', 1.0),
    '#/uL': ('count / meter ** 3', 1000000000.0),
    '%': ('dimensionless', 0.01),
    '% of current infusion rate': NOT('relative rate instruction (a share of another rate), not a unit'),
    '+/-': NOT('listed in rules/unparsed_units.toml: qualitative result marker (positive/negative), not a unit'),
    '/hpf': ('count / high_power_field', 1.0),
    '/min': ('1 / second', 0.0166667),
    'AERO': NOT('listed in rules/unparsed_units.toml: dosage form (aerosol canister)'),
    'AMP': NOT('listed in rules/unparsed_units.toml: dosage form (ampoule)'),
    'Appl': NOT('listed in rules/unparsed_units.toml: dosage form (applicatorful/application)'),
    'BAG': NOT('listed in rules/unparsed_units.toml: dosage form (bag)'),
    'bpm': ('count / second', 0.0166667),
    'BTL': NOT('listed in rules/unparsed_units.toml: dosage form (bottle)'),
    'CADD': NOT('listed in rules/unparsed_units.toml: dosage form (CADD pump cassette)'),
    'CAN': NOT('listed in rules/unparsed_units.toml: dosage form (can)'),
    'CAP': NOT('listed in rules/unparsed_units.toml: dosage form (capsule)'),
    'CART': NOT('listed in rules/unparsed_units.toml: dosage form (cartridge)'),
    'cm': ('meter', 0.01),
    'cmH2O': ('kilogram / meter / second ** 2', 98.0665),
    'cmH2O/L/seconds': ('kilogram / meter ** 4 / second ** 3', 98066.5),
    'Date': NOT('datetimeevents: the value is a date, not a quantity'),
    'Date and Time': NOT('datetimeevents: the value is a datetime, not a quantity'),
    'day': ('second', 86400.0),
    'Days': ('second', 86400.0),
    'DBTL': NOT('listed in rules/unparsed_units.toml: dosage form (dropper bottle)'),
    'Degree': ('radian', 0.0174533),
    'DEV': NOT('listed in rules/unparsed_units.toml: dosage form (device)'),
    'dose': NOT('listed in rules/unparsed_units.toml: a count of doses; the dose size is not stated, so it converts to nothing'),
    'DROP': ('meter ** 3', 5e-08),
    'DRP': NOT("listed in rules/unparsed_units.toml: dosage form (dropperful), unlike 'DROP'/'gtt' which are drops of 0.05 mL"),
    'dynes*sec/cm5': ('kilogram / meter ** 4 / second', 100000.0),
    'dynes*sec/cm5/m2': ('kilogram / meter ** 6 / second', 100000.0),
    'dynes.sec.cm-5/m2': ('kilogram / meter ** 6 / second', 100000.0),
    'Enema': NOT('listed in rules/unparsed_units.toml: dosage form (enema)'),
    'Enter on Label': NOT('free-text instruction in prescriptions, not a unit'),
    'fL': ('meter ** 3', 1e-18),
    'g': ('kilogram', 0.001),
    'g/dL': ('kilogram / meter ** 3', 10.0),
    'g/dl': ('kilogram / meter ** 3', 10.0),
    'g/kg': ('dimensionless', 0.001),
    'gm': ('kilogram', 0.001),
    'gm/hr': ('kilogram / second', 2.77778e-07),
    'GPL': ('1 / meter ** 3', 1000000.0),
    'gram/12 gram': ('dimensionless', 0.0833333),
    'grams': ('kilogram', 0.001),
    'grams/hour': ('kilogram / second', 2.77778e-07),
    'grams/min': ('kilogram / second', 1.66667e-05),
    'gtt': ('meter ** 3', 5e-08),
    'HALF TAB': NOT('listed in rules/unparsed_units.toml: dosage form (half tablet)'),
    'hour': ('second', 3600.0),
    'Hours': ('second', 3600.0),
    'hrs': ('second', 3600.0),
    'in': ('meter', 0.0254),
    'Inch': ('meter', 0.0254),
    'INH': NOT('listed in rules/unparsed_units.toml: dosage form (inhalation)'),
    'insp/min': ('count / second', 0.0166667),
    'International Units': ('IU', 1.0),
    'IU/ 0 IU': NOT('malformed ratio with a zero denominator (emar_detail), not a unit'),
    'IU/L': ('IU / meter ** 3', 1000.0),
    'IU/mL': ('IU / meter ** 3', 1000000.0),
    'JAR': NOT('listed in rules/unparsed_units.toml: dosage form (jar)'),
    'K/uL': ('1 / meter ** 3', 1000000000000.0),
    'Kcal': ('kilogram * meter ** 2 / second ** 2', 4184.0),
    'kcal/day': ('kilogram * meter ** 2 / second ** 3', 0.0484259),
    'kcal/kg': ('meter ** 2 / second ** 2', 4184.0),
    'kg': ('kilogram', 1.0),
    'KIT': NOT('listed in rules/unparsed_units.toml: dosage form (kit)'),
    'kJ': ('kilogram * meter ** 2 / second ** 2', 1000.0),
    'L': ('meter ** 3', 0.001),
    'L/min': ('meter ** 3 / second', 1.66667e-05),
    'L/min/m2': ('meter / second', 1.66667e-05),
    'lbs': ('kilogram', 0.453592),
    'Liters': ('meter ** 3', 0.001),
    'log10 cop/mL': NOT('listed in rules/unparsed_units.toml: logarithmic viral-load scale; log values must not be converted linearly'),
    'log10 copies/mL': NOT('listed in rules/unparsed_units.toml: logarithmic viral-load scale; log values must not be converted linearly'),
    'log10 IU/mL': NOT('listed in rules/unparsed_units.toml: logarithmic viral-load scale; log values must not be converted linearly'),
    'LOZ': NOT('listed in rules/unparsed_units.toml: dosage form (lozenge)'),
    'm/uL': ('1 / meter ** 3', 1000000000000000.0),
    'mA': ('ampere', 0.001),
    'mcg': ('kilogram', 1e-09),
    'mcg/h': ('kilogram / second', 2.77778e-13),
    'mcg/hour': ('kilogram / second', 2.77778e-13),
    'mcg/hr': ('kilogram / second', 2.77778e-13),
    'mcg/kg': ('dimensionless', 1e-09),
    'mcg/kg/hour': ('1 / second', 2.77778e-13),
    'mcg/kg/hr': ('1 / second', 2.77778e-13),
    'MCG/KG/MIN': ('1 / second', 1.66667e-11),
    'mcg/kg/min': ('1 / second', 1.66667e-11),
    'mcg/min': ('kilogram / second', 1.66667e-11),
    'MD to order daily dose': NOT('listed in rules/unparsed_units.toml: free-text instruction in prescriptions.dose_unit_rx, not a unit'),
    'mEq': ('equivalent', 0.001),
    'meq': ('equivalent', 0.001),
    'mEq.': ('equivalent', 0.001),
    'mEq./hour': ('equivalent / second', 2.77778e-07),
    'mEq/L': ('equivalent / meter ** 3', 1.0),
    'MG': ('mg', 1.0),  # megagauss as written; against any mass it is read case-insensitively (convert.py)
    'mg': ('kilogram', 1e-06),
    'mg PE': NOT('listed in rules/unparsed_units.toml: milligrams of phenytoin equivalents (fosphenytoin dosing); not interchangeable with mg of the drug, so not converted'),
    'mg/24hr': ('kilogram / second', 1.15741e-11),
    'mg/day': ('kilogram / second', 1.15741e-11),
    'mg/dL': ('kilogram / meter ** 3', 0.01),
    'mg/g': ('dimensionless', 0.001),
    'mg/hour': ('kilogram / second', 2.77778e-10),
    'mg/hr': ('kilogram / second', 2.77778e-10),
    'mg/kg/hr': ('1 / second', 2.77778e-10),
    'mg/L': ('kilogram / meter ** 3', 0.001),
    'mg/mg': ('dimensionless', 1.0),
    'mg/min': ('kilogram / second', 1.66667e-08),
    'min': ('second', 60.0),
    'mIU/mL': ('IU / meter ** 3', 1000.0),
    'ML': ('meter ** 3', 1e-06),
    'mL': ('meter ** 3', 1e-06),
    'ml': ('meter ** 3', 1e-06),
    'mL SC': NOT("volume with a route ('SC', subcutaneous) appended; the route is not a unit"),
    'mL UDCUP': NOT("volume with a dosage form ('UDCUP') appended"),
    'mL/beat': ('meter ** 3 / count', 1e-06),
    'mL/hour': ('meter ** 3 / second', 2.77778e-10),
    'mL/hr': ('meter ** 3 / second', 2.77778e-10),
    'ml/hr': ('meter ** 3 / second', 2.77778e-10),
    'ml/kg': ('meter ** 3 / kilogram', 1e-06),
    'mL/m2': ('meter', 1e-06),
    'mL/min': ('meter ** 3 / second', 1.66667e-08),
    'ml/min': ('meter ** 3 / second', 1.66667e-08),
    'mL/min/m2': ('meter / second', 1.66667e-08),
    'mm Hg': ('kilogram / meter / second ** 2', 133.322),
    'mm/hr': ('meter / second', 2.77778e-07),
    'mmHg': ('kilogram / meter / second ** 2', 133.322),
    'mmHg.': ('kilogram / meter / second ** 2', 133.322),
    'mmol': ('mole', 0.001),
    'mmol/L': ('mole / meter ** 3', 1.0),
    'mOsm/kg': ('mole / kilogram', 0.001),
    'MPL': ('1 / meter ** 3', 1000000.0),
    'msec': ('second', 0.001),
    'mV': ('kilogram * meter ** 2 / ampere / second ** 3', 0.001),
    'N/A': NOT('listed in rules/unparsed_units.toml: not applicable marker, not a unit (pint would read newton/ampere)'),
    'NEB': NOT('listed in rules/unparsed_units.toml: dosage form (nebule)'),
    'Neb': NOT("dosage form (nebule), as 'NEB' in rules/unparsed_units.toml"),
    'ng': ('kilogram', 1e-12),
    'ng/dL': ('kilogram / meter ** 3', 1e-08),
    'ng/mL': ('kilogram / meter ** 3', 1e-06),
    'ng/mL FEU': ('kilogram / meter ** 3', 1e-06),
    'None': NOT('marker for no unit (emar_detail), not a unit'),
    'ounces': ('kilogram', 0.0283495),
    'Patch': NOT("dosage form (patch), as 'PTCH'"),
    'PEN': NOT('listed in rules/unparsed_units.toml: dosage form (pen injector)'),
    'pg': ('kilogram', 1e-15),
    'pg/mL': ('kilogram / meter ** 3', 1e-09),
    'PKT': NOT('listed in rules/unparsed_units.toml: dosage form (packet)'),
    'ppm': ('dimensionless', 1e-06),
    'psi': ('kilogram / meter / second ** 2', 6894.76),
    'PTCH': NOT('listed in rules/unparsed_units.toml: dosage form (patch)'),
    'PUFF': NOT('listed in rules/unparsed_units.toml: dosage form (puff)'),
    'Ratio': ('dimensionless', 1.0),
    'RPM': ('radian / second', 0.10472),
    'sec': ('second', 1.0),
    'SPRY': NOT('listed in rules/unparsed_units.toml: dosage form (spray)'),
    'STCK': NOT('listed in rules/unparsed_units.toml: dosage form (stick)'),
    'SUPP': NOT('listed in rules/unparsed_units.toml: dosage form (suppository)'),
    'SYR': NOT('listed in rules/unparsed_units.toml: dosage form (syringe)'),
    'Syringe': NOT("dosage form (syringe), as 'SYR'"),
    'syringe': NOT("dosage form (syringe), as 'SYR'"),
    'SYRP': NOT('listed in rules/unparsed_units.toml: dosage form (syrup bottle)'),
    'TAB': NOT('listed in rules/unparsed_units.toml: dosage form (tablet)'),
    'tab': NOT("dosage form (tablet), as 'TAB'"),
    'TPN Bag': NOT("dosage form (bag of parenteral nutrition), as 'BAG'"),
    'TROC': NOT('listed in rules/unparsed_units.toml: dosage form (troche)'),
    'TUBE': NOT('listed in rules/unparsed_units.toml: dosage form (tube)'),
    'U': ('mole / second', 1.66667e-08),
    'U/g/Hb': ('mole / kilogram / second', 1.66667e-05),
    'U/mL': ('mole / meter ** 3 / second', 0.0166667),
    'UDCUP': NOT('listed in rules/unparsed_units.toml: dosage form (unit-dose cup)'),
    'ug/dL': ('kilogram / meter ** 3', 1e-05),
    'ug/mL': ('kilogram / meter ** 3', 0.001),
    'uIU/mL': ('IU / meter ** 3', 1.0),
    'umol/L': ('mole / meter ** 3', 0.001),
    'UNIT': ('IU', 1.0),
    'unit': ('IU', 1.0),
    'UNIT/HR': ('IU / second', 0.000277778),
    'unit/mL': ('IU / meter ** 3', 1000000.0),
    'Units': ('IU', 1.0),
    'units': ('IU', 1.0),
    'units/hour': ('IU / second', 0.000277778),
    'units/hr': ('IU / second', 0.000277778),
    'units\\ 0 units': NOT('malformed ratio with a zero denominator (emar_detail), not a unit'),
    'VIAL': NOT('listed in rules/unparsed_units.toml: dosage form (vial)'),
    'Vial': NOT("dosage form (vial), as 'VIAL'"),
    'WAF': NOT('listed in rules/unparsed_units.toml: dosage form (wafer)'),
    'Watts': ('kilogram * meter ** 2 / second ** 3', 1.0),
    'years': ('second', 31557600.0),
    '°C': ('kelvin', 274.15),
    '°F': ('kelvin', 255.928),
}


def _demo_unit_strings(root: Path) -> dict[str, set[str]]:
    import duckdb

    con = duckdb.connect()
    found: dict[str, set[str]] = {}
    try:
        for path in sorted(root.glob("*/*.csv.gz")):
            cols = [r[0] for r in con.execute("DESCRIBE SELECT * FROM read_csv(?, all_varchar=true)", [str(path)]).fetchall()]
            for col in cols:
                if not _UNIT_COLUMN.search(col) or "careunit" in col:
                    continue
                rows = con.execute(f'SELECT DISTINCT "{col}" FROM read_csv(?, all_varchar=true) WHERE "{col}" IS NOT NULL',
                                   [str(path)]).fetchall()
                for (u,) in rows:
                    found.setdefault(u, set()).add(f"{path.parent.name}/{path.name.split('.')[0]}.{col}")
    finally:
        con.close()
    return found


def test_every_demo_unit_string_is_in_the_list(mimic_dir: Path) -> None:
    found = _demo_unit_strings(mimic_dir)
    missing = {u: sorted(w) for u, w in found.items() if u not in DEMO_UNITS}
    assert not missing, f"unit strings of the demo without a verdict in DEMO_UNITS: {missing}"
    assert len(found) >= 150  # every unit column was read


@pytest.mark.parametrize("unit", sorted(DEMO_UNITS))
def test_the_verdict_holds(unit: str) -> None:
    verdict = DEMO_UNITS[unit]
    if isinstance(verdict, NOT):
        assert verdict.why
        with pytest.raises(UnitError):
            parse_unit(unit)
        return
    target, factor = verdict
    conv = linear_converter(unit, target)
    assert conv.error is None, conv.error
    one = conv.scale + conv.offset
    assert math.isclose(one, factor, rel_tol=1e-5), (unit, target, one, factor)


DOSE_UNITS = ("units", "unit", "UNIT", "Units", "U", "International Units")


@pytest.mark.parametrize("answer", ["U/hr", "U/h", "units/hr", "unit/hr", "UNIT/HR", "units/hour", "IU/hr"])
def test_insulin_rates_in_units_and_u_are_one_unit(answer: str) -> None:
    conv = linear_converter(answer, "units/hr")
    assert conv.error is None and conv.scale == 1.0 and conv.offset == 0.0, conv


@pytest.mark.parametrize("a", DOSE_UNITS)
@pytest.mark.parametrize("b", DOSE_UNITS)
def test_dose_units_are_one_entity(a: str, b: str) -> None:
    conv = linear_converter(a, b)
    assert conv.error is None and conv.scale == 1.0, (a, b, conv)


@pytest.mark.parametrize("unit", DOSE_UNITS + ("U/mL", "unit/mL", "units/hr"))
@pytest.mark.parametrize("mass", ["mg", "mcg", "g", "mg/mL", "mg/hr"])
@pytest.mark.parametrize("analyte", [None, "insulin", "heparin"])
def test_dose_units_never_convert_to_mass(unit: str, mass: str, analyte: str | None) -> None:
    assert linear_converter(unit, mass, analyte).incompatible


def test_heparin_concentration_u_per_ml():
    assert linear_converter("U/mL", "unit/mL").scale == 1.0
    assert linear_converter("units/mL", "U/mL").scale == 1.0


def test_international_units_and_enzyme_units_stay_apart_without_the_word_units():
    # IU is defined per substance: IU/L against U/L converts only through an analyte (enzymes)
    assert linear_converter("IU/L", "U/L").incompatible
    assert linear_converter("IU/L", "U/L", "ALT").scale == 1.0


def test_an_insulin_rate_answer_in_u_matches_a_reference_in_units():
    from verifier.contract import AnswerPolicy, QuantityAnswer
    from verifier.match.dispatch import match_answer

    ref = QuantityAnswer(value=4, unit="units/hr", decimals=0)
    assert match_answer("4 U/hr", ref, AnswerPolicy()).ok
    assert match_answer("4 units/hr", ref, AnswerPolicy()).ok
    assert not match_answer("5 U/hr", ref, AnswerPolicy()).ok
    assert not match_answer("4 mg/hr", ref, AnswerPolicy()).ok
