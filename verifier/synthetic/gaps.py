"""The deliberate gaps planted in the synthetic hospital, as data.

Every generated hospital carries the gaps below; the identifiers depend on the
seed, so tests and task builders read them from ``generate.planted_gaps`` (or from
``gaps.json`` written beside ``hosp/`` and ``icu/``) instead of hard-coding them.
Each :class:`Gap` carries ``check_sql``: a query on the *built* database (renamed
schema, rules/schema.toml) returning one boolean that is true exactly when the
gap is present, so the claim can be checked rather than trusted.

Kinds follow the Noise levels of the design: ``record`` (an expected record is
absent), ``value`` (a field is NULL or contradicts another record), ``query``
(two events in a given temporal order), ``population`` (a population with 1-4
or >= 5 eligible units for the five-unit rule) and ``feature`` (normal but
useful situations such as an in-hospital death).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..contract import SourceDataError

#: File name of the gap manifest written beside ``hosp/`` and ``icu/``.
GAPS_FILE = "gaps.json"

#: name -> (kind, renamed table, what is planted). One entry per planted gap name.
GAP_KINDS: dict[str, tuple[str, str, str]] = {
    "admission_without_labs": ("record", "lab_events",
        "A short observation admission (chest pain) with no laboratory events at all."),
    "admission_without_drg": ("record", "drg_codes",
        "The same observation admission has no DRG rows (observation stays are not DRG-billed)."),
    "admission_without_icu": ("record", "icu_stays",
        "Admissions with no ICU stay (ids list them all)."),
    "lab_item_absent": ("record", "lab_events",
        "An admission with daily chemistry panels but no result at all for one item (itemid)."),
    "icu_stay_without_weight": ("record", "chart_events",
        "An ICU stay with vital signs charted but no Admission Weight (226512)."),
    "ordered_not_administered": ("record", "medication_administrations",
        "Vancomycin prescribed (prescriptions, pharmacy, poe) but discontinued before any eMAR administration."),
    "outpatient_lab_null_admission": ("value", "lab_events",
        "Outpatient laboratory events with NULL admissionid, outside every admission (as in MIMIC-IV)."),
    "lab_value_text_only": ("value", "lab_events",
        "A lab event whose value is text (e.g. a hemolysed specimen) and value_numeric is NULL."),
    "lab_unit_null": ("value", "lab_events",
        "A lab event with a numeric value but NULL value_unit."),
    "lab_unit_contradiction": ("value", "lab_events",
        "A glucose event stored in mmol/L while every other glucose event of the item is in mg/dL."),
    "chart_unit_contradiction": ("value", "chart_events",
        "A Temperature Fahrenheit (223761) event whose value is in the Celsius range (about 37) with unit °F."),
    "gender_contradiction": ("value", "chart_events",
        "A charted Gender (226228) in an ICU stay that contradicts patients.gender."),
    "drg_severity_null": ("value", "drg_codes",
        "An APR-DRG row with NULL drg_severity and drg_mortality (HCFA rows have them NULL by design)."),
    "marital_status_null": ("value", "admissions",
        "Admissions with NULL marital_status."),
    "drug_after_threshold": ("query", "medication_administrations",
        "A drug first administered AFTER a lab first crosses a threshold in the same admission."),
    "drug_before_threshold": ("query", "medication_administrations",
        "A drug first administered BEFORE a lab first crosses a threshold in the same admission."),
    "small_population": ("population", "diagnoses",
        "A rare diagnosis held by exactly 1-4 patients (exact counts must not be disclosed)."),
    "large_population": ("population", "diagnoses",
        "A chronic diagnosis held by at least 5 patients."),
    "death_in_hospital": ("feature", "admissions",
        "A patient who died during the admission (death_time set, hospital_expire_flag 1)."),
    "death_after_discharge": ("feature", "patients",
        "A patient with a date of death after the last discharge and no in-hospital death_time."),
}


@dataclass(frozen=True)
class Gap:
    """One planted gap.

    Attributes:
        name: a key of :data:`GAP_KINDS` (e.g. ``"lab_item_absent"``).
        kind: ``record`` | ``value`` | ``query`` | ``population`` | ``feature``.
        table: the renamed table it concerns (e.g. ``"lab_events"``).
        description: what is planted, in words.
        ids: identifiers in renamed-schema names (``patientid``, ``admissionid``,
            ``icuadmissionid``, ``itemid``, ``lab_event_id``, ...) plus facts such as
            thresholds, times (ISO strings) and counts.
        check_sql: DuckDB query on the built database returning one boolean, true
            iff the gap is present.
    """

    name: str
    kind: str
    table: str
    description: str
    ids: dict[str, Any] = field(default_factory=dict)
    check_sql: str = ""


def make_gap(name: str, ids: dict[str, Any], check_sql: str) -> Gap:
    """Build a :class:`Gap` of kind/table/description ``GAP_KINDS[name]``.

    Raises:
        KeyError: ``name`` is not a known gap name.
    """
    kind, table, desc = GAP_KINDS[name]
    return Gap(name, kind, table, desc, dict(ids), " ".join(check_sql.split()))


def write_gaps(gaps: list[Gap], path: Path) -> None:
    """Write ``gaps`` as deterministic JSON (sorted keys, fixed indentation) to ``path``."""
    text = json.dumps([asdict(g) for g in gaps], indent=1, sort_keys=True, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")


def read_gaps(hospital_dir: str | Path) -> list[Gap]:
    """Read the gap manifest of a generated hospital folder.

    Raises:
        SourceDataError: no ``gaps.json`` in ``hospital_dir`` or it is not valid.
    """
    path = Path(hospital_dir) / GAPS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [Gap(**g) for g in data]
    except FileNotFoundError as exc:
        raise SourceDataError(path, "no gap manifest (not a generated synthetic hospital?)") from exc
    except (json.JSONDecodeError, TypeError) as exc:
        raise SourceDataError(path, f"invalid gap manifest: {exc}") from exc


def gaps_named(gaps: list[Gap], name: str) -> list[Gap]:
    """The gaps called ``name`` (possibly several, e.g. one per absent lab item)."""
    return [g for g in gaps if g.name == name]
