"""Ray backend of ``verify_batch``: the same worker state, held by Ray actors.

Issue 7 item 4. Each actor builds a ``_worker.WorkerState`` (tasks, config,
scoring thread with its read-only DuckDB connection, query cache) once, then
scores chunks. Chunks go to actors round-robin and results are collected in
submission order, so the output is identical to the process backend's.

Ray is an optional extra (``pip install 'ehr-verifier[ray]'``) imported only
here. When Ray is not yet initialised this module starts a local instance
(``ray.init(num_cpus=workers)``); to use a cluster, call
``ray.init(address=...)`` before scoring. The database file must exist at the
same path on every node (it is opened read-only by each actor).
"""

from __future__ import annotations

from typing import Any


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("backend='ray' needs Ray: pip install 'ehr-verifier[ray]'") from exc
    return ray


class _Actor:
    """Holds one ``WorkerState``; ``score_chunk`` returns a ``ChunkResult``."""

    def __init__(self, init_args: tuple) -> None:
        from ._worker import make_state

        self.state = make_state(*init_args)

    def score_chunk(self, chunk: list[tuple[int, Any]]) -> Any:
        return self.state.score_chunk(chunk)


class RayPool:
    """A fixed set of Ray actors behind the ``submit``/``result``/``close`` pool interface.

    Args:
        workers: number of actors (one CPU each).
        init_args: arguments of ``_worker._init_worker`` (tasks, config, scorer,
            per-item limit, cache size); put in the object store once.

    Raises:
        ImportError: Ray is not installed.
    """

    def __init__(self, workers: int, init_args: tuple) -> None:
        ray = _ray()
        self.ray = ray
        self._started_ray = False
        if not ray.is_initialized():
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
            self._started_ray = True
        actor_cls = ray.remote(num_cpus=1)(_Actor)
        ref = ray.put(init_args)
        self.actors = [actor_cls.remote(ref) for _ in range(workers)]
        self._next = 0

    def submit(self, chunk: list[tuple[int, Any]]) -> Any:
        actor = self.actors[self._next % len(self.actors)]
        self._next += 1
        return actor.score_chunk.remote(chunk)

    def result(self, chunk: list[tuple[int, Any]], ref: Any) -> Any:
        return self.ray.get(ref)

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []
        if self._started_ray:
            self.ray.shutdown()
