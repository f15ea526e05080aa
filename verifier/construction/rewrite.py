"""Optional LLM rewriting of question templates (off by default; issue 33 point 4).

An OpenAI-compatible endpoint (through ``instructor``, structured output) rewords each
program's question *templates* (``{placeholder}`` text, ``programs/*.toml``) the way a
clinician would ask, before construction runs. Rewording templates, not rendered questions,
keeps the twins of a pair one condition apart (both render the same template) and lets every
rewritten pair be re-verified by construction itself: the reference is re-executed, the
witness re-checked and the robustness audit re-run on the rewritten program, as for any
other phrasing. The rewrite must keep the template's meaning, checked deterministically:
the same placeholders (each as often), no number the template did not hold, nothing empty.
A rewrite failing the check, or any endpoint error, keeps the template text. Rewrites are
cached by (model, instruction, template) in a JSON file, so a run is repeatable and an
endpoint is asked once per template.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, Field

from .spec import ProgramSpec

_NUM = re.compile(r"\d+(?:\.\d+)?")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
INSTRUCTION = ("Reword this clinical database question template the way a clinician would ask it. Keep every "
               "{placeholder} exactly as written (same names, each as often), every number, and every condition "
               "(which record, encounter, order, time window, comparison, aggregate); add no condition.")


class RewriteConfig(BaseModel):
    """Where and how to rewrite.

    Attributes:
        base_url: OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:8000/v1``.
        model: model name sent to the endpoint.
        api_key: key sent to the endpoint (local servers ignore it).
        timeout_s: per-request time limit in seconds.
        cache_path: JSON file of earlier rewrites (created or extended); None keeps none.
    """

    base_url: str
    model: str = "rewriter"
    api_key: str = "not-needed"
    timeout_s: float = Field(default=20.0, gt=0)
    cache_path: str | None = None


class Rewritten(BaseModel):
    """The structured output asked of the model."""

    question: str = Field(description="The same question template, reworded; keep every {placeholder}, number and condition.")


def faithful(template: str, rewritten: str) -> bool:
    """True when ``rewritten`` keeps ``template``'s meaning as far as text can show it: the same
    placeholders, each as often; no number outside them that the template did not hold; not empty."""
    if not rewritten.strip() or rewritten.count("{") != rewritten.count("}"):
        return False
    if Counter(_PLACEHOLDER.findall(rewritten)) != Counter(_PLACEHOLDER.findall(template)):
        return False
    bare = lambda t: _NUM.findall(_PLACEHOLDER.sub(" ", t))  # noqa: E731
    return set(bare(rewritten)) <= set(bare(template))


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
                {"role": "system", "content": INSTRUCTION},
                {"role": "user", "content": question},
            ],
        )
        return out.question
    except Exception:  # noqa: BLE001 - any endpoint/parse failure keeps the template text
        return None


def _key(config: RewriteConfig, template: str) -> str:
    return hashlib.sha256(json.dumps([config.model, INSTRUCTION, template]).encode()).hexdigest()


def _load_cache(path: str | None) -> dict[str, str | None]:
    if not path or not Path(path).exists():
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return {str(k): (v if isinstance(v, str) else None) for k, v in data.items()} if isinstance(data, dict) else {}


def rewrite_programs(programs: Iterable[ProgramSpec], config: RewriteConfig, client: Any = None) -> tuple[list[ProgramSpec], dict[str, int]]:
    """Reword every program's question templates (the programs are not changed; copies are returned).

    Args:
        programs: the programs construction will run.
        config: the endpoint and the cache file.
        client: an ``instructor`` client (default: one for ``config``).

    Returns:
        (the programs with faithful rewrites in place of their templates, counts
        ``{"rewritten", "kept_unfaithful", "kept_error", "cached"}`` over templates). An endpoint
        error is not cached (the next run asks again); an unfaithful rewrite is.
    """
    cache = _load_cache(config.cache_path)
    client = client if client is not None else _client(config)
    stats = {"rewritten": 0, "kept_unfaithful": 0, "kept_error": 0, "cached": 0}
    out: list[ProgramSpec] = []
    for spec in programs:
        new: list[str] = []
        for template in spec.questions:
            key = _key(config, template)
            if key in cache:
                stats["cached"] += 1
                got = cache[key]
            else:
                got = _ask(client, config, template)
                if got is None:
                    stats["kept_error"] += 1
                    new.append(template)
                    continue
                got = got.strip() if faithful(template, got) else None
                cache[key] = got
            if got is None:
                stats["kept_unfaithful"] += 1
            else:
                stats["rewritten"] += 1
            new.append(got or template)
        out.append(dataclasses.replace(spec, questions=tuple(new)))
    if config.cache_path:
        Path(config.cache_path).parent.mkdir(parents=True, exist_ok=True)
        Path(config.cache_path).write_text(json.dumps(cache, indent=0, sort_keys=True), encoding="utf-8")
    return out, stats
