"""Evidence must be deterministic and interpretable (issue 18 point 1).

ARCHITECTURE.md section 4 ("Noise abstentions", step 4). A query qualifies as evidence when
what changes between the base and the witness overlay is an *observation* of the unmet
requirement: rows of the witnessed table appearing or disappearing in scope, a count or
existence of them, or the value of a required column. Two kinds of query cannot be that,
whatever their result:

* **nondeterministic** (``volatile``): a volatile function (``random()``, ``now()``,
  ``uuid()``, ``nextval()``...) or a random sample (``USING SAMPLE``, ``TABLESAMPLE``)
  gives another result on every run, so base and overlay differ by chance
  (``EVIDENCE_NONDETERMINISTIC``; red team: 18 ``random()`` queries mentioning every
  table passed 94.7 % of the real demo's Noise tasks);
* **opaque** (``opaque_syntax``, ``opaque_comparison``): a digest of whole rows changes
  with ANY change to the rows it covers, so its change says nothing about the
  requirement (``EVIDENCE_OPAQUE``; red team: ``bit_xor(hash(row))`` over the question's
  scope, then the same expression ``<> V``, passed 87 %):
    - a hash or bit-folding function anywhere (``OPAQUE_FUNCTIONS``: ``hash``, ``md5``,
      ``sha256``, ``bit_xor``, ``xor``...);
    - a whole row used as a value (``hash(t)``, ``t::VARCHAR``, ``to_json(t)``,
      ``list(t)``, ``string_agg(t::VARCHAR, ',')``, ``row(t.*)``, ``f(*)`` other than
      ``count(*)``): ``t`` a table or alias of the query;
    - a comparison of an aggregate or scalar subquery with (or arithmetic on it with) a
      fingerprint-sized number the agent read in an earlier step's output
      (``sum(epoch(chart_time)) <> 8214398221``, ``... - 8214398221``): a constant read
      earlier, not one the question gives; thresholds, reference limits and small counts are
      not digests (a small count of the scope compared with a constant is caught by the
      nuisance perturbation instead).
The query is still re-executed (a fabricated output is still ``EVIDENCE_FABRICATED``) and
shown in the verdict's details with its status.
"""

from __future__ import annotations

import re
from typing import Iterable

from sqlglot import exp

from ..contract import Task, Trajectory
from ._rekey import task_named_values

#: Functions whose value changes between runs.
VOLATILE_CLASSES = (exp.CurrentDate, exp.CurrentTime, exp.CurrentTimestamp, exp.Rand, exp.Uuid)
VOLATILE_NAMES = frozenset({
    "now", "random", "rand", "uuid", "gen_random_uuid", "uuidv4", "uuidv7", "get_current_time",
    "get_current_timestamp", "today", "current_localtime", "current_localtimestamp", "epoch_ms_now",
    "nextval", "currval", "setseed", "transaction_timestamp", "current_query",
})
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
    return any(isinstance(f, VOLATILE_CLASSES) or (isinstance(f, exp.Anonymous) and _name(f) in VOLATILE_NAMES)
               for f in tree.find_all(exp.Func))


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


_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ,
                exp.Sub, exp.Add, exp.Mod, exp.Div)
#: A constant is a fingerprint-sized number: at least this large in magnitude, or with at least
#: ``DIGEST_DIGITS`` significant digits (thresholds, reference limits and small counts are not;
#: a small count compared with the scope is left to the nuisance perturbation, ``_invariance``).
DIGEST_MAGNITUDE = 100_000
DIGEST_DIGITS = 7
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]*\d)")


def numbers_in(texts: Iterable[str]) -> set[float]:
    """Every number written in ``texts`` (as floats)."""
    out: set[float] = set()
    for text in texts:
        for m in re.findall(r"-?\d+(?:\.\d+)?", text or ""):
            try:
                out.add(float(m))
            except ValueError:
                pass
    return out


def _literal_number(e: exp.Expression) -> float | None:
    if isinstance(e, exp.Neg):
        v = _literal_number(e.this)
        return None if v is None else -v
    if isinstance(e, exp.Literal) and not e.is_string:
        try:
            return float(e.this)
        except ValueError:
            return None
    return None


def _digest_sized(literal: exp.Expression, v: float) -> bool:
    digits = sum(ch.isdigit() for ch in literal.sql().lstrip("-").lstrip("0"))
    return abs(v) >= DIGEST_MAGNITUDE or digits >= DIGEST_DIGITS


def opaque_comparison(tree: exp.Expression, earlier: set[float], given: set[float]) -> str | None:
    """A comparison of (or arithmetic on) an aggregate or scalar subquery with a fingerprint-sized
    number read in an earlier step's output (``earlier``) and not given by the task (``given``),
    or ``None``. The tree's candidate comparisons are found once per tree (``_candidates``);
    each call only checks their numbers against ``earlier`` and ``given``."""
    for v, why in _candidates(tree):
        if v not in given and v in earlier:
            return why
    return None


def _candidates(tree: exp.Expression) -> tuple[tuple[float, str], ...]:
    """``(number, why)`` for each side of a comparison (or arithmetic) in ``tree`` that is a
    fingerprint-sized literal number facing an aggregate or scalar subquery, in the order
    ``opaque_comparison`` tries them (tree order, left side first). Memoised per tree object
    (analysed trees are cached and shared by the samples of a task; the memo holds the tree,
    so its identity cannot be reused; bounded)."""
    found = _CANDIDATES.get(id(tree))
    if found is not None and found[0] is tree:
        return found[1]
    out = []
    for cmp in tree.find_all(*_COMPARISONS):
        for side, other in ((cmp.left, cmp.right), (cmp.right, cmp.left)):
            v = _literal_number(side)
            if v is None or not _digest_sized(side, v):
                continue
            if other.find(exp.AggFunc) is not None or other.find(exp.Subquery) is not None or isinstance(other, exp.Subquery):
                out.append((v, f"compares {other.sql(dialect='duckdb')[:50]} with {side.sql(dialect='duckdb')}, a constant read in an "
                               "earlier output: a change of the comparison is not an observation of the requirement"))
    if len(_CANDIDATES) >= _MEMO_ENTRIES:
        _CANDIDATES.clear()
    _CANDIDATES[id(tree)] = (tree, tuple(out))
    return tuple(out)


#: Entries of the per-tree and per-text memos (cleared when full).
_MEMO_ENTRIES = 4096
_CANDIDATES: dict[int, tuple[exp.Expression, tuple[tuple[float, str], ...]]] = {}


def earlier_numbers(trajectory: Trajectory, step: int) -> set[float]:
    """Numbers the agent read in the outputs of the steps before ``step`` (1-based)."""
    out: set[float] = set()
    for s in trajectory.steps[: max(0, step - 1)]:
        out |= _output_numbers(s.output or "")
    return out


def _output_numbers(text: str) -> frozenset[float]:
    """``numbers_in([text])``, memoised per text up to ``_MEMO_TEXT_CHARS`` characters (the samples
    of a GRPO group record the same outputs of the same queries; bounded)."""
    if len(text) > _MEMO_TEXT_CHARS:
        return frozenset(numbers_in([text]))
    found = _NUMBERS.get(text)
    if found is None:
        found = frozenset(numbers_in([text]))
        if len(_NUMBERS) >= _MEMO_ENTRIES:
            _NUMBERS.clear()
        _NUMBERS[text] = found
    return found


#: Longest output text whose numbers are memoised (longer ones are read each time).
_MEMO_TEXT_CHARS = 16_384
_NUMBERS: dict[str, frozenset[float]] = {}


def given_numbers(task: Task) -> set[float]:
    """Numbers the task gives the agent: its question, and the values it names."""
    return numbers_in([task.question, *task_named_values(task)])
