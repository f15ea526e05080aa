"""What a scalar Answer commits to when it carries details (issue 32, blind corpus of 2026-12-04).

Agents that write structured or clinical answers state the value once and then its details:

* a JSON object with the value under an answer key and context beside it:
  ``{"value": 5.35, "unit": "hours", "admissions": 5}``;
* a lead line holding the value, then ``field: value`` lines of details:
  ``8 distinct patients with ...`` / ``patients: 8`` / ``admissions: 9 (one patient coded twice)``;
* a Markdown table of exactly one data row (one record: its header names the fields), read as the
  JSON object ``{header: cell}`` (blind corpus c32b: ``| care_unit | in_time |`` / ``| Observation |
  2161-02-23 22:29:00 |`` for the first care unit). A table of two or more data rows is several
  records, judged whole (a hedge where one value was asked).

Both commit to one place: the answer key (``value``, ``answer``, ``result``, or the reference query's
output column, e.g. ``drg_mortality``; with ``unit``/``units``), else, for a text value, the detail line labelled
with the reference's column (``location: Right Metacarpal``), else the lead line. ``committed_part`` returns that part alone, and the ordinary matchers judge it with
their own rules (a lead line holding two candidates is still a hedge). Exactly one place is read, so a
hedging policy cannot gain: a second value in the details is never a candidate, and a right value
that stands only in the details never rescues a wrong lead. The rule does not apply (the whole Answer
is judged as before) when a detail line's label is a hedge word (``alternatively: 14.9``), when the
lead line is empty of any value, or when the JSON object has no answer key.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

import sqlglot
import sqlglot.errors

from .aside import SELF_CORRECTION, correction_label
from .commit import alternative_word, is_context_number, mask_context, null_beside

#: JSON keys that name the answer itself (the rest of the object is context).
#: ``impression`` and ``conclusion`` are the conclusion sections of a clinical report (the radiology report's
#: IMPRESSION under its FINDINGS, ACR practice parameter for communication of diagnostic imaging findings; a
#: pathology or consult report's CONCLUSION): the findings above them are the value's details (blind corpus c45,
#: an informaticist writing "FINDINGS: ... / IMPRESSION: 12 ICU stays": 5 of 6 right answers lost).
ANSWER_KEYS = ("value", "answer", "result", "impression", "conclusion")
#: JSON keys that carry the answer's unit.
UNIT_KEYS = ("unit", "units")
#: CDISC SDTM findings variables (SDTM Implementation Guide, findings class): a result as collected (--ORRES) or
#: standardised (--STRESC character, --STRESN numeric), its unit --ORRESU / --STRESU, each after the two-letter
#: domain code (LBSTRESN, VSORRES). A clinical-trials data manager writes an answer as such a record ("LBTESTCD=51301;
#: LBTEST=White Blood Cells; LBSTRESN=3.2; LBSTRESU=K/uL": blind corpus c46, 3 of 8 right answers lost).
_SDTM_RESULT = re.compile(r"[a-z]{2}(?:orres|stres[cn])")
_SDTM_UNIT = re.compile(r"[a-z]{2}(?:orresu|stresu)")

# ``label: value`` (a label of words, digits, spaces, ``_-/()%,`` (MIMIC-IV labels hold commas: "Protein, Total"), at most 48 characters, then ``:`` or ``=``)
_LABEL_LINE = re.compile(r"^\s*(?:[-*•]\s*)?\**(?P<label>[A-Za-z][\w ()/%,-]{0,47}?)\**\s*[:=]\s*(?P<value>\S.*)$")
#: the same, public (``verifier.parse`` reads an answer key's NULL in ``field: value`` lines).
LABEL_LINE = _LABEL_LINE


#: a YAML comment at the end of a field's value ("R   # resistant"): whitespace, ``#``, whitespace
_YAML_COMMENT = re.compile(r"\s+#\s.*$")
_QUOTED = re.compile(r"^(?P<q>[\"'`])(?P<v>.*)(?P=q)$")


def field_block(text: str) -> dict[str, str] | None:
    """The record an Answer spells when every line of it is a ``field: value`` line (a YAML block or a list of
    fields, no lead phrase; blind corpus c41: "interpretation: R   # resistant" over the organism, antibiotic and
    specimen lines), or its one line is such fields separated by semicolons (a CDISC SDTM record "LBSTRESN=3.2;
    LBSTRESU=K/uL", blind corpus c46), as ``{field: value}`` with a value's YAML quoting and trailing comment
    removed; ``None`` unless there are two lines or more and every field is named once (a field named
    twice offers two values: no record). A record is read as the JSON object it spells would be, so it
    commits where that object would (``committed_part``) and a hedge gains nothing."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) == 1 and ";" in lines[0]:
        lines = [part for part in lines[0].split(";") if part.strip()]  # "A=1; B=2": one line of fields (c46)
    if len(lines) < 2:
        return None
    out: dict[str, str] = {}
    seen: set[str] = set()  # the fields named so far, normalised
    for line in lines:
        m = _LABEL_LINE.match(line)
        if m is None:
            return None
        label, value = m["label"].strip(), _YAML_COMMENT.sub("", m["value"]).strip()
        quoted = _QUOTED.match(value)
        value = quoted["v"] if quoted else value
        if _norm(label) in seen or not value:
            return None
        seen.add(_norm(label))
        out[label] = value
    return out


def json_literal(text: str, kind: type) -> Any | None:
    """``text`` decoded as a JSON object (``kind`` dict) or array (``kind`` list) when it is one whole, else
    ``None`` (at most 20,000 characters are decoded)."""
    s = text.strip()
    ends = ("{", "}") if kind is dict else ("[", "]")
    if not (s.startswith(ends[0]) and s.endswith(ends[1])) or len(s) > 20_000:
        return None
    try:
        value = json.loads(s)
    except ValueError:
        return None
    return value if isinstance(value, kind) else None


def _json_object(text: str, answer_json: Any) -> dict | None:
    return answer_json if isinstance(answer_json, dict) else json_literal(text, dict)


_TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-{0,}:?\s*\|?\s*$")


#: the environment's own table: cells separated by `` | `` with no outer pipes, and a row count under it
_TOOL_ROW = re.compile(r"^\s*([^|\n]+(?:\s\|\s[^|\n]+)+?)\s*$")
_ROW_COUNT = re.compile(r"^\s*\(\d+ rows?\)\s*$")


def _one_row_table(text: str) -> dict | None:
    """``{header: cell}`` of a table with a header and exactly one data row: a Markdown table (a rule line under
    the header), or the tool output's own format pasted as the Answer ("location | n" over "Left Antecubital |
    12", an optional "(1 row)" under it: blind corpus c42)."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) == 3 and _ROW_COUNT.match(lines[2]):
        lines = lines[:2]
    if len(lines) == 2 and all(_TOOL_ROW.match(ln) for ln in lines):
        head, cells = ([c.strip() for c in ln.split(" | ")] for ln in lines)
    else:
        if len(lines) != 3 or not _TABLE_RULE.match(lines[1]):
            return None
        rows = [_TABLE_ROW.match(lines[i]) for i in (0, 2)]
        if not all(rows):
            return None
        head, cells = ([c.strip().strip("*`").strip() for c in r.group(1).split("|")] for r in rows if r)
    if len(head) != len(cells) or not all(head) or len(set(map(_norm, head))) != len(head):
        return None
    return dict(zip(head, cells))


def _words(name: str) -> list[str]:
    return [w.casefold() for w in re.split(r"[\W_]+", name) if w]


def _norm(name: str) -> str:
    return re.sub(r"[\W_]+", "", name).casefold()


def _from_json(obj: dict, columns: tuple[str, ...]) -> str | None:
    if any(isinstance(k, str) and _offers_alternative(k.replace("_", " ")) for k in obj):
        return None  # '{"answer": A, "alternative": B}' offers a second candidate (fresh adversary adv6)
    keys = {_norm(k): k for k in obj if isinstance(k, str)}
    named = [keys[n] for n in ANSWER_KEYS if n in keys] + [k for n, k in keys.items() if _SDTM_RESULT.fullmatch(n)]
    if len(named) > 1 and len({_norm(str(obj[k])) for k in named}) == 1:
        named = named[:1]  # the same value under two answer keys (--STRESC and --STRESN) offers no second one
    if len(named) == 1 and not isinstance(obj[named[0]], (dict, list)) and obj[named[0]] is not None:
        columns = ()  # the answer key commits; the reference's other columns beside it are details
        # (blind corpus c39: '| admissionid | item | chart_time | value | unit |' for a value with its time)
    # a key naming the reference's column: every word of the column's name is a word of the key
    # (``drg_mortality`` for a column ``mortality``); unit keys carry the unit, never the value
    wanted = [set(_words(c)) for c in columns if _norm(c) not in UNIT_KEYS and _words(c)]
    exact = [keys[_norm(c)] for c in columns if _norm(c) in keys and _norm(c) not in UNIT_KEYS]
    named += exact or [k for k in obj if isinstance(k, str) and _norm(k) not in UNIT_KEYS
                       and any(w <= set(_words(k)) for w in wanted)]
    named = list(dict.fromkeys(named))
    if len(named) != 1:
        return None  # none, or two answer keys: the object is judged whole
    value = obj[named[0]]
    if isinstance(value, (dict, list)) or value is None:
        return None
    unit = next((obj[keys[k]] for k in (*UNIT_KEYS, *filter(_SDTM_UNIT.fullmatch, keys))
                 if k in keys and isinstance(obj[keys[k]], str)), None)
    text = value if isinstance(value, str) else json.dumps(value)
    return f"{text} {unit}" if unit else text


def _field_rows(details: list[str]) -> list[tuple[str, str]] | None:
    """``(label, value)`` of the detail lines: ``label: value`` lines, or the rows of one vertical
    two-column Markdown table (a header such as ``| field | value |``, a rule, then one field per row:
    c34 agent C's records under a lead value). ``None`` when any line is neither."""
    if len(details) >= 3 and _TABLE_RULE.match(details[1]) and all(_TABLE_ROW.match(d) for d in details[:1] + details[2:]):
        rows = [[c.strip().strip("*`").strip() for c in _TABLE_ROW.match(d).group(1).split("|")] for d in details[2:]]
        return [(r[0], r[1]) for r in rows] if all(len(r) == 2 and r[0] for r in rows) else None
    labels = [_LABEL_LINE.match(ln) for ln in details]
    return [(m["label"], m["value"]) for m in labels if m] if all(labels) else None


#: a section heading of notes under the lead ("Assumptions:", "**Notes:**"): words, then a colon ending the line
_HEADING = re.compile(r"^\s*[#*_]*\s*(?P<label>[A-Za-z][\w ()/-]{0,38}?)\s*[*_]*:\s*[*_]*\s*$")
#: an item of such a section: a bullet or a numbered item
_ITEM = re.compile(r"^\s*(?:[-*•+]|\d{1,2}[.)])\s+\S")


def _notes(details: list[str]) -> list[tuple[str, str]] | None:
    """The ``(label, value)`` rows of detail lines, where a section of notes may stand among them: a heading ending
    in a colon ("Assumptions:") and the bulleted items under it (blind corpus c42: "HOME HEALTH CARE" over
    "Assumptions:" / "- Source: admissions.discharge_location" / "- Admission matched by admissionid"). The heading
    and its items are rows of context (``(heading, item)``), so an alternative in either keeps the whole Answer
    judged. ``None`` when a line is none of these."""
    rows: list[tuple[str, str]] = []
    heading: str | None = None
    for line in details:
        head = _HEADING.match(line)
        if head is not None:
            heading = head["label"]
            rows.append((heading, ""))
        elif heading is not None and _ITEM.match(line):
            rows.append((heading, line.strip()))
        else:
            heading = None
            row = _field_rows([line])
            if row is None:
                return None
            rows += row
    return rows


def _from_lines(text: str, columns: tuple[str, ...]) -> str | None:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) < 2:
        return None
    lead, details = lines[0], lines[1:]
    fields = _field_rows(details)
    if fields is None:
        fields = _notes(details)
        if fields is None:
            return None
        if any(_SENTENCE_ALTERNATIVE.search(v) or SELF_CORRECTION.search(" " + v) for _, v in fields):
            return None  # a note offering another value ("- or 9 if the ED stay counts") is a second candidate
    if any(_offers_alternative(label) for label, _ in fields):
        return None  # 'alternatively: 14.9' is a second candidate, 'Final: 14.9' a correction, not a detail
    wanted = {_norm(c) for c in columns}
    named = [value for label, value in fields if _norm(label) in wanted]
    head = _LABEL_LINE.match(lead)
    if named and head is not None and _norm(head["label"]) in wanted:
        return None  # the reference's field named twice ("interpretation: S" then "interpretation: R"): two values
    if len(named) == 1:
        return named[0].strip()
    if not re.search(r"\w", _LABEL_LINE.sub(r"\g<value>", lead)):
        return None
    return lead


#: An answer label opening the Answer ("Final answer:", "**Answer:**", "Result =").
_ANSWER_LABEL = re.compile(r"(?i)^\s*[*_]{0,2}(?:final\s+answer|answer|result)[*_]{0,2}\s*[:=]\s*[*_]{0,2}")
#: A first sentence that is the value itself, starting with its digits ("2175-03-22 10:32:00. This is the chart
#: time of ...", "3 (major). This is the APR-DRG risk of mortality ...": an over-explaining agent, blind corpus
#: c38) commits as a labelled one does: the value is its label. Up to three words the question uses may name it
#: first ("Median 5.35 hours ...", "Potassium 5.6 mmol/L ...": blind corpus c45, a teaching physician).
_BARE_VALUE_LEAD = re.compile(r"(?P<named>(?:[A-Za-z][\w'-]*\s+){0,3}?)(?=[*_]{0,2}[-+−–]?\d)")
#: After a value that opens the Answer, an apposition describes it: a spaced dash, a colon, a semicolon or "i.e."
#: ("32.07 hours (32 h 4 min): ED out time ...", "2148-08-17 08:38:00 — first 'Multivitamins' dose after ...",
#: "7 patients ... — 7 admissions, one per patient"; blind corpus c45). The lead ends there or at its sentence's end.
#: Not before a number: "5 – 6", "5 - 6" are a range, two candidates, and "5: 6" offers a second.
_APPOSITION = re.compile(r"(?:\s+[—–]\s+|\s+-{1,2}\s+|:\s+|;\s+|,?\s+i\.\s?e\.,?\s)(?![(\s]*[-+−~≈]?\d)")
#: The end of the labelled sentence: a period, then a space and a capital letter (not a decimal point).
_SENTENCE_END = re.compile(r"\.[*_]{0,2}\s+(?=[*_]{0,2}[A-Z])")
#: What makes a following sentence a second candidate rather than a detail: an alternative, a condition or
#: uncertainty ("Final answer: 12. If Lorazepam is included it would be 13"); a plain negation describes
#: what was left out ("ICU input events are not included", blind corpus c35) and stays a detail.
_SENTENCE_ALTERNATIVE = re.compile(
    r"(?i)\b(?:or|either|maybe|perhaps|possibly|probably|likely|might|may|could|would|unsure|uncertain|unclear|"
    r"guess\w*|presumably|alternatively|otherwise|unless|if|instead|rather|actually|"
    r"correct(?:ed|ion|ly)?|mistaken?|wrong|revised?|amended)\b|\bnot\b[^.;]*\bbut\b|\bin\s+fact\b|±|\?"
    # an approximation word qualifies the number after it ("roughly 0 to +1 L is common": a norm, blind corpus c45);
    # without one it qualifies the Answer ("This count is approximate")
    r"|\b(?:approximat\w*|roughly)\b(?!\s*[~≈]?\s*[-+−]?\d)")


def _offers_alternative(label: str) -> bool:
    """A detail's label (or JSON key) that offers a second candidate: an alternative ("alternatively",
    "alternative"), a condition ("if recounted", "would be"), a correction ("Final", "Correction"); a
    comparison that qualifies what the detail counts ("<=180 days") does not."""
    return alternative_word(label) is not None or bool(_SENTENCE_ALTERNATIVE.search(label)) or bool(correction_label(label))


def _from_labelled_sentence(text: str, question: str = "") -> str | None:
    """A labelled first sentence followed by sentences of detail (blind corpus c35: "Final answer: 12
    patients. This counts only eMAR events recorded as 'Administered' ...; drip boluses are not
    included"), or a short first sentence that is the value itself ("3 (major). This is the APR-DRG risk
    of mortality ...", c38): the first sentence commits, as a lead line does, unless a later sentence
    offers an alternative, a condition or a correction (then the whole Answer is judged, ``None``)."""
    label = _ANSWER_LABEL.match(text)
    bare = None if label is not None else _BARE_VALUE_LEAD.match(text)
    if bare is not None and ((bare["named"] and not _named_by_question(bare["named"], question))
                             or is_context_number(text, bare.end())):
        bare = None  # words the question does not use, or an identifier ("APR DRG 021 ...: drg_mortality 3")
    label = label or bare
    if label is None:
        return None
    end = _SENTENCE_END.search(text, label.end())
    if bare is not None:  # the value opens the Answer: an apposition after it ends the lead too
        apposition = _APPOSITION.search(text, label.end(), end.start() if end else len(text))
        end = apposition or end
    if end is None:
        return None
    details = text[end.end():]
    if _SENTENCE_ALTERNATIVE.search(details) or SELF_CORRECTION.search(" " + details) or correction_label(details) \
            or null_beside(mask_context(details)):  # "4.1 mEq/L; N/A": a value and an abstention
        return None
    lead = text[label.end():end.start()].strip()
    return lead if re.search(r"\w", lead) else None


def _named_by_question(words: str, question: str) -> bool:
    """Whether every word of ``words`` (the words before a value that opens the Answer) is a word of the question."""
    asked = set(_words(question))
    return bool(asked) and all(w in asked for w in _words(words))


def committed_part(text: str, answer_json: Any = None, columns: tuple[str, ...] = (),
                   text_answer: bool = False, question: str = "") -> tuple[str, Any] | None:
    """The part of a scalar Answer that commits to its value (module docstring), else ``None``.

    Args:
        text: the parsed Answer text.
        answer_json: the decoded JSON answer of a JSON response (``ParsedResponse.answer_json``), or
            ``None`` (a JSON object inside tags is decoded here).
        columns: the reference query's output column names (``reference_columns``), or ``()``.
        text_answer: the reference is a text value: only then does a detail line labelled with the
            reference's column commit (a prose lead describes a text value in other words, while a
            lead holding a number states it; ``value_numeric: 13.2`` drops the lead's unit).
        question: the task's question: words of it may name a value that opens the Answer ("Median 5.35 hours").

    Returns:
        ``(text, None)``: the answer key's value with its unit (``"5.35 hours"``), or the lead line;
        ``None`` when the Answer is not written as a value with details.
    """
    obj = _json_object(text, answer_json)
    if obj is None:
        obj = _one_row_table(text)
    if obj is not None:
        got = _from_json(obj, columns)
        return None if got is None else (got, None)
    block = field_block(text)
    got = None if block is None else _from_json(block, columns)
    if got is not None:
        return got, None  # a YAML block: its answer key or the reference's field commits; else its lead line
    if "\n" not in text.strip():
        got = _from_labelled_sentence(text, question)
        return None if got is None else (got, None)
    got = _from_lines(text, columns if text_answer else ())
    return None if got is None else (got, None)


@lru_cache(maxsize=4096)
def reference_columns(sql: str) -> tuple[str, ...]:
    """The output column names of a reference query (sqlglot, DuckDB dialect), ``()`` when it does
    not parse or names none; memoised (one parse per reference)."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError):
        return ()
    return tuple(n for n in getattr(tree, "named_selects", ()) if n)
