"""Untrusted SQL in a query process: limits that hold whatever the SQL is (issue 16).

ARCHITECTURE.md section 4 (Noise step 4), section 6 and section 7. DuckDB's ``memory_limit``
bounds its buffer manager only, and ``connection.interrupt()`` lands only when the query checks
for it: one scalar call such as ``repeat('x', 10^9)``, ``lpad``, ``printf('%1000000000d', 1)``,
``range(10^8)`` (a list) or ``unnest`` of it builds its value outside the buffer manager, without
yielding (measured on DuckDB 2.0: 2.0-3.2 GB RSS under a 512 MB limit, and 4-9 s against a 2 s
limit). So every query an agent wrote runs in a **query process**, a child of the calling
thread's process that holds the DuckDB connections (the read-only database, the witness
overlays), and the caller supervises it:

* **time**: the child interrupts the query at its limit itself (``execute_checked``); if no answer
  has come back at ``HARD_TIME_FACTOR`` x the limit the child ends (a kernel timer it arms per
  query, SIGALRM with its default action, and the caller's SIGKILL as well: neither depends on
  the query yielding) and ``QueryTimeout`` is raised: a query stops within 1.1x its limit;
* **memory**: while a query runs, the caller reads the child's RSS from ``/proc`` every
  ``POLL_S`` seconds and kills it when it passes 1.25 x DuckDB's ``memory_limit``
  (``MemoryBudgetExceeded``, a ``QueryFailed``), so its peak RSS stays under
  ``LIMITS.rss_budget_bytes`` = 1.5 x ``memory_limit``; the calling process never runs
  untrusted SQL and holds at most one capped result;
* **result size**: a result whose pickled form exceeds ``LIMITS.result_bytes_cap`` is refused in
  the child (``QueryFailed``), so the caller never holds more than that of one result.

A killed child is replaced at once, inside the call that overran (the query's ``cost_s``, which
an evidence budget charges, includes it: it is the query's cost, not the next caller's). One query process per (process, thread), started on first use (about 0.4 s)
and reused; it ends when its thread's process ends (end of file on its pipe). Connections are
described by a ``ConnectionSpec`` (a picklable factory and its arguments) and cached in the child.
"""

from __future__ import annotations

import math
import os
import pickle
import re
import subprocess
import sys
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import Any, Callable, Hashable

from ._execute import (
    RESOURCE_CONFIG,
    AbandonedThread,
    QueryFailed,
    QueryResult,
    QueryTimeout,
    open_readonly,
    resolved_path,
)
from ._execute import abandon_thread as _abandon_connections
from ._execute import release_thread as _release_connections

#: The caller kills the query process when a query has not answered at this multiple of its limit.
HARD_TIME_FACTOR = 1.05
#: Seconds the child may take to open a connection (the read-only database, a witness overlay).
OPEN_TIMEOUT_S = 60.0
#: Seconds between two checks of the child's RSS (and of the hard deadline) while a query runs.
POLL_S = 0.005


def _size_bytes(text: str) -> int:
    """DuckDB size text (``"1GB"``, ``"512MiB"``, ``"2.5 GB"``) in bytes (decimal units as DuckDB)."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMGT]?i?B?)\s*", str(text), re.IGNORECASE)
    if not m:
        raise ValueError(f"not a size: {text!r}")
    unit = m.group(2).upper().rstrip("B")
    base = 1024 if unit.endswith("I") else 1000
    power = "_KMGT".index(unit.rstrip("I")[:1] or "_")
    return int(float(m.group(1)) * base ** power)


@dataclass(frozen=True)
class QueryLimits:
    """The query process's budgets (per process; environment overrides read once at import).

    Attributes:
        rss_budget_bytes: the documented bound on the query process's peak RSS (bytes):
            ``EHR_VERIFIER_QUERY_RSS`` (DuckDB size text) or 1.5 x ``RESOURCE_CONFIG["memory_limit"]``.
        rss_kill_bytes: RSS at which the caller kills the child: ``RSS_KILL_FRACTION`` (5/6) of
            the budget (1.25 x ``memory_limit``), the rest being headroom for what the child
            allocates between two polls (``POLL_S``) and while the kill lands.
        result_bytes_cap: largest pickled result (bytes) handed back: ``EHR_VERIFIER_RESULT_BYTES``
            or 64 MiB (a result of ``row_cap`` = 10,000 ordinary rows is well under 10 MiB).
    """

    rss_budget_bytes: int
    result_bytes_cap: int

    @property
    def rss_kill_bytes(self) -> int:
        """See the class docstring."""
        return int(self.rss_budget_bytes * RSS_KILL_FRACTION)


#: Fraction of ``rss_budget_bytes`` at which the query process is killed.
RSS_KILL_FRACTION = 5 / 6

_BUDGET = (_size_bytes(os.environ["EHR_VERIFIER_QUERY_RSS"]) if os.environ.get("EHR_VERIFIER_QUERY_RSS")
           else int(1.5 * _size_bytes(RESOURCE_CONFIG["memory_limit"])))
LIMITS = QueryLimits(rss_budget_bytes=_BUDGET,
                     result_bytes_cap=_size_bytes(os.environ.get("EHR_VERIFIER_RESULT_BYTES", "64MiB")))


@dataclass(frozen=True)
class ConnectionSpec:
    """How the query process opens a connection: ``factory(*args)`` returns a DuckDB connection
    or an object whose ``.con`` is one (and whose ``close()`` is called when it is dropped).

    Attributes:
        key: identifies the connection in the child's cache (hashable, picklable).
        factory: a module-level callable (pickled by reference).
        args: its picklable arguments.
    """

    key: Hashable
    factory: Callable[..., Any]
    args: tuple[Any, ...]


def base_spec(db_path: str | os.PathLike[str]) -> ConnectionSpec:
    """The read-only connection to ``db_path`` (``open_readonly``) as a ``ConnectionSpec``."""
    path = resolved_path(str(db_path))
    return ConnectionSpec(("base", path), open_readonly, (path,))


class MemoryBudgetExceeded(QueryFailed):
    """The query process passed its RSS budget and was killed (a failed query)."""


# ---------------------------------------------------------------- the caller's side
class QueryProcess:
    """One query process and the pipe to it (used by one thread at a time)."""

    def __init__(self, limits: QueryLimits = LIMITS) -> None:
        self.limits = limits
        self._proc: subprocess.Popen[bytes] | None = None
        self._tx: Connection | None = None
        self._rx: Connection | None = None
        self._is_ready = False
        self._open: OrderedDict[Hashable, None] = OrderedDict()
        self._cpu0: float | None = None  # the child's CPU seconds when the current query was sent

    @property
    def pid(self) -> int | None:
        """The child's process id, or ``None`` when none is running."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def start(self) -> None:
        """Start the child without waiting for it (``_ready`` waits on first use)."""
        self.kill()
        r_parent, w_child = os.pipe()
        r_child, w_parent = os.pipe()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "verifier.sql._child", str(r_child), str(w_child)],
                pass_fds=(r_child, w_child), stdin=subprocess.DEVNULL, close_fds=True,
            )
        finally:
            os.close(r_child)
            os.close(w_child)
        self._proc, self._tx, self._rx = proc, Connection(w_parent, readable=False), Connection(r_parent, writable=False)
        self._is_ready = False
        self._open = OrderedDict()  # the child's open connections, mirrored (same LRU rule)

    def _ready(self) -> None:
        """Start the child if none is running and wait (up to 60 s) until it is ready.

        Raises:
            QueryFailed: it did not start.
        """
        if self._proc is None or self._proc.poll() is not None:
            self.start()
        if self._is_ready:
            return
        assert self._rx is not None
        try:
            ok = self._rx.poll(60) and self._recv() == ("ready",)
        except (EOFError, OSError):
            ok = False
        if not ok:
            self.kill()
            raise QueryFailed("", "the query process did not start")
        self._is_ready = True

    def kill(self) -> None:
        """Kill the child (if any) and close the pipe."""
        proc, tx, rx = self._proc, self._tx, self._rx
        self._proc = self._tx = self._rx = None
        for c in (tx, rx):
            if c is not None:
                c.close()
        if proc is not None and proc.poll() is None:
            proc.kill()
        if proc is not None:
            proc.wait()

    def _recv(self) -> Any:
        assert self._rx is not None
        return pickle.loads(self._rx.recv_bytes(self.limits.result_bytes_cap + 65536))

    def _rss(self) -> int:
        try:
            with open(f"/proc/{self._proc.pid}/statm", "rb") as f:  # type: ignore[union-attr]
                return int(f.read().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            return 0

    def run(self, spec: ConnectionSpec, safe_sql: str, *, time_limit_s: float, row_cap: int,
            kill_after_s: float | None = None) -> QueryResult:
        """Run checked SQL on ``spec``'s connection in the child under the limits.

        Returns:
            The ``QueryResult`` with ``elapsed_s`` set (wall seconds from sending the
            query to its answer, measured here; the errors below carry it too, and
            ``cost_s``: ``elapsed_s`` plus the replacement of a killed child) and ``cpu_s``
            (the child's CPU seconds over the same span, from ``/proc``; the errors carry it
            too: a query stopped by its wall limit with little CPU used was slowed by the
            machine's load, not by its own work).

        Raises:
            QueryTimeout: the child's interrupt or, failing that, the kill at
                ``HARD_TIME_FACTOR`` x ``time_limit_s``.
            MemoryBudgetExceeded: the child passed ``rss_budget_bytes`` (killed).
            QueryFailed: DuckDB's error, a result over ``result_bytes_cap``, or the child died.
        """
        self._ready()  # not timed: a replacement started after a kill may still be loading
        assert self._tx is not None and self._rx is not None
        t0 = time.monotonic()
        kill_after = kill_after_s if kill_after_s is not None else time_limit_s * HARD_TIME_FACTOR
        hard = math.inf  # set when the query starts
        self._cpu0 = None
        new = spec.key not in self._open
        request = (spec.key, spec.factory, spec.args) if new else (spec.key, None, None)
        try:
            self._tx.send_bytes(pickle.dumps((*request, safe_sql, time_limit_s, row_cap, kill_after), pickle.HIGHEST_PROTOCOL))
            if new:
                # the child first opens the connection (a witness overlay takes milliseconds, a
                # cold instance longer): not the query's time; it says "started" when it is open
                while not self._rx.poll(POLL_S):
                    if time.monotonic() - t0 > OPEN_TIMEOUT_S or (self.limits.rss_kill_bytes and self._rss() > self.limits.rss_kill_bytes):
                        raise self._replace(QueryFailed(safe_sql, "the query process could not open the connection"), t0)
                started = self._recv()
                if started[0] != "started":
                    raise self._replace(QueryFailed(safe_sql, "the query process is out of step"), t0)
                if started[1]:
                    self._open[spec.key] = None
                    while len(self._open) > CHILD_CONNECTIONS:
                        self._open.popitem(last=False)
                t0 = time.monotonic()
            else:
                self._open.move_to_end(spec.key)
            self._cpu0 = self._cpu()
            hard = t0 + kill_after
            while not self._rx.poll(POLL_S):
                if time.monotonic() >= hard:
                    raise self._replace(QueryTimeout(safe_sql, time_limit_s), t0)
                if self.limits.rss_kill_bytes and self._rss() > self.limits.rss_kill_bytes:
                    raise self._replace(MemoryBudgetExceeded(
                        safe_sql, f"the query process passed its memory budget of {self.limits.rss_kill_bytes / 2**20:.0f} MiB"), t0)
            reply = self._recv()
        except (EOFError, OSError) as exc:
            if time.monotonic() >= hard:  # the child's own timer ended it at the kill deadline
                raise self._replace(QueryTimeout(safe_sql, time_limit_s), t0) from None
            raise self._replace(QueryFailed(safe_sql, f"the query process died ({type(exc).__name__})"), t0) from None
        elapsed = time.monotonic() - t0
        cpu = self._cpu_since()
        if reply[0] == "ok":
            return replace(reply[1], elapsed_s=elapsed, cpu_s=cpu)
        if reply[1] == "timeout":
            raise _with_cpu(_timed(QueryTimeout(safe_sql, time_limit_s), t0), cpu)
        raise _with_cpu(_timed(QueryFailed(safe_sql, reply[2]), t0), cpu)

    def _cpu(self) -> float | None:
        """The child's CPU seconds so far (user + system, ``/proc/<pid>/stat``), or ``None``."""
        pid = self.pid
        return None if pid is None else _proc_cpu_seconds(pid)

    def _cpu_since(self) -> float | None:
        """CPU seconds the child spent since the query was sent (``None``: unknown)."""
        start, now = self._cpu0, self._cpu()
        return None if start is None or now is None else max(0.0, now - start)

    def _replace(self, exc: QueryFailed, t0: float) -> QueryFailed:
        """Kill the child, stamp ``exc`` with ``elapsed_s`` (from sending the query until SIGKILL),
        start the replacement and wait until it is ready, then stamp ``cost_s`` (``elapsed_s``
        plus the replacement): the query that overran pays for its replacement, never the next
        caller (an evidence budget charges ``cost_s``). Returns ``exc`` to raise."""
        _with_cpu(exc, self._cpu_since())  # read before the kill ends the child
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()  # the query stops here; the kernel frees its memory while we wait below
        _timed(exc, t0)
        self.kill()
        if threading.get_ident() not in _ABANDONED:
            try:
                self._ready()
            except QueryFailed:
                pass  # started again on next use
        exc.cost_s = time.monotonic() - t0  # type: ignore[attr-defined]
        return exc

    def __del__(self) -> None:  # pragma: no cover - interpreter shutdown order
        try:
            self.kill()
        except Exception:  # noqa: BLE001
            pass


def _timed(exc: QueryFailed, t0: float) -> QueryFailed:
    """``exc`` with ``elapsed_s`` (wall seconds from sending the query to its failure) and
    ``cost_s`` (the same; ``_replace`` adds the replacement of a killed child)."""
    exc.elapsed_s = exc.cost_s = time.monotonic() - t0  # type: ignore[attr-defined]
    return exc


def _with_cpu(exc: QueryFailed, cpu_s: float | None) -> QueryFailed:
    """``exc`` with ``cpu_s`` (the query process's CPU seconds on the query; kept if already set)."""
    if getattr(exc, "cpu_s", None) is None:
        exc.cpu_s = cpu_s  # type: ignore[attr-defined]
    return exc


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_local = threading.local()
#: thread ident -> its query process, weakly: when a thread ends, its thread-local reference goes,
#: the QueryProcess is collected and its child killed (no process per finished thread lingers).
_BY_THREAD: "weakref.WeakValueDictionary[int, QueryProcess]" = weakref.WeakValueDictionary()
_ABANDONED: set[int] = set()
_LOCK = threading.Lock()


def thread_process() -> QueryProcess:
    """The calling thread's query process (created on first use; per process and thread)."""
    found = getattr(_local, "proc", None)
    if found is None or found[0] != os.getpid():
        proc = QueryProcess()
        _local.proc = (os.getpid(), proc)
        with _LOCK:
            _BY_THREAD[threading.get_ident()] = proc
        return proc
    return found[1]


def query_processes_cpu_seconds() -> float:
    """CPU seconds (user + system) used by this process's query processes, running and ended
    (``/proc/<pid>/stat`` for the running ones, ``RUSAGE_CHILDREN`` for the reaped ones): a
    worker's cost includes its query process's."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = ru.ru_utime + ru.ru_stime
    for proc in list(_BY_THREAD.values()):
        pid = proc.pid
        total += (_proc_cpu_seconds(pid) or 0.0) if pid is not None else 0.0
    return total


def _proc_cpu_seconds(pid: int) -> float | None:
    """CPU seconds of process ``pid``: the nanoseconds its threads ran (``/proc/<pid>/task/*/schedstat``;
    a fast query costs milliseconds, under the 10 ms tick), else user + system ticks of
    ``/proc/<pid>/stat``; ``None`` when neither is readable."""
    try:
        total = 0
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                    total += int(f.read().split()[0])
            except FileNotFoundError:  # a thread that ended meanwhile
                continue
        return total / 1e9
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS
    except (OSError, ValueError, IndexError):
        return None


def execute_guarded(spec: ConnectionSpec, safe_sql: str, *, time_limit_s: float, row_cap: int,
                    kill_after_s: float | None = None) -> QueryResult:
    """Run SQL that passed ``check_read_only`` on ``spec``'s connection in the calling thread's
    query process, under its time limit, row cap and the process's memory and result budgets.

    Args:
        spec: the connection (``base_spec(db)``, or a witness overlay's spec).
        safe_sql: checked DuckDB SQL.
        time_limit_s: seconds (> 0); the query stops within 1.1 x this.
        row_cap: rows fetched at most (>= 1).
        kill_after_s: when the child is killed if the query has not answered (default
            ``HARD_TIME_FACTOR`` x ``time_limit_s``); an evidence budget that shortens a query's
            limit keeps the grace of the configured one (a few milliseconds of grace would
            kill, and restart, a child whose interrupt was merely on its way).

    Returns:
        ``QueryResult`` (``elapsed_s`` set).

    Raises:
        InputError: non-positive ``time_limit_s`` or ``row_cap``.
        AbandonedThread: the calling thread was abandoned at its item time limit.
        QueryTimeout, MemoryBudgetExceeded, QueryFailed: see ``QueryProcess.run``.
    """
    from ..contract import InputError

    if not time_limit_s > 0:
        raise InputError("time_limit_s", time_limit_s, "must be > 0 seconds")
    if row_cap < 1:
        raise InputError("row_cap", row_cap, "must be >= 1")
    if threading.get_ident() in _ABANDONED:
        raise AbandonedThread("the scoring thread was abandoned at its item time limit")
    return thread_process().run(spec, safe_sql, time_limit_s=time_limit_s, row_cap=row_cap, kill_after_s=kill_after_s)


def abandon_thread(ident: int) -> int:
    """Stop thread ``ident``'s queries: kill its query process, interrupt its in-process DuckDB
    calls and refuse its later queries (``AbandonedThread``) until ``release_thread``.
    Returns how many in-process queries were interrupted."""
    with _LOCK:
        _ABANDONED.add(ident)
        proc = _BY_THREAD.get(ident)
    if proc is not None and proc._proc is not None:
        proc._proc.kill()  # its thread sees end of file and returns; the pipe is closed there
    return _abandon_connections(ident)


def release_thread(ident: int) -> None:
    """Undo ``abandon_thread`` for a thread that is ending (its id may be reused)."""
    with _LOCK:
        _ABANDONED.discard(ident)
        proc = _BY_THREAD.pop(ident, None)
    if proc is not None:
        proc.kill()
    _release_connections(ident)




#: Connections the child keeps (least recently used closed first); the caller mirrors the same LRU.
CHILD_CONNECTIONS = 32
