"""The verifier against blind adjudication of a third corpus on the synthetic hospital (issue 32).

``fixtures/episodes/synthetic_c32b/`` holds 55 episodes played through ``EHREnv`` on 2026-12-05 by three
LLM agents in styles the earlier corpora did not have (terse chart shorthand that corrects itself in
the Answer with arrows, strikethrough and "no:"; Python-first; Markdown tables for answers and
reasoning), no agent seeing both twins of a pair, each episode judged blind by two LLM reviewers
against the paper's criterion; they agreed on every synthetic episode. A further 49 episodes of the
same agents on the real MIMIC-IV demo are demo-derived and kept outside the repository
(ARCHITECTURE.md section 4, "Blind corpora c32b and c33").

Before the fixes this corpus found (``tests/test_blind_forms.py``), main agreed on 48 of the 55; the
floor is what the verifier reaches now and only moves up.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_replay import assert_known_false_accepts, replay

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "episodes" / "synthetic_c32b"
AGREEMENT_FLOOR = 55 / 55
KNOWN_FALSE_ACCEPTS: set[str] = set()


@pytest.fixture(scope="module")
def agreement(synth_db: Path):
    return replay(CORPUS, synth_db)


def test_corpus_is_blind_and_double_reviewed(agreement) -> None:
    episodes, _ = agreement
    assert len(episodes) == 55
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
