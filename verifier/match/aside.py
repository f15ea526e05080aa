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

A parenthetical after the committed value that describes something is an aside too, for dates
(``committed(..., parenthetical=True)``, ``verifier.match.datetimes``): ``2110-11-30 17:11
(discharged 2110-12-05)``, ``17:11 (a later transfer on 2110-12-02 went back to the ward)``. It
must open after a value outside any parenthesis and hold a descriptive word (three or more
letters, not a month, a clock word or a filler such as ``at``/``on``/``the``) and no word that
corrects or conditions the value (``corrected``, ``revised``, ``if``, ``or``, ``requested``...:
``17:11 (corrected: 2110-12-05 09:00)`` is two candidates); a bare candidate in
brackets (``2110-11-30 17:11 (2110-12-02 09:00)``, ``(on 2110-12-02)``) stays a candidate, so the
Answer stays ambiguous, and hedge words count wherever they stand.

A connective (``vs``, ``note``, ``whereas``...) opens an aside only when what follows names a
source or event: ``7 vs 14.9`` and ``4.6 mEq/L vs 10.82 mEq/L`` are two candidates. A clause
that conditions the value (``if``, ``unless``, ``otherwise``, ``instead``) is never an aside:
``7 if the record is reliable, otherwise 14.9`` is two candidates (adv2 row 3a).

When every value lies in an aside (``the eMAR records 11:30; the input record
shows 11:20``), the first aside is the statement of the answer and only the
later ones are context, unless the Answer stated something else before it
(``aside_only``: ``HOME (the other record shows 2177-02-11 00:00:00)``): then
nothing is committed and the Answer fails; an aside never rescues it. Hedges are not asides: ``or``, ``either``, ``maybe``
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
    r"(?:the|its|an?|another|other)\s+(?:[\w-]+\s+){0,4}?(?:shows?|showed|records?|recorded|lists?|listed|documents?|documented|"
    r"charts?|charted|gives?|gave|has|had|reads?|says?|logs?|logged)|"
    r"pharmacy|prescriptions?|prescribed|order(?:ed|s)?|input[\s_-]*(?:records?|events?|charts?)|inputevents"
    r")(?!\w)"
)
_END = re.compile(r";|\.(?=\s|$)|\n|[()]")
_WORD = re.compile(r"[A-Za-z]{3,}")
#: Markers that only join (``vs``, ``note``, ``whereas``...): what follows them must name a source.
_CONNECTIVE = re.compile(r"(?i)(?:note|n\.|vs|versus|compared|whereas|while|according|per\s+the)")
#: Words that put a value under a condition ("91 if readmissions are included", "6 assuming ..."): a value so put is
#: offered beside the Answer's, never an aside (``verifier.match.commit.candidates``: a hedge).
CONDITION_WORDS = r"if|unless|assuming|provided|supposing|in\s+case"
#: A clause that conditions or replaces the value is part of the Answer (``otherwise 14.9``).
_CONDITIONS = re.compile(rf"(?i)\b(?:{CONDITION_WORDS}|otherwise|alternatively|instead|rather\s+than|or)\b")
#: Words that set a value against another ("(vs 91)", "compared with 91"): what follows is never the Answer's value
#: (``verifier.match.commit.candidates``) and never an aside of it.
SET_AGAINST_WORDS = r"vs\.?|versus|compared\s+(?:with|to)"
_OPENS_WITH_CONNECTIVE = re.compile(rf"(?i)\s*(?:{SET_AGAINST_WORDS})\b")
#: Words that name nothing after a connective (``vs a value of 10.82``).
_FILLERS = frozenset("was were value values for with than about that this which".split())
_AFTER_NUMBER = re.compile(r"\d[\s-]?$")
#: A parenthetical that corrects, conditions or offers the value otherwise is part of the Answer,
#: not context: "(corrected: 2110-12-05 09:00)", "(if the first transfer counts: ...)", "(or ...)".
_CORRECTS = re.compile(rf"(?i)\b(?:correct\w*|revis\w*|updat\w*|amend\w*|instead|request\w*|actually|rather|{CONDITION_WORDS}|"
                       r"or|either|alternatively|otherwise|asked|intended|meant)\b")
#: A parenthetical that restates the value ("(= about 5.9 mmHg)", "(≈ 41 h)", "(i.e. 3)") offers it again,
#: possibly otherwise: part of the Answer.
_RESTATES = re.compile(r"(?i)\s*(?:[=≈~]|i\.?\s?e\.?\b|that\s+is\b|equals?\b|equivalent\b|about\b|approx\w*|roughly\b|around\b)")
#: Words that describe no other event: months, clock and date words, fillers around a value.
_NOT_DESCRIPTIVE = frozenset(
    "jan january feb february mar march apr april may jun june jul july aug august sep sept september "
    "oct october nov november dec december a.m p.m utc gmt time date datetime hrs hours the and".split()
)


def _describes(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` names something: a word of three or more letters that is not a
    filler, a month or clock word, nor a unit right after a number (``vs 10.82 mEq/L`` names nothing)."""
    for w in _WORD.finditer(text, start, end):
        if w.group().casefold() in _NOT_DESCRIPTIVE or w.group().casefold() in _FILLERS:
            continue
        if _AFTER_NUMBER.search(text, max(start, w.start() - 4), w.start()):
            continue  # a unit ("mEq", "hours") or a suffix of the value itself
        return True
    return False


def aside_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans of ``text`` that are asides (module docstring), in order.

    A marker opens an aside only when the clause names another source or event: a connective
    (``vs``, ``note``, ``whereas``...) followed by a bare value (``7 vs 14.9``, ``4.6 mEq/L vs
    10.82 mEq/L``) is two candidates, and a clause that conditions or replaces the value (``if``,
    ``unless``, ``otherwise``, ``instead``...: ``7 if the record is reliable, otherwise 14.9``) is
    part of the Answer, not context.

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
        named = _describes(text, m.end(), end) if _CONNECTIVE.match(m.group()) else True
        lo = max(0, m.start() - 120)  # bounded look-back (issue 15: no rescans of long texts)
        clause = max(lo - 1, *(text.rfind(c, lo, m.start()) for c in "(;,\n")) + 1  # the marker's clause
        if named and not _CONDITIONS.search(text, clause, end):
            spans.append((m.start(), end))
        pos = max(end, m.end())
    return spans


def parenthetical_spans(text: str, after: int) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans of top-level parentheticals of ``text`` opening at or after
    ``after`` (the end of the committed value) that describe something (module docstring).

    Args:
        text: an Answer; after: an offset into it.

    Returns:
        Spans from ``(`` to its ``)`` (or the end of the text), in order.
    """
    spans: list[tuple[int, int]] = []
    depth, start = 0, -1
    for i in range(len(text)):
        ch = text[i]
        if ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0 and start >= after:
                spans.append((start, i + 1))
    if depth and start >= after:
        spans.append((start, len(text)))
    # one opening with a connective ("(versus 91)") is an aside only where the connective's rule says so
    return [(a, b) for a, b in spans if _describes(text, a, b) and not _CORRECTS.search(text, a, b)
            and not _RESTATES.match(text, a + 1) and not _OPENS_WITH_CONNECTIVE.match(text, a + 1)]


#: A self-correction between two values (issue 32): "X, corrected: Y", "X (corrected to Y)",
#: "X - no, Y", "X; correction: Y", "X, I mean Y", "X -> Y", "X no: Y", "X\n\nFinal: Y" (fresh adversary adv4
#: found "R no: W" credited R). Punctuation or a space comes before the word and punctuation after it
#: (except "actually," / "I mean"), so a correction is a statement of the Answer.
SELF_CORRECTION = re.compile(
    r"(?i)(?:[,;:(]|\s[—–-]{1,2}|\s)\s*(?:(?:corrected|correction|revised|amended)\b\s*(?:to\b|:|,|[—–-])|"
    r"(?:no|sorry|wait|i\s+mean|final(?:\s+answer)?)\s*[,:;—–-]|actually\s*[,:]|i\s+mean\b)"
    # an arrow from a value to its replacement: "12.1 -> 12.4", "9978 mL → -22 mL" (blind corpus c32b)
    r"|\s*(?:-+>|=>|→|⟶|⇒)\s*"
)


_CORRECTION_LABEL = re.compile(r"(?i)\s*(?:final(?:\s+answer)?|corrected|correction|revised|amended|update[d]?|"
                               r"no|sorry|wait|actually|i\s+mean)\s*")


def correction_label(label: str) -> bool:
    """Whether ``label`` (a ``label: value`` line's label) announces a correction of what came before
    ("Final: 2.1", "Correction: 2.1", "No: 2.1"): such a line is no detail of the lead
    (``verifier.match.lead``); the whole Answer is read and :func:`after_correction` commits to it."""
    return _CORRECTION_LABEL.fullmatch(label) is not None


def after_correction(text: str, toks: Sequence) -> list:
    """The tokens after the last self-correction of ``text`` that has a token before it and one
    after it (issue 32: "X, corrected: Y" and "X — no, Y" commit to Y), else all of ``toks``.

    A correction commits to the last value, so a response is judged as if it had stated that
    value alone: no hedging policy gains (``R, corrected: W`` is W, and hedge words after the
    correction, ``X, corrected: Y or Z``, still make the Answer ambiguous: ``commit.hedge_word``).

    Args:
        text: the Answer (possibly masked to the same length); toks: tokens with ``.start``/``.end``.

    Returns:
        A list of the tokens kept, in order.
    """
    if len(toks) < 2:
        return list(toks)
    cut = -1
    for m in SELF_CORRECTION.finditer(text, toks[0].end, toks[-1].start):
        cut = m.end()
    if cut < 0:
        return list(toks)
    return [t for t in toks if t.start >= cut]


def _inside_brackets(text: str, pos: int) -> bool:
    return text.count("(", 0, pos) > text.count(")", 0, pos)


def committed(text: str, toks: Sequence, parenthetical: bool = False) -> list:
    """The tokens (``.start`` offsets into ``text``) that state the answer: those after the last
    self-correction (:func:`after_correction`), then those outside the asides of ``text``; when all
    lie in asides, those of the first aside holding one.

    Args:
        text: the Answer; toks: tokens with ``.start`` / ``.end`` offsets, in order.
        parenthetical: also treat a descriptive parenthetical after the first token outside
            any parenthesis as an aside (dates: module docstring).

    Returns:
        A list of the tokens kept, in their order (empty only when ``toks`` is).
    """
    toks = after_correction(text, toks)
    if len(toks) < 2:
        return list(toks)
    spans = aside_spans(text)
    if parenthetical:
        first = next((t for t in toks if not _inside_brackets(text, t.start)), None)
        if first is not None:
            spans = sorted(spans + parenthetical_spans(text, first.end))
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


_STATED = re.compile(r"[A-Za-z0-9][^A-Za-z0-9]*[;,.\n—]\s*$")


def aside_only(text: str, toks: Sequence) -> bool:
    """Whether the Answer states something else and holds values of the asked type only in asides:
    every token lies in an aside, and the first such aside follows a statement of the Answer (it
    stands in a parenthetical opened after other text, ``HOME (the other record shows
    2177-02-11)``, or after a finished clause, ``HOME; the other record shows ...``). The committed
    value decides, and an aside never rescues it. An Answer that opens with the aside (``the eMAR
    records 11:30; the input record shows 11:20``) is not aside-only: its first aside states it.

    Args:
        text: the Answer (possibly masked to the same length); toks: tokens with ``.start``.

    Returns:
        True when no token is committed (the caller fails the Answer).
    """
    if not toks:
        return False
    spans = aside_spans(text)
    if not spans or any(not any(a <= t.start < b for a, b in spans) for t in toks):
        return False
    a = min(a for a, b in spans if any(a <= t.start < b for t in toks))
    opened = text.rfind("(", 0, a)
    if opened > 0 and text.find(")", opened, a) == -1 and text[:opened].strip(" *_`>\t"):
        return True
    return _STATED.search(text, max(0, a - 120), a) is not None
