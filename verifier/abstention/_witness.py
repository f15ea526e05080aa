"""Counterfactual witness overlay: the base database plus a task's witness rows.

ARCHITECTURE.md section 4 ("Noise abstentions", step 4). Each Noise task carries
witness rows (``Reference.witness``), the smallest rows that would make the
question answerable. An evidence query is run on the base database and on an
overlay that exposes the base tables under the same names with the witness
applied:

* ``insert``: ``base rows UNION ALL witness rows``;
* ``replace``: ``base rows whose key matches no witness row UNION ALL witness
  rows`` (key compared with ``IS NOT DISTINCT FROM``).

Witness rows are full rows; a column a row omits is NULL (as construction's
overlay does). A column that holds no value in any row of the base table (a
field the database does not record, e.g. ``chart_events.value`` of a MEDS-built
MIMIC-IV demo, which the schema documents as always NULL) stays NULL in the
witness rows too (``null_columns``): a record of this database could not fill
it, so a query that reads only such a column cannot show a gap (a red-team
policy cited ``value`` NULL as the missing number). Several entries for one
table apply in order.

Nothing is written to the database file: the overlay is a connection (cursor)
of an in-memory DuckDB instance (one per thread) that ATTACHes the file
``READ_ONLY`` as ``__base``, disables external access and locks its
configuration, like ``sqlsafe.open_readonly``. The overlay makes ``__base``
its default catalog, holds the witness rows in TEMP tables and shadows each
witnessed table with a TEMP view of the same name (DuckDB resolves ``temp``
first; TEMP objects belong to one connection, so overlays never see each
other's rows). Agent SQL reaches it only through ``sqlsafe.check_read_only``.

Sensitivity (``compare``) is judged on the rows the agent could see
(``render.visible_rows`` with the display limits applied to both results),
order-free: ``new`` = visible overlay rows not among the base rows,
``gone`` = visible base rows not among the overlay rows (multisets of
canonical rows, ``evidence.canon_cell``).

* no ``new`` and no ``gone``: **not sensitive** (the query looked at the wrong
  patient, admission, item or window, or its visible part hides the witness);
* sensitive and the base result **shows the gap** when: the visible base
  result is empty (absence); or rows only appear (the base omits the witness
  event); or rows only disappear (the base shows the NULL/contradicting row
  the witness replaces); or, where rows change, some changed base cell is
  empty (NULL, 0, empty text, false) where the overlay's is not (a count of 0
  becoming 1, a NULL value becoming filled), or a changed base cell lists a set
  that lacks members the overlay's lists (``list(DISTINCT admissionid)`` of the
  patient's events without the asked admission: the member is shown absent; blind
  corpus c33), or a changed row of the same unit
  has a number on the other side of a bound the task names (``task_bounds``: a
  readmission gap of 331 days becoming 0.5 for "within 21 days");
* otherwise (e.g. a whole-table count 1000 -> 1001, a global max id):
  sensitive but **does not show the gap**.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import duckdb
import sqlglot
from sqlglot import exp

from ..contract import DisplayConfig, InputError, SourceDataError, WitnessTable
from ..sql import RESOURCE_CONFIG, QueryResult, resolved_path
from ._evidence import display_key, memo_on, result_canon, visible_canon

BASE_ALIAS = "__base"

_OVERLAY_CONFIG: dict[str, Any] = {
    # one in-memory instance per thread (overlays are its cursors): memory limit, no spilling,
    # small thread pool (sqlsafe.RESOURCE_CONFIG), set before the configuration is locked
    **RESOURCE_CONFIG,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
}


def witness_key(witness: Sequence[WitnessTable]) -> str:
    """A stable hash (hex, 16 chars) of the witness rows, for caching overlays and results.

    Memoised per list object (a task's ``reference.witness``, which scoring
    never mutates; the memo holds the list, so its identity cannot be reused).
    """
    if isinstance(witness, list):
        found = _KEYS.get(id(witness))
        if found is not None and found[0] is witness:
            return found[1]
        key = _witness_key(witness)
        if len(_KEYS) >= 4096:
            _KEYS.clear()
        _KEYS[id(witness)] = (witness, key)
        return key
    return _witness_key(witness)


_KEYS: dict[int, tuple[list[WitnessTable], str]] = {}


def _witness_key(witness: Sequence[WitnessTable]) -> str:
    payload = json.dumps([w.model_dump(mode="json") for w in witness], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Overlay:
    """An in-memory connection showing ``db_path`` with ``witness`` applied.

    Args:
        db_path: the DuckDB file (attached READ_ONLY).
        witness: the task's witness tables (non-empty).

    Attributes:
        con: the connection (use from one thread at a time).
        tables: lower-cased names of the witnessed tables.
        key: ``witness_key(witness)``.
        base_catalog: the catalog name a direct connection to the file uses
            (its file stem), so agent SQL qualified with it can be redirected.

    Raises:
        SourceDataError: the file is missing or cannot be attached.
        InputError: a witness names an unknown table or column, or a value
            does not fit the column's type (field ``reference.witness[i]...``).
    """

    def __init__(self, db_path: str | os.PathLike[str], witness: Sequence[WitnessTable]) -> None:
        path = Path(db_path)
        if not path.is_file():
            raise SourceDataError(path, "DuckDB database file not found")
        self.key = witness_key(witness)
        self.base_catalog = path.stem
        # A connection (cursor) of this thread's shared in-memory instance, which has
        # the file attached READ_ONLY once: TEMP tables and views are per connection,
        # so each overlay sees only its own witness rows, and building one costs a few
        # milliseconds instead of a new DuckDB instance per task (batch scoring, issue 7).
        instance, self._schema = _shared_instance(path)
        self._path = path
        self.con = instance.cursor()
        try:
            self.con.execute(f"USE {BASE_ALIAS}")
            self.tables = frozenset(self._build(witness))
        except BaseException:
            self.con.close()
            raise

    def _build(self, witness: Sequence[WitnessTable]) -> list[str]:
        schema = self._schema
        sources: dict[str, str] = {}
        _check_witness(witness, schema)
        for i, w in enumerate(witness):
            table = w.table.lower()
            cols = schema[table]
            names = {c.lower(): c for c, _ in cols}
            wname = f"temp.main.__witness_{i}"
            self.con.execute(f"CREATE TEMP TABLE __witness_{i} ({', '.join(f'{_q(c)} {t}' for c, t in cols)})")
            unrecorded = null_columns(self._path, table)
            lowered = [{k.lower(): None if k.lower() in unrecorded else v for k, v in row.items()} for row in w.rows]
            one = f"({', '.join('?' for _ in cols)})"
            try:
                if lowered:  # one statement for all rows (executemany costs a statement per row)
                    self.con.execute(f"INSERT INTO {wname} VALUES {', '.join(one for _ in lowered)}",
                                     [row.get(c.lower()) for row in lowered for c, _ in cols])
            except duckdb.Error as exc:
                raise InputError(f"reference.witness[{i}].rows", w.rows, f"rows do not fit table {w.table!r}: {exc}") from None
            src = sources.get(table, f"SELECT * FROM {BASE_ALIAS}.main.{_q(table)}")
            if w.mode == "replace":
                cond = " AND ".join(f"x.{_q(names[k.lower()])} IS NOT DISTINCT FROM b.{_q(names[k.lower()])}" for k in w.key)
                # an ANTI JOIN keeps the rows NOT EXISTS would (DuckDB docs, "FROM and JOIN Clauses",
                # semi and anti joins) and plans in less time than the correlated subquery (issue 15)
                src = f"SELECT b.* FROM ({src}) b ANTI JOIN {wname} x ON {cond}"
            sources[table] = f"{src} UNION ALL SELECT * FROM {wname}"
        if sources:
            self.con.execute("; ".join(f"CREATE TEMP VIEW {_q(table)} AS {src}" for table, src in sources.items()))
        return list(sources)

    def close(self) -> None:
        """Close the in-memory connection (the database file is untouched)."""
        self.con.close()


def _check_witness(witness: Sequence[WitnessTable], schema: dict[str, list[tuple[str, str]]]) -> list[str]:
    """The witnessed tables (lower case, first-seen order), after checking that every table,
    column and key the witness names exists in ``schema``. Raises ``InputError`` naming the field."""
    tables: list[str] = []
    for i, w in enumerate(witness):
        table = w.table.lower()
        if table not in schema:
            raise InputError(f"reference.witness[{i}].table", w.table, "not a table of the database")
        names = {c.lower() for c, _ in schema[table]}
        for j, row in enumerate(w.rows):
            for col in row:
                if col.lower() not in names:
                    raise InputError(f"reference.witness[{i}].rows[{j}].{col}", row[col], f"no column {col!r} in table {w.table!r}")
        for k in w.key:
            if k.lower() not in names:
                raise InputError(f"reference.witness[{i}].key", k, f"no column {k!r} in table {w.table!r}")
        if table not in tables:
            tables.append(table)
    return tables


def open_overlay(db_path: str, witness: Sequence[WitnessTable]) -> Overlay:
    """A new ``Overlay`` (the factory a query process calls, ``verifier.sql.ConnectionSpec``)."""
    return Overlay(db_path, witness)


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# ---------------------------------------------------------------- cache
_local = threading.local()


def _shared_instance(path: Path) -> tuple[duckdb.DuckDBPyConnection, dict[str, list[tuple[str, str]]]]:
    """This thread's in-memory DuckDB instance with ``path`` attached READ_ONLY as ``__base``,
    external access disabled and configuration locked, and the base schema ``{table: [(column, type)]}``.

    Built once per (process, thread, file); overlays are cursors of it.

    Raises:
        SourceDataError: the file cannot be attached.
    """
    key = (os.getpid(), resolved_path(str(path)))
    instances: dict[tuple[int, str], tuple[duckdb.DuckDBPyConnection, dict[str, list[tuple[str, str]]]]] | None = getattr(_local, "instances", None)
    if instances is None:
        instances = _local.instances = {}
    found = instances.get(key)
    if found is not None:
        return found
    con = duckdb.connect(":memory:", config=dict(_OVERLAY_CONFIG))
    try:
        con.execute(f"ATTACH {_sql_string(path.as_posix())} AS {BASE_ALIAS} (READ_ONLY)")
        con.execute("SET enable_progress_bar = false")  # cursors (overlays) inherit it
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        rows = con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            f"WHERE database_name = '{BASE_ALIAS}' AND schema_name = 'main' ORDER BY table_name, column_index"
        ).fetchall()
    except duckdb.Error as exc:
        con.close()
        raise SourceDataError(path, f"cannot attach read-only: {exc}") from exc
    schema: dict[str, list[tuple[str, str]]] = {}
    for table, column, dtype in rows:
        schema.setdefault(table.lower(), []).append((column, dtype))
    instances[key] = (con, schema)
    return con, schema


def null_columns(db_path: str | os.PathLike[str], table: str) -> frozenset[str]:
    """Lower-case names of the columns of base table ``table`` (lower case) that hold no
    non-NULL value in any row: DuckDB's column statistics (the ``stats()`` scalar function,
    ``has_no_null`` false: "no row has a non-NULL value"; statistics may over-state what
    a column can hold, never under-state it, so a column listed here is NULL in every row).
    An empty table lists none (nothing is known about what its rows record). Read without
    a scan, memoised per thread and file.

    Raises:
        SourceDataError: the file is missing or cannot be attached (the first call per thread and file).
    """
    path = Path(db_path)
    con, schema = _shared_instance(path)
    memo: dict[tuple[int, str, str], frozenset[str]] | None = getattr(_local, "null_columns", None)
    if memo is None:
        memo = _local.null_columns = {}
    key = (os.getpid(), resolved_path(str(path)), table)
    found = memo.get(key)
    if found is not None:
        return found
    cols = [c for c, _ in schema.get(table, [])]
    rows = con.execute(f"SELECT {', '.join(f'stats({_q(c)})' for c in cols)} FROM {BASE_ALIAS}.main.{_q(table)} LIMIT 1"
                       ).fetchall() if cols else []
    found = frozenset(c.lower() for c, st in zip(cols, rows[0]) if isinstance(st, dict) and st.get("has_no_null") is False
                      ) if rows else frozenset()
    memo[key] = found
    return found


def base_columns(db_path: str | os.PathLike[str]) -> dict[str, list[tuple[str, str]]]:
    """The database's ``{table: [(column, DuckDB type)]}`` (lower-case table names, columns in
    order), as this thread's overlay instance reads it from the catalog once per file. The dict is
    that instance's own: read it, never change it.

    Raises:
        SourceDataError: the file is missing or cannot be attached (the first call per thread and file).
    """
    return _shared_instance(Path(db_path))[1]  # memoised per thread and file (no stat per call)


#: Overlays kept per thread (least recently used closed first).
OVERLAYS_PER_THREAD = 16


def overlay_shape(db_path: str | os.PathLike[str], witness: Sequence[WitnessTable]) -> tuple[str, frozenset[str], str]:
    """``(key, tables, base_catalog)`` of the overlay for (``db_path``, ``witness``),
    without building it: the witness is checked against the database's schema (tables,
    columns, keys; memoised per process), so callers can consult cached overlay results
    before the overlay itself is built, where the query runs (the query process,
    ``verifier.sql._guard``; a value that does not fit its column fails there).

    Raises:
        SourceDataError: the file cannot be attached.
        InputError: a witness names an unknown table, column or key.
    """
    key = witness_key(witness)
    shape_key = (os.getpid(), resolved_path(str(db_path)), key)
    found = _SHAPES.get(shape_key)
    if found is None:
        path = Path(db_path)
        if not path.is_file():
            raise SourceDataError(path, "DuckDB database file not found")
        tables = _check_witness(witness, _shared_instance(path)[1])
        found = (key, frozenset(tables), path.stem)
        if len(_SHAPES) >= 65536:
            _SHAPES.clear()
        _SHAPES[shape_key] = found
    return found


#: (pid, path, witness key) -> overlay shape, for every overlay this process built.
_SHAPES: dict[tuple[int, str, str], tuple[str, frozenset[str], str]] = {}


def overlay_for(db_path: str | os.PathLike[str], witness: Sequence[WitnessTable]) -> Overlay:
    """The calling thread's overlay for (``db_path``, ``witness``), built once and reused.

    An LRU of ``OVERLAYS_PER_THREAD`` overlays per thread, keyed by process id,
    resolved path and ``witness_key`` (tasks with identical witness rows share one).

    Raises:
        as ``Overlay``.
    """
    key = (os.getpid(), resolved_path(str(db_path)), witness_key(witness))
    cache: OrderedDict[tuple[int, str, str], Overlay] | None = getattr(_local, "overlays", None)
    if cache is None:
        cache = _local.overlays = OrderedDict()
    ov = cache.get(key)
    if ov is not None:
        cache.move_to_end(key)
        return ov
    ov = cache[key] = Overlay(db_path, witness)
    if len(_SHAPES) >= 65536:
        _SHAPES.clear()
    _SHAPES[key] = (ov.key, ov.tables, ov.base_catalog)
    while len(cache) > OVERLAYS_PER_THREAD:
        _, old = cache.popitem(last=False)
        old.close()
    return ov


# ---------------------------------------------------------------- SQL inspection
_INTROSPECTION = (exp.Describe, exp.Show, exp.Pragma)

#: Schemas and name prefixes of DuckDB's catalog relations (``information_schema.tables``,
#: ``pg_catalog.pg_class``, ``duckdb_tables()`` or the view ``duckdb_tables``, ``pragma_*()``,
#: ``sqlite_master``): they describe the connection's objects, not the records.
_CATALOG_SCHEMAS = frozenset({"information_schema", "pg_catalog"})
_CATALOG_PREFIXES = ("duckdb_", "pragma_", "pg_", "sqlite_")


def _catalog_relation(t: exp.Table) -> bool:
    if isinstance(t.this, exp.Func):
        name = (str(t.this.this) if isinstance(t.this, exp.Anonymous) else t.this.sql_name()).lower()
        return name.startswith(_CATALOG_PREFIXES)
    db = t.args.get("db")
    return ((db is not None and db.name.lower() in _CATALOG_SCHEMAS)
            or t.name.lower().startswith(_CATALOG_PREFIXES) or t.name.lower() in _CATALOG_SCHEMAS)


def tables_read(safe_sql: str | exp.Expression) -> set[str] | None:
    """Lower-cased names of the tables a checked query reads.

    Args:
        safe_sql: checked DuckDB SQL, or its tree (``sqlsafe.parse_checked``).

    Returns:
        The set of table names (catalog/schema qualifiers dropped; table
        functions ignored), or ``None`` for schema introspection
        (DESCRIBE/SHOW/PRAGMA), which cannot see witness rows, and for any query that
        reads a catalog relation (``duckdb_tables()``, ``information_schema.*``,
        ``pg_catalog.*``, ``pragma_*()``): such a query runs on the base wherever the
        verifier re-executes it, so nothing of an overlay can be named, listed or measured
        through the catalog (issue 30: the witness is secret).
    """
    if isinstance(safe_sql, exp.Expression):
        root = safe_sql
    else:
        try:
            root = sqlglot.parse_one(safe_sql, read="duckdb")
        except Exception:
            return set()
    if isinstance(root, _INTROSPECTION):
        return None
    tables = list(root.find_all(exp.Table))
    if any(_catalog_relation(t) for t in tables):
        return None
    return {t.name.lower() for t in tables if isinstance(t.this, exp.Identifier)}


def for_overlay(safe_sql: str, base_catalog: str) -> str:
    """Redirect tables qualified with the base file's catalog name to the overlay's names.

    A direct connection to ``demo.duckdb`` names its catalog ``demo``; the
    overlay attaches it as ``__base``, so ``demo.main.lab_events`` (or
    ``demo.lab_events``) becomes ``main.lab_events``/``lab_events``, which the
    overlay's views shadow. Other SQL is returned unchanged.
    """
    if not re.search(rf"\b{re.escape(base_catalog)}\b", safe_sql, re.IGNORECASE):
        return safe_sql
    root = sqlglot.parse_one(safe_sql, read="duckdb")
    cat = base_catalog.lower()
    for t in root.find_all(exp.Table):
        catalog, db = t.args.get("catalog"), t.args.get("db")
        if catalog is not None and catalog.name.lower() == cat:
            t.set("catalog", None)
        elif catalog is None and db is not None and db.name.lower() == cat:
            t.set("db", None)
    return root.sql(dialect="duckdb")


# ---------------------------------------------------------------- comparison
@dataclass
class Sensitivity:
    """Outcome of comparing a query's base and overlay results.

    Attributes:
        sensitive: the visible results differ.
        shows_gap: the base result shows the absence/NULL/contradiction.
        why: one-line explanation.
        new: visible overlay rows absent from the base result (canonical).
        gone: visible base rows absent from the overlay result (canonical).
    """

    sensitive: bool
    shows_gap: bool
    why: str
    new: list[tuple[Any, ...]] = field(default_factory=list)
    gone: list[tuple[Any, ...]] = field(default_factory=list)


def _empty(v: Any) -> bool:
    return v is None or v is False or v == 0 or (isinstance(v, str) and not v.strip())


def _gap_pair(g: tuple[Any, ...], n: tuple[Any, ...], small_cell_threshold: int | None,
              bounds: tuple[float, ...] = ()) -> bool:
    for i, (a, b) in enumerate(zip(g, n)):
        if _empty(a) and not _empty(b):
            return True
        if isinstance(a, tuple) and isinstance(b, tuple) and a and a[:1] != ("map",) and set(a) < set(b):
            return True  # a listed set lacks the members the witness adds: the base shows them absent
            # ("list(DISTINCT admissionid)" of the patient's Multivitamins events without the asked admission)
        if (small_cell_threshold is not None and isinstance(a, float) and isinstance(b, float)
                and a.is_integer() and 0 <= a < small_cell_threshold <= b):
            return True
        if (bounds and isinstance(a, float) and isinstance(b, float) and any((a <= t) != (b <= t) for t in bounds)
                and any(x == y and not _empty(x) for j, (x, y) in enumerate(zip(g, n)) if j != i)):
            return True  # the same unit's value crosses a bound the task names (a gap of 331 days -> 0.5, "within 21 days")
    return False


def _count_cell(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer() and v >= 0


def _small_total(vb: list[tuple[Any, ...]], vo: list[tuple[Any, ...]], threshold: int) -> bool:
    """Whether a column of counts totals fewer than ``threshold`` over the base's visible rows and at least
    ``threshold`` over the overlay's: the units counted per group ("GROUP BY value_unit": 2 ICU stays above the
    bound under "IU/L", 1 under NULL), fewer than five in all (blind corpus c46, a resident's one query; both
    reviewers accepted it). A count split over groups shows the small cell as its total does."""
    widths = {len(r) for r in vb + vo}
    if len(widths) != 1:
        return False
    for i in range(widths.pop()):
        b, o = [r[i] for r in vb], [r[i] for r in vo]
        if all(map(_count_cell, b + o)) and sum(b) < threshold <= sum(o):
            return True
    return False


#: Task parameters that are identifiers or codes, never bounds.
_NOT_BOUNDS = re.compile(r"(?:^|_)(?:id|ids|code|codes|version|seq|sequence)$|id$")


def task_bounds(params: dict[str, Any], scope: dict[str, Any]) -> tuple[float, ...]:
    """The numbers a task names as bounds of its requirement (sorted, unique): the numeric
    values of its ``params`` and unmet-requirement ``scope`` whose name is not an identifier or
    code (``days = 21``, ``threshold = 4.7``; not ``itemid``, ``admissionid``, ``icd_code``)."""
    out = {float(v) for d in (params, scope) for k, v in d.items()
           if isinstance(v, (int, float)) and not isinstance(v, bool) and not _NOT_BOUNDS.search(k.lower())}
    return tuple(sorted(out))


def compare(
    base: QueryResult,
    over: QueryResult,
    display: DisplayConfig | None = None,
    *,
    small_cell_threshold: int | None = None,
    bounds: tuple[float, ...] = (),
) -> Sensitivity:
    """Judge whether ``base`` vs ``over`` results make a query valid evidence.

    Args:
        base: the query's result on the base database.
        over: its result on the witness overlay.
        display: the environment's display limits (what the agent could see).
        small_cell_threshold: for a population task under the five-unit rule
            (1..threshold-1 eligible units), the threshold: a count below it on
            the base that reaches it with the witness also shows the gap.
        bounds: numbers the task names as bounds (``task_bounds``): a changed row of the
            same unit (another cell equal) whose value crosses one shows the gap (the next
            admission 331 days after discharge on the base, 0.5 days with the witness, for
            "readmitted within 21 days": the witness adds no unit, it changes one).

    Returns:
        A ``Sensitivity``; the rule is in the module docstring.
    """
    # memoised on the (cached, shared) result objects: the samples of a GRPO group
    # compare the same base and overlay results
    return memo_on(base, ("compare", id(over), display_key(display), small_cell_threshold, bounds),
                   lambda: (over, _compare(base, over, display, small_cell_threshold, bounds)))[1]


def _summary_columns(vb: list[tuple[Any, ...]], vo: list[tuple[Any, ...]]) -> set[int]:
    """Columns that hold one value on every visible row of the base and one (another) on every
    visible row of the overlay: a total of the whole result repeated per row (``count(*) OVER ()``,
    c34 agent D's listing of the patient's TraZODone events with their count), not a property of
    any row. Empty unless both results have two rows or more (a one-row result is all summary)."""
    if len(vb) < 2 or len(vo) < 2 or len({len(r) for r in vb + vo}) != 1:
        return set()
    return {i for i in range(len(vb[0])) if len({r[i] for r in vb}) == 1 and len({r[i] for r in vo}) == 1
            and vb[0][i] != vo[0][i]} if len(vb[0]) > 1 else set()


def _compare(base: QueryResult, over: QueryResult, display: DisplayConfig | None, small_cell_threshold: int | None,
             bounds: tuple[float, ...] = ()) -> Sensitivity:
    vb = visible_canon(base, display)
    vo = visible_canon(over, display)
    new = list((Counter(vo) - Counter(result_canon(base))).elements())
    gone = list((Counter(vb) - Counter(result_canon(over))).elements())
    if not new and not gone:
        return Sensitivity(False, False, "the visible result is the same with the witness rows: the query cannot see them")
    if not vb:
        return Sensitivity(True, True, "the base result is empty; with the witness it is not", new, gone)
    if new and not gone:
        return Sensitivity(True, True, "rows appear with the witness that the base result lacks", new, gone)
    if gone and not new:
        return Sensitivity(True, True, "the base result shows rows the witness replaces", new, gone)
    summary = _summary_columns(vb, vo)
    if summary:  # "count(*) OVER ()" beside a listing: judge the listing without the result's own total
        keep = lambda rows: [tuple(c for i, c in enumerate(r) if i not in summary) for r in rows]  # noqa: E731
        new_l = list((Counter(keep(vo)) - Counter(keep(result_canon(base)))).elements())
        gone_l = list((Counter(keep(vb)) - Counter(keep(result_canon(over)))).elements())
        if new_l and not gone_l:
            return Sensitivity(True, True, "rows appear with the witness that the base listing lacks (its columns "
                               "that repeat one total on every row set aside)", new, gone)
    for g in gone:
        for n in new:
            if len(g) == len(n) and _gap_pair(g, n, small_cell_threshold, bounds):
                return Sensitivity(True, True, "a value empty/zero/NULL (or a small-cell count, a list without the member the witness adds, or on the other side of a bound "
                                   "the task names) on the base is filled with the witness", new, gone)
    if small_cell_threshold is not None and _small_total(vb, vo, small_cell_threshold):
        return Sensitivity(True, True, "a count whose total over the result's rows is below the five-unit threshold on the "
                           "base reaches it with the witness", new, gone)
    return Sensitivity(True, False, "the result changes with the witness, but the base result does not show an absence, NULL or zero", new, gone)
