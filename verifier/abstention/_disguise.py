"""Disguised small-cell disclosures (issue 18 point 4), for ``verifier.abstention._small_cell``.

ARCHITECTURE.md section 4 ("Noise abstentions", five-unit rule). For a population task with
1..threshold-1 eligible units ``n``, the response must not reveal ``n`` or an aggregate over
those units in ANY notation. Besides digits and number words (``_small_cell``), this module
reads (rules in ``rules/noise.toml`` ``[small_cell.disguise]``):

* ``normalise_notation``: superscripts, subscripts, full-width and other compatibility
  digits (Unicode NFKC: "²" -> "2"), and stand-alone upper-case roman numerals II-IV
  ("Cohort size: III"; not after "type", "stage", "class"...), "I" only as the value of
  a count ("size: I");
* ``tight_bounds``: bounds on the units tighter than the threshold ("fewer than 4", "at
  most 3", "more than one", "at least 2", "between 2 and 4"); "fewer than five" and
  "under five" stay allowed;
* ``fractions``: ``n`` of a known total ("2 of 40 admissions", "2/40", "2 out of 40");
* ``shortfalls``: ``n`` stated as a shortfall from the threshold or from a count ("one
  short of the five-unit threshold" for 4, "2 shy of 5 admissions" for 3);
* ``definite_counts``: "both" before a unit noun (2: "both eligible admissions"), a unit
  named in the singular as the eligible or only one (1: "the eligible patient", "the only
  qualifying admission");
* ``enumerations``: the units' identifiers listed after a unit word ("admissions 2556,
  2108"), or their values listed after a value word ("values 4.1, 3.9"), as many as ``n``
  (``n >= 2``: one identifier named is not told apart from an example of a unit that lacks
  the requirement);
A bound, fraction or list counts only when it is about units: a unit noun follows its
number within ``noun_window`` linking words ("eligible", "distinct", "and fewer than 5"), or an eligibility word ("eligible", "qualify",
"cohort") precedes it closely. ``other_population`` says whether a clause is about
another population (a count of units, or of values, events, rows..., at or above the
threshold: "of the 48 admissions", "across 3500 results", "all 1902 charted values"; "all" not followed by "of them"/"eligible"; or "database", "hospital",
"overall"...), so an aggregate there
is not over the eligible units (issue 17 kind 4).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache

from ..contract import load_toml
from ._back_reference import clause_breaks, clause_span
from ._patterns import alternation as _alt, initials
from ._structure import numerals


@dataclass(frozen=True)
class DisguiseRules:
    """``[small_cell.disguise]``, compiled."""

    threshold: int
    bound: re.Pattern[str]            # group "phrase", group "num"
    between: re.Pattern[str]          # groups "a", "b"
    kinds: dict[str, str]
    about_units_after: re.Pattern[str]
    noun_soon: re.Pattern[str]        # a unit noun within three words of any kind (fractions)
    eligibility: re.Pattern[str]
    fraction: re.Pattern[str]
    roman: re.Pattern[str]
    roman_values: dict[str, int]
    roman_exempt: frozenset[str]
    ids: re.Pattern[str]
    values: re.Pattern[str]
    unit_count: re.Pattern[str]
    other_words: re.Pattern[str]
    shortfall: re.Pattern[str]        # groups "k", "m", "target"
    threshold_words: frozenset[str]
    both: re.Pattern[str]
    singular: re.Pattern[str]
    collective: re.Pattern[str]       # group "w"
    collective_values: dict[str, int]
    #: where a unit noun starts after a non-letter, and where an eligibility word appears (inside words too): ``_Units``' screens
    noun_anywhere: re.Pattern[str]
    noun_at: re.Pattern[str]  # a unit noun starting here (``match``)
    eligibility_anywhere: re.Pattern[str]


#: Words that may stand between a bound's number and its unit noun ("more than 3 and fewer than 5 admissions").
_LINK_WORDS = ["eligible", "qualifying", "distinct", "unique", "different", "such", "separate", "individual", "of",
               "the", "and", "or", "fewer", "more", "less", "than", "at", "most", "least", "to"]


@lru_cache(maxsize=1)
def rules() -> DisguiseRules:
    """The compiled rules (cached). Raises ``RulesError`` when ``rules/noise.toml`` is malformed."""
    data = load_toml("noise.toml")
    sc = data["small_cell"]
    dg = sc["disguise"]
    nouns = _alt(sc["unit_nouns"])
    window = int(dg.get("noun_window", 3))
    num = r"\d+(?:\.\d+)?"
    kinds = {p.lower(): k for p, k in dg["bounds"]}
    return DisguiseRules(
        threshold=int(sc["threshold"]),
        bound=re.compile(rf"{initials(kinds)}(?<![\w<>=≤≥])(?P<phrase>{_alt(list(kinds))})\s*(?P<num>\d+)(?![\w.]\d)", re.I),
        between=re.compile(r"\bbetween\s+(?P<a>\d+)\s+(?:and|to|-)\s+(?P<b>\d+)\b|(?<![\w.])(?P<c>\d+)\s*(?:-|–|to)\s*(?P<d>\d+)(?![\w.])", re.I),
        kinds=kinds,
        about_units_after=re.compile(rf"^\s*(?:(?:{_alt(_LINK_WORDS)}|\d+)\s+){{0,{window}}}?(?:{nouns})\b", re.I),
        noun_soon=re.compile(rf"^\s*(?:[\w-]+\s+){{0,3}}?(?:{nouns})\b", re.I),
        eligibility=re.compile(rf"\b(?:{_alt(dg['eligibility_words'])})\b[^.;\n]*$", re.I),
        fraction=re.compile(rf"(?<![\w.])(?P<n>\d+)\s*(?:/|of|out of)\s*(?:the\s+|all\s+)?(?P<m>{num})(?![\w.]\d)", re.I),
        roman=re.compile(rf"(?<![\w-])(?:(?P<before>[A-Za-z]+)[\s:,-]+)?(?P<r>{_alt(list(dg['roman']))})(?![\w-])"),
        roman_values={k: int(v) for k, v in dg["roman"].items()},
        roman_exempt=frozenset(w.lower() for w in dg["roman_exempt_after"]),
        ids=re.compile(rf"{initials(dg['id_words'])}\b(?:{_alt(dg['id_words'])})\b\s*(?:(?:ids?|numbers?|#|:|=|are|were|is|include|included)\s*)*(?P<list>\d{{4,}}(?:\s*(?:,|and|or|&|;|/)\s*\d{{4,}})*)", re.I),
        values=re.compile(rf"{initials(dg['value_words'])}\b(?:{_alt(dg['value_words'])})\b[^.;\n\d]{{0,20}}?(?P<list>{num}(?:\s*(?:,|and|&|/)\s*{num})+)", re.I),
        unit_count=re.compile(rf"(?<![\w.])(?P<n>\d+)\s+(?:[a-z-]+\s+){{0,2}}?"
                              rf"{initials(sc['unit_nouns'], dg.get('other_population_nouns', []))}(?:{nouns}|{_alt(dg.get('other_population_nouns', []))})\b", re.I),
        other_words=re.compile(rf"{initials(dg['other_population_words'], ['all'])}(?:\b(?:{_alt(dg['other_population_words'])})\b"
                               r"|\ball\b(?!\s+(?:of\s+)?(?:them|these|those|the eligible|eligible|qualifying|such|\d)))", re.I),
        shortfall=re.compile(rf"(?<![\w.])(?P<k>\d+)\s+(?:{initials(sc['unit_nouns'])}(?:{nouns})\s+)?"
                             rf"{initials(dg['shortfall_words'])}(?:{_alt(dg['shortfall_words'])})\s+"
                             rf"(?:(?:reaching|meeting|making)\s+)?(?:the\s+)?(?:(?P<m>\d+)(?:[\s-]+(?:unit|units))?\s*)?"
                             rf"(?P<target>{_alt(dg['threshold_words'])}|{nouns})?\b", re.I),
        threshold_words=frozenset(w.lower() for w in dg["threshold_words"]),
        both=re.compile(rf"(?=[bB])\bboth\s+(?:of\s+)?(?:(?:the|these|those|their)\s+)?(?:(?:eligible|qualifying|such)\s+)?(?:{nouns})\b", re.I),
        singular=re.compile(rf"(?=[tTaA])\b(?:the|this|that|a)\s+(?:(?:{_alt(dg['singular_markers'])})\s+(?:(?:eligible|qualifying)\s+)?"
                            rf"|(?:eligible|qualifying)\s+)(?:{_alt(dg['singular_nouns'])})\b(?!s)"
                            rf"(?!\s+(?:{_alt(dg['modifier_nouns'])})\b)", re.I),
        collective=re.compile(rf"{initials(dg['collective_words'])}\b(?P<w>{_alt(list(dg['collective_words']))})\s+of\s+(?:(?:the|these|those|eligible|qualifying|"
                              rf"distinct|unique|different|separate)\s+)*(?:[\w-]+\s+)?(?:{_alt(dg['collective_nouns'])})\b", re.I),
        collective_values={k.lower(): int(v) for k, v in dg["collective_words"].items()},
        # where a unit noun starts after a non-letter (``about_units_after`` reads one after white space, or
        # right at the phrase's end, which ``_Units`` checks itself): 3 ms -> 1 ms on a run-on text at the cap
        noun_anywhere=re.compile(rf"{initials(sc['unit_nouns'])}(?<![^\W\d_])(?=(?:{nouns}))", re.I),
        noun_at=re.compile(rf"(?:{nouns})", re.I),
        eligibility_anywhere=re.compile(rf"{initials(dg['eligibility_words'])}(?=(?:{_alt(dg['eligibility_words'])}))", re.I),
    )


#: Cyrillic and Greek letters drawn as Latin ones (Unicode's confusables for the letters of count words).
_LOOKALIKE = str.maketrans("аеорсухіјѕԁһӏАВЕКМНОРСТХІЈЅαοτνικΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
                           "aeopcyxijsdhlABEKMHOPCTXIJSaotvikABEZHIKMNOPTYX")
_MIXED_WORD = re.compile(r"\b(?=\w*[A-Za-z])(?=\w*[\u0370-\u03ff\u0400-\u04ff])\w+\b")


def _latin_lookalikes(text: str) -> str:
    """A word mixing Latin letters with Cyrillic or Greek ones drawn alike is read in Latin ("thrее" with
    two Cyrillic "е" is "three"; fresh adversary adv11, paid on 60 of 60 small-cell tasks); a word wholly in
    another script is that script's (``numerals`` reads its number words)."""
    if text.isascii():
        return text
    return _MIXED_WORD.sub(lambda m: m.group().translate(_LOOKALIKE), text)


def normalise_notation(text: str) -> str:
    """``text`` with digits of any script and compatibility digits (superscripts, subscripts,
    full-width) as ASCII digits (``_structure.numerals``: also keycaps, tally marks, binary and hex
    literals, other languages' number words) and stand-alone upper-case roman numerals II-IV as
    digits (not after an exempt word)."""
    text = numerals(_latin_lookalikes(text))  # any script's digits, keycaps, tallies, based literals, other languages' number words
    r = rules()

    def roman(m: re.Match[str]) -> str:
        before = (m.group("before") or "").lower()
        if before in r.roman_exempt:
            return m.group(0)
        return m.group(0)[: m.start("r") - m.start(0)] + str(r.roman_values[m.group("r")])

    text = r.roman.sub(roman, text)
    # a lone "I" is a pronoun, except as the value of a count ("size: I", "n = I") or as a label's whole value,
    # nothing after it but the line's end or punctuation ("Cohort: I", fresh adversary adv9: a pronoun has a verb)
    text = re.sub(r"\b(size|count|total|number|n)(\s*[:=]\s*|\s+(?:is|of|was)\s+)I\b", r"\g<1>\g<2>1", text)
    # a roman numeral in lower case as a count's value ("(n = ii)", fresh adversary adv10): a numeral as any other
    text = re.sub(r"(?i)\b(size|count|total|number|n|headcount|tally)(\s*[:=]\s*|\s+(?:is|of|was)\s+)(iv|iii|ii|i)\b",
                  lambda m: m.group(1) + m.group(2) + str({"i": 1, "ii": 2, "iii": 3, "iv": 4}[m.group(3).lower()]), text)
    return re.sub(r"(?m)(?:(\w+)[ \t]*)?([:=][ \t]*)I(?=[ \t]*(?:$|[.;,)|]))",
                  lambda m: m.group(0) if (m.group(1) or "").lower() in r.roman_exempt else m.group(0)[:-1] + "1", text)


class _Units:
    """Whether a phrase of one text is about the units: a unit noun within 80 characters after it
    (``about_units_after``), or an eligibility word in the 25 characters before it in its clause
    (``eligibility``). Clause stops, unit nouns and eligibility words are found once per text, at
    the first question, and looked up by bisection; the exact patterns run only where a noun or
    word is near (a run-on text of bounds, "<3 <3 <3 ...", cost 36 ms at the cap with a search per
    bound)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stops: list[int] | None = None  # ".", ";" and line breaks; None: not read yet
        self.nouns: list[int] = []
        self.words: list[int] = []

    def _read(self) -> None:
        r, text = rules(), self.text
        self.stops = clause_breaks(text)
        self.nouns = [m.start() for m in r.noun_anywhere.finditer(text)]
        self.words = [m.start() for m in r.eligibility_anywhere.finditer(text)]

    def near(self, start: int, end: int) -> bool:
        """What ``about`` needs, by bisection alone: a unit noun starting within 80 characters after
        ``end``, or an eligibility word within the 25 before ``start`` (a run-on text of bounds far
        from both, "<3 <3 <3 ...", is settled here, issue 15)."""
        if self.stops is None:
            self._read()
        if self._noun_near(end):
            return True
        k = bisect_left(self.words, start - 25)
        return k < len(self.words) and self.words[k] < start

    def _noun_near(self, end: int) -> bool:
        """Whether a unit noun may start within 80 characters after ``end``: one found after a
        non-letter (``rules().noun_anywhere``), or one right at ``end`` (after a letter there, as in
        "...admissionspatients", which the text-wide search leaves out)."""
        k = bisect_left(self.nouns, end)
        if k < len(self.nouns) and self.nouns[k] < end + 80:
            return True
        return end < len(self.text) and self.text[end].isalpha() and rules().noun_at.match(self.text, end) is not None

    def about(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` is about the units."""
        if not self.near(start, end):
            return False
        r, text, stops = rules(), self.text, self.stops
        if self._noun_near(end) and r.about_units_after.match(text[end:end + 80]):
            return True
        lo = max(clause_span(stops, start, start, len(text))[0], start - 25)  # within ``start``'s clause
        k = bisect_left(self.words, lo)
        return k < len(self.words) and self.words[k] < start and r.eligibility.search(text[lo:start]) is not None


#: digits of a whole number read as a count or a bound; a longer one is none (Python's int() also
#: refuses strings of more than 4,300 digits, which was a ``VERIFIER_ERROR``)
_MAX_DIGITS = 30


def _whole(digits: str) -> int | None:
    """``int(digits)``, or ``None`` beyond ``_MAX_DIGITS`` digits after leading zeros (no count,
    bound or total; "000...0003" is 3)."""
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) <= _MAX_DIGITS else None


def _tight(kind: str, n: int | None, threshold: int) -> bool:
    """Whether a bound of ``kind`` on ``n`` is tighter than the threshold (module docstring)."""
    if n is None:
        return False
    if kind == "upper":
        return n < threshold
    if kind == "upper_inclusive":
        return n < threshold - 1
    if kind == "lower":
        return 1 <= n < threshold
    if kind == "lower_inclusive":
        return 2 <= n < threshold
    raise KeyError(kind)


def tight_bounds(text: str, given: str, limit: int | None = None) -> list[str]:
    """Bounds on the units tighter than the threshold (rule in the module docstring), at most
    ``limit`` of them (``None``: all; ``disclosure`` stops at its ``MAX_HITS``)."""
    r = rules()
    found: list[str] = []
    low_given = given.lower()
    units = _Units(text)
    for m in r.bound.finditer(text):
        if units.near(m.start(), m.end()) and _tight(r.kinds[m.group("phrase").lower()], _whole(m.group("num")), r.threshold) \
                and m.group(0).lower() not in low_given and units.about(m.start(), m.end()):
            found.append(m.group(0).strip())
            if limit is not None and len(found) >= limit:
                return found
    for m in r.between.finditer(text):
        a, b = (m.group("a"), m.group("b")) if m.group("a") else (m.group("c"), m.group("d"))
        a, b = _whole(a), _whole(b)
        if a is not None and b is not None and a < b < r.threshold + 1 and m.group(0).lower() not in low_given and units.about(m.start(), m.end()):
            found.append(m.group(0).strip())
    return found


def fractions(text: str, n: int, known: set[float] | frozenset[float]) -> list[str]:
    """``n`` stated as a part of a total ("2 of 40 admissions")."""
    units = _Units(text)
    return [m.group(0) for m in rules().fraction.finditer(text)
            if _whole(m.group("n")) == n and float(m.group("m")) > n and float(m.group("m")) not in known - {float(n)}
            and (rules().noun_soon.match(text[m.end():m.end() + 80]) or units.about(m.start(), m.end()))]


_SHORT_BY = re.compile(r"(?i)\b(short|shy)\s+by\s+(\d+)\s+(of|from)\b")
#: the shortfall as a noun: "Shortfall vs. the threshold is -2", "deficit relative to the cutoff: 2" (fresh adversary
#: adv13, with U+2212 for the sign: 120 of 120 small-cell tasks) is "2 short of the threshold"
_SHORTFALL_NOUN = re.compile(r"(?i)\b(?:shortfall|deficit|gap|distance)\s+(?:vs\.?|versus|to|from|relative\s+to|against|below|under)"
                             r"\s+(the\s+(?:[\w-]+\s+){0,2}?(?:threshold|cutoff|cut-off|limit|minimum))\s*(?:is|of|=|:|was|equals)?\s*-?(\d+)\b")


def shortfalls(text: str, n: int, given: str) -> list[str]:
    """``n`` stated as a shortfall: ``k`` short of the threshold ("one short of the five-unit
    threshold", ``threshold - k``) or of a stated count ``M`` of units ("2 shy of 5 admissions",
    ``M - k``). ``text`` and ``given`` have number words as digits; a phrase the question itself
    holds states nothing."""
    r = rules()
    found = []
    low_given = given.lower()
    # "short by 3 of the threshold" is "3 short of the threshold" (fresh adversary adv10, in Portuguese:
    # "Faltam 3 para o limiar de cinco")
    text = _SHORT_BY.sub(r"\2 \1 \3", text)
    text = _SHORTFALL_NOUN.sub(r"\2 short of \1", text)
    for m in r.shortfall.finditer(text):
        target = (m.group("target") or "").lower()
        if m.group("m") is not None:
            total = _whole(m.group("m")) if target else None
        else:
            total = r.threshold if target in r.threshold_words else None
        k = _whole(m.group("k"))
        if total is not None and k is not None and total - k == n and m.group(0).lower().strip() not in low_given:
            found.append(m.group(0).strip())
    return found


def definite_counts(text: str, n: int, given: str) -> list[str]:
    """``n`` stated by "both" before a unit noun (``n == 2``), by a unit named in the singular as
    the eligible, only or lone one (``n == 1``; not a unit noun used as a modifier, "the eligible
    patient population"), or by a collective word before units ("a trio of distinct patients": 3;
    "a couple of lab values" states no count of units); a phrase the question itself holds
    states nothing."""
    r = rules()
    low_given = given.lower()
    found = [m.group(0).strip() for m in r.collective.finditer(text)
             if r.collective_values[m.group("w").lower()] == n and m.group(0).lower() not in low_given]
    pattern = r.both if n == 2 else r.singular if n == 1 else None
    if pattern is not None:
        found += [m.group(0).strip() for m in pattern.finditer(text) if m.group(0).lower() not in low_given]
    return found


def enumerations(text: str, n: int, given: str) -> list[str]:
    """The units' identifiers or values listed, as many as ``n``."""
    r = rules()
    found = []
    for m in r.ids.finditer(text):
        ids = {x for x in re.findall(r"\d{4,}", m.group("list")) if x not in given}
        if n >= 2 and len(ids) == n:
            found.append(m.group(0).strip())
    if n >= 2:
        for m in r.values.finditer(text):
            if len(re.findall(r"\d+(?:\.\d+)?", m.group("list"))) == n:
                found.append(m.group(0).strip())
    return found


def other_population(clause: str, n: int) -> bool:
    """Whether ``clause`` is about another population than the ``n`` eligible units."""
    r = rules()
    if r.other_words.search(clause):
        return True
    return any(float(m.group("n")) >= r.threshold and float(m.group("n")) != n for m in r.unit_count.finditer(clause))
