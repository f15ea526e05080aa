"""The Trajectory contract: what an agent did in one episode.

ARCHITECTURE.md section 3. A trajectory is an ordered list of tool steps (SQL or
Python) with their recorded outputs, then the raw final response. Step
indices are 1-based, as agents cite them (``[step 3]``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Dialect = Literal["duckdb", "sqlite", "postgres"]


class Step(BaseModel):
    """One tool call and what the agent saw.

    Attributes:
        index: 1-based position in the episode (what ``[step N]`` cites).
        kind: ``sql`` or ``python``.
        code: the SQL text or Python source the agent submitted.
        output: the observation text the agent received (``None`` if none).
        error: the error text, when the call failed (then it is not evidence).
        sql: for Python steps, the SQL statements the code executed, in order,
            as recorded by the environment (empty for trajectories from
            elsewhere; the verifier then recovers literals with ``ast``).
        columns / rows: optional structured result of a SQL step, as recorded
            by the environment (before truncation for display), cells in their
            JSON form (``verifier.sql.json_cell``). NaN and infinities in rows
            serialise as ``"NaN"``/``"Infinity"``/``"-Infinity"`` (not JSON
            ``null``), so a JSON round trip keeps them (issue 17 kind 11).
    """

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="strings")
    index: int = Field(ge=1)
    kind: Literal["sql", "python"]
    code: str
    output: str | None = None
    error: str | None = None
    sql: list[str] = Field(default_factory=list)
    columns: list[str] | None = None
    rows: list[list[Any]] | None = None

    @property
    def ok(self) -> bool:
        """True when the step ran without error."""
        return not self.error


class Trajectory(BaseModel):
    """One episode: steps then a final response.

    Attributes:
        trajectory_id: unique id of the episode.
        task_id: the task it answers.
        steps: ordered tool steps; indices must be 1..n in order.
        final_response: raw final text (Answer and Reasoning inside).
        dialect: SQL dialect the agent wrote (transpiled to DuckDB to re-run).
        metadata: free-form (agent name, model, sample index).

    Raises:
        pydantic.ValidationError: when indices are not 1..n.
    """

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="strings")  # see Step.rows
    trajectory_id: str
    task_id: str
    steps: list[Step] = Field(default_factory=list)
    final_response: str = ""
    dialect: Dialect = "duckdb"
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _indices(self) -> "Trajectory":
        for pos, step in enumerate(self.steps, start=1):
            if step.index != pos:
                raise ValueError(f"steps[{pos - 1}].index is {step.index}, expected {pos} (1-based, in order)")
        return self
