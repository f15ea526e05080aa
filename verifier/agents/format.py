"""Typed answers as response text, and the tagged final response.

The spellings are those ``verifier.parse`` and ``verifier.match`` read:
quantities as ``<value> <unit>``, datetimes in ISO format at the answer's
precision, lists and records as JSON (records as ``{"columns", "rows"}``).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from ..contract import (
    BooleanAnswer,
    CountAnswer,
    DatetimeAnswer,
    ListAnswer,
    NumberAnswer,
    QuantityAnswer,
    RecordsAnswer,
    TextAnswer,
)

_DT_FORMAT = {
    "year": "%Y", "month": "%Y-%m", "day": "%Y-%m-%d", "hour": "%Y-%m-%d %H:00",
    "minute": "%Y-%m-%d %H:%M", "second": "%Y-%m-%d %H:%M:%S",
}


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _json_cell(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def format_answer(answer: Any) -> str:
    """Spell a typed answer (``verifier.contract._answers``) as Answer text.

    Returns:
        e.g. ``"4.2 mmol/L"``, ``"3"``, ``"2150-03-01 10:00:00"``, ``"yes"``,
        ``'["a", "b"]'``, ``'{"columns": [...], "rows": [...]}'``.

    Raises:
        TypeError: not a typed answer.
    """
    if isinstance(answer, QuantityAnswer):
        return f"{_num(answer.value)} {answer.unit}"
    if isinstance(answer, NumberAnswer):
        return _num(answer.value)
    if isinstance(answer, CountAnswer):
        return str(answer.value)
    if isinstance(answer, DatetimeAnswer):
        return answer.value.strftime(_DT_FORMAT[answer.precision])
    if isinstance(answer, TextAnswer):
        return answer.value
    if isinstance(answer, BooleanAnswer):
        return "yes" if answer.value else "no"
    if isinstance(answer, ListAnswer):
        return json.dumps([format_answer(item) for item in answer.items])
    if isinstance(answer, RecordsAnswer):
        rows = [[_json_cell(c) for c in row] for row in answer.rows]
        return json.dumps({"columns": list(answer.columns), "rows": rows}, default=str)
    raise TypeError(f"not a typed answer: {type(answer).__name__}")


def tagged_response(answer: str, reasoning: str) -> str:
    """The final response in the instructed format: ``<answer>..</answer><reasoning>..</reasoning>``."""
    return f"<answer>{answer}</answer>\n<reasoning>{reasoning}</reasoning>"
