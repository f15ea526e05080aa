"""ICU charting: chartevents (vital signs, weight, height, gender, GCS), outputevents
(urine), procedureevents (lines, ventilation, chest X-ray) and datetimeevents (line
insertion dates).

Vital signs are charted hourly (temperature every 4 h, in °F or, for about a
fifth of stays, °C); the principal condition sets the first value, which drifts
back into the normal range over the stay (time constant 1 day).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from .hospital import Admission, Hospital, IcuStay, Patient

GENDER_TEXT = {"F": "Female", "M": "Male"}
GCS_EYE = ((4, "Spontaneously"), (3, "To Speech"), (2, "To Pain"))


def make_icu(h: Hospital) -> None:
    """Write chartevents, outputevents, procedureevents and datetimeevents for every ICU stay."""
    for p in h.patients:
        for a in p.admissions:
            for s in a.icu_stays:
                _chart(h, p, a, s)
                _outputs(h, p, a, s)
                _procedures(h, p, a, s)


def _chart_row(h: Hospital, p: Patient, a: Admission, s: IcuStay, t: datetime, itemid: int,
               value: str, valuenum: float | None, unit: str | None, warning: int = 0) -> None:
    h.add("chartevents", subject_id=p.subject_id, hadm_id=a.hadm_id, stay_id=s.stay_id, caregiver_id=h.caregiver(),
          charttime=t, storetime=t + h.minutes(0, 45), itemid=itemid, value=value, valuenum=valuenum,
          valueuom=unit, warning=warning)


def _vital(h: Hospital, a: Admission, itemid: int, lo: float, hi: float, hours: float, start: dict) -> float:
    mid = (lo + hi) / 2
    v0 = start.setdefault(itemid, h.uniform(a.condition.vitals[itemid]) if itemid in a.condition.vitals
                          else h.uniform((lo + 0.15 * (hi - lo), hi - 0.15 * (hi - lo))))
    return mid + (v0 - mid) * math.exp(-hours / 24) + h.rng.gauss(0, 0.05 * (hi - lo))


def _chart(h: Hospital, p: Patient, a: Admission, s: IcuStay) -> None:
    rng = h.rng
    t0 = s.intime + h.minutes(5, 30)
    gender = GENDER_TEXT[p.gender]
    if a.role == "icu_gender":
        gender = GENDER_TEXT["M" if p.gender == "F" else "F"]
    _chart_row(h, p, a, s, t0, 226228, gender, None, None)
    if a.role != "icu_no_weight":
        _chart_row(h, p, a, s, t0, 226512, f"{s.weight_kg:.1f}", s.weight_kg, "kg")
    if rng.random() < 0.5:
        _chart_row(h, p, a, s, t0, 226707, f"{p.height_in:.0f}", p.height_in, "Inch")
    start: dict[int, float] = {}
    t = t0
    k = 0
    while t <= s.outtime:
        hours = (t - s.intime).total_seconds() / 3600
        sbp = 0.0
        for itemid, lo, hi, dec, every in h.catalog.vital_signs:
            if k % every:
                continue
            v = _vital(h, a, itemid, lo, hi, hours, start)
            if itemid == 223761:
                _temperature(h, p, a, s, t, v, k)
                continue
            if itemid == 220277:
                v = min(v, 100.0)
            v = float(round(v, dec)) if dec else float(round(v))
            warning = int((itemid == 220045 and v > 130) or (itemid == 220277 and v < 88))
            _chart_row(h, p, a, s, t, itemid, f"{v:.{dec}f}", v, h.catalog.icu_unit(itemid), warning)
            if itemid == 220179:
                sbp = v
            if itemid == 220180 and sbp:
                mean = float(round((sbp + 2 * v) / 3))
                _chart_row(h, p, a, s, t, 220181, f"{mean:.0f}", mean, "mmHg")
        if k % 4 == 0:
            score, text = GCS_EYE[2] if s.ventilated else GCS_EYE[rng.choice((0, 0, 0, 1))]
            _chart_row(h, p, a, s, t, 220739, text, float(score), None)
        k += 1
        t = t0 + timedelta(hours=k, minutes=rng.randint(-5, 5))


def _temperature(h: Hospital, p: Patient, a: Admission, s: IcuStay, t: datetime, v_f: float, k: int) -> None:
    if s.temp_itemid == 223762:
        c = round((v_f - 32) * 5 / 9, 1)
        _chart_row(h, p, a, s, t, 223762, f"{c:.1f}", c, "°C")
        return
    f = round(v_f, 1)
    if a.role == "icu_temp_unit" and k == 8:
        f = round((v_f - 32) * 5 / 9, 1)  # a Celsius number keyed into the Fahrenheit field
    _chart_row(h, p, a, s, t, 223761, f"{f:.1f}", f, "°F")


def _outputs(h: Hospital, p: Patient, a: Admission, s: IcuStay) -> None:
    low = a.condition.key == "aki"
    t = s.intime + timedelta(hours=2)
    while t < s.outtime:
        ml = float(round(h.uniform((10.0, 90.0) if low else (60.0, 400.0))))
        h.add("outputevents", subject_id=p.subject_id, hadm_id=a.hadm_id, stay_id=s.stay_id,
              caregiver_id=h.caregiver(), charttime=t, storetime=t + h.minutes(0, 30), itemid=226559,
              value=ml, valueuom="ml")
        t += timedelta(hours=4)


def _proc_row(h: Hospital, p: Patient, a: Admission, s: IcuStay, itemid: int, start: datetime, end: datetime,
              value: float, unit: str | None, category: str, description: str,
              location: str | None = None, location_category: str | None = None) -> None:
    orderid = h.new_id("orderid")
    h.add("procedureevents", subject_id=p.subject_id, hadm_id=a.hadm_id, stay_id=s.stay_id,
          caregiver_id=h.caregiver(), starttime=start, endtime=end, storetime=end + h.minutes(0, 20), itemid=itemid,
          value=value, valueuom=unit, location=location, locationcategory=location_category, orderid=orderid,
          linkorderid=orderid, ordercategoryname=category, ordercategorydescription=description,
          patientweight=s.weight_kg, isopenbag=1 if description == "ContinuousProcess" else 0, continueinnextdept=0,
          statusdescription="FinishedRunning", ORIGINALAMOUNT=value, ORIGINALRATE=1.0)


def _datetime_row(h: Hospital, p: Patient, a: Admission, s: IcuStay, itemid: int, t: datetime, value: datetime) -> None:
    h.add("datetimeevents", subject_id=p.subject_id, hadm_id=a.hadm_id, stay_id=s.stay_id,
          caregiver_id=h.caregiver(), charttime=t, storetime=t + h.minutes(0, 20), itemid=itemid,
          value=value, valueuom="Date", warning=0)


def _continuous(h: Hospital, p: Patient, a: Admission, s: IcuStay, itemid: int, start: datetime, end: datetime,
                category: str, location: str | None, loc_cat: str | None) -> None:
    minutes = float(round((end - start).total_seconds() / 60))
    _proc_row(h, p, a, s, itemid, start, end, minutes, "min", category, "ContinuousProcess", location, loc_cat)


def _procedures(h: Hospital, p: Patient, a: Admission, s: IcuStay) -> None:
    """Peripheral line for every stay, chest X-ray, central line and ventilation when indicated."""
    rng = h.rng
    line_start = s.intime + h.minutes(0, 40)
    _continuous(h, p, a, s, 224275, line_start, s.outtime, "Peripheral Lines", rng.choice(("Left Arm", "Right Arm")), None)
    _datetime_row(h, p, a, s, 225754, line_start + h.minutes(5, 60), line_start.replace(hour=0, minute=0, second=0))
    xray = s.intime + h.minutes(60, 240)
    if xray < s.outtime:
        _proc_row(h, p, a, s, 225459, xray, xray + timedelta(minutes=1), 1.0, None, "Imaging", "Task")
    if s.central_line:
        cl_start = s.intime + h.minutes(30, 120)
        cl_end = max(cl_start + timedelta(hours=2), s.outtime - h.minutes(30, 120))
        _continuous(h, p, a, s, 224263, cl_start, min(cl_end, s.outtime), "Invasive Lines", "Right IJ", "Invasive Venous")
        _datetime_row(h, p, a, s, 224280, cl_start + h.minutes(5, 60), cl_start.replace(hour=0, minute=0, second=0))
    if s.ventilated:
        v_start = s.intime + h.minutes(10, 60)
        v_end = min(s.outtime - h.minutes(30, 90), v_start + timedelta(hours=rng.randint(12, 120)))
        if v_end > v_start:
            _continuous(h, p, a, s, 225792, v_start, v_end, "Ventilation", None, None)
