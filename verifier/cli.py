"""The ``ehr-verifier`` command line (typer).

Each command is a thin shell over a library function; heavy imports happen
inside the command so that ``ehr-verifier --help`` stays fast.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

app = typer.Typer(
    help="Verify clinical database agents on Clean-Noise task pairs (MIMIC-IV shaped, DuckDB).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(stderr=False)
err_console = Console(stderr=True)

#: Default location of the real MIMIC-IV demo (overridden by --mimic-dir or $MIMIC_DEMO_DIR).
DEFAULT_MIMIC_DIR = "../shared/data/mimic-iv-demo"


def default_mimic_dir() -> Path:
    """``$MIMIC_DEMO_DIR`` or ``../shared/data/mimic-iv-demo``."""
    return Path(os.environ.get("MIMIC_DEMO_DIR", DEFAULT_MIMIC_DIR))


def _fail(exc: Exception) -> None:
    err_console.print(f"[bold red]error:[/] {exc}")
    raise typer.Exit(code=2)


@app.command("schema")
def schema_cmd(out: Path = typer.Option(..., "--out", help="Folder to write <Name>.schema.json into.")) -> None:
    """Write the JSON Schemas of Task, Trajectory and Verdict."""
    from .contract import write_schemas

    for p in write_schemas(out):
        console.print(f"wrote {p}")


@app.command("build-db")
def build_db_cmd(
    mimic_dir: Optional[Path] = typer.Option(None, "--mimic-dir", help="MIMIC-IV folder with hosp/ and icu/ (default $MIMIC_DEMO_DIR or ../shared/data/mimic-iv-demo)."),
    out: Path = typer.Option(..., "--out", help="DuckDB file to write (replaced atomically)."),
    chartevents_meds: Optional[Path] = typer.Option(None, "--chartevents-meds", help="MEDS event parquet to fill chart_events when icu/chartevents is absent."),
) -> None:
    """Build the renamed, read-only-ready DuckDB database from MIMIC-IV CSVs."""
    from .build_db import build_database, print_summary
    from .errors import VerifierError

    try:
        report = build_database(mimic_dir or default_mimic_dir(), out, chartevents_meds=chartevents_meds, progress=True)
    except VerifierError as exc:
        _fail(exc)
    print_summary(report, console)


@app.command("demo")
def demo_cmd(
    workdir: Optional[Path] = typer.Option(None, "--workdir", help="Folder for the generated hospital and outputs (default: a temporary folder)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the synthetic hospital."),
) -> None:
    """Main job on the embedded default: generate the synthetic hospital, build it, and report."""
    from .demo import run_demo

    run_demo(workdir=workdir, seed=seed, console=console)


def main() -> None:  # pragma: no cover - console entry
    """Console entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
