"""Counts of the records that define a small cohort (the five-unit rule; blind corpus c35).

A population task whose cohort is the units holding one item anywhere in the database ("Count the
patients with at least one prescription of AcetaZOLamide": its unmet requirement's scope is that item
alone) has, as the eligible units' records, exactly that item's records. A count of them ("the exact
entry 'AcetaZOLamide' appears in 2 prescription rows") is then an aggregate over the eligible units, and
it bounds their count (two rows: at most two patients); both blind reviewers of c35 judged it a
disclosure, while the rule read "2 prescription rows" as another population (``[small_cell.disguise]
other_population_nouns``), which it is wherever the cohort is narrower than the item.

The rule: when the reference query reads one table filtered by the item alone, a sentence that names that item as its own
entry (not the start of a longer name: "AcetaZOLamide Sodium" is another entry) and holds a number
counting records (``other_population_nouns``: rows, prescriptions, events, values ...) discloses. A query
with more (a join to ICU stays, a second condition, a window) keeps the item's records wider than the
cohort's, and the rule does not apply.
"""

from __future__ import annotations

import re
from functools import lru_cache

import sqlglot
import sqlglot.errors
from sqlglot import exp

from ..contract import Task, load_toml
from ._patterns import alternation

_SENTENCE = re.compile(r"[.;!?\n]+(?:\s|$)")


@lru_cache(maxsize=1)
def _record_count() -> re.Pattern[str]:
    nouns = load_toml("noise.toml")["small_cell"]["disguise"]["other_population_nouns"]
    words = sorted({w.rstrip("s") for w in nouns} | {"record", "row", "entry", "entrie"}, key=len, reverse=True)
    return re.compile(rf"(?i)(?<![\w.,])\d{{1,12}}(?![\w.,]\d)\s+(?:[a-z-]+\s+){{0,2}}(?:{alternation(words)})s?\b")


@lru_cache(maxsize=4096)
def _single_filter(sql: str) -> str | None:
    """The string literal of the one filter of a reference query that reads one table with nothing but
    ``column = '<item>'`` (sqlglot; no join, subquery or CTE), else ``None``."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError):
        return None
    if not isinstance(tree, exp.Select) or tree.args.get("with") or tree.args.get("joins") \
            or len(list(tree.find_all(exp.Select))) != 1 or len(list(tree.find_all(exp.Table))) != 1:
        return None
    where = tree.args.get("where")
    cond = where.this if where is not None else None
    if not isinstance(cond, exp.EQ) or not isinstance(cond.left, exp.Column) or not isinstance(cond.right, exp.Literal) \
            or not cond.right.is_string:
        return None
    return cond.right.this


def defining_item(task: Task) -> str | None:
    """The one item that defines the task's cohort, else ``None``: the reference query reads one table
    filtered by ``column = '<item>'`` alone ("SELECT count(DISTINCT patientid) FROM prescriptions WHERE
    drug = 'AcetaZOLamide'"), so that the item's records are the eligible units' records. A join, a second
    condition or a window (patients given the drug during an ICU stay, a second admission of a type) makes
    the item's records wider than the cohort's."""
    item = _single_filter(task.reference.sql)
    return item if item and item.strip() else None


def record_counts(text: str, item: str) -> list[str]:
    """Sentences of ``text`` (numbers as digits) that name ``item`` as its own entry and count its
    records (module docstring)."""
    entry = re.compile(rf"(?i)(?<![\w]){re.escape(item)}(?![\w])(?!\s+[A-Z][a-z])(?!\s+[A-Z]{{2,}})")
    found = []
    start = 0
    for m in [*_SENTENCE.finditer(text), None]:
        end = m.start() if m else len(text)
        sentence = text[start:end]
        if entry.search(sentence) and _record_count().search(sentence):
            found.append(" ".join(sentence.split())[:160] + " [a count of the cohort's own records]")
        if m is None:
            break
        start = m.end()
    return found
