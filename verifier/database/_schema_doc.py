"""The schema description stored inside the database, and the text agents see.

The builder writes each table's and column's one-line meaning (from
``rules/schema.toml``) as DuckDB catalog comments (``COMMENT ON TABLE`` /
``COMMENT ON COLUMN``, https://duckdb.org/docs/sql/statements/comment_on), so
the description travels with the file and adds no table to the schema. They
are read back from ``duckdb_tables()`` / ``duckdb_columns()``; this works on a
read-only connection.
"""

from __future__ import annotations

import re
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
    """The full schema description (``schema_detail="full"``): one header line per table, one line
    per column with its type and meaning (:func:`compact_schema_text` is the default prompt's).

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


#: How much of the schema description a prompt shows: ``"compact"`` (:func:`compact_schema_text`,
#: about 2,000 tokens on MIMIC-IV's 31 tables) or ``"full"`` (:func:`schema_text`, about 31,000
#: characters). Chosen by ``EnvConfig.schema_detail`` and the ``schema_detail=`` of every adapter.
SCHEMA_DETAILS = ("compact", "full")

#: The query that shows one table's full description from inside an episode (``run_sql``).
DESCRIBE_QUERY = ("SELECT column_name, data_type, comment FROM duckdb_columns() "
                  "WHERE table_name = '<table>'")


def implied_type(column: str) -> str:
    """The DuckDB type a column's name implies in the compact rendering (its stated convention).

    ``*_time`` is ``TIMESTAMP``, ``*_date`` ``DATE``, a name ending in ``id`` ``INTEGER``, any other
    ``VARCHAR``; :func:`compact_schema_text` prints a column's type only when it differs.
    """
    if column.endswith("_time"):
        return "TIMESTAMP"
    if column.endswith("_date"):
        return "DATE"
    return "INTEGER" if column.endswith("id") else "VARCHAR"


def _headline(description: str) -> str:
    """A table comment's first clause: up to its MIMIC-IV source note or first sentence end."""
    description = description.split(" (MIMIC", 1)[0]
    return re.split(r"(?<!\be\.g)(?<!\bi\.e)\. ", description, maxsplit=1)[0].rstrip(".")


_JOINS = re.compile(r"\bjoins (\w+)\.\w+")


def compact_schema_text(con: duckdb.DuckDBPyConnection) -> str:
    """The schema for a prompt budget: conventions, then per table a headline and its columns.

    Format::

        Conventions: ... Joins: patientid -> patients, ... Each column's meaning: run_sql SELECT ...
        admissions: Hospital admissions, one row per hospitalization
          patientid, admissionid, admission_time, ..., hospital_expire_flag smallint

    Read from the catalog comments (:func:`describe_schema`), nothing hand-listed:

    * a column's type is printed (lower case) only when it differs from :func:`implied_type`;
    * a table's line of meaning is its comment's first clause (:func:`_headline`);
    * the join keys are the columns whose comment says ``joins <table>.<column>`` of another table;
    * a column's own meaning is shown only where reading its name would mislead: a column the
      comment says is ``always NULL`` in this database is listed after its table's columns.

    The full description (every column's meaning) is one ``run_sql`` call away
    (:data:`DESCRIBE_QUERY`). On the MIMIC-IV demo (31 tables, 493 columns) the text is about
    8,400 characters (about 2,100 tokens at 4 characters a token, the estimate used here: no
    tokenizer is available offline), against about 31,000 for :func:`schema_text`.

    Returns:
        The text (ends with a newline); '' for a database without tables.
    """
    table_doc = dict(describe_tables(con))
    columns: dict[str, list[str]] = {}
    always_null: dict[str, list[str]] = {}
    joins: dict[str, set[str]] = {}
    for table, column, typ, desc in describe_schema(con):
        columns.setdefault(table, []).append(column if typ == implied_type(column) else f"{column} {typ.lower()}")
        joins.setdefault(column, set()).update(t for t in _JOINS.findall(desc) if t != table)
        if "always NULL" in desc:
            always_null.setdefault(table, []).append(column)
    if not columns:
        return ""
    keys = ", ".join(f"{c} -> {'|'.join(sorted(ts))}" for c, ts in joins.items() if ts)
    lines = [
        "Conventions: a column's type follows its name (*_time TIMESTAMP, *_date DATE, *id INTEGER, "
        "else VARCHAR) unless a type is written after it."
        + (f" Joins: {keys}." if keys else "")
        + " Each column's meaning (units, what NULL means, source notes): run_sql "
        + DESCRIBE_QUERY.replace("<table>", "lab_events") + ".",
    ]
    for table, cols in columns.items():
        head = _headline(table_doc.get(table, ""))
        lines.append(f"{table}: {head}" if head else f"{table}:")
        lines.append("  " + ", ".join(cols))
        if table in always_null:
            lines.append("  always NULL in this database: " + ", ".join(always_null[table]))
    return "\n".join(lines) + "\n"


def render_schema(con: duckdb.DuckDBPyConnection, detail: str = "compact") -> str:
    """The schema description a prompt shows, at ``detail`` (one of :data:`SCHEMA_DETAILS`).

    Raises:
        InputError: another ``detail`` (field ``schema_detail``).
    """
    if detail not in SCHEMA_DETAILS:
        from ..contract import InputError

        raise InputError("schema_detail", detail, f"expected one of {list(SCHEMA_DETAILS)}")
    return compact_schema_text(con) if detail == "compact" else schema_text(con)
