"""Does the Answer commit to ONE value? (guards against hedged or multi-value answers)

Rule (documented for task authors; tests in tests/test_match_commit.py): a
number, count, quantity or datetime Answer is ambiguous, and fails with
``WRONG_VALUE`` and details ``"ambiguous answer: ..."``, when

- it holds a negation, alternative, hedge or inequality word or sign
  (``not``, ``or``, ``either``, ``maybe``, ``perhaps``, ``possibly``,
  ``probably``, ``likely``, ``at least``, ``at most``, ``more/less/fewer/
  greater than``, ``up to``, ``<``, ``>``, ``≤``, ``≥``, ``±``), or
- it holds more than one candidate value of the asked type that differ
  (after unit conversion for quantities: ``5.2 mmol/L (5.2 mEq/L)`` is one
  value). A range ``a-b`` is two candidates.

Context is not a candidate: dates beside a number (masked out), step
citations (``[step 3]``), numbers written after an identifier word
(``Patient 10000032:``, ``admission 22595853``, ``#``, ``id``), a year
after ``in``/``during``/``since``/... (``5 admissions in 2180``), and, for
quantities, numbers without a unit when some number carries one.
"""

from __future__ import annotations

import re

_HEDGE = re.compile(
    r"(?i)\b(?:not|or|either|maybe|perhaps|possibly|probably|likely|at\s+(?:least|most)|"
    r"(?:more|less|fewer|greater)\s+than|up\s+to)\b|[<>≤≥±]"
)
_CITE = re.compile(r"(?i)[\[(]\s*steps?\b[^\])]*[\])]")
_ID_BEFORE = re.compile(
    r"(?i)(?:\b(?:patient|subject|admission|hadm|stay|icustay|icu\s+stay|id|mrn|no)\b|#)"
    r"[\s_]*(?:id\b)?[\s:#=._]*$"
)


_YEAR_BEFORE = re.compile(r"(?i)\b(?:in|during|since|year|before|after|until|of)\s+$")
_YEAR = re.compile(r"\d{4}(?!\d|\.\d)")


def mask_context(text: str) -> str:
    """``text`` with step citations blanked (same length, so spans still line up)."""
    if "tep" not in text and "TEP" not in text:
        return text
    return _CITE.sub(lambda m: " " * len(m.group()), text)


def hedge_word(text: str) -> str | None:
    """The first hedge/negation/inequality word in ``text`` (citations aside), else ``None``."""
    m = _HEDGE.search(mask_context(text))
    return m.group() if m else None


def is_context_number(text: str, start: int) -> bool:
    """True when the number starting at ``start`` is an identifier or a step citation."""
    if _ID_BEFORE.search(text, max(0, start - 24), start) is not None:
        return True
    return _YEAR.match(text, start) is not None and _YEAR_BEFORE.search(text, max(0, start - 12), start) is not None


def ambiguous(why: str) -> str:
    """The details string every ambiguity failure carries."""
    return f"ambiguous answer: {why}"
