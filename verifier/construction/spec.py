"""Construction programs described as data.

Each ``[[program]]`` in ``verifier/construction/programs/*.toml`` (one file per
clinical intent) declares:

- ``name``, ``intent``, ``scope`` (patient|population), ``noise`` (record|value|query),
  ``track`` (``in_domain`` or ``structure_disjoint`` = held out of training);
- ``params``: the conditions of the question (the only keys of ``Task.params``)
  and ``vary``: the one condition the Noise twin changes;
- ``candidates``: SQL returning one row per candidate pair; columns are the
  clean context (params + display fields such as ``label``) and ``twin_<name>``
  overrides that make the twin's context;
- ``reference``: the reference SQL template, filled from either context
  (population programs enforce the five-unit rule with ``HAVING``);
- ``units`` (population): SQL counting the eligible units of a context;
- ``answer``: ``{kind, value, unit, decimals, precision, columns, ordered}``;
- ``policy``: AnswerPolicy fields (strings are templates);
- ``questions``: several phrasings (templates); the twin uses its clean's phrasing;
- ``unmet``, ``key_terms``, ``tables``, ``columns``, ``scope_keys``: the
  UnmetRequirement of the twin (templates over the twin's context);
- ``[[program.witness]]``: ``table``, ``mode`` (insert|replace), ``key``, ``sql``
  (a query on the base returning the full witness rows, e.g.
  ``SELECT * REPLACE (...) FROM lab_events WHERE ... LIMIT 1``);
- ``tags``: kinds of reasoning the question needs, e.g. ``temporal`` (the order of
  events or a time window) and ``encounter`` (links between admissions, ICU stays,
  transfers and the events inside them);
- ``[[program.relax]]``: the relaxations a reasonable reader might apply, run by
  the robustness audit (``relax.py``, ``audit.py``; issue 12 point 1).

Source of the rules: ARCHITECTURE.md sections 3-5 and issue 5.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, get_args

from ..contract import AnswerPolicy, Intent, NoiseType, RulesError, Scope
from .relax import RelaxSpec, parse_relax

PROGRAM_DIR = Path(__file__).resolve().parent / "programs"
ANSWER_KINDS = ("quantity", "number", "count", "datetime", "text", "boolean", "list", "records")


@dataclass(frozen=True)
class WitnessSpec:
    """How to build one table's witness rows (SQL on the base, twin context)."""

    table: str
    mode: str
    key: tuple[str, ...]
    sql: str


@dataclass(frozen=True)
class ProgramSpec:
    """One construction program (see the module docstring for the fields)."""

    name: str
    intent: str
    scope: str
    noise: str
    track: str
    params: tuple[str, ...]
    vary: str
    candidates: str
    reference: str
    answer: dict[str, Any]
    policy: dict[str, Any]
    questions: tuple[str, ...]
    unmet: str
    key_terms: tuple[str, ...]
    tables: tuple[str, ...]
    columns: tuple[str, ...]
    scope_keys: tuple[str, ...]
    witness: tuple[WitnessSpec, ...]
    units: str | None = None
    max_pairs: int = 30
    source: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)
    relax: tuple[RelaxSpec, ...] = field(default_factory=tuple)


def _need(entry: dict[str, Any], key: str, where: str) -> Any:
    if key not in entry:
        raise RulesError(where, f"missing field {key!r}")
    return entry[key]


def parse_program(entry: dict[str, Any], where: str) -> ProgramSpec:
    """Validate one ``[[program]]`` table into a ProgramSpec.

    Raises:
        RulesError: a missing or invalid field, named with the program.
    """
    name = _need(entry, "name", where)
    where = f"{where}: program {name!r}"
    intent, scope, noise = (_need(entry, k, where) for k in ("intent", "scope", "noise"))
    for val, allowed, label in ((intent, get_args(Intent), "intent"), (scope, get_args(Scope), "scope"), (noise, get_args(NoiseType), "noise")):
        if val not in allowed:
            raise RulesError(where, f"{label}={val!r} not one of {allowed}")
    track = entry.get("track", "in_domain")
    if track not in ("in_domain", "structure_disjoint"):
        raise RulesError(where, f"track={track!r} not in_domain|structure_disjoint")
    params = tuple(_need(entry, "params", where))
    vary = _need(entry, "vary", where)
    if vary not in params:
        raise RulesError(where, f"vary={vary!r} is not one of params {params}")
    answer = dict(_need(entry, "answer", where))
    if answer.get("kind") not in ANSWER_KINDS:
        raise RulesError(where, f"answer.kind={answer.get('kind')!r} not one of {ANSWER_KINDS}")
    policy = dict(entry.get("policy", {}))
    unknown = set(policy) - set(AnswerPolicy.model_fields)
    if unknown:
        raise RulesError(where, f"policy has unknown fields {sorted(unknown)}")
    questions = tuple(_need(entry, "questions", where))
    if len(questions) < 2:
        raise RulesError(where, "needs at least two phrasings in 'questions'")
    if scope == "population" and not entry.get("units"):
        raise RulesError(where, "population programs need 'units' (eligible-unit SQL, five-unit rule)")
    witness = []
    for j, w in enumerate(_need(entry, "witness", where)):
        mode = w.get("mode", "insert")
        if mode not in ("insert", "replace"):
            raise RulesError(where, f"witness[{j}].mode={mode!r}")
        if mode == "replace" and not w.get("key"):
            raise RulesError(where, f"witness[{j}]: replace needs key")
        witness.append(WitnessSpec(_need(w, "table", where), mode, tuple(w.get("key", ())), _need(w, "sql", where)))
    if not witness:
        raise RulesError(where, "needs at least one [[program.witness]]")
    # ARCHITECTURE.md section 4 point 4: replacements for Value-level noise, inserts otherwise.
    want = "replace" if noise == "value" else "insert"
    if any(w.mode != want for w in witness):
        raise RulesError(where, f"{noise}-level noise needs witness mode {want!r}")
    return ProgramSpec(
        name=name, intent=intent, scope=scope, noise=noise, track=track, params=params, vary=vary,
        candidates=_need(entry, "candidates", where), reference=_need(entry, "reference", where),
        answer=answer, policy=policy, questions=questions, unmet=_need(entry, "unmet", where),
        key_terms=tuple(_need(entry, "key_terms", where)), tables=tuple(entry.get("tables", ())),
        columns=tuple(entry.get("columns", ())), scope_keys=tuple(entry.get("scope_keys", params)),
        witness=tuple(witness), units=entry.get("units"), max_pairs=int(entry.get("max_pairs", 30)),
        source=where, tags=tuple(entry.get("tags", ())),
        relax=tuple(parse_relax(r, where, params) for r in entry.get("relax", ())),
    )


@lru_cache(maxsize=1)
def load_programs(directory: str | None = None) -> tuple[ProgramSpec, ...]:
    """Load every program from ``programs/*.toml`` (sorted by file, then order).

    Args:
        directory: another folder of program files (tests); default the package's.

    Returns:
        The programs, names unique.

    Raises:
        RulesError: invalid TOML, an invalid program, or a duplicated name.
    """
    folder = Path(directory) if directory else PROGRAM_DIR
    out: list[ProgramSpec] = []
    seen: set[str] = set()
    for path in sorted(folder.glob("*.toml")):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise RulesError(path, f"invalid TOML: {exc}") from exc
        for i, entry in enumerate(data.get("program", [])):
            spec = parse_program(entry, f"{path.name}[{i}]")
            if spec.name in seen:
                raise RulesError(path, f"duplicate program name {spec.name!r}")
            seen.add(spec.name)
            out.append(spec)
    return tuple(out)
