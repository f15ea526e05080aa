"""Loading one MIMIC-IV CSV table into DuckDB (header check, typed streaming read, row count).

The data never passes through Python: DuckDB reads the (gzipped) CSV with the
column types of ``rules/schema.toml`` and inserts it straight into the target
table. Python only reads the header line, to check that every expected column
is there (matched case-insensitively: ``procedureevents`` spells
``ORIGINALAMOUNT`` in capitals) before DuckDB starts.
"""

from __future__ import annotations

import csv
import gzip
import io
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..contract import SourceDataError
from ._schema_map import TableSpec

#: File name endings tried, in order, for ``<module>/<source>``.
CSV_SUFFIXES = (".csv.gz", ".csv")


@dataclass(frozen=True)
class CsvLoad:
    """Outcome of loading one CSV: the file, its row counts, and source columns not in the schema."""

    path: Path
    rows: int
    source_rows: int
    ignored_columns: tuple[str, ...]


def find_csv(mimic_dir: Path, spec: TableSpec) -> Path | None:
    """Return ``mimic_dir/<module>/<source>.csv.gz`` (or ``.csv``) if it exists, else None."""
    for suffix in CSV_SUFFIXES:
        path = mimic_dir / spec.module / f"{spec.source}{suffix}"
        if path.is_file():
            return path
    return None


def read_header(path: Path) -> list[str]:
    """Read the header line of a CSV or gzipped CSV (only that line).

    Returns:
        The column names as written in the file.
    Raises:
        SourceDataError: unreadable, not gzip although named ``.gz``, or empty.
    """
    try:
        raw = gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")
        with raw as fh:
            line = fh.readline()
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        raise SourceDataError(path, f"cannot read header: {exc}") from exc
    if not line.strip():
        raise SourceDataError(path, "empty file: no header line")
    try:
        text = line.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceDataError(path, f"header is not UTF-8: {exc}") from exc
    return next(csv.reader(io.StringIO(text)))


def column_plan(path: Path, spec: TableSpec, header: list[str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """Map the file's columns (in file order) to target names and DuckDB types.

    Args:
        path: the CSV (for error messages).
        spec: the table's schema entry.
        header: column names from :func:`read_header`.
    Returns:
        (ordered ``{target_name: type}`` for DuckDB's ``read_csv(columns=...)``,
        source columns that the schema does not know; read as VARCHAR and not kept).
    Raises:
        SourceDataError: an expected column is missing, or a column appears twice.
    """
    by_source = {c.source.lower(): c for c in spec.columns}
    seen: set[str] = set()
    plan: dict[str, str] = {}
    ignored: list[str] = []
    for i, name in enumerate(header):
        key = name.strip().lower()
        if key in seen:
            raise SourceDataError(path, f"column {name!r} appears twice in the header")
        seen.add(key)
        col = by_source.get(key)
        if col is None:
            ignored.append(name)
            plan[f"__ignored_{i}"] = "VARCHAR"
        else:
            plan[col.name] = col.type
    missing = [c.source for c in spec.columns if c.source.lower() not in seen]
    if missing:
        more = f"; also missing: {', '.join(missing[1:])}" if len(missing) > 1 else ""
        raise SourceDataError(path, f"column {missing[0]!r} missing from the header (table {spec.source}{more})")
    return plan, tuple(ignored)


def sql_literal(text: str) -> str:
    """Quote ``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def quote_ident(name: str) -> str:
    """Quote ``name`` as a SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def read_csv_sql(path: Path, plan: dict[str, str]) -> str:
    """DuckDB ``read_csv(...)`` call with explicit columns, no type sniffing.

    Empty unquoted fields are NULL; a quoted empty string stays an empty
    string (``allow_quoted_nulls=false``), as PostgreSQL's ``COPY ... CSV``
    loads MIMIC-IV in the official build scripts.
    """
    cols = ", ".join(f"{sql_literal(n)}: {sql_literal(t)}" for n, t in plan.items())
    return (
        f"read_csv({sql_literal(str(path))}, header = true, auto_detect = false, delim = ',', "
        f"quote = '\"', escape = '\"', allow_quoted_nulls = false, columns = {{{cols}}})"
    )


def duckdb_reason(exc: BaseException) -> str:
    """The informative part of a DuckDB error: its first line and the line naming the failing column."""
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    if not lines:
        return type(exc).__name__
    keep = [lines[0]] + [ln for ln in lines[1:] if ln.startswith(("Error when converting", "Expected Number of Columns"))]
    return "; ".join(keep)


def load_csv_table(con: duckdb.DuckDBPyConnection, path: Path, spec: TableSpec) -> CsvLoad:
    """Insert the CSV at ``path`` into the (already created) table ``spec.name`` and check its row count.

    The source row count is counted by a second, untyped scan of the file
    (every column VARCHAR), so a row lost in typing would show as a mismatch.

    Raises:
        SourceDataError: missing column, unreadable/truncated file, a value that
            does not fit its column type, or a row count mismatch (message names the file).
    """
    plan, ignored = column_plan(path, spec, read_header(path))
    targets = ", ".join(quote_ident(c.name) for c in spec.columns)
    untyped = {name: "VARCHAR" for name in plan}
    try:
        con.execute(f"INSERT INTO {quote_ident(spec.name)} ({targets}) SELECT {targets} FROM {read_csv_sql(path, plan)}")
        source_rows = con.execute(f"SELECT count(*) FROM {read_csv_sql(path, untyped)}").fetchone()[0]
        rows = con.execute(f"SELECT count(*) FROM {quote_ident(spec.name)}").fetchone()[0]
    except duckdb.Error as exc:
        raise SourceDataError(path, f"cannot load into {spec.name}: {duckdb_reason(exc)}") from exc
    if rows != source_rows:
        raise SourceDataError(path, f"row count mismatch: source has {source_rows} rows, table {spec.name} has {rows}")
    return CsvLoad(path, rows, source_rows, ignored)
