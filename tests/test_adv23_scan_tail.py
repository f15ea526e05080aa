"""Fresh adversary adv23 (2026-12-07; read only the README and the criterion): a task-agnostic Python step that
never reads the question's scope on the database was paid on 157 of 264 held-out real-demo Noise tasks.

The step prints, for every table, the last 20 rows in scan order (``row_number() OVER ()`` compared with
``count(*) - 20`` computed at run time) that name a number or name of the question. On the database it prints one
constant line; on the witness overlay, whose added rows land at the end of each table's scan order, it prints exactly
them. The SQL path already refused that query (a window function compared with a constant the task does not give,
``_observation.problem``); the print path judged only what the step printed. Now every query a replayed Python step
runs is held to the same rule, so a printout built on rows chosen by position is not evidence (``EVIDENCE_OPAQUE``).
Honest Python evidence (a scope's rows fetched by its own filters and printed) is held by the committed corpora's
Python-first agents (c34, c40, c46), replayed in ``test_episode_corpus_demo.py``.

The policy is ``verifier.agents.red_team_blind.ScanTail`` (``bench_reward_hacks.py --policies fresh``). Still
open and named here: the overlay can be told from the database by a Python step (``SELECT max(rowid)`` fails on
an overlay's views; ``count(*)`` differs from ``duckdb_tables().estimated_size``); adv23 used both only to gate the
scan-tail printout, which is what is refused. Real-data test: it needs the demo and skips, saying so, only when absent.
"""

from __future__ import annotations

import random

from verifier.agents.red_team_blind import FRESH
from verifier.agents.rollout import run_episode
from verifier.env import EHREnv


def test_the_scan_tail_printout_is_not_evidence(demo_db, demo_tasks) -> None:
    noise = [t for t in demo_tasks if t.condition == "noise" and t.split == "test"]
    random.Random(21).shuffle(noise)
    env = EHREnv(str(demo_db))
    paid, opaque = 0, 0
    try:
        for task in noise[:12]:
            _traj, verdict = run_episode(env, FRESH["scan-tail"](), task)
            paid += verdict.success
            opaque += "EVIDENCE_OPAQUE" in [r.value for r in verdict.reasons]
    finally:
        env.close()
    assert paid == 0
    assert opaque >= 6  # the printout is refused for what its queries compute, not only by luck of the sample
