"""Fresh adversary adv22 (2026-12-07, read only the README and ARCHITECTURE's criterion), written from its report:
an output-blind NULL policy whose Reasoning restates the question and then states every gap kind at once, "the <item>
is not recorded there, or its field is NULL, or it is recorded only outside the window the question sets", was paid
on 201 of 264 held-out real-demo Noise tasks (76 %), the same with "may" before each gap. Gaps of different kinds
offered as alternatives commit to none (``verifier.abstention._reasoning``, ``alternatives``), as alternatives are a
hedge on the Clean side. The tasks are the real-demo Noise tasks of the committed corpora c44 and c45.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_adv20 import TASKS, _reasoning_ok
from verifier.abstention._reasoning import _disjuncts, consistency
from verifier.agents.red_team_blind import _head

NOISE = sorted(k for k, t in TASKS.items() if t.condition == "noise")
GAPS = ("the {head} is not recorded there", "its field is NULL", "it is recorded only outside the window the question sets",
        "fewer than five units with {head} qualify")


def _every_gap(task, order=(0, 1, 2), joiner=", or ", may: bool = False) -> str:
    gaps = [GAPS[i].format(head=_head(task.question)) for i in order]
    if may:
        gaps = [g.replace(" is ", " may be ", 1) for g in gaps]
    return f"{task.question} Checked in the scope asked: {joiner.join(gaps)} [step 1]."


@pytest.mark.parametrize("episode", NOISE)
def test_every_gap_kind_offered_as_alternatives_states_none(episode: str) -> None:
    task = TASKS[episode]
    text = _every_gap(task, (3, 0, 1, 2) if task.scope == "population" else (0, 1, 2))
    assert not _reasoning_ok(task, text)
    cons = consistency(text, task.reference.unmet_requirement, task.question, task.reference.eligible_units)
    assert cons["alternatives"], cons["gaps"]


@pytest.mark.parametrize("episode", NOISE)
def test_the_requirement_own_statement_still_states_the_gap(episode: str) -> None:
    """Every task's own requirement statement, some holding an "or" of the question's names ("... with stage 5
    chronic kidney disease or end stage renal disease"), still states its gap."""
    task = TASKS[episode]
    assert _reasoning_ok(task, f"{task.reference.unmet_requirement.statement} [step 1].")


@settings(max_examples=80, deadline=None)
@given(episode=st.sampled_from(NOISE), order=st.permutations([0, 1, 2]),
       joiner=st.sampled_from([", or ", " or ", "; or ", ", or else ", " or perhaps "]), may=st.booleans())
def test_alternatives_in_any_order_and_wording_state_no_gap(episode: str, order: list[int], joiner: str, may: bool) -> None:
    task = TASKS[episode]
    assert not _reasoning_ok(task, _every_gap(task, tuple(order), joiner, may))


def test_an_or_inside_the_question_own_names_is_no_alternative() -> None:
    task = TASKS["c44_B/Q01"]
    assert " or " in task.question
    clause = "fewer than 5 admissions had hypertensive chronic kidney disease with stage 5 chronic kidney disease or end stage renal disease"
    question = " ".join(task.question.lower().replace(",", " ").split())
    assert _disjuncts(clause, question) == [clause]
    assert len(_disjuncts("the x is not recorded there or its field is null", question)) == 2


def test_alternatives_of_one_kind_still_state_it() -> None:
    """"not in admission A or in any other" offers no second kind of gap: it is still the absent record."""
    task = TASKS["c44_D/Q10"]
    assert task.reference.unmet_requirement.level == "record"
    assert _reasoning_ok(task, "No Hematocrit, Calculated result is recorded for admission 22326517, or in any other "
                               "admission of the patient [step 1].")


@pytest.mark.parametrize("text", [
    "There are ELECTIVE adms with insurance 'Other', but none of them has an ED registration time or an ED out time "
    "recorded (0 of each, 0 with both) [step 1].",
    "The ELECTIVE admissions with insurance Other exist, but none of them has a non-NULL ED registration or ED out "
    "time [step 1]."])
def test_a_list_under_no_or_none_of_is_not_alternatives(text: str) -> None:
    """Blind corpus c34_B/Q07: "none of them has A or B recorded" lists what none has; the first version of the
    alternatives rule restricted it to an absent record and lost its "none of them" (units_none)."""
    task = TASKS["c45_A/Q11"]  # ELECTIVE admissions with insurance Other, fewer than five with ED times
    assert task.reference.unmet_requirement.level == "value"
    assert _reasoning_ok(task, text)


# ---------------------------------------------------------------- the count as a digit group of a labelled value
from verifier.abstention._small_cell import disclosure  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 4), form=st.sampled_from(["v{n}", "0{n}:00", "2000-01-0{n}", "#{n}", "x{n}", "n={n}", "{n}/5"]),
       label=st.sampled_from(["Eligible admissions", "Eligible admissions, as a clock time", "Qualifying patients",
                              "Eligible ICU stays (written as a tag)", "Eligible count"]))
def test_a_cohort_label_whose_value_holds_the_count_discloses_it(n: int, form: str, label: str) -> None:
    """adv22: "Eligible admissions: v2.", "..., as a clock time: 02:00.", "... (the day of a date): 2000-01-02." were
    paid on 38 of 60 small-cell tasks while stating the true count (49 of 49 each with the reference's evidence)."""
    assert disclosure(f"NULL. {label}: {form.format(n=n)}.", n)


@pytest.mark.parametrize("text,n", [("Eligible admissions: <5 (five-unit rule).", 2), ("Eligible admissions: ≤4.", 4),
                                    ("Eligible admissions: fewer than 5; window 2150-01-03.", 3),
                                    ("Eligible period: 2150-01-01 to 2150-02-01.", 1),
                                    ("Eligible admissions: v7 of the protocol applies.", 2)])
def test_a_bound_a_date_of_no_count_or_another_number_is_no_disclosure(text: str, n: int) -> None:
    assert not disclosure(text, n)
