"""Where the planted gaps go: admission roles and the temporal-order plants, as data.

Each role is given to exactly one admission (a distinct one per role) before the
admission is generated, and constrains it (condition, ICU or not, length of
stay). The generator modules read the role to shape the records; ``plant.py``
then records the resulting :class:`~verifier.synthetic.gaps.Gap` entries.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Role:
    """Constraints an admission must satisfy to carry a planted gap.

    Attributes:
        condition: principal condition key, or ``""`` for any ICU-worthy condition.
        icu: True = must have an ICU stay, False = must not, None = by chance.
        min_days: minimum length of stay in days (ignored for observation stays).
        observation: an observation stay of 8-22 hours.
        last: must be the patient's last admission (deaths).
        comorbidity: chronic diagnosis the patient must carry (``""`` = none required).
    """

    condition: str = ""
    icu: bool | None = None
    min_days: int = 2
    observation: bool = False
    last: bool = False
    comorbidity: str = ""


#: role name -> constraints. Order matters only for reproducibility.
ROLES: dict[str, Role] = {
    "death_in_hospital": Role(condition="sepsis", icu=True, min_days=3, last=True),
    "death_after_discharge": Role(condition="heart_failure", min_days=3, last=True),
    "no_labs": Role(condition="chest_pain", icu=False, observation=True),
    "absent_potassium": Role(condition="pneumonia", icu=False, min_days=3),
    "absent_magnesium": Role(condition="uti", icu=False, min_days=3),
    "kcl_after": Role(condition="hypokalemia", min_days=3),
    "kcl_before": Role(condition="heart_failure", min_days=4),
    "insulin_after": Role(condition="hyperglycemia", min_days=3),
    "insulin_before": Role(condition="pneumonia", min_days=4, comorbidity="diabetes"),
    "icu_no_weight": Role(condition="sepsis", icu=True, min_days=3),
    "icu_gender": Role(condition="nstemi", icu=True, min_days=3),
    "icu_temp_unit": Role(condition="pneumonia", icu=True, min_days=3),
    "vanc_not_given": Role(condition="pneumonia", icu=False, min_days=3),
}

#: Lab items left out of an admission that otherwise has daily panels: role -> itemid.
ABSENT_LAB: dict[str, int] = {"absent_potassium": 50971, "absent_magnesium": 50960}


@dataclass(frozen=True)
class OrderPlant:
    """A drug given before or after a lab first crosses a threshold in one admission.

    Attributes:
        drug: catalog drug name (prescriptions.drug, emar.medication).
        itemid: lab itemid whose values are set draw by draw.
        comparator: ``"<"`` or ``">"``: the crossing is ``value <comparator> threshold``.
        threshold: in the lab's catalog unit.
        order: ``"after"`` (drug after the first crossing) or ``"before"``.
        ranges: value range per lab draw index; the last range repeats for later draws.
        drug_after_draw: index of the draw the drug start is anchored to.
        delay_hours: drug start = that draw's time + delay.
        crossing_draw: index of the first draw crossing the threshold.
    """

    drug: str
    itemid: int
    comparator: str
    threshold: float
    order: str
    ranges: tuple[tuple[float, float], ...]
    drug_after_draw: int
    delay_hours: float
    crossing_draw: int


ORDER_PLANTS: dict[str, OrderPlant] = {
    "kcl_after": OrderPlant("Potassium Chloride", 50971, "<", 3.5, "after",
                            ((2.7, 3.1), (3.1, 3.4), (3.6, 4.3)), 0, 2.0, 0),
    "kcl_before": OrderPlant("Potassium Chloride", 50971, "<", 3.5, "before",
                             ((3.8, 4.4), (3.8, 4.3), (3.0, 3.3), (3.6, 4.2)), 1, 3.0, 2),
    "insulin_after": OrderPlant("Insulin", 50931, ">", 200.0, "after",
                                ((340.0, 480.0), (230.0, 300.0), (150.0, 195.0)), 0, 1.5, 0),
    "insulin_before": OrderPlant("Insulin", 50931, ">", 200.0, "before",
                                 ((120.0, 175.0), (125.0, 180.0), (235.0, 290.0), (140.0, 185.0)), 0, 4.0, 2),
}

#: Drug prescribed but discontinued before any administration: role -> drug name.
NOT_GIVEN: dict[str, str] = {"vanc_not_given": "Vancomycin"}
