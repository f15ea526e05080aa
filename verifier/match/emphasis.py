"""Which part of a prose Answer is its value: the one emphasised span, and values the Answer itself
rejects with "not" (blind corpus c36, issue 32).

Two ways writers mark the value they commit to, both read from the Answer's own structure:

1. **Emphasis.** ``... so the answer is **NULL**.``, ``... the mean charted Differential-Neuts is
   **76.25 %**.``, ``... was **0.4 %** (charted 2135-11-06 23:18:00, within the 0.0-1.0 % reference
   range)`` (a chatty assistant's style: 9 of its 12 Answers, all accepted by both reviewers, failed
   before). When the Answer holds exactly one strong-emphasis span (``**x**`` or ``__x__``) and text
   around it, the span is the value and the rest describes it, unless the rest offers an alternative:
   a non-committal word of ``verifier.match.commit`` (``or``, ``maybe``, ``either``, ``possibly``, a
   question mark...) other than a negation. A negation outside the span describes the data ("was not
   recorded, so the answer is **NULL**") or rejects another value (rule 2); it offers none. Two or more
   spans, or none, leave the Answer as it is.
2. **A rejected value.** ``12 ICU stays (not 11, the count if the stay whose values have no unit is
   left out)``, ``77.45 % (...; not 78.23 %, which would be the mean of per-admission means)``,
   ``2136-11-05 13:44:00 (not 02:48, which was a 'Not Given' event)`` (a thinking-aloud style).
   "not" directly before a value (a digit, after an optional article) negates that value: the clause
   it opens, up to the next ``;`` ``)`` or line end (or ``,`` when the clause goes on with "which",
   "the", "as", "because"...: the whole comment on the rejected value), is set aside when a value
   stands before it outside the clause. What remains must still commit to one value: "11 or 12 (not
   13)" is a hedge as before, and "not 11" with nothing before it is no value at all.

Neither rule can make a hedge pass: the value compared is one the Answer commits to, and every other
value the Answer offers as an alternative keeps failing it.
"""

from __future__ import annotations

import re

#: One strong-emphasis span (no nested emphasis, on one line).
_STRONG = re.compile(r"\*\*(?P<a>[^*\n]+?)\*\*|(?<!\w)__(?P<b>[^_\n]+?)__(?!\w)")
#: Non-committal words other than negations (``verifier.match.commit._NONCOMMITTAL`` without "not").
_ALTERNATIVE = re.compile(
    r"(?i)\b(?:or|either|maybe|perhaps|possibly|probably|likely|might|ma(?:y|ybe)\s+(?:be|have)|"
    r"could\s+(?:be|have)|unsure|uncertain|unclear|guess(?:ed|ing)?|presumably|alternatively|alternatives?|"
    r"otherwise|unless|something\s+like|or\s+so|give\s+or\s+take|ballpark|tentative(?:ly)?|"
    r"(?:to\s+be|pending|needs?)\s+(?:confirm|verif)\w*)\b|(?<![A-Za-z])-?ish\b|±|\?")
#: "not" before a value: an optional article, then a digit (a number, quantity, date or time).
_NOT_VALUE = re.compile(r"(?i)(?<![\w-])not\s+(?:the\s+|a\s+)?(?=[-+−]?\d)")
#: Where the rejected value's clause ends.
_CLAUSE_END = re.compile(r"[;)\n]|$")


def emphasised(answer: str) -> str | None:
    """The value of ``answer`` marked by its one strong-emphasis span (rule 1), else ``None``.

    Args:
        answer: the Answer as parsed (whole-answer wrapping already removed).

    Returns:
        The span's text, stripped; ``None`` when the Answer holds no span or several, nothing
        around it, or an alternative word outside it.
    """
    if "**" not in answer and "__" not in answer:
        return None
    spans = list(_STRONG.finditer(answer))
    if len(spans) != 1:
        return None
    m = spans[0]
    value = (m["a"] or m["b"] or "").strip()
    outside = answer[: m.start()] + " " + answer[m.end():]
    if not value or not outside.strip(" .,:;!") or _ALTERNATIVE.search(outside):
        return None
    return value


def without_rejected(answer: str) -> str | None:
    """``answer`` with the clauses that reject a value ("not 11, the count if ...") set aside (rule 2),
    else ``None`` when it holds none, or when nothing but such clauses would remain.

    Args:
        answer: the Answer as parsed.

    Returns:
        The Answer without those clauses (whitespace and dangling separators tidied).
    """
    if "not" not in answer.casefold():
        return None
    out, pos, cut = [], 0, False
    for m in _NOT_VALUE.finditer(answer):
        if m.start() < pos:
            continue
        before = answer[pos:m.start()]
        end = _CLAUSE_END.search(answer, m.end()).start()
        out.append(before)
        pos, cut = end, True
    if not cut:
        return None
    out.append(answer[pos:])
    text = "".join(out)
    text = re.sub(r"\(\s*[,;]?\s*\)", "", text)  # a parenthetical left empty
    text = re.sub(r"[\s,;(]+(?=\)|$)", "", text)  # separators before a closing bracket or the end
    text = re.sub(r"\s{2,}", " ", text).strip(" ,;")
    if not re.search(r"\w", text):
        return None
    return text


def committed_part(answer: str) -> tuple[str, str] | None:
    """The part of ``answer`` that holds its committed value, and the rule that chose it, else ``None``
    (module docstring: emphasis first, then rejected values set aside)."""
    value = emphasised(answer)
    if value is not None:
        return value, "the Answer's one emphasised span is its value"
    rest = without_rejected(answer)
    if rest is not None and rest != answer:
        return rest, "values the Answer rejects with 'not' set aside"
    return None
