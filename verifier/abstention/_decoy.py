"""A decoy witness: the task's witness rows moved out of the task's scope.

ARCHITECTURE.md section 4 ("Noise abstentions", step 4). Evidence must SEE the witness
(it is sensitive to it) and must NOT see the same rows placed outside the task's
scope: a query that also changes when the witness belongs to another patient,
admission, ICU stay, item or code is not looking at the task's scope at all. Without
this check a task-agnostic query qualified: a fingerprint of whole tables
(``sum(hash(t))`` minus its base value: 0 on the base, non-zero with any inserted
row), ``count(*) - K``, or a query keyed on a mark only witness rows carry (a
timestamp's seconds, a sequence number); red-team measurement: 815 of 826 Noise
tasks of the real demo passed with one such pair of queries.

Rule (``decoy_witness``):
    * patient-scoped tasks (``task.scope != "population"``): the entity ids of the
      witness rows (``patientid``, ``admissionid``, ``icuadmissionid``) that exist in
      the base are replaced by those of ANOTHER existing entity of the most specific
      level present (an ICU stay from ``icu_stays`` with its admission and patient;
      else an admission from ``admissions`` with its patient; else a patient from
      ``patients``), never one the witness or the task names; invented (fresh) ids
      and every other value stay as they are. When the rows hold ids of a level
      whose table is missing (a toy database without ``admissions``), there is no
      consistent move and no decoy;
    * population tasks: every witness value that the task names
      (``witness_rekey.task_named_values``: params, the unmet requirement's scope,
      integers in the question) is replaced by another value of the same column of
      the same base table (another item, code, drug, unit...);
    * every decoy table is inserted (``mode="insert"``), never replacing base rows,
      so the task's own records stay exactly as on the base.
    The choice among candidates is deterministic (SHA-256 of the witness key).
Returns ``None`` when nothing can be moved (no entity id or named value in the
witness rows, or no other entity to move to): the check is then skipped.
Cached per (process, database file, witness key, scope, named values).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, Sequence

from ..contract import Task, WitnessTable
from ..sql import resolved_path, thread_connection
from ._rekey import task_named_values
from ._witness import _q, witness_key

#: The entity hierarchy of the renamed schema (rules/schema.toml), most specific first:
#: (table, its id columns from the entity itself up to the patient).
ENTITY_LEVELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("icu_stays", ("icuadmissionid", "admissionid", "patientid")),
    ("admissions", ("admissionid", "patientid")),
    ("patients", ("patientid",)),
)
ENTITY_COLUMNS = frozenset(c for _, cols in ENTITY_LEVELS for c in cols)
#: Candidate values read per column for a population decoy (the first ones, in order).
MAX_CANDIDATES = 500
#: Candidate entities read per level for a patient-scope decoy (the first ones by id).
MAX_ENTITIES = 5000

_CACHE: dict[tuple[Any, ...], list[WitnessTable] | None] = {}
#: Per-process lookups that depend only on the database file (its tables, the
#: candidate entities and column values): read once, reused by every task.
_LOOKUPS: dict[tuple[Any, ...], Any] = {}


def _cached(key: tuple[Any, ...], compute: Any) -> Any:
    full = (os.getpid(), *key)
    if full not in _LOOKUPS:
        if len(_LOOKUPS) >= 4096:
            _LOOKUPS.clear()
        _LOOKUPS[full] = compute()
    return _LOOKUPS[full]


def _pick(candidates: Sequence[Any], seed: str) -> Any:
    digest = hashlib.sha256(seed.encode()).digest()
    return candidates[int.from_bytes(digest[:8], "big") % len(candidates)]


def decoy_witness(db_path: str | os.PathLike[str], task: Task) -> list[WitnessTable] | None:
    """The task's witness moved out of its scope (rule in the module docstring).

    Args:
        db_path: the base DuckDB file (read through ``sqlsafe.thread_connection``).
        task: a Noise task with witness rows.

    Returns:
        The decoy witness tables, or ``None`` when nothing can be moved.
    """
    witness = task.reference.witness
    if not witness:
        return None
    named = task_named_values(task)
    key = (os.getpid(), resolved_path(str(db_path)), witness_key(witness), task.scope, tuple(sorted(named)))
    if key in _CACHE:
        return _CACHE[key]
    con = thread_connection(db_path)
    db_key = resolved_path(str(db_path))
    tables = _cached(("tables", db_key), lambda: {r[0].lower(): {c.lower() for c in r[1]} for r in con.execute(
        "SELECT table_name, list(column_name) FROM duckdb_columns() WHERE schema_name = 'main' GROUP BY table_name").fetchall()})
    seed = witness_key(witness)
    if task.scope == "population":
        mapping = _population_mapping(con, db_key, tables, witness, named, seed)
    else:
        mapping = _entity_mapping(con, db_key, tables, witness, named, seed)
    result = None
    if mapping:
        result = []
        for w in witness:
            rows = [{c: mapping.get((w.table.lower(), c.lower(), _hashable(v)), v) for c, v in row.items()} for row in w.rows]
            result.append(WitnessTable(table=w.table, mode="insert", rows=rows))
    if len(_CACHE) >= 4096:
        _CACHE.clear()
    _CACHE[key] = result
    return result


def _hashable(v: Any) -> Any:
    return v if isinstance(v, (str, int, float, bool, type(None))) else repr(v)


def _entity_mapping(con: Any, db_key: str, tables: dict[str, set[str]], witness: Sequence[WitnessTable],
                    named: frozenset[str], seed: str) -> dict[tuple[str, str, Any], Any]:
    """``{(table, column, old value): new value}`` moving the witness's existing entity ids
    to another entity of the most specific level present."""
    values: dict[str, set[int]] = {}
    for w in witness:
        for row in w.rows:
            for c, v in row.items():
                if c.lower() in ENTITY_COLUMNS and isinstance(v, int) and not isinstance(v, bool):
                    values.setdefault(c.lower(), set()).add(v)
    for table, cols in ENTITY_LEVELS:
        entity = cols[0]
        if not values.get(entity):
            continue
        if table not in tables or not set(cols) <= tables[table]:
            return {}  # the rows name an entity this database cannot tell us about: no consistent move
        wanted = sorted(values[entity])
        existing = {r[0] for r in con.execute(
            f"SELECT DISTINCT {_q(entity)} FROM {_q(table)} WHERE {_q(entity)} IN ({', '.join('?' for _ in wanted)})", wanted).fetchall()}
        if not existing:
            continue  # only invented entities at this level: try the level above
        # never an entity the witness or the task names, at any level
        avoid = {c: values.get(c, set()) | {int(s) for s in named if s.lstrip("-").isdigit()} for c in cols}
        rows = _cached(("entities", db_key, table), lambda: con.execute(
            f"SELECT {', '.join(_q(c) for c in cols)} FROM {_q(table)} WHERE "
            + " AND ".join(f"{_q(c)} IS NOT NULL" for c in cols) + f" ORDER BY 1 LIMIT {MAX_ENTITIES}").fetchall())
        candidates = [r for r in rows if not any(v in avoid[c] for c, v in zip(cols, r))]
        if not candidates:
            return {}
        decoy = dict(zip(cols, _pick(candidates, seed + "|" + table)))
        # move every existing id at this level and above; invented ids stay
        present = {entity: existing}
        for c in cols[1:]:
            src, vs = _LEVEL_TABLE[c], sorted(values.get(c, set()))
            if vs and src in tables:
                present[c] = {r[0] for r in con.execute(
                    f"SELECT DISTINCT {_q(c)} FROM {_q(src)} WHERE {_q(c)} IN ({', '.join('?' for _ in vs)})", vs).fetchall()}
        return {(w.table.lower(), c, v): decoy[c] for w in witness for c in cols for v in present.get(c, ())}
    return {}


#: The table whose own id each entity column is.
_LEVEL_TABLE = {cols[0]: table for table, cols in ENTITY_LEVELS}


def _population_mapping(con: Any, db_key: str, tables: dict[str, set[str]], witness: Sequence[WitnessTable],
                        named: frozenset[str], seed: str) -> dict[tuple[str, str, Any], Any]:
    """``{(table, column, old value): new value}`` replacing every named witness value by
    another value of its column."""
    mapping: dict[tuple[str, str, Any], Any] = {}
    for w in witness:
        table = w.table.lower()
        for row in w.rows:
            for c, v in row.items():
                col = c.lower()
                k = (table, col, _hashable(v))
                if k in mapping or v is None or isinstance(v, bool) or str(v) not in named or col not in tables.get(table, set()):
                    continue
                values = _cached(("values", db_key, table, col), lambda: [r[0] for r in con.execute(
                    f"SELECT DISTINCT {_q(col)} FROM {_q(table)} WHERE {_q(col)} IS NOT NULL "
                    f"ORDER BY 1 LIMIT {MAX_CANDIDATES + 1}").fetchall()])
                candidates = [c for c in values if str(c) != str(v)][:MAX_CANDIDATES]
                if candidates:
                    new = _pick(candidates, f"{seed}|{table}|{col}|{v}")
                    mapping[k] = new if isinstance(new, (str, int, float)) else str(new)
    return mapping
