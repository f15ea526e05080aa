"""Safe read-only execution (issue 4, item 3 and acceptance): allowlist, read-only
connection, time limit by interrupt, row cap, database file never changes."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.contract import InputError, SourceDataError, UnsafeQueryError
from verifier.sql import (
    RESOURCE_CONFIG,
    QueryFailed,
    QueryTimeout,
    check_read_only,
    open_readonly,
    parse_checked,
    run_query,
    thread_connection,
    token_key,
)


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small DuckDB file written here (independent of the builders), plus a CSV beside it."""
    folder = tmp_path_factory.mktemp("sqlsafe")
    path = folder / "small.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE lab_events AS SELECT range AS labeventid, range % 7 AS admissionid, "
                "50971 + range % 3 AS itemid, (range % 50) / 10.0 AS valuenum FROM range(200000)")
    con.execute("CREATE TABLE patients AS SELECT range AS patientid, 'F' AS gender FROM range(100)")
    con.close()
    (folder / "secret.csv").write_text("a,b\n1,2\n")
    return path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# Each row: (query, dialect). All must be accepted.
READS = [
    ("SELECT 1", "duckdb"),
    ("VALUES (1), (2)", "duckdb"),
    ("WITH a AS (SELECT 1 AS x) SELECT * FROM a", "duckdb"),
    ("SELECT 1 UNION ALL SELECT 2", "duckdb"),
    ("SELECT 1 INTERSECT SELECT 1", "duckdb"),
    ("DESCRIBE lab_events", "duckdb"),
    ("DESCRIBE SELECT * FROM lab_events", "duckdb"),
    ("SHOW TABLES", "duckdb"),
    ("SHOW ALL TABLES", "duckdb"),
    ("SHOW lab_events", "duckdb"),
    ("SUMMARIZE patients", "duckdb"),
    ("PRAGMA table_info('lab_events')", "duckdb"),
    ("PRAGMA show_tables", "duckdb"),
    ("SELECT * FROM information_schema.columns WHERE table_name = 'lab_events'", "duckdb"),
    ("SELECT table_name FROM duckdb_tables()", "duckdb"),
    ("SELECT column_name FROM duckdb_columns() WHERE table_name = 'patients'", "duckdb"),
    ("SELECT * FROM range(3)", "duckdb"),
    ("SELECT count(*) FROM lab_events WHERE itemid = 50971;", "duckdb"),
    ("-- a comment\nSELECT max(valuenum) FROM lab_events", "duckdb"),
    ("FROM patients LIMIT 2", "duckdb"),
    ("SELECT * FROM main.patients LIMIT 1", "duckdb"),
    ("SELECT count(*) FROM lab_events l JOIN patients p ON l.admissionid = p.patientid", "duckdb"),
    ("SELECT COUNT(*) FROM lab_events WHERE itemid = 50971 LIMIT 5", "sqlite"),
    ("SELECT patientid::text FROM patients LIMIT 1", "postgres"),
]

# Each row: (query, word expected in the reason).
ATTEMPTS = [
    ("INSERT INTO patients VALUES (1000, 'M')", "INSERT"),
    ("UPDATE patients SET gender = 'M'", "UPDATE"),
    ("DELETE FROM lab_events", "DELETE"),
    ("CREATE TABLE x AS SELECT 1", "CREATE"),
    ("CREATE TEMP TABLE x AS SELECT 1", "CREATE"),
    ("DROP TABLE patients", "DROP"),
    ("ALTER TABLE patients ADD COLUMN c INT", "ALTER"),
    ("TRUNCATE patients", "TRUNCATE"),
    ("COPY patients TO '{dir}/out.csv'", "COPY"),
    ("COPY patients FROM '{dir}/secret.csv'", "COPY"),
    ("ATTACH '{dir}/other.duckdb' AS other", "ATTACH"),
    ("DETACH small", "DETACH"),
    ("INSTALL httpfs", "INSTALL"),
    ("LOAD httpfs", "LOAD"),
    ("SET enable_external_access = true", "SET"),
    ("RESET threads", "RESET"),
    ("PRAGMA threads = 1", "PRAGMA"),
    ("PRAGMA force_checkpoint", "PRAGMA"),
    ("EXPORT DATABASE '{dir}/export'", "parseable"),
    ("CALL pragma_version()", "CALL"),
    ("CHECKPOINT", "CHECKPOINT"),
    ("VACUUM", "VACUUM"),
    ("BEGIN TRANSACTION", "BEGIN"),
    ("USE small", "USE"),
    ("SELECT 1 INTO newtable", "INTO"),
    ("SELECT * FROM patients; DROP TABLE patients", "statements"),
    ("SELECT * FROM read_csv('{dir}/secret.csv')", "read_csv"),
    ("SELECT * FROM read_csv_auto('{dir}/secret.csv')", "read_csv_auto"),
    ("SELECT * FROM read_parquet('{dir}/x.parquet')", "read_parquet"),
    ("SELECT * FROM read_json_auto('{dir}/x.json')", "read_json_auto"),
    ("SELECT * FROM glob('{dir}/*')", "glob"),
    ("SELECT * FROM read_text('/etc/passwd')", "read_text"),
    ("SELECT * FROM read_blob('/etc/passwd')", "read_blob"),
    ("SELECT * FROM parquet_scan('{dir}/x.parquet')", "parquet_scan"),
    ("SELECT * FROM sniff_csv('{dir}/secret.csv')", "sniff_csv"),
    ("SELECT * FROM '{dir}/secret.csv'", "plain table name"),
    ('SELECT * FROM "{dir}/secret.csv"', "plain table name"),
    ("SELECT * FROM 'https://example.org/x.parquet'", "plain table name"),
    ("SELECT * FROM query('DROP TABLE patients')", "query"),
    ("SELECT getenv('HOME')", "getenv"),
    ("SELECT * FROM duckdb_secrets()", "duckdb_secrets"),
    ("SELECT * FROM patients WHERE patientid IN (SELECT a FROM read_csv('{dir}/secret.csv'))", "read_csv"),
    ("WITH x AS (SELECT * FROM glob('*')) SELECT * FROM x", "glob"),
    ("EXPLAIN ANALYZE SELECT 1", "EXPLAIN"),
    ("DESCRIBE read_csv('{dir}/secret.csv')", "DESCRIBE"),
    ("SUMMARIZE read_csv('{dir}/secret.csv')", "read_csv"),
    ("SELECT * FROM TABLE(read_csv('{dir}/secret.csv'))", "table()"),
    ("", "empty"),
    ("SELEC 1 FROM", "parseable"),
]


@pytest.mark.parametrize("sql,dialect", READS)
def test_reads_are_accepted_and_run(small_db: Path, sql: str, dialect: str) -> None:
    safe = check_read_only(sql, dialect)
    res = run_query(thread_connection(small_db), safe, time_limit_s=10, row_cap=100)
    assert res.columns, f"{sql!r} produced no columns"


@pytest.mark.parametrize("sql,word", ATTEMPTS)
def test_writes_and_file_reads_are_rejected_with_a_reason(small_db: Path, sql: str, word: str) -> None:
    text = sql.format(dir=small_db.parent)
    with pytest.raises(UnsafeQueryError) as info:
        check_read_only(text)
    assert word.lower() in info.value.reason.lower(), info.value.reason
    assert info.value.sql == text


def test_database_file_byte_identical_after_attempts(small_db: Path) -> None:
    """Every attempt is rejected before execution. Then, as defence in depth, each
    is run raw on the read-only connection: none reaches a file, and none changes
    a byte of the database file or creates a file beside it."""
    before = _sha(small_db)
    listing = sorted(p.name for p in small_db.parent.iterdir())
    con = open_readonly(small_db)
    for sql, _ in ATTEMPTS:
        text = sql.format(dir=small_db.parent)
        with pytest.raises(UnsafeQueryError):
            run_query(con, text, time_limit_s=5, row_cap=10)
    for sql, _ in ATTEMPTS:
        text = sql.format(dir=small_db.parent)
        touches_outside = any(w in text for w in (str(small_db.parent), "http", "/etc/", "glob(", "INSTALL", "LOAD"))
        try:
            con.execute(text)
        except duckdb.Error:
            continue
        assert not touches_outside, f"raw connection ran {text!r}"
    con.close()
    assert _sha(small_db) == before
    assert sorted(p.name for p in small_db.parent.iterdir()) == listing


def test_readonly_connection_refuses_external_access_and_config_changes(small_db: Path) -> None:
    con = open_readonly(small_db)
    for raw in (
        f"SELECT * FROM read_csv('{small_db.parent}/secret.csv')",
        "SET enable_external_access = true",
        "INSERT INTO patients VALUES (1, 'M')",
        f"ATTACH '{small_db.parent}/x.duckdb' AS x",
    ):
        with pytest.raises(duckdb.Error):
            con.execute(raw).fetchall()
    con.close()


def test_python_variables_are_not_scanned(small_db: Path) -> None:
    """DuckDB's replacement scan of Python objects is external state: disabled."""
    secret_frame = {"a": [1]}  # noqa: F841 - a local a replacement scan could find
    with pytest.raises(QueryFailed):
        run_query(thread_connection(small_db), "SELECT * FROM secret_frame", time_limit_s=5, row_cap=10)


def test_transpiles_sqlite_and_postgres() -> None:
    assert check_read_only("SELECT CAST(x AS TEXT) FROM t", "sqlite").startswith("SELECT")
    assert "CAST" in check_read_only("SELECT x::int FROM t", "postgres")
    with pytest.raises(InputError):
        check_read_only("SELECT 1", "oracle")


def test_row_cap_truncates(small_db: Path) -> None:
    res = run_query(thread_connection(small_db), "SELECT labeventid FROM lab_events ORDER BY 1", time_limit_s=10, row_cap=7)
    assert res.truncated and len(res.rows) == 7 and res.rows[0] == (0,)
    res = run_query(thread_connection(small_db), "SELECT * FROM patients", time_limit_s=10, row_cap=100)
    assert not res.truncated and len(res.rows) == 100


def test_failed_query_raises_query_failed_with_message(small_db: Path) -> None:
    with pytest.raises(QueryFailed) as info:
        run_query(thread_connection(small_db), "SELECT no_such_column FROM patients", time_limit_s=5, row_cap=10)
    assert "no_such_column" in info.value.message
    assert not isinstance(info.value, QueryTimeout)


def test_long_query_is_interrupted_and_connection_reused(small_db: Path) -> None:
    con = thread_connection(small_db)
    heavy = "SELECT count(*) FROM lab_events a, lab_events b, lab_events c WHERE a.valuenum + b.valuenum > c.valuenum"
    start = time.monotonic()
    with pytest.raises(QueryTimeout) as info:
        run_query(con, heavy, time_limit_s=0.5, row_cap=10)
    elapsed = time.monotonic() - start
    assert elapsed < 10, f"interrupt took {elapsed:.1f}s"
    assert info.value.time_limit_s == 0.5
    res = run_query(con, "SELECT count(*) FROM patients", time_limit_s=5, row_cap=10)
    assert res.rows == [(100,)]


@pytest.mark.parametrize("before_s", [600.0, 0.2, 2.0])
def test_time_limit_holds_whatever_limits_earlier_queries_had(small_db: Path, before_s: float) -> None:
    """The watchdog sleeps until the earliest deadline it holds, finished queries' included, and
    is woken only for an earlier one (issue 15): a slow query is interrupted near its own limit
    after quick queries with a far later limit (the watchdog asleep for minutes must be woken),
    a sooner one (asleep until then, it must find the new deadline when it wakes) or the same."""
    con = open_readonly(small_db)
    for _ in range(50):
        run_query(con, "SELECT count(*) FROM patients", time_limit_s=before_s, row_cap=10)
    heavy = "SELECT count(*) FROM lab_events a, lab_events b, lab_events c WHERE a.valuenum + b.valuenum > c.valuenum"
    out: dict[str, object] = {}

    def slow() -> None:
        start = time.monotonic()
        try:
            run_query(con, heavy, time_limit_s=1.0, row_cap=10)
        except QueryTimeout as exc:
            out["timeout"] = exc
        out["elapsed"] = time.monotonic() - start

    t = threading.Thread(target=slow)
    t.start()
    t.join(15)
    if t.is_alive():  # never interrupted: stop it here, so the test fails instead of hanging
        con.interrupt()
        t.join(30)
    assert isinstance(out.get("timeout"), QueryTimeout), f"not interrupted at its limit: {out}"
    assert 0.9 <= out["elapsed"] < 6, f"interrupted after {out['elapsed']:.2f} s for a 1 s limit"
    assert run_query(con, "SELECT count(*) FROM patients", time_limit_s=5, row_cap=10).rows == [(100,)]
    con.close()


class _Clock:
    """A stand-in connection that records when it is interrupted."""

    def __init__(self) -> None:
        self.at: float | None = None
        self.interrupted = threading.Event()

    def interrupt(self) -> None:
        self.at = time.monotonic()
        self.interrupted.set()


def test_a_deadline_is_kept_while_a_thread_is_being_abandoned() -> None:
    """``abandon_thread`` waits on the watchdog's condition: a wake meant for the watchdog (an
    earlier deadline) must reach it even then. Sequence found in review: the watchdog asleep for
    60 s, a stuck thread being abandoned, a 20 s deadline, then a 0.5 s one."""
    from verifier.sql._execute import _Watcher

    w = _Watcher()
    w.arm(_Clock(), 60)
    stuck_armed, release = threading.Event(), threading.Event()

    def stuck() -> None:
        token = w.arm(_Clock(), 60)  # a call that does not return when interrupted
        stuck_armed.set()
        release.wait(30)
        w.disarm(token)

    t = threading.Thread(target=stuck)
    t.start()
    stuck_armed.wait(5)
    abandoning = threading.Thread(target=w.abandon_thread, args=(t.ident, 4.0))
    abandoning.start()
    time.sleep(0.1)
    w.arm(_Clock(), 20)
    time.sleep(0.1)
    soon = _Clock()
    start = time.monotonic()
    w.arm(soon, 0.5)
    fired = soon.interrupted.wait(8)
    release.set()
    t.join(10)
    abandoning.join(10)
    assert fired, "the 0.5 s deadline was not kept while another thread was being abandoned"
    assert soon.at is not None and soon.at - start < 2.0, f"interrupted after {soon.at - start:.2f} s"


def test_finished_queries_do_not_pile_up_in_the_watchdog() -> None:
    """Finished queries' deadlines wait in the watchdog's heap until they pass; with a long limit
    and many quick queries the heap must stay bounded by the queries still running."""
    from verifier.sql._execute import _Watcher

    w = _Watcher()
    running = [w.arm(_Clock(), 600) for _ in range(3)]
    for _ in range(20_000):
        w.disarm(w.arm(_Clock(), 600))
    assert len(w._heap) <= 2 * len(running) + 65, len(w._heap)
    for token in running:
        w.disarm(token)


def memory_hungry_query(con: duckdb.DuckDBPyConnection) -> str:
    """A read that builds one string about three times the connection's memory limit."""
    limit = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    number, unit = limit.split()
    scale = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}[unit]
    rows = int(3 * float(number) * scale / 1000)
    return f"SELECT max(length(s)) FROM (SELECT string_agg(repeat('x', 1000), ',') AS s FROM range({rows}))"


def test_readonly_connection_has_resource_limits(small_db: Path) -> None:
    con = open_readonly(small_db)
    settings_now = dict(con.execute(
        "SELECT name, value FROM duckdb_settings() WHERE name IN ('memory_limit', 'threads', 'temp_directory')").fetchall())
    assert settings_now["threads"] == str(RESOURCE_CONFIG["threads"])
    assert settings_now["temp_directory"] == ""
    reference = duckdb.connect(":memory:", config={"memory_limit": RESOURCE_CONFIG["memory_limit"]})
    assert settings_now["memory_limit"] == reference.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    reference.close()
    with pytest.raises(duckdb.Error):  # locked: SQL cannot raise its own limit
        con.execute("SET memory_limit = '100GB'")
    con.close()


def test_memory_hungry_query_fails_cleanly_and_connection_reused(small_db: Path) -> None:
    con = thread_connection(small_db)
    with pytest.raises(QueryFailed) as info:
        run_query(con, memory_hungry_query(con), time_limit_s=120, row_cap=10)
    assert "memory" in info.value.message.lower()
    assert not isinstance(info.value, QueryTimeout)
    res = run_query(con, "SELECT count(*) FROM patients", time_limit_s=5, row_cap=10)
    assert res.rows == [(100,)]


def test_interrupt_works_off_the_main_thread(small_db: Path) -> None:
    out: dict[str, object] = {}

    def work() -> None:
        con = thread_connection(small_db)
        try:
            run_query(con, "SELECT count(*) FROM lab_events a, lab_events b", time_limit_s=0.3, row_cap=1)
        except QueryTimeout as exc:
            out["timeout"] = exc
        out["after"] = run_query(con, "SELECT 42", time_limit_s=5, row_cap=1).rows
        out["con"] = id(con)

    t = threading.Thread(target=work)
    t.start()
    t.join(30)
    assert isinstance(out.get("timeout"), QueryTimeout)
    assert out["after"] == [(42,)]
    assert out["con"] != id(thread_connection(small_db)), "threads must not share a connection"


def test_open_readonly_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SourceDataError):
        open_readonly(tmp_path / "absent.duckdb")


def test_bad_limits_are_input_errors(small_db: Path) -> None:
    with pytest.raises(InputError):
        run_query(thread_connection(small_db), "SELECT 1", time_limit_s=0, row_cap=1)
    with pytest.raises(InputError):
        run_query(thread_connection(small_db), "SELECT 1", time_limit_s=1, row_cap=0)


_WRITE_WORDS = ["INSERT INTO", "UPDATE", "DELETE FROM", "DROP TABLE", "CREATE TABLE", "COPY", "ATTACH", "INSTALL", "LOAD", "SET"]


@settings(max_examples=200, deadline=None)
@given(prefix=st.sampled_from(_WRITE_WORDS), tail=st.text(max_size=40))
def test_write_keywords_never_pass(prefix: str, tail: str) -> None:
    """Whatever follows a write keyword, the statement is never accepted as a read."""
    with pytest.raises(UnsafeQueryError):
        check_read_only(f"{prefix} {tail}")


@settings(max_examples=200, deadline=None)
@given(fn=st.sampled_from(["read_csv", "read_csv_auto", "read_parquet", "read_json", "read_json_auto", "glob",
                           "read_text", "read_blob", "parquet_scan", "sniff_csv", "query", "read_ndjson"]),
       path=st.text(alphabet=st.characters(blacklist_characters="'\\", blacklist_categories=("Cs",)), max_size=20),
       wrap=st.sampled_from(["SELECT * FROM {f}", "SELECT count(*) FROM (SELECT * FROM {f}) s",
                             "WITH x AS (SELECT * FROM {f}) SELECT * FROM x",
                             "SELECT * FROM patients WHERE patientid IN (SELECT 1 FROM {f})"]))
def test_file_functions_never_pass(fn: str, path: str, wrap: str) -> None:
    with pytest.raises(UnsafeQueryError):
        check_read_only(wrap.format(f=f"{fn}('{path}')"))


_FORK_SCRIPT = """
import multiprocessing, sys
from verifier.sql import QueryTimeout, run_query, thread_connection

def child(db, out):
    try:
        run_query(thread_connection(db), "SELECT count(*) FROM lab_events a, lab_events b", time_limit_s=0.3, row_cap=1)
        out.put("no timeout")
    except QueryTimeout:
        out.put(run_query(thread_connection(db), "SELECT 7", time_limit_s=5, row_cap=1).rows)

db = sys.argv[1]
run_query(thread_connection(db), "SELECT 1", time_limit_s=5, row_cap=1)  # parent's watchdog is running
ctx = multiprocessing.get_context("fork")
q = ctx.Queue()
p = ctx.Process(target=child, args=(db, q))
p.start()
print(q.get(timeout=60))
p.join(10)
"""


def test_time_limit_in_a_forked_worker(small_db: Path) -> None:
    """Process pools fork after the parent used the watchdog: the child gets its own.

    Runs in a fresh interpreter: forking the long-lived pytest process (which has
    loaded Ray, inspect_ai and many DuckDB instances by then) is unsafe in itself.
    """
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _FORK_SCRIPT, str(small_db)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1] == "[(7,)]"


@pytest.mark.parametrize(
    "a,b",
    [
        ("select a from t where x = 'Q'", "SELECT a\n  FROM t -- note\n WHERE x = 'Q'"),
        ("select a, count(*) from t group by a order by a", "SELECT a, count(*) FROM t GROUP\n  BY a ORDER  BY a /* c */"),
    ],
)
def test_cosmetic_variants_share_a_token_key_and_a_tree(a: str, b: str) -> None:
    assert token_key(a) == token_key(b) is not None
    assert parse_checked(a)[1] == parse_checked(b)[1]


@pytest.mark.parametrize(
    "a,b",
    [
        ("select a from t", "select A from t"),      # identifier text is kept (output column names)
        ('select "a" from t', "select a from t"),    # quoted vs bare
        ("select a from t where x = 'Q'", "select a from t where x = 'q'"),
        ("select a from t limit 5", "select a from t limit 50"),
    ],
)
def test_different_texts_get_different_token_keys(a: str, b: str) -> None:
    assert token_key(a) != token_key(b)


@settings(max_examples=100, deadline=None)
@given(sql=st.sampled_from([
           "select patientid, count(*) as n from lab_events where itemid = 50971 group by patientid order by n desc limit 3",
           "with x as (select * from admissions) select count(*) from x join patients on x.patientid = patients.patientid",
       ]),
       upper=st.lists(st.booleans(), min_size=12, max_size=12), breaks=st.lists(st.booleans(), min_size=40, max_size=40),
       comment=st.booleans())
def test_keyword_case_whitespace_and_comments_never_change_the_analysis(sql: str, upper: list[bool], breaks: list[bool], comment: bool) -> None:
    words = ["select", "from", "where", "group by", "order by", "as", "with", "join", "on", "limit", "desc", "count"]
    variant = sql
    for w, up in zip(words, upper):
        if up and w != "count":
            variant = variant.replace(f"{w} ", f"{w.upper()} ")
    parts = variant.split(" ")
    variant = "".join(p + ("\n   " if brk else " ") for p, brk in zip(parts, breaks + [False] * len(parts))).strip()
    if comment:
        variant += " -- why"
    assert token_key(variant) == token_key(sql)
    assert parse_checked(variant)[1] == parse_checked(sql)[1]


def test_overlong_query_is_rejected_before_parsing() -> None:
    """Loophole: sqlglot's parse is not time-limited (``SELECT 1+1+...`` with 60,000 terms
    took 27.5 s); texts over ``MAX_QUERY_CHARS`` are rejected, naming the length, before
    any tokenizing. A query just under the cap is still checked normally."""
    from verifier.sql import MAX_QUERY_CHARS, token_key

    huge = "SELECT " + "+".join(["1"] * 60_000)
    with pytest.raises(UnsafeQueryError) as err:
        check_read_only(huge)
    assert str(len(huge)) in err.value.reason and str(MAX_QUERY_CHARS) in err.value.reason
    assert token_key(huge) is None
    body = "SELECT 1 AS n WHERE 1 = 1"
    fits = body + " AND 1 = 1" * ((MAX_QUERY_CHARS - len(body)) // 10)
    assert len(fits) <= MAX_QUERY_CHARS and check_read_only(fits).startswith("SELECT")
    with pytest.raises(UnsafeQueryError):
        check_read_only(fits + " AND 1 = 1" * 2)


# ---------------------------------------------------------------- no file paths (issue 11)
#: Queries that showed the database's path (or settings holding paths) before issue 11.
PATH_QUERIES = [
    "SELECT * FROM duckdb_databases()",
    "SELECT path FROM duckdb_databases",
    "SELECT path FROM system.main.duckdb_databases",
    "SELECT \"path\" FROM \"DUCKDB_DATABASES\"",
    "PRAGMA database_list",
    "SELECT * FROM pragma_database_list",
    "SELECT file FROM (SELECT * FROM pragma_database_list) s",
    "SUMMARIZE duckdb_databases",
    "SELECT * FROM pg_catalog.pg_settings",
    "SELECT setting FROM pg_settings WHERE name = 'temp_directory'",
    "SELECT * FROM duckdb_settings()",
    "SELECT install_path FROM duckdb_extensions()",
    "SELECT current_setting('home_directory')",
    "SELECT * FROM duckdb_temporary_files()",
    "WITH d AS (SELECT * FROM duckdb_databases()) SELECT * FROM d",
]


@pytest.mark.parametrize("sql", PATH_QUERIES)
def test_catalog_queries_showing_paths_are_rejected(small_db: Path, sql: str) -> None:
    with pytest.raises(UnsafeQueryError) as info:
        check_read_only(sql)
    assert "paths" in info.value.reason


def test_harmless_catalog_introspection_still_works(small_db: Path) -> None:
    con = thread_connection(small_db)
    for sql in ("SELECT table_name FROM duckdb_tables()", "SELECT * FROM information_schema.tables",
                "SELECT column_name FROM duckdb_columns() WHERE table_name = 'patients'", "PRAGMA show_tables",
                "SELECT current_database()", "SELECT * FROM pg_catalog.pg_database"):  # PRAGMA database_size: refused (issue 30)
        res = run_query(con, check_read_only(sql), time_limit_s=10, row_cap=100)
        shown = repr(res.rows)
        assert res.rows and str(small_db.parent) not in shown, (sql, shown)
