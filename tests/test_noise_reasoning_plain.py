"""A Reasoning that states the unmet requirement in ordinary words names it (issue 17, Noise false
rejects kind a): a transfer stated as the unit never entered, a dose stated as redacted ('___', the
MIMIC-IV de-identification mark) or the amount given, the scope implied by the requirement itself.
Wrong or missing statements still fail. Phrasings and values are this file's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier import verify
from verifier.abstention import check_reasoning
from verifier.contract import Step, Task, Trajectory, UnmetRequirement, VerifyConfig
from verifier.sql import render_result, run_query, thread_connection


@pytest.fixture(scope="module")
def transfer_task(synth_tasks: list) -> Task:
    """A synthetic Noise task: no transfer into a care unit during an admission."""
    return next(t for t in synth_tasks if t.condition == "noise" and t.program == "transfer_first_into_unit")


def _ok(text: str, req: UnmetRequirement, question: str = "") -> bool:
    return check_reasoning(text, req, question)[0]


def test_a_transfer_stated_as_the_unit_never_entered(transfer_task: Task) -> None:
    req = transfer_task.reference.unmet_requirement
    assert req is not None and req.key_terms[0] == "transfer"
    unit, adm = transfer_task.params["care_unit"], transfer_task.params["admissionid"]
    for text in (f"During admission {adm} the patient went from the emergency department to a surgical ward and never entered {unit}.",
                 f"The unit movements of admission {adm} show no entry into {unit}.",
                 f"Admission {adm}: the patient passed through two wards, none of them {unit}."):
        assert _ok(text, req, transfer_task.question), text
    for text in (f"Admission {adm} has no {unit}.",  # names no movement at all
                 f"During admission {adm + 1} the patient never entered {unit}.",  # another admission
                 "The patient never entered that unit."):  # names no unit
        assert not _ok(text, req, transfer_task.question), text


def test_plain_transfer_reasoning_passes_end_to_end(synth_db: Path, transfer_task: Task) -> None:
    sql = transfer_task.reference.sql
    res = run_query(thread_connection(synth_db), sql, time_limit_s=30, row_cap=10_000)
    step = Step(index=1, kind="sql", code=sql, output=render_result(res.columns, res.rows))
    unit = transfer_task.params["care_unit"]
    final = f"Answer: NULL\nReasoning: In this admission the patient never entered {unit} [step 1]."
    v = verify(Trajectory(trajectory_id="t", task_id=transfer_task.task_id, steps=[step], final_response=final),
               transfer_task, VerifyConfig(db_path=str(synth_db)))
    assert v.success, v.reasons


#: The key terms of the medications program's missing-dose Noise rewrite (``{medication}``, "dose",
#: ``admission {admissionid}``), with this file's own values.
DOSE = UnmetRequirement(level="value", statement="The first administration of Enoxaparin in admission 20000001 has no dose recorded.",
                        tables=["medication_administration_details"], columns=["medication_administration_details.dose_given"],
                        scope={"admissionid": 20000001, "medication": "Enoxaparin"},
                        key_terms=["Enoxaparin", "dose", "admission 20000001"])


@pytest.mark.parametrize("text, ok", [
    ("The earliest Enoxaparin dose shows '___' where the amount should be, and no unit [step 2].", True),
    ("Its first Enoxaparin administration lists the amount given as ___ only [step 1].", True),
    ("The first Enoxaparin dose in this admission is redacted [step 1].", True),
    ("The first Enoxaparin dose of admission 20000001 is blank [step 1].", True),
    ("The first Enoxaparin dose of admission 20000002 is '___' [step 1].", False),  # another admission
    ("Enoxaparin was given in the morning [step 1].", False),  # no dose statement
    ("The first dose is '___' [step 1].", False),  # names no medication
])
def test_a_redacted_dose_states_the_missing_dose(text: str, ok: bool) -> None:
    assert _ok(text, DOSE) is ok, text


def test_the_scope_is_implied_only_by_the_whole_requirement() -> None:
    ok, details = check_reasoning("The first Enoxaparin dose is '___'.", DOSE)
    assert ok and details["scope_implied"] == ["admission 20000001"]
    ok, details = check_reasoning("No record.", DOSE)
    assert not ok and "admission 20000001" in details["missing"]


VALUE = UnmetRequirement(level="value", statement="The last Magnesium result of admission 20000003 has no numeric value.",
                         tables=["lab_events"], columns=["lab_events.value_numeric"], scope={"admissionid": 20000003},
                         key_terms=["Magnesium", "missing value", "admission 20000003"])


@pytest.mark.parametrize("text, ok", [
    ("In admission 20000003 the last Magnesium result reads '___' [step 1].", True),  # de-identified: missing
    ("In admission 20000003 the last Magnesium result reads '1.9' [step 1].", False),
])
def test_a_redacted_value_is_a_missing_value(text: str, ok: bool) -> None:
    assert _ok(text, VALUE) is ok, text


def _normalise_every_synonym(text: str) -> str:
    """``normalise`` as the rule states it: every synonym pattern applied in turn, none skipped."""
    from verifier.abstention._reasoning import _basic, normalise_numbers, rules

    out = normalise_numbers(_basic(text))
    if rules().unit_after_number is not None:  # "11 d" -> "11 day" first (unit_abbreviations)
        pat, names = rules().unit_after_number
        out = pat.sub(lambda m: " " + names[m.group(1)], out)
    for pattern, repl, _ in rules().synonyms:
        out = pattern.sub(repl, out)
    return out


def _synonym_texts():
    from hypothesis import strategies as st

    from verifier.abstention._reasoning import rules

    phrases = [p for _, _, p in rules().synonyms] + [r for _, r, _ in rules().synonyms]
    words = st.sampled_from(phrases + ["the", "not", "was", "patient", "3", "x", "abc", "recorded", "-", ",", "."])
    return st.lists(words, max_size=12).map(" ".join) | st.text(max_size=40)


@pytest.mark.parametrize("seed", range(3))
def test_normalise_skips_only_synonyms_that_cannot_apply(seed: int) -> None:
    """``normalise`` tries a synonym's pattern only when its phrase occurs in the text (issue 15):
    the result equals applying every pattern in turn, on texts made of the phrases, their
    replacements and other words (replacements can create later phrases)."""
    from hypothesis import given, settings

    from verifier.abstention._reasoning import normalise

    @settings(max_examples=300, deadline=None, database=None)
    @given(text=_synonym_texts())
    def check(text: str) -> None:
        normalise.cache_clear()
        assert normalise(text) == _normalise_every_synonym(text)

    check()
