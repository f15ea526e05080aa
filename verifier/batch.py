"""Batch scoring: many trajectories, one verdict or one typed error record each.

DESIGN.md section 7. ``verify_batch`` streams trajectories (raw JSONL lines,
dicts or ``Trajectory`` models) and yields, in input order, exactly one record
per input item:

* a verdict: ``Verdict.model_dump(mode="json")``;
* or an error record for an item that cannot be scored::

    {"line": N, "trajectory_id": str | None, "task_id": str | None,
     "error": {"type": "InputError", "message": "...", "line": N, "field": "..."}}

  (bad JSON, wrong types, unknown ``task_id``, a blank line, or an exception
  raised by the scorer; ``type`` is the exception's class name).

An item whose scoring exceeds ``item_time_limit_s`` gets a failed verdict with
reason ``TIMEOUT``.

Work runs in a pool of workers (``backend="process"``: ``concurrent.futures``
processes; ``"ray"``: Ray actors, see ``verifier.batch_ray``; ``"serial"``: in
this process). Each worker keeps its own state for the pool's lifetime: the
tasks, one scoring thread (so one read-only DuckDB connection from
``verifier.sqlsafe``'s per-thread connections), and a ``QueryCache`` of
evidence-query results. Items are sent in chunks with a bounded number of
chunks in flight, so memory stays flat however long the input. Results do not
depend on the worker count, the chunk size or the cache: the output is
byte-identical for 1 or N workers (timeouts aside).
"""

from __future__ import annotations

import codecs
import json
import os
import pickle
import queue
import threading
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from itertools import islice
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Literal, Mapping, Sequence

from pydantic import BaseModel

from . import query_cache
from .config import VerifyConfig
from .contract import load_tasks, validate
from .errors import InputError
from .reasons import ReasonCode
from .task import Task
from .trajectory import Trajectory
from .verdict import Verdict

Backend = Literal["process", "ray", "serial"]
Record = dict[str, Any]
#: A scorer: ``(trajectory, task, config) -> Verdict``; must be a module-level function (picklable).
Scorer = Callable[[Trajectory, Task, VerifyConfig], Verdict]

#: Items per chunk sent to a worker: one GRPO group of 8 keeps a task's samples (and
#: their shared evidence queries) on one worker while balancing the workers' load.
DEFAULT_CHUNK_SIZE = 8
#: Evidence-query results cached per worker.
DEFAULT_CACHE_ENTRIES = 8192
_JSON_SEPARATORS = (",", ":")


def _version() -> str:
    from . import __version__

    return __version__


def default_scorer(trajectory: Trajectory, task: Task, config: VerifyConfig) -> Verdict:
    """``verifier.verify.verify`` (imported on first use)."""
    from .verify import verify

    return verify(trajectory, task, config)


# ----------------------------------------------------------------------------- records

def error_record(line: int, exc: BaseException, *, trajectory_id: Any = None, task_id: Any = None) -> Record:
    """The error record for input line ``line`` (1-based).

    Args:
        line: the item's position in the input (1-based).
        exc: the error; its class name becomes ``error.type``; an
            ``InputError`` also gives ``error.field``.
        trajectory_id / task_id: what could be read from the item (strings),
            else ``None``.

    Returns:
        ``{"line", "trajectory_id", "task_id", "error": {"type", "message", "line"[, "field"]}}``.
    """
    err: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc), "line": line}
    if isinstance(exc, InputError):
        err["field"] = exc.field
    return {
        "line": line,
        "trajectory_id": trajectory_id if isinstance(trajectory_id, str) else None,
        "task_id": task_id if isinstance(task_id, str) else None,
        "error": err,
    }


def record_json(record: Record | Verdict) -> str:
    """One compact JSON line (no newline) for a verdict or an error record."""
    if isinstance(record, Verdict):
        return record.model_dump_json()
    return json.dumps(record, separators=_JSON_SEPARATORS, default=str)


def _ids_of(item: Any) -> tuple[Any, Any]:
    """Best-effort (trajectory_id, task_id) of an item that failed validation."""
    data = item
    if isinstance(item, (str, bytes, bytearray)):
        try:
            data = json.loads(item)
        except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: '[' * 100000
            return None, None
    if isinstance(data, Mapping):
        return data.get("trajectory_id"), data.get("task_id")
    return None, None


@dataclass(frozen=True)
class _Unsendable:
    """Stands in for an item that cannot be pickled to a worker (its error record says why)."""

    kind: str
    why: str


def _to_trajectory(item: Any, line: int) -> Trajectory:
    if isinstance(item, Trajectory):
        return item
    if isinstance(item, _Unsendable):
        raise InputError(f"line {line}", item.kind, f"cannot be sent to a worker process: {item.why}")
    if isinstance(item, (str, bytes, bytearray)):
        if isinstance(item, (bytes, bytearray)):
            try:
                text = bytes(item).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"line {line}", bytes(item[max(0, exc.start - 20): exc.end + 20]),
                                 f"not valid UTF-8 (byte {exc.start}): expected one trajectory JSON object") from None
        else:
            text = item
        if not text.strip():
            raise InputError(f"line {line}", text, "blank line: expected one trajectory JSON object")
        return validate(Trajectory, text, where=f"line {line}: ")
    if isinstance(item, Mapping):
        return validate(Trajectory, dict(item), where=f"line {line}: ")
    raise InputError(f"line {line}", type(item).__name__, "expected a JSON line, a dict or a Trajectory")


def _timeout_verdict(traj: Trajectory, task: Task, limit: float) -> Verdict:
    return Verdict(
        task_id=task.task_id,
        trajectory_id=traj.trajectory_id,
        success=False,
        score=0.0,
        condition=task.condition,
        abstained=False,
        reasons=[ReasonCode.TIMEOUT],
        details={"timeout": {"item_time_limit_s": limit}},
        verifier_version=_version(),
    )


# ----------------------------------------------------------------------------- worker state

class _Runner:
    """A persistent scoring thread with a per-item time limit.

    Scoring always happens on the same thread, so the per-thread DuckDB
    connection of ``verifier.sqlsafe`` is opened once per worker. A call that
    overruns is abandoned (threads cannot be killed; the evidence queries
    inside it are bounded by their own interrupt-based limit) and a fresh
    thread takes over.
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
            try:
                from .sqlsafe import abandon_thread
            except ImportError:  # pragma: no cover - Noise scoring not installed
                return
            abandon_thread(stuck.ident)


def _release(ident: int) -> None:
    """Let ``sqlsafe`` forget an abandoned scoring thread that is ending."""
    try:
        from .sqlsafe import release_thread
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
        """Score one input item; returns its output JSON line (no newline)."""
        try:
            traj = _to_trajectory(item, line)
        except Exception as exc:  # noqa: BLE001 - any unreadable item is its own error record
            tid, kid = _ids_of(item)
            if not isinstance(exc, InputError):  # e.g. RecursionError from absurdly nested JSON
                exc = InputError(f"line {line}", type(exc).__name__, f"cannot be read as a trajectory: {exc}")
            return record_json(error_record(line, exc, trajectory_id=tid, task_id=kid))
        task = self.tasks.get(traj.task_id)
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
        return ChunkResult(os.getpid(), hits, misses, lines, time.process_time())


@dataclass(frozen=True)
class ChunkResult:
    """What a worker returns for a chunk: its pid, its cache counters so far, the output
    lines, and its CPU time so far (seconds, all threads)."""

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
    return state


def _warm_registries() -> None:
    """Build the scorer's lazily built, process-wide rule registries now, at worker start.

    The pint unit registry (``verifier.units.registry``: UCUM plus
    ``rules/units.txt``) costs about a second of CPU to build; built on first
    use, it would land inside whichever batch first meets a quantity answer,
    once per worker. Rule errors surface later, where scoring reports them.
    """
    try:
        from .units.registry import get_registry
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
    """Open the worker's read-only connection on its scoring thread, if sqlsafe offers per-thread connections."""
    db = state.config.resolved_db_path()
    if db is None:
        return
    try:
        from . import sqlsafe
    except ImportError:  # pragma: no cover - Noise scoring not installed yet
        return
    opener = getattr(sqlsafe, "thread_connection", None)
    if opener is not None:
        state.runner.call(opener, (str(db),), None)


def _score_chunk_in_worker(chunk: Sequence[tuple[int, Any]]) -> ChunkResult:
    assert _STATE is not None, "worker not initialised"
    return _STATE.score_chunk(chunk)


# ----------------------------------------------------------------------------- inputs

def as_task_map(tasks: Mapping[str, Task] | Iterable[Task | str | Mapping[str, Any]] | str | Path) -> dict[str, Task]:
    """Normalise the ``tasks`` argument to ``{task_id: Task}``.

    Args:
        tasks: a mapping, an iterable of Tasks (or JSON lines / dicts), or the
            path of a tasks JSONL file.

    Raises:
        InputError: a task does not validate or a task_id repeats.
    """
    if isinstance(tasks, (str, Path)):
        return load_tasks(tasks)
    if isinstance(tasks, Mapping):
        return {str(k): (v if isinstance(v, Task) else validate(Task, v)) for k, v in tasks.items()}
    out: dict[str, Task] = {}
    for i, t in enumerate(tasks, start=1):
        task = t if isinstance(t, Task) else validate(Task, t, where=f"tasks[{i}]: ")
        if task.task_id in out:
            raise InputError(f"tasks[{i}].task_id", task.task_id, "duplicated task_id")
        out[task.task_id] = task
    return out


def _prepare(item: Any) -> Any:
    """Make an item cheap and safe to pickle: models become JSON text; an item that
    cannot be pickled (a dict holding a lock, a lambda...) becomes ``_Unsendable``, so
    it gets its own error record instead of failing its whole chunk."""
    if isinstance(item, BaseModel):
        return item.model_dump_json()
    if isinstance(item, (str, bytes, bytearray)):
        return item
    try:
        pickle.dumps(item)
    except Exception as exc:  # noqa: BLE001 - pickling raises many types
        return _Unsendable(type(item).__name__, f"{type(exc).__name__}: {exc}"[:300])
    return item


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[tuple[int, Any]]]:
    """``[(line, item), ...]`` chunks of ``size``; when ``items`` raises, the items read
    before it still come out (a last, short chunk), then the exception."""
    it = enumerate((_prepare(x) for x in items), start=1)
    while True:
        chunk: list[tuple[int, Any]] = []
        try:
            chunk.extend(islice(it, size))
        except Exception:
            if chunk:
                yield chunk
            raise
        if not chunk:
            return
        yield chunk


# ----------------------------------------------------------------------------- the scorer object

class BatchVerifier:
    """A reusable pool of scoring workers (keep one alive across RL steps).

    Args:
        tasks: see ``as_task_map``.
        db: the DuckDB file evidence is re-executed on (read-only); ``None``
            keeps ``config.db_path`` / ``$EHR_VERIFIER_DB``.
        workers: worker processes (or Ray actors); ``backend="serial"`` ignores it.
        backend: ``"process"``, ``"ray"`` or ``"serial"``.
        config: VerifyConfig (its ``db_path`` is replaced by ``db``).
        item_time_limit_s: per-item limit in seconds; ``None`` for none.
        chunk_size: items per chunk.
        max_in_flight: chunks submitted and not yet collected (default
            ``4 * workers``); bounds memory.
        cache_entries: evidence-query results cached per worker (0: no cache).
        scorer: ``(trajectory, task, config) -> Verdict``, module-level;
            default ``verifier.verify.verify``.

    Raises:
        InputError: bad tasks, ``workers < 1``, unknown backend.
        ImportError: ``backend="ray"`` without Ray installed (``pip install ehr-verifier[ray]``).
    """

    def __init__(
        self,
        tasks: Any,
        db: str | Path | None = None,
        *,
        workers: int = 1,
        backend: Backend = "process",
        config: VerifyConfig | None = None,
        item_time_limit_s: float | None = 120.0,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        max_in_flight: int | None = None,
        cache_entries: int = DEFAULT_CACHE_ENTRIES,
        scorer: Scorer = default_scorer,
    ) -> None:
        if workers < 1:
            raise InputError("workers", workers, "need at least one worker")
        if backend not in ("process", "ray", "serial"):
            raise InputError("backend", backend, "expected 'process', 'ray' or 'serial'")
        if chunk_size < 1:
            raise InputError("chunk_size", chunk_size, "need at least 1")
        if item_time_limit_s is not None and not item_time_limit_s > 0:
            raise InputError("item_time_limit_s", item_time_limit_s, "must be > 0 seconds (None: no limit)")
        config = config or VerifyConfig()
        if db is not None:
            config = config.model_copy(update={"db_path": str(db)})
        self.tasks = as_task_map(tasks)
        self.config = config
        self.workers = workers
        self.backend = backend
        self.chunk_size = chunk_size
        self.max_in_flight = max_in_flight or 4 * workers
        self._init_args = (self.tasks, config, scorer, item_time_limit_s, cache_entries)
        self._pool: Any = None
        self._cache_counts: dict[int, tuple[int, int]] = {}
        self._cpu: dict[int, float] = {}

    # -- pool management
    def _ensure_pool(self) -> Any:
        if self._pool is not None:
            return self._pool
        if self.backend == "serial":
            self._pool = _SerialPool(make_state(*self._init_args))
        elif self.backend == "process":
            self._pool = _ProcessPool(self.workers, self._init_args)
        else:
            from .batch_ray import RayPool

            self._pool = RayPool(self.workers, self._init_args)
        return self._pool

    def add_tasks(self, tasks: Any) -> None:
        """Make more tasks known (a process or Ray pool restarts on its next use if any task is new or changed)."""
        new = {k: v for k, v in as_task_map(tasks).items() if self.tasks.get(k) is not v and self.tasks.get(k) != v}
        if not new:
            return
        self.tasks.update(new)
        if self.backend != "serial":
            self.close()

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __enter__(self) -> "BatchVerifier":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- scoring
    def score_lines(self, trajectories: Iterable[Any]) -> Iterator[str]:
        """Yield one JSON line (no newline) per input item, in input order."""
        pool = self._ensure_pool()
        pending: deque[Any] = deque()

        def collect() -> list[str]:
            chunk0, fut = pending.popleft()
            res = pool.result(chunk0, fut)
            self._cache_counts[res.worker] = (res.cache_hits, res.cache_misses)
            self._cpu[res.worker] = res.cpu_seconds
            return res.lines

        try:
            for chunk in _chunks(trajectories, self.chunk_size):
                pending.append((chunk, pool.submit(chunk)))
                while len(pending) >= self.max_in_flight:
                    yield from collect()
        except Exception:
            # the input itself failed (a generator raised): first hand over every
            # item read before it, then let the caller see the input's exception
            while pending:
                yield from collect()
            raise
        while pending:
            yield from collect()

    def score(self, trajectories: Iterable[Any]) -> Iterator[Record]:
        """Yield one record (verdict dict or error record) per input item, in input order."""
        for line in self.score_lines(trajectories):
            yield json.loads(line)

    def cache_stats(self) -> dict[str, int]:
        """Evidence-cache hits and misses summed over the workers seen so far."""
        return {
            "hits": sum(h for h, _ in self._cache_counts.values()),
            "misses": sum(m for _, m in self._cache_counts.values()),
        }

    def cpu_seconds(self) -> dict[int, float]:
        """CPU seconds used so far by each worker process (by pid; the serial backend reports this process)."""
        return dict(self._cpu)


class _SerialPool:
    def __init__(self, state: WorkerState | None) -> None:
        assert state is not None
        self.state = state

    def submit(self, chunk: list[tuple[int, Any]]) -> ChunkResult:
        return self.state.score_chunk(chunk)

    def result(self, chunk: list[tuple[int, Any]], fut: ChunkResult) -> ChunkResult:
        return fut

    def close(self) -> None:
        pass


class _ProcessPool:
    """``ProcessPoolExecutor`` with worker state; rebuilt if a worker dies."""

    def __init__(self, workers: int, init_args: tuple) -> None:
        self.workers = workers
        self.init_args = init_args
        self.ex = self._new()

    def _new(self) -> ProcessPoolExecutor:
        # forkserver: workers never inherit the parent's DuckDB or thread state;
        # the server preloads this module so each worker starts in milliseconds.
        if os.name == "posix":
            ctx = get_context("forkserver")
            ctx.set_forkserver_preload(["verifier.batch", "verifier.verify", "duckdb"])
        else:  # pragma: no cover
            ctx = get_context("spawn")
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=_init_worker, initargs=self.init_args)

    def submit(self, chunk: list[tuple[int, Any]]) -> Future:
        try:
            return self.ex.submit(_score_chunk_in_worker, chunk)
        except BrokenProcessPool:
            self._rebuild()
            return self.ex.submit(_score_chunk_in_worker, chunk)

    def _rebuild(self) -> None:
        self.ex.shutdown(wait=False, cancel_futures=True)
        self.ex = self._new()

    def result(self, chunk: list[tuple[int, Any]], fut: Future) -> ChunkResult:
        try:
            return fut.result()
        except BrokenProcessPool:
            # A worker died (a native crash, the OOM killer). Re-score this chunk
            # item by item in a fresh pool; an item that kills a worker again
            # gets an error record. Later chunks were cancelled with the old
            # pool and are re-submitted here too when their turn comes.
            self._rebuild()
            lines: list[str] = []
            for line, item in chunk:
                try:
                    lines.extend(self.ex.submit(_score_chunk_in_worker, [(line, item)]).result().lines)
                except BrokenProcessPool as exc:
                    self._rebuild()
                    tid, kid = _ids_of(item)
                    crash = WorkerCrashed(str(exc) or "worker process died")
                    lines.append(record_json(error_record(line, crash, trajectory_id=tid, task_id=kid)))
            return ChunkResult(0, 0, 0, lines)

    def close(self) -> None:
        self.ex.shutdown(wait=True, cancel_futures=True)


class WorkerCrashed(RuntimeError):
    """A worker process died while scoring an item (reported in its error record)."""


# ----------------------------------------------------------------------------- functions

def verify_batch(
    trajectories: Iterable[Any],
    tasks: Any,
    db: str | Path | None = None,
    workers: int = 1,
    backend: Backend = "process",
    config: VerifyConfig | None = None,
    *,
    as_json: bool = False,
    **options: Any,
) -> Iterator[Any]:
    """Score trajectories against tasks; one record per input item, in input order.

    Args:
        trajectories: raw JSONL lines (str/bytes), dicts or ``Trajectory``
            models; consumed lazily.
        tasks: ``{task_id: Task}``, an iterable of Tasks, or a tasks JSONL path.
        db: DuckDB file for evidence re-execution (read-only).
        workers: worker count (same output for any value).
        backend: ``"process"`` (default), ``"ray"`` or ``"serial"``.
        config: VerifyConfig; ``db`` overrides its ``db_path``.
        as_json: yield compact JSON lines (no newline) instead of dicts.
        **options: passed to ``BatchVerifier`` (``item_time_limit_s``,
            ``chunk_size``, ``max_in_flight``, ``cache_entries``, ``scorer``).

    Yields:
        Verdict dicts (``Verdict.model_dump(mode="json")``) or error records
        (see the module docstring), or their JSON lines with ``as_json``.

    Raises:
        InputError: bad tasks or options (before any item is read).
    """
    bv = BatchVerifier(tasks, db, workers=workers, backend=backend, config=config, **options)
    return _drain(bv, trajectories, as_json)


def _drain(bv: BatchVerifier, trajectories: Iterable[Any], as_json: bool) -> Iterator[Any]:
    with bv:
        yield from (bv.score_lines(trajectories) if as_json else bv.score(trajectories))


def iter_lines(path: str | Path) -> Iterator[bytes]:
    """The lines of a JSONL file as bytes, without their line ending (every line, blank ones included).

    Lines end at ``\n`` only (JSON Lines; a ``\r`` inside a line is JSON
    whitespace, and ``\r\n`` endings lose their ``\r``). A UTF-8 byte-order
    mark at the start of the file is dropped. Bytes are not decoded here: a
    line that is not UTF-8 gets its own error record when scored.

    Raises:
        OSError: the file cannot be read.
    """
    with open(path, "rb") as fh:
        for n, line in enumerate(fh):
            if line.endswith(b"\n"):
                line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
            yield line[3:] if n == 0 and line.startswith(codecs.BOM_UTF8) else line


def verify_file(
    trajectories_path: str | Path,
    tasks: Any,
    db: str | Path | None,
    out_path: str | Path,
    *,
    workers: int = 1,
    backend: Backend = "process",
    config: VerifyConfig | None = None,
    on_record: Callable[[str], None] | None = None,
    **options: Any,
) -> int:
    """Score a trajectories JSONL file into ``out_path`` (one line per input line).

    Args:
        trajectories_path: input JSONL.
        tasks, db, workers, backend, config, options: as ``verify_batch``.
        out_path: output JSONL (overwritten).
        on_record: called with each output line (e.g. to advance a progress bar).

    Returns:
        The number of lines written.

    Raises:
        InputError: bad tasks or options, before ``out_path`` is touched.
        OSError: the input cannot be read or the output written; ``out_path``
            is replaced only when every line was written (an existing file
            survives a failed run).
    """
    records = verify_batch(iter_lines(trajectories_path), tasks, db, workers, backend, config, as_json=True, **options)
    out_path = Path(out_path)
    tmp = out_path.with_name(f".{out_path.name}.partial")
    n = 0
    try:
        with open(tmp, "w", encoding="utf-8") as out:
            for line in records:
                out.write(line + "\n")
                n += 1
                if on_record is not None:
                    on_record(line)
        tmp.replace(out_path)
    finally:
        tmp.unlink(missing_ok=True)
    return n
