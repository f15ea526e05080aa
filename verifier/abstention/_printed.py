"""Evidence from what a Python step printed: the step re-run on the base and on the witness.

ARCHITECTURE.md section 4, step 6 ("a Python step is judged by what it prints"). A Python step
may fetch rows (``db.sql``), filter them in its own code and print the result; the SQL it ran
says little (a whole-table read is not specific), what it printed is what the agent saw. So a
cited Python step none of whose queries qualified is judged counterfactually on its printed
output, with the same rules the SQL path applies to a query's visible rows:

1. **Replay** (``replay``): the trajectory's Python steps up to the judged one run again, in
   order (later steps see earlier steps' variables), in a fresh ``verifier.pysandbox`` worker
   under bubblewrap (never without the OS boundary: when bubblewrap cannot run here the path is
   not used, and the details say so). The worker never opens a database: its ``db.sql`` queries
   come back through a ``run_sql`` callback, which the caller points at the base database or at
   a witness / perturbation overlay (the same overlays and query process the SQL path uses,
   charged to the trajectory's evidence budget; nothing is materialised on disk).
2. **Deterministic, then reproduced**: the base replay runs twice, in two fresh workers (each with
   its own clock reading, address layout, ``os.urandom`` and hence ``random``/``uuid``/``secrets``
   state, at the same fixed string-hash seed). A step whose two printouts (or errors) differ depends
   on something else than the database and its code: ``nondeterministic``
   (``EVIDENCE_NONDETERMINISTIC``, as a SQL query calling ``random()``; issue 31). Otherwise the
   base replay must print exactly what the trajectory recorded (framing and
   trailing blanks aside), else the step is ``fabricated`` (``EVIDENCE_FABRICATED``); a replay
   that raises where the episode did not is ``failed`` (the code does not run here, e.g. a
   foreign ``duckdb.connect``), a wall-time overrun ``failed`` with that reason.
3. **Sensitive and shows the gap**: the printed outputs become rows (``printed_result``: one
   row per line, cells the line's tokens, a line that only states an absence such as ``[]``,
   ``0`` or ``n: 0`` no row) and are compared like query results (``_witness.compare``,
   order-free multisets): the witness replay must change them, and the base must show the gap
   (no row, rows only appear or only disappear, an empty/zero/NULL token filled, a small-cell
   count reaching the threshold, a number crossing a bound the task names).
4. **Specific**: the output must not change under the perturbations that leave the requirement
   as it is (the decoy, the in-scope nuisance; ``_invariance``), judged as for a query. A dump
   whose printout counts or lists whole tables changes with the decoy too: ``not_specific``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..contract import DisplayConfig, Step, Trajectory
from ..pysandbox import PythonLimits, PythonResult, PythonSandbox, RunSql, SandboxUnavailable, WorkerDied, sandbox_status
from ..sql import QueryResult
from ._budget import BudgetExhausted, EvidenceBudget
from ._canon import canon_cell
from ._evidence import _EMPTY_LINE, _OBS_HEAD
from ._invariance import Perturbation
from ._witness import compare

#: Printed outputs are compared whole: the print already is what the agent saw.
ALL_SHOWN = DisplayConfig(max_rows=10**9, max_chars=10**12)

_TRUNCATED = re.compile(r"\n\[output truncated at \d+ characters\]\s*\Z")
_TOKEN = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|[^\s,|()\[\]{}:=;]+")
_MISSING = {"nan", "<na>", "nat", "none", "null"}


def python_targets(trajectory: Trajectory, cited: Sequence[int]) -> list[Step]:
    """The Python steps the print path may judge: the cited ones (every one when the response
    cites none) that recorded output and no error.

    Args:
        trajectory: the episode.
        cited: the response's valid cited step indices (1-based; empty: no restriction).

    Returns:
        The steps, in trajectory order.
    """
    keep = set(cited)
    return [s for s in trajectory.steps if s.kind == "python" and (not keep or s.index in keep)
            and not s.error and (s.output or "").strip()]


def shown_text(text: str) -> str:
    """A step's printed output as compared: the observation framing (a leading ``[step N]``)
    removed, trailing blanks stripped."""
    return _OBS_HEAD.sub("", text or "").rstrip()


def _cell(token: str) -> Any:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1]
    low = token.lower()
    if low in _MISSING:
        return None
    if low in ("true", "false"):
        return low == "true"
    return token


def _records(line: str) -> list[str]:
    """A line as printed records: a Python list of tuples, lists or dicts printed on one line
    (``[(1, 'a'), (2, 'b')]``) is one record per element; any other line is one record."""
    text = line.strip()
    if not text.startswith("[") or not text.endswith("]"):
        return [line]
    parts: list[str] = []
    depth, start, quote, i = 0, 1, "", 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 1:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:-1])
    parts = [p.strip() for p in parts]
    if len(parts) < 2 or not all(p[:1] in "([{" for p in parts):
        return [line]
    return parts


def _numbers_only(g: tuple[Any, ...], n: tuple[Any, ...]) -> bool:
    return len(g) == len(n) and all(a == b or (isinstance(a, float) and isinstance(b, float)) for a, b in zip(g, n))


def _unpaired(side: Sequence[tuple[Any, ...]], other: Sequence[tuple[Any, ...]]) -> tuple[list[Any], list[Any]]:
    """Rows of ``side`` and of ``other`` left over once each row of ``side`` is paired with a row
    of ``other`` differing only in numbers (an equivalence: the pairing's size is order-free)."""
    pool, left = list(other), []
    for row in side:
        j = next((k for k, o in enumerate(pool) if _numbers_only(row, o)), None)
        if j is None:
            left.append(row)
        else:
            pool.pop(j)
    return left, pool


def rows_appear_beside_counts(new: Sequence[tuple[Any, ...]], gone: Sequence[tuple[Any, ...]]) -> bool:
    """Whether a printed output's change is rows appearing (or disappearing) whose only other
    change is numbers beside them: every changed line of the other side pairs with a line of the
    same shape that differs only in numbers (a count or total of the rows printed above it:
    ``1 1`` becoming ``4 4`` next to three new listed readmissions). Canonical rows (``compare``)."""
    left_gone, left_new = _unpaired(gone, new)
    return (not left_gone and bool(left_new)) or (not left_new and bool(left_gone))


def printed_result(text: str) -> QueryResult:
    """A printed output as a result to compare: one row per line, its cells the line's tokens
    (quoted strings whole; separators ``, | ( ) [ ] { } : = ;`` and blanks split; ``None``,
    ``NaN``, ``<NA>``, ``NaT``, ``NULL`` are NULL; canonicalised later by ``canon_cell``, so
    numeric text compares as numbers). Blank lines and lines that only state an absence
    (``[]``, ``0``, ``n: 0``, "Empty DataFrame", "no rows") give no row; a line cut by the
    output cap (the one before ``[output truncated ...]``) and the marker are dropped.

    Args:
        text: the printed output.

    Returns:
        A ``QueryResult`` with columns ``c0..cN`` (rows may be shorter than the widest).
    """
    text = shown_text(text)
    cut = _TRUNCATED.search(text)
    if cut:
        text = text[:cut.start()]
        text = text.rsplit("\n", 1)[0] if "\n" in text else ""
    rows: list[tuple[Any, ...]] = []
    for line in text.splitlines():
        for record in _records(line):
            if not record.strip() or _EMPTY_LINE.fullmatch(record):
                continue
            cells = tuple(_cell(t) for t in _TOKEN.findall(record))
            if cells:
                rows.append(cells)
    width = max((len(r) for r in rows), default=1)
    return QueryResult(columns=[f"c{i}" for i in range(width)], rows=rows)


#: The re-runs print up to this many times the environment's output cap, so that rows the witness
#: pushes past the cap are known to be there (the SQL path compares the visible rows of one side
#: with every row of the other for the same reason).
REPLAY_OUTPUT_FACTOR = 8


#: A replay (all its steps together) may take this many times the evidence budget left in wall
#: seconds (at least ``REPLAY_MIN_WALL_S``): the budget is charged in CPU seconds, and the wall
#: limit only stops code that waits (``time.sleep``) without working; it is wide enough that a
#: loaded machine does not stop steps whose own work fits the budget (issue 31 point 2).
REPLAY_WALL_FACTOR = 4.0
REPLAY_MIN_WALL_S = 5.0


def replay_limits(budget_left_s: float) -> PythonLimits:
    """The re-run's limits: the environment's defaults (memory), always under bubblewrap with the
    interpreter's site-packages visible (read-only: pandas, numpy), an output cap
    ``REPLAY_OUTPUT_FACTOR`` times the environment's, a CPU time per step of at most the evidence
    budget left (at least 1 s, the kernel's resolution), and a wall time for the whole replay
    (``replay``) of at most ``REPLAY_WALL_FACTOR`` times that budget (at least
    ``REPLAY_MIN_WALL_S``), both capped by the environment's own per-step limits.

    Args:
        budget_left_s: the trajectory's evidence budget left, CPU seconds.

    Returns:
        The limits of the replay's sandbox.
    """
    default = PythonLimits(isolation="bwrap", site_packages=True)
    return default.model_copy(update={
        "cpu_s": max(1.0, min(default.cpu_s, budget_left_s)),
        "wall_s": min(default.wall_s, max(REPLAY_MIN_WALL_S, REPLAY_WALL_FACTOR * budget_left_s)),
        "max_output_chars": default.max_output_chars * REPLAY_OUTPUT_FACTOR})


def replay(steps: Sequence[Step], upto: int, run_sql: RunSql, limits: PythonLimits,
           timing: dict[str, float] | None = None, on_step: Callable[[int], None] | None = None) -> dict[int, PythonResult]:
    """Run the Python steps with index ``<= upto`` again, in order, in one fresh sandboxed worker.

    Args:
        steps: the trajectory's steps (SQL steps are skipped: they do not change Python state).
        upto: the last step index to run.
        run_sql: answers the code's ``db.sql`` queries (``verifier.pysandbox.RunSql``).
        limits: the worker's limits (``replay_limits``); ``limits.wall_s`` bounds the steps
            together (counted after the worker's start-up): each step may take what the earlier
            ones left, and a step past it gets the sandbox's ``TimeoutError``.
        timing: when given, ``timing["startup_s"]`` is set to the wall seconds the sandboxed
            worker took to start: the verifier's own cost, not the replayed code's (issue 31).
        on_step: when given, called with each Python step's index before it runs (so that the
            queries ``run_sql`` answers next can be told to that step).

    Returns:
        ``{step index: PythonResult}``.

    Raises:
        SandboxUnavailable: bubblewrap cannot run here.
        BudgetExhausted: ``run_sql`` ran out of the trajectory's evidence budget.
        WorkerDied: the worker could not even start.
    """
    out: dict[int, PythonResult] = {}
    t0 = time.perf_counter()
    with PythonSandbox(run_sql, limits, measure_cpu=True) as box:
        box.start()
        if timing is not None:
            timing["startup_s"] = time.perf_counter() - t0
        deadline = time.perf_counter() + limits.wall_s
        for s in steps:
            if s.kind == "python" and s.index <= upto:
                box.limits = limits.model_copy(update={"wall_s": max(0.05, deadline - time.perf_counter())})
                if on_step is not None:
                    on_step(s.index)
                out[s.index] = box.run(s.code, step=s.index)
    return out


@dataclass(frozen=True)
class Printed:
    """One re-run's printed output of one step.

    Attributes:
        seen: what the agent would have seen (cut at the environment's cap, its marker added).
        result: every printed row of the re-run (``printed_result`` of the whole output).
        shown: how many of those rows lie in ``seen`` (``None``: all of them).
    """

    seen: str
    result: QueryResult
    shown: int | None


def printed(output: str, cap: int) -> Printed:
    """A re-run's output as the agent would have seen it under the output cap ``cap``, and its rows."""
    whole = _TRUNCATED.sub("", output)
    if len(whole) <= cap and not _TRUNCATED.search(output):
        return Printed(whole, printed_result(whole), None)
    seen = whole[:cap] + f"\n[output truncated at {cap} characters]" if len(whole) > cap else whole
    return Printed(seen, printed_result(output), len(printed_result(seen).rows))


def _display(*outs: Printed) -> DisplayConfig:
    """Display limits under which every one of ``outs`` shows only rows the agent could have seen:
    the fewest rows any truncated output shows (all rows when none was truncated)."""
    shown = [o.shown for o in outs if o.shown is not None]
    return ALL_SHOWN if not shown else ALL_SHOWN.model_copy(update={"max_rows": max(1, min(shown))})


#: ``runner(witness rows or None for the base) -> run_sql``.
Runner = Callable[[Any], RunSql]


def result_cells(rows: Sequence[Sequence[Any]]) -> set[Any]:
    """The canonical cells of one query result's ``rows`` and its row count (``len(rows)`` printed
    is read from the records too)."""
    out: set[Any] = {canon_cell(len(rows))}
    for row in rows:
        for v in row:
            try:
                out.add(canon_cell(v))
            except TypeError:  # an unhashable canonical form: not a printable token anyway
                pass
    return out


def traced(new: Sequence[tuple[Any, ...]], gone: Sequence[tuple[Any, ...]], base_cells: set[Any],
           witness_cells: set[Any]) -> bool:
    """Whether a printed change is read from the records (issue 30 point 1, for Python steps): some
    line that appears with the witness holds a value the code's queries returned on the witness
    overlay and not on the base (a witness row's cell, a count that changed), or some line that
    disappears holds one they returned on the base and not there. A line the code prints because a
    comparison in Python came out otherwise (a table name whose digest differs from one pasted in)
    holds none. Canonical cells (``canon_cell``), as ``compare``'s rows."""
    appeared, vanished = witness_cells - base_cells, base_cells - witness_cells
    return (any(c in appeared for row in new for c in row if c is not None)
            or any(c in vanished for row in gone for c in row if c is not None))


def judge_printed(trajectory: Trajectory, targets: Sequence[Step], witness: Any, perturbations: Sequence[Perturbation],
                  runner: Runner, budget: EvidenceBudget, *, threshold: int | None = None,
                  bounds: tuple[float, ...] = ()) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Judge ``targets`` by what they print (module docstring, rules 1-4).

    Args:
        trajectory: the episode (every Python step is replayed up to the last target).
        targets: ``python_targets(...)`` whose queries did not qualify on the SQL path.
        witness: the (re-keyed) witness rows of the task's overlay.
        perturbations: the calibrated perturbations (``_noise._perturbations``).
        runner: a ``run_sql`` per database variant (``None``: the base).
        budget: the trajectory's evidence budget; each replay's CPU seconds (its steps' own
            work, beyond its queries) are charged to it too.
        threshold, bounds: as ``_witness.compare``.

    Returns:
        ``(records, note)``: one evidence record per target (``origin`` ``python_output``,
        ``status`` as the SQL path's statuses, ``why``), and a note for the details (``used``:
        whether the path ran, ``why`` when not).
    """
    ok, why = sandbox_status(PythonLimits(isolation="bwrap", site_packages=True))
    if not ok:
        return [], {"used": False, "why": f"the bubblewrap sandbox cannot run here, so Python steps are not re-run: {why}"}
    upto = max(s.index for s in targets)
    cap = PythonLimits(isolation="bwrap").max_output_chars
    records = {s.index: {"step": s.index, "position": len(s.sql or []), "origin": "python_output", "sql": "",
                         "code": s.code[:2000]} for s in targets}
    open_ = [s.index for s in targets]

    def close(status: str, why: str) -> None:
        for i in open_:
            records[i].update(status=status, why=why)
        open_.clear()

    cells: dict[str, set[Any]] = {}  # what the code's SQL returned in each run ("base", "witness")
    rows_by_step: dict[int, int] = {}  # rows each step's own queries returned on the base
    current = [0]

    def run(variant: Any, record: str | None = None) -> dict[int, PythonResult] | None:
        spent, t0 = budget.spent_s, time.perf_counter()
        run_sql = runner(variant)
        if record is not None:
            seen = cells.setdefault(record, set())
            inner = run_sql

            def run_sql(sql: str) -> Any:  # type: ignore[misc]
                res = inner(sql)
                seen.update(result_cells(res[1]))
                if record == "base":
                    rows_by_step[current[0]] = rows_by_step.get(current[0], 0) + len(res[1])
                return res
        timing: dict[str, float] = {}
        try:
            out: dict[int, PythonResult] | None = replay(trajectory.steps, upto, run_sql,
                                                         replay_limits(budget.time_budget_s - budget.spent_s), timing,
                                                         on_step=lambda i: current.__setitem__(0, i))
        except BudgetExhausted:
            out = None
        except (WorkerDied, SandboxUnavailable) as exc:
            close("failed", f"the sandboxed Python worker could not start to re-run the step: {exc}")
            return None
        # the replayed code's own cost: the CPU seconds its steps spent in the worker (read from the
        # host, issue 31 point 2: wall seconds grow with the machine's load), without the worker's
        # start-up (the verifier's cost, the same for every trajectory) or its queries (charged as
        # they ran, in the query process); wall seconds less both where /proc cannot be read
        cpu = [r.cpu_s for r in (out or {}).values()]
        if out is not None and cpu and all(c is not None for c in cpu):
            budget.charge(sum(cpu))  # type: ignore[arg-type]
        else:
            budget.charge(max(0.0, time.perf_counter() - t0 - timing.get("startup_s", 0.0) - (budget.spent_s - spent)))
        if out is None or budget.exhausted:
            close("over_budget", f"re-running the Python steps spent the trajectory's evidence time budget of {budget.time_budget_s:g} s")
            return None
        stopped = [r.error for r in out.values() if (r.error or "").startswith(("TimeoutError", "WorkerError"))]
        if stopped:  # a step that did not finish loses the worker's state: nothing after it is comparable
            close("failed", f"re-running the Python steps did not finish: {stopped[0].splitlines()[0][:300]}")
            return None
        return out

    done = run(None, "base")
    again = run(None) if done is not None else None  # the same code on the same database, in a fresh worker
    if done is None or again is None:
        return list(records.values()), {"used": True}
    base: dict[int, Printed] = {}
    for s in targets:
        res = done[s.index]
        base[s.index] = printed(res.output, cap)
        if (res.output, res.error) != (again[s.index].output, again[s.index].error):
            records[s.index].update(status="nondeterministic", why="re-running the step's code twice on the same database "
                                    "prints two different outputs: it depends on the clock, randomness, object identities "
                                    "or the process's state, not only on the records (never evidence)")
        elif res.error:
            records[s.index].update(status="failed", why="re-running the step's code on the database raises where the episode "
                                    f"did not: {res.error.strip().splitlines()[-1][:300]}")
        elif shown_text(base[s.index].seen) != shown_text(s.output or ""):
            records[s.index].update(status="fabricated", why="re-running the step's code on the database does not print the "
                                    "recorded output: the printed evidence is not reproduced")
        else:
            continue
        open_.remove(s.index)
    def code_empty(i: int) -> bool:
        """The step prints no row on the base while its own queries returned rows: its emptiness is its code's
        decision (a comparison, a filter in Python), not a query's scope filters read by lineage (issue 30 point 1;
        fresh adversary adv12 printed '[]' where in-scope counts and digests equalled constants decoded at run time,
        63 of 80 Noise tasks)."""
        return not base[i].result.rows and rows_by_step.get(i, 0) > 0

    done = run(witness, "witness") if open_ else None
    over: dict[int, Printed] = {}
    for i in list(open_ if done is not None else []):
        if done[i].error:  # type: ignore[index]
            records[i].update(status="failed", why="the step's code fails on the witness overlay, so what it would print "
                              "there is unknown")
            open_.remove(i)
            continue
        over[i] = printed(done[i].output, cap)  # type: ignore[index]
        sens = compare(base[i].result, over[i].result, _display(base[i], over[i]), small_cell_threshold=threshold, bounds=bounds)
        gap, why = sens.shows_gap, sens.why
        if sens.sensitive and not gap and rows_appear_beside_counts(sens.new, sens.gone):
            gap, why = True, "lines appear (or disappear) with the witness; the other lines that change are numbers beside them"
        if gap and not traced(sens.new, sens.gone, cells.get("base", set()), cells.get("witness", set())):
            gap, why = False, ("the lines that change with the witness hold no value the code's queries returned differently "
                               "there: what the step prints is decided by its code, not read from the records")
        if gap and code_empty(i) and not any(p.name == "nuisance" for p in perturbations):
            gap, why = False, ("the step prints nothing on the database although its own queries returned rows there: the "
                               "emptiness is decided by its code, not shown by the records, and the task has no in-scope row of "
                               "another item (a nuisance) to show that the code reads the requirement")
        records[i].update(status="qualifies" if gap else ("no_gap" if sens.sensitive else "not_sensitive"),
                          why=f"printed output: {why}")
        if not gap:
            open_.remove(i)
    for p in perturbations:
        done = run(p.witness) if open_ else None
        for i in list(open_ if done is not None else []):
            moved = printed(done[i].output, cap)  # type: ignore[index]
            # an emptiness the code decided (``code_empty``) is no scope's own: every perturbation that leaves the
            # requirement unmet must leave the printout empty (``strict_empty``), as an honest filter in Python does
            if done[i].error or not p.tolerated(base[i].result, over[i].result, moved.result,  # type: ignore[index]
                                                _display(base[i], over[i], moved), threshold, strict_empty=code_empty(i)):
                records[i].update(status="not_specific", why=f"printed output: {p.why}")
                open_.remove(i)
    return list(records.values()), {"used": True}
