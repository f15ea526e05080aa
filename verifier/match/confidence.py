"""The writer's confidence in its own answer: a statement about the answer, never part of it (blind corpus c42).

Agents that quantify their certainty write it beside the value: ``4.1 mEq/L (confidence: 95%)``, ``NULL
(confidence: high)``, ``Confidence: 90% — ...``, ``95% confident``. The percentage measures the writer's belief,
not the records: it is no candidate of a Clean answer (a quantitative analyst's prose record with "(confidence:
95%)" after it was refused as two records) and no proportion of a small cell (its "Confidence: 95%" line was read
as a percentage of the cohort on every small-cell task it answered). A confidence statement is the word
``confidence``/``certainty`` (or ``confident``/``sure``/``certain`` after the percentage) with a percentage or a
level word (high, moderate, medium, low); whatever else the text says (a second value, a hedge) is read as before.
"""

from __future__ import annotations

import re

_LEVEL = r"(?:very\s+|fairly\s+|quite\s+)?(?:high|moderate|medium|low)"
_PERCENT = r"\d{1,3}(?:\.\d+)?\s*%"
#: a confidence statement, with the parentheses or brackets around it when it fills them
CONFIDENCE = re.compile(
    rf"(?i)(?P<open>[(\[]\s*)?(?:(?:my\s+|overall\s+)?(?:confidence|certainty)(?:\s+level)?\s*(?:[:=]|is|of)?\s*"
    rf"(?:{_PERCENT}(?:\s*[,;/]\s*{_LEVEL})?|{_LEVEL}(?:\s*[,;(/]\s*{_PERCENT}\)?)?)"
    rf"|{_PERCENT}\s+(?:confident|sure|certain|confidence))(?(open)\s*[)\]])"
)


#: words one of which every confidence statement holds: a fast probe before the pattern runs
_PROBES = ("confiden", "certain", "sure")


def confidence_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` character spans of the confidence statements in ``text`` (module docstring)."""
    return [m.span() for m in CONFIDENCE.finditer(text)]


def without_confidence(text: str) -> str:
    """``text`` with each confidence statement blanked to spaces of its length (positions kept)."""
    folded = text.casefold()  # the probe reads case as the pattern does ("CONFIDENCE: 95%")
    return CONFIDENCE.sub(lambda m: " " * len(m.group()), text) if any(w in folded for w in _PROBES) else text
