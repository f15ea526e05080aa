"""The schema description stored inside the database, and the text agents see.

The builder writes each table's and column's one-line meaning (from
``rules/schema.toml``) as DuckDB catalog comments (``COMMENT ON TABLE`` /
``COMMENT ON COLUMN``, https://duckdb.org/docs/sql/statements/comment_on), so
the description travels with the file and adds no table to the schema. They
are read back from ``duckdb_tables()`` / ``duckdb_columns()``; this works on a
read-only connection.
"""

from __future__ import annotations

from collections.abc import Iterable

import duckdb

from ._csv import quote_ident, sql_literal


def comment_table(con: duckdb.DuckDBPyConnection, table: str, text: str) -> None:
    """Set the catalog comment of ``table`` to ``text``."""
    con.execute(f"COMMENT ON TABLE {quote_ident(table)} IS {sql_literal(text)}")


def comment_columns(con: duckdb.DuckDBPyConnection, table: str, columns: Iterable[tuple[str, str]]) -> None:
    """Set the catalog comment of each ``(column, text)`` of ``table``."""
    for column, text in columns:
        con.execute(f"COMMENT ON COLUMN {quote_ident(table)}.{quote_ident(column)} IS {sql_literal(text)}")


def describe_tables(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """Return ``(table, description)`` for every table of the main schema, by table name.

    The description is the table comment ('' when none).
    """
    rows = con.execute(
        "SELECT table_name, coalesce(comment, '') FROM duckdb_tables() "
        "WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal ORDER BY table_name"
    ).fetchall()
    return [(str(t), str(d)) for t, d in rows]


def describe_schema(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str, str]]:
    """Return ``(table, column, type, description)`` for every column of the main schema.

    Args:
        con: an open connection (read-only is fine) to a database built by
            :func:`verifier.database.build_database`.
    Returns:
        Rows ordered by table name, then column position; ``type`` is DuckDB's
        type name (e.g. ``"TIMESTAMP"``), ``description`` the column comment ('' when none).
    """
    rows = con.execute(
        "SELECT table_name, column_name, data_type, coalesce(comment, '') FROM duckdb_columns() "
        "WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal ORDER BY table_name, column_index"
    ).fetchall()
    return [(str(t), str(c), str(ty), str(d)) for t, c, ty, d in rows]


def schema_text(con: duckdb.DuckDBPyConnection) -> str:
    """Compact text of the schema for agents: one header line per table, one line per column.

    Format::

        admissions: Hospital admissions, one row per hospitalization.
          patientid INTEGER - Patient identifier (MIMIC-IV subject_id).
          ...

    Returns:
        The text (ends with a newline); '' for a database without tables.
    """
    table_doc = dict(describe_tables(con))
    lines: list[str] = []
    current = None
    for table, column, typ, desc in describe_schema(con):
        if table != current:
            current = table
            head = table_doc.get(table, "")
            lines.append(f"{table}: {head}" if head else f"{table}:")
        lines.append(f"  {column} {typ}" + (f" - {desc}" if desc else ""))
    return "\n".join(lines) + ("\n" if lines else "")
