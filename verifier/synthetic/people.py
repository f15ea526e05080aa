"""Patients, admissions, ICU stays and their time lines (patients, admissions, icustays,
transfers, services tables).

Time lines follow MIMIC-IV: dates are shifted into the future (anchor years
2110-2190), ``anchor_age`` is the age in ``anchor_year``, admissions of a patient
do not overlap, ICU stays lie inside their admission, and an in-hospital death
sets ``deathtime = dischtime`` and ``dod``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ..contract import InputError
from .catalog import Condition
from .hospital import Admission, Hospital, IcuStay, Patient
from .plan import ROLES, Role

#: Fewest patients that still leave room for every planted gap.
MIN_PATIENTS = 20


def make_people(h: Hospital, n_patients: int) -> None:
    """Create ``n_patients`` patients with admissions and ICU stays, and write their tables.

    Raises:
        InputError: ``n_patients`` below :data:`MIN_PATIENTS`.
    """
    if n_patients < MIN_PATIENTS:
        raise InputError("n_patients", n_patients, f"must be at least {MIN_PATIENTS} to plant every gap")
    rng = h.rng
    h.providers = sorted({"P" + "".join(rng.choice("0123456789ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(5))
                          for _ in range(40)})
    h.caregivers = sorted({h.new_id("caregiver_id") for _ in range(30)})
    counts = [rng.choices((1, 2, 3, 4), weights=(45, 30, 17, 8))[0] for _ in range(n_patients)]
    roles = _assign_roles(h, counts)
    subject_ids = sorted(h.new_id("subject_id") for _ in range(n_patients))
    for i, sid in enumerate(subject_ids):
        p = _patient(h, sid)
        for k in range(counts[i]):
            role = roles.get((i, k), "")
            if ROLES.get(role, Role()).comorbidity and ROLES[role].comorbidity not in p.comorbidities:
                p.comorbidities.append(ROLES[role].comorbidity)
            _admission(h, p, role, last=(k == counts[i] - 1))
        h.patients.append(p)
    _assign_chronic(h)
    for p in h.patients:
        _write_patient(h, p)


def _assign_roles(h: Hospital, counts: list[int]) -> dict[tuple[int, int], str]:
    """Give each role a distinct (patient index, admission index) slot."""
    rng = h.rng
    taken_patients: set[int] = set()
    slots = [(i, k) for i, n in enumerate(counts) for k in range(n)]
    rng.shuffle(slots)
    out: dict[tuple[int, int], str] = {}
    for name, role in ROLES.items():
        for slot in slots:
            i, k = slot
            if slot in out:
                continue
            if role.last and (k != counts[i] - 1 or i in taken_patients):
                continue
            out[slot] = name
            if role.last:
                taken_patients.add(i)
            break
    # a death ends the time line: no role may sit on an admission after it (impossible: last) -
    # but a dead patient's earlier admissions may carry roles, which is fine.
    return out


def _patient(h: Hospital, sid: int) -> Patient:
    rng = h.rng
    vocab = h.catalog.vocab
    gender = rng.choice("FM")
    group = rng.choice(vocab["anchor_year_groups"])
    weight = round(rng.uniform(48, 95) if gender == "F" else rng.uniform(60, 115), 1)
    height = round(rng.uniform(59, 68) if gender == "F" else rng.uniform(64, 75))
    return Patient(
        subject_id=sid, gender=gender, anchor_age=rng.randint(21, 89), anchor_year=rng.randint(2110, 2190),
        anchor_year_group=group, weight_kg=weight, height_in=float(height),
    )


def _icd_version(p: Patient, t: datetime) -> int:
    """ICD-9 before the (real-time) October 2015 switch, ICD-10 after, estimated from the anchor year group."""
    real_year = int(p.anchor_year_group[:4]) + 1 + (t.year - p.anchor_year)
    return 9 if real_year <= 2015 else 10


def _pick_condition(h: Hospital, role: Role) -> Condition:
    conds = h.catalog.conditions
    if role.condition:
        return conds[role.condition]
    pool = [c for c in conds.values() if c.key != "chest_pain"]
    if h.rng.random() < 0.08:
        return conds["chest_pain"]
    return h.rng.choice(pool)


def _admission(h: Hospital, p: Patient, role_name: str, last: bool) -> Admission:
    rng = h.rng
    role = ROLES.get(role_name, Role())
    cond = _pick_condition(h, role)
    if p.admissions:
        start = p.admissions[-1].dischtime + timedelta(days=rng.randint(20, 400))
    else:
        start = datetime(p.anchor_year + rng.randint(0, 2), 1, 1) + timedelta(days=rng.randint(0, 364))
    admit = start.replace(hour=rng.randint(0, 23), minute=rng.randint(0, 59), second=0)
    observation = role.observation or cond.key == "chest_pain"
    if observation:
        los = timedelta(hours=rng.randint(8, 22), minutes=rng.randint(0, 59))
        adm_type = rng.choice(h.catalog.vocab["observation_types"])
    else:
        days = max(role.min_days, rng.randint(2, 9))
        los = timedelta(days=days, hours=rng.randint(0, 12), minutes=rng.randint(0, 59))
        emergency = rng.random() < 0.85
        adm_type = rng.choice(h.catalog.vocab["emergency_types" if emergency else "elective_types"])
    a = Admission(
        hadm_id=h.new_id("hadm_id"), subject_id=p.subject_id, admittime=admit, dischtime=admit + los,
        admission_type=adm_type, condition=cond, icd_version=_icd_version(p, admit), role=role_name,
    )
    if adm_type in ("EW EMER.", "EU OBSERVATION"):
        a.edregtime = admit - h.minutes(90, 480)
        a.edouttime = admit + h.minutes(0, 75)
    wants_icu = role.icu if role.icu is not None else (not observation and rng.random() < cond.icu_probability)
    if wants_icu:
        _icu_stays(h, p, a, role_name)
    if role_name == "death_in_hospital":
        a.deathtime = a.dischtime
        if a.icu_stays:
            a.icu_stays[-1].outtime = a.dischtime
        p.dod = a.dischtime.date()
    elif role_name == "death_after_discharge":
        p.dod = (a.dischtime + timedelta(days=rng.randint(20, 300))).date()
    p.admissions.append(a)
    return a


def _icu_stays(h: Hospital, p: Patient, a: Admission, role_name: str) -> None:
    rng = h.rng
    cond = a.condition
    units = cond.careunits or ("Medical Intensive Care Unit (MICU)",)
    n = 2 if (not role_name and (a.dischtime - a.admittime).days >= 7 and rng.random() < 0.25) else 1
    t = a.admittime + (h.minutes(30, 240) if a.edregtime else h.minutes(60, 720))
    limit = a.dischtime - timedelta(hours=6)
    for k in range(n):
        room = (limit - t).total_seconds() / 86400
        if room < 0.6:
            break
        length = timedelta(days=rng.uniform(0.6, min(4.5, room if k == n - 1 else room / 2)))
        intime = t.replace(microsecond=0) + timedelta(seconds=rng.randint(0, 59))
        outtime = (intime + length).replace(microsecond=0)
        unit = rng.choice(units)
        a.icu_stays.append(IcuStay(
            stay_id=h.new_id("stay_id"), first_careunit=unit,
            last_careunit=unit if rng.random() < 0.85 else rng.choice(units),
            intime=intime, outtime=outtime, weight_kg=round(p.weight_kg + rng.uniform(-3, 3), 1),
            temp_itemid=223762 if (role_name != "icu_temp_unit" and rng.random() < 0.2) else 223761,
            ventilated=rng.random() < cond.ventilation_probability,
            central_line=bool(cond.icu_drugs) or rng.random() < 0.3,
        ))
        t = outtime + timedelta(hours=rng.randint(12, 36))


def _assign_chronic(h: Hospital) -> None:
    """Chronic comorbidities by prevalence (with guaranteed minimum counts) and rare diagnoses by exact count."""
    rng = h.rng
    pats = h.patients
    for m in h.catalog.comorbidities:
        for p in pats:
            if m.key not in p.comorbidities and rng.random() < m.prevalence:
                p.comorbidities.append(m.key)
        have = [p for p in pats if m.key in p.comorbidities]
        others = [p for p in pats if m.key not in p.comorbidities]
        rng.shuffle(others)
        for p in others[: max(0, m.min_patients - len(have))]:
            p.comorbidities.append(m.key)
    for p in pats:
        order = [m.key for m in h.catalog.comorbidities]
        p.comorbidities.sort(key=order.index)
    for r in h.catalog.rare:
        for p in rng.sample(pats, r.patients):
            p.rare.append(r.key)


def _write_patient(h: Hospital, p: Patient) -> None:
    rng = h.rng
    vocab = h.catalog.vocab
    h.add("patients", subject_id=p.subject_id, gender=p.gender, anchor_age=p.anchor_age,
          anchor_year=p.anchor_year, anchor_year_group=p.anchor_year_group, dod=p.dod)
    insurance = "Medicare" if p.anchor_age >= 65 else rng.choice(vocab["insurance"])
    language = rng.choice(vocab["languages"])
    race = rng.choice(vocab["race"])
    marital = rng.choice(vocab["marital_status"]) if rng.random() < 0.9 else None
    for a in p.admissions:
        died = a.deathtime is not None
        if a.edregtime is not None:
            location = "EMERGENCY ROOM"
        elif a.admission_type in vocab["elective_types"]:
            location = rng.choice(vocab["elective_locations"])
        else:
            location = rng.choice(vocab["emergency_locations"])
        h.add("admissions", subject_id=p.subject_id, hadm_id=a.hadm_id, admittime=a.admittime,
              dischtime=a.dischtime, deathtime=a.deathtime, admission_type=a.admission_type,
              admit_provider_id=h.provider(),
              admission_location=location,
              discharge_location="DIED" if died else rng.choice(vocab["discharge_locations"]),
              insurance=insurance, language=language, marital_status=marital, race=race,
              edregtime=a.edregtime, edouttime=a.edouttime, hospital_expire_flag=1 if died else 0)
        for s in a.icu_stays:
            h.add("icustays", subject_id=p.subject_id, hadm_id=a.hadm_id, stay_id=s.stay_id,
                  first_careunit=s.first_careunit, last_careunit=s.last_careunit,
                  intime=s.intime, outtime=s.outtime, los=round(s.los_days, 6))
        _transfers(h, p, a)
        _services(h, p, a)


def _transfers(h: Hospital, p: Patient, a: Admission) -> None:
    def add(eventtype: str, unit: str | None, t0: datetime, t1: datetime | None) -> None:
        h.add("transfers", subject_id=p.subject_id, hadm_id=a.hadm_id, transfer_id=h.new_id("transfer_id"),
              eventtype=eventtype, careunit=unit, intime=t0, outtime=t1)

    if a.edregtime is not None:
        add("ED", "Emergency Department", a.edregtime, a.admittime)
    ward = a.condition.ward
    t = a.admittime
    first = True
    for s in a.icu_stays:
        add("admit" if first else "transfer", ward, t, s.intime)
        add("transfer", s.first_careunit, s.intime, s.outtime)
        t, first = s.outtime, False
    if t < a.dischtime:
        add("admit" if first else "transfer", ward, t, a.dischtime)
    add("discharge", None, a.dischtime, None)


def _services(h: Hospital, p: Patient, a: Admission) -> None:
    rng = h.rng
    svc = a.condition.service
    h.add("services", subject_id=p.subject_id, hadm_id=a.hadm_id, transfertime=a.admittime,
          prev_service=None, curr_service=svc)
    if (a.dischtime - a.admittime).days >= 3 and rng.random() < 0.15:
        other = rng.choice([s for s in ("MED", "CMED", "SURG", "NMED") if s != svc])
        h.add("services", subject_id=p.subject_id, hadm_id=a.hadm_id,
              transfertime=a.admittime + timedelta(days=1, minutes=rng.randint(0, 600)),
              prev_service=svc, curr_service=other)
