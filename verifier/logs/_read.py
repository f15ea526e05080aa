"""``read_log``: any common tool-call log -> Trajectory, with the format found by its shape.

Formats (``LOG_FORMATS``; each reader's module docstring cites the vendor's documented shape):
``chat`` (OpenAI Chat Completions, TRL conversational lists), ``responses`` (OpenAI
Responses API items), ``agents`` (OpenAI Agents SDK run items), ``anthropic`` (Anthropic
Messages with ``tool_use``/``tool_result`` blocks), ``inspect`` (inspect_ai ``ChatMessage``
objects or their JSON). ``detect_format`` picks one by the first telling item, most
specific first: Agents SDK item types, Responses item types, Anthropic tool blocks,
inspect_ai types or its ``function``-as-name tool calls, else chat.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..contract import Dialect, InputError, Trajectory
from ._anthropic import read_anthropic
from ._openai import AGENTS_TYPES, RESPONSES_TYPES, read_agents, read_chat, read_responses
from ._record import LogBuilder, as_plain
from ._tools import ToolNames

#: Format names ``read_log`` accepts (``auto``: ``detect_format``).
LOG_FORMATS = ("auto", "chat", "responses", "agents", "anthropic", "inspect")
_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "mcp_tool_use", "mcp_tool_result", "server_tool_use"})


def _item_format(item: Any) -> str | None:
    module = type(item).__module__ or ""
    if module.startswith("inspect_ai"):
        return "inspect"
    if module.startswith("agents.") and hasattr(item, "raw_item"):
        return "agents"
    if module.startswith("anthropic"):
        return "anthropic"
    it = as_plain(item)
    if not isinstance(it, Mapping):
        return None
    kind = it.get("type")
    if kind in AGENTS_TYPES or "raw_item" in it:
        return "agents"
    if kind in RESPONSES_TYPES and not (kind == "message" and isinstance(it.get("content"), str)):
        return "responses"
    content = it.get("content")
    if isinstance(content, list) and any(isinstance(p, Mapping) and p.get("type") in _ANTHROPIC_BLOCKS for p in content):
        return "anthropic"
    calls = it.get("tool_calls")
    if isinstance(calls, list) and any(
            isinstance(c, Mapping) and isinstance(c.get("function"), str) and isinstance(c.get("arguments"), Mapping)
            for c in calls):
        return "inspect"
    return None


def detect_format(log: Any) -> str:
    """The format of ``log`` (one of ``LOG_FORMATS`` but ``auto``), by its shape.

    Args:
        log: a list of messages/items, or a run/response object (``RunResult``, ``Response``,
            ``ChatCompletion``, an Anthropic ``Message``).

    Returns:
        ``agents``, ``responses``, ``anthropic``, ``inspect`` or ``chat`` (the default when
        nothing is telling: plain role/content messages read the same in every format).
    """
    if hasattr(log, "new_items") or (isinstance(log, Mapping) and "new_items" in log):
        return "agents"
    if not isinstance(log, (list, tuple)):
        one = _item_format(log)
        plain = as_plain(log)
        if isinstance(plain, Mapping) and isinstance(plain.get("output"), list):
            return "responses"
        return one or "chat"
    found = {f for f in (_item_format(x) for x in log) if f}
    for fmt in ("agents", "responses", "anthropic", "inspect"):
        if fmt in found:
            return fmt
    return "chat"


def read_log(
    log: Any,
    *,
    task_id: str,
    trajectory_id: str = "log",
    format: str = "auto",
    tools: ToolNames | None = None,
    dialect: Dialect = "duckdb",
    metadata: Mapping[str, Any] | None = None,
) -> Trajectory:
    """Read a tool-call log of any common format into a Trajectory.

    Args:
        log: the log: a list of messages or items (dicts or the vendors' SDK objects), or a
            ``RunResult`` / ``Response`` / ``ChatCompletion`` / Anthropic ``Message``; a dict
            with a ``messages`` list (an inspect_ai sample, a TRL row) is read as that list.
        task_id, trajectory_id: identifiers of the result.
        format: one of ``LOG_FORMATS`` (``auto`` detects it with ``detect_format``).
        tools: which tool names mean SQL, Python and submit (default ``ToolNames()``); MCP
            prefixes (``mcp__ehr__run_sql``) are removed before the lookup.
        dialect: the SQL dialect the agent's database spoke (``Trajectory.dialect``).
        metadata: copied into ``Trajectory.metadata``.

    Returns:
        The Trajectory: SQL/Python calls as steps with their results (error results as
        ``Step.error``), the last assistant text or submitted answer as the final response,
        and ``metadata["log"]`` saying what was read and what was not (see
        ``verifier.logs._record``). Never raises on the log's content: what cannot be read
        is noted, and a log from which no step could be read carries a ``warning``.

    Raises:
        InputError: ``format`` or ``dialect`` is unknown, or ``log`` is neither a list nor
            a log object.
    """
    if format not in LOG_FORMATS:
        raise InputError("format", format, f"expected one of {', '.join(LOG_FORMATS)}")
    if dialect not in ("duckdb", "sqlite", "postgres"):
        raise InputError("dialect", dialect, "expected duckdb, sqlite or postgres")
    if isinstance(log, Mapping) and isinstance(log.get("messages"), list) and "role" not in log:
        log = log["messages"]
    if log is None or isinstance(log, (str, bytes, int, float, bool)):
        raise InputError("log", log, "expected a list of messages/items or a run/response object")
    fmt = detect_format(log) if format == "auto" else format
    b = LogBuilder(fmt, tools or ToolNames())
    if fmt == "agents":
        read_agents(log, b)
    elif fmt == "responses":
        read_responses(log, b)
    elif fmt == "anthropic":
        read_anthropic(log, b)
    else:  # chat, inspect (inspect_ai's JSON is the chat shape with ``function`` as the name)
        read_chat(log if isinstance(log, (list, tuple)) else [log], b)
    return b.trajectory(trajectory_id=trajectory_id, task_id=task_id, dialect=dialect, metadata=metadata)
