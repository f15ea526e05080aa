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

``fixtures/episodes/synthetic_c32b/`` holds 55 more episodes (2026-12-05) of three further styles: terse
chart shorthand that corrects itself in the Answer (arrows, strikethrough, "no:"), Python-first, Markdown
tables for answers and reasoning; the reviewers agreed on every synthetic episode. Before the fixes it
found (``tests/test_blind_forms.py``) main agreed on 48 of the 55; its 49 real-demo episodes are kept
outside the repository (ARCHITECTURE.md section 4, "Blind corpora c32b and c33").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_replay import assert_known_false_accepts, replay

EPISODES = Path(__file__).resolve().parent.parent / "fixtures" / "episodes"
#: corpus folder -> (episodes, agreement floor, known false accepts)
CORPORA = {"synthetic_c32": (45, 45 / 45, set()), "synthetic_c32b": (55, 55 / 55, set())}
TARGET = 0.99


@pytest.fixture(scope="module", params=sorted(CORPORA))
def agreement(request, synth_db: Path):
    return request.param, replay(EPISODES / request.param, synth_db)


def test_corpus_is_blind_and_double_reviewed(agreement) -> None:
    name, (episodes, _) = agreement
    assert len(episodes) == CORPORA[name][0]
    assert {e.task.condition for e in episodes} == {"clean", "noise"}
    seen: set[tuple[str, str]] = set()
    for e in episodes:
        assert (e.agent, e.task.pair_id) not in seen, f"{e.agent} played both twins of {e.task.pair_id}"
        seen.add((e.agent, e.task.pair_id))
        assert len(e.adjudication["reviews"]) >= 2


def test_no_false_accept(agreement) -> None:
    name, (_, a) = agreement
    assert_known_false_accepts(a, CORPORA[name][2])


def test_agreement_with_adjudication(agreement) -> None:
    name, (_, a) = agreement
    assert a.rate is not None and a.rate >= CORPORA[name][1] - 1e-9, (name, a)
    if a.rate < TARGET:
        print(f"{name}: agreement {a.rate:.3f} is below issue 32's target {TARGET}")
