"""Every distinct unit string in the real demo parses, or is listed with a reason.

Reads the distinct units straight from the MIMIC-IV demo CSVs (labevents,
inputevents, outputevents, ingredientevents, prescriptions) and the MEDS
parquet codes for chart events (``LAB//<itemid>//<unit>``, itemid >= 220000),
with DuckDB; no dependency on the database builder. Units listed in
``rules/unparsed_units.toml`` must carry a reason and must really not parse
(refused with the listed reason, never guessed).
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from verifier.contract import UnitError, load_toml
from verifier.units import parse_unit

SOURCES = {
    "labevents.valueuom": ("hosp/labevents.csv.gz", "valueuom"),
    "inputevents.amountuom": ("icu/inputevents.csv.gz", "amountuom"),
    "inputevents.rateuom": ("icu/inputevents.csv.gz", "rateuom"),
    "outputevents.valueuom": ("icu/outputevents.csv.gz", "valueuom"),
    "ingredientevents.amountuom": ("icu/ingredientevents.csv.gz", "amountuom"),
    "ingredientevents.rateuom": ("icu/ingredientevents.csv.gz", "rateuom"),
    "prescriptions.dose_unit_rx": ("hosp/prescriptions.csv.gz", "dose_unit_rx"),
    "prescriptions.form_unit_disp": ("hosp/prescriptions.csv.gz", "form_unit_disp"),
}


@pytest.fixture(scope="module")
def demo_units(mimic_dir: Path, meds_file: Path) -> dict[str, set[str]]:
    con = duckdb.connect()
    found: dict[str, set[str]] = {}
    for label, (rel, col) in SOURCES.items():
        path = mimic_dir / rel
        rows = con.execute(
            f"SELECT DISTINCT \"{col}\" FROM read_csv(?, all_varchar=true) WHERE \"{col}\" IS NOT NULL", [str(path)]
        ).fetchall()
        for (u,) in rows:
            found.setdefault(u, set()).add(label)
    rows = con.execute(
        "SELECT DISTINCT regexp_extract(code, '^LAB//(\\d+)//(.*)$', 2) FROM read_parquet(?) "
        "WHERE code LIKE 'LAB//%' AND TRY_CAST(split_part(code, '//', 2) AS INTEGER) >= 220000",
        [str(meds_file)],
    ).fetchall()
    for (u,) in rows:
        if u:
            found.setdefault(u, set()).add("chartevents.valueuom (MEDS)")
    con.close()
    return found


def test_every_demo_unit_parses_or_is_documented(demo_units: dict[str, set[str]]) -> None:
    listed = load_toml("unparsed_units.toml").get("unit", {})
    for spelling, entry in listed.items():
        assert isinstance(entry, dict) and entry.get("reason"), f"unparsed unit {spelling!r} needs a reason"
    problems, parsed = [], 0
    for unit, where in sorted(demo_units.items()):
        if unit in listed:
            with pytest.raises(UnitError, match="unparsed_units"):
                parse_unit(unit)  # listed units are refused with their reason
            continue
        try:
            parse_unit(unit)
            parsed += 1
        except UnitError as exc:
            problems.append(f"{unit!r} (in {', '.join(sorted(where))}): {exc}")
    print(f"\ndemo unit strings: {len(demo_units)}, parsed {parsed}, documented as unparsed {len(demo_units) - parsed - len(problems)}")
    assert len(demo_units) > 50, "too few unit strings read from the demo"
    assert not problems, "units neither parsed nor in rules/unparsed_units.toml:\n" + "\n".join(problems)


def test_every_demo_unit_matches_itself(demo_units: dict[str, set[str]]) -> None:
    """A value written with the unit exactly as the database stores it matches that reference.

    Regression: ``"1 NEB"`` (prescriptions dose unit of a nebulised dose, refused
    on purpose by the unit parser) used to fail as INCOMPATIBLE_UNIT against the
    reference ``1 NEB``. Identical spellings are the identity conversion, parsed
    or not; a different value still fails, and a different dose form never converts.
    """
    from verifier.contract import AnswerPolicy, QuantityAnswer, ReasonCode
    from verifier.match.extract import _STOP
    from verifier.match.numbers import match_quantity

    policy = AnswerPolicy()
    failures, skipped = [], []
    for unit in sorted(demo_units):
        words = unit.split()
        if not words or not re.match(r"[A-Za-zµμ°º%#/\[{]", unit) or any(w.casefold() in _STOP for w in words):
            # not readable as a unit in free text by design (verifier.match.extract): '+/-',
            # 'in' (inch, also an English word), 'MD to order daily dose' (an instruction)
            skipped.append(unit)
            continue
        ref = QuantityAnswer(value=2.5, unit=unit, decimals=1)
        got = match_quantity(f"2.5 {unit}", ref, policy)
        if not got.ok:
            failures.append(f"{unit!r}: {got.reasons} {got.details}")
        wrong = match_quantity(f"7.5 {unit}", ref, policy)
        assert not wrong.ok, f"7.5 {unit} matched 2.5 {unit}"
    assert not failures, "units that do not match themselves:\n" + "\n".join(failures)
    assert len(skipped) <= 5, f"too many demo units unreadable in free text: {skipped}"
    neb = QuantityAnswer(value=1, unit="NEB", decimals=0)
    assert match_quantity("1 neb", neb, policy).ok
    assert match_quantity("1 TAB", neb, policy).reasons == (ReasonCode.INCOMPATIBLE_UNIT,)
