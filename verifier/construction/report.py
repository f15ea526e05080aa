"""The construction report: what was kept, how it splits, what was rejected and why."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field
from rich.console import Console
from rich.table import Table

from ..contract import Task


class ConstructionReport(BaseModel):
    """Summary of one ``make_tasks`` run.

    Attributes:
        db_path: the database the tasks were built on.
        seed: the seed.
        programs: number of programs run.
        candidates: candidate pairs tried (each ran the full verification).
        pairs: pairs kept (each = one Clean and one Noise task).
        by_cell: kept pairs per ``intent|scope|noise_type``.
        by_split: kept pairs per split; by_track: per track;
        by_program: kept pairs per program.
        rejections: rejected candidates per reason (see ``engine``).
        rejections_by_program: ``program -> reason -> count``.
        dropped_for_balance: verified pairs left out to balance the test split.
        skipped_for_split: candidates not tried because their patients belong
            to the other split (held-out programs take test patients only, and a
            pair's patients must share a split).
        audit: the robustness audit's outcomes, ``"<relaxation kind>|<outcome>" -> count``
            over every audited candidate, including verified pairs that the selection
            (``engine.prefer_near_misses``) later leaves out (outcomes: ``same``,
            ``explicit``, ``convention`` (a stated convention settles the reading),
            ``not_applicable`` on kept-so-far candidates; ``twin_answerable``, ``clean_differs``, ``sql_failed`` on
            rejected ones, also counted as ``relaxation_<kind>`` rejections).
        rewrites: outcome counts of the optional LLM rewriting pass.
        difficulty: near misses of the kept tasks (issue 33), ``group -> counts`` for the
            groups ``overall``, ``noise:<type>``, ``cell:<scope>|<type>`` and
            ``program:<name>``; counts ``noise`` / ``clean`` (tasks),
            ``noise_near_miss`` / ``clean_near_miss`` (tasks with at least one near
            miss) and ``noise_hard`` / ``clean_hard`` (tasks tagged ``hard``).
        seconds: wall time per phase (``generate``, ``split``, ``total``).
    """

    db_path: str
    seed: int
    programs: int = 0
    candidates: int = 0
    pairs: int = 0
    by_cell: dict[str, int] = Field(default_factory=dict)
    by_split: dict[str, int] = Field(default_factory=dict)
    by_track: dict[str, int] = Field(default_factory=dict)
    by_program: dict[str, int] = Field(default_factory=dict)
    rejections: dict[str, int] = Field(default_factory=dict)
    rejections_by_program: dict[str, dict[str, int]] = Field(default_factory=dict)
    dropped_for_balance: int = 0
    skipped_for_split: int = 0
    audit: dict[str, int] = Field(default_factory=dict)
    rewrites: dict[str, int] = Field(default_factory=dict)
    difficulty: dict[str, dict[str, int]] = Field(default_factory=dict)
    seconds: dict[str, float] = Field(default_factory=dict)

    def fill_counts(self, tasks: list[Task]) -> None:
        """Recompute the kept-pair counts from the final Noise tasks."""
        noise = [t for t in tasks if t.condition == "noise"]
        self.pairs = len(noise)
        self.by_cell = dict(sorted(Counter(f"{t.intent}|{t.scope}|{t.noise_type}" for t in noise).items()))
        self.by_split = dict(sorted(Counter(t.split for t in noise).items()))
        self.by_track = dict(sorted(Counter(f"{t.split}|{t.track}" for t in noise).items()))
        self.by_program = dict(sorted(Counter(t.program for t in noise).items()))
        self.difficulty = difficulty_counts(tasks)

    def near_miss_rate(self, group: str = "overall", condition: str = "noise") -> float | None:
        """Share of ``condition`` tasks of ``group`` with at least one near miss (None: no task)."""
        row = self.difficulty.get(group, {})
        return row[f"{condition}_near_miss"] / row[condition] if row.get(condition) else None


def difficulty_counts(tasks: list[Task]) -> dict[str, dict[str, int]]:
    """Per group (``overall``, ``noise:<type>``, ``cell:<scope>|<type>``, ``program:<name>``):
    tasks, tasks with a near miss and hard tasks, for Clean and Noise (a Clean task
    counts in its twin's noise type and cell)."""
    twin_type = {t.pair_id: t.noise_type for t in tasks if t.condition == "noise"}
    out: dict[str, dict[str, int]] = {}
    for t in tasks:
        nt = twin_type.get(t.pair_id) or t.noise_type
        for group in ("overall", f"noise:{nt}", f"cell:{t.scope}|{nt}", f"program:{t.program}"):
            row = out.setdefault(group, {f"{c}{k}": 0 for c in ("clean", "noise") for k in ("", "_near_miss", "_hard")})
            row[t.condition] += 1
            row[f"{t.condition}_near_miss"] += bool(t.reference.near_misses)
            row[f"{t.condition}_hard"] += t.difficulty == "hard"
    return dict(sorted(out.items()))


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n:.0%})" if n else "-"


def print_difficulty(report: ConstructionReport, console: Console) -> None:
    """Print the near-miss rates (Noise and Clean tasks with a near miss, hard tasks)
    overall, per noise type, per cell and per program, and name the programs whose
    Noise tasks have no near miss (issue 33 points 2 and 5)."""
    if not report.difficulty:
        return
    t = Table(title="Near misses: tasks a careless reading still answers (difficulty)", min_width=60)
    for col in ("group", "noise near miss", "clean near miss", "noise hard", "clean hard"):
        t.add_column(col, justify="left" if col == "group" else "right")
    for group, row in report.difficulty.items():
        t.add_row(group, _pct(row["noise_near_miss"], row["noise"]), _pct(row["clean_near_miss"], row["clean"]),
                  _pct(row["noise_hard"], row["noise"]), _pct(row["clean_hard"], row["clean"]))
    console.print(t)
    none = [g.split(":", 1)[1] for g, row in report.difficulty.items()
            if g.startswith("program:") and row["noise"] and not row["noise_near_miss"]]
    if none:
        console.print(f"Programs whose Noise tasks have no near miss ({len(none)}): {', '.join(none)}")


def print_summary(report: ConstructionReport, console: Console) -> None:
    """Print the summary tables: pairs by intent x scope x noise type, by split
    and track, rejections by reason (a table only when some candidate was rejected; the counts
    line is always printed), and the robustness audit by relaxation."""
    cells: dict[tuple[str, str], dict[str, int]] = {}
    for key, n in report.by_cell.items():
        intent, scope, noise = key.split("|")
        cells.setdefault((intent, scope), {})[noise] = n
    t = Table(title=f"Pairs kept: {report.pairs} (seed {report.seed}, {report.programs} programs)")
    for col in ("intent", "scope", "record", "value", "query", "total"):
        t.add_column(col, justify="right" if col not in ("intent", "scope") else "left")
    for (intent, scope), row in sorted(cells.items()):
        vals = [row.get(k, 0) for k in ("record", "value", "query")]
        t.add_row(intent, scope, *map(str, vals), str(sum(vals)))
    console.print(t)
    s = Table(title="Pairs by split and track")
    s.add_column("split")
    s.add_column("track")
    s.add_column("pairs", justify="right")
    for key, n in report.by_track.items():
        split, track = key.split("|")
        s.add_row(split, track, str(n))
    console.print(s)
    note = (f"{sum(report.rejections.values())} of {report.candidates} candidates rejected; "
            f"{report.dropped_for_balance} verified pairs left out to balance the test split; "
            f"{report.skipped_for_split} candidates skipped for the patient split")
    if report.rejections:  # an empty table would print its headers only
        r = Table(title="Rejected candidates by reason", min_width=60, caption=note)
        r.add_column("reason", overflow="fold")
        r.add_column("count", justify="right")
        for reason, n in sorted(report.rejections.items(), key=lambda kv: (-kv[1], kv[0])):
            r.add_row(reason, str(n))
        console.print(r)
    else:
        console.print(f"Rejected candidates: none. {note}")
    if report.audit:
        kinds = sorted({k.split("|")[0] for k in report.audit})
        outcomes = ("twin_answerable", "clean_differs", "sql_failed", "explicit", "convention", "same", "not_applicable")
        a = Table(title="Robustness audit by relaxation (candidates)", min_width=60,
                  caption="twin answerable / clean differs / SQL failed: rejected; explicit: question states the reading; convention: the shared instructions state it")
        a.add_column("relaxation")
        for o in outcomes:
            a.add_column(o.replace("_", " "), justify="right")
        for k in kinds:
            a.add_row(k, *(str(report.audit.get(f"{k}|{o}", 0)) for o in outcomes))
        console.print(a)
    print_difficulty(report, console)
    secs = ", ".join(f"{k} {v:.1f}s" for k, v in report.seconds.items())
    console.print(f"time: {secs}")


def merge_counts(into: dict[str, int], more: Any) -> None:
    """Add counts from ``more`` (a mapping) into ``into``."""
    for k, v in more.items():
        into[k] = into.get(k, 0) + v
