"""Issue 31 point 2: nothing an agent can query depends on the process's earlier work (memory,
cache, temporary files, settings, prepared statements, sequence values); rule in
``verifier.sql._safety`` (``_CATALOG_VIEWS_OK``, ``internal_views``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.contract import UnsafeQueryError
from verifier.sql import _guard, base_spec, check_read_only
from verifier.sql import _safety

#: Relations and functions whose result is the process's state, not the database's.
PROCESS_STATE = [
    "SELECT last_value FROM duckdb_sequences()",  # sequence positions (nextval / currval)
    "SELECT * FROM pg_sequences",
    "SELECT * FROM pg_catalog.pg_sequence",
    "SELECT * FROM pg_prepared_statements",  # the connection's prepared statements
    "SELECT * FROM duckdb_temporary_files()",
    "SELECT current_setting('memory_limit')",
    "SELECT * FROM duckdb_settings()",
    "SELECT * FROM duckdb_memory()",
    "SELECT * FROM pragma_database_size()",
    "SELECT * FROM duckdb_secrets()",
    "SELECT which_secret('s3://x/y', 's3')",
    "SELECT * FROM duckdb_logs",
]


@pytest.mark.parametrize("sql", PROCESS_STATE)
def test_process_state_is_refused(sql: str) -> None:
    with pytest.raises(UnsafeQueryError):
        check_read_only(sql)


def _accepted_catalog() -> list[str]:
    out = []
    for sql in ([f"SELECT * FROM {v}" for v in sorted(_safety.internal_views())]
                + [f"SELECT * FROM information_schema.{v}" for v in ("tables", "columns", "schemata", "views")]
                + [f"SELECT * FROM {f}()" for f in sorted(_safety._TABLE_FUNCS_OK) if f.startswith("duckdb_")]
                + ["SELECT * FROM pragma_storage_info('patients')", "SELECT * FROM pragma_table_info('patients')",
                   "SELECT * FROM pragma_version()", "SHOW DATABASES", "SHOW ALL TABLES"]):
        try:
            out.append(check_read_only(sql))
        except UnsafeQueryError:
            pass
    return out


def _snapshot(db: Path, queries: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for sql in queries:
        try:
            res = _guard.execute_guarded(base_spec(db), sql, time_limit_s=10.0, row_cap=100_000)
            out[sql] = sorted(map(repr, res.rows))
        except Exception as exc:  # noqa: BLE001 - an error is a result too
            out[sql] = type(exc).__name__
    return out


def test_every_accepted_catalog_relation_reads_the_same_after_earlier_work(synth_db: Path) -> None:
    """Each catalog relation the check accepts gives the same rows in a fresh query process and
    after the process scanned every table (buffer pool), timed out and was killed and replaced."""
    queries = _accepted_catalog()
    assert len(queries) > 20
    proc = _guard.thread_process()
    proc.kill()  # a fresh query process
    fresh = _snapshot(synth_db, queries)
    tables = _guard.execute_guarded(base_spec(synth_db), "SELECT table_name FROM duckdb_tables()", time_limit_s=10, row_cap=1000)
    for (t,) in tables.rows:
        _guard.execute_guarded(base_spec(synth_db), f'SELECT * FROM "{t}" ORDER BY ALL', time_limit_s=10, row_cap=10)
    with pytest.raises(Exception):
        _guard.execute_guarded(base_spec(synth_db), "SELECT count(*) FROM range(1000000000) a WHERE md5(a.range::VARCHAR) = 'x'",
                               time_limit_s=0.2, row_cap=1)
    assert _snapshot(synth_db, queries) == fresh


def test_internal_views_are_all_judged() -> None:
    """Every internal view of the installed DuckDB is either a schema description or refused."""
    for view in _safety.internal_views():
        try:
            check_read_only(f"SELECT * FROM {view}")
        except UnsafeQueryError:
            continue
        assert view in _safety._CATALOG_VIEWS_OK
