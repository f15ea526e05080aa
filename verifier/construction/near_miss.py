"""Near misses: what an agent that drops or misreads one stated condition would answer.

Issue 33 point 2. A task is hard when a careless reading of it still finds an answer in
the database: the insulin dose given *before* the qualifying potassium, a result of
another hospitalization, the highest value instead of the lowest. Construction
records, for every task, the answers such readings give on the database the task is
played on (the base: a Noise twin differs from its Clean task in its parameters, its
gap is in the base itself; the witness is never applied).

One rule derives the readings from the reference SQL (sqlglot, DuckDB dialect):

- **drop** one condition: a conjunct of a ``WHERE``, ``JOIN ... ON`` or ``HAVING``.
  The same condition written in several places (the patient in a CTE and in the main
  query) is one stated condition and is dropped everywhere at once (its text without
  table qualifiers is its identity). Not dropped, because the question does not state
  them: null tests (``x IS NOT NULL``: the reference's handling of a missing value,
  which on a Value-level twin is the gap itself), the filters of aggregate ``FILTER``
  clauses (part of the computation), and *guards*, comparisons of a count with a
  number (``HAVING count(DISTINCT admissionid) >= 5``, ``HAVING count(*) > 0``). The
  five-unit guard stays in every perturbed query, so a population near miss always
  has a cohort of five or more units (a population reference without one gets no near
  misses). A dropped condition's kind is read from the columns it touches, first
  match in this order (``kind_of``): ``window`` (a time column, typed TIMESTAMP/DATE
  in the database), ``status`` (event_text / status / flag), ``item`` (item, label,
  medication, drug, code, organism, specimen, test or DRG-type columns, and a subquery
  filtering on them), ``encounter`` (admission / ICU-stay ids), ``scope``
  (``patientid``), ``unit`` (a unit column), ``threshold`` (another column against a
  number), else ``attribute`` (admission type, insurance, care unit, ...). Dropping
  an ``item`` or ``scope`` condition is classified but never run: it answers about
  another item or other patients, a different question, not a careless reading of
  this one (the paper's near misses keep what and whom the question asks about). A
  *link* (a column equal to a column of another table) is never dropped (a cross join
  is no reading); an encounter link (``p.admissionid = d.admissionid``) is misread as
  a link of the same patient (``p.patientid = d.patientid``), kind ``encounter``;
- **swap first and last**: ``min``<->``max``, ``arg_min``<->``arg_max``,
  ``first``<->``last``, ``first_value``<->``last_value``, and the direction of an
  ``ORDER BY`` that picks rows (with a ``LIMIT``, or inside a window); kind
  ``first_last``;
- **misread a bound**: ``>`` <-> ``>=`` and ``<`` <-> ``<=`` of a threshold condition;
  kind ``bound``.

A perturbation is a *near miss* when its answer (typed as the task's, ``typed.py``)
is not NULL and, on a Clean task, differs from the reference answer and from its tied
alternatives. Bounded and deterministic: at most ``MAX_PERTURBATIONS`` perturbations
in a fixed order (drops in the order of the SQL text, then swaps, then bounds), each
run under ``QUERY_SECONDS`` and ``ROW_CAP``; a perturbation that fails, times out or
returns more rows than the cap is skipped. The reference's own regenerated SQL must
give the reference's answer, else no near misses are recorded (the rewrite could not
be trusted). The time limit is far above what these queries take (milliseconds on
the demo), so it only stops a runaway cross join; a timeout is the one way the same
database could give another result.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable, Iterable, Sequence

import sqlglot
from sqlglot import exp

from ..contract import NearMiss
from ..sql import QueryFailed, execute_checked
from .typed import to_answer

#: At most this many perturbations are run per task.
MAX_PERTURBATIONS = 24
#: Time limit of one perturbed query (seconds).
QUERY_SECONDS = 5.0
#: A perturbed result with more rows than this is skipped (not a plausible answer).
ROW_CAP = 200
#: The five-unit rule's threshold (ARCHITECTURE.md section 4 point 5).
MIN_UNITS = 5

#: Kinds of a dropped condition, in the order ``kind_of`` tries them.
DROP_KINDS = ("window", "status", "item", "encounter", "scope", "unit", "threshold", "attribute")
#: All near-miss kinds.
KINDS = DROP_KINDS + ("first_last", "bound")
#: Dropped-condition kinds that change what or whom the question is about: not run.
SUBJECT_KINDS = ("item", "scope")
#: A task is ``hard`` when it has a near miss and states at least this many conditions
#: (issue 33 point 5; see ``difficulty``).
HARD_MIN_CONDITIONS = 3

_STATUS = re.compile(r"^(event_text|.*status.*|flag)$")
_ITEM = re.compile(r"^(itemid|label|medication|drug|.*_code|icd_version|.*_name|specimen_type|drg_type|category)$")
_ENCOUNTER = re.compile(r"^(admissionid|icuadmissionid|.*stay.*|micro_specimen_id)$")
_UNIT = re.compile(r"^(?!.*care_unit$).*unit$")
_SWAPS: tuple[tuple[type[exp.Expression], type[exp.Expression]], ...] = (
    (exp.Min, exp.Max), (exp.ArgMin, exp.ArgMax), (exp.First, exp.Last), (exp.FirstValue, exp.LastValue))
_BOUNDS: dict[type[exp.Expression], type[exp.Expression]] = {exp.GT: exp.GTE, exp.GTE: exp.GT, exp.LT: exp.LTE, exp.LTE: exp.LT}
_COMPARE = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)

Query = Callable[[str], "tuple[list[str], list[tuple]]"]


@dataclass(frozen=True)
class Perturbation:
    """One careless reading of a reference query.

    Attributes:
        kind: one of ``KINDS`` (see the module docstring).
        condition: SQL text of the dropped or changed condition (as in the reference).
        sql: the perturbed query.
    """

    kind: str
    condition: str
    sql: str


@dataclass
class NearMissResult:
    """The near misses of one task.

    Attributes:
        near_misses: the near misses found (at most one per perturbation).
        conditions: how many conditions the reference states (droppable condition groups).
        tried: perturbations run; failed: those that failed, timed out or overflowed.
        reproduced: whether the regenerated reference gave the reference's answer
            (when False nothing else was run).
    """

    near_misses: list[NearMiss] = field(default_factory=list)
    conditions: int = 0
    tried: int = 0
    failed: int = 0
    reproduced: bool = True


# -- reading the reference -------------------------------------------------------------

def _parse(sql: str) -> exp.Expression:
    return sqlglot.parse_one(sql, read="duckdb")


def _flatten(cond: exp.Expression) -> Iterable[exp.Expression]:
    while isinstance(cond, exp.Paren) and isinstance(cond.this, exp.And):
        cond = cond.this
    if isinstance(cond, exp.And):
        yield from _flatten(cond.this)
        yield from _flatten(cond.expression)
    else:
        yield cond


def _conjuncts(tree: exp.Expression) -> list[exp.Expression]:
    """Every conjunct of every WHERE, JOIN ... ON and HAVING in ``tree``, in SQL order
    (the filters of aggregate FILTER clauses are not conditions)."""
    out: list[exp.Expression] = []
    for node in tree.walk():
        if isinstance(node, (exp.Where, exp.Having)) and not isinstance(node.parent, exp.Filter):
            out.extend(_flatten(node.this))
        elif isinstance(node, exp.Join) and node.args.get("on") is not None:
            out.extend(_flatten(node.args["on"]))
    return out


def _is_null_test(c: exp.Expression) -> bool:
    inner = c.this if isinstance(c, exp.Not) else c
    return isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null)


def _number(node: exp.Expression) -> float | None:
    if isinstance(node, exp.Neg):
        v = _number(node.this)
        return None if v is None else -v
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return float(node.this)
        except ValueError:
            return None
    return None


def _is_guard(c: exp.Expression) -> bool:
    """A count compared with a number: a five-unit or non-empty guard, not a stated condition."""
    if not isinstance(c, _COMPARE):
        return False
    for side, other in ((c.this, c.expression), (c.expression, c.this)):
        if _number(other) is not None and side.find(exp.Count) is not None:
            return True
    return False


def _five_unit_guard(c: exp.Expression) -> bool:
    if not _is_guard(c):
        return False
    nums = [_number(s) for s in (c.this, c.expression)]
    return any(n is not None and n >= MIN_UNITS for n in nums)


def _identity(c: exp.Expression) -> str:
    """A condition's identity: its SQL without table qualifiers (``m.patientid = 1`` is ``patientid = 1``)."""
    bare = c.copy()
    for col in bare.find_all(exp.Column):
        col.set("table", None)
    return bare.sql(dialect="duckdb")


def _inside(node: exp.Expression, pred: Callable[[exp.Expression], bool]) -> bool:
    p = node.parent
    while p is not None:
        if pred(p):
            return True
        p = p.parent
    return False


def kind_of(condition: exp.Expression, time_columns: frozenset[str]) -> str:
    """The kind of a condition, from the columns it touches (first match of ``DROP_KINDS``).

    Args:
        condition: one conjunct.
        time_columns: lower-case names of the database's TIMESTAMP/DATE columns.
    """
    cols = {c.name.lower() for c in condition.find_all(exp.Column)}
    if cols & time_columns:
        return "window"
    if any(_STATUS.match(c) for c in cols):
        return "status"
    if any(_ITEM.match(c) for c in cols):
        return "item"
    if any(_ENCOUNTER.match(c) for c in cols):
        return "encounter"
    if "patientid" in cols:
        return "scope"
    if any(_UNIT.match(c) for c in cols):
        return "unit"
    if isinstance(condition, (*_COMPARE, exp.Between)) and any(
            _number(n) is not None for n in condition.find_all(exp.Literal, exp.Neg)):
        return "threshold"
    return "attribute"


@dataclass(frozen=True)
class _Group:
    identity: str
    kind: str
    condition: str
    positions: tuple[int, ...]
    link: bool = False


def _is_link(c: exp.Expression) -> bool:
    """A column equal to a column of another table (a join link)."""
    return (isinstance(c, exp.EQ) and isinstance(c.this, exp.Column) and isinstance(c.expression, exp.Column)
            and c.this.table != c.expression.table)


def _patient_link(c: exp.Expression) -> exp.Expression:
    """``x.admissionid = y.admissionid`` read as ``x.patientid = y.patientid``."""
    return exp.EQ(this=exp.column("patientid", table=c.this.table or None),
                  expression=exp.column("patientid", table=c.expression.table or None))


def _groups(tree: exp.Expression, time_columns: frozenset[str]) -> list[_Group]:
    """Droppable conditions of ``tree``, grouped by identity, in order of first appearance.

    A group is droppable when one of its occurrences stands outside every guard;
    occurrences inside a guard's subquery are dropped with it."""
    conj = _conjuncts(tree)
    guards = [c for c in conj if _is_guard(c)]
    guard_ids = {id(g) for g in guards}
    order: list[str] = []
    members: dict[str, list[int]] = {}
    free: dict[str, bool] = {}
    first: dict[str, exp.Expression] = {}
    for i, c in enumerate(conj):
        if id(c) in guard_ids or _is_null_test(c) or isinstance(c, exp.Boolean):
            continue
        key = _identity(c)
        if key not in members:
            order.append(key)
            members[key], free[key], first[key] = [], False, c
        members[key].append(i)
        if not _inside(c, lambda p: id(p) in guard_ids):
            free[key] = True
    out = []
    for k in order:
        if not free[k]:
            continue
        kind = kind_of(first[k], time_columns)
        link = _is_link(first[k])
        if link and kind != "encounter":
            continue  # a join link of another kind is no stated condition
        out.append(_Group(k, kind, first[k].sql(dialect="duckdb"), tuple(members[k]), link))
    return out


def stated_conditions(sql: str, time_columns: frozenset[str] = frozenset()) -> int:
    """How many conditions ``sql`` states: its droppable condition groups (see the module docstring).

    Raises:
        sqlglot.errors.ParseError: ``sql`` does not parse.
    """
    return len(_groups(_parse(sql), time_columns))


def has_five_unit_guard(sql: str) -> bool:
    """Whether ``sql`` keeps a count >= 5 guard (a population reference's five-unit rule).

    Raises:
        sqlglot.errors.ParseError: ``sql`` does not parse.
    """
    return any(_five_unit_guard(c) for c in _conjuncts(_parse(sql)))


# -- perturbations -----------------------------------------------------------------------

def _picks_rows(order: exp.Order) -> bool:
    parent = order.parent
    return isinstance(parent, exp.Window) or (isinstance(parent, exp.Select) and parent.args.get("limit") is not None)


def _swap_sites(tree: exp.Expression) -> list[exp.Expression]:
    """Aggregates and row-picking ORDER BYs whose direction a reader might take the other way."""
    swap_types = tuple(t for pair in _SWAPS for t in pair)
    conj_guards = [c for c in _conjuncts(tree) if _is_guard(c)]
    guard_ids = {id(g) for g in conj_guards}
    out = []
    for node in tree.walk():
        if isinstance(node, swap_types) or (isinstance(node, exp.Order) and _picks_rows(node)):
            if not _inside(node, lambda p: id(p) in guard_ids):
                out.append(node)
    return out


def _swapped(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Order):
        new = node.copy()
        for o in new.expressions:
            o.set("desc", not o.args.get("desc"))
        return new
    for a, b in _SWAPS:
        if type(node) is a or type(node) is b:
            other = b if type(node) is a else a
            return other(**{k: (v.copy() if isinstance(v, exp.Expression) else v) for k, v in node.args.items()})
    raise TypeError(f"no swap for {type(node).__name__}")


def perturbations(sql: str, time_columns: frozenset[str] = frozenset(), limit: int = MAX_PERTURBATIONS) -> list[Perturbation]:
    """The careless readings of ``sql``: drops, then first/last swaps, then misread bounds.

    Args:
        sql: a rendered reference query (DuckDB).
        time_columns: lower-case names of TIMESTAMP/DATE columns (for ``kind_of``).
        limit: at most this many perturbations (the first ones in the fixed order).

    Returns:
        Distinct perturbations (no two with the same SQL, none equal to ``sql``'s
        regenerated text), in the fixed order of the module docstring.

    Raises:
        sqlglot.errors.ParseError: ``sql`` does not parse.
    """
    base = _parse(sql)
    base_text = base.sql(dialect="duckdb")
    out: list[Perturbation] = []
    seen = {base_text}

    def add(kind: str, condition: str, tree: exp.Expression) -> None:
        text = tree.sql(dialect="duckdb")
        if text not in seen and len(out) < limit:
            seen.add(text)
            out.append(Perturbation(kind, condition, text))

    groups = _groups(base, time_columns)
    for g in groups:
        if g.kind in SUBJECT_KINDS:
            continue
        tree = base.copy()
        conj = _conjuncts(tree)
        for i in g.positions:
            conj[i].replace(_patient_link(conj[i]) if g.link else exp.true())
        add(g.kind, g.condition, tree)
    n_sites = len(_swap_sites(base))
    for i in range(n_sites):
        tree = base.copy()
        node = _swap_sites(tree)[i]
        condition = node.sql(dialect="duckdb")
        node.replace(_swapped(node))
        add("first_last", condition, tree)
    for g in groups:
        if g.kind != "threshold":
            continue
        tree = base.copy()
        conj = _conjuncts(tree)
        changed = False
        for i in g.positions:
            c = conj[i]
            if type(c) in _BOUNDS:
                c.replace(_BOUNDS[type(c)](this=c.this.copy(), expression=c.expression.copy()))
                changed = True
        if changed:
            add("bound", g.condition, tree)
    return out


# -- near misses -------------------------------------------------------------------------

def difficulty(near_misses: Sequence[Any], conditions: int | None) -> str:
    """``hard`` when a task has a near miss and states at least ``HARD_MIN_CONDITIONS``
    conditions, else ``standard`` (issue 33 point 5).

    Why three: a patient-level question names at least a patient, an encounter and an
    item; with three conditions to hold at once, one can be dropped while the answer
    still looks like the question's (the paper's near misses). Fewer conditions means
    a question simple enough that the reference is the obvious query.
    """
    return "hard" if near_misses and (conditions or 0) >= HARD_MIN_CONDITIONS else "standard"


def _canon(v: Any) -> Any:
    if isinstance(v, float):
        return float(f"{v:.9g}") if math.isfinite(v) else v
    if isinstance(v, dict):
        return {k: _canon(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_canon(x) for x in v]
    return v


def same_answer(a: Any, b: Any) -> bool:
    """Whether two typed answers are equal (floats to 9 significant digits)."""
    if a is None or b is None:
        return a is b
    return _canon(a.model_dump(mode="json")) == _canon(b.model_dump(mode="json"))


def find_near_misses(
    sql: str,
    answer_spec: dict[str, Any],
    run: Callable[[str], "tuple[list[str], list[tuple]]"],
    *,
    reference: Any = None,
    alternatives: Sequence[Any] = (),
    time_columns: frozenset[str] = frozenset(),
    population: bool = False,
    limit: int = MAX_PERTURBATIONS,
) -> NearMissResult:
    """Run the perturbations of ``sql`` and keep the near misses.

    Args:
        sql: the task's rendered reference query.
        answer_spec: the program's ``answer`` table (``typed.to_answer``).
        run: runs SQL with its own limits; raises ``QueryFailed`` (or a subclass) when
            the query fails, times out or returns too many rows.
        reference: the reference answer (None on a Noise task: any answer is a near miss).
        alternatives: tied answers that are as correct as ``reference``.
        time_columns: lower-case TIMESTAMP/DATE column names of the database.
        population: a population task: without a five-unit guard in ``sql`` no near
            misses are recorded (their cohorts could not be checked).
        limit: at most this many perturbations.

    Returns:
        The NearMissResult. A query that does not parse gives an empty result with
        ``reproduced`` False.
    """
    res = NearMissResult()
    try:
        res.conditions = stated_conditions(sql, time_columns)
        if population and not has_five_unit_guard(sql):
            return res
        perts = perturbations(sql, time_columns, limit)
        cols, rows = run(_parse(sql).sql(dialect="duckdb"))
    except (sqlglot.errors.SqlglotError, QueryFailed):
        res.reproduced = False
        return res
    if not same_answer(to_answer(answer_spec, cols, rows), reference):
        res.reproduced = False
        return res
    for p in perts:
        res.tried += 1
        try:
            pc, pr = run(p.sql)
            got = to_answer(answer_spec, pc, pr)
        except (QueryFailed, ValueError, TypeError):
            res.failed += 1
            continue
        if len(pr) > 1 and answer_spec.get("kind") not in ("list", "records"):
            # several rows where one value is asked: the careless reading still answers, with one of them. Which one
            # is the first answering row under the rows' total order, never DuckDB's row order (it moved with the
            # threads: clean-clone CI re-ran 43 days for a recorded 365)
            got = _first_answer(answer_spec, pc, pr)
        if got is None or any(same_answer(got, a) for a in (reference, *alternatives) if a is not None):
            continue
        res.near_misses.append(NearMiss(kind=p.kind, condition=p.condition, answer=got))
    return res


def _row_order(row: tuple) -> tuple:
    """A total order of result rows: cell by cell, NULL last, numbers by value before other values by text."""
    return tuple((c is None, not isinstance(c, (int, float, Decimal)) or isinstance(c, bool),
                  float(c) if isinstance(c, (int, float, Decimal)) and not isinstance(c, bool) else 0.0,
                  "" if c is None else str(c)) for c in row)


def _first_answer(spec: dict[str, Any], columns: list[str], rows: list[tuple]) -> Any | None:
    """The answer of the first row of ``rows``, in ``_row_order``, that gives one (None when none does): what a
    careless reading that gets several rows where one value is asked answers, independent of the rows' order."""
    for row in sorted(rows, key=_row_order):
        got = to_answer(spec, columns, [row])
        if got is not None:
            return got
    return None


def convention_misses(misses: Sequence[tuple[str, Any]], reference: Any = None,
                      alternatives: Sequence[Any] = ()) -> list[NearMiss]:
    """Near misses of kind ``convention``: the answers of readings a stated convention rules out.

    The audit (``audit.Auditor._trap``) runs the other reading of each convention of the shared
    instructions (``rules/conventions.toml``); an agent that ignores the convention answers
    that. Such an answer is a near miss as a dropped condition's is.

    Args:
        misses: ``(convention id, typed answer)`` pairs from the audit.
        reference / alternatives: the Clean reference and its ties (None on a Noise task).

    Returns:
        The new NearMiss entries, kind ``convention``, condition the convention's id.
    """
    out: list[NearMiss] = []
    for cid, got in misses:
        if got is None or any(same_answer(got, a) for a in (reference, *alternatives) if a is not None):
            continue
        out.append(NearMiss(kind="convention", condition=cid, answer=got))
    return out


def overlay_runner(con: Any, time_limit_s: float = QUERY_SECONDS, row_cap: int = ROW_CAP) -> Callable[[str], "tuple[list[str], list[tuple]]"]:
    """A ``run`` for ``find_near_misses`` on a DuckDB connection (construction's overlay).

    Raises (from the returned function):
        QueryFailed: the query failed, or returned more than ``row_cap`` rows;
        QueryTimeout (a QueryFailed): it ran past ``time_limit_s``.
    """

    def run(sql: str) -> tuple[list[str], list[tuple]]:
        res = execute_checked(con, sql, time_limit_s=time_limit_s, row_cap=row_cap)
        if res.truncated:
            raise QueryFailed(sql, f"more than {row_cap} rows")
        return list(res.columns), list(res.rows)

    return run


def time_columns_of(con: Any) -> frozenset[str]:
    """Lower-case names of every TIMESTAMP/DATE column of the attached ``base`` database
    (construction's overlay) or, without one, of the connection's own tables."""
    rows = con.execute(
        "SELECT DISTINCT lower(column_name), database_name FROM duckdb_columns() "
        "WHERE data_type LIKE 'TIMESTAMP%' OR data_type = 'DATE'").fetchall()
    in_base = {r[0] for r in rows if r[1] == "base"}
    return frozenset(in_base or {r[0] for r in rows})
