"""The Task contract: a question, its condition, and a hidden reference.

ARCHITECTURE.md section 3. The agent sees ``question`` only (and the schema); the
``reference`` is the verifier's. Clean and Noise twins share ``pair_id``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ._answers import Answer

Condition = Literal["clean", "noise"]
NoiseType = Literal["record", "value", "query"]
Scope = Literal["patient", "population"]
Intent = Literal[
    "demographics_admissions",
    "diagnoses_procedures",
    "laboratory_microbiology",
    "medications",
    "vitals_icu",
    "billing",
]
Order = Literal["ordered", "multiset", "set"]

_STRICT = ConfigDict(extra="forbid")


class AnswerPolicy(BaseModel):
    """How a submitted answer is compared with the reference answer.

    Attributes:
        decimals: precision of the reference (digits after the point); a number
            matches when it rounds to the reference at this precision.
        rel_tol: relative tolerance (fraction, e.g. 0.01 = 1 %); ``None`` uses
            ``rules/tolerances.toml``.
        abs_tol: absolute tolerance in the reference's unit.
        analyte: analyte key in ``rules/analytes.toml`` (enables mass<->molar
            and mEq<->mmol conversion), e.g. ``"glucose"``.
        db_unit: the unit the database stores for this item. A bare number (no
            unit) is read in the reference's unit when this is None or the
            reference's unit; when it is another unit the number's unit is
            ambiguous and the answer is ``WRONG_UNIT`` (``verifier.match.numbers``).
        order: for records and lists: ``ordered``, ``multiset`` (order ignored,
            duplicates counted) or ``set`` (order and duplicates ignored).
        key_columns: columns that identify a row (rows are paired on them before
            cells are compared); empty means whole-row matching.
        required_columns: columns the submission must contain; empty means all
            reference columns.
        text_threshold: rapidfuzz ``token_sort_ratio`` needed for text (0-100).
    """

    model_config = _STRICT
    decimals: int | None = None
    rel_tol: float | None = Field(default=None, ge=0)
    abs_tol: float | None = Field(default=None, ge=0)
    analyte: str | None = None
    db_unit: str | None = None
    order: Order = "multiset"
    key_columns: list[str] = Field(default_factory=list)
    required_columns: list[str] = Field(default_factory=list)
    text_threshold: float = Field(default=90.0, ge=0, le=100)


class UnmetRequirement(BaseModel):
    """The one necessary condition a Noise twin does not satisfy.

    Attributes:
        level: ``record`` | ``value`` | ``query`` noise.
        statement: plain-language statement, e.g. "No potassium lab event is
            recorded during admission 22595853".
        tables: tables (renamed schema) the requirement concerns.
        columns: columns it concerns (``table.column``).
        scope: identifiers that bound it, e.g. ``{"patientid": 10000032,
            "admissionid": 22595853, "itemid": 50971}``.
        key_terms: words the Reasoning must name (matched after normalisation).
    """

    model_config = _STRICT
    level: NoiseType
    statement: str
    tables: list[str] = Field(default_factory=list)
    columns: list[str] = Field(default_factory=list)
    scope: dict[str, Any] = Field(default_factory=dict)
    key_terms: list[str] = Field(default_factory=list)


class WitnessTable(BaseModel):
    """Witness rows for one table.

    Attributes:
        table: table name in the renamed schema (e.g. ``"lab_events"``).
        mode: ``insert`` adds rows (Record- and Query-level noise);
            ``replace`` substitutes the base rows that share ``key`` values
            (Value-level noise: the same record with the field filled).
        key: identifying columns for ``replace``.
        rows: full rows as ``{column: value}``; timestamps as ISO-8601 strings.
    """

    model_config = _STRICT
    table: str
    mode: Literal["insert", "replace"] = "insert"
    key: list[str] = Field(default_factory=list)
    rows: list[dict[str, Any]] = Field(min_length=1)

    @model_validator(mode="after")
    def _replace_needs_key(self) -> "WitnessTable":
        if self.mode == "replace" and not self.key:
            raise ValueError(f"witness for table {self.table!r}: mode 'replace' needs key columns")
        return self


class AuditEntry(BaseModel):
    """One relaxation of the construction's robustness audit (issue 12 point 1).

    Attributes:
        kind: the relaxation a reasonable reader might apply: ``name`` (case,
            prefix/suffix spellings and ``rules/synonyms.toml``), ``status``
            (event statuses meaning the same, ``rules/relaxations.toml``),
            ``source`` (another table recording the same fact), ``unlinked``
            (events without the admission link inside its time window),
            ``window`` (the other window definition), ``comment`` (values
            recorded only as comments).
        outcome: ``same`` (the reference gives the same answer, or the twin
            stays a gap, under the relaxation), ``explicit`` (the answer differs
            and the question now states the reading the reference computes),
            ``not_applicable`` (nothing in the database for the relaxation to add),
            ``convention`` (a reading convention of the shared instructions,
            ``rules/conventions.toml``, settles the reading; the other reading's
            answer, the near miss, is in ``detail``).
        detail: what the relaxation read differently (e.g. the name variants),
            for reviewers.
    """

    model_config = _STRICT
    kind: str
    outcome: Literal["same", "explicit", "not_applicable", "convention"]
    detail: str = ""


class NearMiss(BaseModel):
    """What an agent that drops or misreads one stated condition would answer (issue 33 point 2).

    Computed by construction on the database the task is played on
    (``verifier.construction.near_miss``); an answer that is not NULL and, on a Clean
    task, differs from the reference and its tied alternatives.

    Attributes:
        kind: what the careless reading changed: a dropped condition's kind (``window``,
            ``status``, ``item``, ``encounter``, ``scope``, ``unit``, ``threshold``,
            ``attribute``), ``first_last`` (min/max or an ORDER BY taken the other way)
            , ``bound`` (``>`` read as ``>=`` or the reverse) or ``convention`` (the other
            reading of a convention the shared instructions state).
        condition: the SQL text of the dropped or changed condition, as in the reference
            (for ``convention``: the convention's id in ``rules/conventions.toml``).
        answer: the typed answer that reading gives.
    """

    model_config = _STRICT
    kind: str
    condition: str
    answer: Answer


class Reference(BaseModel):
    """What the agent never sees: the verified reference for a task.

    Attributes:
        sql: reference SQL (DuckDB dialect, renamed schema).
        answer: typed reference answer; ``None`` on Noise tasks.
        answer_policy: comparison policy.
        eligible_units: for population tasks, how many units (patients,
            admissions) satisfy the question's eligibility (five-unit rule).
        unmet_requirement: Noise tasks only.
        witness: Noise tasks only: rows that would make the twin answerable.
        audit: the construction's robustness audit, one entry per relaxation
            the program declares (empty for hand-written tasks).
        alternatives: other answers that are just as correct, of the same type
            as ``answer``: the values of rows tied with the reference's at the
            query's ``ORDER BY ... LIMIT`` (issue 17 kind 9; construction
            records them, ``verifier.construction.ties``). A Clean Answer
            matching any of them under ``answer_policy`` succeeds. Optional:
            task files without it load with none.
        near_misses: the answers careless readings give (``NearMiss``; issue 33).
            Optional: task files without it load with none.
        conditions: how many conditions the reference states (its droppable
            conditions, ``verifier.construction.near_miss.stated_conditions``); None
            when not computed (old task files, hand-written tasks).
    """

    model_config = _STRICT
    sql: str
    answer: Answer | None = None
    alternatives: list[Answer] = Field(default_factory=list)
    answer_policy: AnswerPolicy = Field(default_factory=AnswerPolicy)
    eligible_units: int | None = Field(default=None, ge=0)
    unmet_requirement: UnmetRequirement | None = None
    witness: list[WitnessTable] = Field(default_factory=list)
    audit: list[AuditEntry] = Field(default_factory=list)
    near_misses: list[NearMiss] = Field(default_factory=list)
    conditions: int | None = Field(default=None, ge=0)


class Task(BaseModel):
    """One question of a Clean-Noise pair.

    Attributes:
        task_id: unique id.
        pair_id: shared by the Clean task and its Noise twin.
        question: the natural-language question the agent sees.
        condition: ``clean`` or ``noise``.
        noise_type: ``record`` | ``value`` | ``query`` on Noise, else ``None``.
        scope: ``patient`` or ``population``.
        intent: one of the six clinical intents (ARCHITECTURE.md section 5).
        program: the construction program's name.
        params: the program's parameters (used to check that twins differ in
            one condition only).
        split: ``train`` or ``test``.
        track: ``in_domain`` or ``structure_disjoint``.
        reference: the hidden reference.
        dataset_now: optional time "now" means for this task's SQLite/PostgreSQL evidence
            (overrides ``VerifyConfig.dataset_now``).
        db_fingerprint: the fingerprint of the database the task was built on
            (``verifier.database.database_fingerprint``: ``db<scheme>:<16-64 hex>``), recorded by
            ``make-tasks``; ``verify`` raises ``InputError`` on a database with another one.
            Optional: task files without it load and are scored unchecked.
        difficulty: ``hard`` (the task has a near miss and states at least
            ``verifier.construction.near_miss.HARD_MIN_CONDITIONS`` conditions) or
            ``standard``; set by ``make-tasks`` (issue 33 point 5). Optional: task files
            without it load with None.

    Raises:
        pydantic.ValidationError: on construction from bad input, naming the
        field; ``load_task`` wraps it into ``InputError``.
    """

    model_config = _STRICT
    task_id: str
    pair_id: str
    question: str
    condition: Condition
    noise_type: NoiseType | None = None
    scope: Scope = "patient"
    intent: Intent
    program: str
    params: dict[str, Any] = Field(default_factory=dict)
    split: Literal["train", "test"] = "test"
    track: Literal["in_domain", "structure_disjoint"] = "in_domain"
    reference: Reference
    dataset_now: dt.datetime | None = None
    db_fingerprint: str | None = Field(default=None, pattern=r"^db[0-9]+:[0-9a-f]{16,64}$")
    difficulty: Literal["hard", "standard"] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> "Task":
        if self.condition == "clean":
            if self.noise_type is not None:
                raise ValueError(f"task {self.task_id}: noise_type must be null on a clean task, got {self.noise_type!r}")
            if self.reference.answer is None:
                raise ValueError(f"task {self.task_id}: reference.answer is required on a clean task")
        else:
            if self.noise_type is None:
                raise ValueError(f"task {self.task_id}: noise_type is required on a noise task")
            if self.reference.unmet_requirement is None:
                raise ValueError(f"task {self.task_id}: reference.unmet_requirement is required on a noise task")
        return self
