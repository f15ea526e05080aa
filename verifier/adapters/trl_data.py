"""Tasks, trajectories and verdicts as Hugging Face ``datasets`` that ``datasets`` cannot alter.

``datasets`` stores rows in Arrow with one schema per column: nested dicts of different rows
are unified (missing keys come back as ``None``), and values of different types in one
field fail (``ArrowInvalid``). A ``Task`` dict is both (answers are typed unions; witness rows
differ per table), so a task column of dicts changes the tasks or cannot be built (issue 13).
Here every record is stored whole as **JSON text** (a string column is never rewritten),
beside a few flat string/number columns for filtering and grouping.

* :func:`to_grpo_dataset`: the training set TRL's ``GRPOTrainer`` reads: ``prompt``
  (conversational), ``task_id`` and ``task`` (JSON text), which ``make_reward_func`` and
  ``EHRToolEnv.reset`` accept as they are;
* :func:`to_hf_dataset` / :func:`from_hf_dataset`: tasks, trajectories or verdicts and back,
  identical after the round trip.

``datasets`` is an optional dependency (extras ``.[hf]`` / ``.[trl]``), imported when called.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Literal, Mapping

from ..contract import InputError, Task, Trajectory, Verdict, load_tasks

PromptKind = Literal["observation", "question", "empty"]

#: Flat columns kept beside the JSON text, per record type (all strings, numbers or booleans).
_FLAT: dict[type, tuple[str, tuple[str, ...]]] = {
    Task: ("task", ("task_id", "pair_id", "condition", "noise_type", "scope", "intent", "program", "split", "track", "question")),
    Trajectory: ("trajectory", ("trajectory_id", "task_id", "final_response")),
    Verdict: ("verdict", ("trajectory_id", "task_id", "success", "score", "condition", "abstained")),
}


def _task_list(tasks: Mapping[str, Task] | Iterable[Task] | str | Path) -> list[Task]:
    if isinstance(tasks, (str, Path)):
        return list(load_tasks(tasks).values())
    out = list(tasks.values()) if isinstance(tasks, Mapping) else list(tasks)
    for i, t in enumerate(out):
        if not isinstance(t, Task):
            raise InputError(f"tasks[{i}]", type(t).__name__, "expected a Task (or a tasks JSONL path)")
    return out


def to_grpo_dataset(
    tasks: Mapping[str, Task] | Iterable[Task] | str | Path,
    *,
    db: str | Path | None = None,
    prompt: PromptKind = "observation",
    schema_detail: str = "compact",
) -> Any:
    """The GRPO training set: one row per task.

    Args:
        tasks: Tasks (list, ``{task_id: Task}`` or a tasks JSONL path).
        db: the DuckDB database; needed for ``prompt="observation"`` (the schema description).
        prompt: what the ``prompt`` column's single user message holds: ``"observation"`` the
            environment's reset observation (instructions, schema and question: what
            ``EHREnv.reset`` shows), ``"question"`` the question only, ``"empty"`` an empty
            message, for ``environment_factory`` training where ``EHRToolEnv.reset`` returns the
            observation and TRL appends it to that message.
        schema_detail: the schema description of ``"observation"`` prompts: ``"compact"`` (default)
            or ``"full"``, as ``EnvConfig.schema_detail`` (give the environment the same).

    Returns:
        A ``datasets.Dataset`` with string columns ``task_id`` and ``task`` (the Task as JSON text)
        and ``prompt`` (``[{"role": "user", "content": str}]``). Nothing of the reference is in
        the prompt.

    Raises:
        InputError: a non-Task item, duplicated task ids, an unknown ``prompt`` kind or
            ``schema_detail``, or ``prompt="observation"`` without ``db``.
        ImportError: ``datasets`` is not installed (``pip install ehr-verifier[hf]``).
    """
    import datasets

    items = _task_list(tasks)
    ids = [t.task_id for t in items]
    if len(set(ids)) != len(ids):
        raise InputError("tasks", next(i for i in ids if ids.count(i) > 1), "duplicated task_id")
    if prompt not in ("observation", "question", "empty"):
        raise InputError("prompt", prompt, "expected 'observation', 'question' or 'empty'")
    if prompt == "observation":
        if db is None:
            raise InputError("db", None, "prompt='observation' shows the schema description: give the database")
        from ..env import prompt_schema
        from ..env.instructions import reset_observation

        schema = prompt_schema(db, schema_detail)
        texts = [reset_observation(t.question, schema) for t in items]
    else:
        texts = [t.question if prompt == "question" else "" for t in items]
    features = datasets.Features({
        "prompt": [{"role": datasets.Value("string"), "content": datasets.Value("string")}],
        "task_id": datasets.Value("string"),
        "task": datasets.Value("string"),
    })
    return datasets.Dataset.from_dict({
        "prompt": [[{"role": "user", "content": text}] for text in texts],
        "task_id": ids,
        "task": [t.model_dump_json() for t in items],
    }, features=features)


def to_hf_dataset(records: Iterable[Task | Trajectory | Verdict]) -> Any:
    """Tasks, trajectories or verdicts (one kind) as a ``datasets.Dataset``.

    Args:
        records: models of one type.

    Returns:
        A dataset with one JSON-text column named for the type (``task``, ``trajectory`` or
        ``verdict``) holding each record whole, and flat columns beside it: tasks
        ``task_id, pair_id, condition, noise_type, scope, intent, program, split, track,
        question``; trajectories ``trajectory_id, task_id, final_response`` and ``n_steps``;
        verdicts ``trajectory_id, task_id, success, score, condition, abstained`` and
        ``reasons`` (list of codes). :func:`from_hf_dataset` reads it back.

    Raises:
        InputError: an empty input, or records of mixed or unsupported types.
        ImportError: ``datasets`` is not installed.
    """
    import datasets

    items = list(records)
    if not items:
        raise InputError("records", [], "nothing to convert")
    kind = type(items[0])
    if kind not in _FLAT or any(type(r) is not kind for r in items):
        raise InputError("records", sorted({type(r).__name__ for r in items}), "expected Tasks, Trajectories or Verdicts, one kind")
    column, flat = _FLAT[kind]
    data: dict[str, list[Any]] = {c: [getattr(r, c) for r in items] for c in flat}
    if kind is Trajectory:
        data["n_steps"] = [len(r.steps) for r in items]
    if kind is Verdict:
        data["reasons"] = [[c.value for c in r.reasons] for r in items]
    data[column] = [r.model_dump_json() for r in items]
    return datasets.Dataset.from_dict(data)


def from_hf_dataset(dataset: Iterable[Mapping[str, Any]]) -> list[Task | Trajectory | Verdict]:
    """The records of a dataset made by :func:`to_hf_dataset` (or ``to_grpo_dataset``: its tasks).

    Args:
        dataset: a ``datasets.Dataset`` (or any iterable of row dicts) with a ``task``,
            ``trajectory`` or ``verdict`` JSON-text column.

    Returns:
        The validated models, in row order.

    Raises:
        InputError: a row without such a column, or text that is not a valid record (naming the row).
    """
    from ..contract import validate

    out: list[Task | Trajectory | Verdict] = []
    for i, row in enumerate(dataset):
        for kind, (column, _flat) in _FLAT.items():
            if isinstance(row.get(column), str):
                out.append(validate(kind, row[column], where=f"row {i}: {column}: "))
                break
        else:
            raise InputError(f"row {i}", sorted(row), "no 'task', 'trajectory' or 'verdict' JSON-text column")
    return out
