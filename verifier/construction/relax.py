"""Relaxations: the other readings a reasonable reader might give a program's question.

Issue 12 point 1. Each program declares, as data (``[[program.relax]]`` in
``programs/<intent>.toml``), the relaxations that apply to its question:

- ``name`` (``param``, ``table``, ``column``): the named thing under its variants in
  ``table.column``: the same name in another case, the name with more words before or
  after it ("Famotidine" -> "Famotidine (IV)"), and the names of the same concept in
  ``rules/synonyms.toml`` [text]. Mechanical: ``column = 'name'`` in the reference
  becomes ``column IN (name, variants...)``.
- ``status`` (``group`` or ``reference``): statuses that mean the same
  (``rules/relaxations.toml`` [status.<group>]). Mechanical: ``column = 'Administered'``
  becomes ``column IN (<the group>)``; or, with ``reference``, the other reading of an
  event type the question names ("transferred into" as ``event_type = 'transfer'``
  only, leaving out direct admissions into the unit).
- ``source``, ``unlinked``, ``window``, ``comment``: another table recording the same
  fact, events without the admission link inside its time window, the other window
  definition (calendar days vs 24-hour periods), values recorded only as text or
  comments (censored numbers such as ``>=1.035``, qualitative results such as
  ``TR.`` or ``NEG.``, a dose without its unit). Each gives the ``reference``
  template a reader applying it would run. Templates may use ``{comment_result}``:
  the pattern of ``rules/relaxations.toml`` [comment] result (text that is a result).
- ``absent``: no event recorded read as a zero amount ("no output charted" read as
  0 mL of output). Its ``reference`` computes that reading; unlike the other kinds,
  a twin answerable under it is not rejected when ``explicit`` is given: the
  sentence (on both twins) says that a missing event is not a zero, which is the
  reading the reference computes (issue 12: "no output charted" read as 0 mL).

Every relaxation may give ``explicit``: a sentence (template) that, added to the
question, states the reading the reference computes so that the relaxation no
longer applies ("Use the medication administration record (eMAR) only.").
``settles_twin = true`` (always so for ``absent``) lets that sentence also settle a
Noise twin answerable under the relaxation, instead of rejecting it: for a reading
that is the twin's own unmet requirement stated as the question's rule ("give the
numeric value field; a value written only in a comment does not count" on a
"no numeric value" twin). Other relaxations (a name variant, another source) would
make such a sentence a trap, so their answerable twins are rejected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from ..contract import RulesError, load_toml
from .sqltext import render, sql_literal

MECHANICAL = ("name", "status")
TEMPLATED = ("source", "unlinked", "window", "comment", "absent")
#: Kinds whose ``explicit`` sentence always settles a twin answerable under them (``settles_twin``).
TWIN_EXPLICIT = ("absent",)
RELAX_KINDS = MECHANICAL + TEMPLATED


@dataclass(frozen=True)
class RelaxSpec:
    """One declared relaxation (see the module docstring for the kinds)."""

    kind: str
    explicit: str | None = None
    reference: str | None = None
    param: str | None = None
    table: str | None = None
    column: str | None = None
    group: str | None = None
    settles_twin: bool = False


def parse_relax(entry: dict[str, Any], where: str, params: tuple[str, ...]) -> RelaxSpec:
    """Validate one ``[[program.relax]]`` table.

    Raises:
        RulesError: unknown kind, a missing field for the kind, an unknown status group.
    """
    kind = entry.get("kind")
    if kind not in RELAX_KINDS:
        raise RulesError(where, f"relax.kind={kind!r} not one of {RELAX_KINDS}")
    spec = RelaxSpec(kind=kind, explicit=entry.get("explicit"), reference=entry.get("reference"),
                     param=entry.get("param"), table=entry.get("table"), column=entry.get("column"),
                     group=entry.get("group"), settles_twin=bool(entry.get("settles_twin", kind in TWIN_EXPLICIT)))
    if kind == "name":
        if not (spec.param and spec.table and spec.column):
            raise RulesError(where, "relax kind 'name' needs param, table and column")
        if spec.param not in params:
            raise RulesError(where, f"relax name param {spec.param!r} is not one of params {params}")
    elif kind == "status":
        if spec.reference is None and spec.group not in status_groups():
            raise RulesError(where, f"relax status group {spec.group!r} not in rules/relaxations.toml (or give a 'reference')")
    elif not spec.reference:
        raise RulesError(where, f"relax kind {kind!r} needs a 'reference' template")
    if spec.settles_twin and not spec.explicit:
        raise RulesError(where, f"relax kind {kind!r} settles the twin and needs an 'explicit' sentence")
    unknown = set(entry) - {"kind", "explicit", "reference", "param", "table", "column", "group", "settles_twin"}
    if unknown:
        raise RulesError(where, f"relax has unknown fields {sorted(unknown)}")
    return spec


@lru_cache(maxsize=1)
def status_groups() -> dict[str, tuple[str, tuple[str, ...]]]:
    """``group -> (column without its table, statuses)`` from ``rules/relaxations.toml``.

    Raises:
        RulesError: the file is missing or invalid.
    """
    data = load_toml("relaxations.toml").get("status", {})
    return {g: (str(v["column"]).split(".")[-1], tuple(v["values"])) for g, v in data.items()}


def status_values(group: str) -> tuple[str, tuple[str, ...]]:
    """(column, the statuses) of a ``rules/relaxations.toml`` [status.<group>]."""
    return status_groups()[group]


@lru_cache(maxsize=1)
def comment_result_pattern() -> str:
    """The regular expression (DuckDB ``regexp_matches``, on upper-cased text) of a result
    recorded as text: ``rules/relaxations.toml`` [comment] result.

    Raises:
        RulesError: the file is missing or has no [comment] result.
    """
    pattern = load_toml("relaxations.toml").get("comment", {}).get("result")
    if not isinstance(pattern, str) or not pattern:
        raise RulesError("rules/relaxations.toml", "[comment] result (a regular expression) is missing")
    return pattern


@lru_cache(maxsize=1)
def _synonym_groups() -> tuple[frozenset[str], ...]:
    groups = load_toml("synonyms.toml").get("text", {}).get("groups", [])
    return tuple(frozenset(str(x).lower() for x in g) for g in groups)


@lru_cache(maxsize=1)
def _boundary() -> str:
    return str(load_toml("relaxations.toml").get("name", {}).get("boundary", " (,-/[:"))


def name_variants(value: str, names: list[str]) -> list[str]:
    """The spellings in ``names`` a reader might take for ``value``.

    Args:
        value: the name the question uses, e.g. ``"Famotidine"``.
        names: the distinct names recorded in the column.

    Returns:
        Sorted names other than ``value``: equal ignoring case, or starting / ending
        with ``value`` (or a synonym of it from ``rules/synonyms.toml``) at a word
        boundary (``rules/relaxations.toml`` [name] boundary).
    """
    low = value.strip().lower()
    if not low:
        return []
    forms = {low}
    for g in _synonym_groups():
        if low in g:
            forms |= g
    bound = _boundary()
    out = []
    for name in names:
        if name == value or not isinstance(name, str):
            continue
        n = name.strip().lower()
        for f in forms:
            if n == f or (n.startswith(f) and n[len(f)] in bound) or (n.endswith(f) and n[-len(f) - 1] in bound):
                out.append(name)
                break
    return sorted(out)


def _widen(sql: str, column: str, value: str, values: list[str] | tuple[str, ...]) -> str:
    """``column = 'value'`` (optionally table-qualified) -> ``column IN (values)``."""
    pat = re.compile(r"((?:\b\w+\.)?\"?\b" + re.escape(column) + r"\b\"?)\s*=\s*" + re.escape(sql_literal(value)))
    inlist = "(" + ", ".join(sql_literal(v) for v in values) + ")"
    return pat.sub(lambda m: f"{m.group(1)} IN {inlist}", sql)


def relaxed_sql(r: RelaxSpec, ctx: dict[str, Any], sql: str, names: Callable[[str, str], list[str]], where: str) -> tuple[str | None, str]:
    """The reference a reader applying ``r`` would run, or None when ``r`` changes nothing.

    Args:
        r: the relaxation.
        ctx: the task's context (params and display fields).
        sql: the task's rendered reference SQL.
        names: ``(table, column) -> distinct values`` of the database.
        where: program named in errors.

    Returns:
        (relaxed SQL or None, a detail for reviewers, e.g. the variants found).
    """
    if r.kind == "name":
        value = ctx.get(r.param or "")
        if not isinstance(value, str):
            return None, ""
        variants = name_variants(value, names(r.table or "", r.column or ""))
        if not variants:
            return None, ""
        out = _widen(sql, r.column or "", value, [value, *variants])
        return (out if out != sql else None), "variants: " + ", ".join(variants[:6]) + (" ..." if len(variants) > 6 else "")
    if r.kind == "status" and r.reference is None:
        column, values = status_values(r.group or "")
        out = sql
        for v in values:
            out = _widen(out, column, v, values)
        return (out if out != sql else None), f"statuses: {', '.join(values)}"
    return render(r.reference or "", {**ctx, "comment_result": comment_result_pattern()}, sql=True, where=where), r.kind
