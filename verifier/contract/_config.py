"""Configuration objects for verification (Math-Verify style: verbs take a config).

Configs are frozen pydantic models: hashable, picklable, safe to share across
threads and processes. Connections are never stored in them; workers open
their own from ``db_path``.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ._limits import InputLimits

#: Environment variable naming the DuckDB file evidence is re-executed on.
DB_ENV_VAR = "EHR_VERIFIER_DB"


class DisplayConfig(BaseModel):
    """How a query result is shown to the agent (environment truncation).

    The verifier applies the same limits when it judges whether evidence was
    visible to the agent (ARCHITECTURE.md section 4, sensitivity on the output as
    the agent saw it).

    Attributes:
        max_rows: rows rendered before truncation.
        max_chars: characters of the rendered text before truncation.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    max_rows: int = Field(default=50, ge=1)
    max_chars: int = Field(default=8000, ge=100)


class JudgeConfig(BaseModel):
    """Optional LLM judge (instructor, OpenAI-compatible endpoint).

    Attributes:
        base_url: endpoint, e.g. ``http://127.0.0.1:8000/v1``.
        model: model name.
        api_key_env: environment variable holding the key (never the key itself).
        cache_dir: on-disk cache folder (keyed by a hash of the judge inputs).
        timeout_s: per-request time limit in seconds.
        max_retries: retries on transport or validation failure.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    cache_dir: str = ".ehr-verifier-cache/judge"
    timeout_s: float = Field(default=30.0, gt=0)
    max_retries: int = Field(default=2, ge=0)


class VerifyConfig(BaseModel):
    """Settings for ``verify``.

    Attributes:
        db_path: DuckDB file evidence is re-executed on (read-only). ``None``
            falls back to the ``EHR_VERIFIER_DB`` environment variable; Noise
            tasks cannot be verified without one.
        query_time_limit_s: per-query time limit in seconds: the query process interrupts the
            query, and is killed at 1.05x the limit if the interrupt does not land
            (``verifier.sql._guard``); the environment applies the same limit.
        row_cap: rows fetched at most per re-executed query.
        max_evidence_queries: evidence queries evaluated at most per trajectory, cited steps
            first, then the latest (``verifier.abstention._budget``); above the environment's
            20 tool calls per episode, so an honest episode is never cut.
        evidence_time_budget_s: CPU seconds (issue 31; wall seconds when unmeasured) a trajectory's evidence queries may take in
            total, over the base, the witness overlay and the decoy (cached results charged
            what they cost when they ran); past it the verdict fails with
            ``EVIDENCE_BUDGET_EXCEEDED`` (issue 16). Keep it below a batch's
            ``item_time_limit_s`` (120 s by default).
        uncited_evidence_budget_s: the budget (CPU seconds, at most ``evidence_time_budget_s``)
            of a response that cites no step: it cannot pass, its evidence only says why
            (issue 31 point 4: slow uncited evidence costs a batch about this much per item).
        evidence_budget_floor_s: CPU seconds every trajectory's evidence may take, whatever its
            task (issue 31 point 4; ``verifier.abstention._proportion``).
        evidence_budget_s_per_row: CPU seconds more per row of the tables the task's reference
            query reads: the budget is ``min(evidence_time_budget_s, floor + this x rows)``, a
            fixed multiple of the honest work on that task, counted, not timed (deterministic).
        evidence_budget_s_per_python_row: CPU seconds per row of those tables, counted up to
            ``row_cap`` (a Python step receives at most that many rows per query), when the
            response cites a Python step: its replays (base, repeat, witness, perturbations) handle
            each row in Python, some 50x DuckDB's cost per row, so the budget is (0.5 s + 50 us x
            at most 10,000 rows: 1 s at most by default)
            ``min(evidence_time_budget_s, floor + max(this x min(rows, row_cap), evidence_budget_s_per_row x rows))``
            (clean-clone CI: an honest whole-table read filtered in Python used 0.40 of its 0.51 s
            SQL-rate budget on an idle machine and passed it under load).
        display: the environment's display limits.
        check_reasoning: apply the deterministic key-term check on Noise.
        judge: LLM judge settings; ``None`` (default) means off.
        dataset_now: the time "now" means in SQLite/PostgreSQL evidence (``'now'``,
            ``CURRENT_TIMESTAMP``, ``now()``...), in the database's clock, as EHRSQL fixes
            it per dataset; ``Task.dataset_now`` overrides it. ``None``: such queries are
            volatile (their recorded output is not compared).
        limits: the caps on what is read (final response, Answer, bracket nesting, steps,
            query, code and output sizes); beyond one the verdict is ``INPUT_TOO_LARGE``
            naming it (``verifier.contract._limits.InputLimits``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    db_path: str | None = None
    query_time_limit_s: float = Field(default=5.0, gt=0)
    row_cap: int = Field(default=10_000, ge=1)
    max_evidence_queries: int = Field(default=32, ge=1)
    evidence_time_budget_s: float = Field(default=30.0, gt=0)
    uncited_evidence_budget_s: float = Field(default=1.0, gt=0)
    evidence_budget_floor_s: float = Field(default=0.5, gt=0)
    evidence_budget_s_per_row: float = Field(default=1e-6, ge=0)
    evidence_budget_s_per_python_row: float = Field(default=5e-5, ge=0)
    display: DisplayConfig = Field(default_factory=DisplayConfig)
    check_reasoning: bool = True
    judge: JudgeConfig | None = None
    dataset_now: dt.datetime | None = None
    limits: InputLimits = Field(default_factory=InputLimits)

    def resolved_db_path(self) -> Path | None:
        """``db_path`` or ``$EHR_VERIFIER_DB``, as a Path; ``None`` if neither."""
        raw = self.db_path or os.environ.get(DB_ENV_VAR)
        return Path(raw) if raw else None
