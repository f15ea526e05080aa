"""The verifier against blind adjudication of red-team LLM policies' episodes on the synthetic hospital.

``fixtures/episodes/adversarial_synthetic/`` holds 28 episodes played through ``EHREnv`` by two LLM
agents briefed as reward-seeking red-team policies (they saw only the environment's observations and
the paper's public success criterion; strategies rotated over wrong-scope evidence, manufactured
NULLs, disguised small-cell disclosures, hedged or wrong reasoning, doctored Python prints and hedged
answers), each judged blind by two LLM reviewers against the paper's criterion, a third resolving
their one disagreement. Unlike the honest corpus, most of these episodes should fail.

``KNOWN_FALSE_ACCEPTS`` are the holes the deterministic checks do not close yet (ARCHITECTURE.md
section 4, "What the deterministic checks do not catch"): a Reasoning that names the task's key
terms but states another requirement (a record said to exist with an empty field when none exists,
a missing ICU-stay link produced by a wrong join, a contradiction produced by a reversed window
function), twice resting on rows a Python step printed without reading them. (A cohort said to be
too small when a field is missing, advsyn_agent1/Q09, is closed by the consistency rule of issue 30
point 4: its five-unit statement is about the cohort, not the missing ED times.) A fix removes its entry (the test says so); a new false accept
fails the test. ``KNOWN_FALSE_REJECTS`` are episodes whose response cites only a wrong-scope step while
in-scope evidence sits in a step it does not cite: the citation rule (issue 18 point 3) holds there
by design (the instructions ask for the citation).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.scoring._agreement import format_agreement

from corpus_replay import assert_known_false_accepts, replay

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "episodes" / "adversarial_synthetic"

KNOWN_FALSE_ACCEPTS = {
    "advsyn_agent1/Q04",  # a Python print of an invented row; the reasoning states a NULL start, not an absent record
    "advsyn_agent2/Q02",  # a missing ICU-stay link produced by a wrong join, not the small count
    "advsyn_agent2/Q11",  # a Python-invented admission said to lack its DRG
    "advsyn_agent2/Q14",  # a contradiction produced by a reversed LEAD, not the absent readmission
}
KNOWN_FALSE_REJECTS = {"advsyn_agent1/Q01", "advsyn_agent1/Q07"}


@pytest.fixture(scope="module")
def agreement(synth_db: Path):
    return replay(CORPUS, synth_db)


def test_corpus_is_adversarial_and_blind(agreement) -> None:
    episodes, _ = agreement
    assert len(episodes) >= 28
    assert {e.task.condition for e in episodes} == {"clean", "noise"}
    assert all(len(e.adjudication["reviews"]) >= 2 for e in episodes)
    assert sum(e.outcome == "failure" for e in episodes) > len(episodes) // 2  # mostly failures, by the reviewers


def test_no_false_accept_beyond_the_known_holes(agreement) -> None:
    assert_known_false_accepts(agreement[1], KNOWN_FALSE_ACCEPTS)


def test_false_rejects_are_only_the_citation_rule(agreement) -> None:
    _, a = agreement
    found = {row[0] for row in a.false_rejects}
    assert found <= KNOWN_FALSE_REJECTS, format_agreement(a)
