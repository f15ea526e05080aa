"""Does the Answer commit to ONE value? (guards against hedged or multi-value answers)

Rule (documented for task authors; tests in tests/test_match_commit.py): a
number, count, quantity or datetime Answer is ambiguous, and fails with
``WRONG_VALUE`` and details ``"ambiguous answer: ..."``, when

- it holds a negation, alternative, hedge or inequality word or sign
  (``not``, ``or``, ``either``, ``maybe``, ``perhaps``, ``possibly``,
  ``probably``, ``likely``, ``at least``, ``at most``, ``more/less/fewer/
  greater than``, ``up to``, ``<``, ``>``, ``≤``, ``≥``, ``±``), or
- it does not commit: it states uncertainty (``might``, ``may be``, ``could be``,
  ``unsure``, ``uncertain``, ``unclear``, ``guess``, ``presumably``,
  ``alternatively``, a question mark), or it holds a NULL spelling beside the value
  (``4.1 mEq/L NULL``, ``NULL 4.1``, ``4.1 (N/A)``, ``4.1 - None``: a value AND an
  abstention; ``verifier.parse`` reads a NULL spelling only at the start of an
  Answer, so these are not abstentions either). A NULL that describes data is not an
  abstention: followed by a word (``NULL values excluded``, ``none of the draws``),
  after a copula (``2 values were NULL``) or inside a word (``non-NULL``), or
- it holds more than one candidate value of the asked type that differ
  (after unit conversion for quantities: ``5.2 mmol/L (5.2 mEq/L)`` is one
  value). A range ``a-b`` is two candidates.

Vague words (``something like``, ``-ish``, ``or so``, ``give or take``, ``tentatively``,
``to be confirmed``) and conditions that offer another value (``otherwise``, ``unless``) are
hedges on every type. An approximation word that introduces no alternative (``about``,
``approximately``, ``approx.``, ``around``, ``roughly``, ``circa``, ``~``, ``≈``) is a hedge on
exact types (counts, datetimes: ``approximation_word``); on quantities and numbers it is not: the
Answer still commits to the value it states, which is compared under the policy's
tolerance (``about 4.1 mEq/L`` matches 4.1; ``about 4`` is at its own precision, too
coarse for 4.1 at one decimal). "I think" and "I believe" are not hedges either.
Every such failure is ``WRONG_VALUE`` with ``"ambiguous answer: the Answer says
'<word>' around the value"``.

The value is the number the Answer states as its answer; context is not a
candidate (issue 17, kind 1):

- dates beside a number (masked out), step citations (``[step 3]``), numbers
  written after an identifier word (``Patient 10000032:``, ``admission
  22595853``, ``#``, ``id``), a year after ``in``/``during``/``since``/...
  (``5 admissions in 2180``); a number without a unit beside one with a unit is
  NOT context (adv2 row 3b: ``4.6 mEq/L / 10.82`` is two candidates);
- numbers inside a unit or time phrase: ``per 24 hours``, ``every 8 hours``,
  ``/24 h``, ``within 48 hours``, ``in the first 24 hours``, ``for 3 days``;
- scales and reference ranges: ``on the 1-4 scale``, ``scale of 1 to 4``,
  ``out of 4``, ``(normal 3.5-5.0)``, a scale's labelled points (``scale 1 = minor to
  4 = extreme``, issue 32); a time of day (``at 06:00``); a sample
  size ``n = 35``;
- counts of the data behind the value (``commit.candidates``): a number
  followed by a data noun (``35 admissions``, ``14 events``, ``3 ICU stays``,
  ``8 DRGs``) is context when another number is the value, unless it counts
  the same noun as the value (``5 patients, 6 patients`` stays two
  candidates);
- thresholds of the question: a number after a comparison (``above 180
  mg/dL``, ``more than 5 days``, ``> 98 %``) that is not the value; a
  comparison before the value itself is a hedge (``at least 5``);
- the computation behind the value: ``a / b``, ``a - b``, ``a minus b``, ``a + b``, ``a × b`` (one label
  word may stand on each side of the operator: ``670 mL minus output 40 mL``) whose result is another
  candidate at its precision (``1.79 (34/19)``);
- codes of other entities: an ICD code with its version (``ICD-10 E11.65``, ``ICD-9 54.91``);
  a number after ``DRG``, ``ICD``, ``code``,
  ``itemid``, ``specimen``... (``APR DRG 190``, ``the DRG is 463``), as after
  identifier words;
- values of other sources in an aside (``verifier.match.aside``): ``5.2
  (the chart event shows 5.1)``, ``4 - note the prescriptions list 5``; not a bare
  value after a connective (``7 vs 14.9``), not a clause that conditions the value
  (``if ..., otherwise 14.9``), and never the only place a value stands after the
  Answer stated something else (``only_in_asides``: ``HOME (the other record shows 7)``).

These are masked (``mask_context``) before hedge words are looked for, so a
scale's ``1-4`` is not a range; everything else, including a second number in
a parenthetical, is still a candidate.
"""

from __future__ import annotations

import re

from .aside import CONDITION_WORDS, SET_AGAINST_WORDS, aside_only, committed

#: Alternatives and uncertainty without negations (``verifier.match.emphasis`` reads "not" on its own:
#: "X (not Y)").
ALTERNATIVE_WORDS = (r"\b(?:or|either|maybe|perhaps|possibly|probably|likely|might|ma(?:y|ybe)\s+(?:be|have)|"
                     r"could\s+(?:be|have)|unsure|uncertain|unclear|guess(?:ed|ing)?|presumably|alternatively|alternatives?|"
                     r"otherwise|unless|something\s+like|or\s+so|give\s+or\s+take|ballpark|tentative(?:ly)?|"
                     r"(?:to\s+be|pending|needs?)\s+(?:confirm|verif)\w*)\b|(?<![A-Za-z])-?ish\b|±|\?")
#: Words naming the Answer itself: a "not" said of a phrase holding one is said of the Answer ("not a final count").
ANSWER_WORDS = r"answers?|values?|results?|figures?|numbers?|estimates?|counts?|totals?"
#: "not" negating a kind of thing, not the Answer: "not", "a"/"an", then a phrase that holds no digit and no word
#: naming the Answer ("a ward-to-ICU escalation, not a boarding delay", "a typical ED time, not an outlier",
#: "routine supplementation, not a treatment for the acidosis": blind corpus c45, a teaching physician's clinical
#: context after the value). It offers no value and withdraws none, so a hedge gains nothing from it; "not sure",
#: "not final", "not 35", "not a final count" stay hedges.
_A_KIND = rf"\s+an?\s+(?![^.;,()\n]*?(?:\d|\b(?:{ANSWER_WORDS})\b))(?=[A-Za-z])"
NOT_A_KIND = re.compile(rf"(?i)\bnot{_A_KIND}")
#: Alternatives, negations and uncertainty (module docstring): a hedge wherever they stand; "not" before a kind
#: (``NOT_A_KIND``) is none of them.
_NONCOMMITTAL = rf"\bnot\b(?!{_A_KIND})|" + ALTERNATIVE_WORDS
_HEDGE = re.compile(
    rf"(?i){_NONCOMMITTAL}|\b(?:at\s+(?:least|most)|(?:more|less|fewer|greater)\s+than|up\s+to)\b|(?<![-=])>|[<≤≥]"
)
_ALTERNATIVE = re.compile(rf"(?i){_NONCOMMITTAL}")
#: A NULL spelling (``verifier.parse``) standing as an answer beside a value: not inside a word or
#: path (``non-NULL``), not followed by a word (``NULL values``, ``none of``).
_NULL_TOKEN = re.compile(r"(?i)(?<![\w/-])(?:null|none|n/a)(?![\w/-])(?!\s*[-_]?\s*[A-Za-z])")
#: Before a NULL spelling, these make it a description of data (``2 values were NULL``).
_NULL_DESCRIBED = re.compile(r"(?i)\b(?:is|are|was|were|be|been|being|as|to|with|contains?|had|has|have)\s*$")
#: Comparisons: a hedge on the number they precede; before another number it is a threshold.
_COMPARISON_BEFORE = re.compile(
    r"(?i)(?:\b(?:at\s+(?:least|most)|(?:more|less|fewer|greater|higher|lower)\s+than|up\s+to|above|below|"
    r"over|under|exceed(?:s|ing|ed)?|beyond)|(?:(?<![-=])>|[<≤≥])=?)\s*$"
)
_CITE = re.compile(r"(?i)[\[(]\s*steps?\b[^\])]*[\])]")
_ID_BEFORE = re.compile(
    r"(?i)(?:\b(?:patient|subject|admission|hadm|stay|icustay|icu\s+stay|id|mrn|no(?=\s*[.#])|drg|icd|code|itemid|item|"
    r"specimen|isolate|order|emar|hcpcs|cpt|ndc|version|seq)\b|#)"
    r"[\s_]*(?:id\b)?[\s:#=._]*(?:\(\s*)?(?:(?:is|was)\s+)?$"
)


_YEAR_BEFORE = re.compile(r"(?i)\b(?:in|during|since|year|before|after|until|of)\s+$")
_YEAR = re.compile(r"\d{4}(?!\d|\.\d)")


_N = r"[+\-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
#: a unit of time after a number (also read by the five-unit rule: a bound on a time is no count)
TIME_UNIT = (r"(?:h|hrs?|hours?|min|mins|minutes?|d|days?|wks?|weeks?|mo|months?|yrs?|years?|s|secs?|seconds?)"
             r"(?![A-Za-z])")
_SPAN = rf"{_N}(?:\s*(?:-|–|to)\s*{_N})?"
#: Context phrases that hold numbers (module docstring); blanked by ``mask_context``.
_CONTEXT = re.compile(
    "|".join((
        # unit/time phrases: "per 24 hours", "every 8 hours", "in the first 24 h", "/24h", "for 3 days"
        rf"(?i:\b(?:per|every|each|over|within|during|for|after|before|in(?:\s+the)?\s+(?:first|last|past|next)|"
        rf"(?:the\s+)?(?:first|last|past|next))[\s-]+(?:the\s+)?{_SPAN}\s*-?\s*{TIME_UNIT})",
        rf"(?i:/\s*{_N}\s*-?\s*{TIME_UNIT})",
        # scales: "on the 1-4 scale", "1–4 point scale", "scale of 1 to 4", "out of 4"
        # (not from inside a run of digits: each start there rescanned the run, quadratic on 2,000 digits)
        rf"(?i:(?:\b(?:on|in)\s+(?:the|a)\s+)?(?<!\d){_N}\s*(?:-|–|to)\s*{_N}\s*(?:-?\s*point\s*)?scale\b)",
        rf"(?i:\bscale\s*(?:of|from)?\s*[:=]?\s*{_N}\s*(?:-|–|to)\s*{_N})",
        rf"(?i:\bout\s+of\s+(?:a\s+(?:possible|maximum)\s+(?:of\s+)?)?{_N})",
        # a scale's labelled points (issue 32): "scale 1 = minor to 4 = extreme", "(range: 0 = none, 10 = worst)"
        rf"(?i:\b(?:scale|range|ranges|ranging)\b[\s:]*(?:of\s+|from\s+)?{_N}\s*=\s*[A-Za-z][\w-]*"
        rf"(?:\s*(?:-|–|to|through|,|and)\s*{_N}\s*=\s*[A-Za-z][\w-]*)+)",
        # ... also without "=": "scale of 1 (minor) to 4 (extreme)", "échelle de 1 mineure à 4 extrême" (c38)
        rf"(?i:\bscale\b[\s:]*(?:of\s+|from\s+)?{_N}\s*\(?[A-Za-z][\w-]*\)?"
        rf"(?:\s*(?:-|–|to|through|,|and)\s*{_N}\s*\(?[A-Za-z][\w-]*\)?)+)",
        # reference ranges: "(normal 3.5-5.0)", "reference range: 3.5 to 5.0"
        rf"(?i:\b(?:normal|reference|ref\.?)\s*(?:range|interval|limits?|values?)?\s*(?:is|was|of|:|=)?\s*"
        rf"(?:(?:roughly|about|approx(?:imately|\.)?|around|~)\s*)?{_N}\s*(?:-|–|to)\s*{_N})",
        # an ICD code with its version (blind corpus c32): "(ICD-10 E11.65)", "ICD-9 54.91", "ICD-10 code 5491"
        r"(?i:\bICD[-\s]?(?:9|10)(?:-?(?:CM|PCS))?(?:\s+(?:code|diagnosis|procedure))?[\s:#]*[A-Z]?\d[\dA-Z.]*(?<!\.))",
        # a code written without its system, digits then letters then digits ("02HV33Z", "0T768DZ", ICD-10-PCS;
        # blind corpus c35: "7 admissions had both F329 and 02HV33Z coded" read 2): an identifier, no value
        r"(?<![\w.])(?=[A-Z0-9]{4,8}\b)\d[A-Z0-9]*?[A-Z]+[A-Z0-9]*?\d[A-Z0-9]*\b",
        # a value's precision (blind corpus c39: "40 mg (4.0e1 milligrams ± 1 milligram)"): the value's own
        # resolution, no second value (a hedge on exact types: ``precision_mark``)
        rf"±\s*{_N}",
        # a time of day; a sample size
        r"(?<![\d:])\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AaPp]\.?[Mm]\b\.?)?(?![\d:])",
        rf"(?i:\bn\s*=\s*{_N})",
    ))
)
_HAS_DIGIT = re.compile(r"\d")
_RANGE_GAP = re.compile(r"\s*(?:-|–|—|to|through)\s*", re.I)
_DATA_NOUN = re.compile(
    # up to three qualifiers ("eligible", "ICU", "numeric potassium"), never a function word: in "10.82 in
    # other admissions" the number is no count of admissions
    r"(?i)\s*(?:(?!(?:in|on|at|of|for|from|to|and|or|vs|versus|than|by|the|an?|as|if|unless|otherwise|per)\b)"
    r"[A-Za-z][\w-]*\s+){0,3}"
    r"(admission|patient|stay|event|measurement|value|result|record|row|draw|test|sample|observation|reading|"
    r"dose|administration|prescription|order|entr(?:y|ie)|encounter|visit|case|subject|lab|chart|item|episode|"
    r"specimen|culture|transfer|unit|drg|code|diagnos[ie]s|procedure|isolate)s?\b"
)
_DIVISION = re.compile(r"\s*[/÷]\s*")
#: ``a <op> b`` with at most one label word on each side of the operator ("670 mL minus output 40 mL",
#: "450 + 220", blind corpus c33): the computation behind a value it equals (``candidates``).
_OPERATION = re.compile(r"\s*(?:[A-Za-z]+\s+)?(?P<op>minus|plus|times|[-−+×*])\s*(?:[A-Za-z]+\s+)?", re.I)


def _apply(op: str, a: float, b: float) -> float | None:
    op = op.casefold()
    if op in ("minus", "-", "−"):
        return a - b
    if op in ("plus", "+"):
        return a + b
    if op in ("times", "×", "*"):
        return a * b
    return a / b if b else None


def _blank(m: re.Match) -> str:
    return " " * len(m.group())


def mask_context(text: str) -> str:
    """``text`` with step citations and context phrases (unit/time phrases, scales,
    reference ranges, times of day, ``n = 35``) blanked; same length, so spans
    still line up."""
    if ("tep" in text or "TEP" in text) and ("[" in text or "(" in text):
        # only up to the last closing bracket: past it no citation can close, and each attempt
        # there would rescan to the end of the text (quadratic on "[step [step ...")
        end = max(text.rfind("]"), text.rfind(")")) + 1
        text = _CITE.sub(_blank, text[:end]) + text[end:]
    if _HAS_DIGIT.search(text) is None:
        return text
    if "10" in text and "(" in text:
        text = _UNIT_ONLY.sub(lambda m: _blank(m) if _is_unit(m.group("u")) else m.group(), text)
    return _CONTEXT.sub(_blank, text)


#: A parenthetical that holds only a unit, possibly a power of ten ("3.2 K/uL (x10^9/L)", c34 agent B):
#: the same quantity's unit written the other way, no second value.
_UNIT_ONLY = re.compile(r"\((?P<u>\s*[=≈~]?\s*[x×*]?\s*10\s*(?:\^|\*\*?|e)\s*[-+]?\d{1,2}\s*/\s*[A-Za-zµμ]{1,4}\s*)\)")


def _is_unit(text: str) -> bool:
    from ..units.convert import parse_unit  # noqa: PLC0415 - units load pint lazily

    try:
        parse_unit(re.sub(r"^[\s=≈~]*[x×]?\s*", "", text).strip())
    except Exception:  # noqa: BLE001 - not a unit
        return False
    return True


def data_noun(text: str, end: int) -> str | None:
    """The data noun counted by the number ending at ``end`` (``35 admissions`` ->
    ``admission``), singular and lower-case, else ``None``."""
    m = _DATA_NOUN.match(text, end)
    return m[1].casefold().replace("entrie", "entry") if m else None


#: A condition right after a number: "91 if readmissions are included", "6 unless ...".
_CONDITION_AFTER = re.compile(rf"(?i)\s*(?:{CONDITION_WORDS})\b")


#: A value set against the Answer's: "(vs 91)", "versus 91", "compared with 91".
_SET_AGAINST_BEFORE = re.compile(rf"(?i)\b(?:{SET_AGAINST_WORDS})\s*$")


def candidates(text: str, toks: list) -> list:
    """The tokens (``.start``/``.end`` spans in ``text``, already masked) that are
    candidate values: identifiers, citations and years dropped
    (``is_context_number``), then counts of the data behind the value (module
    docstring). Returns the tokens in order (possibly empty)."""
    # a descriptive parenthetical after the committed value is context, for numbers as for dates
    # (blind corpus c39: "0 days (procedure 8162 dated 2177-03-12, the same calendar day as admission ...)")
    toks = committed(text, [t for t in toks if not is_context_number(text, t.start)], parenthetical=True)
    if len(toks) < 2:
        return toks
    nouns = [data_noun(text, t.end) for t in toks]
    limits = [_COMPARISON_BEFORE.search(text, max(0, t.start - 24), t.start) is not None for t in toks]
    for i in range(1, len(toks)):  # a range ("5-6 admissions") is two candidates, never context
        if _RANGE_GAP.fullmatch(text, toks[i - 1].end, toks[i].start):
            nouns[i - 1] = nouns[i] = None
            limits[i] = limits[i - 1] = limits[i - 1] or limits[i]
    # a value under a condition ("92 patients (91 if readmissions are included)") or set against another ("(vs 91)")
    # is never the committed one: the count before it stays a candidate beside it, a hedge (fresh adversary adv18:
    # paid as 91 before)
    conditional = [_CONDITION_AFTER.match(text, t.end) is not None
                   or _SET_AGAINST_BEFORE.search(text, max(0, t.start - 16), t.start) is not None for t in toks]
    value = next((i for i in range(len(toks)) if nouns[i] is None and not limits[i] and not conditional[i]), 0)
    keep = [i == value or (not limits[i] and (nouns[i] is None or nouns[i] == nouns[value]))
            for i in range(len(toks))]
    for i in range(1, len(toks)):  # "34/19", "670 mL minus 40 mL": the computation behind the value it equals
        if not (keep[i - 1] and keep[i]):
            continue
        gap = text[toks[i - 1].end:toks[i].start]
        op = _OPERATION.fullmatch(gap)
        if _DIVISION.fullmatch(gap):
            sym = "/"
        elif op:
            sym = op["op"]
        elif toks[i].value < 0 and not gap.strip():
            sym = "+"  # "670-40": the sign is read with the number, so the operation is a sum
        else:
            continue
        q = _apply(sym, toks[i - 1].value, toks[i].value)
        if q is not None and any(j not in (i - 1, i) and keep[j] and abs(q - toks[j].value) <= 0.5 * 10.0 ** -toks[j].decimals
                                 for j in range(len(toks))):
            keep[i - 1] = keep[i] = False
    return [t for i, t in enumerate(toks) if keep[i]]


def only_in_asides(text: str, toks: list) -> bool:
    """Whether the values of ``toks`` (in ``text``, masked) all stand in asides after the Answer
    stated something else (``verifier.match.aside.aside_only``): no value is committed."""
    return aside_only(text, [t for t in toks if not is_context_number(text, t.start)])


NO_COMMITTED_VALUE = "the Answer commits to no value of the asked type (one stands only in an aside)"


def alternative_word(text: str) -> str | None:
    """The first word of ``text`` that offers an alternative or negates ("or", "alternatively",
    "not", "maybe", "±"...; context phrases aside), else ``None``: what makes a detail's label a
    second candidate (``verifier.match.lead``), unlike a comparison, which there qualifies what the
    detail counts ("next admission <=180 days after discharge: 8")."""
    m = _ALTERNATIVE.search(mask_context(text))
    return m.group() if m else None


def hedge_word(text: str, value_start: int | None = None) -> str | None:
    """The first hedge/negation/inequality word in ``text`` (citations and context
    phrases aside), else ``None``.

    With ``value_start`` (the position of the value in ``text``), a comparison
    (``at least``, ``more than``, ``above``, ``>``...) counts only when it
    precedes the value: before another number it states a threshold of the
    question (``14 admissions had a glucose above 180 mg/dL``), and before a
    word it qualifies the data (``at least one reading``); alternatives and
    negations (``or``, ``not``, ``maybe``, ``±``...) count anywhere.
    """
    masked = mask_context(text)
    if value_start is None:
        m = _HEDGE.search(masked)
        return m.group() if m else null_beside(masked)
    m = _ALTERNATIVE.search(masked)
    if m is not None:
        return m.group()
    null = null_beside(masked)
    if null is not None:
        return null
    m = _COMPARISON_BEFORE.search(masked, max(0, value_start - 24), value_start)
    return m.group().strip() if m else None


#: Approximation words: a number's own rounding on quantities and numbers, a hedge on exact types.
_APPROX_BEFORE = re.compile(r"(?i)(?:\b(?:about|approx(?:imately|\.)?|around|roughly|circa|nearly|almost)|[~≈])\s*$")
_APPROX_AFTER = re.compile(r"(?i)\s*,?\s*(?:approx(?:imately|\.)?|roughly)\b")


def precision_mark(text: str) -> str | None:
    """``"±"`` when ``text`` states a precision (``40 mg ± 1 mg``), else ``None``. On quantities and
    numbers a precision is the value's own resolution (``mask_context`` blanks ``± 1``); on exact
    types (counts, datetimes) it is a hedge, as an approximation word is there."""
    return "±" if "±" in text else None


def approximation_word(text: str, start: int, end: int) -> str | None:
    """The approximation word (``about``, ``approximately``, ``~``...) right before the value
    spanning ``text[start:end]`` or right after it, else ``None``. On exact types (counts,
    datetimes) it is a hedge: an exact value has no rounding to state."""
    m = _APPROX_BEFORE.search(text, max(0, start - 16), start)
    if m is None:
        m = _APPROX_AFTER.match(text, end)
    return m.group().strip() if m else None


#: "The answer is NULL": the abstention itself, not a description of data ("The answer is **NULL**, with 13.00
#: g/dL equally plausible" hedges; fresh adversary adv9, paid on 30 of 30 Clean tasks).
_ANSWER_IS = re.compile(r"(?i)\b(?:answer|result|response|value to report)\W+(?:is|was|would be|=|:)[\W_]*$")


def null_beside(text: str) -> str | None:
    """The first NULL spelling in ``text`` that stands as an abstention, else None.

    Args:
        text: Answer text, its identifiers and citations masked (``mask_context``) by the callers that read values.

    Returns:
        The spelling as written ("NULL", "None", "N/A") when one stands as an answer: a whole token not followed by
        a word ("NULL values", "none of" describe data) and not described by the words before it ("2 values were
        NULL"), unless those words say it is the answer ("the answer is NULL"); else None. A value with a NULL beside
        it is a hedge (``verifier.match.lead``, blind corpus c45).
    """
    if "n" not in text and "N" not in text:
        return None
    for m in _NULL_TOKEN.finditer(text):
        if _NULL_DESCRIBED.search(text, max(0, m.start() - 12), m.start()) is None \
                or _ANSWER_IS.search(text, max(0, m.start() - 40), m.start()):
            return m.group()
    return None


#: Words naming an entity whose identifier is a whole number: after them, a number with a fractional
#: part is a value ("in the stay: 13.2 sec", blind corpus c32), not an identifier. Codes (ICD, DRG, NDC,
#: item, version...) keep their dots ("ICD 54.91").
_ENTITY_ID = re.compile(r"(?i)\b(?:patient|subject|admission|hadm|stay|icustay|icu\s+stay|mrn|order|emar|seq)\b"
                        r"[\s_]*(?:id\b)?[\s:#=._]*(?:(?:is|was)\s+)?$")
_FRACTION = re.compile(r"\d+\.\d")


def is_context_number(text: str, start: int) -> bool:
    """True when the number starting at ``start`` is an identifier or a step citation; a number with
    a fractional part after an entity word (``_ENTITY_ID``: patient, admission, stay...) is a value,
    since those identifiers are whole numbers."""
    m = _ID_BEFORE.search(text, max(0, start - 24), start)
    if m is not None:
        return not (_FRACTION.match(text, start) and _ENTITY_ID.search(text, m.start(), start))
    return _YEAR.match(text, start) is not None and _YEAR_BEFORE.search(text, max(0, start - 12), start) is not None


def ambiguous(why: str) -> str:
    """The details string every ambiguity failure carries."""
    return f"ambiguous answer: {why}"
