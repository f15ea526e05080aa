"""Dates and datetimes, compared at the reference's precision.

Both values are truncated to the reference precision (``year`` ... ``second``)
and must then be equal. A submission written less precisely than the
reference (a date for a minute-precision reference) does not match: the agent
did not state the value asked for. A finer submission is truncated.
The Answer must commit to one date (``verifier.match.commit``): a hedge or
negation word, or several dates that differ at the reference precision,
fail with ``WRONG_VALUE`` ("ambiguous answer"). A date in an aside
(``verifier.match.aside``: ``11:30 (the ICU input record shows 11:20)``,
``note the pharmacy order was at 09:00``, a descriptive parenthetical after the committed
value: ``17:11 (discharged 2110-12-05)``) is context, not a candidate; a bare bracketed
date (``17:11 (2110-12-02 09:00)``) still is one.
"""

from __future__ import annotations

import datetime as dt
import re

from ..contract import DatetimeAnswer, ReasonCode
from .aside import aside_only, committed
from .commit import NO_COMMITTED_VALUE, ambiguous, approximation_word, hedge_word, mask_context, precision_mark
from .extract import extract_datetimes
from .result import MatchResult, failure, success

PRECISIONS = ("year", "month", "day", "hour", "minute", "second")
_RANK = {p: i for i, p in enumerate(PRECISIONS)}
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")


def truncate(value: dt.datetime, precision: str) -> dt.datetime:
    """``value`` with every field finer than ``precision`` reset."""
    r = _RANK[precision]
    return dt.datetime(
        value.year,
        value.month if r >= 1 else 1,
        value.day if r >= 2 else 1,
        value.hour if r >= 3 else 0,
        value.minute if r >= 4 else 0,
        value.second if r >= 5 else 0,
    )


def datetimes_equal(sub: dt.datetime, sub_prec: str, ref: dt.datetime, ref_prec: str) -> bool:
    """Equal at ``ref_prec``; a coarser submission matches only if the reference has
    nothing finer than what was written (e.g. a midnight timestamp written as a date
    when the reference precision is not stated finer)."""
    if _RANK[sub_prec] >= _RANK[ref_prec]:
        return truncate(sub, ref_prec) == truncate(ref, ref_prec)
    return False


def match_datetime(text: str, ref: DatetimeAnswer) -> MatchResult:
    """Compare the Answer's first date/datetime with ``ref`` at ``ref.precision``."""
    toks = extract_datetimes(text)
    if not toks:
        m = _YEAR.search(text) if ref.precision == "year" else None
        if m is None:
            return failure(ReasonCode.WRONG_TYPE, expected="datetime", reference=ref.value.isoformat(),
                           submitted=text[:200], why="no date in the Answer")
        sub, prec = dt.datetime(int(m[1]), 1, 1), "year"
    else:
        if aside_only(text, toks):
            return failure(ReasonCode.WRONG_VALUE, compared="datetime", reference=ref.value.isoformat(),
                           submitted=text[:200], why=NO_COMMITTED_VALUE)
        toks = committed(text, toks, parenthetical=True)
        sub, prec = toks[0].value, toks[0].precision
        if toks[0].end - toks[0].start != len(text):
            # a date is exact: an approximation word before or after it ("about", "~") is a hedge
            word = hedge_word(text) or approximation_word(mask_context(text), toks[0].start, toks[0].end) or precision_mark(text)
            rp = ref.precision
            distinct = {truncate(t.value, rp) if _RANK[t.precision] >= _RANK[rp] else (t.value, t.precision)
                        for t in toks}
            if word is not None or len(distinct) > 1:
                why = f"the Answer says {word!r}" if word else f"{len(distinct)} different dates"
                return failure(ReasonCode.WRONG_VALUE, compared="datetime", reference=ref.value.isoformat(),
                               submitted=text[:200], why=ambiguous(why))
    base = {"compared": "datetime", "reference": ref.value.isoformat(), "precision": ref.precision,
            "submitted": sub.isoformat(), "submitted_precision": prec}
    if datetimes_equal(sub, prec, ref.value, ref.precision):
        return success(**base)
    if _RANK[prec] < _RANK[ref.precision]:
        base["why"] = "the submission is less precise than the reference"
    return failure(ReasonCode.WRONG_VALUE, **base)
