"""Loading the hand-made Noise fixtures (``fixtures/noise/*.json``).

A fixture file holds ``cases``; each case is a ``task`` (a Task in JSON) and
``trajectories``: ``{"note", "expect": {"success", "reasons"}, "trajectory"}``.
Fixtures over the synthetic hospital name seed-dependent identifiers through
placeholders filled from the hospital's planted gaps
(``verifier.synthetic.gaps``): ``${gap_name.path}`` or
``${gap_name[key=value].path}`` where ``[key=value]`` selects the one gap of
that name whose ``ids[key]`` equals ``value`` and ``path`` walks ``ids``
(``.field``, ``.0`` for list items). A string that is exactly one placeholder
becomes the value itself (typed: an int stays an int); a placeholder inside a
longer string is replaced by its text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Sequence

from ..contract import InputError, Task

PLACEHOLDER = re.compile(r"\$\{(\w+)(?:\[(\w+)=([^\]]+)\])?((?:\.\w+)+)\}")


def fixtures_dir() -> Path:
    """The repository's ``fixtures/noise`` folder."""
    return Path(__file__).resolve().parent.parent.parent / "fixtures" / "noise"


def _gap_value(gaps: Sequence[Any], name: str, key: str | None, want: str | None, path: str) -> Any:
    chosen = [g for g in gaps if g.name == name and (key is None or str(g.ids.get(key)) == want)]
    where = f"${{{name}{f'[{key}={want}]' if key else ''}{path}}}"
    if len(chosen) != 1:
        raise InputError("placeholder", where, f"matches {len(chosen)} planted gaps, expected exactly 1")
    value: Any = chosen[0].ids
    try:
        for part in path.strip(".").split("."):
            value = value[int(part)] if isinstance(value, list) else value[part]
    except (KeyError, IndexError, ValueError) as exc:
        raise InputError("placeholder", where, f"no such path in the gap's ids: {exc}") from None
    return value


def fill(obj: Any, gaps: Sequence[Any]) -> Any:
    """Replace placeholders in a JSON value (see module docstring).

    Args:
        obj: JSON-like value (dicts, lists, strings, scalars).
        gaps: planted gaps (objects with ``name`` and ``ids``).

    Returns:
        A copy with every placeholder filled.

    Raises:
        InputError: a placeholder selects no gap, several, or a missing path.
    """
    if isinstance(obj, dict):
        return {k: fill(v, gaps) for k, v in obj.items()}
    if isinstance(obj, list):
        return [fill(v, gaps) for v in obj]
    if isinstance(obj, str) and "${" in obj:
        whole = PLACEHOLDER.fullmatch(obj)
        if whole:
            return _gap_value(gaps, *whole.groups())
        return PLACEHOLDER.sub(lambda m: str(_gap_value(gaps, *m.groups())), obj)
    return obj


def load_cases(path: str | Path, gaps: Sequence[Any] = ()) -> list[tuple[Task, list[dict[str, Any]]]]:
    """Read a fixture file and fill its placeholders.

    Args:
        path: a ``fixtures/noise/*.json`` file (or a bare name such as
            ``"synthetic"``, looked up in ``fixtures_dir()``).
        gaps: the planted gaps of the synthetic hospital the fixture is for.

    Returns:
        ``[(task, trajectory entries)]`` in file order; entries keep ``note``,
        ``expect`` and the ``trajectory`` as JSON.

    Raises:
        InputError: a placeholder cannot be filled, or a task is invalid.
    """
    p = Path(path)
    if not p.suffix:
        p = fixtures_dir() / f"{p}.json"
    data = json.loads(p.read_text())
    out = []
    for i, case in enumerate(data["cases"]):
        case = fill(case, gaps)
        try:
            task = Task.model_validate(case["task"])
        except ValueError as exc:
            raise InputError(f"{p.name}:cases[{i}].task", case.get("task", {}).get("task_id"), str(exc)) from None
        out.append((task, case["trajectories"]))
    return out
