"""Per-stage CPU breakdown of batch scoring (issue 15), for ``bench_batch.py``.

``breakdown(lines, warm, tasks, db)`` scores the batch once more in this process, serially,
under ``cProfile`` with a CPU-time clock (``time.process_time``), and attributes the CPU to
the stages of the Noise path: sqlglot analysis, perturbation building, overlay creation and
DuckDB executions per overlay kind (base, re-keyed witness, decoy, nuisance), comparisons,
rendering, the five-unit rule and the reasoning check. Nothing in the library is instrumented:
the profiler is on only for this pass, so the breakdown costs nothing when it is not asked for.

So that the profiler sees the DuckDB work, the pass runs the evidence queries in this process
(``_InProcess`` stands in for ``verifier.sql``'s query process: same factories, same
``execute_checked``, same connection LRU); the pickling and pipe transfer to a real query
process are therefore not in the breakdown. Profiling slows Python code more than DuckDB's
native code, so the shares are indicative; the throughput figures come from the unprofiled runs.
"""

from __future__ import annotations

import cProfile
import pstats
import time
from collections import OrderedDict, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from verifier.contract import Task, VerifyConfig

#: Stages attributed from the profile: (label, [(module path suffix, function name)], callers
#: excluded: a function's time when called from these is counted by the stage of the caller).
_STAGES: list[tuple[str, list[tuple[str, str]], set[str]]] = [
    ("read trajectory (JSON, pydantic)", [("scoring/_items.py", "_to_trajectory")], set()),
    ("parse the final response", [("verifier/parse.py", "parse")], set()),
    ("Clean matching", [("verifier/verify.py", "_verify_clean")], set()),
    ("Noise: evidence extraction", [("abstention/_evidence.py", "extract_evidence")], set()),
    ("Noise: SQL analysis (tokenize, parse, allowlist, tables, volatile/opaque syntax)",
     [("abstention/_noise.py", "_analyse")], set()),
    ("Noise: opaque comparison with earlier outputs", [("abstention/_opaque.py", "opaque_comparison"),
                                                       ("abstention/_opaque.py", "earlier_numbers")], set()),
    ("Noise: perturbation building (re-key, decoy, nuisance; verifier's own reads)",
     [("abstention/_rekey.py", "rekeyed_witness"), ("abstention/_decoy.py", "decoy_witness"),
      ("abstention/_decoy.py", "decoy_markers"), ("abstention/_decoy.py", "item_nuisance")], set()),
    ("Noise: recorded output vs re-executed (fabrication check, rendering)",
     [("abstention/_dialect.py", "output_matches_across")], set()),
    ("Noise: witness comparison (visible rows, canonical cells)", [("abstention/_witness.py", "compare")],
     {"change_tolerated", "nuisance_tolerated"}),
    ("Noise: perturbation comparison (in-scope invariance)", [("abstention/_invariance.py", "tolerated")], set()),
    ("Noise: five-unit rule", [("abstention/_small_cell.py", "check_small_cell")], set()),
    ("Noise: reasoning check", [("abstention/_reasoning.py", "check_reasoning")], set()),
    ("verdict JSON", [("scoring/_items.py", "record_json")], set()),
]


class _InProcess:
    """Stands in for the query process (``verifier.sql._guard.QueryProcess.run``) in this process,
    recording the CPU seconds of opening each connection and of each execution by connection key."""

    def __init__(self) -> None:
        from verifier.sql import _guard

        self.cons: OrderedDict[Any, Any] = OrderedDict()
        self.max_cons = _guard.CHILD_CONNECTIONS
        self.opened: dict[Any, float] = defaultdict(float)
        self.executed: dict[Any, float] = defaultdict(float)
        self.counts: dict[Any, list[int]] = defaultdict(lambda: [0, 0])

    def run(self, spec: Any, safe_sql: str, *, time_limit_s: float, row_cap: int, kill_after_s: float | None = None) -> Any:
        from verifier.sql._execute import execute_checked

        c0 = time.process_time()
        if spec.key not in self.cons:
            self.cons[spec.key] = spec.factory(*spec.args)
            self.counts[spec.key][0] += 1
            while len(self.cons) > self.max_cons:
                self.cons.popitem(last=False)[1].close()
        self.cons.move_to_end(spec.key)
        c1 = time.process_time()
        obj = self.cons[spec.key]
        t0 = time.monotonic()
        try:
            res = execute_checked(getattr(obj, "con", obj), safe_sql, time_limit_s=time_limit_s, row_cap=row_cap)
        finally:
            self.opened[spec.key] += c1 - c0
            self.executed[spec.key] += time.process_time() - c1
            self.counts[spec.key][1] += 1
        return replace(res, elapsed_s=time.monotonic() - t0)

    def close(self) -> None:
        for obj in self.cons.values():
            obj.close()
        self.cons.clear()


def _overlay_kinds(tasks: Sequence[Task], db: Path, config: VerifyConfig) -> dict[str, str]:
    """``{witness_key: kind}`` for the overlays the Noise tasks use (computed after the pass: memoised)."""
    from verifier.abstention._decoy import decoy_witness, item_nuisance
    from verifier.abstention._rekey import rekeyed_witness, task_named_values
    from verifier.abstention._witness import witness_key

    kinds: dict[str, str] = {}
    for t in tasks:
        w = t.reference.witness
        if t.condition != "noise" or not w:
            continue
        variant = rekeyed_witness(db, w, task_named_values(t)) or w
        for kind, rows in (("decoy", decoy_witness(db, t)), ("nuisance", (item_nuisance(db, t, variant) or (None,))[0]),
                           ("re-keyed witness", variant), ("witness", w)):
            if rows:
                kinds.setdefault(witness_key(rows), kind)
    return kinds


def _function_time(stats: pstats.Stats, suffix: str, name: str, excluded_callers: set[str]) -> float:
    total = 0.0
    for (path, _, fn), (_, _, _, ct, callers) in stats.stats.items():  # type: ignore[attr-defined]
        if fn != name or not path.replace("\\", "/").endswith(suffix):
            continue
        if not excluded_callers:
            total += ct
            continue
        for (_, _, caller), edge in callers.items():
            if caller not in excluded_callers:
                total += edge[3]
    return total


def breakdown(lines: Sequence[str], warm: Sequence[str], tasks: Mapping[str, Task], db: Path,
              cache_entries: int = 8192) -> list[tuple[str, float]]:
    """CPU seconds per stage for scoring ``lines`` (after ``warm``) serially in this process.

    Returns:
        ``[(stage label, CPU seconds)]``, the stages above, then the DuckDB work per overlay kind,
        then ``other`` (the rest of the profiled pass) and ``total``.
    """
    from verifier.scoring._worker import default_scorer, make_state
    from verifier.sql import _cache as query_cache
    from verifier.sql import _guard

    stand_in = _InProcess()
    saved = _guard.thread_process
    _guard.thread_process = lambda: stand_in  # type: ignore[assignment]
    prof = cProfile.Profile(time.process_time)
    try:
        state = make_state(dict(tasks), VerifyConfig(db_path=str(db)), default_scorer, None, cache_entries)
        state.score_chunk(list(enumerate(warm)))
        stand_in.opened.clear()
        stand_in.executed.clear()
        stand_in.counts.clear()

        def profiled() -> None:
            previous = query_cache.install(state.cache)
            prof.enable()
            try:
                for i, line in enumerate(lines):
                    _score_here(state, i, line)
            finally:
                prof.disable()
                query_cache.install(previous)

        c0 = time.process_time()
        state.runner.call(profiled, (), None)  # on the scoring thread, whose connections are warm
        total = time.process_time() - c0
    finally:
        _guard.thread_process = saved  # type: ignore[assignment]
    stats = pstats.Stats(prof)
    out = [(label, sum(_function_time(stats, s, n, ex) for s, n in fns)) for label, fns, ex in _STAGES]
    kinds = _overlay_kinds([tasks[k] for k in {_task_id(l) for l in lines} if k in tasks], db, VerifyConfig(db_path=str(db)))
    opened: dict[str, float] = defaultdict(float)
    executed: dict[str, float] = defaultdict(float)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for key in stand_in.executed:
        kind = "base" if key[0] == "base" else kinds.get(key[-1], "other overlay")
        opened[kind] += stand_in.opened[key]
        executed[kind] += stand_in.executed[key]
        counts[kind][0] += stand_in.counts[key][0]
        counts[kind][1] += stand_in.counts[key][1]
    stand_in.close()
    for kind in ("base", "re-keyed witness", "witness", "decoy", "nuisance", "other overlay"):
        if kind in counts:
            if kind != "base":
                out.append((f"Noise: overlay creation, {kind} ({counts[kind][0]} built)", opened[kind]))
            out.append((f"Noise: DuckDB executions on {kind} ({counts[kind][1]} run)", executed[kind]))
    out.append(("other (scoring loop, query cache, budget, dispatch)", max(0.0, total - sum(v for _, v in out))))
    out.append(("total", total))
    return out


def _score_here(state: Any, line_no: int, line: str) -> str:
    """``WorkerState.score_item`` without its scoring thread hand-off (already on it)."""
    from verifier.scoring._items import _to_trajectory, record_json

    traj = _to_trajectory(line, line_no)
    return record_json(state.scorer(traj, state.tasks[traj.task_id], state.config))


def _task_id(line: str) -> str:
    import json

    return json.loads(line)["task_id"]


def print_breakdown(rows: list[tuple[str, float]], n: int) -> None:
    """Print ``rows`` (from ``breakdown``) as CPU ms per trajectory and share of the total."""
    total = rows[-1][1] or 1e-9
    print(f"  per-stage CPU breakdown (one serial pass under cProfile, evidence queries in-process; {n} trajectories, "
          f"{1000 * total / n:.2f} ms CPU per trajectory profiled):")
    for label, sec in rows:
        if label == "total" or sec <= 0:
            continue
        print(f"    {1000 * sec / n:7.3f} ms/traj  {100 * sec / total:5.1f} %  {label}")
