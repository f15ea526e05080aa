"""Tied rows at a ``LIMIT 1``: the other answers that are just as correct (issue 17 kind 9).

A reference query such as ``... ORDER BY chart_time, lab_event_id LIMIT 1`` asks
for *the first* result; when two results share the first ``chart_time``, the
surrogate id decides which one the reference shows, but the question does not:
either value is correct. ``tied_alternatives`` finds, for every ``SELECT`` with
``ORDER BY ... LIMIT 1`` (the outer query or a CTE), the rows tied with the
chosen one on the ordering the question names, and returns the typed answers
the query gives when each of them is chosen instead.

The ordering the question names (the *tie key*) is the leading ``ORDER BY``
terms up to the first tie-breaker: a column whose name ends in ``id``
(``lab_event_id``, ``emar_id``, ``order_id``) or the answer's own value
(``ORDER BY events DESC, location`` for a location answer; ``ORDER BY
chart_time, value_numeric`` for a value answer, through its alias). With no
tie-breaker every term is the key. A first term that is itself a tie-breaker
means the order is not a question of ties (nothing is returned).

Each tied row is chosen in turn with ``LIMIT 1 OFFSET i`` (at most
``MAX_TIED`` rows); the alternatives are the distinct typed answers other than
the reference's own. Queries that cannot be analysed (a parse failure, a
``DISTINCT`` select, a ``LIMIT 1`` inside a subquery that is not a CTE) have
no alternatives: the reference stays the only accepted answer.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import sqlglot
from sqlglot import exp

from .typed import to_answer

#: At most this many tied rows are probed (so at most MAX_TIED - 1 alternatives).
MAX_TIED = 10

Query = Callable[[str], "tuple[list[str], list[tuple]]"]


def _value_exprs(select: exp.Select, spec: dict[str, Any]) -> set[str]:
    """SQL texts that denote the answer's value in ``select`` (column names and their sources)."""
    names = {spec.get("value", "")} | set(spec.get("columns", []) or [])
    out: set[str] = {n.casefold() for n in names if n}
    for proj in select.expressions:
        alias = proj.alias_or_name.casefold()
        if alias in out:
            src = proj.this if isinstance(proj, exp.Alias) else proj
            out.add(src.sql(dialect="duckdb").casefold())
            if isinstance(src, exp.Column):
                out.add(src.name.casefold())
    return out


def _is_tiebreaker(term: exp.Expression, select: exp.Select, values: set[str]) -> bool:
    if isinstance(term, exp.Literal) and term.is_int:  # ORDER BY 1: the projected expression
        i = int(term.this) - 1
        if 0 <= i < len(select.expressions):
            proj = select.expressions[i]
            return proj.alias_or_name.casefold() in values or _is_tiebreaker(
                proj.this if isinstance(proj, exp.Alias) else proj, select, values)
        return False
    if isinstance(term, exp.Column):
        name = term.name.casefold()
        return name.endswith("id") or name in values or term.sql(dialect="duckdb").casefold() in values
    return term.sql(dialect="duckdb").casefold() in values


def _limit_one(select: exp.Select) -> bool:
    limit = select.args.get("limit")
    if limit is None or select.args.get("offset") is not None or select.args.get("distinct") is not None:
        return False
    value = limit.expression if isinstance(limit, exp.Limit) else None
    return isinstance(value, exp.Literal) and value.is_int and int(value.this) == 1 and bool(select.args.get("order"))


def _tie_key(select: exp.Select, spec: dict[str, Any]) -> list[exp.Expression]:
    values = _value_exprs(select, spec)
    terms = [o.this for o in select.args["order"].expressions]
    key = []
    for term in terms:
        if _is_tiebreaker(term, select, values):
            break
        key.append(term)
    return key


def _probe_sql(tree: exp.Expression, index: int, key: list[exp.Expression]) -> str | None:
    """SQL listing the first ``MAX_TIED`` rows of select number ``index`` with its tie key."""
    probe = tree.copy()
    select = list(probe.find_all(exp.Select))[index]
    ties = [f"__tie_{i}" for i in range(len(key))]
    for name, term in zip(ties, key):
        select.append("expressions", exp.alias_(term.copy(), name))
    select.set("limit", exp.Limit(expression=exp.Literal.number(MAX_TIED)))
    if select is probe:
        return f"SELECT {', '.join(ties)} FROM ({probe.sql(dialect='duckdb')})"
    cte = select.find_ancestor(exp.CTE)
    with_ = probe.find(exp.With)
    if cte is None or cte.this is not select or with_ is None or with_.parent is not probe:
        return None  # a LIMIT inside a subquery: not analysed
    ctes = ", ".join(c.sql(dialect="duckdb") for c in with_.expressions)
    return f"WITH {ctes} SELECT {', '.join(ties)} FROM {cte.alias_or_name}"


def _with_offset(tree: exp.Expression, index: int, offset: int) -> str:
    variant = tree.copy()
    select = list(variant.find_all(exp.Select))[index]
    select.set("offset", exp.Offset(expression=exp.Literal.number(offset)))
    return variant.sql(dialect="duckdb")


def tied_alternatives(sql: str, spec: dict[str, Any], query: Query, answer: Any) -> list[Any]:
    """Typed answers of the rows tied with the reference's at a ``LIMIT 1`` (module docstring).

    Args:
        sql: the reference SQL (DuckDB).
        spec: the program's ``answer`` table (``kind``, ``value``, ``columns``...).
        query: runs SQL on the construction database, returns ``(columns, rows)``;
            may raise ``duckdb.Error`` (the caller decides what a failure means).
        answer: the reference's typed answer (excluded from the alternatives).

    Returns:
        The distinct alternative answers, in the query's order (empty when none).
    """
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return []
    selects = list(tree.find_all(exp.Select))
    out: list[Any] = []
    for index, select in enumerate(selects):
        if not _limit_one(select):
            continue
        key = _tie_key(select, spec)
        if not key:
            continue
        probe = _probe_sql(tree, index, key)
        if probe is None:
            continue
        _, rows = query(probe)
        if not rows:
            continue
        tied = next((i for i, r in enumerate(rows) if tuple(r) != tuple(rows[0])), len(rows))
        for offset in range(1, tied):
            cols, alt_rows = query(_with_offset(tree, index, offset))
            alt = to_answer(spec, cols, _as_tuples(alt_rows))
            if alt is not None and alt != answer and alt not in out:
                out.append(alt)
    return out


def _as_tuples(rows: Sequence[Sequence[Any]]) -> list[tuple]:
    return [tuple(r) for r in rows]
