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

Schema = Mapping[str, Mapping[str, str]]

INT = exp.DataType.INTEGER_TYPES
TEXT = exp.DataType.TEXT_TYPES
TIME = {exp.DataType.Type.TIMESTAMP, exp.DataType.Type.DATE, exp.DataType.Type.DATETIME,
         exp.DataType.Type.TIMESTAMPNTZ}
PREDICATES = (exp.Predicate, exp.Not, exp.And, exp.Or, exp.Connector)
ARITH = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)


def fail(sql: str, dialect: str, reason: str) -> DialectUnsupported:
    return DialectUnsupported(sql, dialect, reason)


def names_in(tree: exp.Expression, schema: Schema) -> set[str]:
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


def qualified(tree: exp.Expression, schema: Schema, sql: str, dialect: str) -> exp.Expression:
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
        raise fail(sql, dialect, f"cannot resolve the query's columns against the schema ({type(exc).__name__}: {exc})") from None
    for select, aliased in zip(tree.find_all(exp.Select), before):
        for p, was in zip(list(select.expressions), aliased):
            if not was and isinstance(p, exp.Alias):  # added by qualification: output names stay DuckDB's own
                p.replace(p.this)
    return annotate_types(tree, schema=dict(schema))


def type_of(node: exp.Expression) -> exp.DataType | None:
    t = node.type
    if t is None or t.this == exp.DataType.Type.UNKNOWN:
        return None
    return t


def is_int(node: exp.Expression) -> bool | None:
    """True/False when the annotated type is known, None when it is not."""
    if node.meta.get(NUMERIC):
        return node.meta[NUMERIC] == "int"
    if isinstance(node, exp.Paren):
        return is_int(node.this)
    t = type_of(node)
    if t is None:
        return None
    return t.this in INT


def cast(node: exp.Expression, to: str) -> exp.Expression:
    return exp.Cast(this=node, to=exp.DataType.build(to))


def nullif0(node: exp.Expression) -> exp.Expression:
    return exp.Nullif(this=node, expression=exp.Literal.number(0))


def refuse_functions(tree: exp.Expression, names: frozenset[str], sql: str, dialect: str) -> None:
    for f in tree.find_all(exp.Func):
        name = _func_name(f)
        if name in names:
            raise fail(sql, dialect, f"function {name}() has no faithful DuckDB equivalent")


def post_order(tree: exp.Expression, kind: Any) -> list[exp.Expression]:
    return [n for n in reversed(list(tree.walk(bfs=False))) if isinstance(n, kind)]

