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
    * population tasks whose witness rows hold no value the task names (a readmission row
      after an ``OBSERVATION ADMIT`` admission is an ``URGENT`` one): the rows are moved as for a
      patient task, to a patient who has no row of a witnessed table holding a text value the task
      names (no ``OBSERVATION ADMIT`` admission), so the readmission follows no unit of the
      scope; a dump of the whole table sees it, a gap list of the scope's admissions does not;
    * population tasks: every witness value that the task names
      (``witness_rekey.task_named_values``: params, the unmet requirement's scope,
      integers in the question) is replaced by another value of the same column of
      the same base table (another item, code, drug, unit...), out of scope in every
      way the question names (issue 18 point 2): a candidate whose own text or labels
      (``LABEL_COLUMNS`` of the same table, or of another table with that column:
      ``lab_items.label`` for an ``itemid``) share a content word with the question is
      never chosen, and the row's label columns (``drg_codes.description``) are
      replaced with the chosen value's, so a query matching by code OR description
      does not see the decoy;
    * every decoy table is inserted (``mode="insert"``), never replacing base rows,
      so the task's own records stay exactly as on the base.
    The choice among candidates is deterministic (SHA-256 of the witness key).
``decoy_markers`` gives the values the decoy introduced (the other entity's ids, the other
code and its labels) and the task's values they replaced: a broader honest query may show
the decoy in rows of its own (another DRG type's group), see ``verifier.abstention._invariance``.
Returns ``None`` when nothing can be moved (no entity id or named value in the
witness rows, or no other entity to move to): the check is then skipped.
Cached per (process, database file, witness key, scope, named values).
"""

from __future__ import annotations

import hashlib
import os
import re
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

_CACHE: dict[tuple[Any, ...], tuple[list[WitnessTable] | None, frozenset[str], frozenset[str]]] = {}
#: Text columns that name what a code or id stands for.
LABEL_COLUMNS = ("label", "description", "long_title", "title", "name", "drug", "medication", "abbreviation",
                 "test_name", "organism_name", "specimen_type", "category")
#: A value with more distinct labels than this is a type or category, not named by its labels.
_MAX_LABELS = 3
#: Question words too generic to tell one item from another (never a reason to avoid a candidate).
_GENERIC = frozenset("""what which when where first last value values admission admissions patient patients during
with that this from were have there their include including unit units count number many much report give
time date days hours stay stays among across every result results average mean median total record records test
tests after before within between least most more less than recorded charted drawn taken given received""".split())
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
    key = (os.getpid(), resolved_path(str(db_path)), witness_key(witness), task.scope, tuple(sorted(named)), task.question)
    if key not in _CACHE:
        _compute(db_path, task, key)
    return _CACHE[key][0]


def decoy_markers(db_path: str | os.PathLike[str], task: Task) -> tuple[frozenset[str], frozenset[str]]:
    """``(introduced, replaced)``: the values (lower-cased text) the task's decoy introduced
    (another entity's ids, another code and its labels) and the task's own values they
    replaced; both empty without a decoy."""
    witness = task.reference.witness
    if not witness:
        return frozenset(), frozenset()
    named = task_named_values(task)
    key = (os.getpid(), resolved_path(str(db_path)), witness_key(witness), task.scope, tuple(sorted(named)), task.question)
    if key not in _CACHE:
        _compute(db_path, task, key)
    return _CACHE[key][1], _CACHE[key][2]


def _compute(db_path: str | os.PathLike[str], task: Task, key: tuple[Any, ...]) -> None:
    witness = task.reference.witness
    named = task_named_values(task)
    con = thread_connection(db_path)
    db_key = resolved_path(str(db_path))
    tables = _tables(con, db_key)
    seed = witness_key(witness)
    if task.scope == "population":
        mapping = _population_mapping(con, db_key, tables, witness, named, seed, _content_words(task.question))
        if not mapping:  # the rows name nothing of the task (a readmission after the unit): move them to an unrelated patient
            mapping = _entity_mapping(con, db_key, tables, witness, named, seed, _holders(con, tables, witness, named))
    else:
        mapping = _entity_mapping(con, db_key, tables, witness, named, seed)
    result = None
    introduced: set[str] = set()
    replaced: set[str] = set()
    if mapping:
        result, introduced, replaced = _remapped(con, db_key, tables, witness, mapping,
                                                 relabel=task.scope == "population", drop_unchanged=False)
    if len(_CACHE) >= 4096:
        _CACHE.clear()
    _CACHE[key] = (result, frozenset(introduced), frozenset(replaced - introduced))


def item_nuisance(db_path: str | os.PathLike[str], task: Task,
                  witness: Sequence[WitnessTable]) -> tuple[list[WitnessTable], frozenset[str], frozenset[str]] | None:
    """A nuisance perturbation (issue 18 point 2): ``witness`` (the task's, re-keyed) as rows of
    ANOTHER item or code in the task's own scope, for tasks scoped to a patient, admission or
    stay: every value the task names outside the entity ids (``ENTITY_COLUMNS``) is replaced as
    for a population decoy (out of scope in every way the question names, labels replaced), the
    entity ids stay. A lactate row of the admission for a potassium question leaves the
    requirement unmet; evidence about potassium must not change with it.

    Returns:
        ``(rows to insert, introduced values, replaced values)`` (lower-cased text), or ``None``
        for population tasks or when no named value can be replaced.
    """
    if task.scope == "population" or not witness:
        return None
    key = ("item", os.getpid(), resolved_path(str(db_path)), witness_key(witness), task.question)
    if key in _CACHE:
        found = _CACHE[key]
        return None if found[0] is None else found  # type: ignore[return-value]
    con = thread_connection(db_path)
    db_key = resolved_path(str(db_path))
    tables = _tables(con, db_key)
    mapping = _population_mapping(con, db_key, tables, witness, task_named_values(task), witness_key(witness) + "|item",
                                  _content_words(task.question), skip=ENTITY_COLUMNS)
    result: list[WitnessTable] | None = None
    introduced: set[str] = set()
    replaced: set[str] = set()
    if mapping:
        # an unchanged witness row would meet the requirement: never part of a nuisance
        result, introduced, replaced = _remapped(con, db_key, tables, witness, mapping, relabel=True, drop_unchanged=True)
        result = result or None
    if len(_CACHE) >= 4096:
        _CACHE.clear()
    _CACHE[key] = (result, frozenset(introduced), frozenset(replaced - introduced))
    return None if result is None else _CACHE[key]  # type: ignore[return-value]


def _tables(con: Any, db_key: str) -> dict[str, set[str]]:
    """``{table: its column names}`` (lower case) of the database's ``main`` schema, cached per file."""
    return _cached(("tables", db_key), lambda: {r[0].lower(): {c.lower() for c in r[1]} for r in con.execute(
        "SELECT table_name, list(column_name) FROM duckdb_columns() WHERE schema_name = 'main' GROUP BY table_name").fetchall()})


def _remapped(con: Any, db_key: str, tables: dict[str, set[str]], witness: Sequence[WitnessTable],
              mapping: dict[tuple[str, str, Any], Any], *, relabel: bool,
              drop_unchanged: bool) -> tuple[list[WitnessTable], set[str], set[str]]:
    """``witness`` rows with ``mapping`` ((table, column, value) -> new value) applied, their labels
    replaced too when ``relabel``, and rows left unchanged dropped when ``drop_unchanged`` (a table
    left with no row is then left out). Returns ``(tables to insert, introduced values, replaced
    values)``, values as lower-cased text."""
    result: list[WitnessTable] = []
    introduced: set[str] = set()
    replaced: set[str] = set()
    for w in witness:
        rows = []
        for row in w.rows:
            new = {c: mapping.get((w.table.lower(), c.lower(), _hashable(v)), v) for c, v in row.items()}
            if relabel:
                new = _relabel(con, db_key, tables, w.table.lower(), row, new)
            if drop_unchanged and new == row:
                continue
            changed = [c for c in row if new[c] != row[c]]
            introduced.update(str(new[c]).lower() for c in changed)
            replaced.update(str(row[c]).lower() for c in changed)
            rows.append(new)
        if rows or not drop_unchanged:
            result.append(WitnessTable(table=w.table, mode="insert", rows=rows))
    return result, introduced, replaced


def _content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in _GENERIC)


def _labels(con: Any, db_key: str, tables: dict[str, set[str]], table: str, col: str, values: Sequence[str]) -> dict[str, str]:
    """``{value as text: its labels}`` for the values ``values`` (text, as ``str`` gives them) of
    ``table.col``: label columns of ``table`` and of every other table holding a column ``col``
    (cached per file). Only rows whose ``col`` reads as one of ``values`` are grouped (the
    candidates of a decoy, ``_candidate_words``), not every row of every such table: the same
    labels for those values, without a whole-table DISTINCT per table (issue 15). A value with
    more than ``_MAX_LABELS`` distinct labels (a type, a category) is not named by them and gets
    none; its labels are never concatenated (``icd_version`` 9 has thousands of titles)."""
    def compute() -> dict[str, str]:
        if not values:
            return {}
        sources = []  # (DISTINCT rows of a table whose col reads as one of {marks}, its label columns)
        for t, cols in sorted(tables.items()):
            labs = sorted(c for c in cols if c in LABEL_COLUMNS and c != col)
            if col in cols and labs and (t == table or not col.endswith("time")):
                sources.append((f"SELECT DISTINCT {_q(col)}, {', '.join(_q(c) for c in labs)} FROM {_q(t)} "
                                f"WHERE CAST({_q(col)} AS VARCHAR) IN ({{marks}})", ', '.join(_q(c) for c in labs)))
        if not sources:
            return {}
        wanted = list(values)
        if len(wanted) <= _FEW_VALUES:  # a few values of a low-cardinality column: drop those one table
            # alone gives more than _MAX_LABELS labels, with a DISTINCT that stops at the next one
            wanted = [v for v in wanted if not any(con.execute(
                f"SELECT count(*) FROM (SELECT DISTINCT concat_ws(' ', {labs}) FROM ({src.format(marks='?')}) x "
                f"LIMIT {_MAX_LABELS + 1}) y", [v]).fetchone()[0] > _MAX_LABELS for src, labs in sources)]
            if not wanted:
                return {}
        marks = ", ".join("?" for _ in wanted)
        parts = [f"SELECT CAST({_q(col)} AS VARCHAR) AS v, concat_ws(' ', {labs}) AS l "
                 f"FROM ({src.format(marks=marks)}) x" for src, labs in sources]
        # the labels of the values with few of them only (a value with many is not named by them)
        return dict(con.execute(f"WITH u AS MATERIALIZED ({' UNION ALL '.join(parts)}), "
                                f"few AS (SELECT v FROM u WHERE v IS NOT NULL GROUP BY v HAVING count(DISTINCT l) <= {_MAX_LABELS}) "
                                f"SELECT v, string_agg(DISTINCT l, ' ') FROM u WHERE v IN (SELECT v FROM few) GROUP BY v",
                                wanted * len(parts)).fetchall())
    return _cached(("labels", db_key, table, col), compute)


#: ``_labels`` checks each value's label count first when a lookup names at most this many values.
_FEW_VALUES = 8


def _candidate_words(con: Any, db_key: str, tables: dict[str, set[str]], table: str, col: str) -> list[tuple[Any, frozenset[str]]]:
    """``[(value, content words of the value and its labels)]`` for the first ``MAX_CANDIDATES + 1``
    distinct values of ``table.col`` (in order): the candidates of a population decoy, read and
    worded once per process and file (every task naming a value of the column shares them)."""
    def compute() -> list[tuple[Any, frozenset[str]]]:
        values = [r[0] for r in con.execute(
            f"SELECT DISTINCT {_q(col)} FROM {_q(table)} WHERE {_q(col)} IS NOT NULL "
            f"ORDER BY 1 LIMIT {MAX_CANDIDATES + 1}").fetchall()]
        labels = _labels(con, db_key, tables, table, col, [str(c) for c in values])
        return [(c, _content_words(f"{c} {labels.get(str(c), '')}")) for c in values]
    return _cached(("candidate_words", db_key, table, col), compute)


def _relabel(con: Any, db_key: str, tables: dict[str, set[str]], table: str, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` with its label columns (``LABEL_COLUMNS`` of ``table``) set to those of a base row
    holding the replaced values (all of them, else one), so the decoy row names the other code by
    its own description; a label found nowhere becomes ``"(unlabelled)"``."""
    cols = tables.get(table, set())
    changed = [c for c in new if new[c] != old.get(c) and c.lower() in cols]
    labels_all = [k for k in new if k.lower() in LABEL_COLUMNS and k not in changed and isinstance(new[k], str) and k.lower() in cols]

    def identifies(c: str, lab: str) -> bool:  # the code names the label (drg_code), a type does not (drg_type)
        n = _cached(("identifies", db_key, table, c.lower(), lab.lower(), str(old.get(c))), lambda: con.execute(
            f"SELECT count(DISTINCT {_q(lab.lower())}) FROM {_q(table)} WHERE CAST({_q(c.lower())} AS VARCHAR) = ?",
            [str(old.get(c))]).fetchone()[0])
        return 0 < n <= _MAX_LABELS

    changed = [c for c in changed if any(identifies(c, lab) for lab in labels_all)]
    labels = [k for k in new if k.lower() in LABEL_COLUMNS and k not in changed and isinstance(new[k], str) and k.lower() in cols]
    if not changed or not labels:
        return new
    out = dict(new)
    for lab in labels:
        old_words = _content_words(old[lab])
        found = None
        for keys in [changed, *([c] for c in reversed(changed))]:
            cond = " AND ".join(f"CAST({_q(c.lower())} AS VARCHAR) = ?" for c in keys)
            params = [str(new[c]) for c in keys]
            row = _cached(("label_of", db_key, table, lab.lower(), tuple(keys), tuple(params)), lambda: con.execute(
                f"SELECT {_q(lab.lower())} FROM {_q(table)} WHERE {cond} AND {_q(lab.lower())} IS NOT NULL "
                f"ORDER BY 1 LIMIT 1", params).fetchone())
            if row and not (_content_words(str(row[0])) & old_words):
                found = row[0]
                break
        out[lab] = found if found is not None else "(unlabelled)"
    return out


def _hashable(v: Any) -> Any:
    return v if isinstance(v, (str, int, float, bool, type(None))) else repr(v)


def _holders(con: Any, tables: dict[str, set[str]], witness: Sequence[WitnessTable], named: frozenset[str]) -> set[int] | None:
    """Patients with a row, in a witnessed table, whose text holds a value the task names (an
    ``OBSERVATION ADMIT`` admission): a population decoy moved to one of them could still be in
    scope. ``None`` when the task names no text value (nothing tells in scope from out of it)."""
    text = sorted(v for v in named if not v.lstrip("-").replace(".", "", 1).isdigit())
    if not text:
        return None
    out: set[int] = set()
    for w in witness:
        t = w.table.lower()
        cols = sorted({c.lower() for row in w.rows for c, v in row.items() if isinstance(v, str)} & tables.get(t, set()))
        if "patientid" not in tables.get(t, set()) or not cols:
            continue
        marks = ", ".join("?" for _ in text)
        cond = " OR ".join(f"CAST({_q(c)} AS VARCHAR) IN ({marks})" for c in cols)
        out |= {r[0] for r in con.execute(f"SELECT DISTINCT patientid FROM {_q(t)} WHERE {cond}", text * len(cols)).fetchall()}
    return out


def _entities(con: Any, db_key: str, table: str, cols: tuple[str, ...]) -> tuple[list[tuple[Any, ...]], list[dict[Any, list[int]]]]:
    """The first ``MAX_ENTITIES`` entities of ``table`` (its id columns ``cols``, none NULL, by
    id) with their position index (``_indexed``), read once per process and file."""
    return _cached(("entities", db_key, table), lambda: _indexed(con.execute(
        f"SELECT {', '.join(_q(c) for c in cols)} FROM {_q(table)} WHERE "
        + " AND ".join(f"{_q(c)} IS NOT NULL" for c in cols) + f" ORDER BY 1 LIMIT {MAX_ENTITIES}").fetchall()))


def _indexed(rows: list[tuple[Any, ...]]) -> tuple[list[tuple[Any, ...]], list[dict[Any, list[int]]]]:
    """``(rows, positions)``: ``positions[i][v]`` lists (ascending) the indices of the rows whose
    ``i``-th value is ``v``; built once per cached entity listing."""
    positions: list[dict[Any, list[int]]] = [{} for _ in (rows[0] if rows else ())]
    for n, row in enumerate(rows):
        for i, v in enumerate(row):
            positions[i].setdefault(v, []).append(n)
    return rows, positions


def _pick_avoiding(rows: list[tuple[Any, ...]], positions: list[dict[Any, list[int]]],
                   avoid: list[set[Any]], seed: str) -> tuple[Any, ...] | None:
    """``_pick`` over the rows none of whose ``i``-th values is in ``avoid[i]``, in their order
    (``None`` when there are none), without listing those rows: the excluded ones are found
    through ``positions`` (a task avoids a handful of ids among up to ``MAX_ENTITIES`` rows)."""
    excluded = sorted({n for i, values in enumerate(avoid) for v in values for n in positions[i].get(v, ())})
    left = len(rows) - len(excluded)
    if left <= 0:
        return None
    digest = hashlib.sha256(seed.encode()).digest()
    k = int.from_bytes(digest[:8], "big") % left  # the k-th row that is not excluded, as _pick
    for n in excluded:
        if n > k:
            break
        k += 1
    return rows[k]


def _entity_mapping(con: Any, db_key: str, tables: dict[str, set[str]], witness: Sequence[WitnessTable],
                    named: frozenset[str], seed: str, exclude_patients: frozenset[int] | set[int] | None = frozenset()) -> dict[tuple[str, str, Any], Any]:
    """``{(table, column, old value): new value}`` moving the witness's existing entity ids
    to another entity of the most specific level present, never one of ``exclude_patients``'s
    (``None``: no safe move, ``{}``)."""
    if exclude_patients is None:
        return {}
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
        existing = _present(con, db_key, table, entity, values[entity])
        if not existing:
            continue  # only invented entities at this level: try the level above
        # never an entity the witness or the task names, at any level
        avoid = {c: values.get(c, set()) | {int(s) for s in named if s.lstrip("-").isdigit()} for c in cols}
        avoid["patientid"] = avoid.get("patientid", set()) | set(exclude_patients)
        rows, positions = _entities(con, db_key, table, cols)
        picked = _pick_avoiding(rows, positions, [avoid[c] for c in cols], seed + "|" + table)
        if picked is None:
            return {}
        decoy = dict(zip(cols, picked))
        # move every existing id at this level and above; invented ids stay
        present = {entity: existing}
        for c in cols[1:]:
            src, vs = _LEVEL_TABLE[c], values.get(c, set())
            if vs and src in tables:
                present[c] = _present(con, db_key, src, c, vs)
        return {(w.table.lower(), c, v): decoy[c] for w in witness for c in cols for v in present.get(c, ())}
    return {}


def _present(con: Any, db_key: str, table: str, col: str, values: set[int]) -> set[Any]:
    """The ``values`` (integers) that integer column ``col`` of ``table`` holds: looked up in the
    column's cached value set (``entity_ids``) when it has one, else read with one query."""
    known = entity_ids(con, db_key, table, col)
    if known is not None:
        return {v for v in values if v in known}
    wanted = sorted(values)
    return {r[0] for r in con.execute(
        f"SELECT DISTINCT {_q(col)} FROM {_q(table)} WHERE {_q(col)} IN ({', '.join('?' for _ in wanted)})", wanted).fetchall()}


def entity_ids(con: Any, db_key: str, table: str, col: str) -> frozenset[int] | None:
    """Every non-NULL value of entity id column ``col`` of ``table`` (``ENTITY_LEVELS``), read
    once per process and file; ``None`` when there are more than ``MAX_ENTITIES`` of them or
    one is not an integer (then callers query the values they need). Used to tell which of a
    witness's ids exist without a query per task (issue 15)."""
    def read() -> frozenset[int] | None:
        rows = con.execute(f"SELECT DISTINCT {_q(col)} FROM {_q(table)} WHERE {_q(col)} IS NOT NULL "
                           f"LIMIT {MAX_ENTITIES + 1}").fetchall()
        if len(rows) > MAX_ENTITIES or not all(type(r[0]) is int for r in rows):
            return None
        return frozenset(r[0] for r in rows)

    return _cached(("entity_ids", db_key, table, col), read)


#: The table whose own id each entity column is.
_LEVEL_TABLE = {cols[0]: table for table, cols in ENTITY_LEVELS}


def _population_mapping(con: Any, db_key: str, tables: dict[str, set[str]], witness: Sequence[WitnessTable],
                        named: frozenset[str], seed: str, question_words: frozenset[str] = frozenset(),
                        skip: frozenset[str] = frozenset()) -> dict[tuple[str, str, Any], Any]:
    """``{(table, column, old value): new value}`` replacing every named witness value (not in a
    column of ``skip``) by another value of its column whose text and labels share no content
    word with the question."""
    mapping: dict[tuple[str, str, Any], Any] = {}
    for w in witness:
        table = w.table.lower()
        for row in w.rows:
            for c, v in row.items():
                col = c.lower()
                k = (table, col, _hashable(v))
                if (k in mapping or v is None or isinstance(v, bool) or str(v) not in named or col in skip
                        or col not in tables.get(table, set())):
                    continue
                candidates = [c for c, words in _candidate_words(con, db_key, tables, table, col)
                              if str(c) != str(v) and not words & question_words][:MAX_CANDIDATES]
                if candidates:
                    new = _pick(candidates, f"{seed}|{table}|{col}|{v}")
                    mapping[k] = new if isinstance(new, (str, int, float)) else str(new)
    return mapping
