"""A re-keyed copy of a task's witness: the same rows with fresh surrogate ids changed.

ARCHITECTURE.md section 4 ("Noise abstentions", step 4). Witness rows often carry
identifiers the construction program invented (a new ``lab_event_id``, a new
``icuadmissionid``). A query filtering on such an id (``WHERE lab_event_id =
99000001``, ``>= 99000000``) sees the witness without ever looking at the
patient, admission or item, so evidence is judged on the witness with those
fresh identifiers re-keyed (``rekeyed_witness(...)``, used by ``verifier.abstention._evaluate``
in place of the task's witness): pseudo-random holes inside the base's id range
that a query keyed on the invented ids (or on "beyond the base's ids") cannot see.

Rule:
    * an id-like column is one whose name ends in ``id`` (``admissionid``,
      ``lab_event_id``), of a signed integer type;
    * an integer witness value in such a column is **fresh** when it occurs in
      no base-table column of that name (any table: an admission that exists
      but has no DRG row is not fresh in ``drg_codes``) and the task does not
      name it (``task_named_values``: its params, its unmet requirement's
      scope, and integers written in its question, statement or key terms);
    * every fresh value ``v`` is mapped, in every witness table and column
      where it is fresh, to a **hole inside the base range**: a value strictly
      between the smallest and largest base value of those columns that
      occurs in none of them and is no witness value, drawn by up to
      ``HOLE_PROBES`` deterministic pseudo-random probes (SHA-256 of the
      witness key, ``v`` and the probe number). Construction invents ids past
      the base's largest one (``max(id) + 1``), so a query covering everything
      outside the base's range (``id > max OR id < 0``) sees the task's
      witness but not the re-keyed one; covering both would mean enumerating
      the base's ids (queries are capped at ``sqlsafe.MAX_QUERY_CHARS``);
    * when the column has no hole (dense ids) or no base values, ``v`` maps to
      ``~v`` (``-v - 1``: negative for the usual non-negative ids, never
      ``v``), or when ``~v`` is itself taken (in the base column or among the
      witness values) to ``~v - k * 1000003`` for the smallest free ``k``.
    The mapping is deterministic (the same in every process and run).
Returns ``None`` when nothing is fresh (the variants would be identical).
Cached per (process, database file, witness key, named values).
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import lru_cache
from typing import Any, Iterable, Sequence

from ..contract import Task, WitnessTable
from ..sql import resolved_path, thread_connection
from ._witness import witness_key

_SIGNED = frozenset({"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT"})
_STEP = 1_000_003
_CACHE: dict[tuple[Any, ...], list[WitnessTable] | None] = {}


def _id_like(name: str) -> bool:
    return name.lower().endswith("id")


def task_named_values(task: Task) -> frozenset[str]:
    """The values a task names, as text: ``params`` and unmet-requirement ``scope``
    values, and the integers written in its question, statement and key terms.

    Memoised on exactly what it is made of (the values as text and the texts): every
    trajectory of a task asks several times (issue 15), and a task changed in place gets its
    own entry."""
    return _named_from(*_named_parts(task))


def _named_parts(task: Task) -> tuple[tuple[str, ...], tuple[str, ...]]:
    req = task.reference.unmet_requirement
    values = [*task.params.values(), *(req.scope.values() if req else ())]
    texts = (task.question, *((req.statement, *req.key_terms) if req else ()))
    return tuple(str(v) for v in values), texts


@lru_cache(maxsize=4096)
def _named_from(values: tuple[str, ...], texts: tuple[str, ...]) -> frozenset[str]:
    return frozenset([*values, *(m for t in texts for m in re.findall(r"(?<![\d.])\d+(?![\d.])", t))])


def _named_values(task: Task) -> frozenset[str]:
    """``task_named_values`` without the memo (the worker warm-up keeps nothing per task)."""
    return _named_from.__wrapped__(*_named_parts(task))


def rekeyed_witness(db_path: str | os.PathLike[str], witness: Sequence[WitnessTable],
                    named_values: Iterable[str] = ()) -> list[WitnessTable] | None:
    """The witness with its fresh surrogate ids re-keyed (rule in the module docstring).

    Args:
        db_path: the base DuckDB file (read through ``sqlsafe.thread_connection``).
        witness: the task's witness tables.
        named_values: values the task names, as text (``task_named_values``); never re-keyed.

    Returns:
        The re-keyed witness tables, or ``None`` when no value is fresh.
    """
    named = tuple(sorted(set(named_values)))
    key = (os.getpid(), resolved_path(str(db_path)), witness_key(witness), named)
    if key in _CACHE:
        return _CACHE[key]
    result = _rekey(db_path, witness, set(named))
    if len(_CACHE) >= 4096:
        _CACHE.clear()
    _CACHE[key] = result
    return result


Column = tuple[str, int | None, int | None, int]


def _id_columns(con: Any, db_key: str) -> dict[str, list[Column]]:
    """``{lower-cased id-like column name: [('"table"."column"', min, max, rows), ...]}``
    of the base database's signed-integer id-like columns, with each column's value
    range (``None`` for an empty column) and its table's row count; cached per
    process and file. A value outside a column's range is known absent from it
    without a query."""
    key = (os.getpid(), db_key)
    found = _COLUMNS.get(key)
    if found is None:
        by_table: dict[str, list[str]] = {}
        for table, column, dtype in con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE schema_name = 'main' "
            "ORDER BY table_name, column_index"
        ).fetchall():
            if _id_like(column) and dtype in _SIGNED:
                by_table.setdefault(table, []).append(column)
        found = {}
        for table, columns in by_table.items():
            aggs = ", ".join(f'min("{c}"), max("{c}")' for c in columns)
            row = con.execute(f'SELECT {aggs}, count(*) FROM "{table}"').fetchall()[0]
            for i, c in enumerate(columns):
                found.setdefault(c.lower(), []).append((f'"{table}"."{c}"', row[2 * i], row[2 * i + 1], row[-1]))
        _COLUMNS[key] = found
    return found


_COLUMNS: dict[tuple[int, str], dict[str, list[Column]]] = {}

#: An id column name whose base tables hold at most this many rows in all has its
#: distinct values loaded once per process (membership then costs no query; a worker
#: fills them at start, ``_warm``): for a column of few distinct values about 14 ms per
#: million rows on the MIMIC-IV demo, where a lookup per value costs one statement over
#: every table holding the column (0.5-1 ms each; a re-key looks up each fresh value,
#: then each hole it probes, up to ``HOLE_PROBES`` per value). The demo replicated x16
#: (17 million rows under ``patientid``) stays within it, so the per-trajectory cost does
#: not grow with it (issue 15); the full MIMIC-IV's event tables (hundreds of millions of
#: rows) are looked up per value.
MAX_SET_ROWS = 32_000_000
#: ... and at most this many distinct values are kept: a row-level id (``lab_event_id``,
#: every row distinct) is looked up per value instead. Its distinct values are estimated
#: first (HyperLogLog, ``approx_count_distinct``: no hash table, nothing fetched), so a
#: refused column costs one streaming scan, not a table of its values.
MAX_SET_VALUES = 1_000_000
_VALUES: dict[tuple[int, str, str], frozenset[int] | None] = {}


def _value_set(con: Any, db_key: str, col: str, refs: list[Column]) -> frozenset[int] | None:
    """Every base value of id column ``col`` (all tables), or ``None`` when its tables hold more
    than ``MAX_SET_ROWS`` rows or it has more than ``MAX_SET_VALUES`` distinct values (memoised
    per process and file, ``None`` included)."""
    key = (os.getpid(), db_key, col)
    if key in _VALUES:
        return _VALUES[key]
    found: frozenset[int] | None = None
    parts = [f"SELECT {ref} AS v FROM {ref.split('.')[0]}" for ref, lo, _, _ in refs if lo is not None]
    union = " UNION ALL ".join(parts)
    if not parts:
        found = frozenset()
    elif (sum(r[3] for r in refs) <= MAX_SET_ROWS
          # the estimate is within a few per cent; a column just under the cap is settled exactly below
          and con.execute(f"SELECT approx_count_distinct(v) FROM ({union})").fetchone()[0] <= 1.1 * MAX_SET_VALUES):
        rows = con.execute(f"SELECT DISTINCT v FROM ({union}) WHERE v IS NOT NULL LIMIT {MAX_SET_VALUES + 1}").fetchall()
        found = frozenset(r[0] for r in rows) if len(rows) <= MAX_SET_VALUES else None
    _VALUES[key] = found
    return found


def _occurring(con: Any, refs: list[Column], values: set[int]) -> set[int]:
    """The ``values`` that occur in any of the columns ``refs`` (per-value lookup, one statement:
    each column's values outside its range need no look, and DuckDB prunes the rest by its zone
    maps, so the cost follows the rows near those values, not the table's size)."""
    parts, params = [], []
    for ref, lo, hi, _ in refs:
        rest = sorted(v for v in values if lo is not None and lo <= v <= hi)
        if rest:  # every value outside this column's range is absent from it
            parts.append(f"SELECT {ref} AS v FROM {ref.split('.')[0]} WHERE {ref} IN ({', '.join('?' for _ in rest)})")
            params += rest
    if not parts:
        return set()
    return {r[0] for r in con.execute(f"SELECT DISTINCT v FROM ({' UNION ALL '.join(parts)})", params).fetchall()}


def _rekey(db_path: str | os.PathLike[str], witness: Sequence[WitnessTable], named: set[str]) -> list[WitnessTable] | None:
    con = thread_connection(db_path)
    db_key = resolved_path(str(db_path))
    cols = _id_columns(con, db_key)

    def occurs(col: str, values: set[int]) -> set[int]:
        refs = cols.get(col, [])
        known = _value_set(con, db_key, col, refs)
        if known is not None:
            return values & known
        return _occurring(con, refs, values)

    wanted: dict[str, set[int]] = {}
    for w in witness:
        for row in w.rows:
            for c, v in row.items():
                if c.lower() in cols and isinstance(v, int) and not isinstance(v, bool) and str(v) not in named:
                    wanted.setdefault(c.lower(), set()).add(v)
    fresh = {c: vs - occurs(c, vs) for c, vs in wanted.items()}
    fresh = {c: vs for c, vs in fresh.items() if vs}
    if not fresh:
        return None
    taken = {v for vs in wanted.values() for v in vs}
    mapping: dict[int, int] = {}
    seed = witness_key(witness)
    for v in sorted({v for vs in fresh.values() for v in vs}):
        cols_of_v = [c for c, vs in fresh.items() if v in vs]

        def free(cand: int) -> bool:
            return cand not in taken and cand not in mapping.values() and not any(occurs(c, {cand}) for c in cols_of_v)

        mapping[v] = _hole(v, cols_of_v, cols, free, seed)
    out = []
    for w in witness:
        rows = [{c: (mapping[v] if isinstance(v, int) and not isinstance(v, bool) and v in fresh.get(c.lower(), ()) else v) for c, v in row.items()}
                for row in w.rows]
        out.append(w.model_copy(update={"rows": rows}))
    return out


#: Pseudo-random probes for a hole inside the base range before falling back to ``~v``.
HOLE_PROBES = 16


def _hole(v: int, cols_of_v: list[str], cols: dict[str, list[Column]],
          free: Any, seed: str) -> int:
    """The re-keyed value of fresh ``v`` (rule in the module docstring); ``free(c)``
    says whether ``c`` is unused in the base columns and the witness."""
    bounds = [(lo, hi) for c in cols_of_v for _, lo, hi, _ in cols.get(c, []) if lo is not None]
    if bounds:
        lo, hi = min(b[0] for b in bounds), max(b[1] for b in bounds)
        span = hi - lo - 1  # values strictly between lo and hi
        for probe in range(HOLE_PROBES if span > 0 else 0):
            digest = hashlib.sha256(f"{seed}|{v}|{probe}".encode()).digest()
            cand = lo + 1 + int.from_bytes(digest[:8], "big") % span
            if free(cand):
                return cand
    cand, k = ~v, 0
    while not free(cand):
        k += 1
        cand = ~v - k * _STEP
    return cand
