"""Turning a reference query's result into a typed answer, or recognising a gap.

A result is a *gap* (the question cannot be answered from the database) when it
has no rows, or when the answer cells are all NULL. Population queries encode
the five-unit rule with ``HAVING count(DISTINCT unit) >= 5``, so a cohort of
1-4 units is a gap too (ARCHITECTURE.md section 4 point 5).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Sequence

from ..contract import (
    BooleanAnswer,
    CountAnswer,
    DatetimeAnswer,
    ListAnswer,
    NumberAnswer,
    QuantityAnswer,
    RecordsAnswer,
    RulesError,
    TextAnswer,
)


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float, Decimal)) else float(str(v))


def _cell(v: Any) -> Any:
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, dt.datetime):
        return v
    if isinstance(v, dt.date):
        return v
    return v


def _scalar(kind: str, v: Any, spec: dict[str, Any], unit: Any = None) -> Any:
    dec = spec.get("decimals")
    if kind == "quantity":
        value = round(_num(v), dec) if dec is not None else _num(v)
        return QuantityAnswer(value=value, unit=str(unit), decimals=dec)
    if kind == "number":
        value = round(_num(v), dec) if dec is not None else _num(v)
        return NumberAnswer(value=value, decimals=dec)
    if kind == "count":
        return CountAnswer(value=int(v))
    if kind == "datetime":
        return DatetimeAnswer(value=v, precision=spec.get("precision", "minute"))
    if kind == "text":
        return TextAnswer(value=str(v))
    if kind == "boolean":
        return BooleanAnswer(value=bool(v))
    raise RulesError("answer.kind", f"{kind!r} is not a scalar kind")


def to_answer(spec: dict[str, Any], columns: Sequence[str], rows: Sequence[tuple]) -> Any | None:
    """Typed answer from a result set, or ``None`` when the result is a gap.

    Args:
        spec: the program's ``answer`` table: ``kind`` and, by kind, ``value``
            (column), ``unit`` (column) or ``unit_literal``, ``decimals``,
            ``precision``, ``item`` (list item kind), ``ordered``.
        columns: result column names.
        rows: result rows.

    Returns:
        An ``Answer`` model, or ``None`` (no rows / NULL answer cells).

    Raises:
        RulesError: the spec names a column the result does not have.
    """
    if not rows:
        return None
    kind = spec["kind"]
    index = {c: i for i, c in enumerate(columns)}

    def col(name: str) -> int:
        if name not in index:
            raise RulesError("answer", f"column {name!r} not in result columns {list(columns)}")
        return index[name]

    if kind == "records":
        keep = [col(c) for c in spec.get("columns", columns)]
        out = [tuple(_cell(r[i]) for i in keep) for r in rows]
        if all(all(c is None for c in r) for r in out):
            return None
        return RecordsAnswer(columns=tuple(spec.get("columns", columns)), rows=tuple(out))
    vcol = col(spec.get("value", columns[0]))
    if kind == "list":
        vals = [r[vcol] for r in rows if r[vcol] is not None]
        if not vals:
            return None
        items = tuple(_scalar(spec.get("item", "text"), v, spec) for v in vals)
        return ListAnswer(items=items, ordered=bool(spec.get("ordered", False)))
    v = rows[0][vcol]
    if v is None:
        return None
    unit = None
    if kind == "quantity":
        unit = spec.get("unit_literal")
        if unit is None:
            unit = rows[0][col(spec.get("unit", "unit"))]
        if unit is None or str(unit).strip() == "":
            return None
    return _scalar(kind, v, spec, unit)
