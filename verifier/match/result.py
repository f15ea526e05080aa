"""The outcome of comparing a submission with a reference."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..contract import ReasonCode


class MatchResult(NamedTuple):
    """Whether a submitted answer matches the reference, and why not.

    Attributes:
        ok: the submission matches.
        reasons: reason codes when it does not (empty when ``ok``).
        details: what was compared with what (JSON-serialisable).
    """

    ok: bool
    reasons: tuple[ReasonCode, ...]
    details: dict[str, Any]


def success(**details: Any) -> MatchResult:
    """A match, with details."""
    return MatchResult(True, (), details)


def failure(*reasons: ReasonCode, **details: Any) -> MatchResult:
    """A mismatch with its reason codes and details."""
    return MatchResult(False, tuple(reasons), details)
