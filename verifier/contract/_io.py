"""Loading, validating and exporting the data contract (Task, Trajectory, Verdict).

``pydantic.ValidationError`` is turned into ``InputError`` naming the first
offending field (dotted path) and its value, so every caller sees one typed
error shape.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, TypeVar

from pydantic import BaseModel, ValidationError

from ._errors import MISSING, InputError
from ._task import Task
from ._trajectory import Trajectory
from ._verdict import Verdict

M = TypeVar("M", bound=BaseModel)

#: The models whose JSON Schemas ``ehr-verifier schema`` writes.
CONTRACT_MODELS: dict[str, type[BaseModel]] = {"Task": Task, "Trajectory": Trajectory, "Verdict": Verdict}


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "<root>"


def validate(model: type[M], data: Any, *, where: str = "") -> M:
    """Validate ``data`` (dict or JSON text) as ``model``.

    Args:
        model: Task, Trajectory, Verdict or any contract model.
        data: a dict, or a JSON string/bytes.
        where: prefix for the field path (e.g. ``"line 12: "``).

    Returns:
        The validated model instance.

    Raises:
        InputError: naming the first invalid field and its value (or the JSON
            decoding error).
    """
    try:
        if isinstance(data, (str, bytes, bytearray)):
            return model.model_validate_json(data)
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = where + model.__name__ + "." + _loc(tuple(err.get("loc", ())))
        if err.get("type") == "json_invalid":
            raise InputError(where + model.__name__, str(data)[:200], f"invalid JSON: {err.get('msg')}") from exc
        if err.get("type") == "missing":
            # pydantic's "input" of a missing field is the parent object: name the field, not the parent
            raise InputError(field, MISSING, "required field is missing") from exc
        raise InputError(field, err.get("input"), err.get("msg", "invalid")) from exc


def read_jsonl(path: str | Path, model: type[M]) -> Iterator[M]:
    """Yield validated models from a JSONL file, one per non-blank line.

    Raises:
        InputError: at the first bad line, with ``line N`` in the field path; a line that is
            not UTF-8 (a binary file given as JSONL) names the file, the line and the byte.
        FileNotFoundError: when ``path`` does not exist.
    """
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"{path}:line {n}", raw[:40], f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
                                 f"position {exc.start}): expected a JSONL file of {model.__name__} records") from None
            if line.strip():
                yield validate(model, line, where=f"{path}:line {n}: ")


def load_tasks(path: str | Path) -> dict[str, Task]:
    """Read a tasks JSONL file into ``{task_id: Task}``.

    Raises:
        InputError: on a bad line or a duplicated ``task_id``.
        FileNotFoundError: when ``path`` does not exist (``OSError`` when it
            cannot be read); the CLI reports it as ``error: <path>: ...``.
    """
    tasks: dict[str, Task] = {}
    for task in read_jsonl(path, Task):
        if task.task_id in tasks:
            raise InputError(f"{path}: task_id", task.task_id, "duplicated task_id")
        tasks[task.task_id] = task
    return tasks


def write_jsonl(path: str | Path, items: Any) -> int:
    """Write models (or dicts) as JSONL; returns the number of lines written."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for item in items:
            text = item.model_dump_json() if isinstance(item, BaseModel) else json.dumps(item, sort_keys=True, default=str)
            fh.write(text + "\n")
            n += 1
    return n


def json_schemas() -> dict[str, dict[str, Any]]:
    """Return ``{model name: JSON Schema}`` for the contract models."""
    return {name: model.model_json_schema() for name, model in CONTRACT_MODELS.items()}


def write_schemas(out_dir: str | Path) -> list[Path]:
    """Write ``<Name>.schema.json`` for each contract model into ``out_dir``.

    Returns:
        The written paths.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, schema in json_schemas().items():
        p = out / f"{name}.schema.json"
        p.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        paths.append(p)
    return paths
