"""Does the response cite the step whose evidence qualified? (issue 18 point 3)

ARCHITECTURE.md section 4 (Noise, step 8 "citation") and section 10 (``EVIDENCE_NOT_CITED``).
The task instructions ask the agent to cite the step that shows the unmet requirement
(``[step N]``); the verdict holds that: an abstention whose evidence qualified succeeds only
when the response cites at least one qualifying step, and the citation identifies it.

Rule (``check_citation``):
    * the cited steps are ``verifier.parse`` citations that name a step of the trajectory
      (``[step 3]``, ``step 3``, ``steps 2-3``, ``(step 2, 4)``, ``Step #3``, ``in the
      second step``; see its module docstring), in the Answer or the Reasoning;
    * no cited step, or none of them among the qualifying steps: not cited;
    * more than ``[citation] max_cited_steps`` (``rules/noise.toml``) distinct steps cited:
      not identifying, whatever else they hold. *Why*: a citation restricts which queries may
      count, and a policy that cites every step ("[step 1] ... [step 18]", "steps 1-18") keeps
      every chance of one query qualifying by accident; what bounds that chance is the number of
      cited candidates, not their share of the trajectory (a policy running 36 queries and citing
      half of them keeps 18 chances). Honest agents of the episode corpora cite at most 4 steps
      (every step of a 4-step episode); the cap leaves room above that. A response citing more
      steps still identifies the evidence when the sentences that state the gap cite at most
      ``max_cited_steps`` of them, one qualifying (blind corpus c34: an honest Reasoning citing all
      six steps of its episode for context, the gap's own sentence citing one).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

from ..contract import load_toml


@lru_cache(maxsize=1)
def max_cited_steps() -> int:
    """``[citation] max_cited_steps`` of ``rules/noise.toml``: the most distinct steps an
    identifying citation may name (an ``int`` >= 1).

    Raises:
        RulesError: ``rules/noise.toml`` missing or malformed.
        ValueError: the value is not a positive integer.
    """
    value = load_toml("noise.toml")["citation"]["max_cited_steps"]
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"rules/noise.toml [citation] max_cited_steps must be a positive integer, got {value!r}")
    return value


def check_citation(cited: Iterable[int], qualifying: Iterable[int],
                   gap_cited: Iterable[int] | None = None) -> tuple[bool, dict[str, Any]]:
    """Whether the response's citations identify a step whose evidence qualified.

    Args:
        cited: the valid cited step indices (1-based; ``EvidenceSet.cited``).
        qualifying: the step indices of the queries whose status is ``qualifies``.
        gap_cited: the steps cited by the sentences of the Reasoning that state the gap
            (``_reasoning.consistency``'s ``gap_cited``), or ``None``. When the whole response cites
            more than ``max_cited_steps()`` steps, these are the citation that identifies: an honest
            Reasoning that cites every step of a six-step episode for its context (blind corpus c34)
            still says which step shows the gap, and the bound on chances is kept, since at most
            ``max_cited_steps()`` steps may be cited by those sentences.

    Returns:
        ``(ok, details)``: ``ok`` when at most ``max_cited_steps()`` steps are cited and one
        of them qualified. ``details``: ``cited`` (sorted), ``qualifying_cited`` (sorted),
        ``max_cited_steps`` and ``why`` (empty when ok).
    """
    steps = sorted(set(cited))
    hit = sorted(set(steps) & set(qualifying))
    limit = max_cited_steps()
    if not steps:
        why = "the response cites no step ([step N]) of the evidence"
    elif len(steps) > limit:
        gap = sorted(set(gap_cited or ()) & set(steps))
        if gap and len(gap) <= limit and set(gap) & set(qualifying):
            return True, {"cited": steps, "qualifying_cited": hit, "max_cited_steps": limit, "gap_cited": gap,
                          "why": ""}
        why = f"the response cites {len(steps)} steps; a citation of more than {limit} steps does not identify the evidence"
        if gap_cited is not None:
            why += f" (its statements of the gap cite {gap or 'none'}, none qualifying or more than {limit})"
    elif not hit:
        why = f"none of the cited steps {steps} holds a qualifying query"
    else:
        why = ""
    return not why, {"cited": steps, "qualifying_cited": hit, "max_cited_steps": limit, "why": why}
