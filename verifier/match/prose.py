"""A one-row result set written as prose (issue 17 kind 3).

Agents often state a single-row answer as a sentence rather than a table:
``HCFA DRG 871 - SEPTICEMIA OR SEVERE SEPSIS W/O MV 96+ HOURS W MCC``,
``871 (SEPTICEMIA ...)``, ``code 871: SEPTICEMIA ...``, ``drg_code=871,
description=...``, or a Markdown table whose header names the columns
otherwise (``| Code | Description |``). ``match_prose_row`` accepts such an
Answer when the reference has exactly one row and:

1. every required reference cell (``answer_policy.required_columns``, else
   all) is stated: a number or code as a whole number token equal to it
   (floats under the policy's numeric rule), a date at the reference's
   precision, text as the same words in order (case, spacing and punctuation
   between words aside; ``+ < >`` are words here, so ``96+`` is not ``96``);
2. an optional cell that is not stated leaves nothing in its place (see 3);
3. what remains once the stated cells are removed is only labels: no hedge
   word (``verifier.match.commit``: ``or``, ``not``, ``maybe``...), no other
   candidate number (identifiers, citations, dates, context phrases and, when
   the row holds no measured value, durations such as ``7 days`` aside), and
   no word outside the column names and ``rules/synonyms.toml`` ``[records]
   label_words`` (``drg``, ``code``, ``billed``, ``admission``...). A second
   row, a different description or an alternative value therefore fails;
4. a parenthetical may qualify the record with other fields (issue 17 kind 1,
   Clean side): ``(severity 3, mortality risk 2)``, ``(weight 1.2)``. Each
   item ``<field> <value>`` (a number, or one or two words without a hedge)
   whose field is one of ``[records] qualifier_fields`` and names no
   reference column is set aside; anything else in the parenthetical stays
   and is judged by 3;
5. a number left after a word of a reference column's name (``code 309``,
   ``the DRG is 480``, ``severity 3`` for a ``drg_severity`` column) states
   another value of that column: a contradiction or a second record, so the
   Answer fails (identifiers are otherwise context, 3); so does a label of a
   group of exclusive labels (``[records] exclusive_labels``: ``APR``,
   ``HCFA``...) other than the one a reference cell holds (``(type APR)``
   beside an HCFA row).

Returns ``None`` when the Answer is not such a statement; the caller then
keeps the table comparison's reasons.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from typing import Any

from ..contract import AnswerPolicy, RecordsAnswer, load_toml
from .commit import candidates, hedge_word, mask_context
from .datetimes import datetimes_equal
from .extract import extract_datetimes, extract_numbers, strip_markdown
from .numbers import tolerance_rule, within
from .result import MatchResult, success

_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$", re.M)
_TEXT_TOKEN = re.compile(r"\w+|[+<>≤≥±]")
_WORD = re.compile(r"[^\W\d_]+")
_CODE = re.compile(r"[+\-]?\d+(?:\.\d+)?")
_MAX_CHARS = 2000
_DURATION = re.compile(r"(?i)(?<![\w.])\d+(?:\.\d+)?\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|weeks?|months?|years?)\b")


@lru_cache(maxsize=1)
def _labels() -> frozenset[str]:
    words = load_toml("synonyms.toml").get("records", {}).get("label_words", [])
    return frozenset(w.casefold() for w in words)


def _blank(text: str, span: tuple[int, int]) -> str:
    return text[: span[0]] + " " * (span[1] - span[0]) + text[span[1]:]


def _find_number(text: str, ref: float, is_int: bool, rule: tuple) -> tuple[int, int] | None:
    for tok in extract_numbers(text, skip_dates=False):
        if (tok.value == ref) if is_int else within(tok.value, ref, rule):
            return tok.start, tok.end
    return None


def _find_date(text: str, ref: dt.date) -> tuple[int, int] | None:
    ref_dt = ref if isinstance(ref, dt.datetime) else dt.datetime(ref.year, ref.month, ref.day)
    prec = "day" if not isinstance(ref, dt.datetime) else ("minute" if ref.second == 0 else "second")
    for tok in extract_datetimes(text):
        sub_prec = tok.precision if not (prec == "minute" and tok.precision == "second") else "second"
        if datetimes_equal(tok.value, sub_prec, ref_dt, prec):
            return tok.start, tok.end
    return None


@lru_cache(maxsize=4096)
def _text_pattern(ref: str) -> re.Pattern | None:
    tokens = _TEXT_TOKEN.findall(ref)
    if not tokens:
        return None
    body = r"[^\w+<>≤≥±]*".join(re.escape(t) for t in tokens)
    return re.compile(rf"(?<!\w){body}(?!\w)", re.I)


def _find(text: str, ref: Any, rule: tuple) -> tuple[int, int] | None:
    if isinstance(ref, bool):
        return None
    if isinstance(ref, (int, float)):
        return _find_number(text, float(ref), isinstance(ref, int), rule)
    if isinstance(ref, (dt.datetime, dt.date)):
        return _find_date(text, ref)
    s = str(ref).strip()
    if _CODE.fullmatch(s):  # a code held as text ("871"): a whole number token
        return _find_number(text, float(s), "." not in s, rule)
    pattern = _text_pattern(s)
    m = pattern.search(text) if pattern is not None else None
    return m.span() if m else None


_PAREN = re.compile(r"\(([^()]*)\)")
_ITEM_SEP = re.compile(r"\s*[,;]\s*")
_VALUE = r"(?P<value>[+\-]?\d+(?:\.\d+)?|[^\W\d_]+(?:\s+[^\W\d_]+)?)"


@lru_cache(maxsize=1)
def _qualifier_item() -> re.Pattern:
    fields = load_toml("synonyms.toml").get("records", {}).get("qualifier_fields", [])
    alt = "|".join(r"\s+".join(map(re.escape, f.split())) for f in sorted(fields, key=len, reverse=True))
    return re.compile(rf"(?i)(?P<field>{alt or '(?!)'})\s*(?:[:=]\s*|\b(?:is|was|of)\s+)?{_VALUE}")


def _column_words(columns: tuple[str, ...] | list[str]) -> frozenset[str]:
    return frozenset(w.casefold() for c in columns for w in _WORD.findall(c) if len(w) > 1)


def _set_aside_qualifiers(text: str, columns: tuple[str, ...] | list[str]) -> str:
    """``text`` with the ``<field> <value>`` items of its parentheticals blanked when the field is a
    qualifier field (``rules/synonyms.toml`` ``[records] qualifier_fields``) naming no reference
    column and the value holds no hedge word (rule 4 of the module docstring); same length."""
    if "(" not in text:
        return text
    item, colwords = _qualifier_item(), _column_words(columns)
    for paren in list(_PAREN.finditer(text)):
        pos = paren.start(1)
        for part in _ITEM_SEP.split(paren.group(1)):
            at = text.index(part, pos) if part else pos
            pos = at + len(part)
            m = item.fullmatch(part.strip())
            if m is None or hedge_word(m["value"]) is not None:
                continue
            if any(w.casefold() in colwords for w in _WORD.findall(m["field"])):
                continue  # a reference column: compared (rule 5), never set aside
            text = _blank(text, (at, at + len(part)))
    return text


def _column_number(text: str, columns: tuple[str, ...] | list[str]) -> bool:
    """Whether a number in ``text`` follows a word of a reference column's name (rule 5)."""
    words = _column_words(columns)
    if not words:
        return False
    before = re.compile(rf"(?i)\b(?:{'|'.join(map(re.escape, sorted(words)))})\b[\s_:#=]*(?:(?:is|was)\s+)?$")
    return any(before.search(text, max(0, tok.start - 24), tok.start) for tok in extract_numbers(text))


def _other_exclusive_label(text: str, row: Any) -> bool:
    """Whether ``text`` holds a label excluded by one a cell of ``row`` holds (rule 5)."""
    groups = load_toml("synonyms.toml").get("records", {}).get("exclusive_labels", [])
    cells = {w.casefold() for c in row if isinstance(c, str) for w in _WORD.findall(c)}
    left = {w.casefold() for w in _WORD.findall(text)}
    return any(cells & set(g) and (left & set(g)) - cells for g in groups)


_FIELD_LINE = re.compile(r"^\s*(?:[-*•]\s*)?\**([A-Za-z][\w ]{0,40}?)\**\s*[:=]\s*\S")


def _key(name: str) -> str:
    return re.sub(r"[\W_]+", "", name).casefold()


def field_lines(text: str, columns: tuple[str, ...]) -> str:
    """``text`` without its lead phrase when it is a record written as ``field: value`` lines
    (issue 32): a lead phrase (``Left radial artery``; lines without a field label, holding no
    digit and no hedge word) followed only by ``field: value`` lines, one of whose fields names
    a reference column (``location: Left Radial``; case, spaces and underscores aside). The lines
    are then read as the record, matched on the reference's columns; the lead is its heading.

    Args:
        text: the Answer text; columns: the reference's column names.

    Returns:
        The field lines alone, or ``text`` unchanged when it is not such a record.
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    first = next((i for i, ln in enumerate(lines) if _FIELD_LINE.match(ln)), None)
    if not first or len(lines) - first < 2:
        return text
    lead, fields = lines[:first], lines[first:]
    keys = {_key(c) for c in columns}
    labels = [_FIELD_LINE.match(ln) for ln in fields]
    if not all(labels) or not any(_key(m[1]) in keys for m in labels if m):
        return text
    head = " ".join(lead)
    if re.search(r"\d", head) or hedge_word(head) is not None:
        return text
    return "\n".join(fields)


def match_prose_row(text: str, ref: RecordsAnswer, policy: AnswerPolicy) -> MatchResult | None:
    """The one reference row stated in prose (module docstring), else ``None``.

    Args:
        text: the Answer text.
        ref: the reference result set (only one-row references are considered).
        policy: the task's answer policy (required columns, numeric rule).

    Returns:
        A successful :class:`MatchResult`, or ``None`` when the Answer is not
        the reference row in prose.
    """
    if len(ref.rows) != 1 or not text or len(text) > _MAX_CHARS:
        return None
    required = {c.casefold() for c in (policy.required_columns or ref.columns)}
    rule = tolerance_rule(policy, None, "number")
    rest = _TABLE_RULE.sub(" ", strip_markdown(field_lines(text, ref.columns))).replace("|", " ")
    stated: list[str] = []
    for col, cell in zip(ref.columns, ref.rows[0]):
        if cell is None or (isinstance(cell, str) and not cell.strip()):
            continue
        span = _find(rest, cell, rule)
        if span is None:
            if col.casefold() in required:
                return None
            continue
        stated.append(col)
        rest = _blank(rest, span)
    if not stated or hedge_word(rest) is not None:
        return None
    rest = _set_aside_qualifiers(rest, ref.columns)
    if _column_number(rest, ref.columns) or _other_exclusive_label(rest, ref.rows[0]):
        return None
    masked = mask_context(rest)
    if not any(isinstance(c, float) for c in ref.rows[0]):  # "(2161-11-28 to 2161-12-05, 7 days)": a duration
        masked = _DURATION.sub(lambda m: " " * len(m.group()), masked)
    if candidates(masked, extract_numbers(masked)):
        return None
    allowed = _labels() | {w.casefold() for c in ref.columns for w in _WORD.findall(c)}
    extra = [w for w in _WORD.findall(masked) if w.casefold() not in allowed]
    if extra:
        return None
    return success(compared="records", how="the one reference row, stated in prose", stated_columns=stated,
                   reference_rows=1, submitted_rows=1)
