"""SQL that an untrusted policy wrote: checked, executed under limits, cached and rendered.

Owns the read-only allowlist (sqlglot), read-only DuckDB connections with time limits and row caps,
the query process that runs untrusted SQL under limits that hold whatever the SQL is (``_guard``),
the cache of normalised evidence queries, the rendering of results as the agent sees them, and
SQLite/PostgreSQL evidence carried over to DuckDB with its dialect's semantics (``to_duckdb``,
rules as data in ``_dialects``).
Imports only ``verifier.contract``.
"""

from ._cache import QueryCache, normalize_sql
from ._execute import (
    RESOURCE_CONFIG,
    QueryFailed,
    QueryResult,
    QueryTimeout,
    execute_checked,
    open_readonly,
    resolved_path,
    run_query,
    thread_connection,
)
from ._guard import (
    HARD_TIME_FACTOR,
    LIMITS,
    ConnectionSpec,
    MemoryBudgetExceeded,
    QueryLimits,
    abandon_thread,
    base_spec,
    execute_guarded,
    query_processes_cpu_seconds,
    release_thread,
    thread_process,
)
from ._render import format_cell, json_cell, render_result, visible_rows
from ._sqlite_time import DialectUnsupported
from ._translate import schema_of, to_duckdb
from ._safety import (
    MAX_QUERY_CHARS,
    check_read_only,
    parse_checked,
    token_key,
    tokenize,
)

__all__ = [
    "DialectUnsupported", "schema_of", "to_duckdb",
    "HARD_TIME_FACTOR", "LIMITS", "ConnectionSpec", "MemoryBudgetExceeded", "QueryLimits", "base_spec", "execute_guarded", "query_processes_cpu_seconds", "thread_process",
    "MAX_QUERY_CHARS", "QueryCache", "QueryFailed", "QueryResult", "QueryTimeout", "RESOURCE_CONFIG",
    "abandon_thread", "check_read_only", "execute_checked", "format_cell", "json_cell", "normalize_sql", "open_readonly",
    "parse_checked", "release_thread", "render_result", "resolved_path", "run_query", "thread_connection",
    "token_key", "tokenize", "visible_rows",
]
