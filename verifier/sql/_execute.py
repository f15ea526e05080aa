"""Running checked SQL: read-only DuckDB connections, time limits, row caps.

ARCHITECTURE.md section 4 (Noise step 4) and section 6. Two layers on top of the allowlist
(``_safety.check_read_only``), each enough on its own for the common attacks:

1. ``open_readonly`` opens DuckDB ``read_only`` with external access disabled,
   extension auto-install/auto-load off and the configuration locked
   (DuckDB "Securing DuckDB" operations manual: ``enable_external_access``,
   ``autoinstall_known_extensions``, ``autoload_known_extensions``,
   ``lock_configuration``).
2. ``run_query`` enforces a wall-clock limit with ``connection.interrupt()``
   called from a timer thread (one watchdog thread per process serving every
   query's deadline; no signals, so it works off the main thread) and a row
   cap; the connection stays usable after an interrupt.

A DuckDB connection must not be used by two threads at once;
``thread_connection`` keeps one read-only connection per (process, thread,
database file).
"""

from __future__ import annotations

import heapq
import math
import os
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import duckdb

from ..contract import InputError, SourceDataError, VerifierError
from ._safety import _IDENT, check_read_only

#: DuckDB configuration for every connection that runs untrusted SQL.
READONLY_CONFIG: dict[str, Any] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "lock_configuration": True,
}

#: Resource limits of every DuckDB instance that runs untrusted SQL (read-only
#: connections here, witness overlays in ``verifier.abstention._witness``), set when the
#: instance is created, before ``lock_configuration``, so SQL cannot raise them.
#: ``memory_limit`` bounds DuckDB's buffer manager: a query needing more fails
#: with DuckDB's out-of-memory error (``QueryFailed``) and the connection stays
#: usable; ``temp_directory = ''`` means nothing is spilled to disk (the
#: verifier writes no files), ``threads = 1``: batch scoring runs in parallel
#: across worker processes, and a single thread keeps results of queries without
#: ORDER BY deterministic (with 2 threads, ``SELECT * FROM t LIMIT 5`` on a
#: witness overlay's UNION ALL view returned different rows from run to run,
#: so the same trajectory could get different verdicts).
#: Overridable per process with the environment variables
#: ``EHR_VERIFIER_DUCKDB_MEMORY`` (DuckDB size text, e.g. "2GB") and
#: ``EHR_VERIFIER_DUCKDB_THREADS``. Source: DuckDB configuration reference
#: (``memory_limit``, ``threads``, ``temp_directory``) and its guide
#: "Out-of-memory errors" (memory_limit covers the buffer manager only, so
#: keep it well below the machine's memory).
RESOURCE_CONFIG: dict[str, Any] = {
    "memory_limit": os.environ.get("EHR_VERIFIER_DUCKDB_MEMORY", "1GB"),
    "threads": int(os.environ.get("EHR_VERIFIER_DUCKDB_THREADS", "1")),
    "temp_directory": "",
}

# ---------------------------------------------------------------- errors/results
class QueryFailed(VerifierError):
    """A checked query failed when DuckDB ran it (bad column, type error, ...).

    Args:
        sql: the query that ran.
        message: DuckDB's error message.
    """

    def __init__(self, sql: str, message: str) -> None:
        self.sql = sql
        self.message = message
        super().__init__(f"query failed: {message}")


class QueryTimeout(QueryFailed):
    """A checked query was interrupted at its time limit.

    A subclass of ``QueryFailed``: a timed-out query is a failed query.

    Args:
        sql: the query that ran.
        time_limit_s: the limit that was reached, in seconds.
    """

    def __init__(self, sql: str, time_limit_s: float) -> None:
        self.time_limit_s = time_limit_s
        super().__init__(sql, f"interrupted after the {time_limit_s:g} s time limit")


@dataclass(frozen=True)
class QueryResult:
    """Rows fetched by ``run_query``.

    Attributes:
        columns: column names, in order.
        rows: at most ``row_cap`` rows, each a tuple aligned with ``columns``
            (Python values as DuckDB returns them: int, float, Decimal, str,
            datetime, None, ...).
        truncated: True when the query had more than ``row_cap`` rows.
        elapsed_s: wall seconds the query took where it ran (set by
            ``verifier.sql._guard``; 0.0 otherwise); not part of equality. Evidence
            budgets charge it again when the result comes from a cache.
        cpu_s: CPU seconds (user + system) the query process spent on the query (set by
            ``verifier.sql._guard``; ``None`` otherwise): unlike ``elapsed_s`` it does not grow
            with the machine's load (issue 31); not part of equality.
    """

    columns: list[str]
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    truncated: bool = False
    elapsed_s: float = field(default=0.0, compare=False)
    cpu_s: float | None = field(default=None, compare=False)


# ---------------------------------------------------------------- connections
def open_readonly(db_path: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """Open the clinical database for untrusted reads.

    The file is ATTACHed ``READ_ONLY`` to a fresh in-memory DuckDB instance,
    under its usual catalog name (the file stem, as ``duckdb.connect(path)``
    would name it) and made the default database; then external access is
    disabled and the configuration locked. Going through ATTACH rather than
    ``duckdb.connect(path, config=...)`` keeps this connection out of DuckDB's
    per-process instance cache, so other code in the process may still open
    the same file with its own settings (DuckDB refuses two configurations of
    one cached instance), and a forked worker never reuses an instance
    inherited from its parent.

    Args:
        db_path: an existing DuckDB file.

    Returns:
        A connection whose only database is the file, read-only, with
        ``READONLY_CONFIG`` in force (external access disabled, extension
        auto-install/auto-load off, configuration locked so SQL cannot undo
        any of it) and ``RESOURCE_CONFIG`` (memory limit, no spilling to disk,
        a small thread pool).

    Raises:
        SourceDataError: the file does not exist or DuckDB cannot open it.
    """
    path = Path(db_path)
    if not path.is_file():
        raise SourceDataError(path, "DuckDB database file not found")
    alias = path.stem if _IDENT.fullmatch(path.stem) and path.stem.lower() not in _RESERVED_CATALOGS else "db"
    setup = {k: v for k, v in READONLY_CONFIG.items() if k not in ("enable_external_access", "lock_configuration")}
    setup.update(RESOURCE_CONFIG)
    con = duckdb.connect(":memory:", config=setup)
    try:
        con.execute(f"ATTACH '{path.as_posix().replace(chr(39), chr(39) * 2)}' AS \"{alias}\" (READ_ONLY)")
        con.execute(f'USE "{alias}"')
        con.execute("SET enable_progress_bar = false")  # a long query must not draw on the caller's terminal
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except duckdb.Error as exc:
        con.close()
        raise SourceDataError(path, f"cannot open read-only: {exc}") from exc
    return con


#: Catalog names DuckDB reserves (a file with such a stem is attached as ``db``).
_RESERVED_CATALOGS = frozenset({"memory", "system", "temp", "main", "information_schema", "pg_catalog"})


_local = threading.local()


@lru_cache(maxsize=1024)
def resolved_path(path: str) -> str:
    """``path`` made absolute with symlinks resolved (memoised; used as a cache key)."""
    return str(Path(path).resolve())


def thread_connection(db_path: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """The calling thread's read-only connection to ``db_path`` (opened once, then reused).

    Keyed by (process id, resolved path) so a forked worker never reuses its
    parent's connection. Never share the returned connection with another thread.

    Raises:
        SourceDataError: as ``open_readonly``.
    """
    key = (os.getpid(), resolved_path(str(db_path)))
    cache: dict[tuple[int, str], duckdb.DuckDBPyConnection] | None = getattr(_local, "cons", None)
    if cache is None:
        cache = _local.cons = {}
    con = cache.get(key)
    if con is None:
        con = cache[key] = open_readonly(db_path)
    return con


# ---------------------------------------------------------------- running
class _Watcher:
    """One daemon thread per process that interrupts connections at their deadlines.

    ``arm`` registers (deadline, connection) and returns a token; ``disarm``
    removes it. The thread sleeps until the earliest deadline and calls
    ``connection.interrupt()`` for a token still armed, under the same lock
    that ``disarm`` takes, so an interrupt can never reach a query that has
    already finished. (A ``threading.Timer`` per query costs a thread start
    each time; this is the same mechanism, shared.) Restarted after ``fork``.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._armed: dict[int, duckdb.DuckDBPyConnection] = {}
        self._fired: set[int] = set()
        self._owner: dict[int, int] = {}  # token -> ident of the thread that armed it
        self._abandoned: set[int] = set()  # idents of threads whose queries are refused
        self._next = 0
        self._pid = -1
        self._sleep_until = math.inf  # the deadline the thread sleeps until (inf: until notified)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._reset_after_fork)

    def _reset_after_fork(self) -> None:
        self._cond = threading.Condition()  # the parent's lock state is not ours
        self._pid = -1

    def _ensure_thread(self) -> None:
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._heap, self._armed, self._fired, self._owner, self._abandoned = [], {}, set(), {}, set()
            self._sleep_until = math.inf
            threading.Thread(target=self._run, name="sqlsafe-watchdog", daemon=True).start()

    def arm(self, con: duckdb.DuckDBPyConnection, limit_s: float) -> int:
        """Start the clock for a query ``con`` is about to run; returns its token.

        Raises:
            AbandonedThread: the calling thread was abandoned (``abandon_thread``).
        """
        with self._cond:
            self._ensure_thread()
            if threading.get_ident() in self._abandoned:
                raise AbandonedThread("the scoring thread was abandoned at its item time limit")
            self._next += 1
            token = self._next
            self._armed[token] = con
            self._owner[token] = threading.get_ident()
            deadline = time.monotonic() + limit_s
            if len(self._heap) > 2 * len(self._armed) + 64:
                # mostly finished queries' entries (they wait for their deadline to be dropped):
                # keep the armed ones, so the heap stays within twice the queries running
                self._heap = [e for e in self._heap if e[1] in self._armed]
                heapq.heapify(self._heap)
            heapq.heappush(self._heap, (deadline, token))
            if deadline < self._sleep_until:
                # wake the thread only when it would sleep past this deadline: it sleeps until
                # the earliest entry of the heap, disarmed ones included (dropped when it wakes),
                # so queries with one time limit, run one after another, wake it about once per
                # limit instead of once per query (issue 15: a wake per query cost more CPU than
                # a small query). Every waiter is woken: ``abandon_thread`` waits on the same
                # condition, and a single wake taken by it would leave the thread asleep.
                self._cond.notify_all()
            return token

    def disarm(self, token: int) -> bool:
        """Forget ``token``; True when its deadline had fired."""
        with self._cond:
            self._armed.pop(token, None)
            if self._owner.pop(token, None) in self._abandoned:
                self._cond.notify_all()  # abandon_thread waits for this
            fired = token in self._fired
            self._fired.discard(token)
            return fired

    def abandon_thread(self, ident: int, wait_s: float = 5.0) -> int:
        """Stop thread ``ident``'s DuckDB work: interrupt the queries it is running
        now (they raise ``QueryTimeout``, as at their time limit) and refuse the ones
        it starts later (``arm`` raises ``AbandonedThread``) until ``release_thread``.
        Returns how many queries were interrupted, after waiting up to ``wait_s``
        seconds for them to return. Used when a batch item's own time limit abandons
        a scoring thread: no DuckDB call may outlive it (a native call still running
        when the interpreter exits aborts the process)."""
        with self._cond:
            self._ensure_thread()
            self._abandoned.add(ident)
            tokens = [t for t, owner in self._owner.items() if owner == ident and t in self._armed]
            for t in tokens:
                self._fired.add(t)
                self._armed[t].interrupt()
            # wait (bounded) until the interrupted calls have returned: DuckDB checks
            # for the interrupt between vectors, so this takes milliseconds
            deadline = time.monotonic() + wait_s
            while any(self._owner.get(t) == ident for t in tokens) and time.monotonic() < deadline:
                self._cond.wait(deadline - time.monotonic())
            return len(tokens)

    def release_thread(self, ident: int) -> None:
        """Forget that thread ``ident`` was abandoned (it is ending)."""
        with self._cond:
            if self._pid == os.getpid():
                self._abandoned.discard(ident)

    def _run(self) -> None:
        with self._cond:
            while True:
                while self._heap and self._heap[0][1] not in self._armed:
                    heapq.heappop(self._heap)  # disarmed already
                if not self._heap:
                    self._sleep_until = math.inf
                    self._cond.wait()
                    continue
                deadline, token = self._heap[0]
                now = time.monotonic()
                if now < deadline:
                    self._sleep_until = deadline
                    self._cond.wait(deadline - now)
                    continue
                heapq.heappop(self._heap)
                con = self._armed.get(token)
                if con is not None:
                    self._fired.add(token)
                    con.interrupt()


_WATCHER = _Watcher()


class AbandonedThread(QueryTimeout):
    """Raised instead of running a query on a thread abandoned at its item time limit."""

    def __init__(self, message: str) -> None:
        QueryFailed.__init__(self, "", message)


def abandon_thread(ident: int) -> int:
    """Interrupt thread ``ident``'s running queries and refuse its later ones (see
    ``_Watcher.abandon_thread``); returns how many were interrupted."""
    return _WATCHER.abandon_thread(ident)


def release_thread(ident: int) -> None:
    """Undo ``abandon_thread`` for a thread that is ending (its id may be reused)."""
    _WATCHER.release_thread(ident)


def execute_checked(con: duckdb.DuckDBPyConnection, safe_sql: str, *, time_limit_s: float, row_cap: int) -> QueryResult:
    """Run SQL that has already passed ``check_read_only``, with a time limit and row cap.

    For callers that hold checked SQL (``run_query`` is the entry point for
    anything else). Arguments, result and errors as ``run_query``.
    """
    if time_limit_s <= 0:
        raise InputError("time_limit_s", time_limit_s, "must be > 0 seconds")
    if row_cap < 1:
        raise InputError("row_cap", row_cap, "must be >= 1")
    token = _WATCHER.arm(con, time_limit_s)
    fired = False
    try:
        try:
            cur = con.execute(safe_sql)
            columns = [d[0] for d in (cur.description or [])]
            rows = [tuple(r) for r in cur.fetchmany(row_cap + 1)] if columns else []
        finally:
            fired = _WATCHER.disarm(token)
    except duckdb.InterruptException:
        raise QueryTimeout(safe_sql, time_limit_s) from None
    except duckdb.Error as exc:
        if fired:
            raise QueryTimeout(safe_sql, time_limit_s) from None
        raise QueryFailed(safe_sql, str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    truncated = len(rows) > row_cap
    return QueryResult(columns=columns, rows=rows[:row_cap], truncated=truncated)


def run_query(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    *,
    time_limit_s: float,
    row_cap: int,
    dialect: str = "duckdb",
) -> QueryResult:
    """Check ``sql`` with ``check_read_only`` and run it on ``con``.

    Args:
        con: a connection from ``open_readonly``/``thread_connection`` (or an
            overlay connection from ``verifier.abstention._witness``), used by this thread only.
        sql: untrusted SQL text.
        time_limit_s: wall-clock limit in seconds for executing and fetching;
            enforced with ``con.interrupt()`` from the watchdog thread.
        row_cap: rows fetched at most; more sets ``truncated``.
        dialect: the SQL's dialect (transpiled to DuckDB).

    Returns:
        ``QueryResult(columns, rows, truncated)``.

    Raises:
        UnsafeQueryError: the query was rejected (never executed).
        QueryTimeout: the time limit was reached (the connection stays usable).
        QueryFailed: DuckDB raised an error, including running out of the
            connection's ``RESOURCE_CONFIG`` memory; ``message`` is DuckDB's.
        InputError: non-positive ``time_limit_s`` or ``row_cap``.
    """
    safe = check_read_only(sql, dialect)
    return execute_checked(con, safe, time_limit_s=time_limit_s, row_cap=row_cap)
