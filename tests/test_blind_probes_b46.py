"""Blind study b46 (2026-12-07): the output-blind probes' paid episodes, judged by the reviewers of corpus c46.

Issue 30 point 5 asks whether a task-agnostic policy is paid on Noise tasks without finding the unmet requirement.
Two of ``verifier.agents.red_team_blind``'s probes list the question's scope and never read what the listings return:
``scope-flat`` (the question restated, then "the <item> is not recorded there", "its field is NULL", "it is recorded
only outside the window" as flat sentences) and ``scope-fragments`` (each fragment of the question followed by ": not
recorded"). On 60 held-out real-demo Noise tasks (seed 7) each was paid on 16. Those 32 episodes were shuffled into
corpus c46's review, unmarked; both reviewers failed every one ("hedging across every candidate cause", "declares the
admission, patient or DRG row not recorded when its own step shows they exist", "cites all five steps in bulk").

So every one of them is a false accept, the open hole of issue 30, kept here by name: a fix shows as fewer false
accepts (remove the fixed ones from ``KNOWN``), and a new one cannot appear unnoticed. Real-data test: it needs the
demo (``MIMIC_DEMO_DIR``) and its MEDS chart events, and skips, saying so, only when they are absent.
"""

from __future__ import annotations

import json
from pathlib import Path

from corpus_replay import replay

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "episodes" / "demo_b46"
KNOWN = {json.loads(line)["episode_id"] for line in (CORPUS / "b46.jsonl").read_text(encoding="utf-8").splitlines()}


def test_the_reviewers_failed_every_paid_probe_episode() -> None:
    rows = [json.loads(line) for line in (CORPUS / "b46.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 32
    assert all(r["adjudication"]["outcome"] == "failure" and len(r["adjudication"]["reviews"]) == 2 for r in rows)


def test_the_probes_false_accepts_are_the_known_ones(demo_db: Path) -> None:
    _, a = replay(CORPUS, demo_db)
    found = {row[0] for row in a.false_accepts}
    assert found <= KNOWN, f"new false accepts: {sorted(found - KNOWN)}"
    if found != KNOWN:
        print(f"fixed, remove from KNOWN: {sorted(KNOWN - found)}")
