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

Layer: reads ``verifier.contract`` step shapes only; ``verifier.verify`` calls it after the text
matcher fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .text import normalise_text, text_equivalent

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


def field_of_record(answer: str, reference: str, steps: Iterable, threshold: float = 90.0) -> str | None:
    """How ``answer`` states ``reference`` with its record's other fields in parentheses, else ``None``.

    Args:
        answer: the parsed Answer text; reference: the reference text (``TextAnswer.value``);
        steps: the trajectory's steps (their ``columns`` and ``rows``; Python steps without rows
            are skipped); threshold: the policy's ``text_threshold`` for the head.

    Returns:
        A sentence for the verdict's details naming the column(s) the details were shown in, or
        ``None`` when the Answer is not a head plus bare parentheticals, the head does not match,
        or a detail is not shown as another field of a row holding the head (module docstring).
    """
    m = _TRAILING.match(answer.strip())
    if m is None:
        return None
    head = m["head"].strip(" ,;:")
    if not head or not text_equivalent(head, reference, threshold)[0]:
        return None
    details = [d for d in _ONE.findall(m["details"])]
    tables = _cells(steps)
    want_head = normalise_text(head)
    shown: list[str] = []
    for detail in details:
        want = normalise_text(detail)
        if not want or want == want_head:
            return None
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
            return None
        for cols, rows in tables:  # never a value of the answer's own column anywhere
            idx = [i for i, c in enumerate(cols) if c in head_cols]
            if any(isinstance(row[i], str) and normalise_text(row[i]) == want
                   for row in rows for i in idx if i < len(row)):
                return None
        shown.append(f"{detail!r} is the record's {'/'.join(sorted(other_cols))}")
    if not shown:
        return None
    return "the parenthetical describes the answer's own record: " + "; ".join(shown)
