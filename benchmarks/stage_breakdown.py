"""Per-stage CPU breakdown of batch scoring (issue 15), for ``bench_batch.py``.

``breakdown(lines, warm, tasks, db)`` scores the batch once more in this process, serially, with
timers wrapped around the functions that make up each stage of the Noise path (sqlglot analysis,
perturbation building, overlay creation and DuckDB executions per overlay kind: base, re-keyed
witness, decoy, nuisance; the query cache and budget; comparisons; the five-unit rule; the
reasoning check) and attributes CPU time (``time.process_time``) exclusively: a stage called inside
another is subtracted from it. The wrappers are installed for this pass only and removed after
it, so the library carries no instrumentation: the breakdown costs nothing when not asked for.
(A ``cProfile`` pass was tried first: it slows pure-Python code such as sqlglot's parser several
times more than DuckDB's native code, and showed the SQL analysis at 25 % instead of about 8 %.)

So that the timers see the DuckDB work, the pass runs the evidence queries in this process
(``_InProcess`` stands in for ``verifier.sql``'s query process: same factories, same
``execute_checked``, same connection LRU); the pickling and pipe transfer to a real query
process are therefore not in the breakdown. The throughput figures come from the real runs.
"""

from __future__ import annotations

import functools
import importlib
import time
from collections import OrderedDict, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from verifier.contract import Task, VerifyConfig

#: Stages: (label, [(module, attribute)]): the attribute is looked up in that module at call time,
#: so wrapping it there times every call made through that name.
_STAGES: list[tuple[str, list[tuple[str, str]]]] = [
    ("read trajectory (JSON, pydantic)", [("verifier.scoring._items", "_to_trajectory")]),
    ("parse the final response", [("verifier.verify", "parse")]),
    ("Clean matching", [("verifier.verify", "_verify_clean")]),
    ("Noise: evidence extraction", [("verifier.abstention._noise", "extract_evidence")]),
    ("Noise: SQL analysis (tokenize, parse, allowlist, tables, volatile/opaque syntax)",
     [("verifier.abstention._noise", "_analyse")]),
    ("Noise: opaque comparison with earlier outputs", [("verifier.abstention._noise", "opaque_comparison"),
                                                       ("verifier.abstention._noise", "earlier_numbers")]),
    ("Noise: perturbation building (re-key, decoy, nuisance; the verifier's own reads)",
     [("verifier.abstention._noise", "rekeyed_witness"), ("verifier.abstention._noise", "decoy_witness"),
      ("verifier.abstention._noise", "decoy_markers"), ("verifier.abstention._noise", "item_nuisance")]),
    ("Noise: query cache, evidence budget, overlay shape", [("verifier.abstention._budget", "_cached"),
                                                            ("verifier.abstention._noise", "overlay_shape")]),
    ("Noise: recorded output vs re-executed (fabrication check, rendering)",
     [("verifier.abstention._noise", "output_matches_across")]),
    ("Noise: witness comparison (visible rows, canonical cells)", [("verifier.abstention._noise", "compare")]),
    ("Noise: perturbation comparison (in-scope invariance)", [("verifier.abstention._invariance", "change_tolerated"),
                                                             ("verifier.abstention._invariance", "nuisance_tolerated")]),
    ("Noise: five-unit rule", [("verifier.abstention._noise", "check_small_cell")]),
    ("Noise: reasoning check", [("verifier.abstention._noise", "check_reasoning")]),
    ("verdict JSON", [("verifier.scoring._items", "record_json")]),
]


class _Timers:
    """Exclusive CPU seconds per label: a timed call inside another is subtracted from the outer one."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._stack: list[list[float]] = []  # per open call: [start, time of nested timed calls]

    def timed(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return self.run(label, fn, *args, **kwargs)
        wrapper.__wrapped_stage__ = fn  # type: ignore[attr-defined]
        return wrapper

    def run(self, label: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        frame = [time.process_time(), 0.0]
        self._stack.append(frame)
        try:
            return fn(*args, **kwargs)
        finally:
            self._stack.pop()
            spent = time.process_time() - frame[0]
            self.seconds[label] += spent - frame[1]
            if self._stack:
                self._stack[-1][1] += spent


class _InProcess:
    """Stands in for the query process (``verifier.sql._guard.QueryProcess.run``) in this process;
    opening a connection and executing on it are timed under ``open|KEY`` and ``exec|KEY``."""

    def __init__(self, timers: _Timers) -> None:
        from verifier.sql import _guard

        self.timers = timers
        self.cons: OrderedDict[Any, Any] = OrderedDict()
        self.max_cons = _guard.CHILD_CONNECTIONS
        self.counts: dict[Any, list[int]] = defaultdict(lambda: [0, 0])

    def run(self, spec: Any, safe_sql: str, *, time_limit_s: float, row_cap: int, kill_after_s: float | None = None) -> Any:
        from verifier.sql._execute import execute_checked

        if spec.key not in self.cons:
            self.cons[spec.key] = self.timers.run(f"open|{spec.key!r}", spec.factory, *spec.args)
            self.counts[spec.key][0] += 1
            while len(self.cons) > self.max_cons:
                self.cons.popitem(last=False)[1].close()
        self.cons.move_to_end(spec.key)
        obj = self.cons[spec.key]
        self.counts[spec.key][1] += 1
        t0 = time.monotonic()
        res = self.timers.run(f"exec|{spec.key!r}", execute_checked, getattr(obj, "con", obj), safe_sql,
                              time_limit_s=time_limit_s, row_cap=row_cap)
        return replace(res, elapsed_s=time.monotonic() - t0)

    def close(self) -> None:
        for obj in self.cons.values():
            obj.close()
        self.cons.clear()


def _overlay_kinds(tasks: Sequence[Task], db: Path) -> dict[str, str]:
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


def breakdown(lines: Sequence[str], warm: Sequence[str], tasks: Mapping[str, Task], db: Path,
              cache_entries: int = 8192) -> list[tuple[str, float]]:
    """CPU seconds per stage for scoring ``lines`` (after ``warm``, untimed) serially in this process.

    Returns:
        ``[(stage label, CPU seconds)]``: the stages above, then overlay creation and DuckDB
        executions per kind (with counts in the label), then ``other`` (the rest of the pass:
        the scoring loop, verify's own steps) and ``total``.
    """
    from verifier.scoring._worker import default_scorer, make_state
    from verifier.sql import _cache as query_cache
    from verifier.sql import _guard

    timers = _Timers()
    stand_in = _InProcess(timers)
    saved = _guard.thread_process
    _guard.thread_process = lambda: stand_in  # type: ignore[assignment]
    patched: list[tuple[Any, str, Any]] = []
    try:
        state = make_state(dict(tasks), VerifyConfig(db_path=str(db)), default_scorer, None, cache_entries)
        state.score_chunk(list(enumerate(warm)))
        stand_in.counts.clear()
        for label, targets in _STAGES:
            for mod_name, attr in targets:
                mod = importlib.import_module(mod_name)
                original = getattr(mod, attr)
                patched.append((mod, attr, original))
                setattr(mod, attr, timers.timed(label, original))
        def profiled() -> float:
            previous = query_cache.install(state.cache)
            c0 = time.process_time()
            try:
                for i, line in enumerate(lines):
                    _score_here(state, i, line)
            finally:
                query_cache.install(previous)
            return time.process_time() - c0

        ok, total = state.runner.call(profiled, (), None)  # on the scoring thread, whose connections are warm
        if not ok:
            raise total
    finally:
        for mod, attr, original in reversed(patched):
            setattr(mod, attr, original)
        _guard.thread_process = saved  # type: ignore[assignment]
    out = [(label, timers.seconds.get(label, 0.0)) for label, _ in _STAGES]
    kinds = _overlay_kinds([tasks[k] for k in sorted({_task_id(l) for l in lines}) if k in tasks], db)
    per_kind: dict[tuple[str, str], float] = defaultdict(float)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for key, (opened, ran) in stand_in.counts.items():
        kind = "base" if key[0] == "base" else kinds.get(key[-1], "other overlay")
        counts[kind][0] += opened
        counts[kind][1] += ran
        per_kind[("open", kind)] += timers.seconds.get(f"open|{key!r}", 0.0)
        per_kind[("exec", kind)] += timers.seconds.get(f"exec|{key!r}", 0.0)
    stand_in.close()
    for kind in ("base", "re-keyed witness", "witness", "decoy", "nuisance", "other overlay"):
        if kind in counts:
            if kind != "base":
                out.append((f"Noise: overlay creation, {kind} ({counts[kind][0]} built)", per_kind[("open", kind)]))
            out.append((f"Noise: DuckDB executions on {kind} ({counts[kind][1]} run)", per_kind[("exec", kind)]))
    out.append(("other (scoring loop, verify's own steps, perturbation calibration glue)", max(0.0, total - sum(v for _, v in out))))
    out.append(("total", total))
    return out


def _score_here(state: Any, line_no: int, line: str) -> str:
    """``WorkerState.score_item`` without its scoring thread hand-off (already on it)."""
    from verifier.scoring import _items

    traj = _items._to_trajectory(line, line_no)
    return _items.record_json(state.scorer(traj, state.tasks[traj.task_id], state.config))


def _task_id(line: str) -> str:
    import json

    return json.loads(line)["task_id"]


def print_breakdown(rows: list[tuple[str, float]], n: int) -> None:
    """Print ``rows`` (from ``breakdown``) as CPU ms per trajectory and share of the total."""
    total = rows[-1][1] or 1e-9
    print(f"  per-stage CPU breakdown (one serial timed pass, evidence queries in-process; {n} trajectories, "
          f"{1000 * total / n:.2f} ms CPU per trajectory):")
    for label, sec in rows:
        if label == "total" or sec <= 0:
            continue
        print(f"    {1000 * sec / n:7.3f} ms/traj  {100 * sec / total:5.1f} %  {label}")
