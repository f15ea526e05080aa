"""Agreement of the verifier with adjudicated episodes: how a verdict is measured against people.

An *episode corpus* holds episodes played by agents the project did not write (LLM agents that saw
only what ``EHREnv`` shows), each with its task, its trajectory and a blind adjudication: two
reviewers judged the episode against the paper's criterion without seeing any verdict, and a third
resolved disagreements. This module scores the corpus with ``verify`` and compares:

* agreement: verdict success == adjudicated outcome;
* false accept: the verifier passed an episode the reviewers failed (the costly error for a reward);
* false reject: the verifier failed an episode the reviewers passed, counted by reason code.

Corpus format (JSON Lines, one episode per line; ``fixtures/episodes/`` and
``benchmarks/episodes_from_study.py``)::

    {"episode_id": "syn1_agent1/Q01", "agent": "syn1_agent1", "brief": "terse, Python-heavy",
     "task": {Task}, "trajectory": {Trajectory},
     "adjudication": {"outcome": "success" | "failure", "task_validity": "valid" | "ambiguous" | "invalid",
                      "resolution": "agreed" | "third reviewer", "reviews": [{"reviewer", "outcome", "task", "why"}]}}
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..contract import InputError, Task, Trajectory, Verdict, validate

OUTCOMES = ("success", "failure")


@dataclass(frozen=True)
class Episode:
    """One adjudicated episode.

    Attributes:
        episode_id: unique within the corpus (``"<agent>/<question id>"``).
        agent: which agent played it; brief: the style it was briefed with.
        task / trajectory: the contract objects, as played.
        outcome: the adjudicated outcome, ``"success"`` or ``"failure"``.
        task_validity: the reviewers' view of the task (``valid``, ``ambiguous``, ``invalid``).
        adjudication: the full adjudication record (reviews, resolution).
    """

    episode_id: str
    agent: str
    brief: str
    task: Task
    trajectory: Trajectory
    outcome: str
    task_validity: str
    adjudication: dict[str, Any] = field(default_factory=dict, compare=False)


def read_episodes(path: str | Path) -> list[Episode]:
    """Read an episode corpus: one ``.jsonl`` file, or every ``*.jsonl`` file under a folder (sorted).

    Returns:
        The episodes, in file and line order.

    Raises:
        InputError: a line that is not an episode (names the file, line and field); an ``outcome`` that is
            not ``success``/``failure``; a repeated ``episode_id``.
        OSError: the path cannot be read.
    """
    p = Path(path)
    files = sorted(p.rglob("*.jsonl")) if p.is_dir() else [p]
    out: list[Episode] = []
    seen: set[str] = set()
    for f in files:
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{f.name}:{n}"
            try:
                d = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(where, line[:80], f"not JSON: {exc}") from None
            adj = d.get("adjudication") or {}
            outcome = adj.get("outcome")
            if outcome not in OUTCOMES:
                raise InputError(f"{where}: adjudication.outcome", outcome, "expected 'success' or 'failure'")
            eid = str(d.get("episode_id", ""))
            if not eid or eid in seen:
                raise InputError(f"{where}: episode_id", eid, "missing or repeated")
            seen.add(eid)
            out.append(Episode(
                episode_id=eid, agent=str(d.get("agent", "")), brief=str(d.get("brief", "")),
                task=validate(Task, d.get("task"), where=f"{where}: task: "),
                trajectory=validate(Trajectory, d.get("trajectory"), where=f"{where}: trajectory: "),
                outcome=outcome, task_validity=str(adj.get("task_validity", "")), adjudication=adj,
            ))
    return out


@dataclass
class Agreement:
    """The comparison of verdicts with adjudications.

    Attributes:
        n: episodes compared; agree: verdict success == adjudicated outcome.
        by_group: ``{(condition, agent): [agree, n]}``.
        false_accepts / false_rejects: the disagreeing episodes, as
            ``(episode_id, condition, reasons, reviewers' why)``.
        false_reject_reasons: reason code -> count over false rejects.
    """

    n: int = 0
    agree: int = 0
    by_group: dict[tuple[str, str], list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    false_accepts: list[tuple[str, str, list[str], str]] = field(default_factory=list)
    false_rejects: list[tuple[str, str, list[str], str]] = field(default_factory=list)
    false_reject_reasons: Counter = field(default_factory=Counter)

    @property
    def rate(self) -> float | None:
        """Agreement as a fraction in [0, 1] (``None`` when nothing was compared)."""
        return self.agree / self.n if self.n else None


def compare(episodes: Iterable[Episode], verdicts: Iterable[Verdict]) -> Agreement:
    """Compare each episode's adjudicated outcome with its verdict (paired in order).

    Raises:
        InputError: a verdict belongs to another task or trajectory than its episode.
    """
    out = Agreement()
    for ep, v in zip(episodes, verdicts, strict=True):
        if v.task_id != ep.task.task_id or v.trajectory_id != ep.trajectory.trajectory_id:
            raise InputError(f"verdict of {ep.episode_id}", v.trajectory_id, "does not belong to this episode")
        ok = v.success == (ep.outcome == "success")
        out.n += 1
        out.agree += ok
        g = out.by_group[(ep.task.condition, ep.agent)]
        g[0] += ok
        g[1] += 1
        if ok:
            continue
        why = " | ".join(str(r.get("why", "")) for r in ep.adjudication.get("reviews", []))[:400]
        row = (ep.episode_id, ep.task.condition, [getattr(r, "value", str(r)) for r in v.reasons], why)
        if v.success:
            out.false_accepts.append(row)
        else:
            out.false_rejects.append(row)
            out.false_reject_reasons.update(getattr(r, "value", str(r)) for r in v.reasons)
    return out


def format_agreement(a: Agreement) -> str:
    """A plain-text report: agreement by condition and agent, then every disagreement with its cause."""
    lines = [f"agreement {a.agree}/{a.n} = {100 * (a.rate or 0):.1f}%   false accepts {len(a.false_accepts)}   "
             f"false rejects {len(a.false_rejects)}"]
    for (cond, agent), (k, n) in sorted(a.by_group.items()):
        lines.append(f"  {cond:<6} {agent:<16} {k:>4}/{n:<4}")
    if a.false_reject_reasons:
        lines.append("false rejects by reason: " + ", ".join(f"{r} {c}" for r, c in a.false_reject_reasons.most_common()))
    for title, rows in (("FALSE ACCEPT", a.false_accepts), ("FALSE REJECT", a.false_rejects)):
        for eid, cond, reasons, why in rows:
            lines.append(f"{title} {eid} ({cond}) {','.join(reasons) or '-'}: reviewers: {why}")
    return "\n".join(lines)
