"""``make_tasks``: build, verify and split Clean-Noise task pairs from a database.

Deterministic in (database, seed): candidate order, phrasings and splits come
from ``random.Random`` seeded by strings derived from the seed; the DuckDB
connection runs on one thread; tasks are written sorted.
"""

from __future__ import annotations

import math
import random
import time
from collections import defaultdict
from pathlib import Path
from typing import Iterable

from rich.console import Console
from rich.progress import Progress

from ..contract import InputError, Task, write_jsonl
from ..database import database_fingerprint
from .engine import Pair, ProgramRunner
from .overlay import Overlay
from .report import ConstructionReport, merge_counts
from .rewrite import RewriteConfig, rewrite_programs
from .spec import ProgramSpec, load_programs
from .splits import assign_splits, patient_rule, split_patients


def _trim(pairs: list[Pair], limit: int, seed: int) -> list[Pair]:
    """Keep ``limit`` pairs: drop train pairs first, then test pairs evenly by cell."""
    if len(pairs) <= limit:
        return pairs
    rng = random.Random(f"trim:{seed}")
    train = [p for p in pairs if p.clean.split == "train"]
    test = [p for p in pairs if p.clean.split == "test"]
    rng.shuffle(train)
    if len(test) >= limit:
        cells: dict[tuple[str, str], list[Pair]] = defaultdict(list)
        for p in test:
            cells[(p.spec.scope, p.spec.noise)].append(p)
        keep: list[Pair] = []
        queues = [cells[k] for k in sorted(cells)]
        for q in queues:
            rng.shuffle(q)
        while len(keep) < limit:
            for q in queues:
                if q and len(keep) < limit:
                    keep.append(q.pop())
        return keep
    return test + train[: limit - len(test)]


def make_tasks(
    db_path: str | Path,
    *,
    seed: int = 0,
    pairs: int | None = None,
    progress: bool = False,
    programs: Iterable[ProgramSpec] | None = None,
    rewrite: RewriteConfig | None = None,
    difficulty: str | None = None,
) -> tuple[list[Task], ConstructionReport]:
    """Build verified Clean-Noise pairs from ``db_path``.

    Args:
        db_path: a DuckDB database in the renamed schema (opened read-only).
        seed: seed of candidate order, phrasings and splits.
        pairs: at most this many pairs (default: every program's ``max_pairs``).
        progress: show a rich progress bar over programs (on stderr).
        programs: programs to run (default: all of ``programs/*.toml``).
        rewrite: optional LLM rewording of the programs' question templates before
            construction (off by default; ``rewrite.py``: an unfaithful rewrite is discarded,
            and every pair built from a rewritten template is verified as any other).
        difficulty: ``"hard"`` keeps only the pairs whose Noise twin is tagged hard
            (``near_miss.difficulty``: a near miss and enough stated conditions), before
            splits are assigned and balanced; the Clean twin is kept whatever its tag
            (pairs stay pairs, and the twin is where a careless reading answers instead
            of abstaining). None (default) keeps every pair.

    Returns:
        (tasks sorted by split, program, pair_id, clean before noise; the report). Every task
        records ``db_fingerprint``, the fingerprint of ``db_path``
        (``verifier.database.database_fingerprint``), so scoring can refuse another database.

    Raises:
        InputError: ``pairs`` < 1, or ``difficulty`` neither None nor ``"hard"``.
        SourceDataError: the database file is missing or unreadable.
    """
    if pairs is not None and pairs < 1:
        raise InputError("pairs", pairs, "must be a positive number of pairs")
    if difficulty not in (None, "hard"):
        raise InputError("difficulty", difficulty, "must be 'hard' (or omitted for every pair)")
    t0 = time.perf_counter()
    specs = list(programs) if programs is not None else list(load_programs())
    report = ConstructionReport(db_path=str(db_path), seed=seed, programs=len(specs))
    if rewrite is not None:
        specs, report.rewrites = rewrite_programs(specs, rewrite)
    ov = Overlay(db_path)
    try:
        try:
            patients = [r[0] for r in ov.query("SELECT patientid FROM patients")[1]]
        except Exception:  # noqa: BLE001 - a DB without patients yields no patient tasks
            patients = []
        patient_split = split_patients(patients, seed)
        quota_all = None if pairs is None else max(1, math.ceil(pairs * 1.6 / max(1, len(specs))))
        built: list[Pair] = []
        with Progress(disable=not progress, transient=False, console=Console(stderr=True)) as bar:
            job = bar.add_task("construction programs", total=len(specs))
            for spec in specs:
                rng = random.Random(f"{spec.name}:{seed}")
                runner = ProgramRunner(spec, ov, rng, patient_rule(patient_split, spec.track == "structure_disjoint"))
                quota = spec.max_pairs if quota_all is None else min(spec.max_pairs, quota_all)
                got = runner.run(quota)
                built.extend(got)
                report.candidates += runner.attempts
                report.skipped_for_split += runner.skipped_for_split
                merge_counts(report.rejections, runner.rejections)
                merge_counts(report.audit, runner.audit_counts)
                if runner.rejections:
                    report.rejections_by_program[spec.name] = dict(sorted(runner.rejections.items()))
                bar.update(job, advance=1, description=f"{spec.name}: {len(got)} pairs")
    finally:
        ov.close()
    t1 = time.perf_counter()
    if difficulty == "hard":
        built = [p for p in built if p.noise.difficulty == "hard"]
    kept, dropped = assign_splits(built, patient_split, seed)
    if pairs is not None:
        kept = _trim(kept, pairs, seed)
    report.dropped_for_balance = dropped
    fingerprint = database_fingerprint(db_path)
    tasks = [t.model_copy(update={"db_fingerprint": fingerprint}) for p in kept for t in (p.clean, p.noise)]
    tasks.sort(key=lambda t: (t.split, t.program, t.pair_id, t.condition))
    report.fill_counts(tasks)
    report.rejections = dict(sorted(report.rejections.items()))
    report.audit = dict(sorted(report.audit.items()))
    t2 = time.perf_counter()
    report.seconds = {"generate": round(t1 - t0, 2), "split": round(t2 - t1, 2), "total": round(t2 - t0, 2)}
    return tasks, report


def write_tasks(tasks: list[Task], out: str | Path) -> int:
    """Write tasks as JSONL (one Task per line); returns the line count."""
    return write_jsonl(out, tasks)
