"""The result of a database build (:class:`BuildReport`) and its printed per-table summary."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text


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


def print_summary(report: BuildReport, console: Console) -> None:
    """Print the per-table summary (rows vs source rows, origin) and the notes as a rich table."""
    rows = [
        (t.name, t.source, f"{t.rows:,}", "-" if t.source_rows is None else f"{t.source_rows:,}", str(t.columns),
         "[yellow]ABSENT[/]" if t.origin == "absent"
         else ("[green]ok[/]" if t.count_ok else "[red]MISMATCH[/]") + (" [yellow]MEDS[/]" if t.origin == "meds" else ""))
        for t in report.tables
    ]
    heads = (("table", "left"), ("source", "left"), ("rows", "right"), ("source rows", "right"),
             ("cols", "right"), ("check", "left"))
    keep = [k for k, (head, _) in enumerate(heads) if head != "source" or console.width >= 110]  # narrow: drop file
    tab = Table(title=f"build-db -> {report.out}", box=box.SIMPLE_HEAD, pad_edge=False)
    for k in keep:
        head, justify = heads[k]
        widest = max([len(head)] + [len(Text.from_markup(r[k]).plain) for r in rows])
        tab.add_column(head, justify=justify, no_wrap=True, min_width=widest)  # type: ignore[arg-type]
    rows = [tuple(r[k] for k in keep) for r in rows]
    for r in rows:
        tab.add_row(*r)
    console.print(tab)
    for note in report.notes:
        console.print(f"[yellow]note:[/] {note}")
    console.print(
        f"{report.n_tables} tables, {report.n_columns} columns, "
        f"{sum(t.rows for t in report.tables):,} rows in {report.seconds:.1f} s"
    )
