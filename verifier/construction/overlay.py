"""Base database plus witness rows, as seen by one in-memory DuckDB connection.

ARCHITECTURE.md section 4 point 4: the overlay exposes every base table under its own
name; a table with witness rows becomes ``base rows UNION ALL witness rows``
(``insert``) or ``base rows without the keyed rows UNION ALL witness rows``
(``replace``). The base file is attached READ_ONLY, so nothing writes to it.

This is construction's own minimal overlay (helper D's ``verifier.abstention._witness``
serves the verifier); both follow the same semantics and can be merged.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Iterator, Sequence

import duckdb

from ..contract import SourceDataError, WitnessTable


class Overlay:
    """One connection serving base queries and witness overlays.

    Args:
        db_path: the DuckDB file (opened READ_ONLY through ``ATTACH``).

    Raises:
        SourceDataError: the file is missing or not a DuckDB database.
    """

    def __init__(self, db_path: str | Path) -> None:
        path = Path(db_path)
        if not path.is_file():
            raise SourceDataError(path, "database file not found")
        self.con = duckdb.connect(":memory:")
        # One thread: aggregates over doubles are then bit-for-bit reproducible.
        self.con.execute("SET threads = 1")
        try:
            self.con.execute(f"ATTACH '{path.as_posix()}' AS base (READ_ONLY)")
        except duckdb.Error as exc:
            raise SourceDataError(path, f"cannot attach as DuckDB database: {exc}") from exc
        self.con.execute("CREATE SCHEMA wit")
        self._cols: dict[str, list[str]] = {}
        self._distinct: dict[tuple[str, str], list[str]] = {}
        self.tables: list[str] = [
            r[0]
            for r in self.con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = 'base' "
                "UNION SELECT view_name FROM duckdb_views() WHERE database_name = 'base' AND NOT internal ORDER BY 1"
            ).fetchall()
        ]
        for t in self.tables:
            self._base_view(t)

    def _base_view(self, table: str) -> None:
        self.con.execute(f'CREATE OR REPLACE VIEW main."{table}" AS SELECT * FROM base."{table}"')

    def close(self) -> None:
        """Close the connection."""
        self.con.close()

    def query(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run ``sql`` against whatever the views currently show.

        Returns:
            (column names, rows).

        Raises:
            duckdb.Error: the SQL fails.
        """
        cur = self.con.execute(sql)
        cols = [d[0] for d in cur.description] if cur.description else []
        return cols, cur.fetchall()

    def columns(self, table: str) -> list[str]:
        """Column names of base table ``table`` in order."""
        if table not in self._cols:
            self._cols[table] = [r[0] for r in self.con.execute(f'DESCRIBE base."{table}"').fetchall()]
        return self._cols[table]

    def distinct(self, table: str, column: str) -> list[str]:
        """The distinct non-NULL text values of base ``table.column``, sorted (read
        once per connection; the relaxation audit's name variants).

        Raises:
            duckdb.Error: unknown table or column.
        """
        cache = self._distinct
        if (table, column) not in cache:
            rows = self.con.execute(f'SELECT DISTINCT CAST("{column}" AS VARCHAR) FROM base."{table}" WHERE "{column}" IS NOT NULL ORDER BY 1').fetchall()
            cache[(table, column)] = [r[0] for r in rows]
        return cache[(table, column)]

    def base_row(self, table: str, where: str, params: Sequence[Any]) -> dict[str, Any] | None:
        """The first base row of ``table`` matching ``where`` (``?`` placeholders
        bound to ``params``), as ``{column: value}``, or None.

        Raises:
            duckdb.Error: the condition fails.
        """
        cur = self.con.execute(f'SELECT * FROM base."{table}" WHERE {where} LIMIT 1', list(params))
        row = cur.fetchone()
        return None if row is None else dict(zip([d[0] for d in cur.description], row))

    @contextlib.contextmanager
    def applied(self, witness: Sequence[WitnessTable]) -> Iterator["Overlay"]:
        """Within the block, the views show base + ``witness``.

        Raises:
            KeyError: a witness names an unknown table.
            duckdb.Error: a witness row does not fit the table's columns/types.
        """
        touched: list[str] = []
        try:
            by_table: dict[str, list[tuple[int, WitnessTable]]] = {}
            for i, w in enumerate(witness):
                if w.table not in self.tables:
                    raise KeyError(f"witness table {w.table!r} is not in the database")
                by_table.setdefault(w.table, []).append((i, w))
            for table, entries in by_table.items():
                cols = self.columns(table)
                collist = ", ".join(f'"{c}"' for c in cols)
                marks = ", ".join("?" for _ in cols)
                src = f'SELECT * FROM base."{table}"'
                for i, w in entries:
                    wname = f'wit."w{i}"'
                    self.con.execute(f'CREATE OR REPLACE TABLE {wname} AS SELECT * FROM base."{table}" LIMIT 0')
                    self.con.executemany(
                        f"INSERT INTO {wname} ({collist}) VALUES ({marks})",
                        [[row.get(c) for c in cols] for row in w.rows],
                    )
                    if w.mode == "replace":
                        cond = " AND ".join(f'x."{k}" IS NOT DISTINCT FROM b."{k}"' for k in w.key)
                        src = f"SELECT * FROM ({src}) b WHERE NOT EXISTS (SELECT 1 FROM {wname} x WHERE {cond})"
                    src = f"{src} UNION ALL SELECT * FROM {wname}"
                touched.append(table)
                self.con.execute(f'CREATE OR REPLACE VIEW main."{table}" AS {src}')
            yield self
        finally:
            for t in touched:
                self._base_view(t)
