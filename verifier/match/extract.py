"""Typed extraction from answer text: numbers, quantities, dates, booleans,
lists and tables of records.

Pure functions over strings, with precompiled regular expressions; unit
strings are resolved through the cached ``verifier.units.parse_unit``.

Rules (documented, tested in tests/test_parse_extract.py):
- Numbers: optional sign (``+``, ``-``, ``−``; an en dash ``–`` directly before the digits
  at the start or after whitespace is a minus, as typeset; an em dash never is), thousands separators
  (``1,234.5``; groups of exactly three digits), decimals, scientific
  notation (``1.2e-3``, ``1.2 × 10^3``); a trailing ``%`` marks a percentage.
  ``decimals`` is the count of digits written after the point.
- Quantities: a number followed by a unit (``5.2 mEq/L``, ``98.6 °F``,
  ``7.5 x10^9/L``, ``120 mm Hg``, ``35.2%``). The unit is the longest run of
  up to three following words that ``parse_unit`` accepts; English function
  words (``in``, ``at``, ``on``...) are never units in free text, except
  ``per`` between two unit words (``4 units per hour`` is ``4 units/hour``).
- Dates/datetimes: ISO ``2180-07-23[ T14:00[:00]]`` (and ``2180-07`` at month
  precision), US ``07/23/2180``
  (day-first when the first field exceeds 12), ``July 23, 2180``,
  ``23 Jul 2180``, ``Jul 2180`` (month precision), each with an optional
  ``14:00[:ss]`` or ``2:00 PM`` time. Precision is what was written.
- Booleans: the first word is yes/no/true/false/y/n.
- Lists: Markdown bullets or numbered lines, else ``;``/``,``/`` and ``
  separators outside parentheses; on one line, a sentence after the list
  (``. It grew from ...``) is explanation, not items.
- Records: a Markdown table, a JSON list of objects (or ``{"columns",
  "rows"}``, or one flat object: one row), or delimited text (tab, ``|``, ``;``, ``,``) with a header line.
- An empty result (``is_empty_answer``): JSON ``[]``/``{}``, or text opening with
  ``[]``, ``{}``, ``()``, ``empty (list|set|result|table)``, ``no rows``/
  ``records``/``results``, ``0 rows`` or ``none found``, optionally followed by
  an explanation without a hedge (``[] (no prescriptions found)``). ``NULL``
  is not an empty result: it is an abstention (``verifier.parse``).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import re
from functools import lru_cache
from itertools import islice
from typing import Any, NamedTuple

from ..units import is_unit_spelling
from .lead import field_block

#: A decimal comma ("1,7" = 1.7) only when unambiguous: one comma between digits, 1-2 decimals,
#: no other separator around it ("1,700" stays 1700; "1,2,3" and "1,5.2" are not decimal commas).
#: A sign: ``+``, ``-``, U+2212, or an en dash (U+2013) at the start of the text or after
#: whitespace, directly before the digits: typeset text sets a minus as an en dash ("–3.9 mg/dL").
#: A range ("3.1–3.9": after a digit) and a separator ("308 – HIP": a space after it) are not
#: signs. An em dash (U+2014) is never a sign: it is punctuation, not a typographic minus.
_SIGN = r"(?:[+\-−]|(?<!\S)–(?=\.?\d))"
_DECIMAL_COMMA = rf"(?<![\d,]){_SIGN}?\d+,\d{{1,2}}(?![\d]|[.,]\d)"
_NUM = _DECIMAL_COMMA + rf"|{_SIGN}?(?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?(?:[eE][+\-]?\d+)?|{_SIGN}?\.\d+(?:[eE][+\-]?\d+)?"
NUMBER_RE = re.compile(rf"(?<![\w.])({_NUM})(?:\s*[x×]\s*10\s*(?:\^|\*\*)\s*([+\-]?\d+)(?!\s*/))?(\s*%)?")
#: AM/PM after a time, any case, with or without dots or a space: "PM", "pm", "p.m.", "P. M.".
_AMPM = r"(?:\s*([AaPp]\.?\s?[Mm]\.?)(?![A-Za-z0-9]))?"
_ISO = re.compile(rf"\b(\d{{4}})-(\d{{1,2}})-(\d{{1,2}})(?:[T ]+(\d{{1,2}}):(\d{{2}})(?::(\d{{2}})(?:\.\d+)?)?{_AMPM})?")
_SLASH = re.compile(rf"\b(\d{{1,2}})/(\d{{1,2}})/(\d{{4}})(?:[ ,T]+(\d{{1,2}}):(\d{{2}})(?::(\d{{2}}))?{_AMPM})?")
_MONTHS = {
    m: i
    for i, names in enumerate(
        [
            ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
            ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"),
            ("nov", "november"), ("dec", "december"),
        ],
        start=1,
    )
    for m in names
}
_MON = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_TIME = r"(?:(?:,\s*|\s+(?:at\s+)?)(\d{1,2}):(\d{2})(?::(\d{2}))?" + _AMPM + ")?"
_MDY = re.compile(rf"\b{_MON}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}}){_TIME}", re.I)
_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MON},?\s+(\d{{4}}){_TIME}", re.I)
_MY = re.compile(rf"\b{_MON}\s+(\d{{4}})\b", re.I)
_ISO_MONTH = re.compile(r"\b(\d{4})-(\d{1,2})\b(?![-\d])")
_HAS_YEAR = re.compile(r"\d{4}")  # every date form has a 4-digit year: cheap pre-check
_HAS_MONTH = re.compile(r"(?i)jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec")
_BOOL = re.compile(r"^\W*(yes|no|true|false|y|n)\b", re.I)
_BOOL_MAP = {"yes": True, "y": True, "true": True, "no": False, "n": False, "false": False}
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.*\S)\s*$")
_LIST_SPLIT = re.compile(r"\s*;\s*|\s*,\s*(?:and\s+)?|\s+and\s+")
_SENTENCE_END = re.compile(r"\.\s+(?=[A-Z][a-z])")
_MD_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_UNIT_WORD = re.compile(r"\S+")
_PER = re.compile(r"\s+per\s+", re.I)
_BARE_NUMBER = re.compile(r"[+\-]?\d+(?:[.,]\d+)*")
_STOP = frozenset(
    "in at on of to a an and or the per by for from with is was were be as it its this that which "
    "were than then if patient patients admission admissions null none n/a vs versus unless otherwise else but "
    "nor".split()
)  # NULL spellings are abstentions beside a value (verifier.match.commit), never a unit ("N/A": newton/ampere)
_WORD_NUMBERS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
}
#: digits (and commas) of a count read as one: no count has more, and int() refuses over 4,300 digits
_MAX_COUNT_CHARS = 64
_COUNT_FAST = re.compile(r"^\s*(\d{1,3}(?:,\d{3})+|\d+)(?:\s+[A-Za-z][A-Za-z ]*)?\.?\s*$")
_COUNT_WORD = re.compile(r"\b(" + "|".join(_WORD_NUMBERS) + r")\b", re.I)
_MD_EMPH = re.compile(r"(\*\*|__|`+)")


class NumberToken(NamedTuple):
    """A number found in text.

    Attributes:
        value: the value (percent sign NOT applied: ``35.2%`` gives 35.2).
        decimals: digits written after the decimal point.
        percent: whether a ``%`` followed.
        start / end: span in the text.
    """

    value: float
    decimals: int
    percent: bool
    start: int
    end: int


class QuantityToken(NamedTuple):
    """A number with an optional unit found in text.

    Attributes:
        value: the number as written.
        unit: the unit string as written (``None`` when no unit follows).
        decimals: digits written after the decimal point.
        start / end: span in the text.
    """

    value: float
    unit: str | None
    decimals: int
    start: int
    end: int


class DatetimeToken(NamedTuple):
    """A date or datetime found in text, with the precision written."""

    value: dt.datetime
    precision: str
    start: int
    end: int


def _to_float(raw: str) -> tuple[float, int]:
    if re.fullmatch(_DECIMAL_COMMA, raw):
        raw = raw.replace(",", ".")
    s = raw.replace(",", "").replace("−", "-").replace("–", "-")
    mant = s.lower().split("e")[0]
    decimals = len(mant.split(".", 1)[1]) if "." in mant else 0
    return float(s), decimals


def strip_markdown(text: str) -> str:
    """Remove Markdown emphasis and code ticks, and surrounding whitespace."""
    return _MD_EMPH.sub("", text).strip()


def _iso(m: re.Match) -> tuple:
    return int(m[1]), int(m[2]), int(m[3]), m[4], m[5], m[6], m[7]


def _iso_month(m: re.Match) -> tuple:
    return int(m[1]), int(m[2]), None, None, None, None, None


def _slash(m: re.Match) -> tuple:
    a, b = int(m[1]), int(m[2])
    mo, d = (b, a) if a > 12 else (a, b)  # month first unless the first field cannot be a month
    return int(m[3]), mo, d, m[4], m[5], m[6], m[7]


def _mdy(m: re.Match) -> tuple:
    return int(m[3]), _MONTHS[m[1].lower()[:3]], int(m[2]), m[4], m[5], m[6], m[7]


def _dmy(m: re.Match) -> tuple:
    return int(m[3]), _MONTHS[m[2].lower()[:3]], int(m[1]), m[4], m[5], m[6], m[7]


def _my(m: re.Match) -> tuple:
    return int(m[2]), _MONTHS[m[1].lower()[:3]], None, None, None, None, None


#: (pattern, fields, needs): tried in this order; earlier patterns win overlaps.
_DATE_FORMS = (
    (_ISO, _iso, "-"), (_ISO_MONTH, _iso_month, "-"), (_SLASH, _slash, "/"),
    (_MDY, _mdy, None), (_DMY, _dmy, None), (_MY, _my, None),
)


def _hour24(h: int, ampm: str | None) -> int:
    """The 24-hour clock hour of ``h`` written with ``ampm`` (12-hour clock: "12:xx AM" is
    00:xx, "12:xx PM" is 12:xx, "5:08 PM" 17:08). A 24-hour hour (0 or 13-23) beside "PM"
    keeps its value ("17:08 PM"); beside "AM" it contradicts itself: ``ValueError``."""
    if not ampm or not 1 <= h <= 12:
        if ampm and h > 12 and ampm[0] in "aA":
            raise ValueError(f"hour {h} with {ampm!r}")
        return h
    return h % 12 + (12 if ampm[0] in "pP" else 0)


def _token(fields: tuple, span: tuple[int, int]) -> DatetimeToken | None:
    y, mo, d, hh, mi, ss, ampm = fields
    try:
        h = _hour24(int(hh) if hh else 0, ampm)
        value = dt.datetime(y, mo, d or 1, h, int(mi) if mi else 0, int(ss) if ss else 0)
    except ValueError:
        return None
    prec = "second" if ss else "minute" if mi else "day" if d else "month"
    return DatetimeToken(value, prec, span[0], span[1])


@lru_cache(maxsize=65536)
def _datetimes_cached(text: str) -> tuple[DatetimeToken, ...]:
    if not _HAS_YEAR.search(text):
        return ()
    has_month = _HAS_MONTH.search(text) is not None
    # fast path: the whole text is one date (the usual Answer)
    stripped = text.strip()
    lead = text.find(stripped[:1]) if stripped else 0
    for pattern, fields, needs in _DATE_FORMS:
        if (needs and needs not in stripped) or (needs is None and not has_month):
            continue
        m = pattern.fullmatch(stripped)
        if m is not None:
            tok = _token(fields(m), (lead, lead + len(stripped)))
            return (tok,) if tok else ()
    out: list[DatetimeToken] = []
    for pattern, fields, needs in _DATE_FORMS:
        if (needs and needs not in text) or (needs is None and not has_month):
            continue
        for m in pattern.finditer(text):
            span = m.span()
            if any(t.start < span[1] and span[0] < t.end for t in out):
                continue
            tok = _token(fields(m), span)
            if tok is not None:
                out.append(tok)
    out.sort(key=lambda t: t.start)
    return tuple(out)


def extract_datetimes(text: str) -> list[DatetimeToken]:
    """All dates/datetimes in ``text``, in order of appearance (cached)."""
    return list(_datetimes_cached(text))


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    chars = list(text)
    for a, b in spans:
        for i in range(a, b):
            chars[i] = " "
    return "".join(chars)


def extract_numbers(text: str, *, skip_dates: bool = True) -> list[NumberToken]:
    """All numbers in ``text`` (dates masked out first unless ``skip_dates=False``).

    Returns:
        NumberTokens in order; ``1.2 × 10^3`` is one token of value 1200.
    """
    m = _SIMPLE_NUM.match(text)
    if m is not None:  # fast path: the whole text is one number
        value, decimals = _to_float(m[1])
        return [NumberToken(value, decimals, bool(m[2]), 0, len(text))]
    if skip_dates:
        text = _mask(text, [(t.start, t.end) for t in _datetimes_cached(text)])
    out = []
    for m in NUMBER_RE.finditer(text):
        value, decimals = _to_float(m[1])
        if m[2]:
            value = _times_power_of_ten(value, m[2])
        out.append(NumberToken(value, decimals, bool(m[3]), m.start(), m.end()))
    return out


_ARROW = re.compile(r"[-=]>|[→⟶⇒]")


#: An arithmetic operator standing as a word: the computation goes on, the unit has ended.
_OPERATOR_WORD = re.compile(r"[-−–+×*÷=]")


def _unit_after(text: str, pos: int) -> tuple[str | None, int]:
    """Longest run (up to 3 words) after ``pos`` that parses as a unit."""
    words = list(islice(_UNIT_WORD.finditer(text, pos), 3))  # not the whole rest: linear overall
    for n in range(len(words), 0, -1):
        cand = text[words[0].start(): words[n - 1].end()].rstrip(".,;:)?")
        if "?" in cand or ";" in cand or _ARROW.search(cand):
            continue  # a question mark, a clause break or an arrow ("mL -> -22 mL") is no part of a unit
        folded = [w.group().casefold().strip(".,;:") for w in words[:n]]
        per = n == 3 and folded[1] == "per"  # "units per hour" is units/hour
        if not cand or any(w in _STOP for i, w in enumerate(folded) if not (per and i == 1)):
            continue
        if any(_BARE_NUMBER.fullmatch(w) for w in folded[1:]):
            continue  # "4 h 29 min": a number starts the next quantity, it is not part of this unit
        if n > 1 and _OPERATOR_WORD.fullmatch(folded[-1]):
            continue  # "13,230.07 mL − 4,560.0 mL" (blind corpus c39): an operator ends no unit
        if not re.match(r"[A-Za-zµμ°º%#/\[{]|[x×]\s*10|10[*^]", cand):
            continue
        unit = _PER.sub("/", cand) if per else cand
        if not is_unit_spelling(unit):
            continue
        return unit, words[0].start() + len(cand)
    return None, pos


_SIMPLE_Q = re.compile(
    r"^([+\-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?:\s*([A-Za-zµμ°º%#/][^\s\d?;]*(?:/[^\s?;]+)?))?$"
)
_SIMPLE_NUM = re.compile(r"^([+\-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+\-]?\d+)?)(\s*%)?$")


@lru_cache(maxsize=65536)
def _quantities_cached(text: str) -> tuple[QuantityToken, ...]:
    m = _SIMPLE_Q.match(text)
    if m is not None:  # fast path: "5.2", "5.2 mEq/L", "35.2%"
        raw, unit = m[1], m[2]
        if unit is None or (unit.casefold() not in _STOP and is_unit_spelling(unit)):
            value, decimals = _to_float(raw)
            return (QuantityToken(value, unit, decimals, 0, len(text)),)
    masked = _mask(text, [(t.start, t.end) for t in _datetimes_cached(text)])
    out: list[QuantityToken] = []
    for m in NUMBER_RE.finditer(masked):
        if out and m.start() < out[-1].end:
            continue  # a digit inside the previous quantity's unit (x10^9/L, 1.73 m2)
        value, decimals = _to_float(m[1])
        if m[3]:
            out.append(QuantityToken(value, "%", decimals, m.start(), m.end()))
            continue
        end = m.end(1)
        if m[2]:  # "7.5 x 10^9 /L": the power of ten belongs to the unit
            unit, uend = _unit_after(masked, m.end())
            unit = f"1e{int(m[2])}" + (f" {unit}" if unit else "")
            out.append(QuantityToken(value, unit, decimals, m.start(), uend if uend > m.end() else m.end()))
            continue
        unit, uend = _unit_after(masked, end)
        out.append(QuantityToken(value, unit, decimals, m.start(), max(uend, end)))
    return tuple(out)


def extract_quantities(text: str) -> list[QuantityToken]:
    """Numbers with their (optional) units, dates masked out (cached)."""
    return list(_quantities_cached(text))


def _times_power_of_ten(value: float, exponent: str) -> float:
    """``value × 10^exponent`` ("1.2 × 10^3", "10^0001"), for an exponent of any length: beyond the
    float range it is ±inf or 0.0 (``10.0 ** 400`` raised OverflowError, and ``int()`` refuses more
    than 4,300 digits; both were a ``VERIFIER_ERROR``). A mantissa already beyond the range (inf)
    times a vanishing power is NaN, which no check accepts."""
    digits = exponent.lstrip("+-").lstrip("0") or "0"
    if len(digits) <= 3:
        try:
            return value * 10.0 ** (-int(digits) if exponent.startswith("-") else int(digits))
        except OverflowError:
            pass
    if value == 0.0:
        return 0.0
    return 0.0 if exponent.startswith("-") else math.copysign(math.inf, value)


def extract_count(text: str) -> int | None:
    """The first integer in ``text`` (digits or a number word up to twenty), else ``None``.

    A non-integral first number returns ``None`` (a count must be whole).
    """
    m = _COUNT_FAST.match(text)
    if m is not None and len(m[1]) <= _MAX_COUNT_CHARS:  # fast path: "12", "1,204 patients"
        return int(m[1].replace(",", ""))
    nums = extract_numbers(text)
    if nums:
        v = nums[0].value
        return int(v) if math.isfinite(v) and float(v).is_integer() else None
    m = _COUNT_WORD.search(text)
    return _WORD_NUMBERS[m[1].lower()] if m else None


_EMPTY = re.compile(
    r"(?i)\s*(?:\[\s*\]|\{\s*\}|\(\s*\)|empty(?:\s+(?:list|set|result(?:\s+set)?|table))?|"
    r"no\s+(?:rows|records|results|matches|matching\s+(?:rows|records))|0\s+rows|none\s+found)(?![\w\[\]{}])(.*)",
    re.S,
)
_EMPTY_HEDGE = re.compile(
    r"(?i)\b(?:or|either|maybe|possibly|probably|likely|perhaps|but|actually|except|unsure|uncertain|unclear)\b"
)


def is_empty_answer(text: str, json_value: Any = None) -> bool:
    """Whether the Answer states an empty result (module docstring), e.g. ``[]``,
    ``[] (no prescriptions found)``, ``Empty list: none were given``."""
    if isinstance(json_value, (list, dict)) and not json_value:
        return True
    m = _EMPTY.fullmatch(strip_markdown(text))
    return m is not None and _EMPTY_HEDGE.search(m[1]) is None


def extract_boolean(text: str) -> bool | None:
    """``True``/``False`` from a leading yes/no/true/false/y/n, else ``None``."""
    m = _BOOL.match(strip_markdown(text))
    return _BOOL_MAP[m[1].lower()] if m else None


def extract_list(text: str) -> list[str]:
    """Split a list answer into item strings (Markdown bullets, lines or separators)."""
    text = text.strip()
    if text.startswith("["):
        try:
            data = json.loads(text)
            if isinstance(data, list) and all(not isinstance(x, (list, dict)) for x in data):
                return [str(x).strip() for x in data if x is not None and str(x).strip()]
        except ValueError:
            pass
    lines = [ln for ln in text.splitlines() if ln.strip()]
    bullets = [m[1] for m in map(_BULLET.match, lines) if m]
    if bullets and len(bullets) >= len(lines) - 1:
        return [strip_markdown(b) for b in bullets]
    if len(lines) > 1:
        return [strip_markdown(ln) for ln in lines]
    text = _SENTENCE_END.split(text, maxsplit=1)[0]  # "A, B. It grew from ...": the rest explains
    parts = [p for p in _split_outside_brackets(text.rstrip(".")) if p.strip()]
    return [strip_markdown(p) for p in parts]


def _split_outside_brackets(text: str) -> list[str]:
    """``_LIST_SPLIT`` separators that are not inside parentheses or brackets."""
    if "(" not in text and "[" not in text:
        return _LIST_SPLIT.split(text)
    depth, cuts = 0, []
    for m in _LIST_SPLIT.finditer(text):
        depth = sum(1 if c in "([" else -1 if c in ")]" else 0 for c in text[: m.start()])
        if depth <= 0:
            cuts.append(m.span())
    out, last = [], 0
    for a, b in cuts:
        out.append(text[last:a])
        last = b
    out.append(text[last:])
    return out


def _split_md_row(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [strip_markdown(c) for c in s.split("|")]


def extract_records(text: str, json_value: Any = None) -> tuple[list[str], list[list[Any]]] | None:
    """Read a table of records from an answer.

    Args:
        text: the answer text.
        json_value: the decoded JSON answer, when the response was JSON.

    Returns:
        ``(columns, rows)`` with cells as strings (or JSON scalars), or
        ``None`` when no table is recognisable.
    """
    data = None if isinstance(json_value, str) else json_value
    stripped = text.strip()
    if data is None and stripped[:1] in "[{":
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
    if data is None:
        data = field_block(stripped)  # every line a ``field: value`` line: one record (blind corpus c41)
    if isinstance(data, dict):
        if "columns" in data and "rows" in data:
            return [str(c) for c in data["columns"]], [list(r) for r in data["rows"]]
        for v in data.values():
            if isinstance(v, list):
                data = v
                break
        else:
            if data and not any(isinstance(v, (dict, list)) for v in data.values()):
                return [str(k) for k in data], [list(data.values())]  # one object: one row
    if isinstance(data, list) and data and all(isinstance(r, dict) for r in data):
        cols: list[str] = []
        for r in data:
            for k in r:
                if k not in cols:
                    cols.append(k)
        return cols, [[r.get(c) for c in cols] for r in data]
    lines = [ln for ln in stripped.splitlines() if ln.strip()]
    if not lines:
        return None
    for i in range(len(lines) - 1):
        if "|" in lines[i] and _MD_SEP.match(lines[i + 1]):
            cols = _split_md_row(lines[i])
            rows = []
            for ln in lines[i + 2:]:
                if "|" not in ln:
                    break
                rows.append(_split_md_row(ln))
            return cols, rows
    if len(lines) < 2:
        return None
    head = lines[0]
    for delim in ("\t", "|", ";", ","):
        if delim in head:
            reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=delim, skipinitialspace=True)
            table = [[strip_markdown(c) for c in row] for row in reader]
            if len({len(r) for r in table}) == 1 and len(table[0]) > 1:
                return table[0], table[1:]
    return None
