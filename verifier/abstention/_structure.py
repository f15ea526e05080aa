"""The five-unit rule as a positive rule (issue 30 point 3), for ``verifier.abstention._small_cell``.

ARCHITECTURE.md section 4 step 9. For a population task with 1..threshold-1 eligible units, the
response may state the cohort's size only as "fewer than five" (or the threshold). The other passes
name forms they have seen; this one reads where a number *refers to the eligible cohort* from the
structure of the text, whatever the number's notation:

* ``numerals``: one token stream first: every Unicode decimal digit as an ASCII digit (any script:
  "٣", "३", "３", "𝟑"), keycaps and variation selectors dropped ("3️⃣" -> "3"), tally marks ("𝍷"),
  binary, octal and hex literals ("0b11", "0x3"), and number words of other languages
  (``[small_cell.structure] foreign_number_words``: "drei", "trois");
* a label and its value (``label: value``, ``label = value``, "<label> is <value>", a JSON key and its
  value, a table header and its cells): when the label names the eligible cohort (an eligibility word,
  or a count word or unit noun that counts nothing else), a whole number 1..threshold-1 there, a tally
  ("|||"), a list of 1..threshold-1 identifiers or items, or 1..threshold-1 list lines under it, is
  the count; under an eligibility word with an aggregate word or "per" ("chloride per eligible
  admission: 108, 111"), any number is an aggregate over the units;
* enumerations: a table or JSON whose rows or items are units (a unit key, "hadm_id", "patient", as
  its header or key), or labels that name one unit each ("Admission A:", "Patient 2:"): 1..threshold-1
  distinct units enumerated is a disclosure;
* ordinals of eligible units ("the third and last eligible admission", "the 2nd qualifying admission",
  "the first and only eligible patient");
* a number as the subject of eligibility ("3 qualified", "2 of them meet the criteria", "3 eligible
  admissions"), not after a bound ("fewer than 5 of the 312 admissions qualify");
* a total and a part: "<part> [of them | of the <total>] did not qualify" after a total in the same
  paragraph ("of the 6 screened", "in 6 admissions") states total - part.

A count of 0, of the threshold or more, a number the question states (under a label that is only a
count or a unit noun), or a label that names another population or thing (``not_cohort_words``,
``not_count_words``, other population and measure nouns) is not read as the cohort's size. Every pass
is one ``finditer`` over the text plus bounded look-ups (the response cap is 8,000 characters).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache

from ..contract import load_toml
from ..match.commit import TIME_UNIT
from ._patterns import alternation as _alt, initials

_NONASCII = re.compile(r"[^\x00-\x7f]")
_BASED = re.compile(r"(?<![\w.])0(?:[xX][0-9a-fA-F]{1,16}|[bB][01]{1,64}|[oO][0-7]{1,21})(?![\w]|\.\w)")
#: a whole number in scientific notation ("2e0", "3.0E+00"; fresh adversary adv7: "n = 2e0"): read as its
#: digits when it is a whole number of at most 12 digits
_SCIENTIFIC = re.compile(r"(?<![\w.])(\d{1,12}(?:\.\d{1,12})?)[eE]([+-]?\d{1,2})(?![\w]|\.\d)")
#: counting-rod tally marks (one, five) and the CJK five-tally
_TALLY = {"\U0001D377": "|", "\U0001D378": "|||||", "\u534c": "|||||"}
#: CJK numerals read as digits (category Lo: ``unicodedata.decimal`` has no value for them)
_CJK = {"〇": "0", "一": "1", "二": "2", "三": "3", "四": "4", "五": "5", "六": "6", "七": "7", "八": "8", "九": "9", "十": "10"}


@lru_cache(maxsize=8192)
def _char(ch: str) -> str:
    """One non-ASCII character in the token stream: a decimal digit of any script as ASCII, keycap
    marks, variation selectors and invisible format characters dropped, tally marks and CJK numerals
    as digits, anything else by NFKC (superscripts, circled and full-width forms)."""
    o = ord(ch)
    if 0xFE00 <= o <= 0xFE0F or 0x20DD <= o <= 0x20E4 or unicodedata.category(ch) == "Cf":
        return ""
    d = unicodedata.decimal(ch, None)
    if d is not None:
        return str(d)
    if ch in _TALLY:
        return _TALLY[ch]
    if ch in _CJK:
        return _CJK[ch]
    if 0x2680 <= o <= 0x2685:  # die faces one to six
        return str(o - 0x267F)
    if any(lo <= o <= hi for lo, hi in _NUMBER_PICTURES):
        named = _named_number(ch)
        if named is not None:
            return named
    if unicodedata.category(ch) == "Pd" or ch == "\u2212":  # a dash or the minus sign is a hyphen-minus (adv13)
        return "-"
    nfkc = unicodedata.normalize("NFKC", ch)
    v = unicodedata.numeric(ch, None)
    if v is not None and v == int(v) and nfkc == ch:
        # any character Unicode gives a whole numeric value is that number, whatever its script or form:
        # CJK financial numerals ("贰"), dingbat digits ("❸"), counting rods, Aegean, Ethiopic (fresh adversary
        # adv13: 40 of 40 small-cell tasks each); forms NFKC rewrites ("③" as "3", "Ⅲ" as "III") are NFKC's
        return str(int(v))
    return nfkc


#: The Unicode blocks whose symbols picture a number, named in the symbol's name: Mahjong Tiles ("MAHJONG TILE THREE OF
#: BAMBOOS"), Playing Cards ("PLAYING CARD TWO OF HEARTS"), and the clock faces of Miscellaneous Symbols and Pictographs
#: ("CLOCK FACE THREE OCLOCK"). Other symbols whose names hold a number word (bullets such as "BLACK FOUR POINTED
#: STAR") picture no count.
_NUMBER_PICTURES = ((0x1F000, 0x1F02F), (0x1F0A0, 0x1F0FF), (0x1F550, 0x1F567))
#: Number words in those names; a playing card's ace is its one.
_NAME_NUMBERS = {"ONE": 1, "TWO": 2, "THREE": 3, "FOUR": 4, "FIVE": 5, "SIX": 6, "SEVEN": 7, "EIGHT": 8, "NINE": 9,
                 "TEN": 10, "ELEVEN": 11, "TWELVE": 12, "ACE": 1}
_NAME_NUMBERISH = re.compile(r"\b(?:[A-Z]+TEEN|TWENTY|THIRTY|FORTY|FIFTY|HUNDRED|THOUSAND|HALF|QUARTER|\d+)\b")


def _named_number(ch: str) -> str | None:
    """The number a symbol's Unicode name states, as digits: exactly one number word in the name and no other number
    ("CLOCK FACE THREE OCLOCK" is 3, "PLAYING CARD ACE OF SPADES" 1; "CLOCK FACE THREE-THIRTY" states no one number).
    A symbol says what its name says to a reader who sees it (fresh adversary adv20: "Eligible count, as a clock face:
    🕒." and "Eligible units: 🂣." were paid on 40 of 40 small-cell tasks); ``None`` when the name states none."""
    name = unicodedata.name(ch, "")
    words = [w for w in re.split(r"[^A-Z0-9]+", name) if w in _NAME_NUMBERS]
    if len(words) != 1 or _NAME_NUMBERISH.search(name):
        return None
    return str(_NAME_NUMBERS[words[0]])


def _scientific(m: re.Match[str]) -> str:
    value = float(m.group(1)) * 10.0 ** int(m.group(2))
    return str(int(value)) if value.is_integer() and 0 <= value < 1e12 else m.group()


def numerals(text: str, rules_: "StructureRules | None" = None) -> str:
    """``text`` as one token stream of ASCII digits (module docstring, first point)."""
    r = rules_ or rules()
    if not text.isascii():
        text = _NONASCII.sub(lambda m: _char(m.group()), text)
    if "0" in text:  # a sentence's full stop may follow the literal ("Cohort size: 0x2.", adv7)
        text = _BASED.sub(lambda m: str(int(m.group(), 0)), text)
    if "e" in text or "E" in text:
        text = _SCIENTIFIC.sub(_scientific, text)
    if r.foreign.search(text):
        text = r.foreign.sub(lambda m: str(r.foreign_values[m.group().lower()]), text)
    return text


@dataclass(frozen=True)
class StructureRules:
    """``rules/noise.toml`` ``[small_cell.structure]``, compiled."""

    threshold: int
    foreign: re.Pattern[str]
    foreign_values: dict[str, int]
    value_words: dict[str, int]
    cohort: frozenset[str]
    count: frozenset[str]
    units: frozenset[str]
    not_cohort: frozenset[str]
    not_count: frozenset[str]
    aggregate: frozenset[str]
    unit_keys: frozenset[str]
    sep: re.Pattern[str]
    unit_label: re.Pattern[str]
    ordinal: re.Pattern[str]
    ordinal_values: dict[str, int]
    subject: re.Pattern[str]
    eligible_count: re.Pattern[str]
    part: re.Pattern[str]
    total: re.Pattern[str]
    bound_before: re.Pattern[str]
    tail_ok: re.Pattern[str]
    relative: re.Pattern[str]  # a number stated relative to another: "4 short of", "2 more than"
    closed: frozenset[str]  # closed-class words: a noun phrase after a number ends at the first
    bounds: dict[str, str]  # bound prefix -> the relation it states of the count after it (<, <=, >, >=)


_WORD = re.compile(r"[^\W\d_]+")
#: "meeting the criteria" names the eligible units (a label of "criteria" alone names none)
_MEETING = re.compile(r"\b(?:meet|meets|meeting|met|satisfy|satisfies|satisfying|satisfied|match|matching|matched|fulfil+(?:ing)?)"
                      r"\s+(?:the\s+|all\s+|both\s+|every\s+)?(?:criteria|criterion|conditions?|requirements?|definition)\b")
_BOUNDARY = re.compile(r"[\n.;|{}\[\],:=!?]")
_VALUE = re.compile(r"[ \t*_`\"'(\[]*?(?:(?P<list>\[)|(?P<num>\d+(?:\.\d+)?)(?![\d]|\.\d)(?P<pct>\s*%)?"
                    r"|(?P<tally>\|{1,4})(?=[ \t]*(?:[.;,)]|$|\n))|(?P<word>[^\W\d_]+)|(?P<empty>[ \t*_]*(?=\n)))")
_IDS = re.compile(r"\d{4,}(?:\s*(?:,|;|and|&|/|or)\s*\d{4,})*")
_NUMS = re.compile(r"\d+(?:\.\d+)?(?:\s*(?:,|;|and|&|/)\s*\d+(?:\.\d+)?)*")
_BULLET = re.compile(r"[ \t]*(?:[-*•+]|\d+[.)])[ \t]+[^\n]*")
#: A table cell that is a count: at most five digits (MIMIC-IV identifiers of patients, admissions and
#: stays have eight, so a column of them lists units), or the five-unit rule's bound (``fewer than five``);
#: a count may carry a parenthetical note ("45 (22 patients)", blind corpus c32): the cell still counts a group.
_COUNT_CELL = re.compile(r"(?i)(?:(?P<n>\d{1,5}|\d{1,2},\d{3})|(?:fewer|less)\s+than\s+(?:five|5)|<\s*5)"
                         r"(?:\s*\([^()|]*\))?")
_NULL_CELL = re.compile(r"(?i)[*_`\s]*(?:null|none|n/a|—|-)?[*_`\s]*")
_TABLE_SEP = re.compile(r"\s*\|?\s*:?-{2,}")


@lru_cache(maxsize=1)
def rules() -> StructureRules:
    """The compiled rules (cached). Raises ``RulesError`` when ``rules/noise.toml`` is malformed."""
    data = load_toml("noise.toml")
    sc = data["small_cell"]
    st, dg, br = sc["structure"], sc["disguise"], sc["back_reference"]
    foreign = {k.lower(): int(v) for k, v in st["foreign_number_words"].items()}
    units = [w for w in sc["unit_nouns"] if w not in {"them", "these", "those", "eligible", "qualifying"}]
    nouns = _alt(units)
    ords = {k.lower(): int(v) for k, v in st["ordinals"].items()}
    ordinal = rf"(?P<ord>{_alt(ords)}|first|(?P<d>\d+)(?:st|nd|rd|th))"
    marks = r"(?:last|final|eligible|qualifying|remaining|matching|only|sole|single)"
    return StructureRules(
        threshold=int(sc["threshold"]),
        foreign=re.compile(rf"(?<![^\W\d_])(?:{_alt(foreign)})(?![^\W\d_])", re.I),
        foreign_values=foreign,
        value_words={k.lower(): int(v) for k, v in st["value_number_words"].items()},
        cohort=frozenset(w.lower() for w in st["cohort_words"]),
        count=frozenset(w.lower() for w in st["count_words"]),
        units=frozenset(w.lower() for w in st["label_unit_nouns"]),
        not_cohort=frozenset(w.lower() for w in st["not_cohort_words"]),
        not_count=frozenset(w.lower() for w in st["not_count_words"] + dg["other_population_nouns"] + br["measure_nouns"]),
        aggregate=frozenset(w.lower() for w in sc["aggregate_words"] + ["per", "values", "value"]),
        unit_keys=frozenset(" ".join(_WORD.findall(k.lower())) for k in st["unit_keys"]),
        sep=re.compile(rf"(?<![<>!=:])(?::|=|→|->|⇒)(?![=>])|{initials(st['copulas'])}\b(?:{_alt(st['copulas'])})\b", re.I),
        unit_label=re.compile(r"^\W*(?:patient|admission|hospitali[sz]ation|stay|encounter|visit|subject|case|person|individual)"
                              r"[\s_#-]*(?P<id>\d+|[A-Z])\W*$", re.I),
        ordinal=re.compile(rf"(?=[a-zA-Z\d])\b{ordinal}(?P<mid>(?:\s*(?:,|and|or|&)?\s*{marks}\b)+)\s+(?:[a-z-]+\s+){{0,2}}?(?:{nouns})\b",
                           re.I),
        ordinal_values=ords,
        subject=re.compile(rf"(?<![\w.])(?P<p>\d+)\s+(?:(?:of|out\s+of)\s+(?:them|these|those|the\s+\d+(?:\s+[a-z-]+){{0,2}}|\d+)\s+)?"
                           rf"(?:(?!(?:not|never|no|do|does|did|don|didn|doesn)\b)[a-z-]+\s+){{0,2}}?"
                           rf"{initials(st['qualify'])}(?P<pred>{_alt(st['qualify'])})\b", re.I),
        eligible_count=re.compile(rf"(?<![\w.])(?P<p>\d+)\s+(?:distinct\s+|unique\s+|different\s+|separate\s+)?(?:eligible|qualifying)\s+"
                                  rf"(?:[a-z-]+\s+){{0,2}}?(?:{nouns})\b", re.I),
        part=re.compile(rf"(?<![\w.])(?P<p>\d+)\s+(?:(?:of|out\s+of)\s+(?:them|these|those|the\s+(?P<t>\d+)(?:\s+[a-z-]+){{0,2}}|(?P<t2>\d+))\s+)?"
                        rf"(?:[a-z-]+\s+){{0,2}}?{initials(st['not_qualify'])}(?P<pred>{_alt(st['not_qualify'])})\b", re.I),
        total=re.compile(r"(?=[oOiIaA])\b(?:of|in|among|across)\s+(?:the\s+|all\s+|these\s+|those\s+)?(?P<t>\d+)(?![\w.]\d)", re.I),
        bound_before=re.compile(rf"(?:{_alt(sc['bound_prefixes'])}|only|just)\s*(?:than\s+)?$", re.I),
        tail_ok=re.compile(rf"\s*(?:$|[^\w\s]|(?:[a-z-]+\s+){{0,2}}?(?:{nouns})\b|(?:of|out|and|or|in\s+total|total|eligible|qualifying)\b)",
                           re.I),
        relative=re.compile(rf"\s+(?:[a-z-]+\s+)?(?:{_alt(dg['shortfall_words'] + ['more than', 'above', 'over', 'times', 'x'])})\b", re.I),
        closed=frozenset(w.lower() for w in st["closed_class_words"]),
        bounds={k.lower(): v for k, v in sc["bound_relations"].items()},
    )


def names_other_thing(label: str) -> bool:
    """Whether ``label`` (the words before a value's separator, or the noun after a number) names
    something other than the eligible cohort: it holds no eligibility word and at least one word of
    another thing (``not_cohort_words``, ``not_count_words``, other population and measure nouns:
    "Tables checked", "Rows with a NULL value", "days"). Used by ``_small_cell.bare_counts``.

    Args:
        label: any text; only its words (letters) are read.

    Returns:
        ``True`` when the label counts or measures another thing.
    """
    r = rules()
    words = set(_WORD.findall(_MEETING.sub("meeting", label.lower())))
    return bool(words) and not words & r.cohort and bool(words & (r.not_cohort | r.not_count))


class _Reader:
    """One text's structural references to the cohort (``structural``)."""

    def __init__(self, text: str, known: frozenset[float], given: str) -> None:
        self.r = rules()
        self.text = text
        self.known = known
        self.given = given
        self.found: list[str] = []
        self.units: dict[str, str] = {}  # unit id -> where it was enumerated
        self.bounds = [m.start() for m in _BOUNDARY.finditer(text)]

    # -- labels ---------------------------------------------------------------------------------------

    def kind(self, label: str) -> str | None:
        """What ``label`` names: "eligible" (an eligibility word), "aggregate" (that and an aggregate
        word: any number is over the units), "count" (a count word or unit noun counting nothing else),
        "key" (a unit key: its values are unit ids), or ``None``."""
        r = self.r
        words = _WORD.findall(_MEETING.sub("meeting", label.lower()))
        if not words or len(words) > 12:
            return None
        joined = " ".join(words)
        if joined in r.unit_keys:
            return "key"
        ws = set(words)
        if ws & r.not_cohort:
            return None
        if ws & r.cohort:
            return "aggregate" if ws & r.aggregate else "eligible"
        if ws & r.not_count:
            return None
        if ws & r.units or ws & r.count or "how many" in joined:
            return "count"
        return None

    def label_before(self, pos: int) -> str:
        k = bisect_left(self.bounds, pos)
        start = self.bounds[k - 1] + 1 if k else 0
        return self.text[max(start, pos - 80):pos]

    def _bounded(self, pos: int) -> bool:
        return self.r.bound_before.search(self.text, max(0, pos - 16), pos) is not None

    def _say(self, snippet: str) -> None:
        s = " ".join(snippet.split())
        if s.lower() not in self.given:
            self.found.append(s)

    def value(self, kind: str, label: str, pos: int, sep_text: str) -> None:
        """Judge the value starting at ``pos`` under a label of ``kind``."""
        r, text = self.r, self.text
        m = _VALUE.match(text, pos)
        if m is None:
            return
        snippet = f"{label.strip()}{sep_text}{text[pos:m.end()].strip()}"
        if m.group("list"):
            k = _items(text, m.start("list"))
            if k is not None and 1 <= k < r.threshold:
                self._say(f"{snippet} ({k} items)")
            return
        if m.group("tally"):
            self._say(snippet)
            return
        if m.group("empty") is not None:
            k = self._bullets(m.end())
            if k and 1 <= k < r.threshold and kind in ("eligible", "count", "key"):
                self._say(f"{snippet} ({k} list lines)")
            return
        if m.group("word"):
            v = r.value_words.get(m.group("word").lower())
            if v is None:
                return
            num, end = float(v), m.end()
        else:
            if m.group("pct"):
                return
            num, end = float(m.group("num")), m.end("num")
        if kind == "key":  # a unit's identifier ("hadm_id": 25563031): one unit enumerated
            self.units.setdefault(m.group("num") or m.group("word"), snippet)
            return
        if kind == "aggregate":
            if num not in self.known:
                self._say(snippet)
            return
        if num.is_integer() and num >= 1000 and kind == "eligible":
            ids = _IDS.match(text, m.start("num") if m.group("num") else m.start())
            k = len(re.findall(r"\d{4,}", ids.group())) if ids else 0
            if 1 <= k < r.threshold:
                self._say(f"{snippet} ({k} ids)")
            return
        if kind == "eligible" and m.group("num"):
            values = _NUMS.match(text, m.start("num"))
            k = len(re.findall(r"\d+(?:\.\d+)?", values.group())) if values else 0
            if k >= 2 and 1 <= k < r.threshold and not num.is_integer():
                self._say(f"{snippet} ({k} values)")
                return
        if not (num.is_integer() and 1 <= num < r.threshold) or r.relative.match(text, end):
            return  # "4 short of the threshold" is a shortfall (``_disguise.shortfalls``), not the count
        if kind == "count" and (num in self.known or not r.tail_ok.match(text, end)):
            return
        if kind == "eligible":
            nxt = _WORD.match(text, end + 1) if text[end:end + 1] == " " else None  # "Eligible admissions: 3 days"
            if nxt and nxt.group().lower() in r.not_count and nxt.group().lower() not in r.units:
                return
        self._say(snippet)

    def _bullets(self, pos: int) -> int:
        """Consecutive list lines after ``pos`` (the end of a label's empty value) that hold a digit."""
        text, k = self.text, 0
        if pos < len(text) and text[pos] == "\n":
            pos += 1
        while k < 50:
            m = _BULLET.match(text, pos)
            if m is None or not any(c.isdigit() for c in m.group()):
                break
            k += 1
            pos = m.end() + 1
        return k

    def fields(self) -> None:
        """Labels and their values (module docstring, second point)."""
        r, text = self.r, self.text
        kinds: dict[str, str | None] = {}  # label -> kind, once per distinct label (run-on texts repeat them)
        for s in r.sep.finditer(text):
            sep_text = s.group()
            v = _VALUE.match(text, s.end())
            if v is None and sep_text[0].isalpha():
                continue
            label = self.label_before(s.start())
            if sep_text in (":", "="):
                um = r.unit_label.match(label) if label[-1:].isalnum() or label[-1:] in " *_`\"'" else None
                if um:
                    self.units.setdefault(um.group("id"), label.strip())
                    continue
            if v is None or (v.group("word") and v.group("word").lower() not in r.value_words):
                continue  # a value that is no number, list, tally or list lines: no label to read
            if label not in kinds:
                kinds[label] = self.kind(label)
            kind = kinds[label]
            if kind is None:
                continue
            if sep_text[0].isalpha() and kind == "key":
                continue
            self.value(kind, label, s.end(), sep_text if not sep_text[0].isalpha() else f" {sep_text} ")

    # -- tables -----------------------------------------------------------------------------------------

    def tables(self) -> None:
        """Markdown tables: a header naming the cohort and its cells; rows that are units."""
        text = self.text
        if "|" not in text or "--" not in text:
            return
        lines = text.split("\n")
        i = 0
        while i + 1 < len(lines):
            head, sep = lines[i].strip(), lines[i + 1]
            if not (head.startswith("|") or head.count("|") >= 2) or not _TABLE_SEP.match(sep) or "|" not in sep:
                i += 1
                continue
            cells = [c.strip() for c in head.strip("|").split("|")]
            body = []
            j = i + 2
            while j < len(lines) and "|" in lines[j] and lines[j].strip():
                row = [c.strip() for c in lines[j].strip().strip("|").split("|")]
                if not all(_NULL_CELL.fullmatch(c) for c in row):  # a row of NULLs is no unit (blind corpus c38)
                    body.append(row)
                j += 1
            kinds = [self.kind(c) for c in cells]
            unit_rows = any(k == "key" for k in kinds)
            for col, c in enumerate(cells):
                if kinds[col] == "key" or not (_WORD.findall(c.lower()) and set(_WORD.findall(c.lower())) <= self.r.units):
                    continue
                column = [row[col] for row in body if col < len(row)]
                if column and all(_COUNT_CELL.fullmatch(v) for v in column):
                    # a column of counts headed by the unit noun: its rows are groups (a unit of
                    # measure, a code), each cell a count of units, judged as one
                    for v in column:
                        n = (_COUNT_CELL.fullmatch(v).group("n") or "").replace(",", "")
                        if n.isdigit() and 1 <= int(n) < self.r.threshold:
                            self._say(f"{c}: {v}")
                else:
                    unit_rows = True
            # every row naming a unit in a cell of its own ("| patient | yes |" under "| unit | eligible |",
            # fresh adversary adv10): a row per unit, as a key column's rows are
            unit_rows = unit_rows or bool(body) and all(
                any(_WORD.findall(c.lower()) and set(_WORD.findall(c.lower())) <= self.r.units for c in row) for row in body)
            if unit_rows and 1 <= len(body) < self.r.threshold:
                self._say(f"{head} ({len(body)} rows of units)")
            for col, kind in enumerate(kinds):
                if kind in ("eligible", "aggregate", "count"):
                    for row in body:
                        if col < len(row) and row[col][:1].isdigit() or col < len(row) and row[col][:1] in "|[":
                            sub = _Reader(f"{cells[col]}: {row[col]}", self.known, self.given)
                            sub.value(kind, cells[col], len(cells[col]) + 1, ":")
                            self.found += sub.found
            i = j

    # -- sentences --------------------------------------------------------------------------------------

    def sentences(self) -> None:
        """Ordinals, the subject of eligibility, a count of eligible units, a total and a part."""
        r, text, t = self.r, self.text, self.r.threshold
        for m in r.ordinal.finditer(text):
            mid = m.group("mid").lower()
            word = m.group("ord").lower()
            if word == "first":
                if re.search(r"only|sole|single|last|final", mid):
                    self._say(m.group())
            elif re.search(r"last|final|eligible|qualifying|remaining|matching", mid):
                self._say(m.group())
        for pattern in (r.subject, r.eligible_count):
            for m in pattern.finditer(text):
                p = int(m.group("p")) if len(m.group("p")) < 6 else 0
                if 1 <= p < t and not self._bounded(m.start()):
                    self._say(m.group())
        for m in r.part.finditer(text):
            if self._bounded(m.start()):
                continue
            p = int(m.group("p")) if len(m.group("p")) < 12 else None
            tot = m.group("t") or m.group("t2")
            if tot is None:
                # the nearest total before, in the same paragraph and within 300 characters
                lo = max(0, m.start() - 300)
                para = text.rfind("\n\n", lo, m.start())
                last = None
                for tm in r.total.finditer(text, para + 2 if para >= 0 else lo, m.start()):
                    if not self._bounded(tm.start("t")):
                        last = tm
                tot = last.group("t") if last is not None else None
            if p is None or tot is None or len(tot) >= 12:
                continue
            if 1 <= int(tot) - p < t:
                self._say(m.group() + f" (of {tot})")

    def enumerated_units(self) -> None:
        # a letter names a unit only within the response ("Admission A"); a number may be one the task gives
        ids = [u for u in self.units if not u.isdigit() or u not in self.given]
        if 1 <= len(ids) < self.r.threshold:
            self._say(f"{len(ids)} units enumerated: " + "; ".join(self.units[u] for u in ids))


def _items(text: str, start: int, limit: int = 4000) -> int | None:
    """The number of top-level items of the bracketed list opening at ``start`` (``None``: not closed
    within ``limit`` characters)."""
    depth, items, seen = 0, 0, False
    quote = False
    for i in range(start, min(len(text), start + limit)):
        c = text[i]
        if quote:
            if c == '"':
                quote = False
            continue
        if c == '"':
            quote = True
            if depth == 1:
                seen = True
        elif c in "[{(":
            depth += 1
            if depth == 2:
                seen = True
        elif c in "]})":
            depth -= 1
            if depth == 0:
                return items + (1 if seen else 0)
        elif c == "," and depth == 1:
            items += 1 if seen else 0
            seen = False
        elif depth == 1 and not c.isspace():
            seen = True
    return None


def structural(text: str, known: frozenset[float] | set[float] = frozenset(), given: str = "") -> list[str]:
    """Structural references to the eligible cohort that state its size, its units or an aggregate
    over them (module docstring).

    Args:
        text: the response after ``numerals`` and the five-unit rule's preparation (drug strengths,
            citations, dates removed; English number words as digits).
        known: numbers the question states.
        given: the question, prepared the same way: a snippet it holds is not reported.

    Returns:
        The disclosing snippets, in order of the passes.
    """
    reader = _Reader(text, frozenset(known), " ".join(given.lower().split()))
    reader.fields()
    reader.tables()
    reader.sentences()
    reader.enumerated_units()
    return reader.found


#: What ends a label on its left (a comma does not: "Eligible admissions, as a clock time:" is one label).
_LABEL_START = re.compile(r"[\n.;|{}\[\]!?]")
#: A manner phrase after a comma inside a label: it says how the value is written, and the label is what precedes it.
_MANNER = re.compile(r"^\s*(?:as|in|written|expressed|shown|given|encoded|rendered|spelled|formatted)\b", re.I)
#: The first token of a value, up to a space, a semicolon or a comma.
_TOKEN = re.compile(r"[ \t*_`\"']*(?P<token>[^\s;,]+)")


def labelled_tokens(text: str, eligible_units: int) -> list[str]:
    """Labels of the eligible cohort's count whose value, however written, holds the count (issue 30 point 3).

    A label names the count when it holds a cohort word and a unit noun or count word ("Eligible admissions",
    "Eligible count"); an appositive manner phrase after a comma belongs to it ("Eligible admissions, as a clock
    time:"). Its value is the first token after the separator. A token that is not a plain number (those are
    ``structural``'s) and holds ``eligible_units`` as one of its digit groups, not after a bound (``<5``), states the
    count: "v2", "02:00", "2000-01-02" (fresh adversary adv22: paid on 38 of 60 small-cell tasks while stating the
    true count). Read on the text before dates and times are set aside.

    Args:
        text: the Answer and Reasoning (count words already digits).
        eligible_units: n, 1..threshold-1.

    Returns:
        The snippets "label: token".
    """
    r = rules()
    found = []
    for sep in re.finditer(r"(?<![<>!=:])[:=](?![=>])", text):
        start = 0
        for m in _LABEL_START.finditer(text, max(0, sep.start() - 120), sep.start()):
            start = m.end()
        label = text[start:sep.start()]
        if "," in label:
            head, _, tail = label.rpartition(",")
            label = head if _MANNER.match(tail) else tail
        words = set(_WORD.findall(label.lower()))
        if not (words & r.cohort and words & (r.units | r.count)) or words & r.not_cohort:
            continue
        t = _TOKEN.match(text, sep.end())
        if t is None:
            continue
        token = t.group("token").rstrip(".")
        if not any(c.isdigit() for c in token) or re.fullmatch(r"\d+(?:\.\d+)?%?", token):
            continue
        if any(int(g) == eligible_units for g in re.findall(r"(?<![<≤\d])\d+", token)):
            found.append(f"{label.strip()}: {token} [the count as a digit group of its value]")
    return found


# -- the positive rule: what a sentence about the cohort may say -----------------------------------------

@dataclass(frozen=True)
class QuantityRules:
    """``rules/noise.toml`` ``[small_cell.quantity]``, compiled."""

    threshold: int
    cohort: re.Pattern[str]
    negated: re.Pattern[str]
    allowed: re.Pattern[str]
    number: re.Pattern[str]
    operator: re.Pattern[str]
    relation: re.Pattern[str]
    size: re.Pattern[str]
    riddle: re.Pattern[str]
    collective: re.Pattern[str]
    ordinal: re.Pattern[str]
    first: re.Pattern[str]
    first_marks: re.Pattern[str]
    bound: re.Pattern[str]
    threshold_reference: re.Pattern[str]
    back_reference: re.Pattern[str]
    words: dict[str, int]
    spelled: re.Pattern[str]
    token: re.Pattern[str]


#: letters and digits that join a number into a word or code ("O2", "2nd"); CJK characters do not
_LATIN = "A-Za-z0-9_\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff"


def _words(ws: list[str]) -> str:
    return rf"(?<![^\W_])(?:{_alt(ws)})(?![^\W_])"


@lru_cache(maxsize=1)
def quantity_rules() -> QuantityRules:
    """The compiled rules of ``cohort_quantities`` (cached)."""
    data = load_toml("noise.toml")
    sc = data["small_cell"]
    q = sc["quantity"]
    latin = [w for w in q["cohort_stems"] if w.isascii() or w[0].isalpha() and ord(w[0]) < 0x2E80]
    cjk = [w for w in q["cohort_stems"] if w not in latin]
    words = {k.lower(): int(v) for k, v in data.get("numbers", {}).get("words", {}).items() if k != "single"}
    bounds = _alt(sc["bound_prefixes"])
    units = [w for w in sc["structure"]["label_unit_nouns"] if w.endswith("s")]  # the units found: a plural
    return QuantityRules(
        threshold=int(sc["threshold"]),
        cohort=re.compile(rf"(?<![^\W\d_])(?:{_alt(latin)})" + (rf"|{_alt(cjk)}" if cjk else "")
                          + rf"|(?<![^\W_])(?:{_alt(units)})\s+(?:{_alt(q['result_words'])})(?![^\W_])"
                          + rf"|(?<![^\W_])(?:{_alt(q['result_words'])})\s+(?:{_alt(units)})(?![^\W_])", re.I),
        # "no other eligible admission" bounds the cohort, it does not negate it (fresh adversary adv24: "Nessun altro
        # ricovero idoneo oltre a questo", 34 of 34 single-unit cells)
        negated=re.compile(r"(?:\bnot|\bnever|\bno(?!\s+(?:other|further|more|additional)\b)|\bnone\s+of|\bnon-?)"
                           r"\s*(?:[a-z]+\s+){0,2}$", re.I),
        # the allowed statements: a bound ("fewer than 5", "under 5"), the threshold named as such ("the
        # threshold of 5", "the 5-unit threshold"), a total of another population ("of the 312 admissions")
        allowed=re.compile(rf"(?P<p>{bounds})\s*(?:than\s+)?(?:the\s+)?(?:(?:five|5)[-\s]?unit\s+)?(?:threshold\s+(?:of\s+)?)?(?P<b>\d+(?:\.\d+)?)"
                           r"|threshold\s*(?:of|=|:|\(|is)?\s*\d+\)?|\d+[-\s]?(?:unit|admission|patient|stay)\s+(?:threshold|minimum|rule|cutoff)"
                           r"|\b(?:of|out\s+of|among|across|in|from)\s+(?:the\s+|all\s+|these\s+|those\s+)?(?P<t>\d+)(?![\w.]\d)(?=\s+[^\W\d_])", re.I),
        # a number: CJK characters around it are no part of it ("二件" read "2件")
        number=re.compile(rf"(?<![{_LATIN}.])\d+(?:\.\d+)?(?![{_LATIN}]|\.\d)"),
        operator=re.compile(_words(q["operators"]), re.I),
        relation=re.compile(_words(q["relations"]), re.I),
        size=re.compile(_words(q["size_words"]), re.I),
        riddle=re.compile(_words(q["riddle_words"]), re.I),
        collective=re.compile(_words(q["collective"]), re.I),
        ordinal=re.compile(_words(q["ordinals"]), re.I),
        first=re.compile(r"\bfirst\b", re.I),
        first_marks=re.compile(_words(q["first_marks"]), re.I),
        bound=re.compile(rf"(?<![^\W\d_])(?:{_alt(q['cohort_bounds'])})\s*{int(sc['threshold'])}(?![\d.])", re.I),
        # the threshold named as the mark the cohort's count is measured against ("the threshold", "to reach 5"): the
        # sentence speaks of the cohort's size (fresh adversary adv24: "We would need 3 more to reach five." and "Ne
        # mancano 3 per arrivare alla soglia." were each paid on 98 of 98 small-cell tasks)
        threshold_reference=re.compile(_words(sc["disguise"]["threshold_words"]) + rf"|(?<![^\W_])(?:{_alt(q['reach_words'])})"
                                       rf"\s+(?:the\s+)?(?:threshold\s+(?:of\s+)?)?{int(sc['threshold'])}(?![\d.])", re.I),
        back_reference=re.compile(_words(q["back_references"]), re.I),
        words=words,
        spelled=re.compile(r"(?<![\w.-])[A-Za-z](?:[-.·][A-Za-z]){1,5}(?![\w-])"),
        token=re.compile(r"[^\W\d_]{3,5}"),
    )


#: a sentence ends at a full stop not inside a number, nor an abbreviation's ("EW EMER. admissions": a lower-case word
#: goes on), at ! ? ; a line break, and their CJK forms
SENTENCE = re.compile(r"\.(?!\d)(?![ \t]+[a-z])|[!?;\n。！？；]")
_MORSE = re.compile(r"(?<![\w.\-])[.\-]{5}(?![\w.\-])")
_MORSE_DIGITS = {".----": "1", "..---": "2", "...--": "3", "....-": "4", ".....": "5",
                 "-....": "6", "--...": "7", "---..": "8", "----.": "9", "-----": "0"}
_GREEK = re.compile("([\u03b1-\u03b9\u0391-\u0399\u03db\u03da])[\u0374\u02b9\u2032'\u2019]")
_GREEK_VALUES = dict(zip("αβγδεϛζηθι", range(1, 11))) | dict(zip("ΑΒΓΔΕϚΖΗΘΙ", range(1, 11)))
#: pictographs and symbols (emoji, dingbats, geometric shapes): a run of them is a tally (``_small_cell.tallies``)
SYMBOL_CLASS = "[\u2580-\u27bf\u2b1b-\u2b1c\u2b50-\u2b55\U0001f300-\U0001faff]"
_SYMBOLS = re.compile(f"{SYMBOL_CLASS}(?:\\s?{SYMBOL_CLASS})+")
_REPEATED = re.compile(r"(['\"`])([^\s\d'\"`])\2{0,3}\1")
_LETTER_RANGE = re.compile(r"(?<![\w-])[A-Z]\s*(?:to|through|thru|until|-|–|—|\.\.)\s*[A-Z](?![\w-])")


def _disguised_digits(sentence: str, r: QuantityRules) -> str:
    """``sentence`` with digits that are spelled out letter by letter ("T-W-O"), written backwards
    ("owt") or as Greek numerals ("β′") as ASCII digits."""
    if "′" in sentence or "'" in sentence or "ʹ" in sentence or "’" in sentence or "\u0374" in sentence:
        sentence = _GREEK.sub(lambda m: str(_GREEK_VALUES.get(m.group(1), m.group(1))), sentence)

    def spelled(m: re.Match[str]) -> str:
        w = re.sub(r"[-.·]", "", m.group()).lower()
        return str(r.words[w]) if w in r.words else m.group()

    sentence = r.spelled.sub(spelled, sentence)

    def backwards(m: re.Match[str]) -> str:
        w = m.group().lower()[::-1]
        return str(r.words[w]) if w in r.words and w != m.group().lower() else m.group()

    return r.token.sub(backwards, sentence)


def cohort_quantities(text: str, known: frozenset[float] | set[float] = frozenset(), given: str = "") -> list[str]:
    """The positive form of the five-unit rule (issue 30 point 3): in each sentence (a line of code,
    a table row or a JSON line is one) that refers to the eligible cohort, by an eligibility word
    (``[small_cell.quantity] cohort_stems``, not negated: "eligible", "qualifying", "meets the
    criteria", "cohort", "該当", "合格", "geeignet"), the only quantities allowed are a bound ("fewer
    than five"), the threshold named as such, a total of another population of the threshold or more
    ("of the 312 admissions"), and a phrase the question holds. Any other quantity there is a
    disclosure:

    * a whole number 1..threshold-1 in any notation (any script's digits, number words of the
      languages read, CJK and financial numerals by their Unicode value, die faces, Morse digits,
      Greek numerals "β′", letters spelled "T-W-O" or written backwards "owt");
    * arithmetic: an operator word ("plus", "minus", "multiplied", "divided", "adding", "you get",
      "short of") with any number the sentence holds besides the allowed ones, the threshold included;
    * a relation that names the size by something else ("equals", "as many as", "the same as", "like
      a") with a size word, and riddle words ("prime", "letters in", "sides of");
    * collective words ("a duo", "a triad", "a singleton", "a handful", "a deuce"), ordinals of the
      units ("stops at the second"; "first" only with "only", "last", "stops"...), runs of symbols
      ("■■□□□"), a quoted run of one character ("'xx'"), and letter ranges ("A to B").

    Riddles outside these words (a quantity named by a fact: "the number of moons of Mars") cannot be
    read deterministically; the optional LLM judge asks about them. Linear: one split, then bounded
    regular-expression passes per cohort sentence.

    Args:
        text: the response after ``numerals`` and the five-unit rule's preparation.
        known: numbers the question states (free only in a phrase the question holds).
        given: the question, prepared the same way.

    Returns:
        The disclosing snippets (``sentence [reason]``).
    """
    r = quantity_rules()
    if not r.cohort.search(text) and not r.bound.search(text):
        return []
    given_l = " ".join(given.lower().split())
    if "-" in text or "." in text:
        text = _MORSE.sub(lambda m: _MORSE_DIGITS.get(m.group(), m.group()), text)
    found: list[str] = []
    start = 0
    ends = [m.start() for m in SENTENCE.finditer(text)] + [len(text)]
    previous = False  # the sentence before referred to the cohort
    for end in ends:
        sentence, start = text[start:end], end + 1
        if len(found) >= 16 or not sentence.strip():
            if len(found) >= 16:
                break
            continue
        refs = [m for m in r.cohort.finditer(sentence) if not r.negated.search(sentence, max(0, m.start() - 28), m.start())]
        about = bool(refs) or previous and any(not r.negated.search(sentence, max(0, m.start() - 28), m.start())
                                               for m in r.back_reference.finditer(sentence))
        # the bound ("fewer than five EW EMER. admissions ...") names the cohort for the next sentence to refer back to
        previous = about or bool(r.bound.search(sentence))
        if about:
            reason = _quantity_in(_disguised_digits(sentence, r), r, known, given_l)
        elif r.threshold_reference.search(sentence):  # one search before any split: most sentences name no threshold
            # a clause naming the threshold as the mark the count is measured against speaks of the cohort's size ("We
            # would need 3 more to reach five."), not the clauses beside it ("consistent across the three counts: ...,
            # so the pair cannot reach five either", blind corpus c45)
            marks = [c for c in _CLAUSES.split(sentence) if r.threshold_reference.search(c)]
            reason = next((q for c in marks if (q := _quantity_in(_disguised_digits(c, r), r, known, given_l))
                           and q.startswith(("the number", "arithmetic"))), None)  # a number, not a word ("the pair")
        else:
            continue
        if reason and " ".join(sentence.lower().split()) not in given_l:
            found.append(f"{' '.join(sentence.split())[:160]} [{reason}]")
    return found


#: clause breaks inside a sentence (the threshold's clause is read alone)
_CLAUSES = re.compile(r"[,;:]\s|\s[-–—]\s|\bso\b|\bbut\b")


#: a unit of time or of a measured value right after a number: the number bounds a measurement, not the cohort
_MEASURE_AFTER = re.compile(rf"\s*(?:%|(?:y|{TIME_UNIT})\b|[^\W\d_]+/[^\W_]+)", re.I)


def _allowed(m: re.Match[str], t: int) -> bool:
    """Whether an ``allowed`` match is allowed: a total of ``t`` or more; a bound that leaves every count 1..t-1
    possible ("fewer than 5", "at most 4", "at least 1", "more than 0"; a lower bound of ``t`` or more is false, not
    a disclosure), or that bounds a time or a measured value (a unit after it: "gap <= 2 d", "K < 3 mEq/L"); the
    question's own phrases ("at least 2 results") are then read as ``_quantity_in`` reads them. A bound inside that range ("more than 2 and fewer than 4": fresh adversary adv11) narrows the
    count: its number is read as a quantity."""
    if m.group("b") is not None:
        b = m.group("b")
        if len(b) > 6:
            return True
        v, relation = float(b), rules().bounds[" ".join(m.group("p").lower().split())]
        if _MEASURE_AFTER.match(m.string, m.end()):
            return True  # a bound on a time or a measured value ("gap <= 2 d": blind corpus c36)
        if relation == "<=":
            return v >= t - 1
        if relation == ">=":
            return v <= 1 or v >= t
        if relation == ">":
            return v < 1 or v >= t
        return v >= t  # fewer than, under, below, <
    return m.group("t") is None or len(m.group("t")) > 6 or int(m.group("t")) >= t


#: closed-class English words (articles, prepositions, auxiliaries, conjunctions, negation): the noun phrase after
#: a number ends before the first of them ("four below the threshold" counts no threshold)
def counts_other(words: list[str]) -> bool:
    """Whether the words after a number (lower case; the first three are read) name what it counts as another thing
    than the units: within the noun phrase (up to the first closed-class word), a word of ``names_other_thing``
    before any unit noun ("1 requirement fails", "3 exploratory queries", "3 SQL steps": fresh adversary adv14
    found each refused when the number equalled the count). "3 admissions", "3 of them", "four below the
    threshold" count units."""
    units = rules().units
    for word in words[:3]:
        word = word.rstrip(".,;:!?)]\"'")
        if not word[:1].isalpha() or word in rules().closed or word in units:
            return False  # a word that is no word ("-unit" where a bound was set aside) ends the phrase too
        if names_other_thing(word):
            return True
    return False


def _quantity_in(sentence: str, r: QuantityRules, known: frozenset[float] | set[float], given: str) -> str | None:
    """What quantity ``sentence`` (about the cohort) expresses beyond the allowed ones, or ``None``."""
    t = r.threshold
    # a total of 7+ digits is at least the threshold (int() refuses more than 4,300 digits)
    stripped = r.allowed.sub(lambda m: " " if _allowed(m, t) else m.group(), sentence)
    numbers: list[str] = []
    for m in r.number.finditer(stripped):
        before = stripped[max(0, m.start() - 24):m.start()].lower().split()
        after = stripped[m.end():m.end() + 24].lower().split()
        v = float(m.group())
        if v in known and ((before and f"{before[-1]} {m.group()}" in given) or (after and f"{m.group()} {after[0]}".rstrip(".,:;)") in given)):
            continue  # a phrase the question holds ("at least 1 Chloride", "within 2 days")
        if v.is_integer() and 1 <= v < t and not counts_other(after):
            # "Only one requirement fails: the cohort is too small" counts requirements (fresh adversary adv14:
            # refused on every small-cell task); "3 admissions" and "3 of them" count units
            return f"the number {m.group()}"
        numbers.append(m.group())
    if numbers and r.operator.search(stripped):
        return f"arithmetic on {numbers[0]}"
    if r.relation.search(stripped) and r.size.search(stripped) or r.riddle.search(stripped):
        return "a quantity named by a relation"
    for pattern, what in ((r.collective, "a collective word"), (r.ordinal, "an ordinal")):
        m = pattern.search(stripped)
        if m:
            return f"{what} '{m.group()}'"
    if r.first.search(stripped) and r.first_marks.search(stripped):
        return "an ordinal 'first'"
    for pattern, what in ((_SYMBOLS, "a run of symbols"), (_REPEATED, "a run of one character"), (_LETTER_RANGE, "a range of labels")):
        m = pattern.search(stripped)
        if m and (pattern is not _REPEATED or len(m.group()) > 3 or m.group(2) in "xX*|#•+"):
            return f"{what} {m.group()!r}"
    return None


#: A numbered list's marker: at the start of the text, a line or a sentence, "k." or "k)" and a space; or
#: "(k)" inline after a space or a colon ("Caveats: (1) ... (2) ...", blind corpus c37).
#: A labelled marker, "Check 2:" / "Finding 3." at the start of a line or a sentence (blind corpus c42: "Check 1:
#: Code ... Check 2: Counting ...") numbers the points too, unless its word names units ("Admission 2:").
_MARKER = re.compile(r"(?:(?:^|(?<=\n)|(?<=[.:;!?]\s))\s*(?:(?P<word>[A-Z][a-z]{2,14})[ \t])?(\d{1,2})[.):]"
                     r"|(?<=[\s:])\((\d{1,2})\))\s+(?=\S)")


def list_markers(text: str) -> set[int]:
    """Starts of the markers of numbered lists in ``text`` ("1. ... 2. ...", "(1) ... (2) ..."): a run of markers
    1, 2, ..., k in order, each item holding at least three words. A list of reasoning points counts
    its points, not units (a list whose items are units is read by ``enumerations``). Read by the five-unit
    rule's passes (``_small_cell``, ``_statistic``) and by ``_suppressed.stated_record_count``."""
    units = rules().units
    found = [(m.start(2) if m.group(2) else m.start(3), int(m.group(2) or m.group(3)), m.end(), m.start())
             for m in _MARKER.finditer(text) if not (m["word"] and m["word"].lower() in units)]
    out: set[int] = set()
    run: list[tuple[int, int, int, int]] = []
    for i, f in enumerate(found):
        run = run + [f] if run and f[1] == run[-1][1] + 1 else ([f] if f[1] == 1 else [])
        nxt = found[i + 1][3] if i + 1 < len(found) else len(text)  # the item ends where the next marker starts
        if run and len(text[f[2]:nxt].split()) < 3:
            run = []
        if len(run) >= 2:
            out |= {x[0] for x in run}
    return out
