"""Rendering program parameters into SQL literals and question text.

Construction programs are templates (``verifier/construction/programs/*.toml``)
with ``{name}`` placeholders. In SQL a placeholder becomes a typed literal
(``42``, ``'Heparin'``, ``TIMESTAMP '2180-07-23 12:36:00'``, ``NULL``); in
question text it becomes a readable string.
"""

from __future__ import annotations

import datetime as dt
import string
from decimal import Decimal
from typing import Any, Mapping

from ..contract import RulesError

_FORMATTER = string.Formatter()


def sql_literal(value: Any) -> str:
    """Render ``value`` as a DuckDB literal.

    Args:
        value: None, bool, int, float, Decimal, str, date or datetime.

    Returns:
        SQL text, e.g. ``'O''Brien'`` or ``TIMESTAMP '2180-07-23 12:36:00'``.

    Raises:
        TypeError: for any other type.
    """
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (float, Decimal)):
        return repr(float(value))
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"cannot render {type(value).__name__} {value!r} as a SQL literal")


def text_value(value: Any) -> str:
    """Render ``value`` for a question: dates as ISO, whole floats without ``.0``."""
    if value is None:
        return "unknown"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:g}"
    if isinstance(value, Decimal):
        return text_value(float(value))
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def placeholders(template: str) -> set[str]:
    """Names of the ``{name}`` placeholders in ``template``."""
    return {f for _, f, _, _ in _FORMATTER.parse(template) if f}


def render(template: str, ctx: Mapping[str, Any], *, sql: bool, where: str = "") -> str:
    """Fill ``template`` from ``ctx``.

    Args:
        template: text with ``{name}`` placeholders (no format specs).
        ctx: values by name.
        sql: True renders SQL literals, False readable text.
        where: program/field named in errors.

    Raises:
        RulesError: a placeholder has no value in ``ctx``.
    """
    fmt = sql_literal if sql else text_value
    values = {}
    for name in placeholders(template):
        if name not in ctx:
            raise RulesError(where or "program template", f"placeholder {{{name}}} has no value (known: {sorted(ctx)})")
        values[name] = fmt(ctx[name])
    return template.format_map(values)
