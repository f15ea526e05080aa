"""The main job on the embedded default: ``ehr-verifier demo``.

Generates the synthetic default hospital (``verifier.synthetic``), builds it into
DuckDB with :func:`verifier.build_db.build_database` and prints the per-table
summary and the planted gaps. Works from any directory: nothing is read from the
current folder and everything is written under ``workdir`` (or a temporary
folder removed at the end). Later issues extend it with tasks, rollouts and scores.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from .build_db import build_database, print_summary
from .synthetic import generate_hospital, read_gaps

#: Name of the built database inside the work folder.
DB_NAME = "hospital.duckdb"
#: Name of the generated MIMIC-IV folder inside the work folder.
HOSPITAL_DIR = "hospital"


@dataclass(frozen=True)
class DemoResult:
    """What :func:`run_demo` did.

    Attributes:
        hospital_dir: folder of the generated MIMIC-IV CSVs (``<workdir>/hospital``).
        db_path: the built database (``<workdir>/hospital.duckdb``).
        kept: False when a temporary folder was used and has been removed.
        report: the :class:`verifier.build_db.BuildReport`.
        gap_counts: planted gaps per kind (record, value, query, population, feature).
    """

    hospital_dir: Path
    db_path: Path
    kept: bool
    report: object
    gap_counts: dict[str, int]


def run_demo(workdir: str | Path | None = None, seed: int = 0, console: Console | None = None) -> DemoResult:
    """Generate the synthetic hospital, build it and print the summary.

    Args:
        workdir: folder for ``hospital/`` and ``hospital.duckdb`` (created if missing);
            None = a temporary folder, removed before returning.
        seed: seed of the synthetic hospital (same seed, same files).
        console: where to print (default: a new stdout console).

    Returns:
        A :class:`DemoResult`.

    Raises:
        InputError: bad ``seed`` or ``workdir`` is an existing file.
        SourceDataError: the build failed (nothing is left at the database path).
    """
    console = console or Console()
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="ehr-verifier-demo-") as tmp:
            result = _run(Path(tmp), seed, console)
        console.print("[dim](temporary folder removed; pass --workdir DIR to keep the files)[/]")
        return DemoResult(result.hospital_dir, result.db_path, False, result.report, result.gap_counts)
    return _run(Path(workdir), seed, console)


def _run(work: Path, seed: int, console: Console) -> DemoResult:
    console.print(f"[bold]ehr-verifier demo[/]: synthetic default hospital, seed {seed}")
    hospital = generate_hospital(work / HOSPITAL_DIR, seed=seed)
    console.print(f"generated MIMIC-IV CSVs in {hospital}")
    db = work / DB_NAME
    report = build_database(hospital, db)
    print_summary(report, console)
    gaps = read_gaps(hospital)
    counts = dict(sorted(Counter(g.kind for g in gaps).items()))
    console.print("planted gaps: " + ", ".join(f"{k} {v}" for k, v in counts.items())
                  + f" (listed in {hospital / 'gaps.json'})")
    return DemoResult(hospital, db, True, report, counts)
