"""ehr-verifier: decides whether a clinical database agent did its job.

Public API (ARCHITECTURE.md):
    verify(trajectory, task, config=None) -> Verdict
    parse(text) -> ParsedResponse
    verify_batch(trajectories, tasks, db, workers=N) -> iterator of verdicts / error records
    Task, Trajectory, Step, Verdict, ReasonCode, VerifyConfig
    from_chat_messages(messages, ...) -> Trajectory
    read_log(log, task_id=..., format="auto", tools=ToolNames(...)) -> Trajectory  (any common tool-call log)
"""

from __future__ import annotations

from typing import Any

from .contract import (
    Answer,
    AnswerPolicy,
    BooleanAnswer,
    CountAnswer,
    DatetimeAnswer,
    DisplayConfig,
    InputError,
    JudgeConfig,
    ListAnswer,
    NumberAnswer,
    QuantityAnswer,
    ReasonCode,
    RecordsAnswer,
    Reference,
    RulesError,
    SandboxUnavailable,
    SourceDataError,
    Step,
    Task,
    TextAnswer,
    Trajectory,
    UnitError,
    UnmetRequirement,
    UnsafeQueryError,
    Verdict,
    VerifierError,
    VerifyConfig,
    WitnessTable,
    __version__,
    from_chat_messages,
    json_schemas,
    load_tasks,
    read_jsonl,
    validate,
    write_schemas,
)

from .logs import ToolNames, read_log  # noqa: E402

# ``verify`` and ``parse`` are both submodules and functions: importing them here binds the
# package attributes to the functions for good (a later ``import verifier.verify`` finds the
# module in sys.modules and does not rebind).
from .parse import parse  # noqa: E402
from .verify import verify  # noqa: E402


def __getattr__(name: str) -> Any:
    # Lazy: batch scoring pulls in process pools and the query cache only when used.
    if name == "verify_batch":
        from .scoring import verify_batch

        return verify_batch
    raise AttributeError(f"module 'verifier' has no attribute {name!r}")


__all__ = [
    "Answer", "AnswerPolicy", "BooleanAnswer", "CountAnswer", "DatetimeAnswer", "DisplayConfig",
    "InputError", "JudgeConfig", "ListAnswer", "NumberAnswer", "QuantityAnswer", "ReasonCode",
    "RecordsAnswer", "Reference", "RulesError", "SandboxUnavailable", "SourceDataError", "Step", "Task", "TextAnswer",
    "ToolNames", "Trajectory", "UnitError", "UnmetRequirement", "UnsafeQueryError", "Verdict", "VerifierError",
    "VerifyConfig", "WitnessTable", "from_chat_messages", "json_schemas", "load_tasks", "parse",
    "read_jsonl", "read_log", "validate", "verify", "verify_batch", "write_schemas", "__version__",
]
