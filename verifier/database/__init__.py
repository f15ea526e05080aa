"""The clinical database: MIMIC-IV (CSV, or MEDS chart events) built into DuckDB under the renamed schema.

Owns the schema map (``rules/schema.toml``), the CSV and MEDS loaders, the build with its
per-table checks and report, and the schema description stored as DuckDB comments.
Imports only ``verifier.contract``.
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
from ._schema_doc import describe_schema, schema_text
from ._schema_map import table_by_name, table_by_source

__all__ = [
    "ADMISSION_AGE", "MEDS_LACKS", "TableSpec", "build_database", "column_plan", "describe_schema",
    "find_csv", "print_summary", "schema_tables", "schema_text", "table_by_name", "table_by_source",
]
