"""The rules' words and patterns (``rules/noise.toml``) compiled for speed, shared by the Noise
checks that read a whole response (``_small_cell``, ``_disguise``, ``_back_reference``,
``_reasoning``).

Issue 15 (bounded inputs): every such pass runs over the Reasoning, up to the response cap.
Python's ``re`` scans fast only for a pattern that opens with a literal or a set of first
characters; one that opens with a word boundary (``\\bfewer than 5\\b``, ``\\b(?:under|below|...)``)
is tried at every position, several milliseconds per pass on a response at the cap. So:

* ``initials`` puts a look-ahead for the words' first characters in front of a word alternation;
* ``Screened`` skips a search whose text lacks the literal every match must hold.

Neither changes what a pattern matches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

try:  # the parser behind ``re`` (Python 3.11+); without it, no screen (plain searches)
    from re import _parser as _sre_parse
except ImportError:  # pragma: no cover
    _sre_parse = None


def alternation(words: Iterable[str]) -> str:
    """``words`` escaped and joined by ``|``, longest first (so "more than" is tried before "more").

    Args:
        words: literal words or phrases (``str``); duplicates are dropped.

    Returns:
        The alternation, to be wrapped by the caller (``(?:...)``).
    """
    return "|".join(re.escape(w) for w in sorted(dict.fromkeys(words), key=len, reverse=True))


def initials(*groups: Iterable[str], digits: bool = False) -> str:
    r"""A look-ahead for the first characters of the words in ``groups`` (both cases), for the
    start of a pattern that can only begin with one of those words (or, with ``digits``, a digit).

    Args:
        groups: word lists (``str``).
        digits: also allow a digit first (``\d``: any Unicode decimal digit, "٨", "२").

    Returns:
        ``(?=[...])``, or ``""`` when no word is given and ``digits`` is False (nothing to narrow).

    Raises:
        ValueError: an empty word (it would start anywhere), naming its group's position.
    """
    chars: dict[str, None] = {}
    for i, words in enumerate(groups):
        for w in words:
            if not w:
                raise ValueError(f"initials: group {i} holds an empty word")
            for c in (w[0], w[0].lower(), w[0].upper()):
                chars[re.escape(c)] = None
    if digits:
        chars[r"\d"] = None  # any Unicode digit, as ``\d`` itself (not only 0-9)
    return "(?=[" + "".join(chars) + "])" if chars else ""


_LITERAL = _sre_parse.LITERAL if _sre_parse is not None else None


def required_literal(source: str) -> str:
    """The longest run of literal characters at the top level of the pattern ``source``: a
    substring every match holds ("fewer than 5" for ``\\bfewer than 5\\b``, "dose" for ``\\bdoses?\\b``).

    Args:
        source: a regular expression, compiled without flags.

    Returns:
        The run, or ``""`` when there is none, the pattern ignores case, or the parser is not
        available.
    """
    if _sre_parse is None:
        return ""
    parsed = _sre_parse.parse(source)
    if parsed.state.flags & re.IGNORECASE:
        return ""
    best, run = "", []
    for op, arg in list(parsed) + [(None, None)]:
        if op is _LITERAL:
            run.append(chr(arg))
            continue
        if len(run) > len(best):
            best = "".join(run)
        run = []
    return best


class Screened:
    """A compiled pattern that searches only texts holding its ``required_literal``.

    Attributes:
        pattern: the compiled pattern (``re.Pattern[str]``).
        literal: the substring every match holds (``""``: always search).
    """

    __slots__ = ("pattern", "literal")

    def __init__(self, source: str) -> None:
        """Compile ``source`` (no flags). Raises ``re.error`` for an invalid pattern."""
        self.pattern = re.compile(source)
        self.literal = required_literal(source)

    def search(self, text: str) -> re.Match[str] | None:
        """``pattern.search(text)``, or ``None`` at once when ``text`` lacks the literal."""
        if self.literal and self.literal not in text:
            return None
        return self.pattern.search(text)

    def __repr__(self) -> str:
        return f"Screened({self.pattern.pattern!r})"
