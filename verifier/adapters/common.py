"""What the framework adapters share: task lookup and completion -> Trajectory.

Frameworks hand over a *completion* in one of three forms, all accepted:

* a string: the final response only (no tool steps recorded there); steps
  may come separately as a recorded ``Trajectory`` (dict or JSON);
* OpenAI-style chat messages (``role``/``content``/``tool_calls`` and
  ``tool`` results), the conversational format of TRL and most agent logs:
  converted with ``verifier.chat.from_chat_messages``. Tool results without
  ``tool_call_id`` (TRL's tool loop logs them by ``name``) are paired with
  the earliest unanswered call, in order;
* a ``Trajectory`` (model, dict or JSON text).

And the task in one of: a ``Task`` (model, dict or JSON text) or a
``task_id`` looked up in a mapping of tasks (or a tasks JSONL path, loaded
once per process).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..chat import from_chat_messages
from ..contract import load_tasks, validate
from ..errors import InputError
from ..task import Task
from ..trajectory import Trajectory


@lru_cache(maxsize=8)
def _tasks_from_file(path: str) -> dict[str, Task]:
    return load_tasks(path)


def task_map(tasks: Mapping[str, Task] | str | Path | None) -> Mapping[str, Task]:
    """``{task_id: Task}`` from a mapping, a tasks JSONL path (cached per process) or ``None`` (empty)."""
    if tasks is None:
        return {}
    if isinstance(tasks, (str, Path)):
        return _tasks_from_file(str(Path(tasks).resolve()))
    return tasks


def resolve_task(value: Any, tasks: Mapping[str, Task], *, field: str = "task") -> Task:
    """The Task a sample refers to.

    Args:
        value: a Task, a dict or JSON text of one, or a task_id.
        tasks: where task ids are looked up.
        field: name used in error messages.

    Raises:
        InputError: an unknown task id, or an invalid task object.
    """
    if isinstance(value, Task):
        return value
    if isinstance(value, Mapping):
        return validate(Task, dict(value), where=f"{field}: ")
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{"):
            return validate(Task, text, where=f"{field}: ")
        task = tasks.get(text)
        if task is None:
            raise InputError(field, value, "unknown task_id (give the tasks mapping or tasks JSONL path to the adapter)")
        return task
    raise InputError(field, value, "expected a Task, a task dict/JSON or a task_id")


_FRAMING = re.compile(r"\A\[step \d+\]\n")


def _pair_tool_results(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Copy of ``messages`` with ids on tool calls and ``tool_call_id`` on tool results (FIFO pairing),
    and the environment's ``[step N]`` line removed from tool results (so ``Error: ...`` results are
    recognised as errors)."""
    out: list[dict[str, Any]] = []
    pending: list[str] = []
    n = 0
    for msg in messages:
        if hasattr(msg, "model_dump"):
            msg = msg.model_dump()
        if not isinstance(msg, Mapping):
            out.append(msg)  # from_chat_messages reports it
            continue
        msg = dict(msg)
        if msg.get("role") == "assistant" and msg.get("tool_calls"):
            calls = []
            for call in msg["tool_calls"]:
                call = dict(call)
                if not call.get("id"):
                    n += 1
                    call["id"] = f"call_{n}"
                pending.append(str(call["id"]))
                calls.append(call)
            msg["tool_calls"] = calls
        elif msg.get("role") == "tool":
            if isinstance(msg.get("content"), str):  # the environment's "[step N]" framing is not output
                msg["content"] = _FRAMING.sub("", msg["content"], count=1)
            cid = msg.get("tool_call_id")
            if cid and str(cid) in pending:
                pending.remove(str(cid))
            elif pending:
                msg["tool_call_id"] = pending.pop(0)
        out.append(msg)
    return out


def to_trajectory(
    completion: Any,
    *,
    task_id: str,
    trajectory_id: str,
    recorded: Any = None,
) -> Trajectory:
    """Build the Trajectory to verify from a framework's completion.

    Args:
        completion: final-response text, chat messages, or a Trajectory
            (model, dict or JSON text with ``steps``).
        task_id: the task it answers (overrides what a recorded trajectory says).
        trajectory_id: id to give it.
        recorded: optional recorded trajectory (its steps are used when the
            completion is only text; the completion text is the final response).

    Raises:
        InputError: messages or a recorded trajectory that do not validate.
    """
    if isinstance(completion, Trajectory):
        return completion.model_copy(update={"task_id": task_id})
    if isinstance(completion, str) and completion.lstrip().startswith("{") and '"steps"' in completion:
        completion = json.loads(completion)
    if isinstance(completion, Mapping) and "steps" in completion:
        data = dict(completion, task_id=task_id)
        data.setdefault("trajectory_id", trajectory_id)
        return validate(Trajectory, data, where="completion: ")
    if isinstance(completion, (list, tuple)):
        return from_chat_messages(_pair_tool_results(completion), trajectory_id=trajectory_id, task_id=task_id)
    text = "" if completion is None else str(completion)
    if recorded is not None:
        base = to_trajectory(recorded, task_id=task_id, trajectory_id=trajectory_id)
        return base.model_copy(update={"final_response": text})
    return Trajectory(trajectory_id=trajectory_id, task_id=task_id, final_response=text)


def verdict_fields(verdict: Any) -> dict[str, Any]:
    """The flat verdict fields adapters report: score, success, abstained, condition, reasons (comma-joined), ids."""
    return {
        "score": float(verdict.score),
        "success": bool(verdict.success),
        "abstained": bool(verdict.abstained),
        "condition": verdict.condition,
        "reasons": ",".join(str(getattr(r, "value", r)) for r in verdict.reasons),
        "task_id": verdict.task_id,
        "trajectory_id": verdict.trajectory_id,
    }
