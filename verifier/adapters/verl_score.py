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
* ``extra_info`` (optional dict): ``trajectory`` (recorded steps for a text
  response), ``messages`` (the multi-turn chat of an agent loop, used instead
  of ``solution_str`` when present), ``trajectory_id``.

Returned dict: ``score`` (float), ``success`` and ``abstained`` (bool),
``condition``, ``reasons`` (comma-joined codes), ``task_id``,
``trajectory_id``.

verl config::

    custom_reward_function:
      path: <site-packages>/verifier/adapters/verl_score.py
      name: compute_score            # or compute_score_batch with reward_model.reward_manager=batch
      reward_kwargs: {tasks: /data/tasks.jsonl, db: /data/demo.duckdb}
"""

from __future__ import annotations

import json
from itertools import count
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..contract import Task, VerifyConfig
from .common import is_messages, resolve_task, task_map, to_trajectory, verdict_fields

_ids = count()


def _sample(solution_str: Any, ground_truth: Any, extra_info: Any, known: Mapping[str, Task]) -> tuple[Task, Any]:
    task = resolve_task(ground_truth, known, field="ground_truth")
    extra = extra_info if isinstance(extra_info, Mapping) else {}
    tid = str(extra.get("trajectory_id") or f"verl-{next(_ids)}")
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
            invalid ``extra_info["trajectory"]``, no database for a Noise task.
            Never on the response itself: an unreadable ``solution_str`` (or
            ``extra_info["messages"]``) is scored, e.g. ``UNPARSEABLE_RESPONSE``.
    """
    from ..verify import verify

    task, traj = _sample(solution_str, ground_truth, extra_info, task_map(tasks))
    return verdict_fields(verify(traj, task, _config(db, config)))


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
    """Score a verl batch (the batch reward manager's form): one dict per sample, in order.

    Args:
        data_sources, solution_strs, ground_truths, extra_infos: parallel
            sequences, as verl passes them (numpy object arrays work).
        tasks, db, config: as ``compute_score``.
        workers: > 1 scores in a process pool (``verifier.scoring._batch``); the
            result does not depend on it.

    Returns:
        A list of dicts as ``compute_score`` returns.

    Raises:
        InputError: as ``compute_score``; or the sequences differ in length.
    """
    from ..contract import InputError
    from ..scoring import verify_batch

    n = len(solution_strs)
    for name, seq in (("ground_truths", ground_truths), ("extra_infos", extra_infos)):
        if seq is not None and len(seq) != n:
            raise InputError(name, f"{len(seq)} items", f"expected {n} items, one per solution_strs item")
    known = task_map(tasks)
    extras = list(extra_infos) if extra_infos is not None else [None] * n
    rows = [_sample(s, g, e, known) for s, g, e in zip(solution_strs, ground_truths, extras)]
    all_tasks = {t.task_id: t for t, _ in rows}
    records = verify_batch([traj for _, traj in rows], all_tasks, db, workers=workers,
                           backend="process" if workers > 1 else "serial", config=config)
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
