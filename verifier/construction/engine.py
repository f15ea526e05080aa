"""Instantiating and verifying Clean-Noise pairs of one construction program.

For every candidate row (see ``spec.py``) the engine:

1. renders the clean and twin contexts, questions, params and reference SQL;
2. checks the twin differs from its clean in exactly the program's ``vary``
   condition (from the params);
3. runs the clean reference SQL on the base: it must execute and give a typed,
   non-gap answer; population programs must count >= 5 eligible units; rows
   tied with the answer's at an ``ORDER BY ... LIMIT 1`` give the reference's
   ``alternatives`` (``ties.py``, issue 17 kind 9);
4. runs the twin reference SQL on the base: it must be a gap (abstention);
5. builds the witness rows (SQL on the base), and runs the twin reference on
   base + witness: it must now be answerable; with several witness rows, removing
   any one must make it a gap again (the fewest rows);
6. after the robustness audit, records each task's near misses and difficulty
   (``near_miss.py``, issue 33): what a reading that drops or misreads one stated
   condition answers on the base; ``run`` prefers pairs whose twin has one.

A candidate failing a check is counted under the check's reason and dropped:
``reference_sql_failed``, ``clean_unsupported``, ``clean_small_cell``,
``twin_not_one_condition``, ``twin_answerable_on_base``, ``witness_sql_failed``,
``witness_empty``, ``witness_fill_empty`` (a Value-level fill of 0, False or
empty text, which the verifier's gap check cannot tell from a missing value),
``witness_does_not_load``, ``witness_not_sufficient``,
``witness_not_minimal``, ``twin_question_identical``, ``answer_not_typed``,
``units_sql_failed``, ``relaxation_<kind>`` (the robustness audit, ``audit.py``:
the twin is answerable, or the Clean answer differs with no sentence to make
the question explicit, under a relaxation a reasonable reader might apply);
a program whose candidate SQL fails on the database
(e.g. a table the synthetic hospital lacks) counts ``candidates_sql_failed``.
Source: issue 5 point 3, ARCHITECTURE.md section 4 point 4.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any, Callable

import duckdb

from ..contract import (
    AnswerPolicy,
    QuantityAnswer,
    Reference,
    Task,
    UnmetRequirement,
    WitnessTable,
)
from .audit import Auditor, explicit_question
from .near_miss import convention_misses, difficulty, find_near_misses, overlay_runner, time_columns_of
from .overlay import Overlay
from .spec import ProgramSpec
from .sqltext import render
from .ties import tied_alternatives
from .typed import to_answer

#: Minimum eligible units for a population aggregate (ARCHITECTURE.md section 4 point 5).
MIN_UNITS = 5
TWIN = "twin_"


@dataclass
class Pair:
    """A verified Clean task and its Noise twin (split/track set later)."""

    spec: ProgramSpec
    clean: Task
    noise: Task
    patients: frozenset[int]


def jsonable(v: Any) -> Any:
    """A JSON scalar for ``v``: datetimes/dates as ISO-8601 text, Decimals as floats."""
    if isinstance(v, dt.datetime):
        return v.isoformat()
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, Decimal):
        return float(v)
    return v


@lru_cache(maxsize=1)
def _analyte_index() -> dict[str, str]:
    from ..contract import RulesError, load_toml

    try:
        data = load_toml("analytes.toml")
    except RulesError:
        return {}
    index: dict[str, str] = {}
    for key, entry in data.items():
        if isinstance(entry, dict):
            index[key.lower()] = key
            index[key.replace("_", " ").lower()] = key
            for alias in entry.get("aliases", []):
                index[str(alias).lower()] = key
    return index


def analyte_key(label: str | None) -> str | None:
    """The ``rules/analytes.toml`` key for an item label (by key or alias), else None."""
    if not label:
        return None
    return _analyte_index().get(label.strip().lower())


def fill_is_empty(value: Any) -> bool:
    """Whether a witness fill value reads as empty: 0, False, blank text or
    text spelling zero (``"0"``, ``"0.0"``). Such a fill is indistinguishable
    from a missing value by the verifier's gap check (``verifier.abstention._witness``),
    and is not a clinically plausible value. Source: issue 5 (oracle run)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float, Decimal)):
        return value == 0
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return True
        try:
            return float(text) == 0
        except ValueError:
            return False
    return False


def _policy(spec: ProgramSpec, ctx: dict[str, Any], answer: Any) -> AnswerPolicy:
    """The AnswerPolicy of a task: the program's ``policy`` templates filled from
    ``ctx``; for quantities ``db_unit`` defaults to the unit the database stores
    (the reference answer's unit, read from the value's own row), ``decimals``
    to the answer's."""
    fields: dict[str, Any] = {}
    if isinstance(answer, QuantityAnswer):
        fields["db_unit"] = answer.unit
    if getattr(answer, "decimals", None) is not None:
        fields["decimals"] = answer.decimals
    for k, v in spec.policy.items():
        if isinstance(v, str):
            v = render(v, ctx, sql=False, where=spec.source) if "{" in v else v
            if k == "analyte":
                v = analyte_key(v)
            if v in ("", "unknown", "None"):
                v = None
        fields[k] = v
    return AnswerPolicy(**fields)


def _split_contexts(row: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    clean = {k: v for k, v in row.items() if not k.startswith(TWIN)}
    twin = dict(clean)
    twin.update({k[len(TWIN):]: v for k, v in row.items() if k.startswith(TWIN)})
    twin.update({"clean_" + k: v for k, v in clean.items()})
    return clean, twin


def prefer_near_misses(pairs: list[Pair], quota: int) -> list[Pair]:
    """At most ``quota`` pairs: those whose Noise twin has a near miss first, then the
    others, each in the given (seeded) order; deterministic."""
    ranked = [p for p in pairs if p.noise.reference.near_misses] + [p for p in pairs if not p.noise.reference.near_misses]
    return ranked[:quota]


class Rejected(Exception):
    """A candidate failed a check; ``reason`` names it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ProgramRunner:
    """Builds verified pairs for one program on one overlay connection.

    Args:
        spec: the program.
        ov: the base/overlay connection.
        rng: seeded random source (candidate order, phrasings).
        accept_patients: predicate on the pair's patient ids (split rules);
            returns a rejection reason or None.
    """

    def __init__(self, spec: ProgramSpec, ov: Overlay, rng: random.Random, accept_patients: Callable[[frozenset[int]], str | None]) -> None:
        self.spec, self.ov, self.rng, self.accept_patients = spec, ov, rng, accept_patients
        self.rejections: Counter[str] = Counter()
        self.audit_counts: Counter[str] = Counter()
        self.auditor = Auditor(spec, ov)
        self.attempts = 0
        self.skipped_for_split = 0
        self._time_columns = time_columns_of(ov.con)
        self._run_limited = overlay_runner(ov.con)

    def _query(self, sql: str, reason: str) -> tuple[list[str], list[tuple]]:
        try:
            return self.ov.query(sql)
        except duckdb.Error:
            raise Rejected(reason) from None

    def _units(self, ctx: dict[str, Any]) -> int:
        _, rows = self._query(render(self.spec.units or "", ctx, sql=True, where=self.spec.source), "units_sql_failed")
        return int(rows[0][0] or 0) if rows else 0

    def run(self, quota: int) -> list[Pair]:
        """Verified pairs, at most ``quota``, trying at most ``5 * quota`` candidates.

        Pairs whose Noise twin has a near miss come first (issue 33 point 2: keep the
        twins a careless reading still answers): candidates are verified, in the
        seeded order, until ``quota`` such pairs are found or the attempts run out;
        then those pairs, then the others, each in candidate order, fill the quota.

        Returns an empty list (counted as ``candidates_sql_failed``) when the
        program's candidate SQL fails on this database (e.g. a missing table).
        """
        try:
            cols, rows = self.ov.query(self.spec.candidates)
        except duckdb.Error:
            self.rejections["candidates_sql_failed"] += 1
            return []
        cands = [dict(zip(cols, r)) for r in rows]
        self.rng.shuffle(cands)
        pairs: list[Pair] = []
        seen: set[str] = set()
        with_near_miss = 0
        for row in cands:
            if with_near_miss >= quota or self.attempts >= 5 * quota:
                break
            clean_ctx, twin_ctx = _split_contexts(row)
            key = json.dumps([jsonable(clean_ctx.get(p)) for p in self.spec.params], default=str)
            tkey = "twin:" + json.dumps([jsonable(twin_ctx.get(p)) for p in self.spec.params], default=str)
            if key in seen or tkey in seen:
                continue
            if self.spec.scope == "patient":
                pats = frozenset(int(c["patientid"]) for c in (clean_ctx, twin_ctx) if c.get("patientid") is not None)
                if self.accept_patients(pats):
                    self.skipped_for_split += 1  # outside this program's split: not a verification failure
                    continue
            self.attempts += 1
            try:
                pair = self._verify(clean_ctx, twin_ctx)
            except Rejected as rej:
                self.rejections[rej.reason] += 1
                continue
            except (ValueError, TypeError):
                # a value that does not fit its typed answer (e.g. a negative
                # count) or cannot be rendered: this candidate only
                self.rejections["answer_not_typed"] += 1
                continue
            seen.update((key, tkey))
            pairs.append(pair)
            with_near_miss += bool(pair.noise.reference.near_misses)
        return prefer_near_misses(pairs, quota)

    def verify_candidate(self, row: dict[str, Any]) -> Pair:
        """Verify one candidate row (columns of the program's ``candidates`` SQL),
        ignoring quotas and splits (tests, review tools).

        Raises:
            Rejected: a check failed; ``reason`` names it (see the module docstring).
        """
        clean_ctx, twin_ctx = _split_contexts(row)
        return self._verify(clean_ctx, twin_ctx)

    def _verify(self, clean_ctx: dict[str, Any], twin_ctx: dict[str, Any]) -> Pair:
        spec = self.spec
        clean_params = {p: jsonable(clean_ctx.get(p)) for p in spec.params}
        twin_params = {p: jsonable(twin_ctx.get(p)) for p in spec.params}
        differ = {p for p in spec.params if clean_params[p] != twin_params[p]}
        if differ != {spec.vary}:
            raise Rejected("twin_not_one_condition")
        patients = frozenset(int(c["patientid"]) for c in (clean_ctx, twin_ctx) if c.get("patientid") is not None)
        # Clean: executes, supported, five-unit rule.
        clean_sql = render(spec.reference, clean_ctx, sql=True, where=spec.source)
        cols, rows = self._query(clean_sql, "reference_sql_failed")
        answer = to_answer(spec.answer, cols, rows)
        if answer is None:
            raise Rejected("clean_unsupported")
        try:
            alternatives = tied_alternatives(clean_sql, spec.answer, self.ov.query, answer)
        except (duckdb.Error, ValueError, TypeError):
            alternatives = []  # the ties cannot be listed: the reference stays the only answer
        clean_units = twin_units = None
        if spec.scope == "population":
            clean_units = self._units(clean_ctx)
            if clean_units < MIN_UNITS:
                raise Rejected("clean_small_cell")
            twin_units = self._units(twin_ctx)
        # Twin: a gap on the base.
        twin_sql = render(spec.reference, twin_ctx, sql=True, where=spec.source)
        tcols, trows = self._query(twin_sql, "reference_sql_failed")
        if to_answer(spec.answer, tcols, trows) is not None:
            raise Rejected("twin_answerable_on_base")
        wctx = dict(twin_ctx, units=twin_units or 0, need=MIN_UNITS - (twin_units or 0))
        witness = self._witness(wctx)
        self._check_fills(witness)
        overlay_units = None
        try:
            with self.ov.applied(witness):
                ocols, orows = self.ov.query(twin_sql)
                if spec.scope == "population":
                    overlay_units = self._units(wctx)
        except (duckdb.Error, KeyError):
            raise Rejected("witness_does_not_load") from None
        overlay_answer = to_answer(spec.answer, ocols, orows)
        if overlay_answer is None:
            raise Rejected("witness_not_sufficient")
        n_rows = sum(len(w.rows) for w in witness)
        # Fewest rows: when k rows lift the eligible units from 5-k to exactly 5,
        # each row adds one unit and none can go (counting argument); otherwise
        # drop each row in turn and require the gap to come back.
        if not (overlay_units == MIN_UNITS and n_rows == MIN_UNITS - (twin_units or 0)):
            self._check_minimal(witness, twin_sql)
        audit = self.auditor.run(clean_ctx, twin_ctx, clean_sql, twin_sql, answer)
        self.audit_counts.update(audit.counts)
        if audit.reject:
            raise Rejected(audit.reject)
        questions = spec.questions
        phr = self.rng.randrange(len(questions))
        q_clean = explicit_question(render(questions[phr], clean_ctx, sql=False, where=spec.source), audit.explicit_clean)
        q_twin = explicit_question(render(questions[phr], twin_ctx, sql=False, where=spec.source), audit.explicit_twin)
        if q_clean == q_twin:
            raise Rejected("twin_question_identical")
        pair_id = spec.name + "-" + hashlib.sha1(json.dumps(clean_params, sort_keys=True, default=str).encode()).hexdigest()[:10]
        unmet = UnmetRequirement(
            level=spec.noise,
            statement=render(spec.unmet, twin_ctx, sql=False, where=spec.source),
            tables=list(spec.tables),
            columns=list(spec.columns),
            scope={k: jsonable(twin_ctx[k]) for k in spec.scope_keys if twin_ctx.get(k) is not None},
            key_terms=[render(t, twin_ctx, sql=False, where=spec.source) for t in spec.key_terms],
        )
        common = dict(pair_id=pair_id, scope=spec.scope, intent=spec.intent, program=spec.name)
        near = {c: find_near_misses(sql, spec.answer, self._run_limited, reference=ref, alternatives=alts,
                                    time_columns=self._time_columns, population=spec.scope == "population")
                for c, sql, ref, alts in (("clean", clean_sql, answer, alternatives), ("noise", twin_sql, None, ()))}
        for c, misses in (("clean", audit.clean_misses), ("noise", audit.twin_misses)):
            near[c].near_misses.extend(convention_misses(misses, answer if c == "clean" else None, alternatives))
        clean = Task(
            task_id=pair_id + "-clean", question=q_clean, condition="clean", params=clean_params,
            reference=Reference(sql=clean_sql, answer=answer, answer_policy=_policy(spec, clean_ctx, answer), eligible_units=clean_units,
                                audit=audit.entries, alternatives=alternatives,
                                near_misses=near["clean"].near_misses, conditions=near["clean"].conditions),
            difficulty=difficulty(near["clean"].near_misses, near["clean"].conditions), **common,
        )
        noise = Task(
            task_id=pair_id + "-noise", question=q_twin, condition="noise", noise_type=spec.noise, params=twin_params,
            reference=Reference(sql=twin_sql, answer=None, answer_policy=_policy(spec, twin_ctx, overlay_answer), eligible_units=twin_units,
                                unmet_requirement=unmet, witness=witness, audit=audit.twin_entries,
                                near_misses=near["noise"].near_misses, conditions=near["noise"].conditions),
            difficulty=difficulty(near["noise"].near_misses, near["noise"].conditions), **common,
        )
        return Pair(spec, clean, noise, patients)

    def _witness(self, ctx: dict[str, Any]) -> list[WitnessTable]:
        out = []
        for w in self.spec.witness:
            cols, rows = self._query(render(w.sql, ctx, sql=True, where=self.spec.source), "witness_sql_failed")
            if not rows:
                raise Rejected("witness_empty")
            out.append(WitnessTable(table=w.table, mode=w.mode, key=list(w.key),
                                    rows=[{c: jsonable(v) for c, v in zip(cols, r)} for r in rows]))
        return out

    def _check_fills(self, witness: list[WitnessTable]) -> None:
        """Reject a replacement whose filled field (a column that differs from
        the base row with the same key) is empty by the verifier's gap rule.

        Raises:
            Rejected: ``witness_fill_empty``.
        """
        for w in witness:
            if w.mode != "replace":
                continue
            where = " AND ".join(f'"{k}" IS NOT DISTINCT FROM ?' for k in w.key)
            for row in w.rows:
                base = self.ov.base_row(w.table, where, [row[k] for k in w.key])
                if base is None:
                    continue
                for col, val in row.items():
                    if jsonable(base.get(col)) != val and val is not None and fill_is_empty(val):
                        raise Rejected("witness_fill_empty")

    def _check_minimal(self, witness: list[WitnessTable], sql: str) -> None:
        if sum(len(w.rows) for w in witness) < 2:
            return
        for i, w in enumerate(witness):
            for j in range(len(w.rows)):
                rest = [x for x in w.rows[:j] + w.rows[j + 1:]]
                smaller = witness[:i] + ([w.model_copy(update={"rows": rest})] if rest else []) + witness[i + 1:]
                with self.ov.applied(smaller):
                    c, r = self.ov.query(sql)
                if to_answer(self.spec.answer, c, r) is not None:
                    raise Rejected("witness_not_minimal")
