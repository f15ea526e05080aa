"""SQLite's semantics on the sqlglot tree (the SQLite half of ``verifier.sql._translate``; rules in its
module docstring, tables in ``verifier.sql._dialects``)."""

from __future__ import annotations

import datetime as dt

from sqlglot import exp

from ._dialects import SQLITE_TEXT_FORMAT, SQLITE_UNSUPPORTED_FUNCTIONS
from ._sqlite_time import GENERATED, NUMERIC, TIME_FUNCTIONS, now_expr, translate_time_call
from ._sqltypes import (
    ARITH,
    INT,
    PREDICATES,
    TEXT,
    TIME,
    Schema,
    cast,
    fail,
    is_int,
    names_in,
    nullif0,
    post_order,
    qualified,
    refuse_functions,
    type_of,
)


def _sqlite_text_time(tree: exp.Expression, sql: str, schema: Schema, now: dt.datetime | None) -> exp.Expression:
    """The SQLite rules that need no types, applied before qualification.

    Double-quoted names that resolve to nothing become string literals; date and time
    functions and ``CURRENT_*`` get SQLite's semantics and the pinned time; ``total`` is a real
    sum that is 0.0 on no rows; ``LIKE`` ignores ASCII case (``ILIKE``); ``DECIMAL``/``FLOAT``/
    ``DOUBLE`` casts are 8-byte reals; ``round`` rounds the decimal value and returns a real.
    Rule sources: ``verifier.sql._translate``'s module docstring (SQLite docs, "Date And Time
    Functions", "Core Functions", "Aggregate Functions", "Datatypes In SQLite").

    Args:
        tree: the parsed SQLite query (modified in place).
        sql: the agent's query text (for errors).
        schema: the database's tables and columns (which double-quoted names are names).
        now: the pinned dataset time for ``'now'`` and ``CURRENT_*``, or None for DuckDB's clock.

    Returns:
        The rewritten tree.

    Raises:
        DialectUnsupported: a function of ``SQLITE_UNSUPPORTED_FUNCTIONS``, a time modifier or
            format that cannot be carried over (``verifier.sql._sqlite_time``), or ``LIKE`` with a
            non-ASCII pattern (SQLite folds ASCII case only).
    """
    names = names_in(tree, schema)
    for col in list(tree.find_all(exp.Column)):
        ident = col.this
        if isinstance(ident, exp.Identifier) and ident.quoted and not col.table and ident.name.lower() not in names:
            col.replace(exp.Literal.string(ident.name))
    refuse_functions(tree, SQLITE_UNSUPPORTED_FUNCTIONS, sql, "sqlite")
    for node in post_order(tree, (exp.Anonymous, exp.CurrentTimestamp, exp.CurrentDate, exp.CurrentTime)):
        if isinstance(node, exp.Anonymous):
            name = str(node.this).lower()
            if name in TIME_FUNCTIONS:
                node.replace(translate_time_call(name, list(node.expressions), now, sql))
            elif name == "total":
                arg = node.expressions[0] if node.expressions else exp.Null()
                node.replace(exp.Coalesce(this=exp.Sum(this=cast(arg, "DOUBLE")), expressions=[exp.Literal.number("0.0")]))
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
            raise fail(sql, "sqlite", "LIKE with a non-ASCII pattern (SQLite folds ASCII case only)")
        like.replace(exp.ILike(**like.args))  # keeps NOT (``negate``) and ESCAPE
    for node in list(tree.find_all(exp.Cast)):
        to = node.to
        if to.this in (exp.DataType.Type.DECIMAL, exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE):
            node.set("to", exp.DataType.build("DOUBLE"))  # SQLite REAL / NUMERIC affinity: an 8-byte real
    for rnd in post_order(tree, exp.Round):
        digits = rnd.args.get("decimals")
        inner = rnd.this
        if digits is None:
            rnd.replace(cast(exp.Round(this=cast(inner, "DOUBLE")), "DOUBLE"))
        else:
            rnd.replace(cast(exp.Round(this=cast(inner, "DECIMAL(38, 12)"), decimals=digits), "DOUBLE"))
    return tree


def _sqlite_typed(tree: exp.Expression, sql: str, schema: Schema) -> exp.Expression:
    """The SQLite rules that need the annotated types, applied after ``qualified``.

    A number compared with a text or time column is compared as text (the column's TEXT
    affinity); TIMESTAMP/DATE columns become the ISO text SQLite stores (``SQLITE_TEXT_FORMAT``);
    in arithmetic, ``strftime`` text is read as a number and predicates as 0/1; integer ``/``
    truncates and ``/``, ``%`` by zero are NULL; ``%`` works on integers; ``sum``/``avg``/``min``/
    ``max`` of a predicate count 0/1; ``CAST(real AS INTEGER)`` truncates toward zero. Rule
    sources: SQLite docs, "Datatypes In SQLite" (affinity, 4.2 comparisons) and "SQL Language
    Expressions" (operators, CAST), as listed in ``verifier.sql._translate``.

    Args:
        tree: the qualified, type-annotated tree (modified in place).
        sql: the agent's query text (for errors).
        schema: the database's tables and columns.

    Returns:
        The rewritten tree.

    Raises:
        DialectUnsupported: a ``strftime`` text compared with a number, arithmetic on a text
            column, or a division or modulo whose operand types cannot be inferred.
    """
    # comparisons of a text column with a number: SQLite applies the column's TEXT affinity to the number
    for cmp in list(tree.find_all(exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)):
        if cmp.meta.get(GENERATED):
            continue
        for side, other in ((cmp.this, cmp.expression), (cmp.expression, cmp.this)):
            t = type_of(side)
            if isinstance(side, exp.Column) and t is not None and (t.this in TEXT or t.this in TIME) \
                    and isinstance(other, exp.Literal) and not other.is_string:
                other.replace(exp.Literal.string(other.this))
            elif side.meta.get(NUMERIC) and isinstance(other, exp.Literal) and not other.is_string:
                raise fail(sql, "sqlite", "a strftime() text compared with a number (SQLite orders every number before any text)")
    # TIMESTAMP/DATE columns are ISO text in SQLite
    for col in list(tree.find_all(exp.Column)):
        t = type_of(col)
        if t is None or t.this not in TIME:
            continue
        fmt = SQLITE_TEXT_FORMAT["DATE" if t.this == exp.DataType.Type.DATE else "TIMESTAMP"]
        text = exp.func("strftime", col.copy(), exp.Literal.string(fmt))
        text.type = exp.DataType.build("VARCHAR")
        if isinstance(col.parent, exp.Select) and col.arg_key == "expressions":
            col.replace(exp.alias_(text, col.name))
        else:
            col.replace(text)
    # arithmetic: text read as numbers, predicates as 0/1, integer division, modulo
    for op in post_order(tree, ARITH):
        if op.meta.get(GENERATED):
            continue
        for key in ("this", "expression"):
            side = op.args.get(key)
            if side is None:
                continue
            kind = side.meta.get(NUMERIC)
            if kind:
                op.set(key, cast(side, "BIGINT" if kind == "int" else "DOUBLE"))
                op.args[key].meta[NUMERIC] = kind
            elif isinstance(side.unnest(), PREDICATES):
                op.set(key, cast(side, "BIGINT"))
                op.args[key].meta[NUMERIC] = "int"
            elif (t := type_of(side)) is not None and t.this in TEXT:
                raise fail(sql, "sqlite", f"arithmetic on text ({side.sql('sqlite')}): SQLite reads a numeric prefix")
        a, b = op.this, op.expression
        if isinstance(op, exp.Div):
            ia, ib = is_int(a), is_int(b)
            if ia and ib:
                divisor = b.this if isinstance(b, exp.Nullif) else b
                new = exp.Paren(this=exp.IntDiv(this=a, expression=nullif0(divisor)))
                new.meta[NUMERIC] = "int"
                op.replace(new)
            elif ia is None and ib is None or (ia is None and ib) or (ib is None and ia):
                raise fail(sql, "sqlite", f"the operand types of {op.sql('sqlite')} cannot be inferred "
                                           "(SQLite divides integers with truncation, reals exactly)")
            else:
                op.set("typed", False)  # a real division: sqlglot must not truncate it
        elif isinstance(op, exp.Mod):
            ia, ib = is_int(a), is_int(b)
            if ia is None or ib is None:
                raise fail(sql, "sqlite", f"the operand types of {op.sql('sqlite')} cannot be inferred")
            a2 = a if ia else cast(exp.func("trunc", a), "BIGINT")
            b2 = b if ib else cast(exp.func("trunc", b), "BIGINT")
            op.replace(exp.Paren(this=exp.Mod(this=a2, expression=nullif0(b2))))
    for agg in list(tree.find_all(exp.Sum, exp.Avg, exp.Min, exp.Max)):
        if agg.this is not None and isinstance(agg.this.unnest(), PREDICATES):
            agg.set("this", cast(agg.this, "BIGINT"))
    # CAST(real AS INTEGER) truncates toward zero in SQLite (DuckDB rounds)
    for node in list(tree.find_all(exp.Cast)):
        if node.meta.get(GENERATED):
            continue
        if node.to.this in INT and (t := type_of(node.this)) is not None and t.this in exp.DataType.REAL_TYPES:
            node.set("this", exp.func("trunc", node.this))
    return tree


def _own(node: exp.Expression, select: exp.Select) -> bool:
    """Whether ``node`` belongs to ``select`` itself rather than to a query nested in it.

    Args:
        node: a node inside ``select``'s tree.
        select: a SELECT of the same tree.

    Returns:
        True when ``select`` is ``node``'s nearest enclosing SELECT.
    """
    return node.find_ancestor(exp.Select) is select


def _sqlite_bare_columns(tree: exp.Expression) -> exp.Expression:
    """SQLite's bare columns beside a single ``min()``/``max()`` take their values from the row
    holding that minimum or maximum (SQLite docs, "The SELECT statement", 2.5 "Bare columns in an
    aggregate query"): ``arg_min``/``arg_max`` in DuckDB. Other bare columns are left (DuckDB
    refuses them; the query is then unsupported).

    Args:
        tree: the rewritten tree (modified in place).

    Returns:
        The tree, with each bare column ``c`` of a SELECT holding exactly one argument-less
        ``max(x)`` (``min(x)``) and no other extreme replaced by ``arg_max(c, x)``
        (``arg_min(c, x)``); columns inside aggregates and GROUP BY keys are left.
    """
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


def sqlite_passes(tree: exp.Expression, sql: str, schema: Schema, now: dt.datetime | None) -> exp.Expression:
    """Give a parsed SQLite query SQLite's semantics on DuckDB (the SQLite half of
    ``verifier.sql._translate``; rules in its module docstring, tables in ``verifier.sql._dialects``).

    Args:
        tree: the parsed SQLite query (modified in place).
        sql: the agent's query text (for errors).
        schema: the database's tables and columns (``{table: {column: type}}``).
        now: the pinned dataset time for ``'now'`` and ``CURRENT_*``, or None.

    Returns:
        The tree after the untyped passes, qualification and type annotation, the typed passes
        and the bare-column pass, in that order; ready to be written as DuckDB SQL.

    Raises:
        DialectUnsupported: what cannot be carried over faithfully (the passes' Raises).
    """
    tree = _sqlite_text_time(tree, sql, schema, now)
    tree = qualified(tree, schema, sql, "sqlite")
    tree = _sqlite_typed(tree, sql, schema)
    return _sqlite_bare_columns(tree)

