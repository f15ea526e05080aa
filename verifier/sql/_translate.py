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
from typing import Any, Mapping

import sqlglot
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.dialects.sqlite import SQLite
from sqlglot.errors import ParseError, TokenError

from ..contract import InputError, UnsafeQueryError
from ._dialects import POSTGRES_NOW_FUNCTIONS, POSTGRES_UNSUPPORTED_FUNCTIONS, SQLITE_TEXT_FORMAT, SQLITE_UNSUPPORTED_FUNCTIONS
from ._safety import DIALECTS, MAX_QUERY_CHARS, _check_root, _func_name, _walk_checks, parse_checked
from ._sqlite_time import GENERATED, NUMERIC, TIME_FUNCTIONS, DialectUnsupported, now_expr, translate_time_call

Schema = Mapping[str, Mapping[str, str]]


class _SQLiteSource(SQLite):
    """SQLite as agents write it, with its date functions kept as plain calls (this module
    translates them with SQLite's semantics instead of sqlglot's approximations)."""

    class Parser(SQLite.Parser):
        FUNCTIONS = {k: v for k, v in SQLite.Parser.FUNCTIONS.items() if k.lower() not in TIME_FUNCTIONS}


_INT = exp.DataType.INTEGER_TYPES
_TEXT = exp.DataType.TEXT_TYPES
_TIME = {exp.DataType.Type.TIMESTAMP, exp.DataType.Type.DATE, exp.DataType.Type.DATETIME,
         exp.DataType.Type.TIMESTAMPNTZ}
_PREDICATES = (exp.Predicate, exp.Not, exp.And, exp.Or, exp.Connector)
_ARITH = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)


def _fail(sql: str, dialect: str, reason: str) -> DialectUnsupported:
    return DialectUnsupported(sql, dialect, reason)


def _parse_source(sql: str, dialect: str) -> exp.Expression:
    """Parse and check one statement of ``dialect`` (the allowlist of ``_safety``)."""
    if not isinstance(sql, str) or not sql.strip():
        raise UnsafeQueryError(str(sql), "empty query")
    if len(sql) > MAX_QUERY_CHARS:
        raise UnsafeQueryError(sql[:200], f"query is {len(sql)} characters long; at most {MAX_QUERY_CHARS} are accepted")
    read = _SQLiteSource if dialect == "sqlite" else Postgres
    try:
        statements = [s for s in sqlglot.parse(sql, read=read) if s is not None]
    except (ParseError, TokenError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UnsafeQueryError(sql, f"not parseable as {dialect} SQL: {first}") from None
    except Exception as exc:  # noqa: BLE001 - sqlglot internals on odd input
        raise UnsafeQueryError(sql, f"not parseable as {dialect} SQL: {type(exc).__name__}: {exc}") from None
    if not statements:
        raise UnsafeQueryError(sql, "empty query")
    if len(statements) > 1:
        raise UnsafeQueryError(sql, f"{len(statements)} statements; exactly one is allowed")
    root = statements[0]
    _check_root(sql, root)
    _walk_checks(sql, root)
    return root


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


# ---------------------------------------------------------------- shared helpers
def _names(tree: exp.Expression, schema: Schema) -> set[str]:
    """Every name a double-quoted identifier may resolve to: columns, tables, aliases, CTEs."""
    names = {c for cols in schema.values() for c in cols} | set(schema)
    for node in tree.walk():
        if isinstance(node, (exp.Alias, exp.TableAlias, exp.CTE)):
            if node.alias:
                names.add(node.alias.lower())
        if isinstance(node, exp.TableAlias):
            names.update(c.name.lower() for c in node.columns)
        if isinstance(node, exp.Table):
            names.add(node.name.lower())
    return names


def _qualified(tree: exp.Expression, schema: Schema, sql: str, dialect: str) -> exp.Expression:
    """Identifiers normalised, columns qualified and types annotated (sqlglot's optimizer),
    without the output aliases qualification adds."""
    from sqlglot.optimizer.annotate_types import annotate_types
    from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
    from sqlglot.optimizer.qualify_columns import qualify_columns
    from sqlglot.optimizer.qualify_tables import qualify_tables

    before = [[isinstance(p, exp.Alias) for p in s.expressions] for s in tree.find_all(exp.Select)]
    try:
        tree = normalize_identifiers(tree, dialect="duckdb")
        tree = qualify_tables(tree)
        tree = qualify_columns(tree, dict(schema), expand_alias_refs=False, expand_stars=False)
    except Exception as exc:  # noqa: BLE001 - sqlglot cannot resolve the columns: types unknown
        raise _fail(sql, dialect, f"cannot resolve the query's columns against the schema ({type(exc).__name__}: {exc})") from None
    for select, aliased in zip(tree.find_all(exp.Select), before):
        for p, was in zip(list(select.expressions), aliased):
            if not was and isinstance(p, exp.Alias):  # added by qualification: output names stay DuckDB's own
                p.replace(p.this)
    return annotate_types(tree, schema=dict(schema))


def _type(node: exp.Expression) -> exp.DataType | None:
    t = node.type
    if t is None or t.this == exp.DataType.Type.UNKNOWN:
        return None
    return t


def _is_int(node: exp.Expression) -> bool | None:
    """True/False when the annotated type is known, None when it is not."""
    if node.meta.get(NUMERIC):
        return node.meta[NUMERIC] == "int"
    if isinstance(node, exp.Paren):
        return _is_int(node.this)
    t = _type(node)
    if t is None:
        return None
    return t.this in _INT


def _cast(node: exp.Expression, to: str) -> exp.Expression:
    return exp.Cast(this=node, to=exp.DataType.build(to))


def _nullif0(node: exp.Expression) -> exp.Expression:
    return exp.Nullif(this=node, expression=exp.Literal.number(0))


def _unsupported_functions(tree: exp.Expression, names: frozenset[str], sql: str, dialect: str) -> None:
    for f in tree.find_all(exp.Func):
        name = _func_name(f)
        if name in names:
            raise _fail(sql, dialect, f"function {name}() has no faithful DuckDB equivalent")


def _post_order(tree: exp.Expression, kind: Any) -> list[exp.Expression]:
    return [n for n in reversed(list(tree.walk(bfs=False))) if isinstance(n, kind)]


# ---------------------------------------------------------------- sqlite
def _sqlite_text_time(tree: exp.Expression, sql: str, schema: Schema, now: dt.datetime | None) -> exp.Expression:
    """Passes that need no types: double-quoted literals, date functions, now, LIKE, casts, round, total."""
    names = _names(tree, schema)
    for col in list(tree.find_all(exp.Column)):
        ident = col.this
        if isinstance(ident, exp.Identifier) and ident.quoted and not col.table and ident.name.lower() not in names:
            col.replace(exp.Literal.string(ident.name))
    _unsupported_functions(tree, SQLITE_UNSUPPORTED_FUNCTIONS, sql, "sqlite")
    for node in _post_order(tree, (exp.Anonymous, exp.CurrentTimestamp, exp.CurrentDate, exp.CurrentTime)):
        if isinstance(node, exp.Anonymous):
            name = str(node.this).lower()
            if name in TIME_FUNCTIONS:
                node.replace(translate_time_call(name, list(node.expressions), now, sql))
            elif name == "total":
                arg = node.expressions[0] if node.expressions else exp.Null()
                node.replace(exp.Coalesce(this=exp.Sum(this=_cast(arg, "DOUBLE")), expressions=[exp.Literal.number("0.0")]))
            continue
        if isinstance(node.parent, exp.Anonymous) and str(node.parent.this).lower() in TIME_FUNCTIONS:
            continue  # a time value: translate_time_call pins it
        fmt = "%Y-%m-%d" if isinstance(node, exp.CurrentDate) else "%Y-%m-%d %H:%M:%S"
        if now is not None:
            node.replace(exp.Literal.string(now.strftime(fmt)))
        else:
            node.replace(exp.func("strftime", now_expr(None), exp.Literal.string(fmt)))
    for like in list(tree.find_all(exp.Like)):
        pattern = like.expression
        if isinstance(pattern, exp.Literal) and not pattern.this.isascii():
            raise _fail(sql, "sqlite", "LIKE with a non-ASCII pattern (SQLite folds ASCII case only)")
        like.replace(exp.ILike(**like.args))  # keeps NOT (``negate``) and ESCAPE
    for cast in list(tree.find_all(exp.Cast)):
        to = cast.to
        if to.this in (exp.DataType.Type.DECIMAL, exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE):
            cast.set("to", exp.DataType.build("DOUBLE"))  # SQLite REAL / NUMERIC affinity: an 8-byte real
    for rnd in _post_order(tree, exp.Round):
        digits = rnd.args.get("decimals")
        inner = rnd.this
        if digits is None:
            rnd.replace(_cast(exp.Round(this=_cast(inner, "DOUBLE")), "DOUBLE"))
        else:
            rnd.replace(_cast(exp.Round(this=_cast(inner, "DECIMAL(38, 12)"), decimals=digits), "DOUBLE"))
    return tree


def _sqlite_typed(tree: exp.Expression, sql: str, schema: Schema) -> exp.Expression:
    """Passes that need the annotated types."""
    # comparisons of a text column with a number: SQLite applies the column's TEXT affinity to the number
    for cmp in list(tree.find_all(exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)):
        if cmp.meta.get(GENERATED):
            continue
        for side, other in ((cmp.this, cmp.expression), (cmp.expression, cmp.this)):
            t = _type(side)
            if isinstance(side, exp.Column) and t is not None and (t.this in _TEXT or t.this in _TIME) \
                    and isinstance(other, exp.Literal) and not other.is_string:
                other.replace(exp.Literal.string(other.this))
            elif side.meta.get(NUMERIC) and isinstance(other, exp.Literal) and not other.is_string:
                raise _fail(sql, "sqlite", "a strftime() text compared with a number (SQLite orders every number before any text)")
    # TIMESTAMP/DATE columns are ISO text in SQLite
    for col in list(tree.find_all(exp.Column)):
        t = _type(col)
        if t is None or t.this not in _TIME:
            continue
        fmt = SQLITE_TEXT_FORMAT["DATE" if t.this == exp.DataType.Type.DATE else "TIMESTAMP"]
        text = exp.func("strftime", col.copy(), exp.Literal.string(fmt))
        text.type = exp.DataType.build("VARCHAR")
        if isinstance(col.parent, exp.Select) and col.arg_key == "expressions":
            col.replace(exp.alias_(text, col.name))
        else:
            col.replace(text)
    # arithmetic: text read as numbers, predicates as 0/1, integer division, modulo
    for op in _post_order(tree, _ARITH):
        if op.meta.get(GENERATED):
            continue
        for key in ("this", "expression"):
            side = op.args.get(key)
            if side is None:
                continue
            kind = side.meta.get(NUMERIC)
            if kind:
                op.set(key, _cast(side, "BIGINT" if kind == "int" else "DOUBLE"))
                op.args[key].meta[NUMERIC] = kind
            elif isinstance(side.unnest(), _PREDICATES):
                op.set(key, _cast(side, "BIGINT"))
                op.args[key].meta[NUMERIC] = "int"
            elif (t := _type(side)) is not None and t.this in _TEXT:
                raise _fail(sql, "sqlite", f"arithmetic on text ({side.sql('sqlite')}): SQLite reads a numeric prefix")
        a, b = op.this, op.expression
        if isinstance(op, exp.Div):
            ia, ib = _is_int(a), _is_int(b)
            if ia and ib:
                divisor = b.this if isinstance(b, exp.Nullif) else b
                new = exp.Paren(this=exp.IntDiv(this=a, expression=_nullif0(divisor)))
                new.meta[NUMERIC] = "int"
                op.replace(new)
            elif ia is None and ib is None or (ia is None and ib) or (ib is None and ia):
                raise _fail(sql, "sqlite", f"the operand types of {op.sql('sqlite')} cannot be inferred "
                                           "(SQLite divides integers with truncation, reals exactly)")
        elif isinstance(op, exp.Mod):
            ia, ib = _is_int(a), _is_int(b)
            if ia is None or ib is None:
                raise _fail(sql, "sqlite", f"the operand types of {op.sql('sqlite')} cannot be inferred")
            a2 = a if ia else _cast(exp.func("trunc", a), "BIGINT")
            b2 = b if ib else _cast(exp.func("trunc", b), "BIGINT")
            op.replace(exp.Paren(this=exp.Mod(this=a2, expression=_nullif0(b2))))
    for agg in list(tree.find_all(exp.Sum, exp.Avg, exp.Min, exp.Max)):
        if agg.this is not None and isinstance(agg.this.unnest(), _PREDICATES):
            agg.set("this", _cast(agg.this, "BIGINT"))
    # CAST(real AS INTEGER) truncates toward zero in SQLite (DuckDB rounds)
    for cast in list(tree.find_all(exp.Cast)):
        if cast.meta.get(GENERATED):
            continue
        if cast.to.this in _INT and (t := _type(cast.this)) is not None and t.this in exp.DataType.REAL_TYPES:
            cast.set("this", exp.func("trunc", cast.this))
    return tree


def _own(node: exp.Expression, select: exp.Select) -> bool:
    """True when ``node`` belongs to ``select`` itself (not to a nested query)."""
    return node.find_ancestor(exp.Select) is select


def _sqlite_bare_columns(tree: exp.Expression) -> exp.Expression:
    """SQLite's bare columns beside a single ``min()``/``max()`` take their values from the row
    holding that minimum or maximum (SQLite docs, "The SELECT statement", 2.5 "Bare columns in an
    aggregate query"): ``arg_min``/``arg_max`` in DuckDB. Other bare columns are left (DuckDB
    refuses them; the query is then unsupported)."""
    for select in list(tree.find_all(exp.Select)):
        aggs = [a for a in select.find_all(exp.AggFunc) if _own(a, select)]
        extremes = [a for a in aggs if isinstance(a, (exp.Max, exp.Min)) and not a.expressions]
        if len(extremes) != 1:
            continue
        ext = extremes[0]
        keys = {g.sql() for g in (select.args.get("group").expressions if select.args.get("group") else [])}
        func = "arg_max" if isinstance(ext, exp.Max) else "arg_min"
        for proj in select.expressions:
            for col in list(proj.find_all(exp.Column)):
                if _own(col, select) and not col.find_ancestor(exp.AggFunc) and col.sql() not in keys:
                    col.replace(exp.func(func, col.copy(), ext.this.copy()))
    return tree


def _sqlite(tree: exp.Expression, sql: str, schema: Schema, now: dt.datetime | None) -> exp.Expression:
    tree = _sqlite_text_time(tree, sql, schema, now)
    tree = _qualified(tree, schema, sql, "sqlite")
    tree = _sqlite_typed(tree, sql, schema)
    return _sqlite_bare_columns(tree)


# ---------------------------------------------------------------- postgres
def _postgres(tree: exp.Expression, sql: str, schema: Schema, now: dt.datetime | None) -> exp.Expression:
    _unsupported_functions(tree, POSTGRES_UNSUPPORTED_FUNCTIONS, sql, "postgres")
    if now is not None:
        for node in list(tree.find_all(exp.CurrentTimestamp, exp.CurrentDate, exp.CurrentTime, exp.Anonymous)):
            if isinstance(node, exp.Anonymous) and str(node.this).lower() not in POSTGRES_NOW_FUNCTIONS:
                continue
            pinned = now_expr(now)
            node.replace(_cast(pinned, "DATE") if isinstance(node, exp.CurrentDate) else pinned)
    for dtype in list(tree.find_all(exp.DataType)):
        if dtype.this == exp.DataType.Type.DECIMAL and not dtype.expressions:
            dtype.replace(exp.DataType.build("DECIMAL(38, 10)"))  # PostgreSQL's bare numeric is exact
    tree = _qualified(tree, schema, sql, "postgres")
    for op in _post_order(tree, exp.Div):
        ia, ib = _is_int(op.this), _is_int(op.expression)
        if ia and ib:
            op.replace(exp.Paren(this=exp.IntDiv(this=op.this, expression=op.expression)))
        elif (ia is None and ib is not False) or (ib is None and ia is not False):
            raise _fail(sql, "postgres", f"the operand types of {op.sql('postgres')} cannot be inferred "
                                         "(PostgreSQL divides integers with truncation)")
    return tree


# ---------------------------------------------------------------- entry point
@lru_cache(maxsize=16384)
def _to_duckdb_cached(sql: str, dialect: str, schema_key: int, now: dt.datetime | None) -> str:
    schema = _SCHEMAS[schema_key]
    tree = _parse_source(sql, dialect)
    tree = _sqlite(tree, sql, schema, now) if dialect == "sqlite" else _postgres(tree, sql, schema, now)
    try:
        text = tree.sql(dialect="duckdb")
    except Exception as exc:  # noqa: BLE001 - generator gap
        raise _fail(sql, dialect, f"cannot be rendered as DuckDB SQL: {type(exc).__name__}: {exc}") from None
    try:
        return parse_checked(text, "duckdb")[0]
    except UnsafeQueryError as exc:
        raise _fail(sql, dialect, f"the translation does not pass the DuckDB checks: {exc.reason}") from None


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
