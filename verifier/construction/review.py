"""Blind review of Clean-Noise pairs as a tool (issue 12 point 4).

``write_review_sheets`` samples N pairs stratified by program (round-robin over the
programs in a seeded order, so every program, noise level and scope is drawn before
any is drawn twice) and writes, for human or LLM reviewers:

- ``DIR/sheets/<nnn>-<pair_id>.md``: one sheet per pair: both questions, the Clean
  reference SQL and answer, the Noise twin's reference SQL, unmet requirement and
  witness rows, the robustness audit's results, and what a verdict means;
- ``DIR/index.jsonl``: ``{sheet, pair_id, program, intent, scope, noise_type}`` per sheet;
- ``DIR/judgements.template.jsonl``: one line per pair to copy per reviewer:
  ``{"pair_id", "reviewer", "valid": null, "clean_valid": null, "noise_valid": null, "note": ""}``.

``read_judgements`` reads reviewers' verdicts back (JSONL: ``pair_id``, ``reviewer``,
and ``valid`` or both ``clean_valid`` and ``noise_valid``) and ``validity_table``
aggregates them by program, noise level and scope. A pair counts as valid when every
review of it says valid. Sheets built from the real demo are derived data: keep them
out of git.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ..contract import InputError, Task

VERDICT_GUIDE = """## Your verdict

Judge the pair against the database (you may query it), not against this sheet's claims.

- **Clean valid**: the question as written is answerable from the database, and the
  reference answer is what a careful reader would answer. If a reasonable reader could
  compute something else (another source, status, name spelling, window, unlinked
  events, unit of counting), the question must say which reading it means.
- **Noise valid**: under every reasonable reading of the question as written, the
  database cannot answer it, for the stated unmet requirement (population questions:
  fewer than five eligible units may not be disclosed).
- **Pair valid**: both are valid.

Write one JSON line: `{"pair_id": "...", "reviewer": "...", "clean_valid": true|false,
"noise_valid": true|false, "note": "why, when invalid"}`.
"""


@dataclass(frozen=True)
class SampledPair:
    """One sampled pair: its Clean task and Noise twin."""

    clean: Task
    noise: Task


def _pairs(tasks: Iterable[Task]) -> list[SampledPair]:
    by: dict[str, dict[str, Task]] = defaultdict(dict)
    for t in tasks:
        by[t.pair_id][t.condition] = t
    return [SampledPair(v["clean"], v["noise"]) for k, v in sorted(by.items()) if "clean" in v and "noise" in v]


def sample_pairs(tasks: Iterable[Task], n: int, seed: int = 0) -> list[SampledPair]:
    """``n`` pairs stratified by program (round-robin over programs in a seeded order).

    Raises:
        InputError: ``n`` < 1.
    """
    if n < 1:
        raise InputError("n", n, "must sample at least one pair")
    rng = random.Random(f"review:{seed}")
    groups: dict[str, list[SampledPair]] = defaultdict(list)
    for p in _pairs(tasks):
        groups[p.clean.program].append(p)
    order = sorted(groups)
    rng.shuffle(order)
    for k in order:
        rng.shuffle(groups[k])
    out: list[SampledPair] = []
    while len(out) < n and any(groups.values()):
        for k in order:
            if groups[k] and len(out) < n:
                out.append(groups[k].pop())
    return out


def _block(text: str, lang: str = "") -> str:
    return f"```{lang}\n{text.strip()}\n```"


def render_sheet(pair: SampledPair, number: int) -> str:
    """The Markdown review sheet of one pair."""
    c, z = pair.clean, pair.noise
    ref, zref = c.reference, z.reference
    unmet = zref.unmet_requirement
    lines = [
        f"# Review sheet {number:03d}: pair `{c.pair_id}`",
        "",
        f"Program `{c.program}` · intent {c.intent} · scope {c.scope} · noise level {z.noise_type}",
        "",
        "## Clean question", "", c.question, "",
        "Reference SQL:", "", _block(ref.sql, "sql"), "",
        "Reference answer:", "", _block(json.dumps(ref.answer.model_dump() if ref.answer else None, default=str, indent=1), "json"), "",
    ]
    if ref.alternatives:
        lines += ["Also accepted (rows tied with the reference's at its ORDER BY ... LIMIT):", "",
                  _block(json.dumps([a.model_dump() for a in ref.alternatives], default=str, indent=1), "json"), ""]
    if ref.eligible_units is not None:
        lines += [f"Eligible units: {ref.eligible_units}", ""]
    lines += [
        "## Noise question", "", z.question, "",
        "Reference SQL (gives no answer on the database):", "", _block(zref.sql, "sql"), "",
        f"Unmet requirement ({unmet.level}): {unmet.statement}" if unmet else "Unmet requirement: (none)", "",
    ]
    if zref.eligible_units is not None:
        lines += [f"Eligible units: {zref.eligible_units}", ""]
    lines += ["Witness (rows that would make it answerable):", ""]
    for w in zref.witness:
        lines += [f"- `{w.table}` ({w.mode}{', key ' + ', '.join(w.key) if w.key else ''}):", "",
                  _block("\n".join(json.dumps(r, default=str) for r in w.rows[:5]) + (f"\n... {len(w.rows) - 5} more" if len(w.rows) > 5 else ""), "json"), ""]
    lines += ["## Robustness audit (construction's own check)", ""]
    if ref.audit or zref.audit:
        lines += ["| relaxation | clean | noise | detail |", "|---|---|---|---|"]
        for a, b in zip(ref.audit, zref.audit):
            detail = (a.detail or b.detail).replace("|", "/")
            lines.append(f"| {a.kind} | {a.outcome} | {b.outcome} | {detail} |")
    else:
        lines.append("(the program declares no relaxations)")
    lines += ["", VERDICT_GUIDE]
    return "\n".join(lines)


def write_review_sheets(tasks: Iterable[Task], n: int, out: str | Path, seed: int = 0) -> list[SampledPair]:
    """Sample ``n`` pairs and write their sheets, index and judgement template under ``out``.

    Returns:
        The sampled pairs, in sheet order.

    Raises:
        InputError: ``n`` < 1, or no pair in ``tasks``.
        OSError: ``out`` cannot be written.
    """
    sample = sample_pairs(tasks, n, seed)
    if not sample:
        raise InputError("tasks", "(no Clean-Noise pair)", "the tasks file holds no complete pair to sample")
    root = Path(out)
    (root / "sheets").mkdir(parents=True, exist_ok=True)
    index, template = [], []
    for i, p in enumerate(sample, 1):
        name = f"{i:03d}-{p.clean.pair_id}.md"
        (root / "sheets" / name).write_text(render_sheet(p, i), encoding="utf-8")
        index.append({"sheet": f"sheets/{name}", "pair_id": p.clean.pair_id, "program": p.clean.program,
                      "intent": p.clean.intent, "scope": p.clean.scope, "noise_type": p.noise.noise_type})
        template.append({"pair_id": p.clean.pair_id, "reviewer": "", "valid": None, "clean_valid": None, "noise_valid": None, "note": ""})
    (root / "index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in index), encoding="utf-8")
    (root / "judgements.template.jsonl").write_text("".join(json.dumps(r) + "\n" for r in template), encoding="utf-8")
    return sample


def read_judgements(path: str | Path) -> list[dict[str, Any]]:
    """Reviewers' verdicts: one JSON object per line with ``pair_id``, ``reviewer`` and
    ``valid`` (bool) or both ``clean_valid`` and ``noise_valid`` (bools; ``valid`` is
    their conjunction). Blank lines are skipped.

    Raises:
        InputError: a line that is not such an object (named by its number).
        OSError: the file cannot be read.
    """
    out = []
    for no, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"judgements line {no}", line[:80], f"not JSON: {exc}") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("pair_id"), str):
            raise InputError(f"judgements line {no}", line[:80], "needs a 'pair_id' string")
        parts = [rec.get("clean_valid"), rec.get("noise_valid")]
        if isinstance(rec.get("valid"), bool):
            valid = rec["valid"]
        elif all(isinstance(x, bool) for x in parts):
            valid = all(parts)
        else:
            raise InputError(f"judgements line {no}", line[:80], "needs 'valid' or both 'clean_valid' and 'noise_valid' as true/false")
        out.append({**rec, "valid": valid, "reviewer": str(rec.get("reviewer") or f"line{no}")})
    return out


def validity_table(tasks: Iterable[Task], judgements: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Validity by program, noise level and scope (and overall).

    Returns:
        ``{"program"|"noise_type"|"scope"|"all": {group: {"pairs", "reviews",
        "reviews_valid", "pairs_valid", "pair_validity"}}}``; a pair is valid when
        every review of it says valid; ``pair_validity`` is a fraction.

    Raises:
        InputError: a judgement names a pair that is not in the tasks.
    """
    meta = {p.clean.pair_id: p for p in _pairs(tasks)}
    reviews: dict[str, list[bool]] = defaultdict(list)
    for j in judgements:
        if j["pair_id"] not in meta:
            raise InputError("judgements", j["pair_id"], "pair_id is not in the tasks file")
        reviews[j["pair_id"]].append(bool(j["valid"]))
    out: dict[str, dict[str, dict[str, float]]] = {}
    for dim in ("program", "noise_type", "scope", "all"):
        groups: dict[str, dict[str, float]] = {}
        for pid, votes in sorted(reviews.items()):
            p = meta[pid]
            key = {"program": p.clean.program, "noise_type": p.noise.noise_type or "", "scope": p.clean.scope, "all": "all"}[dim]
            g = groups.setdefault(key, {"pairs": 0, "reviews": 0, "reviews_valid": 0, "pairs_valid": 0})
            g["pairs"] += 1
            g["reviews"] += len(votes)
            g["reviews_valid"] += sum(votes)
            g["pairs_valid"] += all(votes)
        for g in groups.values():
            g["pair_validity"] = g["pairs_valid"] / g["pairs"] if g["pairs"] else 0.0
        out[dim] = dict(sorted(groups.items()))
    return out
