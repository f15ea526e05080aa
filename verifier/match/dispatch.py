"""Match a parsed Answer against a typed reference answer."""

from __future__ import annotations

import re
from typing import Any

from ..contract import (
    AnswerPolicy,
    BooleanAnswer,
    CountAnswer,
    DatetimeAnswer,
    ListAnswer,
    NumberAnswer,
    QuantityAnswer,
    ReasonCode,
    RecordsAnswer,
    TextAnswer,
)
from .commit import ambiguous
from .datetimes import match_datetime
from .confidence import without_confidence
from .lead import committed_part, json_literal
from .lists import match_list
from .numbers import match_count, match_number, match_quantity
from .records import match_records
from .result import MatchResult, failure
from .scalar import match_scalar
from .text import match_boolean, match_text

#: Markdown strikethrough: struck text is deleted text ("~~7~~ 9" states 9; blind corpus c32b).
_STRUCK = re.compile(r"~~(?=\S)[^~\n]*?~~")

# One table lookup instead of a chain of type tests (hot path); every entry takes
# (answer text, reference, policy, answer JSON, question).
_DISPATCH = {
    QuantityAnswer: lambda t, r, p, j, q: match_quantity(t, r, p),
    NumberAnswer: lambda t, r, p, j, q: match_number(t, r, p),
    CountAnswer: lambda t, r, p, j, q: match_count(t, r, q),
    DatetimeAnswer: lambda t, r, p, j, q: match_datetime(t, r),
    TextAnswer: lambda t, r, p, j, q: match_text(t, r, p.text_threshold, q),
    BooleanAnswer: lambda t, r, p, j, q: match_boolean(t, r),
    ListAnswer: lambda t, r, p, j, q: match_list(t, r, p, j, q),
    RecordsAnswer: lambda t, r, p, j, q: match_records(t, r, p, j),
}


#: A whole Answer in braces or square brackets holding two or more comma- or semicolon-separated items (no
#: ``key: value`` pair: a JSON object is read as one, ``verifier.match.lead``).
_BRACKETED_LIST = re.compile(r"\{[^{}\[\]]*[,;][^{}\[\]]*\}|\[[^{}\[\]]*[,;][^{}\[\]]*\]")


def match_answer(answer_text: str, reference: Any, policy: AnswerPolicy, answer_json: Any = None,
                 columns: tuple[str, ...] = (), question: str = "") -> MatchResult:
    """Compare a submitted Answer with a reference answer under ``policy``.

    Args:
        answer_text: the parsed Answer text (``ParsedResponse.answer_text``).
        reference: a typed answer from ``verifier.contract._answers``.
        policy: the task's ``AnswerPolicy``.
        answer_json: the decoded JSON answer when the response was JSON.
        columns: the reference query's output column names (``verifier.match.lead.reference_columns``),
            which name the answer's field in a JSON object or a ``field: value`` line.
        question: the task's question: a number of a count Answer inside a name it gives ("type 2
            diabetes") is no candidate (``verifier.match.numbers.question_names``).

    Returns:
        A :class:`MatchResult` with reason codes and details. A nested JSON
        structure (``{"a": {"b": 1}}``) for a scalar reference is an
        ambiguous answer (``WRONG_VALUE``). A scalar written as a value with details (a JSON
        object's answer key, a lead line followed by ``field: value`` lines) is judged on the
        value's own part (``verifier.match.lead``). The writer's confidence ("(confidence: 95%)") is no part
        of the Answer (``verifier.match.confidence``). Text struck out in Markdown (``~~7~~ 9``) is
        withdrawn by its writer and is not read; a self-correction ("12.1 -> 12.4", "X, corrected:
        Y") commits to its last value (``verifier.match.aside.after_correction``).
    """
    answer_text = without_confidence(answer_text).strip()  # the writer's confidence is about the answer, not in it
    if "~~" in answer_text:  # what is struck out is withdrawn: never a candidate, never a hedge
        answer_text = _STRUCK.sub(lambda m: " " * len(m.group()), answer_text).strip()
    if answer_json is None and type(reference) not in (ListAnswer, RecordsAnswer):
        # a JSON array in tags is candidates as a JSON response's are (fresh adversary adv10: '[{"value": "S"},
        # {"value": "R"}]' was read as one sentence and paid whichever was right; verifier.parse decodes only a JSON response)
        answer_json = json_literal(answer_text, list)
        if answer_json is None and _BRACKETED_LIST.fullmatch(answer_text.strip()) and ":" not in answer_text:
            # '{HOME, HOME HEALTH CARE}', '[R, S, I]': a set or list of values where one was asked (fresh
            # adversary adv11: paid whichever was right on 19 of 131 text tasks)
            return failure(ReasonCode.WRONG_VALUE, submitted=answer_text[:200],
                           why=ambiguous("a bracketed list of values where one value was asked"))
    if type(reference) not in (ListAnswer, RecordsAnswer):
        got = committed_part(answer_text, answer_json, columns, type(reference) is TextAnswer, question or "")
        if got is not None:
            answer_text, answer_json = got
    if isinstance(answer_json, (dict, list)) and type(reference) not in (ListAnswer, RecordsAnswer):
        if any(isinstance(v, (dict, list)) for v in (answer_json.values() if isinstance(answer_json, dict)
                                                     else answer_json)):
            return failure(ReasonCode.WRONG_VALUE, submitted=answer_text[:200],
                           why=ambiguous("a nested JSON structure where one value was asked"))
    if isinstance(answer_json, list) and type(reference) not in (ListAnswer, RecordsAnswer) and answer_json:
        # a JSON array of scalars where one value was asked: its items are the Answer's candidates
        # ('["4.6 mEq/L", "10.82"]' is two; '["4.6 mEq/L"]' is one), read without the JSON quoting
        answer_text = "; ".join("NULL" if v is None else str(v) for v in answer_json)
    fn = _DISPATCH.get(type(reference))
    if fn is None:
        return match_scalar(answer_text, reference, policy)  # reports the unsupported type
    return fn(answer_text, reference, policy, answer_json, question)
