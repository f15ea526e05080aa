"""What an evidence query may compute: an observation of the scope, not a comparison with a snapshot.

ARCHITECTURE.md section 4 (Noise step 5, "What evidence is"). Evidence shows the gap to a reader:
the in-scope rows of the requirement's table shown absent, counted, or shown with the requirement's
columns. The cells that change with the witness must therefore be computed from the rows of the
scope through operations a reader can follow: projection, the scope's own filters (the ids, items,
codes, windows and thresholds of the question, and links between tables), count / min / max /
first / last / averages of them, arithmetic and date arithmetic on their columns. A query whose
change is produced by comparing the scope with something the agent read before is a snapshot
diff, not an observation: it changes on *any* change of the scope (another item, a value of
another column), whatever the requirement is (issue 30: ``HAVING count(*) <> N`` with N read in
an earlier step passed 92 % of the real demo's patient Noise tasks).

The rule, decided on sqlglot's tree of the checked query (``problem``):

1. **An aggregate is observed, never compared with a constant the task does not give.** An
   aggregate-valued expression (an aggregate or window function, a scalar subquery reading a
   table, a column naming such a projection, a tuple, list or struct of them) may be combined
   with a constant (a number, string, typed or cast literal, a tuple or list of them) only by
   scaling (``*``, ``/``), rounding, casting or formatting. Compared with it (``=``, ``<>``,
   ``<``, ``IN``, ``BETWEEN``, ``IS DISTINCT FROM``, ``LIKE``, ``NULLIF``, a ``CASE`` branch),
   added to or subtracted from it, or passed with it to any other function, the constant must
   be one the task gives: a number or text of its question, statement or key terms, a value
   its parameters or scope name, a literal of its own reference query, the five-unit threshold
   on a population task, 0 (an existence test) or 1 (a uniqueness test: "the only", "most
   often" ties). Anything else is a comparison with a snapshot.
2. **Rows are selected by the scope, not by excluding what was seen.** A negative row filter
   of a SELECT (``<>``, ``NOT IN``, ``IS DISTINCT FROM``, ``NOT (...)``, an ``ANTI JOIN``'s
   condition; not the filters of a subquery under ``NOT EXISTS``, which say what is absent) against constants the agent read in an earlier step's output and the task does
   not give excludes rows by identity: it is not evidence, unless the constants are category
   texts compared with a plain column (``status <> 'Not Given'``: a reading convention). Such a
   categorical exclusion is reported (``Observation.excludes``) so that an empty base result is
   not taken as the scope's own emptiness (``_invariance.nuisance_tolerated`` is then strict).
   A table of values (``VALUES``) holding constants read earlier and not given by the task, and
   an ``OFFSET`` by a constant the task does not give, likewise select rows by what was seen.
3. **Modular and bitwise arithmetic are not followable** (they fold values into buckets; a
   modulus of 0 or 1 folds nothing, and on a date part it is calendar arithmetic);
   digests and whole-row serialisation stay ``_opaque``'s.

Known attacks (snapshot diffs, count fingerprints, exclusion of the ids read) are tests
(``tests/test_noise_observation.py``), not this rule's content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Sequence

import sqlglot
from sqlglot import exp

from ..contract import Task
from ._rekey import task_named_values

#: Expression classes that combine an aggregate with a constant without comparing them.
_SCALING = (exp.Mul, exp.Div, exp.IntDiv, exp.Round, exp.Cast, exp.TryCast, exp.Alias, exp.Paren, exp.Ordered,
            exp.Window, exp.Filter, exp.Interval)
#: Expression classes that format, truncate or default an aggregate with a constant argument.
_FORMATTING_CLASSES = tuple(getattr(exp, n) for n in (
    "TimeToStr", "StrToTime", "DateTrunc", "TimestampTrunc", "TimeTrunc", "Coalesce", "Concat", "ConcatWs", "DPipe",
    "GroupConcat", "ArrayAgg", "Extract",
    "Trunc", "Format") if hasattr(exp, n))
#: Functions (lower-case names) that format or round an aggregate with a constant argument.
_FORMATTING = frozenset({"round", "format", "printf", "strftime", "trunc", "date_trunc", "to_char", "round_even",
                         "coalesce", "ifnull", "concat", "concat_ws", "string_agg", "list", "array_agg", "group_concat",
                         "listagg"})
#: Nodes that exclude rows (negative predicates).
_NEGATIVE = (exp.NEQ, exp.NullSafeNEQ, exp.Not)
#: Always-allowed constants facing an aggregate: 0 (an existence test), the empty text, and the
#: names of date parts (``date_diff('hour', min(t), max(t))``).
_NEUTRAL = frozenset({"0", "", *(p + s for p in ("microsecond", "millisecond", "second", "minute", "hour", "day", "week",
                                                "month", "quarter", "year", "decade", "epoch", "dow", "doy", "isodow")
                                 for s in ("", "s"))})
#: Modular and bitwise arithmetic.
_FOLDING = tuple(getattr(exp, n) for n in ("Mod", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseLeftShift",
                                           "BitwiseRightShift", "BitwiseNot") if hasattr(exp, n))

_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_ORDINALS = {w: str(i) for i, w in enumerate(
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth".split())}


@dataclass(frozen=True)
class Given:
    """Constants the task gives the agent (lower-case text of numbers in canonical form and of texts).

    Attributes:
        numbers: canonical number texts (``'5'``, ``'2.5'``).
        texts: the task's texts (question, statement, key terms) lower-cased, joined, plus its
            named values and its reference query's string literals.
    """

    numbers: frozenset[str]
    texts: str


def _canon_number(text: str) -> str | None:
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    if v != v or v in (float("inf"), float("-inf")):
        return None
    return str(int(v)) if v.is_integer() else repr(v)


def given_by(task: Task, threshold: int | None = None) -> Given:
    """The constants ``task`` gives (rule 1 of the module docstring): numbers and number or
    ordinal words of its question, statement and key terms, its named values (``params``,
    scope), the literals of its reference query, the five-unit ``threshold`` (population
    tasks), 0 and 1. Memoised on what it is made of. Raises nothing."""
    req = task.reference.unmet_requirement
    texts = (task.question, *((req.statement, *req.key_terms) if req else ()))
    return _given(texts, tuple(sorted(task_named_values(task))), task.reference.sql or "", threshold)


@lru_cache(maxsize=4096)
def _given(texts: tuple[str, ...], named: tuple[str, ...], reference_sql: str, threshold: int | None) -> Given:
    numbers: set[str] = {"0", "1"}
    words: list[str] = [t.lower() for t in texts] + [v.lower() for v in named]
    for t in texts:
        low = t.lower()
        for m in re.findall(r"-?\d+(?:\.\d+)?", low):
            c = _canon_number(m)
            if c is not None:
                numbers.add(c)
        for w in re.findall(r"[a-z]+", low):
            if w in _NUMBER_WORDS:
                numbers.add(_NUMBER_WORDS[w])
            if w in _ORDINALS:
                numbers.update({_ORDINALS[w], str(int(_ORDINALS[w]) - 1)})
    for v in named:
        c = _canon_number(v)
        if c is not None:
            numbers.add(c)
    if reference_sql:
        try:
            tree = sqlglot.parse_one(reference_sql, read="duckdb")
        except Exception:  # noqa: BLE001 - a reference that does not parse gives nothing more
            tree = None
        if tree is not None:
            for lit in tree.find_all(exp.Literal):
                if lit.is_string:
                    words.append(str(lit.this).lower())
                else:
                    c = _canon_number(str(lit.this))
                    if c is not None:
                        numbers.add(c)
    if threshold is not None:
        numbers.add(str(threshold))
    return Given(frozenset(numbers), "\n".join(words))


@dataclass(frozen=True)
class Earlier:
    """What the agent read before a step: the numbers (canonical text) and the outputs' text (lower case)."""

    numbers: frozenset[str]
    text: str


def earlier_read(outputs: Iterable[str]) -> Earlier:
    """``Earlier`` of the step outputs ``outputs`` (the steps before the query's). Raises nothing."""
    texts = [o or "" for o in outputs]
    nums = {c for t in texts for m in re.findall(r"-?\d+(?:\.\d+)?", t) if (c := _canon_number(m)) is not None}
    return Earlier(frozenset(nums), "\n".join(t.lower() for t in texts))


def earlier_by_step(outputs: Sequence[str | None]) -> Callable[[int], Earlier]:
    """``before(step)``: ``earlier_read`` of ``outputs[: step - 1]`` (what the agent read before the
    1-based ``step``), each prefix read once however many queries or Python steps of that step ask
    (``verify_noise``). ``outputs``: the trajectory's step outputs in order (``None`` for none).
    Raises nothing."""
    memo: dict[int, Earlier] = {}

    def before(step: int) -> Earlier:
        k = max(0, step - 1)
        if k not in memo:
            memo[k] = earlier_read(o or "" for o in outputs[:k])
        return memo[k]
    return before


@dataclass(frozen=True)
class Observation:
    """The verdict of ``problem`` on one query.

    Attributes:
        why: why the query is not an observation of the scope (rules 1-3), or ``None``.
        excludes: the query excludes category texts read earlier (rule 2's allowed case).
    """

    why: str | None
    excludes: bool = False


def _constant(e: exp.Expression) -> list[tuple[str, bool]] | None:
    """The constants of a constant expression as ``[(text, is_string)]``, or ``None`` when ``e``
    is not a constant (a literal, a negated or cast literal, a typed literal, a tuple, list or
    struct of constants, a parenthesised constant). NULL, booleans and intervals are not constants
    here (they compare with nothing the agent read)."""
    if isinstance(e, exp.Literal):
        return [(str(e.this), bool(e.is_string))]
    if isinstance(e, exp.Neg):
        inner = _constant(e.this)
        return None if inner is None else [("-" + t if not s else t, s) for t, s in inner]
    if isinstance(e, (exp.Cast, exp.TryCast, exp.Paren)):
        return _constant(e.this)
    if isinstance(e, (exp.Tuple, exp.Array, exp.Struct)):
        parts = [_constant(x.expression if isinstance(x, exp.PropertyEQ) else x) for x in e.expressions]
        if not parts or any(p is None for p in parts):
            return None
        return [c for p in parts for c in p]  # type: ignore[union-attr]
    if isinstance(e, exp.DPipe) or (isinstance(e, exp.Concat)):
        parts = [_constant(x) for x in e.iter_expressions()]
        if not parts or any(p is None for p in parts):
            return None
        return [("".join(t for p in parts for t, _ in p), True)]  # type: ignore[union-attr]
    if isinstance(e, exp.Subquery) and not any(True for _ in e.find_all(exp.Table, exp.Column)):
        sel = e.this
        if isinstance(sel, exp.Select) and len(sel.expressions) == 1:
            return _constant(sel.expressions[0].unalias())
    return None


def _is_given(c: tuple[str, bool], given: Given) -> bool:
    text, is_string = c
    if not is_string:
        n = _canon_number(text)
        return n is None or n in given.numbers
    low = text.strip().lower()
    if low in _NEUTRAL:
        return True
    n = _canon_number(low)
    if n is not None and n in given.numbers:
        return True
    return low in given.texts


def _read_earlier(c: tuple[str, bool], earlier: Earlier) -> bool:
    text, is_string = c
    n = _canon_number(text)
    if n is not None and n in earlier.numbers:
        return True
    return is_string and len(text.strip()) > 0 and text.strip().lower() in earlier.text


def _aggregate_names(tree: exp.Expression) -> frozenset[str]:
    """Output names of projections that are aggregate-valued (their alias and their SQL text)."""
    names: set[str] = set()
    for sel in tree.find_all(exp.Select):
        for p in sel.expressions:
            inner = p.unalias()
            if _aggregate(inner, frozenset()):
                names.add(p.alias_or_name.lower())
                names.add(inner.sql(dialect="duckdb").lower())
    return frozenset(names)


def _aggregate(e: exp.Expression, agg_names: frozenset[str]) -> bool:
    """Whether ``e`` is aggregate-valued: it holds an aggregate or window function, a scalar
    subquery reading a table, or a column naming an aggregate-valued projection."""
    for node in e.walk():
        if isinstance(node, (exp.AggFunc, exp.Window)):
            return True
        if isinstance(node, exp.Subquery) and any(True for _ in node.find_all(exp.Table)):
            return True
        if isinstance(node, exp.Column) and agg_names and (node.name.lower() in agg_names
                                                          or node.sql(dialect="duckdb").lower() in agg_names):
            return True
    return False


def _fname(node: exp.Expression) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    if isinstance(node, exp.Func):
        return node.sql_name().lower()
    return node.key.lower()


def _negated(node: exp.Expression, root: exp.Expression) -> bool:
    """Whether ``node`` sits in a negative row filter of its own SELECT: under NOT, a ``<>`` /
    ``IS DISTINCT FROM`` comparison, or an ANTI JOIN's condition. The filters of a subquery
    under ``NOT EXISTS`` / ``NOT IN`` say what does not exist (the scope), so the walk stops
    at a SELECT or subquery boundary."""
    cur = node
    while cur is not None and cur is not root and not isinstance(cur, (exp.Select, exp.Subquery)):
        if isinstance(cur, _NEGATIVE):
            return True
        if isinstance(cur, exp.Join) and (cur.args.get("kind") or "").upper() == "ANTI":
            return True
        cur = cur.parent
    return False


def _plain_column(e: exp.Expression) -> bool:
    """A column, possibly lower-/upper-cased or trimmed: a category compared as it is recorded."""
    while isinstance(e, (exp.Lower, exp.Upper, exp.Trim, exp.Paren)):
        e = e.this
    return isinstance(e, exp.Column)


def problem(tree: exp.Expression, given: Given, earlier: Earlier) -> Observation:
    """Why the checked query ``tree`` is not an observation of the scope (rules of the module
    docstring), with the constants the task gives (``given_by``) and what the agent read before
    the query's step (``earlier_read``).

    Returns:
        ``Observation(why, excludes)``: ``why`` ``None`` when the query may be evidence.
    Raises nothing.
    """
    agg_names = _aggregate_names(tree)
    excludes = False
    for node in tree.walk():
        if isinstance(node, _FOLDING) and not _trivial_modulus(node):
            return Observation(f"{node.sql(dialect='duckdb')[:60]} folds values by modular or bitwise arithmetic: "
                               "not an observation of the requirement")
        if isinstance(node, exp.Offset):
            c = _constant(node.expression)
            if c is None or not all(_is_given(x, given) for x in c):
                return Observation(f"OFFSET {node.expression.sql(dialect='duckdb')[:40]} skips rows by position, a number "
                                   "the question does not give: the rows shown are not the scope")
            continue
        if isinstance(node, exp.Values) and not (node.parent is None or node is tree):
            for row in node.expressions:
                c = _constant(row) or []
                if any(_read_earlier(x, earlier) and not _is_given(x, given) for x in c):
                    return Observation("a table of values read in an earlier output is compared with the scope: "
                                       "a snapshot of what was seen, not an observation of the requirement")
            continue
        if isinstance(node, _SCALING) or isinstance(node, (exp.If, exp.Select, exp.Subquery, exp.Where, exp.Having,
                                                              exp.From, exp.Join, exp.Group, exp.Order, exp.Limit,
                                                              exp.Column, exp.Literal, exp.Identifier, exp.Table,
                                                              exp.TableAlias, exp.Star, exp.CTE, exp.With)):
            continue
        args = [a for a in node.iter_expressions() if not isinstance(a, (exp.Identifier, exp.DataType, exp.Var))]
        if isinstance(node, exp.Case):
            if node.this is None:
                continue  # searched CASE: each condition is judged on its own
            args = [node.this, *(i.this for i in node.args.get("ifs") or [])]
        if len(args) < 2:
            continue
        consts = [(a, _constant(a)) for a in args]
        const_vals = [c for _, cs in consts if cs is not None for c in cs]
        others = [a for a, cs in consts if cs is None]
        if not const_vals or not others:
            continue
        # rule 1: an aggregate combined with a constant the task does not give
        if (_fname(node) not in _FORMATTING and not isinstance(node, _FORMATTING_CLASSES) and any(_aggregate(a, agg_names) for a in others)
                and not all(_is_given(c, given) for c in const_vals)):
            shown = next(c for c in const_vals if not _is_given(c, given))[0]
            return Observation(f"{node.sql(dialect='duckdb')[:80]} compares or combines an aggregate with {shown[:30]!r}, "
                               "a constant the question does not give: a change of it is a difference from a snapshot, "
                               "not an observation of the requirement")
        # rule 2: a negative row filter against constants read earlier and not given
        if isinstance(node, (exp.EQ, exp.NEQ, exp.NullSafeNEQ, exp.NullSafeEQ, exp.In, exp.Like, exp.ILike,
                             exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between)) and _negated(node, tree):
            seen = [c for c in const_vals if _read_earlier(c, earlier) and not _is_given(c, given)]
            if not seen:
                continue
            categorical = (all(s for _, s in seen) and all(_canon_number(t) is None for t, _ in seen)
                           and len(others) == 1 and _plain_column(others[0]) and not _looks_temporal(seen))
            if categorical:
                excludes = True
                continue
            return Observation(f"{node.sql(dialect='duckdb')[:80]} excludes rows by values read in an earlier output "
                               f"({seen[0][0][:30]!r}): what remains is what changed since, not an observation of the scope")
    return Observation(None, excludes)


#: Date-part extractions: modular arithmetic on them is calendar arithmetic (the next Monday).
_DATE_PARTS = tuple(getattr(exp, n) for n in ("DayOfWeek", "DayOfWeekIso", "DayOfMonth", "DayOfYear", "WeekOfYear",
                                              "Extract", "Hour", "Minute", "Second", "Month", "Quarter") if hasattr(exp, n))
_DATE_PART_NAMES = frozenset({"dayofweek", "isodow", "weekday", "dow", "hour", "minute", "second", "dayofyear",
                              "dayofmonth", "week", "weekofyear", "month", "date_part", "datepart"})


def _trivial_modulus(node: exp.Expression) -> bool:
    """Modular arithmetic that folds no record: ``x % 0`` (NULL), ``x % 1`` (0), and calendar
    arithmetic on a date part (``(1 - dayofweek(t) + 7) % 7``, the days to the next Monday)."""
    if not isinstance(node, exp.Mod):
        return False
    c = _constant(node.expression)
    if c is not None and len(c) == 1 and _canon_number(c[0][0]) in ("0", "1"):
        return True
    return any(isinstance(n, _DATE_PARTS) or _fname(n) in _DATE_PART_NAMES for n in node.this.walk())


def _looks_temporal(consts: list[tuple[str, bool]]) -> bool:
    return any(re.match(r"\s*\d{4}-\d{2}-\d{2}", t) for t, _ in consts)


def python_problem(code: str, given: Given, earlier: Earlier) -> str | None:
    """Rules 1-2 on a Python step's code. A text of 16+ characters read in an earlier step's
    output (``earlier``) and not given by the task (``given``), a digest or a serialised row, and a
    mapping (dict display) of two or more values read earlier are snapshots wherever they stand.
    A number read earlier and not given may select records (``== n`` or ``in``
    inside a filter: a comprehension's condition, a pandas mask), but not decide what is printed:
    compared in the test of an ``if``, a conditional expression, ``while`` or ``assert`` (``print('changed'
    if n != 17 else '')``), compared by ``!=``, ``<``, ``>``, ``not in`` anywhere, or subtracted,
    added, taken modulo or folded bitwise. What the step prints is then a difference from a
    snapshot, not an observation of the scope's records. ``None`` when there is none, or when the
    code does not parse (the replay reports that). Raises nothing.
    """
    import ast

    try:
        tree = ast.parse(code or "")
    except (SyntaxError, ValueError):
        return None
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node

    def numbers(node: ast.AST) -> list[tuple[str, bool]]:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return [(str(node.value), False)]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return [("-" + t, s) for t, s in numbers(node.operand)]
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return [c for e in node.elts for c in numbers(e)]
        return []

    def control(node: ast.AST) -> bool:
        child, cur = node, parents.get(id(node))
        while cur is not None:
            if isinstance(cur, (ast.comprehension, ast.Subscript, ast.Lambda)):
                return False
            if isinstance(cur, (ast.If, ast.IfExp, ast.While, ast.Assert)) and child is cur.test:
                return True
            if isinstance(cur, (ast.stmt,)):
                return False
            child, cur = cur, parents.get(id(cur))
        return False

    def snapshot_constant(c: ast.Constant) -> bool:
        v = c.value
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            return False
        const = (str(v), isinstance(v, str))
        return _read_earlier(const, earlier) and not _is_given(const, given) and const[0].strip().lower() not in _NEUTRAL

    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value.strip()) >= 16 \
                and snapshot_constant(node):
            return (f"line {getattr(node, 'lineno', 0)} holds {node.value.strip()[:30]!r}..., text read in an earlier output "
                    "(a digest or a serialised row): the step compares the records with a snapshot")
        if isinstance(node, ast.Dict):
            seen = [c for c in ast.walk(node) if isinstance(c, ast.Constant) and snapshot_constant(c)
                    and not (isinstance(c.value, str) and c in node.keys)]
            if len(seen) >= 2:
                return (f"line {getattr(node, 'lineno', 0)} holds a mapping of values read in an earlier output "
                        f"({', '.join(str(c.value)[:20] for c in seen[:3])}...): a snapshot of what was seen, not an "
                        "observation of the requirement")
        if isinstance(node, ast.Compare):
            positive = all(isinstance(op, (ast.Eq, ast.In, ast.Is)) for op in node.ops)
            if positive and not control(node):
                continue
            sides = [node.left, *node.comparators]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mod, ast.BitXor, ast.BitAnd, ast.BitOr)):
            sides = [node.left, node.right]
        else:
            continue
        for side in sides:
            for c in numbers(side):
                if _read_earlier(c, earlier) and not _is_given(c, given):
                    return (f"line {getattr(node, 'lineno', 0)} compares or combines a value with {c[0][:30]}, a number read in "
                            "an earlier output and not given by the question: what it prints is a difference from a "
                            "snapshot, not an observation of the requirement")
    return None
