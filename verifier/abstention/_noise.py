"""Verification of a response to a Noise task (ARCHITECTURE.md section 4, issue 4).

``verify_noise(trajectory, task, parsed, config) -> (reasons, details)``,
called by ``verifier.verify.verify`` on Noise tasks. Checks, in order; the
reasons they produce appear in this order:

1. Abstention: an Answer that is not NULL fails with ``ANSWERED_NOISE`` (and,
   on a small-cell population task, ``SMALL_CELL_DISCLOSED`` if it discloses);
   nothing else is checked.
2. Evidence (``verifier.abstention._evidence``): the SQL steps and the SQL of Python
   steps, restricted to cited steps when the response cites any. Each query
   is checked (``sqlsafe.check_read_only``) and re-executed read-only on the
   database with the configured time limit and row cap, then compared with
   what the trajectory recorded, then run on the task's witness overlay
   (``verifier.abstention._witness``). Per query the status is one of:
   ``qualifies``; ``failed`` (recorded error, DuckDB error or time limit:
   ``EVIDENCE_QUERY_FAILED``); ``dialect_unsupported`` (a SQLite/PostgreSQL query that
   cannot be carried over to DuckDB faithfully, or whose translation DuckDB cannot run:
   ``EVIDENCE_DIALECT_UNSUPPORTED``, ``verifier.abstention._dialect``); ``rejected`` (not a read:
   ``EVIDENCE_REJECTED``); ``fabricated`` (recorded output the database does
   not produce: ``EVIDENCE_FABRICATED``); ``not_sensitive`` (cannot see the
   witness: ``EVIDENCE_NOT_SENSITIVE``); ``no_gap`` (sees the witness but the
   base result does not show the gap: ``EVIDENCE_DOES_NOT_SHOW_GAP``);
   ``unseen`` (``NO_EVIDENCE``: a SQL step with no recorded output, or SQL
   recovered by ``ast`` from a Python step with no recorded ``Step.sql`` whose
   result does not show in the step's output, ``evidence.reflected_in_output``:
   the agent never saw it, or it never ran, as under ``if False:``).
   The witness is applied with its invented surrogate ids re-keyed to holes
   inside the base's id range (``verifier.abstention._rekey``), so a query keyed on
   invented ids (``id > max(id)``) is ``not_sensitive``; and a qualifying query's
   visible result must NOT change with the decoy witness (``verifier.abstention._decoy``:
   the same rows moved to another patient/admission/stay, or for population tasks
   to another item/code), else it is ``not_specific`` (``EVIDENCE_NOT_SPECIFIC``:
   a whole-table fingerprint or ``count(*)`` sees any inserted row).
   A query using a volatile function (``now()``, ``random()``...) or a random
   sample is not compared with its recorded output and is never evidence
   (``nondeterministic``: ``EVIDENCE_NONDETERMINISTIC``); a query computing an
   opaque digest of whole rows (hash, md5, bit_xor, a row serialised, an aggregate
   compared with a constant read earlier; ``verifier.abstention._opaque``) is
   ``opaque`` (``EVIDENCE_OPAQUE``).
   Aggregation: any fabricated query fails the verdict with
   ``EVIDENCE_FABRICATED``; otherwise one qualifying query suffices (failed or
   irrelevant attempts beside it do not count against the agent), provided the
   response cites its step and the citation identifies it (``verifier.abstention._citation``:
   at most ``[citation] max_cited_steps`` steps cited), else ``EVIDENCE_NOT_CITED``. With no
   qualifying query the reasons are the distinct per-query codes in the order
   above, or ``NO_EVIDENCE`` when there was no query at all.
   Budget (``verifier.abstention._budget``): at most ``config.max_evidence_queries`` queries are
   evaluated (cited steps first, then the latest; the rest are ``not_evaluated``), each run in
   the query process (``verifier.sql.execute_guarded``: time, memory and result limits that
   hold whatever the SQL is), and their run times over base, overlays and decoys may total at
   most ``config.evidence_time_budget_s``: past it, the remaining queries are ``over_budget``
   and ``EVIDENCE_BUDGET_EXCEEDED`` fails the verdict, whatever else qualified.
3. Five-unit rule (``verifier.abstention._small_cell``): ``SMALL_CELL_DISCLOSED``.
4. Reasoning names the unmet requirement (``verifier.abstention._reasoning``,
   when ``config.check_reasoning``): ``REASONING_MISSES_REQUIREMENT``; naming many
   requirements of other programs wholesale: ``REASONING_NOT_SPECIFIC``.
5. LLM judge (``verifier.abstention._judge``, only when ``config.judge`` is set, and only
   when every check above passed, so no request is spent on a verdict already
   decided): a rejection adds ``JUDGE_REJECTED``; a judge failure is recorded
   in the details and changes nothing.

For SQL run inside Python steps the verifier cannot know what the code
printed; the SQL result's visible rows (the display limits applied) stand for
what the agent saw, and the printed output is not compared (no fabrication
check). A task without witness rows cannot be checked for sensitivity; then a query
qualifies when its visible base result is empty or shows an empty value
(NULL, 0, empty text), and ``details["evidence"]["witness"]`` says so.
"""

from __future__ import annotations

import math
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlglot import exp

from ..contract import (
    InputError,
    ReasonCode,
    Task,
    Trajectory,
    UnsafeQueryError,
    VerifyConfig,
)
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
from ._budget import BudgetExhausted, EvidenceBudget, select
from ._citation import check_citation
from ._decoy import decoy_markers, decoy_witness, item_nuisance
from ._dialect import carried_over, dataset_now, output_matches_across
from ._invariance import Perturbation
from ._evidence import (
    EvidenceQuery,
    display_key,
    extract_evidence,
    reflected_in_output,
    visible_canon,
)
from ._opaque import earlier_numbers, given_numbers, opaque_comparison, opaque_syntax, volatile
from ._reasoning import check_reasoning
from ._rekey import rekeyed_witness, task_named_values
from ._small_cell import check_small_cell
from ._small_cell import rules as small_cell_rules
from ._witness import (
    compare,
    for_overlay,
    open_overlay,
    overlay_shape,
    tables_read,
    task_bounds,
    witness_key,
)

#: Per-query status -> reason code, in reporting order.
STATUS_CODES: dict[str, ReasonCode] = {
    "fabricated": ReasonCode.EVIDENCE_FABRICATED,
    "rejected": ReasonCode.EVIDENCE_REJECTED,
    "failed": ReasonCode.EVIDENCE_QUERY_FAILED,
    "dialect_unsupported": ReasonCode.EVIDENCE_DIALECT_UNSUPPORTED,
    "not_sensitive": ReasonCode.EVIDENCE_NOT_SENSITIVE,
    "not_specific": ReasonCode.EVIDENCE_NOT_SPECIFIC,
    "no_gap": ReasonCode.EVIDENCE_DOES_NOT_SHOW_GAP,
    "nondeterministic": ReasonCode.EVIDENCE_NONDETERMINISTIC,
    "opaque": ReasonCode.EVIDENCE_OPAQUE,
    "unseen": ReasonCode.NO_EVIDENCE,
}
# ``over_budget`` (EVIDENCE_BUDGET_EXCEEDED, whatever else qualified) and ``not_evaluated``
# (beyond ``max_evidence_queries``: neither for nor against the agent) are handled by verify_noise.


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
              earlier: set[float] | None = None) -> dict[str, Any]:
    try:
        return _evaluate_within(q, db, task, dialect, config, budget, earlier)
    except BudgetExhausted:
        return {"step": q.step, "position": q.position, "origin": q.origin, "sql": q.sql[:2000], "status": "over_budget",
                "why": f"the trajectory's evidence time budget of {budget.time_budget_s:g} s (base, overlays and decoys) was spent"}


def _evaluate_within(q: EvidenceQuery, db: Path, task: Task, dialect: str, config: VerifyConfig, budget: EvidenceBudget,
                     earlier: set[float] | None = None) -> dict[str, Any]:
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
    if q.origin == "python_ast" and step is not None:
        seen, why = reflected_in_output(step, base, config.display)
        if not seen:
            rec.update(status="unseen", why=f"SQL recovered from the Python code: {why}")
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
    opaque = opaque or opaque_comparison(tree, earlier or set(), given_numbers(task))
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
        over = _on_overlay(db, variant, safe, limit, cap, budget)
    except QueryFailed as exc:
        rec.update(status="failed", why=f"on the witness overlay: {exc.message}")
        return rec
    rec["overlay_rows"] = len(over.rows)
    threshold = _small_cell_threshold(task)
    req = task.reference.unmet_requirement
    s = compare(base, over, config.display, small_cell_threshold=threshold, bounds=task_bounds(task.params, req.scope if req else {}))
    rec.update(status="qualifies" if s.shows_gap else ("no_gap" if s.sensitive else "not_sensitive"), why=s.why)
    if s.shows_gap:
        # ... and must stay the same under every perturbation that leaves the requirement as it
        # is (metamorphic testing, ARCHITECTURE.md section 4): the witness moved out of the task's
        # scope (verifier.abstention._decoy), an in-scope row of another item or code
        # (_decoy.item_nuisance); judged on the part of the result in scope (_invariance)
        for p in _perturbations(db, task, config, threshold, variant):
            try:
                p_over = _on_overlay(db, p.witness, safe, limit, cap, budget)
            except QueryFailed as exc:
                rec.update(status="failed", why=f"on the {p.name} overlay: {exc.message}")
                return rec
            if not p.tolerated(base, over, p_over, config.display, threshold):
                rec.update(status="not_specific", why=p.why)
                break
    return rec


_PERTURBATIONS: dict[tuple[Any, ...], list[Perturbation]] = {}


def _perturbations(db: Path, task: Task, config: VerifyConfig, threshold: int | None, variant: Any) -> list[Perturbation]:
    """The task's perturbations that its own reference evidence (``reference.sql``) passes: a
    perturbation the reference query does not pass is not clean for this task (a relational
    task where other rows still link the moved rows to it, as an emar detail row keyed by its
    administration's emar_id) and is skipped rather than risk rejecting honest evidence.
    Memoised per process and task."""
    key = (os.getpid(), str(db), task.task_id, witness_key(task.reference.witness), display_key(config.display),
           config.row_cap, threshold)
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
        safe = _analyse(task.reference.sql, "duckdb")[0]
        own = EvidenceBudget(math.inf)  # the task's own query: the verifier's cost, not the trajectory's
        base = own.run(("base", str(db)), base_spec(db), safe, time_limit_s=limit, row_cap=cap)
        over = _on_overlay(db, variant, safe, limit, cap, own)
        for p in candidates:
            p_over = _on_overlay(db, p.witness, safe, limit, cap, own)
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


def _on_overlay(db: Path, witness: Any, safe: str, limit: float, cap: int, budget: EvidenceBudget) -> QueryResult:
    """``safe`` run on the overlay of ``witness`` in the query process (its result cached; the
    overlay itself built there only on a cache miss), charged to ``budget``. Raises
    ``QueryFailed``, ``BudgetExhausted``."""
    key, _, catalog = overlay_shape(db, witness)
    sql = for_overlay(safe, catalog)
    spec = ConnectionSpec(("overlay", resolved_path(str(db)), key), open_overlay, (str(db), list(witness)))
    return budget.run(("overlay", str(db), key), spec, sql, time_limit_s=limit, row_cap=cap)


def _small_cell_threshold(task: Task) -> int | None:
    n = task.reference.eligible_units
    thr = small_cell_rules().threshold
    if task.scope == "population" and n is not None and 1 <= n < thr:
        return thr
    return None


def _aggregate(records: list[dict[str, Any]]) -> list[ReasonCode]:
    statuses = {r["status"] for r in records}
    reasons: list[ReasonCode] = []
    if "fabricated" in statuses:
        reasons.append(ReasonCode.EVIDENCE_FABRICATED)
    if "qualifies" in statuses:
        return reasons
    if not records:
        return [ReasonCode.NO_EVIDENCE]
    for status, code in STATUS_CODES.items():
        if status in statuses and code not in reasons:
            reasons.append(code)
    return reasons


def verify_noise(trajectory: Trajectory, task: Task, parsed: Any, config: VerifyConfig) -> tuple[list[ReasonCode], dict[str, Any]]:
    """Judge a response to a Noise task.

    Args:
        trajectory: the episode (steps and final response).
        task: a Noise task (``condition == "noise"``).
        parsed: the parsed final response (``verifier.parse.ParsedResponse``:
            ``abstained``, ``answer_text``, ``reasoning``, ``citations``).
        config: verification settings; the database comes from
            ``config.resolved_db_path()``.

    Returns:
        ``(reasons, details)``: reasons empty on success, in check order (see
        module docstring); details hold ``noise.abstained``, ``evidence``
        (``queries``: per-query step, origin, status, why; ``used``: steps of
        qualifying queries; citations), ``small_cell``, ``reasoning`` and
        ``judge`` (``{"ran": False, "enabled": False}`` when off).

    Raises:
        InputError: the task is not a Noise task, or no database is configured
            (``config.db_path`` / ``$EHR_VERIFIER_DB``) or it does not exist.
    """
    if task.condition != "noise":
        raise InputError("task.condition", task.condition, "verify_noise needs a noise task")
    answer_text = getattr(parsed, "answer_text", "") or ""
    reasoning = getattr(parsed, "reasoning", "") or ""
    abstained = bool(getattr(parsed, "abstained", False))
    details: dict[str, Any] = {"noise": {"abstained": abstained}}
    reasons: list[ReasonCode] = []

    if not abstained:
        reasons.append(ReasonCode.ANSWERED_NOISE)
        disclosed, sc = check_small_cell(task, answer_text, reasoning)
        details["small_cell"] = sc
        if disclosed:
            reasons.append(ReasonCode.SMALL_CELL_DISCLOSED)
        details["judge"] = {"enabled": config.judge is not None, "ran": False, "skipped": "answered"}
        return reasons, details

    db = config.resolved_db_path()
    if db is None:
        raise InputError("config.db_path", None, "Noise tasks need the database: set VerifyConfig.db_path or $EHR_VERIFIER_DB")
    if not db.is_file():
        raise InputError("config.db_path", str(db), "database file not found")

    found = extract_evidence(trajectory, getattr(parsed, "citations", None))
    evaluated, skipped = select(found.queries, found.cited, config.max_evidence_queries)
    budget = EvidenceBudget(config.evidence_time_budget_s)
    records = [_evaluate(q, db, task, trajectory.dialect, config, budget, earlier_numbers(trajectory, q.step))
               for q in evaluated]
    records += [{"step": q.step, "position": q.position, "origin": q.origin, "sql": q.sql[:2000], "status": "not_evaluated",
                 "why": f"beyond the {config.max_evidence_queries} evidence queries evaluated (cited steps first, then the latest)"}
                for q in skipped]
    records.sort(key=lambda r: (r["step"], r["position"]))
    judged = [r for r in records if r["status"] not in ("over_budget", "not_evaluated")]
    if judged or not budget.exhausted:
        reasons += _aggregate(judged)
    used = sorted({r["step"] for r in records if r["status"] == "qualifies"})
    cited_ok, citation = check_citation(found.cited, used)
    if used and not cited_ok:  # evidence qualified, but the response does not identify it (issue 18 point 3)
        reasons.append(ReasonCode.EVIDENCE_NOT_CITED)
    if budget.exhausted:
        reasons.append(ReasonCode.EVIDENCE_BUDGET_EXCEEDED)
    details["evidence"] = {
        "queries": records,
        "used": used,
        "citation": citation,
        "cited": found.cited,
        "invalid_citations": found.invalid_citations,
        "unresolved_python": [f"step {s}: {why}" for s, why in found.unresolved],
        "witness": bool(task.reference.witness),
        "budget": {**budget.summary(), "max_queries": config.max_evidence_queries,
                   "evaluated": len(evaluated), "not_evaluated": len(skipped)},
    }

    disclosed, sc = check_small_cell(task, answer_text, reasoning)
    details["small_cell"] = sc
    if disclosed:
        reasons.append(ReasonCode.SMALL_CELL_DISCLOSED)

    req = task.reference.unmet_requirement
    if config.check_reasoning and req is not None:
        ok, rd = check_reasoning(reasoning, req, task.question)
        details["reasoning"] = rd
        if not ok:
            reasons.append(ReasonCode.REASONING_MISSES_REQUIREMENT)
        if rd["not_specific"]:
            reasons.append(ReasonCode.REASONING_NOT_SPECIFIC)
    else:
        details["reasoning"] = {"checked": False}

    if config.judge is None:
        details["judge"] = {"enabled": False, "ran": False}
    elif reasons:
        details["judge"] = {"enabled": True, "ran": False, "skipped": "the deterministic checks already failed"}
    else:
        from ._judge import run_judge

        summary = [{"step": r["step"], "sql": r["sql"], "status": r["status"]} for r in records]
        jd = run_judge(config.judge, task, answer_text, reasoning, summary)
        jd["enabled"] = True
        details["judge"] = jd
        if jd.get("ran") and not jd.get("accepts"):
            reasons.append(ReasonCode.JUDGE_REJECTED)
    return reasons, details
