"""Rendering a query result as the text an agent sees.

One function shared by the environment (what the agent is shown) and the
verifier (what the agent could have seen), so both apply the same truncation.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any, Sequence

from ..contract import DisplayConfig


def format_cell(value: Any) -> str:
    """Format one cell: ``NULL`` for None, ISO-8601 for datetimes, repr-free floats."""
    if value is None:
        return "NULL"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value) if value != int(value) or abs(value) >= 1e15 else f"{value:.1f}"
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    return str(value)


def json_cell(value: Any) -> Any:
    """A result cell as a JSON-native value that survives ``model_dump_json`` and reload.

    The environment records a SQL step's rows with it, so that a trajectory
    re-scored from JSONL compares like the one scored in memory (issue 17 kind
    11; ``verifier.abstention._evidence.canon_cell`` reads both forms alike).
    ``None``, booleans, ints (HUGEINT included) and text stay; finite floats
    stay, NaN and infinities become ``"NaN"``, ``"Infinity"``, ``"-Infinity"``;
    DECIMAL becomes its exact text (``"1.50"``); LIST becomes a list and
    STRUCT/MAP a dict with text keys, cell by cell; every other type (DATE,
    TIME, TIMESTAMP [WITH TIME ZONE], INTERVAL, BLOB, UUID, BIT, ...) becomes
    the text the agent was shown (``format_cell``).
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [json_cell(v) for v in value]
    if isinstance(value, dict):
        return {format_cell(k): json_cell(v) for k, v in value.items()}
    return format_cell(value)


def render_result(columns: Sequence[str], rows: Sequence[Sequence[Any]], display: DisplayConfig | None = None) -> str:
    """Render a result set as pipe-separated text with a row-count footer.

    Args:
        columns: column names.
        rows: all rows fetched (at most the row cap).
        display: truncation limits; default ``DisplayConfig()``.

    Returns:
        Text: a header line, one line per shown row, and a footer
        ``(N rows)`` or ``(N rows, showing first M)``; cut at ``max_chars``
        with a ``[truncated]`` marker.
    """
    display = display or DisplayConfig()
    shown = rows[: display.max_rows]
    lines = [" | ".join(columns)]
    lines += [" | ".join(format_cell(v) for v in row) for row in shown]
    n = len(rows)
    footer = f"({n} row{'s' if n != 1 else ''})" if len(shown) == n else f"({n} rows, showing first {len(shown)})"
    text = "\n".join(lines)
    if len(text) > display.max_chars:
        text = text[: display.max_chars] + "\n[truncated]"
    return text + "\n" + footer


def visible_rows(rows: Sequence[Sequence[Any]], columns: Sequence[str], display: DisplayConfig | None = None) -> list[tuple[Any, ...]]:
    """Return the rows an agent could actually read after truncation.

    Applies ``max_rows`` and then drops rows whose line fell past ``max_chars``.
    """
    display = display or DisplayConfig()
    out: list[tuple[Any, ...]] = []
    used = len(" | ".join(columns))
    for row in rows[: display.max_rows]:
        line = " | ".join(format_cell(v) for v in row)
        used += 1 + len(line)
        if used > display.max_chars:
            break
        out.append(tuple(row))
    return out
