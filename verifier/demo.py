"""The main job on the embedded default: ``ehr-verifier demo``.

The whole gym, end to end, on the synthetic default hospital:

1. generate the hospital (``verifier.synthetic``) in the MIMIC-IV CSV layout;
2. build it into DuckDB (:func:`verifier.database.build_database`), print the
   per-table summary and the planted gaps;
3. construct verified Clean-Noise task pairs (:func:`verifier.construction.make_tasks`);
4. roll out the oracle and the baselines that must fail in known ways
   (``verifier.agents``) in the environment loop;
5. score every agent's trajectories with ``verify_batch`` and print the report
   table (success on Clean and Noise, by noise type, reason codes by condition).

Works from any directory: nothing is read from the current folder and
everything is written under ``workdir`` (or a temporary folder removed at the end;
then no path inside it is printed). Every long step shows a rich progress bar on
``progress_console`` (stderr by default), so stdout holds only the report.

Layer (ARCHITECTURE.md section 9): the top with the CLI; imports the synthetic hospital, the
database build, construction, agents and scoring; nothing imports it but the CLI.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from typing import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .database import build_database, print_summary
from .synthetic import generate_hospital, read_gaps

#: Name of the built database inside the work folder.
DB_NAME = "hospital.duckdb"
#: Name of the generated MIMIC-IV folder inside the work folder.
HOSPITAL_DIR = "hospital"
#: Reference agents the demo rolls out, in report order.
DEMO_AGENTS = ("oracle", "always-null", "answer-anyway", "wrong-scope", "fabricator")


@dataclass(frozen=True)
class DemoResult:
    """What :func:`run_demo` did.

    Attributes:
        hospital_dir: folder of the generated MIMIC-IV CSVs (``<workdir>/hospital``).
        db_path: the built database (``<workdir>/hospital.duckdb``).
        kept: False when a temporary folder was used and has been removed.
        report: the :class:`verifier.database._report.BuildReport`.
        gap_counts: planted gaps per kind (record, value, query, population, feature).
        tasks: number of tasks constructed (Clean and Noise).
        summaries: ``{agent: summary}`` as computed by :func:`verifier.metrics.summarize`.
    """

    hospital_dir: Path
    db_path: Path
    kept: bool
    report: object
    gap_counts: dict[str, int]
    tasks: int = 0
    summaries: dict = field(default_factory=dict)


def run_demo(workdir: str | Path | None = None, seed: int = 0, console: Console | None = None,
             progress_console: Console | None = None) -> DemoResult:
    """Generate the synthetic hospital, build it and print the summary.

    Args:
        workdir: folder for ``hospital/`` and ``hospital.duckdb`` (created if missing);
            None = a temporary folder, removed before returning.
        seed: seed of the synthetic hospital (same seed, same files).
        console: where to print (default: a new stdout console).
        progress_console: where the progress bars go (default: a new stderr console).

    Returns:
        A :class:`DemoResult`.

    Raises:
        InputError: bad ``seed`` or ``workdir`` is an existing file.
        SourceDataError: the build failed (nothing is left at the database path).
    """
    console = console or Console()
    bars = progress_console or Console(stderr=True)
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="ehr-verifier-demo-") as tmp:
            result = _run(Path(tmp), seed, console, bars, kept=False)
        console.print("[dim](ran in a temporary folder, now removed; pass --workdir DIR to keep the files)[/]")
        return replace(result, kept=False)
    return _run(Path(workdir), seed, console, bars, kept=True)


def _progress(console: Console) -> Progress:
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=False)


def _run(work: Path, seed: int, console: Console, bars: Console, *, kept: bool) -> DemoResult:
    def at(path: Path) -> str:  # a path is worth printing only if it outlives the run
        return f" {path}" if kept else ""

    console.print(f"[bold]ehr-verifier demo[/]: synthetic default hospital, seed {seed}")
    with _progress(bars) as bar:
        job = bar.add_task("generate the hospital", total=1)
        hospital = generate_hospital(work / HOSPITAL_DIR, seed=seed)
        bar.update(job, completed=1)
    console.print("generated the MIMIC-IV CSVs" + (f" in {hospital}" if kept else ""))
    db = work / DB_NAME
    report = build_database(hospital, db, progress=True)
    print_summary(report if kept else replace(report, out=Path(f"{DB_NAME} (temporary)")), console)
    gaps = read_gaps(hospital)
    counts = dict(sorted(Counter(g.kind for g in gaps).items()))
    console.print("planted gaps: " + ", ".join(f"{k} {v}" for k, v in counts.items())
                  + (f" (listed in {hospital / 'gaps.json'})" if kept else ""))
    n_tasks, summaries = _tasks_rollouts_scores(work, db, seed, console, bars, at)
    return DemoResult(hospital, db, kept, report, counts, n_tasks, summaries)


def _tasks_rollouts_scores(work: Path, db: Path, seed: int, console: Console, bars: Console,
                           at: Callable[[Path], str]) -> tuple[int, dict]:
    """Steps 3-5: construct tasks, roll out the reference agents, score and report."""
    from .agents.rollout import rollout
    from .construction import make_tasks
    from .construction.make import write_tasks
    from .construction.report import print_summary as print_construction
    from .scoring import score_agents

    tasks, creport = make_tasks(db, seed=seed, progress=True)
    tasks_path = work / "tasks.jsonl"
    write_tasks(tasks, tasks_path)
    print_construction(creport, console)
    console.print(f"wrote {len(tasks)} tasks" + (f" to{at(tasks_path)}" if at(tasks_path) else ""))
    rollouts = work / "rollouts"
    rollouts.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    done = {}
    with _progress(bars) as bar:
        jobs = {agent: bar.add_task(f"roll out {agent}", total=len(tasks)) for agent in DEMO_AGENTS}
        for agent in DEMO_AGENTS:
            paths[agent] = rollouts / f"{agent}.trajectories.jsonl"
            done[agent] = rollout(agent, tasks, db, paths[agent], on_episode=lambda _v, j=jobs[agent]: bar.advance(j))
    for agent in DEMO_AGENTS:
        console.print(f"rolled out {agent}: {done[agent].episodes} episodes in {done[agent].seconds:.1f} s"
                      + (f" ->{at(paths[agent])}" if at(paths[agent]) else ""))
    with _progress(bars) as bar:
        summaries = score_agents(tasks, paths, db, out_dir=work / "scores", progress=bar)
    from .scoring import print_comparison

    print_comparison(summaries, console, details=True)
    if at(work):
        console.print(f"verdicts, summary.json and report.png per agent in {work / 'scores'}; "
                      f"all agents compared in {work / 'scores' / 'report.png'}")
    return len(tasks), summaries
