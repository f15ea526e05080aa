"""Optional LLM rewriting of question text (off by default).

An OpenAI-compatible endpoint (through ``instructor``, structured output)
paraphrases each question. The rewrite must keep the reference SQL's meaning,
checked deterministically: every *anchor* of the task (the text of each
parameter value: ids, codes, labels, thresholds, units named in the question)
must still appear, and no number may appear that the original did not contain.
A rewrite failing the check, or any endpoint error, keeps the template text.
Both questions of a pair are rewritten or neither is.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from ..contract import Task
from .sqltext import text_value

_NUM = re.compile(r"\d+(?:\.\d+)?")


class RewriteConfig(BaseModel):
    """Where and how to rewrite.

    Attributes:
        base_url: OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:8000/v1``.
        model: model name sent to the endpoint.
        api_key: key sent to the endpoint (local servers ignore it).
        timeout_s: per-request time limit in seconds.
    """

    base_url: str
    model: str = "rewriter"
    api_key: str = "not-needed"
    timeout_s: float = Field(default=20.0, gt=0)


class Rewritten(BaseModel):
    """The structured output asked of the model."""

    question: str = Field(description="The same clinical question, reworded; keep every identifier, code, number and unit.")


def anchors(task: Task) -> list[str]:
    """Texts that a faithful rewrite of ``task.question`` must keep (values of
    the task's params as they appear in the question)."""
    out = []
    for v in task.params.values():
        s = text_value(v)
        if s and s.lower() in task.question.lower():
            out.append(s)
    return out


def faithful(original: str, rewritten: str, required: list[str]) -> bool:
    """True when ``rewritten`` keeps every anchor and adds no new number."""
    low = rewritten.lower()
    if not rewritten.strip() or any(a.lower() not in low for a in required):
        return False
    return set(_NUM.findall(rewritten)) <= set(_NUM.findall(original))


def _client(config: RewriteConfig) -> Any:
    import instructor
    from openai import OpenAI

    raw = OpenAI(base_url=config.base_url, api_key=config.api_key, timeout=config.timeout_s, max_retries=0)
    return instructor.from_openai(raw, mode=instructor.Mode.JSON)


def _ask(client: Any, config: RewriteConfig, question: str) -> str | None:
    try:
        out = client.chat.completions.create(
            model=config.model,
            response_model=Rewritten,
            max_retries=0,
            messages=[
                {"role": "system", "content": "Reword clinical database questions. Keep every identifier, code, number, unit and condition exactly."},
                {"role": "user", "content": question},
            ],
        )
        return out.question
    except Exception:  # noqa: BLE001 - any endpoint/parse failure keeps the template text
        return None


def rewrite_questions(tasks: list[Task], config: RewriteConfig) -> dict[str, int]:
    """Rewrite questions in place, pair by pair.

    Returns:
        counts: ``{"rewritten": pairs changed, "kept_unfaithful": pairs whose
        rewrite failed the meaning check, "kept_error": endpoint failures}``.
    """
    client = _client(config)
    pairs: dict[str, list[Task]] = {}
    for t in tasks:
        pairs.setdefault(t.pair_id, []).append(t)
    stats = {"rewritten": 0, "kept_unfaithful": 0, "kept_error": 0}
    for pair_id in sorted(pairs):
        group = pairs[pair_id]
        new = [_ask(client, config, t.question) for t in group]
        if any(n is None for n in new):
            stats["kept_error"] += 1
            continue
        if not all(faithful(t.question, n, anchors(t)) for t, n in zip(group, new)):
            stats["kept_unfaithful"] += 1
            continue
        for t, n in zip(group, new):
            t.question = n
        stats["rewritten"] += 1
    return stats
