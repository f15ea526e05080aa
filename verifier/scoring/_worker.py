"""A scoring worker's state: tasks, one scoring thread with its read-only DuckDB connection,
a per-item time limit and a cache of evidence-query results, kept between chunks.

The same state serves the process pool (``_pool``), the Ray actors (``_ray``) and the serial
backend, so results do not depend on the backend or the worker count.
"""

from __future__ import annotations

import atexit
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ..contract import InputError, Task, Trajectory, Verdict, VerifyConfig, validate
from ..sql import _cache as query_cache
from ._items import WithTask, _ids_of, _timeout_verdict, _to_trajectory, error_record, record_json

#: A scorer: ``(trajectory, task, config) -> Verdict``; must be a module-level function (picklable).
Scorer = Callable[[Trajectory, Task, VerifyConfig], Verdict]

#: Evidence-query results cached per worker.
DEFAULT_CACHE_ENTRIES = 8192


def default_scorer(trajectory: Trajectory, task: Task, config: VerifyConfig) -> Verdict:
    """``verifier.verify.verify`` (imported on first use)."""
    from ..verify import verify

    return verify(trajectory, task, config)


class _Runner:
    """A persistent scoring thread with a per-item time limit.

    Scoring always happens on the same thread, so the per-thread DuckDB
    connection of ``verifier.sql._safety`` is opened once per worker. A call that
    overruns is abandoned (threads cannot be killed; the evidence queries
    inside it are bounded by their own interrupt-based limit) and a fresh
    thread takes over; its query process is killed (``verifier.sql.abandon_thread``).
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Any] | None = None
        self._thread: threading.Thread | None = None

    def _start(self) -> None:
        self._jobs = queue.SimpleQueue()
        jobs = self._jobs
        self._thread = threading.Thread(target=self._loop, args=(jobs,), name="ehr-verifier-scorer", daemon=True)
        self._thread.start()

    @staticmethod
    def _loop(jobs: "queue.SimpleQueue[Any]") -> None:
        while True:
            job = jobs.get()
            if job is None:  # abandoned: end after the call that overran
                _release(threading.get_ident())
                return
            fn, args, box, done = job
            try:
                box.append((True, fn(*args)))
            except BaseException as exc:  # noqa: BLE001 - reported to the caller
                box.append((False, exc))
            done.set()

    def call(self, fn: Callable[..., Any], args: tuple, limit: float | None) -> tuple[bool, Any]:
        """Run ``fn(*args)`` on the scoring thread; ``(ok, value|exception)``, or ``(False, TimeoutError)``."""
        if self._jobs is None:
            self._start()
        box: list[tuple[bool, Any]] = []
        done = threading.Event()
        assert self._jobs is not None
        self._jobs.put((fn, args, box, done))
        if not done.wait(limit):
            self._abandon(done)
            return False, TimeoutError(f"scoring exceeded {limit} s")
        return box[0]

    def _abandon(self, done: threading.Event) -> None:
        """Give up on the running call: its thread's DuckDB queries are interrupted and
        its later ones refused (``sqlsafe.abandon_thread``: a DuckDB call still running
        when the interpreter exits aborts the process), the thread ends once the call
        returns, and the next call starts a new thread."""
        stuck, jobs, self._jobs, self._thread = self._thread, self._jobs, None, None
        if jobs is not None:
            jobs.put(None)
        if stuck is not None and stuck.ident is not None and not done.is_set():
            _ABANDONED.append(stuck)
            try:
                from ..sql import abandon_thread
            except ImportError:  # pragma: no cover - Noise scoring not installed
                return
            abandon_thread(stuck.ident)


#: Scoring threads given up at their item time limit. At interpreter exit they are joined
#: (bounded) before finalization: a daemon thread still alive then is stopped wherever it is,
#: and one inside DuckDB's native code (a query, or its per-thread connection's destructor
#: when the thread ends) aborts the whole process ("terminate called ...", exit code 134).
_ABANDONED: list[threading.Thread] = []


@atexit.register
def _join_abandoned(timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    for t in _ABANDONED:
        t.join(max(0.0, deadline - time.monotonic()))


def _query_processes_cpu() -> float:
    """CPU seconds of this process's query processes (``verifier.sql``); 0 without them."""
    try:
        from ..sql import query_processes_cpu_seconds
    except ImportError:  # pragma: no cover - Noise scoring not installed
        return 0.0
    return query_processes_cpu_seconds()


def _release(ident: int) -> None:
    """Let ``sqlsafe`` forget an abandoned scoring thread that is ending."""
    try:
        from ..sql import release_thread
    except ImportError:  # pragma: no cover - Noise scoring not installed
        return
    release_thread(ident)


@dataclass
class WorkerState:
    """Everything a worker keeps between chunks.

    Attributes:
        tasks: ``{task_id: Task}``.
        config: the VerifyConfig (``db_path`` set).
        scorer: the scoring function.
        item_time_limit_s: per-item limit (``None``: none).
        cache: this worker's evidence-query cache (``None``: off).
    """

    tasks: Mapping[str, Task]
    config: VerifyConfig
    scorer: Scorer = default_scorer
    item_time_limit_s: float | None = None
    cache: query_cache.QueryCache | None = None
    runner: _Runner = field(default_factory=_Runner)

    def score_item(self, line: int, item: Any) -> str:
        """Score one input item (or a ``WithTask``); returns its output JSON line (no newline)."""
        own_task = None
        if isinstance(item, WithTask):
            item, own_task = item.trajectory, item.task
        try:
            traj = _to_trajectory(item, line)
            if own_task is not None:
                own_task = own_task if isinstance(own_task, Task) else validate(Task, own_task, where=f"line {line}: task: ")
                if own_task.task_id != traj.task_id:
                    raise InputError(f"line {line}: Trajectory.task_id", traj.task_id,
                                     f"differs from the task_id of the task sent with it ({own_task.task_id!r})")
        except Exception as exc:  # noqa: BLE001 - any unreadable item is its own error record
            tid, kid = _ids_of(item)
            if not isinstance(exc, InputError):  # e.g. RecursionError from absurdly nested JSON
                exc = InputError(f"line {line}", type(exc).__name__, f"cannot be read as a trajectory: {exc}")
            return record_json(error_record(line, exc, trajectory_id=tid, task_id=kid))
        task = own_task if own_task is not None else self.tasks.get(traj.task_id)
        if task is None:
            exc = InputError(f"line {line}: Trajectory.task_id", traj.task_id, "unknown task_id: not in the tasks given")
            return record_json(error_record(line, exc, trajectory_id=traj.trajectory_id, task_id=traj.task_id))
        ok, value = self.runner.call(self.scorer, (traj, task, self.config), self.item_time_limit_s)
        if ok and isinstance(value, Verdict):
            return record_json(value)
        if ok:
            value = TypeError(f"scorer returned {type(value).__name__}, expected Verdict")
        if isinstance(value, TimeoutError) and self.item_time_limit_s is not None:
            return record_json(_timeout_verdict(traj, task, self.item_time_limit_s))
        return record_json(error_record(line, value, trajectory_id=traj.trajectory_id, task_id=traj.task_id))

    def score_chunk(self, chunk: Sequence[tuple[int, Any]]) -> "ChunkResult":
        """Score ``[(line, item), ...]``; output lines in the same order, plus cache counters."""
        previous = query_cache.install(self.cache)
        try:
            lines = [self.score_item(line, item) for line, item in chunk]
        finally:
            query_cache.install(previous)
        hits, misses = (self.cache.hits, self.cache.misses) if self.cache else (0, 0)
        return ChunkResult(os.getpid(), hits, misses, lines, time.process_time() + _query_processes_cpu())


@dataclass(frozen=True)
class ChunkResult:
    """What a worker returns for a chunk: its pid, its cache counters so far, the output
    lines, and its CPU time so far (seconds, all threads and its query processes)."""

    worker: int
    cache_hits: int
    cache_misses: int
    lines: list[str]
    cpu_seconds: float = 0.0


_STATE: WorkerState | None = None


def make_state(tasks: Mapping[str, Task], config: VerifyConfig, scorer: Scorer, limit: float | None, cache_entries: int) -> WorkerState:
    """A worker's state, with its read-only connection opened on the scoring thread."""
    cache = query_cache.QueryCache(cache_entries) if cache_entries > 0 else None
    state = WorkerState(tasks=tasks, config=config, scorer=scorer, item_time_limit_s=limit, cache=cache)
    _warm_connection(state)
    _warm_registries()
    _warm_lookups(state)
    return state


def _warm_lookups(state: WorkerState) -> None:
    """Fill the worker's database-level decoy and re-key lookups for its Noise tasks now, at
    worker start (``verifier.abstention.warm_decoy_lookups``: per database, not per task, at most
    ``WARM_BUDGET_S`` seconds), on its scoring thread: met inside a batch, they would be charged,
    once per worker, to whichever trajectories come first. Errors surface later, where scoring
    reports them with the item."""
    db = state.config.resolved_db_path()
    if db is None or not any(t.condition == "noise" for t in state.tasks.values()):
        return
    try:
        from ..abstention import warm_decoy_lookups
    except ImportError:  # pragma: no cover - Noise scoring not installed
        return
    state.runner.call(_quietly, (warm_decoy_lookups, str(db), list(state.tasks.values())), None)


def _quietly(fn: Callable[..., Any], *args: Any) -> None:
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - reported by the scorer on first use, with the item
        pass


def _warm_registries() -> None:
    """Build the scorer's lazily built, process-wide rule registries now, at worker start.

    The pint unit registry (``verifier.units.registry``: UCUM plus
    ``rules/units.txt``) costs about a second of CPU to build; built on first
    use, it would land inside whichever batch first meets a quantity answer,
    once per worker. Rule errors surface later, where scoring reports them.
    """
    try:
        from ..units.registry import get_registry
    except ImportError:  # pragma: no cover - Clean scoring not installed
        return
    try:
        get_registry()
    except Exception:  # noqa: BLE001 - reported by the scorer on first use, with the item
        pass


def _init_worker(*init_args: Any) -> None:
    global _STATE
    _STATE = make_state(*init_args)


def _warm_connection(state: WorkerState) -> None:
    """Open the worker's read-only connection on its scoring thread (``verifier.sql.thread_connection``,
    for the verifier's own reads) and start that thread's query process with its connection to the
    database (``verifier.sql.execute_guarded``, for agent SQL), so neither lands inside a batch."""
    db = state.config.resolved_db_path()
    if db is None:
        return
    from ..sql import thread_connection

    state.runner.call(thread_connection, (str(db),), None)
    state.runner.call(_warm_query_process, (str(db),), None)


def _warm_query_process(db: str) -> None:
    from ..sql import QueryFailed, base_spec, execute_guarded

    try:
        execute_guarded(base_spec(db), "SELECT 1", time_limit_s=60.0, row_cap=1)
    except QueryFailed:
        pass  # reported by the first item that needs it


def _ready_in_worker(hold_s: float) -> ChunkResult:
    """A started worker's answer to the pool's start-up probe (``_pool._ProcessPool.start``): its
    pid and CPU seconds so far (its start-up included), after holding it ``hold_s`` seconds so
    that one worker cannot answer every probe."""
    time.sleep(hold_s)
    assert _STATE is not None, "worker not initialised"
    cache = _STATE.cache
    return ChunkResult(os.getpid(), cache.hits if cache else 0, cache.misses if cache else 0, [],
                       time.process_time() + _query_processes_cpu())


def _score_chunk_in_worker(chunk: Sequence[tuple[int, Any]]) -> ChunkResult:
    assert _STATE is not None, "worker not initialised"
    return _STATE.score_chunk(chunk)
