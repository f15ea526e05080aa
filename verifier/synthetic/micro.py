"""Microbiology (microbiologyevents): a culture for infectious principal conditions
(blood, urine or sputum) and an MRSA screen at every ICU admission.

A culture grows an organism of its catalog list with probability 0.6 (then one
row per antibiotic of the organism's panel with its MIC and S/R interpretation);
otherwise a single row with NULL organism and the no-growth comment, as in MIMIC-IV.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from .hospital import Admission, Hospital, Patient


def make_micro(h: Hospital) -> None:
    """Write microbiologyevents for every admission."""
    for p in h.patients:
        for a in p.admissions:
            if a.condition.culture:
                _culture(h, p, a, a.condition.culture, a.admittime + h.minutes(30, 360), may_grow=True)
            if a.role == "vanc_not_given":
                _culture(h, p, a, "mrsa", a.admittime + h.minutes(20, 90), may_grow=False)
            for s in a.icu_stays:
                _culture(h, p, a, "mrsa", s.intime + h.minutes(15, 180), may_grow=False)


def _culture(h: Hospital, p: Patient, a: Admission, key: str, t: datetime, may_grow: bool) -> None:
    rng = h.rng
    spec_itemid, spec_desc, test_itemid, test_name, organisms, no_growth = h.catalog.cultures[key]
    store = t + timedelta(days=rng.randint(1, 3), minutes=rng.randint(0, 600))
    base = dict(subject_id=p.subject_id, hadm_id=a.hadm_id, micro_specimen_id=h.new_id("micro_specimen_id"),
                order_provider_id=h.provider() if rng.random() < 0.5 else None,
                chartdate=t.replace(hour=0, minute=0, second=0), charttime=t, spec_itemid=spec_itemid,
                spec_type_desc=spec_desc, test_seq=1, storedate=store.replace(hour=0, minute=0, second=0),
                storetime=store, test_itemid=test_itemid, test_name=test_name)
    grows = may_grow and organisms and rng.random() < 0.6
    if not grows:
        h.add("microbiologyevents", microevent_id=h.next_serial("microevent_id"), **base, org_itemid=None,
              org_name=None, isolate_num=None, quantity=None, ab_itemid=None, ab_name=None, dilution_text=None,
              dilution_comparison=None, dilution_value=None, interpretation=None, comments=no_growth)
        return
    org_itemid = rng.choice(organisms)
    org_name, panel = h.catalog.organisms[org_itemid]
    quantity = ">100,000 CFU/mL" if key == "urine" else None
    for ab_itemid, ab_name, s_mic, r_mic in h.catalog.antibiotic_panels[panel]:
        resistant = rng.random() < 0.2
        mic = r_mic if resistant else s_mic
        comparison = "=>" if resistant else "<="
        h.add("microbiologyevents", microevent_id=h.next_serial("microevent_id"), **base, org_itemid=org_itemid,
              org_name=org_name, isolate_num=1, quantity=quantity, ab_itemid=ab_itemid, ab_name=ab_name,
              dilution_text=f"{comparison}{mic:g}", dilution_comparison=comparison, dilution_value=mic,
              interpretation="R" if resistant else "S", comments=None)
