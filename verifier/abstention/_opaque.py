"""Evidence must be deterministic and interpretable (issue 18 point 1).

ARCHITECTURE.md section 4 ("Noise abstentions", step 4). A query qualifies as evidence when
what changes between the base and the witness overlay is an *observation* of the unmet
requirement: rows of the witnessed table appearing or disappearing in scope, a count or
existence of them, or the value of a required column. Two kinds of query cannot be that,
whatever their result:

* **nondeterministic** (``volatile``): a function DuckDB's catalog marks as not deterministic
  (``volatile_names``: ``random()``, ``now()``, ``uuid()``, ``nextval()``, ``txid_current()``...)
  or a random sample (``USING SAMPLE``, ``TABLESAMPLE``)
  gives another result on every run, so base and overlay differ by chance
  (``EVIDENCE_NONDETERMINISTIC``; red team: 18 ``random()`` queries mentioning every
  table passed 94.7 % of the real demo's Noise tasks);
* **opaque** (``opaque_syntax``): a digest of whole rows changes
  with ANY change to the rows it covers, so its change says nothing about the
  requirement (``EVIDENCE_OPAQUE``; red team: ``bit_xor(hash(row))`` over the question's
  scope, then the same expression ``<> V``, passed 87 %):
    - a hash or bit-folding function anywhere (``OPAQUE_FUNCTIONS``: ``hash``, ``md5``,
      ``sha256``, ``bit_xor``, ``xor``...);
    - a whole row used as a value (``hash(t)``, ``t::VARCHAR``, ``to_json(t)``,
      ``list(t)``, ``string_agg(t::VARCHAR, ',')``, ``row(t.*)``, ``f(*)`` other than
      ``count(*)``): ``t`` a table or alias of the query;
    A comparison of an aggregate with a constant the task does not give (a snapshot diff,
    ``sum(epoch(chart_time)) <> 8214398221``, ``HAVING count(*) <> 7``) is not an
    observation either: ``verifier.abstention._observation`` decides it by one rule.
The query is still re-executed (a fabricated output is still ``EVIDENCE_FABRICATED``) and
shown in the verdict's details with its status.
"""

from __future__ import annotations

from functools import lru_cache

from sqlglot import exp

#: Functions whose value changes between runs (sqlglot's classes for the SQL-standard ones).
VOLATILE_CLASSES = (exp.CurrentDate, exp.CurrentTime, exp.CurrentTimestamp, exp.Rand, exp.Uuid)


@lru_cache(maxsize=1)
def volatile_names() -> frozenset[str]:
    """Names (lower case) of the functions DuckDB's own catalog marks as not deterministic: every
    overload's ``duckdb_functions().stability`` is ``VOLATILE`` or ``CONSISTENT_WITHIN_QUERY``
    (``random``, ``now``, ``txid_current``, ``current_transaction_id``, ``current_query``,
    ``stats``, ``nextval``...; issue 30: ``txid_current()`` was missing from a hand-written list).
    Read once per process from an in-memory DuckDB of the installed version. Raises nothing
    (``duckdb.Error`` propagates only if DuckDB itself cannot start)."""
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        rows = con.execute(
            "SELECT function_name FROM duckdb_functions() GROUP BY function_name "
            "HAVING bool_or(stability IS NOT NULL) AND NOT bool_or(coalesce(stability, '') = 'CONSISTENT')"
        ).fetchall()
    finally:
        con.close()
    return frozenset(str(r[0]).lower() for r in rows)


#: Digest and bit-folding functions: their value is an opaque function of their whole input.
OPAQUE_CLASSES = (exp.MD5, exp.SHA, exp.SHA2, exp.MD5Digest, exp.BitwiseXorAgg, exp.BitwiseOrAgg, exp.BitwiseAndAgg,
                  exp.BitwiseXor)
OPAQUE_NAMES = frozenset({
    "hash", "md5", "md5_number", "md5_number_lower", "md5_number_upper", "sha1", "sha256", "sha512", "sha2",
    "crc32", "xor", "bit_xor", "bit_or", "bit_and", "bitstring_agg", "fnv", "murmurhash", "xxhash",
})
#: Functions that may take ``*`` without serialising a row.
_STAR_OK = (exp.Count,)


def _name(f: exp.Func) -> str:
    return (str(f.this) if isinstance(f, exp.Anonymous) else f.sql_name()).lower()


def volatile(tree: exp.Expression) -> bool:
    """Whether the checked query ``tree`` is nondeterministic (volatile function or random sample)."""
    if any(True for _ in tree.find_all(exp.TableSample)):
        return True
    names = volatile_names()
    return any(isinstance(f, VOLATILE_CLASSES) or _name(f) in names for f in tree.find_all(exp.Func))


def _relations(tree: exp.Expression) -> set[str]:
    names: set[str] = set()
    for t in tree.find_all(exp.Table):
        names.add(t.name.lower())
        if t.alias:
            names.add(t.alias.lower())
    for cte in tree.find_all(exp.CTE):
        if cte.alias:
            names.add(cte.alias.lower())
    for sq in tree.find_all(exp.Subquery):
        if sq.alias:
            names.add(sq.alias.lower())
    return names


def opaque_syntax(tree: exp.Expression) -> str | None:
    """Why the checked query ``tree`` computes an opaque digest, or ``None`` (rule in the module docstring)."""
    for f in tree.find_all(exp.Func):
        if isinstance(f, OPAQUE_CLASSES) or (isinstance(f, exp.Anonymous) and _name(f) in OPAQUE_NAMES):
            return f"uses {f.sql(dialect='duckdb')[:60]}: a digest of its input, not an observation of the requirement"
    rels = _relations(tree)
    for f in tree.find_all(exp.Func, exp.Cast):
        if isinstance(f, _STAR_OK):
            continue
        for arg in f.iter_expressions():
            whole = (isinstance(arg, exp.Star)
                     or (isinstance(arg, exp.Column) and isinstance(arg.this, exp.Star))
                     or (isinstance(arg, exp.Column) and not arg.table and arg.name.lower() in rels))
            if whole:
                return f"{f.sql(dialect='duckdb')[:60]} serialises whole rows: not an observation of the requirement"
    return None
