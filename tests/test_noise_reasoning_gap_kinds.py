"""Gap kinds are exclusive and committed (issue 30 point 4; ARCHITECTURE.md section 4 step 10).

An outside adversary's output-blind, always-NULL policy (the question turned into a negation, plus
"Fewer than five units are eligible." on every population task) passed 43% of held-out real-demo Noise
tasks, stating an absent record where the record exists with an empty field, and a five-unit gap where
the gap is something else. A Reasoning must state the gap kind of the task's own unmet requirement:
an absent record (Record-level), an empty or contradicting field (Value-level), a relation failing
(Query-level), fewer than five units of the cohort (five-unit). The adversary's templates are the
rejected cases; the accepted ones are honest phrasings of each kind.
"""

from __future__ import annotations

import pytest

from verifier.abstention import check_reasoning
from verifier.contract import UnmetRequirement

DISCHARGE = UnmetRequirement(
    level="value", statement="Admission 22416954 of patient 10015860 exists but has no discharge location recorded.",
    tables=["admissions"], columns=["admissions.discharge_location"], scope={"admissionid": 22416954},
    key_terms=["discharge location", "admission 22416954"])
Q_DISCHARGE = "Patient 10015860, admission 22416954: where was the discharge destination?"
PROTEIN = UnmetRequirement(
    level="value", statement="The last Protein (itemid 51492) lab event of patient 10035631 in admission 20385771 has no numeric value recorded.",
    tables=["lab_events"], columns=["lab_events.value_numeric", "lab_events.value"], scope={"admissionid": 20385771},
    key_terms=["Protein", "numeric value|missing value", "admission 20385771"])
Q_PROTEIN = ("For admission 20385771 of patient 10035631, what was the final Protein measurement (itemid 51492)? Include the "
             "unit. Answer with the numeric value field; a result written only as text or in the comments (e.g. 'TR.', "
             "'NEG.', '<1') is not a numeric value.")
RANITIDINE = UnmetRequirement(
    level="record", statement="No administration of Ranitidine is recorded for patient 10020786 during admission 23488445.",
    tables=["medication_administrations"], columns=["medication_administrations.medication"], scope={"admissionid": 23488445},
    key_terms=["Ranitidine", "administration", "admission 23488445"])
Q_RANITIDINE = "When was Ranitidine first administered to patient 10020786 during hospital admission 23488445?"
ECHO = UnmetRequirement(
    level="value", statement="EEG (itemid 221223) events exist, but fewer than five ICU stays have a location documented for them.",
    tables=["icu_procedure_events"], columns=["icu_procedure_events.location"], scope={"itemid": 221223},
    key_terms=["EEG", "location", "fewer than five"])
Q_ECHO = "Which body location is documented most often for EEG procedure events (ICU item 221223) across all ICU stays?"
B181 = UnmetRequirement(
    level="record", statement="Fewer than five patients have ICD-10 diagnosis B181 (Chronic viral hepatitis B without "
    "delta-agent); the count may not be disclosed (five-unit rule).",
    tables=["diagnoses"], columns=["diagnoses.icd_code"], scope={"icd_code": "B181"}, key_terms=["B181", "fewer than five"])
Q_B181 = ("How many distinct patients have at least one admission billed ICD-10 code B181 (Chronic viral hepatitis B "
          "without delta-agent)?")


def _ok(text: str, req: UnmetRequirement, question: str) -> bool:
    ok, d = check_reasoning(text, req, question)
    return ok and not d["contradicts"] and not d["not_specific"]


@pytest.mark.parametrize("req,question,text,ok", [
    # Value-level: the record exists with the field empty (or contradicting); an absent record is another gap
    (DISCHARGE, Q_DISCHARGE, "The discharge location of admission 22416954 is NULL [step 1].", True),
    (DISCHARGE, Q_DISCHARGE, "Admission 22416954 has no discharge location recorded (the field is empty) [step 1].", True),
    (DISCHARGE, Q_DISCHARGE, "Admission 22416954 exists [step 1]; its discharge location value is missing.", True),
    (DISCHARGE, Q_DISCHARGE, "No record of the discharge destination of admission 22416954 is found [step 1].", False),
    (DISCHARGE, Q_DISCHARGE, "For admission 22416954 of patient 10015860, no discharge location is recorded [step 1]. "
                             "No record of Patient 10015860, admission 22416954: was the discharge destination is found.", False),
    (PROTEIN, Q_PROTEIN, "The last Protein result of admission 20385771 has no numeric value; it is written as text [step 1].", True),
    (PROTEIN, Q_PROTEIN, "For admission 20385771 of patient 10035631, no Protein, itemid 51492, item 51492 is recorded "
                         "[step 1], [step 2]. No record of admission 20385771 of patient 10035631, was the final Protein "
                         "measurement (itemid 51492)? is found.", False),
    # Record-level: an absent record; the field said to be empty is another gap
    (RANITIDINE, Q_RANITIDINE, "No Ranitidine administration is recorded in admission 23488445 [step 1].", True),
    (RANITIDINE, Q_RANITIDINE, "The eMAR of admission 23488445 holds no Ranitidine administration [step 1].", True),
    (RANITIDINE, Q_RANITIDINE, "The Ranitidine administration time of admission 23488445 is NULL [step 1].", False),
    (RANITIDINE, Q_RANITIDINE, "In admission 23488445 the Ranitidine administration's chart time field is blank [step 1].", False),
    # a population Value-level gap: the column empty; "fewer than five units are eligible" names no field
    (ECHO, Q_ECHO, "Every EEG (221223) procedure event has location NULL [step 1], so no most frequent location exists.", True),
    (ECHO, Q_ECHO, "EEG events exist, but fewer than five ICU stays have a location documented [step 1].", True),
    (ECHO, Q_ECHO, "For the hospital population, no Which body location is documented most often for EEG procedure events, "
                   "ICU item 221223, item 221223 is recorded [step 1], [step 2]. No record of body location is documented "
                   "most often for EEG procedure events (ICU item 221223) across all ICU stays is found. Fewer than five "
                   "units are eligible.", False),
    # the five-unit gap: too few units of the cohort, said of the cohort
    (B181, Q_B181, "Fewer than five patients have ICD-10 B181 [step 1]; the count may not be disclosed.", True),
    (B181, Q_B181, "ICD-10 B181 is coded for fewer than five patients [step 1].", True),
    (B181, Q_B181, "For the hospital population, no ICD-10, B181, least billed ICD- is recorded [step 1], [step 2]. No record "
                   "of the patients with at least one admission billed ICD-10 code B181, Chronic viral hepatitis B without "
                   "delta-agent is found. Fewer than five units are eligible.", False),
])
def test_gap_kind_committed(req: UnmetRequirement, question: str, text: str, ok: bool) -> None:
    got, d = check_reasoning(text, req, question)
    assert _ok(text, req, question) is ok, (text, d["consistency"])


def test_five_unit_remark_neither_earns_nor_costs() -> None:
    """On a Value-level population task, a "fewer than five" remark beside the right gap costs nothing,
    and on its own it is not the requirement."""
    right = "Every EEG (221223) procedure event has location NULL [step 1]."
    assert _ok(right + " Fewer than five units are eligible.", ECHO, Q_ECHO)
    assert not _ok("EEG (221223) procedure events were counted [step 1]. Fewer than five units are eligible.", ECHO, Q_ECHO)


def _universal(question: str, cite: str = "step 1") -> str:
    """Fresh adversary adv4's output-blind template: the question restated, then every gap kind at once."""
    q = question.rstrip("?. ")
    return (f"{q}: none rec'd; val NULL [{cite}]. <5 qualify. Cohort {q}: fewer than five pts/adm.")


@pytest.mark.parametrize("req,question", [(DISCHARGE, Q_DISCHARGE), (PROTEIN, Q_PROTEIN), (RANITIDINE, Q_RANITIDINE)])
def test_every_gap_kind_at_once_fails_on_a_patients_task(req: UnmetRequirement, question: str) -> None:
    """adv4: the template stated an absent record, an empty value and fewer than five units together and
    passed 18 of 22 patient Value-level tasks. A task about one patient, admission or stay has no cohort:
    "fewer than five" states a gap it cannot have, and fails beside the right kind."""
    ok, d = check_reasoning(_universal(question), req, question)
    assert not ok and [w["kind"] for w in d["consistency"]["wrong_kinds"]] == ["few"], d["consistency"]


@pytest.mark.parametrize("req,question,text", [
    (DISCHARGE, Q_DISCHARGE, "The discharge location of admission 22416954 is NULL [step 1]; fewer than five? No: one admission."),
    (RANITIDINE, Q_RANITIDINE, "No Ranitidine administration is recorded in admission 23488445 [step 1]. If it were a "
                               "population question, fewer than five patients might qualify."),
    (B181, Q_B181, "Fewer than five patients have ICD-10 B181 [step 1]; the count may not be disclosed."),
    (ECHO, Q_ECHO, "EEG events exist, but fewer than five ICU stays have a location documented [step 1]."),
])
def test_five_units_stay_allowed_where_hedged_asked_or_the_task_has_a_cohort(req: UnmetRequirement, question: str, text: str) -> None:
    """A question or a hedge states nothing; on a population task "fewer than five" is the five-unit gap."""
    ok, d = check_reasoning(text, req, question)
    assert ok and not d["consistency"].get("wrong_kinds"), d["consistency"]
