"""What the dialect passes share: sqlglot's column resolution and types, and small node builders.

``qualified`` runs sqlglot's optimizer passes (identifier normalisation, table and column
qualification, type annotation) against the database schema, without the output aliases
qualification adds (output names stay DuckDB's own). ``is_int`` reads the annotated type;
``None`` means unknown, and the passes then refuse what depends on it.
"""

from __future__ import annotations

from typing import Any, Mapping

from sqlglot import exp

from ._safety import _func_name
from ._sqlite_time import NUMERIC, DialectUnsupported

#: ``{table: {column: DuckDB type name}}``, lower-case names: what sqlglot's optimizer resolves against.
Schema = Mapping[str, Mapping[str, str]]

#: sqlglot's integer, text and time types (read on annotated nodes by the passes).
INT = exp.DataType.INTEGER_TYPES
TEXT = exp.DataType.TEXT_TYPES
TIME = {exp.DataType.Type.TIMESTAMP, exp.DataType.Type.DATE, exp.DataType.Type.DATETIME,
         exp.DataType.Type.TIMESTAMPNTZ}
#: Nodes whose value is a truth value (SQLite reads them as 0/1 in arithmetic and aggregates).
PREDICATES = (exp.Predicate, exp.Not, exp.And, exp.Or, exp.Connector)
#: Arithmetic operators whose operands the SQLite passes convert (``_sqlite_passes._sqlite_typed``).
ARITH = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)


def fail(sql: str, dialect: str, reason: str) -> DialectUnsupported:
    """The error a pass raises for what it cannot carry over faithfully (``raise fail(...)``).

    Args:
        sql: the query as the agent wrote it.
        dialect: its source dialect, ``"sqlite"`` or ``"postgres"``.
        reason: what cannot be carried over, in a phrase (shown in the verdict's details).

    Returns:
        A ``DialectUnsupported`` (not raised here), which the Noise path reports as
        ``EVIDENCE_DIALECT_UNSUPPORTED`` (ARCHITECTURE.md section 10).
    """
    return DialectUnsupported(sql, dialect, reason)


def names_in(tree: exp.Expression, schema: Schema) -> set[str]:
    """Every name a double-quoted identifier may resolve to: columns, tables, aliases, CTEs.

    Used by the SQLite rule that a double-quoted name resolving to nothing is a string literal
    (SQLite docs, "SQLite Keywords": the double-quoted string literal misfeature).

    Args:
        tree: the parsed query (not modified).
        schema: the database's tables and columns.

    Returns:
        Lower-case names: the schema's tables and columns, and the query's own table names,
        aliases (of expressions, tables and their column lists) and CTE names.
    """
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


def qualified(tree: exp.Expression, schema: Schema, sql: str, dialect: str) -> exp.Expression:
    """Identifiers normalised, columns qualified and types annotated (sqlglot's optimizer),
    without the output aliases qualification adds.

    Args:
        tree: the parsed query, already carried to DuckDB syntax (may be modified in place).
        schema: the database's tables and columns, against which columns are resolved.
        sql: the agent's query text (for the error).
        dialect: its source dialect (for the error).

    Returns:
        The tree with every column qualified by its table and every node's ``type`` annotated
        (``UNKNOWN`` where sqlglot cannot tell); projections keep the output names DuckDB
        would give them (aliases qualification added are removed again).

    Raises:
        DialectUnsupported: sqlglot cannot resolve the query's columns against ``schema``
            (an unknown or ambiguous column): the types the passes need are unknown.
    """
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
        raise fail(sql, dialect, f"cannot resolve the query's columns against the schema ({type(exc).__name__}: {exc})") from None
    for select, aliased in zip(tree.find_all(exp.Select), before):
        for p, was in zip(list(select.expressions), aliased):
            if not was and isinstance(p, exp.Alias):  # added by qualification: output names stay DuckDB's own
                p.replace(p.this)
    return annotate_types(tree, schema=dict(schema))


def type_of(node: exp.Expression) -> exp.DataType | None:
    """The type sqlglot annotated on ``node`` (after ``qualified``).

    Args:
        node: a node of an annotated tree.

    Returns:
        Its ``exp.DataType``, or None when it was not annotated or is ``UNKNOWN``: a pass then
        refuses what depends on the type rather than guess it.
    """
    t = node.type
    if t is None or t.this == exp.DataType.Type.UNKNOWN:
        return None
    return t


def is_int(node: exp.Expression) -> bool | None:
    """Whether ``node`` is an integer, for SQLite's integer division and modulo rules.

    Args:
        node: a node of an annotated tree. A ``strftime`` text marked ``NUMERIC`` (SQLite
            reads it as a number in arithmetic) counts by its mark; a parenthesis by its content.

    Returns:
        True/False when the annotated type (or the mark) is known, None when it is not.
    """
    if node.meta.get(NUMERIC):
        return node.meta[NUMERIC] == "int"
    if isinstance(node, exp.Paren):
        return is_int(node.this)
    t = type_of(node)
    if t is None:
        return None
    return t.this in INT


def cast(node: exp.Expression, to: str) -> exp.Expression:
    """``CAST(node AS to)``.

    Args:
        node: the expression cast (not copied: it moves into the new node).
        to: a DuckDB type name (``"BIGINT"``, ``"DOUBLE"``, ``"DECIMAL(38, 12)"``).

    Returns:
        A new ``exp.Cast`` node.
    """
    return exp.Cast(this=node, to=exp.DataType.build(to))


def nullif0(node: exp.Expression) -> exp.Expression:
    """``NULLIF(node, 0)``: a divisor that gives NULL on zero, as SQLite's ``/`` and ``%`` do
    (SQLite docs, "SQL Language Expressions": division or modulo by zero is NULL).

    Args:
        node: the divisor (not copied).

    Returns:
        A new ``exp.Nullif`` node.
    """
    return exp.Nullif(this=node, expression=exp.Literal.number(0))


def refuse_functions(tree: exp.Expression, names: frozenset[str], sql: str, dialect: str) -> None:
    """Refuse a query calling a function with no faithful DuckDB equivalent.

    Args:
        tree: the parsed query (not modified).
        names: lower-case function names refused for the dialect (``verifier.sql._dialects``:
            ``SQLITE_UNSUPPORTED_FUNCTIONS``, ``POSTGRES_UNSUPPORTED_FUNCTIONS``).
        sql: the agent's query text (for the error).
        dialect: its source dialect (for the error).

    Raises:
        DialectUnsupported: the first call of a function in ``names``, named.
    """
    for f in tree.find_all(exp.Func):
        name = _func_name(f)
        if name in names:
            raise fail(sql, dialect, f"function {name}() has no faithful DuckDB equivalent")


def post_order(tree: exp.Expression, kind: Any) -> list[exp.Expression]:
    """The nodes of ``tree`` of type ``kind``, children before their parents.

    A pass that replaces nodes visits them in this order so that an inner node is rewritten
    before the outer node that contains it (``round(round(x))``, ``a / (b / c)``).

    Args:
        tree: the parsed query.
        kind: an ``exp.Expression`` subclass or a tuple of them (as ``isinstance`` takes).

    Returns:
        A list (a snapshot: the tree may be modified while it is iterated).
    """
    return [n for n in reversed(list(tree.walk(bfs=False))) if isinstance(n, kind)]

