"""Queries the reference agents run, derived from a task's hidden reference.

- ``evidence_query``: the oracle's evidence on a Noise task. The construction
  programs guarantee that the reference SQL returns the gap on the base
  database (no row, a NULL value, no qualifying event) and a supported answer
  once the witness rows are added, so it is the query whose output shows the
  gap and would show the witness.
- ``rescope``: the same SQL with the patient/admission/stay literals replaced
  by another unit's (``wrong-scope``); it cannot see the witness rows.
- ``wrong_scope_lookup``: finds that other unit (a different patient, or
  another code for population tasks).
"""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

from ..contract import Task

#: Identifier columns, most specific first, and the table that lists them.
UNIT_KEYS: tuple[tuple[str, str], ...] = (
    ("icuadmissionid", "icu_stays"),
    ("admissionid", "admissions"),
    ("patientid", "patients"),
)


def evidence_query(task: Task) -> str:
    """The oracle's evidence query for ``task`` (its reference SQL)."""
    return task.reference.sql.strip()


def scope_values(task: Task) -> dict[str, Any]:
    """Identifier values bounding the task: the unmet requirement's scope, else its params."""
    scope: dict[str, Any] = {}
    if task.reference.unmet_requirement is not None:
        scope.update(task.reference.unmet_requirement.scope)
    for key, value in task.params.items():
        scope.setdefault(key, value)
    return {k: v for k, v in scope.items() if k in dict(UNIT_KEYS) and v is not None}


def _sql_literal(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        raise TypeError("not an identifier value")
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def wrong_scope_lookup(task: Task) -> tuple[str, dict[str, Any]] | None:
    """A query finding another unit, and the scope values it replaces.

    Patient-level tasks: another patient's admission/stay (columns named as
    the task's identifier keys). Tasks bounded by no patient, admission or
    stay (population): the least frequent other value of a column the
    reference SQL filters on with one of the task's bounds (preferably a
    value the witness rows carry, e.g. the ICD code), so the rescoped query
    filters the witness rows out.

    Returns:
        ``(lookup_sql, {column: old value})`` or ``None`` when nothing can be swapped.
    """
    scope = scope_values(task)
    if scope:
        key, table = next((k, t) for k, t in UNIT_KEYS if k in scope)
        cols = ["patientid"] if table == "patients" else [k for k, _ in UNIT_KEYS if k in scope]
        if "patientid" in scope:
            cond = f"patientid <> {int(scope['patientid'])}"
        else:
            cond = f"{key} <> {int(scope[key])}"
        sql = f"SELECT {', '.join(cols)} FROM {table} WHERE {cond} AND {key} IS NOT NULL ORDER BY {key} LIMIT 1"
        return sql, {k: scope[k] for k in cols}
    return _population_lookup(task)


def _has_column(table: str, column: str) -> bool:
    from ..database import table_by_name

    try:
        table_by_name(table).column(column)
    except KeyError:
        return False
    return True


def _filtered_columns(sql: str) -> list[tuple[str, str, str, bool]]:
    """``(table, column, literal text, is_string)`` of every ``column = literal`` filter in ``sql``,
    and of every literal of a ``column IN (literal, ...)`` filter.

    The column's table is its qualifier's table, else the first table of the
    query (CTE names excluded) whose schema has that column.
    """
    tree = sqlglot.parse_one(sql, read="duckdb")
    ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
    tables = [t for t in tree.find_all(exp.Table) if t.name not in ctes]
    alias = {t.alias_or_name: t.name for t in tables}
    pairs: list[tuple[exp.Expression, exp.Expression]] = []
    for eq in tree.find_all(exp.EQ):
        col, lit = eq.this, eq.expression
        if isinstance(lit, exp.Column) and isinstance(col, exp.Literal):
            col, lit = lit, col
        pairs.append((col, lit))
    for in_ in tree.find_all(exp.In):  # "itemid IN (220734, 224331)": each listed value bounds the task
        pairs += [(in_.this, lit) for lit in in_.expressions]
    out: list[tuple[str, str, str, bool]] = []
    for col, lit in pairs:
        if not (isinstance(col, exp.Column) and isinstance(lit, exp.Literal)):
            continue
        table = alias.get(col.table) if col.table else None
        if table is None:
            table = next((t.name for t in tables if _has_column(t.name, col.name)), None)
        if table is not None:
            out.append((table, col.name, lit.this, lit.is_string))
    return out


def _population_lookup(task: Task) -> tuple[str, dict[str, Any]] | None:
    """Swap one filter literal that bounds the task (a code, a type, an item) for another value.

    Prefers a literal the witness rows carry (swapping it filters them out),
    then the bound named last in the task's parameters.
    """
    bounds: dict[str, Any] = {}
    if task.reference.unmet_requirement is not None:
        bounds.update(task.reference.unmet_requirement.scope)
    for k, v in task.params.items():
        bounds.setdefault(k, v)
    wanted = {str(v): i for i, (k, v) in enumerate(bounds.items()) if "version" not in k and v is not None}
    in_witness = {str(v) for wt in task.reference.witness for row in wt.rows for v in row.values() if v is not None}
    try:
        filters = _filtered_columns(task.reference.sql)
    except sqlglot.errors.ParseError:
        return None
    candidates = [f for f in filters if f[2] in wanted]
    if not candidates:
        return None
    candidates.sort(key=lambda f: (f[2] not in in_witness, -wanted[f[2]]))
    table, column, value, is_string = candidates[0]
    lit = _sql_literal(value) if is_string else value
    sql = (f"SELECT {column} FROM {table} WHERE {column} <> {lit} AND {column} IS NOT NULL "
           f"GROUP BY {column} ORDER BY count(*), {column} LIMIT 1")
    return sql, {column: value}


def rescope(sql: str, old: dict[str, Any], new: dict[str, Any]) -> str:
    """Replace each identifier literal ``old[k]`` in ``sql`` with ``new[k]``.

    Args:
        sql: DuckDB SQL.
        old: ``{column: value}`` currently in the SQL (e.g. the task's scope).
        new: ``{column: value}`` of the other unit.

    Returns:
        The rewritten SQL (DuckDB dialect); unchanged if no literal matched.
    """
    mapping = {str(old[k]): str(new[k]) for k in old if k in new and str(old[k]) != str(new[k])}
    if not mapping:
        return sql
    tree = sqlglot.parse_one(sql, read="duckdb")

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Literal) and node.this in mapping:
            return exp.Literal(this=mapping[node.this], is_string=node.is_string)
        return node

    return tree.transform(swap).sql(dialect="duckdb")


def parse_single_row(observation: str) -> dict[str, str] | None:
    """Read ``{column: cell}`` from a rendered one-row result (``verifier.sql._render`` format)."""
    lines = [ln for ln in observation.splitlines() if ln.strip()]
    if lines and lines[0].startswith("[step"):
        lines = lines[1:]
    if len(lines) < 3 or not lines[-1].startswith("(1 row"):
        return None
    cols = [c.strip() for c in lines[0].split(" | ")]
    cells = [c.strip() for c in lines[1].split(" | ")]
    if len(cols) != len(cells):
        return None
    return dict(zip(cols, cells))
