"""Matching a submitted Answer with a typed reference, one module per type:
``numbers`` (numbers, counts, quantities), ``datetimes``, ``text`` (text,
booleans), ``lists``, ``records``; ``extract`` holds the typed extraction
from text and ``dispatch.match_answer`` picks the matcher.

Layer: matching owns the comparison of a Clean Answer with its reference; it imports only
``verifier.contract`` and ``verifier.units``.
"""

from .result import MatchResult

__all__ = ["MatchResult", "match_answer"]


def match_answer(*args, **kwargs):  # noqa: D103 - documented in dispatch
    from .dispatch import match_answer as _impl

    return _impl(*args, **kwargs)


match_answer.__doc__ = "See :func:`verifier.match.dispatch.match_answer`."
