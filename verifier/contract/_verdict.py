"""The Verdict contract: the verifier's decision, explained.

ARCHITECTURE.md section 3; modelled on inspect_ai's ``Score``: the verdict explains
itself (``reasons``, ``details``); metrics are computed from verdicts elsewhere.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticSerializationError

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

    ``model_dump_json`` always writes UTF-8: text quoted from a trajectory may hold lone UTF-16
    surrogates (a Python string built from JSON ``"\\ud800"``), which UTF-8 cannot encode; in the
    JSON each becomes U+FFFD (a surrogate pair written as two code points becomes its character).
    The verdict object itself keeps the text as given.
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

    def model_dump_json(self, **kwargs: Any) -> str:
        """Pydantic's ``model_dump_json`` (same arguments), with lone surrogates written as U+FFFD
        (class docstring) instead of raising ``PydanticSerializationError``. The usual path is
        pydantic's own; only a verdict that fails to encode for surrogates is copied and cleaned.

        Raises:
            PydanticSerializationError: any other value JSON cannot hold (as pydantic does).
            ValidationError: the cleaned copy is not a valid ``Verdict`` (a verdict built with
                ``model_construct`` around invalid fields)."""
        try:
            return super().model_dump_json(**kwargs)
        except PydanticSerializationError as exc:
            if "surrogates not allowed" not in str(exc):
                raise  # another failure (a value JSON cannot hold): pydantic's own error
            cleaned = type(self).model_validate(_without_surrogates(self.model_dump(mode="python", round_trip=True)))
            return BaseModel.model_dump_json(cleaned, **kwargs)  # a second failure raises, no recursion


def _without_surrogates(value: Any) -> Any:
    """``value`` with every string (dictionary keys included) re-encoded through UTF-16: surrogate
    pairs become their characters, lone surrogates U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_without_surrogates(v) for v in value)
    return value
