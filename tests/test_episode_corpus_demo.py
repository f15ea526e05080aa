"""The verifier against blind adjudication on the real MIMIC-IV demo (issue 32 point 4).

``fixtures/episodes/demo_c34/`` holds 60 episodes played through ``EHREnv`` on the real demo (2026-12-05)
by five LLM agents in styles the earlier corpora did not have (a reasoning model's long ``<think>`` block;
clinical prose that corrects itself; a lead value over a vertical ``| field | value |`` table; terse
SQL with window functions; Python-first JSON), one twin per pair, ten pairs per scope x noise cell, each
episode judged blind by two LLM reviewers; they judged all 60 successes. It is a small extract of the demo,
committed under ODbL 1.0 with the demo's attribution (``NOTICE.md`` beside it).

Before this session's fixes the verifier agreed on 48 of the 60 (12 false rejects, 0 false accepts). The
two disagreements left, kept here by name so that a fix shows: ``A/Q11`` answers 20.65 h where the reference, rounded from a
binary float at a tie, is 20.6; ``D/Q06`` adds the location category in parentheses, which cannot be told
from a second candidate ("HOME (SKILLED NURSING FACILITY)") without the column's other values.

Real-data test: it needs the demo (``MIMIC_DEMO_DIR``) and its MEDS chart events, and skips, saying so,
only when they are absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_replay import assert_known_false_accepts, replay

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "episodes" / "demo_c34"
KNOWN_FALSE_REJECTS = {"c34_A/Q11", "c34_D/Q06"}
TARGET = 0.99


@pytest.fixture(scope="module")
def agreement(demo_db: Path):
    return replay(CORPUS, demo_db)


def test_corpus_is_blind_and_double_reviewed(agreement) -> None:
    episodes, _ = agreement
    assert len(episodes) == 60
    assert {e.task.condition for e in episodes} == {"clean", "noise"}
    seen: set[tuple[str, str]] = set()
    for e in episodes:
        assert (e.agent, e.task.pair_id) not in seen, f"{e.agent} played both twins of {e.task.pair_id}"
        seen.add((e.agent, e.task.pair_id))
        assert len(e.adjudication["reviews"]) >= 2


def test_no_false_accept(agreement) -> None:
    _, a = agreement
    assert_known_false_accepts(a, set())


def test_false_rejects_are_the_known_ones(agreement) -> None:
    _, a = agreement
    found = {row[0] for row in a.false_rejects}
    assert found <= KNOWN_FALSE_REJECTS, f"new false rejects: {sorted(found - KNOWN_FALSE_REJECTS)}"
    if found != KNOWN_FALSE_REJECTS:
        print(f"fixed, remove from KNOWN_FALSE_REJECTS: {sorted(KNOWN_FALSE_REJECTS - found)}")
    if a.rate is not None and a.rate < TARGET:
        print(f"demo_c34: agreement {a.rate:.3f} is below issue 32's target {TARGET}")
