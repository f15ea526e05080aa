"""Aggregates over the eligible units stated in words, by referring back to them (issue 17 kind 3,
small-cell side), for ``verifier.abstention._small_cell``.

ARCHITECTURE.md section 4 point 9. A population Noise response may say "fewer than five" and nothing
more about the 1..threshold-1 eligible units. Besides digits, number words, bounds, fractions and
enumerations (``_small_cell``, ``_disguise``), a count or aggregate is disclosed when the sentence
refers back to the units and then counts or measures something of theirs:

* a referring phrase (``them``, ``they``, ``their``, ``these``, ``those``, ``both``, ``each of them``, ``all of
  them``, ``the eligible/qualifying <noun>``...) followed in the same clause by a count or an aggregate:
  a number with a unit noun, another counted noun or a time noun ("all of them come from 1 patient",
  "each of these patients had 2 stays", "the eligible admissions average 3 days"), a number after an
  aggregate word, or "belong to / from / of the same <unit noun>" (a count of one: "both belong to the
  same patient"; not a phrase the question holds, "of the same patient");
* a count qualified as theirs: "<number> <noun> of/among/between/for those patients|them|the eligible..."
  ("they were coded on 5 admissions of those patients");
* a count that the units are then said to make up: "<number> <noun> ..., but these belong to / come
  from / span fewer than five patients" (the count is an aggregate over those patients);
* ``both`` about the units when there are exactly two ("both belong to ...", "both admissions").

A pronoun refers to the eligible units unless the nearest population named before it (within
``_LOOKBACK`` characters) is another one: a count of units or other things at or above the threshold
("the lab was abnormal in 48 admissions; fewer than five of them ..."), or a word of
``[small_cell.disguise] other_population_words`` ("the database has 100 patients"). "Fewer than five",
"under five", the eligibility words, or nothing at all, point at the eligible units. Numbers the question
states (and a number in a name it holds, "Readi-Cat 2"), and numbers after a bound ("more than 30 days"),
are never counts here. The words are data in
``rules/noise.toml`` (``[small_cell]`` unit nouns and aggregate words, ``[small_cell.disguise]`` other
population words and nouns, ``[small_cell.back_reference]``).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache

from ..contract import load_toml

_LOOKBACK = 300
_NUM = r"(?<![\w.])(?P<num>\d+(?:\.\d+)?)(?![\w.]\d)"


@dataclass(frozen=True)
class BackReferenceRules:
    """``rules/noise.toml`` words for this pass, compiled."""

    threshold: int
    counted: re.Pattern[str]       # "<num> [two words] <noun>"
    aggregate: re.Pattern[str]     # "<aggregate word> ... <num>"
    same: re.Pattern[str]          # "the same <unit noun>"
    bound_before: re.Pattern[str]  # a bound prefix right before a number
    referring: re.Pattern[str]     # pronouns and demonstratives
    eligible: re.Pattern[str]      # "the eligible/qualifying ..."
    theirs: re.Pattern[str]        # right after a counted noun: "of those patients", "among them"
    composed: re.Pattern[str]      # "these belong to fewer than 5 ..." after a count
    both: re.Pattern[str]
    #: the five-unit rule itself ("the 5-unit rule", "at least 5"), blanked before matching
    rule_named: re.Pattern[str]
    allowed_anchor: re.Pattern[str]
    other_anchor: re.Pattern[str]


#: Referring words that mean exactly two: about the eligible units only when there are two of them.
_DUALS = frozenset({"both", "neither", "either of them", "between them"})


def _alt(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))


@lru_cache(maxsize=1)
def rules() -> BackReferenceRules:
    """The compiled rules (cached). Raises ``RulesError`` when ``rules/noise.toml`` is malformed."""
    data = load_toml("noise.toml")
    sc, dg = data["small_cell"], data["small_cell"]["disguise"]
    br = sc["back_reference"]
    pronouns = {"them", "these", "those", "eligible", "qualifying"}
    units = [w for w in sc["unit_nouns"] if w not in pronouns]
    nouns = _alt(units + dg["other_population_nouns"] + br["measure_nouns"])
    t = int(sc["threshold"])
    refer = _alt(br["referring"])
    verbs = _alt(br["composition_verbs"])
    allowed = rf"(?:fewer|less)\s+than\s+{t}\b|under\s+{t}\b|below\s+{t}\b|<\s*{t}\b"
    return BackReferenceRules(
        threshold=t,
        counted=re.compile(rf"{_NUM}\s+(?:[a-z-]+\s+){{0,2}}?(?:{nouns})\b", re.I),
        aggregate=re.compile(rf"\b(?:{_alt(sc['aggregate_words'])})\b[^.;\n\d]{{0,40}}?{_NUM}", re.I),
        same=re.compile(rf"\b(?:belong(?:s|ed)?\s+to|from|of|share[sd]?)\s+(?:the\s+|a\s+)?same\s+(?:{_alt(units)})\b", re.I),
        bound_before=re.compile(rf"(?:{_alt(sc['bound_prefixes'])})\s*(?:than\s+)?$", re.I),
        referring=re.compile(rf"\b(?:{refer})\b", re.I),
        eligible=re.compile(r"\b(?:the|these|those|all|both|each|every)\s+(?:eligible|qualifying|matching)\b", re.I),
        theirs=re.compile(rf"^\s*(?:of|among|between|from|for|across|in)\s+(?:all\s+)?(?:{refer}|the\s+(?:eligible|qualifying))\b",
                          re.I),
        composed=re.compile(rf"[^.;\n]{{0,60}}?\b(?:{refer}|which)\s+(?:all\s+|both\s+)?(?:{verbs})\b[^.;\n]{{0,30}}?"
                            rf"(?:{allowed}|\beligible\b|\bqualifying\b)", re.I),
        both=re.compile(rf"\bboth\s+(?:of\s+(?:them|these|those)|(?:eligible\s+|qualifying\s+)?(?:{_alt(units)})\b|"
                        rf"(?:{verbs}|are|were|have|had|lack|show|showed)\b)", re.I),
        rule_named=re.compile(rf"\b{t}[\s-]*(?:eligible[\s-]+)?units?[\s-]+(?:rule|threshold|minimum|limit|requirement)\b|"
                              rf"\b(?:at\s+least|a\s+minimum\s+of|minimum\s+of|threshold\s+of|rule\s+of)\s+{t}\b", re.I),
        allowed_anchor=re.compile(rf"{allowed}|\b(?:{_alt(dg['eligibility_words'])})\b", re.I),
        other_anchor=re.compile(rf"\b(?:{_alt(dg['other_population_words'])})\b", re.I),
    )


#: How far after a referring word its count or aggregate is read (characters, within its clause): a
#: clause of honest prose is shorter; a run-on text of thousands of referring words stays linear
#: (a review timed "both of the both of those ..." at 8.8 s at the cap).
_REACH = 240


def clause_breaks(text: str) -> list[int]:
    """The offsets (sorted) of the characters that end a clause in ``text``: ``.``, ``;``, line breaks."""
    return [i for i, ch in enumerate(text) if ch in ".;\n"]


def clause_span(breaks: list[int], start: int, end: int, length: int) -> tuple[int, int]:
    """The clause holding ``text[start:end]``, by bisection over ``clause_breaks(text)``: from after
    the last break before ``start`` (or 0) to the first break at or after ``end`` (or ``length``)."""
    k, e = bisect_left(breaks, start), bisect_left(breaks, end)
    return (breaks[k - 1] + 1 if k else 0), (breaks[e] if e < len(breaks) else length)


def _bounded(text: str, m: re.Match[str]) -> bool:
    """Whether a bound ("fewer than", "more than", "under"...) stands right before the number of ``m``."""
    return rules().bound_before.search(text, max(0, m.start("num") - 16), m.start("num")) is not None


def _counts(text: str, start: int, end: int, known: set[float] | frozenset[float], given: str) -> list[re.Match[str]]:
    """Counts and aggregates in ``text[start:end]``, except a count phrase the question holds, an
    aggregate of a number the question states, and a number right after a bound."""
    r = rules()
    out = []
    for pattern in (r.counted, r.aggregate):
        for m in pattern.finditer(text, start, end):
            stated = " ".join(m.group().lower().split()) in given if pattern is r.counted else float(m["num"]) in known
            if stated or _bounded(text, m) or _in_a_name(text, m, given):
                continue
            out.append(m)
    out += [m for m in r.same.finditer(text, start, end) if " ".join(m.group().lower().split()) not in given]
    return out


_WORD_BEFORE = re.compile(r"([\w-]+)\s*$")


def _in_a_name(text: str, m: re.Match[str], given: str) -> bool:
    """Whether the number of ``m`` belongs to a name the question holds ("Readi-Cat 2 events")."""
    w = _WORD_BEFORE.search(text, max(0, m.start("num") - 30), m.start("num"))
    return w is not None and f"{w[1].lower()} {m['num']}" in given


class _Anchors:
    """The population anchors of one text, found once (``points_at_units`` asks per position):
    the spans of allowed anchors, and of other populations (another-population words, and counts
    of other units at or above the threshold that no bound precedes), each sorted by start."""

    def __init__(self, text: str, n: int) -> None:
        r = rules()
        self.allowed = [(m.start(), m.end()) for m in r.allowed_anchor.finditer(text)]
        other = [(m.start(), m.end()) for m in r.other_anchor.finditer(text)]
        other += [(m.start(), m.end()) for m in r.counted.finditer(text)
                  if float(m["num"]) >= r.threshold and float(m["num"]) != n and not _bounded(text, m)]
        self.other = sorted(other)
        self.allowed_starts = [a for a, _ in self.allowed]
        self.other_starts = [a for a, _ in self.other]

    @staticmethod
    def _last_end(spans: list[tuple[int, int]], starts: list[int], lo: int, pos: int) -> int:
        """The largest end of the spans lying within ``[lo, pos)``, or -1."""
        best = -1
        for a, b in spans[bisect_left(starts, lo):bisect_left(starts, pos)]:
            if b <= pos and b > best:
                best = b
        return best

    def points_at_units(self, pos: int) -> bool:
        """Whether the nearest population named before ``pos`` (within ``_LOOKBACK`` characters)
        is the eligible units (module docstring)."""
        lo = max(0, pos - _LOOKBACK)
        last_allowed = self._last_end(self.allowed, self.allowed_starts, lo, pos)
        return self._last_end(self.other, self.other_starts, lo, pos) <= last_allowed



def back_references(text: str, n: int, known: set[float] | frozenset[float], given: str = "") -> list[str]:
    """Counts and aggregates over the ``n`` eligible units stated by referring back to them.

    Args:
        text: the response with number words as digits and identifiers, codes, citations and dates
            blanked (``_small_cell``).
        n: the number of eligible units (1..threshold-1).
        known: numbers the question states (an aggregate of one is not a disclosure).
        given: the question, number words as digits: a count phrase it holds ("1 admission") is not
            a disclosure.

    Returns:
        The disclosing snippets (possibly empty), in order of appearance.
    """
    r = rules()
    given = " ".join(given.lower().split())
    # the five-unit rule named ("the 5-unit rule", "a minimum of 5") is the allowed statement, not an aggregate
    text = r.rule_named.sub(lambda m: " " * len(m.group()), text)
    found: list[str] = []
    # anchors and counts found once, then looked up per referring word: a text of thousands of
    # referring words stays linear (a review timed "them 3 days them 3 days ..." at seconds)
    anchors = _Anchors(text, n)
    breaks = clause_breaks(text)
    every = _counts(text, 0, len(text), known, given)
    starts = [m.start() for m in every]

    def within(a: int, b: int) -> list[re.Match[str]]:
        return [m for m in every[bisect_left(starts, a):bisect_left(starts, b)] if m.end() <= b]

    for ref in r.referring.finditer(text):
        if ref.group().lower() in _DUALS and n != 2:
            continue  # "have both" (two fields), "neither": about the units only when there are two of them
        if not anchors.points_at_units(ref.start()):
            continue
        end = min(clause_span(breaks, ref.end(), ref.end(), len(text))[1], ref.end() + _REACH)
        found += [f"{ref.group()} ... {m.group().strip()}" for m in within(ref.end(), end)]
    for m in r.eligible.finditer(text):
        end = min(clause_span(breaks, m.end(), m.end(), len(text))[1], m.end() + _REACH)
        found += [f"{m.group()} ... {c.group().strip()}" for c in within(m.end(), end)]
    for m in every:
        if "num" not in m.groupdict():
            continue
        theirs = r.theirs.match(text[m.end():m.end() + 60])
        if theirs and anchors.points_at_units(m.start()):
            found.append(m.group().strip() + theirs.group().rstrip())
        elif r.composed.match(text, m.end()):
            found.append(m.group().strip() + " ...")
    if n == 2:
        found += [m.group() for m in r.both.finditer(text) if anchors.points_at_units(m.start())]
    return list(dict.fromkeys(found))
