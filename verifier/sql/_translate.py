"""SQLite and PostgreSQL evidence carried over to DuckDB with the source dialect's semantics.

ARCHITECTURE.md section 4 (Noise step 4). sqlglot transpiles the syntax; these passes fix
what it leaves behind, reading the rule tables of ``verifier.sql._dialects``:

SQLite (SQLite docs: "Datatypes In SQLite", "SQL Language Expressions", "Date And Time
Functions", "Core Functions", "Aggregate Functions"):
    * a double-quoted name that is no column, alias or table is a string literal
      (``WHERE gender = "F"``; SQLite docs, "SQLite Keywords": the double-quoted string
      literal misfeature);
    * TIMESTAMP/DATE columns are the ISO text SQLite stores (``SQLITE_TEXT_FORMAT``), so
      text comparison, ``LIKE``, ``substr`` and ``min``/``max`` behave as in SQLite;
    * ``date``/``time``/``datetime``/``julianday``/``unixepoch``/``strftime`` with their
      modifiers and formats (``verifier.sql._sqlite_time``), ``'now'`` and ``CURRENT_*`` the
      pinned dataset time;
    * ``a / b`` of two integers is integer division truncated toward zero, ``/`` and ``%`` by
      zero are NULL, ``%`` works on integers, text from ``strftime`` is read as a number in
      arithmetic, comparisons used as numbers are 0/1, ``CAST(real AS INTEGER)`` truncates,
      ``round`` rounds the decimal value half away from zero and returns a real, ``total``
      is a real sum that is 0.0 on no rows, ``LIKE`` ignores ASCII case, ``NUMERIC``/
      ``REAL`` casts are 8-byte reals;
    * NULLs sort first ascending (sqlglot's ``NULLS FIRST``);
    * bare columns beside a single ``min()``/``max()`` come from that row (``arg_min``/``arg_max``).
PostgreSQL (PostgreSQL docs, 9.3 "Mathematical Functions and Operators", 8.1 "Numeric Types",
9.9.5 "Current Date/Time"):
    * integer ``/`` integer truncates; a bare ``numeric`` is exact (``DECIMAL(38, 10)`` here,
      not DuckDB's ``DECIMAL(18, 3)``); ``now()`` and friends are the pinned dataset time;
      NULLs sort last ascending and first descending (sqlglot).
What cannot be carried over faithfully raises ``DialectUnsupported`` (a function with no
faithful equivalent, a modifier depending on the time zone, an integer division whose operand
types cannot be inferred, text arithmetic, ...). The DuckDB text produced is checked again
by the read-only allowlist.
"""

from __future__ import annotations

import datetime as dt
import os
from functools import lru_cache
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.dialects.sqlite import SQLite

from ..contract import InputError, UnsafeQueryError
from ._dialects import POSTGRES_NOW_FUNCTIONS, POSTGRES_UNSUPPORTED_FUNCTIONS
from ._safety import DIALECTS, MAX_QUERY_CHARS, checked_statement, parse_checked
from ._sqlite_passes import sqlite_passes
from ._sqlite_time import TIME_FUNCTIONS, now_expr
from ._sqltypes import Schema, cast, fail, is_int, post_order, qualified, refuse_functions


class _SQLiteSource(SQLite):
    """SQLite as agents write it, with its date functions kept as plain calls (this module
    translates them with SQLite's semantics instead of sqlglot's approximations)."""

    class Parser(SQLite.Parser):
        FUNCTIONS = {k: v for k, v in SQLite.Parser.FUNCTIONS.items() if k.lower() not in TIME_FUNCTIONS}


def _parse_source(sql: str, dialect: str) -> exp.Expression:
    """Parse and check one statement of ``dialect`` (the allowlist of ``_safety``)."""
    if not isinstance(sql, str) or not sql.strip():
        raise UnsafeQueryError(str(sql), "empty query")
    if len(sql) > MAX_QUERY_CHARS:
        raise UnsafeQueryError(sql[:200], f"query is {len(sql)} characters long; at most {MAX_QUERY_CHARS} are accepted")
    read = _SQLiteSource if dialect == "sqlite" else Postgres
    return checked_statement(sql, dialect, lambda: sqlglot.parse(sql, read=read))


# ---------------------------------------------------------------- schema
@lru_cache(maxsize=16)
def _schema_cached(path: str, mtime: float) -> dict[str, dict[str, str]]:
    from ._execute import open_readonly

    con = open_readonly(path)
    try:
        rows = con.execute("SELECT table_name, column_name, data_type FROM information_schema.columns "
                           "ORDER BY table_name, ordinal_position").fetchall()
    finally:
        con.close()
    out: dict[str, dict[str, str]] = {}
    for table, column, dtype in rows:
        out.setdefault(str(table).lower(), {})[str(column).lower()] = str(dtype)
    return out


def schema_of(db: str | Path) -> dict[str, dict[str, str]]:
    """``{table: {column: DuckDB type}}`` of the database (lower-cased names), read once per file version.

    Raises:
        InputError: the file does not exist.
    """
    path = str(Path(db).resolve())
    if not os.path.isfile(path):
        raise InputError("db", path, "database file not found")
    return _schema_cached(path, os.path.getmtime(path))


# ---------------------------------------------------------------- postgres
def _pg_is_int(node: exp.Expression) -> bool | None:
    """``is_int`` with PostgreSQL's result types where they differ from DuckDB's (PostgreSQL docs
    9.9.1: ``EXTRACT`` returns numeric, ``date_part`` double precision; 9.21: ``sum`` of bigint
    is numeric, of smallint/integer bigint)."""
    inner = node.unnest()
    if isinstance(inner, exp.Extract) or (isinstance(inner, exp.Anonymous) and str(inner.this).lower() == "date_part"):
        return False
    if isinstance(inner, exp.Sum):
        arg = inner.this.type if inner.this is not None else None
        if arg is None or arg.this == exp.DataType.Type.UNKNOWN:
            return None
        return arg.this in (exp.DataType.Type.INT, exp.DataType.Type.SMALLINT, exp.DataType.Type.TINYINT)
    return is_int(node)


def _postgres(tree: exp.Expression, sql: str, schema: Schema, now: dt.datetime | None) -> exp.Expression:
    refuse_functions(tree, POSTGRES_UNSUPPORTED_FUNCTIONS, sql, "postgres")
    if now is not None:
        for node in list(tree.find_all(exp.CurrentTimestamp, exp.CurrentDate, exp.CurrentTime, exp.Anonymous)):
            if isinstance(node, exp.Anonymous) and str(node.this).lower() not in POSTGRES_NOW_FUNCTIONS:
                continue
            pinned = now_expr(now)
            node.replace(cast(pinned, "DATE") if isinstance(node, exp.CurrentDate) else pinned)
    for dtype in list(tree.find_all(exp.DataType)):
        if dtype.this == exp.DataType.Type.DECIMAL and not dtype.expressions:
            dtype.replace(exp.DataType.build("DECIMAL(38, 10)"))  # PostgreSQL's bare numeric is exact
    tree = qualified(tree, schema, sql, "postgres")
    for op in post_order(tree, exp.Div):
        ia, ib = _pg_is_int(op.this), _pg_is_int(op.expression)
        if ia and ib:
            op.replace(exp.Paren(this=exp.IntDiv(this=op.this, expression=op.expression)))
        elif (ia is None and ib is not False) or (ib is None and ia is not False):
            raise fail(sql, "postgres", f"the operand types of {op.sql('postgres')} cannot be inferred "
                                         "(PostgreSQL divides integers with truncation)")
        else:
            op.set("typed", False)  # numeric or real division: sqlglot must not truncate it
    return tree


# ---------------------------------------------------------------- entry point
@lru_cache(maxsize=16384)
def _to_duckdb_cached(sql: str, dialect: str, schema_key: int, now: dt.datetime | None) -> str:
    schema = _SCHEMAS[schema_key]
    tree = _parse_source(sql, dialect)
    tree = sqlite_passes(tree, sql, schema, now) if dialect == "sqlite" else _postgres(tree, sql, schema, now)
    try:
        text = tree.sql(dialect="duckdb")
    except Exception as exc:  # noqa: BLE001 - generator gap
        raise fail(sql, dialect, f"cannot be rendered as DuckDB SQL: {type(exc).__name__}: {exc}") from None
    try:
        return parse_checked(text, "duckdb")[0]
    except UnsafeQueryError as exc:
        raise fail(sql, dialect, f"the translation does not pass the DuckDB checks: {exc.reason}") from None


_SCHEMAS: dict[int, Schema] = {}


def to_duckdb(sql: str, dialect: str, *, schema: Schema | None = None, now: dt.datetime | None = None) -> str:
    """``sql`` written for ``dialect``, as checked DuckDB SQL with the source dialect's semantics.

    Args:
        sql: one statement as the agent wrote it.
        dialect: ``duckdb`` (checked and returned as ``check_read_only`` does), ``sqlite`` or ``postgres``.
        schema: ``{table: {column: DuckDB type}}`` of the database it runs on (``schema_of``);
            needed for SQLite's double-quoted literals, text timestamps and integer division.
        now: the dataset's "now" (naive, the database's clock): SQLite ``'now'``/``CURRENT_*``
            and PostgreSQL ``now()``/``CURRENT_*`` become this time; ``None`` leaves them
            volatile (the recorded output of such a query is not compared).

    Returns:
        The DuckDB text to execute (passed by the read-only allowlist).

    Raises:
        InputError: ``dialect`` is not one of ``DIALECTS``.
        UnsafeQueryError: the source statement is not a read (as ``check_read_only``).
        DialectUnsupported: the query cannot be carried over faithfully (``reason`` says why).
    """
    if dialect not in DIALECTS:
        raise InputError("dialect", dialect, f"expected one of {', '.join(DIALECTS)}")
    if dialect == "duckdb":
        return parse_checked(sql, "duckdb")[0]
    frozen = tuple(sorted((t, tuple(sorted(c.items()))) for t, c in (schema or {}).items()))
    key = hash(frozen)
    _SCHEMAS.setdefault(key, {t: dict(c) for t, c in frozen})
    return _to_duckdb_cached(sql, dialect, key, now)
