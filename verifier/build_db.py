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
(:mod:`verifier.build_meds`).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .build_csv import find_csv, load_csv_table, quote_ident
from .build_meds import MEDS_LACKS, load_meds_chart_events
from .errors import RulesError, SourceDataError
from .rules import load_toml, rules_path
from .schema_doc import comment_columns, comment_table
from .schema_map import ADMISSION_AGE, TableSpec, schema_tables

#: Table that ``--chartevents-meds`` fills.
CHART_EVENTS = "chart_events"

#: SQL filling the derived column (the only one): age at admission in years.
ADMISSION_AGE_SQL = (
    f"UPDATE admissions SET {ADMISSION_AGE} = CAST(p.anchor_age + year(admissions.admission_time) - p.anchor_year AS INTEGER) "
    "FROM patients p WHERE p.patientid = admissions.patientid"
)


@dataclass(frozen=True)
class TableReport:
    """What happened to one table.

    Attributes:
        name: target table name (e.g. ``"lab_events"``).
        source: ``"<module>/<source>"`` (e.g. ``"hosp/labevents"``).
        origin: ``"csv"`` (loaded from its CSV), ``"meds"`` (chart events from a MEDS file)
            or ``"absent"`` (no source: created empty with its full schema).
        rows: rows in the built table.
        source_rows: rows counted in the source (None when absent).
        path: the source file read (None when absent).
        columns: number of columns of the built table.
        notes: human-readable remarks (ignored extra source columns, MEDS gaps, ...).
    """

    name: str
    source: str
    origin: str
    rows: int
    source_rows: int | None
    path: Path | None
    columns: int
    notes: tuple[str, ...] = ()

    @property
    def count_ok(self) -> bool:
        """True when the table has exactly the source's rows (or is absent and empty)."""
        return self.rows == (self.source_rows or 0)


@dataclass(frozen=True)
class BuildReport:
    """Result of :func:`build_database`.

    Attributes:
        out: the database file written.
        mimic_dir: the source folder.
        tables: one :class:`TableReport` per table, in ``rules/schema.toml`` order.
        notes: build-level remarks (absent tables, MEDS gaps), also printed by :func:`print_summary`.
        meds_lacks: what the MEDS source lacked (empty when chart events did not come from MEDS).
        seconds: wall-clock build time.
    """

    out: Path
    mimic_dir: Path
    tables: tuple[TableReport, ...]
    notes: tuple[str, ...]
    meds_lacks: tuple[str, ...]
    seconds: float

    @property
    def missing_tables(self) -> tuple[str, ...]:
        """Names of the tables absent from the source (created empty)."""
        return tuple(t.name for t in self.tables if t.origin == "absent")

    @property
    def n_tables(self) -> int:
        """Number of tables built."""
        return len(self.tables)

    @property
    def n_columns(self) -> int:
        """Number of columns over all tables."""
        return sum(t.columns for t in self.tables)

    def table(self, name: str) -> TableReport:
        """The report of table ``name``.

        Raises:
            KeyError: no such table.
        """
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(name)


def derived_columns() -> dict[str, tuple[str, str, str]]:
    """Derived columns from ``rules/schema.toml`` ``[[derived]]``: name -> (table, type, description).

    Raises:
        RulesError: the admission age entry is missing or malformed.
    """
    out: dict[str, tuple[str, str, str]] = {}
    for i, d in enumerate(load_toml("schema.toml").get("derived", [])):
        try:
            out[d["name"]] = (d["table"], d["type"], d["description"])
        except KeyError as exc:
            raise RulesError(rules_path("schema.toml"), f"derived[{i}] lacks {exc}") from exc
    if ADMISSION_AGE not in out:
        raise RulesError(rules_path("schema.toml"), f"[[derived]] entry {ADMISSION_AGE!r} missing")
    return out


def _columns_ddl(spec: TableSpec, extra: list[tuple[str, str]]) -> str:
    cols = [f"{quote_ident(c.name)} {c.type}" for c in spec.columns] + [f"{quote_ident(n)} {t}" for n, t in extra]
    return ", ".join(cols)


def _create_tables(con: duckdb.DuckDBPyConnection, derived: dict[str, tuple[str, str, str]]) -> dict[str, int]:
    """Create every table empty with its full schema; return name -> column count."""
    ncols: dict[str, int] = {}
    for spec in schema_tables():
        extra = [(name, typ) for name, (table, typ, _) in derived.items() if table == spec.name]
        con.execute(f"CREATE TABLE {quote_ident(spec.name)} ({_columns_ddl(spec, extra)})")
        ncols[spec.name] = len(spec.columns) + len(extra)
    return ncols


def _write_comments(
    con: duckdb.DuckDBPyConnection, derived: dict[str, tuple[str, str, str]], table_suffix: dict[str, str]
) -> None:
    for spec in schema_tables():
        comment_table(con, spec.name, spec.description + table_suffix.get(spec.name, ""))
        cols = [(c.name, c.description) for c in spec.columns]
        cols += [(name, desc) for name, (table, _, desc) in derived.items() if table == spec.name]
        comment_columns(con, spec.name, cols)


@contextmanager
def _progress(enabled: bool, total: int) -> Iterator[tuple[Progress | None, object]]:
    if not enabled:
        yield None, None
        return
    bar = Progress(
        TextColumn("[bold]build-db[/]"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
        TimeElapsedColumn(), console=Console(stderr=True), transient=False,
    )
    with bar:
        yield bar, bar.add_task("starting", total=total)


def _build(
    con: duckdb.DuckDBPyConnection, mimic_dir: Path, meds: Path | None, progress: bool
) -> tuple[list[TableReport], list[str], tuple[str, ...]]:
    derived = derived_columns()
    ncols = _create_tables(con, derived)
    reports: list[TableReport] = []
    notes: list[str] = []
    suffix: dict[str, str] = {}
    meds_lacks: tuple[str, ...] = ()
    specs = schema_tables()
    deferred_meds: TableSpec | None = None
    with _progress(progress, len(specs) + 1) as (bar, task):
        for spec in specs:
            if bar is not None:
                bar.update(task, description=f"{spec.module}/{spec.source}")
            path = find_csv(mimic_dir, spec)
            src = f"{spec.module}/{spec.source}"
            if path is not None:
                load = load_csv_table(con, path, spec)
                tnotes = tuple(f"source column {c!r} is not in rules/schema.toml: not loaded" for c in load.ignored_columns)
                notes.extend(f"{spec.name}: {n}" for n in tnotes)
                if spec.name == CHART_EVENTS and meds is not None:
                    notes.append(f"{CHART_EVENTS}: {src} present; --chartevents-meds {meds} not used")
                reports.append(TableReport(spec.name, src, "csv", load.rows, load.source_rows, path, ncols[spec.name], tnotes))
            elif spec.name == CHART_EVENTS and meds is not None:
                deferred_meds = spec  # needs icu_stays, loaded later in file order
            else:
                msg = f"{src}.csv(.gz) absent from {mimic_dir}: table {spec.name} created empty with its full schema"
                notes.append(msg)
                suffix[spec.name] = ". ABSENT from the source of this database: the table is empty."
                reports.append(TableReport(spec.name, src, "absent", 0, None, None, ncols[spec.name], (msg,)))
            if bar is not None:
                bar.advance(task)
        if deferred_meds is not None:
            assert meds is not None
            if bar is not None:
                bar.update(task, description=f"{CHART_EVENTS} <- MEDS")
            load = load_meds_chart_events(con, meds)
            meds_lacks = tuple(MEDS_LACKS.values())
            lacks = ", ".join(meds_lacks)
            tnotes = (
                f"filled from MEDS file {meds} ({deferred_meds.module}/{deferred_meds.source} absent)",
                f"MEDS source lacks: {lacks}; those columns are NULL",
                f"{load.unlinked} events fall outside every ICU stay window: admissionid and icuadmissionid NULL",
            )
            notes.extend(f"{CHART_EVENTS}: {n}" for n in tnotes)
            suffix[CHART_EVENTS] = (
                ". Built from a MEDS export, not the original CSV: "
                + ", ".join(MEDS_LACKS) + " are NULL (absent from that source); admissionid and icuadmissionid "
                "are taken from the ICU stay whose in_time..out_time window holds chart_time."
            )
            src = f"{deferred_meds.module}/{deferred_meds.source}"
            reports.append(TableReport(CHART_EVENTS, src, "meds", load.rows, load.source_rows, meds, ncols[CHART_EVENTS], tnotes))
            reports.sort(key=lambda r: [s.name for s in specs].index(r.name))
        if bar is not None:
            bar.update(task, description="admission age, schema description")
        con.execute(ADMISSION_AGE_SQL)
        _write_comments(con, derived, suffix)
        if bar is not None:
            bar.advance(task)
            bar.update(task, description="done")
    return reports, notes, meds_lacks


def _remove(path: Path) -> None:
    for p in (path, path.with_name(path.name + ".wal")):
        try:
            p.unlink()
        except FileNotFoundError:
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
        SourceDataError: missing folder, a CSV lacking a column, a truncated or
            unreadable file, a value not fitting its type, a row count mismatch,
            a bad MEDS file. Nothing is then left at ``out`` by this build (a file
            already there is left untouched) and the temporary file is removed.
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
    if meds is not None and not meds.is_file():
        raise SourceDataError(meds, "MEDS file not found")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex[:12]}.tmp")
    con = duckdb.connect(str(tmp))
    try:
        reports, notes, meds_lacks = _build(con, mimic_dir, meds, progress)
        con.execute("CHECKPOINT")
        con.close()
        _remove(out.with_name(out.name + ".wal"))  # a stale WAL would be replayed onto the new file
        os.replace(tmp, out)
    except BaseException:
        con.close()
        _remove(tmp)
        raise
    return BuildReport(out, mimic_dir, tuple(reports), tuple(notes), meds_lacks, time.perf_counter() - started)


def print_summary(report: BuildReport, console: Console) -> None:
    """Print the per-table summary (rows vs source rows, origin) and the notes as a rich table."""
    tab = Table(title=f"ehr-verifier build-db -> {report.out}", show_lines=False)
    for col, justify in (("table", "left"), ("source", "left"), ("origin", "left"), ("rows", "right"),
                         ("source rows", "right"), ("cols", "right"), ("check", "left")):
        tab.add_column(col, justify=justify)  # type: ignore[arg-type]
    for t in report.tables:
        check = "[green]ok[/]" if t.count_ok else "[red]MISMATCH[/]"
        if t.origin == "absent":
            check = "[yellow]ABSENT: created empty[/]"
        elif t.origin == "meds":
            check += " [yellow](MEDS, partial)[/]"
        src_rows = "-" if t.source_rows is None else f"{t.source_rows:,}"
        tab.add_row(t.name, t.source, t.origin, f"{t.rows:,}", src_rows, str(t.columns), check)
    console.print(tab)
    for note in report.notes:
        console.print(f"[yellow]note:[/] {note}")
    console.print(
        f"{report.n_tables} tables, {report.n_columns} columns, "
        f"{sum(t.rows for t in report.tables):,} rows in {report.seconds:.1f} s"
    )
