"""ehr-verifier: decides whether a clinical database agent did its job.

Public API (DESIGN.md):
    verify(trajectory, task, config=None) -> Verdict
    parse(text) -> ParsedResponse
    Task, Trajectory, Step, Verdict, ReasonCode, VerifyConfig
    from_chat_messages(messages, ...) -> Trajectory
"""

from __future__ import annotations

from importlib import metadata as _metadata
from typing import Any

from .answers import (
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
from .chat import from_chat_messages
from .config import DisplayConfig, JudgeConfig, VerifyConfig
from .contract import json_schemas, load_tasks, read_jsonl, validate, write_schemas
from .errors import InputError, RulesError, SourceDataError, UnitError, UnsafeQueryError, VerifierError
from .reasons import ReasonCode
from .task import AnswerPolicy, Reference, Task, UnmetRequirement, WitnessTable
from .trajectory import Step, Trajectory
from .verdict import Verdict

try:
    __version__ = _metadata.version("ehr-verifier")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+source"


# ``verify`` and ``parse`` are both submodules and functions: importing them here, after
# ``__version__``, binds the package attributes to the functions for good (a later
# ``import verifier.verify`` finds the module in sys.modules and does not rebind).
from .parse import parse  # noqa: E402
from .verify import verify  # noqa: E402


def __getattr__(name: str) -> Any:
    # Lazy: batch scoring pulls in process pools and the query cache only when used.
    if name == "verify_batch":
        from .batch import verify_batch

        return verify_batch
    raise AttributeError(f"module 'verifier' has no attribute {name!r}")


__all__ = [
    "Answer", "AnswerPolicy", "BooleanAnswer", "CountAnswer", "DatetimeAnswer", "DisplayConfig",
    "InputError", "JudgeConfig", "ListAnswer", "NumberAnswer", "QuantityAnswer", "ReasonCode",
    "RecordsAnswer", "Reference", "RulesError", "SourceDataError", "Step", "Task", "TextAnswer",
    "Trajectory", "UnitError", "UnmetRequirement", "UnsafeQueryError", "Verdict", "VerifierError",
    "VerifyConfig", "WitnessTable", "from_chat_messages", "json_schemas", "load_tasks", "parse",
    "read_jsonl", "validate", "verify", "verify_batch", "write_schemas", "__version__",
]
