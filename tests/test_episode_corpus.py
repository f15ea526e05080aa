"""The verifier against blind adjudication of LLM-agent episodes on the synthetic hospital.

``fixtures/episodes/synthetic/`` holds episodes played through ``EHREnv`` by LLM agents that saw only
the environment's observations (six briefs: terse, verbose Markdown, JSON, plain sections, broad SQL,
Python-heavy; no agent saw both twins of a pair), each judged blind by two LLM reviewers against the
paper's criterion (a third resolves disagreements). The test scores every episode with the current
verifier and prints every disagreement with the reviewers' reasons.

Issue 17's target is >= 99% agreement and no false accept. ``AGREEMENT_FLOOR`` is the level the
verifier has reached so far; it only ever moves up (raise it when a change lifts agreement).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.scoring._agreement import format_agreement

from corpus_replay import assert_known_false_accepts, replay

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "episodes" / "synthetic"
AGREEMENT_FLOOR = 0.995
TARGET = 0.99


@pytest.fixture(scope="module")
def agreement(synth_db: Path):
    return replay(CORPUS, synth_db)


def test_corpus_is_large_and_blind(agreement) -> None:
    episodes, _ = agreement
    assert len(episodes) >= 200
    assert {e.task.condition for e in episodes} == {"clean", "noise"}
    # no agent played both twins of a pair
    seen: dict[tuple[str, str], str] = {}
    for e in episodes:
        key = (e.agent, e.task.pair_id)
        assert key not in seen, f"{e.agent} played both twins of {e.task.pair_id}"
        seen[key] = e.task.condition
    assert all(len(e.adjudication["reviews"]) >= 2 for e in episodes)


KNOWN_FALSE_ACCEPTS: set[str] = set()  # syn2_agent2/Q14 fixed: an aggregate referred back to the units


def test_no_false_accept(agreement) -> None:
    """No false accept beyond the known ones, and every known one still is one (remove it when fixed)."""
    assert_known_false_accepts(agreement[1], KNOWN_FALSE_ACCEPTS)


def test_agreement_with_adjudication(agreement) -> None:
    _, a = agreement
    assert a.rate is not None and a.rate >= AGREEMENT_FLOOR, format_agreement(a)
    if a.rate < TARGET:
        print(f"agreement {a.rate:.3f} is below issue 17's target {TARGET}")
