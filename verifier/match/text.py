"""Text and booleans.

Text matches when, after normalisation (case-folded, Markdown and punctuation
removed except ``/ % . -`` inside words, whitespace collapsed):
1. the strings are equal, or
2. both belong to one synonym group of ``rules/synonyms.toml`` ``[text]``, or
3. rapidfuzz ``token_sort_ratio`` >= ``answer_policy.text_threshold`` AND the
   numbers in both strings are the same (so "aspirin 81 mg" never fuzzily
   matches "aspirin 325 mg").
"""

from __future__ import annotations

import re
from functools import lru_cache

from rapidfuzz import fuzz

from ..contract import BooleanAnswer, ReasonCode, TextAnswer, load_toml
from .extract import extract_boolean
from .result import MatchResult, failure, success

_PUNCT = re.compile(r"[^\w\s/%.\-]|(?<!\w)[.\-]|[.\-](?!\w)")
_SPACE = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")


@lru_cache(maxsize=65536)
def normalise_text(text: str) -> str:
    """Case-fold, drop Markdown/punctuation, collapse whitespace (cached)."""
    s = text.replace("**", " ").replace("__", " ").replace("`", " ").casefold()
    s = _PUNCT.sub(" ", s)
    return _SPACE.sub(" ", s).strip()


@lru_cache(maxsize=1)
def _synonyms() -> dict[str, int]:
    groups = load_toml("synonyms.toml").get("text", {}).get("groups", [])
    out: dict[str, int] = {}
    for i, group in enumerate(groups):
        for name in group:
            out.setdefault(normalise_text(name), i)
    return out


@lru_cache(maxsize=65536)
def text_equivalent(sub: str, ref: str, threshold: float = 90.0) -> tuple[bool, str, float]:
    """Compare two texts; returns ``(match, how, score)`` (cached)."""
    a, b = normalise_text(sub), normalise_text(ref)
    if a == b:
        return True, "normalised equal", 100.0
    syn = _synonyms()
    ga, gb = syn.get(a), syn.get(b)
    if ga is not None and ga == gb:
        return True, "synonyms", 100.0
    score = fuzz.token_sort_ratio(a, b)
    if score >= threshold and sorted(_DIGITS.findall(a)) == sorted(_DIGITS.findall(b)):
        return True, f"fuzzy token_sort_ratio {score:.1f} >= {threshold:g}", score
    return False, f"token_sort_ratio {score:.1f} < {threshold:g}" if score < threshold else "numbers differ", score


def match_text(text: str, ref: TextAnswer, threshold: float) -> MatchResult:
    """Compare free text with the reference text."""
    ok, how, score = text_equivalent(text, ref.value, threshold)
    base = {"compared": "text", "reference": ref.value, "submitted": text[:200], "how": how}
    return success(**base) if ok else failure(ReasonCode.WRONG_VALUE, **base)


def match_boolean(text: str, ref: BooleanAnswer) -> MatchResult:
    """Compare a yes/no answer (leading yes/no/true/false/y/n)."""
    got = extract_boolean(text)
    if got is None:
        return failure(ReasonCode.WRONG_TYPE, expected="boolean", reference=ref.value, submitted=text[:200],
                       why="the Answer does not start with yes/no/true/false")
    base = {"compared": "boolean", "reference": ref.value, "submitted": got}
    return success(**base) if got == ref.value else failure(ReasonCode.WRONG_VALUE, **base)
