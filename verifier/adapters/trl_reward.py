"""TRL ``GRPOTrainer`` reward function backed by ``verify``.

TRL calls every reward function as
``reward_func(prompts=..., completions=..., completion_ids=..., **columns)``
where each extra keyword is a dataset column (one value per completion, the
prompt's row repeated for each of its generations) plus trainer extras
(``trainer_state``, ...), and expects ``list[float]`` (``None`` for "not
applicable"). See TRL's GRPOTrainer documentation, "Using a custom reward
function", and ``trl.rewards`` (functions take ``completions, **kwargs``).

Dataset columns read (any subset):

* ``task``: a Task (dict / JSON) or a task_id; or ``task_id``: a task_id
  (looked up in the ``tasks`` given to ``make_reward_func``);
* ``trajectory``: a recorded trajectory whose steps go with a text completion;
* ``trajectory_id``: id for the verdict (default ``trl-<n>``).

A completion is the final text, or conversational messages with the agent's
tool calls and tool results (``run_sql`` / ``run_python``), converted by
``verifier.adapters.common.to_trajectory``.

When TRL passes ``log_extra`` / ``log_metric`` (``GRPOTrainer._calculate_rewards`` does, TRL
>= 1.0), the reward function logs each completion's reason codes and condition as extra columns
of the completions table, and per batch the Clean and Noise success rates and the share of
verdicts carrying each reason code (``ehr/clean_success``, ``ehr/noise_success``,
``ehr/reason/<CODE>``).

Tasks should reach the reward as task ids or JSON text (``verifier.adapters.trl_data.
to_grpo_dataset``): ``datasets`` rewrites nested dicts to one schema across rows (adding
null-valued keys), which changes a Task; such a dict is rejected with an ``InputError`` that
says so, never scored as something else and never turned into a ``None`` reward.

Example::

    reward = make_reward_func("tasks.jsonl", db="demo.duckdb", workers=2)
    trainer = GRPOTrainer(model=..., reward_funcs=[reward], train_dataset=to_grpo_dataset("tasks.jsonl", db=...))
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from itertools import count
from pathlib import Path
from typing import Any, Callable, Mapping

from ..contract import InputError, Task, Verdict, VerifyConfig
from .common import resolve_task, task_map, to_trajectory

RewardFunc = Callable[..., list[float]]


def log_verdicts(verdicts: list[Verdict], log_extra: Any = None, log_metric: Any = None) -> None:
    """Report a batch's verdicts through TRL's ``log_extra`` / ``log_metric`` callbacks (when given).

    Args:
        verdicts: one per completion, in order.
        log_extra: ``log_extra(column, values)``: adds columns ``ehr_reasons`` (comma-joined codes,
            ``SUCCESS`` for a success) and ``ehr_condition`` to TRL's completions table.
        log_metric: ``log_metric(name, value)``: ``ehr/clean_success``, ``ehr/noise_success``
            (when the batch holds that condition) and ``ehr/reason/<CODE>`` (share of the
            batch's verdicts carrying the code) for every code seen.
    """
    if callable(log_extra):
        log_extra("ehr_reasons", [",".join(r.value for r in v.reasons) or "SUCCESS" for v in verdicts])
        log_extra("ehr_condition", [v.condition for v in verdicts])
    if callable(log_metric) and verdicts:
        for cond in ("clean", "noise"):
            mine = [v for v in verdicts if v.condition == cond]
            if mine:
                log_metric(f"ehr/{cond}_success", sum(v.success for v in mine) / len(mine))
        codes = Counter(r.value for v in verdicts for r in dict.fromkeys(v.reasons))
        for code, n in sorted(codes.items()):
            log_metric(f"ehr/reason/{code}", n / len(verdicts))


def make_reward_func(
    tasks: Mapping[str, Task] | str | Path | None = None,
    db: str | Path | None = None,
    *,
    config: VerifyConfig | None = None,
    workers: int = 0,
    name: str = "ehr_verifier_reward",
) -> RewardFunc:
    """Build a GRPO reward function.

    Args:
        tasks: ``{task_id: Task}`` or a tasks JSONL path (needed when the
            dataset gives task ids rather than whole tasks).
        db: DuckDB file for Noise evidence re-execution (else
            ``config.db_path`` / ``$EHR_VERIFIER_DB``).
        config: VerifyConfig (default ``VerifyConfig()``).
        workers: 0 scores in the trainer's process (with an evidence cache
            kept across calls); N > 0 keeps a pool of N worker processes
            (``verifier.scoring.BatchVerifier``) alive across training steps: it is
            created on the first call and reused by every later one, whatever tasks
            they bring (each item carries its task).
        name: the function's ``__name__`` (TRL logs rewards under it).

    Returns:
        ``reward_func(prompts, completions, **kwargs) -> list[float]``: the
        verdict scores (1.0 success, 0.0 failure), in completion order. The
        last batch's verdicts are kept on ``reward_func.last_verdicts``, the pool on
        ``reward_func.pool`` (None before the first call); ``reward_func.close()`` stops it.

    Raises (when called):
        InputError: caller configuration only: no ``task``/``task_id`` column, a
            column whose length differs from ``completions`` (naming the column and
            both lengths), an unknown task, an invalid or altered task (a dict that
            ``datasets`` filled with null keys: the message says so), an invalid recorded
            ``trajectory``, or an item the scorer could not score (no database for a
            Noise task, ...). Never on a completion: whatever the model wrote is scored
            (an unreadable one fails with ``UNPARSEABLE_RESPONSE``; see
            ``verifier.adapters.common.to_trajectory``).
    """
    config = config or VerifyConfig()
    if db is not None:
        config = config.model_copy(update={"db_path": str(db)})
    ids = count()

    def pool() -> Any:
        from ..scoring import BatchVerifier

        if reward_func.pool is None:  # type: ignore[attr-defined]
            reward_func.pool = BatchVerifier({}, None, workers=max(1, workers),  # type: ignore[attr-defined]
                                             backend="process" if workers else "serial", config=config)
        return reward_func.pool  # type: ignore[attr-defined]

    def reward_func(prompts: list[Any] | None = None, completions: list[Any] | None = None, **kwargs: Any) -> list[float]:
        completions = list(completions or [])
        n = len(completions)
        known = task_map(tasks)

        def column(key: str) -> list[Any]:
            values = kwargs.get(key)
            if values is None:
                return [None] * n
            if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__len__"):
                raise InputError(key, values, f"expected a column: one value per completion ({n})")
            if len(values) != n:
                raise InputError(key, f"{len(values)} values", f"expected one per completion: {len(values)} values for {n} completions")
            return list(values)

        key = "task" if kwargs.get("task") is not None else "task_id"
        if kwargs.get(key) is None:
            raise InputError("task", None, "the dataset needs a 'task' or 'task_id' column")
        task_col, recorded, tids = column(key), column("trajectory"), column("trajectory_id")
        rows = []
        for i, completion in enumerate(completions):
            task = resolve_task(task_col[i], known, field=f"{key}[{i}]")
            tid = str(tids[i]) if tids[i] is not None else f"trl-{next(ids)}"
            rows.append((to_trajectory(completion, task_id=task.task_id, trajectory_id=tid, recorded=recorded[i]), task))
        verdicts = []
        for i, rec in enumerate(pool().score_with_tasks(rows)):
            if "error" in rec:  # the caller's configuration, never the completion: say so, never None
                err = rec["error"]
                raise InputError(f"completions[{i}]", rows[i][0].trajectory_id, f"could not be scored: {err.get('type')}: {err.get('message')}")
            verdicts.append(Verdict.model_validate(rec))
        reward_func.last_verdicts = verdicts  # type: ignore[attr-defined]
        log_verdicts(verdicts, kwargs.get("log_extra"), kwargs.get("log_metric"))
        return [v.score for v in verdicts]

    def close() -> None:
        if reward_func.pool is not None:  # type: ignore[attr-defined]
            reward_func.pool.close()  # type: ignore[attr-defined]
            reward_func.pool = None  # type: ignore[attr-defined]

    reward_func.__name__ = name
    reward_func.__qualname__ = name
    reward_func.last_verdicts = []  # type: ignore[attr-defined]
    reward_func.pool = None  # type: ignore[attr-defined]
    reward_func.close = close  # type: ignore[attr-defined]
    return reward_func


def make_async_reward_func(
    tasks: Mapping[str, Task] | str | Path | None = None,
    db: str | Path | None = None,
    *,
    config: VerifyConfig | None = None,
    workers: int = 0,
    name: str = "ehr_verifier_reward",
) -> Callable[..., Any]:
    """The same reward as :func:`make_reward_func`, as a coroutine function.

    TRL runs async reward functions concurrently on its event-loop thread
    (``GRPOTrainer._calculate_rewards``: ``asyncio.gather``); this one scores in a worker
    thread (``asyncio.to_thread``), so other async rewards and tools keep running meanwhile.

    Args:
        tasks, db, config, workers, name: as :func:`make_reward_func`.

    Returns:
        ``async reward_func(prompts, completions, **kwargs) -> list[float]`` with the same
        ``last_verdicts``, ``pool`` and ``close()``. Calls are serialised (one pool).

    Raises (when awaited):
        InputError: as :func:`make_reward_func`.
    """
    sync = make_reward_func(tasks, db, config=config, workers=workers, name=name)
    lock = threading.Lock()

    def locked(prompts: Any, completions: Any, kwargs: dict[str, Any]) -> list[float]:
        with lock:
            return sync(prompts, completions, **kwargs)

    async def reward_func(prompts: list[Any] | None = None, completions: list[Any] | None = None, **kwargs: Any) -> list[float]:
        out = await asyncio.to_thread(locked, prompts, completions, kwargs)
        reward_func.last_verdicts = sync.last_verdicts  # type: ignore[attr-defined]
        reward_func.pool = sync.pool  # type: ignore[attr-defined]
        return out

    reward_func.__name__ = name
    reward_func.__qualname__ = name
    reward_func.last_verdicts = []  # type: ignore[attr-defined]
    reward_func.pool = None  # type: ignore[attr-defined]
    reward_func.close = sync.close  # type: ignore[attr-defined]
    return reward_func
