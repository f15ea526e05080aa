"""Safe, read-only execution of untrusted SQL against the clinical database.

DESIGN.md section 4 ("Noise abstentions", step 3) and section 6: agent SQL is
untrusted. Three layers, each enough on its own for the common attacks:

1. ``check_read_only`` parses the text with sqlglot (DuckDB dialect, or
   transpiled from SQLite/PostgreSQL) and accepts one statement whose root is
   on an allowlist (SELECT / WITH / VALUES / set operations, DESCRIBE, SHOW,
   SUMMARIZE, read-only PRAGMAs). It then walks the whole tree: write and
   session nodes anywhere are rejected, table functions must be on an
   allowlist (no ``read_csv``/``glob``/``query``...), scalar functions that
   read files, secrets or execute SQL are rejected, and table references must
   be plain identifiers (no ``'file.csv'`` or URL replacement scans). The
   statement that runs is the one sqlglot regenerates from the checked tree,
   so what was checked is what executes.
2. ``open_readonly`` opens DuckDB ``read_only`` with external access disabled,
   extension auto-install/auto-load off and the configuration locked
   (DuckDB "Securing DuckDB" operations manual: ``enable_external_access``,
   ``autoinstall_known_extensions``, ``autoload_known_extensions``,
   ``lock_configuration``).
3. ``run_query`` enforces a wall-clock limit with ``connection.interrupt()``
   called from a timer thread (one watchdog thread per process serving every
   query's deadline; no signals, so it works off the main thread) and a row
   cap; the connection stays usable after an interrupt.

A DuckDB connection must not be used by two threads at once;
``thread_connection`` keeps one read-only connection per (process, thread,
database file).
"""

from __future__ import annotations

import heapq
import logging
import os
import re
import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError

from .errors import InputError, SourceDataError, UnsafeQueryError, VerifierError

#: Dialects agent SQL may be written in (``Trajectory.dialect``).
DIALECTS = ("duckdb", "sqlite", "postgres")

#: DuckDB configuration for every connection that runs untrusted SQL.
READONLY_CONFIG: dict[str, Any] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "lock_configuration": True,
}

#: Resource limits of every DuckDB instance that runs untrusted SQL (read-only
#: connections here, witness overlays in ``verifier.witness``), set when the
#: instance is created, before ``lock_configuration``, so SQL cannot raise them.
#: ``memory_limit`` bounds DuckDB's buffer manager: a query needing more fails
#: with DuckDB's out-of-memory error (``QueryFailed``) and the connection stays
#: usable; ``temp_directory = ''`` means nothing is spilled to disk (the
#: verifier writes no files), ``threads = 1``: batch scoring runs in parallel
#: across worker processes, and a single thread keeps results of queries without
#: ORDER BY deterministic (with 2 threads, ``SELECT * FROM t LIMIT 5`` on a
#: witness overlay's UNION ALL view returned different rows from run to run,
#: so the same trajectory could get different verdicts).
#: Overridable per process with the environment variables
#: ``EHR_VERIFIER_DUCKDB_MEMORY`` (DuckDB size text, e.g. "2GB") and
#: ``EHR_VERIFIER_DUCKDB_THREADS``. Source: DuckDB configuration reference
#: (``memory_limit``, ``threads``, ``temp_directory``) and its guide
#: "Out-of-memory errors" (memory_limit covers the buffer manager only, so
#: keep it well below the machine's memory).
RESOURCE_CONFIG: dict[str, Any] = {
    "memory_limit": os.environ.get("EHR_VERIFIER_DUCKDB_MEMORY", "1GB"),
    "threads": int(os.environ.get("EHR_VERIFIER_DUCKDB_THREADS", "1")),
    "temp_directory": "",
}

# ---------------------------------------------------------------- rule tables
#: Longest query text accepted, in characters. sqlglot's parse runs in the verifier's
#: process before any DuckDB time limit applies and is not bounded: ``SELECT 1+1+...``
#: with 60,000 terms took 27.5 s to parse. Real evidence queries are a few hundred to
#: a few thousand characters; longer texts are rejected before they are tokenized.
MAX_QUERY_CHARS = 20_000

#: Statement roots that only read.
_ROOTS: tuple[type[exp.Expression], ...] = (
    exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Values,
    exp.Describe, exp.Show, exp.Summarize, exp.Pragma, exp.Subquery,
)

#: ``SHOW <what>`` forms accepted (sqlglot ``Show.this``, upper-cased).
_SHOW_OK = frozenset({"TABLES", "ALL TABLES", "DATABASES", "SCHEMAS"})

#: PRAGMAs that only read the catalog.
_PRAGMA_OK = frozenset({
    "table_info", "show", "show_tables", "show_tables_expanded", "database_list",
    "version", "storage_info", "database_size", "functions", "collations",
})

#: Table functions (``FROM f(...)``) allowed: generators and catalog introspection.
_TABLE_FUNCS_OK = frozenset({
    "range", "generate_series", "unnest", "generate_subscripts",
    "duckdb_tables", "duckdb_columns", "duckdb_views", "duckdb_schemas", "duckdb_databases",
    "duckdb_constraints", "duckdb_indexes", "duckdb_types", "duckdb_functions", "duckdb_keywords",
    "duckdb_sequences", "duckdb_dependencies",
    "pragma_table_info", "pragma_show", "pragma_show_tables", "pragma_database_list",
    "pragma_version", "pragma_storage_info", "pragma_database_size",
})

#: Scalar or table function names rejected anywhere (regular expressions, full match, lower case).
_FUNCS_DENIED = tuple(re.compile(p) for p in (
    r"read_.*", r".*_scan", r"glob", r"sniff_csv", r"parquet_.*", r"getenv", r"query", r"query_table",
    r".*secret.*", r"load_.*", r"install_.*", r"iceberg_.*", r"delta_.*", r"postgres_.*",
    r"mysql_.*", r"sqlite_.*", r"http.*", r"s3_.*", r"azure_.*", r"gcs_.*", r"ducklake_.*",
    r".*serialized_sql.*", r"setseed", r"checkpoint", r"force_checkpoint", r"enable_.*",
    r"disable_.*", r"sql_auto_complete", r"duckdb_extensions", r"duckdb_temporary_files",
    r"duckdb_settings", r"duckdb_optimizers", r"duckdb_log.*", r"current_setting", r"getvariable",
    r"csv_.*", r"json_execute.*", r"from_substrait.*", r"get_substrait.*", r"arrow_scan.*",
    r"python_.*", r"pandas_.*", r"write_.*", r"copy_.*", r"export_.*", r"import_.*",
))

#: Nodes that write, change the session or leave the database, rejected anywhere in the tree.
_NODES_DENIED: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name) for name in (
        "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "TruncateTable",
        "Copy", "Attach", "Detach", "Install", "Command", "Set", "Use", "Transaction",
        "Commit", "Rollback", "Into", "LoadData", "Refresh", "Cache", "Uncache", "Analyze",
        "Grant", "Revoke", "Comment", "Export", "Lock",
    ) if hasattr(exp, name)
)

#: A table, schema or catalog name must be a plain identifier (no path, URL or extension).
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")

#: ``SHOW <table>`` (DuckDB's synonym of DESCRIBE), which sqlglot leaves as a Command.
_SHOW_TABLE = re.compile(r"\s*SHOW\s+([A-Za-z_][A-Za-z0-9_$]*)\s*;?\s*", re.IGNORECASE)


class _DropCommandFallback(logging.Filter):
    """Silence sqlglot's per-statement 'Falling back to parsing as a Command' warning.

    Such statements are rejected with a reason anyway; logging each one would
    flood batch scoring.
    """

    def filter(self, record: logging.LogRecord) -> bool:  # noqa: D401 - logging API
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_DropCommandFallback())


# ---------------------------------------------------------------- errors/results
class QueryFailed(VerifierError):
    """A checked query failed when DuckDB ran it (bad column, type error, ...).

    Args:
        sql: the query that ran.
        message: DuckDB's error message.
    """

    def __init__(self, sql: str, message: str) -> None:
        self.sql = sql
        self.message = message
        super().__init__(f"query failed: {message}")


class QueryTimeout(QueryFailed):
    """A checked query was interrupted at its time limit.

    A subclass of ``QueryFailed``: a timed-out query is a failed query.

    Args:
        sql: the query that ran.
        time_limit_s: the limit that was reached, in seconds.
    """

    def __init__(self, sql: str, time_limit_s: float) -> None:
        self.time_limit_s = time_limit_s
        super().__init__(sql, f"interrupted after the {time_limit_s:g} s time limit")


@dataclass(frozen=True)
class QueryResult:
    """Rows fetched by ``run_query``.

    Attributes:
        columns: column names, in order.
        rows: at most ``row_cap`` rows, each a tuple aligned with ``columns``
            (Python values as DuckDB returns them: int, float, Decimal, str,
            datetime, None, ...).
        truncated: True when the query had more than ``row_cap`` rows.
    """

    columns: list[str]
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    truncated: bool = False


# ---------------------------------------------------------------- checking
def _func_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    return node.sql_name().lower()


def _denied(name: str) -> bool:
    return any(p.fullmatch(name) for p in _FUNCS_DENIED)


def _check_table(sql: str, table: exp.Table) -> None:
    """Table references: allowlisted table functions or plain identifiers."""
    if isinstance(table.this, exp.Func):
        name = _func_name(table.this)
        if name not in _TABLE_FUNCS_OK:
            raise UnsafeQueryError(sql, f"table function {name}() is not allowed (only generators and catalog introspection)")
        return
    for part in (table.args.get("catalog"), table.args.get("db"), table.this):
        if part is None:
            continue
        name = part.name if isinstance(part, exp.Identifier) else None
        if name is None or not _IDENT.fullmatch(name):
            shown = part.sql("duckdb") if isinstance(part, exp.Expression) else repr(part)
            raise UnsafeQueryError(sql, f"table reference {shown} is not a plain table name (files, URLs and paths are not allowed)")


def _statement_word(root: exp.Expression) -> str:
    """The statement's leading keyword (``INSERT``, ``LOAD``, ``CHECKPOINT``) for messages."""
    try:
        text = root.sql("duckdb", comments=False)
    except Exception:  # pragma: no cover - generator gap; fall back to the node kind
        text = root.key
    m = re.match(r"\s*([A-Za-z]+)", text)
    return (m.group(1) if m else root.key).upper()


def _check_root(sql: str, root: exp.Expression) -> None:
    if isinstance(root, exp.Show):
        what = str(root.this or "").upper()
        if what not in _SHOW_OK:
            raise UnsafeQueryError(sql, f"SHOW {what} is not allowed (only SHOW TABLES / SHOW ALL TABLES)")
    elif isinstance(root, exp.Pragma):
        inner = root.this
        name = _func_name(inner) if isinstance(inner, exp.Func) else (inner.name if isinstance(inner, exp.Expression) else str(inner))
        if isinstance(inner, (exp.EQ, exp.PropertyEQ)) or name.lower() not in _PRAGMA_OK:
            raise UnsafeQueryError(sql, f"PRAGMA {root.this.sql('duckdb') if isinstance(root.this, exp.Expression) else root.this} is not a read-only catalog pragma")
    elif isinstance(root, (exp.Describe, exp.Summarize)):
        target = root.this
        if not (isinstance(target, exp.Query) or (isinstance(target, exp.Table) and isinstance(target.this, exp.Identifier))):
            shown = target.sql("duckdb") if isinstance(target, exp.Expression) else repr(target)
            raise UnsafeQueryError(sql, f"{_statement_word(root)} of {shown} is not allowed (a table name or a query only)")
    elif not isinstance(root, _ROOTS):
        kind = _statement_word(root)
        raise UnsafeQueryError(sql, f"statement {kind} is not a read (allowed: SELECT, WITH, VALUES, DESCRIBE, SHOW, SUMMARIZE, catalog PRAGMAs)")


def _walk_checks(sql: str, root: exp.Expression) -> None:
    for node in root.walk():
        if isinstance(node, _NODES_DENIED):
            kind = "SELECT ... INTO" if isinstance(node, exp.Into) else node.key.upper()
            raise UnsafeQueryError(sql, f"{kind} is not allowed inside a read-only query")
        if isinstance(node, exp.Table):
            _check_table(sql, node)
        elif isinstance(node, exp.Func) and not isinstance(node.parent, exp.Pragma):
            name = _func_name(node)
            if _denied(name):
                raise UnsafeQueryError(sql, f"function {name}() reads files, secrets or settings, or runs SQL; not allowed")


def tokenize(sql: str, dialect: str = "duckdb") -> list[Any] | None:
    """sqlglot's tokens of ``sql`` in ``dialect``, or ``None`` when sqlglot cannot
    tokenize it, the dialect is unknown or the text exceeds ``MAX_QUERY_CHARS``.
    Tokenize once, then pass the list to ``token_key`` and ``parse_checked``."""
    from sqlglot.dialects.dialect import Dialect

    if len(sql) > MAX_QUERY_CHARS:
        return None  # parse_checked rejects it
    try:
        return Dialect.get_or_raise(dialect).tokenize(sql)
    except Exception:  # noqa: BLE001 - no tokens: callers analyse the text itself
        return None


def token_key(sql: str, dialect: str = "duckdb", tokens: list[Any] | None = None) -> tuple[tuple[str, str], ...] | None:
    """The token stream sqlglot's parser would see for ``sql``, as a hashable key.

    Each token is ``(type, text)``: keyword tokens (whose text, upper-cased with
    whitespace collapsed, is the dialect tokenizer's keyword for that token
    type, e.g. ``select``, ``AS``, ``group  by``) are lower-cased with
    whitespace collapsed; every other token (identifiers, quoted or not, strings,
    numbers, operators) keeps its exact text. Comments and whitespace are not
    tokens. Two texts with the same key parse to the same tree (comments
    aside), so ``parse_checked`` accepts both or neither and renders the same
    DuckDB SQL up to comments: callers may share an accepted query's analysis
    between them (``verifier.noise`` does). Costs about a fifth of a parse.

    Args:
        sql: query text in ``dialect``.
        dialect: one of ``DIALECTS``.
        tokens: ``tokenize(sql, dialect)`` when the caller already has it.

    Returns:
        The key (a tuple of ``(str, str)`` pairs), or ``None`` when sqlglot
        cannot tokenize the text or the dialect is unknown.
    """
    from sqlglot.dialects.dialect import Dialect

    if tokens is None:
        tokens = tokenize(sql, dialect)
        if tokens is None:
            return None
    keywords = Dialect.get_or_raise(dialect).tokenizer_class.KEYWORDS
    out = []
    for tok in tokens:
        text = " ".join(tok.text.split()).upper()
        if keywords.get(text) is tok.token_type:  # the keyword itself ("AS", "group  by")
            out.append((tok.token_type.name, text.lower()))
        else:
            out.append((tok.token_type.name, tok.text))
    return tuple(out)


def parse_checked(sql: str, dialect: str = "duckdb", *, tokens: list[Any] | None = None) -> tuple[str, exp.Expression]:
    """``check_read_only`` that also returns the checked syntax tree.

    ``tokens``, when given, must be ``tokenize(sql, dialect)``: the parse then
    reuses them instead of tokenizing the text again (same result).

    Returns:
        ``(duckdb_sql, tree)``; the tree is the caller's to inspect (for
        instance, which tables the query reads) and must not be executed
        other than through ``duckdb_sql``.

    Raises:
        As ``check_read_only``.
    """
    if dialect not in DIALECTS:
        raise InputError("dialect", dialect, f"expected one of {', '.join(DIALECTS)}")
    if not isinstance(sql, str) or not sql.strip():
        raise UnsafeQueryError(str(sql), "empty query")
    if len(sql) > MAX_QUERY_CHARS:
        raise UnsafeQueryError(sql[:200], f"query is {len(sql)} characters long; at most {MAX_QUERY_CHARS} are accepted (the parse is not time-limited)")
    show_table = _SHOW_TABLE.fullmatch(sql)
    if show_table and show_table.group(1).upper() not in _SHOW_OK:
        text = f"DESCRIBE {show_table.group(1)}"
        return text, sqlglot.parse_one(text, read="duckdb")
    try:
        if tokens is None:
            parsed = sqlglot.parse(sql, read=dialect)
        else:  # what sqlglot.parse does after tokenizing (Dialect.parse)
            parsed = Dialect.get_or_raise(dialect).parser().parse(tokens, sql)
        statements = [s for s in parsed if s is not None]
    except (ParseError, TokenError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UnsafeQueryError(sql, f"not parseable as {dialect} SQL: {first}") from None
    except Exception as exc:  # sqlglot internals on odd input: still a rejection, never a crash
        raise UnsafeQueryError(sql, f"not parseable as {dialect} SQL: {type(exc).__name__}: {exc}") from None
    if not statements:
        raise UnsafeQueryError(sql, "empty query")
    if len(statements) > 1:
        raise UnsafeQueryError(sql, f"{len(statements)} statements; exactly one is allowed")
    root = statements[0]
    _check_root(sql, root)
    _walk_checks(sql, root)
    try:
        return root.sql(dialect="duckdb"), root
    except Exception as exc:  # generator gap for an exotic construct
        raise UnsafeQueryError(sql, f"cannot be rendered as DuckDB SQL: {type(exc).__name__}: {exc}") from None


def check_read_only(sql: str, dialect: str = "duckdb") -> str:
    """Check that ``sql`` only reads the database and return it as DuckDB SQL.

    Args:
        sql: one SQL statement (a trailing semicolon and comments are fine).
        dialect: ``duckdb``, ``sqlite`` or ``postgres``; non-DuckDB SQL is
            transpiled with sqlglot.

    Returns:
        The DuckDB SQL regenerated from the checked syntax tree (this is the
        text to execute, so that what was checked is what runs).

    Raises:
        InputError: ``dialect`` is not one of ``DIALECTS``.
        UnsafeQueryError: empty, longer than ``MAX_QUERY_CHARS``, unparseable, more than one statement, a
            statement that is not a read (INSERT, UPDATE, DELETE, CREATE, DROP,
            COPY, ATTACH, INSTALL, LOAD, SET, writing PRAGMA, EXPORT, CALL, ...),
            a table function or function that reads files/URLs/secrets or runs
            SQL (read_csv*, read_parquet, read_json*, glob, read_text,
            read_blob, parquet_scan, sniff_csv, query, ...), or a table
            reference that is a file name, path or URL. ``reason`` says which.
    """
    return parse_checked(sql, dialect)[0]


# ---------------------------------------------------------------- connections
def open_readonly(db_path: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """Open the clinical database for untrusted reads.

    The file is ATTACHed ``READ_ONLY`` to a fresh in-memory DuckDB instance,
    under its usual catalog name (the file stem, as ``duckdb.connect(path)``
    would name it) and made the default database; then external access is
    disabled and the configuration locked. Going through ATTACH rather than
    ``duckdb.connect(path, config=...)`` keeps this connection out of DuckDB's
    per-process instance cache, so other code in the process may still open
    the same file with its own settings (DuckDB refuses two configurations of
    one cached instance), and a forked worker never reuses an instance
    inherited from its parent.

    Args:
        db_path: an existing DuckDB file.

    Returns:
        A connection whose only database is the file, read-only, with
        ``READONLY_CONFIG`` in force (external access disabled, extension
        auto-install/auto-load off, configuration locked so SQL cannot undo
        any of it) and ``RESOURCE_CONFIG`` (memory limit, no spilling to disk,
        a small thread pool).

    Raises:
        SourceDataError: the file does not exist or DuckDB cannot open it.
    """
    path = Path(db_path)
    if not path.is_file():
        raise SourceDataError(path, "DuckDB database file not found")
    alias = path.stem if _IDENT.fullmatch(path.stem) and path.stem.lower() not in _RESERVED_CATALOGS else "db"
    setup = {k: v for k, v in READONLY_CONFIG.items() if k not in ("enable_external_access", "lock_configuration")}
    setup.update(RESOURCE_CONFIG)
    con = duckdb.connect(":memory:", config=setup)
    try:
        con.execute(f"ATTACH '{path.as_posix().replace(chr(39), chr(39) * 2)}' AS \"{alias}\" (READ_ONLY)")
        con.execute(f'USE "{alias}"')
        con.execute("SET enable_progress_bar = false")  # a long query must not draw on the caller's terminal
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except duckdb.Error as exc:
        con.close()
        raise SourceDataError(path, f"cannot open read-only: {exc}") from exc
    return con


#: Catalog names DuckDB reserves (a file with such a stem is attached as ``db``).
_RESERVED_CATALOGS = frozenset({"memory", "system", "temp", "main", "information_schema", "pg_catalog"})


_local = threading.local()


@lru_cache(maxsize=1024)
def resolved_path(path: str) -> str:
    """``path`` made absolute with symlinks resolved (memoised; used as a cache key)."""
    return str(Path(path).resolve())


def thread_connection(db_path: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """The calling thread's read-only connection to ``db_path`` (opened once, then reused).

    Keyed by (process id, resolved path) so a forked worker never reuses its
    parent's connection. Never share the returned connection with another thread.

    Raises:
        SourceDataError: as ``open_readonly``.
    """
    key = (os.getpid(), resolved_path(str(db_path)))
    cache: dict[tuple[int, str], duckdb.DuckDBPyConnection] | None = getattr(_local, "cons", None)
    if cache is None:
        cache = _local.cons = {}
    con = cache.get(key)
    if con is None:
        con = cache[key] = open_readonly(db_path)
    return con


# ---------------------------------------------------------------- running
class _Watcher:
    """One daemon thread per process that interrupts connections at their deadlines.

    ``arm`` registers (deadline, connection) and returns a token; ``disarm``
    removes it. The thread sleeps until the earliest deadline and calls
    ``connection.interrupt()`` for a token still armed, under the same lock
    that ``disarm`` takes, so an interrupt can never reach a query that has
    already finished. (A ``threading.Timer`` per query costs a thread start
    each time; this is the same mechanism, shared.) Restarted after ``fork``.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._armed: dict[int, duckdb.DuckDBPyConnection] = {}
        self._fired: set[int] = set()
        self._owner: dict[int, int] = {}  # token -> ident of the thread that armed it
        self._abandoned: set[int] = set()  # idents of threads whose queries are refused
        self._next = 0
        self._pid = -1
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._reset_after_fork)

    def _reset_after_fork(self) -> None:
        self._cond = threading.Condition()  # the parent's lock state is not ours
        self._pid = -1

    def _ensure_thread(self) -> None:
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._heap, self._armed, self._fired, self._owner, self._abandoned = [], {}, set(), {}, set()
            threading.Thread(target=self._run, name="sqlsafe-watchdog", daemon=True).start()

    def arm(self, con: duckdb.DuckDBPyConnection, limit_s: float) -> int:
        """Start the clock for a query ``con`` is about to run; returns its token.

        Raises:
            AbandonedThread: the calling thread was abandoned (``abandon_thread``).
        """
        with self._cond:
            self._ensure_thread()
            if threading.get_ident() in self._abandoned:
                raise AbandonedThread("the scoring thread was abandoned at its item time limit")
            self._next += 1
            token = self._next
            self._armed[token] = con
            self._owner[token] = threading.get_ident()
            heapq.heappush(self._heap, (time.monotonic() + limit_s, token))
            self._cond.notify()
            return token

    def disarm(self, token: int) -> bool:
        """Forget ``token``; True when its deadline had fired."""
        with self._cond:
            self._armed.pop(token, None)
            if self._owner.pop(token, None) in self._abandoned:
                self._cond.notify_all()  # abandon_thread waits for this
            fired = token in self._fired
            self._fired.discard(token)
            return fired

    def abandon_thread(self, ident: int, wait_s: float = 5.0) -> int:
        """Stop thread ``ident``'s DuckDB work: interrupt the queries it is running
        now (they raise ``QueryTimeout``, as at their time limit) and refuse the ones
        it starts later (``arm`` raises ``AbandonedThread``) until ``release_thread``.
        Returns how many queries were interrupted, after waiting up to ``wait_s``
        seconds for them to return. Used when a batch item's own time limit abandons
        a scoring thread: no DuckDB call may outlive it (a native call still running
        when the interpreter exits aborts the process)."""
        with self._cond:
            self._ensure_thread()
            self._abandoned.add(ident)
            tokens = [t for t, owner in self._owner.items() if owner == ident and t in self._armed]
            for t in tokens:
                self._fired.add(t)
                self._armed[t].interrupt()
            # wait (bounded) until the interrupted calls have returned: DuckDB checks
            # for the interrupt between vectors, so this takes milliseconds
            deadline = time.monotonic() + wait_s
            while any(self._owner.get(t) == ident for t in tokens) and time.monotonic() < deadline:
                self._cond.wait(deadline - time.monotonic())
            return len(tokens)

    def release_thread(self, ident: int) -> None:
        """Forget that thread ``ident`` was abandoned (it is ending)."""
        with self._cond:
            if self._pid == os.getpid():
                self._abandoned.discard(ident)

    def _run(self) -> None:
        with self._cond:
            while True:
                while self._heap and self._heap[0][1] not in self._armed:
                    heapq.heappop(self._heap)  # disarmed already
                if not self._heap:
                    self._cond.wait()
                    continue
                deadline, token = self._heap[0]
                now = time.monotonic()
                if now < deadline:
                    self._cond.wait(deadline - now)
                    continue
                heapq.heappop(self._heap)
                con = self._armed.get(token)
                if con is not None:
                    self._fired.add(token)
                    con.interrupt()


_WATCHER = _Watcher()


class AbandonedThread(QueryTimeout):
    """Raised instead of running a query on a thread abandoned at its item time limit."""

    def __init__(self, message: str) -> None:
        QueryFailed.__init__(self, "", message)


def abandon_thread(ident: int) -> int:
    """Interrupt thread ``ident``'s running queries and refuse its later ones (see
    ``_Watcher.abandon_thread``); returns how many were interrupted."""
    return _WATCHER.abandon_thread(ident)


def release_thread(ident: int) -> None:
    """Undo ``abandon_thread`` for a thread that is ending (its id may be reused)."""
    _WATCHER.release_thread(ident)


def execute_checked(con: duckdb.DuckDBPyConnection, safe_sql: str, *, time_limit_s: float, row_cap: int) -> QueryResult:
    """Run SQL that has already passed ``check_read_only``, with a time limit and row cap.

    For callers that hold checked SQL (``run_query`` is the entry point for
    anything else). Arguments, result and errors as ``run_query``.
    """
    if time_limit_s <= 0:
        raise InputError("time_limit_s", time_limit_s, "must be > 0 seconds")
    if row_cap < 1:
        raise InputError("row_cap", row_cap, "must be >= 1")
    token = _WATCHER.arm(con, time_limit_s)
    fired = False
    try:
        try:
            cur = con.execute(safe_sql)
            columns = [d[0] for d in (cur.description or [])]
            rows = [tuple(r) for r in cur.fetchmany(row_cap + 1)] if columns else []
        finally:
            fired = _WATCHER.disarm(token)
    except duckdb.InterruptException:
        raise QueryTimeout(safe_sql, time_limit_s) from None
    except duckdb.Error as exc:
        if fired:
            raise QueryTimeout(safe_sql, time_limit_s) from None
        raise QueryFailed(safe_sql, str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    truncated = len(rows) > row_cap
    return QueryResult(columns=columns, rows=rows[:row_cap], truncated=truncated)


def run_query(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    *,
    time_limit_s: float,
    row_cap: int,
    dialect: str = "duckdb",
) -> QueryResult:
    """Check ``sql`` with ``check_read_only`` and run it on ``con``.

    Args:
        con: a connection from ``open_readonly``/``thread_connection`` (or an
            overlay connection from ``verifier.witness``), used by this thread only.
        sql: untrusted SQL text.
        time_limit_s: wall-clock limit in seconds for executing and fetching;
            enforced with ``con.interrupt()`` from the watchdog thread.
        row_cap: rows fetched at most; more sets ``truncated``.
        dialect: the SQL's dialect (transpiled to DuckDB).

    Returns:
        ``QueryResult(columns, rows, truncated)``.

    Raises:
        UnsafeQueryError: the query was rejected (never executed).
        QueryTimeout: the time limit was reached (the connection stays usable).
        QueryFailed: DuckDB raised an error, including running out of the
            connection's ``RESOURCE_CONFIG`` memory; ``message`` is DuckDB's.
        InputError: non-positive ``time_limit_s`` or ``row_cap``.
    """
    safe = check_read_only(sql, dialect)
    return execute_checked(con, safe, time_limit_s=time_limit_s, row_cap=row_cap)
