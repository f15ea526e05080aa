"""The per-trajectory evidence budget (issue 16; ARCHITECTURE.md section 4, step 4).

Re-executing evidence costs up to three runs per query (the base, the re-keyed witness overlay,
the decoy), so a trajectory of many slow legal queries could make one verdict take minutes and
stall a batch. Two limits bound what one trajectory may cost, charged to it alone:

* **count**: at most ``VerifyConfig.max_evidence_queries`` queries are evaluated, chosen cited
  steps first, then the latest steps (``select``); the others are recorded as
  ``not_evaluated`` and count neither for nor against the agent (an environment episode has at
  most ``EnvConfig.max_steps`` = 20 tool calls, under the default of 32);
* **time**: the CPU seconds of its query executions (``QueryResult.cpu_s``; wall seconds when
  unmeasured), summed over base, overlays and decoys, may not exceed
  ``VerifyConfig.evidence_time_budget_s``. CPU seconds do not grow with the machine's load, and
  a query stopped by its wall limit before it used its time in CPU seconds is run again with
  more wall time (``_run_on_cpu``, issue 31): a time-out is charged to the agent only when its
  query's own work passes the limit. A result served from a cache is
  charged what it cost when it ran, so the charge does not depend
  on what other trajectories a worker scored before (the verdict is the same for any worker
  count, batch order or load). Each query runs under ``min(query limit, budget left)``; when the
  budget is spent, the query that ran out and all later ones are ``over_budget`` and the verdict
  fails with ``EVIDENCE_BUDGET_EXCEEDED``. Runs the verifier does not make cost nothing: the
  perturbation runs of the task's own reference query (``_evaluate.reference_safe``) and overlay
  results derived from the base (``_derivable``).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Hashable, Sequence

from ..sql import HARD_TIME_FACTOR, ConnectionSpec, QueryFailed, QueryResult, QueryTimeout, execute_guarded
from ..sql import _cache as query_cache
from ._evidence import EvidenceQuery


class BudgetExhausted(Exception):
    """The trajectory's evidence time budget is spent (the query was not run, or was stopped)."""


class EvidenceBudget:
    """Wall seconds a trajectory's evidence queries may still use.

    Args:
        time_budget_s: the total (``math.inf``: unlimited, for the verifier's own calibration queries).
    """

    def __init__(self, time_budget_s: float) -> None:
        self.time_budget_s = time_budget_s
        self.spent_s = 0.0
        self.exhausted = False

    def run(self, scope: Hashable, spec: ConnectionSpec, safe_sql: str, *, time_limit_s: float, row_cap: int) -> QueryResult:
        """Run checked SQL through the query process (``verifier.sql.execute_guarded``), from the
        worker's query cache when it holds the result, and charge its cost.

        Args:
            scope: the cache scope (database, overlay).
            spec: the connection the query runs on.
            safe_sql: checked DuckDB SQL (canonical: its own cache key).
            time_limit_s: the per-query limit (``VerifyConfig.query_time_limit_s``).
            row_cap: rows fetched at most.

        Returns:
            The result.

        Raises:
            BudgetExhausted: no budget left, or the query was stopped by the budget rather than by
                its own limit.
            QueryFailed: the query failed (its cost is charged).
        """
        left = self.time_budget_s - self.spent_s
        if self.exhausted or left <= 0:
            self.exhausted = True
            raise BudgetExhausted()
        limit = min(time_limit_s, left)
        try:
            res = _cached(scope, safe_sql, row_cap, lambda: _run_on_cpu(spec, safe_sql, limit, time_limit_s, row_cap))
        except QueryFailed as exc:
            # a time-out is charged its limit, the CPU seconds an idle machine spends before stopping
            # it: a re-run after a load-stopped attempt may burn more before it is judged, and what it
            # burns depends on the load (clean-clone CI: the same trajectory exhausted its 1 s budget
            # in one scoring of three)
            self.spent_s += limit if isinstance(exc, QueryTimeout) else _cost(exc)
            if isinstance(exc, QueryTimeout) and limit < time_limit_s:
                self.exhausted = True
                raise BudgetExhausted() from None
            raise
        self.spent_s += _cost(res)
        return res

    def charge(self, seconds: float) -> None:
        """Charge ``seconds`` of work that is not a query (re-running a Python step's code,
        ``_printed``); the budget is exhausted when the total passes it."""
        self.spent_s += max(0.0, seconds)
        if self.spent_s > self.time_budget_s:
            self.exhausted = True

    def summary(self) -> dict[str, Any]:
        """``{"time_budget_s", "exhausted"}`` for the verdict's details (the seconds spent are
        left out: they vary from run to run, and verdicts are byte-identical across runs)."""
        return {"time_budget_s": None if math.isinf(self.time_budget_s) else self.time_budget_s,
                "exhausted": self.exhausted}


#: A query stopped by its wall-clock limit after less than this fraction of the limit in CPU
#: seconds was slowed by the machine's load (other workers, other processes), not by its own work.
LOADED_FRACTION = 0.8
#: Its one re-run may take this multiple of the limit in wall seconds (still judged by CPU seconds).
LOADED_WALL_FACTOR = 4.0


def _run_on_cpu(spec: ConnectionSpec, safe_sql: str, limit: float, configured_s: float, row_cap: int) -> QueryResult:
    """Run checked SQL under ``limit`` seconds judged by the query process's CPU time (issue 31).

    The query process stops a query at ``limit`` wall seconds. When it stopped one that had used
    less than ``LOADED_FRACTION`` of ``limit`` in CPU seconds, the machine's load, not the query,
    ran out the clock (on an idle machine the query process gets one core: CPU ~ wall): the
    query is run once more with ``LOADED_WALL_FACTOR`` x ``limit`` wall seconds, and its result
    stands unless it used more than ``limit`` CPU seconds (then it is the ``QueryTimeout`` an
    idle machine would have given). So a time-out is charged to the agent only when the query's
    own work passes the limit, whatever the worker count or the machine's load, up to a load that
    slows it more than ``LOADED_WALL_FACTOR`` times. ``configured_s`` (the configured per-query
    limit) sets the grace before the query process is killed (``execute_guarded``'s
    ``kill_after_s``). Raises ``QueryTimeout`` and ``QueryFailed`` as ``execute_guarded``.
    """
    grace = (HARD_TIME_FACTOR - 1) * configured_s
    try:
        return execute_guarded(spec, safe_sql, time_limit_s=limit, row_cap=row_cap, kill_after_s=limit + grace)
    except QueryTimeout as exc:
        cpu = getattr(exc, "cpu_s", None)
        if cpu is None or cpu >= LOADED_FRACTION * limit:
            raise
    # the load-stopped run is not charged: how far it got depends on the load
    wall = LOADED_WALL_FACTOR * limit
    try:
        res = execute_guarded(spec, safe_sql, time_limit_s=wall, row_cap=row_cap, kill_after_s=wall + grace)
    except QueryTimeout as again:
        raise _with_cost(QueryTimeout(safe_sql, limit), again) from None
    if res.cpu_s is not None and res.cpu_s > limit:
        raise _with_cost(QueryTimeout(safe_sql, limit), res) from None
    return res


def _cost(ran: QueryResult | QueryFailed) -> float:
    """What a run is charged: its CPU seconds when the query process measured them (they do not
    grow with the machine's load), else its wall seconds (``cost_s`` of a failure: a killed
    child's replacement included)."""
    cpu = getattr(ran, "cpu_s", None)
    return cpu if cpu is not None else getattr(ran, "cost_s", getattr(ran, "elapsed_s", 0.0))


def _with_cost(exc: QueryTimeout, ran: QueryResult | QueryFailed) -> QueryTimeout:
    """``exc`` carrying the cost of the run ``ran`` it stands for."""
    exc.cpu_s, exc.elapsed_s = getattr(ran, "cpu_s", None), getattr(ran, "elapsed_s", 0.0)  # type: ignore[attr-defined]
    exc.cost_s = getattr(ran, "cost_s", exc.elapsed_s)  # type: ignore[attr-defined]
    return exc


def _cached(scope: Hashable, sql: str, row_cap: int, run: Callable[[], QueryResult]) -> QueryResult:
    cache = query_cache.active()
    if cache is None:
        return run()
    # ``sql`` is checked SQL regenerated by sqlglot: canonical already, its own key
    return cache.get_or_run(sql, run, scope=scope, row_cap=row_cap, normalise=False)


def select(queries: Sequence[EvidenceQuery], cited: Sequence[int], max_queries: int) -> tuple[list[EvidenceQuery], list[EvidenceQuery]]:
    """Which evidence queries are evaluated: cited steps first, then the latest steps.

    Args:
        queries: the extracted queries, in trajectory order.
        cited: the response's valid cited steps (empty: none).
        max_queries: how many may be evaluated (``VerifyConfig.max_evidence_queries``).

    Returns:
        ``(evaluated, skipped)``: ``evaluated`` in the order they are run (cited first, then by
        step, latest first; a step's queries in their order); ``skipped`` in trajectory order.
    """
    marked = set(cited)
    ranked = sorted(range(len(queries)), key=lambda i: (queries[i].step not in marked, -queries[i].step, queries[i].position))
    keep = set(ranked[:max_queries])
    return [queries[i] for i in ranked[:max_queries]], [q for i, q in enumerate(queries) if i not in keep]
