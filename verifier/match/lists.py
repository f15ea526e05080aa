"""Lists of scalars.

The Answer is split into items (Markdown bullets, numbered lines, one item per
line, a JSON array, or ``;`` / ``,`` / ``and`` separators). Each reference item
is paired with the first unpaired submitted item that matches it under the
scalar rules. Unordered lists are multisets (``answer_policy.order == "set"``
ignores duplicates on both sides); ordered lists (``ListAnswer.ordered`` or
``order == "ordered"``) must also pair item i with item i, else
``WRONG_ORDER``. Unpaired reference items give ``MISSING_RECORDS``, unpaired
submitted items ``EXTRA_RECORDS``. An item that only names an identifier
(``isolate 1``, ``specimen 6296570``) is context, not an item. An Answer stating an empty result
(``extract.is_empty_answer``: ``[]``, ``[] (none found)``) has no items.
"""

from __future__ import annotations

import re
from typing import Any

from ..contract import AnswerPolicy, ListAnswer, ReasonCode, TextAnswer
from .extract import extract_list, is_empty_answer
from .result import MatchResult, failure, success
from .scalar import match_scalar
from .text import normalise_text, stated_in_sentence


_ID_ITEM = re.compile(
    r"(?i)\s*(?:isolate|specimen|culture|sample|order|item|itemid|admission|patient|stay|row|id)\s*(?:no\.?|#)?\s*\d+\s*")


def _identifier_only(item: str) -> bool:
    """An item that only names an identifier (``isolate 1``, ``specimen 6296570``): context."""
    return _ID_ITEM.fullmatch(item) is not None


def _dedupe(items: list[str]) -> list[str]:
    seen, out = set(), []
    for it in items:
        k = normalise_text(it)
        if k not in seen:
            seen.add(k)
            out.append(it)
    return out


def match_list(text: str, ref: ListAnswer, policy: AnswerPolicy, json_value: Any = None,
               question: str = "") -> MatchResult:
    """Compare a list answer with ``ref`` (see module docstring). A list of one text item may be
    stated in one sentence, as a text value is (``verifier.match.text.stated_in_sentence``, with the
    task's ``question``; blind corpus c35: "The MRSA SCREEN culture ... grew POSITIVE FOR METHICILLIN
    RESISTANT STAPH AUREUS")."""
    if question and json_value is None and len(ref.items) == 1 and isinstance(ref.items[0], TextAnswer):
        how = stated_in_sentence(text.strip().rstrip("."), ref.items[0].value, question)
        if how is not None:
            return success(compared="list", reference_items=1, submitted_items=1, how=how)
    if isinstance(json_value, list):
        items = [str(x) for x in json_value if x is not None]
    elif is_empty_answer(text, json_value):
        items = []  # "[] (none given)": no items (NULL is an abstention, handled before matching)
    else:
        items = extract_list(text)
    items = [it for it in items if not _identifier_only(it)]
    refs = list(ref.items)
    if policy.order == "set":
        items = _dedupe(items)
        uniq, seen = [], set()
        for r in refs:
            key = r.model_dump_json()
            if key not in seen:
                seen.add(key)
                uniq.append(r)
        refs = uniq
    ordered = ref.ordered or policy.order == "ordered"
    used = [False] * len(items)
    pairs: list[tuple[int, int]] = []
    missing = []
    for i, r in enumerate(refs):
        for j, it in enumerate(items):
            if not used[j] and match_scalar(it, r, policy).ok:
                used[j] = True
                pairs.append((i, j))
                break
        else:
            missing.append(i)
    extra = [items[j] for j, u in enumerate(used) if not u]
    base = {"compared": "list", "reference_items": len(refs), "submitted_items": len(items),
            "order": "ordered" if ordered else policy.order}
    reasons = []
    if missing:
        reasons.append(ReasonCode.MISSING_RECORDS)
        base["missing"] = [refs[i].model_dump(mode="json") for i in missing[:20]]
    if extra:
        reasons.append(ReasonCode.EXTRA_RECORDS)
        base["extra"] = extra[:20]
    if not reasons and ordered:
        in_order = all(match_scalar(items[k], r, policy).ok for k, r in enumerate(refs))
        if not in_order:
            reasons.append(ReasonCode.WRONG_ORDER)
    return failure(*reasons, **base) if reasons else success(**base)
