"""Batch scoring: many trajectories, one verdict or one typed error record each.

ARCHITECTURE.md section 7. ``verify_batch`` streams trajectories (raw JSONL lines,
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
processes; ``"ray"``: Ray actors, see ``verifier.scoring._ray``; ``"serial"``: in
this process). Each worker keeps its own state for the pool's lifetime: the
tasks, one scoring thread (so one read-only DuckDB connection from
``verifier.sql``'s per-thread connections), and a ``QueryCache`` of
evidence-query results. Items are sent in chunks with a bounded number of
chunks in flight, so memory stays flat however long the input. Results do not
depend on the worker count, the chunk size or the cache: the output is
byte-identical for 1 or N workers (timeouts aside).
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal

from ..contract import InputError, VerifyConfig
from ._items import Record, WithTask, _chunks, as_task_map, iter_lines
from ._pool import _ProcessPool, _SerialPool
from ._worker import DEFAULT_CACHE_ENTRIES, Scorer, default_scorer, make_state

Backend = Literal["process", "ray", "serial"]

#: Items per chunk sent to a worker: one GRPO group of 8 keeps a task's samples (and
#: their shared evidence queries) on one worker while balancing the workers' load.
DEFAULT_CHUNK_SIZE = 8


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
            for res in self._pool.start():  # every worker started before the first chunk
                self._cache_counts[res.worker] = (res.cache_hits, res.cache_misses)
                self._cpu[res.worker] = res.cpu_seconds
        else:
            from ._ray import RayPool

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

    def score_with_tasks(self, pairs: Iterable[tuple[Any, Any]]) -> Iterator[Record]:
        """Score ``(trajectory, task)`` pairs: each item carries its task (``WithTask``).

        Unlike ``add_tasks``, this never restarts the pool: the workers score tasks they were
        not started with, so one pool serves every step of a training run.

        Args:
            pairs: ``(trajectory, task)`` with the trajectory as ``score`` takes it and the task
                a ``Task`` (or its dict / JSON text, validated in the worker).

        Yields:
            One record per pair, in order; a task whose ``task_id`` differs from the
            trajectory's, or an invalid task, is an error record.
        """
        yield from self.score(WithTask(traj, task) for traj, task in pairs)

    def cache_stats(self) -> dict[str, int]:
        """Evidence-cache hits and misses summed over the workers seen so far."""
        return {
            "hits": sum(h for h, _ in self._cache_counts.values()),
            "misses": sum(m for _, m in self._cache_counts.values()),
        }

    def cpu_seconds(self) -> dict[int, float]:
        """CPU seconds used so far by each worker process (by pid; the serial backend reports this process)."""
        return dict(self._cpu)


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
            models, consumed lazily; or the path of a JSONL file (``Path``, or a str naming
            an existing file), read line by line.
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
    trajectories = _items_of(trajectories)
    bv = BatchVerifier(tasks, db, workers=workers, backend=backend, config=config, **options)
    return _drain(bv, trajectories, as_json)


def _drain(bv: BatchVerifier, trajectories: Iterable[Any], as_json: bool) -> Iterator[Any]:
    with bv:
        yield from (bv.score_lines(trajectories) if as_json else bv.score(trajectories))


def _items_of(trajectories: Any) -> Iterable[Any]:
    """``trajectories`` as an iterable of items: a path (``Path`` or an existing file named by a str) is
    read as a JSONL file, line by line (``_jsonl.iter_lines``); a str or bytes that is not a file is
    refused, since iterating it would score one character per item.

    Raises:
        InputError: ``trajectories`` is text that is not the path of an existing file.
    """
    import os

    if isinstance(trajectories, os.PathLike) or (isinstance(trajectories, str) and _is_file(trajectories)):
        return iter_lines(trajectories)
    if isinstance(trajectories, (str, bytes, bytearray)):
        raise InputError("trajectories", str(trajectories)[:80],
                         "expected an iterable of items (JSON lines, dicts, Trajectory models) or the path of a JSONL file")
    return trajectories


def _is_file(text: str) -> bool:
    """Whether ``text`` names an existing file (a JSON line is not a path: too long, or not a file)."""
    if "\n" in text or len(text) > 4096:
        return False
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # e.g. a name component over 255 bytes, a NUL byte
        return False
