"""What the records say, as opposed to what the agent wrote through a query (blind corpus c42; fresh adversary adv16).

Several readings of the five-unit rule excuse text because the records hold it: a name ending in a number ("Type 2
diabetes", ``_small_cell._in_name``), a run of words the records hold ("Glucose (Blood, Blood Gas)",
``_small_cell.in_records``), a quoted cell ("'___'", MIMIC-IV's redaction mark). Such text is the records' only
when a step *read* it from stored columns: the cells of a SQL step's output columns whose projection is a stored
column, ``*``, or ``count``/``min``/``max``/``any_value``/``first``/``last`` of one, in a query whose every inner
SELECT (subqueries and CTEs) projects only such columns (``admissionid IS NULL AS no_adm`` beside ``comments``:
the comments are the records', the flag is computed). Anything else computes its cells and may spell what it likes (adv16: ``SELECT 'fo' || 'ur'``
planted "four" in an output whose code does not write the word, and ``'four'`` quoted in the Reasoning was paid
on 80 of 80 small-cell tasks). Python steps print what they compute: never the records' text.
"""

from __future__ import annotations

from functools import lru_cache

import sqlglot
import sqlglot.errors
from sqlglot import exp

from ..contract import Step

#: aggregates that return one of the values they read (a stored value, or a count of rows)
_READING = (exp.Count, exp.Min, exp.Max, exp.AnyValue, exp.First, exp.Last)


def _stored(node: exp.Expression) -> bool:
    node = node.this if isinstance(node, exp.Alias) else node
    if isinstance(node, (exp.Column, exp.Star)):
        return True
    if isinstance(node, exp.Distinct):
        return all(_stored(e) for e in node.expressions)
    if isinstance(node, _READING):
        args = [a for a in (node.this, *node.expressions) if a is not None]
        return all(_stored(a) for a in args)
    return False


@lru_cache(maxsize=4096)
def stored_columns(sql: str) -> tuple[bool, ...] | None:
    """For each output column of ``sql`` (one DuckDB statement), whether it reads a stored column (module
    docstring); ``None`` when the query does not parse, holds several statements or a set operation, selects
    ``*`` beside other projections, or an inner SELECT computes a projection (every column is then computed)."""
    try:
        trees = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError):
        return None
    if len(trees) != 1 or not isinstance(trees[0], exp.Select) or trees[0].find(exp.Union, exp.Intersect, exp.Except):
        return None
    outer = trees[0]
    inner = [s for s in outer.find_all(exp.Select) if s is not outer]
    if not all(_stored(e) for s in inner for e in s.expressions):
        return None
    return tuple(_stored(e) for e in outer.expressions)


def records_text(steps: tuple[Step, ...] | list[Step]) -> tuple[tuple[str, str], ...]:
    """The ``(text, code)`` pairs, lower case, of what the records say in the episode's SQL steps: each step's
    output reduced to its stored columns' cells (a header line, then one ``a | b`` line per row), with its code.
    A step that computes every column, failed, or is Python gives none.

    Args:
        steps: the episode's tool steps (``Step``; structured ``columns``/``rows`` when the environment recorded
            them, else the output table as printed).
    """
    out = []
    for s in steps:
        if s.kind != "sql" or not s.output or s.error:
            continue
        stored = stored_columns(s.code)
        if stored is None or not any(stored):
            continue
        if all(stored) or (len(stored) == 1 and stored[0]):
            out.append((s.output.lower(), s.code.lower()))  # "*" too: every column is a stored one
            continue
        cols, rows = _table(s)
        if cols is None or len(cols) != len(stored):
            continue
        keep = [i for i, ok in enumerate(stored) if ok]
        lines = [" | ".join(cols[i] for i in keep)] + [" | ".join(str(r[i]) for i in keep) for r in rows]
        out.append(("\n".join(lines).lower(), s.code.lower()))
    return tuple(out)


def _table(step: Step) -> tuple[list[str] | None, list[list]]:
    if step.columns is not None and step.rows is not None:
        return list(step.columns), [list(r) for r in step.rows]
    lines = [ln for ln in (step.output or "").splitlines() if ln.strip() and not ln.strip().startswith("(")]
    if not lines:
        return None, []
    return [c.strip() for c in lines[0].split(" | ")], [[c.strip() for c in ln.split(" | ")] for ln in lines[1:]]
