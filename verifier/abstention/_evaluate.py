"""Evaluation of one evidence query of a Noise response (ARCHITECTURE.md section 4, steps 3-8).

``_evaluate(query, db, task, dialect, config, budget, earlier) -> record`` gives the per-query
record ``verifier.abstention._noise.verify_noise`` aggregates: the query's step, origin, SQL,
``status`` (``qualifies``, ``failed``, ``dialect_unsupported``, ``rejected``, ``fabricated``,
``not_sensitive``, ``no_gap``, ``not_specific``, ``nondeterministic``, ``opaque``, ``unseen``,
``over_budget``; their meaning in ``_noise``'s module docstring) and ``why``. In order: the
read-only check and analysis of the SQL (memoised per text and token stream), the re-execution on
the database, whether the agent saw it, the fabrication check, the opaque-digest check, the
re-keyed witness overlay and the comparison with the base, then the perturbations (decoy and
item nuisance) calibrated on the task's own reference query. Every run is charged to the
trajectory's ``EvidenceBudget``.

Imports the other passes of ``verifier.abstention`` and ``verifier.sql``.
"""

from __future__ import annotations

import math
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from ..contract import Task, UnsafeQueryError, VerifyConfig
from ..sql import (
    DialectUnsupported,
    ConnectionSpec,
    QueryFailed,
    QueryTimeout,
    QueryResult,
    base_spec,
    parse_checked,
    resolved_path,
    token_key,
    tokenize,
)
from ..sql import _cache as query_cache
from ._budget import BudgetExhausted, EvidenceBudget
from ._decoy import decoy_markers, decoy_witness, item_nuisance
from ._derivable import overlay_from_base
from ._dialect import carried_over, dataset_now, output_matches_across
from ._invariance import Perturbation
from ._evidence import EvidenceQuery, display_key, reflected_in_output, visible_canon
from ._observation import Earlier, given_by, problem
from ._opaque import opaque_syntax, volatile
from ._rekey import rekeyed_witness, task_named_values
from ._small_cell import rules as small_cell_rules
from ._witness import (
    base_columns,
    compare,
    for_overlay,
    open_overlay,
    overlay_shape,
    tables_read,
    task_bounds,
    witness_key,
)

#: (checked SQL, tables read or None for introspection, volatile, why the query is an opaque digest or None, tree)
Analysis = tuple[str, frozenset[str] | None, bool, str | None, exp.Expression]

#: Analyses of accepted queries, keyed by ``sqlsafe.token_key`` (bounded LRU): texts that
#: differ only in keyword case, whitespace or comments share one sqlglot parse.
_BY_TOKENS: "query_cache.LRU[tuple[str, tuple[tuple[str, str], ...]], Analysis]" = query_cache.LRU(65536)


@lru_cache(maxsize=65536)
def _analyse(sql: str, dialect: str) -> Analysis:
    """Checked DuckDB SQL, the tables it reads (``None``: introspection), whether
    it is volatile, why it is opaque (``_opaque``) and its tree (read-only); memoised per raw text, and per token stream
    (``sqlsafe.token_key``) for accepted queries, so cosmetic variants of one
    query (GRPO samples of a task) are parsed once. A rejected query is always
    analysed from its own text (its reason quotes it). Raises ``UnsafeQueryError``."""
    tokens = tokenize(sql, dialect)  # once, for the key and the parse
    key = None if tokens is None else token_key(sql, dialect, tokens)
    if key is not None:
        found = _BY_TOKENS.get((dialect, key))
        if found is not None:
            return found
    result = _analyse_text(sql, dialect, tokens)
    if key is not None:
        _BY_TOKENS.put((dialect, key), result)
    return result


def _analyse_text(sql: str, dialect: str, tokens: list[Any] | None = None) -> Analysis:
    safe, tree = parse_checked(sql, dialect, tokens=tokens)
    read = tables_read(tree)
    return safe, (None if read is None else frozenset(read)), volatile(tree), opaque_syntax(tree), tree


def _empty_cell(v: Any) -> bool:
    return v is None or v is False or v == 0 or (isinstance(v, str) and not v.strip())


def _evaluate(q: EvidenceQuery, db: Path, task: Task, dialect: str, config: VerifyConfig, budget: EvidenceBudget,
              earlier: Earlier | None = None) -> dict[str, Any]:
    try:
        return _evaluate_within(q, db, task, dialect, config, budget, earlier)
    except BudgetExhausted:
        return {"step": q.step, "position": q.position, "origin": q.origin, "sql": q.sql[:2000], "status": "over_budget",
                "why": f"the trajectory's evidence time budget of {budget.time_budget_s:g} s (base, overlays and decoys) was spent"}


def _evaluate_within(q: EvidenceQuery, db: Path, task: Task, dialect: str, config: VerifyConfig, budget: EvidenceBudget,
                     earlier: Earlier | None = None) -> dict[str, Any]:
    rec: dict[str, Any] = {"step": q.step, "position": q.position, "origin": q.origin, "sql": q.sql[:2000]}
    if q.failed:
        rec.update(status="failed", why=f"the step failed when the agent ran it: {q.failed[:300]}")
        return rec
    step = q.step_ref
    try:
        if dialect == "duckdb":
            safe, read, is_volatile, opaque, tree = _analyse(q.sql, dialect)
        else:  # SQLite / PostgreSQL evidence, carried over with its dialect's semantics (_dialect)
            safe, read, is_volatile, opaque, tree = _analyse(carried_over(q.sql, dialect, db, dataset_now(task, config)), "duckdb")
            rec["duckdb_sql"] = safe[:2000]
    except DialectUnsupported as exc:
        rec.update(status="dialect_unsupported", why=exc.reason)
        return rec
    except UnsafeQueryError as exc:
        rec.update(status="rejected", why=exc.reason)
        return rec
    limit, cap = config.query_time_limit_s, config.row_cap
    try:
        base = budget.run(("base", str(db)), base_spec(db), safe, time_limit_s=limit, row_cap=cap)
    except QueryFailed as exc:
        if dialect != "duckdb" and not isinstance(exc, QueryTimeout):
            # the step ran on its own engine; DuckDB failing on the translation is not the agent's
            rec.update(status="dialect_unsupported", why=f"the DuckDB translation of this {dialect} query fails: {exc.message}")
            return rec
        rec.update(status="failed", why=exc.message)
        return rec
    rec["base_rows"] = len(base.rows)
    if q.origin == "sql" and step is not None and not (step.output or "").strip() and step.rows is None:
        rec.update(status="unseen", why="the step recorded no output: a result the agent never saw is not evidence")
        return rec
    if q.origin != "sql" and step is not None:
        # a Python step's query counts by its rows only when they show in what the step printed
        # (the code may print anything else: a dump of every table printing its sizes); the step
        # itself is then judged by what it printed (_printed)
        seen, why = reflected_in_output(step, base, config.display)
        if not seen:
            origin = "recovered from the Python code" if q.origin == "python_ast" else "run by the Python step"
            rec.update(status="unseen", why=f"SQL {origin}: {why}")
            return rec
    if is_volatile:
        rec["recorded_output"] = "not compared: the query uses a volatile function (now(), random(), ...)"
        rec.update(status="nondeterministic",
                   why="a volatile function or random sample gives another result on every run: never evidence")
        return rec
    if q.step_ref is not None:
        ok, why = output_matches_across(q.step_ref, base, config.display, dialect)
        rec["recorded_output"] = why
        if not ok:
            rec.update(status="fabricated", why=why)
            return rec
    # what the query computes must be an observation of the scope, not a comparison with what
    # the agent read before (verifier.abstention._observation, issue 30)
    # (a SQLite/PostgreSQL query is judged as the agent wrote it: its DuckDB translation adds constants of its own)
    observed = problem(tree if dialect == "duckdb" else _own_tree(q.sql, dialect, tree),
                       given_by(task, _population_threshold(task)), earlier or Earlier(frozenset(), ""))
    opaque = opaque or observed.why
    if opaque:
        rec.update(status="opaque", why=opaque)
        return rec
    witness = task.reference.witness
    if not witness:
        visible = visible_canon(base, config.display)
        gap = not visible or any(_empty_cell(v) for row in visible for v in row)
        rec.update(status="qualifies" if gap else "no_gap",
                   why="no witness rows: " + ("the base result shows an absence or empty value" if gap else "the base result shows no absence"))
        return rec
    if read is None:
        rec.update(status="not_sensitive", why="schema introspection cannot see witness rows")
        return rec
    # The witness as the query sees it has its invented surrogate ids re-keyed to
    # pseudo-random holes inside the base's id range (verifier.abstention._rekey): honest
    # evidence does not depend on those ids, a query aimed at them (``id > max(id)``,
    # ``id = max(id) + 1``) cannot see the rows.
    variant = rekeyed_witness(db, witness, task_named_values(task)) or witness
    # the overlay's shape first; the overlay itself only if its result is not cached
    _, overlay_tables, _ = overlay_shape(db, variant)
    if not read & overlay_tables:
        rec.update(status="not_sensitive", why=f"reads {sorted(read) or 'no table'}, none of the witnessed tables {sorted(overlay_tables)}")
        return rec
    try:
        over = _overlay_result(db, variant, safe, tree, base, limit, cap, budget)
    except QueryFailed as exc:
        rec.update(status="failed", why=f"on the witness overlay: {exc.message}")
        return rec
    rec["overlay_rows"] = len(over.rows)
    threshold = _small_cell_threshold(task)
    req = task.reference.unmet_requirement
    s = compare(base, over, config.display, small_cell_threshold=threshold, bounds=task_bounds(task.params, req.scope if req else {}))
    rec.update(status="qualifies" if s.shows_gap else ("no_gap" if s.sensitive else "not_sensitive"), why=s.why)
    cut = partial_listing(tree, base, variant, req.columns if req else ()) if s.shows_gap else None
    if cut is not None:
        rec.update(status="no_gap", why=cut)
        return rec
    if s.shows_gap and safe != reference_safe(task):
        # ... and must stay the same under every perturbation that leaves the requirement as it
        # is (metamorphic testing, ARCHITECTURE.md section 4): the witness moved out of the task's
        # scope (verifier.abstention._decoy), an in-scope row of another item or code
        # (_decoy.item_nuisance); judged on the part of the result in scope (_invariance).
        # Not for the task's own reference query: the perturbations kept are those it passes
        # (``_perturbations`` runs these very checks on it, with the same results), so it cannot
        # fail them, and neither their overlays nor their runs are needed (issue 15); runs not made
        # are not charged to the evidence budget.
        for p in _perturbations(db, task, config, threshold, variant):
            try:
                p_over = _overlay_result(db, p.witness, safe, tree, base, limit, cap, budget)
            except QueryFailed as exc:
                rec.update(status="failed", why=f"on the {p.name} overlay: {exc.message}")
                return rec
            if not p.tolerated(base, over, p_over, config.display, threshold, strict_empty=observed.excludes):
                rec.update(status="not_specific", why=p.why)
                break
    return rec


def partial_listing(tree: exp.Expression, base: QueryResult, witness: Any, columns: Any) -> str | None:
    """Why a result cut by its LIMIT cannot display the gap, else ``None`` (issue 30 point 1a: evidence displays the
    gap to a reader).

    A query whose outermost LIMIT the base result filled shows the first rows of what it selects, so it can show a
    value in them, never that a row is absent. Where the witness only adds rows (an absent record, a relation no row
    satisfies), such a result displays no gap, unless its order is one a reader follows on the requirement's own
    columns: the first or last rows by a time or value the requirement names ("ORDER BY chart_time DESC LIMIT 1", the
    latest; "ORDER BY value_numeric DESC LIMIT 1", the highest). "ORDER BY ALL LIMIT 60" or no order at all is a
    sample of the scope (fresh adversary adv20: an output-blind policy's scope listings cut at 50 or 60 rows were its
    only evidence on 10 of 47 paid Noise tasks).

    Args:
        tree: the query's checked DuckDB syntax tree.
        base: its result on the database.
        witness: the overlay's witness tables (``mode`` ``insert`` adds rows).
        columns: the requirement's columns (``"table.column"``).

    Returns:
        The reason (for the ``no_gap`` record), or ``None``. Raises nothing.
    """
    limit = tree.args.get("limit") if isinstance(tree, exp.Query) else None
    n = limit.expression if isinstance(limit, exp.Limit) else None
    if not isinstance(n, exp.Literal) or n.is_string or not str(n.this).isdigit():
        return None
    k = int(str(n.this))
    if isinstance(tree, exp.Select) and not tree.args.get("group") and any(e.find(exp.AggFunc) for e in tree.expressions):
        return None  # an aggregate over all the rows it selects is one row: its LIMIT cuts nothing
    if k < 1 or len(base.rows) < k or not witness or any(getattr(w, "mode", "insert") != "insert" for w in witness):
        return None
    wanted = {str(c).rsplit(".", 1)[-1].lower() for c in columns or ()}
    order = tree.args.get("order")
    keys = [o.this for o in order.expressions] if isinstance(order, exp.Order) else []
    if keys and isinstance(keys[0], exp.Column) and keys[0].name.lower() in wanted:
        return None  # the first or last rows by the requirement's own time or value
    return (f"the result fills its LIMIT {k}: it shows the first {k} rows of what it selects"
            f"{' in no order' if not keys else ' ordered by ' + keys[0].sql(dialect='duckdb')}, not that a row is absent")


@lru_cache(maxsize=4096)
def _parsed(sql: str, dialect: str) -> exp.Expression | None:
    try:
        return sqlglot.parse_one(sql, read=dialect)
    except Exception:  # noqa: BLE001 - the checked translation is judged instead
        return None


def _own_tree(sql: str, dialect: str, translated: exp.Expression) -> exp.Expression:
    """The tree of ``sql`` in its own ``dialect`` (read-only: memoised), or ``translated`` when it does not parse."""
    return _parsed(sql, dialect) or translated


def reference_safe(task: Task) -> str | None:
    """The task's reference SQL as checked DuckDB SQL, the form an evidence query's own checked SQL
    takes: an evidence query with this text is the task's reference query, which passes every
    perturbation its calibration keeps (ARCHITECTURE.md section 4, step 8), so it is not run on them.

    Args:
        task: the task (its ``reference.sql`` is read).

    Returns:
        The checked SQL (``_analyse``: keyword case, whitespace, comments and a trailing ``;``
        give the same text), or ``None`` when the reference does not pass the read-only check.
        Memoised per text, a refusal too. Raises nothing.
    """
    return _checked_or_none(task.reference.sql)


@lru_cache(maxsize=4096)
def _checked_or_none(sql: str) -> str | None:
    try:
        return _analyse(sql, "duckdb")[0]
    except UnsafeQueryError:
        return None


_PERTURBATIONS: dict[tuple[Any, ...], list[Perturbation]] = {}


def _perturbations(db: Path, task: Task, config: VerifyConfig, threshold: int | None, variant: Any) -> list[Perturbation]:
    """The task's perturbations that its own reference evidence (``reference.sql``) passes: a
    perturbation the reference query does not pass is not clean for this task (a relational
    task where other rows still link the moved rows to it, as an emar detail row keyed by its
    administration's emar_id) and is skipped rather than risk rejecting honest evidence.
    Memoised per process on everything the perturbations and their calibration are made of (the
    reference SQL, the witness and its re-keyed variant, the task's scope, question and named
    values, the display, row cap, time limit and small-cell threshold), so a task changed in
    place is calibrated anew."""
    key = (os.getpid(), str(db), task.reference.sql, witness_key(task.reference.witness),
           witness_key(variant) if variant else None, task.scope, task.question, tuple(sorted(task_named_values(task))),
           display_key(config.display), config.row_cap, config.query_time_limit_s, threshold)
    if key in _PERTURBATIONS:
        return _PERTURBATIONS[key]
    candidates: list[Perturbation] = []
    decoy = decoy_witness(db, task)
    if decoy is not None:
        candidates.append(Perturbation("decoy", decoy, *decoy_markers(db, task)))
    nuisance = item_nuisance(db, task, variant)
    if nuisance is not None:
        candidates.append(Perturbation("nuisance", *nuisance))
    out: list[Perturbation] = []
    limit, cap = config.query_time_limit_s, config.row_cap
    try:
        analysis = _analyse(task.reference.sql, "duckdb")
        safe, tree = analysis[0], analysis[4]
        own = EvidenceBudget(math.inf)  # the task's own query: the verifier's cost, not the trajectory's
        base = own.run(("base", str(db)), base_spec(db), safe, time_limit_s=limit, row_cap=cap)
        over = _overlay_result(db, variant, safe, tree, base, limit, cap, own)
        for p in candidates:
            p_over = _overlay_result(db, p.witness, safe, tree, base, limit, cap, own)
            # the decoy stays strict on the reference: it must not see the moved rows at all
            clean = (not compare(base, p_over, config.display, small_cell_threshold=threshold).sensitive
                     if p.name == "decoy" else p.tolerated(base, over, p_over, config.display, threshold))
            if clean:
                out.append(p)
    except (UnsafeQueryError, QueryFailed):
        out = []  # cannot calibrate: no perturbation check
    if len(_PERTURBATIONS) >= 65536:
        _PERTURBATIONS.clear()
    _PERTURBATIONS[key] = out
    return out


def _overlay_result(db: Path, witness: Any, safe: str, tree: exp.Expression, base: QueryResult, limit: float, cap: int,
                    budget: EvidenceBudget) -> QueryResult:
    """``safe``'s result on the overlay of ``witness``: derived from its ``base`` result where the
    overlay cannot change it otherwise (``_derivable.overlay_from_base``: a plain read whose LIMIT
    the base fills, a whole-table count; no run, nothing charged), else run (``_on_overlay``).
    Raises ``QueryFailed``, ``BudgetExhausted``."""
    derived = overlay_from_base(tree, base, witness, base_columns(db))
    return derived if derived is not None else _on_overlay(db, witness, safe, limit, cap, budget)


def _on_overlay(db: Path, witness: Any, safe: str, limit: float, cap: int, budget: EvidenceBudget) -> QueryResult:
    """``safe`` run on the overlay of ``witness`` in the query process (its result cached; the
    overlay itself built there only on a cache miss), charged to ``budget``. Raises
    ``QueryFailed``, ``BudgetExhausted``."""
    key, _, catalog = overlay_shape(db, witness)
    sql = for_overlay(safe, catalog)
    spec = ConnectionSpec(("overlay", resolved_path(str(db)), key), open_overlay, (str(db), list(witness)))
    return budget.run(("overlay", str(db), key), spec, sql, time_limit_s=limit, row_cap=cap)


def _population_threshold(task: Task) -> int | None:
    """The five-unit threshold on a population task (a constant every population question gives,
    ``_observation.given_by``), else ``None``."""
    return small_cell_rules().threshold if task.scope == "population" else None


def _small_cell_threshold(task: Task) -> int | None:
    n = task.reference.eligible_units
    thr = small_cell_rules().threshold
    if task.scope == "population" and n is not None and 1 <= n < thr:
        return thr
    return None
