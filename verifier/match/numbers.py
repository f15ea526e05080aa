"""Numbers, counts and quantities.

Tolerance rule (documented for task authors):
- If the policy sets ``rel_tol`` or ``abs_tol``, the submission matches when
  ``|s - r| <= max(abs_tol, rel_tol * |r|)``.
- Else, if a precision is stated (``answer_policy.decimals``, else the
  answer's ``decimals``), the submission matches when it ROUNDS to the
  reference at that precision, rounding half away from zero (the clinical
  convention): with ``h = 0.5 * 10**-d``, ``r - h <= s < r + h`` for ``r >= 0``
  (mirrored for ``r < 0``). So at one decimal 5.25 and 5.34 match 5.3, 5.36
  does not and 5.2 does not; 5.35, written with more decimals than the reference,
  sits at the tie and matches too (``exact_at_tie`` below: DuckDB's ``round(5.35, 1)``
  is 5.3, the binary float being just below the tie). The reference itself is first
  rounded to ``d`` decimals. A relative slack of ``rounding.boundary_eps``
  (rules/tolerances.toml, capped at a tenth of ``h``) moves both edges down
  for r >= 0 (up for r < 0) so that float noise from unit
  conversion (90 mg/dL -> 4.99567 mmol/L) never flips a decision.
- Else the relative tolerance from ``rules/tolerances.toml`` applies.
- Counts are exact.
- An answer at its own precision (issue 17 kind 10): a submission written
  with fewer decimals ``a`` than the comparison needs matches when the
  reference rounds to it at ``a`` decimals (the intervals of the two
  roundings overlap: ``|s - r| <= h_a + h_r``, ``h = 0.5 * 10**-decimals``,
  ``h_r = 0`` when the reference's precision is not stated) and its rounding
  step is within the policy's tolerance: ``h_a <= max(rel_tol * |r|,
  abs_tol)`` when the policy sets them, else ``h_a <=
  precision.rel_tol * |r|`` (rules/tolerances.toml: 0.005, i.e. at least
  three significant figures). So ``13.3 days`` matches 13.333... and 13.33,
  ``13 days`` does not, and neither does ``13.4``. After a unit conversion the
  step is scaled by the conversion factor.
- A value stated at the Answer's own reasonable precision (``stated_precision``): a
  submission written with ``d >= 1`` decimals and at least 2 significant digits, ``d`` fewer
  than the policy's decimals, matches when the reference rounds to it at ``d`` decimals (half
  away from zero; ``|ref - s| <= 0.5 * 10**-d`` in the reference's unit after conversion, plus
  float slack), whatever the tolerance: ``3.1`` for 3.07, ``4.6 mEq/L`` for 4.55 (not ``4.5``,
  ``3.0``, nor ``0.1`` for 0.07: one significant digit). An integer (no decimal point) never
  takes this route, and hedges stay hedges.
- A tie stated exactly (``exact_at_tie``): a submission written with more decimals than the
  reference's ``d`` and lying exactly at the far edge of its rounding interval (``20.65 h`` for
  20.6 h, which the database's ``round`` of a binary float made at the tie; c34 agent A, both
  reviewers accepting it) matches, in the reference's own unit: DuckDB rounds the binary value,
  so ``round(20.65, 1)`` and ``round(5.35, 1)`` go down while half away from zero would go up;
  the tie matches only where the binary value rounds to the reference (12.5, exact in binary,
  rounds to 13 and never matches 12). What a response gains is one
  neighbour at the reference's last digit, for a value written exactly at the tie; anything past
  the edge, and any submission at ``d`` decimals or fewer, is decided by the rules above.

One value: an Answer must commit to one value (``verifier.match.commit``):
hedge/negation/inequality words, or several candidate values that do not all
match (``27 mEq/L or 35 mEq/L``, ``5-6``, ``1,2,3``), fail with
``WRONG_VALUE`` and details ``"ambiguous answer: ..."``. Non-finite or huge
values (``1e999``, ``10^999999``) never match.

Percent: ``35.2%`` may stand for 0.352 only when the reference is a
proportion (``0 <= value <= 1``); ``183%`` never matches 1.83.

Quantities: every number in the Answer is a candidate, a bare one read in the reference's
unit (``4.6 mEq/L and 10.82`` is two; a compound duration ``4 h 29 min`` is one); identifiers, step citations, unit/time phrases, scales
and counts of the data behind the value are context (``verifier.match.commit``).
Text right after a unitless number that looks like a unit but does not parse
(``27 foo``: a word of at most 6 characters, or containing ``/``, that is not
an English function word) is ``INCOMPATIBLE_UNIT``, never "missing". It is converted to the reference
unit (through the analyte for mass<->molar, mEq<->mmol, IU<->U) and compared
as above. Reasons:
- unit missing (a bare number): read in the reference's unit, unless the task makes that
  ambiguous: the policy's ``db_unit`` (the unit the database stores the item in) is another
  unit than the reference's, so the number could be in either (``5.2`` against 5.2 mmol/L
  converted from a database in mEq/L): ``WRONG_UNIT``. Construction sets ``db_unit`` to the
  reference's unit, so a bare number is read in it; a hand-written task without ``db_unit``
  reads it the same way;
- unit does not parse, or its dimension cannot be converted:
  ``INCOMPATIBLE_UNIT``;
- converted value differs but the number as written equals the reference
  value (the unit is mislabelled, e.g. "5.2 mg/dL" for 5.2 mmol/L):
  ``WRONG_UNIT``;
- otherwise a different value: ``WRONG_VALUE``.
Beside a matching candidate, a number whose unit cannot convert to the
reference's (another dimension) is not a candidate of the asked quantity.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

from ..contract import (
    AnswerPolicy,
    CountAnswer,
    NumberAnswer,
    QuantityAnswer,
    ReasonCode,
    load_toml,
)
from ..units import linear_converter, same_unit
from .commit import NO_COMMITTED_VALUE, ambiguous, approximation_word, candidates, hedge_word, mask_context, precision_mark, \
    only_in_asides
from .extract import (
    _STOP,
    _quantities_cached,
    extract_count,
    extract_numbers,
    strip_markdown,
)
from .result import MatchResult, failure, success


@lru_cache(maxsize=8)
def _rule(kind: str) -> tuple[float, float, float]:
    t = load_toml("tolerances.toml")
    d = t.get("default", {})
    k = t.get(kind, {})
    return (
        float(k.get("rel_tol", d.get("rel_tol", 0.001))),
        float(k.get("abs_tol", d.get("abs_tol", 1e-9))),
        float(t.get("rounding", {}).get("boundary_eps", 1e-9)),
    )


@lru_cache(maxsize=65536)
def _round_ref(ref: float, decimals: int) -> float:
    if round(ref, decimals) == ref:
        return ref  # already at the stated precision (the usual case)
    return float(Decimal(repr(ref)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


def tolerance_rule(policy: AnswerPolicy, decimals: int | None, kind: str = "number") -> tuple:
    """The rule a comparison uses: ``("decimals", d, eps)`` or ``("tol", rel, abs)``."""
    if policy.rel_tol is not None or policy.abs_tol is not None:
        return ("tol", policy.rel_tol or 0.0, policy.abs_tol or 0.0)
    d = policy.decimals if policy.decimals is not None else decimals
    if d is not None:
        return ("decimals", d, _rule(kind)[2])
    rel, abs_, _ = _rule(kind)
    return ("tol", rel, abs_)


@lru_cache(maxsize=1)
def _precision_rel() -> float:
    return float(load_toml("tolerances.toml").get("precision", {}).get("rel_tol", 0.005))


def significant_digits(value: float, decimals: int) -> int:
    """Significant digits of ``value`` as written with ``decimals`` digits after the point
    (leading zeros do not count, trailing ones do: ``0.10`` has 2, ``3.1`` 2, ``0.05`` 1)."""
    return len(f"{abs(value):.{decimals}f}".replace(".", "").lstrip("0"))


def stated_precision(sub: float, sub_decimals: int, ref: float, policy_decimals: int | None,
                     scale: float = 1.0) -> bool:
    """Whether ``sub`` is the reference stated at the Answer's own, coarser precision (the
    route of the module docstring, "a value stated at its own reasonable precision").

    Args:
        sub: the submission in the reference's unit (after conversion); sub_decimals: the
            digits written after its decimal point (``d``); ref: the reference value;
            policy_decimals: the reference policy's decimals (``answer_policy.decimals``; a
            policy without them, a tolerance alone, never takes the route); scale: the unit conversion's factor (1 when none).

    Returns:
        True when ``d >= 1`` (an integer never takes this route), the number as written has at
        least 2 significant digits, ``d < policy_decimals`` and the reference rounds to ``sub``
        at ``d`` decimals, half away from zero: ``|ref - sub| <= h`` with ``h = 0.5 * 10**-d``
        (times ``|scale|`` after a conversion), the tie kept on the side away from zero and a
        float slack of ``rounding.boundary_eps`` (rules/tolerances.toml). The stored reference
        stands for the exact one: construction rounds it to the policy's decimals
        (``verifier.construction.typed``), so "3.1" matches 3.07 and "4.6 mEq/L" 4.55, "3.0"
        and "4.5" do not.
    """
    if sub_decimals < 1 or policy_decimals is None or sub_decimals >= policy_decimals:
        return False
    if significant_digits(sub / scale if scale else sub, sub_decimals) < 2:
        return False
    h = 0.5 * 10.0 ** (-sub_decimals) * abs(scale)
    slack = min(_rule("quantity")[2] * max(1.0, abs(ref)), 0.1 * h)
    diff = ref - sub
    if ref >= 0:
        return -h - slack <= diff < h - slack
    return -h + slack < diff <= h + slack


def at_own_precision(sub: float, sub_decimals: int | None, ref: float, ref_decimals: int | None,
                     policy: AnswerPolicy, scale: float = 1.0) -> bool:
    """Whether ``sub`` (written with ``sub_decimals`` decimals, then multiplied by
    ``scale`` by a unit conversion) is ``ref`` at the submission's own, coarser
    precision within the policy's tolerance (module docstring, issue 17 kind 10)."""
    if sub_decimals is None or not math.isfinite(sub) or not math.isfinite(ref):
        return False
    if stated_precision(sub, sub_decimals, ref, policy.decimals, scale):
        return True
    h_a = 0.5 * 10.0 ** (-sub_decimals) * abs(scale)
    need = ref_decimals if ref_decimals is not None else policy.decimals
    if need is not None and sub_decimals >= need:
        return False  # not coarser: the ordinary rule decides
    h_r = 0.5 * 10.0 ** (-need) if need is not None else 0.0
    if policy.rel_tol is not None or policy.abs_tol is not None:
        allowed = max((policy.rel_tol or 0.0) * abs(ref), policy.abs_tol or 0.0)
    else:
        allowed = _precision_rel() * abs(ref)
    if h_a > allowed * (1 + 1e-12):
        return False
    return abs(sub - ref) <= (h_a + h_r) * (1 + 1e-9)


def within(sub: float, ref: float, rule: tuple) -> bool:
    """True when ``sub`` matches ``ref`` under ``rule`` (see module docstring)."""
    if not math.isfinite(sub):
        return False
    if rule[0] == "decimals":
        d, eps = rule[1], rule[2]
        r = _round_ref(ref, d)
        h = 0.5 * 10.0 ** (-d)
        slack = min(eps * max(1.0, abs(r)), 0.1 * h)
        if r >= 0:
            return r - h - slack <= sub < r + h - slack
        return r - h + slack < sub <= r + h + slack
    return abs(sub - ref) <= max(rule[2], rule[1] * abs(ref)) * (1 + 1e-12)


def exact_at_tie(sub: float, sub_decimals: int | None, ref: float, rule: tuple, scale: float = 1.0) -> bool:
    """Whether ``sub`` is the exact value at the rounding tie of a reference stored at ``d``
    decimals (the module docstring's "a tie stated exactly").

    Args:
        sub: the submission in the reference's unit (after conversion); sub_decimals: the digits
            written after its decimal point (None: unknown); ref: the reference value; rule:
            ``tolerance_rule``'s tuple (only ``("decimals", d, eps)`` takes this route); scale: the
            unit conversion's factor (1 when none).

    Returns:
        True when the submission is written with more decimals than ``d`` and lies at the far
        edge of the reference's rounding interval, ``|sub - r| = 0.5 * 10**-d`` (float slack
        ``rounding.boundary_eps``): ``20.65 h`` for a reference of 20.6 h computed by the
        database's ``round(x, 1)`` of the binary float nearest 20.65, which rounded down (c34
        agent A, Q11; both reviewers accepted it), when the database's rounding of the nearest
        binary float to ``sub`` (half away from zero on its exact binary value, as DuckDB's
        ``round`` does) gives the reference: 20.65 and 5.35 lie just below their ties in binary
        and round down, 12.5 is exact and rounds to 13, so "12.5" never matches 12. A
        submission at ``d`` decimals or fewer never takes this route.
    """
    if rule[0] != "decimals" or sub_decimals is None or not math.isfinite(sub):
        return False
    d = rule[1]
    if sub_decimals <= d:
        return False
    r = _round_ref(ref, d)
    h = 0.5 * 10.0 ** (-d)
    slack = max(min(rule[2] * max(1.0, abs(r)), 0.1 * h), 1e-9 * max(1.0, abs(r)) * abs(scale or 1.0))
    if abs(abs(sub - r) - h) > slack:
        return False
    # the database rounds the binary value: the tie goes to r only when the nearest double lies on r's side
    stored = Decimal(sub).quantize(Decimal(1).scaleb(-d), rounding=ROUND_HALF_UP)
    return float(stored) == r


@lru_cache(maxsize=1024)
def describe_rule(rule: tuple) -> str:
    """Human-readable form of a tolerance rule, for verdict details."""
    if rule[0] == "decimals":
        return f"rounds to the reference at {rule[1]} decimals (half away from zero)"
    return f"within max(abs {rule[2]:g}, rel {rule[1]:g})"


def _hedged(text: str, value_start: int | None = None, **base) -> MatchResult | None:
    word = hedge_word(text, value_start)
    if word is None:
        return None
    return failure(ReasonCode.WRONG_VALUE, **base, why=ambiguous(f"the Answer says {word!r} around the value"))


def _candidates(text: str) -> tuple[str, list]:
    """(citation-masked text, its numbers that are not identifiers)."""
    masked = mask_context(text)
    return masked, candidates(masked, extract_numbers(masked))


_PLAIN_INT = re.compile(r"\s*(?:\d{1,3}(?:,\d{3})+|\d+)\s*")
_MAX_COUNT = 10**15  # counts beyond this (e.g. 10^999999) are not counts of anything in a database


_NAMED_NUMBER = re.compile(r"([A-Za-z][\w-]*)[ \t]+(\d+)[ \t]+([A-Za-z][\w-]*)")
_QUESTION_ID = re.compile(r"(?<![\w.,-])\d{4,}(?![\w]|[.,]\d)")


def question_names(text: str, question: str) -> str:
    """``text`` with the numbers that stand inside a name the question gives blanked (same length):
    the word before and the word after the number are the question's own, around the same number
    ("type 2 diabetes" for a question naming "Type 2 diabetes mellitus", blind corpus c32). A number
    so named is part of the name, not a candidate. An identifier the question gives, a whole number of
    four or more digits standing alone there ("ICU item 225667", "admission 24357615"), is no candidate
    either ("12 ICU stays w/ iCa (225667) >1.3 mmol/L", blind corpus c37). Any other number is untouched."""
    if not question or not any(c.isdigit() for c in question):
        return text
    ids = set(_QUESTION_ID.findall(question))
    if ids:
        text = _QUESTION_ID.sub(lambda m: " " * len(m.group()) if m.group() in ids else m.group(), text)
    named = {(a.casefold(), n, b.casefold()) for a, n, b in _NAMED_NUMBER.findall(question)}
    if not named:
        return text
    out = list(text)
    for m in re.finditer(r"(?=([A-Za-z][\w-]*)[ \t]+(\d+)[ \t]+([A-Za-z][\w-]*))", text):
        if (m[1].casefold(), m[2], m[3].casefold()) in named:
            start = text.index(m[2], m.start() + len(m[1]))
            out[start:start + len(m[2])] = " " * len(m[2])
    return "".join(out)


#: "n = " opening a count's Answer: the count in a statistician's notation ("n = 5 distinct patients (17 culture
#: result rows, ...)", blind corpus c44), read as "Answer:" is; elsewhere "n = 35" is a sample size (``mask_context``).
_N_LABEL = re.compile(r"^\s*[*_`]{0,2}n\s*[*_`]{0,2}\s*=\s*(?=[*_`]{0,2}\d)", re.I)


def match_count(text: str, ref: CountAnswer, question: str = "") -> MatchResult:
    """Compare a count exactly; the Answer must hold one whole number (see module docstring).
    ``question``: the task's question; numbers inside the names it gives are no candidates
    (``question_names``). An Answer opening with ``n = `` states its count there (``_N_LABEL``)."""
    text = _N_LABEL.sub(lambda m: " " * len(m.group()), question_names(text, question), count=1)
    got = extract_count(text)
    if got is None:
        return failure(ReasonCode.WRONG_TYPE, expected="count", reference=ref.value, submitted=text[:200],
                       why="no whole number in the Answer")
    if _PLAIN_INT.fullmatch(text) is None:
        masked, nums = _candidates(text)
        if only_in_asides(masked, extract_numbers(masked)):
            return failure(ReasonCode.WRONG_VALUE, compared="count", reference=ref.value, submitted=text[:200],
                           why=NO_COMMITTED_VALUE)
        bad = _hedged(text, nums[0].start if nums else None, compared="count", reference=ref.value,
                      submitted=text[:200])
        if bad is not None:
            return bad
        word = (approximation_word(masked, nums[0].start, nums[0].end) if nums else None) or precision_mark(text)
        if word is not None:  # a count is exact: "about 7" does not commit to 7
            return failure(ReasonCode.WRONG_VALUE, compared="count", reference=ref.value, submitted=text[:200],
                           why=ambiguous(f"the Answer says {word!r} around an exact count"))
        vals = {t.value for t in nums}
        if len(vals) > 1:
            return failure(ReasonCode.WRONG_VALUE, compared="count", reference=ref.value, submitted=text[:200],
                           why=ambiguous(f"{len(vals)} different numbers"))
        if nums:
            v = nums[0].value
            got = int(v) if math.isfinite(v) and float(v).is_integer() and abs(v) <= _MAX_COUNT else None
            if got is None:
                return failure(ReasonCode.WRONG_VALUE, compared="count", reference=ref.value,
                               submitted=text[:200], why="not a whole number of a sane size")
    if got == ref.value:
        return success(compared="count", reference=ref.value, submitted=got)
    return failure(ReasonCode.WRONG_VALUE, compared="count", reference=ref.value, submitted=got)


def match_number(text: str, ref: NumberAnswer, policy: AnswerPolicy) -> MatchResult:
    """Compare a dimensionless number; ``35.2%`` may stand for 0.352 when the reference is a proportion."""
    nums = extract_numbers(text)
    if not nums:
        return failure(ReasonCode.WRONG_TYPE, expected="number", reference=ref.value, submitted=text[:200],
                       why="no number in the Answer")
    rule = tolerance_rule(policy, ref.decimals, "number")
    if len(nums) > 1 or nums[0].end - nums[0].start != len(text):
        masked, cands = _candidates(text)
        if only_in_asides(masked, extract_numbers(masked)):
            return failure(ReasonCode.WRONG_VALUE, compared="number", reference=ref.value, submitted=text[:200],
                           why=NO_COMMITTED_VALUE)
        bad = _hedged(text, cands[0].start if cands else None, compared="number", reference=ref.value,
                      submitted=text[:200])
        if bad is not None:
            return bad
        nums = _restatements_dropped(masked, cands, policy) or nums
    proportion = 0.0 <= ref.value <= 1.0
    results = []
    for tok in nums:
        cands = ((tok.value, tok.decimals), (tok.value / 100.0, tok.decimals + 2)) if tok.percent and proportion \
            else ((tok.value, tok.decimals),)
        results.append(next((c for c, d in cands if within(c, ref.value, rule)
                             or at_own_precision(c, d, ref.value, ref.decimals, policy)
                             or exact_at_tie(c, d, ref.value, rule)), None))
    if len(results) > 1 and any(r is not None for r in results) and not all(r is not None for r in results):
        return failure(ReasonCode.WRONG_VALUE, compared="number", reference=ref.value, submitted=text[:200],
                       rule=describe_rule(rule), why=ambiguous(f"{len(results)} different numbers"))
    if results[0] is not None:
        return success(compared="number", reference=ref.value, submitted=results[0], rule=describe_rule(rule))
    return failure(ReasonCode.WRONG_VALUE, compared="number", reference=ref.value, submitted=nums[0].value,
                   rule=describe_rule(rule))


def compare_quantity(value: float, unit: str | None, ref: QuantityAnswer, policy: AnswerPolicy,
                     decimals: int | None = None) -> MatchResult:
    """Compare one submitted (value, unit) with a reference quantity (see module docstring);
    ``decimals``: the digits written after the submission's decimal point, when known."""
    rule = tolerance_rule(policy, ref.decimals, "quantity")
    base = {"compared": "quantity", "reference": f"{ref.value:g} {ref.unit}",
            "submitted": f"{value:g} {unit}" if unit else f"{value:g} (no unit)", "rule": describe_rule(rule)}
    if unit is None:
        if policy.db_unit is None or same_unit(ref.unit, policy.db_unit):
            ok = (within(value, ref.value, rule) or at_own_precision(value, decimals, ref.value, ref.decimals, policy)
                  or exact_at_tie(value, decimals, ref.value, rule))
            base["unit"] = f"missing; read in the reference's unit {ref.unit}" + (
                " (the database unit)" if policy.db_unit is not None else "")
            return success(**base) if ok else failure(ReasonCode.WRONG_VALUE, **base)
        base["unit"] = (f"missing, and ambiguous: the database stores {policy.db_unit}, the reference is in "
                        f"{ref.unit}; state the unit")
        return failure(ReasonCode.WRONG_UNIT, **base)
    conv = linear_converter(unit, ref.unit, policy.analyte)
    if conv.error:
        base["unit"] = conv.error
        return failure(ReasonCode.INCOMPATIBLE_UNIT, **base)
    converted = conv.scale * value + conv.offset
    base["converted"] = converted
    if conv.bridge:
        base["bridge"] = conv.bridge
    if within(converted, ref.value, rule):
        return MatchResult(True, (), base)
    if at_own_precision(converted, decimals, ref.value, ref.decimals, policy, conv.scale):
        base["rule"] = "the reference rounds to the submission at its own precision"
        return MatchResult(True, (), base)
    if conv.scale == 1.0 and conv.offset == 0.0 and exact_at_tie(converted, decimals, ref.value, rule):
        base["rule"] = "the submission is the exact value at the reference's rounding tie"
        return MatchResult(True, (), base)
    if (conv.scale != 1.0 or conv.offset != 0.0) and within(value, ref.value, rule):
        base["unit"] = f"the number matches the reference in {ref.unit}, but is labelled {unit}"
        return failure(ReasonCode.WRONG_UNIT, **base)
    return failure(ReasonCode.WRONG_VALUE, **base)


_UNIT_LIKE = re.compile(r"[ \t]*([A-Za-zµμ°º/][^\s,;()\[\]]*)")


def _unknown_unit(text: str, end: int) -> str | None:
    """Unit-like text right after a unitless number (``27 foo``), else ``None``."""
    m = _UNIT_LIKE.match(text, end)
    if m is None:
        return None
    word = m[1].rstrip(".:")
    if not word or word.casefold() in _STOP or (len(word) > 6 and "/" not in word):
        return None
    return word[:64]


_DURATION_MIN = {
    **dict.fromkeys(("d", "day", "days"), 1440.0), **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 60.0),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), 1.0),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1.0 / 60.0),
}
_DURATION_GAP = re.compile(r"\s*(?:,|and)?\s*")


def merge_durations(text: str, toks: list) -> list:
    """Quantity tokens with compound durations joined: ``4 h 29 min`` is one token of
    4.4833 h (larger unit first; days, hours, minutes, seconds)."""
    out: list = []
    for tok in toks:
        prev = out[-1] if out else None
        if prev is not None and prev.unit and tok.unit and _DURATION_GAP.fullmatch(text, prev.end, tok.start):
            big, small = _DURATION_MIN.get(prev.unit.casefold()), _DURATION_MIN.get(tok.unit.casefold())
            if big and small and big > small:
                out[-1] = prev._replace(value=prev.value + tok.value * small / big, end=tok.end,
                                        decimals=max(prev.decimals, tok.decimals) + 2)
                continue
        out.append(tok)
    return out


def _restates(first, later, policy: AnswerPolicy) -> bool:
    """Whether ``later`` states ``first`` again in another unit at its own precision ("+1522.8 mL
    (≈ +1.5 L)"): ``first`` converted to ``later``'s unit rounds to ``later``'s value."""
    if not (first.unit and later.unit) or same_unit(first.unit, later.unit):
        return False
    conv = linear_converter(first.unit, later.unit, policy.analyte)
    if conv.error:
        return False
    return abs(conv.scale * first.value + conv.offset - later.value) <= 0.5 * 10 ** -later.decimals + 1e-9


def _without_restatements(cands: list, policy: AnswerPolicy) -> list:
    """Candidates without those that restate an earlier one in another unit (blind corpus c32): an
    equivalent value offers no alternative, so no hedge gains from it; a differing one stays."""
    out: list = []
    for tok in cands:
        if not any(_restates(prev, tok, policy) for prev in out):
            out.append(tok)
    return out


def _restatements_dropped(masked: str, cands: list, policy: AnswerPolicy) -> list:
    """``cands`` (number tokens of ``masked``) without those that restate an earlier candidate's
    quantity in another unit (blind corpus c32: "PEEP 5 cmH2O (= about 3.7 mmHg)" for a unitless
    reference is one value). The rule is ``_without_restatements``'s: the earlier quantity converted
    to the later one's unit must round to the later value at its own precision, so a restatement
    with a different value ("5 cmH2O (= 5.9 mmHg)") stays a second candidate."""
    if len(cands) < 2:
        return cands
    at = {q.start: q for q in _quantities_cached(masked)}
    quants = [at.get(t.start) for t in cands]
    kept = _without_restatements([q for q in quants if q is not None], policy)
    dropped = {q.start for q in quants if q is not None} - {q.start for q in kept}
    return [t for t in cands if t.start not in dropped]


_INDEX_BEFORE = re.compile(r"(?i)\b(?:day|week|month|dose|step|line|number|no\.?|cycle|visit|admission|stay)\s*#?\s*$|#\s*$")


def match_quantity(text: str, ref: QuantityAnswer, policy: AnswerPolicy) -> MatchResult:
    """Compare the Answer's quantity (the one with a unit) with ``ref`` (see module docstring)."""
    toks = _quantities_cached(text)
    if not toks:
        return failure(ReasonCode.WRONG_TYPE, expected="quantity", reference=f"{ref.value:g} {ref.unit}",
                       submitted=text[:200], why="no number in the Answer")
    if len(toks) == 1 and toks[0].end - toks[0].start == len(text):
        return compare_quantity(toks[0].value, toks[0].unit, ref, policy, toks[0].decimals)  # fast path: "5.2 mEq/L"
    if "*" in text or "`" in text or "__" in text:
        stripped = strip_markdown(text)  # "**5.2** mEq/L": the unit follows the emphasis
        if stripped != text:
            return match_quantity(stripped, ref, policy)
    reference = f"{ref.value:g} {ref.unit}"
    masked = mask_context(text)
    merged = merge_durations(masked, list(_quantities_cached(masked)))
    if only_in_asides(masked, merged):
        return failure(ReasonCode.WRONG_VALUE, compared="quantity", reference=reference, submitted=text[:200],
                       why=NO_COMMITTED_VALUE)
    cands = _without_restatements(candidates(masked, merged) or list(toks), policy)
    # a bare number that indexes something ("on hospital day 2", "dose 3", "line #2") is no quantity in the
    # reference's unit (blind corpus c38: "500 mg (..., given on hospital day 2, ...)")
    cands = [t for t in cands if t.unit is not None or not _INDEX_BEFORE.search(masked, max(0, t.start - 24), t.start)] \
        or cands
    bad = _hedged(text, cands[0].start, compared="quantity", reference=reference, submitted=text[:200])
    if bad is not None:
        return bad
    results = []
    for tok in cands:
        if tok.unit is None and (word := _unknown_unit(masked, tok.end)) is not None:
            results.append(failure(ReasonCode.INCOMPATIBLE_UNIT, compared="quantity", reference=reference,
                                   submitted=text[:200], unit=f"unrecognised unit {word!r}"))
        else:
            results.append(compare_quantity(tok.value, tok.unit, ref, policy, tok.decimals))
    if len(results) > 1 and any(r.ok for r in results):
        # a number whose unit cannot be the asked quantity ("5 EW EMER." beside "4.48 hours") is not a candidate
        results = [r for r in results if r.reasons != (ReasonCode.INCOMPATIBLE_UNIT,)]
    if len(results) > 1 and any(r.ok for r in results) and not all(r.ok for r in results):
        return failure(ReasonCode.WRONG_VALUE, compared="quantity", reference=reference, submitted=text[:200],
                       why=ambiguous(f"{len(results)} different values"))
    return results[0]
