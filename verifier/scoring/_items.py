"""What goes into and comes out of batch scoring: input items, chunks and output records.

An input item is a raw JSONL line (str/bytes), a dict or a ``Trajectory``; each becomes exactly one
output record: a verdict, or an error record
``{"line", "trajectory_id", "task_id", "error": {"type", "message", "line"[, "field"]}}``.
"""

from __future__ import annotations

import codecs
import json
import pickle
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from ..contract import (
    InputError,
    ReasonCode,
    Task,
    Trajectory,
    Verdict,
    load_tasks,
    validate,
)

Record = dict[str, Any]
_JSON_SEPARATORS = (",", ":")


def _version() -> str:
    from ..contract import __version__

    return __version__


def error_record(line: int, exc: BaseException, *, trajectory_id: Any = None, task_id: Any = None) -> Record:
    """The error record for input line ``line`` (1-based).

    Args:
        line: the item's position in the input (1-based).
        exc: the error; its class name becomes ``error.type``; an
            ``InputError`` also gives ``error.field``.
        trajectory_id / task_id: what could be read from the item (strings),
            else ``None``.

    Returns:
        ``{"line", "trajectory_id", "task_id", "error": {"type", "message", "line"[, "field"]}}``.
    """
    err: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc), "line": line}
    if isinstance(exc, InputError):
        err["field"] = exc.field
    return {
        "line": line,
        "trajectory_id": trajectory_id if isinstance(trajectory_id, str) else None,
        "task_id": task_id if isinstance(task_id, str) else None,
        "error": err,
    }


def record_json(record: Record | Verdict) -> str:
    """One compact JSON line (no newline) for a verdict or an error record."""
    if isinstance(record, Verdict):
        return record.model_dump_json()
    return json.dumps(record, separators=_JSON_SEPARATORS, default=str)


def _ids_of(item: Any) -> tuple[Any, Any]:
    """Best-effort (trajectory_id, task_id) of an item that failed validation."""
    data = item
    if isinstance(item, (str, bytes, bytearray)):
        try:
            data = json.loads(item)
        except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: '[' * 100000
            return None, None
    if isinstance(data, Mapping):
        return data.get("trajectory_id"), data.get("task_id")
    return None, None


@dataclass(frozen=True)
class WithTask:
    """An item that carries its own task, so a long-lived pool scores tasks it was not started with.

    Attributes:
        trajectory: the trajectory (JSON text, dict or ``Trajectory``).
        task: the ``Task`` (sent as JSON text to a worker; validated there).

    Why: an RL trainer meets new tasks every step; restarting a worker pool to teach it
    them costs seconds per step (issue 13), and a per-item task costs a few KB of pickling.
    """

    trajectory: Any
    task: Any


@dataclass(frozen=True)
class _Unsendable:
    """Stands in for an item that cannot be pickled to a worker (its error record says why)."""

    kind: str
    why: str


def _to_trajectory(item: Any, line: int) -> Trajectory:
    if isinstance(item, Trajectory):
        return item
    if isinstance(item, _Unsendable):
        raise InputError(f"line {line}", item.kind, f"cannot be sent to a worker process: {item.why}")
    if isinstance(item, (str, bytes, bytearray)):
        if isinstance(item, (bytes, bytearray)):
            try:
                text = bytes(item).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"line {line}", bytes(item[max(0, exc.start - 20): exc.end + 20]),
                                 f"not valid UTF-8 (byte {exc.start}): expected one trajectory JSON object") from None
        else:
            text = item
        if not text.strip():
            raise InputError(f"line {line}", text, "blank line: expected one trajectory JSON object")
        return validate(Trajectory, text, where=f"line {line}: ")
    if isinstance(item, Mapping):
        return validate(Trajectory, dict(item), where=f"line {line}: ")
    raise InputError(f"line {line}", type(item).__name__, "expected a JSON line, a dict or a Trajectory")


def _timeout_verdict(traj: Trajectory, task: Task, limit: float) -> Verdict:
    return Verdict(
        task_id=task.task_id,
        trajectory_id=traj.trajectory_id,
        success=False,
        score=0.0,
        condition=task.condition,
        abstained=False,
        reasons=[ReasonCode.TIMEOUT],
        details={"timeout": {"item_time_limit_s": limit}},
        verifier_version=_version(),
    )


def as_task_map(tasks: Mapping[str, Task] | Iterable[Task | str | Mapping[str, Any]] | str | Path) -> dict[str, Task]:
    """Normalise the ``tasks`` argument to ``{task_id: Task}``.

    Args:
        tasks: a mapping, an iterable of Tasks (or JSON lines / dicts), or the
            path of a tasks JSONL file.

    Raises:
        InputError: a task does not validate or a task_id repeats.
    """
    if isinstance(tasks, (str, Path)):
        return load_tasks(tasks)
    if isinstance(tasks, Mapping):
        return {str(k): (v if isinstance(v, Task) else validate(Task, v)) for k, v in tasks.items()}
    out: dict[str, Task] = {}
    for i, t in enumerate(tasks, start=1):
        task = t if isinstance(t, Task) else validate(Task, t, where=f"tasks[{i}]: ")
        if task.task_id in out:
            raise InputError(f"tasks[{i}].task_id", task.task_id, "duplicated task_id")
        out[task.task_id] = task
    return out


def _prepare(item: Any) -> Any:
    """Make an item cheap and safe to pickle: models become JSON text; an item that
    cannot be pickled (a dict holding a lock, a lambda...) becomes ``_Unsendable``, so
    it gets its own error record instead of failing its whole chunk."""
    if isinstance(item, BaseModel):
        text = _model_text(item)
        if text is not None:
            return text
    elif isinstance(item, WithTask):
        task = _prepare(item.task) if isinstance(item.task, BaseModel) else item.task
        return WithTask(_prepare(item.trajectory), task)
    elif isinstance(item, (str, bytes, bytearray)):
        return item
    try:
        pickle.dumps(item)
    except Exception as exc:  # noqa: BLE001 - pickling raises many types
        return _Unsendable(type(item).__name__, f"{type(exc).__name__}: {exc}"[:300])
    return item


def _model_text(model: BaseModel) -> str | None:
    """``model`` as JSON text, or ``None`` when it has none (a lone surrogate in a final response
    given as a Python string, which UTF-8 cannot encode: ``_prepare`` then sends the object itself
    if it pickles; before, the JSON error stopped the whole batch)."""
    try:
        return model.model_dump_json()
    except PydanticSerializationError:
        return None


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[tuple[int, Any]]]:
    """``[(line, item), ...]`` chunks of ``size``; when ``items`` raises, the items read
    before it still come out (a last, short chunk), then the exception."""
    it = enumerate((_prepare(x) for x in items), start=1)
    while True:
        chunk: list[tuple[int, Any]] = []
        try:
            chunk.extend(islice(it, size))
        except Exception:
            if chunk:
                yield chunk
            raise
        if not chunk:
            return
        yield chunk


def iter_lines(path: str | Path) -> Iterator[bytes]:
    """The lines of a JSONL file as bytes, without their line ending (every line, blank ones included).

    Lines end at ``\n`` only (JSON Lines; a ``\r`` inside a line is JSON
    whitespace, and ``\r\n`` endings lose their ``\r``). A UTF-8 byte-order
    mark at the start of the file is dropped. Bytes are not decoded here: a
    line that is not UTF-8 gets its own error record when scored.

    Raises:
        OSError: the file cannot be read.
    """
    with open(path, "rb") as fh:
        for n, line in enumerate(fh):
            if line.endswith(b"\n"):
                line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
            yield line[3:] if n == 0 and line.startswith(codecs.BOM_UTF8) else line
