"""Billing and outpatient records: diagnoses_icd, procedures_icd, drgcodes, hcpcsevents, omr.

Diagnoses: the principal condition (seq_num 1), the patient's chronic comorbidities,
and the rare diagnoses on the patient's first admission, coded in ICD-9 or ICD-10
according to the admission (``Admission.icd_version``). Procedures follow the ICU
events (ventilation, intubation, central line) and the condition (transfusion for
GI bleeding, catheterisation for NSTEMI). Each non-observation admission has one
HCFA (MS-DRG; severity and mortality NULL by design) and one APR-DRG row.
"""

from __future__ import annotations

from datetime import date, timedelta

from .hospital import Admission, Hospital, Patient


def make_billing(h: Hospital) -> None:
    """Write diagnoses_icd, procedures_icd, drgcodes, hcpcsevents and omr."""
    vent_minutes = {}
    for row in h.tables["procedureevents"]:
        if row["itemid"] == 225792:
            vent_minutes[row["stay_id"]] = vent_minutes.get(row["stay_id"], 0.0) + row["value"]
    for p in h.patients:
        for k, a in enumerate(p.admissions):
            _diagnoses(h, p, a, first=(k == 0))
            _procedures(h, p, a, vent_minutes)
            _drg(h, p, a)
            _hcpcs(h, p, a)
        _omr(h, p)


def _code(a: Admission, pair9: tuple[str, str], pair10: tuple[str, str]) -> str:
    return pair9[0] if a.icd_version == 9 else pair10[0]


def _diagnoses(h: Hospital, p: Patient, a: Admission, first: bool) -> None:
    cat = h.catalog
    codes = [_code(a, a.condition.icd9, a.condition.icd10)]
    for m in cat.comorbidities:
        if m.key in p.comorbidities:
            if m.key == "diabetes" and a.condition.key == "hyperglycemia":
                continue  # the principal code already says type 2 diabetes
            codes.append(_code(a, m.icd9, m.icd10))
    if first:
        codes += [_code(a, r.icd9, r.icd10) for r in cat.rare if r.key in p.rare]
    for seq, code in enumerate(codes, start=1):
        h.add("diagnoses_icd", subject_id=p.subject_id, hadm_id=a.hadm_id, seq_num=seq, icd_code=code,
              icd_version=a.icd_version)


def _procedures(h: Hospital, p: Patient, a: Admission, vent_minutes: dict[int, float]) -> None:
    cat = h.catalog.procedures
    todo: list[tuple[str, date]] = []
    for s in a.icu_stays:
        if s.stay_id in vent_minutes:
            todo.append(("intubation", s.intime.date()))
            todo.append(("ventilation_long" if vent_minutes[s.stay_id] >= 96 * 60 else "ventilation_short", s.intime.date()))
        if s.central_line:
            todo.append(("central_line", s.intime.date()))
    if a.condition.key == "gi_bleed":
        todo.append(("transfusion", a.admittime.date()))
    if a.condition.key == "nstemi" and h.rng.random() < 0.7:
        todo.append(("cardiac_cath", (a.admittime + timedelta(days=1)).date()))
    for seq, (key, day) in enumerate(todo, start=1):
        c9, _t9, c10, _t10 = cat[key]
        h.add("procedures_icd", subject_id=p.subject_id, hadm_id=a.hadm_id, seq_num=seq, chartdate=day,
              icd_code=c9 if a.icd_version == 9 else c10, icd_version=a.icd_version)


def _drg(h: Hospital, p: Patient, a: Admission) -> None:
    if a.role == "no_labs":
        return  # observation stays are not DRG-billed (planted gap admission_without_drg)
    rng = h.rng
    c = a.condition
    h.add("drgcodes", subject_id=p.subject_id, hadm_id=a.hadm_id, drg_type="HCFA", drg_code=c.drg_hcfa[0],
          description=c.drg_hcfa[1], drg_severity=None, drg_mortality=None)
    severity = min(4, 1 + len(p.comorbidities) // 2 + (1 if a.icu_stays else 0) + (1 if a.deathtime else 0))
    mortality = min(4, max(1, severity - rng.randint(0, 1)) + (1 if a.deathtime else 0))
    h.add("drgcodes", subject_id=p.subject_id, hadm_id=a.hadm_id, drg_type="APR", drg_code=c.drg_apr[0],
          description=c.drg_apr[1], drg_severity=severity, drg_mortality=min(4, mortality))


def _hcpcs(h: Hospital, p: Patient, a: Admission) -> None:
    short = {code: s for code, _cat, _long, s in h.catalog.hcpcs}
    events: list[tuple[date, str]] = []
    if a.role == "no_labs" or a.condition.key == "chest_pain":
        events.append((a.admittime.date(), "G0378"))
    else:
        events.append((a.admittime.date(), "99223"))
        days = (a.dischtime.date() - a.admittime.date()).days
        events += [(a.admittime.date() + timedelta(days=d), "99232") for d in range(1, min(days, 4))]
    for s in a.icu_stays:
        events.append((s.intime.date(), "99291"))
        events.append((s.intime.date(), "71045"))
        if s.central_line:
            events.append((s.intime.date(), "36556"))
    for seq, (day, code) in enumerate(events, start=1):
        h.add("hcpcsevents", subject_id=p.subject_id, hadm_id=a.hadm_id, chartdate=day, hcpcs_cd=code,
              seq_num=seq, short_description=short[code])


def _omr(h: Hospital, p: Patient) -> None:
    """Clinic visits before the first admission and between admissions: blood pressure, weight, height, BMI."""
    rng = h.rng
    visits: list[date] = []
    prev_end = p.admissions[0].admittime - timedelta(days=400)
    for a in p.admissions:
        gap = (a.admittime - prev_end).days
        if gap > 30 and rng.random() < 0.8:
            visits.append((prev_end + timedelta(days=rng.randint(10, gap - 10))).date())
        prev_end = a.dischtime
    for day in visits:
        sbp, dbp = rng.randint(104, 158), rng.randint(60, 96)
        weight_lbs = round((p.weight_kg + rng.uniform(-2.5, 2.5)) * 2.20462, 1)
        bmi = round(weight_lbs * 703 / (p.height_in ** 2), 1)
        rows = [("Blood Pressure", f"{sbp}/{dbp}"), ("Weight (Lbs)", f"{weight_lbs:.1f}"), ("BMI (kg/m2)", f"{bmi:.1f}")]
        if rng.random() < 0.4:
            rows.append(("Height (Inches)", f"{p.height_in:.0f}"))
        for name, value in rows:
            h.add("omr", subject_id=p.subject_id, chartdate=day, seq_num=1, result_name=name, result_value=value)
