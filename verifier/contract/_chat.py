"""Adapter: OpenAI-style chat messages -> Trajectory.

Most agent frameworks log episodes as chat messages: assistant messages with
``tool_calls`` (``function.name``, ``function.arguments`` as a JSON string) and
``tool`` messages holding each call's result, linked by ``tool_call_id``. The
last assistant message without tool calls is the final response.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from ._errors import InputError
from ._trajectory import Dialect, Step, Trajectory

#: Tool names understood as SQL or Python calls (lower-cased, exact).
SQL_TOOLS = frozenset({"sql", "run_sql", "execute_sql", "query", "sql_query", "execute_query", "run_query"})
PYTHON_TOOLS = frozenset({"python", "run_python", "execute_python", "python_exec", "code_interpreter"})
_CODE_KEYS = ("query", "sql", "code", "source", "input")
_ERROR_PREFIXES = ("error:", "error ", "traceback", "exception:")


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _arguments(call: dict[str, Any], where: str) -> str:
    fn = call.get("function") or {}
    raw = fn.get("arguments", "")
    if isinstance(raw, dict):
        args = raw
    else:
        try:
            args = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            return str(raw)  # some models send the bare code
    if isinstance(args, str):
        return args
    if not isinstance(args, dict):
        raise InputError(f"{where}.function.arguments", raw, "expected a JSON object")
    for key in _CODE_KEYS:
        if isinstance(args.get(key), str):
            return args[key]
    raise InputError(f"{where}.function.arguments", raw, f"no code under any of the keys {list(_CODE_KEYS)}")


def from_chat_messages(
    messages: Iterable[dict[str, Any]],
    *,
    trajectory_id: str,
    task_id: str,
    dialect: Dialect = "duckdb",
    metadata: dict[str, Any] | None = None,
) -> Trajectory:
    """Convert OpenAI-style chat messages into a Trajectory.

    Args:
        messages: dicts with ``role`` in {system, user, assistant, tool};
            assistant ``tool_calls`` name a SQL tool (``SQL_TOOLS``) or a Python
            tool (``PYTHON_TOOLS``); tool results carry ``tool_call_id``.
        trajectory_id, task_id: identifiers for the resulting trajectory.
        dialect: the SQL dialect the agent wrote.
        metadata: copied into ``Trajectory.metadata``.

    Returns:
        A Trajectory whose steps follow the tool calls in order (1-based) and
        whose final response is the last assistant text without tool calls.
        A tool result starting with ``Error``/``Traceback`` is recorded as the
        step's ``error``.

    Raises:
        InputError: a message is not a dict, a role is unknown, a tool name is
            neither SQL nor Python, or a tool result answers no known call.
    """
    steps: list[Step] = []
    by_call: dict[str, int] = {}
    final = ""
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(msg, dict):
            raise InputError(where, msg, "expected a message object")
        role = msg.get("role")
        if role in ("system", "user", "developer"):
            continue
        if role == "assistant":
            calls = msg.get("tool_calls") or []
            for j, call in enumerate(calls):
                cwhere = f"{where}.tool_calls[{j}]"
                name = str((call.get("function") or {}).get("name", "")).lower()
                if name in SQL_TOOLS:
                    kind = "sql"
                elif name in PYTHON_TOOLS:
                    kind = "python"
                else:
                    raise InputError(f"{cwhere}.function.name", name, f"not a SQL tool {sorted(SQL_TOOLS)} nor a Python tool {sorted(PYTHON_TOOLS)}")
                steps.append(Step(index=len(steps) + 1, kind=kind, code=_arguments(call, cwhere)))
                if call.get("id"):
                    by_call[str(call["id"])] = len(steps) - 1
            if not calls:
                final = _content_text(msg.get("content"))
            continue
        if role == "tool":
            cid = str(msg.get("tool_call_id", ""))
            if cid not in by_call:
                raise InputError(f"{where}.tool_call_id", cid, "answers no earlier tool call")
            pos = by_call[cid]
            text = _content_text(msg.get("content"))
            if text.strip().lower().startswith(_ERROR_PREFIXES):
                steps[pos] = steps[pos].model_copy(update={"error": text})
            else:
                steps[pos] = steps[pos].model_copy(update={"output": text})
            continue
        raise InputError(f"{where}.role", role, "expected system, user, assistant or tool")
    return Trajectory(
        trajectory_id=trajectory_id,
        task_id=task_id,
        steps=steps,
        final_response=final,
        dialect=dialect,
        metadata=dict(metadata or {}),
    )
