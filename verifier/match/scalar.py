"""Dispatch a scalar reference to its matcher."""

from __future__ import annotations

from ..contract import (
    AnswerPolicy,
    BooleanAnswer,
    CountAnswer,
    DatetimeAnswer,
    NumberAnswer,
    QuantityAnswer,
    ReasonCode,
    TextAnswer,
)
from .datetimes import match_datetime
from .numbers import match_count, match_number, match_quantity
from .result import MatchResult, failure
from .text import match_boolean, match_text


def match_scalar(text: str, ref: object, policy: AnswerPolicy) -> MatchResult:
    """Compare answer text with a scalar reference of any type.

    Args:
        text: the submitted Answer (or one list item).
        ref: a Quantity/Number/Count/Datetime/Text/Boolean answer.
        policy: the task's answer policy.

    Returns:
        The :class:`MatchResult`.
    """
    kind = type(ref)
    if kind is QuantityAnswer:
        return match_quantity(text, ref, policy)
    if kind is CountAnswer:
        return match_count(text, ref)
    if kind is NumberAnswer:
        return match_number(text, ref, policy)
    if kind is DatetimeAnswer:
        return match_datetime(text, ref)
    if kind is TextAnswer:
        return match_text(text, ref, policy.text_threshold)
    if kind is BooleanAnswer:
        return match_boolean(text, ref)
    return failure(ReasonCode.WRONG_TYPE, why=f"unsupported reference type {kind.__name__}")
