"""The verifier against blind adjudication of a second corpus on the synthetic hospital (issue 32 point 4).

``fixtures/episodes/synthetic_c32/`` holds 45 episodes played through ``EHREnv`` on 2026-12-04 by three
LLM agents in styles the first corpus did not have (a reasoning model writing a long ``<think>`` block
with self-corrections; clinical prose with ``field: value`` detail lines and parentheticals; JSON
answers with context keys and Markdown tables), no agent seeing both twins of a pair, each episode
judged blind by two LLM reviewers (of five, assigned in rotation) against the paper's criterion; they
agreed on every episode. A further 90 episodes of the same agents on the real MIMIC-IV demo are
demo-derived and kept outside the repository (the session note gives their agreement).

Before the fixes this corpus found (``match/lead.py``, the JSON NULL, table count columns, codes in
item terms, ICD codes and unit restatements as context), main agreed on 26 of the 45. Issue 32's target
is >= 99% and no false accept; ``AGREEMENT_FLOOR`` is what the verifier reaches now and only moves up.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_replay import assert_known_false_accepts, replay

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "episodes" / "synthetic_c32"
AGREEMENT_FLOOR = 43 / 45
TARGET = 0.99
KNOWN_FALSE_ACCEPTS: set[str] = set()


@pytest.fixture(scope="module")
def agreement(synth_db: Path):
    return replay(CORPUS, synth_db)


def test_corpus_is_blind_and_double_reviewed(agreement) -> None:
    episodes, _ = agreement
    assert len(episodes) == 45
    assert {e.task.condition for e in episodes} == {"clean", "noise"}
    seen: set[tuple[str, str]] = set()
    for e in episodes:
        assert (e.agent, e.task.pair_id) not in seen, f"{e.agent} played both twins of {e.task.pair_id}"
        seen.add((e.agent, e.task.pair_id))
        assert len(e.adjudication["reviews"]) >= 2


def test_no_false_accept(agreement) -> None:
    assert_known_false_accepts(agreement[1], KNOWN_FALSE_ACCEPTS)


def test_agreement_with_adjudication(agreement) -> None:
    _, a = agreement
    assert a.rate is not None and a.rate >= AGREEMENT_FLOOR - 1e-9, a
    if a.rate < TARGET:
        print(f"agreement {a.rate:.3f} is below issue 32's target {TARGET}")
