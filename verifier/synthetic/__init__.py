"""The synthetic default hospital: a seeded, deterministic generator of about 50 patients
in the exact MIMIC-IV v2.2 CSV layout (``hosp/*.csv.gz``, ``icu/*.csv.gz``, all 31 tables
of rules/schema.toml, including ``icu/chartevents``), built from code and the clinical
tables in ``catalog.toml`` only (never from real records).

What it contains
    Patients with MIMIC-style identifiers (subject_id 10000000+, hadm_id 20000000+,
    stay_id 30000000+), shifted future dates (anchor years 2110-2190) with consistent
    anchor_age / anchor_year / anchor_year_group, 1-4 non-overlapping admissions each,
    ICU stays inside admissions, transfers and services along the same time line;
    daily lab panels with real itemids and units (potassium 50971 mEq/L, creatinine 50912
    mg/dL, glucose 50931 mg/dL, hematocrit 51221 %, ...), hourly ICU vital signs (220045
    bpm, 220179/220180/220181 mmHg, 223761 °F or 223762 °C, 220277 %, 226512 kg), drug
    orders and administrations (prescriptions, pharmacy, poe, emar, ICU inputevents with
    ingredientevents), microbiology with organisms and susceptibilities, ICD-9/ICD-10
    diagnoses and procedures (by the admission's real-time year), HCFA and APR DRGs,
    HCPCS events, outpatient measurements (omr) and all dictionaries.

Planted gaps (kinds follow the Noise levels; ids are in ``gaps.json`` / :func:`planted_gaps`)
    record      admission_without_labs (an observation stay), admission_without_drg (the same
                stay), admission_without_icu (every admission without a stay),
                lab_item_absent (potassium 50971 missing in one admission, magnesium 50960 in
                another, both with daily panels), icu_stay_without_weight (no 226512),
                ordered_not_administered (Vancomycin ordered, discontinued before any dose).
    value       outpatient_lab_null_admission (NULL hadm_id), lab_value_text_only (potassium
                "UNABLE TO REPORT" with a hemolysis comment, glucose "___"; valuenum NULL),
                lab_unit_null (a creatinine with NULL valueuom), lab_unit_contradiction (one
                glucose in mmol/L), chart_unit_contradiction (a Celsius number under the
                Fahrenheit item with unit °F), gender_contradiction (charted Gender vs
                patients.gender), drg_severity_null (an APR row), marital_status_null.
    query       drug_after_threshold / drug_before_threshold: Potassium Chloride given after /
                before potassium first falls below 3.5 mEq/L, Insulin given after / before
                glucose first exceeds 200 mg/dL (each in its own admission).
    population  small_population (rare diagnoses held by exactly 1, 2, 3 and 4 patients) and
                large_population (hypertension, hyperlipidemia: >= 5 patients).
    feature     death_in_hospital (deathtime = dischtime, dod), death_after_discharge (dod only).
NULL deathtime on survivors, NULL HCFA DRG severity, NULL edregtime on non-ED admissions
and NULL organism on negative cultures are normal MIMIC-IV patterns, not planted gaps.

Public API: :func:`generate_hospital`, :func:`planted_gaps`, :func:`read_gaps`, :class:`Gap`.

Layer: the synthetic hospital imports only ``verifier.contract`` and ``verifier.database``
(the schema map); it never reads real records.
"""

from __future__ import annotations

from .gaps import GAP_KINDS, Gap, gaps_named, read_gaps
from .generate import generate_hospital, planted_gaps, simulate

__all__ = ["GAP_KINDS", "Gap", "gaps_named", "generate_hospital", "planted_gaps", "read_gaps", "simulate"]
