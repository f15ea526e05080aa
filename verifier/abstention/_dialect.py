"""Evidence written for SQLite or PostgreSQL: carried over to DuckDB, compared across dialects.

ARCHITECTURE.md section 4 (Noise steps 3-4). ``carried_over`` turns the agent's query into
DuckDB SQL with its source dialect's semantics (``verifier.sql.to_duckdb``: the schema of the
database, "now" pinned to the dataset time of the task or the configuration).
``output_matches_across`` compares what the agent recorded from its own engine with the
DuckDB re-execution, type-aware (the rules below, then ``_evidence.output_matches``):

* SQLite has no boolean type: a comparison is the integer 1 or 0 (SQLite docs, "Datatypes In
  SQLite", 2.1 "Boolean Datatype"), so DuckDB booleans are compared as 1/0;
* PostgreSQL's text output spells booleans ``t``/``f`` (PostgreSQL docs, 8.6 "Boolean
  Type"): recorded ``t``/``f``/``true``/``false`` cells in a boolean column are booleans;
* numbers compare by value (``canon_cell``: SQLite integers vs DuckDB decimals, ``6.90`` vs
  ``6.9``); DuckDB DECIMAL cells are SQLite reals;
* timestamps compare as instants (``canon_cell`` reads ISO text with or without ``T``); a UTC
  offset suffix (``+00``, ``+00:00``, ``Z``, as PostgreSQL prints ``timestamptz``) is dropped;
* column names of unaliased expressions are each engine's own spelling (SQLite names a
  column by the expression's text, DuckDB by its own rendering): when the column counts
  agree, the re-executed names stand for the recorded ones.

A recorded output the database does not produce is still ``fabricated`` in every dialect.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from pathlib import Path
from typing import Any

from ..contract import DisplayConfig, Step, Task, VerifyConfig
from ..sql import QueryResult, schema_of, to_duckdb
from ._evidence import _FOOTER, output_matches

_TRUE = frozenset({"t", "true", "1", "yes", "on"})
_FALSE = frozenset({"f", "false", "0", "no", "off"})
_UTC_SUFFIX = re.compile(r"(\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(?:Z|[+-]00(?::?00)?)\Z")


def dataset_now(task: Task, config: VerifyConfig) -> dt.datetime | None:
    """The time "now" means in the task's evidence: ``task.dataset_now``, else ``config.dataset_now``."""
    return task.dataset_now or config.dataset_now


def carried_over(sql: str, dialect: str, db: Path, now: dt.datetime | None) -> str:
    """``sql`` in ``dialect`` as checked DuckDB SQL for the database ``db`` (``verifier.sql.to_duckdb``).

    Raises:
        UnsafeQueryError: not a read. DialectUnsupported: cannot be carried over faithfully.
    """
    return to_duckdb(sql, dialect, schema=schema_of(db), now=now)


def _bool_columns(result: QueryResult) -> set[int]:
    out = set()
    for j in range(len(result.columns)):
        vals = [r[j] for r in result.rows if r[j] is not None]
        if vals and all(isinstance(v, bool) for v in vals):
            out.add(j)
    return out


def _actual_cell(value: Any, dialect: str) -> Any:
    if isinstance(value, bool):
        return int(value) if dialect == "sqlite" else value
    if dialect == "sqlite" and isinstance(value, decimal.Decimal):
        return float(value)
    return value


def _recorded_cell(value: Any, is_bool: bool, dialect: str) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if is_bool and text.lower() in _TRUE | _FALSE:
            flag = text.lower() in _TRUE
            return int(flag) if dialect == "sqlite" else flag
        m = _UTC_SUFFIX.search(text)
        if m and re.match(r"\d{4}-\d{2}-\d{2}", text):
            return text[: m.start()] + m.group(1)
        return value
    if is_bool and isinstance(value, (bool, int)) and value in (0, 1):
        return int(value) if dialect == "sqlite" else bool(value)
    if isinstance(value, dt.datetime) and value.tzinfo is not None and value.utcoffset() == dt.timedelta(0):
        return value.replace(tzinfo=None)
    return value


def output_matches_across(step: Step, result: QueryResult, display: DisplayConfig | None, dialect: str) -> tuple[bool, str]:
    """``_evidence.output_matches`` for a step recorded on ``dialect``'s engine (rules in the module docstring).

    Args:
        step: the SQL step with what the agent recorded.
        result: the DuckDB re-execution of its carried-over query.
        display: the environment's display limits.
        dialect: ``sqlite`` or ``postgres`` (``duckdb`` compares unchanged).

    Returns:
        ``(matches, why)``.
    """
    if dialect == "duckdb" or step.kind != "sql":
        return output_matches(step, result, display)
    bools = _bool_columns(result)
    actual = QueryResult(columns=list(result.columns),
                         rows=[tuple(_actual_cell(v, dialect) for v in r) for r in result.rows],
                         truncated=result.truncated)
    update: dict[str, Any] = {}
    if step.rows is not None:
        update["rows"] = [[_recorded_cell(v, j in bools, dialect) for j, v in enumerate(r)] for r in step.rows]
    if step.columns is not None and len(step.columns) == len(result.columns):
        update["columns"] = list(result.columns)
    text = step.output or ""
    lines = text.rstrip().splitlines()
    if lines and _FOOTER.fullmatch(lines[-1].strip()) and len(lines[0].split(" | ")) == len(result.columns):
        update["output"] = "\n".join([" | ".join(result.columns), *lines[1:]])
    ok, why = output_matches(step.model_copy(update=update) if update else step, actual, display)
    return ok, f"{why} (recorded on {dialect}, compared type-aware)"
