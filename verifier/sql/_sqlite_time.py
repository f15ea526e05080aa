"""SQLite's date and time functions carried over to DuckDB with SQLite's semantics.

SQLite docs, "Date And Time Functions": ``date``, ``time``, ``datetime``, ``julianday``,
``unixepoch`` and ``strftime`` take a time value and modifiers and return text (``julianday``
a real, ``unixepoch`` an integer). Here each call becomes a DuckDB expression over a
TIMESTAMP: the time value is read with ``TRY_CAST`` (SQLite returns NULL for text it cannot
read), ``'now'`` and ``CURRENT_*`` are the pinned dataset time when one is given, the
modifiers apply in order (``verifier.sql._dialects``: ``MODIFIER_UNITS``, ``START_OF``),
and the result is formatted as SQLite formats it. What SQLite does that cannot be carried
over (numeric time values, ``localtime``/``utc``, formats DuckDB lacks) raises
``DialectUnsupported``.
"""

from __future__ import annotations

import datetime as dt
import re

import sqlglot
from sqlglot import exp

from ..contract import VerifierError
from ._dialects import (
    INTEGER_CODES,
    MODIFIER_UNITS,
    START_OF,
    STRFTIME_CODES,
    STRFTIME_COMPUTED,
    UNSUPPORTED_MODIFIERS,
)


class DialectUnsupported(VerifierError):
    """A query that cannot be carried over to DuckDB with its source dialect's semantics.

    Args:
        sql: the query text as the agent wrote it.
        dialect: its dialect (``sqlite`` or ``postgres``).
        reason: what cannot be carried over (e.g. ``"strftime code %e"``).
    """

    def __init__(self, sql: str, dialect: str, reason: str) -> None:
        self.sql = sql
        self.dialect = dialect
        self.reason = reason
        super().__init__(f"{dialect} query cannot be carried over to DuckDB: {reason}")


#: Meta key on generated nodes: ``"int"``/``"real"`` when SQLite reads the text as a number.
NUMERIC = "sqlite_numeric"
#: Meta key on every node this module generates (DuckDB semantics already: later passes skip them).
GENERATED = "generated"


def _mark(expr: exp.Expression) -> exp.Expression:
    for node in expr.walk():
        if not isinstance(node, exp.Column):
            node.meta[GENERATED] = True
    return expr
TIME_FUNCTIONS = frozenset({"date", "time", "datetime", "julianday", "unixepoch", "strftime"})

_MOD_NUM = re.compile(r"\s*([+-]?)\s*(\d+(?:\.\d*)?|\.\d+)\s+([a-z]+)\s*")
_MOD_HMS = re.compile(r"\s*([+-])(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?\s*")
_MOD_WEEKDAY = re.compile(r"\s*weekday\s+(\d)\s*")
_MOD_START = re.compile(r"\s*start\s+of\s+([a-z]+)\s*")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]00:00)?")
_HMS = re.compile(r"\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?")


def _duck(sql: str) -> exp.Expression:
    return sqlglot.parse_one(sql, read="duckdb")


def _ts_literal(value: dt.datetime) -> exp.Expression:
    return exp.cast(exp.Literal.string(value.strftime("%Y-%m-%d %H:%M:%S.%f")), exp.DataType.build("TIMESTAMP"))


def now_expr(now: dt.datetime | None) -> exp.Expression:
    """The dataset's "now" as a DuckDB TIMESTAMP (``CAST(current_timestamp AS TIMESTAMP)`` when not
    pinned: then the query is volatile and its recorded output is not compared)."""
    if now is None:
        return exp.cast(exp.CurrentTimestamp(), exp.DataType.build("TIMESTAMP"))
    return _ts_literal(now)


def time_value(arg: exp.Expression, now: dt.datetime | None, source: str) -> exp.Expression:
    """A SQLite time value as a DuckDB TIMESTAMP expression (NULL where SQLite reads nothing)."""
    if isinstance(arg, (exp.CurrentTimestamp, exp.CurrentTime, exp.CurrentDate)):
        return now_expr(now) if not isinstance(arg, exp.CurrentDate) else exp.func("date_trunc", exp.Literal.string("day"), now_expr(now))
    if isinstance(arg, exp.Literal):
        text = arg.this.strip()
        if not arg.is_string:
            raise DialectUnsupported(source, "sqlite", f"numeric time value {text} (Julian day numbers are not carried over)")
        if text.lower() == "now":
            return now_expr(now)
        if _HMS.fullmatch(text):
            text = "2000-01-01 " + text  # SQLite: a time alone is on 2000-01-01
        if not _ISO.fullmatch(text):
            return exp.cast(exp.Null(), exp.DataType.build("TIMESTAMP"))
        text = text.replace("T", " ").rstrip("Z").replace("+00:00", "")
        return exp.cast(exp.Literal.string(text), exp.DataType.build("TIMESTAMP"))
    if isinstance(arg, exp.Null):
        return exp.cast(exp.Null(), exp.DataType.build("TIMESTAMP"))
    return exp.TryCast(this=arg, to=exp.DataType.build("TIMESTAMP"))


def _number(text: str) -> float:
    return float(text)


def _let(t: str, body: str) -> exp.Expression:
    """``body`` (DuckDB SQL naming the time value ``_v``) with ``_v`` bound once to ``t``: a one-element
    ``list_transform`` lambda, so chained modifiers grow the query linearly, not exponentially."""
    return _duck(f"list_transform([{t}], lambda _v: {body})[1]")


def apply_modifier(ts: exp.Expression, modifier: str, source: str) -> exp.Expression:
    """``ts`` after one SQLite modifier (``start of year``, ``-1 year``, ``+3 days``, ``weekday 0``,
    ``+01:30``). Raises ``DialectUnsupported`` for modifiers not carried over."""
    low = modifier.strip().lower()
    t = ts.sql("duckdb")
    m = _MOD_START.fullmatch(low)
    if m:
        unit = START_OF.get(m.group(1))
        if unit is None:
            raise DialectUnsupported(source, "sqlite", f"modifier {modifier!r}")
        return _duck(f"CAST(date_trunc('{unit}', {t}) AS TIMESTAMP)")
    m = _MOD_NUM.fullmatch(low)
    if m:
        sign, num, unit = m.groups()
        duck_unit = MODIFIER_UNITS.get(unit)
        if duck_unit is None:
            raise DialectUnsupported(source, "sqlite", f"modifier {modifier!r}")
        value = _number(num) * (-1 if sign == "-" else 1)
        if duck_unit in ("MONTH", "YEAR"):
            if value != int(value):
                raise DialectUnsupported(source, "sqlite", f"fractional month/year modifier {modifier!r}")
            months = int(value) * (12 if duck_unit == "YEAR" else 1)
            # SQLite adds to the month field and lets the day overflow (2001-01-31 +1 month = 2001-03-03)
            return _let(t, f"date_trunc('month', _v) + INTERVAL ({months}) MONTH + (day(_v) - 1) * INTERVAL 1 DAY"
                           " + (_v - date_trunc('day', _v))")
        if value == int(value):
            return _duck(f"({t} + INTERVAL ({int(value)}) {duck_unit})")
        seconds = {"DAY": 86400, "HOUR": 3600, "MINUTE": 60, "SECOND": 1}[duck_unit]
        return _duck(f"({t} + to_microseconds(CAST(round({value!r} * {seconds * 1_000_000}) AS BIGINT)))")
    m = _MOD_WEEKDAY.fullmatch(low)
    if m:
        n = int(m.group(1))
        if n > 6:
            raise DialectUnsupported(source, "sqlite", f"modifier {modifier!r}")
        return _let(t, f"_v + ((({n} - dayofweek(_v)) + 7) % 7) * INTERVAL 1 DAY")
    m = _MOD_HMS.fullmatch(low)
    if m:
        sign, hh, mm, ss = m.groups()
        micros = round((int(hh) * 3600 + int(mm) * 60 + float(ss or 0)) * 1_000_000) * (-1 if sign == "-" else 1)
        return _duck(f"({t} + to_microseconds({micros}))")
    if low in UNSUPPORTED_MODIFIERS:
        raise DialectUnsupported(source, "sqlite", f"modifier {modifier!r} depends on the time zone or on numeric time values")
    raise DialectUnsupported(source, "sqlite", f"modifier {modifier!r}")


def _jd(t: str) -> str:
    """SQLite's Julian day of the DuckDB TIMESTAMP text ``t``: integer milliseconds since the Julian
    epoch (Unix epoch = 210866760000000 ms) divided by 86400000.0, as SQLite's ``iJD`` (date.c)."""
    return f"((epoch_ms({t}) + 210866760000000) / 86400000.0)"


def _format(ts: exp.Expression, fmt: str, source: str) -> exp.Expression:
    """SQLite ``strftime(fmt, ...)`` of ``ts``: DuckDB strftime pieces and computed codes."""
    t = ts.sql("duckdb")
    codes = re.findall(r"%(.)", fmt)
    if fmt.strip() in ("%J", "%s"):
        expr = _duck(f"CAST(printf('%.16g', {_jd(t)}) AS DOUBLE)" if fmt.strip() == "%J"
                     else f"CAST(floor(epoch_us({t}) / 1000000) AS BIGINT)")
        expr.meta[NUMERIC] = "real" if fmt.strip() == "%J" else "int"
        return expr
    parts: list[str] = []
    buf = ""
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "%" and i + 1 < len(fmt):
            code = fmt[i + 1]
            if code in STRFTIME_CODES:
                buf += STRFTIME_CODES[code]
            elif code in STRFTIME_COMPUTED:
                if buf:
                    parts.append(f"strftime({t}, {exp.Literal.string(buf).sql('duckdb')})")
                    buf = ""
                parts.append(f"printf('%.16g', {_jd(t)})" if code == "J"
                             else f"CAST(CAST(floor(epoch_us({t}) / 1000000) AS BIGINT) AS VARCHAR)")
            else:
                raise DialectUnsupported(source, "sqlite", f"strftime code %{code}")
            i += 2
            continue
        buf += "%%" if ch == "%" else ch
        i += 1
    if buf or not parts:
        parts.append(f"strftime({t}, {exp.Literal.string(buf).sql('duckdb')})")
    expr = _duck(" || ".join(parts) if len(parts) > 1 else parts[0])
    if codes and all(c in INTEGER_CODES for c in codes) and re.fullmatch(r"(%.)+", fmt.strip()):
        expr.meta[NUMERIC] = "int"
    elif codes and all(c in INTEGER_CODES or c in ("f", "J") for c in codes) and re.fullmatch(r"(%.)+", fmt.strip()):
        expr.meta[NUMERIC] = "real"
    return expr


def translate_time_call(name: str, args: list[exp.Expression], now: dt.datetime | None, source: str) -> exp.Expression:
    """``_translate_time_call`` with every generated node marked ``GENERATED``."""
    return _mark(_translate_time_call(name, args, now, source))


def _translate_time_call(name: str, args: list[exp.Expression], now: dt.datetime | None, source: str) -> exp.Expression:
    """A SQLite date/time function call (``name`` lower-cased, its arguments) as a DuckDB expression.

    Raises:
        DialectUnsupported: a non-literal format or modifier, or one not carried over.
    """
    if name == "strftime":
        if not args or not isinstance(args[0], exp.Literal) or not args[0].is_string:
            raise DialectUnsupported(source, "sqlite", "strftime with a format that is not a text literal")
        fmt, args = args[0].this, args[1:]
    if not args:
        args = [exp.Literal.string("now")]  # SQLite: date() is date('now')
    mods = []
    for a in args[1:]:
        if not isinstance(a, exp.Literal) or not a.is_string:
            raise DialectUnsupported(source, "sqlite", f"{name}() modifier that is not a text literal: {a.sql('sqlite')}")
        mods.append(a.this)
    if mods and mods[0].strip().lower() == "unixepoch":
        ts = _duck(f"make_timestamp(CAST(round(CAST({args[0].sql('duckdb')} AS DOUBLE) * 1000000) AS BIGINT))")
        mods = mods[1:]
    else:
        ts = time_value(args[0], now, source)
    for m in mods:
        ts = apply_modifier(ts, m, source)
    t = ts.sql("duckdb")
    if name == "date":
        return _duck(f"strftime({t}, '%Y-%m-%d')")
    if name == "time":
        return _duck(f"strftime({t}, '%H:%M:%S')")
    if name == "datetime":
        return _duck(f"strftime({t}, '%Y-%m-%d %H:%M:%S')")
    if name == "julianday":
        return _duck(_jd(t))
    if name == "unixepoch":
        return _duck(f"CAST(floor(epoch_us({t}) / 1000000) AS BIGINT)")
    return _format(ts, fmt, source)
