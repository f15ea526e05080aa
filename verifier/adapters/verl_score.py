"""verl custom reward functions backed by ``verify``.

verl's reward managers call a custom ``compute_score`` as
``compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...)``
(the naive manager, one sample at a time), or, with the batch reward manager,
``compute_score(data_sources=..., solution_strs=..., ground_truths=..., extra_infos=...)``
(lists). Either may return a float or a dict holding ``"score"``; the other
keys of a dict are collected as ``reward_extra_info`` (string values are
skipped by verl's validation metrics). Keyword arguments configured under
``custom_reward_function.reward_kwargs`` are passed through, which is how the
tasks file and database reach this module. See verl's documentation,
"Implement Reward Function for Dataset" / custom reward function.

Per sample:

* ``ground_truth``: the task_id (looked up in ``tasks``), or the whole Task
  as a dict / JSON text;
* ``solution_str``: the decoded response: the final text, or a JSON
  trajectory / chat-message list;
* ``extra_info`` (optional dict): ``ehr_episode`` (the whole episode, steps and final
  response, that ``verifier.adapters.verl_agent_loop.EHRAgentLoop`` records; used instead of
  everything else when present: verl's decoded ``solution_str`` of a multi-turn rollout holds
  the tool outputs too), ``trajectory`` (recorded steps for a text response), ``messages``
  (the multi-turn chat of an agent loop, used instead of ``solution_str`` when present),
  ``trajectory_id``.

Returned dict: ``score`` (float), ``success`` and ``abstained`` (bool),
``condition``, ``reasons`` (comma-joined codes), ``task_id``,
``trajectory_id``.

verl config (verl >= 0.5 reads ``custom_reward_function`` with ``load_extern_object``, which
imports ``pkg://`` paths as modules and loads other paths as files)::

    custom_reward_function:
      path: pkg://verifier.adapters.verl_score   # or the file's path: its imports are absolute
      name: compute_score_async      # the reward loop (use_reward_loop, verl's default) awaits it;
                                     # compute_score for the legacy naive manager
      reward_kwargs: {tasks: /data/tasks.jsonl, db: /data/demo.duckdb, workers: 2}

``compute_score_async`` scores in a process pool that lives across calls (one per
``(db, workers, config)`` in the process, created on first use) with ``workers`` >= 1, else
in a thread. ``compute_score_batch`` is **legacy**: for verl's ``reward_manager=batch`` path
only, which verl offers only with ``use_reward_loop: false`` (the reward loop, verl's default,
scores one sample at a time and never calls it); it uses the same long-lived pool.

This module uses absolute imports only (``from verifier...``), so verl can also load it by
file path (``spec_from_file_location``) when the ``verifier`` package is installed.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import threading
from itertools import count
from pathlib import Path
from typing import Any, Mapping, Sequence

from verifier.adapters.common import is_messages, read_trajectory, resolve_task, task_map, to_trajectory, verdict_fields
from verifier.contract import Task, VerifyConfig

_ids = count()
#: Long-lived scoring pools, one per (db, workers, config JSON); see ``scoring_pool``.
_POOLS: dict[tuple[str, int, str], Any] = {}
_POOLS_LOCK = threading.Lock()


def scoring_pool(db: str | Path | None, config: VerifyConfig | None, workers: int) -> Any:
    """The process's ``BatchVerifier`` for ``(db, workers, config)``, created on first use and
    kept for the process's life (verl calls the reward function once per sample or batch).

    Args:
        db: DuckDB file (None: ``config.db_path`` / ``$EHR_VERIFIER_DB``).
        config: VerifyConfig.
        workers: worker processes (>= 1).

    Returns:
        A ``verifier.scoring.BatchVerifier`` (its items carry their tasks, so new tasks never
        restart it). ``close_pools()`` stops them all.
    """
    from verifier.scoring import BatchVerifier

    cfg = _config(db, config)
    key = (str(cfg.db_path), workers, cfg.model_dump_json())
    with _POOLS_LOCK:
        if key not in _POOLS:
            _POOLS[key] = BatchVerifier({}, None, workers=workers, backend="process", config=cfg)
        return _POOLS[key]


def close_pools() -> None:
    """Stop every pool ``scoring_pool`` created (idempotent; also run at interpreter exit)."""
    with _POOLS_LOCK:
        for pool in _POOLS.values():
            pool.close()
        _POOLS.clear()


atexit.register(close_pools)


def _sample(solution_str: Any, ground_truth: Any, extra_info: Any, known: Mapping[str, Task]) -> tuple[Task, Any]:
    task = resolve_task(ground_truth, known, field="ground_truth")
    extra = extra_info if isinstance(extra_info, Mapping) else {}
    tid = str(extra.get("trajectory_id") or f"verl-{next(_ids)}")
    if extra.get("ehr_episode") is not None:  # recorded by the agent loop (framework side, not model text)
        return task, read_trajectory(extra["ehr_episode"], task_id=task.task_id, trajectory_id=tid, field="extra_info.ehr_episode")
    completion: Any = extra.get("messages") or solution_str
    if isinstance(completion, str) and completion.lstrip().startswith("["):
        try:
            decoded = json.loads(completion)
        except ValueError:
            decoded = None
        if is_messages(decoded):  # else the text itself is the response ('["ESCHERICHIA COLI"]')
            completion = decoded
    return task, to_trajectory(completion, task_id=task.task_id, trajectory_id=tid, recorded=extra.get("trajectory"))


def _config(db: str | Path | None, config: VerifyConfig | None) -> VerifyConfig:
    config = config or VerifyConfig()
    return config.model_copy(update={"db_path": str(db)}) if db is not None else config


def compute_score(
    data_source: str | None = None,
    solution_str: Any = "",
    ground_truth: Any = None,
    extra_info: Mapping[str, Any] | None = None,
    *,
    tasks: Mapping[str, Task] | str | Path | None = None,
    db: str | Path | None = None,
    config: VerifyConfig | None = None,
    **_: Any,
) -> dict[str, Any]:
    """Score one verl sample.

    Args:
        data_source: verl's dataset tag (not used).
        solution_str: the response (see module docstring).
        ground_truth: task_id or Task (dict / JSON).
        extra_info: optional per-sample dict (see module docstring).
        tasks: ``{task_id: Task}`` or tasks JSONL path (reward_kwargs).
        db: DuckDB file for Noise evidence (reward_kwargs), else ``$EHR_VERIFIER_DB``.
        config: VerifyConfig for finer settings.

    Returns:
        ``{"score", "success", "abstained", "condition", "reasons", "task_id", "trajectory_id"}``.

    Raises:
        InputError: caller configuration only: unknown task id, invalid task,
            invalid ``extra_info["trajectory"]`` or ``extra_info["ehr_episode"]``, no database for a Noise task.
            Never on the response itself: an unreadable ``solution_str`` (or
            ``extra_info["messages"]``) is scored, e.g. ``UNPARSEABLE_RESPONSE``.
    """
    from verifier.verify import verify

    task, traj = _sample(solution_str, ground_truth, extra_info, task_map(tasks))
    return verdict_fields(verify(traj, task, _config(db, config)))


def _records_to_fields(rows: Sequence[tuple[Task, Any]], records: Any) -> list[dict[str, Any]]:
    out = []
    for (task, traj), rec in zip(rows, records):
        if "error" in rec:  # the scorer raised: no reward signal, say why
            out.append({"score": 0.0, "success": False, "abstained": False, "condition": task.condition,
                        "reasons": "ERROR:" + rec["error"]["type"], "task_id": task.task_id, "trajectory_id": traj.trajectory_id})
            continue
        out.append({
            "score": float(rec["score"]), "success": bool(rec["success"]), "abstained": bool(rec["abstained"]),
            "condition": rec["condition"], "reasons": ",".join(rec["reasons"]), "task_id": rec["task_id"],
            "trajectory_id": rec["trajectory_id"],
        })
    return out


async def compute_score_async(
    data_source: str | None = None,
    solution_str: Any = "",
    ground_truth: Any = None,
    extra_info: Mapping[str, Any] | None = None,
    *,
    tasks: Mapping[str, Task] | str | Path | None = None,
    db: str | Path | None = None,
    config: VerifyConfig | None = None,
    workers: int = 0,
    **_: Any,
) -> dict[str, Any]:
    """Score one verl sample without blocking the event loop (verl's reward loop awaits it).

    Args:
        data_source, solution_str, ground_truth, extra_info, tasks, db, config: as ``compute_score``.
        workers: 0 scores in a thread of this process (``asyncio.to_thread``); N >= 1 in the
            long-lived pool of N worker processes (``scoring_pool``), shared by all calls.

    Returns:
        The dict ``compute_score`` returns (the same values for any ``workers``; a sample
        the pool could not score has ``score`` 0.0 and ``reasons`` ``ERROR:<type>``).

    Raises:
        InputError: as ``compute_score``.
    """
    task, traj = _sample(solution_str, ground_truth, extra_info, task_map(tasks))
    if workers < 1:
        from verifier.verify import verify

        return verdict_fields(await asyncio.to_thread(verify, traj, task, _config(db, config)))
    pool = scoring_pool(db, config, workers)
    records = await asyncio.to_thread(lambda: list(pool.score_with_tasks([(traj, task)])))
    return _records_to_fields([(task, traj)], records)[0]


def compute_score_batch(
    data_sources: Sequence[Any] | None = None,
    solution_strs: Sequence[Any] = (),
    ground_truths: Sequence[Any] = (),
    extra_infos: Sequence[Any] | None = None,
    *,
    tasks: Mapping[str, Task] | str | Path | None = None,
    db: str | Path | None = None,
    config: VerifyConfig | None = None,
    workers: int = 1,
    **_: Any,
) -> list[dict[str, Any]]:
    """Score a verl batch (the legacy batch reward manager's form): one dict per sample, in order.

    Only for verl's ``reward_model.reward_manager=batch`` with ``use_reward_loop: false``: the
    reward loop, verl's default, calls ``compute_score`` / ``compute_score_async`` per sample.

    Args:
        data_sources, solution_strs, ground_truths, extra_infos: parallel
            sequences, as verl passes them (numpy object arrays work).
        tasks, db, config: as ``compute_score``.
        workers: > 1 scores in the long-lived process pool of ``scoring_pool`` (created on
            the first call, reused by later ones); the result does not depend on it.

    Returns:
        A list of dicts as ``compute_score`` returns.

    Raises:
        InputError: as ``compute_score``; or the sequences differ in length.
    """
    from verifier.contract import InputError
    from verifier.scoring import verify_batch

    n = len(solution_strs)
    for name, seq in (("ground_truths", ground_truths), ("extra_infos", extra_infos)):
        if seq is not None and len(seq) != n:
            raise InputError(name, f"{len(seq)} items", f"expected {n} items, one per solution_strs item")
    known = task_map(tasks)
    extras = list(extra_infos) if extra_infos is not None else [None] * n
    rows = [_sample(s, g, e, known) for s, g, e in zip(solution_strs, ground_truths, extras)]
    if workers > 1:
        records = list(scoring_pool(db, config, workers).score_with_tasks([(traj, task) for task, traj in rows]))
    else:
        all_tasks = {t.task_id: t for t, _ in rows}
        records = list(verify_batch([traj for _, traj in rows], all_tasks, db, workers=1, backend="serial", config=config))
    return _records_to_fields(rows, records)
