"""Laboratory events (labevents): daily chemistry and blood-count panels per admission,
plus a few outpatient panels with NULL ``hadm_id``.

Values: each admission has a per-item baseline inside (or, with a chronic
comorbidity, outside) the reference range; the principal condition sets a
day-1 value that drifts back towards the baseline (time constant 1.5 days),
plus measurement noise of 4 % of the reference width. Hematocrit follows
hemoglobin (about 3x). Planted temporal orders override one item draw by draw
(see ``plan.ORDER_PLANTS``); planted absences drop one item (``plan.ABSENT_LAB``).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from .catalog import LabItem
from .hospital import Admission, Hospital, Patient
from .plan import ABSENT_LAB, ORDER_PLANTS

#: Days over which a condition's day-1 value relaxes halfway-ish to baseline (exp time constant).
RELAX_DAYS = 1.5
#: Noise standard deviation as a fraction of the reference range width.
NOISE_FRACTION = 0.04


def make_labs(h: Hospital) -> None:
    """Write labevents for every admission (except planted no-lab ones) and outpatient draws."""
    clinic = [p for p in h.patients if h.rng.random() < 0.35] or h.patients[:1]
    for p in h.patients:
        if p in clinic:
            _outpatient(h, p)
        for a in p.admissions:
            if a.role == "no_labs":
                continue
            a.lab_draws = _draw_times(h, a)
            _admission_labs(h, p, a)


def _draw_times(h: Hospital, a: Admission) -> list[datetime]:
    times = [a.admittime + h.minutes(20, 90)]
    day = a.admittime.replace(hour=0, minute=0, second=0) + timedelta(days=1)
    while True:
        t = day + timedelta(hours=4) + h.minutes(0, 150)
        if t > a.dischtime - timedelta(hours=2):
            break
        times.append(t)
        day += timedelta(days=1)
    return times


def _baseline(h: Hospital, p: Patient, item: LabItem) -> float:
    for m in h.catalog.comorbidities:
        if m.key in p.comorbidities and item.itemid in m.labs:
            return h.uniform(m.labs[item.itemid])
    w = item.ref_high - item.ref_low
    return h.uniform((item.ref_low + 0.2 * w, item.ref_high - 0.2 * w))


def _items_for(h: Hospital, a: Admission) -> list[LabItem]:
    cat = h.catalog
    items = [i for i in cat.lab_items if i.panel in ("chem", "cbc")]
    extras = [i for i in cat.lab_items if i.panel == "extra" and (i.itemid in a.condition.labs or h.rng.random() < 0.35)]
    absent = ABSENT_LAB.get(a.role)
    return [i for i in items + extras if i.itemid != absent]


def _admission_labs(h: Hospital, p: Patient, a: Admission) -> None:
    rng = h.rng
    items = _items_for(h, a)
    base = {i.itemid: _baseline(h, p, i) for i in items}
    init = {i.itemid: h.uniform(a.condition.labs[i.itemid]) if i.itemid in a.condition.labs else base[i.itemid]
            for i in items}
    plant = ORDER_PLANTS.get(a.role)
    t0 = a.lab_draws[0]
    for k, t in enumerate(a.lab_draws):
        days = (t - t0).total_seconds() / 86400
        values: dict[int, float] = {}
        for i in items:
            if plant and i.itemid == plant.itemid:
                values[i.itemid] = h.uniform(plant.ranges[min(k, len(plant.ranges) - 1)])
                continue
            if i.panel == "extra" and k > 1:
                continue
            if i.itemid == 51221 and 51222 in values:  # hematocrit follows hemoglobin
                values[i.itemid] = values[51222] * 2.95 + rng.gauss(0, 0.6)
                continue
            b, v0 = base[i.itemid], init[i.itemid]
            noise = rng.gauss(0, NOISE_FRACTION * (i.ref_high - i.ref_low))
            values[i.itemid] = b + (v0 - b) * math.exp(-days / RELAX_DAYS) + noise
        priority = "STAT" if (k == 0 and a.edregtime is not None) else "ROUTINE"
        _panel_rows(h, p.subject_id, a.hadm_id, t, items, values, priority, provider=None)


def _panel_rows(h: Hospital, sid: int, hadm: int | None, t: datetime, items: list[LabItem],
                values: dict[int, float], priority: str | None, provider: str | None) -> None:
    """One specimen per panel (chem/blood gas vs hematology), one labevents row per item value."""
    specimens: dict[str, int] = {}
    store = t + h.minutes(35, 110)
    for i in items:
        if i.itemid not in values:
            continue
        v = max(values[i.itemid], 0.0)
        v = round(v, i.decimals) if i.decimals else float(round(v))
        group = "hem" if i.category == "Hematology" else "chem"
        if group not in specimens:
            specimens[group] = h.new_id("specimen_id")
        flag = "abnormal" if (v < i.ref_low or v > i.ref_high) else None
        h.add("labevents", labevent_id=h.next_serial("labevent_id"), subject_id=sid, hadm_id=hadm,
              specimen_id=specimens[group], itemid=i.itemid, order_provider_id=provider, charttime=t,
              storetime=store, value=f"{v:.{i.decimals}f}", valuenum=v, valueuom=i.unit or None,
              ref_range_lower=i.ref_low, ref_range_upper=i.ref_high, flag=flag, priority=priority,
              comments=None)


def _outpatient(h: Hospital, p: Patient) -> None:
    """A clinic chemistry panel 10-60 days before the first admission (about a third of patients)."""
    rng = h.rng
    first = p.admissions[0].admittime
    t = (first - timedelta(days=rng.randint(10, 60))).replace(hour=rng.randint(8, 15), minute=rng.randint(0, 59))
    items = [i for i in h.catalog.lab_items if i.panel == "chem"]
    values = {i.itemid: _baseline(h, p, i) + rng.gauss(0, NOISE_FRACTION * (i.ref_high - i.ref_low)) for i in items}
    _panel_rows(h, p.subject_id, None, t, items, values, priority=None, provider=h.provider())
