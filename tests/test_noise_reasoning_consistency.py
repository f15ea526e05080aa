"""Reasoning consistent with the abstention (issue 30 point 4, ARCHITECTURE.md section 4 step 10).

Outside testers passed Noise tasks with a Reasoning that contradicts the abstention ("everything is
recorded, the value exists") on an oracle's qualifying evidence, and with one naming a requirement the
evidence does not show ("the date of birth is not recorded"), because the check looked for the task's
key terms anywhere. The rule: a statement of a gap of the requirement's kind about its own item, and no
statement that the requirement is met. Sentences here are this file's own, written from that description.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier import verify
from verifier.abstention import check_reasoning
from verifier.agents.reference_agents import abstention_reasoning
from verifier.contract import ReasonCode as R
from verifier.contract import Step, Task, Trajectory, UnmetRequirement, VerifyConfig
from verifier.sql import render_result, run_query, thread_connection

CONTRADICTIONS = [
    "Everything is recorded and the value exists [step 1].",
    "All data are present and complete; the value exists [step 1].",
    "All the required data are recorded and the requirement is met [step 1].",
    "Nothing is missing in the records [step 1].",
]
WRONG_REQUIREMENTS = [
    "The date of birth is not recorded [step 1].",
    "The patient's weight is missing (NULL) [step 1].",
]


def _noise(tasks: list) -> list[Task]:
    return [t for t in tasks if t.condition == "noise" and t.reference.unmet_requirement is not None]


def _one_per_program(tasks: list) -> list[Task]:
    seen: dict[str, Task] = {}
    for t in _noise(tasks):
        seen.setdefault(t.program, t)
    return list(seen.values())


def _accepted(text: str, t: Task) -> tuple[bool, dict]:
    ok, d = check_reasoning(text, t.reference.unmet_requirement, t.question)
    return ok and not d["not_specific"] and not d.get("contradicts", False), d


def test_contradicting_reasoning_fails_on_every_task(synth_tasks: list) -> None:
    """The question restated (or the requirement's own statement) plus a claim that the data is complete."""
    for t in _noise(synth_tasks):
        for claim in CONTRADICTIONS:
            for text in (f"{t.question} {claim}", f"{t.reference.unmet_requirement.statement} {claim}"):
                ok, d = _accepted(text, t)
                assert not ok and d["contradicts"], (t.task_id, text, d.get("consistency"))


def test_wrong_requirement_fails_on_every_task(synth_tasks: list) -> None:
    for t in _noise(synth_tasks):
        for claim in WRONG_REQUIREMENTS:
            ok, d = _accepted(f"{t.question} {claim}", t)
            assert not ok, (t.task_id, claim, d.get("consistency"))


def test_oracle_and_honest_variants_pass(synth_tasks: list) -> None:
    for t in _noise(synth_tasks):
        for text in (abstention_reasoning(t, [1]),
                     abstention_reasoning(t, [1]) + " The patient has other admissions, and the tables hold many other results."):
            ok, d = _accepted(text, t)
            assert ok, (t.task_id, text, d.get("consistency"))


def test_not_recorded_passes_only_where_that_is_the_gap(synth_tasks: list) -> None:
    """The question echoed plus "Not recorded.": a record-level or value-level-NULL gap, not a relation."""
    kinds: dict[str, list[bool]] = {"record": [], "value": [], "query": []}
    for t in _noise(synth_tasks):
        if t.scope != "patient" or t.program == "transfer_first_into_unit":  # its key term "transfer" is not in the question
            continue
        ok, d = _accepted(f"{t.question} Not recorded [step 1].", t)
        if d["consistency"]["accepted_kinds"] == ["relation"]:
            kinds["query"].append(ok)
        elif t.noise_type in ("record", "value"):
            kinds[t.noise_type].append(ok)
    assert kinds["record"] and all(kinds["record"])
    assert kinds["value"] and all(kinds["value"])
    assert kinds["query"] and not any(kinds["query"])


POTASSIUM = UnmetRequirement(level="record", statement="No potassium lab event is recorded during admission 2001.",
                             tables=["lab_events"], columns=["lab_events.itemid"], scope={"admissionid": 2001, "itemid": 50971},
                             key_terms=["Potassium", "admission 2001"])
SEVERITY = UnmetRequirement(level="value", statement="The HCFA DRG of admission 2002 is billed but has no severity recorded.",
                            tables=["drg_codes"], columns=["drg_codes.drg_severity"], scope={"admissionid": 2002},
                            key_terms=["HCFA DRG", "severity", "admission 2002"])
WINDOW = UnmetRequirement(level="query", statement="Heparin was given during the admission but never within ICU stay 3003.",
                          tables=["medication_administrations", "icu_stays"],
                          columns=["medication_administrations.chart_time", "icu_stays.in_time"],
                          scope={"icuadmissionid": 3003}, key_terms=["Heparin", "ICU stay 3003"])
Q_WINDOW = "While the patient was in ICU stay 3003, when was Heparin first administered?"
# blind corpus c34 (agent E, Q06): a Query-level link between two tables; both reviewers accepted "No
# Emergency Department Observation admission has an APR DRG" (rejected before: read as an absent record)
APR_LINK = UnmetRequirement(level="query", statement="Patient 10014354 stayed in Emergency Department Observation only "
                            "during admissions that have no APR DRG billed.", tables=["transfers", "drg_codes"],
                            columns=["transfers.care_unit", "drg_codes.drg_type"],
                            scope={"patientid": 10014354, "drg_type": "APR", "care_unit": "Emergency Department Observation"},
                            key_terms=["Emergency Department Observation", "APR DRG"])
Q_APR = ("Patient 10014354 was cared for in Emergency Department Observation: give the APR DRG code and description "
         "of the first such admission that has one.")
# blind corpus c32 (synth/c32_json/Q11): the procedure named by its code alone; both reviewers accepted
PROCEDURE = UnmetRequirement(level="record", statement="No ICD-10 procedure 02HV33Z is recorded for patient 16342323 in admission 27351531.",
                             tables=["procedures"], columns=["procedures.icd_code", "procedures.chart_date"],
                             scope={"patientid": 16342323, "admissionid": 27351531, "icd_code": "02HV33Z"},
                             key_terms=["procedure 02HV33Z", "admission 27351531"])


@pytest.mark.parametrize("req,question,text,ok", [
    (POTASSIUM, "", "The patient has an admission 2001, but no potassium lab in it [step 1].", True),
    (POTASSIUM, "", "Admission 2001 exists and has labs, but none is potassium [step 1].", True),
    (POTASSIUM, "", "Not everything is recorded: there is no potassium result in admission 2001 [step 1].", True),
    (POTASSIUM, "", "Potassium was drawn in admission 2000 but not in admission 2001 [step 1].", True),  # present elsewhere
    (POTASSIUM, "", "The potassium may have been drawn at another hospital; none is recorded in admission 2001 [step 1].", True),
    (POTASSIUM, "", "Potassium is recorded in admission 2001 and the value exists [step 1].", False),
    (POTASSIUM, "", "The potassium of admission 2001 is recorded [step 1].", False),
    (POTASSIUM, "", "Admission 2001 has a potassium lab; its date of birth is not recorded [step 1].", False),
    (SEVERITY, "", "The HCFA DRG of admission 2002 has drg_severity NULL [step 1].", True),
    (SEVERITY, "", "The HCFA DRG of admission 2002 is billed, but its severity is empty [step 1].", True),
    (SEVERITY, "", "The HCFA DRG severity of admission 2002 is recorded [step 1].", False),
    (SEVERITY, "", "No HCFA DRG is billed for admission 2002, so its date is unknown [step 1].", False),  # the record, not the column
    (SEVERITY, "", "Admission 2002: the HCFA DRG severity is present, all data are complete [step 1].", False),
    (WINDOW, Q_WINDOW, "Heparin was given twice in the admission, both times after ICU stay 3003 ended [step 1].", True),
    (WINDOW, Q_WINDOW, "All Heparin doses fall outside ICU stay 3003 [step 1].", True),
    (WINDOW, Q_WINDOW, "Heparin in ICU stay 3003: not recorded [step 1].", False),  # an absence, not the relation
    (WINDOW, Q_WINDOW, f"{Q_WINDOW} Not recorded [step 1].", False),
    (APR_LINK, Q_APR, "The patient's DRG list holds none of these admissions. No Emergency Department Observation "
                      "admission has an APR DRG, so the code cannot be given [step 1].", True),
    (APR_LINK, Q_APR, "None of the Emergency Department Observation admissions carries an APR DRG [step 1].", True),
    (APR_LINK, Q_APR, "No APR DRG is recorded for Emergency Department Observation [step 1].", False),  # a record, not the link
    (APR_LINK, Q_APR, "No APR DRG is billed for the patient [step 1].", False),  # one term: an absent record
    (APR_LINK, Q_APR, "No Emergency Department Observation stay is found [step 1].", False),
    (PROCEDURE, "", "Admission 27351531 has only two billed procedures, 0BH17EZ and 5A1945Z [step 1]; "
                    "02HV33Z is not recorded for patient 16342323 in any admission [step 1].", True),
    (PROCEDURE, "", "Admission 27351531 has two billed procedures; 0BH17EZ is not recorded [step 1].", False),
    (PROCEDURE, "", "02HV33Z is recorded in admission 27351531 and its date exists [step 1].", False),
])
def test_statements_of_the_gap(req: UnmetRequirement, question: str, text: str, ok: bool) -> None:
    got, d = check_reasoning(text, req, question)
    assert (got and not d["contradicts"]) is ok, (text, d["consistency"])


OTHER_PRESENT = st.sampled_from([
    "The patient has three admissions.",
    "Admission 2001 exists and has 40 lab results.",
    "The admission's sodium and chloride are recorded.",
    "The lab_events table is populated for this patient.",
    "Other labs of this admission exist.",
    "I also checked the transfers and the ICU stays of the patient.",
])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(extra=st.lists(OTHER_PRESENT, min_size=1, max_size=3), where=st.integers(0, 2))
def test_honest_sentences_about_other_present_items_do_not_flip(extra: list[str], where: int) -> None:
    """Adding sentences about other items that are present leaves an accepted Reasoning accepted."""
    base = ["The patient has admission 2001.", "No potassium result is recorded in admission 2001 [step 1]."]
    sentences = base[:where] + extra + base[where:]
    ok, d = check_reasoning(" ".join(sentences), POTASSIUM)
    assert ok and not d["contradicts"], (sentences, d["consistency"])


@settings(max_examples=60, deadline=None)
@given(claim=st.sampled_from(CONTRADICTIONS), honest=st.sampled_from([
    "No potassium result is recorded in admission 2001 [step 1].",
    "Admission 2001 exists and has labs, but none is potassium [step 1].",
]))
def test_a_claim_that_the_data_is_complete_always_fails(claim: str, honest: str) -> None:
    """Whatever honest statement sits beside it, a claim that the requirement is met fails the Reasoning."""
    for text in (f"{honest} {claim}", f"{claim} {honest}"):
        _ok, d = check_reasoning(text, POTASSIUM)
        assert d["contradicts"], (text, d["consistency"])


def _oracle_step(db: Path, t: Task) -> Step:
    sql = t.reference.sql
    res = run_query(thread_connection(db), sql, time_limit_s=30, row_cap=10_000)
    return Step(index=1, kind="sql", code=sql, output=render_result(res.columns, res.rows))


def test_on_the_oracles_qualifying_evidence(synth_db: Path, synth_tasks: list) -> None:
    """End to end: the oracle's evidence qualifies; its own reasoning succeeds, a contradicting one fails
    with REASONING_CONTRADICTS_ABSTENTION, a wrong requirement with REASONING_MISSES_REQUIREMENT."""
    config = VerifyConfig(db_path=str(synth_db))
    for t in _one_per_program(synth_tasks):
        step = _oracle_step(synth_db, t)

        def run(reasoning: str):
            final = f"Answer: NULL\nReasoning: {reasoning}"
            return verify(Trajectory(trajectory_id="t", task_id=t.task_id, steps=[step], final_response=final), t, config)

        honest = run(abstention_reasoning(t, [1]))
        assert honest.success, (t.task_id, honest.reasons)
        contra = run(f"{t.question} Everything is recorded and the value exists [step 1].")
        assert R.REASONING_CONTRADICTS_ABSTENTION in contra.reasons and not contra.success, (t.task_id, contra.reasons)
        wrong = run(f"{t.question} The date of birth is not recorded [step 1].")
        assert wrong.reasons == [R.REASONING_MISSES_REQUIREMENT], (t.task_id, wrong.reasons)
