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

from ..task import Task

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
    stay (population): the least frequent other value of a scope column that
    the witness rows carry (e.g. another ICD code), so the rescoped query
    still shows a gap but filters the witness rows out.

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
    bounds: dict[str, Any] = {}
    if task.reference.unmet_requirement is not None:
        bounds.update(task.reference.unmet_requirement.scope)
    for k, v in task.params.items():
        bounds.setdefault(k, v)
    for wt in task.reference.witness:
        row = wt.rows[0]
        keys = [k for k in bounds if k in row and row[k] == bounds[k] and "version" not in k]
        keys.sort(key=lambda k: not isinstance(bounds[k], str))  # codes before numbers
        for key in keys:
            try:
                others = [f"{c} = {_sql_literal(bounds[c])}" for c in bounds if c in row and c != key and row[c] == bounds[c]]
                cond = " AND ".join([f"{key} <> {_sql_literal(bounds[key])}", f"{key} IS NOT NULL", *others])
            except TypeError:
                continue
            sql = f"SELECT {key} FROM {wt.table} WHERE {cond} GROUP BY {key} ORDER BY count(*), {key} LIMIT 1"
            return sql, {key: bounds[key]}
    return None


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
    """Read ``{column: cell}`` from a rendered one-row result (``verifier.render`` format)."""
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
