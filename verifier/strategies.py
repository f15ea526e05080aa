"""Hypothesis strategies for property tests of scorers (exported for users).

Each ``*_cases()`` strategy draws a :class:`Case`: a typed reference answer, its
``AnswerPolicy``, an *equivalent* submission (must match) and a
*non-equivalent* one (must not). ``responses(answer)`` wraps an Answer into a
final response in one of the accepted formats with random whitespace, case
of the labels and Markdown decoration. ``null_answers()`` draws NULL spellings.

Conversion factors below are written independently of ``rules/`` from the
same clinical constants (molar masses, valences), so a wiring error in the
registry (direction, prefix, analyte) shows up as a failing property.

Example::

    from hypothesis import given
    from verifier.strategies import quantity_cases, responses

    @given(quantity_cases(), st.data())
    def test_my_scorer(case, data):
        text = data.draw(responses(case.equivalent))
        assert my_scorer(text, case.reference)
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from .contract import (
    AnswerPolicy,
    CountAnswer,
    DatetimeAnswer,
    NumberAnswer,
    QuantityAnswer,
    RecordsAnswer,
    TextAnswer,
)

__all__ = [
    "Case", "QUANTITY_CONVERSIONS", "count_cases", "datetime_cases", "null_answers", "number_cases",
    "quantity_cases", "records_cases", "responses", "text_cases",
]


@dataclass(frozen=True)
class Case:
    """A reference with one equivalent and one non-equivalent submission.

    Attributes:
        reference: the typed reference answer.
        policy: the answer policy to compare under.
        equivalent: Answer text that must match.
        different: Answer text that must not match.
        note: how the submissions were made (for failure messages).
    """

    reference: Any
    policy: AnswerPolicy
    equivalent: str
    different: str
    note: str = ""


#: (analyte, reference unit, submitted unit, factor: value_in_submitted = value_in_reference * factor)
QUANTITY_CONVERSIONS: tuple[tuple[str | None, str, str, float], ...] = (
    ("potassium", "mmol/L", "mEq/L", 1.0),
    ("calcium", "mmol/L", "mEq/L", 2.0),
    ("magnesium", "mEq/L", "mmol/L", 0.5),
    ("glucose", "mmol/L", "mg/dL", 180.156 / 10),
    ("glucose", "mg/dL", "mmol/L", 10 / 180.156),
    ("creatinine", "mg/dL", "umol/L", 10_000 / 113.12),
    ("urea_nitrogen", "mg/dL", "mmol/L", 10 / 28.014),
    ("calcium", "mg/dL", "mmol/L", 10 / 40.078),
    ("phosphate", "mg/dL", "mmol/L", 10 / 30.974),
    ("cholesterol", "mg/dL", "mmol/L", 10 / 386.65),
    ("bilirubin", "mg/dL", "umol/L", 10_000 / 584.66),
    ("sodium", "mEq/L", "mmol/L", 1.0),
    ("alanine_aminotransferase", "IU/L", "U/L", 1.0),
    (None, "K/uL", "x10^9/L", 1.0),
    (None, "K/uL", "/uL", 1000.0),
    (None, "g/dL", "g/L", 10.0),
    (None, "mmHg", "mm Hg", 1.0),
    (None, "mL/min/1.73m2", "mL/min/1.73 m2", 1.0),
    (None, "kg", "g", 1000.0),
    (None, "%", "%", 1.0),
    (None, "bpm", "/min", 1.0),
)


def _fmt(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}"


def _sig(value: float, digits: int = 9) -> str:
    return f"{value:.{digits}g}"


def _sig_kept(value: float, digits: int = 9) -> str:
    """``digits`` significant digits, trailing zeros kept: a changed value written
    at full precision, never read as a coarser rounding of the reference
    ("101" could be 100.9 at its own precision; "101.000000" cannot)."""
    return f"{value:#.{digits}g}".rstrip(".")


@st.composite
def quantity_cases(draw: Any) -> Case:
    """Quantities: the equivalent is the value converted to another unit (9
    significant digits); the different one is off by 1-50 steps of the
    reference precision, also converted, and written with its trailing zeros
    (a changed value, not the reference at a coarser precision)."""
    analyte, ref_unit, sub_unit, factor = draw(st.sampled_from(QUANTITY_CONVERSIONS))
    d = draw(st.integers(0, 2))
    value = round(draw(st.floats(0.5, 2000, allow_nan=False)), d)
    step = draw(st.integers(1, 50)) * 10.0 ** (-d) * draw(st.sampled_from([1, -1]))
    changed = value + step if value + step > 0 else value + abs(step)
    ref = QuantityAnswer(value=value, unit=ref_unit, decimals=d)
    policy = AnswerPolicy(analyte=analyte)
    eq = f"{_sig(value * factor)} {sub_unit}"
    diff = f"{_sig_kept(changed * factor)} {sub_unit}"
    temp = draw(st.booleans())
    if temp:  # temperatures: offset units
        c = round(draw(st.floats(30, 43)), d)
        ref = QuantityAnswer(value=c, unit="degC", decimals=d)
        policy = AnswerPolicy()
        eq = f"{_sig(c * 9 / 5 + 32)} °F"
        diff = f"{_sig_kept((c + abs(step)) * 9 / 5 + 32)} °F"
    return Case(ref, policy, eq, diff, f"{ref.value} {ref.unit} vs {eq} / {diff}")


def _number_text(draw: Any, value: float, d: int) -> str:
    style = draw(st.sampled_from(["plain", "thousands", "sci", "plus", "trailing"]))
    if style == "thousands":
        return f"{value:,.{d}f}"
    if style == "sci":
        return f"{value:.{d + 6}e}"
    if style == "plus" and value >= 0:
        return f"+{value:.{d}f}"
    if style == "trailing":
        return f"{value:.{d + 2}f}"
    return _fmt(value, d)


@st.composite
def number_cases(draw: Any) -> Case:
    """Numbers written plainly, with thousands separators, in scientific
    notation, with a sign or extra trailing zeros; the different one is off by
    at least one step of the precision."""
    d = draw(st.integers(0, 3))
    value = round(draw(st.floats(-1e6, 1e6, allow_nan=False)), d)
    step = draw(st.integers(1, 1000)) * 10.0 ** (-d) * draw(st.sampled_from([1, -1]))
    ref = NumberAnswer(value=value, decimals=d)
    return Case(ref, AnswerPolicy(), _number_text(draw, value, d), _number_text(draw, value + step, d))


@st.composite
def count_cases(draw: Any) -> Case:
    """Counts, with or without a noun; the different one is off by at least one."""
    n = draw(st.integers(0, 100_000))
    other = n + draw(st.integers(1, 50)) * (1 if n < 50 or draw(st.booleans()) else -1)
    noun = draw(st.sampled_from(["", " patients", " admissions"]))
    fmt = draw(st.sampled_from(["{:d}", "{:,d}"]))
    return Case(CountAnswer(value=n), AnswerPolicy(), fmt.format(n) + noun, fmt.format(other) + noun)


_DATE_FORMATS = {
    "day": ["%Y-%m-%d", "%m/%d/%Y", "%B %d, %Y", "%d %b %Y", "%b %d %Y"],
    "minute": ["%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%m/%d/%Y %H:%M", "%B %d, %Y %H:%M", "%d %b %Y %H:%M"],
    "second": ["%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%d %B %Y %H:%M:%S"],
}
_STEP = {"day": dt.timedelta(days=1), "minute": dt.timedelta(minutes=1), "second": dt.timedelta(seconds=1)}


@st.composite
def datetime_cases(draw: Any) -> Case:
    """Dates/datetimes in several formats at the reference precision; the
    different one is shifted by 1-400 units of that precision."""
    prec = draw(st.sampled_from(sorted(_DATE_FORMATS)))
    value = draw(st.datetimes(dt.datetime(2100, 1, 1), dt.datetime(2210, 12, 31)))
    value = value.replace(microsecond=0)
    if prec == "day":
        value = value.replace(hour=0, minute=0, second=0)
    elif prec == "minute":
        value = value.replace(second=0)
    other = value + _STEP[prec] * draw(st.integers(1, 400)) * draw(st.sampled_from([1, -1]))
    f1, f2 = draw(st.sampled_from(_DATE_FORMATS[prec])), draw(st.sampled_from(_DATE_FORMATS[prec]))
    return Case(DatetimeAnswer(value=value, precision=prec), AnswerPolicy(), value.strftime(f1), other.strftime(f2))


_TEXTS = ["furosemide", "Medical Intensive Care Unit (MICU)", "Emergency Department", "heparin sodium",
          "acute kidney failure, unspecified", "Coronary Care Unit (CCU)", "metoprolol tartrate"]


@st.composite
def text_cases(draw: Any) -> Case:
    """Text: equivalent = case/whitespace/Markdown variant; different = another entry."""
    value = draw(st.sampled_from(_TEXTS))
    variant = draw(st.sampled_from([str.upper, str.lower, str.title, lambda s: s]))(value)
    variant = draw(st.sampled_from(["{}", "**{}**", "`{}`", "  {}  ", "_{}_"])).format(variant)
    other = draw(st.sampled_from([t for t in _TEXTS if t != value]))
    return Case(TextAnswer(value=value), AnswerPolicy(), variant, other)


def _render_table(columns: list[str], rows: list[tuple], style: str) -> str:
    def cell(v: Any) -> str:
        return v.strftime("%Y-%m-%d %H:%M") if isinstance(v, dt.datetime) else str(v)

    if style == "json":
        return json.dumps([{c: (cell(v) if isinstance(v, dt.datetime) else v) for c, v in zip(columns, r)}
                           for r in rows])
    if style == "csv":
        return "\n".join([",".join(columns)] + [",".join(cell(v) for v in r) for r in rows])
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns)
    return head + "\n" + "\n".join("| " + " | ".join(cell(v) for v in r) + " |" for r in rows)


@st.composite
def records_cases(draw: Any, order: str | None = None) -> Case:
    """Record sets (id, drug, dose, time). Equivalent: rows permuted (unless
    ``ordered``), column names re-cased, another table format. Different: one
    row dropped, or one dose changed."""
    order = order or draw(st.sampled_from(["multiset", "set", "ordered"]))
    n = draw(st.integers(2, 8))
    drugs = ["aspirin", "heparin", "insulin", "furosemide", "metoprolol", "vancomycin", "cefepime", "warfarin"]
    base = dt.datetime(2150, 1, 1, 8, 0)
    rows = [
        (i + 1, drugs[i], round(draw(st.floats(0.5, 500)), 1), base + dt.timedelta(hours=draw(st.integers(0, 500))))
        for i in range(n)
    ]
    columns = ["id", "drug", "dose", "given_at"]
    ref = RecordsAnswer(columns=tuple(columns), rows=tuple(rows))
    policy = AnswerPolicy(order=order, decimals=1)
    shown = list(rows)
    if order != "ordered":
        shown = draw(st.permutations(rows))
    sub_cols = [draw(st.sampled_from([c, c.upper(), c.title()])) for c in columns]
    style = draw(st.sampled_from(["markdown", "csv", "json"]))
    equivalent = _render_table(sub_cols, shown, style)
    mutation = draw(st.sampled_from(["drop", "change"]))
    changed = list(shown)
    k = draw(st.integers(0, n - 1))
    if mutation == "drop":
        del changed[k]
    else:
        r = changed[k]
        changed[k] = (r[0], r[1], round(r[2] + draw(st.integers(1, 100)) * 0.1 + 0.1, 1), r[3])
    return Case(ref, policy, equivalent, _render_table(sub_cols, changed, style), f"{order} {style} {mutation}")


def null_answers() -> st.SearchStrategy[str]:
    """The documented NULL spellings, with case, Markdown and an optional explanation."""
    word = st.sampled_from(["NULL", "null", "Null", "None", "NONE", "none", "N/A", "n/a"])
    deco = st.sampled_from(["{}", "**{}**", "`{}`", "{}.", "{} - no such record", "{} (not recorded)"])
    return st.tuples(word, deco).map(lambda t: t[1].format(t[0]))


@st.composite
def responses(draw: Any, answer: str, reasoning: str = "Queried the tables [step 1].") -> str:
    """A final response holding ``answer``, in a random accepted format with
    random whitespace, label case and Markdown."""
    ws = draw(st.sampled_from(["", " ", "\n", "  \n"]))
    label = draw(st.sampled_from(["Answer", "answer", "ANSWER", "Final answer"]))
    rlabel = draw(st.sampled_from(["Reasoning", "reasoning", "REASONING"]))
    style = draw(st.sampled_from(["tags", "plain", "bold", "bold2", "heading", "json", "fenced_json"]))
    multiline = "\n" in answer
    if style == "tags":
        return f"{ws}<answer>{ws}{answer}{ws}</answer>\n<reasoning>{reasoning}</reasoning>{ws}"
    if style == "json" or style == "fenced_json":
        obj = json.dumps({"answer": answer, "reasoning": reasoning})
        return obj if style == "json" else f"Here is my result.\n```json\n{obj}\n```{ws}"
    if style == "heading" or multiline:
        return f"{ws}## {label}\n\n{answer}\n\n## {rlabel}\n{reasoning}{ws}"
    if style == "bold":
        return f"{ws}**{label}:** {answer}\n\n**{rlabel}:** {reasoning}"
    if style == "bold2":
        return f"**{label}**: {answer}{ws}\n**{rlabel}**: {reasoning}"
    return f"{ws}{label}: {answer}\n{rlabel}: {reasoning}{ws}"
