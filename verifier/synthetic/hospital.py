"""In-memory state of a synthetic hospital while it is generated.

A :class:`Hospital` holds the seeded random generator, the catalog, the people
(patients, admissions, ICU stays) and the rows of every MIMIC-IV source table as
dicts keyed by *source* column names (``subject_id``, ``hadm_id``, ...). Rows
leave it only through :mod:`verifier.synthetic.writer`, which orders columns by
``rules/schema.toml``. Planted gaps are collected in ``gaps``.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from .catalog import Catalog, Condition, load_catalog
from .gaps import Gap

#: Identifier ranges as in MIMIC-IV (8 digits each): source name -> (low, high) inclusive.
ID_RANGES: dict[str, tuple[int, int]] = {
    "subject_id": (10_000_000, 19_999_999),
    "hadm_id": (20_000_000, 29_999_999),
    "stay_id": (30_000_000, 39_999_999),
    "transfer_id": (30_000_000, 39_999_999),
    "pharmacy_id": (10_000_000, 99_999_999),
    "specimen_id": (1_000_000, 9_999_999),
    "micro_specimen_id": (1_000_000, 9_999_999),
    "orderid": (1_000_000, 9_999_999),
    "caregiver_id": (1_000, 99_999),
}


@dataclass
class IcuStay:
    """One ICU stay inside an admission (times are naive datetimes in the shifted future)."""

    stay_id: int
    first_careunit: str
    last_careunit: str
    intime: datetime
    outtime: datetime
    weight_kg: float
    temp_itemid: int
    ventilated: bool
    central_line: bool

    @property
    def los_days(self) -> float:
        """Length of stay in fractional days (as icustays.los)."""
        return (self.outtime - self.intime).total_seconds() / 86400.0


@dataclass
class Admission:
    """One hospital admission; ``role`` names the planted gap it carries (or ``""``)."""

    hadm_id: int
    subject_id: int
    admittime: datetime
    dischtime: datetime
    admission_type: str
    condition: Condition
    icd_version: int
    role: str = ""
    deathtime: datetime | None = None
    edregtime: datetime | None = None
    edouttime: datetime | None = None
    icu_stays: list[IcuStay] = field(default_factory=list)
    lab_draws: list[datetime] = field(default_factory=list)

    def stay_at(self, t: datetime) -> IcuStay | None:
        """The ICU stay containing time ``t``, if any."""
        for s in self.icu_stays:
            if s.intime <= t <= s.outtime:
                return s
        return None


@dataclass
class Patient:
    """One patient with anchor fields, chronic diagnoses and admissions in time order."""

    subject_id: int
    gender: str
    anchor_age: int
    anchor_year: int
    anchor_year_group: str
    weight_kg: float
    height_in: float
    comorbidities: list[str] = field(default_factory=list)
    rare: list[str] = field(default_factory=list)
    dod: date | None = None
    admissions: list[Admission] = field(default_factory=list)


class Hospital:
    """Generator state: rng, catalog, people, rows per source table, planted gaps.

    Args:
        seed: seed of the private ``random.Random`` (the only source of randomness).
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.catalog: Catalog = load_catalog()
        self.patients: list[Patient] = []
        self.tables: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.gaps: list[Gap] = []
        self._used: dict[str, set[int]] = defaultdict(set)
        self._seq: dict[tuple[str, int], int] = defaultdict(int)
        self.providers: list[str] = []
        self.caregivers: list[int] = []

    # -- identifiers -----------------------------------------------------
    def new_id(self, space: str) -> int:
        """A fresh random identifier in ``ID_RANGES[space]``, never repeated within the space."""
        lo, hi = ID_RANGES[space]
        used = self._used[space]
        while True:
            v = self.rng.randint(lo, hi)
            if v not in used:
                used.add(v)
                return v

    def next_seq(self, name: str, subject_id: int) -> int:
        """Per-patient counter (emar_seq, poe_seq), starting at 1."""
        self._seq[(name, subject_id)] += 1
        return self._seq[(name, subject_id)]

    def next_serial(self, name: str) -> int:
        """Hospital-wide counter (labevent_id, microevent_id), starting at 1."""
        return self.next_seq(name, 0)

    # -- rows --------------------------------------------------------------
    def add(self, table: str, **row: Any) -> dict[str, Any]:
        """Append a row (source column names) to source table ``table``; returns the row."""
        self.tables[table].append(row)
        return row

    # -- small random helpers ----------------------------------------------
    def uniform(self, r: tuple[float, float]) -> float:
        """A uniform draw in the closed range ``r``."""
        return self.rng.uniform(r[0], r[1])

    def minutes(self, lo: float, hi: float) -> timedelta:
        """A whole number of minutes drawn in [lo, hi]."""
        return timedelta(minutes=self.rng.randint(int(lo), int(hi)))

    def provider(self) -> str:
        """A provider id from the hospital's pool."""
        return self.rng.choice(self.providers)

    def caregiver(self) -> int:
        """A caregiver id from the ICU pool."""
        return self.rng.choice(self.caregivers)

    def admissions(self) -> list[Admission]:
        """All admissions, patient by patient, in time order."""
        return [a for p in self.patients for a in p.admissions]

    def patient(self, subject_id: int) -> Patient:
        """The patient ``subject_id``. Raises KeyError when unknown."""
        for p in self.patients:
            if p.subject_id == subject_id:
                return p
        raise KeyError(subject_id)
