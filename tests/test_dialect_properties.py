"""Property: a SQLite expression carried over to DuckDB returns what SQLite returns (issue 14, part 2).

hypothesis draws values (integers with negatives and zero, reals, timestamps from 1900 to 2200)
and SQLite idioms (integer division and modulo, date modifiers in sequence, strftime formats);
SQLite (Python's sqlite3) and DuckDB run the same one-row table, SQLite the agent's text and
DuckDB ``to_duckdb``'s translation. Any difference is a translation that is not faithful.
"""

from __future__ import annotations

import datetime as dt
import sqlite3

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.sql import DialectUnsupported, to_duckdb

SCHEMA = {"t": {"a": "BIGINT", "b": "BIGINT", "x": "DOUBLE", "ts": "TIMESTAMP", "s": "VARCHAR"}}
NOW = dt.datetime(2100, 12, 31, 23, 59, 0)

ints = st.integers(min_value=-10_000, max_value=10_000)
reals = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(lambda v: round(v, 3))
times = st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 12, 31)).map(lambda d: d.replace(microsecond=0))
modifiers = st.lists(st.one_of(
    st.sampled_from(["start of day", "start of month", "start of year", "weekday 0", "weekday 3", "weekday 6"]),
    st.builds(lambda n, u: f"{n:+d} {u}", st.integers(-40, 40), st.sampled_from(["days", "hours", "minutes", "seconds", "months", "years", "day", "month"])),
    st.builds(lambda n: f"{n:+.1f} days", st.floats(-10, 10, allow_nan=False)),
    st.builds(lambda h, m: f"+{h:02d}:{m:02d}", st.integers(0, 23), st.integers(0, 59)),
), max_size=4)
formats = st.lists(st.sampled_from(["%Y", "%m", "%d", "%H", "%M", "%S", "%j", "%w", "%W", "%s", "%f", "%J", "%%", "-", " ", "T"]),
                   min_size=1, max_size=6).map("".join)


_LITE = sqlite3.connect(":memory:", check_same_thread=False)
_LITE.execute("CREATE TABLE t (a INTEGER, b INTEGER, x REAL, ts TEXT, s TEXT)")
_DUCK = duckdb.connect()
_DUCK.execute("CREATE TABLE t (a BIGINT, b BIGINT, x DOUBLE, ts TIMESTAMP, s VARCHAR)")


def _both(sql: str, a: int, b: int, x: float, ts: dt.datetime, s: str = "abc") -> tuple[list, list]:
    """``sql`` on a one-row table in SQLite (as written, "now" pinned as EHRSQL does) and in DuckDB (translated)."""
    _LITE.execute("DELETE FROM t")
    _LITE.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", (a, b, x, ts.strftime("%Y-%m-%d %H:%M:%S"), s))
    _DUCK.execute("DELETE FROM t")
    _DUCK.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", (a, b, x, ts, s))
    pinned = NOW.strftime("%Y-%m-%d %H:%M:%S")
    want = _LITE.execute(sql.replace("'now'", f"'{pinned}'")).fetchall()
    got = _DUCK.execute(to_duckdb(sql, "sqlite", schema=SCHEMA, now=NOW)).fetchall()
    return want, got


def _same(want: list, got: list) -> bool:
    def norm(v: object) -> object:
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, (int, float)):
            return float(f"{float(v):.12g}")
        return v
    return [tuple(map(norm, r)) for r in want] == [tuple(map(norm, r)) for r in got]


FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(a=ints, b=ints, x=reals)
def test_integer_division_modulo_and_casts_follow_sqlite(a: int, b: int, x: float) -> None:
    for sql in ("SELECT a / b, a % b, b / 3, a * 1.0 / b, x / 2, CAST(x AS INTEGER), a / 0, x % 3, round(x, 1), "
                "round(x), max(a, b, NULL), abs(a) / 7, (a > b) + 1 FROM t",
                "SELECT total(a), avg(a > b), sum(a) / count(*), count(*) / 2 FROM t"):
        want, got = _both(sql, a, b, x, dt.datetime(2000, 1, 1))
        assert _same(want, got), (sql, want, got)


@FAST
@given(ts=times, mods=modifiers)
def test_date_modifiers_follow_sqlite(ts: dt.datetime, mods: list[str]) -> None:
    args = "".join(f", '{m}'" for m in mods)
    sql = f"SELECT datetime(ts{args}), date(ts{args}), julianday(ts{args}), datetime('now'{args}) FROM t"
    want, got = _both(sql, 1, 1, 1.0, ts)
    assert _same(want, got), (sql, want, got)


@FAST
@given(ts=times, fmt=formats)
def test_strftime_formats_follow_sqlite(ts: dt.datetime, fmt: str) -> None:
    sql = f"SELECT strftime('{fmt}', ts), strftime('%J', ts) - strftime('%J', '2000-01-01 12:00'), strftime('%Y', ts) - 1900 FROM t"
    want, got = _both(sql, 1, 1, 1.0, ts)
    if fmt.strip() in ("%J", "%s"):  # returned as a number (SQLite: its text); equal as numbers
        want = [tuple(float(v) if isinstance(v, str) else v for v in r) for r in want]
    assert _same(want, got), (sql, want, got)


@FAST
@given(ts=times, s=st.text(alphabet="abcXYZ%_ ", max_size=6), p=st.text(alphabet="abcABC%_", max_size=4))
def test_text_semantics_follow_sqlite(ts: dt.datetime, s: str, p: str) -> None:
    sql = (f"SELECT s LIKE '{p}', s NOT LIKE '{p}', ts > '2100', substr(ts, 1, 7), ts LIKE '19%', "
           f"length(ts), ts = '{ts:%Y-%m-%d %H:%M:%S}' FROM t WHERE s = \"{s}\" OR 1 = 1")
    want, got = _both(sql, 1, 1, 1.0, ts, s)
    assert _same(want, got), (sql, want, got)


@pytest.mark.parametrize("sql", [
    "SELECT datetime(ts, 'localtime') FROM t", "SELECT datetime(ts, '+1.5 months') FROM t",
    "SELECT strftime('%e', ts) FROM t", "SELECT s * 2 FROM t", "SELECT strftime(s, ts) FROM t",
])
def test_unsupported_idioms_are_refused_not_approximated(sql: str) -> None:
    with pytest.raises(DialectUnsupported):
        to_duckdb(sql, "sqlite", schema=SCHEMA, now=NOW)
