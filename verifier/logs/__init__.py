"""Tool-call logs of other systems read into Trajectories.

Owns one reader per common log format (OpenAI Chat Completions and TRL lists, the Responses
API, the OpenAI Agents SDK, Anthropic Messages, inspect_ai) and the tool-name configuration
(``ToolNames``: which names mean SQL, Python, submit; MCP prefixes). ``read_log`` detects
the format and notes what it could not read in ``Trajectory.metadata["log"]`` (``verify``
reports ``NO_STEPS_READ`` on a Noise task when no step could be read). Imports only
``verifier.contract``.
"""

from ._read import LOG_FORMATS, detect_format, read_log
from ._record import as_plain, content_text
from ._tools import DEFAULT_PYTHON, DEFAULT_SQL, DEFAULT_SUBMIT, ToolNames

__all__ = [
    "DEFAULT_PYTHON", "DEFAULT_SQL", "DEFAULT_SUBMIT", "LOG_FORMATS", "ToolNames", "as_plain", "content_text",
    "detect_format", "read_log",
]
