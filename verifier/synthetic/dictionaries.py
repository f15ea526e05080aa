"""Dictionary tables: d_labitems, d_items, d_icd_diagnoses, d_icd_procedures, d_hcpcs,
provider and caregiver, all taken from the catalog (they hold every code the
events use, plus a few unused entries, as real dictionaries do).
"""

from __future__ import annotations

from .hospital import Hospital


def make_dictionaries(h: Hospital) -> None:
    """Write the dictionary and identifier tables."""
    cat = h.catalog
    for i in cat.lab_items:
        h.add("d_labitems", itemid=i.itemid, label=i.label, fluid=i.fluid, category=i.category)
    for row in cat.icu_items:
        itemid, label, abbr, linksto, category, unit, ptype, low, high = row
        h.add("d_items", itemid=itemid, label=label, abbreviation=abbr, linksto=linksto, category=category,
              unitname=unit or None, param_type=ptype, lownormalvalue=low if low != "" else None,
              highnormalvalue=high if high != "" else None)
    diag: dict[tuple[str, int], str] = {}
    for x in list(cat.conditions.values()) + list(cat.comorbidities) + list(cat.rare):
        diag[(x.icd9[0], 9)] = x.icd9[1]
        diag[(x.icd10[0], 10)] = x.icd10[1]
    for (code, version), title in sorted(diag.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        h.add("d_icd_diagnoses", icd_code=code, icd_version=version, long_title=title)
    procs = sorted({(c9, 9, t9) for c9, t9, _c, _t in cat.procedures.values()}
                   | {(c10, 10, t10) for _c, _t, c10, t10 in cat.procedures.values()}, key=lambda r: (r[1], r[0]))
    for code, version, title in procs:
        h.add("d_icd_procedures", icd_code=code, icd_version=version, long_title=title)
    for code, category, long_desc, short_desc in cat.hcpcs:
        h.add("d_hcpcs", code=code, category=int(category) if category else None,
              long_description=long_desc or None, short_description=short_desc)
    for pid in h.providers:
        h.add("provider", provider_id=pid)
    for cid in h.caregivers:
        h.add("caregiver", caregiver_id=cid)
