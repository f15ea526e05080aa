"""Match a parsed Answer against a typed reference answer."""

from __future__ import annotations

from typing import Any

from ..answers import ListAnswer, RecordsAnswer
from ..task import AnswerPolicy
from .lists import match_list
from .records import match_records
from .result import MatchResult
from .scalar import match_scalar


def match_answer(answer_text: str, reference: Any, policy: AnswerPolicy, answer_json: Any = None) -> MatchResult:
    """Compare a submitted Answer with a reference answer under ``policy``.

    Args:
        answer_text: the parsed Answer text (``ParsedResponse.answer_text``).
        reference: a typed answer from ``verifier.answers``.
        policy: the task's ``AnswerPolicy``.
        answer_json: the decoded JSON answer when the response was JSON.

    Returns:
        A :class:`MatchResult` with reason codes and details.
    """
    kind = type(reference)
    if kind is RecordsAnswer:
        return match_records(answer_text, reference, policy, answer_json)
    if kind is ListAnswer:
        return match_list(answer_text, reference, policy, answer_json)
    return match_scalar(answer_text, reference, policy)
