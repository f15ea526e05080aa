"""Write a synthetic hospital's rows as MIMIC-IV ``hosp/*.csv.gz`` and ``icu/*.csv.gz`` files.

Column names and order come from ``rules/schema.toml`` (the *source* names),
so the files have exactly the layout of MIMIC-IV v2.2. Output is byte-identical
for identical rows: rows are written in generation order, values are formatted
explicitly and gzip headers carry ``mtime=0`` and no file name.
"""

from __future__ import annotations

import csv
import gzip
import io
from datetime import date, datetime
from pathlib import Path
from typing import Any, Iterable

from ..contract import InputError
from ..database import TableSpec, schema_tables

#: Timestamp format of MIMIC-IV CSVs.
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"


def format_value(v: Any) -> str:
    """CSV text of one value: NULL -> empty, datetime -> ``YYYY-MM-DD HH:MM:SS``, date -> ISO,
    bool -> 0/1, float -> shortest round-trip repr (never exponent notation for our ranges)."""
    if v is None:
        return ""
    if isinstance(v, datetime):
        return v.strftime(TIMESTAMP_FORMAT)
    if isinstance(v, date):
        return v.isoformat()
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        text = repr(v)
        if "e" in text or "E" in text:
            text = f"{v:.10f}".rstrip("0").rstrip(".")
        return text
    return str(v)


def table_csv(spec: TableSpec, rows: Iterable[dict[str, Any]]) -> bytes:
    """The CSV bytes (header + rows) of one table in schema column order.

    Raises:
        InputError: a row has a column the schema does not list (a generator bug).
    """
    cols = [c.source for c in spec.columns]
    allowed = set(cols)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    w.writerow(cols)
    for i, row in enumerate(rows):
        extra = set(row) - allowed
        if extra:
            raise InputError(f"{spec.source}[{i}]", sorted(extra), f"columns not in rules/schema.toml for {spec.source}")
        w.writerow([format_value(row.get(c)) for c in cols])
    return buf.getvalue().encode("utf-8")


def write_tables(tables: dict[str, list[dict[str, Any]]], out_dir: Path) -> list[Path]:
    """Write every schema table (empty ones too, header only) under ``out_dir/<module>/``.

    Returns the written paths in schema order.
    """
    written = []
    for spec in schema_tables():
        folder = out_dir / spec.module
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{spec.source}.csv.gz"
        data = gzip.compress(table_csv(spec, tables.get(spec.source, [])), compresslevel=6, mtime=0)
        path.write_bytes(data)
        written.append(path)
    return written
