"""Run the reference agents on a task set and check each behaves as designed.

Used by ``benchmarks/bench_rollout_agents.py`` (the full real-demo run) and
available to ``ehr-verifier demo``. Expectations (issue 6 acceptance):
``oracle`` succeeds on >= 99 % of Clean and of Noise tasks; ``always-null``
succeeds nowhere; ``answer-anyway``, ``wrong-scope`` and ``fabricator`` fail
every Noise task with their reason code (``EXPECTED_NOISE_REASON``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from ..contract import Task, Verdict
from ..env.ehr_env import EnvConfig
from . import EXPECTED_NOISE_REASON
from .rollout import RolloutReport, rollout

#: Minimum oracle success rate per condition.
ORACLE_MIN_RATE = 0.99


@dataclass
class AgentCheck:
    """One agent's outcome against its expectation.

    Attributes:
        agent: registry name.
        report: the rollout report.
        ok: whether the expectation holds.
        problems: why not (one line each: the episodes that break it, with their reasons).
    """

    agent: str
    report: RolloutReport
    ok: bool = True
    problems: list[str] = field(default_factory=list)


def check_expectation(agent: str, report: RolloutReport) -> AgentCheck:
    """Compare a reference agent's rollout with its designed behaviour.

    Args:
        agent: one of ``EXPECTED_NOISE_REASON``.
        report: its ``RolloutReport`` (episodes run in this call).

    Returns:
        ``AgentCheck`` listing every episode that breaks the expectation.
    """
    check = AgentCheck(agent, report)
    expected = EXPECTED_NOISE_REASON[agent]
    if agent == "oracle":
        for cond in ("clean", "noise"):
            rate = report.rate(cond)
            if rate is not None and rate < ORACLE_MIN_RATE:
                check.problems.append(f"oracle {cond} success {rate:.1%} < {ORACLE_MIN_RATE:.0%}")
        check.problems += [f"failed {tid} ({cond}): {', '.join(r)}" for tid, cond, r in report.failures]
        check.ok = not any(p.startswith("oracle ") for p in check.problems)
        return check
    for cond in ("clean", "noise"):
        if agent == "always-null" and report.success[cond]:
            check.problems.append(f"always-null succeeded on {report.success[cond]} {cond} task(s)")
    if report.success["noise"]:
        check.problems.append(f"{agent} succeeded on {report.success['noise']} Noise task(s)")
    for tid, cond, reasons in report.failures:
        if cond == "noise" and expected not in reasons:
            check.problems.append(f"{tid}: expected {expected}, got {', '.join(reasons) or 'success'}")
    check.ok = not check.problems
    return check


def run_reference_agents(
    tasks: Iterable[Task],
    db_path: str | Path,
    out_dir: str | Path,
    *,
    agents: Iterable[str] = tuple(EXPECTED_NOISE_REASON),
    workers: int = 1,
    config: EnvConfig | None = None,
    on_episode: Callable[[str, Verdict], None] | None = None,
) -> dict[str, AgentCheck]:
    """Roll out each reference agent on ``tasks`` and check its expectation.

    Writes ``<out_dir>/<agent>.trajectories.jsonl`` and ``<agent>.verdicts.jsonl``
    (resumable: episodes already there are not rerun and not counted).

    Returns:
        ``{agent: AgentCheck}`` in the order of ``agents``.
    """
    task_list = list(tasks)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, AgentCheck] = {}
    for agent in agents:
        cb = (lambda v, a=agent: on_episode(a, v)) if on_episode else None
        report = rollout(
            agent, task_list, db_path, out / f"{agent}.trajectories.jsonl", workers=workers, config=config,
            verdicts_out=out / f"{agent}.verdicts.jsonl", on_episode=cb,
        )
        results[agent] = check_expectation(agent, report)
    return results
