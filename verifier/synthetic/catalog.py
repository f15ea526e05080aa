"""The synthetic hospital's clinical content, read from ``catalog.toml`` beside this module.

Lab items, ICU items, drugs, conditions, comorbidities, rare diagnoses, procedures,
HCPCS codes, cultures, organisms and administrative vocabularies are data (reviewable
by a clinician), not code. Item ids and labels follow the public MIMIC-IV v2.2
dictionaries; no real patient record is read.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..contract import RulesError

CATALOG_PATH = Path(__file__).with_name("catalog.toml")

Range = tuple[float, float]


@dataclass(frozen=True)
class LabItem:
    """A laboratory item: ``itemid``, dictionary fields, unit, reference range, rounding, panel."""

    itemid: int
    label: str
    fluid: str
    category: str
    unit: str
    ref_low: float
    ref_high: float
    decimals: int
    panel: str


@dataclass(frozen=True)
class Drug:
    """A medication as ordered (prescriptions/pharmacy/poe) and given (emar, ICU inputevents)."""

    name: str
    formulary: str
    gsn: str
    ndc: str
    strength: str
    form: str
    dose: str
    unit: str
    disp: str
    disp_unit: str
    route: str
    frequency: str
    per_day: int
    proc_type: str
    icu_itemid: int


@dataclass(frozen=True)
class Coded:
    """A diagnosis with its catalog key and its (code, title) in ICD-9-CM and ICD-10-CM."""

    key: str
    icd9: tuple[str, str]
    icd10: tuple[str, str]


@dataclass(frozen=True)
class Condition(Coded):
    """A principal problem of an admission with its codes, DRGs, care pattern and lab/vital effects.

    ``labs`` and ``vitals`` map itemid -> (low, high) of the day-1 value.
    """

    drg_hcfa: tuple[str, str]
    drg_apr: tuple[str, str]
    service: str
    ward: str
    icu_probability: float
    careunits: tuple[str, ...]
    ventilation_probability: float
    drugs: tuple[str, ...]
    icu_drugs: tuple[str, ...]
    culture: str
    labs: dict[int, Range]
    vitals: dict[int, Range]


@dataclass(frozen=True)
class Comorbidity(Coded):
    """A chronic diagnosis carried on every admission; ``labs`` shifts the baseline (itemid -> range)."""

    prevalence: float
    min_patients: int
    drugs: tuple[str, ...]
    labs: dict[int, Range]


@dataclass(frozen=True)
class Rare(Coded):
    """A rare diagnosis given to exactly ``patients`` patients (a small population, 1-4)."""

    patients: int


@dataclass(frozen=True)
class Catalog:
    """Everything the generator draws from (see ``catalog.toml`` for the meaning of each table)."""

    lab_items: tuple[LabItem, ...]
    icu_items: tuple[tuple[Any, ...], ...]
    vital_signs: tuple[tuple[int, float, float, int, int], ...]
    drugs: dict[str, Drug]
    icu_fluids: dict[str, Any]
    conditions: dict[str, Condition]
    comorbidities: tuple[Comorbidity, ...]
    rare: tuple[Rare, ...]
    procedures: dict[str, tuple[str, str, str, str]]
    hcpcs: tuple[tuple[str, str, str, str], ...]
    cultures: dict[str, tuple[Any, ...]]
    organisms: dict[int, tuple[str, str]]
    antibiotic_panels: dict[str, tuple[tuple[int, str, float, float], ...]]
    vocab: dict[str, tuple[str, ...]]

    def lab(self, itemid: int) -> LabItem:
        """The lab item ``itemid``. Raises KeyError when unknown."""
        for item in self.lab_items:
            if item.itemid == itemid:
                return item
        raise KeyError(itemid)

    def icu_unit(self, itemid: int) -> str | None:
        """The d_items unitname of ICU item ``itemid`` (None when empty). Raises KeyError when unknown."""
        for row in self.icu_items:
            if row[0] == itemid:
                return row[5] or None
        raise KeyError(itemid)

    def icu_label(self, itemid: int) -> str:
        """The d_items label of ICU item ``itemid``. Raises KeyError when unknown."""
        for row in self.icu_items:
            if row[0] == itemid:
                return row[1]
        raise KeyError(itemid)


def _ranges(table: dict[str, list[float]]) -> dict[int, Range]:
    return {int(k): (float(v[0]), float(v[1])) for k, v in table.items()}


def _pair(v: list[str]) -> tuple[str, str]:
    return (str(v[0]), str(v[1]))


@lru_cache(maxsize=1)
def load_catalog(path: Path = CATALOG_PATH) -> Catalog:
    """Parse ``catalog.toml`` into a :class:`Catalog` (cached; read-only).

    Raises:
        RulesError: the file is missing, not TOML, or a table is malformed
            (e.g. a condition naming a drug that is not listed).
    """
    try:
        with open(path, "rb") as fh:
            d = tomllib.load(fh)
    except FileNotFoundError as exc:
        raise RulesError(path, "missing synthetic hospital catalog") from exc
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(path, f"invalid TOML: {exc}") from exc
    try:
        drugs = {x["name"]: Drug(**x) for x in d["drug"]}
        conditions = {
            c["key"]: Condition(
                key=c["key"], icd9=_pair(c["icd9"]), icd10=_pair(c["icd10"]),
                drg_hcfa=_pair(c["drg_hcfa"]), drg_apr=_pair(c["drg_apr"]),
                service=c["service"], ward=c["ward"], icu_probability=float(c["icu_probability"]),
                careunits=tuple(c["careunits"]), ventilation_probability=float(c["ventilation_probability"]),
                drugs=tuple(c["drugs"]), icu_drugs=tuple(c["icu_drugs"]), culture=c["culture"],
                labs=_ranges(c["labs"]), vitals=_ranges(c["vitals"]),
            )
            for c in d["condition"]
        }
        comorbidities = tuple(
            Comorbidity(
                key=c["key"], icd9=_pair(c["icd9"]), icd10=_pair(c["icd10"]),
                prevalence=float(c["prevalence"]), min_patients=int(c["min_patients"]),
                drugs=tuple(c["drugs"]), labs=_ranges(c["labs"]),
            )
            for c in d["comorbidity"]
        )
        cat = Catalog(
            lab_items=tuple(LabItem(*row) for row in d["lab_items"]),
            icu_items=tuple(tuple(row) for row in d["icu_items"]),
            vital_signs=tuple(tuple(row) for row in d["vital_signs"]),  # type: ignore[misc]
            drugs=drugs,
            icu_fluids=dict(d["icu_fluids"]),
            conditions=conditions,
            comorbidities=comorbidities,
            rare=tuple(Rare(r["key"], _pair(r["icd9"]), _pair(r["icd10"]), int(r["patients"])) for r in d["rare"]),
            procedures={p[0]: (p[1], p[2], p[3], p[4]) for p in d["coding"]["procedures"]},
            hcpcs=tuple(tuple(h) for h in d["coding"]["hcpcs"]),  # type: ignore[misc]
            cultures={c[0]: tuple(c[1:]) for c in d["microbiology"]["cultures"]},
            organisms={o[0]: (o[1], o[2]) for o in d["microbiology"]["organisms"]},
            antibiotic_panels={k: tuple(tuple(r) for r in v) for k, v in d["antibiotic_panels"].items()},  # type: ignore[misc]
            vocab={k: tuple(v) for k, v in d["vocab"].items()},
        )
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise RulesError(path, f"malformed catalog: {exc!r}") from exc
    _check(cat, path)
    return cat


def _check(cat: Catalog, path: Path) -> None:
    """Cross-references: every named drug exists, every condition lab is a lab item."""
    lab_ids = {i.itemid for i in cat.lab_items}
    for c in cat.conditions.values():
        for name in c.drugs + c.icu_drugs:
            if name not in cat.drugs:
                raise RulesError(path, f"condition {c.key!r} names unknown drug {name!r}")
        for itemid in c.labs:
            if itemid not in lab_ids:
                raise RulesError(path, f"condition {c.key!r} names unknown lab itemid {itemid}")
    for m in cat.comorbidities:
        for name in m.drugs:
            if name not in cat.drugs:
                raise RulesError(path, f"comorbidity {m.key!r} names unknown drug {name!r}")
    for r in cat.rare:
        if not 1 <= r.patients <= 4:
            raise RulesError(path, f"rare diagnosis {r.key!r}: patients must be 1-4, got {r.patients}")
