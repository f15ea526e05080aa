"""Per-stage CPU breakdown of one scoring worker, end to end (issue 15), for ``bench_batch.py``.

``breakdown(lines, warm, tasks, db)`` scores the batch once more in a fresh process (cold memos,
as a pool worker starts), the way a pool worker does: ``WorkerState.score_chunk`` per chunk of 8
on the main thread, each item handed to the scoring thread, agent SQL in the real query process
(``verifier.sql._guard``). It attributes CPU seconds so that the rows sum to the worker's whole
CPU, its query process included:

* scoring thread: timers (``time.thread_time``, exclusive: a stage called inside another is
  subtracted from it) wrapped around the functions of each stage of the Noise path (sqlglot
  analysis, perturbation building, the query cache and budget, comparisons, the five-unit rule,
  the reasoning check) and the scoring side of each query-process call (pickling the request,
  the pipe, polling, unpickling the reply); the rest of the thread is "other";
* main thread: reading trajectories (JSON, pydantic), verdict JSON, the process-pool transport
  (a chunk and its result pickled and unpickled, as ``ProcessPoolExecutor`` does) and the chunk
  loop with its hand-offs to the scoring thread;
* other threads of the process (DuckDB's interrupt watchdog);
* the query process (``timed_query_process.py`` stands in for it: the same serving loop with
  timers): opening connections and executing on them per overlay kind (base, re-keyed witness,
  decoy, nuisance), pickling, and the rest (its loop, pipe reads and writes).

The wrappers are installed in that process only, so the library carries no instrumentation.
(A ``cProfile`` pass was tried first: it slows pure-Python code such as sqlglot's parser several
times more than DuckDB's native code, and showed the SQL analysis at 25 % instead of about 8 %.)
"""

from __future__ import annotations

import ast
import functools
import importlib
import threading
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from verifier.contract import Task, VerifyConfig

#: Stages: (label, [(module, attribute)]): the attribute is looked up in that module at call time,
#: so wrapping it there times every call made through that name.
_STAGES: list[tuple[str, list[tuple[str, str]]]] = [
    ("read trajectory (JSON, pydantic)", [("verifier.scoring._worker", "_to_trajectory")]),
    ("parse the final response", [("verifier.verify", "parse")]),
    ("Clean matching", [("verifier.verify", "_verify_clean")]),
    ("Noise: evidence extraction", [("verifier.abstention._noise", "extract_evidence")]),
    ("Noise: SQL analysis (tokenize, parse, allowlist, tables, volatile/opaque syntax)",
     [("verifier.abstention._evaluate", "_analyse")]),
    ("Noise: observation rule (constants given or read earlier)", [("verifier.abstention._evaluate", "problem"),
                                                                   ("verifier.abstention._evaluate", "given_by"),
                                                                   ("verifier.abstention._noise", "earlier_read")]),
    ("Noise: perturbation building (re-key, decoy, nuisance; the verifier's own reads)",
     [("verifier.abstention._evaluate", "rekeyed_witness"), ("verifier.abstention._evaluate", "decoy_witness"),
      ("verifier.abstention._evaluate", "decoy_markers"), ("verifier.abstention._evaluate", "item_nuisance")]),
    ("Noise: query cache, evidence budget, overlay shape", [("verifier.abstention._budget", "_cached"),
                                                            ("verifier.abstention._evaluate", "overlay_shape")]),
    ("Noise: recorded output vs re-executed (fabrication check, rendering)",
     [("verifier.abstention._evaluate", "output_matches_across")]),
    ("Noise: witness comparison (visible rows, canonical cells)", [("verifier.abstention._evaluate", "compare")]),
    ("Noise: perturbation comparison (in-scope invariance)", [("verifier.abstention._invariance", "change_tolerated"),
                                                             ("verifier.abstention._invariance", "nuisance_tolerated")]),
    ("Noise: five-unit rule", [("verifier.abstention._noise", "check_small_cell")]),
    ("Noise: reasoning check", [("verifier.abstention._noise", "check_reasoning")]),
    ("verdict JSON", [("verifier.scoring._worker", "record_json")]),
]


class _Timers:
    """Exclusive CPU seconds (``time.thread_time``) per label, per thread: a timed call inside
    another on the same thread is subtracted from the outer one."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._local = threading.local()

    def timed(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return self.run(label, fn, *args, **kwargs)
        return wrapper

    def run(self, label: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []  # per open call: [start, time of nested timed calls]
        frame = [time.thread_time(), 0.0]
        stack.append(frame)
        try:
            return fn(*args, **kwargs)
        finally:
            stack.pop()
            spent = time.thread_time() - frame[0]
            self.seconds[label] += spent - frame[1]
            if stack:
                stack[-1][1] += spent


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


_QUERY_PROCESS_STAGE = "scoring side of query-process calls (pickle, pipe, polling, unpickle)"
_POOL_STAGE = "main thread: process-pool transport (chunks and results pickled, unpickled)"


def breakdown(lines: Sequence[str], warm: Sequence[str], tasks: Mapping[str, Task], db: Path,
              cache_entries: int = 8192) -> list[tuple[str, float]]:
    """CPU seconds per stage of one worker scoring ``lines`` (after ``warm``, untimed), in a fresh process.

    Returns:
        ``[(stage label, CPU seconds)]``: the scoring thread's stages and its rest, the main
        thread's, the other threads', then the query process's per overlay kind (with counts in
        the label) and its rest, and last ``("total", seconds)``, the sum of all rows: the worker
        process's CPU plus its query process's over the pass.

    Raises:
        whatever the fresh process raised (a failed pass).
    """
    ctx = get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=ctx) as ex:
        return ex.submit(_breakdown_here, list(lines), list(warm), dict(tasks), str(db), cache_entries).result()


def _breakdown_here(lines: list[str], warm: list[str], tasks: dict[str, Task], db_text: str,
                    cache_entries: int) -> list[tuple[str, float]]:
    import pickle
    import tempfile

    import timed_query_process as tqp
    from verifier.scoring._worker import default_scorer, make_state
    from verifier.sql import _guard, thread_process

    db = Path(db_text)
    timers = _Timers()
    with tempfile.TemporaryDirectory(prefix="stage_breakdown_") as tmp:
        prefix = str(Path(tmp) / "child")
        tqp.install(prefix)
        try:
            state = make_state(tasks, VerifyConfig(db_path=str(db)), default_scorer, None, cache_entries)
            for chunk in _chunks(warm):
                state.score_chunk(chunk)
            pid = state.runner.call(lambda: thread_process().pid, (), None)[1]
            for label, targets in _STAGES:
                for mod_name, attr in targets:
                    mod = importlib.import_module(mod_name)
                    setattr(mod, attr, timers.timed(label, getattr(mod, attr)))
            _guard.QueryProcess.run = timers.timed(_QUERY_PROCESS_STAGE, _guard.QueryProcess.run)  # type: ignore[method-assign]
            child0 = tqp.read(pid, prefix)
            scoring0 = state.runner.call(time.thread_time, (), None)[1]
            main0, process0 = time.thread_time(), time.process_time()
            for chunk in _chunks(lines):
                chunk = timers.run(_POOL_STAGE, lambda c: pickle.loads(pickle.dumps(c)), chunk)
                result = state.score_chunk(chunk)
                timers.run(_POOL_STAGE, lambda r: pickle.loads(pickle.dumps(r)), result)
            main1, process1 = time.thread_time(), time.process_time()
            scoring1 = state.runner.call(time.thread_time, (), None)[1]
            child1 = tqp.read(pid, prefix)
        finally:
            tqp.uninstall()
    out: list[tuple[str, float]] = []
    main_labels = {"read trajectory (JSON, pydantic)", "verdict JSON", _POOL_STAGE}
    scoring_rows = [(label, timers.seconds.get(label, 0.0)) for label, _ in _STAGES if label not in main_labels]
    scoring_rows.append((_QUERY_PROCESS_STAGE, timers.seconds.get(_QUERY_PROCESS_STAGE, 0.0)))
    out += [(f"scoring thread: {label}", sec) for label, sec in scoring_rows]
    out.append(("scoring thread: other (verify's own steps, hand-off, calibration glue)",
                max(0.0, scoring1 - scoring0 - sum(sec for _, sec in scoring_rows))))
    main_rows = [(label if label.startswith("main thread") else f"main thread: {label}", timers.seconds.get(label, 0.0))
                 for label in ("read trajectory (JSON, pydantic)", "verdict JSON", _POOL_STAGE)]
    out += main_rows
    out.append(("main thread: other (chunk loop, hand-off to the scoring thread)",
                max(0.0, main1 - main0 - sum(sec for _, sec in main_rows))))
    out.append(("other threads of the worker (DuckDB interrupt watchdog)",
                max(0.0, (process1 - process0) - (scoring1 - scoring0) - (main1 - main0))))
    out += _child_rows(child0, child1, _overlay_kinds([tasks[k] for k in sorted({_task_id(l) for l in lines}) if k in tasks], db))
    out.append(("total", sum(sec for _, sec in out)))
    return out


def _child_rows(before: dict[str, Any], after: dict[str, Any], kinds: dict[str, str]) -> list[tuple[str, float]]:
    """The query process's rows: per overlay kind, opening and executing (with counts), pickling, rest."""
    seconds: dict[tuple[str, str], float] = defaultdict(float)
    counts: dict[tuple[str, str], int] = defaultdict(int)
    timed = 0.0
    for label, sec in after["seconds"].items():
        spent = sec - before["seconds"].get(label, 0.0)
        timed += spent
        what, _, key = label.partition("|")
        if not key:
            seconds[("pickle", "")] += spent
            continue
        k = ast.literal_eval(key)
        kind = "base" if k[0] == "base" else kinds.get(k[-1], "other overlay")
        seconds[(what, kind)] += spent
        counts[(what, kind)] += after["counts"].get(label, 0) - before["counts"].get(label, 0)
    rows: list[tuple[str, float]] = []
    for kind in ("base", "re-keyed witness", "witness", "decoy", "nuisance", "other overlay"):
        if ("open", kind) in seconds and kind != "base":
            rows.append((f"query process: overlay creation, {kind} ({counts[('open', kind)]} built)", seconds[("open", kind)]))
        if ("exec", kind) in seconds:
            rows.append((f"query process: DuckDB executions on {kind} ({counts[('exec', kind)]} run)", seconds[("exec", kind)]))
    rows.append(("query process: pickling requests and results", seconds[("pickle", "")]))
    rows.append(("query process: other (serving loop, pipe reads and writes)",
                 max(0.0, after["cpu"] - before["cpu"] - timed)))
    return rows


def _chunks(lines: Sequence[str], size: int = 8) -> list[list[tuple[int, str]]]:
    return [[(i + 1, line) for i, line in enumerate(lines[k:k + size], start=k)] for k in range(0, len(lines), size)]


def _task_id(line: str) -> str:
    import json

    return json.loads(line)["task_id"]


def print_breakdown(rows: list[tuple[str, float]], n: int, worker_cpu_s: float | None = None) -> None:
    """Print ``rows`` (from ``breakdown``) as CPU ms per trajectory and share of the total;
    ``worker_cpu_s``: the CPU seconds the 1-worker run took on the same batch, for comparison."""
    total = rows[-1][1] or 1e-9
    ref = f"; the untimed 1-worker run: {1000 * worker_cpu_s / n:.2f}" if worker_cpu_s else ""
    print(f"  per-stage CPU breakdown of one worker, end to end (a fresh process, timed, its query process "
          f"included; {n} trajectories, {1000 * total / n:.2f} ms CPU per trajectory{ref}):")
    for label, sec in rows:
        if label == "total" or sec <= 0:
            continue
        print(f"    {1000 * sec / n:7.3f} ms/traj  {100 * sec / total:5.1f} %  {label}")
