"""The reasoning check: any statement of the requirement (issue 17 kind 5), only this requirement
(issue 18 point 3), on the tasks of the synthetic hospital."""

from __future__ import annotations

import pytest

from verifier.abstention import check_reasoning
from verifier.agents.red_team import UNIVERSAL_SUFFIX
from verifier.agents.reference_agents import abstention_reasoning


def _noise(tasks: list) -> list:
    return [t for t in tasks if t.condition == "noise" and t.reference.unmet_requirement is not None]


def test_universal_suffix_is_not_specific(synth_tasks: list) -> None:
    tasks = _noise(synth_tasks)
    rejected = 0
    for t in tasks:
        ok, d = check_reasoning(f"{t.question} {UNIVERSAL_SUFFIX} See [step 1].", t.reference.unmet_requirement, t.question)
        rejected += (not ok) or d["not_specific"]
    assert rejected >= 0.95 * len(tasks), (rejected, len(tasks))


def test_oracle_reasoning_is_specific(synth_tasks: list) -> None:
    for t in _noise(synth_tasks):
        ok, d = check_reasoning(abstention_reasoning(t, [1]), t.reference.unmet_requirement, t.question)
        assert ok and not d["not_specific"], (t.task_id, d)


def test_honest_reasoning_naming_a_few_other_tables_is_specific(synth_tasks: list) -> None:
    """A careful analyst says where else they looked; that is not naming every requirement."""
    for t in _noise(synth_tasks)[:40]:
        text = (abstention_reasoning(t, [2]) + " I also checked the transfers and the ICU stays of the "
                "patient, and the procedures table, to be sure nothing was coded elsewhere.")
        ok, d = check_reasoning(text, t.reference.unmet_requirement, t.question)
        assert ok and not d["not_specific"], (t.task_id, d)


def _population_five(tasks: list) -> list:
    return [t for t in _noise(tasks) if "fewer than five" in t.reference.unmet_requirement.key_terms]


def _named_without_five(t) -> str:
    """The task's other key terms, stated plainly (every one but the five-unit phrase)."""
    return "; ".join(k.split("|")[0] for k in t.reference.unmet_requirement.key_terms if k != "fewer than five")


@pytest.mark.parametrize("statement", [
    "zero admissions meet all the criteria",
    "none of the units qualify",
    "no admission has such a record",
    # "the value is NULL for every event" and "it is not recorded for any of them" state an empty field and an
    # absent record, other gap kinds than too few units (issue 30 point 4, tests/test_noise_reasoning_gap_kinds.py)
    "0 eligible rows in [step 2]",
])
def test_zero_states_the_five_unit_requirement(synth_tasks: list, statement: str) -> None:
    """Showing zero is a stronger statement than "fewer than five" and names the same requirement."""
    tasks = _population_five(synth_tasks)
    assert len(tasks) >= 5
    for t in tasks:
        ok, d = check_reasoning(f"{_named_without_five(t)}: {statement}.", t.reference.unmet_requirement, t.question)
        assert ok, (t.task_id, statement, d)


def test_missing_value_stated_as_all_null(synth_tasks: list) -> None:
    tasks = [t for t in _noise(synth_tasks) if "numeric value|missing value" in t.reference.unmet_requirement.key_terms]
    if not tasks:
        pytest.skip("no missing-value task in this construction of the synthetic hospital")
    for t in tasks:
        for statement in ("every result is NULL", "the value is not recorded", "only text, no numeric"):
            text = f"{_named_without_five(t).replace('numeric value', '').replace(';', ',')} {statement}"
            ok, d = check_reasoning(text, t.reference.unmet_requirement, t.question)
            assert ok, (t.task_id, text, d)


def test_other_requirements_are_still_missed(synth_tasks: list) -> None:
    """The restatements do not name a different requirement: saying "none" without the item fails."""
    for t in _population_five(synth_tasks)[:10]:
        ok, _ = check_reasoning("None of the records qualify.", t.reference.unmet_requirement, t.question)
        assert not ok, t.task_id


def _req(*terms: str):
    from verifier.contract import UnmetRequirement

    return UnmetRequirement(level="record", statement="s", tables=[], columns=[], scope={}, key_terms=list(terms))


@pytest.mark.parametrize("terms,text", [
    (["Surgical Intensive Care Unit (SICU)", "fewer than five"], "Only a handful of SICU stays carry it: none in [step 2]."),
    (["Medical Intensive Care Unit (MICU)", "fewer than five"], "No stay of the medical intensive care unit has such charting [step 1]."),
    (["length of stay|LOS", "14 days", "patient 123"], "Patient 123's admissions lasted 3, 6 and 9 days; none reaches 14 days [step 1]."),
    (["length of stay|LOS", "3 days", "patient 123"], "No stay of patient 123 was long enough: the longer stay was 2 days, under 3 days [step 1]."),
    (["readmission|readmit", "30 days", "URGENT"], "No URGENT admission was followed by a next admission within 30 days [step 2]."),
    (["readmission|readmit", "10 days", "URGENT"], "For URGENT stays the patients returned only after 40 days or more, never within 10 days."),
    (["Heart Rate", "7 days"], "No heart rate in the first 7-day window [step 1]."),
])
def test_restatements_of_the_requirement_are_named(terms: list[str], text: str) -> None:
    """Issue 17 kind 5: an acronym for a named unit, a duration for a length of stay, a next
    admission for a readmission, a day for days."""
    ok, d = check_reasoning(text, _req(*terms))
    assert ok, (text, d)


@pytest.mark.parametrize("terms,text", [
    (["length of stay|LOS", "14 days", "patient 123"], "Patient 123 has no DRG for the last admission [step 1]."),
    (["Surgical Intensive Care Unit (SICU)", "fewer than five"], "Fewer than five MICU stays carry it [step 2]."),
])
def test_other_requirements_are_not_restatements(terms: list[str], text: str) -> None:
    ok, _ = check_reasoning(text, _req(*terms))
    assert not ok, text


#: Templates that list every generic way a question can fail, hedged, around the task's own key terms
#: (a red-team policy's reasoning; blind reviewers failed it: it identifies no requirement).
_HEDGED_TEMPLATES = [
    "Checked [step 1]: for {terms}, the record may be missing, a value could be empty or NULL, the data might be "
    "contradictory, and the rows may not belong to the same admission.",
    "Regarding {terms}: possibly the needed record is absent; the value may be blank; the events may fall outside "
    "the time window or in the wrong order [step 1].",
    "{terms}. At least one condition is unmet: either the records are incomplete, or values are missing, or the "
    "timing is inconsistent with the required window [step 1].",
]


@pytest.mark.parametrize("template", _HEDGED_TEMPLATES)
def test_a_hedged_list_of_every_failure_mode_is_not_specific(synth_tasks: list, template: str) -> None:
    for t in _noise(synth_tasks)[:40]:
        terms = ", ".join(k.split("|")[0] for k in t.reference.unmet_requirement.key_terms)
        ok, d = check_reasoning(template.format(terms=terms), t.reference.unmet_requirement, t.question)
        assert d["not_specific"], (t.task_id, d)


@pytest.mark.parametrize("text", [
    "The value may be missing because the test was never resulted: the row shows NULL [step 2].",
    "The discharge location is NULL [step 1]; the record exists, so it is the value that is missing.",
    "No later admission is recorded [step 1]; the patient may have been admitted elsewhere, which the records cannot show.",
    "Either the drug was never given, or it was charted in another table; neither table holds it [step 1, 2].",
    # a review: "could not" states an absence, and NULL/empty are the evidence's own words
    "I could not find a lactate within the 24-hour window [step 1], and the discharge time is not recorded, so NULL.",
    "The value is NULL and the field is empty in the window, and I could not see any later entry [step 1].",
])
def test_honest_hedges_naming_one_or_two_modes_stay_specific(synth_tasks: list, text: str) -> None:
    for t in _noise(synth_tasks)[:40]:
        ok, d = check_reasoning(abstention_reasoning(t, [1]) + " " + text, t.reference.unmet_requirement, t.question)
        assert ok and not d["not_specific"], (t.task_id, d)


def test_a_missing_specimen_names_the_missing_culture() -> None:
    """A microbiology specimen is the culture's sample: "no ... specimen is recorded" names a missing culture."""
    from verifier.contract import UnmetRequirement

    req = UnmetRequirement(level="record", statement="No SPUTUM culture is recorded for admission 21234567.",
                           tables=["microbiology_events"], columns=["microbiology_events.specimen_type"],
                           key_terms=["SPUTUM", "culture", "admission 21234567"])
    for text in ["No sputum specimen is recorded in admission 21234567 [step 1].",
                 "Admission 21234567 holds no SPUTUM specimens at all [step 1]."]:
        ok, d = check_reasoning(text, req, "")
        assert ok, (text, d)
    ok, d = check_reasoning("No sputum result is recorded in admission 21234567 [step 1].", req, "")
    assert not ok and d["missing"] == ["culture"], d
