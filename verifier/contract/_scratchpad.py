"""A reasoning model's scratchpad, set aside before the response is read (issue 32, point 1).

Reasoning models (Qwen3, DeepSeek-R1, QwQ, Kimi K2, ...) open their output with a thinking
block: ``<think>...</think>`` (``<thinking>`` for some prompts, ``◁think▷...◁/think▷`` for
Kimi). Serving stacks split it off before the user sees the reply: vLLM's reasoning parsers
(``deepseek_r1``, ``qwen3``) and SGLang's move it into the message's ``reasoning_content``
(vLLM >= 0.11: ``reasoning``) field, and the DeepSeek-R1 chat template writes the opening
``<think>`` itself, so the generated text begins inside the block and only ``</think>``
marks its end. A framework that hands over the raw text (TRL, verl) leaves the block in
``Trajectory.final_response``.

The response the user sees is what is judged, so :func:`set_aside` removes such a leading
block before anything else reads the response: it is never an Answer, never a Reasoning,
never a disclosure on Noise, and it counts against its own cap
(``InputLimits.max_reasoning_chars``), not the response cap. Chat messages' separate
``reasoning_content`` / ``reasoning`` fields and Anthropic ``thinking`` content parts are
never read in the first place (``verifier.contract.from_chat_messages`` reads ``content``'s
text only).

Only a *leading* block is set aside (after optional whitespace; several in a row are one
block): a ``<think>`` tag in the middle of the reply is shown to the user and read like the
rest. A block opened and never closed is all scratchpad: nothing visible remains (the
response is then unparseable, as vLLM returns no ``content``). ``<reasoning>`` is not a
scratchpad tag here: it is this project's own visible Reasoning section (``verifier.parse``).

HTML comments (``<!-- ... -->``) are invisible in rendered Markdown: :func:`strip_comments`
removes them where an Answer is read (Clean tasks), so a value hidden in one is never the
Answer (``<!-- R --> W`` is scored as W). On Noise tasks comments are kept: a value hidden
in one can only cost (a disclosure or a non-NULL Answer), never gain.

Every scan is linear (``str.find`` and one compiled pattern without nested repetition).
"""

from __future__ import annotations

import re
from typing import NamedTuple

#: Opening and closing marks of a scratchpad, lower-cased (``<think>`` and ``<thinking>``
#: from the Qwen3/DeepSeek-R1 chat templates and prompts; ``◁think▷`` from Kimi K2).
_PAIRS = (("<think>", "</think>"), ("<thinking>", "</thinking>"), ("\u25c1think\u25b7", "\u25c1/think\u25b7"))
_SPACE = re.compile(r"\s*")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)


class SetAside(NamedTuple):
    """A final response split into what the user sees and the scratchpad before it.

    Attributes:
        visible: the response after the leading scratchpad (unchanged when there is none).
        reasoning_chars: characters set aside (tags included; 0 when none).
    """

    visible: str
    reasoning_chars: int


def _block_end(text: str, low: str, pos: int) -> int:
    """Index just past a scratchpad block opening at ``pos`` (after whitespace) of ``text``
    (``low`` is ``text.lower()``), else ``pos``. At ``pos`` 0 a close without any opening tag
    before it also ends a block (the template wrote the opening tag)."""
    start = _SPACE.match(text, pos).end()  # type: ignore[union-attr]  # always matches
    for open_tag, close_tag in _PAIRS:
        if low.startswith(open_tag, start):
            end = low.find(close_tag, start + len(open_tag))
            return len(text) if end < 0 else end + len(close_tag)
    if pos == 0:
        for open_tag, close_tag in _PAIRS:
            end = low.find(close_tag)
            if end >= 0 and not any(low.find(o, 0, end) >= 0 for o, _ in _PAIRS):
                return end + len(close_tag)
    return pos


def set_aside(text: str) -> SetAside:
    """Split ``text`` (a final response) into the visible reply and a leading scratchpad.

    Args:
        text: ``Trajectory.final_response`` as written.

    Returns:
        :class:`SetAside`: ``visible`` (leading whitespace of the rest stripped when a block
        was removed) and ``reasoning_chars`` (characters removed; 0 and ``text`` itself when
        the response does not open with a scratchpad). Several leading blocks in a row are
        all set aside. Never raises; linear in ``len(text)``.
    """
    if "think" not in text and "THINK" not in text and "Think" not in text:
        return SetAside(text, 0)  # the hot path: no scratchpad mark at all
    low = text.lower()
    cut = 0
    while cut < len(text):
        end = _block_end(text, low, cut)
        if end == cut:
            break
        cut = end
    if cut == 0:
        return SetAside(text, 0)
    return SetAside(text[cut:].lstrip(), cut)


def strip_comments(text: str) -> str:
    """``text`` without HTML comments (``<!-- ... -->``; an unclosed one runs to the end).

    Args:
        text: a (visible) final response.

    Returns:
        The text with every comment replaced by one space (``text`` itself when it holds none).
    """
    if "<!--" not in text:
        return text
    return _COMMENT.sub(" ", text)
