"""Reasonings honest agents write that name the requirement another way (issue 17, the held-out demo
corpus's false rejects, described and rewritten here with this file's own items and values):

- the item named by its id ("no 50956 result in admission 2") where the requirement's statement
  writes "Lipase (itemid 50956)";
- the item named by a clinical abbreviation ("NIBP systolic", "HbA1c", "Hct");
- a five-unit requirement stated as too few units of a cohort named by most of its word terms, the
  rest implied ("comparing the drug times with each admission's first abnormal Hct, fewer than five
  admissions qualify").

A wrong item, a wrong id, a bare "fewer than five" or a cohort named by its threshold alone still fail.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.abstention import check_reasoning
from verifier.contract import UnmetRequirement


def _req(statement: str, key_terms: list[str]) -> UnmetRequirement:
    return UnmetRequirement(level="record", statement=statement, tables=["lab_events"], columns=["lab_events.itemid"],
                            scope={}, key_terms=key_terms)


LIPASE = _req("No Lipase (itemid 50956) lab event is recorded for patient 17 during admission 2200.",
              ["Lipase", "admission 2200"])
NIBP = _req("Fewer than five ICU stays have a Non Invasive Blood Pressure systolic (itemid 220179) above 190 mmHg.",
            ["Non Invasive Blood Pressure systolic", "190", "fewer than five"])
A1C = _req("No % Hemoglobin A1c (itemid 50852) lab event is recorded for patient 3 during admission 4100.",
           ["% Hemoglobin A1c", "admission 4100"])
AFTER = _req("Fewer than five admissions have Furosemide administered after their first abnormal Hematocrit.",
             ["Furosemide", "after", "abnormal Hematocrit", "fewer than five"])
CODED = _req("Fewer than five admissions with ICD-10 diagnosis K8590 have a Lipase result (five-unit rule).",
             ["Lipase", "K8590", "fewer than five"])

CASES = [
    # (requirement, reasoning, named?)
    (LIPASE, "None of the patient's 50956 results is linked to admission 2200 or inside its dates [step 1].", True),
    (LIPASE, "Item 50956 was never drawn during admission 2200 [step 2].", True),
    (LIPASE, "No result of item 50957 falls in admission 2200 [step 1].", False),  # another item id
    (LIPASE, "Nothing was recorded during admission 2200 [step 1].", False),        # names no item
    (NIBP, "Fewer than five ICU stays have an NIBP systolic above 190 mmHg [step 1].", True),
    (NIBP, "Only a handful (fewer than five) of stays had a non-invasive systolic pressure over 190 [step 1].", True),
    (NIBP, "Fewer than five ICU stays have a heart rate above 190 [step 1].", False),  # the threshold alone
    (NIBP, "Fewer than five ICU stays qualify [step 1].", False),
    (A1C, "The patient's HbA1c results all fall outside admission 4100 [step 1].", True),
    (A1C, "No Hgb A1c was measured during admission 4100 [step 1].", True),
    (A1C, "No glucose was measured during admission 4100 [step 1].", False),
    (AFTER, "Comparing Furosemide administration times with each admission's first abnormal Hct, fewer than five "
            "admissions qualify [step 2].", True),
    (AFTER, "Fewer than five admissions got Furosemide following the first abnormal hematocrit [step 2].", True),
    (AFTER, "Fewer than five admissions received Furosemide [step 2].", False),  # 1 of 3 cohort terms
    (CODED, "Fewer than five admissions carry K8590, so no statistic is disclosed [step 1].", True),
    (CODED, "Fewer than five admissions have a lipase drawn [step 1].", True),
    (CODED, "Under the five-unit rule nothing can be reported [step 1].", False),  # no cohort at all
]


@pytest.mark.parametrize("req,text,ok", CASES)
def test_the_requirement_named_another_way(req: UnmetRequirement, text: str, ok: bool) -> None:
    assert check_reasoning(text, req)[0] is ok, (text, check_reasoning(text, req)[1])


@settings(max_examples=60, deadline=None)
@given(other=st.integers(10_000, 99_999).filter(lambda n: n != 50956))
def test_only_the_items_own_id_names_it(other: int) -> None:
    """An item id names the item only when it is the id the requirement writes after the item's label."""
    assert not check_reasoning(f"No result of item {other} falls in admission 2200 [step 1].", LIPASE)[0]
    assert check_reasoning("No result of item 50956 falls in admission 2200 [step 1].", LIPASE)[0]


# ---- another task's reasoning on this task's evidence (fresh adversary adv5, policy P4: the oracle's
# reasoning of the next task passed 15 of 120 real-demo Noise tasks; each case below passed before) ----

ULTRASOUND = _req("Ultrasound (itemid 221217) events exist, but fewer than five ICU stays have a location documented "
                  "for them.", ["Ultrasound", "location", "fewer than five"])
D5NS = _req("D5NS prescriptions exist, but fewer than five admissions have doses per 24 hours recorded for them.",
            ["D5NS", "doses per 24 hours", "fewer than five"])
RDW = _req("Fewer than five admissions with ICD-9 diagnosis 99931 have a RDW result, so no aggregate may be reported.",
           ["RDW", "99931", "fewer than five"])
EPO = _req("Fewer than five admissions have Epoetin Alfa administered after their first abnormal INR(PT).",
           ["Epoetin Alfa", "after", "abnormal INR(PT)", "fewer than five"])
SECOND = UnmetRequirement(level="value", statement="The second admission of patient 10039997 (admission 21390688) has "
                          "no discharge location recorded.", tables=["admissions"], columns=["admissions.discharge_location"],
                          scope={}, key_terms=["discharge location", "second admission|admission 21390688"])

OTHER_TASKS = [
    (ULTRASOUND, "Extubation (itemid 227194) events exist, but fewer than five ICU stays have a location documented "
                 "for them [step 1]."),
    (D5NS, "Glucagon prescriptions exist, but fewer than five admissions have doses per 24 hours recorded for them "
           "[step 1]."),
    (RDW, "Fewer than five admissions with ICD-9 diagnosis 1985 (Secondary malignant neoplasm of bone) have a RDW "
          "result, so no aggregate may be reported [step 1]."),
    (EPO, "Fewer than five admissions have Haloperidol administered after their first abnormal Glucose [step 1]."),
    (SECOND, "The fifth admission of patient 10014354 (admission 22502504) has no discharge location recorded [step 1]."),
]


@pytest.mark.parametrize("req,text", OTHER_TASKS)
def test_another_tasks_requirement_is_not_this_one(req: UnmetRequirement, text: str) -> None:
    """A missing name (an item, drug, code) is excused by the cohort rule only when another name of the
    requirement is said and no identifier of another item is; a term's name words and its ordinal must
    be said ("abnormal Glucose" does not name "abnormal INR(PT)", "fifth admission" not "second admission")."""
    assert check_reasoning(text, req)[0] is False, check_reasoning(text, req)[1]


@pytest.mark.parametrize("req,text", [
    (ULTRASOUND, "Ultrasound procedure events are charted, but fewer than five ICU stays have a location [step 1]."),
    (D5NS, "Fewer than five admissions have a doses-per-24-hours value on their D5NS prescriptions [step 2]."),
    (RDW, "Fewer than five admissions coded 99931 have an RDW drawn [step 1]."),
    (EPO, "Fewer than five admissions got Epoetin Alfa after the first abnormal INR [step 2]."),
    (SECOND, "The patient's second admission has an empty discharge location [step 1]."),
])
def test_the_tasks_own_requirement_is_still_named(req: UnmetRequirement, text: str) -> None:
    assert check_reasoning(text, req)[0] is True, check_reasoning(text, req)[1]
