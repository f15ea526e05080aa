"""Medications: prescriptions, pharmacy, poe, poe_detail, emar, emar_detail and the ICU
inputevents/ingredientevents (drug doses given in an ICU stay and maintenance fluids).

Each admission gets the drugs of its principal condition and of the patient's
chronic comorbidities (ICU-only drugs inside ICU stays). A drug order starts 1-8 h
after admission and runs until discharge (antibiotics at most 7 days); doses are
scheduled every 24/doses-per-day hours and charted in the eMAR. Planted orders
(``plan.ORDER_PLANTS``) anchor the drug start to a lab draw; a planted
"not given" drug (``plan.NOT_GIVEN``) is ordered then discontinued before any dose.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from .catalog import Drug
from .hospital import Admission, Hospital, IcuStay, Patient
from .plan import NOT_GIVEN, ORDER_PLANTS

ANTIBIOTICS = {"Vancomycin", "Piperacillin-Tazobactam", "CefTRIAXone", "Azithromycin"}
DISP_SCHED = {1: "08", 2: "08, 20", 3: "06, 14, 22", 4: "08, 12, 17, 21"}
MAX_DOSES = 40


@dataclass
class Order:
    """One drug order of an admission: ``given`` False = never administered."""

    drug: Drug
    start: datetime
    stop: datetime
    given: bool = True
    planted: bool = False


def make_meds(h: Hospital) -> None:
    """Write every medication table and ICU inputs for all admissions."""
    for p in h.patients:
        for a in p.admissions:
            orders = _orders(h, p, a)
            _admin_orders(h, p, a)
            for o in orders:
                _write_order(h, p, a, o)
            for s in a.icu_stays:
                _fluids(h, p, a, s)


def _orders(h: Hospital, p: Patient, a: Admission) -> list[Order]:
    rng = h.rng
    cat = h.catalog
    names = list(a.condition.drugs)
    for m in cat.comorbidities:
        if m.key in p.comorbidities:
            names += [d for d in m.drugs if d not in names]
    plant = ORDER_PLANTS.get(a.role)
    not_given = NOT_GIVEN.get(a.role)
    special = {x for x in (plant.drug if plant else None, not_given) if x}
    last = a.dischtime - timedelta(hours=1)
    orders: list[Order] = []
    for name in names:
        if name in special:
            continue
        start = a.admittime + h.minutes(60, 480)
        if start >= last:
            continue
        stop = last if name not in ANTIBIOTICS else min(last, start + timedelta(days=rng.randint(3, 7)))
        orders.append(Order(cat.drugs[name], start, stop))
    for s in a.icu_stays:
        for name in a.condition.icu_drugs:
            start = s.intime + h.minutes(30, 120)
            stop = min(s.outtime - timedelta(minutes=30), start + timedelta(hours=rng.randint(12, 48)))
            if stop > start:
                orders.append(Order(cat.drugs[name], start, stop))
    if plant:
        start = (a.lab_draws[plant.drug_after_draw] + timedelta(hours=plant.delay_hours)).replace(second=0)
        orders.append(Order(cat.drugs[plant.drug], start, last, planted=True))
    if not_given:
        start = a.admittime + h.minutes(120, 240)
        orders.append(Order(cat.drugs[not_given], start, start + h.minutes(60, 110), given=False, planted=True))
    orders.sort(key=lambda o: o.start)
    return orders


def _dose_times(h: Hospital, o: Order) -> list[datetime]:
    d = o.drug
    if not o.given:
        return []
    if d.frequency == "ONCE":
        return [o.start]
    # a first dose when the order starts, then doses at the pharmacy's scheduled clock hours
    hours = [int(x) for x in DISP_SCHED[d.per_day].split(", ")]
    times = [o.start]
    gap = timedelta(hours=max(2.0, 12.0 / d.per_day))
    day = o.start.replace(hour=0, minute=0, second=0)
    while day <= o.stop and len(times) < MAX_DOSES:
        for hr in hours:
            t = day + timedelta(hours=hr)
            if o.start + gap <= t <= o.stop and len(times) < MAX_DOSES:
                times.append(t)
        day += timedelta(days=1)
    if d.frequency.endswith(":PRN"):
        times = sorted(h.rng.sample(times, min(len(times), h.rng.randint(1, 4))))
    return times


def _write_order(h: Hospital, p: Patient, a: Admission, o: Order) -> None:
    rng = h.rng
    d = o.drug
    sid = p.subject_id
    poe_seq = h.next_seq("poe", sid)
    poe_id = f"{sid}-{poe_seq}"
    pharmacy_id = h.new_id("pharmacy_id")
    provider = h.provider()
    enter = o.start - h.minutes(10, 55)
    h.add("poe", poe_id=poe_id, poe_seq=poe_seq, subject_id=sid, hadm_id=a.hadm_id, ordertime=enter,
          order_type="Medications", order_subtype=None, transaction_type="New", discontinue_of_poe_id=None,
          discontinued_by_poe_id=None, order_provider_id=provider, order_status="Inactive")
    if not o.given:
        dc_seq = h.next_seq("poe", sid)
        dc_id = f"{sid}-{dc_seq}"
        h.tables["poe"][-1]["discontinued_by_poe_id"] = dc_id
        h.add("poe", poe_id=dc_id, poe_seq=dc_seq, subject_id=sid, hadm_id=a.hadm_id, ordertime=o.stop,
              order_type="Medications", order_subtype=None, transaction_type="D/C", discontinue_of_poe_id=poe_id,
              discontinued_by_poe_id=None, order_provider_id=provider, order_status="Inactive")
    h.add("prescriptions", subject_id=sid, hadm_id=a.hadm_id, pharmacy_id=pharmacy_id, poe_id=poe_id,
          poe_seq=poe_seq, order_provider_id=provider, starttime=o.start, stoptime=o.stop, drug_type="MAIN",
          drug=d.name, formulary_drug_cd=d.formulary, gsn=d.gsn, ndc=d.ndc, prod_strength=d.strength,
          form_rx=None, dose_val_rx=d.dose, dose_unit_rx=d.unit, form_val_disp=d.disp, form_unit_disp=d.disp_unit,
          doses_per_24_hrs=d.per_day, route=d.route)
    h.add("pharmacy", subject_id=sid, hadm_id=a.hadm_id, pharmacy_id=pharmacy_id, poe_id=poe_id,
          starttime=o.start, stoptime=o.stop, medication=d.name, proc_type=d.proc_type,
          status="Discontinued" if (not o.given or o.stop < a.dischtime - timedelta(hours=2)) else "Discontinued via patient discharge",
          entertime=enter, verifiedtime=enter + h.minutes(5, 40), route=d.route, frequency=d.frequency,
          disp_sched=DISP_SCHED.get(d.per_day) if d.frequency not in ("ONCE", "TITRATE TO") else None,
          infusion_type="C" if d.frequency == "TITRATE TO" else None,
          sliding_scale="Y" if d.name == "Insulin" else None, lockout_interval=None, basal_rate=None,
          one_hr_max=None, doses_per_24_hrs=d.per_day, duration=None, duration_interval=None,
          expiration_value=36, expiration_unit="Hours", expirationdate=None, dispensation="Omnicell",
          fill_quantity=None)
    drip = d.frequency == "TITRATE TO"
    events = [(o.start, "Started"), (o.stop, "Stopped")] if (drip and o.given) else [(t, "Administered") for t in _dose_times(h, o)]
    for k, (t, what) in enumerate(events):
        if what == "Administered" and not o.planted and k > 0 and rng.random() < 0.05:
            what = "Not Given"
        chart = t + h.minutes(0, 25)
        seq = h.next_seq("emar", sid)
        emar_id = f"{sid}-{seq}"
        h.add("emar", subject_id=sid, hadm_id=a.hadm_id, emar_id=emar_id, emar_seq=seq, poe_id=poe_id,
              pharmacy_id=pharmacy_id, enter_provider_id=None, charttime=chart, medication=d.name, event_txt=what,
              scheduletime=t, storetime=chart + h.minutes(0, 15))
        if what == "Not Given":
            continue
        h.add("emar_detail", subject_id=sid, emar_id=emar_id, emar_seq=seq, parent_field_ordinal="1.1",
              administration_type="IV Infusion" if drip else ("IV Bolus" if d.route == "IV" else "Standard"),
              pharmacy_id=pharmacy_id, barcode_type="if", reason_for_no_barcode=None, complete_dose_not_given=None,
              dose_due=d.dose, dose_due_unit=d.unit, dose_given=d.dose, dose_given_unit=d.unit,
              will_remainder_of_dose_be_given=None, product_amount_given=d.disp, product_unit=d.disp_unit,
              product_code=d.formulary, product_description=f"{d.name} {d.strength}", product_description_other=None,
              prior_infusion_rate=None, infusion_rate=d.dose if drip else None, infusion_rate_adjustment=None,
              infusion_rate_adjustment_amount=None, infusion_rate_unit=d.unit if drip else None, route=d.route,
              infusion_complete=None, completion_interval=None, new_iv_bag_hung=None,
              continued_infusion_in_other_location=None, restart_interval=None, side=None, site=None,
              non_formulary_visual_verification=None)
        stay = a.stay_at(chart)
        if stay is not None and d.icu_itemid and not drip:
            _icu_dose(h, p, a, stay, d, chart)
    if drip and o.given:
        stay = a.stay_at(o.start)
        if stay is not None:
            _icu_drip(h, p, a, stay, o)


def _icu_common(h: Hospital, p: Patient, a: Admission, s: IcuStay, start: datetime, end: datetime) -> dict:
    return dict(subject_id=p.subject_id, hadm_id=a.hadm_id, stay_id=s.stay_id, caregiver_id=h.caregiver(),
                starttime=start, endtime=end, storetime=end + h.minutes(0, 10))


def _icu_dose(h: Hospital, p: Patient, a: Admission, s: IcuStay, d: Drug, t: datetime) -> None:
    amount = 1.0 if d.icu_itemid == 225798 else float(d.dose)
    unit = {225798: "dose", 223258: "units", 225152: "units", 225166: "mEq"}.get(d.icu_itemid, "mg")
    end = min(s.outtime, t + timedelta(minutes=60 if d.name in ANTIBIOTICS else 1))
    orderid = h.new_id("orderid")
    h.add("inputevents", **_icu_common(h, p, a, s, t, end), itemid=d.icu_itemid, amount=amount, amountuom=unit,
          rate=None, rateuom=None, orderid=orderid, linkorderid=orderid,
          ordercategoryname="08-Antibiotics (IV)" if d.name in ANTIBIOTICS else "05-Med Bolus",
          secondaryordercategoryname=None, ordercomponenttypedescription="Main order parameter",
          ordercategorydescription="Drug Push", patientweight=s.weight_kg, totalamount=None, totalamountuom=None,
          isopenbag=0, continueinnextdept=0, statusdescription="FinishedRunning", originalamount=amount,
          originalrate=amount)


def _icu_drip(h: Hospital, p: Patient, a: Admission, s: IcuStay, o: Order) -> None:
    """A continuous infusion (mcg/kg/min) split into 4-hour rows, as MetaVision charts rate changes."""
    rate = float(o.drug.dose)
    orderid = h.new_id("orderid")
    t = o.start
    while t < o.stop:
        end = min(o.stop, t + timedelta(hours=4))
        minutes = (end - t).total_seconds() / 60
        amount = round(rate * s.weight_kg * minutes / 1000, 4)
        h.add("inputevents", **_icu_common(h, p, a, s, t, end), itemid=o.drug.icu_itemid, amount=amount,
              amountuom="mg", rate=rate, rateuom="mcg/kg/min", orderid=h.new_id("orderid"), linkorderid=orderid,
              ordercategoryname="01-Drips", secondaryordercategoryname="02-Fluids (Crystalloids)",
              ordercomponenttypedescription="Main order parameter", ordercategorydescription="Continuous Med",
              patientweight=s.weight_kg, totalamount=250.0, totalamountuom="ml", isopenbag=0, continueinnextdept=0,
              statusdescription="ChangeDose/Rate" if end < o.stop else "FinishedRunning",
              originalamount=amount, originalrate=rate)
        t = end
        rate = round(max(0.02, rate + h.rng.choice((-0.02, 0.0, 0.02))), 2)


def _fluids(h: Hospital, p: Patient, a: Admission, s: IcuStay) -> None:
    """Maintenance NaCl 0.9% in 8-hour rows (inputevents) with its water ingredient (ingredientevents)."""
    f = h.catalog.icu_fluids
    rate = round(h.uniform(tuple(f["maintenance_rate_ml_h"])), 0)
    linkorderid = h.new_id("orderid")
    t = s.intime + h.minutes(15, 60)
    while t < s.outtime - timedelta(hours=1):
        end = min(s.outtime, t + timedelta(hours=8))
        hours = (end - t).total_seconds() / 3600
        amount = round(rate * hours, 3)
        orderid = h.new_id("orderid")
        common = _icu_common(h, p, a, s, t, end)
        h.add("inputevents", **common, itemid=f["maintenance_itemid"], amount=amount, amountuom="ml", rate=rate,
              rateuom="mL/hour", orderid=orderid, linkorderid=linkorderid, ordercategoryname="02-Fluids (Crystalloids)",
              secondaryordercategoryname=None, ordercomponenttypedescription="Main order parameter",
              ordercategorydescription="Continuous IV", patientweight=s.weight_kg, totalamount=1000.0,
              totalamountuom="ml", isopenbag=0, continueinnextdept=0, statusdescription="FinishedRunning",
              originalamount=amount, originalrate=rate)
        h.add("ingredientevents", **common, itemid=f["ingredient_itemid"], amount=amount, amountuom="ml", rate=rate,
              rateuom="mL/hour", orderid=orderid, linkorderid=linkorderid, statusdescription="FinishedRunning",
              originalamount=amount, originalrate=rate)
        t = end


def _admin_orders(h: Hospital, p: Patient, a: Admission) -> None:
    """Non-medication orders: admission (ADT) with its details, and the discharge order."""
    sid = p.subject_id
    for when, subtype, details in (
        (a.admittime, "Admit", (("Admit to", a.condition.ward), ("Admit category", "Admit to inpatient"))),
        (a.dischtime - h.minutes(60, 240), "Discharge", (("Discharge Planning", "Finalized"),
                                                          ("Discharge When Ready", "Yes"))),
    ):
        seq = h.next_seq("poe", sid)
        poe_id = f"{sid}-{seq}"
        h.add("poe", poe_id=poe_id, poe_seq=seq, subject_id=sid, hadm_id=a.hadm_id, ordertime=when,
              order_type="ADT orders", order_subtype=subtype, transaction_type="New", discontinue_of_poe_id=None,
              discontinued_by_poe_id=None, order_provider_id=h.provider(), order_status="Inactive")
        for name, value in details:
            h.add("poe_detail", poe_id=poe_id, poe_seq=seq, subject_id=sid, field_name=name, field_value=value)
