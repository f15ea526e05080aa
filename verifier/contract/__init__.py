"""The data contract: what goes into ``verify`` and what comes out.

Owns the pydantic models (Task, Trajectory, Verdict, typed answers), reason codes, typed errors,
configuration, JSON Schema / JSONL loading, chat-log reading and access to the rule tables in
``rules/``. The bottom layer: imports nothing else from ``verifier``.
"""

from ._answers import (
    Answer,
    BooleanAnswer,
    CountAnswer,
    DatetimeAnswer,
    ListAnswer,
    NumberAnswer,
    QuantityAnswer,
    RecordsAnswer,
    TextAnswer,
)
from ._chat import from_chat_messages
from ._config import DisplayConfig, JudgeConfig, VerifyConfig
from ._errors import (
    MISSING,
    InputError,
    RulesError,
    SandboxUnavailable,
    SourceDataError,
    UnitError,
    UnsafeQueryError,
    VerifierError,
)
from ._io import (
    json_schemas,
    load_tasks,
    read_jsonl,
    validate,
    write_jsonl,
    write_schemas,
)
from ._limits import MAX_QUERY_CHARS, InputLimits, nesting_depth
from ._reasons import ReasonCode
from ._rules import load_toml, rules_dir, rules_path
from ._task import (
    AnswerPolicy,
    AuditEntry,
    Intent,
    NearMiss,
    NoiseType,
    Reference,
    Scope,
    Task,
    UnmetRequirement,
    WitnessTable,
)
from ._trajectory import Dialect, Step, Trajectory
from ._verdict import Verdict
from ._version import __version__

__all__ = [
    "Answer", "AnswerPolicy", "AuditEntry", "BooleanAnswer", "CountAnswer", "DatetimeAnswer", "Dialect", "DisplayConfig",
    "InputError", "InputLimits", "Intent", "JudgeConfig", "ListAnswer", "MAX_QUERY_CHARS", "MISSING", "NoiseType",
    "NearMiss", "NumberAnswer", "QuantityAnswer", "ReasonCode", "RecordsAnswer", "Reference", "RulesError",
    "SandboxUnavailable", "Scope", "SourceDataError", "Step", "Task", "TextAnswer", "Trajectory", "UnitError",
    "UnmetRequirement", "UnsafeQueryError", "Verdict", "VerifierError", "VerifyConfig", "WitnessTable",
    "__version__", "from_chat_messages", "json_schemas", "load_tasks", "load_toml", "nesting_depth",
    "read_jsonl", "rules_dir", "rules_path", "validate", "write_jsonl", "write_schemas",
]
