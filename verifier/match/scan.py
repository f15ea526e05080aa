"""Linear-time scanners over untrusted response text (issue 15, bounded inputs).

Each function here replaces a regular expression whose backtracking is quadratic on adversarial
text, and returns exactly what that expression returned (``tests/test_bounded_inputs.py`` checks
the equivalence on generated text):

- :func:`json_fence_bodies`: the ``{...}`` bodies of Markdown code fences, as
  ``re.finditer(r"```(?:json|JSON)?\\s*(\\{.*?\\})\\s*```", text, re.S)`` gave them (that
  expression scans to the end of the text from every unclosed fence: 80 kB of them took 10 s).
- :func:`strip_fence`: ``re.sub(r"^```[A-Za-z]*\\s*|\\s*```$", "", text)`` (which rescans a
  whitespace run from each of its positions).

"Whitespace" is what ``\\s`` matches in a ``str`` pattern, i.e. ``str.isspace``.
"""

from __future__ import annotations

import re
from bisect import bisect_left

_OPEN = re.compile(r"```(?:json|JSON)?")
_LANG = re.compile(r"[A-Za-z]*")
_FENCE = "```"


def _fence_starts(text: str) -> list[int]:
    """Every index where ```` ``` ```` starts (overlapping ones included, as a regex scan tries them)."""
    out = []
    i = text.find(_FENCE)
    while i != -1:
        out.append(i)
        i = text.find(_FENCE, i + 1)
    return out


def _skip_space(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i].isspace():
        i += 1
    return i


def json_fence_bodies(text: str) -> list[str]:
    """The JSON-object bodies of code fences in ``text``, in order (O(len(text))).

    A body starts at the ``{`` after an opening fence (optionally tagged ``json``/``JSON``,
    then whitespace) and ends at the first ``}`` followed only by whitespace and a fence; bodies
    do not overlap. An opening fence without such an end yields nothing.

    Returns:
        The bodies as strings, ``{`` and ``}`` included (not yet decoded).
    """
    starts = _fence_starts(text)
    if len(starts) < 2:
        return []
    # closers: (index of the '}' right before a fence, ignoring whitespace, that fence's index)
    closer_brace: list[int] = []
    closer_fence: list[int] = []
    for q in starts:
        c = q - 1
        while c >= 0 and text[c].isspace():
            c -= 1
        if c >= 0 and text[c] == "}":
            closer_brace.append(c)
            closer_fence.append(q)
    out: list[str] = []
    resume = 0
    for p in starts:
        if p < resume:
            continue
        m = _OPEN.match(text, p)
        b = _skip_space(text, m.end())  # type: ignore[union-attr]
        if b >= len(text) or text[b] != "{":
            continue  # (without the tag, "```json" is followed by "j", not "{" either)
        k = bisect_left(closer_brace, b + 1)
        if k == len(closer_brace):
            continue
        out.append(text[b: closer_brace[k] + 1])
        resume = closer_fence[k] + 3
    return out


def strip_fence(text: str) -> str:
    """``text`` without a leading fence (with its language tag and whitespace) and a trailing
    fence (with the whitespace before it), in one pass.

    Returns:
        The stripped text (not otherwise trimmed).
    """
    i = 0
    if text.startswith(_FENCE):
        i = _skip_space(text, _LANG.match(text, 3).end())  # type: ignore[union-attr]
    rest = text[i:]
    if rest.endswith(_FENCE):
        return rest[:-3].rstrip()
    if rest.endswith(_FENCE + "\n"):  # "$" also matches before a final newline
        return rest[:-4].rstrip() + "\n"
    return rest
