"""Which part of a prose Answer is its value: the one emphasised span, and values the Answer itself
rejects with "not" (blind corpus c36, issue 32).

Two ways writers mark the value they commit to, both read from the Answer's own structure:

1. **Emphasis.** ``... so the answer is **NULL**.``, ``... the mean charted Differential-Neuts is
   **76.25 %**.``, ``... was **0.4 %** (charted 2135-11-06 23:18:00, within the 0.0-1.0 % reference
   range)`` (a chatty assistant's style: 9 of its 12 Answers, all accepted by both reviewers, failed
   before). When the Answer is one sentence on one line holding exactly one strong-emphasis span
   (``**x**`` or ``__x__``) with a number, a date or a NULL spelling in it, and text around it, the
   span is *the* Answer: its one reading, in place of every other (``verifier.verify`` replaces the
   Answer with it before matching, on Clean and Noise alike, so no response is read two ways). It does
   not apply when the rest offers an alternative (a non-committal word of ``verifier.match.commit``
   other than a negation, or a condition: ``or``, ``maybe``, ``if``, ``unless``, ``instead``, ``vs``),
   holds a label (``Answer:``, ``Check:``), a NULL spelling beside a value span, or, beside a NULL span,
   a value of its own (``verifier.parse`` reads such values); beside a NULL span the sentence must state a
   gap (a negation, "fewer", "missing"...) and set nothing against it ("but", "plausible", "would"...). A negation outside the span describes
   the data ("was not recorded, so the answer is **NULL**") or rejects another value (rule 2). Beside a
   value span a "not" is read so only where it rejects a value ("**36** (not 35)") or is the predicate of
   a clause with its own subject that offers no value ("(the lab noted it was not arterial blood)", blind
   corpus c43: a determiner and a noun naming something other than the Answer, then its verb); a "not"
   without one is said of the Answer itself ("(not sure)", "(not confirmed)", "the value is not final"),
   so the Answer is read as it is, where "not" is a hedge. Several sentences or lines, two spans, a label
   in bold, a self-correction after the span ("**X**, corrected: Y" commits to Y): the Answer is read as it is. Symbols and emoji after the sentence's end ("... blood). 🩸",
   c43's chatty assistant) hold no word: no second sentence. Fresh adversary adv8
   found the first version, tried as an extra reading beside the ordinary one, paid "Final answer: V.
   Sensitivity analysis gives **NULL**." on both twins of 26 of 26 pairs: one reading closes that.
   On Noise an emphasised value anywhere in the Answer ("NULL" / "Check: **V**") commits to that value
   (``emphasised_value``): the Answer is not a committed NULL.
2. **A rejected value.** ``12 ICU stays (not 11, the count if the stay whose values have no unit is
   left out)``, ``77.45 % (...; not 78.23 %, which would be the mean of per-admission means)``,
   ``2136-11-05 13:44:00 (not 02:48, which was a 'Not Given' event)`` (a thinking-aloud style).
   "not" directly before a value (a digit, after an optional article) negates that value: the clause
   it opens, up to the next ``;`` ``)`` or line end, is set aside when a value stands before it. What
   remains must still commit to one value: "11 or 12 (not 13)" is a hedge as before, and "not 11"
   with nothing before it is no value at all. ``verifier.verify`` reads it only where the ordinary
   reading failed for the word "not" alone, so it never gives an Answer a second committed value.

3. **A boxed value.** ``mean = 4268.9/182 \\Rightarrow \\boxed{23.46\\ \\text{K/uL}}`` (a math-trained reasoning
   model's convention, "put the final answer in \\boxed{}": blind corpus c37, 9 of 12 Answers failed
   before). An Answer holding exactly one ``\\boxed{...}`` is read as its content, LaTeX unwrapped
   (``\\text{NULL}`` is NULL, ``2179\\text{-}04\\text{-}03`` is 2179-04-03), and only as that: the
   derivation around it is working, unless it offers an alternative ("\\boxed{\\text{NULL}} \\text{ or } V").
   Two boxes are read as they are (a hedge stays one).

Neither rule can make a hedge pass: the value compared is one the Answer commits to, and every other
value the Answer offers as an alternative keeps failing it.
"""

from __future__ import annotations

import re
import unicodedata

from .aside import SELF_CORRECTION
from .commit import ALTERNATIVE_WORDS, ANSWER_WORDS, NOT_A_KIND
from .language import alternatives

#: One strong-emphasis span (no nested emphasis, on one line).
_STRONG = re.compile(r"\*\*(?P<a>[^*\n]+?)\*\*|(?<!\w)__(?P<b>[^_\n]+?)__(?!\w)")
#: Non-committal words other than negations (``verifier.match.commit.ALTERNATIVE_WORDS``).
_ALTERNATIVE = re.compile(rf"(?i){ALTERNATIVE_WORDS}")
#: "not" before a value: an optional article, then a digit (a number, quantity, date or time).
_NOT_VALUE = re.compile(r"(?i)(?<![\w-])not\s+(?:the\s+|a\s+)?(?=[-+−]?\d)")
#: Where the rejected value's clause ends.
_CLAUSE_END = re.compile(r"[;)\n]|$")


_CONDITION = re.compile(r"(?i)\b(?:if|unless|instead|vs\.?|versus|rather than|whereas)\b")
_LABEL = re.compile(r"(?im)(?:^|[.;]\s)\s*[\w /()-]{1,40}:\s*\S|\banswer\s*:")
_SENTENCE_BREAK = re.compile(r"[.!?]\s+(?=\S)|[;\n]")
#: Beside a NULL span the sentence must state a gap ("was not recorded", "cannot be determined", "fewer than
#: five"), and nothing set against it: "The chart shows X, but the answer is **NULL**." offers X (fresh
#: adversary adv9: paid on both twins of 9 of 10 text pairs), as does "**NULL**, with X equally plausible".
_GAP = re.compile(r"(?i)\b(?:not|no|none|never|nothing|cannot|can't|can ?not|fewer|missing|empty|absent|without|"
                  r"insufficient|unavailable|lacks?|zero|neither|nor)\b|n't\b")
_CONTRAST = re.compile(r"(?i)\b(?:but|however|although|though|yet|whereas|despite|nevertheless|"
                       r"plausible|likely|possible|possibly|would|could|might|alternatively)\b")
_NULL_WORD = re.compile(r"(?i)(?<![\w/-])(?:null|none|n/a)(?![\w/-])")
#: "not" as commit.py reads it (a hedge wherever it stands in an Answer read as written).
_NOT = re.compile(r"(?i)\bnot\b")
#: Where a clause ends, outside a span (the span itself stands as ``\u2063``).
_CLAUSE_EDGE = re.compile(r"[(),;:\u2063\u2014\u2013\n]")
#: A clause's own subject before its "not": a determiner and words naming something other than the Answer
#: (not ``value``, ``answer``, ``result``...: "the value is not final" is said of it), then at least one more
#: word, its verb ("the lab noted it was", "the sample was"). A bare "not sure", "I'm not sure" have none.
_OWN_SUBJECT = re.compile(r"(?i)^\W*(?:the|its|an?|another)\s+(?:[A-Za-z][\w'-]*\s+){2,8}$")
_THE_ANSWER = re.compile(rf"(?i)\b(?:{ANSWER_WORDS})\b")
#: Symbols and emoji (Unicode "So", their modifiers, joiners and variation selectors) hold no word.
_DECORATION = frozenset("\u200d\ufe0e\ufe0f\u20e3")
_NULL_SPAN = re.compile(r"(?i)\s*(?:null|none|n/a)\s*[.]?\s*")


def _spans(answer: str) -> list[re.Match[str]]:
    return list(_STRONG.finditer(answer)) if ("**" in answer or "__" in answer) else []


def _span_text(m: re.Match[str]) -> str:
    return (m["a"] or m["b"] or "").strip()


def emphasised(answer: str, question: str = "") -> str | None:
    """The value of ``answer`` marked by its one strong-emphasis span (rule 1), else ``None``.

    Args:
        answer: the Answer as parsed (whole-answer wrapping already removed).
        question: the task's question: its own phrases ("PrednisoLONE Acetate 1% Ophth. Susp.") are
            not sentence breaks.

    Returns:
        The span's text, stripped; ``None`` unless every condition of rule 1 holds.
    """
    spans = _spans(answer)
    if len(spans) != 1 or "\n" in answer.strip():
        return None
    m = spans[0]
    value = _span_text(m)
    is_null = bool(_NULL_SPAN.fullmatch(value))
    if not value or value.endswith(":") or answer[m.end():m.end() + 2].lstrip().startswith(":"):
        return None  # a label in bold
    if not is_null and not any(c.isdigit() for c in value):
        return None  # a number, a date or NULL: text values have their own sentence rule
    outside = answer[: m.start()] + " \u2063 " + answer[m.end():]
    if not outside.replace("\u2063", "").strip(" .,:;!"):
        return None
    plain = outside
    for phrase in sorted(_question_phrases(question), key=len, reverse=True):
        plain = plain.replace(phrase, " ")
    if _SENTENCE_BREAK.search(_undecorated(plain).rstrip(".!").rstrip()) or _LABEL.search(plain):
        return None  # several sentences or lines, or a label: read as it is
    if _ALTERNATIVE.search(outside) or _CONDITION.search(outside):
        return None
    if not is_null and _NULL_WORD.search(outside):
        return None  # a value beside a NULL spelling
    if not is_null and not all(_not_beside_value(outside, n.start(), question) for n in _NOT.finditer(outside)):
        return None  # "(not sure)": a negation said of the Answer itself
    if SELF_CORRECTION.search(answer, m.end()):
        return None  # "**X**, corrected: Y" commits to Y (verifier.match.aside.after_correction): read as written
    if is_null and (_offers_value(plain, question) or not _GAP.search(outside) or _CONTRAST.search(outside)):
        return None  # beside a NULL the sentence may only say why there is no answer
    return value


def _undecorated(text: str) -> str:
    """``text`` without the symbols and emoji that end it (and the spaces among them): they hold no word."""
    end = len(text)
    while end and (text[end - 1].isspace() or text[end - 1] in _DECORATION
                   or unicodedata.category(text[end - 1]) in ("So", "Sk") and text[end - 1] > "\x7f"):
        end -= 1
    return text[:end]


def _not_beside_value(outside: str, at: int, question: str) -> bool:
    """Whether the "not" at ``at`` in ``outside`` (the Answer around its value span) is said of something
    other than the value: it rejects a value (rule 2), or it is the predicate of a clause with its own
    subject (``_OWN_SUBJECT``) that offers no value ("the lab noted it was not arterial blood")."""
    if _NOT_VALUE.match(outside, at) or NOT_A_KIND.match(outside, at):  # "not 35", "not a boarding delay"
        return True
    start = max((m.end() for m in _CLAUSE_EDGE.finditer(outside, 0, at)), default=0)
    end = m.start() if (m := _CLAUSE_EDGE.search(outside, at)) else len(outside)
    subject = outside[start:at]
    return bool(_OWN_SUBJECT.match(subject)) and _THE_ANSWER.search(subject) is None \
        and not _offers_value(outside[start:end], question)


def _question_phrases(question: str) -> list[str]:
    """Runs of the question's words that hold a full stop ("Ophth. Susp.", "DIRECT EMER."): names."""
    return [m.group() for m in re.finditer(r"\S*\w\.(?:\s+\S+)?", question or "")] if question else []


def _offers_value(text: str, question: str = "") -> bool:
    """Whether ``text`` (outside a NULL span) states a value: a number that is no identifier, citation,
    unit or time phrase, scale, count of data or threshold (``verifier.match.commit`` context), nor
    part of a name the question gives ("that first 20 Gauge line", ``numbers.question_names``)."""
    from .commit import candidates, mask_context  # noqa: PLC0415 - commit imports this package's neighbours
    from .extract import extract_numbers  # noqa: PLC0415
    from .numbers import question_names  # noqa: PLC0415

    masked = mask_context(question_names(text, question) if question else text)
    return bool(candidates(masked, extract_numbers(masked)))


def emphasised_value(answer: str) -> str | None:
    """A strong-emphasis span of ``answer`` that holds something other than a NULL spelling or a label,
    else ``None``: on Noise such a span commits the Answer to that value ("NULL" / "Check: **5.2**"
    offers 5.2; fresh adversary adv8)."""
    for m in _spans(answer):
        value = _span_text(m)
        if value and not _NULL_SPAN.fullmatch(value) and not value.endswith(":") \
                and not answer[m.end():m.end() + 2].lstrip().startswith(":"):
            return value
    return None


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




_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_LATEX_WRAP = re.compile(r"\\(?:text|textrm|textbf|textit|mathrm|mathbf|mathit|operatorname|mbox)\s*\{([^{}]*)\}")
_LATEX_SPACE = re.compile(r"\\[ ,;:!]|~|\\quad|\\qquad")
_LATEX_SYMBOL = {"\\%": "%", "\\_": "_", "\\&": "&", "\\#": "#", "\\$": "$", "{:}": ":", "\\cdot": "·",
                 "\\times": "×", "\\mu": "µ", "\\le": "≤", "\\ge": "≥", "\\pm": "±", "\\approx": "≈"}


def boxed(answer: str) -> str | None:
    """The content of the Answer's one ``\\boxed{...}`` with its LaTeX unwrapped (rule 3), else ``None``
    (no box, two or more, or braces that do not close).

    Args:
        answer: the Answer as parsed.

    Returns:
        The boxed value as plain text ("23.46 K/uL", "NULL", "2179-04-03").
    """
    if "boxed" not in answer and "fbox" not in answer:
        return None
    starts = list(_BOXED.finditer(answer))
    if len(starts) != 1:
        return None
    i, depth = starts[0].end(), 1
    for j in range(i, min(len(answer), i + 2000)):
        depth += {"{": 1, "}": -1}.get(answer[j], 0)
        if depth == 0:
            outside = _unlatex(answer[: starts[0].start()] + " " + answer[j + 1:])
            if _ALTERNATIVE.search(outside) or _CONDITION.search(outside) \
                    or any(w in alternatives() for w in outside.casefold().split()):
                return None  # "\boxed{NULL} or V" offers V beside the box (fresh adversary adv9)
            return _unlatex(answer[i:j]) or None
    return None


def _unlatex(text: str) -> str:
    """Plain text of a short LaTeX value: ``\\text{..}`` and similar unwrapped, spacing commands as spaces,
    escaped symbols as themselves, other braces dropped."""
    s = text
    for _ in range(4):
        s2 = _LATEX_WRAP.sub(r"\1", s)
        if s2 == s:
            break
        s = s2
    for k, v in _LATEX_SYMBOL.items():
        s = s.replace(k, v)
    s = _LATEX_SPACE.sub(" ", s).replace("{", "").replace("}", "")
    return " ".join(s.split())
