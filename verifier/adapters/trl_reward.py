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

Example::

    reward = make_reward_func("tasks.jsonl", db="demo.duckdb")
    trainer = GRPOTrainer(model=..., reward_funcs=[reward], train_dataset=ds)  # ds has a "task_id" column
"""

from __future__ import annotations

from itertools import count
from pathlib import Path
from typing import Any, Callable, Mapping

from ..contract import InputError, Task, Verdict, VerifyConfig
from .common import resolve_task, task_map, to_trajectory

RewardFunc = Callable[..., list[float]]


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
            (``verifier.batch.BatchVerifier``) alive across training steps.
        name: the function's ``__name__`` (TRL logs rewards under it).

    Returns:
        ``reward_func(prompts, completions, **kwargs) -> list[float]``: the
        verdict scores (1.0 success, 0.0 failure), in completion order. The
        last batch's verdicts are kept on ``reward_func.last_verdicts``.

    Raises (when called):
        InputError: caller configuration only: no ``task``/``task_id`` column, a
            column whose length differs from ``completions`` (naming the column and
            both lengths), an unknown task, an invalid task or recorded
            ``trajectory``. Never on a completion: whatever the model wrote is scored
            (an unreadable one fails with ``UNPARSEABLE_RESPONSE``; see
            ``verifier.adapters.common.to_trajectory``).
    """
    config = config or VerifyConfig()
    if db is not None:
        config = config.model_copy(update={"db_path": str(db)})
    ids = count()
    state: dict[str, Any] = {"pool": None}

    def pool(known: Mapping[str, Task]) -> Any:
        from ..scoring import BatchVerifier

        if state["pool"] is None:
            state["pool"] = BatchVerifier(known, None, workers=max(1, workers), backend="process" if workers else "serial", config=config)
        return state["pool"]

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
            task = resolve_task(task_col[i], known, field=f"task[{i}]")
            tid = str(tids[i]) if tids[i] is not None else f"trl-{next(ids)}"
            rows.append((task, to_trajectory(completion, task_id=task.task_id, trajectory_id=tid, recorded=recorded[i])))
        bv = pool(known)
        bv.add_tasks({t.task_id: t for t, _ in rows})
        verdicts = [Verdict.model_validate(r) if "error" not in r else None for r in bv.score([t for _, t in rows])]
        reward_func.last_verdicts = verdicts  # type: ignore[attr-defined]
        return [v.score if v is not None else None for v in verdicts]  # type: ignore[misc]

    reward_func.__name__ = name
    reward_func.__qualname__ = name
    reward_func.last_verdicts = []  # type: ignore[attr-defined]
    reward_func.close = lambda: state["pool"] and state["pool"].close()  # type: ignore[attr-defined]
    return reward_func
