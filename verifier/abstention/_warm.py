"""Warming a worker's database-level decoy lookups before its first batch (issue 15).

A decoy or nuisance perturbation (``_decoy``) and the re-keyed witness (``_rekey``) read the
database for what does not depend on any one task: the table listing, the candidate values of a
column with their labels' words, the first entities and the ids of each level, the values of an id column. Those lookups are cached per process and file and cost tens of
milliseconds each the first time (labels of every ICD code, say); a worker that meets them inside
its first batches charges them to whichever trajectories come first, once per worker, like the
unit registry it builds at start (``verifier.scoring._worker._warm_registries``).

``warm_decoy_lookups`` fills exactly those database-level lookups for the columns a set of Noise
tasks names in its witness rows, and nothing per task: each task's own decoy, nuisance, re-keyed
witness and calibration stay computed when its first trajectory is scored.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from typing import Any, Iterable

from ..contract import Task
from ..sql import resolved_path, thread_connection
from ._decoy import ENTITY_LEVELS, _candidate_words, _entities, _tables, entity_ids
from ._rekey import _id_columns, _named_values, _value_set

#: Seconds of lookups ``warm_decoy_lookups`` does at most by default (most-named columns first).
WARM_BUDGET_S = 10.0


def decoy_lookup_columns(tables: dict[str, set[str]], tasks: Iterable[Task]) -> Counter[tuple[str, str]]:
    """``{(table, column): tasks naming a value of it}``: the columns whose candidate values a
    population decoy or a nuisance of these tasks reads (``_decoy._population_mapping``: a witness
    value the task names, in a column of the database). No database access.

    Args:
        tables: ``{table: its column names}``, lower case (``_decoy._tables``).
        tasks: any tasks (Clean ones and Noise ones without witness rows are skipped).

    Returns:
        A ``Counter`` keyed by lower-case ``(table, column)``.
    """
    out: Counter[tuple[str, str]] = Counter()
    for task in tasks:
        witness = task.reference.witness
        if task.condition != "noise" or not witness:
            continue
        named = _named_values(task)  # not the per-task memo: the warm-up keeps nothing per task
        keys = set()
        for w in witness:
            table = w.table.lower()
            for row in w.rows:
                for c, v in row.items():
                    col = c.lower()
                    if v is not None and not isinstance(v, bool) and str(v) in named and col in tables.get(table, ()):
                        keys.add((table, col))
        out.update(keys)
    return out


def warm_decoy_lookups(db_path: str | os.PathLike[str], tasks: Iterable[Task], *,
                       budget_s: float = WARM_BUDGET_S) -> dict[str, Any]:
    """Fill this process's database-level decoy lookups for ``tasks`` on ``db_path``.

    Reads, through this thread's read-only connection (``verifier.sql.thread_connection``), the
    table listing, each entity level's first entities and ids (``_decoy.entity_ids``), the ranges and values of the id columns
    the witness rows hold (``_rekey``), and the candidate values and label words of every column
    ``decoy_lookup_columns`` finds, most-named first, until ``budget_s`` seconds have passed (checked
    before each id column's values and each column's candidates). Verdicts do not change: the same lookups are made, with the same results, when
    a trajectory first needs them.

    Args:
        db_path: the DuckDB file the tasks are scored on.
        tasks: the tasks a worker will score.
        budget_s: wall seconds at most (a lookup started is finished).

    Returns:
        ``{"columns": columns found, "warmed": columns read, "seconds": wall seconds}``.

    Raises:
        SourceDataError: the file cannot be opened read-only.
    """
    t0 = time.monotonic()
    con = thread_connection(db_path)
    db_key = resolved_path(str(db_path))
    tables = _tables(con, db_key)
    for table, cols in ENTITY_LEVELS:
        if table in tables and set(cols) <= tables[table]:
            _entities(con, db_key, table, cols)
            entity_ids(con, db_key, table, cols[0])
    tasks = list(tasks)
    # the re-keyed witness's lookups: every id column's range, and its values where they are few
    ids = _id_columns(con, db_key)
    for col in sorted({c.lower() for t in tasks if t.condition == "noise" for w in t.reference.witness
                       for row in w.rows for c, v in row.items()
                       if c.lower() in ids and isinstance(v, int) and not isinstance(v, bool)}):
        if time.monotonic() - t0 > budget_s:
            break
        _value_set(con, db_key, col, ids[col])
    columns = decoy_lookup_columns(tables, tasks)
    warmed = 0
    for (table, col), _ in sorted(columns.items(), key=lambda kv: (-kv[1], kv[0])):
        if time.monotonic() - t0 > budget_s:
            break
        _candidate_words(con, db_key, tables, table, col)
        warmed += 1
    return {"columns": len(columns), "warmed": warmed, "seconds": round(time.monotonic() - t0, 3)}
