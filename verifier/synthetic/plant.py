"""Plant the value-level gaps into generated rows and record every gap (see ``gaps.py``).

Structural gaps (absences, temporal orders, contradictions in ICU charting) are
shaped during generation by admission roles (``plan.py``); this module edits a
few generated rows (text-only and unit-less lab values, a glucose in another
unit, a NULL APR severity, NULL marital status) on admissions that carry no
role, then writes one :class:`Gap` per planted situation with a SQL check on
the built (renamed) database.
"""

from __future__ import annotations

from typing import Any

from .gaps import make_gap
from .hospital import Admission, Hospital
from .plan import ABSENT_LAB, NOT_GIVEN, ORDER_PLANTS

#: mg/dL -> mmol/L divisor for glucose (molar mass 180.16 g/mol).
GLUCOSE_MGDL_PER_MMOLL = 18.016


def plant_and_record(h: Hospital) -> None:
    """Apply the row-level plants and append every gap to ``h.gaps``."""
    by_role = {a.role: a for a in h.admissions() if a.role}
    role_hadm = {a.hadm_id for a in by_role.values()}
    _record_structural(h, by_role)
    _record_orders(h, by_role)
    _plant_lab_values(h, role_hadm)
    _plant_admin_values(h, role_hadm)
    _record_populations(h)


def _ids(a: Admission, **extra: Any) -> dict[str, Any]:
    return {"patientid": a.subject_id, "admissionid": a.hadm_id, **extra}


def _record_structural(h: Hospital, by_role: dict[str, Admission]) -> None:
    g = h.gaps
    a = by_role["no_labs"]
    g.append(make_gap("admission_without_labs", _ids(a), f"""
        SELECT (SELECT count(*) FROM admissions WHERE admissionid = {a.hadm_id}) = 1
           AND (SELECT count(*) FROM lab_events WHERE admissionid = {a.hadm_id}) = 0"""))
    g.append(make_gap("admission_without_drg", _ids(a), f"""
        SELECT (SELECT count(*) FROM admissions WHERE admissionid = {a.hadm_id}) = 1
           AND (SELECT count(*) FROM drg_codes WHERE admissionid = {a.hadm_id}) = 0"""))
    no_icu = sorted(x.hadm_id for x in h.admissions() if not x.icu_stays)
    g.append(make_gap("admission_without_icu", {"admissionids": no_icu, "count": len(no_icu)}, f"""
        SELECT list(admissionid ORDER BY admissionid) = {no_icu}
        FROM admissions a WHERE NOT EXISTS (SELECT 1 FROM icu_stays s WHERE s.admissionid = a.admissionid)"""))
    for role, itemid in ABSENT_LAB.items():
        a = by_role[role]
        g.append(make_gap("lab_item_absent", _ids(a, itemid=itemid), f"""
            SELECT (SELECT count(*) FROM lab_events WHERE admissionid = {a.hadm_id} AND itemid = {itemid}) = 0
               AND (SELECT count(DISTINCT chart_time) FROM lab_events WHERE admissionid = {a.hadm_id}) >= 2
               AND (SELECT count(*) FROM lab_events WHERE itemid = {itemid}) > 0"""))
    a = by_role["icu_no_weight"]
    stay = a.icu_stays[0].stay_id
    g.append(make_gap("icu_stay_without_weight", _ids(a, icuadmissionid=stay, itemid=226512), f"""
        SELECT (SELECT count(*) FROM chart_events WHERE icuadmissionid = {stay} AND itemid = 226512) = 0
           AND (SELECT count(*) FROM chart_events WHERE icuadmissionid = {stay} AND itemid = 220045) > 0
           AND (SELECT count(*) FROM chart_events WHERE itemid = 226512) > 0"""))
    for role, drug in NOT_GIVEN.items():
        a = by_role[role]
        item = h.catalog.drugs[drug].icu_itemid
        g.append(make_gap("ordered_not_administered", _ids(a, drug=drug), f"""
            SELECT (SELECT count(*) FROM prescriptions WHERE admissionid = {a.hadm_id} AND drug = '{drug}') > 0
               AND (SELECT count(*) FROM medication_administrations
                    WHERE admissionid = {a.hadm_id} AND medication = '{drug}') = 0
               AND (SELECT count(*) FROM input_events WHERE admissionid = {a.hadm_id} AND itemid = {item}) = 0"""))
    a = by_role["icu_temp_unit"]
    s = a.icu_stays[0]
    rows = [r for r in h.tables["chartevents"] if r["stay_id"] == s.stay_id and r["itemid"] == 223761 and r["valuenum"] < 45]
    r = rows[0]
    g.append(make_gap("chart_unit_contradiction", _ids(a, icuadmissionid=s.stay_id, itemid=223761,
                      chart_time=r["charttime"].isoformat(sep=" "), value=r["valuenum"], unit="°F"), f"""
        SELECT count(*) = 1 FROM chart_events WHERE icuadmissionid = {s.stay_id} AND itemid = 223761
           AND value_numeric < 45 AND value_unit = '°F'
           AND chart_time = TIMESTAMP '{r["charttime"].isoformat(sep=" ")}'"""))
    a = by_role["icu_gender"]
    s = a.icu_stays[0]
    p = h.patient(a.subject_id)
    charted = "Male" if p.gender == "F" else "Female"
    g.append(make_gap("gender_contradiction", _ids(a, icuadmissionid=s.stay_id, itemid=226228, gender=p.gender,
                      charted=charted), f"""
        SELECT count(*) = 1 FROM chart_events c JOIN patients p USING (patientid)
        WHERE c.icuadmissionid = {s.stay_id} AND c.itemid = 226228 AND c.value = '{charted}'
          AND p.gender = '{p.gender}'"""))
    a = by_role["death_in_hospital"]
    g.append(make_gap("death_in_hospital", _ids(a, death_time=a.deathtime.isoformat(sep=" ")), f"""
        SELECT a.death_time IS NOT NULL AND a.hospital_expire_flag = 1 AND p.date_of_death = CAST(a.death_time AS DATE)
        FROM admissions a JOIN patients p USING (patientid) WHERE a.admissionid = {a.hadm_id}"""))
    a = by_role["death_after_discharge"]
    dod = h.patient(a.subject_id).dod
    g.append(make_gap("death_after_discharge", _ids(a, date_of_death=dod.isoformat()), f"""
        SELECT p.date_of_death = DATE '{dod.isoformat()}'
           AND p.date_of_death > (SELECT max(CAST(discharge_time AS DATE)) FROM admissions WHERE patientid = p.patientid)
           AND (SELECT count(*) FROM admissions WHERE patientid = p.patientid AND death_time IS NOT NULL) = 0
        FROM patients p WHERE p.patientid = {a.subject_id}"""))


def _record_orders(h: Hospital, by_role: dict[str, Admission]) -> None:
    """One gap per temporal-order plant, with the actual first crossing and first administration times."""
    for role, plant in ORDER_PLANTS.items():
        a = by_role[role]
        cmp = (lambda v: v < plant.threshold) if plant.comparator == "<" else (lambda v: v > plant.threshold)
        labs = [r for r in h.tables["labevents"] if r["hadm_id"] == a.hadm_id and r["itemid"] == plant.itemid
                and r["valuenum"] is not None and cmp(r["valuenum"])]
        given = [r for r in h.tables["emar"] if r["hadm_id"] == a.hadm_id and r["medication"] == plant.drug
                 and r["event_txt"] == "Administered"]
        crossing = min(r["charttime"] for r in labs)
        first_dose = min(r["charttime"] for r in given)
        if (first_dose > crossing) != (plant.order == "after"):  # a generator bug, never bad input
            raise RuntimeError(f"planted order {role!r} not realised: dose {first_dose}, crossing {crossing}")
        rel = ">" if plant.order == "after" else "<"
        name = "drug_after_threshold" if plant.order == "after" else "drug_before_threshold"
        h.gaps.append(make_gap(name, _ids(
            a, drug=plant.drug, itemid=plant.itemid, comparator=plant.comparator, threshold=plant.threshold,
            first_crossing_time=crossing.isoformat(sep=" "), first_administration_time=first_dose.isoformat(sep=" ")), f"""
            WITH x AS (SELECT min(chart_time) AS t FROM lab_events WHERE admissionid = {a.hadm_id}
                       AND itemid = {plant.itemid} AND value_numeric {plant.comparator} {plant.threshold}),
                 d AS (SELECT min(chart_time) AS t FROM medication_administrations WHERE admissionid = {a.hadm_id}
                       AND medication = '{plant.drug}' AND event_text = 'Administered'),
                 r AS (SELECT min(start_time) AS t FROM prescriptions WHERE admissionid = {a.hadm_id}
                       AND drug = '{plant.drug}')
            SELECT x.t IS NOT NULL AND d.t IS NOT NULL AND d.t {rel} x.t AND r.t {rel} x.t FROM x, d, r"""))


def _pick(h: Hospital, table: str, role_hadm: set[int], **match: Any) -> dict[str, Any]:
    """A random untouched row of ``table`` matching ``match``, outside role admissions (so plants never overlap)."""
    rows = [r for r in h.tables[table] if r.get("hadm_id") is not None and r["hadm_id"] not in role_hadm
            and all(r.get(k) == v for k, v in match.items())
            and (table != "labevents" or (r["valuenum"] is not None and r["valueuom"] is not None))]
    return h.rng.choice(rows)


def _plant_lab_values(h: Hospital, role_hadm: set[int]) -> None:
    g = h.gaps
    for itemid, text, comment in ((50971, "UNABLE TO REPORT", "HEMOLYZED SPECIMEN. UNABLE TO REPORT POTASSIUM."),
                                  (50931, "___", None)):
        r = _pick(h, "labevents", role_hadm, itemid=itemid)
        r.update(value=text, valuenum=None, flag=None, comments=comment)
        g.append(make_gap("lab_value_text_only", {"lab_event_id": r["labevent_id"], "patientid": r["subject_id"],
                          "admissionid": r["hadm_id"], "itemid": itemid, "value": text}, f"""
            SELECT value_numeric IS NULL AND value = '{text}' AND itemid = {itemid}
            FROM lab_events WHERE lab_event_id = {r["labevent_id"]}"""))
    r = _pick(h, "labevents", role_hadm, itemid=50912)
    r["valueuom"] = None
    g.append(make_gap("lab_unit_null", {"lab_event_id": r["labevent_id"], "patientid": r["subject_id"],
                      "admissionid": r["hadm_id"], "itemid": 50912, "value_numeric": r["valuenum"]}, f"""
        SELECT value_unit IS NULL AND value_numeric IS NOT NULL FROM lab_events WHERE lab_event_id = {r["labevent_id"]}"""))
    r = _pick(h, "labevents", role_hadm, itemid=50931)
    mmol = round(r["valuenum"] / GLUCOSE_MGDL_PER_MMOLL, 1)
    r.update(value=f"{mmol:.1f}", valuenum=mmol, valueuom="mmol/L", ref_range_lower=3.9, ref_range_upper=5.6)
    g.append(make_gap("lab_unit_contradiction", {"lab_event_id": r["labevent_id"], "patientid": r["subject_id"],
                      "admissionid": r["hadm_id"], "itemid": 50931, "unit": "mmol/L", "usual_unit": "mg/dL",
                      "value_numeric": mmol}, f"""
        SELECT (SELECT value_unit FROM lab_events WHERE lab_event_id = {r["labevent_id"]}) = 'mmol/L'
           AND (SELECT count(*) FROM lab_events WHERE itemid = 50931 AND lab_event_id <> {r["labevent_id"]}
                AND value_unit IS DISTINCT FROM 'mg/dL' AND value_numeric IS NOT NULL) = 0"""))
    out = sorted({r["subject_id"] for r in h.tables["labevents"] if r["hadm_id"] is None})
    n = sum(1 for r in h.tables["labevents"] if r["hadm_id"] is None)
    g.append(make_gap("outpatient_lab_null_admission", {"patientids": out, "count": n}, f"""
        SELECT (SELECT count(*) FROM lab_events WHERE admissionid IS NULL) = {n}
           AND (SELECT count(*) FROM lab_events l JOIN admissions a USING (patientid)
                WHERE l.admissionid IS NULL AND l.chart_time BETWEEN a.admission_time AND a.discharge_time) = 0"""))


def _plant_admin_values(h: Hospital, role_hadm: set[int]) -> None:
    g = h.gaps
    r = _pick(h, "drgcodes", role_hadm, drg_type="APR")
    r.update(drg_severity=None, drg_mortality=None)
    g.append(make_gap("drg_severity_null", {"patientid": r["subject_id"], "admissionid": r["hadm_id"],
                      "drg_type": "APR", "drg_code": r["drg_code"]}, f"""
        SELECT count(*) = 1 FROM drg_codes WHERE admissionid = {r["hadm_id"]} AND drg_type = 'APR'
           AND drg_severity IS NULL AND drg_mortality IS NULL"""))
    rows = h.tables["admissions"]
    if not any(r["marital_status"] is None for r in rows):
        h.rng.choice(rows)["marital_status"] = None
    null = sorted(r["hadm_id"] for r in rows if r["marital_status"] is None)
    g.append(make_gap("marital_status_null", {"admissionids": null, "count": len(null)}, f"""
        SELECT list(admissionid ORDER BY admissionid) = {null} FROM admissions WHERE marital_status IS NULL"""))


def _record_populations(h: Hospital) -> None:
    """Rare diagnoses (1-4 patients) and the chronic ones guaranteed >= 5 patients."""
    cat = h.catalog
    items = [("small_population", r.key, r.icd9, r.icd10) for r in cat.rare]
    items += [("large_population", m.key, m.icd9, m.icd10) for m in cat.comorbidities if m.min_patients >= 5]
    diag = h.tables["diagnoses_icd"]
    for name, key, c9, c10 in items:
        codes = {(c9[0], 9), (c10[0], 10)}
        pats = sorted({r["subject_id"] for r in diag if (r["icd_code"], r["icd_version"]) in codes})
        h.gaps.append(make_gap(name, {"diagnosis": key, "icd_codes": [[c9[0], 9], [c10[0], 10]],
                                      "units": "patients", "count": len(pats), "patientids": pats}, f"""
            SELECT count(DISTINCT patientid) = {len(pats)} FROM diagnoses
            WHERE (icd_code = '{c9[0]}' AND icd_version = 9) OR (icd_code = '{c10[0]}' AND icd_version = 10)"""))
