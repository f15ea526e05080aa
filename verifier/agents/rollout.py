"""Rollouts: run an agent on tasks (K samples each) and log trajectories durably.

``run_episode`` drives one agent through one ``EHREnv`` episode.
``rollout`` does it for every (task, sample) not yet in the output JSONL,
sequentially or in a process pool (one environment and agent per worker
process), appending each trajectory (and optionally its verdict) as soon as
its episode ends, so an interrupted run resumes where the file stops.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Iterable

from ..contract import InputError, Task, Trajectory, Verdict
from ..env.ehr_env import EHREnv, EnvConfig
from ..env.log import JsonlAppender, existing_keys, trajectory_id


def run_episode(env: EHREnv, agent: Any, task: Task, *, sample: int = 0) -> tuple[Trajectory, Verdict]:
    """Run one episode of ``agent`` on ``task`` in ``env``.

    The trajectory id is ``"<task_id>#<sample>"``; metadata records the agent
    name and sample index. An exception raised by the agent ends the episode
    with an empty submission and is recorded in ``metadata["agent_error"]``.
    If the agent has a ``finalize(trajectory)`` hook that changes the
    trajectory (the ``fabricator`` baseline), the changed one is re-scored.

    Returns:
        ``(trajectory, verdict)``.
    """
    name = getattr(agent, "name", type(agent).__name__)
    meta = {"agent": name, "sample": sample}
    obs, info = env.reset(task, trajectory_id=trajectory_id(task.task_id, sample), metadata=meta)
    agent_error = None
    unreachable = False
    try:
        agent.reset(task, obs, info)
    except Exception as exc:  # noqa: BLE001 - agent failures are recorded, never fatal
        agent_error, unreachable = traceback.format_exc(limit=5), model_unreachable(exc)
    while agent_error is None:
        try:
            action = agent.act(obs)
        except Exception as exc:  # noqa: BLE001
            agent_error, unreachable = traceback.format_exc(limit=5), model_unreachable(exc)
            break
        obs, _reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    if agent_error is not None:
        env._metadata["agent_error"] = agent_error[-2000:]  # noqa: SLF001 - recorded in the trajectory
        if unreachable:
            env._metadata["model_unreachable"] = True  # noqa: SLF001 - rollout does not record it
        obs, _reward, terminated, truncated, info = env.step({"kind": "submit", "text": ""})
    traj: Trajectory = info["trajectory"]
    verdict: Verdict = info["verdict"]
    finalize: Callable[[Trajectory], Trajectory] | None = getattr(agent, "finalize", None)
    if finalize is not None:
        changed = finalize(traj)
        if changed.steps != traj.steps or changed.final_response != traj.final_response:
            verdict = env.scorer(changed, task, env.verify_config)
        traj = changed
    return traj, verdict


#: Exception class names (the exception or any in its chain) that mean the agent's model could not be
#: reached (openai and httpx spell them so), as opposed to the model answering badly.
_UNREACHABLE = frozenset({"APIConnectionError", "APITimeoutError", "ConnectError", "ConnectTimeout",
                          "ReadTimeout", "RemoteProtocolError"})


def model_unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) says the model endpoint was unreachable:
    a ``ConnectionError``/``TimeoutError`` or one of the openai/httpx connection errors."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, (ConnectionError, TimeoutError)) or type(e).__name__ in _UNREACHABLE:
            return True
        e = e.__cause__ or e.__context__
    return False


@dataclass
class RolloutReport:
    """What a rollout did.

    Attributes:
        episodes: episodes run now.
        skipped: (task, sample) pairs already present in the output (resume).
        success: successes among the episodes run now, by condition.
        total: episodes run now, by condition.
        reasons: reason-code counts among the episodes run now, by condition.
        failures: ``(trajectory_id, condition, reasons)`` of failed episodes.
        unreachable: episodes whose agent could not reach its model (not written, so that a
            rerun retries them; an outage must not become a 0% score).
        seconds: wall time.
    """

    unreachable: int = 0
    episodes: int = 0
    skipped: int = 0
    success: Counter = field(default_factory=Counter)
    total: Counter = field(default_factory=Counter)
    reasons: dict[str, Counter] = field(default_factory=dict)
    failures: list[tuple[str, str, list[str]]] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, verdict: Verdict) -> None:
        """Count one verdict."""
        self.episodes += 1
        self.total[verdict.condition] += 1
        if verdict.success:
            self.success[verdict.condition] += 1
        else:
            self.failures.append((verdict.trajectory_id, verdict.condition, [r.value for r in verdict.reasons]))
        bucket = self.reasons.setdefault(verdict.condition, Counter())
        for r in verdict.reasons:
            bucket[r.value] += 1

    def rate(self, condition: str) -> float | None:
        """Success rate on ``condition`` among the episodes run now (None if none)."""
        n = self.total[condition]
        return self.success[condition] / n if n else None


# ------------------------------------------------------------ worker processes
_W: dict[str, Any] = {}


def _init_worker(db_path: str, config: EnvConfig, agent_name: str, agent_options: dict[str, Any], tasks: list[Task]) -> None:
    from . import make_agent

    _W["env"] = EHREnv(db_path, config)
    _W["agent"] = make_agent(agent_name, tasks=tasks, **agent_options)
    _W["tasks"] = {t.task_id: t for t in tasks}


def _work(task_id: str, sample: int) -> tuple[str, str]:
    traj, verdict = run_episode(_W["env"], _W["agent"], _W["tasks"][task_id], sample=sample)
    return traj.model_dump_json(), verdict.model_dump_json()


def select_tasks(tasks: Iterable[Task], *, ids: Collection[str] | None = None, split: str | None = None,
                 condition: str | None = None, limit: int | None = None) -> list[Task]:
    """The subset of ``tasks`` a rollout runs episodes on, in the tasks' order.

    Args:
        tasks: all the tasks (file order).
        ids: keep only these task ids (each must be among ``tasks``).
        split: keep only ``Task.split == split`` (``train`` or ``test``).
        condition: keep only ``Task.condition == condition`` (``clean`` or ``noise``).
        limit: then keep the first ``limit`` (>= 1).

    Returns:
        The selected tasks (all of them when no option is given).

    Raises:
        InputError: an id not among ``tasks`` (field ``--ids``), a ``split``/``condition``
            outside its values, ``limit`` < 1, or a selection that keeps no task (field ``tasks``).
    """
    task_list = list(tasks)
    if ids is not None:
        known = {t.task_id for t in task_list}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise InputError("--ids", unknown[0], f"not in the tasks file ({len(unknown)} unknown id(s))")
        wanted = set(ids)
        task_list = [t for t in task_list if t.task_id in wanted]
    for name, value, allowed in (("--split", split, ("train", "test")), ("--condition", condition, ("clean", "noise"))):
        if value is not None:
            if value not in allowed:
                raise InputError(name, value, f"expected one of {', '.join(allowed)}")
            task_list = [t for t in task_list if getattr(t, name[2:]) == value]
    if limit is not None:
        if limit < 1:
            raise InputError("--limit", limit, "must be >= 1")
        task_list = task_list[:limit]
    if not task_list:
        raise InputError("tasks", {"split": split, "condition": condition}, "no task matches the selection")
    return task_list


def rollout(
    agent: str,
    tasks: Iterable[Task],
    db_path: str | Path,
    out: str | Path,
    *,
    k: int = 1,
    workers: int = 1,
    agent_options: dict[str, Any] | None = None,
    config: EnvConfig | None = None,
    verdicts_out: str | Path | None = None,
    on_episode: Callable[[Verdict], None] | None = None,
    id_prefix: str = "",
    only: Collection[str] | None = None,
) -> RolloutReport:
    """Run ``agent`` for ``k`` samples on every task and append trajectories to ``out``.

    Args:
        agent: a registered agent name (``verifier.agents.AGENTS``).
        tasks: the tasks (all of them are given to privileged agents, e.g.
            so ``answer-anyway`` can find a Noise task's Clean twin).
        db_path: the DuckDB database.
        out: trajectories JSONL (appended; existing (task, sample) pairs are skipped).
        k: samples per task (sample indices 0..k-1; trajectory id ``<task_id>#<i>``).
        workers: process-pool size (1 runs in this process).
        agent_options: keyword options for the agent factory.
        config: environment settings.
        verdicts_out: optional JSONL of the environment's verdicts (same order as ``out``).
        on_episode: called with each verdict as it is logged (progress bars).
        id_prefix: prepended to every trajectory id (``<prefix><task_id>#<i>``, in the trajectory and
            its verdict), so that files of several agents can be concatenated for a DPO export, whose
            verdicts are matched by id. Resuming reads task and sample, not the id.
        only: run episodes on these task ids only (a subset, e.g. from ``select_tasks``); every
            task is still given to the agent (privileged agents look up a task's twin).

    Returns:
        A ``RolloutReport`` over the episodes run now.

    Raises:
        InputError: ``k`` or ``workers`` < 1, unknown agent, duplicate task ids, or tasks
            whose ``db_fingerprint`` is not ``db_path``'s (checked before any episode runs;
            ``verifier.database.check_tasks_database``).
    """
    from . import AGENTS, make_agent

    if k < 1:
        raise InputError("k", k, "must be >= 1")
    if workers < 1:
        raise InputError("workers", workers, "must be >= 1")
    if agent not in AGENTS:
        raise InputError("agent", agent, f"unknown agent; choose one of {', '.join(sorted(AGENTS))}")
    task_list = list(tasks)
    ids = [t.task_id for t in task_list]
    if len(set(ids)) != len(ids):
        raise InputError("tasks", next(i for i in ids if ids.count(i) > 1), "duplicated task_id")
    from ..database import check_tasks_database

    check_tasks_database(task_list, db_path, field="db_path")
    config = config or EnvConfig()
    options = dict(agent_options or {})
    done = existing_keys(out)
    played = task_list if only is None else [t for t in task_list if t.task_id in set(only)]
    todo = [(t.task_id, s) for t in played for s in range(k) if (t.task_id, s) not in done]
    report = RolloutReport(skipped=len(played) * k - len(todo))
    t0 = time.perf_counter()
    by_id = {t.task_id: t for t in task_list}
    vlog = JsonlAppender(verdicts_out) if verdicts_out else None
    with JsonlAppender(out) as tlog:

        def record(traj_json: str, verdict: Verdict) -> None:
            if '"model_unreachable":true' in traj_json.replace(" ", ""):
                report.unreachable += 1
                return
            if id_prefix:
                traj = Trajectory.model_validate_json(traj_json)
                tid = id_prefix + traj.trajectory_id
                traj_json = traj.model_copy(update={"trajectory_id": tid}).model_dump_json()
                verdict = Verdict.model_validate({**verdict.model_dump(), "trajectory_id": tid})
            tlog.append_text(traj_json)
            if vlog is not None:
                vlog.append(verdict)
            report.add(verdict)
            if on_episode is not None:
                on_episode(verdict)

        try:
            if workers == 1 or len(todo) <= 1:
                env = EHREnv(str(db_path), config)
                ag = make_agent(agent, tasks=task_list, **options)
                try:
                    for task_id, sample in todo:
                        traj, verdict = run_episode(env, ag, by_id[task_id], sample=sample)
                        record(traj.model_dump_json(), verdict)
                finally:
                    env.close()
            else:
                ctx = mp.get_context("spawn")
                with cf.ProcessPoolExecutor(
                    max_workers=workers, mp_context=ctx, initializer=_init_worker,
                    initargs=(str(db_path), config, agent, options, task_list),
                ) as pool:
                    futures = [pool.submit(_work, tid, s) for tid, s in todo]
                    for fut in cf.as_completed(futures):
                        traj_json, verdict_json = fut.result()
                        record(traj_json, Verdict.model_validate_json(verdict_json))
        finally:
            if vlog is not None:
                vlog.close()
    report.seconds = time.perf_counter() - t0
    return report
