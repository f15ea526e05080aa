"""Input caps: how large a trajectory ``verify`` reads before it refuses (issue 15, bounded inputs).

A reward that one sampled response can stall or crash is a denial of service on training, so
every ``verify()`` call is bounded: before anything is parsed, the trajectory is measured
against the caps of :class:`InputLimits` (``VerifyConfig.limits``); after parsing, the Answer's
length. Beyond a cap the verdict fails with ``INPUT_TOO_LARGE`` and ``details["input_too_large"]``
names the cap, its limit, the size found and where (ARCHITECTURE.md sections 4 and 10); nothing
else is checked, and it is never ``VERIFIER_ERROR``. Under the caps, parsing and matching are
linear in the input (``benchmarks/bench_adversarial_inputs.py`` measures the slowest
``verify()`` per kind of adversarial response at and above the caps).

Every measure here is O(size) at C speed (``len``, ``str.count``, one ``re.sub``), so refusing a
10 MB response costs microseconds to milliseconds.
"""

from __future__ import annotations

import operator
import re
import unicodedata
from collections import Counter
from functools import lru_cache
from itertools import accumulate, chain, islice
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ._answers import ListAnswer, RecordsAnswer

#: Longest query text accepted, in characters (``verifier.sql``'s allowlist uses it). sqlglot's
#: parse runs in the verifier's process before any DuckDB time limit applies and is not bounded:
#: ``SELECT 1+1+...`` with 60,000 terms took 27.5 s to parse. Real evidence queries are a few
#: hundred to a few thousand characters; longer texts are rejected before they are tokenized.
MAX_QUERY_CHARS = 20_000

_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DELTA = {"[": 1, "{": 1, "]": -1, "}": -1}.__getitem__


class InputLimits(BaseModel):
    """The caps on what ``verify`` reads (frozen; ``VerifyConfig.limits``).

    Each default is far above what an honest episode produces (the committed episode corpus:
    final responses under 1,500 characters, Answers under 200, at most 4 steps, outputs under
    5,000 characters; the environment allows 20 tool calls and shows 8,000 characters per
    output) and low enough that ``verify()`` at the cap takes at most ~50 ms.
    ``max_response_chars`` was 24,000 until 2026-12-02, then 12,000, and is 8,000 since the
    eighth session: the five-unit rule reads a population Noise response in about twenty linear
    passes, and run-on Reasonings took 45-75 ms at 24,000 characters and, on a shared 2-core
    machine, 27-57 ms at 12,000 (slow phases of the machine and one-off pauses on top of about
    20 ms of reading; ``bench_adversarial_inputs.py``); at 8,000, 24-36 ms. The 650 LLM-agent
    episodes played so far (honest and red-team) wrote at most 1,489 characters, under a fifth of it.

    A leading reasoning block (``<think>...</think>``, ``verifier.contract._scratchpad``) is set aside
    before these caps apply and has its own, ``max_reasoning_chars`` (issue 32): reasoning
    models write scratchpads of 10,000-30,000 characters before a short reply.

    Attributes:
        max_reasoning_chars: characters of the leading reasoning block set aside from the
            final response (tags included); the rest is held to ``max_response_chars``.
        max_response_chars: characters of ``Trajectory.final_response`` (after its leading
            reasoning block), and of it with
            compatibility characters expanded one by one (NFKC, as the five-unit rule reads it:
            "²" as "2"; one character, "\ufdfa", expands to 18).
        max_answer_chars: characters of the parsed Answer (Noise tasks, and Clean list and
            records answers).
        max_scalar_answer_chars: characters of the parsed Answer when the Clean reference is
            one value (count, number, quantity, datetime, text, boolean): one value needs no
            more, and a longer Answer is many candidates to read.
        max_json_depth: bracket nesting (``[`` and ``{``, counted over the whole final response,
            strings included) so that no JSON decoder or matcher recurses deeper.
        max_steps: steps in the trajectory (5x the environment's 20 tool calls).
        max_query_chars: characters of each SQL step's code and of each statement a Python
            step recorded in ``Step.sql`` (at most :data:`MAX_QUERY_CHARS`, which the SQL
            allowlist also applies). A step that failed is exempt: it is never evidence and
            its SQL is never parsed.
        max_code_chars: characters of a Python step's code (read with ``ast`` for the SQL it
            ran).
        max_output_chars: characters of each step's recorded ``output`` (and ``error``).
        max_output_cells: cells of each step's recorded structured result (``Step.rows``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    max_reasoning_chars: int = Field(default=64_000, ge=0)
    max_response_chars: int = Field(default=8_000, ge=1)
    max_answer_chars: int = Field(default=16_000, ge=1)
    max_scalar_answer_chars: int = Field(default=2_000, ge=1)
    max_json_depth: int = Field(default=32, ge=1, le=200)
    max_steps: int = Field(default=100, ge=1)
    max_query_chars: int = Field(default=MAX_QUERY_CHARS, ge=1, le=MAX_QUERY_CHARS)
    max_code_chars: int = Field(default=50_000, ge=1)
    max_output_chars: int = Field(default=100_000, ge=1)
    max_output_cells: int = Field(default=500_000, ge=1)

    def check_reasoning(self, chars: int) -> dict[str, Any] | None:
        """The reasoning cap a set-aside block of ``chars`` characters exceeds.

        Args:
            chars: characters of the leading reasoning block (``SetAside.reasoning_chars``).

        Returns:
            ``None`` when it fits, else the exceeded cap as in :meth:`check_trajectory`.
        """
        if chars > self.max_reasoning_chars:
            return _over("max_reasoning_chars", self.max_reasoning_chars, chars, "final_response",
                         "characters in the leading reasoning block")
        return None

    def check_trajectory(self, trajectory: Any) -> dict[str, Any] | None:
        """The first cap ``trajectory`` exceeds, before anything is parsed.

        Args:
            trajectory: a ``Trajectory`` (its ``final_response`` and ``steps`` are read).

        Returns:
            ``None`` when every cap holds, else ``{"cap", "limit", "size", "where", "why"}``
            for the first one exceeded, in the order of the attributes above.
        """
        text = trajectory.final_response
        if len(text) > self.max_response_chars:
            return _over("max_response_chars", self.max_response_chars, len(text), "final_response",
                         "characters in the final response")
        if not text.isascii():
            # the five-unit rule reads compatibility characters expanded, one by one (NFKC: "²" as
            # "2"); one character can become 18 ("\ufdfa"), so the cap holds for the expansion too.
            # Measured per distinct character: NFKD of the whole text would also reorder combining
            # marks (quadratic: 100-200 ms on 12,000 of them) and split Hangul (x2.1).
            expanded = len(text) + sum(n * _nfkc_growth(ch) for ch, n in Counter(_NON_ASCII.findall(text)).items())
            if expanded > self.max_response_chars:
                return _over("max_response_chars", self.max_response_chars, expanded, "final_response",
                             "characters in the final response with compatibility characters expanded (NFKC)")
        if text.count("[") + text.count("{") > self.max_json_depth:  # else the depth cannot exceed it
            depth = nesting_depth(text)
            if depth > self.max_json_depth:
                return _over("max_json_depth", self.max_json_depth, depth, "final_response",
                             "nested brackets in the final response")
        steps = trajectory.steps
        if len(steps) > self.max_steps:
            return _over("max_steps", self.max_steps, len(steps), "steps", "steps in the trajectory")
        for i, step in enumerate(steps):
            over = self._check_step(step, f"steps[{i}]")
            if over is not None:
                return over
        return None

    def _check_step(self, step: Any, where: str) -> dict[str, Any] | None:
        if not step.error:
            if step.kind == "sql" and len(step.code) > self.max_query_chars:
                return _over("max_query_chars", self.max_query_chars, len(step.code), f"{where}.code",
                             "characters in a SQL query")
            for j, sql in enumerate(step.sql):
                if len(sql) > self.max_query_chars:
                    return _over("max_query_chars", self.max_query_chars, len(sql), f"{where}.sql[{j}]",
                                 "characters in a SQL query")
        if step.kind == "python" and len(step.code) > self.max_code_chars:
            return _over("max_code_chars", self.max_code_chars, len(step.code), f"{where}.code",
                         "characters in a Python step's code")
        for name in ("output", "error"):
            value = getattr(step, name)
            if value is not None and len(value) > self.max_output_chars:
                return _over("max_output_chars", self.max_output_chars, len(value), f"{where}.{name}",
                             "characters in a step's recorded output")
        if step.rows is not None:
            cells = sum(map(len, step.rows)) if len(step.rows) <= self.max_output_cells else len(step.rows)
            if cells > self.max_output_cells:
                return _over("max_output_cells", self.max_output_cells, cells, f"{where}.rows",
                             "cells in a step's recorded result")
        return None

    def check_answer(self, answer_text: str, reference: Any) -> dict[str, Any] | None:
        """The Answer cap ``answer_text`` exceeds, after parsing.

        Args:
            answer_text: ``ParsedResponse.answer_text``.
            reference: the task's typed reference answer (``None`` on Noise tasks).

        Returns:
            ``None`` when the Answer fits, else the exceeded cap as in :meth:`check_trajectory`.
        """
        if reference is None or isinstance(reference, (ListAnswer, RecordsAnswer)):
            cap, limit = "max_answer_chars", self.max_answer_chars
        else:
            cap, limit = "max_scalar_answer_chars", self.max_scalar_answer_chars
        if len(answer_text) > limit:
            return _over(cap, limit, len(answer_text), "answer", "characters in the Answer")
        return None


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


@lru_cache(maxsize=65536)
def _nfkc_growth(ch: str) -> int:
    """How many characters NFKC adds to ``ch`` alone (0 for most; 17 for "\ufdfa")."""
    return max(0, len(unicodedata.normalize("NFKC", ch)) - 1)


def _over(cap: str, limit: int, size: int, where: str, what: str) -> dict[str, Any]:
    return {"cap": cap, "limit": limit, "size": size, "where": where,
            "why": f"{size:,} {what}; at most {limit:,} are verified (VerifyConfig.limits.{cap})"}


def nesting_depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` brackets in ``text`` (a closing bracket without an opening one
    is ignored; the bracket kinds are not paired). O(len(text)) at C speed.

    Returns:
        The depth as an int (0 for text without brackets; ``[[1]]`` is 2).
    """
    brackets = _NOT_BRACKET.sub("", text)
    if not brackets:
        return 0
    levels = list(accumulate(map(_DELTA, brackets)))
    # the clamped level (never below zero) is the running sum minus its running minimum (<= 0)
    floor = islice(accumulate(chain((0,), levels), min), 1, None)
    return max(map(operator.sub, levels, floor))
