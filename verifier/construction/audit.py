"""The robustness audit of a Clean-Noise pair (issue 12 point 1).

For each relaxation the program declares (``relax.py``), the reference is run as a
reader applying it would run it:

- the Noise twin must stay unanswerable under every relaxation, else the pair is
  rejected as ``relaxation_<kind>`` (a twin is never "made explicit": an agent that
  reads the question the other way would find an answer in the database), except
  when the relaxation ``settles_twin`` (``absent``: "no event read as zero"; a
  comment-only value on a "no numeric value" twin): then its sentence, added to both
  twins, states the reading and the twin's unmet requirement becomes the rule;
- the Clean answer must be the same under the relaxation; when it differs, the
  question is made explicit with the relaxation's ``explicit`` sentence (added to
  both twins, so they still differ in one condition only), or, without one, the
  pair is rejected as ``relaxation_<kind>``.

A relaxation that a reading convention of the shared instructions settles
(``rules/conventions.toml``, ``verifier.database.conventions``; issue 33 point 1) is a trap, not
an ambiguity: neither outcome above applies, the pair is kept without a sentence, and
what the other reading answers is recorded (outcome ``convention``) as its near miss.

Population programs also get the ``units`` relaxation without declaring it (issue 12
point 2: the unit of counting for the five-unit rule): when the eligible units are
admissions or ICU stays, a reader might count patients; a Clean question with five or
more admissions but fewer than five patients states which units the rule counts.

Each relaxation's outcome is recorded on both tasks (``Reference.audit``) for review
sheets, and counted per kind in the construction report.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import duckdb

from ..contract import AuditEntry
from ..database.conventions import Convention, settling
from .overlay import Overlay
from .relax import relaxed_sql
from .spec import ProgramSpec
from .sqltext import render
from .typed import to_answer


@dataclass
class AuditResult:
    """Outcome of the audit of one candidate pair.

    Attributes:
        reject: ``relaxation_<kind>`` when the pair must go, else None.
        entries / twin_entries: one AuditEntry per declared relaxation for the
            Clean task and for its Noise twin (when not rejected).
        explicit_clean / explicit_twin: sentences to add to the questions.
        counts: ``kind|outcome`` counts for the report (outcomes ``same``,
            ``explicit``, ``not_applicable``, ``twin_answerable``, ``clean_differs``,
            ``sql_failed``, ``convention``).
        clean_misses / twin_misses: ``(convention id, answer)`` for each stated convention
            whose other reading answers differently (Clean) or answers at all (twin): the
            near misses of an agent that ignores the convention (``near_miss``, kind
            ``convention``).
    """

    reject: str | None = None
    entries: list[AuditEntry] = field(default_factory=list)
    twin_entries: list[AuditEntry] = field(default_factory=list)
    explicit_clean: list[str] = field(default_factory=list)
    explicit_twin: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    clean_misses: list[tuple[str, Any]] = field(default_factory=list)
    twin_misses: list[tuple[str, Any]] = field(default_factory=list)


#: ``count(DISTINCT [t.]admissionid|icuadmissionid)`` in a program's ``units`` SQL.
_UNIT_COUNT = re.compile(r"count\(\s*DISTINCT\s+((?:\w+\.)?)(admissionid|icuadmissionid)\s*\)", re.I)
_UNIT_NOUN = {"admissionid": "admissions", "icuadmissionid": "ICU stays"}
MIN_UNITS = 5


def _show(answer: Any) -> str:
    """A typed answer as reviewers read it in an audit entry (at most 200 characters)."""
    return str(answer)[:200]


def patient_units_sql(units_sql: str) -> tuple[str | None, str]:
    """The ``units`` SQL counting distinct patients instead of admissions / ICU stays.

    Returns:
        (the rewritten SQL or None when it counts neither, the unit noun it counted).
    """
    m = _UNIT_COUNT.search(units_sql)
    if not m:
        return None, ""
    return _UNIT_COUNT.sub(lambda x: f"count(DISTINCT {x.group(1)}patientid)", units_sql), _UNIT_NOUN[m.group(2).lower()]


class Auditor:
    """Runs a program's relaxations on one overlay connection (the base, no witness).

    Args:
        spec: the program (``spec.relax`` are its relaxations).
        ov: the connection; distinct names per column are read once per Overlay.
    """

    def __init__(self, spec: ProgramSpec, ov: Overlay) -> None:
        self.spec, self.ov = spec, ov

    def _names(self, table: str, column: str) -> list[str]:
        return self.ov.distinct(table, column)

    def _answer(self, sql: str) -> Any:
        cols, rows = self.ov.query(sql)
        return to_answer(self.spec.answer, cols, rows)

    def run(self, clean_ctx: dict[str, Any], twin_ctx: dict[str, Any], clean_sql: str, twin_sql: str, answer: Any) -> AuditResult:
        """Audit one candidate pair.

        Args:
            clean_ctx / twin_ctx: the contexts (params and display fields).
            clean_sql / twin_sql: the rendered references.
            answer: the Clean reference answer (typed).

        Returns:
            The AuditResult; ``reject`` set on the first relaxation that fails.
        """
        res = AuditResult()
        where = self.spec.source
        names: Callable[[str, str], list[str]] = self._names
        for r in self.spec.relax:
            conv = settling(r.kind, r.group, r.table if r.kind == "name" else None, self.spec.tables)
            if conv is not None:
                if not self._trap(res, r, conv, clean_ctx, twin_ctx, clean_sql, twin_sql, answer, names):
                    return res
                continue
            try:
                tsql, tdetail = relaxed_sql(r, twin_ctx, twin_sql, names, where)
                twin_answerable = tsql is not None and self._answer(tsql) is not None
                if twin_answerable and not r.settles_twin:
                    res.counts[f"{r.kind}|twin_answerable"] += 1
                    res.reject = f"relaxation_{r.kind}"
                    return res
                csql, cdetail = relaxed_sql(r, clean_ctx, clean_sql, names, where)
                relaxed = self._answer(csql) if csql is not None else answer
            except (duckdb.Error, ValueError, TypeError):
                res.counts[f"{r.kind}|sql_failed"] += 1
                res.reject = f"relaxation_{r.kind}"
                return res
            if relaxed == answer and not twin_answerable:
                outcome = "same" if (csql or tsql) else "not_applicable"
            elif r.explicit:
                outcome = "explicit"
                res.explicit_clean.append(render(r.explicit, clean_ctx, sql=False, where=where))
                res.explicit_twin.append(render(r.explicit, twin_ctx, sql=False, where=where))
            else:
                res.counts[f"{r.kind}|clean_differs"] += 1
                res.reject = f"relaxation_{r.kind}"
                return res
            res.counts[f"{r.kind}|{outcome}"] += 1
            res.entries.append(AuditEntry(kind=r.kind, outcome=outcome, detail=cdetail if csql is not None else ""))
            t_out = "explicit" if outcome == "explicit" else "same" if tsql is not None else "not_applicable"
            res.twin_entries.append(AuditEntry(kind=r.kind, outcome=t_out, detail=tdetail if tsql is not None else ""))
        if self.spec.scope == "population" and self.spec.units:
            self._units(res, clean_ctx, twin_ctx)
        return res

    def _trap(self, res: AuditResult, r: Any, conv: Convention, clean_ctx: dict[str, Any], twin_ctx: dict[str, Any],
              clean_sql: str, twin_sql: str, answer: Any, names: Callable[[str, str], list[str]]) -> bool:
        """A relaxation a stated convention settles (``rules/conventions.toml``): a trap, not an ambiguity.

        The other reading is run as for any relaxation, but neither a differing Clean answer nor an
        answerable twin rejects the pair or adds a sentence: the shared instructions state the
        reading. What the other reading answers is recorded (outcome ``convention``, detail
        ``<convention id>: <answer>``): it is the near miss of an agent that ignores the convention.

        Returns:
            False when the relaxed SQL fails (the pair is rejected as ``relaxation_<kind>``).
        """
        where = self.spec.source
        try:
            csql, _ = relaxed_sql(r, clean_ctx, clean_sql, names, where)
            tsql, _ = relaxed_sql(r, twin_ctx, twin_sql, names, where)
            c_other = self._answer(csql) if csql is not None else answer
            t_other = self._answer(tsql) if tsql is not None else None
        except (duckdb.Error, ValueError, TypeError):
            res.counts[f"{r.kind}|sql_failed"] += 1
            res.reject = f"relaxation_{r.kind}"
            return False
        c_trap, t_trap = c_other != answer, t_other is not None
        res.counts[f"{r.kind}|{'convention' if c_trap or t_trap else 'same'}"] += 1
        res.entries.append(AuditEntry(kind=r.kind, outcome="convention" if c_trap else "same" if csql else "not_applicable",
                                      detail=f"{conv.id}: {_show(c_other)}" if c_trap else ""))
        res.twin_entries.append(AuditEntry(kind=r.kind, outcome="convention" if t_trap else "same" if tsql else "not_applicable",
                                           detail=f"{conv.id}: {_show(t_other)}" if t_trap else ""))
        if c_trap and c_other is not None:
            res.clean_misses.append((conv.id, c_other))
        if t_trap:
            res.twin_misses.append((conv.id, t_other))
        return True

    def _units(self, res: AuditResult, clean_ctx: dict[str, Any], twin_ctx: dict[str, Any]) -> None:
        """The five-unit rule counted over patients instead of admissions / ICU stays."""
        alt, noun = patient_units_sql(self.spec.units or "")
        if alt is None:
            return
        try:
            n_clean = self._count(render(alt, clean_ctx, sql=True, where=self.spec.source))
            n_twin = self._count(render(alt, twin_ctx, sql=True, where=self.spec.source))
        except duckdb.Error:
            res.counts["units|sql_failed"] += 1
            res.reject = "relaxation_units"
            return
        if n_twin >= MIN_UNITS:  # cannot happen while patients <= admissions; kept as the rule
            res.counts["units|twin_answerable"] += 1
            res.reject = "relaxation_units"
            return
        detail = f"{n_clean} patients"
        if n_clean >= MIN_UNITS:
            res.counts["units|same"] += 1
            res.entries.append(AuditEntry(kind="units", outcome="same", detail=detail))
            res.twin_entries.append(AuditEntry(kind="units", outcome="same", detail=f"{n_twin} patients"))
            return
        res.counts["units|explicit"] += 1
        sentence = f"For the five-unit rule, count {noun}, not patients."
        res.explicit_clean.append(sentence)
        res.explicit_twin.append(sentence)
        res.entries.append(AuditEntry(kind="units", outcome="explicit", detail=detail))
        res.twin_entries.append(AuditEntry(kind="units", outcome="explicit", detail=f"{n_twin} patients"))

    def _count(self, sql: str) -> int:
        _, rows = self.ov.query(sql)
        return int(rows[0][0] or 0) if rows else 0


def explicit_question(question: str, sentences: list[str]) -> str:
    """``question`` followed by the audit's sentences (each once, in order)."""
    extra = [s for i, s in enumerate(sentences) if s and s not in sentences[:i] and s not in question]
    return " ".join([question.rstrip(), *extra]) if extra else question
