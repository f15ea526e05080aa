"""Shared test data for batch scoring, metrics and adapter tests (not a test module).

Real trajectories: the reference agents (``verifier.agents``) run in the real
environment on a few Clean-Noise pairs of the real demo's tasks. Built once per
process (``functools.lru_cache``) whatever module asks first.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from verifier.contract import Task, Trajectory, Verdict

#: Agents whose trajectories the tests score, and how they must end on Noise tasks.
AGENTS = ("oracle", "always-null", "answer-anyway", "wrong-scope")


def _no_scoring(trajectory: Trajectory, task: Task, config) -> Verdict:  # noqa: ANN001 - VerifyConfig
    # The environment's own scoring is skipped while generating (the tests score in batch).
    return Verdict(task_id=task.task_id, trajectory_id=trajectory.trajectory_id, success=False, score=0.0,
                   condition=task.condition, abstained=False, verifier_version="generation")


def pick_pairs(tasks: list[Task], n_pairs: int) -> list[Task]:
    """Deterministically pick ``n_pairs`` Clean-Noise pairs covering every noise type and scope present."""
    by_pair: dict[str, list[Task]] = {}
    for t in tasks:
        by_pair.setdefault(t.pair_id, []).append(t)
    pairs = sorted((p for p in by_pair.values() if {t.condition for t in p} == {"clean", "noise"}), key=lambda p: p[0].pair_id)
    chosen: list[list[Task]] = []
    seen: set[tuple[str, str]] = set()
    for p in pairs:  # first one pair per (noise type, scope), then fill in order
        noise = next(t for t in p if t.condition == "noise")
        key = (str(noise.noise_type), noise.scope)
        if key not in seen:
            seen.add(key)
            chosen.append(p)
    for p in pairs:
        if len(chosen) >= n_pairs:
            break
        if p not in chosen:
            chosen.append(p)
    return [t for p in chosen[:n_pairs] for t in sorted(p, key=lambda t: t.condition)]


@lru_cache(maxsize=4)
def _episodes(db_path: str, tasks_key: tuple[str, ...], agents: tuple[str, ...]) -> list[str]:
    from verifier.agents import make_agent
    from verifier.agents.rollout import run_episode
    from verifier.env import EHREnv

    tasks = _TASKS[tasks_key]
    out: list[str] = []
    with EHREnv(db_path, scorer=_no_scoring) as env:
        for name in agents:
            agent = make_agent(name, tasks=tasks)
            for task in tasks:
                traj, _ = run_episode(env, agent, task, sample=0)
                out.append(traj.model_copy(update={"trajectory_id": f"{name}:{task.task_id}"}).model_dump_json())
    return out


_TASKS: dict[tuple[str, ...], list[Task]] = {}


def episodes(db_path: Path, tasks: list[Task], agents: tuple[str, ...] = AGENTS) -> list[str]:
    """Trajectory JSON lines: each agent on each task, ids ``<agent>:<task_id>``."""
    key = tuple(t.task_id for t in tasks)
    _TASKS[key] = tasks
    return list(_episodes(str(db_path), key, agents))
