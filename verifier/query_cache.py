"""A cache of evidence-query results keyed by sqlglot-normalised SQL.

DESIGN.md section 7: batch scoring caches the results of identical normalised
queries. In an RL batch the same task is sampled many times (GRPO groups), and
the sampled trajectories run many of the same queries with cosmetic
differences (case, whitespace, comments, quoting); all of them map to one key.

The cache is process-local. ``verify_batch`` installs one per worker
(``install``); the evidence re-execution code asks for it with ``active()``
and calls ``get_or_run``. With no cache installed, ``active()`` is ``None``
and queries simply run (the single-call ``verify`` path).

Correctness rests on the database being read-only while a cache lives: a key
includes a ``scope`` chosen by the caller (the database file and, for a
witness overlay, the overlay's identity), the normalised SQL and the row cap.
Only successful results are cached; failures and timeouts are re-run.
Cached values are shared: callers must not mutate them.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Callable, Generic, Hashable, TypeVar

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_WS = re.compile(r"\s+")


@lru_cache(maxsize=65536)
def normalize_sql(sql: str, dialect: str = "duckdb") -> str:
    """Canonical text of a query, from sqlglot's tokenizer.

    Tokens are kept in order with their types; keywords and identifiers are
    lower-cased (DuckDB resolves identifiers case-insensitively, quoted or
    not), string literals keep their exact text, comments, whitespace and
    trailing semicolons are dropped. Two texts get the same key only when
    they are the same token stream, so the same query. Tokenizing costs a
    fifth of a full parse; the result is memoised on the raw text.

    Args:
        sql: query text in ``dialect``.
        dialect: the sqlglot dialect it is written in.

    Returns:
        The canonical key text; when sqlglot cannot tokenize the text, the
        text with whitespace collapsed (a correct, if weaker, key).
    """
    from sqlglot.dialects.dialect import Dialect
    from sqlglot.errors import SqlglotError

    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except (SqlglotError, ValueError, RecursionError):
        return "raw:" + _WS.sub(" ", sql).strip()
    parts = []
    for tok in tokens:
        kind = tok.token_type.name
        if kind == "SEMICOLON":
            continue
        if kind == "IDENTIFIER":  # a quoted name is the same name in DuckDB
            kind = "VAR"
        parts.append(f"{kind}:{tok.text!r}" if "STRING" in kind else f"{kind}:{tok.text.lower()!r}")
    return " ".join(parts)


class LRU(Generic[K, V]):
    """A bounded, thread-safe least-recently-used map (memoisation of pure functions).

    Args:
        max_entries: entries kept at most (least recently used dropped first).

    Raises:
        ValueError: ``max_entries`` < 1.
    """

    def __init__(self, max_entries: int) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        self.max_entries = max_entries
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value stored for ``key`` (marked recently used), or ``None``."""
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Store ``value`` for ``key``, dropping the least recently used entries beyond the bound."""
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


class QueryCache:
    """Bounded, thread-safe LRU of query results.

    Args:
        max_entries: results kept at most (least recently used dropped first).

    Attributes:
        hits / misses: counters since creation (for benchmarks and reports).
    """

    def __init__(self, max_entries: int = 8192) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        self.max_entries = max_entries
        self._data: OrderedDict[Hashable, object] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(sql: str, *, scope: Hashable = "", row_cap: int | None = None, dialect: str = "duckdb") -> tuple[Hashable, str, int | None]:
        """The cache key of ``sql`` run in ``scope`` with ``row_cap``."""
        return (scope, normalize_sql(sql, dialect), row_cap)

    def get_or_run(
        self,
        sql: str,
        run: Callable[[], T],
        *,
        scope: Hashable = "",
        row_cap: int | None = None,
        dialect: str = "duckdb",
    ) -> T:
        """Return the cached result of ``sql`` or compute it with ``run()``.

        Args:
            sql: the query as the agent wrote it.
            run: zero-argument callable executing it (its exceptions propagate
                and nothing is cached).
            scope: what else the result depends on (database path, overlay id).
            row_cap: the fetch limit used by ``run``.
            dialect: the dialect ``sql`` is written in.

        Returns:
            ``run()``'s value, possibly from an earlier identical call.
        """
        key = self.key(sql, scope=scope, row_cap=row_cap, dialect=dialect)
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return self._data[key]  # type: ignore[return-value]
            self.misses += 1
        value = run()
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        """Drop every entry (counters kept)."""
        with self._lock:
            self._data.clear()


_ACTIVE: QueryCache | None = None


def install(cache: QueryCache | None) -> QueryCache | None:
    """Make ``cache`` the process's active cache (``None`` removes it); returns the previous one."""
    global _ACTIVE
    previous, _ACTIVE = _ACTIVE, cache
    return previous


def active() -> QueryCache | None:
    """The process's active cache, or ``None`` (then queries run uncached)."""
    return _ACTIVE
