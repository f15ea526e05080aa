"""The per-trajectory evidence budget (issue 16; ARCHITECTURE.md section 4, step 4).

Re-executing evidence costs up to three runs per query (the base, the re-keyed witness overlay,
the decoy), so a trajectory of many slow legal queries could make one verdict take minutes and
stall a batch. Two limits bound what one trajectory may cost, charged to it alone:

* **count**: at most ``VerifyConfig.max_evidence_queries`` queries are evaluated, chosen cited
  steps first, then the latest steps (``select``); the others are recorded as
  ``not_evaluated`` and count neither for nor against the agent (an environment episode has at
  most ``EnvConfig.max_steps`` = 20 tool calls, under the default of 32);
* **time**: the wall seconds of its query executions, summed over base, overlays and decoys,
  may not exceed ``VerifyConfig.evidence_time_budget_s``. A result served from a cache is
  charged what it cost when it ran (``QueryResult.elapsed_s``), so the charge does not depend
  on what other trajectories a worker scored before (the verdict is the same for any worker
  count or batch order). Each query runs under ``min(query limit, budget left)``; when the
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
        kill_after = limit + (HARD_TIME_FACTOR - 1) * time_limit_s  # the configured limit's grace
        try:
            res = _cached(scope, safe_sql, row_cap,
                          lambda: execute_guarded(spec, safe_sql, time_limit_s=limit, row_cap=row_cap, kill_after_s=kill_after))
        except QueryFailed as exc:
            self.spent_s += getattr(exc, "cost_s", getattr(exc, "elapsed_s", 0.0))  # a killed child's replacement included
            if isinstance(exc, QueryTimeout) and limit < time_limit_s:
                self.exhausted = True
                raise BudgetExhausted() from None
            raise
        self.spent_s += res.elapsed_s
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
