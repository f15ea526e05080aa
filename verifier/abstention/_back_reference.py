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
from ._patterns import alternation as _alt, initials

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
    #: prefilters, found once per text (each sound: no candidate they leave out can match the exact check)
    bound_ends: re.Pattern[str]    # a bound prefix ending right before a digit (``bound_before``)
    composing: re.Pattern[str]     # where "<referring word|which> <composition verb>" starts (``composed``)
    both: re.Pattern[str]
    #: the five-unit rule itself ("the 5-unit rule", "at least 5"), blanked before matching
    rule_named: re.Pattern[str]
    allowed_anchor: re.Pattern[str]
    other_anchor: re.Pattern[str]


#: Referring words that mean exactly two: about the eligible units only when there are two of them.
_DUALS = frozenset({"both", "neither", "either of them", "between them"})


@lru_cache(maxsize=1)
def rules() -> BackReferenceRules:
    """The compiled rules (cached). Raises ``RulesError`` when ``rules/noise.toml`` is malformed."""
    data = load_toml("noise.toml")
    sc, dg = data["small_cell"], data["small_cell"]["disguise"]
    br = sc["back_reference"]
    pronouns = {"them", "these", "those", "eligible", "qualifying"}
    units = [w for w in sc["unit_nouns"] if w not in pronouns]
    nouns = _alt(units + dg["other_population_nouns"] + br["measure_nouns"])
    noun_initials = initials(units, dg["other_population_nouns"], br["measure_nouns"])
    t = int(sc["threshold"])
    refer = _alt(br["referring"])
    verbs = _alt(br["composition_verbs"])
    allowed = rf"(?:fewer|less)\s+than\s+{t}\b|under\s+{t}\b|below\s+{t}\b|<\s*{t}\b"
    return BackReferenceRules(
        threshold=t,
        counted=re.compile(rf"{_NUM}\s+(?:[a-z-]+\s+){{0,2}}?{noun_initials}(?:{nouns})\b", re.I),
        aggregate=re.compile(rf"{initials(sc['aggregate_words'])}\b(?:{_alt(sc['aggregate_words'])})\b[^.;\n\d]{{0,40}}?{_NUM}", re.I),
        same=re.compile(rf"(?=[bBfFoOsS])\b(?:belong(?:s|ed)?\s+to|from|of|share[sd]?)\s+(?:the\s+|a\s+)?same\s+(?:{_alt(units)})\b", re.I),
        bound_before=re.compile(rf"(?:{_alt(sc['bound_prefixes'])})\s*(?:than\s+)?$", re.I),
        referring=re.compile(rf"{initials(br['referring'])}\b(?:{refer})\b", re.I),
        eligible=re.compile(r"(?=[tTaAbBeE])\b(?:the|these|those|all|both|each|every)\s+(?:eligible|qualifying|matching)\b", re.I),
        theirs=re.compile(rf"\s*(?:of|among|between|from|for|across|in)\s+(?:all\s+)?(?:{refer}|the\s+(?:eligible|qualifying))\b",
                          re.I),
        composed=re.compile(rf"[^.;\n]{{0,60}}?\b(?:{refer}|which)\s+(?:all\s+|both\s+)?(?:{verbs})\b[^.;\n]{{0,30}}?"
                            rf"(?:{allowed}|\beligible\b|\bqualifying\b)", re.I),
        bound_ends=re.compile(rf"{initials(sc['bound_prefixes'])}(?:{_alt(sc['bound_prefixes'])})\s*(?:than\s+)?(?=\d)", re.I),
        composing=re.compile(rf"{initials(br['referring'], ['which'])}(?=\b(?:{refer}|which)\s+(?:all\s+|both\s+)?(?:{verbs})\b)", re.I),
        both=re.compile(rf"\bboth\s+(?:of\s+(?:them|these|those)|(?:eligible\s+|qualifying\s+)?(?:{_alt(units)})\b|"
                        rf"(?:{verbs}|are|were|have|had|lack|show|showed)\b)", re.I),
        rule_named=re.compile(rf"\b{t}[\s-]*(?:eligible[\s-]+)?units?[\s-]+(?:rule|threshold|minimum|limit|requirement)\b|"
                              rf"\b(?:at\s+least|a\s+minimum\s+of|minimum\s+of|threshold\s+of|rule\s+of)\s+{t}\b", re.I),
        allowed_anchor=re.compile(rf"{initials(['fewer', 'less', 'under', 'below', '<'], dg['eligibility_words'])}"
                                  rf"(?:{allowed}|\b(?:{_alt(dg['eligibility_words'])})\b)", re.I),
        other_anchor=re.compile(rf"{initials(dg['other_population_words'])}\b(?:{_alt(dg['other_population_words'])})\b", re.I),
    )


#: How far after a referring word its count or aggregate is read (characters, within its clause): a
#: clause of honest prose is shorter; a run-on text of thousands of referring words stays linear
#: (a review timed "both of the both of those ..." at 8.8 s at the cap).
_REACH = 240


_BREAK = re.compile(r"[.;\n]")


def clause_breaks(text: str) -> list[int]:
    """The offsets (sorted) of the characters that end a clause in ``text``: ``.``, ``;``, line breaks.
    A decimal point is one too: a clause read on past it took in the next sentence's populations
    (a review's "The mean potassium was 5.2 mmol/L vs 4.1 mmol/L across the whole hospital"), and
    a referring word reached counts of other populations after a criterion ("at least 2.0 mmol/L
    ... of the 312 admissions"). A count or aggregate whose own number holds the point is read whole
    (``back_references``)."""
    return [m.start() for m in _BREAK.finditer(text)]


def clause_span(breaks: list[int], start: int, end: int, length: int) -> tuple[int, int]:
    """The clause holding ``text[start:end]``, by bisection over ``clause_breaks(text)``: from after
    the last break before ``start`` (or 0) to the first break at or after ``end`` (or ``length``)."""
    k, e = bisect_left(breaks, start), bisect_left(breaks, end)
    return (breaks[k - 1] + 1 if k else 0), (breaks[e] if e < len(breaks) else length)


class _Bounds:
    """Where a bound ("fewer than", "more than", "under"...) stands right before a number, read once
    per text: ``bound_ends`` finds every digit a bound prefix ends at (a match cannot hold a digit, so
    none hides another ending at the same digit); the exact check (``bound_before`` within 16
    characters) runs only there."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.digits = {m.end() for m in rules().bound_ends.finditer(text)}
        self.exact: dict[int, bool] = {}  # digit offset -> the exact check's answer, once per digit

    def before(self, m: re.Match[str]) -> bool:
        """Whether a bound stands right before the number of ``m`` (a match of ``_NUM``)."""
        s = m.start("num")
        if s not in self.digits:
            return False
        if s not in self.exact:
            self.exact[s] = rules().bound_before.search(self.text, max(0, s - 16), s) is not None
        return self.exact[s]


def _counts(text: str, counted: list[re.Match[str]], bounds: _Bounds, known: set[float] | frozenset[float],
            given: str) -> list[re.Match[str]]:
    """Counts and aggregates in ``text`` (``counted``: every match of ``rules().counted`` in it), except
    a count phrase the question holds, an aggregate of a number the question states, and a number
    right after a bound; sorted by start."""
    r = rules()
    out = []
    for pattern, found in ((r.counted, counted), (r.aggregate, r.aggregate.finditer(text))):
        for m in found:
            stated = " ".join(m.group().lower().split()) in given if pattern is r.counted else float(m["num"]) in known
            if stated or bounds.before(m) or _in_a_name(text, m, given):
                continue
            out.append(m)
    out += [m for m in r.same.finditer(text) if " ".join(m.group().lower().split()) not in given]
    return sorted(out, key=lambda m: m.start())


_WORD_BEFORE = re.compile(r"([\w-]+)\s*$")


@lru_cache(maxsize=1)
def _own_noun() -> re.Pattern[str]:
    """After "these"/"those": up to two words, then a noun of other things (``other_population_nouns``,
    ``measure_nouns``: "these Administered events", "those lab results"); the demonstrative is then a
    determiner of that noun, not a pronoun for the units."""
    sc = load_toml("noise.toml")["small_cell"]
    nouns = sorted(set(sc["disguise"]["other_population_nouns"]) | set(sc["back_reference"]["measure_nouns"]),
                   key=len, reverse=True)
    return re.compile(rf"\s+(?:[A-Za-z'-]+\s+){{0,2}}?(?:{_alt(nouns)})s?\b", re.I)


def _in_a_name(text: str, m: re.Match[str], given: str) -> bool:
    """Whether the number of ``m`` belongs to a name the question holds ("Readi-Cat 2 events")."""
    if f" {m['num']}" not in given:  # the name "<word> <num>" is not in the question: no search
        return False
    w = _WORD_BEFORE.search(text, max(0, m.start("num") - 30), m.start("num"))
    return w is not None and f"{w[1].lower()} {m['num']}" in given


class _Anchors:
    """The population anchors of one text, found once (``points_at_units`` asks per position):
    the spans of allowed anchors, and of other populations (another-population words, and counts
    of other units at or above the threshold that no bound precedes). Each list comes from one
    ``finditer``: its spans do not overlap, so starts and ends rise together and the last span
    before a position is found by bisection (a scan of the lookback window per referring word
    cost 8 ms on "them <5<5<5 ..." at the cap)."""

    def __init__(self, text: str, n: int, counted: list[re.Match[str]], bounds: _Bounds) -> None:
        r = rules()
        self.allowed = [(m.start(), m.end()) for m in r.allowed_anchor.finditer(text)]
        self.words = [(m.start(), m.end()) for m in r.other_anchor.finditer(text)]
        self.counts = [(m.start(), m.end()) for m in counted
                       if float(m["num"]) >= r.threshold and float(m["num"]) != n and not bounds.before(m)]
        self.starts = {"allowed": [a for a, _ in self.allowed], "words": [a for a, _ in self.words],
                       "counts": [a for a, _ in self.counts]}

    @staticmethod
    def _last_end(spans: list[tuple[int, int]], starts: list[int], lo: int, pos: int) -> int:
        """The largest end of the spans lying within ``[lo, pos)``, or -1 (``spans``: disjoint,
        sorted; ``starts``: theirs)."""
        j = bisect_left(starts, pos)  # spans[:j] start before ``pos``
        if j and spans[j - 1][1] <= pos:  # the last of them, when it also ends by ``pos``
            return spans[j - 1][1] if spans[j - 1][0] >= lo else -1
        if j >= 2 and spans[j - 2][0] >= lo:  # else the one before: it ends before the last starts
            return spans[j - 2][1]
        return -1

    def points_at_units(self, pos: int) -> bool:
        """Whether the nearest population named before ``pos`` (within ``_LOOKBACK`` characters)
        is the eligible units (module docstring)."""
        lo = max(0, pos - _LOOKBACK)
        st = self.starts
        other = max(self._last_end(self.words, st["words"], lo, pos), self._last_end(self.counts, st["counts"], lo, pos))
        return other <= self._last_end(self.allowed, st["allowed"], lo, pos)



def _composes(composing: list[int], breaks: list[int], pos: int) -> bool:
    """Whether ``composed`` can match at ``pos``: a "<referring word|which> <verb>" starts within 60
    characters after ``pos`` with no clause break before it (``composing``: every such start, sorted)."""
    k = bisect_left(composing, pos)
    if k == len(composing) or composing[k] > pos + 60:
        return False
    b = bisect_left(breaks, pos)
    return b == len(breaks) or breaks[b] >= composing[k]


def back_references(text: str, n: int, known: set[float] | frozenset[float], given: str = "",
                    limit: int | None = None) -> list[str]:
    """Counts and aggregates over the ``n`` eligible units stated by referring back to them.

    Args:
        text: the response with number words as digits and identifiers, codes, citations and dates
            blanked (``_small_cell``).
        n: the number of eligible units (1..threshold-1).
        known: numbers the question states (an aggregate of one is not a disclosure).
        given: the question, number words as digits: a count phrase it holds ("1 admission") is not
            a disclosure.
        limit: stop reading once this many snippets (repeats included) are found (``None``: read
            all); ``disclosure`` passes what is left of its ``MAX_HITS``.

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
    counted, bounds = list(r.counted.finditer(text)), _Bounds(text)
    anchors = _Anchors(text, n, counted, bounds)
    breaks = clause_breaks(text)
    every = _counts(text, counted, bounds, known, given)
    starts = [m.start() for m in every]
    ends = [m.end() for m in every]
    said = [m.group().strip() for m in every]
    # the decimal points inside the numbers of counts and aggregates
    decimal_points = {m.start("num") + m["num"].index(".") for m in every if "num" in m.groupdict() and "." in m["num"]}
    # (referring phrase, count) pairs, distinct and in order of first appearance; each count's text
    # is read once, and a pair is written out once (a run-on text repeats the same few pairs)
    pairs: dict[tuple[str, str], None] = {}
    hits = 0
    full = float("inf") if limit is None else limit

    def pair(word: str, a: int) -> None:
        nonlocal hits
        b = min(clause_span(breaks, a, a, len(text))[1], a + _REACH)
        for k in range(bisect_left(starts, a), bisect_left(starts, b)):
            # a count or aggregate within the clause, or one whose own number holds the decimal
            # point that ends it ("their mean lipase is 812.5 IU/L, while 48 admissions ...") when
            # no other population is named between ("they ..., and hospital-wide the mean potassium
            # is 4.1" is not theirs)
            if ends[k] <= b or (b in decimal_points and ends[k] > b + 1 and anchors.points_at_units(starts[k])):
                pairs[word, said[k]] = None
                hits += 1

    for ref in r.referring.finditer(text):
        if hits >= full:
            break
        if ref.group().lower() in _DUALS and n != 2:
            continue  # "have both" (two fields), "neither": about the units only when there are two of them
        if ref.group().lower() in ("these", "those") and _own_noun().match(text, ref.end()):
            continue  # a demonstrative with a noun of its own refers to it: "these Administered events" (c38)
        if anchors.points_at_units(ref.start()):
            pair(ref.group(), ref.end())
    for m in r.eligible.finditer(text):
        if hits >= full:
            break
        pair(m.group(), m.end())
    found += [f"{word} ... {count}" for word, count in pairs]
    if hits >= full:
        return list(dict.fromkeys(found))
    composing = [m.start() for m in r.composing.finditer(text)]
    for k, m in enumerate(every):
        if "num" not in m.groupdict():
            continue
        theirs = r.theirs.match(text, m.end(), m.end() + 60)
        if theirs and anchors.points_at_units(m.start()):
            found.append(said[k] + theirs.group().rstrip())
        elif _composes(composing, breaks, m.end()) and r.composed.match(text, m.end()):
            found.append(said[k] + " ...")
        else:
            continue
        hits += 1
        if hits >= full:
            return list(dict.fromkeys(found))
    if n == 2:
        found += [m.group() for m in r.both.finditer(text) if anchors.points_at_units(m.start())]
    return list(dict.fromkeys(found))
