"""Where chunks are scored: in this process (serial) or in a pool of worker processes.

The process pool uses forkserver workers (no inherited DuckDB or thread state) initialised once
with ``_worker.make_state``; a pool whose worker dies is rebuilt and the chunk re-scored item by
item, so a crashing item gets its own error record.
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any

from ._items import _ids_of, error_record, record_json
from ._worker import ChunkResult, WorkerState, _init_worker, _ready_in_worker, _score_chunk_in_worker


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
            ctx.set_forkserver_preload(["verifier.scoring._worker", "verifier.verify", "duckdb"])
        else:  # pragma: no cover
            ctx = get_context("spawn")
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=_init_worker, initargs=self.init_args)

    def start(self, hold_s: float = 0.05, rounds: int = 20) -> list[ChunkResult]:
        """Start every worker now and wait until each has run its initializer (connections,
        query process, unit registry, database lookups): ``ProcessPoolExecutor`` starts
        forkserver workers one at a time as work arrives, so a worker could otherwise start
        inside a batch and charge its start-up to it. Returns one probe result per worker seen
        (pid and CPU seconds so far); fewer than ``workers`` only if some never answered in
        ``rounds`` rounds of probes."""
        seen: dict[int, ChunkResult] = {}
        for _ in range(rounds):
            for res in [f.result() for f in [self.ex.submit(_ready_in_worker, hold_s) for _ in range(self.workers)]]:
                seen[res.worker] = res
            if len(seen) >= self.workers:
                break
        return list(seen.values())

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
