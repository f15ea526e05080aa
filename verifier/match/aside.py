"""Values mentioned as context beside the committed one (issue 17 kind 2, Clean side).

Agents often commit to one value and mention a value from another source as
context: ``2150-03-04 11:30 (eMAR administration; the ICU input record shows
11:20)``, ``2150-03-04 11:30 - note the pharmacy order was at 09:00``,
``0.5 mg (vs 0.25 mg in the prescription)``. The committed value is the one the
Answer states as its answer; a value inside an *aside* is not a candidate.

An aside starts at a context marker and runs to the end of its clause (``;``,
a full stop before a space, a new line, or the ``)`` closing the parenthetical
it stands in). Markers (``_MARKER``):

- a note or comparison: ``note``, ``n.b.``, ``vs``, ``versus``, ``compared
  with``, ``whereas``, ``while``, ``according to``, ``per the``;
- another record speaking: ``the/its/an <up to four words> shows / records /
  lists / documents / charts / gives / has / reads / says / logs`` (``the ICU
  input record shows``, ``the input chart records``);
- another source named: ``pharmacy``, ``prescription``, ``prescribed``,
  ``order``/``ordered``, ``input record/event/chart``, ``inputevents``.

When every value lies in an aside (``the eMAR records 11:30; the input record
shows 11:20``), the first aside is the statement of the answer and only the
later ones are context. Hedges are not asides: ``or``, ``either``, ``maybe``
... still make the Answer ambiguous wherever they stand
(``verifier.match.commit.hedge_word``), so ``11:30 or 11:20`` and ``either
11:30 or 11:20 depending on the source`` fail.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_MARKER = re.compile(
    r"(?i)\b(?:"
    r"note(?:d|s)?\b(?:\s+that)?|n\.\s?b\.|vs\.?|versus|compared\s+(?:with|to)|whereas|while|according\s+to|"
    r"per\s+the|"
    r"(?:the|its|an?)\s+(?:[\w-]+\s+){0,4}?(?:shows?|showed|records?|recorded|lists?|listed|documents?|documented|"
    r"charts?|charted|gives?|gave|has|had|reads?|says?|logs?|logged)|"
    r"pharmacy|prescriptions?|prescribed|order(?:ed|s)?|input[\s_-]*(?:records?|events?|charts?)|inputevents"
    r")(?!\w)"
)
_END = re.compile(r";|\.(?=\s|$)|\n|[()]")


def aside_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans of ``text`` that are asides (module docstring), in order.

    Args:
        text: an Answer (or part of one), possibly masked to the same length.

    Returns:
        Non-overlapping spans, each from a marker to the end of its clause.
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    while (m := _MARKER.search(text, pos)) is not None:
        depth, end = 0, len(text)
        for e in _END.finditer(text, m.end()):
            ch = e.group()
            if ch == "(":
                depth += 1
            elif ch == ")" and depth:
                depth -= 1
            elif depth == 0:
                end = e.start()
                break
        spans.append((m.start(), end))
        pos = max(end, m.end())
    return spans


def committed(text: str, toks: Sequence) -> list:
    """The tokens (``.start`` offsets into ``text``) that state the answer: those outside the
    asides of ``text``; when all lie in asides, those of the first aside holding one.

    Returns:
        A list of the tokens kept, in their order (empty only when ``toks`` is).
    """
    if len(toks) < 2:
        return list(toks)
    spans = aside_spans(text)
    if not spans:
        return list(toks)

    def where(t) -> int | None:
        return next((i for i, (a, b) in enumerate(spans) if a <= t.start < b), None)

    places = [where(t) for t in toks]
    kept = [t for t, p in zip(toks, places) if p is None]
    if kept:
        return kept
    first = min(places)
    return [t for t, p in zip(toks, places) if p == first]
