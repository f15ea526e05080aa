"""Build the renamed DuckDB database from MIMIC-IV CSVs (``ehr-verifier build-db``).

Reads the ``hosp/`` and ``icu/`` layout (``.csv`` or ``.csv.gz``) of the
MIMIC-IV demo (v2.2) or full release (v3.1), renames tables and columns per
``rules/schema.toml``, adds the one derived column
``admissions.admission_age = anchor_age + year(admission_time) - anchor_year``,
checks each table's row count against its source, writes the schema
description as catalog comments (:mod:`verifier.schema_doc`), and publishes the
file atomically (temporary file in the same folder, renamed at the end).

A table absent from the source is created empty with its full schema and named
in the report; ``chart_events`` can instead be filled from a MEDS event file
(:mod:`verifier.database._meds`).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from ..contract import InputError, RulesError, SourceDataError, load_toml, rules_path
from ._csv import find_csv, load_csv_table, quote_ident
from ._meds import MEDS_LACKS, load_meds_chart_events
from ._report import BuildReport, TableReport, print_summary
from ._schema_doc import comment_columns, comment_table
from ._schema_map import ADMISSION_AGE, TableSpec, schema_tables

__all__ = ["BuildReport", "TableReport", "build_database", "print_summary"]

#: Table that ``--chartevents-meds`` fills.
CHART_EVENTS = "chart_events"

#: SQL filling the derived column (the only one): age at admission in years.
ADMISSION_AGE_SQL = (
    f"UPDATE admissions SET {ADMISSION_AGE} = CAST(p.anchor_age + year(admissions.admission_time) - p.anchor_year AS INTEGER) "
    "FROM patients p WHERE p.patientid = admissions.patientid"
)


def derived_columns() -> dict[str, tuple[str, str, str]]:
    """Derived columns from ``rules/schema.toml`` ``[[derived]]``: name -> (table, type, description).

    Raises:
        RulesError: the admission age entry is missing or malformed, or another derived column is declared.
    """
    out: dict[str, tuple[str, str, str]] = {}
    for i, d in enumerate(load_toml("schema.toml").get("derived", [])):
        try:
            out[d["name"]] = (d["table"], d["type"], d["description"])
        except KeyError as exc:
            raise RulesError(rules_path("schema.toml"), f"derived[{i}] lacks {exc}") from exc
    if set(out) != {ADMISSION_AGE}:  # the builder computes exactly one derived column (ADMISSION_AGE_SQL)
        raise RulesError(rules_path("schema.toml"), f"[[derived]] must hold exactly {ADMISSION_AGE!r}, has {sorted(out)}")
    return out


def _columns_ddl(spec: TableSpec, extra: list[tuple[str, str]]) -> str:
    cols = [f"{quote_ident(c.name)} {c.type}" for c in spec.columns] + [f"{quote_ident(n)} {t}" for n, t in extra]
    return ", ".join(cols)


def _create_tables(con: duckdb.DuckDBPyConnection, derived: dict[str, tuple[str, str, str]]) -> dict[str, int]:
    """Create every table empty with its full schema; return name -> column count."""
    ncols: dict[str, int] = {}
    con.execute("BEGIN TRANSACTION")
    for spec in schema_tables():
        extra = [(name, typ) for name, (table, typ, _) in derived.items() if table == spec.name]
        con.execute(f"CREATE TABLE {quote_ident(spec.name)} ({_columns_ddl(spec, extra)})")
        ncols[spec.name] = len(spec.columns) + len(extra)
    con.execute("COMMIT")
    return ncols


def _write_comments(
    con: duckdb.DuckDBPyConnection, derived: dict[str, tuple[str, str, str]], table_suffix: dict[str, str],
    column_suffix: dict[tuple[str, str], str],
) -> None:
    con.execute("BEGIN TRANSACTION")  # one commit for ~375 catalog comments instead of one each
    for spec in schema_tables():
        comment_table(con, spec.name, spec.description + table_suffix.get(spec.name, ""))
        cols = [(c.name, c.description + column_suffix.get((spec.name, c.name), "")) for c in spec.columns]
        cols += [(name, desc) for name, (table, _, desc) in derived.items() if table == spec.name]
        comment_columns(con, spec.name, cols)
    con.execute("COMMIT")


@contextmanager
def _progress(enabled: bool, total: int) -> Iterator[Callable[[str], None]]:
    """Yield ``step(description)``: completes the previous step and shows the next on a rich bar (stderr)."""
    if not enabled:
        yield lambda _desc: None
        return
    bar = Progress(
        TextColumn("[bold]build-db[/]"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
        TimeElapsedColumn(), console=Console(stderr=True), transient=False,
    )
    with bar:
        task = bar.add_task("starting", total=total)
        started = False

        def step(desc: str) -> None:
            nonlocal started
            if started:
                bar.advance(task)
            started = True
            bar.update(task, description=desc)

        yield step
        bar.update(task, completed=total, description="done")


@dataclass
class _Outcome:
    """What the build has gathered so far: table reports, notes, table-comment suffixes."""

    reports: list[TableReport] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    suffix: dict[str, str] = field(default_factory=dict)
    column_suffix: dict[tuple[str, str], str] = field(default_factory=dict)
    meds_lacks: tuple[str, ...] = ()


def _load_from_csv(con: duckdb.DuckDBPyConnection, spec: TableSpec, path: Path, ncols: int, meds: Path | None, out: _Outcome) -> None:
    src = f"{spec.module}/{spec.source}"
    load = load_csv_table(con, path, spec)
    tnotes = tuple(f"source column {c!r} is not in rules/schema.toml: not loaded" for c in load.ignored_columns)
    out.notes.extend(f"{spec.name}: {n}" for n in tnotes)
    if spec.name == CHART_EVENTS and meds is not None:
        out.notes.append(f"{CHART_EVENTS}: {src} present; --chartevents-meds {meds} not used")
    out.reports.append(TableReport(spec.name, src, "csv", load.rows, load.source_rows, path, ncols, tnotes))


def _mark_absent(spec: TableSpec, mimic_dir: Path, ncols: int, out: _Outcome) -> None:
    src = f"{spec.module}/{spec.source}"
    msg = f"{src}.csv(.gz) absent from {mimic_dir}: table {spec.name} created empty with its full schema"
    out.notes.append(msg)
    out.suffix[spec.name] = ". ABSENT from the source of this database: the table is empty."
    out.reports.append(TableReport(spec.name, src, "absent", 0, None, None, ncols, (msg,)))


def _load_from_meds(con: duckdb.DuckDBPyConnection, spec: TableSpec, meds: Path, ncols: int, out: _Outcome) -> None:
    src = f"{spec.module}/{spec.source}"
    load = load_meds_chart_events(con, meds)
    out.meds_lacks = tuple(MEDS_LACKS.values())
    tnotes = (
        f"filled from MEDS file {meds} ({src} absent)",
        f"MEDS source lacks: {', '.join(out.meds_lacks)}; those columns are NULL",
        f"{load.unlinked} events fall outside every ICU stay window: admissionid and icuadmissionid NULL",
    )
    out.notes.extend(f"{spec.name}: {n}" for n in tnotes)
    out.suffix[spec.name] = (
        ". Built from a MEDS export, not the original CSV: " + ", ".join(MEDS_LACKS)
        + " are NULL (absent from that source); admissionid and icuadmissionid are taken from the ICU stay"
        " whose in_time..out_time window holds chart_time."
    )
    for col in MEDS_LACKS:
        out.column_suffix[(spec.name, col)] = " (always NULL in this database: not in its MEDS source)"
    out.reports.append(TableReport(spec.name, src, "meds", load.rows, load.source_rows, meds, ncols, tnotes))


def _build(con: duckdb.DuckDBPyConnection, mimic_dir: Path, meds: Path | None, progress: bool) -> _Outcome:
    derived = derived_columns()
    ncols = _create_tables(con, derived)
    specs = schema_tables()
    out = _Outcome()
    deferred: TableSpec | None = None
    with _progress(progress, len(specs) + 1) as step:
        for spec in specs:
            step(f"{spec.module}/{spec.source}")
            path = find_csv(mimic_dir, spec)
            if path is not None:
                _load_from_csv(con, spec, path, ncols[spec.name], meds, out)
            elif spec.name == CHART_EVENTS and meds is not None:
                deferred = spec  # needs icu_stays, which comes later in file order
            else:
                _mark_absent(spec, mimic_dir, ncols[spec.name], out)
        if deferred is not None and meds is not None:
            _load_from_meds(con, deferred, meds, ncols[deferred.name], out)
            order = [s.name for s in specs]
            out.reports.sort(key=lambda r: order.index(r.name))
        step("admission age, schema description")
        con.execute(ADMISSION_AGE_SQL)
        if any(r.name == "patients" and r.origin == "absent" for r in out.reports):
            out.notes.append(f"admissions.{ADMISSION_AGE} is NULL: patients table absent")
        _write_comments(con, derived, out.suffix, out.column_suffix)
    return out


def _remove(path: Path) -> None:
    for p in (path, path.with_name(path.name + ".wal")):
        try:
            p.unlink()
        except (FileNotFoundError, NotADirectoryError):
            pass


def build_database(
    mimic_dir: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    chartevents_meds: str | os.PathLike[str] | None = None,
    progress: bool = False,
) -> BuildReport:
    """Build the renamed DuckDB database from a MIMIC-IV folder.

    Args:
        mimic_dir: folder holding ``hosp/`` and/or ``icu/`` with ``<table>.csv.gz`` or ``.csv``.
        out: the ``.duckdb`` file to write; replaced atomically (its folder is created if needed).
        chartevents_meds: optional MEDS event parquet used for ``chart_events`` when
            ``icu/chartevents`` is absent (ignored, with a note, when it is present).
        progress: show a rich progress bar on stderr.
    Returns:
        A :class:`BuildReport` (per-table rows vs source rows, absent tables, notes).
    Raises:
        SourceDataError: missing folder, no source table file at all (some
            absent tables are allowed and reported), a CSV lacking a column, a truncated or
            unreadable file, a value not fitting its type, a row count mismatch,
            a bad MEDS file. Nothing is then left at ``out`` by this build (a file
            already there is left untouched) and the temporary file is removed.
        InputError: ``out`` is a folder or cannot be created (field ``"out"``).
        RulesError: ``rules/schema.toml`` is malformed.
    """
    started = time.perf_counter()
    mimic_dir = Path(mimic_dir)
    out = Path(out)
    meds = Path(chartevents_meds) if chartevents_meds is not None else None
    if not mimic_dir.is_dir():
        raise SourceDataError(mimic_dir, "MIMIC-IV folder not found")
    if not (mimic_dir / "hosp").is_dir() and not (mimic_dir / "icu").is_dir():
        raise SourceDataError(mimic_dir, "neither hosp/ nor icu/ found: not a MIMIC-IV folder")
    if not any(find_csv(mimic_dir, spec) is not None for spec in schema_tables()):
        raise SourceDataError(
            mimic_dir, "no source table file found in hosp/ or icu/ (expected e.g. hosp/patients.csv.gz): nothing to build"
        )
    if meds is not None and not meds.is_file():
        raise SourceDataError(meds, "MEDS file not found")
    if out.is_dir():
        raise InputError("out", str(out), "is a folder; give the path of the .duckdb file to write")
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(tmp))
    except (OSError, duckdb.Error) as exc:
        _remove(tmp)
        raise InputError("out", str(out), f"cannot create the database there: {exc}") from exc
    try:
        con.execute("SET enable_progress_bar = false")  # ours is the rich bar
        done = _build(con, mimic_dir, meds, progress)
        con.execute("CHECKPOINT")
        con.close()
        _remove(out.with_name(out.name + ".wal"))  # a stale WAL would be replayed onto the new file
        os.replace(tmp, out)
    except BaseException:
        con.close()
        _remove(tmp)
        raise
    seconds = time.perf_counter() - started
    return BuildReport(out, mimic_dir, tuple(done.reports), tuple(done.notes), done.meds_lacks, seconds)
