"""Overlay results that follow from the base result, so the query need not run on the overlay (issue 15).

A witness overlay (``_witness.Overlay``) shows each witnessed table as a view: for a table whose
witness entries all ``insert`` rows, ``SELECT * FROM base.t UNION ALL SELECT * FROM witness``.
DuckDB guarantees the original row order through a single-table FROM, WHERE, SELECT, LIMIT and
UNION ALL, and not through a JOIN (DuckDB 2.0 docs, SQL dialect, "Order Preservation"), and the
query process runs it with one thread and insertion order preserved (``verifier.sql.RESOURCE_CONFIG``;
nothing is derived when ``EHR_VERIFIER_DUCKDB_THREADS`` asks for more: with two threads a LIMIT
on such a view was seen to return other rows from run to run). So the view yields the base
table's rows in the order a direct scan of the base yields them, then the witness rows. Two
query shapes over one such table then have an overlay result that is a function of the base
result:

* **a plain read whose LIMIT the base rows fill**: ``SELECT * | <columns> FROM t [WHERE
  <condition>] LIMIT k`` that returned exactly ``k`` rows on the base, untruncated, where the
  condition combines (AND, OR, NOT) ``column IS [NOT] NULL`` and comparisons or ``IN`` lists of a
  column with literals that cannot fail on any row (a string facing a VARCHAR column, an integer
  facing an integer column, NULL). The first ``k`` rows that pass come from the base part of the
  view, in the base's order: the overlay returns the same rows, columns and order. The condition must not be able to fail on a witness
  row (DuckDB evaluates it on the witness part too, even once the LIMIT is filled: a VARCHAR
  column compared with a number, or a number column with a string that is not a number, raises a
  conversion error there alone; the blind review of this module found the second), hence the
  narrow list. Columns named with a catalog or schema, and a table alias with a column list
  (``t AS x(a, b)``, which renames by position), are refused.
* **a whole-table row count**: ``SELECT COUNT(*) [AS name] FROM t`` and nothing else. The overlay
  count is the base count plus the number of witness rows of ``t``.

A table with a ``replace`` entry is never derived: its view anti-joins the base on the key
columns, and a join does not keep the base's order (a first draft derived
``SELECT *`` there when no returned row was replaced; the test against the real overlays found a
query whose first row differed).

These are the schema-exploration queries agents run most (``SELECT * FROM t LIMIT 5``,
``SELECT count(*) FROM t``, a patient's first rows): on the benchmark batch a third of the runs
on re-keyed witness overlays. Anything else, a table reached through a catalog or schema name
included, runs on the overlay as before. A derived result costs nothing against the evidence
budget (no run is made). Nothing is derived unless every witness value of the table certainly
fits its column (``_fits``): a witness that does not fit fails the overlay's build, which only a
run reports. ``tests/test_overlay_derivable.py`` holds the rules against the overlays the query
process builds, on the real demo.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Mapping, Sequence

from sqlglot import exp

from ..contract import WitnessTable
from ..sql import RESOURCE_CONFIG, QueryResult
from ._evidence import memo_on

#: Arguments a SELECT may carry for either rule (sqlglot ``Select.args`` keys with a value).
_ROW_WISE_ARGS = frozenset({"expressions", "from", "from_", "where", "limit"})
_COUNT_ARGS = frozenset({"expressions", "from", "from_"})

#: DuckDB's integer types and their ranges (DuckDB docs, "Numeric Types"). An integer literal compared
#: with such a column is cast to it, or the column widened, at no risk of a conversion error.
_INTEGER_RANGES = {"TINYINT": (-2**7, 2**7 - 1), "SMALLINT": (-2**15, 2**15 - 1), "INTEGER": (-2**31, 2**31 - 1),
                   "BIGINT": (-2**63, 2**63 - 1), "HUGEINT": (-2**127, 2**127 - 1), "UTINYINT": (0, 2**8 - 1),
                   "USMALLINT": (0, 2**16 - 1), "UINTEGER": (0, 2**32 - 1), "UBIGINT": (0, 2**64 - 1),
                   "UHUGEINT": (0, 2**128 - 1)}
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def overlay_from_base(tree: exp.Expression, base: QueryResult, witness: Sequence[WitnessTable],
                      columns: Mapping[str, Sequence[tuple[str, str]]]) -> QueryResult | None:
    """The result of ``tree`` on the overlay of ``witness``, derived from its base result, or ``None``.

    Args:
        tree: the checked DuckDB syntax tree of the query (``verifier.sql.parse_checked``).
        base: the query's result on the database (``verifier.sql.QueryResult``).
        witness: the overlay's witness tables (the re-keyed witness or a perturbation's).
        columns: the database's ``{table: [(column, DuckDB type)]}``, lower-case table names
            (``_witness.base_columns``).

    Returns:
        ``base`` itself for a plain read whose LIMIT the base filled, a one-cell result with the
        count raised by the witness rows for a whole-table ``COUNT(*)`` (one object per base result
        and count), or ``None`` when the result cannot be derived (run the query). The rules and
        where they come from are in the module docstring. Raises nothing.
    """
    if RESOURCE_CONFIG["threads"] != 1:
        return None  # with more threads the overlay's UNION ALL need not return the base's rows first
    table = _single_table(tree)
    if table is None or table not in columns:
        return None
    entries = [w for w in witness if w.table.lower() == table]
    if not entries or any(w.mode != "insert" for w in entries):
        return None  # a replace entry's view anti-joins the base on the key, which does not keep its order
    types = {c.lower(): t.upper() for c, t in columns[table]}
    present = {k for k, v in tree.args.items() if v not in (None, [], False)}
    if present <= _COUNT_ARGS and _counts_rows(tree.expressions):
        if not (len(base.columns) == 1 and len(base.rows) == 1 and not base.truncated and type(base.rows[0][0]) is int):
            return None
    elif present <= _ROW_WISE_ARGS and "limit" in present:
        k = _limit(tree.args["limit"])
        where = tree.args.get("where")
        if (k is None or base.truncated or len(base.rows) != k or not all(_plain_column(p, types) for p in tree.expressions)
                or (where is not None and not _cannot_fail(where.this, types))):
            return None
    else:
        return None
    if not all(_fits(v, types.get(c.lower(), "")) for w in entries for row in w.rows for c, v in row.items()):
        return None  # the overlay's build may reject this witness: let it run and say so
    if "limit" in present:
        return base
    added = sum(len(w.rows) for w in entries)
    # memoised on the base result (shared by the samples of a task through the query cache), so the
    # comparisons' own memos on the derived result serve them all
    return memo_on(base, ("overlay count", added), lambda: QueryResult(
        columns=list(base.columns), rows=[(base.rows[0][0] + added,)], truncated=False))


def _set_args(node: exp.Expression) -> set[str]:
    """The names of ``node``'s sqlglot arguments that hold a value."""
    return {k for k, v in node.args.items() if v}


def _plain_column(node: exp.Expression, types: Mapping[str, str]) -> bool:
    """True for ``*`` (no EXCLUDE/REPLACE) or a column of the table, aliased or not."""
    if isinstance(node, exp.Alias):
        node = node.this
    if isinstance(node, exp.Star):
        return not _set_args(node)
    return _column_type(node, types) is not None


def _cannot_fail(node: exp.Expression, types: Mapping[str, str]) -> bool:
    """True when the condition can be evaluated on any row of the table without a runtime error:
    AND/OR/NOT of ``column IS [NOT] NULL``, and comparisons or ``IN`` lists of a column with
    literals ``_literal_fits`` accepts. A row-dependent cast, such as a VARCHAR column compared
    with a number, can fail on a witness row alone (DuckDB evaluates the filter on the witness part
    of the view even once the LIMIT is filled)."""
    if isinstance(node, exp.Paren):
        return _cannot_fail(node.this, types)
    if isinstance(node, (exp.And, exp.Or)):
        return _cannot_fail(node.this, types) and _cannot_fail(node.expression, types)
    if isinstance(node, exp.Not):
        return _cannot_fail(node.this, types)
    if isinstance(node, exp.Is):
        return _column_type(node.this, types) is not None and isinstance(node.expression, exp.Null)
    if isinstance(node, _COMPARISONS):
        left, right = node.this, node.expression
        if isinstance(left, exp.Column):
            return _literal_fits(right, _column_type(left, types))
        return _literal_fits(left, _column_type(right, types))
    if isinstance(node, exp.In):
        kind = _column_type(node.this, types)
        return (kind is not None and _set_args(node) == {"this", "expressions"}
                and all(_literal_fits(e, kind) for e in node.expressions))
    return False


def _column_type(node: exp.Expression, types: Mapping[str, str]) -> str | None:
    if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star) or _over_qualified(node):
        return None
    return types.get(node.name.lower())


def _over_qualified(node: exp.Column) -> bool:
    """A column named with a schema or catalog (``demo.main.t.c``): the overlay redirects such
    table names (``_witness.for_overlay``), not column qualifiers, so the query fails there."""
    return bool(node.args.get("db") or node.args.get("catalog"))


def _literal_fits(node: exp.Expression, kind: str | None) -> bool:
    """True when comparing a column of type ``kind`` with ``node`` cannot fail on any row: NULL, a
    string literal facing a VARCHAR column, an integer literal facing an integer column (cast to
    the column's type, or the column widened)."""
    if kind is None:
        return False
    if isinstance(node, exp.Null):
        return True
    negated = isinstance(node, exp.Neg)
    if negated:
        node = node.this
    if not isinstance(node, exp.Literal):
        return False
    if node.is_string:
        # only against a VARCHAR column: a string DuckDB cannot convert to another type is not a
        # bind-time error, the cast stays in the plan and fails on the first row that reaches it
        # (under OR or AND that can be a witness row alone: blind review, issue 15)
        return not negated and kind == "VARCHAR"
    return kind in _INTEGER_RANGES and str(node.this).isdigit()


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)?")


def _fits(value: object, kind: str) -> bool:
    """True when a witness value certainly fits a column of DuckDB type ``kind`` (the overlay's
    build inserts it there; a value that does not fit fails the build, which only a run reports).
    Conservative: NULL; an int within an integer type's range; an int or float for DOUBLE; a
    string for VARCHAR; a bool for BOOLEAN; an ISO date or timestamp text for DATE or TIMESTAMP.
    Anything else, or another type, is taken as possibly not fitting."""
    if value is None:
        return True
    if kind in _INTEGER_RANGES:
        low, high = _INTEGER_RANGES[kind]
        return type(value) is int and low <= value <= high
    if kind == "VARCHAR":
        return type(value) is str
    if kind == "DOUBLE":
        return type(value) in (int, float)
    if kind == "BOOLEAN":
        return type(value) is bool
    if kind in ("DATE", "TIMESTAMP") and type(value) is str:
        pattern = _ISO_DATE if kind == "DATE" else _ISO_TIMESTAMP
        if not pattern.fullmatch(value):
            return False
        try:
            (date.fromisoformat if kind == "DATE" else datetime.fromisoformat)(value)
        except ValueError:
            return False
        return True
    return False


def _single_table(tree: exp.Expression) -> str | None:
    """The lower-case name of the one plain, unqualified table ``tree`` (a SELECT) reads, or ``None``."""
    if not isinstance(tree, exp.Select):
        return None
    source = tree.args.get("from_") or tree.args.get("from")
    if not isinstance(source, exp.From) or _set_args(source) != {"this"}:
        return None
    table = source.this
    if not isinstance(table, exp.Table) or not isinstance(table.this, exp.Identifier):
        return None
    if not _set_args(table) <= {"this", "alias"}:
        return None  # a catalog or schema name, a sample, a time-travel clause, ...
    alias = table.args.get("alias")
    if alias is not None and alias.args.get("columns"):
        return None  # t AS x(a, b) renames the columns by position: their names no longer give their types
    return table.name.lower()


def _counts_rows(projections: list[exp.Expression]) -> bool:
    """True when the projections are exactly ``COUNT(*)`` (aliased or not)."""
    if len(projections) != 1:
        return False
    node = projections[0]
    if isinstance(node, exp.Alias):
        node = node.this
    return (isinstance(node, exp.Count) and isinstance(node.this, exp.Star)
            and _set_args(node) <= {"this", "big_int"}  # DuckDB's count is a BIGINT
            and not _set_args(node.this))


def _limit(limit: exp.Expression) -> int | None:
    """``k`` of a plain ``LIMIT k`` (a positive integer literal), or ``None``."""
    if not isinstance(limit, exp.Limit) or _set_args(limit) != {"expression"}:
        return None
    value = limit.args["expression"]
    if not isinstance(value, exp.Literal) or value.is_string:
        return None
    try:
        k = int(value.this)
    except (TypeError, ValueError):
        return None
    return k if k >= 1 and str(k) == str(value.this) else None
