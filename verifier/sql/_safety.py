"""Which untrusted SQL may run: the read-only allowlist, checked on sqlglot's tree.

ARCHITECTURE.md section 4 (Noise step 4) and section 6: agent SQL is untrusted.
``check_read_only`` parses the text with sqlglot (DuckDB dialect, or transpiled from
SQLite/PostgreSQL) and accepts one statement whose root is on an allowlist (SELECT / WITH /
VALUES / set operations, DESCRIBE, SHOW, SUMMARIZE, read-only PRAGMAs). It then walks the whole
tree: write and session nodes anywhere are rejected, table functions must be on an allowlist (no
``read_csv``/``glob``/``query``...), scalar functions that read files, secrets or execute SQL are
rejected, and table references must be plain identifiers (no ``'file.csv'`` or URL replacement
scans). The statement that runs is the one sqlglot regenerates from the checked tree, so what was
checked is what executes. Running it is ``verifier.sql._execute``'s job.
"""


from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import Any, Callable

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError

from ..contract import MAX_QUERY_CHARS, InputError, UnsafeQueryError

#: Dialects agent SQL may be written in (``Trajectory.dialect``).
DIALECTS = ("duckdb", "sqlite", "postgres")

# ---------------------------------------------------------------- rule tables
# MAX_QUERY_CHARS, the longest query text accepted, is defined with the other input caps in
# verifier/contract/_limits.py (sqlglot's parse is not time-limited).

#: Statement roots that only read.
_ROOTS: tuple[type[exp.Expression], ...] = (
    exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Values,
    exp.Describe, exp.Show, exp.Summarize, exp.Pragma, exp.Subquery,
)

#: ``SHOW <what>`` forms accepted (sqlglot ``Show.this``, upper-cased).
_SHOW_OK = frozenset({"TABLES", "ALL TABLES", "DATABASES", "SCHEMAS"})

#: PRAGMAs that only read the catalog.
_PRAGMA_OK = frozenset({
    "table_info", "show", "show_tables", "show_tables_expanded",
    "version", "storage_info", "functions", "collations",
})

#: Table functions (``FROM f(...)``) allowed: generators and catalog introspection.
_TABLE_FUNCS_OK = frozenset({
    "range", "generate_series", "unnest", "generate_subscripts",
    "duckdb_tables", "duckdb_columns", "duckdb_views", "duckdb_schemas",
    "duckdb_constraints", "duckdb_indexes", "duckdb_types", "duckdb_functions", "duckdb_keywords",
    "duckdb_dependencies",
    "pragma_table_info", "pragma_show", "pragma_show_tables",
    "pragma_version", "pragma_storage_info",
})

#: Catalog functions whose result depends on the process's earlier work, not on the database:
#: ``pragma_database_size()`` reports the buffer pool's memory, which persists across episodes and
#: batch items (issue 30: the same trajectory passed when scored first and failed after a
#: neighbour that scanned large tables). Rejected as table functions, PRAGMAs and views.
_STATEFUL = frozenset({"pragma_database_size", "database_size", "duckdb_memory"})

#: DuckDB's own catalog views an agent may read: those describing the database's schema objects
#: (definitions: tables, columns, views, types, constraints, indexes, schemas, functions). The rule
#: (issue 31): a catalog relation may be read only when its result is a function of the database
#: file alone, so no verdict depends on what the process did before (memory, temporary files,
#: settings, logs, prepared statements, sequence values: ``pg_sequences.last_value``). Table
#: functions and PRAGMAs are allowlisted above by the same rule (``duckdb_sequences()`` is not on
#: it); every other internal view of the installed DuckDB (``internal_views``) is refused, so a view
#: a new DuckDB adds is refused until it is judged here. Scalar functions are judged by DuckDB's own
#: catalog (``verifier.abstention._opaque.volatile_names``: not ``CONSISTENT`` is never evidence).
_CATALOG_VIEWS_OK = frozenset({
    "duckdb_columns", "duckdb_constraints", "duckdb_indexes", "duckdb_schemas", "duckdb_tables", "duckdb_types",
    "duckdb_views", "sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema",
    "character_sets", "check_constraints", "columns", "constraint_column_usage", "constraint_table_usage",
    "key_column_usage", "referential_constraints", "schemata", "tables", "table_constraints", "views",
    "pg_am", "pg_attrdef", "pg_attribute", "pg_class", "pg_collation", "pg_constraint", "pg_database", "pg_depend",
    "pg_description", "pg_enum", "pg_index", "pg_indexes", "pg_namespace", "pg_proc", "pg_tables", "pg_tablespace",
    "pg_type", "pg_views",
})


@lru_cache(maxsize=1)
def internal_views() -> frozenset[str]:
    """Names (lower case) of the installed DuckDB's internal catalog views (``duckdb_views()``
    with ``internal``), read once per process from an in-memory DuckDB. Raises nothing
    (``duckdb.Error`` propagates only if DuckDB itself cannot start)."""
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        return frozenset(str(r[0]).lower() for r in con.execute("SELECT DISTINCT view_name FROM duckdb_views() WHERE internal").fetchall())
    finally:
        con.close()


#: Names the verifier keeps to itself: the witness overlay's attached base catalog and any object
#: it builds start with ``__``, so no table reference of agent SQL (catalog, schema or table) may
#: (issue 30: a Python step read the overlay's ``__witness_0`` table during re-execution). No
#: MIMIC-IV table starts so. Columns and aliases may (a SQLite string in double quotes is one).
RESERVED_PREFIX = "__"

#: Catalog functions and views that show file paths or settings (issue 11: the database's
#: path tells a policy where the tasks file may lie), rejected as table functions, as
#: tables or views (DuckDB also exposes them as views: ``FROM duckdb_databases``,
#: ``FROM pg_settings``, ``FROM pragma_database_list``) and as PRAGMAs. Full match, lower case.
#: DuckDB 1.x catalog: ``duckdb_databases().path``, ``PRAGMA database_list`` (``file``),
#: ``duckdb_settings()``/``pg_settings``/``current_setting`` (``temp_directory``,
#: ``extension_directory``, ``home_directory``, ``secret_directory``...),
#: ``duckdb_extensions().install_path``, ``duckdb_temporary_files().path``.
_CATALOG_DENIED = tuple(re.compile(p) for p in (
    r"duckdb_databases", r"(pragma_)?database_list", r"duckdb_settings", r"pg_settings", r"duckdb_extensions",
    r"duckdb_temporary_files", r"duckdb_secrets?", r"duckdb_memory", r"duckdb_external_file_cache",
    r"duckdb_log.*", r"(pragma_)?user_agent", r"(pragma_)?platform", r"current_setting",
))

#: The rejection reason for them.
_PATHS_REASON = "reveals file paths or settings of the environment; not allowed"
#: The rejection reason for ``_STATEFUL``.
_STATEFUL_REASON = ("reports the process's memory and earlier work, not the database: its result would differ "
                    "from one scoring to the next; not allowed")

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


# ---------------------------------------------------------------- checking
def _func_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    return node.sql_name().lower()


def _denied(name: str) -> bool:
    return any(p.fullmatch(name) for p in _FUNCS_DENIED)


def _reveals_paths(name: str) -> bool:
    return any(p.fullmatch(name.lower()) for p in _CATALOG_DENIED)


def _check_table(sql: str, table: exp.Table) -> None:
    """Table references: allowlisted table functions or plain identifiers, none of
    the path- or settings-revealing catalog views nor the stateful ones."""
    if isinstance(table.this, exp.Func):
        name = _func_name(table.this)
        if name in _STATEFUL:
            raise UnsafeQueryError(sql, f"table function {name}() {_STATEFUL_REASON}")
        if _reveals_paths(name):
            raise UnsafeQueryError(sql, f"table function {name}() {_PATHS_REASON}")
        if name not in _TABLE_FUNCS_OK:
            raise UnsafeQueryError(sql, f"table function {name}() is not allowed (only generators and catalog introspection)")
        return
    for part in (table.args.get("catalog"), table.args.get("db"), table.this):
        if part is None:
            continue
        name = part.name if isinstance(part, exp.Identifier) else None
        if name is not None and name.startswith(RESERVED_PREFIX):
            raise UnsafeQueryError(sql, f"table reference {name[:40]!r} starts with {RESERVED_PREFIX!r}, which the verifier "
                                        "reserves for its own objects; no table, schema or catalog of the database does")
        if name is None or not _IDENT.fullmatch(name):
            shown = part.sql("duckdb") if isinstance(part, exp.Expression) else repr(part)
            raise UnsafeQueryError(sql, f"table reference {shown} is not a plain table name (files, URLs and paths are not allowed)")
    if isinstance(table.this, exp.Identifier) and _reveals_paths(table.this.name):
        raise UnsafeQueryError(sql, f"catalog view {table.this.name} {_PATHS_REASON}")
    if isinstance(table.this, exp.Identifier) and table.this.name.lower() in _STATEFUL:
        raise UnsafeQueryError(sql, f"catalog view {table.this.name} {_STATEFUL_REASON}")
    if isinstance(table.this, exp.Identifier) and table.this.name.lower() in internal_views() - _CATALOG_VIEWS_OK:
        raise UnsafeQueryError(sql, f"catalog view {table.this.name} does not describe the database's schema "
                                    "(it shows the process's state, which depends on its earlier work); not allowed")


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
        if _reveals_paths(name):
            raise UnsafeQueryError(sql, f"PRAGMA {name} {_PATHS_REASON}")
        if name.lower() in _STATEFUL:
            raise UnsafeQueryError(sql, f"PRAGMA {name} {_STATEFUL_REASON}")
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
            if _reveals_paths(name):
                raise UnsafeQueryError(sql, f"function {name}() {_PATHS_REASON}")
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
    between them (``verifier.abstention._evaluate`` does). Costs about a fifth of a parse.

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
    if tokens is None:
        root = checked_statement(sql, dialect, lambda: sqlglot.parse(sql, read=dialect))
    else:  # what sqlglot.parse does after tokenizing (Dialect.parse)
        root = checked_statement(sql, dialect, lambda: Dialect.get_or_raise(dialect).parser().parse(tokens, sql))
    try:
        return root.sql(dialect="duckdb"), root
    except Exception as exc:  # generator gap for an exotic construct
        raise UnsafeQueryError(sql, f"cannot be rendered as DuckDB SQL: {type(exc).__name__}: {exc}") from None


def checked_statement(sql: str, dialect: str, parse: Callable[[], list[Any]]) -> exp.Expression:
    """Parse ``sql`` with ``parse()`` (sqlglot statements, ``None`` for empty ones) and check that it is
    exactly one statement on the read-only allowlist (the root, then every node of the tree).

    Args:
        sql: the query text (for error messages).
        dialect: the dialect name the text is written in (for error messages).
        parse: returns sqlglot's statement list (``sqlglot.parse``, or a dialect's own parser).

    Returns:
        The checked tree of the one statement.

    Raises:
        UnsafeQueryError: not parseable, empty, several statements, or not a read.
    """
    try:
        statements = [s for s in parse() if s is not None]
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
    return root


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
