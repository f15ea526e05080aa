"""The Verdict contract: the verifier's decision, explained.

ARCHITECTURE.md section 3; modelled on inspect_ai's ``Score``: the verdict explains
itself (``reasons``, ``details``); metrics are computed from verdicts elsewhere.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ._reasons import ReasonCode


class Verdict(BaseModel):
    """Whether a trajectory succeeded on its task, and why.

    Attributes:
        task_id / trajectory_id: what was judged.
        success: the decision.
        score: 1.0 on success, else 0.0 (the RL reward).
        condition: the task's condition (``clean`` or ``noise``).
        abstained: whether the parsed Answer is NULL.
        reasons: reason codes, empty on success, ordered by the check that
            produced them.
        details: per-check explanation: what was compared with what, evidence
            step indices used, judge use. JSON-serialisable.
        verifier_version: package version that produced the verdict.
    """

    model_config = ConfigDict(extra="forbid")
    task_id: str
    trajectory_id: str
    success: bool
    score: float
    condition: Literal["clean", "noise"]
    abstained: bool
    reasons: list[ReasonCode] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    verifier_version: str
