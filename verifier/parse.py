"""Parse an agent's final response into Answer, Reasoning, abstention and citations.

``parse(text) -> ParsedResponse`` never raises on a bad response: it sets
``error`` instead (``verify`` turns that into ``UNPARSEABLE_RESPONSE``).

Formats recognised, in this order (the first that yields an Answer wins):
1. Tags: ``<answer>...</answer>`` and ``<reasoning>...</reasoning>``
   (``<final_answer>`` too); the last answer tag counts. Several answer tags with
   differing contents are kept in ``answers`` (each cleaned, in order): two
   differing committed answers are a hedge, so ``abstained`` is True only when
   every one is a NULL spelling (Noise: not a committed NULL otherwise), and
   ``verify`` fails a Clean task unless every one matches (``WRONG_VALUE``,
   "ambiguous answer"). Identical repeated tags (whitespace and case aside) are one.
2. JSON: an object with an ``answer`` key (``final_answer`` too) and an
   optional ``reasoning`` (``rationale``, ``explanation``) key, as the whole
   response or inside a ```` ```json ```` fence. JSON ``null`` is an abstention.
3. Sections: lines starting ``Answer:`` / ``Final answer:`` / ``Reasoning:``,
   also as Markdown bold (``**Answer:**``, ``**Answer**:``) or headings
   (``## Answer`` on its own line), also after leading symbols or emoji
   (``✅ Final Answer: **12**``: Unicode symbol categories and emoji joiners; a
   letter before the label still hides it). The last Answer section counts; when there
   is no Reasoning section, the Answer ends at its first blank line and the
   rest is the Reasoning.

NULL spellings (the Answer is an abstention), case-insensitive, after
stripping Markdown emphasis, code ticks, quotes and whitespace: ``NULL``,
``None``, ``N/A``, JSON ``null``; optionally followed by a separator
(``. , ; : ( - – —``) and an explanation (``NULL - no potassium recorded``).
Prose such as "insufficient data" or "cannot be determined" is deliberately
NOT a NULL spelling: the task instructions ask for NULL, and guessing intent
from prose would let hedged answers pass as abstentions on Noise tasks and be
misread on Clean ones. ``NA`` is excluded because it is sodium's symbol.
An explanation that hedges towards a value is NOT an abstention
(``NULL; actually 1.8 mmol/L``, ``None - but probably 1.8``): when the text
after the NULL spelling has a hedge word (actually, probably, but, likely,
estimate, maybe, possibly, perhaps, approximately, guess, roughly, around,
about) and a number that is neither a step citation (``[step 2]``) nor an
identifier (``admission 22595853``), ``abstained`` is False.

Inside answer tags, a Markdown heading "### Answer" (or "Final answer", "Result") on its own line marks the
section that holds the value, up to the next heading; the other sections are details (blind corpus c37).
An Answer holding exactly one ``\\boxed{...}`` (the convention of math-trained reasoning models) is read
as the box's content, LaTeX unwrapped (``verifier.match.emphasis.boxed``; blind corpus c37).

A final response that is only a Markdown table (no label) is taken as the
Answer. An Answer that is a CSV or TSV block with a header line (fenced or not) is read as the Markdown
table it is (``delimited_table``; blind corpus c39). A final response that is only a NULL spelling (``NULL``, ``None``,
``N/A``, ``null.``, optionally Markdown-wrapped; no explanation) is the Answer
NULL with an empty Reasoning (format ``bare``): on a Noise task it then fails
for what it lacks (evidence, reasoning), not as unparseable. Unlabelled prose (``The first bicarbonate was 27 mEq/L.``) is
deliberately unparseable: guessing which number is the Answer would reward
responses that ignore the required format.

Citations (issue 18 point 3): ``[step 3]``, ``[steps 2, 4]``, ``[steps 2-4]``, ``(step 3)``,
``[Step #3]``, ``[step 1, step 2]``, and the same without brackets (``step 3``, ``steps 2 and 3``,
``steps 1 to 4``, ``Step no. 3``), and ordinal words after "the" (``in the second step``: first to
tenth; "a first step" and "the last step" are not citations: the first is a plan, the second
names no number) in the Answer or the Reasoning; sorted, unique, 1-based. A range
counts every step in it (``steps 1-18`` cites 18 steps).

Layer (ARCHITECTURE.md section 9): imports only ``verifier.match`` (typed extraction) and
``verifier.contract``; ``verify`` and the scoring and export code import it.
"""

from __future__ import annotations

import csv
import html
import json
import re
import unicodedata
from typing import Any, NamedTuple

from .match.commit import is_context_number, mask_context
from .match.lead import ANSWER_KEYS, LABEL_LINE
from .match.extract import (
    extract_boolean,
    extract_count,
    extract_datetimes,
    extract_list,
    extract_numbers,
    extract_quantities,
    extract_records,
    strip_markdown,
)
from .match.aside import SELF_CORRECTION as _CORRECTED
from .match.emphasis import boxed
from .match.fhir import fhir_absent
from .match.scan import json_fence_bodies, strip_fence

__all__ = [
    "ParsedResponse", "parse", "is_null_answer", "extract_boolean", "extract_count", "extract_datetimes",
    "extract_list", "extract_numbers", "extract_quantities", "extract_records",
]

_TAG_OPEN = {name: re.compile(rf"<\s*{name}\s*>") for name in ("answer", "final_answer", "reasoning")}
_TAG_CLOSE = re.compile(r"<\s*/?\s*(?:answer|final_answer|reasoning)\s*>")
_HAS_TAG = re.compile(r"<\s*(?:final_)?answer\s*>")  # searched in the lower-cased text
_LABEL_HEAD = re.compile(r"(final answer|final_answer|answer|reasoning|rationale|explanation)")
_LABEL_LEAD = " \t>#*_"
_LABEL_TRAIL = " \t*_"
_LABEL_START = frozenset("aAfFrReE")
#: Joiners and modifiers inside emoji sequences ("✅️", "👍🏽", "🧑‍⚕️"), skipped with the symbols before a label.
_SYMBOL_JOIN = frozenset("\u200d\ufe0e\ufe0f\u20e3")
_NULL = re.compile(r"^(?:null|none|n/a)((?:\s*(?:[.,;:(\-–—].*)?)?)$", re.I | re.S)
_BARE_NULL = re.compile(r"(?i)null|none|n/a")
_NULL_FIRST = re.compile(r"(?i)^[\s*_`\"'\[]*(?:null|none|n/a)\b")
_HEDGE_TO_VALUE = re.compile(
    r"(?i)\b(?:actually|probably|but|likely|estimate[ds]?|estimated|maybe|possibly|perhaps|approximately|"
    r"approx|guess|roughly|around|about)\b"
)
#: An alternative value offered right after NULL ("NULL (or 1, the APR severity)", "NULL; otherwise 2",
#: "NULL, alternatively: 3.4 mEq/L"): "or"/"otherwise"/"else"/"alternatively" opening the rest of the
#: Answer, then a number, hedges between abstaining and a value (a red-team policy's "NULL (or 1, ...)"
#: passed as an abstention; blind reviewers failed it). Only at the opening: "NULL (no lactate within 24
#: or 48 hours)", "NULL (see steps 3 or 4)" state the gap; "or none", "or patients" offer no value.
_OR_VALUE = re.compile(r"(?i)^[\s.,;:(\-–—]*(?:or|otherwise|else|alternatively|o|u|ou|oder|sonst|sinon|oppure|altrimenti)\b"
                       r"[\s,:]*(?:(?:it is|it's|the answer is|about|approximately|~)\s*)?[-+−–]?\d")
#: A bare value in brackets right after the NULL ("NULL (4.2 mmol/L)", "NULL (2150-01-01)"): a number with at most
#: a unit, offered beside the abstention (fresh adversary adv8, paid on 79 of 80 Noise tasks); a count of data
#: or a threshold says what it is ("NULL (0 values)", "NULL (fewer than 5)") and is no bare value.
_BARE_VALUE = re.compile(r"^\s*[(\[]\s*[-+−–]?\d[\d.,:\- ]*\s*(?P<unit>(?:[^\W\d_]|µ|μ)[^\s()\[\]]{0,15}|%|°[CF])?\s*[)\]]\s*\.?\s*$")


def _bare_value(rest: str) -> bool:
    """``rest`` (after a NULL spelling) is a bare value in brackets: a number or date with at most a unit
    that pint or UCUM reads ("(4.2 mmol/L)"), not a count of data ("(0 values)")."""
    m = _BARE_VALUE.match(rest)
    if m is None:
        return False
    if not m["unit"]:
        return True
    from .units.convert import parse_unit  # noqa: PLC0415 - pint loads lazily

    try:
        parse_unit(m["unit"])
    except Exception:  # noqa: BLE001 - a word, not a unit
        return False
    return True
# "\s*(?:#\s*)?" rather than "\s*#?\s*": two adjacent \s* made every list item match 2 ways (exponential)
#: A step citation: "step" or "steps" (not inside a word), an optional "#" / "no." / "number",
#: then a list of numbers and ranges ("2, 4", "2-4", "2 and 4", "1, step 2", "1 to 18"). Every
#: optional part starts with a non-space character, so a failed match backtracks linearly.
_CITE_AT = re.compile(
    r"(?<![a-z])steps?\s*(?:(?:#|no\.?|number)\s*)?"
    r"(\d{1,6}(?:\s*(?:,|and|&|-|–|to|through)\s*(?:steps?\s*)?(?:#\s*)?\d{1,6})*)"
)
_CITE_PART = re.compile(r"(\d+)(?:\s*(?:-|–|to|through)\s*(?:#\s*)?(\d+))?")
#: "the second step": ordinal words first..tenth before "step" (after "the"; "a first step" is not one).
_CITE_ORDINAL = re.compile(r"\bthe\s+(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)\s+steps?\b")
_ORDINALS = {w: i for i, w in enumerate(
    ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"), start=1)}
_BLANK = re.compile(r"\n[ \t]*\n")
_WRAP = re.compile(r"^(\*\*|__|`{1,3}|\*|_|\"|')(.*)\1$", re.S)
_WRAP_CHARS = frozenset("*_`\"'.")
_ANSWER_KEYS = ("answer", "final_answer")
_REASON_KEYS = ("reasoning", "rationale", "explanation")


class ParsedResponse(NamedTuple):
    """A final response, parsed (immutable; a NamedTuple because it is built on
    the hot path and tuple construction is several times cheaper than a frozen
    dataclass).

    Attributes:
        answer_text: the Answer as text (Markdown wrapping removed), ``""`` when
            none was found.
        reasoning: the Reasoning text (``""`` when absent).
        abstained: the Answer is a NULL spelling (see module docstring).
        citations: (property, computed on access) cited step indices
            (1-based, sorted, unique, a new list each time), from
            ``[step N]`` forms in the Answer or Reasoning.
        error: why the response is unparseable, else ``None``.
        format: ``tags``, ``json``, ``sections``, ``table`` (a bare Markdown
            table) or ``bare`` (a bare NULL spelling) (``""`` when unparseable).
        answer_json: the decoded JSON value of the answer for JSON responses
            (lists and tables keep their structure), else ``None``.
        answers: the distinct bodies of several answer tags that differ (each
            cleaned, in order; ``answer_text`` is the last), else ``()``.
    """

    answer_text: str
    reasoning: str = ""
    abstained: bool = False
    error: str | None = None
    format: str = ""
    answer_json: Any = None
    answers: tuple[str, ...] = ()

    @property
    def citations(self) -> list[int]:
        """Cited step indices (computed on access; Clean scoring never needs them)."""
        return _citations(self.answer_text, self.reasoning)

    @property
    def ok(self) -> bool:
        """True when an Answer was found."""
        return self.error is None


def is_null_answer(answer: str) -> bool:
    """True when ``answer`` is one of the documented NULL spellings, or a JSON object whose every
    value is null (``{"answer": null}``: the JSON spelling of NULL), or an object or ``field: value``
    lines (YAML-style, blind corpus c35) whose one answer key (``verifier.match.lead.ANSWER_KEYS``)
    holds a NULL spelling, the other fields context (``answer: NULL`` / ``item: D5NS`` /
    ``n_values: 0``): the value with details of ``verifier.match.lead``, committed to NULL; or code
    fences and lines each of which is such a NULL (``_blocks_null``)."""
    if _NULL_FIRST.match(answer) and _CORRECTED.search(answer):
        last = _CORRECTED.split(answer)[-1]
        if re.search(r"\w", last):  # "NULL, corrected: V", "NULL\nFinal: V": the correction commits (adv9)
            return last.strip() != answer.strip() and is_null_answer(last)
    if "```" in answer and _blocks_null(answer):
        return True
    if "|" in answer and _table_null(answer):
        return True
    if answer.lstrip()[:1] == "{":
        return _json_null(answer)
    if "\n" in answer.strip() and ":" in answer:
        return _fields_null(answer)
    if answer.lstrip("*_`\"'[ \t\n")[:1] not in ("n", "N"):
        return False  # fast path: every NULL spelling starts with n
    s = strip_markdown(_clean(answer)).strip("\"'[]").strip()
    m = _NULL.match(s)
    if m is None:
        return False
    rest = m[1]
    return not ((_HEDGE_TO_VALUE.search(rest) and _has_value(rest)) or _OR_VALUE.match(rest) or _bare_value(rest))


_FENCE_MARK = re.compile(r"```[A-Za-z0-9_+-]*")


def _blocks_null(answer: str) -> bool:
    """Every block of an Answer made of code fences and lines around them is a NULL spelling: a fenced
    ``{"answer": null}`` and a ``NULL`` line below it (blind corpus c36, a software engineer's style:
    6 of 6 abstentions read as answers before) say NULL twice. A block holding a value keeps the Answer
    from being NULL (``{"answer": null}`` beside ``5`` hedges)."""
    blocks = [b.strip() for b in _FENCE_MARK.split(answer)]
    blocks = [b for b in blocks if b]
    return len(blocks) >= 2 and all("```" not in b and is_null_answer(b) for b in blocks)


_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")


def _table_null(answer: str) -> bool:
    """A Markdown table whose every body cell is a NULL spelling (``| patients |`` / ``|---|`` / ``| NULL |``,
    blind corpus c38: a tabulating agent's six abstentions read as answers before): the table's spelling of
    NULL, as a JSON object whose every value is null is. A cell holding a value keeps it from being NULL."""
    lines = [ln.strip() for ln in answer.strip().splitlines() if ln.strip()]
    if len(lines) < 3 or not all(ln.startswith("|") or ln.endswith("|") for ln in lines) or not _TABLE_RULE.match(lines[1]):
        return False
    cells = [c.strip() for ln in lines[2:] for c in ln.strip().strip("|").split("|")]
    return bool(cells) and all(c and _NULL.match(strip_markdown(c).strip()) and not _NULL.match(strip_markdown(c).strip())[1].strip()
                               for c in cells)


def _json_null(answer: str) -> bool:
    try:
        value = json.loads(answer.strip())
    except ValueError:
        return False
    if not isinstance(value, dict) or not value:
        return False
    if fhir_absent(value):  # a FHIR resource whose value is absent, with its reason (issue 32)
        return True
    if all(v is None for v in value.values()):
        return True
    keys = [k for k in value if isinstance(k, str) and k.strip().lower() in ANSWER_KEYS]
    return len(keys) == 1 and (value[keys[0]] is None or (isinstance(value[keys[0]], str)
                                                          and is_null_answer(value[keys[0]])))


def _fields_null(answer: str) -> bool:
    """``field: value`` lines, one labelled with an answer key and holding a NULL spelling, or a lead
    line that is a NULL spelling over ``field: value`` lines of context, any answer key among them NULL too."""
    lines = [ln for ln in strip_fence(answer.strip()).splitlines() if ln.strip()]
    fields = [LABEL_LINE.match(ln) for ln in lines]
    if len(lines) < 2 or not all(fields[1:]):
        return False
    keys = [m for m in fields if m and m["label"].strip().lower() in ANSWER_KEYS]
    if fields[0] is None:  # a NULL lead over context, or over a conclusion that says NULL too ("IMPRESSION: NULL - ...")
        return is_null_answer(lines[0]) and all("\n" not in k["value"] and is_null_answer(k["value"]) for k in keys)
    return len(keys) == 1 and "\n" not in keys[0]["value"] and is_null_answer(keys[0]["value"])


def _has_value(text: str) -> bool:
    masked = mask_context(text)
    return any(not is_context_number(masked, t.start) for t in extract_numbers(masked))


def _clean(answer: str) -> str:
    """Strip whitespace, whole-answer Markdown wrapping (``**x**``, `` `x` ``,
    code fences, quotes) and one trailing period of a one-line answer."""
    s = answer.strip()
    if not s or (s[0] not in _WRAP_CHARS and s[-1] not in _WRAP_CHARS):
        return s
    for _ in range(4):
        if "\n" not in s and s.endswith(".") and not s.endswith(".."):
            s = s[:-1].rstrip()
        if s.startswith("```"):
            s = strip_fence(s).strip()  # linear (a regex here was quadratic)
            continue
        m = _WRAP.match(s)
        if not m or "\n" in m[2]:
            break
        s = m[2].strip()
    return s


#: A header cell of a delimited table: a field name (letters first; no value).
_HEADER_CELL = re.compile(r"^[A-Za-z][A-Za-z0-9_ ./()%#-]{0,47}$")


def delimited_table(answer: str) -> str | None:
    """A CSV or TSV block (blind corpus c39, a data engineer's fenced ``csv`` answers) as the Markdown
    table it is: two or more lines that split, by the same delimiter (comma, tab or semicolon; CSV
    quoting honoured), into the same number (2 or more) of fields, whose first line is a header of
    distinct field names (letters first, no value: ``admissionid,item,value,unit``). Its rows are then
    read as any table's (a one-row table is one record, its header the fields). ``None`` when the
    Answer is not such a block ("Sodium, 140 mEq/L" over "Potassium, 4.1 mEq/L" has no header).

    Args:
        answer: the cleaned Answer text (fences already stripped).

    Returns:
        The Markdown table (``| a | b |`` / ``|---|---|`` / ``| 1 | 2 |``), or ``None``.
    """
    lines = [ln.strip() for ln in answer.strip().splitlines() if ln.strip()]
    if len(lines) < 2 or len(lines) > 200:
        return None
    for delim in (",", "\t", ";"):
        if delim not in lines[0]:
            continue
        try:
            rows = list(csv.reader(lines, delimiter=delim, skipinitialspace=True))
        except csv.Error:
            continue
        width = len(rows[0])
        head = [c.strip() for c in rows[0]]
        if (width < 2 or any(len(r) != width for r in rows) or not all(_HEADER_CELL.match(c) for c in head)
                or len({c.casefold() for c in head}) != width):
            continue
        return "\n".join([_md_row(head), "|" + "---|" * width] + [_md_row(r) for r in rows[1:]])
    return None


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(c.strip().replace("|", "/") for c in cells) + " |"


#: A Markdown heading that names the Answer ("### Answer", "## Final answer", "# Result") on its own line.
_ANSWER_HEADING = re.compile(r"(?im)^[ \t]*#{1,6}[ \t]*(?:\*\*)?(?:final[ \t]+answer|answer|result)(?:\*\*)?[ \t]*:?[ \t]*$")
_ANY_HEADING = re.compile(r"(?m)^[ \t]*#{1,6}[ \t]+\S")


def _headed_answer(body: str) -> str | None:
    """The section under an answer tag's one "### Answer" heading, up to the next heading (blind corpus c37:
    "### Answer / **Left Antecubital** / ### Details / - ..."): the value there, the other sections its
    details, as the sections format reads a whole response (module docstring, format 3). Several such
    headings, or an empty section, leave the body as it is."""
    heads = list(_ANSWER_HEADING.finditer(body))
    if len(heads) != 1:
        return None
    nxt = _ANY_HEADING.search(body, heads[0].end())
    section = body[heads[0].end(): nxt.start() if nxt else len(body)].strip()
    return section or None


def _citations(*texts: str) -> list[int]:
    found: set[int] = set()
    for text in texts:
        if "tep" not in text and "TEP" not in text:
            continue
        low = text.lower()
        for m in _CITE_AT.finditer(low):
            for part in _CITE_PART.finditer(m[1]):
                a = int(part[1])
                b = int(part[2]) if part[2] else a
                if b < a or b - a > 1000:
                    b = a
                found.update(range(a, b + 1))
        found.update(_ORDINALS[m[1]] for m in _CITE_ORDINAL.finditer(low))
    return sorted(i for i in found if i >= 1)


_TAG_PAIR = {name: (f"<{name}>", f"</{name}>") for name in ("answer", "final_answer", "reasoning")}
_TAG_MARKS = ("</answer>", "</final_answer>", "</reasoning>", "<answer>", "<final_answer>", "<reasoning>")


def _tag_body(text: str, low: str, name: str) -> str | None:
    """Body of the last ``<name>`` tag: up to ``</name>``, the next opening tag, or the end."""
    opening, closing = _TAG_PAIR[name]
    start = low.rfind(opening)
    if start != -1:
        begin = start + len(opening)
        end = low.find(closing, begin)
        if end != -1 and "<" not in low[begin:end]:
            return text[begin:end]  # the usual case: <name>...</name>
        ends = [i for i in (low.find(mark, begin) for mark in _TAG_MARKS) if i != -1]
        return text[begin: min(ends) if ends else len(text)]
    m = None
    for m in _TAG_OPEN[name].finditer(low):  # spaced variants: "< answer >"
        pass
    if m is None:
        return None
    close = _TAG_CLOSE.search(low, m.end())
    return text[m.end(): close.start() if close else len(text)]


#: A tag body that echoes the output format rather than answering ("...", "the answer",
#: "value or NULL", "your answer here"): an agent quoting the instructions commits to nothing there.
_PLACEHOLDER = re.compile(r"(?i)^\s*(?:[.…_\-\s]*|(?:(?:the|your|a|final)\s+)*(?:answer|value|result)(?:\s+here)?"
                          r"(?:\s*(?:or|/)\s*null)?)\s*$")


def _tag_answers(text: str, low: str) -> tuple[str, ...]:
    """The distinct non-empty cleaned bodies of every answer tag, in order, when more than
    one distinct body exists (whitespace and case do not distinguish them); else ``()``.
    Linear: each body ends at the next tag mark."""
    if len(_HAS_TAG.findall(low)) < 2:
        return ()
    seen: dict[str, str] = {}
    for name in ("answer", "final_answer"):
        for m in _TAG_OPEN[name].finditer(low):
            close = _TAG_CLOSE.search(low, m.end())
            body = _clean(text[m.end(): close.start() if close else len(text)])
            if body and not _PLACEHOLDER.match(body):
                seen.setdefault(" ".join(body.split()).casefold(), body)
    return tuple(seen.values()) if len(seen) > 1 else ()


def _from_tags(text: str, low: str) -> tuple[str | None, str]:
    answer = _tag_body(text, low, "answer")
    if answer is None:
        answer = _tag_body(text, low, "final_answer")
    reasoning = _tag_body(text, low, "reasoning") or ""
    return answer, reasoning.strip()


def _from_json(text: str) -> tuple[bool, Any, str] | None:
    candidates = []
    s = text.strip()
    if s.startswith("{"):
        candidates.append(s)
    if "```" in s:
        candidates += json_fence_bodies(s)  # linear (a regex here was quadratic)
    for cand in candidates:
        try:
            obj = json.loads(cand)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        keys = {str(k).lower(): k for k in obj}
        ak = next((keys[k] for k in _ANSWER_KEYS if k in keys), None)
        if ak is None:
            continue
        rk = next((keys[k] for k in _REASON_KEYS if k in keys), None)
        reasoning = obj[rk] if rk is not None else ""
        return True, obj[ak], reasoning if isinstance(reasoning, str) else json.dumps(reasoning)
    return None


def _strip_symbols(line: str) -> str:
    """``line`` without its leading Markdown marks, spaces and symbol characters (Unicode
    categories S*, emoji modifiers, variation selectors, zero-width joiners: "✅ Final Answer:",
    "👉 **Answer:**"); letters, digits and punctuation stop it."""
    i, n = 0, min(len(line), 64)
    while i < n:
        ch = line[i]
        if ch in _LABEL_LEAD or (ch > "\x7f" and (unicodedata.category(ch)[0] == "S" or ch in _SYMBOL_JOIN)):
            i += 1
            continue
        break
    return line[i:]


def _label_of(line: str) -> tuple[str, str] | None:
    """``(label, rest of line)`` when ``line`` opens an Answer/Reasoning section."""
    head = line.lstrip(_LABEL_LEAD)
    if head[:1] > "\x7f":
        head = _strip_symbols(head)
    m = _LABEL_HEAD.match(head[:16].lower())
    if m is None:
        return None
    label = m[1]
    rest = head[len(label):].lstrip(_LABEL_TRAIL)
    if rest.startswith((":", "：")):
        rest = rest[1:].lstrip(" \t")
        if rest[:2] in ("**", "__") and rest[2:3] in ("", " ", "\t"):
            rest = rest[2:].lstrip(" \t")  # the closing bold of "**Answer:**"
        return label, rest
    if not rest.strip():
        return label, ""  # a heading or bold label alone on its line
    return None


def _from_sections(text: str) -> tuple[str, str] | None:
    lines = text.split("\n")
    spans: list[tuple[str, int, str]] = []
    for n, line in enumerate(lines):
        if line and (line[0] in _LABEL_START or (lead := line.lstrip(_LABEL_LEAD)[:1]) in _LABEL_START
                     or lead > "\x7f"):
            got = _label_of(line)
            if got is not None:
                spans.append((got[0], n, got[1]))
    if not spans:
        return None
    answer = reasoning = None
    has_reasoning = False
    for k, (label, n, first) in enumerate(spans):
        end = spans[k + 1][1] if k + 1 < len(spans) else len(lines)
        body = "\n".join([first, *lines[n + 1:end]]).strip()
        if label in ("answer", "final answer", "final_answer"):
            answer = body
        else:
            reasoning = body
            has_reasoning = True
    if answer is None:
        return None
    if not has_reasoning:
        parts = _BLANK.split(answer, maxsplit=1)
        answer, reasoning = parts[0].strip(), (parts[1].strip() if len(parts) > 1 else "")
    return answer, reasoning or ""


def _only_table(text: str) -> bool:
    """Every non-blank line is a Markdown table row and a header separator exists."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return len(lines) >= 3 and all(ln.startswith("|") for ln in lines) and extract_records(text) is not None


#: Unicode format characters (category Cf) a reader does not see: soft hyphen, Arabic letter mark, Mongolian vowel
#: separator, zero-width space / non-joiner / joiner, direction marks and embeddings, word joiner and invisible
#: operators, isolates, byte-order mark, interlinear annotation marks, tag characters
_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
                        "\ufff9-\ufffb\U000e0000-\U000e007f]")


def parse(text: str) -> ParsedResponse:
    """Parse a final response (never raises).

    Args:
        text: the raw final response. Invisible format characters (``_INVISIBLE``) are removed first:
            the response is judged as a reader sees it.

    Returns:
        A :class:`ParsedResponse`; ``error`` says why when no Answer was found.
    """
    if not isinstance(text, str):
        return ParsedResponse("", "", False, f"final response is {type(text).__name__}, not text")
    if _INVISIBLE.search(text):
        # what a reader sees is judged: invisible format characters (zero-width space and joiners, word joiner,
        # soft hyphen, direction marks, tag characters) are not there for them (fresh adversary adv13:
        # "Medicine/Cardiology\u200bMedicine" was paid whichever of the two was right, 29 of 120 text pairs)
        text = _INVISIBLE.sub("", text)
    if not text.strip():
        return ParsedResponse("", "", False, "empty final response")
    fmt, answer_json, answer, reasoning, answers = "", None, None, "", ()
    if "<" in text and "answer" in (low := text.lower()) and _HAS_TAG.search(low):
        answer, reasoning = _from_tags(text, low)
        if answer is not None:
            fmt = "tags"
            answers = _tag_answers(text, low)
    if answer is None and "{" in text:
        got = _from_json(text)
        if got is not None:
            _, value, reasoning = got
            fmt = "json"
            if value is None:
                return ParsedResponse("NULL", reasoning, True, None, fmt, None)
            answer_json = value
            answer = value if isinstance(value, str) else json.dumps(value)
    if answer is None:
        got = _from_sections(text)
        if got is not None:
            answer, reasoning = got
            fmt = "sections"
    if answer is None and "|" in text and _only_table(text):
        answer, fmt = text.strip(), "table"
    if answer is None and _BARE_NULL.fullmatch(_clean(text)):
        return ParsedResponse(_clean(text), "", True, None, "bare", None)
    if answer is None:
        return ParsedResponse(
            "", "", False,
            "no Answer found (expected <answer>...</answer>, an 'Answer:' section, "
            "or a JSON object with an 'answer' key)",
        )
    if "&" in answer and fmt != "json":
        # the Answer as a reader sees it: an HTML character reference is its character ("SEPTICEMIA &amp;
        # DISSEMINATED INFECTIONS", blind corpus c35); JSON strings carry no HTML
        answer = html.unescape(answer)
    if "#" in answer and fmt == "tags":
        answer = _headed_answer(answer) or answer
    answer = _clean(answer)
    if "\n" in answer and "|" not in answer:  # a CSV/TSV block is a table (module docstring)
        answer = delimited_table(answer) or answer
    if "boxed" in answer or "fbox" in answer:  # a boxed value is the Answer's one reading (match.emphasis rule 3)
        answer = boxed(answer) or answer
    if not answer:
        return ParsedResponse("", reasoning, False, "the Answer is empty", fmt)
    abstained = is_null_answer(answer)
    if answers and abstained:  # a NULL beside a differing committed answer is a hedge, not a NULL
        abstained = all(is_null_answer(a) for a in answers)
    return ParsedResponse(answer, reasoning, abstained, None, fmt, answer_json, answers)
