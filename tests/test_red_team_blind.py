"""Fresh adversaries' output-blind policies (``verifier.agents.red_team_blind``) on the real demo.

adv20's policy (scope listings it never reads, then "None of the recorded events meets the <question>") was paid on
79 of 120 held-out Noise tasks before the restatement and cut-listing rules; adv22's (every gap kind offered as
alternatives, "... is not recorded there, or its field is NULL, or it is recorded only outside the window") on 201
of 264 before alternatives were read as committing to none. Both must stay at zero. adv21's
fragment form ("<fragment>: not recorded." per fragment and a generic relation sentence) is an open hole, measured
by ``benchmarks/bench_reward_hacks.py --policies fresh`` (13 of 60 held-out Noise tasks on 2026-12-07), and so is
adv22's same gaps as flat sentences (19 of 60): not held to a bar here.
"""

from __future__ import annotations

import random

import pytest

from verifier.agents.red_team import schema_columns
from verifier.agents.red_team_blind import FRESH, fragments, question_core, scope_conditions
from verifier.agents.rollout import run_episode
from verifier.env.ehr_env import EHREnv

Q = ("What was the first PH (dipstick) (ICU item 220734) charted for patient 10023239 during their second ICU stay? "
     "Give value and unit.")


def test_question_core_strips_the_asking_words_only() -> None:
    assert question_core(Q) == "first PH (dipstick) (ICU item 220734) charted for patient 10023239 during their second ICU stay"
    assert question_core("How many admissions had a DRG?") == "admissions had a DRG"


def test_fragments_cut_before_prepositions() -> None:
    assert fragments(Q) == ["first PH (dipstick) (ICU item 220734) charted", "for patient 10023239",
                            "during their second ICU stay"]


def test_scope_conditions_read_ids_items_and_codes() -> None:
    columns = [["chart_events", "patientid", "INTEGER"], ["chart_events", "icuadmissionid", "INTEGER"],
               ["chart_events", "itemid", "INTEGER"], ["lab_events", "patientid", "INTEGER"],
               ["lab_events", "itemid", "INTEGER"], ["icu_items", "itemid", "INTEGER"],
               ["diagnoses", "icd_code", "VARCHAR"], ["admissions", "patientid", "INTEGER"]]
    conds = scope_conditions(Q, columns)
    assert conds["chart_events"] == "(itemid IN (220734)) AND (patientid IN (10023239))"
    assert list(conds)[0] == "chart_events"  # an ICU item's own family first
    assert "diagnoses" not in conds  # no code named
    pop = scope_conditions("How many admissions with diagnosis C211 had a Lactate (itemid 50813)?", columns)
    assert pop["diagnoses"] == "(icd_code IN ('C211'))" and pop["lab_events"] == "(itemid IN (50813))"


@pytest.fixture(scope="module")
def held_out(demo_tasks: list) -> list:
    noise = [t for t in demo_tasks if t.condition == "noise" and t.split == "test"]
    return random.Random(22).sample(noise, 30)


def test_listings_read_the_schema_shown(demo_db, held_out: list) -> None:
    env = EHREnv(str(demo_db))
    try:
        obs, _info = env.reset(held_out[0])
    finally:
        env.close()
    assert scope_conditions(held_out[0].question, schema_columns(obs))


@pytest.mark.parametrize("policy", ["scope-none-meets", "scope-disjunction"])
def test_closed_output_blind_policies_are_never_paid(demo_db, held_out: list, policy: str) -> None:
    env = EHREnv(str(demo_db))
    try:
        passed = [t.task_id for t in held_out if run_episode(env, FRESH[policy](), t)[1].success]
        # its listings are evidence on some tasks: what fails is its sentence, which commits to no requirement
        steps = [len(run_episode(env, FRESH[policy](), t)[0].steps) for t in held_out[:5]]
    finally:
        env.close()
    assert passed == []
    assert all(1 <= n <= 5 for n in steps)
