"""A text Answer's bare parenthetical that the agent's own evidence shows as another field of the
answer's record (issue 32; c34 agent D, Q06).

``Left Basilic Lower Arm (Peripheral)`` for a line's location: the step's output shows one row with
``location = Left Basilic Lower Arm`` and ``location_category = Peripheral``. ``verifier.match.text``
cannot tell such a detail from a second candidate (``HOME (SNF)`` states two discharge locations), so
the trajectory decides, by what the detail *is* in the records the agent saw:

A detail is a **field of the answer's record** when some SQL step's result has a row holding the
head (the text before the parenthetical, equal to the reference after normalisation) in a column C
and the detail (equal after normalisation) in another column of the same row, and the detail is
never a value of a column named C in any step's result (then it would be a candidate for the same
field). Only the head is compared with the reference; the detail is never a candidate, so a
response gains nothing from it that it would not gain from the head alone: the rule only stops a
correct head from being failed for describing its own record.

The same holds where the reference stands in a one-sentence Answer (blind corpus c43: "El primer catéter
20 Gauge ... se colocó en Left Basilic Lower Arm (Peripheral), con inicio el 2142-07-31 02:00:00"): bare
parentheticals directly after the reference's one occurrence, each a field of the answer's record by the
rule above, describe it; the sentence without them must then state the reference as its value by
``verifier.match.text.stated_in_sentence``'s rule (no other name, no alternative word, no NULL beside it).

Layer: reads ``verifier.contract`` step shapes only; ``verifier.verify`` calls it after the text
matcher fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .text import normalise_text, stated_in_sentence, text_equivalent

#: A head followed by one or more bare parentheticals at the end of the Answer (no nested parentheses).
_TRAILING = re.compile(r"^(?P<head>[^()]+?)\s*(?P<details>(?:\(\s*[^()]+?\s*\)\s*)+)[.\s]*$")
_ONE = re.compile(r"\(\s*([^()]+?)\s*\)")


def _cells(steps: Iterable) -> list[tuple[Sequence[str], Sequence]]:
    out = []
    for s in steps:
        cols, rows = getattr(s, "columns", None), getattr(s, "rows", None)
        if cols and rows:
            out.append(([str(c).casefold() for c in cols], rows))
    return out


def field_of_record(answer: str, reference: str, steps: Iterable, threshold: float = 90.0,
                    question: str = "") -> str | None:
    """How ``answer`` states ``reference`` with its record's other fields in parentheses, else ``None``.

    Args:
        answer: the parsed Answer text; reference: the reference text (``TextAnswer.value``);
        steps: the trajectory's steps (their ``columns`` and ``rows``; Python steps without rows
            are skipped); threshold: the policy's ``text_threshold`` for the head;
        question: the task's question; with it, a one-sentence Answer naming the reference once, the
            fields directly after it, is read too (module docstring).

    Returns:
        A sentence for the verdict's details naming the column(s) the details were shown in, or
        ``None`` when the Answer is not a head plus bare parentheticals (nor, with ``question``, a
        sentence stating the reference with them), the head does not match, or a detail is not shown
        as another field of a row holding the head (module docstring).
    """
    tables = _cells(steps)
    m = _TRAILING.match(answer.strip())
    if m is not None:
        head = m["head"].strip(" ,;:")
        if head and text_equivalent(head, reference, threshold)[0]:
            shown = _fields(head, _ONE.findall(m["details"]), tables)
            if shown:
                return "the parenthetical describes the answer's own record: " + "; ".join(shown)
    return _in_sentence(answer, reference, tables, question) if question else None


#: Bare parentheticals right after the reference in a sentence (emphasis or code marks closing it first).
_AFTER_NAME = re.compile(r"[*_`]*(?P<details>(?:\s*\(\s*[^()]+?\s*\))+)")


def _in_sentence(answer: str, reference: str, tables: list, question: str) -> str | None:
    """The sentence reading of :func:`field_of_record` (module docstring), else ``None``."""
    if not reference.strip() or len(answer) > 400:
        return None
    name = re.compile(r"(?<![\w])" + r"\s+".join(re.escape(w) for w in reference.split()) + r"(?![\w])", re.I)
    hits = list(name.finditer(answer))
    if len(hits) != 1:
        return None
    after = _AFTER_NAME.match(answer, hits[0].end())
    if after is None:
        return None
    shown = _fields(hits[0].group(), _ONE.findall(after["details"]), tables)
    if not shown:
        return None
    rest = answer[: after.start("details")] + answer[after.end("details"):]
    if stated_in_sentence(rest.strip().rstrip("."), reference, question) is None:
        return None
    return "the sentence states the reference; the parenthetical describes its own record: " + "; ".join(shown)


def _fields(head: str, details: list[str], tables: list) -> list[str]:
    """For each of ``details``, the sentence naming the other column(s) of a row holding ``head`` that hold
    it (module docstring); empty when any detail is not such a field."""
    want_head = normalise_text(head)
    shown: list[str] = []
    for detail in details:
        want = normalise_text(detail)
        if not want or want == want_head:
            return []
        head_cols: set[str] = set()
        other_cols: set[str] = set()
        for cols, rows in tables:
            for row in rows:
                norm = [normalise_text(str(c)) if isinstance(c, str) else None for c in row]
                at = [i for i, v in enumerate(norm) if v == want_head and i < len(cols)]
                if not at:
                    continue
                head_cols.update(cols[i] for i in at)
                other_cols.update(cols[i] for i, v in enumerate(norm)
                                  if v == want and i < len(cols) and i not in at)
        if not other_cols or other_cols & head_cols:
            return []
        for cols, rows in tables:  # never a value of the answer's own column anywhere
            idx = [i for i, c in enumerate(cols) if c in head_cols]
            if any(isinstance(row[i], str) and normalise_text(row[i]) == want
                   for row in rows for i in idx if i < len(row)):
                return []
        shown.append(f"{detail!r} is the record's {'/'.join(sorted(other_cols))}")
    return shown
