"""The database fingerprint: a short, stable digest of a clinical database's content identity.

Why: a task is only meaningful on the database it was built on. Scored against another one (a
synthetic hospital's tasks on the MIMIC-IV demo), honest Noise abstentions were judged
``EVIDENCE_FABRICATED`` (25 %) and ``EVIDENCE_NOT_SENSITIVE`` (34 %) with exit code 0. So
construction records the fingerprint on each task (``Task.db_fingerprint``) and ``verify``, the
batch scorer and the CLI refuse a database whose fingerprint differs (a configuration error,
``InputError``, never a verdict).

What it covers (``FINGERPRINT_SCHEME`` 1): every base table of the database's own catalog, sorted
by schema and name, with its exact row count and its columns (name and DuckDB type, in order);
plus the full content of the small key tables ``KEY_TABLES`` (every row, sorted), so two builds with
the same shape but other patients (synthetic hospitals of two seeds) differ. Table comments,
DuckDB's storage version and the file's path or time are not part of it: the same CSVs built twice
give the same fingerprint. Cost on the real MIMIC-IV demo: about 35 ms, most of it opening the file
(``benchmarks/bench_db_fingerprint.py``); after that ``database_fingerprint`` is an ``os.stat`` and a
dictionary lookup, per process, keyed by path, size, modification time and inode, so a database
rebuilt in place is read again; ``recent_fingerprint``, which ``verify`` uses, looks at the file at
most once a second and is a dictionary lookup otherwise.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import Counter
from typing import Any, Iterable

import duckdb

from ..contract import InputError, SourceDataError, Task

#: Version of what the digest covers; part of every fingerprint (``db1:<16 hex>``).
FINGERPRINT_SCHEME = 1

#: Small tables whose every row enters the digest (the population and its admissions).
KEY_TABLES = ("patients", "admissions")

_PREFIX = f"db{FINGERPRINT_SCHEME}:"
_CACHE: dict[tuple[str, int, int, int, int], str] = {}
_LOCK = threading.Lock()


def _digest(con: duckdb.DuckDBPyConnection) -> str:
    cols = con.execute(
        "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE database_name = current_database() AND NOT internal "
        "AND (schema_name, table_name) IN (SELECT (schema_name, table_name) FROM duckdb_tables() "
        "WHERE database_name = current_database() AND NOT internal) "
        "ORDER BY schema_name, table_name, column_index"
    ).fetchall()
    h = hashlib.sha256(f"ehr-verifier database fingerprint {FINGERPRINT_SCHEME}\n".encode())
    tables = sorted({(s, t) for s, t, _, _ in cols})
    if tables:
        counts = con.execute(" UNION ALL ".join(
            f"SELECT {i}, count(*) FROM {_quote(s)}.{_quote(t)}" for i, (s, t) in enumerate(tables))).fetchall()
        by_index = dict(counts)
        for i, (s, t) in enumerate(tables):
            h.update(f"table\x1f{s}\x1f{t}\x1f{by_index[i]}\n".encode())
    for s, t, c, ty in cols:
        h.update(f"column\x1f{s}\x1f{t}\x1f{c}\x1f{ty}\n".encode())
    for key in KEY_TABLES:
        if ("main", key) in tables:
            h.update(f"rows\x1f{key}\n".encode())
            for row in con.execute(f"SELECT * FROM main.{_quote(key)} ORDER BY ALL").fetchall():
                h.update(("\x1f".join("\x00" if v is None else str(v) for v in row) + "\n").encode())
    return _PREFIX + h.hexdigest()[:16]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def compute_fingerprint(db_path: str | os.PathLike[str]) -> str:
    """Read the fingerprint of the DuckDB file ``db_path`` now (no cache).

    Args:
        db_path: an existing DuckDB database file (opened read-only, through
            ``verifier.sql.open_readonly``).

    Returns:
        ``"db1:"`` followed by 16 hex digits of a SHA-256 over the catalog (tables, exact row
        counts, column names and types) and the rows of ``KEY_TABLES`` (module docstring).

    Raises:
        SourceDataError: the file does not exist or DuckDB cannot read it.
    """
    from ..sql import open_readonly

    con = open_readonly(db_path)
    try:
        return _digest(con)
    except duckdb.Error as exc:
        raise SourceDataError(db_path, f"cannot read the database to fingerprint it: {exc}") from exc
    finally:
        con.close()


def database_fingerprint(db_path: str | os.PathLike[str]) -> str:
    """The fingerprint of ``db_path``, computed once per file version per process.

    Args:
        db_path: a DuckDB database file.

    Returns:
        As ``compute_fingerprint``. Cached by (path as given, size, modification time in ns,
        device, inode): after the first call it costs one ``os.stat``; a file rebuilt or replaced
        in place is read again. Thread-safe (two threads may both compute it once).

    Raises:
        SourceDataError: the file does not exist or DuckDB cannot read it.
    """
    path = os.fspath(db_path)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise SourceDataError(path, f"DuckDB database file not found ({exc.strerror})") from exc
    key = (path, st.st_size, st.st_mtime_ns, st.st_dev, st.st_ino)
    fp = _CACHE.get(key)
    if fp is None:
        fp = compute_fingerprint(path)
        with _LOCK:
            if len(_CACHE) >= 64:  # old versions of rebuilt files
                _CACHE.clear()
            _CACHE[key] = fp
    return fp


#: How long ``recent_fingerprint`` trusts its memo of a path before it looks at the file again (s).
RECENT_S = 1.0
_RECENT: dict[str, tuple[float, str]] = {}


def recent_fingerprint(db_path: str) -> str:
    """``database_fingerprint(db_path)`` for the hot path: a dictionary lookup per call.

    ``verify`` runs at about 75,000 Clean verdicts/s per core (``benchmarks/bench_db_fingerprint.py``);
    an ``os.stat`` per call cost it 1.6x. So the fingerprint of a path is remembered for
    ``RECENT_S`` seconds (a monotonic clock read and a lookup), after which the file is looked at
    again (one ``os.stat``; read again only if it was rebuilt). A database rebuilt under a running
    scorer is thus noticed within a second.

    Args:
        db_path: a DuckDB database file, as configured (``VerifyConfig.db_path``).

    Returns:
        As ``database_fingerprint``.

    Raises:
        SourceDataError: as ``database_fingerprint``.
    """
    hit = _RECENT.get(db_path)
    now = time.monotonic()
    if hit is not None and now - hit[0] < RECENT_S:
        return hit[1]
    fp = database_fingerprint(db_path)
    if len(_RECENT) >= 64:
        _RECENT.clear()
    _RECENT[db_path] = (now, fp)
    return fp


def mismatch_message(task_fingerprint: str, db_fingerprint: str, db_path: Any) -> str:
    """The explanation given when a task's fingerprint differs from its database's.

    Args:
        task_fingerprint: ``Task.db_fingerprint``.
        db_fingerprint: ``database_fingerprint(db_path)``.
        db_path: the database given (shown).

    Returns:
        One line naming both fingerprints and what to do.
    """
    return (f"the task was built on another database (task db_fingerprint {task_fingerprint}, "
            f"database {db_path} has {db_fingerprint}): score it against the database it was built on, "
            f"or build tasks for this one with `ehr-verifier make-tasks --db {db_path}`")


def check_tasks_database(tasks: Iterable[Task], db_path: str | os.PathLike[str], field: str = "--db") -> int:
    """Check, before any work starts, that the tasks were built on ``db_path``.

    Args:
        tasks: the tasks; those without ``db_fingerprint`` (task files written before the field
            existed, hand-written tasks) are not checked.
        db_path: the DuckDB database they are about to be run or scored on.
        field: the option or argument naming the database in the error (``--db``, ``db_path``).

    Returns:
        The number of tasks checked (those with a fingerprint).

    Raises:
        InputError: ``field`` = ``db_path``, when any task's fingerprint differs; one line saying
            how many of how many tasks differ, their fingerprints and the database's.
        SourceDataError: the database cannot be read.
    """
    tasks = list(tasks)
    stamped = [t.db_fingerprint for t in tasks if t.db_fingerprint is not None]
    if not stamped:
        return 0
    actual = database_fingerprint(db_path)
    other = Counter(fp for fp in stamped if fp != actual)
    if other:
        n = sum(other.values())
        shown = ", ".join(f"{fp} ({k})" for fp, k in other.most_common(3)) + (", ..." if len(other) > 3 else "")
        raise InputError(field, str(db_path), (
            f"{n} of {len(tasks)} tasks were built on another database (task db_fingerprint {shown}; "
            f"this database has {actual}): give the database they were built on, or build tasks for this one "
            f"with `ehr-verifier make-tasks --db {db_path}`"))
    return len(stamped)
