"""Canonical cells: one comparable form for a result cell from any source.

A re-executed DuckDB value, the same value recorded by the environment in its JSON
form (``verifier.sql.json_cell``), the value after a trajectory's JSON round trip,
and the text the agent was shown all canonicalise alike (issue 17 kind 11: the
same episode gets the same verdict in memory and from JSONL). Used by the
fabrication check (``_evidence.output_matches``) and the witness comparisons.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from typing import Any

from pydantic import TypeAdapter

from ..sql import format_cell

__all__ = ["canon_cell", "canon_shown"]

_ISO = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?")
_ISO_DURATION = re.compile(r"-?P(?=[\dT])(?:\d+(?:\.\d+)?[YMWD])*(?:T(?:\d+(?:\.\d+)?[HMS])+)?")
_TIMEDELTA = TypeAdapter(dt.timedelta)
_NONFINITE = {"NaN": "NaN", "nan": "NaN", "Infinity": "inf", "inf": "inf", "+Infinity": "inf", "+inf": "inf",
              "-Infinity": "-inf", "-inf": "-inf"}
_NUMBER_TEXT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _canon_number(x: float) -> Any:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(f"{x:.10g}")


def _canon_datetime(value: dt.datetime) -> str:
    if value.tzinfo is not None:  # TIMESTAMP WITH TIME ZONE: the instant, in UTC
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value.isoformat(sep=" ")


def _iso_duration(text: str) -> str | None:
    """``str(timedelta)`` of an ISO-8601 duration (pydantic's JSON form of a timedelta,
    ``P1Y10DT15H1M``: a year is 365 days), read by pydantic itself; else ``None``."""
    if _ISO_DURATION.fullmatch(text) is None:
        return None
    try:
        return format_cell(_TIMEDELTA.validate_python(text))
    except (ValueError, OverflowError):
        return None


def canon_cell(value: Any) -> Any:
    """A cell in canonical, hashable form for comparisons across sources.

    Numbers (int, float, Decimal, numeric text) become floats rounded to 10
    significant digits, NaN and infinities ``"NaN"``, ``"inf"``, ``"-inf"``
    (also from their text); datetimes and ISO-looking text become
    ``YYYY-MM-DD HH:MM:SS`` text (date only for dates; an instant with a time
    zone or offset in UTC); ``None``, ``"NULL"``, ``"None"`` become ``None``;
    booleans stay booleans; LIST cells a tuple of canonical cells, STRUCT/MAP
    cells a ``("map", ((key, cell), ...))`` tuple sorted by key; INTERVALs the
    ``timedelta`` text the agent saw (also from pydantic's ISO duration
    ``P1DT2H``); other values their ``format_cell`` text, stripped. A value and
    its JSON form (``verifier.sql.json_cell``, what the environment records)
    canonicalise alike, so an episode compares the same in memory and after a
    JSON round trip (issue 17 kind 11).
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float, decimal.Decimal)):
        return _canon_number(float(value))
    if isinstance(value, dt.datetime):
        return _canon_datetime(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return tuple(canon_cell(v) for v in value)
    if isinstance(value, dict):
        return ("map", tuple(sorted(((str(canon_cell(k)), canon_cell(v)) for k, v in value.items()), key=repr)))
    text = (value if isinstance(value, str) else format_cell(value)).strip()
    if text in ("NULL", "None", "null", "NaT", "<NA>"):
        return None
    if text in ("True", "true"):
        return True
    if text in ("False", "false"):
        return False
    if text in _NONFINITE:
        return _NONFINITE[text]
    if _NUMBER_TEXT.fullmatch(text):
        try:
            return _canon_number(float(text))
        except ValueError:
            return text
    if _ISO.fullmatch(text):
        try:
            parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return text
        return parsed.date().isoformat() if len(text) == 10 else _canon_datetime(parsed)
    if text[:2] in ("P", "-P") or text[:1] == "P":
        return _iso_duration(text) or text
    return text


def canon_shown(value: Any) -> Any:
    """``canon_cell`` of a value as the agent saw it rendered: LIST, STRUCT and MAP
    cells by their ``format_cell`` text (what a rendered line holds), other
    values as ``canon_cell`` (for them the two agree)."""
    if isinstance(value, (list, tuple, dict)):
        return canon_cell(format_cell(value))
    return canon_cell(value)


