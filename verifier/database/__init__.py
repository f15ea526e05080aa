"""The clinical database: MIMIC-IV (CSV, or MEDS chart events) built into DuckDB under the renamed schema.

Owns the schema map (``rules/schema.toml``), the CSV and MEDS loaders, the build with its
per-table checks and report, the schema description stored as DuckDB comments, and the
database fingerprint (``_fingerprint``: the content identity tasks record and scoring checks).
Imports ``verifier.contract``, and ``verifier.sql`` for the read-only connection the fingerprint reads.
"""

from ._build import (
    ADMISSION_AGE,
    MEDS_LACKS,
    TableSpec,
    build_database,
    find_csv,
    print_summary,
    schema_tables,
)
from ._csv import column_plan
from ._fingerprint import (
    FINGERPRINT_SCHEME,
    check_tasks_database,
    compute_fingerprint,
    database_fingerprint,
    mismatch_message,
    recent_fingerprint,
)
from ._schema_doc import SCHEMA_DETAILS, compact_schema_text, describe_schema, render_schema, schema_text
from ._schema_map import table_by_name, table_by_source

__all__ = [
    "ADMISSION_AGE", "FINGERPRINT_SCHEME", "MEDS_LACKS", "check_tasks_database", "compute_fingerprint",
    "database_fingerprint", "mismatch_message", "recent_fingerprint", "TableSpec", "build_database", "column_plan", "describe_schema", "SCHEMA_DETAILS", "compact_schema_text", "render_schema",
    "find_csv", "print_summary", "schema_tables", "schema_text", "table_by_name", "table_by_source",
]
